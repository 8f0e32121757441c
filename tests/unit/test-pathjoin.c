/* SPDX-License-Identifier: MIT */
/*
 * test-pathjoin: lib/kern/pathjoin.c, the join of the path records of the
 * eBPF program (pathnames.bpf.c) to the ftrace entry events of the same
 * calls, on records made by hand: an event takes the record whose interval
 * (lo, hi] holds its time, never a neighbour's, whatever was lost (a lost
 * record with same pointer and syscall on both sides), the same buffer
 * reused with new content, bounds and their uncertainty, a fault, another
 * syscall, other threads, malformed records, expiry of many threads.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kern/pathjoin.h"
#include "kern/pathnames-bpf.h"
#include "tap.h"

#define OPENAT 257
#define PTR 0x7ffd1000ull

static uint8_t rec[sizeof(struct pn_rec) + PN_PATH_MAX];

/* A record as the program queues it (len < 0: a failed copy). */
static size_t mk(uint32_t tid, int32_t nr, uint64_t ptr, uint64_t lo, uint64_t hi,
		 const char *path, int32_t len)
{
	struct pn_rec h = { .lo = lo, .hi = hi, .ptr = ptr, .tid = tid, .nr = nr };
	h.len = path ? (int32_t)strlen(path) + 1 : len;
	memcpy(rec, &h, sizeof(h));
	if (path)
		memcpy(rec + sizeof(h), path, strlen(path) + 1);
	return sizeof(h) + (path ? strlen(path) + 1 : 0);
}

static int add(struct tr_pjoin *p, uint32_t tid, int32_t nr, uint64_t ptr, uint64_t lo,
	       uint64_t hi, const char *path)
{
	return tr_pjoin_add(p, rec, mk(tid, nr, ptr, lo, hi, path, -14));
}

/* the path found for (tid, nr, ptr, t, eps), or the result's name */
static const char *find(struct tr_pjoin *p, int32_t tid, int32_t nr, uint64_t ptr, uint64_t t,
			uint64_t eps)
{
	static char out[PN_PATH_MAX + 16];
	const char *s;
	size_t n;
	static const char *const names[] = { "FOUND", "FAULT", "LOST", "AMBIGUOUS", "MISMATCH",
					     "WAIT" };
	enum tr_pj_result r = tr_pjoin_find(p, tid, nr, ptr, t, eps, &s, &n);
	if (r != TR_PJ_FOUND)
		return names[r];
	if (strlen(s) != n)
		return "BAD LENGTH";
	snprintf(out, sizeof(out), "%s", s);
	return out;
}

int main(void)
{
	struct tr_pjoin *p = tr_pjoin_new();
	ok(p != NULL, "new");

	/* one call: its record holds the event's time */
	is_int(add(p, 10, OPENAT, PTR, 100, 200, "/tmp/a"), 0, "add a record");
	is_str(find(p, 11, OPENAT, PTR, 150, 0), "WAIT", "another thread: nothing yet");
	is_str(find(p, 10, OPENAT, PTR, 150, 0), "/tmp/a", "the event inside (lo, hi] gets the path");
	is_str(find(p, 10, OPENAT, PTR, 150, 0), "WAIT", "a record is given once");
	is_int(tr_pjoin_count(p), 0, "and then forgotten");

	/* bounds: lo excluded (the previous call's exit), hi included */
	add(p, 10, OPENAT, PTR, 100, 200, "/tmp/b");
	is_str(find(p, 10, OPENAT, PTR, 100, 0), "AMBIGUOUS", "t == lo: not this call's");
	is_str(find(p, 10, OPENAT, PTR, 200, 0), "/tmp/b", "t == hi: this call's");
	add(p, 10, OPENAT, PTR, 100, 200, "/tmp/b");
	is_str(find(p, 10, OPENAT, PTR, 201, 0), "WAIT", "after hi: a later call, not come yet");
	is_str(find(p, 10, OPENAT, PTR, 120, 30), "AMBIGUOUS", "within eps of lo");
	is_str(find(p, 10, OPENAT, PTR, 190, 30), "AMBIGUOUS", "within eps of hi");
	is_str(find(p, 10, OPENAT, PTR, 150, 30), "/tmp/b", "eps away from both: found");

	/*
	 * The same buffer (pointer), new content each call; the record of the
	 * middle call lost: its event must not take a neighbour's, in any
	 * order of lookup.
	 */
	add(p, 20, OPENAT, PTR, 1000, 1100, "/tmp/f.000");
	add(p, 20, OPENAT, PTR, 1100, 1200, "/tmp/f.001");
	/* 1200..1300: /tmp/f.002, lost */
	add(p, 20, OPENAT, PTR, 1300, 1400, "/tmp/f.003");
	is_str(find(p, 20, OPENAT, PTR, 1350, 0), "/tmp/f.003", "the later call first: its own");
	is_str(find(p, 20, OPENAT, PTR, 1250, 0), "WAIT", "the lost call after the later one was taken: "
	       "nothing (and never a neighbour's)");
	add(p, 20, OPENAT, PTR, 1300, 1400, "/tmp/f.003");
	is_str(find(p, 20, OPENAT, PTR, 1250, 0), "LOST", "the lost call: a later call's record proves it");
	is_str(find(p, 20, OPENAT, PTR, 1150, 0), "/tmp/f.001", "the call before it: its own");
	is_str(find(p, 20, OPENAT, PTR, 1050, 0), "/tmp/f.000", "the first: its own");
	is_str(find(p, 20, OPENAT, PTR, 1350, 0), "/tmp/f.003", "the last: its own");

	/* records of one thread out of order are put back in order */
	add(p, 21, OPENAT, PTR, 300, 400, "/b");
	add(p, 21, OPENAT, PTR, 200, 300, "/a");
	is_str(find(p, 21, OPENAT, PTR, 250, 0), "/a", "out of order: the earlier call's");
	is_str(find(p, 21, OPENAT, PTR, 350, 0), "/b", "out of order: the later call's");

	/* another syscall or pointer in the interval: not given */
	add(p, 30, 2, PTR, 100, 200, "/tmp/open");
	is_str(find(p, 30, OPENAT, PTR, 150, 0), "MISMATCH", "the interval is another syscall's");
	is_str(find(p, 30, 2, PTR + 8, 150, 0), "MISMATCH", "the interval is another pointer's");
	is_str(find(p, 30, 2, PTR, 150, 0), "/tmp/open", "its own syscall and pointer");

	/* a failed copy */
	is_int(tr_pjoin_add(p, rec, mk(40, OPENAT, PTR, 100, 200, NULL, -14)), 0, "a fault record");
	is_str(find(p, 40, OPENAT, PTR, 150, 0), "FAULT", "the call's copy failed");

	/* malformed records are refused */
	size_t n = mk(50, OPENAT, PTR, 200, 200, "/x", 0);
	is_int(tr_pjoin_add(p, rec, n), -EINVAL, "lo >= hi");
	n = mk(50, OPENAT, PTR, 100, 200, "/x", 0);
	is_int(tr_pjoin_add(p, rec, n - 1), -EINVAL, "the path cut short");
	is_int(tr_pjoin_add(p, rec, sizeof(struct pn_rec) - 1), -EINVAL, "the header cut short");
	rec[sizeof(struct pn_rec) + 2] = 'y';
	is_int(tr_pjoin_add(p, rec, n), -EINVAL, "no NUL at the end");
	n = mk(50, OPENAT, PTR, 100, 200, "/xy", 0);
	rec[sizeof(struct pn_rec) + 1] = 0;
	is_int(tr_pjoin_add(p, rec, n), -EINVAL, "a NUL inside");
	is_int(tr_pjoin_add(p, rec, mk(50, OPENAT, PTR, 100, 200, NULL, 0)), -EINVAL, "len 0");
	is_int(tr_pjoin_add(p, rec, mk(50, OPENAT, PTR, 100, 200, NULL, PN_PATH_MAX + 1)), -EINVAL,
	       "len > PN_PATH_MAX");
	is_str(find(p, 50, OPENAT, PTR, 150, 0), "WAIT", "none of them kept");

	/* many threads: the table grows; expiry forgets what ended before */
	size_t before = tr_pjoin_count(p);
	int bad = 0;
	for (uint32_t t = 1000; t < 6000; t++)
		bad += add(p, t, OPENAT, PTR, 10 * t, 10 * t + 5, "/many") != 0;
	is_int(bad, 0, "5000 threads' records added");
	is_int(tr_pjoin_count(p), before + 5000, "all kept");
	is_str(find(p, 4321, OPENAT, PTR, 43213, 0), "/many", "one of them found");
	is_int(tr_pjoin_expire(p, 30000), 2000, "the 2000 that ended before 30000 expire");
	is_str(find(p, 2500, OPENAT, PTR, 25003, 0), "WAIT", "an expired one is gone");
	is_str(find(p, 5999, OPENAT, PTR, 59993, 0), "/many", "a kept one is there");
	is_int(tr_pjoin_count(p), before + 2998, "the rest kept (two found)");
	is_int(tr_pjoin_expire(p, UINT64_MAX), before + 2998, "everything else expires");
	is_int(tr_pjoin_count(p), 0, "none left");
	tr_pjoin_free(p);
	tr_pjoin_free(NULL);
	return done_testing();
}
