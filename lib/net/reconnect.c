/* SPDX-License-Identifier: MIT */
/*
 * lib/net/reconnect.c - a resumable producer's sender (reconnect.h): a
 * queue of one trace's messages and the thread that sends them, keeps
 * them until the relay's PROGRESS says they are written, and when the
 * connection breaks, connects again and resumes.
 *
 * The queue, in the order the writer handed the messages over: those sent
 * and not yet confirmed (m->sent), then those not sent yet (from
 * q->unsent). A PROGRESS of n frees, from the head, every message sent as
 * one of the connection's first n (m->cseq <= n). A broken connection
 * makes every message unsent again; after the HELLO of a resume the
 * thread sends every STREAM it ever queued (the relay takes those it has),
 * then the queue from its head, each METADATA cut to what the relay lacks
 * (RESUMED: its length) and each PACKET as it was (the relay skips those
 * it has, by packet_seq_num).
 *
 * Locking: q->mu guards the queue, its counters and the states; the
 * thread sends and reads without it (the messages it sends stay until it
 * frees them, under the lock).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "net/reconnect.h"
#include "net/relay-proto.h"
#include "net/sock.h"
#include "util/clock.h"

/* Backoff between attempts: from BACKOFF_MIN ms, doubled up to BACKOFF_MAX,
 * each within +-25 % (producers cut off together do not come back in step). */
#define BACKOFF_MIN 50
#define BACKOFF_MAX 2000

struct qmsg {
	struct qmsg *next;
	uint64_t cseq;			/* sent as the connection's cseq-th message */
	bool sent;			/* on the current connection */
	uint64_t meta_off;		/* METADATA: its place in the trace's */
	uint64_t events;		/* PACKET: its events (as the writer counted) */
	bool tried;			/* sent, in part or whole, on some connection */
	uint32_t type;
	size_t len;			/* b: header and payload */
	uint8_t b[];
};

struct rsend {
	pthread_mutex_t mu;
	pthread_cond_t room;		/* the budget has room, or an ACK / error */
	pthread_t th;
	int wake;			/* eventfd: work queued, or stop */
	int fd;				/* -1: cut off */
	tr_rsend_hello_fn hello;
	void *arg;
	unsigned resume_ms;
	char addr[128];

	struct qmsg *head, *tail, *unsent;
	struct qmsg *streams, *streams_tail;	/* every STREAM, for resumes */
	size_t bytes, budget;
	uint64_t meta_total;		/* metadata bytes queued */
	char *meta_all;			/* all of them: for a relay that lost some */
	uint64_t cseq;			/* messages sent on this connection */
	uint64_t relay_meta;		/* the relay's metadata bytes (RESUMED) */
	int64_t cut_since;		/* ms of the first cut since the relay last
					 * confirmed something; 0: none */
	int64_t demand_until;		/* the last DEMAND's end (ms; atomic) */
	int horizon_asked;		/* an R->P HORIZON came (atomic) */
	void (*on_demand)(void *arg);	/* rsend_opts' */
	void *demand_arg;
	int64_t close_sent;		/* ms CLOSE went out; 0: not yet */
	bool stop, acked;
	bool cut_counted;		/* lost by an ACK that said what was written */
	uint64_t stored;		/* events of the PACKETs the relay wrote */
	int err;			/* lost for good: -errno */
	int ack_status;
	char why[512];			/* the relay's reason, or the loss's */

	uint8_t in[RELAY_HDR_LEN + 4 + 256 + 64];	/* the relay's replies being read: an
						 * ACK with its reason fits */
	size_t inlen;
};

/* Under q->mu: frees the confirmed messages at the head. */
static void confirmed(struct rsend *q, uint64_t written)
{
	q->cut_since = 0;	/* the relay makes progress */
	while (q->head && q->head->sent && q->head->cseq <= written) {
		struct qmsg *m = q->head;
		q->head = m->next;
		if (!q->head)
			q->tail = NULL;
		q->bytes -= m->len;
		q->stored += m->events;
		free(m);
	}
	pthread_cond_broadcast(&q->room);
}

/* Under q->mu: lost for good. */
static void lose(struct rsend *q, int err, const char *why)
{
	if (!q->err) {
		q->err = err;
		snprintf(q->why, sizeof(q->why), "%s", why);
	}
	pthread_cond_broadcast(&q->room);
}

/* Under q->mu: the connection broke; everything is unsent again. */
static void cut_off(struct rsend *q)
{
	if (!q->cut_since)
		q->cut_since = tr_mono_ms();
	q->close_sent = 0;
	if (q->fd >= 0)
		close(q->fd);
	q->fd = -1;
	q->inlen = 0;
	for (struct qmsg *m = q->head; m; m = m->next)
		m->sent = false;
	q->unsent = q->head;
	q->cseq = 0;
}

/* Reads what the relay sent (PROGRESS, ACK, DEMAND). 0, or -1 when the connection
 * broke (the caller cuts it off). Called without the lock. */
static int read_replies(struct rsend *q, int fd)
{
	for (;;) {
		ssize_t n = recv(fd, q->in + q->inlen, sizeof(q->in) - q->inlen, MSG_DONTWAIT);
		if (n == 0)
			return -1;
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		q->inlen += (size_t)n;
		size_t off = 0;
		for (;;) {
			struct relay_msg m;
			char perr[128];
			ssize_t k = tr_relay_msg_parse(q->in + off, q->inlen - off, &m, perr,
						       sizeof(perr));
			if (k < 0 || (k == 0 && q->inlen - off == sizeof(q->in)))
				return -1;	/* not what a relay says */
			if (k == 0)
				break;
			off += (size_t)k;
			if (m.type == RELAY_DEMAND) {
				/* a live viewer waits: read by the writer's
				 * thread (tr_rsend_demand), no lock */
				int64_t until = tr_mono_ms() + (int64_t)m.u.demand.ms;
				__atomic_store_n(&q->demand_until, until, __ATOMIC_RELAXED);
				if (q->on_demand)
					q->on_demand(q->demand_arg);
				continue;
			}
			if (m.type == RELAY_HORIZON) {
				/* a viewer waits past the trace's horizon (only
				 * to a HELLO that asked to send them) */
				__atomic_store_n(&q->horizon_asked, 1, __ATOMIC_RELAXED);
				if (q->on_demand)
					q->on_demand(q->demand_arg);
				continue;
			}
			pthread_mutex_lock(&q->mu);
			if (m.type == RELAY_PROGRESS) {
				confirmed(q, m.u.progress.written);
			} else if (m.type == RELAY_ACK) {
				/* an ACK with an error: a message refused (a
				 * quota, a broken protocol): not retried */
				if (m.u.ack.status < 0) {
					/* it says where it cut (RELAY_HELLO_COUNT):
					 * what came before is written */
					if (m.u.ack.counted && !q->err) {
						confirmed(q, m.u.ack.written);
						q->cut_counted = true;
					}
					char why[300];
					snprintf(why, sizeof(why), "relay %s refused: %s", q->addr,
						 m.u.ack.msg);
					lose(q, m.u.ack.status, why);
				} else {
					q->acked = true;
					confirmed(q, UINT64_MAX);
				}
			}
			bool over = q->err || q->acked;
			pthread_mutex_unlock(&q->mu);
			if (over)
				return 0;
		}
		memmove(q->in, q->in + off, q->inlen - off);
		q->inlen -= off;
	}
}

/* Sends m on fd, or the part of its metadata the relay lacks (nothing:
 * *skipped). 0 or -errno. */
static int send_one(struct rsend *q, int fd, const struct qmsg *m, uint64_t relay_meta,
		    bool *skipped)
{
	*skipped = false;
	if (m->type == RELAY_METADATA && m->meta_off < relay_meta) {
		uint64_t plen = m->len - RELAY_HDR_LEN, have = relay_meta - m->meta_off;
		if (have >= plen) {
			*skipped = true;
			return 0;
		}
		uint8_t hdr[RELAY_HDR_LEN];
		relay_put_hdr(hdr, RELAY_METADATA, (uint32_t)(plen - have));
		return tr_net_send2(fd, hdr, sizeof(hdr), m->b + RELAY_HDR_LEN + have, plen - have);
	}
	(void)q;
	return tr_net_send2(fd, m->b, m->len, NULL, 0);
}

/* Waits ms, or until stopped. false: stopped. */
static bool nap(struct rsend *q, int ms)
{
	int64_t until = tr_mono_ms() + ms;
	for (;;) {
		int64_t left = until - tr_mono_ms();
		pthread_mutex_lock(&q->mu);
		bool stop = q->stop;
		pthread_mutex_unlock(&q->mu);
		if (stop || left <= 0)
			break;
		/* woken by work queued: consumed, and waited on */
		struct pollfd p = { .fd = q->wake, .events = POLLIN };
		uint64_t v;
		if (poll(&p, 1, (int)left) > 0 && read(q->wake, &v, sizeof(v)) < 0) {
			/* nothing: only a wake-up */
		}
	}
	pthread_mutex_lock(&q->mu);
	bool go = !q->stop;
	pthread_mutex_unlock(&q->mu);
	return go;
}

/* Cut off: connects again with backoff until resumed, refused, stopped or
 * out of time. Called without the lock. */
static void reconnect(struct rsend *q)
{
	pthread_mutex_lock(&q->mu);
	int64_t since = q->cut_since ? q->cut_since : tr_mono_ms();
	pthread_mutex_unlock(&q->mu);
	unsigned seed = (unsigned)(since ^ (int64_t)getpid() ^ (int64_t)(uintptr_t)q);
	int delay = BACKOFF_MIN;
	char err[300] = "";
	for (;;) {
		int jit = delay / 4;
		int ms = delay - jit + (int)(rand_r(&seed) % (unsigned)(2 * jit + 1));
		if (!nap(q, ms))
			return;
		uint64_t meta = 0;
		int refused = 0;
		int fd = q->hello(q->arg, &meta, &refused, err, sizeof(err));
		pthread_mutex_lock(&q->mu);
		if (fd >= 0) {
			q->fd = fd;
			q->relay_meta = meta;
			pthread_mutex_unlock(&q->mu);
			return;
		}
		if (refused) {
			lose(q, fd, err);
			pthread_mutex_unlock(&q->mu);
			return;
		}
		if (tr_mono_ms() - since >= (int64_t)q->resume_ms) {
			char why[400];
			snprintf(why, sizeof(why), "%s (cut off for %u s; gave up)", err,
				 q->resume_ms / 1000);
			lose(q, fd, why);
			pthread_mutex_unlock(&q->mu);
			return;
		}
		pthread_mutex_unlock(&q->mu);
		delay = delay * 2 > BACKOFF_MAX ? BACKOFF_MAX : delay * 2;
	}
}

/* After a resume's HELLO: the metadata the relay lacks before what is
 * still queued (a relay whose output lost the trace: it starts again),
 * then every stream again (the relay takes those it has). 0 or -errno.
 * Called without the lock; the stream list only grows at its tail, and
 * its entries are never freed before the sender. */
static int announce(struct rsend *q, int fd)
{
	pthread_mutex_lock(&q->mu);
	struct qmsg *last = q->streams_tail;
	struct qmsg *m = q->streams;
	uint64_t base = q->meta_total, from = q->relay_meta;
	for (struct qmsg *k = q->head; k; k = k->next)
		if (k->type == RELAY_METADATA) {
			base = k->meta_off;
			break;
		}
	/* meta_all is only appended to (realloc'd under the lock): copy */
	char *lack = from < base ? malloc(base - from) : NULL;
	if (lack)
		memcpy(lack, q->meta_all + from, base - from);
	pthread_mutex_unlock(&q->mu);
	if (from < base) {
		if (!lack)
			return -ENOMEM;
		uint8_t hdr[RELAY_HDR_LEN];
		relay_put_hdr(hdr, RELAY_METADATA, (uint32_t)(base - from));
		int ret = tr_net_send2(fd, hdr, sizeof(hdr), lack, base - from);
		free(lack);
		if (ret)
			return ret;
		pthread_mutex_lock(&q->mu);
		q->cseq++;
		q->relay_meta = base;
		pthread_mutex_unlock(&q->mu);
	}
	for (; m; m = m == last ? NULL : m->next) {
		int ret = tr_net_send2(fd, m->b, m->len, NULL, 0);
		if (ret)
			return ret;
		pthread_mutex_lock(&q->mu);
		q->cseq++;
		pthread_mutex_unlock(&q->mu);
	}
	return 0;
}

static void *run(void *arg)
{
	struct rsend *q = arg;
	bool fresh = false;		/* a resumed connection: streams first */
	pthread_mutex_lock(&q->mu);
	for (;;) {
		if (q->err || q->acked || q->stop)
			break;
		if (q->fd < 0) {
			pthread_mutex_unlock(&q->mu);
			reconnect(q);
			pthread_mutex_lock(&q->mu);
			fresh = q->fd >= 0;
			continue;
		}
		int fd = q->fd;
		if (fresh) {
			fresh = false;
			pthread_mutex_unlock(&q->mu);
			int ret = announce(q, fd);
			pthread_mutex_lock(&q->mu);
			if (ret)
				cut_off(q);
			continue;
		}
		if (q->unsent) {
			struct qmsg *m = q->unsent;
			uint64_t relay_meta = q->relay_meta;
			m->tried = true;	/* the relay may have it from now on */
			pthread_mutex_unlock(&q->mu);
			bool skipped;
			int ret = send_one(q, fd, m, relay_meta, &skipped);
			if (!ret && read_replies(q, fd) < 0)
				ret = -ECONNRESET;
			pthread_mutex_lock(&q->mu);
			if (ret) {
				cut_off(q);
				continue;
			}
			if (!skipped)
				q->cseq++;
			m->cseq = q->cseq;	/* skipped: confirmed with the one before */
			m->sent = true;
			q->unsent = m->next;
			if (m->type == RELAY_CLOSE)
				q->close_sent = tr_mono_ms();
			continue;
		}
		/* nothing to send: wait for work, the relay's replies, or its end;
		 * a CLOSE whose ACK does not come within the send timeout is
		 * taken as a connection lost (sent again after a resume) */
		int wait = -1;
		if (q->close_sent) {
			int64_t left = q->close_sent + RELAY_SEND_TIMEOUT_MS - tr_mono_ms();
			if (left <= 0) {
				cut_off(q);
				continue;
			}
			wait = (int)left;
		}
		pthread_mutex_unlock(&q->mu);
		struct pollfd p[2] = { { .fd = fd, .events = POLLIN }, { .fd = q->wake, .events = POLLIN } };
		int n = poll(p, 2, wait);
		uint64_t v;
		if (n > 0 && (p[1].revents & POLLIN) && read(q->wake, &v, sizeof(v)) < 0) {
			/* nothing: it is only a wake-up */
		}
		int broke = n > 0 && (p[0].revents & (POLLIN | POLLHUP | POLLERR)) ?
			    read_replies(q, fd) : 0;
		pthread_mutex_lock(&q->mu);
		if (broke)
			cut_off(q);
	}
	if (q->fd >= 0 && !q->acked)
		cut_off(q);
	pthread_cond_broadcast(&q->room);
	pthread_mutex_unlock(&q->mu);
	return NULL;
}

static void wake(struct rsend *q)
{
	uint64_t one = 1;
	if (write(q->wake, &one, sizeof(one)) < 0) {
		/* the counter is full: the thread wakes anyway */
	}
}

struct rsend *tr_rsend_new(const struct rsend_opts *o)
{
	struct rsend *q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	q->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (q->wake < 0) {
		free(q);
		return NULL;
	}
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->room, NULL);
	q->fd = o->fd;
	q->hello = o->hello;
	q->arg = o->arg;
	q->budget = o->budget;
	q->resume_ms = o->resume_ms;
	q->on_demand = o->on_demand;
	q->demand_arg = o->demand_arg;
	snprintf(q->addr, sizeof(q->addr), "%s", o->addr ? o->addr : "");
	/* the thread blocks every signal: a relay gone gives it EPIPE */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int e = pthread_create(&q->th, NULL, run, q);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e) {
		close(q->wake);
		pthread_mutex_destroy(&q->mu);
		pthread_cond_destroy(&q->room);
		free(q);
		errno = e;
		return NULL;
	}
	return q;
}

static struct qmsg *msg_new(uint32_t type, const void *hdr, size_t hlen, const void *body,
			    size_t blen)
{
	struct qmsg *m = malloc(sizeof(*m) + hlen + blen);
	if (!m)
		return NULL;
	memset(m, 0, sizeof(*m));
	m->type = type;
	m->len = hlen + blen;
	memcpy(m->b, hdr, hlen);
	if (blen)
		memcpy(m->b + hlen, body, blen);
	return m;
}

static int put_msg(struct rsend *q, const void *hdr, size_t hlen, const void *body, size_t blen,
		   uint64_t events, bool now)
{
	uint32_t type = get_le32(hdr);
	struct qmsg *m = msg_new(type, hdr, hlen, body, blen);
	struct qmsg *st = type == RELAY_STREAM ? msg_new(type, hdr, hlen, body, blen) : NULL;
	if (!m || (type == RELAY_STREAM && !st)) {
		free(m);
		free(st);
		return -ENOMEM;
	}
	m->events = events;
	pthread_mutex_lock(&q->mu);
	/* back-pressure: a message larger than the budget goes alone */
	while (!q->err && q->head && q->bytes + m->len > q->budget)
		pthread_cond_wait(&q->room, &q->mu);
	int ret = q->err;
	if (!ret && type == RELAY_METADATA) {
		size_t ml = m->len - RELAY_HDR_LEN;
		char *all = realloc(q->meta_all, q->meta_total + ml);
		if (!all) {
			ret = -ENOMEM;
		} else {
			q->meta_all = all;
			memcpy(all + q->meta_total, m->b + RELAY_HDR_LEN, ml);
			m->meta_off = q->meta_total;
			q->meta_total += ml;
		}
	}
	if (!ret) {
		if (q->tail)
			q->tail->next = m;
		else
			q->head = m;
		q->tail = m;
		if (!q->unsent)
			q->unsent = m;
		q->bytes += m->len;
		if (st) {
			if (q->streams_tail)
				q->streams_tail->next = st;
			else
				q->streams = st;
			q->streams_tail = st;
			st = NULL;
		}
		m = NULL;
	}
	pthread_mutex_unlock(&q->mu);
	free(m);
	free(st);
	if (!ret && now)
		wake(q);
	return ret;
}

int tr_rsend_put(struct rsend *q, const void *hdr, size_t hlen, const void *body, size_t blen,
		 uint64_t events)
{
	return put_msg(q, hdr, hlen, body, blen, events, true);
}

int tr_rsend_put_later(struct rsend *q, const void *hdr, size_t hlen)
{
	return put_msg(q, hdr, hlen, NULL, 0, 0, false);
}

int tr_rsend_close(struct rsend *q, char *msg, size_t msglen)
{
	uint8_t hdr[RELAY_HDR_LEN];
	relay_put_hdr(hdr, RELAY_CLOSE, 0);
	int ret = tr_rsend_put(q, hdr, sizeof(hdr), NULL, 0, 0);
	pthread_mutex_lock(&q->mu);
	while (!ret && !q->err && !q->acked)
		pthread_cond_wait(&q->room, &q->mu);
	if (!ret)
		ret = q->err;
	if (ret)
		snprintf(msg, msglen, "%s", q->why);
	pthread_mutex_unlock(&q->mu);
	return ret;
}

bool tr_rsend_horizon_asked(struct rsend *q)
{
	return q && __atomic_exchange_n(&q->horizon_asked, 0, __ATOMIC_RELAXED);
}

int64_t tr_rsend_demand(struct rsend *q)
{
	return q ? __atomic_load_n(&q->demand_until, __ATOMIC_RELAXED) : 0;
}

int tr_rsend_stored(struct rsend *q, uint64_t *events)
{
	int ret = 0;
	pthread_mutex_lock(&q->mu);
	*events = q->stored;
	/* a packet sent on a connection lost without the relay's word may
	 * or may not be written */
	if (!q->acked && !q->cut_counted)
		for (const struct qmsg *m = q->head; m && !ret; m = m->next)
			if (m->tried && m->events)
				ret = -ENODATA;
	pthread_mutex_unlock(&q->mu);
	return ret;
}

const char *tr_rsend_why(struct rsend *q)
{
	pthread_mutex_lock(&q->mu);
	const char *w = q->err ? q->why : "";
	pthread_mutex_unlock(&q->mu);
	return w;
}

void tr_rsend_free(struct rsend *q)
{
	if (!q)
		return;
	pthread_mutex_lock(&q->mu);
	q->stop = true;		/* what was not sent stays unsent */
	pthread_mutex_unlock(&q->mu);
	wake(q);
	pthread_join(q->th, NULL);
	if (q->fd >= 0)
		close(q->fd);
	for (struct qmsg *lists[2] = { q->head, q->streams }, **l = lists; l < lists + 2; l++)
		for (struct qmsg *m = *l, *next; m; m = next) {
			next = m->next;
			free(m);
		}
	close(q->wake);
	pthread_mutex_destroy(&q->mu);
	pthread_cond_destroy(&q->room);
	free(q->meta_all);
	free(q);
}
