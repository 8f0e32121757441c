/* SPDX-License-Identifier: MIT */
/*
 * lib/sim/sim-sync.c - the simulator with sync on (`trawl simulate --sync`):
 * every host gets its own clock (offset, drift, an optional drift change),
 * and the hosts exchange probe messages (trawl_sync:probe_send /
 * probe_recv) and application RPCs (app:rpc_send / app:rpc_recv) with known
 * one-way delays, so that clock synchronization can be tested against the
 * truth (SESSION/truth.txt, and the result's clocks).
 *
 * Messages of one directed pair and kind come from a generator seeded by
 * (seed, sender, receiver, kind) that yields them in send order: message i
 * is sent at a random instant of the i-th slot of 1/rate s, its copies
 * (a duplicate is a second send of the same key later in the slot) have
 * their own delays and losses. The sender's and the receiver's host each
 * run the generator on their own, so hosts are written one at a time in
 * bounded memory. A host's sync stream merges, in true-time order, its
 * sends and its receives: one heap holds the send generators (keyed by
 * their next send), the receive generators (keyed by the earliest receive
 * they can still produce: next send + minimum delay) and the receives
 * already generated (keyed by their receive time); a receive is written
 * only when nothing earlier can appear any more. Receives of messages
 * whose jitter exceeds their spacing come out reordered against sends.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim-internal.h"
#include "util/outfile.h"
#include "trawl/sync-schema.h"

#define NS 1000000000ll

enum { K_PROBE, K_RPC, K_N };

/* ------------------------------------------------------------- clocks */

/* x / 1e9 rounded to the nearest integer (halves up). */
static int64_t div_round(__int128 x)
{
	__int128 q = x / NS, r = x % NS;
	if (r < 0) {
		q--;
		r += NS;
	}
	return (int64_t)(q + (r >= NS / 2));
}

static int64_t div_round64(int64_t x)
{
	int64_t q = x / NS, r = x % NS;
	if (r < 0) {
		q--;
		r += NS;
	}
	return q + (r >= NS / 2);
}

static int64_t scaled(int64_t ppb, int64_t dt, __int128 base)
{
	int64_t x;
	if (!base && !__builtin_mul_overflow(ppb, dt, &x))
		return div_round64(x);
	return div_round(base + (__int128)ppb * dt);
}

int64_t trawl_sim_clock_delta(const struct trawl_sim_clock *c, int64_t dt)
{
	if (dt < c->change_ns)
		return c->offset_ns + scaled(c->drift_ppb, dt, 0);
	return c->offset_ns + scaled(c->drift2_ppb, dt - c->change_ns,
				     (__int128)c->drift_ppb * c->change_ns);
}

/* -------------------------------------------------------------- state */

struct kstat {
	uint64_t n, dups, lost;
};

struct link {
	double mind, jitter;	/* ns, after the asymmetry factor */
	struct kstat k[K_N];
};

struct tr_sim_sync {
	struct trawl_sim_opts o;	/* changes: NULL */
	unsigned hosts;
	uint64_t seed, t0, span;
	uint64_t count[K_N];	/* messages per directed pair */
	double period[K_N];	/* ns */
	uint32_t salt;
	struct trawl_sim_clock *clk;
	bool *changed;
	struct link *links;	/* [src * hosts + dst] */
};

static bool linked(const struct tr_sim_sync *s, unsigned a, unsigned b)
{
	if (a == b || (s->o.one_way && a > b))
		return false;
	switch (s->o.topology) {
	case TRAWL_SIM_STAR:
		return a == 0 || b == 0;
	case TRAWL_SIM_CHAIN:
		return a + 1 == b || b + 1 == a;
	case TRAWL_SIM_SPLIT: {
		unsigned half = (s->hosts + 1) / 2;
		return (a < half) == (b < half);
	}
	default:
		return true;
	}
}

static double factor(const struct tr_sim_sync *s, unsigned src, unsigned dst)
{
	return src > dst ? s->o.asym : 1.0;
}

/* uniform in [-max, max] */
static int64_t symmetric(uint64_t *r, uint64_t max)
{
	if (!max)
		return 0;
	return (int64_t)(sim_rnd(r) % (2 * max + 1)) - (int64_t)max;
}

struct tr_sim_sync *tr_sim_sync_new(const struct trawl_sim_opts *o, uint64_t t0, uint64_t span,
				    char *err, size_t errlen)
{
	unsigned hosts = o->hosts;
	uint64_t seed = o->seed;
	if (hosts > TRAWL_SIM_SYNC_MAX_HOSTS) {
		snprintf(err, errlen, "--sync: at most %d hosts", TRAWL_SIM_SYNC_MAX_HOSTS);
		errno = EINVAL;
		return NULL;
	}
	struct tr_sim_sync *s = calloc(1, sizeof(*s));
	if (!s)
		goto nomem;
	s->o = *o;
	s->o.changes = NULL;
	s->o.nchanges = 0;
	s->hosts = hosts;
	s->seed = seed;
	s->t0 = t0;
	s->span = span;
	s->clk = calloc(hosts, sizeof(*s->clk));
	s->changed = calloc(hosts, sizeof(*s->changed));
	s->links = calloc((size_t)hosts * hosts, sizeof(*s->links));
	if (!s->clk || !s->changed || !s->links)
		goto nomem;

	const double rates[K_N] = { o->rate, o->rpc_rate };
	for (int k = 0; k < K_N; k++) {
		double n = floor(rates[k] * (double)span / 1e9);
		s->count[k] = (uint64_t)n;
		s->period[k] = rates[k] > 0 ? 1e9 / rates[k] : 0;
	}
	/* probe keys: sender id << 32 | (seq * hosts + receiver); rpc ids:
	 * sender << 44 | receiver << 27 | seq */
	if (s->count[K_PROBE] * hosts > UINT32_MAX) {
		snprintf(err, errlen, "--sync-rate: %" PRIu64 " probes per pair exceed the key space",
			 s->count[K_PROBE]);
		goto inval;
	}
	if (s->count[K_RPC] >= (1ull << 27)) {
		snprintf(err, errlen, "--rpc-rate: %" PRIu64 " RPCs per pair exceed the id space",
			 s->count[K_RPC]);
		goto inval;
	}
	uint64_t r = sim_seed_for(seed, 0, 3, 0);
	s->salt = (uint32_t)sim_rnd(&r);

	for (unsigned h = 0; h < hosts; h++) {
		struct trawl_sim_clock *c = &s->clk[h];
		r = sim_seed_for(seed, h + 1, 3, 0);
		c->offset_ns = symmetric(&r, o->max_offset_ns);
		c->drift_ppb = symmetric(&r, (uint64_t)o->max_drift_ppb);
		if (h == 0)
			c->offset_ns = c->drift_ppb = 0;
		c->drift2_ppb = c->drift_ppb;
		c->change_ns = INT64_MAX;
	}
	for (size_t i = 0; i < o->nchanges; i++) {
		const struct trawl_sim_drift_change *d = &o->changes[i];
		if (d->host >= hosts) {
			snprintf(err, errlen, "--drift-change: no host %u (hosts 0..%u)", d->host,
				 hosts - 1);
			goto inval;
		}
		if (s->changed[d->host]) {
			snprintf(err, errlen, "--drift-change: host%u changes drift more than once",
				 d->host);
			goto inval;
		}
		s->changed[d->host] = true;
		s->clk[d->host].change_ns = (int64_t)llround(d->fraction * (double)span);
		s->clk[d->host].drift2_ppb = d->ppb;
	}
	for (unsigned a = 0; a < hosts; a++)
		for (unsigned b = 0; b < hosts; b++) {
			struct link *l = &s->links[(size_t)a * hosts + b];
			l->mind = o->delay_ns * factor(s, a, b);
			l->jitter = o->jitter_ns * factor(s, a, b);
		}
	return s;
nomem:
	snprintf(err, errlen, "%s", strerror(ENOMEM));
	tr_sim_sync_free(s);
	errno = ENOMEM;
	return NULL;
inval:
	tr_sim_sync_free(s);
	errno = EINVAL;
	return NULL;
}

void tr_sim_sync_free(struct tr_sim_sync *s)
{
	if (!s)
		return;
	free(s->clk);
	free(s->changed);
	free(s->links);
	free(s);
}

const struct trawl_sim_clock *tr_sim_sync_clocks(const struct tr_sim_sync *s)
{
	return s->clk;
}

/* ---------------------------------------------------------- generators */

struct gen {
	uint64_t rng;
	uint64_t i, n;
	uint64_t t0;
	double period, delay, jitter, factor;
	uint64_t mind;		/* floor of the minimum delay, ns */
	unsigned src, dst, kind;
	/* message i */
	uint64_t s[2];		/* true send times of the copies */
	uint64_t d[2];		/* their delays */
	bool dup, lost[2];
	int phase;		/* a sender's next copy */
};

static void gen_init(struct tr_sim_sync *s, struct gen *g, unsigned src, unsigned dst, unsigned kind)
{
	memset(g, 0, sizeof(*g));
	g->rng = sim_seed_for(s->seed, src + 1, 1000000 + dst, kind + 1);
	g->n = s->count[kind];
	g->t0 = s->t0;
	g->period = s->period[kind];
	g->factor = factor(s, src, dst);
	g->delay = s->o.delay_ns;
	g->jitter = s->o.jitter_ns;
	g->mind = (uint64_t)floor(g->delay * g->factor);
	g->src = src;
	g->dst = dst;
	g->kind = kind;
}

/* Draws message i (a fixed number of draws per message). */
static void gen_load(const struct tr_sim_sync *s, struct gen *g)
{
	if (g->i >= g->n)
		return;
	double u = sim_unit(&g->rng), v = sim_unit(&g->rng), x = sim_unit(&g->rng);
	double l0 = sim_unit(&g->rng), l1 = sim_unit(&g->rng);
	double j0 = sim_unit(&g->rng), j1 = sim_unit(&g->rng);
	uint64_t slot = (uint64_t)((double)g->i * g->period);
	uint64_t end = (uint64_t)((double)(g->i + 1) * g->period);
	g->s[0] = g->t0 + slot + (uint64_t)((double)(end - slot) * u);
	g->s[1] = g->s[0] + (uint64_t)((double)(g->t0 + end - g->s[0]) * v);
	g->dup = x < s->o.dup;
	g->lost[0] = l0 < s->o.loss;
	g->lost[1] = l1 < s->o.loss;
	g->d[0] = (uint64_t)llround((g->delay - g->jitter * log1p(-j0)) * g->factor);
	g->d[1] = (uint64_t)llround((g->delay - g->jitter * log1p(-j1)) * g->factor);
	g->phase = 0;
}

static uint64_t gen_id(const struct tr_sim_sync *s, const struct gen *g)
{
	if (g->kind == K_PROBE) {
		uint32_t sender = (uint32_t)(g->src + 1) * 0x9e3779b1u ^ s->salt;
		return (uint64_t)sender << 32 | (g->i * s->hosts + g->dst);
	}
	return (uint64_t)g->src << 44 | (uint64_t)g->dst << 27 | g->i;
}

/* ---------------------------------------------------------------- heap */

enum { E_OUT, E_IN, E_RECV };

struct hent {
	uint64_t t, tie, id;
	uint32_t ref;		/* E_OUT, E_IN: generator; E_RECV: sender host */
	uint8_t type, kind;
};

struct heap {
	struct hent *v;
	size_t n, cap;
	uint64_t tie;
};

static bool before(const struct hent *a, const struct hent *b)
{
	return a->t < b->t || (a->t == b->t && a->tie < b->tie);
}

static int heap_push(struct heap *h, struct hent e)
{
	if (h->n == h->cap) {
		size_t nc = h->cap ? 2 * h->cap : 64;
		struct hent *nv = realloc(h->v, nc * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		h->v = nv;
		h->cap = nc;
	}
	e.tie = h->tie++;
	size_t i = h->n++;
	while (i) {
		size_t p = (i - 1) / 2;
		if (!before(&e, &h->v[p]))
			break;
		h->v[i] = h->v[p];
		i = p;
	}
	h->v[i] = e;
	return 0;
}

static struct hent heap_pop(struct heap *h)
{
	struct hent top = h->v[0], e = h->v[--h->n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && before(&h->v[c + 1], &h->v[c]))
			c++;
		if (!before(&h->v[c], &e))
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n)
		h->v[i] = e;
	return top;
}

/* -------------------------------------------------------------- writing */

struct sclasses {
	const struct trawl_ctf_event_class *send[K_N], *recv[K_N];
};

static int sync_classes(struct trawl_ctf_writer *w, struct trawl_ctf_stream_class **scp,
			struct sclasses *c)
{
	struct trawl_ctf_type *u64 = trawl_ctf_type_int(w, 64, false, 10);
	struct trawl_ctf_type *str = trawl_ctf_type_string(w);
	struct trawl_ctf_type *probe = trawl_ctf_type_struct(w);
	struct trawl_ctf_type *rpc = trawl_ctf_type_struct(w);
	if (!u64 || !str || !probe || !rpc)
		return -errno;
	if (trawl_ctf_struct_add(w, probe, TRAWL_SYNC_PROBE_KEY, u64) ||
	    trawl_ctf_struct_add(w, probe, TRAWL_SYNC_PROBE_PEER, str) ||
	    trawl_ctf_struct_add(w, rpc, "msg_id", u64) || trawl_ctf_struct_add(w, rpc, "peer", str))
		return -EINVAL;
	struct trawl_ctf_stream_class *sc = trawl_ctf_writer_stream_class(w, TRAWL_CTF_HEADER_LARGE, NULL);
	if (!sc)
		return -errno;
	*scp = sc;
	/* loglevel 6: TRACE_INFO */
	c->send[K_PROBE] = trawl_ctf_writer_event_class(w, sc, TRAWL_SYNC_PROBE_SEND, 6, probe);
	c->recv[K_PROBE] = trawl_ctf_writer_event_class(w, sc, TRAWL_SYNC_PROBE_RECV, 6, probe);
	c->send[K_RPC] = trawl_ctf_writer_event_class(w, sc, "app:rpc_send", 6, rpc);
	c->recv[K_RPC] = trawl_ctf_writer_event_class(w, sc, "app:rpc_recv", 6, rpc);
	for (int k = 0; k < K_N; k++)
		if (!c->send[k] || !c->recv[k])
			return -errno;
	return 0;
}

static int put_event(struct tr_sim_sync *s, unsigned h, struct trawl_ctf_wstream *ws,
		     const struct trawl_ctf_event_class *ec, uint64_t t, uint64_t mono0,
		     uint64_t id, unsigned peer)
{
	uint8_t buf[64];
	int64_t dt = (int64_t)(t - s->t0);
	uint64_t ts = mono0 + (uint64_t)(dt + trawl_sim_clock_delta(&s->clk[h], dt));
	memcpy(buf, &id, 8);
	int n = snprintf((char *)buf + 8, sizeof(buf) - 8, "host%u", peer);
	return trawl_ctf_wstream_event(ws, ec, ts, buf, 8 + (size_t)n + 1);
}

int tr_sim_sync_write(struct tr_sim_sync *s, unsigned h, struct trawl_ctf_writer *w, uint64_t mono0)
{
	struct trawl_ctf_stream_class *sc = NULL;
	struct sclasses cl;
	int ret = sync_classes(w, &sc, &cl);
	if (ret)
		return ret;
	struct trawl_ctf_wstream *ws = trawl_ctf_writer_stream(w, sc, "sync", 0);
	if (!ws)
		return -errno;

	struct gen *g = calloc(4 * (size_t)s->hosts, sizeof(*g));
	struct heap hp = { 0 };
	size_t ng = 0;
	if (!g)
		return -ENOMEM;
	for (unsigned p = 0; !ret && p < s->hosts; p++)
		for (unsigned k = 0; !ret && k < K_N; k++) {
			if (!s->count[k])
				continue;
			if (linked(s, h, p)) {
				gen_init(s, &g[ng], h, p, k);
				gen_load(s, &g[ng]);
				ret = heap_push(&hp, (struct hent){ .t = g[ng].s[0], .ref = (uint32_t)ng,
								    .type = E_OUT });
				ng++;
			}
			if (!ret && linked(s, p, h)) {
				gen_init(s, &g[ng], p, h, k);
				gen_load(s, &g[ng]);
				ret = heap_push(&hp, (struct hent){ .t = g[ng].s[0] + g[ng].mind,
								    .ref = (uint32_t)ng, .type = E_IN });
				ng++;
			}
		}
	while (!ret && hp.n) {
		struct hent e = heap_pop(&hp);
		struct gen *x = &g[e.ref];
		switch (e.type) {
		case E_OUT:
			ret = put_event(s, h, ws, cl.send[x->kind], e.t, mono0, gen_id(s, x), x->dst);
			if (ret)
				break;
			if (x->phase == 0 && x->dup) {
				x->phase = 1;
				e.t = x->s[1];
			} else {
				x->i++;
				gen_load(s, x);
				e.t = x->s[0];
			}
			if (x->i < x->n)
				ret = heap_push(&hp, e);
			break;
		case E_IN: {
			struct kstat *st = &s->links[(size_t)x->src * s->hosts + h].k[x->kind];
			uint64_t id = gen_id(s, x);
			st->n++;
			st->dups += x->dup;
			for (int c = 0; !ret && c < 1 + x->dup; c++) {
				if (x->lost[c]) {
					st->lost++;
					continue;
				}
				ret = heap_push(&hp, (struct hent){ .t = x->s[c] + x->d[c], .id = id,
								    .ref = x->src, .type = E_RECV,
								    .kind = (uint8_t)x->kind });
			}
			x->i++;
			gen_load(s, x);
			e.t = x->s[0] + x->mind;
			if (!ret && x->i < x->n)
				ret = heap_push(&hp, e);
			break;
		}
		default:
			ret = put_event(s, h, ws, cl.recv[e.kind], e.t, mono0, e.id, e.ref);
			break;
		}
	}
	free(hp.v);
	free(g);
	return ret;
}

/* ---------------------------------------------------------------- truth */

/* ppb as ppm, exactly: "41.5", "-87.25", "0" */
static const char *ppm(char *buf, size_t len, int64_t ppb)
{
	uint64_t a = ppb < 0 ? -(uint64_t)ppb : (uint64_t)ppb;
	int n = snprintf(buf, len, "%s%" PRIu64 ".%03" PRIu64, ppb < 0 ? "-" : "", a / 1000,
			 a % 1000);
	while (n > 0 && buf[n - 1] == '0')
		buf[--n] = 0;
	if (n > 0 && buf[n - 1] == '.')
		buf[--n] = 0;
	return buf;
}

/*
 * Written through the output-file helper (util/outfile.h), as every output
 * file: a symbolic link at path is refused, not followed; a file there is
 * replaced whole once the new one is complete. 0 or -errno, the message
 * (naming path) in err.
 */
int tr_sim_sync_truth(const struct tr_sim_sync *s, const char *path, char *err, size_t errlen)
{
	static const char *const topo[] = { "mesh", "star", "chain", "split" };
	struct tr_outfile of;
	int ret = tr_outfile_open(&of, path, 0, 0666, err, errlen);
	if (ret)
		return ret;
	FILE *f = tr_outfile_stdio(&of);
	if (!f) {
		tr_outfile_release(&of);
		snprintf(err, errlen, "%s: %s", path, strerror(ENOMEM));
		return -ENOMEM;
	}
	char a[48], b[48];
	fprintf(f, "# trawl simulate truth 1\n");
	fprintf(f, "start_ns %" PRIu64 "\n", s->t0);
	fprintf(f, "# host NAME offset_ns OFFSET drift_ppm DRIFT [change_ns T drift2_ppm DRIFT2]\n");
	for (unsigned h = 0; h < s->hosts; h++) {
		const struct trawl_sim_clock *c = &s->clk[h];
		fprintf(f, "host host%u offset_ns %" PRId64 " drift_ppm %s", h, c->offset_ns,
			ppm(a, sizeof(a), c->drift_ppb));
		if (s->changed[h])
			fprintf(f, " change_ns %" PRIu64 " drift2_ppm %s",
				s->t0 + (uint64_t)c->change_ns, ppm(b, sizeof(b), c->drift2_ppb));
		fputc('\n', f);
	}
	fprintf(f, "# local(t) = t + OFFSET + DRIFT * 1e-6 * (t - start_ns), rounded to the"
		   " nearest ns; after change_ns the drift is DRIFT2, continuous\n");
	fprintf(f, "# span_ns %" PRIu64 " (messages are sent in [start_ns, start_ns + span_ns))\n",
		s->span);
	fprintf(f, "# topology %s one_way %d sync_rate %.15g rpc_rate %.15g loss %.15g dup %.15g"
		   " asym %.15g\n", topo[s->o.topology], s->o.one_way, s->o.rate, s->o.rpc_rate,
		s->o.loss, s->o.dup, s->o.asym);
	fprintf(f, "# delay = (min_delay + exponential jitter) * factor, factor = asym from a"
		   " higher- to a lower-numbered host, else 1; per directed pair, in ns:\n");
	fprintf(f, "# link SRC DST min_delay_ns D jitter_mean_ns J probes N probe_dups N"
		   " probe_lost N rpcs N rpc_dups N rpc_lost N\n");
	for (unsigned x = 0; x < s->hosts; x++)
		for (unsigned y = 0; y < s->hosts; y++) {
			if (!linked(s, x, y))
				continue;
			const struct link *l = &s->links[(size_t)x * s->hosts + y];
			fprintf(f, "# link host%u host%u min_delay_ns %.15g jitter_mean_ns %.15g"
				   " probes %" PRIu64 " probe_dups %" PRIu64 " probe_lost %" PRIu64
				   " rpcs %" PRIu64 " rpc_dups %" PRIu64 " rpc_lost %" PRIu64 "\n",
				x, y, l->mind, l->jitter, l->k[K_PROBE].n, l->k[K_PROBE].dups,
				l->k[K_PROBE].lost, l->k[K_RPC].n, l->k[K_RPC].dups, l->k[K_RPC].lost);
		}
	ret = tr_outfile_commit(&of, err, errlen);	/* flushes f: a write error is its own */
	tr_outfile_release(&of);
	return ret;
}

void tr_sim_sync_stats(const struct tr_sim_sync *s, struct trawl_sim_result *st)
{
	st->probes = st->rpcs = st->sends = st->recvs = st->lost = st->dups = 0;
	for (size_t i = 0; i < (size_t)s->hosts * s->hosts; i++)
		for (int k = 0; k < K_N; k++) {
			const struct kstat *x = &s->links[i].k[k];
			*(k == K_PROBE ? &st->probes : &st->rpcs) += x->n;
			st->sends += x->n + x->dups;
			st->dups += x->dups;
			st->lost += x->lost;
			st->recvs += x->n + x->dups - x->lost;
		}
}
