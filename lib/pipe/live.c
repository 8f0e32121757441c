/* SPDX-License-Identifier: MIT */
/*
 * lib/pipe/live.c - the live source: a session of a relay (`trawl relay`,
 * or lttng-relayd) read while it is recorded, through the LTTng live
 * viewer protocol (lib/net/live-client.c), as babeltrace2's lttng-live
 * source reads it.
 *
 * Everything runs in the reader's thread (a live reader has no decode
 * worker): the merge polls the source when a live stream holds it back
 * (merge.c, live_wait()). A poll asks each data stream that has nothing
 * queued for its next index: a packet (OK) is fetched and queued; a
 * beacon (INACTIVE) tells the time before which nothing more will come
 * (the stream's hold time); HUP ends the stream. New metadata is fetched
 * when an index says so, and a trace whose metadata grew is recompiled
 * in place (tr_reader_trace_update()); new streams are asked for when an
 * index says so and at every poll.
 *
 * A trace exists for the reader once its metadata has come; its data
 * streams wait until then. Each data stream decodes one packet buffer at
 * a time (its `more` hook maps the next queued one). A packet's bytes stay
 * until the fill after the one that moved past it: by then the batch
 * holding its events was given back (one batch per stream at a time
 * without a worker) and the reader's caller has read them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctf/ctf-internal.h"
#include "net/live-client.h"
#include "pipe/pipe-internal.h"
#include "util/clock.h"

#define LIVE_TIMEOUT_MS 10000		/* each request (the relay holds some 1 s) */

struct lpkt {
	uint8_t *buf;
	uint32_t len;
	uint64_t done_fill;		/* decoded up to the fill of this number */
	struct lpkt *next;
};

struct ltrace;

/* An attached session (a relay lists one per host): a viewer connection
 * of its own (a viewer may be attached to one session only, at our relay). */
struct lsess {
	struct live_client *c;
	uint64_t id;
	bool hup;			/* GET_NEW_STREAMS said the session ended */
};

/* A data stream of the session. */
struct lstream {
	uint64_t id;
	struct lsess *ss;
	struct ltrace *tr;
	char name[LIVE_PATH_MAX + LIVE_NAME_MAX + 2];
	struct trawl_reader_stream *rs;	/* once its trace has metadata */
	struct lpkt *head, *tail;	/* queued, not mapped yet */
	uint32_t npend;			/* of them */
	struct lpkt *cur;		/* mapped */
	struct lpkt *retired;		/* decoded, to free */
	bool hup;			/* no more packets */
	int64_t beacon;			/* ns; INT64_MIN: none yet */
	uint64_t end_cycles;		/* the end of the last packet queued: */
	bool has_end;			/* no packet begins before it */
};

/* A trace of the session: its metadata stream and what came of it. */
struct ltrace {
	struct lsess *ss;
	uint64_t ctf_trace_id;
	uint64_t meta_stream;
	bool has_meta_stream;
	char path[LIVE_PATH_MAX + 1];
	char *text;			/* the metadata so far */
	size_t len, parsed_len;
	struct trawl_reader_trace *t;	/* once parsed; the source's */
	bool skipped;			/* its host is not wanted */
	bool meta_closed;		/* the relay closed its metadata stream */
};

struct live_priv {
	struct live_url url;
	char url_text[64];		/* for messages */
	struct lsess **sessions;	/* attached */
	size_t nsessions;
	struct ltrace **traces;
	size_t ntraces;
	struct lstream **streams;
	size_t nstreams;
	bool new_streams_hup;		/* every session said HUP */
	bool from_now;			/* attach from now (live_from_now) */
	bool lazy;			/* live_lazy */
	int64_t next_list;		/* /session/S: when to list the relay's
					 * sessions again (hosts that join later) */
	char err[256];
	int errcode;
};

static void pkt_free_list(struct lpkt *p)
{
	while (p) {
		struct lpkt *n = p->next;
		free(p->buf);
		free(p);
		p = n;
	}
}

/* ------------------------------------------------------- stream bytes */

/* The stream's `more` hook (ctf/stream.h): maps its next packet. */
static int live_more(struct ctf_stream *cs)
{
	struct lstream *ls = cs->more_arg;
	struct lpkt **pp = &ls->retired;

	/* free what earlier fills decoded whose batches are all given back:
	 * those of the fills before the oldest batch still queued (the
	 * reader decodes ahead for a live clock; no worker: the consumer
	 * fills, and reads its own queue) */
	uint64_t oldest = cs->fills - (ls->rs ? ls->rs->qhead - ls->rs->qtail : 0);
	while (*pp) {
		struct lpkt *p = *pp;
		if (p->done_fill < oldest) {
			*pp = p->next;
			free(p->buf);
			free(p);
		} else {
			pp = &p->next;
		}
	}
	if (ls->cur) {
		ls->cur->done_fill = cs->fills;
		ls->cur->next = ls->retired;
		ls->retired = ls->cur;
		ls->cur = NULL;
	}
	if (ls->head) {
		struct lpkt *p = ls->head;
		ls->head = p->next;
		if (!ls->head)
			ls->tail = NULL;
		ls->npend--;
		if (ls->rs)
			ls->rs->lpend = ls->npend;
		p->next = NULL;
		ls->cur = p;
		cs->map = p->buf;
		cs->size = p->len;
		cs->next_off = 0;
		cs->st.bytes += p->len;
		return 1;
	}
	cs->map = NULL;
	cs->size = 0;
	cs->next_off = 0;
	if (ls->hup)
		return 0;
	/* nothing before the last packet's end or the beacon is to come (a
	 * relay gives no beacon at a packet's end: lttng-relayd never, trawl
	 * relay since two streams' beacons at one time made babeltrace2 warn) */
	cs->hold_ns = ls->beacon;
	if (ls->has_end) {
		int64_t e = tr_ctf_stream_cycles_ns(cs, ls->end_cycles);
		if (e > cs->hold_ns)
			cs->hold_ns = e;
	}
	return -EAGAIN;
}

/* ------------------------------------------------------------- traces */

static struct ltrace *trace_of(struct live_priv *lp, struct lsess *ss, uint64_t ctf_trace_id,
			       const char *path)
{
	for (size_t i = 0; i < lp->ntraces; i++)
		if (lp->traces[i]->ss == ss && lp->traces[i]->ctf_trace_id == ctf_trace_id)
			return lp->traces[i];
	struct ltrace **nt = realloc(lp->traces, (lp->ntraces + 1) * sizeof(*nt));
	if (!nt)
		return NULL;
	lp->traces = nt;
	struct ltrace *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->ss = ss;
	t->ctf_trace_id = ctf_trace_id;
	snprintf(t->path, sizeof(t->path), "%s", path);
	lp->traces[lp->ntraces++] = t;
	return t;
}

/* A reader stream for ls (its trace has a model). 0 or -ENOMEM. */
static int stream_make(struct trawl_source *src, struct lstream *ls)
{
	struct trawl_reader_trace *t = ls->tr->t;
	struct trawl_reader_stream *s = tr_reader_stream_new(t, ls->name);

	if (!s)
		return -ENOMEM;
	s->cs.borrowed = true;
	s->cs.more = live_more;
	s->cs.more_arg = ls;
	s->cs.hold_ns = ls->beacon;
	s->lpend = ls->npend;
	if (tr_source_add_stream(src, t, s)) {
		tr_reader_stream_free(s);
		return -ENOMEM;
	}
	ls->rs = s;
	return 0;
}

/*
 * Reads the trace's new metadata chunks; when it grew, parses it: the
 * first time a new trace of the source (with its waiting streams), after
 * that a longer model of the same trace. 1 when something changed, 0,
 * -errno (message in lp->err).
 */
static int metadata(struct trawl_source *src, struct ltrace *lt)
{
	struct live_priv *lp = src->priv;
	char msg[512];
	int got = 0;

	if (!lt->has_meta_stream || lt->skipped || lt->meta_closed)
		return 0;
	for (;;) {
		uint8_t *b = NULL;
		size_t n = 0;
		int rc = tr_live_client_metadata(lt->ss->c, lt->meta_stream, &b, &n);
		if (rc == -ENOENT) {
			/* ERR: the metadata stream is closed (the session is
			 * over): nothing more to ask (as babeltrace2 reads it) */
			lt->meta_closed = true;
			break;
		}
		if (rc < 0) {
			snprintf(lp->err, sizeof(lp->err), "%.120s: metadata: %.120s", lt->path,
				 tr_live_client_errmsg(lt->ss->c));
			return rc;
		}
		if (rc == 0)
			break;
		char *nt = realloc(lt->text, lt->len + n + 1);
		if (!nt) {
			free(b);
			return -ENOMEM;
		}
		lt->text = nt;
		memcpy(lt->text + lt->len, b, n);
		lt->len += n;
		lt->text[lt->len] = 0;
		free(b);
	}
	if (lt->len == lt->parsed_len || !lt->len)
		return 0;
	/* text (trawl relay), or packets of it (lttng-relayd's metadata stream) */
	const char *text = lt->text;
	size_t tlen = lt->len;
	char *unpacked = NULL;
	uint32_t magic;
	memcpy(&magic, lt->text, lt->len >= 4 ? 4 : 0);
	if (lt->len >= 4 && (magic == 0x75D11D57u || magic == 0x571DD175u)) {
		unpacked = tr_ctf_metadata_unpack((const uint8_t *)lt->text, lt->len, lt->path, &tlen, msg,
					       sizeof(msg));
		if (!unpacked)
			return errno == ENOMEM ? -ENOMEM : 0;	/* a packet cut short: wait */
		text = unpacked;
	}
	struct trawl_ctf_trace *meta = trawl_ctf_metadata_parse(text, tlen, msg, sizeof(msg));
	free(unpacked);
	if (!meta) {
		/* a chunk may end mid-statement: wait for the rest */
		if (errno == EINVAL)
			return 0;
		return -ENOMEM;
	}
	lt->parsed_len = lt->len;
	if (lt->t) {
		int rc = tr_reader_trace_update(src->r, lt->t, meta, (const char *const *)src->events,
					     src->nevents, msg, sizeof(msg));
		if (rc) {
			snprintf(lp->err, sizeof(lp->err), "%.120s: %.120s", lt->path, msg);
			return rc;
		}
		return 1;
	}
	/* the trace's first model: a trace of the source from now on */
	struct trawl_reader_trace *t = calloc(1, sizeof(*t));
	if (!t) {
		trawl_ctf_trace_free(meta);
		return -ENOMEM;
	}
	t->dec.meta = meta;
	const struct trawl_ctf_env *h = trawl_ctf_trace_env(meta, "hostname");
	t->hostname = h && !h->is_int && h->sval ? h->sval : "";
	if (!tr_source_wants_host(src, t->hostname)) {
		lt->skipped = true;
		tr_reader_trace_free(t);
		return 0;
	}
	tr_source_trace_fix(src, t);
	int rc = tr_ctf_tdec_init(&t->dec, meta, (const char *const *)src->events, src->nevents, msg,
			       sizeof(msg));
	if (rc || !(t->path = strdup(lt->path)) || tr_source_add_trace(src, t)) {
		snprintf(lp->err, sizeof(lp->err), "%.120s: %.120s", lt->path, rc ? msg : "out of memory");
		tr_reader_trace_free(t);
		return rc ? rc : -ENOMEM;
	}
	lt->t = t;
	got = 1;
	for (size_t i = 0; i < lp->nstreams; i++)
		if (lp->streams[i]->tr == lt && !lp->streams[i]->rs && (rc = stream_make(src, lp->streams[i])))
			return rc;
	return got;
}

/* Takes the announced streams of session ss in. 1 when there were any,
 * or -errno. */
static int add_streams(struct trawl_source *src, struct lsess *ss,
		       const struct live_stream_info *si, size_t n)
{
	struct live_priv *lp = src->priv;

	for (size_t i = 0; i < n; i++) {
		struct ltrace *lt = trace_of(lp, ss, si[i].ctf_trace_id, si[i].path);
		if (!lt)
			return -ENOMEM;
		if (si[i].metadata) {
			lt->meta_stream = si[i].id;
			lt->has_meta_stream = true;
			continue;
		}
		struct lstream **ns = realloc(lp->streams, (lp->nstreams + 1) * sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		lp->streams = ns;
		struct lstream *ls = calloc(1, sizeof(*ls));
		if (!ls)
			return -ENOMEM;
		ls->id = si[i].id;
		ls->ss = ss;
		ls->tr = lt;
		ls->beacon = INT64_MIN;
		snprintf(ls->name, sizeof(ls->name), "%s/%s", si[i].path, si[i].channel);
		lp->streams[lp->nstreams++] = ls;
		int rc;
		if (lt->t && (rc = stream_make(src, ls)))
			return rc;
	}
	return n ? 1 : 0;
}

static int new_streams(struct trawl_source *src)
{
	struct live_priv *lp = src->priv;
	int got = 0;
	size_t nhup = 0;

	for (size_t i = 0; i < lp->nsessions; i++) {
		struct lsess *ss = lp->sessions[i];
		struct live_stream_info *si = NULL;
		size_t n = 0;
		bool hup = false;
		if (ss->hup) {
			nhup++;
			continue;
		}
		int rc = tr_live_client_new_streams(ss->c, ss->id, &si, &n, &hup);
		if (rc < 0) {
			snprintf(lp->err, sizeof(lp->err), "new streams: %.200s",
				 tr_live_client_errmsg(ss->c));
			return rc;
		}
		rc = add_streams(src, ss, si, n);
		free(si);
		if (rc < 0)
			return rc;
		got |= rc;
		ss->hup = hup;
		nhup += hup;
	}
	lp->new_streams_hup = nhup == lp->nsessions;
	return got;
}

/* Asks stream ls for its next index: 1 with a packet queued, a beacon
 * advanced or the end; 0 for nothing; -errno. *flags: the index's. */
static int next(struct trawl_source *src, struct lstream *ls, uint32_t *flags)
{
	struct live_priv *lp = src->priv;
	struct live_index ix;
	struct live_client *c = ls->ss->c;
	int rc = tr_live_client_next_index(c, ls->id, &ix);

	*flags = 0;
	if (rc < 0) {
		snprintf(lp->err, sizeof(lp->err), "%.120s: %.120s", ls->name, tr_live_client_errmsg(c));
		return rc;
	}
	*flags = ix.flags;
	switch (ix.status) {
	case LIVE_INDEX_OK: {
		if (!ix.packet_size)
			return 0;	/* no packet: only its flags (new streams, metadata) */
		uint32_t len = (uint32_t)(ix.packet_size / 8), st = 0, fl = 0;
		struct lpkt *p = calloc(1, sizeof(*p));
		uint8_t *buf = malloc(len ? len : 1);
		if (!p || !buf) {
			free(p);
			free(buf);
			return -ENOMEM;
		}
		rc = tr_live_client_packet(c, ls->id, ix.offset, len, buf, &st, &fl);
		*flags |= fl;
		if (rc < 0 || st != LIVE_PACKET_OK) {
			free(p);
			free(buf);
			if (rc < 0) {
				snprintf(lp->err, sizeof(lp->err), "%.120s: %.120s", ls->name,
					 tr_live_client_errmsg(c));
				return rc;
			}
			return 0;	/* asked again at the next poll */
		}
		p->buf = buf;
		p->len = len;
		ls->end_cycles = ix.timestamp_end;
		ls->has_end = true;
		if (ls->tail)
			ls->tail->next = p;
		else
			ls->head = p;
		ls->tail = p;
		ls->npend++;
		if (ls->rs)
			ls->rs->lpend = ls->npend;
		return 1;
	}
	case LIVE_INDEX_INACTIVE: {
		int64_t b = ls->rs ? tr_ctf_stream_cycles_ns(&ls->rs->cs, ix.timestamp_end) : INT64_MIN;
		if (b > ls->beacon) {
			ls->beacon = b;
			return 1;
		}
		return 0;
	}
	case LIVE_INDEX_HUP:
	case LIVE_INDEX_EOF:
	case LIVE_INDEX_ERR:
		ls->hup = true;
		return 1;
	default:		/* RETRY */
		return 0;
	}
}

/*
 * Attaches the sessions of ss[0..n) the URL names and not attached yet:
 * a viewer connection each (*c, when not NULL, is taken for the first:
 * the one that listed). Returns how many, or -errno (message in err).
 */
static int attach_new(struct trawl_source *src, const struct live_session_info *ss, size_t n,
		      struct live_client **c, char *err, size_t errlen)
{
	struct live_priv *lp = src->priv;
	int added = 0, rc;
	for (size_t i = 0; i < n; i++) {
		bool seen = false;
		for (size_t k = 0; k < lp->nsessions && !seen; k++)
			seen = lp->sessions[k]->id == ss[i].id;
		if (seen || !tr_live_url_matches(&lp->url, &ss[i]))
			continue;
		struct lsess *se = calloc(1, sizeof(*se));
		struct lsess **nse = realloc(lp->sessions, (lp->nsessions + 1) * sizeof(*nse));
		if (nse)
			lp->sessions = nse;
		if (!se || !nse) {
			free(se);
			return tr_seterr(err, errlen, ENOMEM, "out of memory");
		}
		se->id = ss[i].id;
		if (c && *c) {
			se->c = *c;
			*c = NULL;
		} else if (!(se->c = tr_live_client_connect(lp->url.relay, lp->url.port, LIVE_TIMEOUT_MS,
							  err, errlen))) {
			free(se);
			return -(errno ? errno : EIO);
		}
		struct live_stream_info *si = NULL;
		size_t ns = 0;
		uint32_t seek = lp->from_now ? LIVE_SEEK_TRAWL_NOW : LIVE_SEEK_BEGINNING;
		bool trawls = lp->from_now || lp->lazy;	/* a seek of trawl's own */
		rc = tr_live_client_attach_seek(se->c, se->id,
						seek | (lp->lazy ? LIVE_SEEK_TRAWL_LAZY : 0), &si, &ns);
		if (rc == -EINVAL && trawls) {
			/* lttng-relayd: no such seek, and the refusal leaves the
			 * session attached to this connection (a second ATTACH
			 * there is ALREADY): a connection of its own, and its
			 * plain seeks ("latest" for --from-now) */
			tr_live_client_free(se->c);
			if (!(se->c = tr_live_client_connect(lp->url.relay, lp->url.port,
							     LIVE_TIMEOUT_MS, err, errlen))) {
				free(se);
				return -(errno ? errno : EIO);
			}
			rc = tr_live_client_attach_seek(se->c, se->id,
							lp->from_now ? LIVE_SEEK_LAST : LIVE_SEEK_BEGINNING,
							&si, &ns);
		}
		if (rc < 0) {
			tr_seterr(err, errlen, -rc, "%s: attach: %s", lp->url_text,
				  tr_live_client_errmsg(se->c));
			free(si);
			tr_live_client_free(se->c);
			free(se);
			return rc;
		}
		/* attached: the source's from now on (its streams, its HUP) */
		lp->sessions[lp->nsessions++] = se;
		rc = add_streams(src, se, si, ns);
		free(si);
		if (rc < 0)
			return tr_seterr(err, errlen, -rc, "out of memory");
		added++;
	}
	return added;
}

/* net://RELAY/session/S names every host's session S: the hosts that
 * begin it later are attached as they come, the relay's list asked
 * again (on the first session's connection) at most this often. */
#define RELIST_MS 250

static int relist(struct trawl_source *src)
{
	struct live_priv *lp = src->priv;
	int64_t now = (int64_t)tr_mono_ns();
	if (lp->url.kind != LIVE_URL_SESSION || !lp->nsessions || now < lp->next_list)
		return 0;
	lp->next_list = now + RELIST_MS * 1000000ll;
	struct live_session_info *ss = NULL;
	size_t nss = 0;
	/* on the first session's connection, while it holds: a list that
	 * fails costs the hosts that join later, not the hosts being read */
	struct live_client *lc = NULL;
	for (size_t i = 0; i < lp->nsessions && !lc; i++)
		if (!lp->sessions[i]->hup)
			lc = lp->sessions[i]->c;
	if (!lc || tr_live_client_list(lc, &ss, &nss) < 0) {
		free(ss);
		return 0;
	}
	size_t before = lp->ntraces;
	char why[256];
	/* a host the relay will not let us attach (another viewer has it)
	 * is asked again at the next list; the others are read on */
	int rc = attach_new(src, ss, nss, NULL, why, sizeof(why));
	free(ss);
	if (rc < 0)
		rc = lp->ntraces > before;
	if (rc > 0) {
		lp->new_streams_hup = false;	/* a session that goes on */
		for (size_t i = before; i < lp->ntraces; i++) {
			int m = metadata(src, lp->traces[i]);
			if (m < 0)
				return m;
		}
	}
	return rc > 0 ? 1 : rc;
}

static int poll_once(struct trawl_source *src, int64_t deadline);

/* The source's poll: poll_once(), its message copied where the reader
 * finds it (trawl_reader_error()) when it fails. */
static int live_poll(struct trawl_source *src, int64_t deadline)
{
	struct live_priv *lp = src->priv;
	int rc = poll_once(src, deadline);

	if (rc < 0)
		snprintf(src->err, sizeof(src->err), "%.63s: %.250s", lp->url_text,
			 lp->err[0] ? lp->err : strerror(-rc));
	return rc;
}

/*
 * A poll: each data stream with nothing queued is asked for its next
 * index (a trawl relay holds the request until it has news, up to a
 * second); new streams and metadata only when an index says so (both
 * relays set the flags, babeltrace2 reads nothing else), or while the
 * poll has nothing else to ask: no stream yet, or none with its trace's
 * model, or every one ended (then GET_NEW_STREAMS tells the session's
 * end). A trace without a model yet has its metadata asked at every
 * loop. (Before, every loop asked both for every trace: at idle, three
 * requests where one does.)
 */
static int poll_once(struct trawl_source *src, int64_t deadline)
{
	struct live_priv *lp = src->priv;
	int got = 0, rc;

	for (;;) {
		bool want_meta = false;
		size_t open = 0, asked = 0;
		bool streams_due = false;	/* ask GET_NEW_STREAMS after the indexes */

		if ((rc = relist(src)) < 0)
			return rc;
		got |= rc;

		for (size_t i = 0; i < lp->ntraces; i++) {
			if (lp->traces[i]->t)
				continue;	/* a model: asked when an index says so */
			if ((rc = metadata(src, lp->traces[i])) < 0)
				return rc;
			got |= rc;
		}
		for (size_t i = 0; i < lp->nstreams; i++) {
			struct lstream *ls = lp->streams[i];
			uint32_t flags;
			if (ls->hup)
				continue;
			open++;
			if (ls->head || !ls->tr->t)
				continue;	/* something queued, or no model yet */
			asked++;
			if ((rc = next(src, ls, &flags)) < 0)
				return rc;
			got |= rc;
			want_meta |= flags & LIVE_FLAG_NEW_METADATA;
			if (flags & LIVE_FLAG_NEW_STREAM)
				streams_due = true;
		}
		if (want_meta)
			for (size_t i = 0; i < lp->ntraces; i++) {
				if ((rc = metadata(src, lp->traces[i])) < 0)
					return rc;
				got |= rc;
			}
		if (!asked)
			streams_due = true;	/* nothing else to wait on */
		if (streams_due) {
			if ((rc = new_streams(src)) < 0)
				return rc;
			got |= rc;
			/* a trace new with them: its model now, so that its
			 * streams are the merge's before it takes what came
			 * with them (a relay announces a stream before it gives
			 * other streams' events past its first: taken without
			 * it, those would come first, out of time order) */
			for (size_t i = 0; rc > 0 && i < lp->ntraces; i++) {
				if (lp->traces[i]->t)
					continue;
				int m = metadata(src, lp->traces[i]);
				if (m < 0)
					return m;
			}
		}
		if (!open && lp->new_streams_hup) {
			src->ended = true;
			return 1;
		}
		if (got || !deadline || (int64_t)tr_mono_ns() >= deadline)
			return got;
		struct timespec ts = { 0, 5000000 };	/* the relay said RETRY: soon again */
		nanosleep(&ts, NULL);
	}
}

static void live_release(struct trawl_source *src)
{
	struct live_priv *lp = src->priv;

	if (!lp)
		return;
	for (size_t i = 0; i < lp->nsessions; i++) {
		tr_live_client_free(lp->sessions[i]->c);
		free(lp->sessions[i]);
	}
	for (size_t i = 0; i < lp->nstreams; i++) {
		struct lstream *ls = lp->streams[i];
		pkt_free_list(ls->head);
		pkt_free_list(ls->retired);
		if (ls->cur)
			pkt_free_list(ls->cur);
		free(ls);
	}
	free(lp->streams);
	for (size_t i = 0; i < lp->ntraces; i++) {
		free(lp->traces[i]->text);
		free(lp->traces[i]);
	}
	free(lp->traces);
	free(lp->sessions);
	free(lp);
	src->priv = NULL;
}

static const struct source_ops live_ops = {
	.kind = "live",
	.poll = live_poll,
	.release = live_release,
};

struct trawl_source *trawl_source_live(const char *url, const struct trawl_source_opts *o,
				       char *err, size_t errlen)
{
	struct trawl_source *src = tr_source_alloc(&live_ops, o);
	struct live_priv *lp = calloc(1, sizeof(*lp));
	struct live_session_info *ss = NULL;
	struct live_client *c = NULL;
	size_t nss = 0;
	int rc;

	if (!src || !lp) {
		free(lp);
		trawl_source_free(src);
		tr_seterr(err, errlen, ENOMEM, "out of memory");
		return NULL;
	}
	src->priv = lp;
	if ((rc = tr_live_url_parse(url, &lp->url, err, errlen)))
		goto fail;
	snprintf(lp->url_text, sizeof(lp->url_text), "%.63s", url);
	if (lp->url.kind == LIVE_URL_RELAY) {
		rc = tr_seterr(err, errlen, EINVAL,
			    "%s: name a session: net://RELAY/host/HOST/SESSION or net://RELAY/session/SESSION",
			    url);
		goto fail;
	}
	c = tr_live_client_connect(lp->url.relay, lp->url.port, LIVE_TIMEOUT_MS, err, errlen);
	if (!c) {
		rc = -(errno ? errno : EIO);
		goto fail;
	}
	if ((rc = tr_live_client_list(c, &ss, &nss)) < 0) {
		tr_seterr(err, errlen, -rc, "%s: %s", url, tr_live_client_errmsg(c));
		goto fail;
	}
	lp->from_now = o && o->sz >= offsetof(struct trawl_source_opts, live_from_now) +
					 sizeof(o->live_from_now) && o->live_from_now;
	lp->lazy = o && o->sz >= offsetof(struct trawl_source_opts, live_lazy) +
				     sizeof(o->live_lazy) && o->live_lazy;
	if ((rc = attach_new(src, ss, nss, &c, err, errlen)) < 0)
		goto fail;
	if (!lp->nsessions) {
		rc = tr_seterr(err, errlen, ENOENT, "%s: no such live session at %s:%u (%zu listed)", url,
			    lp->url.relay, lp->url.port, nss);
		goto fail;
	}
	free(ss);
	ss = NULL;
	/* the metadata there is now, so that the reader starts with traces */
	for (size_t i = 0; i < lp->ntraces; i++)
		if ((rc = metadata(src, lp->traces[i])) < 0) {
			tr_seterr(err, errlen, -rc, "%s", lp->err);
			goto fail;
		}
	return src;
fail:
	free(ss);
	tr_live_client_free(c);
	trawl_source_free(src);
	errno = -rc;
	return NULL;
}
