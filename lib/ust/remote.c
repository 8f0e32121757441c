/* SPDX-License-Identifier: MIT */
/*
 * lib/ust/remote.c - agent sessions: sessions the agent starts in this
 * process (app.c hands over its START, LIVE and STOP), whose buffers the
 * agent maps and consumes; no writer, no consumer thread here. Stopped
 * ones stay allocated (the exit handler may still look at them).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ust-private.h"

/* Every agent session of the process: stopped ones are kept (see
 * tr_ust_remote_stop), reachable from here. */
static struct trawl_ust_session *remote_all;

int tr_ust_remote_start(uint64_t key, const struct trawl_ust_session_opts *o,
		     const int *glob_ll, const uint8_t uuid[16])
{
	char err[128];
	struct trawl_ust_session *s = tr_ust_session_new(o, true, err, sizeof(err));
	if (!s)
		return -errno;
	s->key = key;
	memcpy(s->uuid, uuid, 16);
	if (s->nglobs && glob_ll) {
		s->glob_ll = malloc(s->nglobs * sizeof(*s->glob_ll));
		if (!s->glob_ll) {
			trawl_ust_session_free(s);
			return -ENOMEM;
		}
		memcpy(s->glob_ll, glob_ll, s->nglobs * sizeof(*s->glob_ll));
	}
	int r = trawl_ust_session_start(s);
	if (r < 0) {
		trawl_ust_session_free(s);
		return r;
	}
	tr_ust_lock_take();
	s->remote_next = remote_all;
	remote_all = s;
	tr_ust_lock_give();
	return 0;
}

void tr_ust_live_tick(uint64_t key)
{
	tr_ust_lock_take();
	struct trawl_ust_session *s = tr_ust_cur_sess;
	if (!s || !s->remote || s->key != key || s->state != S_ACTIVE || !s->bufs) {
		tr_ust_lock_give();
		return;
	}
	uint64_t now = ust_clock_now();
	if (!tr_ust_membarrier()) {
		/* without the barrier nothing can be promised */
		tr_ust_lock_give();
		return;
	}
	for (struct ust_buf *b = s->bufs; b; b = b->next) {
		struct ust_thread *t = b->thr;
		/* partner: commit's / reserve's release store of nest = 0 */
		if (t && __atomic_load_n(&t->nest, __ATOMIC_ACQUIRE) == 0)
			/* partner: tr_ust_cons_live's acquire load */
			__atomic_store_n(&b->cons.ring.shm->quiet_ts, now, __ATOMIC_RELEASE);
	}
	tr_ust_lock_give();
}

int tr_ust_remote_stop(uint64_t key)
{
	tr_ust_lock_take();
	struct trawl_ust_session *s = tr_ust_cur_sess;
	bool mine = s && s->remote && (!key || s->key == key);
	tr_ust_lock_give();
	if (!mine)
		return -ENOENT;
	int r = trawl_ust_session_stop(s);
	/* the agent has its own mappings; ours go. The session itself stays
	 * allocated (a few hundred bytes per agent session): the exit
	 * handler may still be looking at it */
	tr_ust_lock_take();
	if (s->state == S_STOPPED)
		tr_ust_free_bufs(s);
	tr_ust_lock_give();
	return r;
}
