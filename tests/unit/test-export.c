/* SPDX-License-Identifier: MIT */
/*
 * test-export: the exports (trawl/export.h, lib/export/).
 *  - the protobuf encoder against golden bytes: varints (one byte, two,
 *    ten), negative int32 (ten bytes), fixed64, strings, nested messages
 *    (a body longer than 127 bytes moves), and three TracePackets whose
 *    bytes protoc wrote from tests/data/perfetto/trace.proto (a track
 *    event with a flow, a sched_switch bundle, a SystemInfo with a long
 *    name);
 *  - the sink on a trace written here: begin/end pairs that overlap on one
 *    thread go on two lanes (a lane is reused once free), pairs without an
 *    id pair per thread, an end without a begin and a begin never ended
 *    are counted unmatched, other events are instants;
 *  - chrome-json: host i's pid p is (i + 1) * 10,000,000 + p; beyond
 *    max_events the run fails with EFBIG and no file is left;
 *  - fields: with opts.fields, an event's context and fields as JSON (a
 *    debug annotation, args), none without.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "trawl/ctf.h"
#include "trawl/export.h"
#include "trawl/pipe.h"
#include "export/pb.h"

static char root[] = "/tmp/trawl-test-export-XXXXXX";

static int same_bytes(const struct tr_pb *pb, const uint8_t *want, size_t n, const char *what)
{
	int good = !pb->nomem && pb->len == n && !memcmp(pb->buf, want, n);

	if (!good) {
		printf("# %s: got %zu bytes:", what, pb->len);
		for (size_t i = 0; i < pb->len && i < 64; i++)
			printf(" %02x", pb->buf[i]);
		printf("\n");
	}
	return ok(good, "%s: %zu golden bytes", what, n);
}

static void test_pb(void)
{
	struct tr_pb pb;

	tr_pb_init(&pb);
	{
		static const uint8_t want[] = {
			0x08, 0x00, 0x08, 0x7f, 0x08, 0x80, 0x01, 0x08, 0xac, 0x02,
			0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
		};
		tr_pb_uint(&pb, 1, 0);
		tr_pb_uint(&pb, 1, 127);
		tr_pb_uint(&pb, 1, 128);
		tr_pb_uint(&pb, 1, 300);
		tr_pb_uint(&pb, 1, UINT64_MAX);
		same_bytes(&pb, want, sizeof(want), "varints 0, 127, 128, 300, 2^64-1");
	}
	tr_pb_clear(&pb);
	{
		static const uint8_t want[] = {
			0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
			0x19, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,
			0xa2, 0x06, 0x03, 'a', 'b', 'c',
		};
		tr_pb_int(&pb, 2, -1);
		tr_pb_fixed64(&pb, 3, 0x0102030405060708ull);
		tr_pb_str(&pb, 100, "abc");
		same_bytes(&pb, want, sizeof(want), "int32 -1, fixed64, a string in field 100");
	}
	tr_pb_clear(&pb);
	{
		/* protoc --encode perfetto.protos.Trace: packet { timestamp: 1000
		 * trusted_packet_sequence_id: 1 track_event { type: TYPE_INSTANT
		 * track_uuid: 42 name: "hi" flow_ids: 7 } machine_id: 2 } */
		static const uint8_t want[] = {
			0x0a, 0x1d, 0x40, 0xe8, 0x07, 0x50, 0x01, 0x5a, 0x13, 0x48, 0x03, 0x58,
			0x2a, 0xba, 0x01, 0x02, 0x68, 0x69, 0xf9, 0x02, 0x07, 0x00, 0x00, 0x00,
			0x00, 0x00, 0x00, 0x00, 0x90, 0x06, 0x02,
		};
		tr_pb_begin(&pb, 1);
		tr_pb_uint(&pb, 8, 1000);
		tr_pb_uint(&pb, 10, 1);
		tr_pb_begin(&pb, 11);
		tr_pb_uint(&pb, 9, 3);
		tr_pb_uint(&pb, 11, 42);
		tr_pb_str(&pb, 23, "hi");
		tr_pb_fixed64(&pb, 47, 7);
		tr_pb_end(&pb);
		tr_pb_uint(&pb, 98, 2);
		tr_pb_end(&pb);
		same_bytes(&pb, want, sizeof(want), "a track event packet (protoc's bytes)");
	}
	tr_pb_clear(&pb);
	{
		/* packet { ftrace_events { cpu: 1 event { timestamp: 300 pid: 5
		 * sched_switch { prev_comm: "a" prev_pid: 5 prev_prio: 120
		 * prev_state: 1 next_comm: "b" next_pid: -1 next_prio: 100 } } }
		 * machine_id: 1 } */
		static const uint8_t want[] = {
			0x0a, 0x29, 0x0a, 0x24, 0x08, 0x01, 0x12, 0x20, 0x08, 0xac, 0x02, 0x10,
			0x05, 0x22, 0x19, 0x0a, 0x01, 0x61, 0x10, 0x05, 0x18, 0x78, 0x20, 0x01,
			0x2a, 0x01, 0x62, 0x30, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
			0xff, 0x01, 0x38, 0x64, 0x90, 0x06, 0x01,
		};
		tr_pb_begin(&pb, 1);
		tr_pb_begin(&pb, 1);
		tr_pb_uint(&pb, 1, 1);
		tr_pb_begin(&pb, 2);
		tr_pb_uint(&pb, 1, 300);
		tr_pb_uint(&pb, 2, 5);
		tr_pb_begin(&pb, 4);
		tr_pb_str(&pb, 1, "a");
		tr_pb_int(&pb, 2, 5);
		tr_pb_int(&pb, 3, 120);
		tr_pb_int(&pb, 4, 1);
		tr_pb_str(&pb, 5, "b");
		tr_pb_int(&pb, 6, -1);
		tr_pb_int(&pb, 7, 100);
		tr_pb_end(&pb);
		tr_pb_end(&pb);
		tr_pb_end(&pb);
		tr_pb_uint(&pb, 98, 1);
		tr_pb_end(&pb);
		same_bytes(&pb, want, sizeof(want), "a sched_switch bundle (protoc's bytes)");
		is_int(pb.depth, 0, "every message closed");
	}
	tr_pb_clear(&pb);
	{
		/* packet { system_info { machine_name: "m" x 130 } }: lengths of
		 * two bytes at three levels (the bodies moved) */
		static const uint8_t head[] = {
			0x0a, 0x8a, 0x01, 0xea, 0x02, 0x86, 0x01, 0x8a, 0x01, 0x82, 0x01,
		};
		uint8_t full[sizeof(head) + 130];
		char name[131];

		memset(name, 'm', 130);
		name[130] = 0;
		memcpy(full, head, sizeof(head));
		memset(full + sizeof(head), 'm', 130);
		tr_pb_begin(&pb, 1);
		tr_pb_begin(&pb, 45);
		tr_pb_str(&pb, 17, name);
		tr_pb_end(&pb);
		tr_pb_end(&pb);
		same_bytes(&pb, full, sizeof(full), "nested lengths over 127 (protoc's bytes)");
	}
	tr_pb_release(&pb);
}

/* ------------------------------------------------------------- the sink */

enum { C_BEGIN, C_END, C_TICK, C_ENTRY, C_EXIT, NCLS };

struct rec {
	int cls;
	uint64_t ts;
	int32_t pid, tid;
	uint64_t id;
};

/* One ust trace of host "h1": ctx { vpid, vtid }; a:req_begin/end { id },
 * a:tick, a:op_entry/exit (no id). */
static int write_ust(const char *dir)
{
	static const struct rec recs[] = {
		{ C_BEGIN, 100, 10, 11, 1 },
		{ C_BEGIN, 110, 10, 11, 2 },	/* overlaps 1: lane 1 */
		{ C_END, 120, 10, 11, 1 },	/* not nested: fine on lanes */
		{ C_BEGIN, 130, 10, 11, 3 },	/* lane 0 again */
		{ C_END, 140, 10, 11, 2 },
		{ C_END, 150, 10, 11, 3 },
		{ C_END, 160, 10, 11, 99 },	/* no begin: an instant */
		{ C_TICK, 170, 10, 12, 0 },
		{ C_ENTRY, 180, 10, 12, 0 },
		{ C_EXIT, 190, 10, 12, 0 },
		{ C_BEGIN, 200, 20, 21, 5 },	/* never ended */
	};
	struct trawl_ctf_writer_opts o = {
		.sz = sizeof(o), .path = dir, .hostname = "h1", .domain = "ust",
		.clock_offset_s = 1700000000, .packet_size = 4096,
	};
	struct trawl_ctf_writer *w = trawl_ctf_writer_new(&o);

	if (!w)
		return -1;
	struct trawl_ctf_type *s32 = trawl_ctf_type_int(w, 32, true, 10);
	struct trawl_ctf_type *u64 = trawl_ctf_type_int(w, 64, false, 10);
	struct trawl_ctf_type *ctx = trawl_ctf_type_struct(w);
	struct trawl_ctf_type *idt = trawl_ctf_type_struct(w);

	trawl_ctf_struct_add(w, ctx, "vpid", s32);
	trawl_ctf_struct_add(w, ctx, "vtid", s32);
	trawl_ctf_struct_add(w, idt, "id", u64);
	struct trawl_ctf_stream_class *sc = trawl_ctf_writer_stream_class(w, TRAWL_CTF_HEADER_LARGE, ctx);
	struct trawl_ctf_event_class *ec[NCLS] = {
		trawl_ctf_writer_event_class(w, sc, "a:req_begin", 0, idt),
		trawl_ctf_writer_event_class(w, sc, "a:req_end", 0, idt),
		trawl_ctf_writer_event_class(w, sc, "a:tick", 0, NULL),
		trawl_ctf_writer_event_class(w, sc, "a:op_entry", 0, NULL),
		trawl_ctf_writer_event_class(w, sc, "a:op_exit", 0, NULL),
	};
	struct trawl_ctf_wstream *s = trawl_ctf_writer_stream(w, sc, "chan", 0);
	int rc = s ? 0 : -1;

	for (size_t i = 0; i < NCLS; i++)
		rc |= ec[i] ? 0 : -1;
	for (size_t i = 0; i < ARRAY_SIZE(recs) && !rc; i++) {
		uint8_t buf[64];
		struct trawl_ctf_buf b;

		trawl_ctf_buf_init(&b, buf, sizeof(buf));
		trawl_ctf_buf_u32(&b, (uint32_t)recs[i].pid);
		trawl_ctf_buf_u32(&b, (uint32_t)recs[i].tid);
		if (recs[i].cls == C_BEGIN || recs[i].cls == C_END)
			trawl_ctf_buf_u64(&b, recs[i].id);
		rc = trawl_ctf_wstream_event(s, ec[recs[i].cls], recs[i].ts, buf, b.len);
	}
	if (!rc)
		rc = trawl_ctf_writer_close(w);
	trawl_ctf_writer_free(w);
	return rc;
}

static int run_export(const char *dir, const char *format, const char *out, uint64_t max,
		      bool fields, struct trawl_export_stats *st, char *err, size_t errlen)
{
	const char *p[] = { dir };
	struct trawl_reader *r = trawl_reader_new(p, 1, NULL, err, errlen);
	struct trawl_export_opts o = {
		.sz = sizeof(o), .format = format, .path = out, .max_events = max,
		.fields = fields,
	};
	struct trawl_export *x = r ? trawl_export_new(&o, err, errlen) : NULL;
	int rc = -1;

	if (x) {
		struct trawl_sink s = trawl_export_sink(x);

		rc = trawl_pipe_run(r, &s, 1, NULL);
		*st = *trawl_export_stats(x);
		snprintf(err, errlen, "%s", trawl_export_error(x));
	}
	trawl_export_free(x);
	trawl_reader_free(r);
	return rc;
}

static bool has(const uint8_t *buf, size_t len, const char *s)
{
	return memmem(buf, len, s, strlen(s)) != NULL;
}

static void test_sink(void)
{
	char *dir = strdup(tap_path(root, "ust"));	/* tap_path(): one buffer */
	struct trawl_export_stats st;
	char err[512] = "";
	size_t len = 0;
	uint8_t *buf;

	if (!ok(write_ust(dir) == 0, "a ust trace written")) {
		free(dir);
		return;
	}
	char *pf = strdup(tap_path(root, "t.pftrace"));
	int rc = run_export(dir, "perfetto", pf, 0, false, &st, err, sizeof(err));

	is_int(rc, 0, "perfetto: the run %s", err);
	is_int(st.events, 11, "every event read");
	is_int(st.slices, 4, "slices: 3 by id (overlapping), 1 by thread");
	is_int(st.unmatched, 2, "unmatched: an end without begin, a begin never ended");
	is_int(st.instants, 2, "instants: a:tick and the lone end");
	is_int(st.hosts, 1, "one machine");
	buf = slurp(pf, &len);
	ok(buf && len == st.bytes, "the file has the bytes said (%zu)", len);
	ok(buf && has(buf, len, "slices 1") && !has(buf, len, "slices 2"),
	   "two overlapping slices take lanes 0 and 1, a third reuses lane 0");
	ok(buf && has(buf, len, "a:req") && has(buf, len, "a:op") && has(buf, len, "a:req_end"),
	   "slices are named by their stem, the lone end by its event");
	ok(access(tap_path(root, "t.pftrace.tmp"), F_OK) != 0, "no temporary file left");
	ok(buf && !has(buf, len, "\"fields\""), "no fields unless asked");
	free(buf);
	rc = run_export(dir, "perfetto", pf, 0, true, &st, err, sizeof(err));
	buf = slurp(pf, &len);
	ok(!rc && buf && has(buf, len, "{\"context\":{\"vpid\":10,\"vtid\":11},\"fields\":{\"id\":2}}"),
	   "--fields: an event's context and fields as JSON");
	free(buf);

	char *cj = strdup(tap_path(root, "t.json"));
	rc = run_export(dir, "chrome-json", cj, 0, false, &st, err, sizeof(err));
	is_int(rc, 0, "chrome-json: the run %s", err);
	buf = slurp(cj, &len);
	ok(buf && has(buf, len, "\"pid\":10000010,\"tid\":11") &&
	   has(buf, len, "\"pid\":10000020,\"tid\":21"),
	   "host 0's pid 10 and 20 are 10000010 and 10000020");
	ok(buf && has(buf, len, "\"displayTimeUnit\":\"ns\""), "times shown in ns");
	ok(buf && !has(buf, len, "\"args\":{\"context\""), "no fields unless asked");
	free(buf);
	rc = run_export(dir, "chrome-json", cj, 0, true, &st, err, sizeof(err));
	buf = slurp(cj, &len);
	ok(!rc && buf && has(buf, len, "\"args\":{\"context\":{\"vpid\":10,\"vtid\":12},\"fields\":{}}"),
	   "--fields: the record's args");
	free(buf);

	char *big = strdup(tap_path(root, "big.json"));
	rc = run_export(dir, "chrome-json", big, 3, false, &st, err, sizeof(err));
	is_int(rc, -EFBIG, "past max_events: EFBIG (%s)", err);
	/* chrome-json keeps the first max_events records (issue 27.12) */
	buf = slurp(big, &len);
	size_t nrec = 0;
	for (const uint8_t *q = buf; buf && (q = memmem(q, len - (size_t)(q - buf), "\"ph\":", 5)); q++)
		nrec++;
	ok(st.truncated && st.written == 3 && nrec == 3 &&
	   access(tap_path(root, "big.json.tmp"), F_OK) != 0,
	   "chrome-json: a file of the first 3 records (%zu), no temporary one left", nrec);
	free(buf);
	char *bigp = strdup(tap_path(root, "big.pftrace"));
	rc = run_export(dir, "perfetto", bigp, 3, false, &st, err, sizeof(err));
	ok(rc == -EFBIG && !st.truncated && access(bigp, F_OK) != 0 &&
	   access(tap_path(root, "big.pftrace.tmp"), F_OK) != 0,
	   "perfetto past max_events: EFBIG, and no file, not even the temporary one");
	free(bigp);

	struct trawl_export_opts o = { .sz = sizeof(o), .format = "svg", .path = big };
	errno = 0;
	ok(!trawl_export_new(&o, err, sizeof(err)) && errno == EINVAL, "an unknown format: %s", err);
	const char *help;
	is_str(trawl_export_format_name(0, &help), "perfetto", "the table's first row");
	is_str(trawl_export_format_name(1, NULL), "chrome-json", "its second");
	ok(!trawl_export_format_name(2, NULL), "and no third");
	free(dir);
	free(pf);
	free(cj);
	free(big);
}

int main(void)
{
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	test_pb();
	test_sink();
	tap_rm_tree(root);
	return done_testing();
}
