/* SPDX-License-Identifier: MIT */
/*
 * test-sync-store - sync points found in traces (lib/sync/points.c) and the
 * stored result (lib/sync/store.c).
 *
 * A generator writes sessions with the CTF writer: nodes with known clocks
 * (offset, drift, an optional drift change) exchanging probes, TCP segments
 * and application messages (integer and string keys) with known delays,
 * loss and duplicates, plus SESSION/truth.txt. The tests check the matching
 * (messages, lost, duplicates per pair and direction; integer and string
 * --match keys), batch == incremental, the truth within the bound, a drift
 * change marked FAIL, the sync.txt round trip and its errors, and where
 * the store is found.
 *
 * `test-sync-store --make-session DIR [options]` writes such a session for
 * the end-to-end tests (see usage below).
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "trawl/pipe.h"
#include "trawl/ctf.h"
#include "trawl/sync.h"

#define T0 1700000000000000000LL
#define MAXH 8

/* ---------------------------------------------------------- generator */

struct gcfg {
	unsigned nhosts;
	double seconds, rate, rpc_rate;
	double delay_us, jitter_us, asym, loss, dup;
	bool one_way, split, tcp, chain;
	uint64_t seed;
	uint64_t kfreq;			/* kernel trace clock frequency */
	double off_ns[MAXH], drift_ppm[MAXH];
	double change_frac[MAXH], drift2_ppm[MAXH];	/* change_frac 0: none */
	/* what was generated, per directed pair [i][j] */
	uint64_t probes[MAXH][MAXH], lost[MAXH][MAXH], dups[MAXH][MAXH];
	uint64_t rpcs, tcp_ok, tcp_dup;
	uint64_t tcp_ok_dir[2], tcp_dup_dir[2];	/* from node0 / node1 */
};

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double rng_u(uint64_t *s)
{
	return (double)(rng_next(s) >> 11) * 0x1p-53;
}

/* Host h's clock at true time t (ns since the epoch). */
static int64_t local_of(const struct gcfg *c, unsigned h, long double t)
{
	long double d = t - T0, v;
	long double tc = c->change_frac[h] > 0 ? c->change_frac[h] * c->seconds * 1e9 : -1;

	if (tc > 0 && d > tc)
		v = t + c->off_ns[h] + c->drift_ppm[h] * 1e-6L * tc + c->drift2_ppm[h] * 1e-6L * (d - tc);
	else
		v = t + c->off_ns[h] + c->drift_ppm[h] * 1e-6L * d;
	return (int64_t)floorl(v + 0.5L);
}

enum { C_PSEND, C_PRECV, C_TSEND, C_TRECV, C_RSEND, C_RRECV, C_QSEND, C_QRECV, C_TICK, NCLS };

struct gev {
	int64_t ts;
	int cls;
	uint64_t key;
	unsigned peer;
	uint32_t tcp[6];
};

struct gvec {
	struct gev *e;
	size_t n, cap;
};

static void push(struct gvec *v, struct gev e)
{
	if (v->n == v->cap) {
		v->cap = v->cap ? v->cap * 2 : 1024;
		v->e = realloc(v->e, v->cap * sizeof(*v->e));
		if (!v->e)
			abort();
	}
	v->e[v->n++] = e;
}

static int by_ts(const void *a, const void *b)
{
	const struct gev *x = a, *y = b;
	return (x->ts > y->ts) - (x->ts < y->ts);
}

static bool linked(const struct gcfg *c, unsigned i, unsigned j)
{
	if (i == j || (c->one_way && i > j))
		return false;
	if (c->split && (i < c->nhosts / 2) != (j < c->nhosts / 2))
		return false;
	if (c->chain && (i > j ? i - j : j - i) != 1)
		return false;
	return true;
}

static void hname(char *b, size_t n, unsigned h)
{
	snprintf(b, n, "node%u", h);
}

static int write_trace(const char *dir, const struct gcfg *c, unsigned h, bool kernel,
		       const struct gvec *v)
{
	char path[4096], host[32];
	struct trawl_ctf_writer_opts o = { .sz = sizeof(o) };
	uint64_t freq = kernel && c->kfreq ? c->kfreq : 1000000000u;
	int64_t off_s = 1700000000 - 4000 - 17 * (int64_t)h;

	hname(host, sizeof(host), h);
	snprintf(path, sizeof(path), "%s/%s/%s", dir, host, kernel ? "kernel" : "ust");
	o.path = path;
	o.hostname = host;
	o.domain = kernel ? "kernel" : "ust";
	o.clock_freq = freq;
	o.clock_offset_s = off_s;
	o.clock_offset = 0;
	o.packet_size = 16384;
	struct trawl_ctf_writer *w = trawl_ctf_writer_new(&o);
	if (!w)
		return -1;
	struct trawl_ctf_type *u64 = trawl_ctf_type_int(w, 64, false, 10);
	struct trawl_ctf_type *u32 = trawl_ctf_type_int(w, 32, false, 10);
	struct trawl_ctf_type *u16 = trawl_ctf_type_int(w, 16, false, 10);
	struct trawl_ctf_type *u8 = trawl_ctf_type_int(w, 8, false, 16);
	struct trawl_ctf_type *str = trawl_ctf_type_string(w);
	struct trawl_ctf_stream_class *sc = trawl_ctf_writer_stream_class(w, kernel ?
		TRAWL_CTF_HEADER_COMPACT : TRAWL_CTF_HEADER_LARGE, NULL);
	const struct trawl_ctf_event_class *ec[NCLS] = { 0 };
	if (kernel) {
		struct trawl_ctf_type *f = trawl_ctf_type_struct(w);
		trawl_ctf_struct_add(w, f, "n", u64);
		ec[C_TICK] = trawl_ctf_writer_event_class(w, sc, "timer_tick", INT64_MIN, f);
	} else {
		static const char *const names[] = {
			"trawl_sync:probe_send", "trawl_sync:probe_recv", "trawl_sync:tcp_send",
			"trawl_sync:tcp_recv", "app:rpc_send", "app:rpc_recv", "app:req_send",
			"app:req_recv",
		};
		for (int k = 0; k < C_TICK; k++) {
			struct trawl_ctf_type *f = trawl_ctf_type_struct(w);
			if (k <= C_PRECV) {
				trawl_ctf_struct_add(w, f, "key", u64);
				trawl_ctf_struct_add(w, f, "peer", str);
			} else if (k <= C_TRECV) {
				trawl_ctf_struct_add(w, f, "saddr", u32);
				trawl_ctf_struct_add(w, f, "daddr", u32);
				trawl_ctf_struct_add(w, f, "sport", u16);
				trawl_ctf_struct_add(w, f, "dport", u16);
				trawl_ctf_struct_add(w, f, "seq", u32);
				trawl_ctf_struct_add(w, f, "ack", u32);
				trawl_ctf_struct_add(w, f, "flags", u8);
				trawl_ctf_struct_add(w, f, "len", u32);
			} else if (k <= C_RRECV) {
				trawl_ctf_struct_add(w, f, "pad", u32);
				trawl_ctf_struct_add(w, f, "msg_id", u64);
			} else {
				trawl_ctf_struct_add(w, f, "req", str);
			}
			ec[k] = trawl_ctf_writer_event_class(w, sc, names[k], 6, f);
		}
	}
	struct trawl_ctf_wstream *s = trawl_ctf_writer_stream(w, sc, "channel0", 0);
	int rc = s ? 0 : -1;
	for (size_t i = 0; !rc && i < v->n; i++) {
		const struct gev *e = &v->e[i];
		uint8_t buf[256];
		struct trawl_ctf_buf b;
		char pn[32], rq[32];
		__int128 cyc = ((__int128)e->ts - (__int128)off_s * 1000000000) * freq / 1000000000;

		if ((e->cls == C_TICK) != kernel)
			continue;
		trawl_ctf_buf_init(&b, buf, sizeof(buf));
		hname(pn, sizeof(pn), e->peer);
		switch (e->cls) {
		case C_PSEND:
		case C_PRECV:
			trawl_ctf_buf_u64(&b, e->key);
			trawl_ctf_buf_str(&b, pn);
			break;
		case C_TSEND:
		case C_TRECV:
			trawl_ctf_buf_u32(&b, e->tcp[0]);
			trawl_ctf_buf_u32(&b, e->tcp[1]);
			trawl_ctf_buf_u16(&b, (uint16_t)e->tcp[2]);
			trawl_ctf_buf_u16(&b, (uint16_t)e->tcp[3]);
			trawl_ctf_buf_u32(&b, e->tcp[4]);
			trawl_ctf_buf_u32(&b, e->tcp[5]);
			trawl_ctf_buf_u8(&b, 0x10);
			trawl_ctf_buf_u32(&b, 0);
			break;
		case C_RSEND:
		case C_RRECV:
			trawl_ctf_buf_u32(&b, 7);
			trawl_ctf_buf_u64(&b, e->key);
			break;
		case C_QSEND:
		case C_QRECV:
			snprintf(rq, sizeof(rq), "req-%llu", (unsigned long long)e->key);
			trawl_ctf_buf_str(&b, rq);
			break;
		default:
			trawl_ctf_buf_u64(&b, e->key);
		}
		rc = trawl_ctf_wstream_event(s, ec[e->cls], (uint64_t)cyc, buf, b.len);
	}
	if (!rc)
		rc = trawl_ctf_writer_close(w);
	trawl_ctf_writer_free(w);
	return rc;
}

/* Writes the session and its truth.txt; fills the counts in c. 0 or -1. */
static int make_session(const char *dir, struct gcfg *c)
{
	struct gvec v[MAXH] = { { 0 } };
	uint64_t rng = c->seed * 0x2545f4914f6cdd1dull + 1;
	uint64_t key = 0, msg_id = 1000;
	int rc = 0;
	char path[4096];
	FILE *f;

	memset(c->probes, 0, sizeof(c->probes));
	memset(c->lost, 0, sizeof(c->lost));
	memset(c->dups, 0, sizeof(c->dups));
	c->rpcs = c->tcp_ok = c->tcp_dup = 0;
	memset(c->tcp_ok_dir, 0, sizeof(c->tcp_ok_dir));
	memset(c->tcp_dup_dir, 0, sizeof(c->tcp_dup_dir));
	if (mkdir(dir, 0755) && errno != EEXIST)
		return -1;
	for (unsigned i = 0; i < c->nhosts; i++)
		for (unsigned j = 0; j < c->nhosts; j++) {
			if (!linked(c, i, j))
				continue;
			size_t n = (size_t)(c->rate * c->seconds);
			for (size_t k = 0; k < n; k++) {
				long double s = T0 + (k + 0.5 + 0.4 * (rng_u(&rng) - 0.5)) * 1e9 / c->rate;
				double d = c->delay_us * 1e3 * (i > j ? c->asym : 1) -
					   c->jitter_us * 1e3 * log(1 - rng_u(&rng));
				bool lost = rng_u(&rng) < c->loss, dup = rng_u(&rng) < c->dup;
				key++;
				struct gev e = { .ts = local_of(c, i, s), .cls = C_PSEND, .key = key, .peer = j };
				push(&v[i], e);
				if (dup) {
					e.ts += 1000;
					push(&v[i], e);
				}
				if (!lost) {
					e = (struct gev){ .ts = local_of(c, j, s + d), .cls = C_PRECV,
							  .key = key, .peer = i };
					push(&v[j], e);
				}
				c->probes[i][j]++;
				if (dup)
					c->dups[i][j]++;
				else if (lost)
					c->lost[i][j]++;
				/* tcp segments between node0 and node1 */
				if (c->tcp && i + j == 1 && !lost) {
					bool tdup = k % 10 == 3;
					struct gev t = { .ts = local_of(c, i, s) + 500, .cls = C_TSEND };
					t.tcp[0] = 0x0a000001 + i;
					t.tcp[1] = 0x0a000001 + j;
					t.tcp[2] = (uint32_t)(40000 + i);
					t.tcp[3] = (uint32_t)(40000 + j);
					t.tcp[4] = (uint32_t)(k * 100);
					t.tcp[5] = (uint32_t)(k * 7);
					push(&v[i], t);
					struct gev r = t;
					r.cls = C_TRECV;
					r.ts = local_of(c, j, s + d) + 500;
					push(&v[j], r);
					if (tdup) {
						t.ts += 2000;
						r.ts += 2000;
						push(&v[i], t);
						push(&v[j], r);
						c->tcp_dup++;
						c->tcp_dup_dir[i]++;
					} else {
						c->tcp_ok++;
						c->tcp_ok_dir[i]++;
					}
				}
			}
			size_t nr = (size_t)(c->rpc_rate * c->seconds);
			for (size_t k = 0; k < nr; k++) {
				long double s = T0 + (k + 0.3) * 1e9 / c->rpc_rate;
				double d = c->delay_us * 1e3 * (i > j ? c->asym : 1) -
					   c->jitter_us * 1e3 * log(1 - rng_u(&rng));
				msg_id++;
				push(&v[i], (struct gev){ .ts = local_of(c, i, s), .cls = C_RSEND, .key = msg_id });
				push(&v[i], (struct gev){ .ts = local_of(c, i, s), .cls = C_QSEND, .key = msg_id });
				push(&v[j], (struct gev){ .ts = local_of(c, j, s + d), .cls = C_RRECV, .key = msg_id });
				push(&v[j], (struct gev){ .ts = local_of(c, j, s + d), .cls = C_QRECV, .key = msg_id });
				c->rpcs++;
			}
		}
	for (unsigned h = 0; h < c->nhosts; h++) {
		for (long double t = T0; t < T0 + c->seconds * 1e9; t += 10e6)
			push(&v[h], (struct gev){ .ts = local_of(c, h, t), .cls = C_TICK,
						  .key = (uint64_t)((t - T0) / 10e6) });
		qsort(v[h].e, v[h].n, sizeof(*v[h].e), by_ts);
		if (write_trace(dir, c, h, false, &v[h]) || write_trace(dir, c, h, true, &v[h]))
			rc = -1;
		free(v[h].e);
	}
	snprintf(path, sizeof(path), "%s/truth.txt", dir);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "# trawl simulate truth 1\nstart_ns %lld\n", (long long)T0);
	fprintf(f, "# host NAME offset_ns OFFSET drift_ppm DRIFT [change_ns T drift2_ppm DRIFT2]\n");
	for (unsigned h = 0; h < c->nhosts; h++) {
		fprintf(f, "host node%u offset_ns %.0f drift_ppm %.6f", h, c->off_ns[h], c->drift_ppm[h]);
		if (c->change_frac[h] > 0)
			fprintf(f, " change_ns %lld drift2_ppm %.6f",
				(long long)(T0 + (long long)(c->change_frac[h] * c->seconds * 1e9)),
				c->drift2_ppm[h]);
		fputc('\n', f);
	}
	return fclose(f) || rc ? -1 : 0;
}

static void default_cfg(struct gcfg *c)
{
	memset(c, 0, sizeof(*c));
	c->nhosts = 3;
	c->seconds = 4;
	c->rate = 100;
	c->rpc_rate = 20;
	c->delay_us = 50;
	c->jitter_us = 20;
	c->asym = 1;
	c->seed = 1;
	for (unsigned h = 1; h < MAXH; h++) {
		c->off_ns[h] = (h % 2 ? 1 : -1) * (1.5e9 * h + 123457);
		c->drift_ppm[h] = (h % 2 ? 41.5 : -87.25) / (double)((h + 1) / 2);
	}
}

static int make_main(int argc, char **argv)
{
	struct gcfg c;
	const char *dir = argv[2];

	default_cfg(&c);
	for (int i = 3; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--one-way"))
			c.one_way = true;
		else if (!strcmp(a, "--split"))
			c.split = true;
		else if (!strcmp(a, "--chain"))
			c.chain = true;
		else if (!strcmp(a, "--tcp"))
			c.tcp = true;
		else if (v && !strcmp(a, "--hosts"))
			c.nhosts = (unsigned)atoi(v), i++;
		else if (v && !strcmp(a, "--seconds"))
			c.seconds = atof(v), i++;
		else if (v && !strcmp(a, "--rate"))
			c.rate = atof(v), i++;
		else if (v && !strcmp(a, "--rpc-rate"))
			c.rpc_rate = atof(v), i++;
		else if (v && !strcmp(a, "--delay"))
			c.delay_us = atof(v), i++;
		else if (v && !strcmp(a, "--jitter"))
			c.jitter_us = atof(v), i++;
		else if (v && !strcmp(a, "--asym"))
			c.asym = atof(v), i++;
		else if (v && !strcmp(a, "--loss"))
			c.loss = atof(v), i++;
		else if (v && !strcmp(a, "--dup"))
			c.dup = atof(v), i++;
		else if (v && !strcmp(a, "--seed"))
			c.seed = strtoull(v, NULL, 10), i++;
		else if (v && !strcmp(a, "--kernel-freq"))
			c.kfreq = strtoull(v, NULL, 10), i++;
		else if (v && !strcmp(a, "--drift-change")) {	/* HOST:FRACTION:PPM */
			unsigned h;
			double fr, ppm;
			if (sscanf(v, "%u:%lf:%lf", &h, &fr, &ppm) != 3 || h >= MAXH)
				return 2;
			c.change_frac[h] = fr;
			c.drift2_ppm[h] = ppm;
			i++;
		} else {
			fprintf(stderr, "unknown option %s\n", a);
			return 2;
		}
	}
	if (c.nhosts < 1 || c.nhosts > MAXH)
		return 2;
	if (make_session(dir, &c)) {
		fprintf(stderr, "cannot write %s: %s\n", dir, strerror(errno));
		return 1;
	}
	printf("messages");
	for (unsigned i = 0; i < c.nhosts; i++)
		for (unsigned j = 0; j < c.nhosts; j++)
			if (c.probes[i][j])
				printf(" node%u>node%u:%llu/%llu/%llu", i, j,
				       (unsigned long long)c.probes[i][j], (unsigned long long)c.lost[i][j],
				       (unsigned long long)c.dups[i][j]);
	printf(" rpcs:%llu tcp:%llu/%llu\n", (unsigned long long)c.rpcs,
	       (unsigned long long)c.tcp_ok, (unsigned long long)c.tcp_dup);
	return 0;
}

/* ------------------------------------------------------------- tests */

static char tmpdir[256];

static void test_match_parse(void)
{
	struct trawl_sync_match m;
	char err[256];

	is_int(trawl_sync_match_parse("app:send.msg_id = app:recv.msg_id", &m, err, sizeof(err)), 0,
	       "match: parse a spec");
	is_str(m.send_event, "app:send", "match: send event");
	is_str(m.send_field, "msg_id", "match: send field");
	is_str(m.recv_event, "app:recv", "match: recv event");
	is_str(m.recv_field, "msg_id", "match: recv field");
	trawl_sync_match_release(&m);
	is_int(trawl_sync_match_parse("a.b.c=d.e", &m, err, sizeof(err)), 0,
	       "match: no spaces, the last dot splits");
	is_str(m.send_event, "a.b", "match: event with a dot");
	trawl_sync_match_release(&m);
	static const char *const bad[] = { "a.b", "a.b = c", "a = b.c", ".b = c.d", "a. = c.d",
					   "a.b = c.d = e.f", "", "a b.c = d.e" };
	int nbad = 0;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		nbad += trawl_sync_match_parse(bad[i], &m, err, sizeof(err)) == -EINVAL;
	is_int(nbad, 8, "match: 8 malformed specs are -EINVAL");
	ok(strstr(err, "SEND_EVENT.FIELD = RECV_EVENT.FIELD") != NULL, "match: the error says the form (%s)", err);
}

static int entry_eq(const struct trawl_sync_store_entry *a, const struct trawl_sync_store_entry *b)
{
	return !strcmp(a->host, b->host) && a->xform.t0 == b->xform.t0 &&
	       a->xform.y0 == b->xform.y0 && a->xform.slope == b->xform.slope &&
	       a->quality == b->quality && !!a->is_ref == !!b->is_ref &&
	       !strcmp(a->reference, b->reference) && a->group == b->group && a->hops == b->hops &&
	       !strcmp(a->path, b->path) && a->first_ts == b->first_ts && a->last_ts == b->last_ts &&
	       a->bound_start == b->bound_start && a->bound_mid == b->bound_mid &&
	       a->bound_end == b->bound_end && a->bound_max == b->bound_max;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void test_store(void)
{
	struct trawl_sync_store_entry e[3] = {
		{ .host = "node0", .xform = { 0, 0, (int64_t)1 << 60 }, .quality = TRAWL_SYNC_ACCURATE,
		  .is_ref = 1, .reference = "node0", .path = "node0", .first_ts = T0, .last_ts = T0 + 5,
		  .bound_start = 0, .bound_mid = 0, .bound_end = 0, .bound_max = 0 },
		{ .host = "node1", .xform = { T0 + 3000000000LL, T0 - 1, ((int64_t)1 << 60) - 47845156347LL },
		  .quality = TRAWL_SYNC_ACCURATE, .reference = "node0", .hops = 1, .path = "node1,node0",
		  .first_ts = T0 + 2, .last_ts = T0 + 4000000000LL, .bound_start = 31000,
		  .bound_mid = 20011, .bound_end = 31245, .bound_max = 31245 },
		{ .host = "node2", .xform = { -5, 9, ((int64_t)1 << 60) + 1 }, .quality = TRAWL_SYNC_FAIL,
		  .reference = "node0", .hops = 2, .path = "node2,node1,node0", .group = 0,
		  .first_ts = -3, .last_ts = 7, .bound_start = TRAWL_SYNC_UNBOUNDED,
		  .bound_mid = TRAWL_SYNC_UNBOUNDED, .bound_end = TRAWL_SYNC_UNBOUNDED,
		  .bound_max = TRAWL_SYNC_UNBOUNDED },
	};
	char path[512], err[512];
	struct trawl_sync_store *s;

	snprintf(path, sizeof(path), "%s/sync.txt", tmpdir);
	is_int(trawl_sync_store_write(path, e, 3, err, sizeof(err)), 0, "store: write 3 hosts");
	s = trawl_sync_store_load(path, err, sizeof(err));
	ok(s != NULL, "store: load it back (%s)", s ? "ok" : err);
	if (!s)
		return;
	is_int(s->n, 3, "store: 3 entries");
	is_int(s->groups, 1, "store: 1 group");
	int same = 0;
	for (size_t i = 0; i < 3 && i < s->n; i++)
		same += entry_eq(&s->entries[i], &e[i]);
	is_int(same, 3, "store: every field round-trips (xform, quality, bounds, unbounded, path)");
	is_int(s->nfixes, 3, "store: 3 reader corrections");
	ok(s->nfixes == 3 && !strcmp(s->fixes[1].host, "node1") &&
	   s->fixes[1].xform.slope == e[1].xform.slope && s->fixes[1].xform.y0 == e[1].xform.y0,
	   "store: the corrections are the hosts' transforms");
	trawl_sync_store_free(s);

	struct trawl_sync_store_entry bad = e[0];
	bad.host = "no de";
	is_int(trawl_sync_store_write(path, &bad, 1, err, sizeof(err)), -EINVAL,
	       "store: a host name with a space is refused");

	static const struct {
		const char *text, *want;
	} cases[] = {
		{ "", "empty" },
		{ "# something else\n", ":1: not a trawl sync result" },
		{ "# trawl sync 9\n", "version 9" },
		{ "# trawl sync 1\nhost a t0 1 y0 2\n", ":2: t0, y0 and slope are required" },
		{ "# trawl sync 1\nhost a t0 1 y0 2 slope 0\n", ":2: bad value '0' of slope" },
		{ "# trawl sync 1\nhost a t0 x y0 2 slope 1\n", ":2: bad value 'x' of t0" },
		{ "# trawl sync 1\nhost a t0 1 y0 2 slope 1 quality great\n", ":2: bad value 'great'" },
		{ "# trawl sync 1\n#c\nhost a t0 1 y0 2 slope 1 bound_mid\n", ":3: a key without a value" },
		{ "# trawl sync 1\nhost a t0 1 y0 2 slope 1\nhost a t0 1 y0 2 slope 1\n", ":3: host a twice" },
		{ "# trawl sync 1\ngroups x\n", ":2: bad groups line" },
	};
	int good = 0;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		write_file(path, cases[i].text);
		s = trawl_sync_store_load(path, err, sizeof(err));
		if (!s && errno == EINVAL && strstr(err, cases[i].want))
			good++;
		else
			printf("# case %zu: %s\n", i, s ? "loaded" : err);
		trawl_sync_store_free(s);
	}
	is_int(good, 10, "store: 10 malformed files give EINVAL and FILE:LINE: why");
	write_file(path, "# trawl sync 1\nfuture line\nhost a t0 1 y0 2 slope 3 newkey 5 quality one-way\n");
	s = trawl_sync_store_load(path, err, sizeof(err));
	ok(s && s->n == 1 && s->entries[0].quality == TRAWL_SYNC_ONE_WAY &&
	   !strcmp(s->entries[0].reference, "a") && s->entries[0].bound_mid == TRAWL_SYNC_UNBOUNDED,
	   "store: unknown lines and keys are ignored, defaults filled");
	trawl_sync_store_free(s);
	unlink(path);
	char nx[600];
	snprintf(nx, sizeof(nx), "%s/nope.txt", tmpdir);
	s = trawl_sync_store_load(nx, err, sizeof(err));
	ok(!s && errno == ENOENT, "store: a missing file is ENOENT");
}

static void test_find(void)
{
	char sess[512], tr[600], p[700];
	const char *paths[1];
	char *f;

	snprintf(sess, sizeof(sess), "%s/fsess", tmpdir);
	snprintf(tr, sizeof(tr), "%s/h1/ust", sess);
	mkdir(sess, 0755);
	snprintf(p, sizeof(p), "%s/h1", sess);
	mkdir(p, 0755);
	mkdir(tr, 0755);
	paths[0] = tr;
	f = trawl_sync_store_find(paths, 1);
	ok(!f && errno == ENOENT, "find: none yet");
	free(f);
	snprintf(p, sizeof(p), "%s/sync.txt", sess);
	write_file(p, "# trawl sync 1\n");
	f = trawl_sync_store_find(paths, 1);
	ok(f && strstr(f, "/fsess/sync.txt"), "find: two levels above a trace (%s)", f ? f : "none");
	free(f);
	paths[0] = sess;
	f = trawl_sync_store_find(paths, 1);
	ok(f && !strcmp(f, p), "find: in the session itself, as given");
	free(f);
	unlink(p);
}

/* The truth: B's clock at the true time of A's clock value x. */
static long double true_time(const struct gcfg *c, unsigned h, int64_t v)
{
	/* invert local_of (linear, no change) */
	return (long double)T0 + ((long double)(v - T0) - c->off_ns[h]) / (1 + c->drift_ppm[h] * 1e-6L);
}

static void test_points(void)
{
	struct gcfg c;
	char dir[512], err[512];

	default_cfg(&c);
	c.loss = 0.05;
	c.dup = 0.03;
	c.tcp = true;
	c.asym = 1.5;
	snprintf(dir, sizeof(dir), "%s/sess", tmpdir);
	ok(make_session(dir, &c) == 0, "points: write a 3-node session");

	struct trawl_sync_match m[2];
	trawl_sync_match_parse("app:rpc_send.msg_id = app:rpc_recv.msg_id", &m[0], err, sizeof(err));
	trawl_sync_match_parse("app:req_send.req=app:req_recv.req", &m[1], err, sizeof(err));
	struct trawl_sync_points_opts po = { .size = sizeof(po), .matches = m, .nmatches = 2 };
	const char *paths[] = { dir };
	struct trawl_sync_points *p = trawl_sync_points_read(paths, 1, &po, err, sizeof(err));
	ok(p != NULL, "points: read (%s)", p ? "ok" : err);
	if (!p)
		return;
	is_int(p->nhosts, 3, "points: 3 hosts");
	ok(p->nhosts == 3 && !strcmp(p->hosts[0].name, "node0") && p->hosts[2].npaths == 2,
	   "points: hosts sorted, two traces each");
	is_int(p->nlinks, 3, "points: 3 links");
	int counts_ok = 0;
	for (size_t i = 0; i < p->nlinks; i++) {
		const struct trawl_sync_link *l = &p->links[i];
		size_t a = l->a, b = l->b;
		bool t = a + b == 1;
		uint64_t want_ab = c.probes[a][b] - c.lost[a][b] - c.dups[a][b] + (t ? c.tcp_ok_dir[a] : 0);
		uint64_t want_ba = c.probes[b][a] - c.lost[b][a] - c.dups[b][a] + (t ? c.tcp_ok_dir[b] : 0);
		uint64_t rpc = (uint64_t)(c.rpc_rate * c.seconds) * 2;	/* int + string keys */
		if (l->lost_ab == c.lost[a][b] && l->lost_ba == c.lost[b][a] &&
		    l->dup_ab == c.dups[a][b] + (t ? c.tcp_dup_dir[a] : 0) &&
		    l->dup_ba == c.dups[b][a] + (t ? c.tcp_dup_dir[b] : 0) &&
		    l->n_ab == want_ab + rpc && l->n_ba == want_ba + rpc)
			counts_ok++;
		else
			printf("# link %zu-%zu: ab %zu lost %llu dup %llu (want %llu+, %llu, %llu)\n", a, b,
			       l->n_ab, (unsigned long long)l->lost_ab, (unsigned long long)l->dup_ab,
			       (unsigned long long)(want_ab + rpc), (unsigned long long)c.lost[a][b],
			       (unsigned long long)c.dups[a][b]);
	}
	is_int(counts_ok, 3, "points: lost and duplicates per direction as generated");
	uint64_t probes = 0;
	for (unsigned i = 0; i < 3; i++)
		for (unsigned j = 0; j < 3; j++)
			probes += c.probes[i][j] - c.lost[i][j] - c.dups[i][j];
	is_int(p->by_kind[0], probes, "points: every probe message matched");
	is_int(p->by_kind[1], c.tcp_ok, "points: tcp segments matched, repeated tuples ignored");
	is_int(p->by_kind[2], 2 * c.rpcs, "points: --match messages, integer and string keys");
	is_int(p->same_host, 0, "points: no same-host key");
	ok(p->hosts[1].first_ts <= local_of(&c, 1, T0) + 1 &&
	   p->hosts[1].last_ts >= local_of(&c, 1, T0 + (c.seconds - 0.01) * 1e9) - 1,
	   "points: a node's span covers all its events");

	/* batch == incremental; the truth within the bound */
	int agree = 0, within = 0, checks = 0, accurate = 0;
	for (size_t i = 0; i < p->nlinks; i++) {
		struct trawl_sync_pair rb, ri;
		const struct trawl_sync_link *l = &p->links[i];
		if (trawl_sync_link_compute(l, 0, NULL, &rb, err, sizeof(err)) ||
		    trawl_sync_link_compute(l, 1, NULL, &ri, err, sizeof(err)))
			continue;
		accurate += rb.quality == TRAWL_SYNC_ACCURATE;
		if (rb.quality == ri.quality && rb.fwd.t0 == ri.fwd.t0 && rb.fwd.y0 == ri.fwd.y0 &&
		    rb.fwd.slope == ri.fwd.slope && rb.inv.slope == ri.inv.slope)
			agree++;
		for (int k = 0; k <= 10; k++) {
			int64_t x = local_of(&c, (unsigned)l->a, T0 + c.seconds * 1e9 * k / 10);
			long double truth = (long double)local_of(&c, (unsigned)l->b,
								   true_time(&c, (unsigned)l->a, x));
			long double est = trawl_sync_xform_apply(&rb.fwd, x);
			int64_t b = trawl_sync_pair_bound(&rb, x);
			checks++;
			within += fabsl(truth - est) <= (long double)b + 1;
		}
		trawl_sync_pair_release(&rb);
		trawl_sync_pair_release(&ri);
	}
	is_int(accurate, 3, "points: every pair accurate");
	is_int(agree, 3, "points: batch and incremental give the same transforms");
	is_int(within, checks, "points: the truth within the bound at 11 instants per pair");
	trawl_sync_points_free(p);

	/* probes only: the user matches are not counted */
	po.nmatches = 0;
	po.no_tcp = 1;
	p = trawl_sync_points_read(paths, 1, &po, err, sizeof(err));
	ok(p && p->by_kind[1] == 0 && p->by_kind[2] == 0 && p->by_kind[0] == probes,
	   "points: --no-tcp and no match: probes only");
	trawl_sync_points_free(p);
	trawl_sync_match_release(&m[0]);
	trawl_sync_match_release(&m[1]);

	/* a drift change of 60 ppm at half of node2's trace: FAIL, never silent */
	default_cfg(&c);
	c.change_frac[2] = 0.5;
	c.drift2_ppm[2] = c.drift_ppm[2] + 60;
	c.delay_us = 5;
	c.jitter_us = 2;
	snprintf(dir, sizeof(dir), "%s/bend", tmpdir);
	make_session(dir, &c);
	p = trawl_sync_points_read(paths, 1, NULL, err, sizeof(err));
	int fails = 0, fine = 0;
	for (size_t i = 0; p && i < p->nlinks; i++) {
		struct trawl_sync_pair r;
		if (trawl_sync_link_compute(&p->links[i], 0, NULL, &r, err, sizeof(err)))
			continue;
		if (p->links[i].b == 2)
			fails += r.quality == TRAWL_SYNC_FAIL && r.violations > 0;
		else
			fine += r.quality == TRAWL_SYNC_ACCURATE;
		trawl_sync_pair_release(&r);
	}
	is_int(fails, 2, "points: both pairs with the bent clock are FAIL with violations");
	is_int(fine, 1, "points: the other pair stays accurate");
	trawl_sync_points_free(p);

	/* no trace: an error with a message */
	snprintf(dir, sizeof(dir), "%s/none", tmpdir);
	p = trawl_sync_points_read(paths, 1, NULL, err, sizeof(err));
	ok(!p && err[0], "points: a missing session fails with a message (%s)", err);
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "--make-session"))
		return make_main(argc, argv);
	if (argc > 1) {
		fprintf(stderr, "usage: test-sync-store [--make-session DIR [--hosts N] [--seconds S]\n"
			"       [--rate R] [--rpc-rate R] [--delay US] [--jitter US] [--asym F]\n"
			"       [--loss P] [--dup P] [--one-way] [--split] [--chain] [--tcp]\n"
			"       [--seed N] [--kernel-freq HZ] [--drift-change H:FRACTION:PPM]]\n");
		return 2;
	}
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/trawl-test-sync-store-%d", (int)getpid());
	mkdir(tmpdir, 0755);
	test_match_parse();
	test_store();
	test_find();
	test_points();
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd))
		printf("# could not remove %s\n", tmpdir);
	return done_testing();
}
