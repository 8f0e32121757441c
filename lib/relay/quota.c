/* SPDX-License-Identifier: MIT */
/*
 * lib/relay/quota.c - the disk quota of each host of a session
 * (--max-session-size, docs/relay.md "Disk quota"): the bytes the relay
 * writes for a host's traces in a session, and what its directory held
 * before (counted once, at its first message), against the limit. Over
 * it, the message is refused with the reason; other hosts and sessions
 * are served on. And the disk's reserve (--disk-reserve): the session
 * that wrote the most is refused first when the disk is nearly full.
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <sys/statvfs.h>

#include "relay/relay-internal.h"
#include "util/clock.h"

struct rquota {
	char *name, *host;		/* the session name, the host */
	uint64_t used;			/* bytes in OUTPUT/NAME/HOST */
	uint64_t wrote;			/* of them written by this run */
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
		if (strcmp(q->name, s->name) == 0 && strcmp(q->host, s->host) == 0)
			return s->quota = q;
	struct rquota *q = calloc(1, sizeof(*q));
	char *dir = NULL;
	if (!q || !(q->name = strdup(s->name)) || !(q->host = strdup(s->host)) ||
	    asprintf(&dir, "%s/%s/%s", r->output, s->name, s->host) < 0) {
		if (q) {
			free(q->name);
			free(q->host);
		}
		free(q);
		return NULL;
	}
	q->used = r->max_session_size ? du(dir) : 0;
	free(dir);
	q->next = r->quotas;
	r->quotas = q;
	return s->quota = q;
}

/*
 * The disk's reserve: once the output's file system has less free than
 * r->disk_reserve (beyond n), the session that wrote the most in this run
 * is refused, so that it cannot fill the disk and cut every other
 * session's streams: the others write on into the reserve. The free
 * space is asked of the file system every DISK_ASK bytes written or
 * DISK_ASK_MS, and counted down in between. 0, or -ENOSPC with err set
 * when s is the one refused.
 */
#define DISK_ASK (1u << 20)
#define DISK_ASK_MS 250
static int reserve_check(struct trawl_relay *r, struct rsession *s, uint64_t n, char *err,
			 size_t errlen)
{
	int64_t now = tr_mono_ms();
	if (r->disk_since_ask >= DISK_ASK || now - r->disk_asked >= DISK_ASK_MS ||
	    r->disk_free < n + r->disk_reserve_now) {
		struct statvfs v;
		if (statvfs(r->output, &v) < 0)
			return 0;
		r->disk_free = (uint64_t)v.f_bavail * v.f_frsize;
		uint64_t size = (uint64_t)v.f_blocks * v.f_frsize;
		/* the default: 1 % of the file system, at most 1 GiB */
		r->disk_reserve_now = r->disk_reserve ? r->disk_reserve :
				      (size / 100 < (1ull << 30) ? size / 100 : 1ull << 30);
		r->disk_asked = now;
		r->disk_since_ask = 0;
	}
	if (r->disk_free >= n + r->disk_reserve_now) {
		r->disk_free -= n;
		r->disk_since_ask += n;
		return 0;
	}
	/* in the reserve: the session (all its hosts) that wrote the most */
	const char *top = NULL;
	uint64_t topw = 0, mine = 0;
	for (struct rquota *q = r->quotas; q; q = q->next) {
		uint64_t w = 0;
		for (struct rquota *p = r->quotas; p; p = p->next)
			if (strcmp(p->name, q->name) == 0)
				w += p->wrote;
		if (w > topw) {
			topw = w;
			top = q->name;
		}
		if (strcmp(q->name, s->name) == 0)
			mine = w;
	}
	if (top && strcmp(top, s->name) != 0) {
		r->disk_free = r->disk_free > n ? r->disk_free - n : 0;
		r->disk_since_ask += n;
		return 0;
	}
	tr_relay_ratelog(r, &r->rl_disk, LOG_WARNING, "session %s: the disk is nearly full (%llu "
			 "bytes free, %llu kept in reserve; --disk-reserve): refusing it, the "
			 "session that wrote the most (%llu bytes)", s->name,
			 (unsigned long long)r->disk_free, (unsigned long long)r->disk_reserve_now,
			 (unsigned long long)mine);
	return tr_seterr(err, errlen, ENOSPC, "disk full: the relay keeps its last %llu bytes "
			 "for the other sessions, and session %s wrote the most (%llu bytes)",
			 (unsigned long long)r->disk_reserve_now, s->name, (unsigned long long)mine);
}

int tr_relay_quota_charge(struct trawl_relay *r, struct rsession *s, uint64_t n, char *err,
			  size_t errlen)
{
	struct rquota *q = quota_of(r, s);
	if (!q)
		return tr_seterr(err, errlen, ENOMEM, "out of memory");
	if (n && reserve_check(r, s, n, err, errlen) < 0)
		return -ENOSPC;
	if (!r->max_session_size) {
		q->wrote += n;
		return 0;
	}
	/* n == 0: may the host take anything more (a HELLO). Once a message
	 * was refused the host is full: its producers' resumes are refused
	 * too (else each would send the refused message again) */
	if (!q->refused &&
	    (n ? q->used + n <= r->max_session_size : q->used < r->max_session_size)) {
		q->used += n;
		q->wrote += n;
		return 0;
	}
	if (!q->refused)
		tr_relay_log(r, LOG_WARNING, "host %s of session %s: %s its quota (%llu of %llu "
			     "bytes used; --max-session-size): refusing its producers", s->host,
			     s->name, n ? "a message would take it past" : "at",
			     (unsigned long long)q->used, (unsigned long long)r->max_session_size);
	q->refused = true;
	if (n)
		return tr_seterr(err, errlen, EDQUOT, "host %s of session %s: a message of %llu "
				 "bytes would take it past its disk quota (%llu of %llu bytes "
				 "used; --max-session-size, per host)", s->host, s->name,
				 (unsigned long long)n, (unsigned long long)q->used,
				 (unsigned long long)r->max_session_size);
	return tr_seterr(err, errlen, EDQUOT, "host %s of session %s is at its disk quota "
			 "(%llu of %llu bytes used; --max-session-size, per host)", s->host,
			 s->name, (unsigned long long)q->used,
			 (unsigned long long)r->max_session_size);
}

void tr_relay_quota_clear(struct trawl_relay *r)
{
	while (r->quotas) {
		struct rquota *q = r->quotas;
		r->quotas = q->next;
		free(q->name);
		free(q->host);
		free(q);
	}
}

uint64_t tr_relay_quota_used(const struct rsession *s)
{
	return s->quota ? s->quota->used : 0;
}
