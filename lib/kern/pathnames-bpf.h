/* SPDX-License-Identifier: MIT */
/*
 * lib/kern/pathnames-bpf.h - what the path-name eBPF program
 * (pathnames.bpf.c) and its user-space side (pathnames.c, pathjoin.c)
 * share: the ring buffer record and the per-CPU counters. Included by the
 * BPF program (clang -target bpf) and by user space.
 */
#ifndef TRAWL_PATHNAMES_BPF_H
#define TRAWL_PATHNAMES_BPF_H

#include <linux/types.h>

/* Syscall numbers the program looks at: [0, PN_MAX_NR). */
#define PN_MAX_NR	512
/* The longest path copied, its NUL included (the kernel's PATH_MAX). */
#define PN_PATH_MAX	4096

/* Per-CPU counters (the `stats` map, a per-CPU array indexed by these). */
enum pn_stat {
	PN_STAT_LOST = 0,	/* ring buffer full: the call's record not queued */
	PN_STAT_NOSTATE,	/* no per-thread storage (allocation failed) */
	PN_STAT_FAULT,		/* the string could not be read (recorded, len < 0) */
	PN_NSTATS,
};

/*
 * One completed path-taking system call of one thread, queued at its
 * sys_exit. The ftrace entry event of that call is stamped at a time t
 * with lo < t <= hi (kernel CLOCK_MONOTONIC, bpf_ktime_get_ns()): lo is the
 * exit of the thread's previous path call (or when the program first saw
 * the thread), hi this call's exit; the intervals of one thread's calls do
 * not overlap, so a record belongs to exactly one entry event.
 * The path (len bytes, its NUL included) follows the header; len < 0: the
 * copy failed with that -errno and nothing follows.
 */
struct pn_rec {
	__u64 lo, hi;
	__u64 ptr;		/* the user pointer, as the entry event has it */
	__u32 tid;
	__s32 nr;		/* the syscall number */
	__s32 len;
	__u32 pad;
	/* then the path: len bytes */
};

#endif
