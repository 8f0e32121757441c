/* SPDX-License-Identifier: MIT */
/*
 * lib/ust/proto.h - the agent protocol (docs/agent.md): what applications
 * linked with libtrawl, the session commands and `trawl agent` say to each
 * other over the agent's Unix socket.
 *
 * The socket is SOCK_SEQPACKET: one message per packet, boundaries kept,
 * file descriptors passed with SCM_RIGHTS. Every message starts with
 * struct am_hdr (type, total length); fixed fields follow, then
 * NUL-terminated strings where the message says so. Both ends run on the
 * same machine: host byte order, fixed-width fields. Every length is
 * checked before a field is read (struct am_rd).
 *
 * Application (A) and agent (G):
 *   A->G HELLO        first message: pid, name, flags (CHILD: a forked
 *                     child that already records into session `session`)
 *   G->A START        zero or more (a session records), then
 *   G->A READY        the application's constructor waits for it (bounded)
 *   A->G EVREG        an event was registered (for `trawl list`)
 *   G->A START/STOP   later, when a session starts or stops
 *   A->G ACK          reply to START and STOP (status: 0 or -errno)
 *   A->G EVDESC       an event enabled in a session: id and field types,
 *                     sent before the event is enabled (so before any packet
 *                     holds it)
 *   A->G BUF + memfd  a thread's ring buffer (sent before its first event)
 *   G->A LIVE         a live session's tick: the application's listener
 *                     marks the buffers of threads outside any event as
 *                     quiet up to now (tr_ust_live_tick), then the agent cuts
 *                     the rings (applications that do not know LIVE ignore
 *                     it: their idle threads get no beacon)
 * Client (C) and agent:
 *   C->G CMD          argv: the verb, then its arguments
 *   G->C OUT, ERR     text for the client's stdout, stderr (any number)
 *   G->C END          the exit status; the agent closes the connection
 */
#ifndef TRAWL_UST_PROTO_H
#define TRAWL_UST_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define AM_VERSION 1
#define AM_MSG_MAX 65536	/* bytes, largest message */

#define AM_TYPES(X)		\
	X(HELLO, 1)		\
	X(READY, 2)		\
	X(EVREG, 3)		\
	X(START, 4)		\
	X(STOP, 5)		\
	X(ACK, 6)		\
	X(EVDESC, 7)		\
	X(BUF, 8)		\
	X(CMD, 9)		\
	X(OUT, 10)		\
	X(ERR, 11)		\
	X(END, 12)		\
	X(LIVE, 13)		\
	X(WAKE, 14)

enum am_type {
#define AM_ENUM(n, v) AM_##n = v,
	AM_TYPES(AM_ENUM)
#undef AM_ENUM
};

struct am_hdr {
	uint32_t type;
	uint32_t len;		/* of the whole message, header included */
};

enum { AM_HELLO_CHILD = 1 };

struct am_hello {
	uint32_t version;
	int32_t pid, ppid;
	uint32_t flags;
	uint64_t session;	/* CHILD: the session it records into */
	char name[16];		/* the process name (comm) */
};

/* START: the session's settings; then nglobs x (i32 loglevel, glob\0) */
struct am_start {
	uint64_t session;
	uint8_t uuid[16];
	uint32_t mode, subbuf_size, nsubbuf, header, contexts, clock;
	uint32_t nglobs;
};

/* LIVE */
struct am_live {
	uint64_t session;
};

struct am_ack {
	uint64_t session;
	uint32_t what;		/* AM_START or AM_STOP */
	int32_t status;
};

/* BUF (with one fd) */
struct am_buf {
	uint64_t session;
	int32_t tid;
	uint32_t pad;
};

/* EVREG: then "provider:event\0" */
struct am_evreg {
	int32_t loglevel;
};

/* EVDESC: then "provider\0event\0", then nfields x
 * (name\0, u8 kind, size, sign, base, u32 length; ENUM: provider\0 name\0
 *  u32 n, n x (label\0 i64 lo i64 hi)) */
struct am_evdesc {
	uint64_t session;
	uint32_t id;
	int32_t loglevel;
	uint32_t nfields;
};

struct am_end {
	int32_t status;
};

/* A message being built (writes past cap set overflow). */
struct am_wr {
	uint8_t *p;
	size_t len, cap;
	bool overflow;
};

static inline void am_wr_init(struct am_wr *w, void *buf, size_t cap, uint32_t type)
{
	struct am_hdr h = { type, 0 };
	w->p = (uint8_t *)buf;
	w->cap = cap;
	w->len = 0;
	w->overflow = cap < sizeof(h);
	if (!w->overflow) {
		memcpy(w->p, &h, sizeof(h));
		w->len = sizeof(h);
	}
}

static inline void am_put(struct am_wr *w, const void *v, size_t n)
{
	if (!n)
		return;
	if (w->overflow || w->cap - w->len < n) {
		w->overflow = true;
		return;
	}
	memcpy(w->p + w->len, v, n);
	w->len += n;
}

static inline void am_put_str(struct am_wr *w, const char *s)
{
	am_put(w, s ? s : "", strlen(s ? s : "") + 1);
}

/* Sets the header's length; returns the message length, 0 on overflow. */
static inline size_t am_wr_done(struct am_wr *w)
{
	if (w->overflow)
		return 0;
	uint32_t l = (uint32_t)w->len;
	memcpy(w->p + 4, &l, 4);
	return w->len;
}

/* A message being read (a read past the end sets bad). */
struct am_rd {
	const uint8_t *p;
	size_t len, off;
	bool bad;
};

static inline void am_rd_init(struct am_rd *r, const void *msg, size_t len)
{
	r->p = (const uint8_t *)msg;
	r->len = len;
	r->off = sizeof(struct am_hdr);
	r->bad = len < sizeof(struct am_hdr);
}

static inline bool am_get(struct am_rd *r, void *v, size_t n)
{
	if (r->bad || r->len - r->off < n) {
		r->bad = true;
		memset(v, 0, n);
		return false;
	}
	memcpy(v, r->p + r->off, n);
	r->off += n;
	return true;
}

/* A NUL-terminated string in the message (pointer into it), or "" + bad. */
static inline const char *am_get_str(struct am_rd *r)
{
	if (r->bad)
		return "";
	const void *z = memchr(r->p + r->off, 0, r->len - r->off);
	if (!z) {
		r->bad = true;
		return "";
	}
	const char *s = (const char *)(r->p + r->off);
	r->off = (size_t)((const uint8_t *)z - r->p) + 1;
	return s;
}

#endif
