/* SPDX-License-Identifier: MIT */
/*
 * lib/ctf/ioq.h - a bounded write queue with a thread of its own (the CTF
 * writer's asynchronous I/O, trawl_ctf_writer_opts.io_queue).
 *
 * tr_ioq_write() copies its bytes into the queue and returns; the queue's
 * thread writes them, in the order they came, whatever their files. When
 * the queue holds its whole budget, tr_ioq_write() waits until some is
 * written (back-pressure, as a blocking write would give). Several threads
 * may write to one queue: items are written in the order they were queued.
 */
#ifndef TRAWL_CTF_IOQ_H
#define TRAWL_CTF_IOQ_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

struct ioq;

/* A queue of `budget` bytes and its thread (signals blocked; the caller's
 * scheduling policy and priority, so that the writing keeps up with the
 * thread that feeds it); NULL and errno on failure. */
TRAWL_HIDDEN struct ioq *tr_ioq_new(size_t budget);

/*
 * Queues alen bytes at a for fd, then blen bytes at b for fd2 (blen may be
 * 0). Returns 0, or the first write error the thread met (-errno; nothing
 * is written after it), or -ENOMEM.
 */
TRAWL_HIDDEN int tr_ioq_write(struct ioq *q, int fd, const void *a, size_t alen, int fd2,
			   const void *b, size_t blen);

/* Waits until everything queued is written; 0 or the first write error. */
TRAWL_HIDDEN int tr_ioq_sync(struct ioq *q);

/* Writes what is queued, stops the thread, frees; 0 or the first write
 * error. Accepts NULL. */
TRAWL_HIDDEN int tr_ioq_free(struct ioq *q);

#endif
