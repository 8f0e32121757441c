/* SPDX-License-Identifier: MIT */
/*
 * test-agg-model: trawl agg's comm, pid and cgroup keys are the kernel
 * model's (lib/kstate, docs/state.md "One model, its consumers"). The
 * trace, written here with LTTng's names (one host, one CPU, the tid
 * context; times in ns after T0):
 *
 *   1000  sched_switch swapper/0 (0) -> kworker/u8:4 (400)
 *   1100  state dump: 400, pid 400, "kworker/u8:4-ev" (/proc's), cgroup /
 *   1150  syscall_entry_read (400)
 *   1200  state dump: 500, pid 500, "work.sh", cgroup /app.slice
 *   1300  sched_switch kworker/u8:4 (400, preempted: 0x100) -> work.sh (500)
 *   1400  sched_process_fork 500 -> 501 (child_pid 501: a process)
 *   1500  syscall_entry_read (500)
 *   1600  sched_process_fork 500 -> 502 (child_pid 500: a thread)
 *   2000  sched_switch work.sh (500, asleep) -> work.sh (501)
 *   2100  syscall_entry_read (501)
 *   3000  sched_process_exec 501 /usr/bin/curl
 *   3100  syscall_entry_read (501)
 *   3200  syscall_entry_read (502)       never switched in: its fork's name
 *   3500  sched_process_exec 600 /bin/ls   a thread not seen before
 *   3600  syscall_entry_read (600)
 *   4000  sched_switch curl (501, asleep) -> kworker/u8:4 (400)
 *   4100  syscall_entry_read (400)
 *
 * agg by comm, pid, cgroup: the kworker keeps the kernel's comm (the
 * scheduler's, not the state dump's longer one), 501 is curl after its
 * exec, 502 is of process 500, 600 its own process after its exec; the
 * cgroups are the state dump's, the children's their parent's.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kev.h"
#include "tap.h"
#include "trawl/agg.h"
#include "trawl/ctf.h"
#include "trawl/pipe.h"

static char root[] = "/tmp/trawl-test-agg-model-XXXXXX";
#define T0 1000000000ull


static int write_trace(const char *dir)
{
	struct trawl_ctf_writer_opts o = {
		.sz = sizeof(o), .path = dir, .hostname = "n1", .domain = "kernel",
		.clock_offset_s = 1700000000,
	};
	struct trawl_ctf_writer *w = trawl_ctf_writer_new(&o);
	if (!w)
		return -1;
	struct trawl_ctf_type *s32 = trawl_ctf_type_int(w, 32, true, 10);
	struct trawl_ctf_type *s64 = trawl_ctf_type_int(w, 64, true, 10);
	struct trawl_ctf_type *str = trawl_ctf_type_string(w);
	struct trawl_ctf_type *ctx = trawl_ctf_type_struct(w), *sw = trawl_ctf_type_struct(w),
			      *si = trawl_ctf_type_struct(w), *fk = trawl_ctf_type_struct(w),
			      *ex = trawl_ctf_type_struct(w), *sd = trawl_ctf_type_struct(w);
	trawl_ctf_struct_add(w, ctx, "tid", s32);
	trawl_ctf_struct_add(w, sw, "prev_comm", str);
	trawl_ctf_struct_add(w, sw, "prev_tid", s32);
	trawl_ctf_struct_add(w, sw, "prev_prio", s32);
	trawl_ctf_struct_add(w, sw, "prev_state", s64);
	trawl_ctf_struct_add(w, sw, "next_comm", str);
	trawl_ctf_struct_add(w, sw, "next_tid", s32);
	trawl_ctf_struct_add(w, sw, "next_prio", s32);
	trawl_ctf_struct_add(w, si, "fd", s64);
	trawl_ctf_struct_add(w, fk, "parent_comm", str);
	trawl_ctf_struct_add(w, fk, "parent_tid", s32);
	trawl_ctf_struct_add(w, fk, "parent_pid", s32);
	trawl_ctf_struct_add(w, fk, "child_comm", str);
	trawl_ctf_struct_add(w, fk, "child_tid", s32);
	trawl_ctf_struct_add(w, fk, "child_pid", s32);
	trawl_ctf_struct_add(w, ex, "filename", str);
	trawl_ctf_struct_add(w, ex, "tid", s32);
	trawl_ctf_struct_add(w, ex, "old_tid", s32);
	trawl_ctf_struct_add(w, sd, "tid", s32);
	trawl_ctf_struct_add(w, sd, "pid", s32);
	trawl_ctf_struct_add(w, sd, "ppid", s32);
	trawl_ctf_struct_add(w, sd, "name", str);
	trawl_ctf_struct_add(w, sd, "status", s32);
	trawl_ctf_struct_add(w, sd, "cgroup", str);
	struct trawl_ctf_stream_class *sc = trawl_ctf_writer_stream_class(w, TRAWL_CTF_HEADER_COMPACT, ctx);
	struct trawl_ctf_event_class *csw = trawl_ctf_writer_event_class(w, sc, "sched_switch", INT64_MIN, sw),
		*csi = trawl_ctf_writer_event_class(w, sc, "syscall_entry_read", INT64_MIN, si),
		*cfk = trawl_ctf_writer_event_class(w, sc, "sched_process_fork", INT64_MIN, fk),
		*cex = trawl_ctf_writer_event_class(w, sc, "sched_process_exec", INT64_MIN, ex),
		*csd = trawl_ctf_writer_event_class(w, sc, "lttng_statedump_process_state",
						    INT64_MIN, sd);
	struct trawl_ctf_wstream *c0 = trawl_ctf_writer_stream(w, sc, "channel0", 0);
	int r = !c0 || !csd;
	r = r ?: kev(c0, csw, 1000, 0, "siil" "sii", "swapper/0", 0, 20, 0ll, "kworker/u8:4", 400, 20);
	r = r ?: kev(c0, csd, 1100, 400, "iiisis", 400, 400, 2, "kworker/u8:4-ev", 6, "/");
	r = r ?: kev(c0, csi, 1150, 400, "l", 3ll);
	r = r ?: kev(c0, csd, 1200, 400, "iiisis", 500, 500, 1, "work.sh", 5, "/app.slice");
	r = r ?: kev(c0, csw, 1300, 400, "siil" "sii", "kworker/u8:4", 400, 20, 0x100ll, "work.sh", 500, 20);
	r = r ?: kev(c0, cfk, 1400, 500, "siisii", "work.sh", 500, 500, "work.sh", 501, 501);
	r = r ?: kev(c0, csi, 1500, 500, "l", 3ll);
	r = r ?: kev(c0, cfk, 1600, 500, "siisii", "work.sh", 500, 500, "work.sh", 502, 500);
	r = r ?: kev(c0, csw, 2000, 500, "siil" "sii", "work.sh", 500, 20, 1ll, "work.sh", 501, 20);
	r = r ?: kev(c0, csi, 2100, 501, "l", 3ll);
	r = r ?: kev(c0, cex, 3000, 501, "sii", "/usr/bin/curl", 501, 501);
	r = r ?: kev(c0, csi, 3100, 501, "l", 3ll);
	r = r ?: kev(c0, csi, 3200, 502, "l", 3ll);
	r = r ?: kev(c0, cex, 3500, 600, "sii", "/bin/ls", 600, 600);
	r = r ?: kev(c0, csi, 3600, 600, "l", 3ll);
	r = r ?: kev(c0, csw, 4000, 501, "siil" "sii", "curl", 501, 20, 1ll, "kworker/u8:4", 400, 20);
	r = r ?: kev(c0, csi, 4100, 400, "l", 3ll);
	r = r ?: trawl_ctf_writer_close(w);
	trawl_ctf_writer_free(w);
	return r;
}

/* The rows of aggregation i of spec on dir: "k1|k2|k3=count ..." */
static const char *agg(const char *dir, const char *spec, char *b, size_t n)
{
	char err[256];
	const char *p[] = { dir };
	struct trawl_agg_opts o = { .sz = sizeof(o), .spec = spec };
	struct trawl_reader *r = trawl_reader_new(p, 1, NULL, err, sizeof(err));
	struct trawl_agg *a = r ? trawl_agg_new(&o, err, sizeof(err)) : NULL;
	struct trawl_sink s = a ? trawl_agg_sink(a) : (struct trawl_sink){ 0 };
	struct trawl_run_opts ro = { .sz = sizeof(ro) };
	size_t off = 0;

	b[0] = 0;
	if (!a || trawl_pipe_run(r, &s, 1, &ro) != 0) {
		snprintf(b, n, "error: %s", a ? trawl_agg_error(a) : err);
	} else {
		for (size_t k = 0; k < trawl_agg_nrows(a, 0) && off < n; k++) {
			struct trawl_agg_row row = { .sz = sizeof(row) };
			if (trawl_agg_row(a, 0, k, &row))
				continue;
			off += (size_t)snprintf(b + off, n - off, "%s", k ? " " : "");
			for (size_t j = 0; j < trawl_agg_nkeys(a, 0) && off < n; j++)
				off += (size_t)snprintf(b + off, n - off, "%s%s", j ? "|" : "", row.key[j]);
			if (off < n)
				off += (size_t)snprintf(b + off, n - off, "=%llu",
							(unsigned long long)row.count);
		}
	}
	trawl_agg_free(a);
	trawl_reader_free(r);
	return b;
}

int main(void)
{
	char b[512], dir[600];

	if (!mkdtemp(root)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	snprintf(dir, sizeof(dir), "%s/kernel", root);
	ok(write_trace(dir) == 0, "a kernel trace with a state dump, forks and an exec");
	is_str(agg(dir, "count(syscall_entry_read) by comm, pid, cgroup", b, sizeof(b)),
	       "kworker/u8:4|400|/=2 work.sh|500|/app.slice=2 curl|501|/app.slice=1 ls|600|-=1 "
	       "work.sh|501|/app.slice=1",
	       "by comm, pid, cgroup: the kernel's comm of the kworker (after the state dump "
	       "too), curl after the exec, the thread 502 of process 500, 600 of its own after "
	       "its exec, the cgroups of the state dump and the forks");
	is_str(agg(dir, "count(syscall_entry_read) by tid, comm", b, sizeof(b)),
	       "400|kworker/u8:4=2 500|work.sh=1 501|curl=1 501|work.sh=1 502|work.sh=1 600|ls=1",
	       "by tid, comm: 501's read before its exec is work.sh's, after it curl's; 502 "
	       "named by its fork");
	is_str(agg(dir, "count(sched_switch) by comm", b, sizeof(b)),
	       "curl=1 kworker/u8:4=1 swapper/0=1 work.sh=1",
	       "switches by the comm of the event's thread (the tid context; 0: the CPU's idle)");
	tap_rm_tree(root);
	return done_testing();
}
