/* SPDX-License-Identifier: MIT OR GPL-2.0-only */
/*
 * lib/kern/pathnames.bpf.c - the eBPF side of the path names of `trawl
 * record -k syscalls`: ftrace gives the path of openat & co. only as a user
 * pointer; this program copies the string of each path-taking call
 * (bpf_probe_read_user_str) into a ring buffer, with what joins it to the
 * call's ftrace entry event: the thread, the syscall, the pointer and the
 * time interval that holds the entry (docs/kernel.md, "File names").
 *
 * Built by mk/bpf.mk with clang -target bpf and embedded as a libbpf
 * skeleton that lib/kern/pathnames.c loads. x86-64 only (the syscall table
 * and the registers below are that architecture's).
 *
 * Hooks: BTF-enabled raw tracepoints sys_enter and sys_exit, the very
 * tracepoints raw_syscalls:sys_enter/sys_exit are. For the syscalls of the
 * table (path_arg, set by user space), the entry notes the pointer in the
 * thread's task storage; the exit copies the string and queues the record.
 * Copying at the exit: the kernel has just read the same bytes (getname),
 * so their page is resident, and nothing is held between the two hooks
 * but a pointer (a blocked open costs no memory). The path is the buffer's
 * content when the call returns: the same as when it entered unless
 * another thread rewrote it meanwhile.
 */
#ifdef __bpf__

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "pathnames-bpf.h"

/* ---- the few kernel fields we read (names as in the kernel; CO-RE) */

struct pt_regs {
	unsigned long r10, r9, r8, dx, si, di, orig_ax;
} __attribute__((preserve_access_index));

struct task_struct {
	__u64 start_time;	/* CLOCK_MONOTONIC ns */
} __attribute__((preserve_access_index));

/* ---- set by user space before load */

const volatile __u64 wakeup_bytes = 0;		/* wake the reader when this much is queued */
const volatile __u8 path_arg[PN_MAX_NR] = { 0 };	/* nr -> 1 + the path argument's index */

/* ---- maps */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);	/* resized by user space */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PN_NSTATS);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/* the record being built (too big for the stack) */
struct pn_rec_max {
	struct pn_rec h;
	char path[PN_PATH_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pn_rec_max);
} scratch SEC(".maps");

/* per thread: the lower bound of the next call's interval, the call in progress */
struct pn_task {
	__u64 lo;		/* the last path call's exit, or when first seen */
	__u64 ptr;
	__s32 nr;		/* the call in progress (pending) */
	__u32 pending;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct pn_task);
} tasks SEC(".maps");

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* a thread's storage could not be made once: its calls went unseen */
__u32 nostate_seen = 0;

static __always_inline void count(__u32 what)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &what);

	if (v)
		__sync_fetch_and_add(v, 1);
}

static __always_inline __u32 arg_of(long id)
{
	if (id < 0 || id >= PN_MAX_NR)
		return 0;
	return path_arg[id];
}

/*
 * The thread's state. A new one's first interval starts when the thread
 * started: every call it made since the program was attached went through
 * these hooks, which made the state, so it made no path call before this
 * one that the trace has (tracing starts after the attach). Unless a
 * state could not be made once (then it starts now: a call of a thread
 * whose state failed is never given another call's record).
 */
static __always_inline struct pn_task *task_state(__u64 now)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pn_task *st;

	st = bpf_task_storage_get(&tasks, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st) {
		nostate_seen = 1;
		count(PN_STAT_NOSTATE);
		return 0;
	}
	if (!st->lo) {
		__u64 start = task->start_time;

		st->lo = nostate_seen || !start || start >= now ? now : start;
	}
	return st;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(pn_enter, struct pt_regs *regs, long id)
{
	__u32 a = arg_of(id);
	struct pn_task *st;
	__u64 ptr;

	if (!a)
		return 0;
	st = task_state(bpf_ktime_get_ns());
	if (!st)
		return 0;
	switch (a - 1) {
	case 0: ptr = regs->di; break;
	case 1: ptr = regs->si; break;
	case 2: ptr = regs->dx; break;
	case 3: ptr = regs->r10; break;
	case 4: ptr = regs->r8; break;
	default: ptr = regs->r9; break;
	}
	st->ptr = ptr;
	st->nr = (__s32)id;
	st->pending = 1;
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(pn_exit, struct pt_regs *regs, long ret)
{
	long id = (long)regs->orig_ax;
	struct pn_rec_max *r;
	struct pn_task *st;
	__u32 zero = 0, size;
	__u64 now, lo;
	long n;

	if (!arg_of(id))
		return 0;
	now = bpf_ktime_get_ns();
	st = task_state(now);
	if (!st)
		return 0;
	lo = st->lo;
	st->lo = now;		/* the next call's interval starts at this exit */
	if (!st->pending || st->nr != (__s32)id)
		return 0;
	st->pending = 0;
	r = bpf_map_lookup_elem(&scratch, &zero);
	if (!r)
		return 0;
	r->h.lo = lo;
	r->h.hi = now;
	r->h.ptr = st->ptr;
	r->h.tid = (__u32)bpf_get_current_pid_tgid();
	r->h.nr = (__s32)id;
	r->h.pad = 0;
	n = bpf_probe_read_user_str(r->path, PN_PATH_MAX, (const void *)st->ptr);
	if (n <= 0) {
		r->h.len = n < 0 ? (__s32)n : -14;
		count(PN_STAT_FAULT);
		size = sizeof(r->h);
	} else {
		r->h.len = (__s32)n;
		size = (__u32)n;
		if (size > PN_PATH_MAX)
			size = PN_PATH_MAX;
		size += sizeof(r->h);
	}
	if (bpf_ringbuf_output(&events, r, size,
			       bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes ?
			       BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP))
		count(PN_STAT_LOST);
	return 0;
}

#endif /* __bpf__ */
