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
TRAWL_HIDDEN struct trawl_ctf_arena *tr_arena_new(void);
TRAWL_HIDDEN void tr_arena_free(struct trawl_ctf_arena *a);
/* Zeroed, 16-byte aligned memory; NULL on ENOMEM. */
TRAWL_HIDDEN void *tr_arena_alloc(struct trawl_ctf_arena *a, size_t n);
TRAWL_HIDDEN char *tr_arena_strdup(struct trawl_ctf_arena *a, const char *s);
TRAWL_HIDDEN char *tr_arena_strndup(struct trawl_ctf_arena *a, const char *s, size_t n);
/* Grows *arr (of *n elements of size sz) by one zeroed element in the arena;
 * returns it, or NULL. Amortized: capacity doubles (old blocks stay in the
 * arena until it is freed). */
TRAWL_HIDDEN void *tr_arena_push(struct trawl_ctf_arena *a, void *arr, size_t *n,
			      size_t *cap, size_t sz);

/* ---- growing arrays (malloc'd) */
/* Makes room for element n of the array *pp (elements of sz bytes, *cap of
 * them allocated): when n >= *cap, the capacity doubles (from 16) until it
 * holds element n, however far n is. Returns 0, or -ENOMEM (then *pp and
 * *cap are as they were). */
TRAWL_HIDDEN int tr_grow(void *pp, size_t *cap, size_t n, size_t sz);

/* ---- errors into a caller buffer; return -err so `return tr_seterr(...)` reads well */
TRAWL_HIDDEN int tr_seterr(char *err, size_t errlen, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* ---- misc */
/* Writes all n bytes (again after EINTR or a short write): 0 or -errno
 * (-EIO when write returns 0). */
TRAWL_HIDDEN int tr_write_all(int fd, const void *p, size_t n);
/* Creates path and its missing parents (mode 0777 & umask): 0 or -errno. */
TRAWL_HIDDEN int tr_mkdir_p(const char *path);
/* Value of a hex digit, or -1. */
TRAWL_HIDDEN int tr_hexval(int c);
TRAWL_HIDDEN int tr_uuid_parse(const char *s, uint8_t out[16]);	/* 0 or -EINVAL */
TRAWL_HIDDEN void tr_uuid_format(const uint8_t u[16], char out[37]);
TRAWL_HIDDEN void tr_uuid_random(uint8_t out[16]);
/* This machine's /proc/sys/kernel/random/boot_id; random if unreadable. */
TRAWL_HIDDEN void tr_uuid_boot_id(uint8_t out[16]);
/* fnmatch-style glob with * ? [..]; true when name matches. */
TRAWL_HIDDEN int tr_glob_match(const char *pat, const char *name);
/* Levenshtein distance of a and b, for "did you mean" (99 when either is
 * 63 characters or longer). */
TRAWL_HIDDEN size_t tr_edit_distance(const char *a, const char *b);
/* The candidate closest to name, for "did you mean": a candidate name is
 * a prefix of counts as distance 1; none within distance max: NULL.
 * max TR_NEAR: the rule for names a user typed (hosts, events, fields,
 * keys): a third of the name's length, at least 2. */
#define TR_NEAR ((size_t)-1)
TRAWL_HIDDEN const char *tr_closest(const char *name, const char *const *cand, size_t n,
				    size_t max);
/* (the clocks: util/clock.h) */

#endif
