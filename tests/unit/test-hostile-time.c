/* SPDX-License-Identifier: MIT */
/*
 * test-hostile-time: traces that are valid but odd, or whose times are
 * impossible, through the pipeline (issue 28, item 11), under UBSan in
 * make check SAN=address,undefined:
 *  - a trace whose events have no fields and no context, read in short
 *    batches (the run copies them): every event reaches the sink, and no
 *    memcpy from or into a null pointer (nor arithmetic on one);
 *  - a clock correction applied to times the whole int64 range from its
 *    t0 saturates at INT64_MIN / INT64_MAX (in order), never overflows.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "trawl/ctf.h"
#include "trawl/pipe.h"
#include "trawl/xform.h"

static char root[] = "/tmp/trawl-test-hostile-time-XXXXXX";

enum { NEV = 50 };	/* below the run's direct batch: the events are copied */

static int write_fieldless(const char *dir)
{
	struct trawl_ctf_writer_opts o = {
		.sz = sizeof(o), .path = dir, .hostname = "bare", .domain = "ust",
		.clock_offset_s = 1700000000, .packet_size = 4096,
	};
	struct trawl_ctf_writer *w = trawl_ctf_writer_new(&o);

	if (!w)
		return -1;
	struct trawl_ctf_stream_class *sc =
		trawl_ctf_writer_stream_class(w, TRAWL_CTF_HEADER_LARGE, NULL);
	struct trawl_ctf_event_class *e =
		sc ? trawl_ctf_writer_event_class(w, sc, "t:tick", 0, NULL) : NULL;
	struct trawl_ctf_wstream *s = e ? trawl_ctf_writer_stream(w, sc, "chan", 0) : NULL;
	int rc = s ? 0 : -1;

	uint8_t none[1];	/* no bytes (not NULL: the writer copies 0 of them) */

	for (int i = 0; i < NEV && !rc; i++)
		rc = trawl_ctf_wstream_event(s, e, 1000 + 10 * (uint64_t)i, none, 0);
	if (!rc)
		rc = trawl_ctf_writer_close(w);
	trawl_ctf_writer_free(w);
	return rc;
}

struct count {
	uint64_t events, nvalues;
	int64_t first, last;
	bool ordered;
};

static int count_events(void *self, const struct trawl_event *ev, size_t n)
{
	struct count *c = self;

	for (size_t i = 0; i < n; i++) {
		if (!c->events)
			c->first = ev[i].ts;
		else if (ev[i].ts < c->last)
			c->ordered = false;
		c->last = ev[i].ts;
		c->events++;
		c->nvalues += ev[i].nvalues;
	}
	return 0;
}

static const struct trawl_sink_ops count_ops = {
	.sz = sizeof(count_ops), .name = "count", .events = count_events,
};

static void test_fieldless(void)
{
	char dir[128], err[512] = "";

	snprintf(dir, sizeof(dir), "%s/bare", root);
	is_int(write_fieldless(dir), 0, "fieldless: a trace of %d events without fields", NEV);

	const char *p[] = { dir };
	struct trawl_reader *r = trawl_reader_new(p, 1, NULL, err, sizeof(err));
	struct count c = { .ordered = true };
	struct trawl_sink k = { &count_ops, &c };

	ok(r != NULL, "fieldless: opened (%s)", err);
	if (!r)
		return;
	is_int(trawl_pipe_run(r, &k, 1, NULL), 0, "fieldless: the run ends with 0");
	is_int(c.events, NEV, "fieldless: every event reached the sink");
	is_int(c.nvalues, 0, "fieldless: none has a value");
	ok(c.ordered && c.last - c.first == 10 * (NEV - 1),
	   "fieldless: in order, 10 ns apart (%lld .. %lld)", (long long)c.first,
	   (long long)c.last);
	trawl_reader_free(r);
}

static void test_xform(void)
{
	const int64_t one = (int64_t)1 << TRAWL_SYNC_SHIFT;
	struct trawl_sync_xform x = { .t0 = 1715556975000000000, .y0 = 1715556975000000000 + 5,
				      .slope = one };

	is_int(trawl_sync_xform_apply(&x, x.t0 + 100), x.y0 + 100, "xform: an ordinary time");
	is_int(trawl_sync_xform_apply(&x, INT64_MIN), INT64_MIN + 5, "xform: INT64_MIN, in range");
	x.y0 = x.t0 - 5;
	is_int(trawl_sync_xform_apply(&x, INT64_MIN), INT64_MIN, "xform: below int64: INT64_MIN");
	x.t0 = -9220920913299891037;
	x.y0 = 1715556975304246294;
	is_int(trawl_sync_xform_apply(&x, INT64_MAX), INT64_MAX, "xform: above int64: INT64_MAX");
	x.slope = 2 * one;
	x.t0 = 0;
	x.y0 = 0;
	ok(trawl_sync_xform_apply(&x, INT64_MAX - 1) == INT64_MAX &&
	   trawl_sync_xform_apply(&x, INT64_MIN) == INT64_MIN &&
	   trawl_sync_xform_apply(&x, -3) == -6, "xform: slope 2 saturates at both ends");
}

int main(void)
{
	if (!mkdtemp(root))
		return 1;
	test_fieldless();
	test_xform();
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		ok(0, "cleanup");
	return done_testing();
}
