/* SPDX-License-Identifier: MIT */
/*
 * test-config-hostile: lib/util/config.c against configuration files that
 * would stop a command (issue 28, item 12): parsing grows linearly with
 * the number of sections (it was quadratic: 40,000 sections took 6 s),
 * and a FIFO, a directory or a device given as the file is refused at
 * once, with the reason, instead of waiting for a writer forever.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/config.h"

#include "tap.h"

/* this thread's CPU time: other work on a shared machine takes wall time
 * from the parse, not CPU time */
static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* n sections of two keys each. */
static char *sections(int n, size_t *len)
{
	size_t cap = (size_t)n * 48 + 1;
	char *t = malloc(cap);
	size_t off = 0;
	if (!t)
		exit(1);
	for (int i = 0; i < n; i++)
		off += (size_t)snprintf(t + off, cap - off, "[s%d]\nkey = %d\nother = x\n", i, i);
	*len = off;
	return t;
}

/* The best of five parses of n sections, in CPU seconds; checks the last
 * section's value (everything was parsed). */
static double parse_time(int n, int *good)
{
	size_t len;
	char *t = sections(n, &len);
	double best = 1e9;
	*good = 1;
	for (int k = 0; k < 5; k++) {
		struct trawl_conf *c = tr_conf_new();
		char err[256] = "";
		double t0 = now_s();
		int ret = tr_conf_parse(c, t, len, "big.conf", 1, err, sizeof(err));
		double dt = now_s() - t0;
		char sec[32], want[32];
		snprintf(sec, sizeof(sec), "s%d", n - 1);
		snprintf(want, sizeof(want), "%d", n - 1);
		const char *got = tr_conf_get(c, sec, "key");
		if (ret || !got || strcmp(got, want) || !tr_conf_get(c, "S0", "KEY"))
			*good = 0;
		tr_conf_free(c);
		if (dt < best)
			best = dt;
	}
	free(t);
	return best;
}

static void on_alarm(int sig)
{
	(void)sig;
	static const char m[] = "not ok - the load did not return within 10 s (it waits for "
				"a writer)\nBail out! hung\n";
	if (write(1, m, sizeof(m) - 1) < 0) {
		/* nothing more to do */
	}
	_exit(1);
}

int main(void)
{
	int g1, g2;
	/* the machine's speed cancels out: the same work, 8 times larger,
	 * takes about 8 times as long when linear and 64 times when
	 * quadratic (56 times, 7.9 s, before the index); the linear parse
	 * measured 12 to 24 times on a shared 2-CPU machine (caches: the
	 * large text is past them), so 40 splits the two */
	double small = parse_time(5000, &g1), big = parse_time(40000, &g2);
	ok(g1 && g2, "5,000 and 40,000 sections parsed, every value there");
	double ratio = big / (small > 1e-6 ? small : 1e-6);
	ok(ratio < 40, "8 times the sections take %.1f times as long (%.1f ms, %.1f ms; < 40: "
	   "linear, not quadratic)", ratio, small * 1e3, big * 1e3);
	ok(big < 2.0, "40,000 sections in %.0f ms (< 2 s; they took 6 s)", big * 1e3);

	/* a FIFO (and other files that are not regular) as the file */
	char dir[] = "/tmp/test-config-hostile.XXXXXX", path[300];
	if (!mkdtemp(dir)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	snprintf(path, sizeof(path), "%s/fifo.conf", dir);
	if (mkfifo(path, 0600) < 0) {
		printf("Bail out! mkfifo: %s\n", strerror(errno));
		return 1;
	}
	signal(SIGALRM, on_alarm);
	alarm(10);
	setenv("TRAWL_CONFIG", path, 1);
	char err[512] = "";
	struct trawl_conf *c = tr_conf_load(err, sizeof(err));
	alarm(0);
	ok(!c, "a FIFO as the configuration file is refused, at once");
	ok(strstr(err, "fifo.conf: not a regular file (a FIFO)") != NULL, "with the reason (%s)",
	   err);
	tr_conf_free(c);
	setenv("TRAWL_CONFIG", dir, 1);
	c = tr_conf_load(err, sizeof(err));
	ok(!c && strstr(err, "not a regular file (a directory)"), "a directory too (%s)", err);
	tr_conf_free(c);
	setenv("TRAWL_CONFIG", "/dev/zero", 1);
	c = tr_conf_load(err, sizeof(err));
	ok(!c && strstr(err, "/dev/zero: not a regular file (a device)"), "a device too (%s)", err);
	tr_conf_free(c);
	setenv("TRAWL_CONFIG", "/dev/null", 1);
	c = tr_conf_load(err, sizeof(err));
	ok(c && !tr_conf_key_at(c, 0, &(const char *){ 0 }, &(const char *){ 0 }),
	   "/dev/null reads as an empty file (no settings)");
	tr_conf_free(c);
	snprintf(path, sizeof(path), "%s/none.conf", dir);
	setenv("TRAWL_CONFIG", path, 1);
	c = tr_conf_load(err, sizeof(err));
	ok(c != NULL, "a file that does not exist is still no error");
	tr_conf_free(c);
	snprintf(path, sizeof(path), "%s/fifo.conf", dir);
	unlink(path);
	rmdir(dir);
	return done_testing();
}
