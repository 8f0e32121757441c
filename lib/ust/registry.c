/* SPDX-License-Identifier: MIT */
/*
 * lib/ust/registry.c - the tracepoint registry: every event the process
 * registered (trawl_tp_register, from its constructors), and enabling the
 * ones a session selects (by glob and loglevel), at session start or when
 * an event registers while a session records. Guarded by tr_ust_lock.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "ust-private.h"

static struct trawl_tp_event *registry;

static bool event_matches(const struct trawl_ust_session *s, const struct trawl_tp_event *ev)
{
	if (s->loglevel >= 0 && ev->loglevel > s->loglevel)
		return false;
	if (!s->nglobs)
		return true;
	char name[512];
	snprintf(name, sizeof(name), "%s:%s", ev->provider, ev->name);
	for (size_t i = 0; i < s->nglobs; i++)
		if (tr_glob_match(s->globs[i], name) &&
		    !(s->glob_ll && s->glob_ll[i] >= 0 && ev->loglevel > s->glob_ll[i]))
			return true;
	return false;
}

/* Enables ev in session s (lock held). */
static int session_enable(struct trawl_ust_session *s, struct trawl_tp_event *ev)
{
	if (s->nevs >= UINT16_MAX)
		return -E2BIG;
	if (tr_grow(&s->evs, &s->evcap, s->nevs, sizeof(*s->evs)))
		return -ENOMEM;
	ev->id = (uint32_t)s->nevs;
	if (s->remote)
		tr_ust_app_send_evdesc(s->key, ev);
	if (s->w) {
		int r = tr_ust_writer_add_event(s->w, s->sc, ev);
		if (r < 0)
			return r;
	}
	s->evs[s->nevs++] = ev;
	__atomic_store_n(&ev->enabled, 1, __ATOMIC_RELEASE);
	return 0;
}

/* Enables every registered event that s selects (lock held). */
int tr_ust_registry_enable(struct trawl_ust_session *s)
{
	for (struct trawl_tp_event *e = registry; e; e = e->next) {
		int ret;
		if (event_matches(s, e) && (ret = session_enable(s, e)) < 0)
			return ret;
	}
	return 0;
}

/* Sends every registered event to the agent (lock held). */
void tr_ust_registry_announce(void)
{
	for (struct trawl_tp_event *e = registry; e; e = e->next)
		tr_ust_app_send_evreg(e);
}

void trawl_tp_register(struct trawl_tp_event *ev)
{
	if (!ev)
		return;
	tr_ust_app_init();
	tr_ust_lock_take();
	for (struct trawl_tp_event *e = registry; e; e = e->next)
		if (e == ev)
			goto out;
	ev->next = registry;
	registry = ev;
	tr_ust_app_send_evreg(ev);
	struct trawl_ust_session *s = tr_ust_cur_sess;
	if (s && s->state == S_ACTIVE && s->pid == getpid() && event_matches(s, ev))
		session_enable(s, ev);
out:
	tr_ust_lock_give();
}

void trawl_tp_unregister(struct trawl_tp_event *ev)
{
	if (!ev)
		return;
	tr_ust_lock_take();
	for (struct trawl_tp_event **pp = &registry; *pp; pp = &(*pp)->next)
		if (*pp == ev) {
			*pp = ev->next;
			break;
		}
	__atomic_store_n(&ev->enabled, 0, __ATOMIC_RELAXED);
	tr_ust_lock_give();
}
