/* SPDX-License-Identifier: MIT */
/*
 * lib/kern/pathnames.h - the file names of openat & co. in kernel
 * recordings: an eBPF program (pathnames.bpf.c) copies the path string of
 * each path-taking system call, and the converter writes it as the string
 * field LTTng's kernel tracer has (syscall_entry_openat.filename ...)
 * instead of ftrace's user pointer (docs/kernel.md, "File names").
 *
 * In libtrawl-kern.a, used by the kernel recorder (krec.c). Built without
 * eBPF support (no clang, bpftool or libbpf headers, or NO_BPF=1),
 * tr_kpath_new() fails with ENOTSUP and says so; the recording then has
 * the pointers, as before.
 *
 * Life cycle: tr_kpath_new() (loaded and attached: records from now on;
 * call it before tracing starts), tr_kpath_poll() and tr_kpath_find() from
 * the recorder's reader thread, tr_kpath_free() (detached).
 */
#ifndef TRAWL_KERN_PATHNAMES_H
#define TRAWL_KERN_PATHNAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kern/pathjoin.h"

/* The path arguments copied: syscall_entry_<syscall>.<field> (LTTng's
 * names, which are ftrace's). One row per syscall. */
struct tr_kpath_arg {
	const char *syscall, *field;
};

TRAWL_HIDDEN extern const struct tr_kpath_arg tr_kpath_args[];
TRAWL_HIDDEN extern const size_t tr_kpath_nargs;

/* Is `field` of syscall `sname` a path argument of the table? */
TRAWL_HIDDEN bool tr_kpath_is_path(const char *sname, const char *field);

/* What became of the path arguments of the entry events converted. */
struct tr_kpath_stats {
	uint64_t named;			/* written as the path */
	uint64_t fault;			/* the copy failed (page not resident, bad pointer) */
	uint64_t lost;			/* no record: the ring was full, or no thread storage */
	uint64_t late;			/* no record within the hold time, or at the end */
	uint64_t ambiguous;		/* too close to an interval's bound to tell (TSC clock) */
	uint64_t mismatch;		/* the record of that time was another call's */
	uint64_t unused;		/* records no event took (threads not traced ...) */
	uint64_t ring_lost;		/* the kernel side's count of records not queued */
};

/* The entries that kept their pointer, for whatever reason. */
static inline uint64_t tr_kpath_missing(const struct tr_kpath_stats *st)
{
	return st->fault + st->lost + st->late + st->ambiguous + st->mismatch;
}

struct kpath;
struct tep_handle;

/*
 * Loads the eBPF program for the syscalls of the table this kernel has
 * (their formats in tep, system "syscalls") and attaches it. tsc: the
 * trace clock is x86-tsc (else mono). Returns the object (freed with
 * tr_kpath_free()); NULL with errno and why in err (not root, no BTF,
 * built without eBPF ...).
 */
TRAWL_HIDDEN struct kpath *tr_kpath_new(struct tep_handle *tep, bool tsc, char *err,
					size_t errlen);
/* Takes the records queued so far. 0 or -errno. */
TRAWL_HIDDEN int tr_kpath_poll(struct kpath *p);
/*
 * The path of the entry event of thread tid, syscall nr, pointer ptr,
 * stamped ts (the trace clock). final: the last try (a WAIT becomes late).
 * Returns TR_PJ_FOUND with *s, *n (valid until the next call), another
 * enum tr_pj_result otherwise; counts the outcome (not WAIT).
 */
TRAWL_HIDDEN enum tr_pj_result tr_kpath_find(struct kpath *p, int32_t tid, int32_t nr,
					     uint64_t ptr, uint64_t ts, bool final,
					     const char **s, size_t *n);
/* The counts so far (ring_lost read from the kernel side). */
TRAWL_HIDDEN void tr_kpath_stats(struct kpath *p, struct tr_kpath_stats *st);
/* Detaches, unloads, frees; accepts NULL. */
TRAWL_HIDDEN void tr_kpath_free(struct kpath *p);

#endif
