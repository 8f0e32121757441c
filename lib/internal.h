/* SPDX-License-Identifier: MIT */
/*
 * lib/internal.h - shared internals of libtrawl, hidden from the shared
 * library's ABI (only trawl_* symbols are exported, see lib/libtrawl.map).
 */
#ifndef TRAWL_INTERNAL_H
#define TRAWL_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "trawl/ctf.h"

#define TRAWL_HIDDEN __attribute__((visibility("hidden")))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- unaligned little- and big-endian loads and stores */
#include <endian.h>
static inline uint32_t get_le32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return le32toh(v); }
static inline uint64_t get_le64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return le64toh(v); }
static inline uint32_t get_be32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return be32toh(v); }
static inline uint64_t get_be64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return be64toh(v); }
static inline void put_le32(uint8_t *p, uint32_t v) { v = htole32(v); memcpy(p, &v, 4); }
static inline void put_le64(uint8_t *p, uint64_t v) { v = htole64(v); memcpy(p, &v, 8); }
static inline void put_be32(uint8_t *p, uint32_t v) { v = htobe32(v); memcpy(p, &v, 4); }
static inline void put_be64(uint8_t *p, uint64_t v) { v = htobe64(v); memcpy(p, &v, 8); }

/* ---- arena: a bump allocator; everything in it is freed at once */
struct trawl_ctf_arena;
TRAWL_HIDDEN struct trawl_ctf_arena *arena_new(void);
TRAWL_HIDDEN void arena_free(struct trawl_ctf_arena *a);
/* Zeroed, 16-byte aligned memory; NULL on ENOMEM. */
TRAWL_HIDDEN void *arena_alloc(struct trawl_ctf_arena *a, size_t n);
TRAWL_HIDDEN char *arena_strdup(struct trawl_ctf_arena *a, const char *s);
TRAWL_HIDDEN char *arena_strndup(struct trawl_ctf_arena *a, const char *s, size_t n);
/* Grows *arr (of *n elements of size sz) by one zeroed element in the arena;
 * returns it, or NULL. Amortized: capacity doubles (old blocks stay in the
 * arena until it is freed). */
TRAWL_HIDDEN void *arena_push(struct trawl_ctf_arena *a, void *arr, size_t *n,
			      size_t *cap, size_t sz);

/* ---- errors into a caller buffer; return -err so `return seterr(...)` reads well */
TRAWL_HIDDEN int seterr(char *err, size_t errlen, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* ---- CTF metadata (lib/ctf/metadata.c) */
/* Packetized metadata in memory (size bytes, packets with magic 0x75D11D57
 * in either byte order) -> malloc'd NUL-terminated TSDL text; name is used
 * in error messages. NULL + errno on error. */
TRAWL_HIDDEN char *ctf_metadata_unpack(const uint8_t *buf, size_t size, const char *name,
				       size_t *len, char *err, size_t errlen);

/*
 * Metadata in chunks (lib/ctf/metadata-print.c), for live streaming: a mark
 * remembers what was printed; metadata_print_new() prints what the model
 * declared since (the header, trace, env and clocks the first time, then
 * new stream classes, then new event classes), as TSDL that appended to the
 * earlier chunks gives a valid whole. 0, -ENOMEM or -EIO.
 */
struct metadata_mark {
	bool header;
	size_t nstreams;
	size_t *nevents;		/* per stream class */
	size_t cap;
};
TRAWL_HIDDEN int metadata_print_new(const struct trawl_ctf_trace *t, FILE *out,
				    struct metadata_mark *m);
/* Nothing new to print? */
TRAWL_HIDDEN bool metadata_mark_current(const struct trawl_ctf_trace *t,
					const struct metadata_mark *m);
TRAWL_HIDDEN void metadata_mark_release(struct metadata_mark *m);

/* ---- misc */
/* Is the kernel's clocksource the TSC (on x86; false elsewhere)? Then
 * trawl's clock is the TSC by default. TRAWL_CLOCKSOURCE=NAME overrides what
 * the kernel says (tests of the fallback on machines whose clocksource is
 * the TSC: TRAWL_CLOCKSOURCE=kvm-clock). */
TRAWL_HIDDEN bool clocksource_is_tsc(void);
/* Writes all n bytes (again after EINTR or a short write): 0 or -errno
 * (-EIO when write returns 0). */
TRAWL_HIDDEN int write_all(int fd, const void *p, size_t n);
/* Creates path and its missing parents (mode 0777 & umask): 0 or -errno. */
TRAWL_HIDDEN int mkdir_p(const char *path);
/* Value of a hex digit, or -1. */
TRAWL_HIDDEN int hexval(int c);
TRAWL_HIDDEN int uuid_parse(const char *s, uint8_t out[16]);	/* 0 or -EINVAL */
TRAWL_HIDDEN void uuid_format(const uint8_t u[16], char out[37]);
TRAWL_HIDDEN void uuid_random(uint8_t out[16]);
/* This machine's /proc/sys/kernel/random/boot_id; random if unreadable. */
TRAWL_HIDDEN void uuid_boot_id(uint8_t out[16]);
/* fnmatch-style glob with * ? [..]; true when name matches. */
TRAWL_HIDDEN int glob_match(const char *pat, const char *name);
/* clock_gettime(id) in ns. */
TRAWL_HIDDEN int64_t tr_clock_ns(clockid_t id);
/*
 * This process's time namespace offset of CLOCK_MONOTONIC, in ns, into
 * *off: its CLOCK_MONOTONIC reads the kernel's (bpf_ktime_get_ns(),
 * ftrace's mono) plus this. 0 outside a time namespace or on a kernel
 * without them. Returns 0 or -errno (/proc/self/timens_offsets unreadable).
 */
TRAWL_HIDDEN int tr_timens_monotonic(int64_t *off);

#endif
