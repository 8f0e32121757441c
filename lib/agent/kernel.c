/* SPDX-License-Identifier: MIT */
/*
 * lib/agent/kernel.c - a session's kernel part (enable -k): its rules, and
 * from start to stop a kernel recorder writing SESSION/HOST/kernel/ with
 * the session's clock. The recorder is the program's (opts.kernel, struct
 * trawl_agent_kernel: the trawl program passes lib/kern's), so that
 * libtrawl depends on no tracing library; without one, enable -k is
 * refused. The recorder's threads share nothing with the agent's loop but
 * the recorder object, touched here only at start, snapshots and stop. An
 * overwrite-mode session's recorder is a flight recorder (the table's
 * snapshot(): without one, such sessions refuse kernel events): the
 * kernel's buffers keep the newest events, written at each snapshot. Once stopped,
 * both traces declare the kernel's clock calibration, so that they merge
 * exactly.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trawl/ctf.h"
#include "agent-internal.h"

bool tr_kernel_flight(const struct trawl_agent *a)
{
	const struct trawl_agent_kernel *k = a->o.kernel;
	return k && k->sz >= offsetof(struct trawl_agent_kernel, snapshot) + sizeof(k->snapshot) &&
	       k->snapshot;
}

/* base/HOST/kernel, malloc'd; NULL on ENOMEM. */
static char *kernel_dir(const struct session *s, const char *base)
{
	char *d = NULL;
	if (asprintf(&d, "%s/%s/kernel", base, s->a->hostname) < 0)
		return NULL;
	return d;
}

int tr_kernel_check(struct trawl_agent *a, const char *spec, char *why, size_t wlen)
{
	if (!a->o.kernel)
		return tr_seterr(why, wlen, ENOTSUP, "this agent has no kernel support");
	return a->o.kernel->check(spec, why, wlen);
}

int tr_kernel_add_event(struct session *s, const char *spec)
{
	for (size_t i = 0; i < s->nkev; i++)
		if (strcmp(s->kev[i], spec) == 0)
			return 0;
	char **m = realloc(s->kev, (s->nkev + 1) * sizeof(*m));
	if (!m)
		return -ENOMEM;
	s->kev = m;
	if (!(s->kev[s->nkev] = strdup(spec)))
		return -ENOMEM;
	s->nkev++;
	return 0;
}

int tr_kernel_set_filter(struct session *s, const char *expr, char *why, size_t wlen)
{
	if (!*expr || strchr(expr, '\n'))
		return tr_seterr(why, wlen, EINVAL, "bad kernel filter '%s'", expr);
	if (s->kfilter && strcmp(s->kfilter, expr) != 0)
		return tr_seterr(why, wlen, EEXIST,
			      "session %s already has the kernel filter '%s' (one filter applies to every kernel event; disable -k --all first)",
			      s->name, s->kfilter);
	if (!s->kfilter && !(s->kfilter = strdup(expr)))
		return tr_seterr(why, wlen, ENOMEM, "out of memory");
	return 0;
}

int tr_kernel_add_pid(struct session *s, const char *v, char *why, size_t wlen)
{
	char *end;
	errno = 0;
	long pid = strtol(v, &end, 10);
	if (errno || !*v || *end || pid < 1 || pid > 0x3fffffff)
		return tr_seterr(why, wlen, EINVAL, "'%s' is not a pid", v);
	for (size_t i = 0; i < s->nkpids; i++)
		if (s->kpids[i] == (int32_t)pid)
			return 0;
	if (s->nkpids >= 4096)
		return tr_seterr(why, wlen, E2BIG, "too many kernel pids");
	int32_t *m = realloc(s->kpids, (s->nkpids + 1) * sizeof(*m));
	if (!m)
		return tr_seterr(why, wlen, ENOMEM, "out of memory");
	s->kpids = m;
	s->kpids[s->nkpids++] = (int32_t)pid;
	return 0;
}

void tr_kernel_clear(struct session *s)
{
	for (size_t i = 0; i < s->nkev; i++)
		free(s->kev[i]);
	free(s->kev);
	s->kev = NULL;
	s->nkev = 0;
	free(s->kfilter);
	s->kfilter = NULL;
	free(s->kpids);
	s->kpids = NULL;
	s->nkpids = 0;
}

/* Prepares the kernel recorder (nothing recorded yet); with the session's
 * clock: the TSC when user space stamps with the TSC, else monotonic. */
int tr_kernel_create(struct session *s, char *why, size_t wlen)
{
	const struct trawl_agent_kernel *k = s->a->o.kernel;
	if (!k)
		return tr_seterr(why, wlen, ENOTSUP, "this agent has no kernel support");
	/* overwrite mode: a flight recorder, written at snapshots (and at
	 * stop, with an output) */
	bool flight = s->mode == TRAWL_UST_OVERWRITE;
	char *d = NULL;
	if (s->output && !flight && !(d = kernel_dir(s, tr_run_dir(s))))
		return tr_seterr(why, wlen, ENOMEM, "out of memory");
	pid_t *pids = NULL;
	if (s->nkpids && !(pids = calloc(s->nkpids, sizeof(*pids)))) {
		free(d);
		return tr_seterr(why, wlen, ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < s->nkpids; i++)
		pids[i] = (pid_t)s->kpids[i];
	struct trawl_agent_kernel_opts ko = {
		.sz = sizeof(ko), .dir = d, .hostname = s->a->hostname,
		.events = (const char *const *)s->kev, .nevents = s->nkev,
		.filter = s->kfilter, .pids = pids, .npids = s->nkpids, .tsc = s->tsc,
		.relay = s->relay, .relay_session = s->relay_session ? s->relay_session : s->name,
		.live_ms = s->live_ms, .flight = flight, .root = d ? tr_run_dir(s) : NULL,
	};
	char err[400] = "";
	errno = 0;
	s->krec = k->create(&ko, err, sizeof(err));
	int e = errno;
	free(pids);
	free(d);
	if (!s->krec)
		return tr_seterr(why, wlen, e ? e : EIO, "%s", err[0] ? err : "kernel events: failed");
	const char *cn = k->clock_name(s->krec);
	snprintf(s->kclock, sizeof(s->kclock), "%s", cn ? cn : "");
	return 0;
}

int tr_kernel_start(struct session *s, char *why, size_t wlen)
{
	char err[400] = "";
	int r = s->a->o.kernel->start(s->krec, err, sizeof(err));
	if (r < 0)
		return tr_seterr(why, wlen, -r, "%s", err[0] ? err : "kernel events: failed");
	return 0;
}

void tr_kernel_clock_early(struct session *s)
{
	/* streamed with kernel events: the kernel trace's clock (final at
	 * its start) is the user-space trace's too, so that they merge */
	if (s->relay && s->krec && s->w &&
	    s->a->o.kernel->clock(s->krec, &s->kfreq, &s->koff_s, &s->koff) == 0) {
		s->kclock_ok = true;
		tr_ust_clock(s, trawl_ctf_writer_trace(s->w));
	}
}

/* The kernel part's snapshot done (r, its message in err): its clock is
 * the one the user-space snapshot declares. */
static int snapshot_done(struct session *s, int r, const char *err, char *why, size_t wlen)
{
	const struct trawl_agent_kernel *k = s->a->o.kernel;
	if (r < 0)
		return tr_seterr(why, wlen, -r, "%s", err[0] ? err : "kernel events: failed");
	s->kclock_ok = k->clock(s->krec, &s->kfreq, &s->koff_s, &s->koff) == 0;
	return 0;
}

int tr_kernel_snapshot(struct session *s, const char *base, char *why, size_t wlen)
{
	const struct trawl_agent_kernel *k = s->a->o.kernel;
	char *d = kernel_dir(s, base);
	if (!d)
		return tr_seterr(why, wlen, ENOMEM, "out of memory");
	char err[400] = "";
	int r = k->snapshot(s->krec, d, &s->kst, err, sizeof(err));
	free(d);
	return snapshot_done(s, r, err, why, wlen);
}

bool tr_kernel_flight_relay(const struct trawl_agent *a)
{
	const struct trawl_agent_kernel *k = a->o.kernel;
	return tr_kernel_flight(a) &&
	       k->sz >= offsetof(struct trawl_agent_kernel, snapshot_relay) +
				sizeof(k->snapshot_relay) &&
	       k->snapshot_relay;
}

int tr_kernel_snapshot_relay(struct session *s, const char *relay, const char *rsession,
			     char *why, size_t wlen)
{
	const struct trawl_agent_kernel *k = s->a->o.kernel;
	if (!tr_kernel_flight_relay(s->a))
		return tr_seterr(why, wlen, ENOTSUP,
				 "this agent's kernel part streams no flight recorder to a relay");
	char err[400] = "";
	int r = k->snapshot_relay(s->krec, relay, rsession, &s->kst, err, sizeof(err));
	return snapshot_done(s, r, err, why, wlen);
}

/* Stops the recorder: tracing off, every CPU's buffer drained, the trace
 * closed (a flight recorder with an output: its content written there as
 * a snapshot first; without, nothing); keeps its figures and its clock,
 * frees it. */
void tr_kernel_stop(struct session *s)
{
	const struct trawl_agent_kernel *k = s->a->o.kernel;
	char err[400] = "";
	if (!s->krec)
		return;
	bool flight = s->mode == TRAWL_UST_OVERWRITE, write = !flight || (s->output && !s->snapshot);
	int r = 0;
	if (flight && write)
		r = tr_kernel_snapshot(s, tr_run_dir(s), err, sizeof(err));
	struct trawl_agent_kernel_stats st;
	memset(&st, 0, sizeof(st));
	st.relay_count = -ENOENT;
	if (k->stop(s->krec, &st, r < 0 ? NULL : err, r < 0 ? 0 : sizeof(err)) < 0 && !r)
		r = -EIO;
	/* cut off by the relay: what it did not store, counted as discarded
	 * (as drain.c says it of the applications' events) */
	if (st.relay_count != -ENOENT && st.relay_discarded)
		tr_drain_say_cut(s, "kernel ", st.relay_discarded, st.relay_events,
				 st.relay_count == 0);
	if (!flight) {
		s->kst = st;
		s->kclock_ok = k->clock(s->krec, &s->kfreq, &s->koff_s, &s->koff) == 0;
	}
	if (r < 0 && !s->kerr)
		s->kerr = strdup(err[0] ? err : "the kernel trace could not be written");
	k->destroy(s->krec);
	s->krec = NULL;
	s->kdone = write;
}

void tr_kernel_destroy(struct session *s)
{
	if (s->krec)
		s->a->o.kernel->destroy(s->krec);
	s->krec = NULL;
}

void tr_ust_clock(struct session *s, struct trawl_ctf_trace *t)
{
	tr_clock_fill(s->tsc, &s->clk0, NULL, &t->clocks[0]);
	if (s->kclock_ok) {
		t->clocks[0].freq = s->kfreq;
		t->clocks[0].offset_s = s->koff_s;
		t->clocks[0].offset = s->koff;
	}
}
