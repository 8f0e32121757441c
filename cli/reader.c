/* SPDX-License-Identifier: MIT */
/*
 * cli/reader.c - the reader of the commands that read traces (print, agg):
 * the trace files under paths and the live sessions, with their filters
 * and clock corrections.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "trawl/pipe.h"
#include "trawl/sync.h"

/* A trace of a session that cannot be opened: reported, skipped. */
void cli_report_bad_trace(void *arg, const char *msg)
{
	if (arg) {
		(*(int *)arg)++;
		cli_err("%s; the trace is skipped", msg);
	}
}

static int64_t mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/*
 * The live source of url; a session the relay does not list (ENOENT: the
 * relay answered) is asked for again every 200 ms up to co->wait_ms, with
 * a note once (a test waits for it). NULL with the message in err.
 */
static struct trawl_source *live_source(const char *url, const struct cli_reader_opts *co,
					const struct trawl_source_opts *so, char *err,
					size_t errlen)
{
	int64_t t0 = mono_ms();
	bool told = false;

	for (;;) {
		struct trawl_source *s = trawl_source_live(url, so, err, errlen);
		int e = errno;

		if (s)
			return s;
		if (e != ENOENT || !co->wait_ms)
			break;
		int64_t waited = mono_ms() - t0;
		if (co->wait_ms > 0 && waited >= co->wait_ms) {
			size_t l = strlen(err);
			snprintf(err + l, errlen > l ? errlen - l : 0, ", after waiting %.1f s (--wait)",
				 (double)waited / 1000);
			break;
		}
		if (!told) {
			char bound[64] = "Ctrl-C to stop, --wait S to give up after S seconds";
			if (co->wait_ms > 0)
				snprintf(bound, sizeof(bound), "up to %.1f s, --wait",
					 (double)co->wait_ms / 1000);
			cli_note("%s: the relay has no such session yet: waiting for it (%s)", url,
				 bound);
			told = true;
		}
		struct timespec d = { 0, 200 * 1000000L };
		nanosleep(&d, NULL);
		errno = e;
	}
	errno = errno ? errno : EIO;
	return NULL;
}

int cli_wait_arg(const char *arg, long *ms)
{
	char *end;
	double s = strtod(arg, &end);

	if (!*arg || *end || !(s >= 0) || s > 86400 * 365)
		return cli_usage("--wait: '%s' is not a number of seconds", arg);
	*ms = (long)(s * 1000 + 0.5);
	return 0;
}

struct trawl_reader *cli_open_reader(const char *const *paths, size_t npaths,
				     const struct cli_reader_opts *co,
				     const struct trawl_reader_opts *ro, char *err, size_t errlen)
{
	struct trawl_source_opts so = {
		.sz = sizeof(so), .hosts = co->hosts, .nhosts = co->nhosts, .events = co->events,
		.nevents = co->nevents, .fixes = ro->fixes, .nfixes = ro->nfixes,
		.bad_trace = cli_report_bad_trace, .bad_trace_arg = co->nbad,
		.live_from_now = co->from_now,
	};
	struct trawl_reader_opts rro = *ro;
	struct trawl_source **srcs = calloc(co->nlive + 1, sizeof(*srcs));
	size_t n = 0;

	if (!srcs) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	rro.hosts = rro.events = NULL;
	rro.nhosts = rro.nevents = 0;
	rro.fixes = NULL;
	rro.nfixes = 0;
	if (npaths && !(srcs[n++] = trawl_source_files(paths, npaths, &so, err, errlen)))
		goto fail;
	for (size_t i = 0; i < co->nlive; i++) {
		if (!(srcs[n] = live_source(co->live[i], co, &so, err, errlen)))
			goto fail;
		n++;
	}
	struct trawl_reader *r = trawl_reader_open(srcs, n, &rro, err, errlen);
	free(srcs);
	return r;
fail:
	for (size_t i = 0; i < n; i++)
		trawl_source_free(srcs[i]);
	free(srcs);
	return NULL;
}

int cli_match_add(struct trawl_sync_match **m, size_t *n, const char *spec)
{
	char err[512];
	struct trawl_sync_match *nm = realloc(*m, (*n + 1) * sizeof(*nm));
	if (!nm)
		return cli_err("out of memory");
	*m = nm;
	if (trawl_sync_match_parse(spec, &nm[*n], err, sizeof(err)))
		return cli_usage("--match: %s", err);
	(*n)++;
	return 0;
}

int cli_arg_add(const char ***v, size_t *n, const char *arg)
{
	const char **nv = realloc(*v, (*n + 1) * sizeof(*nv));

	if (!nv)
		return cli_err("out of memory");
	*v = nv;
	nv[(*n)++] = arg;
	return 0;
}

int cli_sync_check(const char *sync_path, int no_sync)
{
	return sync_path && no_sync ? cli_usage("--sync and --no-sync exclude each other") : 0;
}

int cli_sync_use(const char *sync_path, const char *const *paths, size_t npaths, int no_sync,
		 struct trawl_reader_opts *ro, struct trawl_sync_store **store)
{
	int rc;
	*store = NULL;
	if ((rc = cli_sync_check(sync_path, no_sync)))
		return rc;
	if (cli_sync_load(sync_path ? &sync_path : paths, sync_path ? 1 : npaths, no_sync, ro,
			  store))
		return CLI_EXIT_FAILURE;
	if (sync_path && !*store)
		return cli_err("%s: no sync.txt there", sync_path);
	return 0;
}
