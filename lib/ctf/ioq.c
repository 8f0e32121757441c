/* SPDX-License-Identifier: MIT */
/*
 * lib/ctf/ioq.c - a writer's I/O thread: finished packets (and their index
 * entries) are copied into a bounded queue and written, in order, by a
 * thread of their own, so that the thread that produced them (a consumer
 * draining ring buffers, the kernel recorder decoding pages) never waits
 * for the disk until the queue's whole budget is in use. See ioq.h.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctf/ioq.h"

struct item {
	struct item *next;
	int fd, fd2;
	size_t alen, blen;
	size_t cap;			/* bytes of data[] */
	uint8_t data[];
};

struct ioq {
	pthread_mutex_t mu;
	pthread_cond_t work;		/* the thread waits for an item (or stop) */
	pthread_cond_t room;		/* a writer waits for budget (or empty) */
	struct item *head, *tail;	/* to write, in order */
	struct item *spare;		/* written, kept for reuse */
	size_t used, budget;		/* bytes of items allocated */
	bool busy;			/* the thread is writing an item */
	bool stop;
	int err;			/* first write error, sticky */
	int policy;			/* the creator's scheduling, for the thread */
	struct sched_param sp;
	pthread_t th;
};

static void *io_main(void *arg)
{
	struct ioq *q = arg;

	/* the creator's policy and priority (a real-time drain loop's too,
	 * which SCHED_RESET_ON_FORK would not pass on): the writing must
	 * keep up with what feeds it; without the right to, normal */
	pthread_setschedparam(pthread_self(), q->policy, &q->sp);

	pthread_mutex_lock(&q->mu);
	for (;;) {
		while (!q->head && !q->stop)
			pthread_cond_wait(&q->work, &q->mu);
		struct item *it = q->head;
		if (!it)
			break;	/* stop, and nothing left */
		q->head = it->next;
		if (!q->head)
			q->tail = NULL;
		q->busy = true;
		pthread_mutex_unlock(&q->mu);
		int r = 0;
		if (!q->err) {	/* after an error, nothing more is written */
			r = tr_write_all(it->fd, it->data, it->alen);
			if (!r && it->blen)
				r = tr_write_all(it->fd2, it->data + it->alen, it->blen);
		}
		pthread_mutex_lock(&q->mu);
		if (r && !q->err)
			q->err = r;
		q->busy = false;
		it->next = q->spare;
		q->spare = it;
		pthread_cond_broadcast(&q->room);
	}
	pthread_mutex_unlock(&q->mu);
	return NULL;
}

struct ioq *tr_ioq_new(size_t budget)
{
	struct ioq *q = calloc(1, sizeof(*q));
	sigset_t all, old;

	if (!q)
		return NULL;
	q->budget = budget;
	if (pthread_getschedparam(pthread_self(), &q->policy, &q->sp)) {
		q->policy = SCHED_OTHER;
		q->sp.sched_priority = 0;
	}
	q->policy &= ~SCHED_RESET_ON_FORK;	/* reported with the policy */
	if (pthread_mutex_init(&q->mu, NULL))
		goto err_q;
	if (pthread_cond_init(&q->work, NULL))
		goto err_mu;
	if (pthread_cond_init(&q->room, NULL))
		goto err_work;
	/* the thread takes no signal: they are the program's business */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int r = pthread_create(&q->th, NULL, io_main, q);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r) {
		errno = r;
		goto err_room;
	}
	return q;
err_room:
	pthread_cond_destroy(&q->room);
err_work:
	pthread_cond_destroy(&q->work);
err_mu:
	pthread_mutex_destroy(&q->mu);
err_q:
	free(q);
	return NULL;
}

/* A spare item of at least n bytes, or a new one within the budget
 * (q->mu held); NULL when neither is possible now. */
static struct item *take_item(struct ioq *q, size_t n)
{
	for (struct item **pp = &q->spare; *pp; pp = &(*pp)->next) {
		struct item *it = *pp;
		if (it->cap >= n) {
			*pp = it->next;
			return it;
		}
	}
	/* nothing big enough: drop the spares, room for a larger item */
	while (q->spare && q->used + n > q->budget) {
		struct item *it = q->spare;
		q->spare = it->next;
		q->used -= it->cap;
		free(it);
	}
	/* always one item, however large, when nothing else is held */
	if (q->used + n > q->budget && q->used)
		return NULL;
	struct item *it = malloc(sizeof(*it) + n);
	if (!it)
		return NULL;
	it->cap = n;
	q->used += n;
	return it;
}

int tr_ioq_write(struct ioq *q, int fd, const void *a, size_t alen, int fd2, const void *b,
	      size_t blen)
{
	size_t n = alen + blen;
	struct item *it = NULL;

	pthread_mutex_lock(&q->mu);
	while (!q->err && !(it = take_item(q, n))) {
		if (!q->head && !q->busy && !q->used) {
			/* no memory at all, nothing to wait for */
			pthread_mutex_unlock(&q->mu);
			return -ENOMEM;
		}
		pthread_cond_wait(&q->room, &q->mu);
	}
	if (q->err) {
		int r = q->err;
		pthread_mutex_unlock(&q->mu);
		return r;
	}
	pthread_mutex_unlock(&q->mu);
	/* the copy, outside the lock: the item is ours alone */
	it->next = NULL;
	it->fd = fd;
	it->fd2 = fd2;
	it->alen = alen;
	it->blen = blen;
	memcpy(it->data, a, alen);
	if (blen)
		memcpy(it->data + alen, b, blen);
	pthread_mutex_lock(&q->mu);
	if (q->tail)
		q->tail->next = it;
	else
		q->head = it;
	q->tail = it;
	pthread_cond_signal(&q->work);
	pthread_mutex_unlock(&q->mu);
	return 0;
}

int tr_ioq_sync(struct ioq *q)
{
	pthread_mutex_lock(&q->mu);
	while (q->head || q->busy)
		pthread_cond_wait(&q->room, &q->mu);
	int r = q->err;
	pthread_mutex_unlock(&q->mu);
	return r;
}

int tr_ioq_free(struct ioq *q)
{
	if (!q)
		return 0;
	int r = tr_ioq_sync(q);
	pthread_mutex_lock(&q->mu);
	q->stop = true;
	pthread_cond_signal(&q->work);
	pthread_mutex_unlock(&q->mu);
	pthread_join(q->th, NULL);
	while (q->spare) {
		struct item *it = q->spare;
		q->spare = it->next;
		free(it);
	}
	pthread_cond_destroy(&q->room);
	pthread_cond_destroy(&q->work);
	pthread_mutex_destroy(&q->mu);
	free(q);
	return r;
}
