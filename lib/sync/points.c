/* SPDX-License-Identifier: MIT */
/*
 * lib/sync/points.c - sync points: the messages nodes exchanged, found in
 * their traces (probes, TCP segments, user-named send/receive events),
 * matched by key and grouped per pair of nodes and direction.
 *
 * One pass of the reader over the sync events only (event-name globs), in
 * time order. Every key goes into one hash table with its first send and
 * first receive and how often each side was seen; at the end a key seen
 * exactly once on each side, on two different nodes, is a message. Keys
 * are byte strings: a kind tag, then the kind's fields (the probe's sender
 * name is part of its key, so keys only need to be unique per sender).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "trawl/ctf.h"
#include "trawl/pipe.h"
#include "trawl/sync.h"
#include "trawl/sync-schema.h"

/* ------------------------------------------------------------ matches */

static char *dup_trim(const char *s, size_t n)
{
	while (n && (*s == ' ' || *s == '\t')) {
		s++;
		n--;
	}
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	char *r = malloc(n + 1);
	if (r) {
		memcpy(r, s, n);
		r[n] = 0;
	}
	return r;
}

/* "EVENT.FIELD" -> event, field (split at the last '.'). */
static int split_side(const char *s, size_t n, char **ev, char **field)
{
	char *t = dup_trim(s, n), *dot;
	if (!t)
		return -ENOMEM;
	dot = strrchr(t, '.');
	if (!dot || dot == t || !dot[1] || strpbrk(t, " \t")) {
		free(t);
		return -EINVAL;
	}
	*dot = 0;
	*ev = t;
	*field = strdup(dot + 1);
	if (!*field) {
		free(t);
		*ev = NULL;
		return -ENOMEM;
	}
	return 0;
}

int trawl_sync_match_parse(const char *spec, struct trawl_sync_match *m, char *err, size_t errlen)
{
	const char *eq;
	int rc;

	memset(m, 0, sizeof(*m));
	if (!spec || !(eq = strchr(spec, '=')) || strchr(eq + 1, '='))
		return seterr(err, errlen, EINVAL,
			      "bad match '%s': want SEND_EVENT.FIELD = RECV_EVENT.FIELD",
			      spec ? spec : "");
	rc = split_side(spec, (size_t)(eq - spec), &m->send_event, &m->send_field);
	if (!rc)
		rc = split_side(eq + 1, strlen(eq + 1), &m->recv_event, &m->recv_field);
	if (rc) {
		trawl_sync_match_release(m);
		if (rc == -ENOMEM)
			return seterr(err, errlen, ENOMEM, "out of memory");
		return seterr(err, errlen, EINVAL,
			      "bad match '%s': want SEND_EVENT.FIELD = RECV_EVENT.FIELD", spec);
	}
	return 0;
}

void trawl_sync_match_release(struct trawl_sync_match *m)
{
	if (!m)
		return;
	free(m->send_event);
	free(m->send_field);
	free(m->recv_event);
	free(m->recv_field);
	memset(m, 0, sizeof(*m));
}

/* ------------------------------------------------------------ key table */

struct entry {
	uint64_t hash;
	size_t koff;			/* key bytes in the key buffer */
	uint32_t klen;
	uint16_t nsend, nrecv;
	int32_t send_host, recv_host;	/* first of each side; -1 none */
	int32_t peer;			/* probes: the host the send names, or -1 */
	uint8_t kind;
	int64_t send_ts, recv_ts;
	uint64_t seq;			/* when both sides were first complete */
};

struct table {
	struct entry *e;		/* open addressing; klen == 0: empty */
	size_t cap, n;
	uint8_t *keys;
	size_t klen, kcap;
};

static uint64_t hash_bytes(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 32);
}

static int table_grow(struct table *t)
{
	size_t ncap = t->cap ? t->cap * 2 : 4096;
	struct entry *ne = calloc(ncap, sizeof(*ne));
	if (!ne)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		if (!t->e[i].klen)
			continue;
		size_t j = t->e[i].hash & (ncap - 1);
		while (ne[j].klen)
			j = (j + 1) & (ncap - 1);
		ne[j] = t->e[i];
	}
	free(t->e);
	t->e = ne;
	t->cap = ncap;
	return 0;
}

/* The entry of key (created if new); NULL on ENOMEM. */
static struct entry *table_get(struct table *t, const uint8_t *key, size_t klen)
{
	uint64_t h = hash_bytes(key, klen);
	size_t j;

	if ((t->n + 1) * 4 > t->cap * 3 && table_grow(t))
		return NULL;
	for (j = h & (t->cap - 1); t->e[j].klen; j = (j + 1) & (t->cap - 1)) {
		struct entry *e = &t->e[j];
		if (e->hash == h && e->klen == klen && !memcmp(t->keys + e->koff, key, klen))
			return e;
	}
	if (t->klen + klen > t->kcap) {
		size_t ncap = (t->kcap + klen) * 2 + 65536;
		uint8_t *nk = realloc(t->keys, ncap);
		if (!nk)
			return NULL;
		t->keys = nk;
		t->kcap = ncap;
	}
	memcpy(t->keys + t->klen, key, klen);
	struct entry *e = &t->e[j];
	memset(e, 0, sizeof(*e));
	e->hash = h;
	e->koff = t->klen;
	e->klen = (uint32_t)klen;
	e->send_host = e->recv_host = e->peer = -1;
	t->klen += klen;
	t->n++;
	return e;
}

/* ------------------------------------------------------- event classes */

enum role { R_NONE, R_PROBE_SEND, R_PROBE_RECV, R_TCP_SEND, R_TCP_RECV, R_MATCH_SEND, R_MATCH_RECV };
enum kind { K_PROBE, K_TCP, K_MATCH };

#define TCP_FIELD_NAME(name, bits, base) #name,
static const char *const tcp_fields[] = { TRAWL_SYNC_TCP_FIELDS(TCP_FIELD_NAME) };
#define NTCP ((int)ARRAY_SIZE(tcp_fields))

/* One role of an event class (a class may serve several user matches). */
struct crole {
	enum role role;
	size_t match;			/* R_MATCH_*: index of the match */
	struct crole *next;
};

struct cinfo {
	bool done;
	struct crole *roles;
	const struct trawl_ctf_type *ctx[2], *payload;	/* stream event ctx, event ctx */
};

/* Field name without the one leading '_' readers strip. */
static const char *shown(const char *n)
{
	return n && n[0] == '_' ? n + 1 : n ? n : "";
}

static bool is_text(const struct trawl_ctf_type *e)
{
	return e && e->kind == TRAWL_CTF_INT && e->u.i.size == 8 &&
	       e->u.i.encoding != TRAWL_CTF_ENC_NONE && (e->align ? e->align : 1) % 8 == 0;
}

/* Skips a value of type t on the tape at *pos. -1 when the tape is short. */
static int skip(const struct trawl_ctf_type *t, const union trawl_ctf_value *v, uint32_t nv,
		uint32_t *pos, int depth)
{
	if (depth > 64 || *pos > nv)
		return -1;
	switch (t->kind) {
	case TRAWL_CTF_STRUCT:
		for (size_t i = 0; i < t->u.s.n; i++)
			if (skip(t->u.s.fields[i].type, v, nv, pos, depth + 1))
				return -1;
		return 0;
	case TRAWL_CTF_ARRAY:
	case TRAWL_CTF_SEQUENCE: {
		const struct trawl_ctf_type *e = trawl_ctf_type_elem(t);
		if (is_text(e)) {
			(*pos)++;
			return 0;
		}
		if (*pos >= nv)
			return -1;
		uint64_t n = v[(*pos)++].n;
		if (n > nv)
			return -1;
		for (uint64_t i = 0; i < n; i++)
			if (skip(e, v, nv, pos, depth + 1))
				return -1;
		return 0;
	}
	case TRAWL_CTF_VARIANT: {
		if (*pos >= nv)
			return -1;
		uint64_t k = v[(*pos)++].n;
		if (k >= t->u.v.n)
			return -1;
		return skip(t->u.v.options[k].type, v, nv, pos, depth + 1);
	}
	default:
		(*pos)++;
		return 0;
	}
}

/*
 * The tape entry of top-level payload field `name` of an event, and its
 * type; -1 when absent or not a plain value.
 */
static int find_field(const struct cinfo *ci, const struct trawl_event *ev, const char *name,
		      const struct trawl_ctf_type **type)
{
	uint32_t pos = 0;

	for (int i = 0; i < 2; i++)
		if (ci->ctx[i] && skip(ci->ctx[i], ev->values, ev->nvalues, &pos, 0))
			return -1;
	if (!ci->payload || ci->payload->kind != TRAWL_CTF_STRUCT)
		return -1;
	for (size_t i = 0; i < ci->payload->u.s.n; i++) {
		const struct trawl_ctf_field *f = &ci->payload->u.s.fields[i];
		if (!strcmp(shown(f->name), name)) {
			if (pos >= ev->nvalues)
				return -1;
			*type = f->type;
			return (int)pos;
		}
		if (skip(f->type, ev->values, ev->nvalues, &pos, 0))
			return -1;
	}
	return -1;
}

/* A field's value as key bytes: 'i' + 8 bytes, or 's' + the string. */
static int value_bytes(const struct cinfo *ci, const struct trawl_event *ev, const char *name,
		       uint8_t *out, size_t cap, size_t *len)
{
	const struct trawl_ctf_type *t = NULL;
	int pos = find_field(ci, ev, name, &t);
	const union trawl_ctf_value *v;

	if (pos < 0)
		return -1;
	v = &ev->values[pos];
	switch (t->kind) {
	case TRAWL_CTF_INT:
	case TRAWL_CTF_ENUM:
		if (cap < 9)
			return -1;
		out[0] = 'i';
		memcpy(out + 1, &v->u, 8);
		*len = 9;
		return 0;
	case TRAWL_CTF_STRING:
	case TRAWL_CTF_ARRAY:
	case TRAWL_CTF_SEQUENCE: {
		if (t->kind != TRAWL_CTF_STRING && !is_text(trawl_ctf_type_elem(t)))
			return -1;
		size_t n = v->s.p ? strnlen(v->s.p, v->s.len) : 0;
		if (n + 1 > cap)
			return -1;
		out[0] = 's';
		if (n)
			memcpy(out + 1, v->s.p, n);
		*len = n + 1;
		return 0;
	}
	default:
		return -1;
	}
}

static int field_u64(const struct cinfo *ci, const struct trawl_event *ev, const char *name,
		     uint64_t *u)
{
	uint8_t b[16];
	size_t n;

	if (value_bytes(ci, ev, name, b, sizeof(b), &n) || b[0] != 'i')
		return -1;
	memcpy(u, b + 1, 8);
	return 0;
}

/* ----------------------------------------------------------- the pass */

struct ctx {
	struct table t;
	struct cinfo *ci;
	size_t ncls;
	const struct trawl_sync_match *m;
	size_t nm;
	struct trawl_sync_points *p;
	const struct trawl_reader *r;
	int32_t *trace_host;		/* reader trace index -> host */
	uint64_t seq;
	bool probes, tcp;		/* look for those events */
};

static int add_role(struct cinfo *ci, enum role r, size_t match)
{
	struct crole *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->role = r;
	c->match = match;
	c->next = ci->roles;
	ci->roles = c;
	return 0;
}

static const struct trawl_ctf_stream_class *stream_class(const struct trawl_ctf_trace *m,
							 uint64_t id)
{
	for (size_t i = 0; m && i < m->nstreams; i++)
		if (m->streams[i]->id == id)
			return m->streams[i];
	return NULL;
}

static int class_info(struct ctx *c, const struct trawl_event *ev, struct cinfo **out)
{
	const struct trawl_ctf_event_class *ec = ev->cls;
	struct cinfo *ci;
	const char *name = ec->name ? ec->name : "";

	if (ec->index >= c->ncls)
		return -EINVAL;
	ci = &c->ci[ec->index];
	*out = ci;
	if (ci->done)
		return 0;
	ci->done = true;
	const struct trawl_ctf_trace *meta =
		trawl_reader_trace_meta(trawl_reader_stream_trace(ev->stream));
	const struct trawl_ctf_stream_class *sc = stream_class(meta, ec->stream_id);
	ci->ctx[0] = sc ? sc->event_context : NULL;
	ci->ctx[1] = ec->context;
	ci->payload = ec->fields;
	if (c->probes && !strcmp(name, TRAWL_SYNC_PROBE_SEND) && add_role(ci, R_PROBE_SEND, 0))
		return -ENOMEM;
	if (c->probes && !strcmp(name, TRAWL_SYNC_PROBE_RECV) && add_role(ci, R_PROBE_RECV, 0))
		return -ENOMEM;
	if (c->tcp && !strcmp(name, TRAWL_SYNC_TCP_SEND) && add_role(ci, R_TCP_SEND, 0))
		return -ENOMEM;
	if (c->tcp && !strcmp(name, TRAWL_SYNC_TCP_RECV) && add_role(ci, R_TCP_RECV, 0))
		return -ENOMEM;
	for (size_t i = 0; i < c->nm; i++) {
		if (!strcmp(name, c->m[i].send_event) && add_role(ci, R_MATCH_SEND, i))
			return -ENOMEM;
		if (!strcmp(name, c->m[i].recv_event) && add_role(ci, R_MATCH_RECV, i))
			return -ENOMEM;
	}
	return 0;
}

static int32_t host_index(const struct trawl_sync_points *p, const char *name, size_t len)
{
	size_t lo = 0, hi = p->nhosts;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strncmp(p->hosts[mid].name, name, len);
		if (!c && p->hosts[mid].name[len])
			c = 1;
		if (!c)
			return (int32_t)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static int record(struct ctx *c, const uint8_t *key, size_t klen, enum kind kind, bool send,
		  int32_t host, int32_t peer, int64_t ts)
{
	struct entry *e = table_get(&c->t, key, klen);
	if (!e)
		return -ENOMEM;
	e->kind = (uint8_t)kind;
	if (send) {
		if (e->nsend < UINT16_MAX)
			e->nsend++;
		if (e->nsend == 1) {
			e->send_host = host;
			e->send_ts = ts;
			e->peer = peer;
			if (e->nrecv)
				e->seq = c->seq++;
		}
	} else {
		if (e->nrecv < UINT16_MAX)
			e->nrecv++;
		if (e->nrecv == 1) {
			e->recv_host = host;
			e->recv_ts = ts;
			if (e->nsend)
				e->seq = c->seq++;
		}
	}
	return 0;
}

static int one_event(struct ctx *c, const struct trawl_event *ev, int32_t host)
{
	struct cinfo *ci;
	uint8_t key[1 + 2 + 512];
	int rc = class_info(c, ev, &ci);

	if (rc)
		return rc;
	for (struct crole *ro = ci->roles; ro; ro = ro->next) {
		size_t klen = 0;
		bool send = ro->role == R_PROBE_SEND || ro->role == R_TCP_SEND ||
			    ro->role == R_MATCH_SEND;
		int32_t peer = -1;
		enum kind kind;

		switch (ro->role) {
		case R_PROBE_SEND:
		case R_PROBE_RECV: {
			uint64_t k;
			const struct trawl_ctf_type *t = NULL;
			int pos = find_field(ci, ev, TRAWL_SYNC_PROBE_PEER, &t);
			if (field_u64(ci, ev, TRAWL_SYNC_PROBE_KEY, &k) || pos < 0 || t->kind != TRAWL_CTF_STRING) {
				c->p->bad_events++;
				continue;
			}
			const char *pn = ev->values[pos].s.p ? ev->values[pos].s.p : "";
			size_t pl = strnlen(pn, ev->values[pos].s.len);
			peer = host_index(c->p, pn, pl);
			/* key: 'P', key, sender name */
			const char *sender = send ? c->p->hosts[host].name : pn;
			size_t sl = send ? strlen(sender) : pl;
			if (sl > sizeof(key) - 9)
				sl = sizeof(key) - 9;
			key[0] = 'P';
			memcpy(key + 1, &k, 8);
			memcpy(key + 9, sender, sl);
			klen = 9 + sl;
			kind = K_PROBE;
			break;
		}
		case R_TCP_SEND:
		case R_TCP_RECV: {
			key[0] = 'T';
			klen = 1;
			for (int i = 0; i < NTCP; i++) {
				uint64_t u;
				if (field_u64(ci, ev, tcp_fields[i], &u))
					break;
				memcpy(key + klen, &u, 8);
				klen += 8;
			}
			if (klen != 1 + 8 * NTCP) {
				c->p->bad_events++;
				continue;
			}
			kind = K_TCP;
			break;
		}
		default: {
			const struct trawl_sync_match *m = &c->m[ro->match];
			size_t n;
			key[0] = 'M';
			key[1] = (uint8_t)(ro->match >> 8);
			key[2] = (uint8_t)ro->match;
			if (value_bytes(ci, ev, send ? m->send_field : m->recv_field, key + 3,
					sizeof(key) - 3, &n)) {
				c->p->bad_events++;
				continue;
			}
			klen = 3 + n;
			kind = K_MATCH;
			break;
		}
		}
		if (send)
			c->p->hosts[host].sends++;
		else
			c->p->hosts[host].recvs++;
		if ((rc = record(c, key, klen, kind, send, host, peer, ev->ts)))
			return rc;
	}
	return 0;
}

/* ------------------------------------------------------------ results */

static int cmp_host(const void *a, const void *b)
{
	return strcmp(((const struct trawl_sync_host *)a)->name,
		      ((const struct trawl_sync_host *)b)->name);
}

static void host_release(struct trawl_sync_host *h)
{
	free(h->name);
	for (size_t i = 0; i < h->npaths; i++)
		free(h->paths[i]);
	free(h->paths);
}

void trawl_sync_points_free(struct trawl_sync_points *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nhosts; i++)
		host_release(&p->hosts[i]);
	free(p->hosts);
	for (size_t i = 0; i < p->nlinks; i++) {
		free(p->links[i].ab);
		free(p->links[i].ba);
		free(p->links[i].seq_ab);
		free(p->links[i].seq_ba);
	}
	free(p->links);
	free(p);
}

/* The hosts of the reader's traces, sorted, each with its trace paths. */
static int collect_hosts(struct trawl_sync_points *p, const struct trawl_reader *r,
			 int32_t *trace_host)
{
	size_t nt = trawl_reader_ntraces(r);

	p->hosts = calloc(nt ? nt : 1, sizeof(*p->hosts));
	if (!p->hosts)
		return -ENOMEM;
	for (size_t i = 0; i < nt; i++) {
		const char *h = trawl_reader_trace_hostname(trawl_reader_trace_at(r, i));
		size_t j;
		for (j = 0; j < p->nhosts; j++)
			if (!strcmp(p->hosts[j].name, h))
				break;
		if (j == p->nhosts) {
			p->hosts[j].name = strdup(h);
			p->hosts[j].first_ts = INT64_MAX;
			p->hosts[j].last_ts = INT64_MIN;
			if (!p->hosts[j].name)
				return -ENOMEM;
			p->nhosts++;
		}
	}
	if (p->nhosts)
		qsort(p->hosts, p->nhosts, sizeof(*p->hosts), cmp_host);
	for (size_t i = 0; i < nt; i++) {
		const struct trawl_reader_trace *t = trawl_reader_trace_at(r, i);
		int32_t h = host_index(p, trawl_reader_trace_hostname(t),
				       strlen(trawl_reader_trace_hostname(t)));
		struct trawl_sync_host *hh = &p->hosts[h];
		char **np = realloc(hh->paths, (hh->npaths + 1) * sizeof(*np));
		if (!np)
			return -ENOMEM;
		hh->paths = np;
		if (!(hh->paths[hh->npaths] = strdup(trawl_reader_trace_path(t))))
			return -ENOMEM;
		hh->npaths++;
		trace_host[i] = h;
	}
	return 0;
}

static struct trawl_sync_link *link_of(struct trawl_sync_points *p, size_t a, size_t b,
				       size_t *cap)
{
	for (size_t i = 0; i < p->nlinks; i++)
		if (p->links[i].a == a && p->links[i].b == b)
			return &p->links[i];
	if (p->nlinks == *cap) {
		size_t ncap = *cap ? *cap * 2 : 8;
		struct trawl_sync_link *nl = realloc(p->links, ncap * sizeof(*nl));
		if (!nl)
			return NULL;
		p->links = nl;
		*cap = ncap;
	}
	struct trawl_sync_link *l = &p->links[p->nlinks++];
	memset(l, 0, sizeof(*l));
	l->a = a;
	l->b = b;
	return l;
}

/* A message while the links are built: sorted by seq, then split. */
struct smsg {
	int64_t send, recv;
	uint64_t seq;
};

struct growing {
	struct smsg *m;
	size_t n, cap;
};

static int push_msg(struct growing *g, int64_t send, int64_t recv, uint64_t seq)
{
	if (g->n == g->cap) {
		size_t ncap = g->cap ? g->cap * 2 : 256;
		struct smsg *nm = realloc(g->m, ncap * sizeof(*nm));
		if (!nm)
			return -ENOMEM;
		g->m = nm;
		g->cap = ncap;
	}
	g->m[g->n++] = (struct smsg){ send, recv, seq };
	return 0;
}

static int cmp_seq(const void *a, const void *b)
{
	const struct smsg *x = a, *y = b;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* g's messages, in seq order, into (m, seq, n); g is emptied. */
static int split_msgs(struct growing *g, struct trawl_sync_msg **m, uint64_t **seq, size_t *n)
{
	if (g->n)
		qsort(g->m, g->n, sizeof(*g->m), cmp_seq);
	*m = malloc((g->n ? g->n : 1) * sizeof(**m));
	*seq = malloc((g->n ? g->n : 1) * sizeof(**seq));
	if (!*m || !*seq)
		return -ENOMEM;
	for (size_t i = 0; i < g->n; i++) {
		(*m)[i].send = g->m[i].send;
		(*m)[i].recv = g->m[i].recv;
		(*seq)[i] = g->m[i].seq;
	}
	*n = g->n;
	free(g->m);
	memset(g, 0, sizeof(*g));
	return 0;
}

static int cmp_link(const void *a, const void *b)
{
	const struct trawl_sync_link *x = a, *y = b;
	if (x->a != y->a)
		return x->a < y->a ? -1 : 1;
	return (x->b > y->b) - (x->b < y->b);
}

static int build_links(struct trawl_sync_points *p, const struct table *t)
{
	size_t lcap = 0;
	struct growing *g = NULL;	/* 2 per link: a->b, b->a */
	size_t ng = 0;
	int rc = 0;

	for (size_t i = 0; i < t->cap; i++) {
		const struct entry *e = &t->e[i];
		if (!e->klen)
			continue;
		bool dup = e->nsend > 1 || e->nrecv > 1;
		int32_t s = e->send_host, r = e->recv_host;

		if (e->nsend && e->nrecv && s == r) {
			p->same_host++;
			continue;
		}
		if (r < 0 && s >= 0 && e->peer >= 0 && e->peer != s)
			r = e->peer;	/* a probe: the receiver is known */
		if (s < 0 || r < 0) {
			if (s >= 0)
				p->hosts[s].unmatched_sends++;
			if (r >= 0)
				p->hosts[r].unmatched_recvs++;
			continue;
		}
		size_t a = (size_t)(s < r ? s : r), b = (size_t)(s < r ? r : s);
		bool ab = s < r;
		struct trawl_sync_link *l = link_of(p, a, b, &lcap);
		if (!l) {
			rc = -ENOMEM;
			goto out;
		}
		size_t li = (size_t)(l - p->links);
		if (li * 2 + 2 > ng) {
			size_t nn = lcap * 2;
			struct growing *ngr = realloc(g, nn * sizeof(*ngr));
			if (!ngr) {
				rc = -ENOMEM;
				goto out;
			}
			memset(ngr + ng, 0, (nn - ng) * sizeof(*ngr));
			g = ngr;
			ng = nn;
		}
		if (dup) {
			if (ab)
				l->dup_ab++;
			else
				l->dup_ba++;
		} else if (!e->nrecv) {
			if (ab)
				l->lost_ab++;
			else
				l->lost_ba++;
		} else {
			p->by_kind[e->kind]++;
			if ((rc = push_msg(&g[li * 2 + !ab], e->send_ts, e->recv_ts, e->seq)))
				goto out;
		}
	}
	for (size_t li = 0; li < p->nlinks; li++) {
		struct trawl_sync_link *l = &p->links[li];
		if ((rc = split_msgs(&g[li * 2], &l->ab, &l->seq_ab, &l->n_ab)) ||
		    (rc = split_msgs(&g[li * 2 + 1], &l->ba, &l->seq_ba, &l->n_ba)))
			goto out;
	}
	if (p->nlinks)
		qsort(p->links, p->nlinks, sizeof(*p->links), cmp_link);
out:
	for (size_t i = 0; i < ng; i++)
		free(g[i].m);
	free(g);
	return rc;
}

struct trawl_sync_points *trawl_sync_points_read(const char *const *paths, size_t npaths,
						 const struct trawl_sync_points_opts *o,
						 char *err, size_t errlen)
{
	struct trawl_sync_points_opts opts = { 0 };
	struct ctx c = { .t = { 0 } };
	struct trawl_reader *r = NULL;
	const char **globs = NULL;
	size_t nglobs = 0;
	int rc = 0;

	if (o)
		memcpy(&opts, o, o->size < sizeof(opts) ? o->size : sizeof(opts));
	c.probes = !opts.no_probes;
	c.tcp = !opts.no_tcp;
	c.m = opts.matches;
	c.nm = opts.matches ? opts.nmatches : 0;
	if (c.nm > 65535) {
		seterr(err, errlen, EINVAL, "sync: too many matches");
		errno = EINVAL;
		return NULL;
	}
	c.p = calloc(1, sizeof(*c.p));
	globs = calloc(2 + 2 * c.nm, sizeof(*globs));
	if (!c.p || !globs) {
		rc = seterr(err, errlen, ENOMEM, "out of memory");
		goto out;
	}
	if (c.probes)
		globs[nglobs++] = TRAWL_SYNC_PROBE_GLOB;
	if (c.tcp)
		globs[nglobs++] = TRAWL_SYNC_TCP_GLOB;
	for (size_t i = 0; i < c.nm; i++) {
		globs[nglobs++] = c.m[i].send_event;
		globs[nglobs++] = c.m[i].recv_event;
	}
	if (!nglobs) {
		rc = seterr(err, errlen, EINVAL, "sync: no kind of message to look for");
		goto out;
	}
	struct trawl_reader_opts ro = {
		.sz = sizeof(ro), .events = globs, .nevents = nglobs, .threads = opts.threads,
	};
	r = trawl_reader_new(paths, npaths, &ro, err, errlen);
	if (!r) {
		rc = -(errno ? errno : EINVAL);
		goto out;
	}
	c.r = r;
	c.ncls = trawl_reader_nclasses(r);
	c.ci = calloc(c.ncls + 1, sizeof(*c.ci));
	c.trace_host = calloc(trawl_reader_ntraces(r) + 1, sizeof(*c.trace_host));
	if (!c.ci || !c.trace_host || collect_hosts(c.p, r, c.trace_host)) {
		rc = seterr(err, errlen, ENOMEM, "out of memory");
		goto out;
	}
	/* trace pointer -> index, for the host of each event */
	size_t nt = trawl_reader_ntraces(r);
	const struct trawl_reader_trace *last_t = NULL;
	int32_t last_h = -1;
	const struct trawl_event *ev;
	int n;

	while ((n = trawl_reader_next(r, &ev)) != 0) {
		if (n < 0) {
			if (!c.p->reader_errors++)
				snprintf(c.p->first_error, sizeof(c.p->first_error), "%s",
					 trawl_reader_error(r));
			continue;
		}
		const struct trawl_reader_trace *t = trawl_reader_stream_trace(ev->stream);
		if (t != last_t) {
			last_t = t;
			last_h = -1;
			for (size_t i = 0; i < nt; i++)
				if (trawl_reader_trace_at(r, i) == t)
					last_h = c.trace_host[i];
		}
		if (last_h < 0)
			continue;
		c.p->events++;
		if ((rc = one_event(&c, ev, last_h))) {
			seterr(err, errlen, -rc, "sync: %s", strerror(-rc));
			goto out;
		}
	}
	/* The span of each node: every event, not only the sync events. */
	for (size_t i = 0; i < nt; i++) {
		const struct trawl_reader_trace *t = trawl_reader_trace_at(r, i);
		struct trawl_sync_host *h = &c.p->hosts[c.trace_host[i]];
		for (size_t j = 0; j < trawl_reader_trace_nstreams(t); j++) {
			struct trawl_reader_stream_stats st;
			trawl_reader_stream_stats(trawl_reader_trace_stream(t, j), &st);
			if (st.events && st.first_ts < h->first_ts)
				h->first_ts = st.first_ts;
			if (st.events && st.last_ts > h->last_ts)
				h->last_ts = st.last_ts;
		}
	}
	if ((rc = build_links(c.p, &c.t)))
		seterr(err, errlen, ENOMEM, "out of memory");
out:
	trawl_reader_free(r);
	for (size_t i = 0; c.ci && i < c.ncls; i++)
		for (struct crole *cr = c.ci[i].roles; cr;) {
			struct crole *nx = cr->next;
			free(cr);
			cr = nx;
		}
	free(c.ci);
	free(c.trace_host);
	free(c.t.e);
	free(c.t.keys);
	free(globs);
	if (rc) {
		trawl_sync_points_free(c.p);
		errno = -rc;
		return NULL;
	}
	return c.p;
}

/* ---------------------------------------------------------- computing */

int trawl_sync_link_compute(const struct trawl_sync_link *l, int incremental,
			    const struct trawl_sync_opts *opts, struct trawl_sync_pair *out,
			    char *err, size_t errlen)
{
	if (!l || !out)
		return seterr(err, errlen, EINVAL, "sync: no link");
	if (!incremental)
		return trawl_sync_pair_compute(l->ab, l->n_ab, l->ba, l->n_ba, opts, out, err,
					       errlen);
	struct trawl_sync_inc *s = trawl_sync_inc_new(opts);
	size_t i = 0, j = 0;
	int rc = 0;

	if (!s)
		return seterr(err, errlen, errno, "sync: %s", strerror(errno));
	/* The two directions merged in the order the messages completed. */
	while (i < l->n_ab || j < l->n_ba) {
		bool take_ab = j >= l->n_ba || (i < l->n_ab && l->seq_ab[i] <= l->seq_ba[j]);
		if (take_ab) {
			rc = trawl_sync_inc_add(s, TRAWL_SYNC_AB, l->ab[i].send, l->ab[i].recv);
			i++;
		} else {
			rc = trawl_sync_inc_add(s, TRAWL_SYNC_BA, l->ba[j].send, l->ba[j].recv);
			j++;
		}
		if (rc && rc != -ERANGE)
			break;
		rc = 0;
	}
	if (!rc && (rc = trawl_sync_inc_result(s, out)))
		seterr(err, errlen, -rc, "sync: %s", strerror(-rc));
	trawl_sync_inc_free(s);
	return rc;
}
