/* SPDX-License-Identifier: MIT */
/*
 * test-hostile-values: values at the edges, under UBSan and ASan in
 * make check SAN=address,undefined (issue 28, item 11):
 *  - the trace writer given an event without a payload as (NULL, 0):
 *    written (no memcpy from a null pointer), and read back, every event;
 *  - simulate's truth.txt goes through the output-file helper: a symbolic
 *    link planted there is refused and its target left as it was (it was
 *    opened with fopen "w", which followed the link and truncated the
 *    target), and a regular file there is replaced whole.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "tap.h"
#include "trawl/ctf.h"
#include "trawl/pipe.h"
#include "trawl/sim.h"

static char root[] = "/tmp/trawl-test-hostile-values-XXXXXX";

enum { NEV = 40 };

static int count_events(void *self, const struct trawl_event *ev, size_t n)
{
	uint64_t *c = self;

	(void)ev;
	*c += n;
	return 0;
}

static const struct trawl_sink_ops count_ops = {
	.sz = sizeof(count_ops), .name = "count", .events = count_events,
};

static void test_null_payload(void)
{
	char dir[128], err[512] = "";

	snprintf(dir, sizeof(dir), "%s/nullpay", root);
	struct trawl_ctf_writer_opts o = {
		.sz = sizeof(o), .path = dir, .hostname = "bare", .domain = "ust",
		.clock_offset_s = 1700000000, .packet_size = 4096,
	};
	struct trawl_ctf_writer *w = trawl_ctf_writer_new(&o);
	struct trawl_ctf_stream_class *sc =
		w ? trawl_ctf_writer_stream_class(w, TRAWL_CTF_HEADER_LARGE, NULL) : NULL;
	struct trawl_ctf_event_class *e =
		sc ? trawl_ctf_writer_event_class(w, sc, "t:tick", 0, NULL) : NULL;
	struct trawl_ctf_wstream *s = e ? trawl_ctf_writer_stream(w, sc, "chan", 0) : NULL;
	int rc = s ? 0 : -1, i;

	for (i = 0; i < NEV && !rc; i++)
		rc = trawl_ctf_wstream_event(s, e, 1000 + 10 * (uint64_t)i, NULL, 0);
	is_int(rc, 0, "null payload: %d events written with (NULL, 0)", i);
	is_int(w ? trawl_ctf_writer_close(w) : -1, 0, "null payload: the trace closed");
	trawl_ctf_writer_free(w);

	const char *p[] = { dir };
	struct trawl_reader *r = trawl_reader_new(p, 1, NULL, err, sizeof(err));
	uint64_t n = 0;
	struct trawl_sink k = { &count_ops, &n };

	ok(r != NULL, "null payload: the trace opens (%s)", err);
	if (!r)
		return;
	is_int(trawl_pipe_run(r, &k, 1, NULL), 0, "null payload: read to the end");
	is_int(n, NEV, "null payload: every event read back");
	trawl_reader_free(r);
}

static int simulate(const char *out, char *err, size_t errlen)
{
	struct trawl_sim_opts o = TRAWL_SIM_OPTS_INIT;

	o.output = out;
	o.force = true;
	o.events = 200;
	o.sync = true;
	struct trawl_sim *s = trawl_sim_new(&o, err, errlen);

	if (!s)
		return -1;
	int rc = trawl_sim_run(s, err, errlen);

	trawl_sim_free(s);
	return rc;
}

static void test_truth_file(void)
{
	char dir[128], truth[160], victim[160], err[512] = "", buf[64] = "";

	snprintf(dir, sizeof(dir), "%s/sess", root);
	snprintf(truth, sizeof(truth), "%s/truth.txt", dir);
	snprintf(victim, sizeof(victim), "%s/victim", root);
	FILE *f = fopen(victim, "w");

	if (f) {
		fputs("keep me\n", f);
		fclose(f);
	}
	ok(mkdir(dir, 0755) == 0 && symlink(victim, truth) == 0,
	   "truth: a symbolic link planted at SESSION/truth.txt");
	int rc = simulate(dir, err, sizeof(err));

	ok(rc < 0, "truth: simulate --sync refuses it (%d)", rc);
	ok(strstr(err, "sess/truth.txt: is a symbolic link (not followed") != NULL,
	   "truth: the message names the file and why (%s)", err);
	f = fopen(victim, "r");
	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = 0;
		fclose(f);
	}
	is_str(buf, "keep me\n", "truth: the link's target is as it was");

	struct stat st;

	ok(unlink(truth) == 0, "truth: the link removed");
	f = fopen(truth, "w");
	if (f) {
		fputs("old\n", f);
		fclose(f);
	}
	err[0] = 0;
	is_int(simulate(dir, err, sizeof(err)), 0, "truth: a regular file there: written (%s)", err);
	buf[0] = 0;
	f = fopen(truth, "r");
	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = 0;
		fclose(f);
	}
	is_str(buf, "# trawl simulate truth 1\n", "truth: replaced whole by the new truth");
	ok(lstat(truth, &st) == 0 && S_ISREG(st.st_mode), "truth: a regular file");
}

int main(void)
{
	if (!mkdtemp(root))
		return 1;
	test_null_payload();
	test_truth_file();
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		ok(0, "cleanup");
	return done_testing();
}
