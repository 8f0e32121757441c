/* SPDX-License-Identifier: MIT */
/*
 * test-agg-check: an aggregation that can never match the traces read is
 * refused before the run (trawl_agg_check(), issue 27.5): an event glob
 * that matches no class, GLOB.FIELD that no matched event has or that is a
 * string, a field key that no matched event has; each message names the
 * nearest name there is. And the key pid: a thread's process id from the
 * state dump and sched_process_fork, "-" for a thread nothing described.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "trawl/agg.h"
#include "trawl/ctf.h"
#include "trawl/pipe.h"

static char root[] = "/tmp/trawl-test-agg-check-XXXXXX";

/* syscall_entry_read events per tid: 100 and 101 are process 100 (state
 * dump), 102 is process 102 (forked by 100), 103 a thread of it (forked
 * by 102), 200 a thread nothing says anything of. */
static const struct { int32_t tid; int n; } reads[] = {
	{ 100, 3 }, { 101, 2 }, { 102, 4 }, { 103, 2 }, { 200, 7 },
};

static int write_trace(const char *dir)
{
	struct trawl_ctf_writer_opts o = {
		.sz = sizeof(o), .path = dir, .hostname = "h1", .domain = "kernel",
		.clock_offset_s = 1700000000, .packet_size = 4096,
	};
	struct trawl_ctf_writer *w = trawl_ctf_writer_new(&o);
	if (!w)
		return -1;
	struct trawl_ctf_type *s32 = trawl_ctf_type_int(w, 32, true, 10);
	struct trawl_ctf_type *str = trawl_ctf_type_string(w);
	struct trawl_ctf_type *ctx = trawl_ctf_type_struct(w);
	trawl_ctf_struct_add(w, ctx, "tid", s32);
	struct trawl_ctf_type *fd = trawl_ctf_type_struct(w);
	trawl_ctf_struct_add(w, fd, "fd", s32);
	trawl_ctf_struct_add(w, fd, "path", str);
	struct trawl_ctf_type *sd = trawl_ctf_type_struct(w);
	trawl_ctf_struct_add(w, sd, "tid", s32);
	trawl_ctf_struct_add(w, sd, "pid", s32);
	trawl_ctf_struct_add(w, sd, "name", str);
	struct trawl_ctf_type *fk = trawl_ctf_type_struct(w);
	trawl_ctf_struct_add(w, fk, "parent_tid", s32);
	trawl_ctf_struct_add(w, fk, "child_comm", str);
	trawl_ctf_struct_add(w, fk, "child_tid", s32);
	trawl_ctf_struct_add(w, fk, "child_pid", s32);
	struct trawl_ctf_stream_class *sc = trawl_ctf_writer_stream_class(w, TRAWL_CTF_HEADER_LARGE, ctx);
	struct trawl_ctf_event_class *esd =
		trawl_ctf_writer_event_class(w, sc, "lttng_statedump_process_state", 0, sd);
	struct trawl_ctf_event_class *efk = trawl_ctf_writer_event_class(w, sc, "sched_process_fork", 0, fk);
	struct trawl_ctf_event_class *er = trawl_ctf_writer_event_class(w, sc, "syscall_entry_read", 0, fd);
	struct trawl_ctf_wstream *s0 = trawl_ctf_writer_stream(w, sc, "channel0", 0);
	if (!esd || !efk || !er || !s0) {
		trawl_ctf_writer_free(w);
		return -1;
	}
	uint8_t buf[256];
	struct trawl_ctf_buf b;
	uint64_t ts = 1000;
	int rc = 0;
#define EV(cls, ...) do { trawl_ctf_buf_init(&b, buf, sizeof(buf)); __VA_ARGS__; \
	if (!rc) { rc = trawl_ctf_wstream_event(s0, cls, ts, buf, b.len); } ts += 10; } while (0)
	EV(esd, trawl_ctf_buf_u32(&b, 1); trawl_ctf_buf_u32(&b, 100); trawl_ctf_buf_u32(&b, 100);
	   trawl_ctf_buf_str(&b, "srv"));
	EV(esd, trawl_ctf_buf_u32(&b, 1); trawl_ctf_buf_u32(&b, 101); trawl_ctf_buf_u32(&b, 100);
	   trawl_ctf_buf_str(&b, "srv"));
	EV(efk, trawl_ctf_buf_u32(&b, 100); trawl_ctf_buf_u32(&b, 100); trawl_ctf_buf_str(&b, "srv");
	   trawl_ctf_buf_u32(&b, 102); trawl_ctf_buf_u32(&b, 102));
	EV(efk, trawl_ctf_buf_u32(&b, 102); trawl_ctf_buf_u32(&b, 102); trawl_ctf_buf_str(&b, "srv");
	   trawl_ctf_buf_u32(&b, 103); trawl_ctf_buf_u32(&b, 102));
	for (size_t i = 0; i < sizeof(reads) / sizeof(reads[0]); i++)
		for (int k = 0; k < reads[i].n; k++)
			EV(er, trawl_ctf_buf_u32(&b, (uint32_t)reads[i].tid); trawl_ctf_buf_u32(&b, 3);
			   trawl_ctf_buf_str(&b, "/x"));
#undef EV
	if (!rc)
		rc = trawl_ctf_writer_close(w);
	trawl_ctf_writer_free(w);
	return rc;
}

/* trawl_agg_check() of spec over the trace: its return, the message in err. */
static int check(const char *dir, const char *spec, char *err, size_t errlen)
{
	struct trawl_agg_opts ao = { .sz = sizeof(ao), .spec = spec };
	struct trawl_agg *a = trawl_agg_new(&ao, err, errlen);
	const char *p[] = { dir };
	struct trawl_reader *r = trawl_reader_new(p, 1, NULL, err, errlen);
	int rc = -999;

	*err = 0;
	if (a && r)
		rc = trawl_agg_check(a, r, err, errlen);
	trawl_reader_free(r);
	trawl_agg_free(a);
	return rc;
}

static void test_check(const char *dir)
{
	static const struct { const char *spec; int rc; const char *msg; } cases[] = {
		{ "count(nosuch_event)", -ENOENT, "count(nosuch_event): no event matches 'nosuch_event'" },
		{ "count(syscall_entry_raed)", -ENOENT,
		  "count(syscall_entry_raed): no event matches 'syscall_entry_raed' "
		  "(did you mean 'syscall_entry_read'?)" },
		{ "sum(syscall_entry_read.path)", -EINVAL,
		  "sum(syscall_entry_read.path): syscall_entry_read.path is a string: sum() takes "
		  "numbers (its values as a key: count(syscall_entry_read) by path)" },
		{ "sum(syscall_entry_read.fdd)", -ENOENT,
		  "sum(syscall_entry_read.fdd): event syscall_entry_read has no field 'fdd' "
		  "(did you mean 'fd'?)" },
		{ "count(syscall_entry_read) by nosuchkey", -ENOENT,
		  "count(syscall_entry_read) by nosuchkey: no key 'nosuchkey': not one of host, cpu, "
		  "tid, pid, comm, cgroup, event, and no event matching 'syscall_entry_read' has such "
		  "a field" },
		{ "count(syscall_entry_*) by paht", -ENOENT,
		  "(did you mean 'path'?)" },
		{ "count(syscall_entry_*) by cmm", -ENOENT, "(did you mean 'comm'?)" },
		{ "hist(lat(syscall_entry_*, syscall_exit_*))", -ENOENT,
		  "no event matches 'syscall_exit_*'" },
		{ "count(syscall_entry_*) by pid, tid, path, fd", 0, "" },
		{ "count(sched_process_fork) by child_comm; sum(syscall_entry_read.fd)", 0, "" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char err[512];
		int rc = check(dir, cases[i].spec, err, sizeof(err));
		ok(rc == cases[i].rc && strstr(err, cases[i].msg) &&
		   (cases[i].rc || !*err), "%s: %d, '%s' (%d, '%s')", cases[i].spec, cases[i].rc,
		   cases[i].msg, rc, err);
	}
}

static void test_pid(const char *dir)
{
	char err[512] = "";
	struct trawl_agg_opts ao = { .sz = sizeof(ao), .spec = "count(syscall_entry_read) by pid" };
	struct trawl_agg *a = trawl_agg_new(&ao, err, sizeof(err));
	const char *p[] = { dir };
	struct trawl_reader *r = trawl_reader_new(p, 1, NULL, err, sizeof(err));

	if (!a || !r) {
		ok(0, "the run: %s", err);
		trawl_agg_free(a);
		trawl_reader_free(r);
		return;
	}
	struct trawl_sink k = trawl_agg_sink(a);
	is_int(trawl_pipe_run(r, &k, 1, NULL), 0, "count by pid: the run");
	is_str(trawl_agg_key_name(a, 0, 0), "pid", "the key's name");
	/* pid 100: tids 100 and 101 (3 + 2); 102: 102 and 103 (4 + 2); "-": 200 */
	char got[256] = "";
	size_t o = 0, n = trawl_agg_nrows(a, 0);
	for (size_t i = 0; i < n; i++) {
		struct trawl_agg_row w = { .sz = sizeof(w) };
		if (trawl_agg_row(a, 0, i, &w) == 0)
			o += (size_t)snprintf(got + o, sizeof(got) - o, "%s=%llu ", w.key[0],
					      (unsigned long long)w.count);
	}
	/* the rows by count, highest first */
	is_str(got, "-=7 102=6 100=5 ", "rows: each process's count, '-' for the unknown thread");
	trawl_reader_free(r);
	trawl_agg_free(a);
}

int main(void)
{
	if (!mkdtemp(root))
		return 1;
	char dir[300];
	snprintf(dir, sizeof(dir), "%s/t", root);
	ok(write_trace(dir) == 0, "the trace written");
	test_check(dir);
	test_pid(dir);
	tap_rm_tree(root);
	return done_testing();
}
