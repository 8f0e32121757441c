/* SPDX-License-Identifier: MIT */
/*
 * lib/kern/agent-kern.c - the kernel recorder (krec.h) behind an agent's
 * kernel table (agent-kern.h): what `enable -k` checks, and a session's
 * kernel part from start to stop (an overwrite-mode session's: a flight
 * recorder, written at its snapshots).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tracefs/tracefs.h>

#include "agent-kern.h"
#include "internal.h"
#include "krec.h"

static bool is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int need_root(char *err, size_t errlen)
{
	if (geteuid() != 0)
		return tr_seterr(err, errlen, EPERM, "kernel events need root (the agent runs as uid %u)",
			      (unsigned)geteuid());
	return 0;
}

/* The number of events of system sys (a directory of tdir/events) that
 * match evg, at most 1 is enough. */
static int kmatch_events(const char *tdir, const char *sys, const char *evg)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/events/%s", tdir, sys);
	DIR *d = opendir(p);
	if (!d)
		return 0;
	int n = 0;
	struct dirent *e;
	while (!n && (e = readdir(d))) {
		if (e->d_name[0] == '.' || !tr_glob_match(evg, e->d_name))
			continue;
		char f[PATH_MAX + 300];
		struct stat st;
		snprintf(f, sizeof(f), "%s/%s/format", p, e->d_name);
		n += stat(f, &st) == 0;
	}
	closedir(d);
	return n;
}

/*
 * Kernel events need root, and a tracepoint this kernel offers (as
 * `trawl record -k` takes them: SYSTEM:EVENT, globs in either part, a bare
 * event name, or a preset). The recorder checks again, in full (the
 * filter too), at start.
 */
static int ak_check(const char *spec, char *err, size_t errlen)
{
	int r = need_root(err, errlen);
	if (r < 0)
		return r;
	const char *tdir = tracefs_tracing_dir();
	char p[PATH_MAX];
	if (tdir)
		snprintf(p, sizeof(p), "%s/events", tdir);
	if (!tdir || !is_dir(p))
		return tr_seterr(err, errlen, ENODEV,
			      "kernel events: tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)");
	const char *psys = tr_krec_preset_system(spec);	/* the families' table */
	if (psys) {
		snprintf(p, sizeof(p), "%s/events/%s", tdir, psys);
		if (!is_dir(p))
			return tr_seterr(err, errlen, ENOENT,
				      "preset '%s': this kernel has no %s tracepoints", spec, psys);
		return 0;
	}
	char sysg[256], evg[256];
	tr_krec_spec_split(spec, sysg, evg);
	if (strlen(spec) > 200 || !*sysg || !*evg || strpbrk(evg, ":/") || strpbrk(spec, " \t\n,")) {
		char presets[200];
		tr_krec_presets(presets, sizeof(presets));
		return tr_seterr(err, errlen, EINVAL,
			      "'%s' is not a kernel event (SYSTEM:EVENT, globs allowed, or a preset: %s)",
			      spec, presets);
	}
	if (!strpbrk(sysg, "*?[") && !strpbrk(evg, "*?[")) {
		struct stat st;
		snprintf(p, sizeof(p), "%s/events/%s/%s/format", tdir, sysg, evg);
		if (stat(p, &st) == 0)
			return 0;
		tr_seterr(err, errlen, ENOENT,
			  "no tracepoint '%s:%s' in this kernel (see events/*/format in tracefs)",
			  sysg, evg);
		return tr_krec_add_hint(err, errlen, spec), -ENOENT;
	}
	snprintf(p, sizeof(p), "%s/events", tdir);
	DIR *d = opendir(p);
	int n = 0;
	struct dirent *e;
	while (d && !n && (e = readdir(d)))
		if (e->d_name[0] != '.' && tr_glob_match(sysg, e->d_name))
			n += kmatch_events(tdir, e->d_name, evg);
	if (d)
		closedir(d);
	if (!n) {
		tr_seterr(err, errlen, ENOENT, "no tracepoint of this kernel matches '%s'", spec);
		return tr_krec_add_hint(err, errlen, spec), -ENOENT;
	}
	return 0;
}

/* A recorder with the state dump and the tid context, in the session's
 * clock: x86-tsc when user space stamps with the TSC, else mono. */
static void *ak_create(const struct trawl_agent_kernel_opts *o, char *err, size_t errlen)
{
	int r = need_root(err, errlen);
	if (r < 0)
		return NULL;
	struct krec_opts ko = {
		.dir = o->dir, .hostname = o->hostname,
		.relay = o->relay, .relay_session = o->relay_session, .live_ms = o->live_ms,
		.events = o->events, .nevents = o->nevents,
		.filter = o->filter, .pids = o->pids, .npids = o->npids,
		.statedump = true, .tid_context = true,
		.clock = o->tsc ? KREC_CLOCK_TSC : KREC_CLOCK_MONO,
		.flight = o->sz >= offsetof(struct trawl_agent_kernel_opts, flight) + sizeof(o->flight) &&
			  o->flight,
		.root = o->sz >= offsetof(struct trawl_agent_kernel_opts, root) + sizeof(o->root) ?
			o->root : NULL,
	};
	char e[400] = "";
	struct krec *k = tr_krec_new(&ko, e, sizeof(e));
	if (!k) {
		int en = errno ? errno : EIO;
		tr_seterr(err, errlen, en, "kernel events: %s", e);
		return NULL;
	}
	return k;
}

/* The reader thread is born with every signal blocked: the program's
 * signals stay with its own threads. */
static int ak_start(void *rec, char *err, size_t errlen)
{
	sigset_t all, old;
	char e[400] = "";
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int r = tr_krec_start(rec, e, sizeof(e));
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0)
		return tr_seterr(err, errlen, -r, "kernel events: %s", e);
	return 0;
}

static void stats(void *rec, struct trawl_agent_kernel_stats *st)
{
	memset(st, 0, sizeof(*st));
	for (unsigned i = 0; i < tr_krec_ncpus(rec); i++) {
		st->events += tr_krec_stats(rec, i)->events;
		st->lost += tr_krec_stats(rec, i)->lost;
	}
	st->statedump = tr_krec_statedump_events(rec);
}

static int ak_stop(void *rec, struct trawl_agent_kernel_stats *st, char *err, size_t errlen)
{
	int r = tr_krec_stop(rec, err, errlen);
	stats(rec, st);
	st->relay_count = tr_krec_relay_discarded(rec, &st->relay_events, &st->relay_discarded);
	return r;
}

/* A snapshot into dir, or streamed to relay as relay_session/HOST/kernel */
static int snapshot(void *rec, const char *dir, const char *relay, const char *relay_session,
		    struct trawl_agent_kernel_stats *st, char *err, size_t errlen)
{
	char e[400] = "";
	int r = tr_krec_snapshot_to(rec, dir, relay, relay_session, e, sizeof(e));
	stats(rec, st);
	if (r < 0)
		return tr_seterr(err, errlen, -r, "kernel events: %s", e);
	return 0;
}

static int ak_snapshot(void *rec, const char *dir, struct trawl_agent_kernel_stats *st, char *err,
		       size_t errlen)
{
	return snapshot(rec, dir, NULL, NULL, st, err, errlen);
}

static int ak_snapshot_relay(void *rec, const char *relay, const char *relay_session,
			     struct trawl_agent_kernel_stats *st, char *err, size_t errlen)
{
	return snapshot(rec, NULL, relay, relay_session, st, err, errlen);
}

static int ak_clock(void *rec, uint64_t *freq, int64_t *offset_s, int64_t *offset)
{
	return tr_krec_clock_get(rec, freq, offset_s, offset);
}

static const char *ak_clock_name(void *rec)
{
	return tr_krec_clock_name(rec);
}

static void ak_destroy(void *rec)
{
	tr_krec_free(rec);
}

const struct trawl_agent_kernel trawl_kern_agent_ops = {
	.sz = sizeof(struct trawl_agent_kernel),
	.check = ak_check,
	.create = ak_create,
	.start = ak_start,
	.stop = ak_stop,
	.clock = ak_clock,
	.clock_name = ak_clock_name,
	.destroy = ak_destroy,
	.snapshot = ak_snapshot,
	.snapshot_relay = ak_snapshot_relay,
};
