/* SPDX-License-Identifier: MIT */
/*
 * The simulator as a library (trawl/sim.h): the result (counts, start,
 * span, every host's clock) before and after a run, the truth file agreeing
 * with the result's clocks, trawl_sim_clock_delta against the formula
 * (drift change, rounding), the progress callback (every event counted,
 * in order; a non-zero return cancels the run), a second run refused,
 * option errors (EINVAL with a message, EEXIST for a non-empty output,
 * E2BIG for unknown trailing options), the same seed giving the same
 * bytes, and the warning through the log hook when an embedded relay is
 * stopped in the middle of the last trace (the run goes on, the local copy
 * is complete).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "trawl/relay.h"
#include "trawl/sim.h"

static char trash[64];
#define path(...) tap_path(trash, __VA_ARGS__)

/* ---- progress */

struct prog {
	uint64_t calls, last, total;
	bool ordered;
	uint64_t cancel_at;	/* return 1 at this call (1-based); 0: never */
};

static int on_progress(void *arg, uint64_t done, uint64_t total)
{
	struct prog *p = arg;
	p->calls++;
	if (done <= p->last || done > total)
		p->ordered = false;
	p->last = done;
	p->total = total;
	return p->cancel_at && p->calls == p->cancel_at;
}

/* ---- an embedded relay stopped from the progress callback */

struct lost {
	struct trawl_relay *r;
	pthread_t th;
	bool running;
	uint64_t stop_after;	/* events written */
	char log[1024];
	int nlog, level;
};

static void *relay_run(void *arg)
{
	trawl_relay_run(arg);
	return NULL;
}

static int stop_relay(void *arg, uint64_t done, uint64_t total)
{
	struct lost *l = arg;
	if (l->running && done >= l->stop_after) {
		trawl_relay_stop(l->r);
		pthread_join(l->th, NULL);
		l->running = false;
	}
	return 0;
}

static void on_log(void *arg, int level, const char *msg)
{
	struct lost *l = arg;
	snprintf(l->log, sizeof(l->log), "%s", msg);
	l->level = level;
	l->nlog++;
}

/* A line of truth.txt for host h ("host hostH offset_ns ..."), or "". */
static void truth_line(const char *file, unsigned h, char *out, size_t n)
{
	size_t len;
	char *t = (char *)slurp(file, &len), want[32];
	out[0] = 0;
	snprintf(want, sizeof(want), "host host%u ", h);
	for (char *line = t ? strtok(t, "\n") : NULL; line; line = strtok(NULL, "\n"))
		if (!strncmp(line, want, strlen(want)))
			snprintf(out, n, "%s", line);
	free(t);
}

static void check_errors(void)
{
	char err[256];
	struct trawl_sim_opts o = TRAWL_SIM_OPTS_INIT;
	struct trawl_sim *s;

	o.output = path("e1");
	o.cpus = TRAWL_SIM_MAX_CPUS + 1;
	s = trawl_sim_new(&o, err, sizeof(err));
	ok(!s && errno == EINVAL && strstr(err, "--cpus"), "cpus beyond the limit: EINVAL (%s)", err);

	o = (struct trawl_sim_opts)TRAWL_SIM_OPTS_INIT;
	o.relay = "127.0.0.1:1";
	o.sync = true;
	s = trawl_sim_new(&o, err, sizeof(err));
	ok(!s && errno == EINVAL && strstr(err, "truth.txt"),
	   "sync to a relay only (no output for truth.txt): EINVAL (%s)", err);

	o = (struct trawl_sim_opts)TRAWL_SIM_OPTS_INIT;
	s = trawl_sim_new(&o, err, sizeof(err));
	ok(!s && errno == EINVAL && strstr(err, "nor relay"), "neither output nor relay: EINVAL (%s)",
	   err);

	o.output = path("e2");
	o.sync = true;
	o.hosts = TRAWL_SIM_SYNC_MAX_HOSTS + 1;
	s = trawl_sim_new(&o, err, sizeof(err));
	ok(!s && errno == EINVAL && strstr(err, "at most 256 hosts"), "sync over 256 hosts: EINVAL (%s)",
	   err);

	o.hosts = 3;
	o.rate = NAN;
	s = trawl_sim_new(&o, err, sizeof(err));
	ok(!s && errno == EINVAL && strstr(err, "--sync-rate"), "a NaN rate: EINVAL (%s)", err);

	o.rate = 200;
	const struct trawl_sim_drift_change ch[] = { { 1, 0.5, 1000 }, { 3, 0.5, 1000 } };
	o.changes = ch;
	o.nchanges = 2;
	s = trawl_sim_new(&o, err, sizeof(err));
	ok(!s && errno == EINVAL && strstr(err, "no host 3"), "a drift change of no host: EINVAL (%s)",
	   err);

	o.nchanges = 1;
	o.asym = 0;
	s = trawl_sim_new(&o, err, sizeof(err));
	ok(!s && errno == EINVAL && strstr(err, "--asym"), "asym 0: EINVAL (%s)", err);

	/* sz: a smaller struct is refused, a larger one only with its unknown tail 0 */
	struct {
		struct trawl_sim_opts o;
		char more[8];
	} big = { .o = TRAWL_SIM_OPTS_INIT };
	big.o.output = path("e3");
	big.o.events = 10;
	big.o.sz = sizeof(big);
	s = trawl_sim_new(&big.o, err, sizeof(err));
	ok(s != NULL, "a larger options struct whose tail is 0: accepted (%s)", s ? "" : err);
	trawl_sim_free(s);
	big.more[3] = 1;
	s = trawl_sim_new(&big.o, err, sizeof(err));
	ok(!s && errno == E2BIG, "... with a non-zero tail: E2BIG (%s)", err);
	big.o.sz = sizeof(big.o) - 1;
	s = trawl_sim_new(&big.o, NULL, 0);
	ok(!s && errno == EINVAL, "a smaller options struct: EINVAL (err NULL is fine)");
	trawl_sim_free(NULL);
}

int main(void)
{
	alarm(120);
	snprintf(trash, sizeof(trash), "/tmp/trawl-test-sim-XXXXXX");
	if (!mkdtemp(trash)) {
		perror("mkdtemp");
		return 1;
	}
	char err[512] = "";

	/* ---- clocks: the formula, a drift change, rounding halves up */
	const struct trawl_sim_clock c1 = { 1000, 50000, 1000000000, -20000 };
	is_int(trawl_sim_clock_delta(&c1, 500000000), 1000 + 25000, "delta before the change");
	is_int(trawl_sim_clock_delta(&c1, 2000000000), 1000 + 50000 - 20000,
	       "delta after the change: continuous, the new drift from the change on");
	const struct trawl_sim_clock c2 = { 0, 1, INT64_MAX, 1 };
	is_int(trawl_sim_clock_delta(&c2, 500000000), 1, "+0.5 ns rounds up to 1");
	is_int(trawl_sim_clock_delta(&c2, -500000000), 0, "-0.5 ns rounds up to 0");
	is_int(trawl_sim_clock_delta(&c2, 1499999999), 1, "1.499999999 ns rounds to 1");

	/* ---- a run with sync */
	struct prog pg = { .ordered = true };
	const struct trawl_sim_drift_change ch = { 2, 0.5, -60000 };
	char adir[512];
	snprintf(adir, sizeof(adir), "%s", path("a"));
	struct trawl_sim_opts o = TRAWL_SIM_OPTS_INIT;
	o.output = adir;
	o.hosts = 3;
	o.cpus = 1;
	o.events = 300000;
	o.seed = 7;
	o.sync = true;
	o.changes = &ch;
	o.nchanges = 1;
	o.progress = on_progress;
	o.progress_arg = &pg;
	struct trawl_sim *s = trawl_sim_new(&o, err, sizeof(err));
	ok(s != NULL, "trawl_sim_new with sync (%s)", s ? "" : err);
	if (!s)
		return done_testing();
	const struct trawl_sim_result *r = trawl_sim_result(s);
	ok(r->hosts == 3 && r->cpus == 1 && r->events == 300000 &&
	   r->kernel_events + r->ust_events == 300000 && r->kernel_events == 225000,
	   "result before the run: 3 hosts x 1 CPU, 300000 events, 225000 of them kernel");
	ok(r->start_ns >= 1704067200ull * 1000000000 && r->span_ns >= 1000000000,
	   "a start in 2024 or later (%" PRIu64 "), a span of a second at least (%" PRIu64 ")",
	   r->start_ns, r->span_ns);
	ok(r->clocks && r->clocks[0].offset_ns == 0 && r->clocks[0].drift_ppb == 0 &&
	   r->clocks[0].change_ns == INT64_MAX, "clocks known before the run; host0 the reference");
	ok(r->clocks && r->clocks[2].drift2_ppb == -60000 &&
	   r->clocks[2].change_ns == (int64_t)(r->span_ns / 2) && r->clocks[1].change_ns == INT64_MAX,
	   "host2's drift change at half the span, to -60 ppm; host1 has none");
	ok(r->truth == NULL && r->probes == 0, "no truth file nor traffic before the run");
	struct stat st;
	ok(stat(o.output, &st) != 0, "trawl_sim_new wrote nothing");

	is_int(trawl_sim_run(s, err, sizeof(err)), 0, "trawl_sim_run (%s)", err);
	ok(pg.ordered && pg.last == 300000 && pg.total == 300000 && pg.calls >= 300000 / 65536,
	   "progress: %" PRIu64 " calls, increasing, the last at 300000 of 300000", pg.calls);
	is_str(r->truth, path("a/truth.txt"), "the truth file's path");
	ok(r->probes > 0 && r->rpcs > 0 && r->sends == r->probes + r->rpcs + r->dups &&
	   r->recvs == r->sends - r->lost, "traffic totals (%" PRIu64 " probes, %" PRIu64 " RPCs)",
	   r->probes, r->rpcs);
	char line[256], want[256];
	truth_line(r->truth, 1, line, sizeof(line));
	snprintf(want, sizeof(want), "host host1 offset_ns %" PRId64 " drift_ppm ",
		 r->clocks[1].offset_ns);
	ok(!strncmp(line, want, strlen(want)) &&
	   fabs(atof(line + strlen(want)) * 1000 - (double)r->clocks[1].drift_ppb) < 0.5,
	   "truth.txt says host1's clock as the result does (%s)", line);
	truth_line(r->truth, 2, line, sizeof(line));
	snprintf(want, sizeof(want), " change_ns %" PRIu64 " drift2_ppm -60",
		 r->start_ns + (uint64_t)r->clocks[2].change_ns);
	ok(strstr(line, want) != NULL, "... and host2's drift change (%s)", line);
	is_int(trawl_sim_run(s, err, sizeof(err)), -EINVAL, "a second run: -EINVAL (%s)", err);
	ok(stat(path("a/host2/ust/sync_0"), &st) == 0 && stat(path("a/host2/kernel/channel0_0"), &st) == 0,
	   "host2's kernel stream and sync stream written");
	trawl_sim_free(s);

	/* ---- the same seed, the same bytes; a non-empty output */
	char bdir[512];
	snprintf(bdir, sizeof(bdir), "%s", path("b"));	/* (path's buffers are reused) */
	o.output = bdir;
	o.progress = NULL;
	s = trawl_sim_new(&o, err, sizeof(err));
	is_int(s ? trawl_sim_run(s, err, sizeof(err)) : -1, 0, "again into b (%s)", err);
	trawl_sim_free(s);
	ok(same_file(path("a/host1/kernel/channel0_0"), path("b/host1/kernel/channel0_0")) &&
	   same_file(path("a/host1/ust/sync_0"), path("b/host1/ust/sync_0")) &&
	   same_file(path("a/host2/ust/metadata"), path("b/host2/ust/metadata")) &&
	   same_file(path("a/truth.txt"), path("b/truth.txt")), "the same seed: the same bytes");
	s = trawl_sim_new(&o, err, sizeof(err));
	ok(!s && errno == EEXIST && strstr(err, "is not empty"), "b again: EEXIST (%s)", err);
	o.force = true;
	s = trawl_sim_new(&o, err, sizeof(err));
	ok(s != NULL, "... unless force");
	trawl_sim_free(s);

	/* ---- cancel from progress */
	struct prog pc = { .ordered = true, .cancel_at = 2 };
	struct trawl_sim_opts oc = TRAWL_SIM_OPTS_INIT;
	oc.output = path("c");
	oc.events = 1000000;
	oc.progress = on_progress;
	oc.progress_arg = &pc;
	s = trawl_sim_new(&oc, err, sizeof(err));
	int ret = s ? trawl_sim_run(s, err, sizeof(err)) : -1;
	ok(ret == -ECANCELED && pc.calls == 2 && strstr(err, "host0/kernel"),
	   "progress returning 1: the run stops at once, -ECANCELED (%s)", err);
	trawl_sim_free(s);

	check_errors();

	/* ---- an embedded relay stopped during the last trace: a warning */
	struct lost l = { .stop_after = 300000 + 65536 };
	struct trawl_relay_opts ro = {
		.sz = sizeof(ro), .output = path("relay"), .data_addr = "127.0.0.1:0",
		.live_addr = "127.0.0.1:0",
	};
	l.r = trawl_relay_new(&ro, err, sizeof(err));
	ok(l.r && pthread_create(&l.th, NULL, relay_run, l.r) == 0, "an embedded relay (%s)",
	   l.r ? "" : err);
	if (!l.r)
		return done_testing();
	l.running = true;
	struct trawl_sim_opts ol = TRAWL_SIM_OPTS_INIT;
	char ldir[512];
	snprintf(ldir, sizeof(ldir), "%s", path("l"));
	ol.output = ldir;
	ol.hosts = 1;
	ol.cpus = 1;
	ol.events = 400000;	/* 300000 kernel, then 100000 ust */
	ol.packet_size = 4096;
	ol.relay = trawl_relay_data_addr(l.r);
	ol.session = "lost";
	ol.progress = stop_relay;
	ol.progress_arg = &l;
	ol.log = on_log;
	ol.log_arg = &l;
	s = trawl_sim_new(&ol, err, sizeof(err));
	ret = s ? trawl_sim_run(s, err, sizeof(err)) : -1;
	ok(ret == 0 && !l.running, "the relay stopped in the middle of the ust trace: the run goes on (%s)",
	   ret ? err : "");
	ok(l.nlog == 1 && l.level == TRAWL_SIM_LOG_WARNING && strstr(l.log, "l/host0/ust: the relay was lost") &&
	   strstr(l.log, "only the local copy is complete"), "one warning through the log hook: %s",
	   l.log);
	ok(same_file(path("relay/lost/host0/kernel/channel0_0"), path("l/host0/kernel/channel0_0")),
	   "the kernel trace reached the relay whole");
	trawl_sim_free(s);
	if (l.running) {
		trawl_relay_stop(l.r);
		pthread_join(l.th, NULL);
	}
	trawl_relay_free(l.r);

	if (!tap_fail) {
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", trash);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", trash);
	}
	return done_testing();
}
