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
#include "sync-internal.h"

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
		return tr_seterr(err, errlen, EINVAL,
			      "bad match '%s': want SEND_EVENT.FIELD = RECV_EVENT.FIELD",
			      spec ? spec : "");
	rc = split_side(spec, (size_t)(eq - spec), &m->send_event, &m->send_field);
	if (!rc)
		rc = split_side(eq + 1, strlen(eq + 1), &m->recv_event, &m->recv_field);
	if (rc) {
		trawl_sync_match_release(m);
		if (rc == -ENOMEM)
			return tr_seterr(err, errlen, ENOMEM, "out of memory");
		return tr_seterr(err, errlen, EINVAL,
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

#define TCP_FIELD_NAME(f, bits, base) #f,
static const char *const tcp_fields[] = { TRAWL_SYNC_TCP_FIELDS(TCP_FIELD_NAME) };
#define NTCP (sizeof(tcp_fields) / sizeof(tcp_fields[0]))

/* One role of an event class (a class may serve several user matches). */
struct crole {
	enum role role;
	size_t match;			/* R_MATCH_*: index of the match */
	struct crole *next;
};

struct cinfo {
	bool done;
	struct crole *roles;
};

/* ----------------------------------------------------------- the pass */

/*
 * The finder: a sink. start() binds the fields it reads (the probe's key
 * and peer, the TCP fields, each match's two fields); events() keys every
 * sync event; trawl_sync_finder_points() builds the links.
 */
struct trawl_sync_finder {
	struct table t;
	struct cinfo *ci;		/* by class index */
	size_t ncls;
	struct trawl_sync_match *m;	/* copies */
	size_t nm;
	bool probes, tcp;
	struct trawl_sync_points *p;
	const struct trawl_reader *r;
	const struct trawl_reader_trace **tr;	/* traces seen -> host */
	int32_t *trh;
	size_t ntr;
	bool unsorted;			/* hosts added after start (live) */
	uint64_t seq;
	const struct trawl_field *key, *peer, *tcpf[NTCP];
	const struct trawl_field **msend, **mrecv;	/* per match */
	int err;			/* the first error of a callback */
	char msg[256];
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

static int class_info(struct trawl_sync_finder *c, const struct trawl_ctf_event_class *ec,
		      struct cinfo **out)
{
	const char *name = ec->name ? ec->name : "";
	struct cinfo *ci;

	if (ec->index >= c->ncls) {
		/* a class a live source added */
		size_t n = (size_t)ec->index + 64;
		struct cinfo *nc = realloc(c->ci, n * sizeof(*nc));
		if (!nc)
			return -ENOMEM;
		memset(nc + c->ncls, 0, (n - c->ncls) * sizeof(*nc));
		c->ci = nc;
		c->ncls = n;
	}
	ci = &c->ci[ec->index];
	*out = ci;
	if (ci->done)
		return 0;
	ci->done = true;
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

int tr_sync_finder_wants(struct trawl_sync_finder *c, const struct trawl_ctf_event_class *ec)
{
	struct cinfo *ci;
	int rc = class_info(c, ec, &ci);
	return rc ? rc : ci->roles != NULL;
}

static int32_t host_index(const struct trawl_sync_finder *c, const char *name, size_t len)
{
	const struct trawl_sync_points *p = c->p;

	if (c->unsorted) {
		for (size_t i = 0; i < p->nhosts; i++)
			if (!strncmp(p->hosts[i].name, name, len) && !p->hosts[i].name[len])
				return (int32_t)i;
		return -1;
	}
	size_t lo = 0, hi = p->nhosts;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int k = strncmp(p->hosts[mid].name, name, len);
		if (!k && p->hosts[mid].name[len])
			k = 1;
		if (!k)
			return (int32_t)mid;
		if (k < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static int record(struct trawl_sync_finder *c, const uint8_t *key, size_t klen, enum kind kind,
		  bool send, int32_t host, int32_t peer, int64_t ts)
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

/* A bound field's value as key bytes: 'i' + 8 bytes, or 's' + the string. */
static int value_bytes(const struct trawl_field *f, const struct trawl_event *ev, uint8_t *out,
		       size_t cap, size_t *len)
{
	const union trawl_ctf_value *v = f ? trawl_field_value(f, ev) : NULL;

	if (!v)
		return -1;
	if (trawl_field_type(f, ev->cls) == TRAWL_FIELD_STRING) {
		size_t n = v->s.p ? strnlen(v->s.p, v->s.len) : 0;
		if (n + 1 > cap)
			return -1;
		out[0] = 's';
		if (n)
			memcpy(out + 1, v->s.p, n);
		*len = n + 1;
		return 0;
	}
	if (trawl_field_type(f, ev->cls) != TRAWL_FIELD_INT || cap < 9)
		return -1;
	out[0] = 'i';
	memcpy(out + 1, &v->u, 8);
	*len = 9;
	return 0;
}

static int one_event(struct trawl_sync_finder *c, const struct trawl_event *ev, int32_t host)
{
	struct cinfo *ci;
	uint8_t key[1 + 2 + 512];
	int rc = class_info(c, ev->cls, &ci);

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
			const union trawl_ctf_value *k = c->key ? trawl_field_value(c->key, ev) : NULL;
			const union trawl_ctf_value *pv = c->peer ? trawl_field_value(c->peer, ev) : NULL;
			if (!k || !pv) {
				c->p->bad_events++;
				continue;
			}
			const char *pn = pv->s.p ? pv->s.p : "";
			size_t pl = pv->s.p ? strnlen(pn, pv->s.len) : 0;
			peer = host_index(c, pn, pl);
			/* key: 'P', key, sender name */
			const char *sender = send ? c->p->hosts[host].name : pn;
			size_t sl = send ? strlen(sender) : pl;
			if (sl > sizeof(key) - 9)
				sl = sizeof(key) - 9;
			key[0] = 'P';
			memcpy(key + 1, &k->u, 8);
			memcpy(key + 9, sender, sl);
			klen = 9 + sl;
			kind = K_PROBE;
			break;
		}
		case R_TCP_SEND:
		case R_TCP_RECV: {
			key[0] = 'T';
			klen = 1;
			for (size_t i = 0; i < NTCP; i++) {
				const union trawl_ctf_value *v = c->tcpf[i] ? trawl_field_value(c->tcpf[i], ev) : NULL;
				if (!v)
					break;
				memcpy(key + klen, &v->u, 8);
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
			size_t n;
			key[0] = 'M';
			key[1] = (uint8_t)(ro->match >> 8);
			key[2] = (uint8_t)ro->match;
			if (value_bytes(send ? c->msend[ro->match] : c->mrecv[ro->match], ev, key + 3,
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

/* The host of trace t (added, with its path, when new). -1 on ENOMEM. */
static int32_t trace_host(struct trawl_sync_finder *c, const struct trawl_reader_trace *t)
{
	struct trawl_sync_points *p = c->p;

	for (size_t i = 0; i < c->ntr; i++)
		if (c->tr[i] == t)
			return c->trh[i];
	const char *name = trawl_reader_trace_hostname(t);
	int32_t h = host_index(c, name, strlen(name));
	if (h < 0) {
		struct trawl_sync_host *nh = realloc(p->hosts, (p->nhosts + 1) * sizeof(*nh));
		if (!nh)
			return -1;
		p->hosts = nh;
		memset(&nh[p->nhosts], 0, sizeof(*nh));
		if (!(nh[p->nhosts].name = strdup(name)))
			return -1;
		nh[p->nhosts].first_ts = INT64_MAX;
		nh[p->nhosts].last_ts = INT64_MIN;
		h = (int32_t)p->nhosts++;
		if (p->nhosts > 1 && strcmp(nh[h - 1].name, name) > 0)
			c->unsorted = true;
	}
	struct trawl_sync_host *hh = &p->hosts[h];
	char **np = realloc(hh->paths, (hh->npaths + 1) * sizeof(*np));
	const struct trawl_reader_trace **nt = realloc(c->tr, (c->ntr + 1) * sizeof(*nt));
	if (np)
		hh->paths = np;
	if (nt)
		c->tr = nt;
	int32_t *nth = realloc(c->trh, (c->ntr + 1) * sizeof(*nth));
	if (nth)
		c->trh = nth;
	if (!np || !nt || !nth || !(hh->paths[hh->npaths] = strdup(trawl_reader_trace_path(t))))
		return -1;
	hh->npaths++;
	c->tr[c->ntr] = t;
	c->trh[c->ntr++] = h;
	return h;
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

/* ------------------------------------------------------------- the sink */

static void finder_fail(struct trawl_sync_finder *c, int rc, const char *why)
{
	if (!c->err) {
		c->err = rc;
		snprintf(c->msg, sizeof(c->msg), "sync: %.240s", why);
	}
}

static const struct trawl_field *bind1(struct trawl_sync_finder *c, struct trawl_reader *r,
				       const char *ev, const char *field, enum trawl_field_type t)
{
	char spec[512], err[256];
	snprintf(spec, sizeof(spec), "%s.%s", ev, field);
	const struct trawl_field *f = trawl_field_bind(r, spec, t, TRAWL_FIELD_OPTIONAL, err,
						       sizeof(err));
	if (!f)
		finder_fail(c, -(errno ? errno : EINVAL), err);
	return f;
}

static int finder_start(void *self, struct trawl_reader *r)
{
	struct trawl_sync_finder *c = self;

	c->r = r;
	c->ncls = trawl_reader_nclasses(r);
	c->ci = calloc(c->ncls + 1, sizeof(*c->ci));
	if (!c->ci)
		return c->err = -ENOMEM;
	if (c->probes) {
		c->key = bind1(c, r, TRAWL_SYNC_PROBE_GLOB, TRAWL_SYNC_PROBE_KEY, TRAWL_FIELD_INT);
		c->peer = bind1(c, r, TRAWL_SYNC_PROBE_GLOB, TRAWL_SYNC_PROBE_PEER, TRAWL_FIELD_STRING);
	}
	for (size_t i = 0; c->tcp && i < NTCP; i++)
		c->tcpf[i] = bind1(c, r, TRAWL_SYNC_TCP_GLOB, tcp_fields[i], TRAWL_FIELD_INT);
	for (size_t i = 0; i < c->nm; i++) {
		c->msend[i] = bind1(c, r, c->m[i].send_event, c->m[i].send_field, TRAWL_FIELD_ANY);
		c->mrecv[i] = bind1(c, r, c->m[i].recv_event, c->m[i].recv_field, TRAWL_FIELD_ANY);
	}
	/* every trace's host, sorted by name, before any event */
	size_t nt = trawl_reader_ntraces(r);
	const char **names = calloc(nt + 1, sizeof(*names));
	if (!names)
		return c->err = -ENOMEM;
	for (size_t i = 0; i < nt; i++)
		names[i] = trawl_reader_trace_hostname(trawl_reader_trace_at(r, i));
	for (size_t i = 0; i < nt; i++) {
		struct trawl_sync_points *p = c->p;
		bool seen = false;
		for (size_t j = 0; j < p->nhosts && !seen; j++)
			seen = !strcmp(p->hosts[j].name, names[i]);
		if (seen)
			continue;
		struct trawl_sync_host *nh = realloc(p->hosts, (p->nhosts + 1) * sizeof(*nh));
		if (!nh || !(nh[p->nhosts].name = strdup(names[i]))) {
			if (nh)
				p->hosts = nh;
			free(names);
			return c->err = -ENOMEM;
		}
		p->hosts = nh;
		nh[p->nhosts].paths = NULL;
		nh[p->nhosts].npaths = 0;
		nh[p->nhosts].sends = nh[p->nhosts].recvs = 0;
		nh[p->nhosts].first_ts = INT64_MAX;
		nh[p->nhosts].last_ts = INT64_MIN;
		p->nhosts++;
	}
	free(names);
	if (c->p->nhosts)
		qsort(c->p->hosts, c->p->nhosts, sizeof(*c->p->hosts), cmp_host);
	for (size_t i = 0; i < nt; i++)
		if (trace_host(c, trawl_reader_trace_at(r, i)) < 0)
			return c->err = -ENOMEM;
	return c->err;
}

static int finder_events(void *self, const struct trawl_event *ev, size_t n)
{
	struct trawl_sync_finder *c = self;
	const struct trawl_reader_trace *last_t = NULL;
	int32_t last_h = -1;

	for (size_t i = 0; i < n; i++) {
		const struct trawl_reader_trace *t = trawl_reader_stream_trace(ev[i].stream);
		if (t != last_t) {
			last_t = t;
			if ((last_h = trace_host(c, t)) < 0)
				return c->err = -ENOMEM;
		}
		c->p->events++;
		int rc = one_event(c, &ev[i], last_h);
		if (rc)
			return c->err = rc;
	}
	return 0;
}

static void host_spans(struct trawl_sync_finder *c, struct trawl_sync_points *p);

/* Every trace of the reader has its host, those that came after the
 * start (live) and gave no event yet included: a node that exchanged no
 * message is one all the same. 0 or -ENOMEM. */
static int all_traces(struct trawl_sync_finder *c)
{
	for (size_t i = 0; c->r && i < trawl_reader_ntraces(c->r); i++)
		if (trace_host(c, trawl_reader_trace_at(c->r, i)) < 0)
			return -ENOMEM;
	return 0;
}

/* The span of each node: every event, not only the sync events. */
static int finder_finish(void *self, struct trawl_reader *r)
{
	struct trawl_sync_finder *c = self;

	if (all_traces(c) < 0)
		return c->err = -ENOMEM;
	c->p->reader_errors = trawl_reader_nerrors(r);
	if (c->p->reader_errors)
		snprintf(c->p->first_error, sizeof(c->p->first_error), "%s", trawl_reader_error(r));
	host_spans(c, c->p);
	return 0;
}

static const struct trawl_sink_ops finder_ops = {
	.sz = sizeof(finder_ops),
	.name = "sync-points",
	.start = finder_start,
	.events = finder_events,
	.finish = finder_finish,
};

void trawl_sync_finder_free(struct trawl_sync_finder *c)
{
	if (!c)
		return;
	for (size_t i = 0; c->ci && i < c->ncls; i++)
		for (struct crole *cr = c->ci[i].roles; cr;) {
			struct crole *nx = cr->next;
			free(cr);
			cr = nx;
		}
	free(c->ci);
	free(c->tr);
	free(c->trh);
	free(c->t.e);
	free(c->t.keys);
	for (size_t i = 0; i < c->nm; i++)
		trawl_sync_match_release(&c->m[i]);
	free(c->m);
	free(c->msend);
	free(c->mrecv);
	trawl_sync_points_free(c->p);
	free(c);
}

struct trawl_sync_finder *trawl_sync_finder_new(const struct trawl_sync_points_opts *o,
						char *err, size_t errlen)
{
	struct trawl_sync_points_opts opts = { 0 };
	struct trawl_sync_finder *c = calloc(1, sizeof(*c));

	if (o)
		memcpy(&opts, o, o->size < sizeof(opts) ? o->size : sizeof(opts));
	if (!c)
		goto nomem;
	c->probes = !opts.no_probes;
	c->tcp = !opts.no_tcp;
	c->nm = opts.matches ? opts.nmatches : 0;
	if (c->nm > 65535) {
		tr_seterr(err, errlen, EINVAL, "sync: too many matches");
		goto err;
	}
	if (!c->probes && !c->tcp && !c->nm) {
		tr_seterr(err, errlen, EINVAL, "sync: no kind of message to look for");
		goto err;
	}
	c->p = calloc(1, sizeof(*c->p));
	c->m = calloc(c->nm + 1, sizeof(*c->m));
	c->msend = calloc(c->nm + 1, sizeof(*c->msend));
	c->mrecv = calloc(c->nm + 1, sizeof(*c->mrecv));
	if (!c->p || !c->m || !c->msend || !c->mrecv)
		goto nomem;
	for (size_t i = 0; i < c->nm; i++) {
		const struct trawl_sync_match *m = &opts.matches[i];
		if (!(c->m[i].send_event = strdup(m->send_event)) ||
		    !(c->m[i].send_field = strdup(m->send_field)) ||
		    !(c->m[i].recv_event = strdup(m->recv_event)) ||
		    !(c->m[i].recv_field = strdup(m->recv_field)))
			goto nomem;
	}
	return c;
nomem:
	tr_seterr(err, errlen, ENOMEM, "out of memory");
err:
	trawl_sync_finder_free(c);
	return NULL;
}

struct trawl_sink trawl_sync_finder_sink(struct trawl_sync_finder *c)
{
	return (struct trawl_sink){ &finder_ops, c };
}

/* Hosts added after start (live) come last: sorts them by name and
 * renumbers every host index kept. */
static int finder_sort_hosts(struct trawl_sync_finder *c)
{
	struct trawl_sync_points *p = c->p;
	size_t n = p->nhosts;
	size_t *order = malloc((n + 1) * sizeof(*order));
	int32_t *map = malloc((n + 1) * sizeof(*map));
	struct trawl_sync_host *sorted = malloc((n + 1) * sizeof(*sorted));

	if (!order || !map || !sorted) {
		free(order);
		free(map);
		free(sorted);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		sorted[i] = p->hosts[i];
	qsort(sorted, n, sizeof(*sorted), cmp_host);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++)
			if (sorted[j].name == p->hosts[i].name)
				map[i] = (int32_t)j;
	for (size_t i = 0; i < c->t.cap; i++) {
		struct entry *e = &c->t.e[i];
		if (!e->klen)
			continue;
		if (e->send_host >= 0)
			e->send_host = map[e->send_host];
		if (e->recv_host >= 0)
			e->recv_host = map[e->recv_host];
		if (e->peer >= 0)
			e->peer = map[e->peer];
	}
	for (size_t i = 0; i < c->ntr; i++)
		c->trh[i] = map[c->trh[i]];
	memcpy(p->hosts, sorted, n * sizeof(*sorted));
	c->unsorted = false;
	free(order);
	free(map);
	free(sorted);
	return 0;
}

/* The run's first error as the finder said it, into err. */
static void finder_said(const struct trawl_sync_finder *c, char *err, size_t errlen)
{
	if (c->msg[0])
		tr_seterr(err, errlen, -c->err, "%s", c->msg);
	else
		tr_seterr(err, errlen, -c->err, "sync: %s", strerror(-c->err));
}

struct trawl_sync_points *trawl_sync_finder_points(struct trawl_sync_finder *c, char *err,
						   size_t errlen)
{
	int rc;

	if (c->err) {
		finder_said(c, err, errlen);
		return NULL;
	}
	if ((c->unsorted && (rc = finder_sort_hosts(c))) || (rc = build_links(c->p, &c->t))) {
		tr_seterr(err, errlen, -rc, "out of memory");
		return NULL;
	}
	struct trawl_sync_points *p = c->p;
	c->p = NULL;
	return p;
}

/* Each host's span from the streams of its traces read so far (the
 * finder's run: at its finish, or a snapshot's). */
static void host_spans(struct trawl_sync_finder *c, struct trawl_sync_points *p)
{
	for (size_t i = 0; i < c->ntr; i++) {
		const struct trawl_reader_trace *t = c->tr[i];
		struct trawl_sync_host *h = &p->hosts[c->trh[i]];
		for (size_t j = 0; j < trawl_reader_trace_nstreams(t); j++) {
			struct trawl_reader_stream_stats st;
			trawl_reader_stream_stats(trawl_reader_trace_stream(t, j), &st);
			if (st.events && st.first_ts < h->first_ts)
				h->first_ts = st.first_ts;
			if (st.events && st.last_ts > h->last_ts)
				h->last_ts = st.last_ts;
		}
	}
}

struct trawl_sync_points *trawl_sync_finder_snapshot(struct trawl_sync_finder *c, char *err,
						     size_t errlen)
{
	int rc = -ENOMEM;
	struct trawl_sync_points *p = NULL;

	if (c->err) {
		finder_said(c, err, errlen);
		return NULL;
	}
	if (!c->p || all_traces(c) < 0 || (c->unsorted && (rc = finder_sort_hosts(c))))
		goto fail;
	if (!(p = calloc(1, sizeof(*p))) ||
	    !(p->hosts = calloc(c->p->nhosts + 1, sizeof(*p->hosts))))
		goto fail;
	p->events = c->p->events;
	p->same_host = 0;
	p->bad_events = c->p->bad_events;
	for (size_t i = 0; i < c->p->nhosts; i++) {
		const struct trawl_sync_host *o = &c->p->hosts[i];
		struct trawl_sync_host *h = &p->hosts[p->nhosts++];	/* (freed on failure) */
		*h = (struct trawl_sync_host){ .first_ts = INT64_MAX, .last_ts = INT64_MIN,
					       .sends = o->sends, .recvs = o->recvs };
		if (!(h->name = strdup(o->name)) ||
		    !(h->paths = calloc(o->npaths + 1, sizeof(*h->paths))))
			goto fail;
		for (; h->npaths < o->npaths; h->npaths++)
			if (!(h->paths[h->npaths] = strdup(o->paths[h->npaths])))
				goto fail;
	}
	host_spans(c, p);
	if ((rc = build_links(p, &c->t)))
		goto fail;
	return p;
fail:
	trawl_sync_points_free(p);
	tr_seterr(err, errlen, -rc, "sync: %s", strerror(-rc));
	errno = -rc;
	return NULL;
}

struct trawl_sync_points *trawl_sync_points_read(const char *const *paths, size_t npaths,
						 const struct trawl_sync_points_opts *o,
						 char *err, size_t errlen)
{
	struct trawl_sync_points_opts opts = { 0 };
	struct trawl_sync_finder *c = trawl_sync_finder_new(o, err, errlen);
	struct trawl_sync_points *p = NULL;
	struct trawl_reader *r = NULL;
	const char **globs = NULL;
	size_t nglobs = 0;

	if (!c)
		return NULL;
	if (o)
		memcpy(&opts, o, o->size < sizeof(opts) ? o->size : sizeof(opts));
	/* read only the sync events (and count the others' spans) */
	globs = calloc(2 + 2 * c->nm, sizeof(*globs));
	if (!globs) {
		tr_seterr(err, errlen, ENOMEM, "out of memory");
		goto out;
	}
	if (c->probes)
		globs[nglobs++] = TRAWL_SYNC_PROBE_GLOB;
	if (c->tcp)
		globs[nglobs++] = TRAWL_SYNC_TCP_GLOB;
	for (size_t i = 0; i < c->nm; i++) {
		globs[nglobs++] = c->m[i].send_event;
		globs[nglobs++] = c->m[i].recv_event;
	}
	struct trawl_reader_opts ro = {
		.sz = sizeof(ro), .events = globs, .nevents = nglobs, .threads = opts.threads,
		.bad_trace = opts.bad_trace, .bad_trace_arg = opts.bad_trace_arg,
	};
	r = trawl_reader_new(paths, npaths, &ro, err, errlen);
	if (!r)
		goto out;
	size_t nsinks = opts.sinks ? opts.nsinks : 0;
	struct trawl_sink *sinks = calloc(1 + nsinks, sizeof(*sinks));
	if (!sinks) {
		tr_seterr(err, errlen, ENOMEM, "out of memory");
		goto out;
	}
	sinks[0] = trawl_sync_finder_sink(c);
	if (nsinks)
		memcpy(sinks + 1, opts.sinks, nsinks * sizeof(*sinks));
	int rc = trawl_pipe_run(r, sinks, 1 + nsinks, NULL);
	free(sinks);
	if (rc < 0 && !c->err)
		c->err = rc;
	p = trawl_sync_finder_points(c, err, errlen);
out:
	trawl_reader_free(r);
	free(globs);
	trawl_sync_finder_free(c);
	if (!p && !errno)
		errno = EINVAL;
	return p;
}

/* ---------------------------------------------------------- computing */

int trawl_sync_link_compute(const struct trawl_sync_link *l, int incremental,
			    const struct trawl_sync_opts *opts, struct trawl_sync_pair *out,
			    char *err, size_t errlen)
{
	if (!l || !out)
		return tr_seterr(err, errlen, EINVAL, "sync: no link");
	if (!incremental)
		return trawl_sync_pair_compute(l->ab, l->n_ab, l->ba, l->n_ba, opts, out, err,
					       errlen);
	struct trawl_sync_inc *s = trawl_sync_inc_new(opts);
	size_t i = 0, j = 0;
	int rc = 0;

	if (!s)
		return tr_seterr(err, errlen, errno, "sync: %s", strerror(errno));
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
		tr_seterr(err, errlen, -rc, "sync: %s", strerror(-rc));
	trawl_sync_inc_free(s);
	return rc;
}
