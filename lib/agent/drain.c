/* SPDX-License-Identifier: MIT */
/*
 * lib/agent/drain.c - the applications' ring buffers (their memfds, mapped
 * by conn.c) into the session's CTF trace, SESSION/HOST/ust/, packet by
 * packet, without re-encoding: every flush_ms while a session records
 * (discard mode), the live timer's beacons, the last packets at stop, and
 * the flight recorder's newest packets (overwrite mode: snapshots, and the
 * trace written at stop).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "trawl/ctf.h"
#include "agent-internal.h"
#include "ctf/ctf-internal.h"
#include "ust/proto.h"

char *tr_trace_dir(const struct session *s, const char *base)
{
	char *d = NULL;
	if (asprintf(&d, "%s/%s/ust", base, s->a->hostname) < 0)
		return NULL;
	return d;
}

int tr_ring_stream(struct session *s, struct part *p, struct aring *r)
{
	if (r->c.ws || !s->w || !p->sc)
		return 0;
	r->c.ws = trawl_ctf_writer_stream(s->w, p->sc, p->stream, (uint32_t)r->tid);
	return r->c.ws ? 0 : -errno;
}

static void note_err(struct session *s, int r)
{
	if (r < 0 && !s->err)
		s->err = r;
}

/*
 * The live timer (every live_ms): every buffer's committed events go out as
 * a packet, or a beacon when there are none; the streams of threads that
 * are gone get a beacon at the present (nothing more will come).
 */
static void live_tick(struct session *s)
{
	/* the horizon first (docs/relay.md, "Streams that join"): every
	 * application's connection read to its end now, so that every stream
	 * with an event before now is announced; it goes out with the tick's
	 * packets and beacons (one send), which are all at or before it */
	uint64_t now = tr_agent_settle(s->a);
	bool rings = false;	/* (none: nothing to go out with, so at once) */
	for (struct part *p = s->parts; p && !rings; p = p->next)
		rings = !p->bad && p->rings;
	note_err(s, tr_ctf_writer_horizon(s->w, now, rings));
	s->ticks++;
	for (struct part *p = s->parts; p; p = p->next) {
		if (p->bad)
			continue;
		/* what its events are: the parts' events are counted */
		const struct ust_evtab et = { p->evs, p->nevs, s->header,
					      tr_ust_ctx_len(s->contexts) };
		for (struct aring *r = p->rings; r; r = r->next) {
			uint32_t sid = p->sc ? (uint32_t)p->sc->id : 0;
			/* a ring abandoned (it broke the protocol) or done
			 * sends nothing more: beacons at the present */
			if (!r->done && !r->c.bad)
				note_err(s, tr_ust_cons_live(&r->c, s->uuid, sid, &et));
			else
				note_err(s, tr_ust_cons_live_end(&r->c, now));
		}
	}
}

/*
 * The live timer's first half: every application marks its idle threads'
 * buffers quiet up to now (LIVE); the rings are cut at the loop's next
 * turn (at most flush_ms later), once the applications had the time to.
 * Ticks fall on multiples of the period of CLOCK_MONOTONIC, as the kernel
 * recorder's do: a viewer waits for every stream's news, so all of them
 * come at once.
 */
static void live_ask(struct session *s)
{
	uint8_t m[sizeof(struct am_hdr) + sizeof(struct am_live)];
	struct am_wr w;
	struct am_live l = { .session = s->key };
	am_wr_init(&w, m, sizeof(m), AM_LIVE);
	am_put(&w, &l, sizeof(l));
	size_t n = am_wr_done(&w);
	s->last_ask = tr_mono_ms();
	/* never waiting: an application that does not read (stopped, in a
	 * debugger) just gets no beacon for its idle threads this time */
	for (struct part *p = s->parts; p; p = p->next)
		if (p->app && !p->dead && !p->stopped)
			(void)!send(p->app->fd, m, n, MSG_DONTWAIT | MSG_NOSIGNAL);
}

/*
 * Live demand (docs/relay.md, "Live latency"): while the relay says a
 * viewer waits on the session (its DEMAND, read by the relay sender's
 * thread), every ring whose open packet has events not sent yet is cut at
 * this turn (at most flush_ms after they were committed) instead of at
 * the live timer; rings with nothing new send nothing. Then, if another
 * ring of the session was idle, its news must come too (the viewer shows
 * an event once every stream told it nothing earlier is to come): the
 * applications are asked to mark their idle threads quiet (LIVE) and every
 * ring is cut at the next turn, as at a tick, at most every
 * DEMAND_ASK_MS. A ring that keeps getting events (one was sent at once
 * less than DEMAND_PART_MS ago) waits until then: the first events after
 * a pause go at once, a steady flow in parts of DEMAND_PART_MS (fewer
 * packets for the relay and the viewer to handle). An idle session, viewer
 * or not, costs nothing more: a load of the demand's end per turn, and
 * nothing while no events come.
 */
#define DEMAND_ASK_MS 10
#define DEMAND_PART_MS 8
static void demand_cut(struct session *s, int64_t now_ms)
{
	int64_t until = tr_ctf_writer_demand(s->w);
	if (until != s->demand_until) {
		s->demand_until = until;
		s->demands++;
	}
	if (now_ms >= s->demand_until)
		return;
	bool cut = false, idle = false;
	for (struct part *p = s->parts; p; p = p->next) {
		if (p->bad)
			continue;
		const struct ust_evtab et = { p->evs, p->nevs, s->header,
					      tr_ust_ctx_len(s->contexts) };
		for (struct aring *r = p->rings; r; r = r->next) {
			if (r->done || r->c.bad)
				continue;
			if (!tr_ust_cons_live_pending(&r->c)) {
				idle = true;
				continue;
			}
			if (r->fast_at && now_ms - r->fast_at < DEMAND_PART_MS)
				continue;	/* a steady flow: its next part soon */
			r->fast_at = now_ms;
			uint32_t sid = p->sc ? (uint32_t)p->sc->id : 0;
			note_err(s, tr_ust_cons_live(&r->c, s->uuid, sid, &et));
			s->fast_cuts++;
			cut = true;
		}
	}
	if (cut && idle && !s->cut_due && now_ms - s->last_ask >= DEMAND_ASK_MS) {
		live_ask(s);
		s->cut_due = true;
	}
}

void tr_drain(struct session *s)
{
	bool ticked = false;
	if (s->live_ms && s->w) {
		int64_t t = tr_mono_ms();
		if (s->cut_due) {
			s->cut_due = false;
			live_tick(s);
			ticked = true;
		} else if (t >= s->next_live) {
			s->next_live = (t / s->live_ms + 1) * s->live_ms;
			live_ask(s);
			s->cut_due = true;
		}
	}
	for (struct part *p = s->parts; p; p = p->next) {
		if (p->bad)
			continue;
		for (struct aring *r = p->rings; r; r = r->next) {
			if (r->done)
				continue;
			note_err(s, tr_ring_stream(s, p, r));
			uint32_t sid = p->sc ? (uint32_t)p->sc->id : 0;
			if (s->mode == TRAWL_UST_DISCARD)
				note_err(s, tr_ust_cons_drain(&r->c, s->uuid, sid));
			/* partner: the producer side's release store of exited */
			uint32_t ex = __atomic_load_n(&r->c.ring.shm->exited, __ATOMIC_ACQUIRE);
			if (ex || p->dead) {
				note_err(s, tr_ust_cons_final(&r->c, s->uuid, sid, ex == 2));
				r->done = true;
				s->packets += r->c.packets;
				if (s->mode == TRAWL_UST_DISCARD) {
					/* written out: the memory can go */
					tr_ust_ring_destroy(&r->c.ring);
					r->c.ring.shm = NULL;
				}
			}
		}
	}
	/* after the drain: a packet finished this turn is out, the open
	 * one's events follow it */
	if (s->live_ms && s->w && s->mode == TRAWL_UST_DISCARD) {
		int64_t now = tr_mono_ms();
		uint64_t cuts = s->fast_cuts;
		demand_cut(s, now);
		/* the horizon: every stream with an event before now is
		 * announced once every application's connection is read to
		 * its end (an application sends a thread's buffer before the
		 * thread's first event). A relay shows a session's live
		 * viewers nothing past it (docs/relay.md, "Streams that
		 * join"): told at each tick (live_tick()), after a part sent
		 * at once for a viewer (so that it covers it), and when the
		 * relay asks (a viewer waits past it: its ask wakes the
		 * loop) */
		bool asked = tr_ctf_writer_horizon_asked(s->w);
		if (asked || (!ticked && s->fast_cuts != cuts))
			note_err(s, tr_ctf_writer_horizon(s->w, tr_agent_settle(s->a), false));
	}
}

/*
 * The loop's wait (docs/relay.md, "Live latency"). While rings move (events
 * committed or lost since the last turn), a viewer waits for events still
 * in an open packet, a cut is due or the session is not simply recording:
 * flush_ms, as always. Once a whole turn saw nothing move, every ring's
 * wake flag is set (its next commit's producer takes it and sends one
 * AM_WAKE: the loop's poll returns at once) and the loop sleeps until the
 * next live tick, or IDLE_WAIT_MS without a live timer. An idle node so
 * turns at the live timer (a tick: ask, then cut flush_ms later) instead
 * of every flush_ms.
 *
 * The race with a commit: the flag is stored, then (full fence) the
 * counts are read again; the producer stores its counts and then loads
 * the flag without a fence (its fast path stays one load). Both may miss
 * each other, rarely (a commit in the few nanoseconds around the
 * consumer's store): that event then goes at the next live tick, as it
 * would without the wake. A flag left set costs at most one message.
 */
#define IDLE_WAIT_MS 1000
static uint64_t moved(const struct ust_shm *h)
{
	return __atomic_load_n(&h->recorded, __ATOMIC_RELAXED) +
	       __atomic_load_n(&h->discarded, __ATOMIC_RELAXED);
}

int tr_drain_wait(struct session *s, int flush_ms)
{
	/* a start still waiting for the applications' answers keeps its
	 * deadline's turn */
	if (s->state != S_ACTIVE || s->mode != TRAWL_UST_DISCARD || s->cut_due || s->waiter)
		return flush_ms;
	int64_t now = tr_mono_ms();
	bool live = s->live_ms && s->w, demand = live && now < s->demand_until, quiet = true;
	for (struct part *p = s->parts; p; p = p->next) {
		if (p->bad)
			continue;
		for (struct aring *r = p->rings; r; r = r->next) {
			if (r->done || !r->c.ring.shm)
				continue;
			uint64_t m = moved(r->c.ring.shm);
			if (m != r->seen || (demand && tr_ust_cons_live_pending(&r->c)))
				quiet = false;
			r->seen = m;
		}
	}
	if (!quiet)
		return flush_ms;
	for (struct part *p = s->parts; p; p = p->next)
		for (struct aring *r = p->rings; !p->bad && r; r = r->next)
			if (!r->done && r->c.ring.shm)
				__atomic_store_n(&r->c.ring.shm->wake, 1, __ATOMIC_RELAXED);
	/* Dekker with the producer's commit: flag stored, then counts read */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (struct part *p = s->parts; p; p = p->next)
		for (struct aring *r = p->rings; !p->bad && r; r = r->next)
			if (!r->done && r->c.ring.shm && moved(r->c.ring.shm) != r->seen)
				return flush_ms;
	int64_t until = live ? s->next_live : now + IDLE_WAIT_MS;
	if (until - now > IDLE_WAIT_MS)
		until = now + IDLE_WAIT_MS;
	return until - now > flush_ms ? (int)(until - now) : flush_ms;
}

struct mkws_arg {
	struct trawl_ctf_writer *w;
	struct trawl_ctf_stream_class *sc;
	struct part *p;
	int32_t tid;
};

static struct trawl_ctf_wstream *mkws(void *arg)
{
	struct mkws_arg *a = arg;
	return trawl_ctf_writer_stream(a->w, a->sc, a->p->stream, (uint32_t)a->tid);
}

int tr_snapshot(struct session *s, const char *dir, uint64_t *events, uint64_t *torn)
{
	return tr_snapshot_to(s, dir, NULL, events, torn);
}

int tr_snapshot_to(struct session *s, const char *dir, const struct ust_writer_relay *rel,
		   uint64_t *events, uint64_t *torn)
{
	/* dir is BASE/HOST/ust (tr_trace_dir): nothing below BASE through a link */
	char *root = dir ? strdup(dir) : NULL, *sl;
	int cut = 0;
	for (; root && cut < 2 && (sl = strrchr(root, '/')); cut++)
		*sl = 0;
	if (root && (cut < 2 || !*root)) {
		free(root);
		root = NULL;
	}
	char werr[600] = "";
	free(s->wwhy);		/* a path refused: why (this snapshot's) */
	s->wwhy = NULL;
	struct trawl_ctf_writer *w = tr_ust_writer_new_at(dir, root, s->a->hostname, s->tsc, 0,
							   rel, werr, sizeof(werr));
	free(root);
	if (!w) {
		int e = errno;
		if (*werr && !rel)
			s->wwhy = strdup(werr);
		return -e;
	}
	const uint8_t *uuid = trawl_ctf_writer_trace(w)->uuid;
	uint8_t *copy = malloc((size_t)s->S * tr_nsubbuf(s));
	int ret = copy ? 0 : -ENOMEM;
	for (struct part *p = s->parts; p && !ret; p = p->next) {
		if (p->bad)
			continue;
		struct trawl_ctf_stream_class *sc = tr_ust_stream_class_new(w, s->header, s->contexts);
		if (!sc) {
			ret = -errno;
			break;
		}
		for (size_t i = 0; i < p->nevs && !ret; i++)
			ret = tr_ust_writer_add_event(w, sc, p->evs[i]);
		const struct ust_evtab et = { p->evs, p->nevs, s->header,
					      tr_ust_ctx_len(s->contexts) };
		for (struct aring *r = p->rings; r && !ret; r = r->next) {
			if (!r->c.ring.shm)
				continue;
			struct mkws_arg a = { w, sc, p, r->tid };
			ret = tr_ust_cons_snapshot(&r->c, copy, mkws, &a, uuid, (uint32_t)sc->id, &et,
						events, torn);
		}
	}
	free(copy);
	if (!ret)
		tr_ust_clock(s, trawl_ctf_writer_trace(w));
	int r = trawl_ctf_writer_close(w);
	if ((ret || r) && *trawl_ctf_writer_why(w))
		s->wwhy = strdup(trawl_ctf_writer_why(w));
	trawl_ctf_writer_free(w);
	return ret ? ret : r;
}

void tr_drain_say_cut(struct session *s, const char *what, uint64_t disc, uint64_t ev, bool exact)
{
	const char *most = exact ? "" : "at most ";
	const char *why = exact ? "" : " (it did not say where it cut)";
	tr_agent_log(s->a, TRAWL_AGENT_LOG_WARNING, "session %s: the relay did not store %s%llu of "
		     "%llu %sevents%s: counted as discarded", s->name, most,
		     (unsigned long long)disc, (unsigned long long)ev, what, why);
	if (s->waiter)
		tr_cprint(s->waiter, AM_ERR, "session %s: the relay did not store %s%llu of %llu "
			  "%sevents%s: counted as discarded", s->name, most, (unsigned long long)disc,
			  (unsigned long long)ev, what, why);
}

/*
 * The relay was lost or cut the trace off: what it did not store, counted
 * as discarded (docs/relay.md, "Cut off by the relay"), in the log and to
 * the client that stops the session. Every packet and live part goes to
 * the writer with its events counted (lib/ring/consumer.c): exact, unless
 * the relay did not say where it cut (an older relay, a connection lost
 * without its word): then at most that, said so.
 */
static void relay_count(struct session *s)
{
	uint64_t ev = 0, disc = 0;
	int rc = trawl_ctf_writer_relay_discarded(s->w, &ev, &disc);
	/* and the events of the packets the writer refused once it failed:
	 * emitted, not stored */
	for (struct part *p = s->parts; p; p = p->next)
		for (struct aring *r = p->rings; r; r = r->next) {
			ev += r->c.refused;
			disc += r->c.refused;
		}
	if ((rc == -ENODATA || rc == 0) && disc)
		tr_drain_say_cut(s, "", disc, ev, rc == 0);
}

void tr_drain_final(struct session *s)
{
	for (struct part *p = s->parts; p; p = p->next) {
		for (struct aring *r = p->rings; r; r = r->next) {
			if (r->done || !r->c.ring.shm || p->bad)
				continue;
			uint32_t sid = p->sc ? (uint32_t)p->sc->id : 0;
			note_err(s, tr_ring_stream(s, p, r));
			uint32_t ex = __atomic_load_n(&r->c.ring.shm->exited, __ATOMIC_ACQUIRE);
			/* a thread caught inside an event (2), or an application
			 * that did not stop in time: its open packet is left */
			note_err(s, tr_ust_cons_final(&r->c, s->uuid, sid,
						   ex == 2 || (!p->stopped && !p->dead && !ex)));
			r->done = true;
			s->packets += r->c.packets;
		}
	}
	uint64_t ev = 0, torn = 0;
	if (s->w) {
		tr_ust_clock(s, trawl_ctf_writer_trace(s->w));
		int rc = trawl_ctf_writer_close(s->w);
		note_err(s, rc);
		int rl = trawl_ctf_writer_relay_error(s->w);
		const char *why = trawl_ctf_writer_relay_why(s->w);
		if (rl) {
			tr_agent_log(s->a, TRAWL_AGENT_LOG_WARNING,
				     "session %s: the relay was lost (%s): the local copy is complete",
				     s->name, *why ? why : strerror(-rl));
			if (s->waiter)
				tr_cprint(s->waiter, AM_ERR, "warning: the relay was lost during the session "
					  "(%s): the trace is complete only in %s",
					  *why ? why : strerror(-rl), s->output ? s->output : "(none)");
		} else if (*why) {
			/* streamed only: the relay's reason is the session's error */
			tr_agent_log(s->a, TRAWL_AGENT_LOG_ERR, "session %s: %s", s->name, why);
			if (s->waiter)
				tr_cprint(s->waiter, AM_ERR, "session %s: %s", s->name, why);
		} else if (s->err) {
			tr_agent_log(s->a, TRAWL_AGENT_LOG_ERR, "session %s: writing the trace: %s",
				     s->name, strerror(-s->err));
		}
		if (rl || *why)
			relay_count(s);
		if (*trawl_ctf_writer_why(s->w) && !s->wwhy)
			s->wwhy = strdup(trawl_ctf_writer_why(s->w));
		trawl_ctf_writer_free(s->w);
		s->w = NULL;
	} else if (s->output && !s->snapshot && s->nrules) {
		/* overwrite mode with an output: the flight recorder's content */
		char *d = tr_trace_dir(s, tr_run_dir(s));
		note_err(s, d ? tr_snapshot(s, d, &ev, &torn) : -ENOMEM);
		free(d);
	}
	if (s->mode == TRAWL_UST_DISCARD)
		for (struct part *p = s->parts; p; p = p->next)
			for (struct aring *r = p->rings; r; r = r->next)
				if (r->c.ring.shm) {
					tr_ust_ring_destroy(&r->c.ring);
					r->c.ring.shm = NULL;
				}
}
