/* SPDX-License-Identifier: MIT */
/*
 * lib/pipe/print.c - the printer sink: every event as a line of a format
 * (format.c), written to a file descriptor through one large buffer.
 *
 * With two threads (the default), the reading thread copies the events of
 * each batch it gets into batches of its own, and a second thread formats
 * and writes them in order. When the formatter falls behind (two batches
 * waiting), the reading thread formats the batch it just filled itself, so
 * both cores share the formatting. Decoded strings point into the traces'
 * bytes, which stay valid until the reader is freed, so only the tapes
 * are copied. With one thread, events are formatted as they come.
 *
 * A closed pipe (`| head`) stops the run with -EPIPE and nothing printed
 * about it; other write errors with their -errno.
 *
 * Live (flush_batches), the lines reach a terminal batch by batch; to a
 * pipe or a file they wait in the buffer until the reader has caught up
 * with the sources (it is about to wait for more: caught_up), the buffer
 * is full, or the oldest waited LIVE_FLUSH_NS: one write(2) each time the
 * viewer has shown all it received, at most one per packet received,
 * never one per event of a packet (a viewer on a node that traces its own
 * syscalls would flood the trace it reads). Before, they waited for the
 * next event or for a whole wait of the reader (100 ms) too: a viewer
 * behind a pipe showed sparse events some 30 ms late.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipe/pipe-internal.h"
#include "util/clock.h"

#define LIVE_FLUSH_NS 50000000ull	/* 50 ms */
#define BATCH 4096
#define NBATCH 8
#define OUTCAP (1u << 20)

struct pbatch {
	struct trawl_event ev[BATCH];
	size_t n;
	union trawl_ctf_value *vals;
	size_t nvals, capvals;
	int64_t prev_ts;		/* before ev[0]; INT64_MIN: none */
	bool formatted;
	char *out;
	size_t outlen, outcap;
	struct pbatch *next;
};

struct trawl_print {
	const struct format *fmt;
	unsigned flags;
	int fd;
	bool threaded;
	bool flush_batches;
	bool hold;			/* live to a pipe or file: see the top */
	uint64_t pending_since;		/* mono ns of the oldest unwritten line; 0: none */
	uint64_t printed;
	int err;			/* the first write error (EPIPE: closed) */
	/* one thread */
	void *fx;			/* the reading thread's formatter */
	char *buf;
	size_t len, cap;
	/* two threads */
	struct pbatch *pool, *cur;
	int64_t last_ts;
	pthread_t th;
	bool th_on, mu_on;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct pbatch *free_list;
	struct pbatch *head, *tail;	/* ready, in order */
	size_t nready;
	bool done;			/* everything is queued */
	bool stop;			/* the writer cannot go on */
	bool nomem;
	void *wfx;			/* the writer thread's formatter */
};

/* Writes n bytes of p to the descriptor: 0, or the errno. */
static int write_out(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* ---------------------------------------------------------- one thread */

static int flush_serial(struct trawl_print *p)
{
	int e = p->len ? write_out(p->fd, p->buf, p->len) : 0;

	p->len = 0;
	p->pending_since = 0;
	if (e && !p->err)
		p->err = e;
	return e ? -e : 0;
}

static int serial_events(struct trawl_print *p, const struct trawl_event *ev, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t k = p->fmt->event(p->fx, p->buf + p->len, p->cap - p->len, &ev[i]);
		if (k > p->cap - p->len) {
			int rc = flush_serial(p);
			if (rc)
				return rc;
			if (k > p->cap) {
				char *nb = realloc(p->buf, k + 1);
				if (!nb)
					return -ENOMEM;
				p->buf = nb;
				p->cap = k + 1;
			}
			k = p->fmt->event(p->fx, p->buf, p->cap, &ev[i]);
		}
		if (k == 0)
			return -ENOMEM;
		p->len += k;
		p->printed++;
		if (p->cap - p->len < 4096) {
			int rc = flush_serial(p);
			if (rc)
				return rc;
		}
	}
	return 0;
}

/* --------------------------------------------------------- two threads */

static int format_batch(const struct format *fmt, void *fx, struct pbatch *b)
{
	fmt->set_prev(fx, b->prev_ts);
	b->outlen = 0;
	for (size_t i = 0; i < b->n; i++) {
		size_t room = b->outcap - b->outlen;
		size_t n = fmt->event(fx, b->out + b->outlen, room, &b->ev[i]);

		if (n > room) {
			size_t ncap = b->outcap * 2 + n;
			char *nb = realloc(b->out, ncap);

			if (!nb)
				return -1;
			b->out = nb;
			b->outcap = ncap;
			n = fmt->event(fx, b->out + b->outlen, b->outcap - b->outlen, &b->ev[i]);
		}
		if (n == 0)
			return -1;
		b->outlen += n;
	}
	b->formatted = true;
	return 0;
}

static void *writer_main(void *arg)
{
	struct trawl_print *p = arg;

	for (;;) {
		struct pbatch *b;

		pthread_mutex_lock(&p->mu);
		while (!p->head && !p->done)
			pthread_cond_wait(&p->cv, &p->mu);
		b = p->head;
		if (!b) {
			pthread_mutex_unlock(&p->mu);
			break;
		}
		p->head = b->next;
		if (!p->head)
			p->tail = NULL;
		p->nready--;
		pthread_mutex_unlock(&p->mu);

		bool ok = b->formatted || format_batch(p->fmt, p->wfx, b) == 0;
		int e = ok && !p->stop ? write_out(p->fd, b->out, b->outlen) : 0;

		pthread_mutex_lock(&p->mu);
		if (!ok) {
			p->nomem = true;
			p->stop = true;
		} else if (e) {
			if (!p->err)
				p->err = e;
			p->stop = true;
		}
		b->next = p->free_list;
		p->free_list = b;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
	}
	return NULL;
}

/* Copies ev (and its tape) into b. */
static int batch_add(struct pbatch *b, const struct trawl_event *ev)
{
	if (b->nvals + ev->nvalues > b->capvals) {
		size_t ncap = (b->nvals + ev->nvalues) * 2 + 4096;
		union trawl_ctf_value *nv = realloc(b->vals, ncap * sizeof(*nv));

		if (!nv)
			return -1;
		b->vals = nv;
		b->capvals = ncap;
	}
	b->ev[b->n] = *ev;
	/* an offset for now: the tape may still move */
	b->ev[b->n].values = (const union trawl_ctf_value *)(uintptr_t)b->nvals;
	if (ev->nvalues)
		memcpy(b->vals + b->nvals, ev->values, ev->nvalues * sizeof(*ev->values));
	b->nvals += ev->nvalues;
	b->n++;
	return 0;
}

/* Queues the current batch for the writer (formatting it first when the
 * writer is behind). 0, or -errno when the writer has stopped. */
static int queue_cur(struct trawl_print *p)
{
	struct pbatch *b = p->cur;
	bool help;

	p->cur = NULL;
	for (size_t i = 0; i < b->n; i++)
		b->ev[i].values = b->vals + (uintptr_t)b->ev[i].values;
	pthread_mutex_lock(&p->mu);
	help = p->nready >= 2;
	pthread_mutex_unlock(&p->mu);
	if (help && format_batch(p->fmt, p->fx, b))
		return -ENOMEM;
	pthread_mutex_lock(&p->mu);
	b->next = NULL;
	if (p->tail)
		p->tail->next = b;
	else
		p->head = b;
	p->tail = b;
	p->nready++;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	return 0;
}

/* A free batch for p->cur: 0, or -errno when the writer has stopped. */
static int take_batch(struct trawl_print *p)
{
	pthread_mutex_lock(&p->mu);
	while (!p->free_list && !p->stop)
		pthread_cond_wait(&p->cv, &p->mu);
	bool stop = p->stop;
	struct pbatch *b = p->free_list;
	if (b && !stop)
		p->free_list = b->next;
	int e = p->nomem ? ENOMEM : p->err ? p->err : EIO;
	pthread_mutex_unlock(&p->mu);
	if (stop)
		return -e;
	b->n = 0;
	b->nvals = 0;
	b->formatted = false;
	b->prev_ts = p->last_ts;
	p->cur = b;
	return 0;
}

static int threaded_events(struct trawl_print *p, const struct trawl_event *ev, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int rc;
		if (!p->cur && (rc = take_batch(p)))
			return rc;
		if (batch_add(p->cur, &ev[i]))
			return -ENOMEM;
		p->last_ts = ev[i].ts;
		p->printed++;
		if (p->cur->n == BATCH && (rc = queue_cur(p)))
			return rc;
	}
	return 0;
}

/* ---------------------------------------------------------------- sink */

static int print_events(void *self, const struct trawl_event *ev, size_t n)
{
	struct trawl_print *p = self;

	if (p->threaded)
		return threaded_events(p, ev, n);
	int rc = serial_events(p, ev, n);
	if (rc || !p->flush_batches)
		return rc;
	if (!p->hold)
		return flush_serial(p);
	uint64_t now = tr_mono_ns();
	if (!p->len)
		return 0;
	if (!p->pending_since)
		p->pending_since = now;
	return now - p->pending_since >= LIVE_FLUSH_NS ? flush_serial(p) : 0;
}

/* The reader caught up (live: it waits for more): what waits goes out. */
static int print_idle(void *self, struct trawl_reader *r)
{
	struct trawl_print *p = self;

	(void)r;
	return p->threaded || !p->len ? 0 : flush_serial(p);
}

/* Live: the reader gave every event it has and waits for more: what
 * waits goes out (one write each time the viewer catches up with its
 * sources, at most once per packet it receives). */
static int print_caught_up(void *self)
{
	struct trawl_print *p = self;

	return p->threaded || !p->flush_batches || !p->len ? 0 : flush_serial(p);
}

static int print_finish(void *self, struct trawl_reader *r)
{
	struct trawl_print *p = self;
	int rc = 0;

	(void)r;
	if (!p->threaded)
		return flush_serial(p);
	if (p->cur && p->cur->n)
		rc = queue_cur(p);
	pthread_mutex_lock(&p->mu);
	p->done = true;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	if (p->th_on) {
		pthread_join(p->th, NULL);
		p->th_on = false;
	}
	if (p->nomem)
		return -ENOMEM;
	if (p->err)
		return -p->err;
	return rc;
}

static const struct trawl_sink_ops print_ops = {
	.sz = sizeof(print_ops),
	.name = "print",
	.events = print_events,
	.finish = print_finish,
	.idle = print_idle,
	.caught_up = print_caught_up,
};

struct trawl_sink trawl_print_sink(struct trawl_print *p)
{
	return (struct trawl_sink){ &print_ops, p };
}

struct trawl_print *trawl_print_new(const struct trawl_print_opts *o, char *err, size_t errlen)
{
	struct trawl_print *p = calloc(1, sizeof(*p));
	const char *fmt = "text";
	unsigned threads = 2;

	if (!p) {
		tr_seterr(err, errlen, ENOMEM, "out of memory");
		return NULL;
	}
	p->fd = 1;
	if (o && o->sz >= offsetof(struct trawl_print_opts, threads) + sizeof(o->threads)) {
		p->fd = o->fd;
		if (o->format)
			fmt = o->format;
		p->flags = o->flags;
		if (o->threads)
			threads = o->threads;
	}
	if (o && o->sz >= offsetof(struct trawl_print_opts, flush_batches) + sizeof(o->flush_batches) &&
	    o->flush_batches) {
		p->flush_batches = true;
		p->hold = !isatty(p->fd);
		threads = 1;
	}
	p->fmt = tr_format_find(fmt);
	if (!p->fmt) {
		tr_seterr(err, errlen, EINVAL, "unknown format '%s'", fmt);
		goto err;
	}
	p->threaded = threads > 1;
	p->last_ts = INT64_MIN;
	if (!(p->fx = p->fmt->new(p->flags)))
		goto nomem;
	if (!p->threaded) {
		p->cap = OUTCAP;
		if (!(p->buf = malloc(p->cap)))
			goto nomem;
		return p;
	}
	if (!(p->wfx = p->fmt->new(p->flags)) || !(p->pool = calloc(NBATCH, sizeof(*p->pool))))
		goto nomem;
	for (int i = 0; i < NBATCH; i++) {
		p->pool[i].outcap = OUTCAP;
		if (!(p->pool[i].out = malloc(OUTCAP)))
			goto nomem;
		p->pool[i].next = p->free_list;
		p->free_list = &p->pool[i];
	}
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	p->mu_on = true;
	if (pthread_create(&p->th, NULL, writer_main, p)) {
		tr_seterr(err, errlen, EAGAIN, "cannot start a thread");
		goto err;
	}
	p->th_on = true;
	return p;
nomem:
	tr_seterr(err, errlen, ENOMEM, "out of memory");
err:
	trawl_print_free(p);
	return NULL;
}

uint64_t trawl_print_count(const struct trawl_print *p)
{
	return p->printed;
}

int trawl_print_error(const struct trawl_print *p)
{
	return p->err;
}

void trawl_print_free(struct trawl_print *p)
{
	if (!p)
		return;
	if (p->th_on) {
		pthread_mutex_lock(&p->mu);
		p->done = true;
		p->stop = true;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
		pthread_join(p->th, NULL);
	}
	if (p->mu_on) {
		pthread_mutex_destroy(&p->mu);
		pthread_cond_destroy(&p->cv);
	}
	if (p->pool) {
		for (int i = 0; i < NBATCH; i++) {
			free(p->pool[i].out);
			free(p->pool[i].vals);
		}
		free(p->pool);
	}
	if (p->fmt) {
		if (p->fx)
			p->fmt->free(p->fx);
		if (p->wfx)
			p->fmt->free(p->wfx);
	}
	free(p->buf);
	free(p);
}
