/* SPDX-License-Identifier: MIT */
/*
 * lib/kern/pathjoin.h - joining the path records of the eBPF program
 * (pathnames.bpf.c, struct pn_rec) to the ftrace entry events of the same
 * system calls. Pure bookkeeping, no eBPF: unit-tested (test-pathjoin) and
 * fuzzed (fuzz-pathjoin) on records made up by hand.
 *
 * A record says: thread tid made syscall nr with the path argument ptr,
 * and its entry event was stamped at a time t with lo < t <= hi (kernel
 * CLOCK_MONOTONIC). The intervals of one thread's records never overlap,
 * so the entry event (tid, nr, ptr, t) belongs to the record whose
 * interval holds t, if any; a record is never given to another event,
 * whatever records or events were lost (docs/kernel.md, "File names").
 * Times are compared with an uncertainty eps (the trace clock's conversion
 * to CLOCK_MONOTONIC: 0 when the trace clock is mono): an event within eps
 * of a bound is not joined.
 *
 * Not thread-safe: one reader thread adds, finds and expires.
 */
#ifndef TRAWL_KERN_PATHJOIN_H
#define TRAWL_KERN_PATHJOIN_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"	/* TRAWL_HIDDEN */

/* At most this many records are kept (the oldest are expired first). */
#define TR_PJOIN_MAX_RECORDS (1u << 20)

enum tr_pj_result {
	TR_PJ_FOUND,		/* *s, *n: the path (no NUL) */
	TR_PJ_FAULT,		/* the call's record says the copy failed */
	TR_PJ_LOST,		/* a later call of the thread has a record, this one none */
	TR_PJ_AMBIGUOUS,	/* t within eps of an interval's bound */
	TR_PJ_MISMATCH,		/* the interval holding t is another syscall's or pointer's */
	TR_PJ_WAIT,		/* not known yet: the call may not have returned */
};

struct tr_pjoin;

/* A new, empty join; NULL with errno ENOMEM. Freed with tr_pjoin_free(). */
TRAWL_HIDDEN struct tr_pjoin *tr_pjoin_new(void);
/* Frees p and its records; accepts NULL. */
TRAWL_HIDDEN void tr_pjoin_free(struct tr_pjoin *p);
/*
 * Checks one ring buffer record (size bytes: struct pn_rec, then len bytes
 * of path whose last is the NUL) and keeps a copy. Returns 0, -EINVAL (a
 * malformed record, not kept), -ENOSPC (TR_PJOIN_MAX_RECORDS kept: not
 * kept) or -ENOMEM.
 */
TRAWL_HIDDEN int tr_pjoin_add(struct tr_pjoin *p, const void *data, size_t size);
/*
 * The record of the entry event (tid, nr, ptr) stamped at t: see enum
 * tr_pj_result. A found record (FOUND, FAULT) is removed; *s stays valid
 * until the next call on p.
 */
TRAWL_HIDDEN enum tr_pj_result tr_pjoin_find(struct tr_pjoin *p, int32_t tid, int32_t nr,
					     uint64_t ptr, uint64_t t, uint64_t eps,
					     const char **s, size_t *n);
/* Forgets the records whose interval ends before `before`; returns their number. */
TRAWL_HIDDEN size_t tr_pjoin_expire(struct tr_pjoin *p, uint64_t before);
/* The number of records kept. */
TRAWL_HIDDEN size_t tr_pjoin_count(const struct tr_pjoin *p);

#endif
