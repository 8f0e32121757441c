/* SPDX-License-Identifier: MIT */
/*
 * lib/relay/quota.c - the disk quota of a session name (--max-session-size,
 * docs/relay.md "Disk quota"): the bytes the relay writes for a session,
 * every host's traces together, and what its directory held before
 * (counted once, at the session name's first message), against the
 * limit. Over it, the message is refused with the reason; other sessions
 * are served on.
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "relay/relay-internal.h"

struct rquota {
	char *name;			/* the session name */
	uint64_t used;			/* bytes in OUTPUT/NAME */
	bool refused;			/* a refusal was logged */
	struct rquota *next;
};

/* nftw has no argument for its callback: one relay thread counts at a time. */
static __thread uint64_t du_sum;

static int du_one(const char *path, const struct stat *sb, int type, struct FTW *f)
{
	(void)path;
	(void)f;
	if (type == FTW_F)
		du_sum += (uint64_t)sb->st_size;
	return 0;
}

/* The bytes of the regular files under dir (no symbolic link followed). */
static uint64_t du(const char *dir)
{
	du_sum = 0;
	nftw(dir, du_one, 16, FTW_PHYS);
	return du_sum;
}

static struct rquota *quota_of(struct trawl_relay *r, struct rsession *s)
{
	if (s->quota)
		return s->quota;
	for (struct rquota *q = r->quotas; q; q = q->next)
		if (strcmp(q->name, s->name) == 0)
			return s->quota = q;
	struct rquota *q = calloc(1, sizeof(*q));
	char *dir = NULL;
	if (!q || !(q->name = strdup(s->name)) || asprintf(&dir, "%s/%s", r->output, s->name) < 0) {
		if (q)
			free(q->name);
		free(q);
		return NULL;
	}
	q->used = du(dir);
	free(dir);
	q->next = r->quotas;
	r->quotas = q;
	return s->quota = q;
}

int tr_relay_quota_charge(struct trawl_relay *r, struct rsession *s, uint64_t n, char *err,
			  size_t errlen)
{
	if (!r->max_session_size)
		return 0;
	struct rquota *q = quota_of(r, s);
	if (!q)
		return tr_seterr(err, errlen, ENOMEM, "out of memory");
	/* n == 0: may the session take anything more (a HELLO). Once a
	 * message was refused the session is full: its producers' resumes are
	 * refused too (else each would send the refused message again) */
	if (!q->refused &&
	    (n ? q->used + n <= r->max_session_size : q->used < r->max_session_size)) {
		q->used += n;
		return 0;
	}
	if (!q->refused)
		tr_relay_log(r, LOG_WARNING, "session %s: at its quota (%llu of %llu bytes; "
			     "--max-session-size): refusing its producers", s->name,
			     (unsigned long long)q->used, (unsigned long long)r->max_session_size);
	q->refused = true;
	return tr_seterr(err, errlen, EDQUOT, "session %s is at its disk quota (%llu of %llu "
			 "bytes; --max-session-size)", s->name, (unsigned long long)q->used,
			 (unsigned long long)r->max_session_size);
}

void tr_relay_quota_clear(struct trawl_relay *r)
{
	while (r->quotas) {
		struct rquota *q = r->quotas;
		r->quotas = q->next;
		free(q->name);
		free(q);
	}
}
