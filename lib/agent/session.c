/* SPDX-License-Identifier: MIT */
/*
 * lib/agent/session.c - the agent's sessions: created, started (every
 * registered application gets START, and so does any that registers
 * later), stopped (STOP; each application quiesces its threads and hands
 * its buffers over; the agent closes the last packets itself), destroyed.
 * An application that exits or is killed closes its connection: its
 * buffers are then the agent's alone, and everything committed in them is
 * written. One session records at a time (an application has one set of
 * buffers); any number may exist.
 *
 * A stopped session starts again (a new run): every run is a complete
 * trace of its own, never written over another. The first goes to
 * OUTPUT/HOST/{ust,kernel}; a run whose OUTPUT holds a trace already (a
 * restart, or a session loaded with the output of one that recorded) goes
 * to OUTPUT/run-N/HOST/... (N = 2, 3, ..., the first free), so that a
 * reader given OUTPUT reads every run.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "trawl/ctf.h"
#include "agent-internal.h"
#include "ust/proto.h"

const char *const tr_agent_state_names[] = { "created", "recording", "stopping", "stopped" };

/* N = 0: the default of the session's mode */
unsigned tr_nsubbuf(const struct session *s)
{
	return s->N ? s->N : TRAWL_UST_DEFAULT_NSUBBUF(s->mode);
}

struct session *tr_session_find(struct trawl_agent *a, const char *name)
{
	for (struct session *s = a->sessions; s; s = s->next)
		if (strcmp(s->name, name) == 0)
			return s;
	return NULL;
}

struct session *tr_session_by_key(struct trawl_agent *a, uint64_t key)
{
	for (struct session *s = a->sessions; s; s = s->next)
		if (s->key == key)
			return s;
	return NULL;
}

struct session *tr_recording(struct trawl_agent *a)
{
	for (struct session *s = a->sessions; s; s = s->next)
		if (s->state == S_ACTIVE || s->state == S_STOPPING)
			return s;
	return NULL;
}

/* ------------------------------------------------------------- parts */

struct part *tr_part_new(struct session *s, struct conn *app)
{
	struct part *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->arena = tr_arena_new();
	if (!p->arena) {
		free(p);
		return NULL;
	}
	p->s = s;
	p->app = app;
	p->pid = app->pid;
	memcpy(p->name, app->name, sizeof(p->name));
	unsigned same = 0;
	for (struct part *q = s->parts; q; q = q->next)
		same += q->pid == p->pid;
	if (same)
		snprintf(p->stream, sizeof(p->stream), "ust_%d.%u", (int)p->pid, same);
	else
		snprintf(p->stream, sizeof(p->stream), "ust_%d", (int)p->pid);
	if (s->w) {
		p->sc = tr_ust_stream_class_new(s->w, s->header, s->contexts);
		if (!p->sc)
			p->bad = true;
	}
	/* append: stream class ids and parts in the same order */
	struct part **pp = &s->parts;
	while (*pp)
		pp = &(*pp)->next;
	*pp = p;
	s->nparts++;
	app->part = p;
	return p;
}

static void part_free(struct part *p)
{
	for (struct aring *r = p->rings, *n; r; r = n) {
		n = r->next;
		tr_ust_ring_destroy(&r->c.ring);
		tr_ust_cons_live_release(&r->c);
		free(r);
	}
	if (p->app && p->app->part == p)
		p->app->part = NULL;
	tr_arena_free(p->arena);
	free(p->evs);
	free(p);
}

void tr_send_start(struct session *s, struct conn *c)
{
	uint8_t *msgbuf = s->a->msgbuf;
	struct am_wr w;
	struct am_start st;
	memset(&st, 0, sizeof(st));
	st.session = s->key;
	memcpy(st.uuid, s->uuid, 16);
	st.mode = s->mode;
	st.subbuf_size = s->S;
	st.nsubbuf = tr_nsubbuf(s);
	st.header = s->header;
	st.contexts = s->contexts;
	st.clock = s->tsc ? TRAWL_UST_CLOCK_TSC : TRAWL_UST_CLOCK_MONOTONIC;
	st.nglobs = (uint32_t)s->nrules;
	am_wr_init(&w, msgbuf, AM_MSG_MAX, AM_START);
	am_put(&w, &st, sizeof(st));
	for (size_t i = 0; i < s->nrules; i++) {
		int32_t ll = s->rules[i].loglevel;
		am_put(&w, &ll, 4);
		am_put_str(&w, s->rules[i].glob);
	}
	size_t n = am_wr_done(&w);
	if (!n || tr_send_msg(c->fd, msgbuf, n) < 0)
		tr_send_failed(c);
}

/* ------------------------------------------------------------- life cycle */

struct session *tr_session_new(struct trawl_agent *a, const char *name, char *why, size_t wlen)
{
	if (!*name || strlen(name) > 200 || strpbrk(name, "/ \t\n")) {
		snprintf(why, wlen, "bad session name '%s'", name);
		return NULL;
	}
	if (tr_session_find(a, name)) {
		snprintf(why, wlen, "session %s exists", name);
		return NULL;
	}
	struct session *s = calloc(1, sizeof(*s));
	if (!s || !(s->name = strdup(name))) {
		free(s);
		snprintf(why, wlen, "out of memory");
		return NULL;
	}
	s->a = a;
	s->key = a->next_key++;
	s->S = TRAWL_UST_DEFAULT_SUBBUF_SIZE;
	return s;
}

int tr_session_check(struct session *s, char *why, size_t wlen)
{
	if (!s->snapshot && !s->output && !s->relay) {
		snprintf(why, wlen, "no output directory (nor relay)");
		return -EINVAL;
	}
	if (s->relay && (s->snapshot || s->mode == TRAWL_UST_OVERWRITE)) {
		snprintf(why, wlen, "a relay takes discard-mode sessions (not snapshots)");
		return -EINVAL;
	}
	bool kernel = s->nkev || s->kfilter || s->nkpids;
	if (s->snapshot && kernel && !tr_kernel_flight(s->a)) {
		snprintf(why, wlen, "kernel events are recorded by sessions with an output only (not in snapshots)");
		return -EINVAL;
	}
	if (s->mode == TRAWL_UST_OVERWRITE && kernel && !tr_kernel_flight(s->a)) {
		snprintf(why, wlen, TR_KERNEL_OVERWRITE_WHY);
		return -EINVAL;
	}
	return 0;
}

void tr_session_add(struct session *s)
{
	struct session **pp = &s->a->sessions;
	while (*pp)
		pp = &(*pp)->next;
	*pp = s;
}

void tr_session_remove(struct session *s)
{
	for (struct session **pp = &s->a->sessions; *pp; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			break;
		}
}

void tr_session_free(struct session *s)
{
	for (struct part *p = s->parts, *n; p; p = n) {
		n = p->next;
		part_free(p);
	}
	trawl_ctf_writer_free(s->w);
	tr_kernel_destroy(s);
	tr_kernel_clear(s);
	free(s->kerr);
	free(s->relay);
	free(s->relay_session);
	for (size_t i = 0; i < s->nrules; i++)
		free(s->rules[i].glob);
	free(s->rules);
	free(s->name);
	free(s->output);
	free(s->run_out);
	free(s->wwhy);
	free(s);
}

const char *tr_run_dir(const struct session *s)
{
	return s->run_out ? s->run_out : s->output;
}

static bool exists(const char *base, const char *host, const char *domain)
{
	char *p = NULL;
	struct stat st;
	bool yes = true;	/* out of memory: taken, the next is tried */
	if (domain ? asprintf(&p, "%s/%s/%s", base, host, domain) >= 0 :
		     (p = strdup(base)) != NULL)
		yes = lstat(p, &st) == 0 || errno != ENOENT;
	free(p);
	return yes;
}

/* The run's directory (run_out): output when it holds no trace of this
 * host in the run's domains yet, else output/run-N, the first N >= 2 not
 * there. 0 or -errno
 * with a message. */
static int pick_run_dir(struct session *s, char *why, size_t wlen)
{
	free(s->run_out);
	s->run_out = NULL;
	if (!s->output)
		return 0;
	/* the domains this run writes (trawl record writes the kernel's
	 * itself beside its one-shot session's user space) */
	const char *h = s->a->hostname;
	bool ust = s->nrules || !s->nkev, kernel = s->nkev;
	if (!(ust && exists(s->output, h, "ust")) && !(kernel && exists(s->output, h, "kernel")))
		return (s->run_out = strdup(s->output)) ? 0 : tr_seterr(why, wlen, ENOMEM,
									 "out of memory");
	for (unsigned n = 2; n < 100000; n++) {
		char *d = NULL;
		if (asprintf(&d, "%s/run-%u", s->output, n) < 0)
			return tr_seterr(why, wlen, ENOMEM, "out of memory");
		if (!exists(d, h, NULL)) {
			s->run_out = d;
			return 0;
		}
		free(d);
	}
	return tr_seterr(why, wlen, EEXIST, "%s: no free run-N directory for another run",
			 s->output);
}

/* A stopped session starting again: the last run's parts and figures go
 * (its traces are complete on the disk). */
static void forget_run(struct session *s)
{
	for (struct part *p = s->parts, *n; p; p = n) {
		n = p->next;
		part_free(p);
	}
	s->parts = NULL;
	s->nparts = 0;
	s->err = 0;
	free(s->kerr);
	s->kerr = NULL;
	s->kdone = s->kclock_ok = false;
	memset(&s->kst, 0, sizeof(s->kst));
	s->packets = 0;
	s->cut_due = false;
	s->demand_until = s->last_ask = 0;
	s->demands = s->fast_cuts = s->ticks = 0;
	s->next_clock = 0;
	free(s->wwhy);
	s->wwhy = NULL;
}

/* The user-space trace (discard mode: written while recording; overwrite
 * mode: at stop or snapshot); -errno with a message in why. */
static int open_trace(struct session *s, char *why, size_t wlen)
{
	struct trawl_agent *a = s->a;
	if (s->mode != TRAWL_UST_DISCARD || !s->nrules) {
		tr_uuid_random(s->uuid);
		return 0;
	}
	char *d = s->output ? tr_trace_dir(s, tr_run_dir(s)) : NULL;
	char rerr[600] = "";
	struct ust_writer_relay rel = {
		.addr = s->relay, .session = s->relay_session ? s->relay_session : s->name,
		.live_us = (uint64_t)s->live_ms * 1000, .live_demand = s->live_ms != 0,
		/* a viewer's DEMAND wakes the loop: the horizon it may wait
		 * for, and the events, go at once */
		.on_demand = tr_agent_wake, .demand_arg = a, .horizon = s->live_ms != 0,
		.err = rerr, .errlen = sizeof(rerr),
	};
	errno = 0;
	s->w = d || s->relay ? tr_ust_writer_new_at(d, d ? tr_run_dir(s) : NULL, a->hostname,
						 s->tsc, a->o.io_queue, s->relay ? &rel : NULL,
						 rerr, sizeof(rerr)) : NULL;
	if (!s->w) {
		int e = errno ? errno : ENOMEM;
		if (*rerr)
			snprintf(why, wlen, "%s", rerr);
		else
			snprintf(why, wlen, "cannot create the trace in %s: %s",
				 d ? d : s->output, strerror(e));
		free(d);
		return -e;
	}
	free(d);
	memcpy(s->uuid, trawl_ctf_writer_trace(s->w)->uuid, 16);
	/* streamed: the clock is final before the first packet; written
	 * locally with the monotonic clock, it is final already too, and the
	 * metadata written while the session records declares it */
	if (s->relay || !s->tsc)
		tr_clock_fill(false, &s->clk0, NULL, &trawl_ctf_writer_trace(s->w)->clocks[0]);
	return 0;
}

/* -EBUSY with a message while another session records, or is prepared
 * to start at an agreed time (join.c): its timer would find this one
 * recording. */
static int check_busy(struct session *s, char *why, size_t wlen)
{
	struct session *busy = tr_recording(s->a);
	if (busy) {
		snprintf(why, wlen, "session %s is recording: one session records at a time",
			 busy->name);
		return -EBUSY;
	}
	for (struct session *o = s->a->sessions; o; o = o->next)
		if (o != s && o->prepared && o->state == S_NEW) {
			snprintf(why, wlen, "session %s starts at an agreed time: one session "
				 "records at a time", o->name);
			return -EBUSY;
		}
	return 0;
}

void tr_session_unprepare(struct session *s)
{
	trawl_ctf_writer_free(s->w);
	s->w = NULL;
	s->prepared = false;
	tr_kernel_destroy(s);
}

/* Everything a start does before recording is switched on: the kernel
 * recorder created, the clock sampled, the user-space trace open (for a
 * streamed one: connected to the relay and welcomed). A start at an agreed
 * time (docs/cluster.md) prepares on receipt, so that only the switch is
 * left for the instant. -errno with a message in why; nothing is left
 * prepared then. */
int tr_session_prepare(struct session *s, char *why, size_t wlen)
{
	int r;
	if (s->prepared)
		return 0;
	if ((r = check_busy(s, why, wlen)) < 0)
		return r;
	if (s->state != S_NEW && s->state != S_STOPPED) {
		snprintf(why, wlen, "session %s is %s", s->name, tr_agent_state_names[s->state]);
		return -EINVAL;
	}
	if (s->state == S_STOPPED && s->relay) {
		/* the relay has the run complete under the session's name */
		snprintf(why, wlen, "session %s streamed its run to relay %s: a session streamed to a "
			 "relay records once (create a new one for another run)", s->name, s->relay);
		return -EINVAL;
	}
	if (!s->nrules && !s->nkev) {
		snprintf(why, wlen, "session %s has no enabled event (trawl enable %s 'GLOB' or -k EVENTS)",
			 s->name, s->name);
		return -EINVAL;
	}
	if (s->state == S_STOPPED)
		forget_run(s);
	if ((r = pick_run_dir(s, why, wlen)) < 0)
		return r;
	s->tsc = s->clock_opt == TRAWL_UST_CLOCK_TSC ||
		 (s->clock_opt == TRAWL_UST_CLOCK_AUTO && tr_clocksource_is_tsc());
	if (s->relay) {
		/* streamed, the metadata leaves before the end: the TSC's
		 * frequency, measured over the session, would come too late */
		if (s->clock_opt == TRAWL_UST_CLOCK_TSC) {
			snprintf(why, wlen, "session %s streams to a relay: its clock is monotonic "
				 "(not tsc)", s->name);
			return -EINVAL;
		}
		s->tsc = false;
	}
	/* the kernel recorder is ready (instance, events, filter) before the
	 * user-space trace exists, and records before applications start */
	if (s->nkev && (r = tr_kernel_create(s, why, wlen)) < 0)
		return r;
	tr_clock_sample(s->tsc, &s->clk0);
	if ((r = open_trace(s, why, wlen)) < 0) {
		tr_session_unprepare(s);
		return r;
	}
	s->prepared = true;
	return 0;
}

int tr_session_start(struct session *s, char *why, size_t wlen)
{
	struct trawl_agent *a = s->a;
	int r;
	/* prepared earlier: nothing else may have started since (check_busy),
	 * but should it have, this one lets its trace go */
	if ((r = check_busy(s, why, wlen)) < 0) {
		if (s->prepared && s->state == S_NEW)
			tr_session_unprepare(s);
		return r;
	}
	if ((r = tr_session_prepare(s, why, wlen)) < 0)
		return r;
	if (s->krec && (r = tr_kernel_start(s, why, wlen)) < 0)
		goto err;
	tr_kernel_clock_early(s);
	s->next_live = s->live_ms ? (tr_mono_ms() / s->live_ms + 1) * s->live_ms : 0;
	s->state = S_ACTIVE;
	s->prepared = false;	/* a later start prepares its own run */
	s->runs++;
	s->deadline = tr_mono_ms() + (int64_t)a->o.start_timeout_ms;
	/* recording begins now: the applications' first events follow */
	s->t_begin = tr_mono_ns();
	for (struct conn *c = a->conns; c; c = c->next) {
		if (c->type != C_APP || c->closing || !s->nrules)
			continue;
		if (!tr_part_new(s, c)) {
			c->closing = true;
			continue;
		}
		tr_send_start(s, c);
	}
	tr_agent_log(a, TRAWL_AGENT_LOG_INFO, "session %s started", s->name);
	return 0;
err:
	tr_session_unprepare(s);
	return r;
}

void tr_session_stop(struct session *s)
{
	uint8_t m[sizeof(struct am_hdr) + 8];
	struct am_wr w;
	s->state = S_STOPPING;
	s->deadline = tr_mono_ms() + (int64_t)s->a->o.start_timeout_ms;
	am_wr_init(&w, m, sizeof(m), AM_STOP);
	am_put(&w, &s->key, 8);
	size_t n = am_wr_done(&w);
	for (struct part *p = s->parts; p; p = p->next)
		if (p->app && !p->dead && !p->stopped && tr_send_msg(p->app->fd, m, n) < 0)
			tr_send_failed(p->app);
}

/* ------------------------------------------------------------- answers */

static void reply_start(struct session *s)
{
	struct conn *c = s->waiter;
	s->waiter = NULL;
	if (!c)
		return;
	unsigned n = 0, failed = 0;
	for (struct part *p = s->parts; p; p = p->next) {
		n++;
		if (p->acked && p->start_status < 0) {
			failed++;
			tr_cprint(c, AM_ERR, "warning: pid %d (%s) cannot record: %s", (int)p->pid,
				  p->name, strerror(-p->start_status));
		} else if (!p->acked && !p->dead) {
			tr_cprint(c, AM_ERR, "warning: pid %d (%s) did not answer in time", (int)p->pid,
				  p->name);
		}
	}
	tr_cprint(c, AM_OUT, "session %s started (%u application%s)\n", s->name, n - failed,
		  n - failed == 1 ? "" : "s");
	tr_cend(c, 0);
}

/* Every application has stopped (or is gone, or timed out): the kernel
 * part, the last packets, the metadata; the waiting client's answer. */
static void finish_stop(struct session *s)
{
	struct trawl_agent *a = s->a;
	/* the kernel first: its clock is the user-space trace's too */
	tr_kernel_stop(s);
	for (struct part *p = s->parts; p; p = p->next)
		if (!p->stopped && !p->dead)
			tr_agent_log(a, TRAWL_AGENT_LOG_WARNING,
				     "pid %d did not stop in time: its open packets are left", (int)p->pid);
	tr_drain_final(s);
	for (struct part *p = s->parts; p; p = p->next) {
		if (p->app && p->app->part == p)
			p->app->part = NULL;
		p->app = NULL;
	}
	s->state = S_STOPPED;
	tr_agent_log(a, TRAWL_AGENT_LOG_INFO, "session %s stopped", s->name);
	struct conn *c = s->waiter;
	s->waiter = NULL;
	if (!c)
		return;
	if (s->kdone)
		tr_cprint(c, AM_OUT, "kernel: %" PRIu64 " events, %" PRIu64 " lost, %" PRIu64
			  " state dump events, clock %s\n", s->kst.events, s->kst.lost,
			  s->kst.statedump, s->kclock);
	if (s->err && s->wwhy)
		tr_cfail(c, 1, "session %s: writing the trace: %s", s->name, s->wwhy);
	else if (s->err)
		tr_cfail(c, 1, "session %s: writing the trace: %s", s->name, strerror(-s->err));
	else if (s->kerr)
		tr_cfail(c, 1, "session %s: kernel events: %s", s->name, s->kerr);
	else {
		if (s->relay)
			tr_cprint(c, AM_OUT, "session %s stopped; complete at relay %s\n", s->name,
				  s->relay);
		else if (s->output && !s->snapshot && strcmp(tr_run_dir(s), s->output))
			tr_cprint(c, AM_OUT, "session %s stopped; trace in %s (beside the earlier "
				  "runs' in %s)\n", s->name, tr_run_dir(s), s->output);
		else if (s->output && !s->snapshot)
			tr_cprint(c, AM_OUT, "session %s stopped; trace in %s\n", s->name, s->output);
		else
			tr_cprint(c, AM_OUT, "session %s stopped\n", s->name);
		tr_cend(c, 0);
	}
}

/* A TSC session recording: the frequency measured so far declared in the
 * user-space trace's metadata every second, so that the growing trace
 * reads at its real times (at stop: over the whole run, or the kernel
 * trace's calibration). */
static void clock_so_far(struct session *s, int64_t now)
{
	if (s->state != S_ACTIVE || !s->w || !s->tsc || s->relay || now < s->next_clock)
		return;
	if (s->next_clock) {
		tr_clock_fill(true, &s->clk0, NULL, &trawl_ctf_writer_trace(s->w)->clocks[0]);
		trawl_ctf_writer_metadata_now(s->w);
	}
	s->next_clock = now + 1000;
}

void tr_check_waiters(struct trawl_agent *a)
{
	int64_t now = tr_mono_ms();
	for (struct session *s = a->sessions; s; s = s->next)
		clock_so_far(s, now);
	for (struct session *s = a->sessions; s; s = s->next) {
		bool all = true;
		if (s->state == S_ACTIVE && s->waiter) {
			for (struct part *p = s->parts; p; p = p->next)
				all &= p->acked || p->dead;
			if (all || now >= s->deadline)
				reply_start(s);
		} else if (s->state == S_STOPPING) {
			for (struct part *p = s->parts; p; p = p->next)
				all &= p->stopped || p->dead;
			if (all || now >= s->deadline) {
				tr_drain(s);
				finish_stop(s);
			}
		}
	}
	/* destroy requested while stopping */
	for (struct session **pp = &a->sessions; *pp;) {
		struct session *s = *pp;
		if (s->state == S_STOPPED && s->destroy) {
			*pp = s->next;
			tr_session_free(s);
		} else {
			pp = &s->next;
		}
	}
}
