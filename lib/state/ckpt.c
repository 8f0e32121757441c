/* SPDX-License-Identifier: MIT */
/*
 * lib/state/ckpt.c - the state system's offline checkpoints: each host's
 * state every interval (of trace time or of events) encoded as what
 * differs from its previous checkpoint, restored by decoding from the
 * whole one before it; and the checkpoint file that holds them beside the
 * trace, with what identifies the trace (docs/state.md, "Offline").
 *
 * A checkpoint of a host, in the state's buffer (and the file):
 *   byte whole (1) or difference (0)
 *   varints: ts, next_sweep (zigzag), gc_requests, gc_syscalls, names, pids
 *   varint ncpus, then the CPUs' bytes XORed with the previous ones
 *   per table (threads, fds, requests): varint n, n x (varint key, the
 *     record XORed with the previous version of it: zeros when new, its
 *     key left as is), varint n gone, n x varint key
 * Bytes XORed (xor_put) are runs: varint zeros, varint n, n bytes; a
 * record that changed in a counter costs a few bytes.
 *
 * The file: "TRAWLSTC", then varints and byte strings (version, record
 * sizes, window, intervals, events, newest, the identity text, the
 * strings, the hosts and their checkpoints' index, the checkpoints'
 * bytes), then a 64-bit FNV-1a of all that precedes it. It is read whole
 * and checked whole (tr_state_ck_parse) before anything of it is used.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "state/state-internal.h"

/* ------------------------------------------------------------ bytes */

struct wbuf {
	uint8_t *p;
	size_t len, cap;
	bool oom;
};

static bool wb_room(struct wbuf *w, size_t n)
{
	if (w->oom)
		return false;
	if (w->len + n <= w->cap)
		return true;
	size_t cap = w->cap ? w->cap : 4096;
	while (cap < w->len + n)
		cap *= 2;
	uint8_t *p = realloc(w->p, cap);
	if (!p) {
		w->oom = true;
		return false;
	}
	w->p = p;
	w->cap = cap;
	return true;
}

static void wb_v(struct wbuf *w, uint64_t v)
{
	if (!wb_room(w, 10))
		return;
	while (v >= 0x80) {
		w->p[w->len++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	w->p[w->len++] = (uint8_t)v;
}

static inline uint64_t zz(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t unzz(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* n bytes as they are */
static void wb_raw(struct wbuf *w, const void *b, size_t n)
{
	if (n && wb_room(w, n)) {
		memcpy(w->p + w->len, b, n);
		w->len += n;
	}
}

static void wb_bytes(struct wbuf *w, const void *b, size_t n)
{
	wb_v(w, n);
	wb_raw(w, b, n);
}

/* r XOR base as runs (zeros, literal bytes); n bytes */
static void xor_put(struct wbuf *w, const uint8_t *r, const uint8_t *base, size_t n)
{
	size_t i = 0;

	while (i < n) {
		size_t z = i, e;
		uint64_t a, b;
		/* (equal bytes, most of a record, skipped a word at a time) */
		while (z + 8 <= n && (memcpy(&a, r + z, 8), memcpy(&b, base + z, 8), a == b))
			z += 8;
		while (z < n && r[z] == base[z])
			z++;
		/* a literal run ends at four equal bytes, or the end */
		for (e = z; e < n;) {
			size_t k = e;
			while (k < n && r[k] == base[k] && k - e < 4)
				k++;
			if (k > e && (k - e >= 4 || k == n))
				break;
			e = k > e ? k : e + 1;
		}
		wb_v(w, z - i);
		wb_v(w, e - z);
		if (e > z && wb_room(w, e - z))
			for (size_t j = z; j < e; j++)
				w->p[w->len++] = r[j] ^ base[j];
		i = e;
	}
}

struct rbuf {
	const uint8_t *p, *e;
	bool bad;
};

static uint64_t rb_v(struct rbuf *r)
{
	uint64_t v = 0;

	for (unsigned sh = 0; sh < 64; sh += 7) {
		if (r->p >= r->e) {
			r->bad = true;
			return 0;
		}
		uint8_t b = *r->p++;
		v |= (uint64_t)(b & 0x7f) << sh;
		if (!(b & 0x80))
			return v;
	}
	r->bad = true;
	return 0;
}

/* a byte string: its length, *b its bytes (in r's buffer) */
static size_t rb_bytes(struct rbuf *r, const uint8_t **b)
{
	uint64_t n = rb_v(r);

	if (r->bad || n > (uint64_t)(r->e - r->p)) {
		r->bad = true;
		*b = NULL;
		return 0;
	}
	*b = r->p;
	r->p += n;
	return (size_t)n;
}

/* XORs n bytes of runs into out */
static void xor_get(struct rbuf *r, uint8_t *out, size_t n)
{
	size_t i = 0;

	while (i < n && !r->bad) {
		uint64_t z = rb_v(r), l = rb_v(r);
		if (r->bad || !(z + l) || z > n - i || l > n - i - z || l > (uint64_t)(r->e - r->p)) {
			r->bad = true;
			return;
		}
		i += z;
		for (uint64_t j = 0; j < l; j++)
			out[i++] ^= *r->p++;
	}
}

uint64_t tr_state_ck_sum(const uint8_t *b, size_t n)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ULL;
	return h;
}

/* ------------------------------------------------------ checkpoints */

static inline uint64_t rec_key(const struct tab *t, size_t i)
{
	uint64_t k;

	memcpy(&k, t->rec + i * t->rsz, sizeof(k));
	return k;
}

/* a record XORs against zero[] of tab_put(): every table's record fits */
_Static_assert(sizeof(struct ithread) <= 512 && sizeof(struct ifd) <= 512 &&
	       sizeof(struct irqst) <= 512, "a kernel model record is larger than tab_put's zero[]");

/* b's record of a's slot i, NULL when b has none: mostly in the same slot
 * (one of a and b is a copy of the other, earlier, and few records moved
 * since), else found */
static const uint8_t *rec_of(const struct tab *b, const struct tab *a, size_t i)
{
	uint64_t key = rec_key(a, i);

	if (i < b->cap && b->used[i] && rec_key(b, i) == key)
		return b->rec + i * b->rsz;
	return tr_tab_find(b, key);
}

/* cur's table as what differs from old's (NULL: from nothing): the records
 * and the keys gone, each list after its count (each made once, aside,
 * and counted as it goes) */
static void tab_put(struct wbuf *w, const struct tab *cur, const struct tab *old)
{
	uint8_t zero[512];
	struct wbuf rec = { 0 }, gone = { 0 };
	size_t n = 0, at = 0;

	memset(zero, 0, sizeof(zero));
	for (size_t i = 0; i < cur->cap; i++) {
		if (!cur->used[i])
			continue;
		const uint8_t *r = cur->rec + i * cur->rsz;
		const uint8_t *o = old ? rec_of(old, cur, i) : NULL;
		if (o && !memcmp(o, r, cur->rsz))
			continue;
		n++;
		wb_v(&rec, rec_key(cur, i));
		if (!o) {
			/* a new record: from zeros with its key (what tr_tab_get makes) */
			memcpy(zero, r, sizeof(uint64_t));
			o = zero;
		}
		xor_put(&rec, r, o, cur->rsz);
		memset(zero, 0, sizeof(uint64_t));
	}
	for (size_t i = 0; old && i < old->cap; i++)
		if (old->used[i] && !rec_of(cur, old, i)) {
			at++;
			wb_v(&gone, rec_key(old, i));
		}
	wb_v(w, n);
	wb_raw(w, rec.p, rec.len);
	wb_v(w, at);
	wb_raw(w, gone.p, gone.len);
	w->oom |= rec.oom || gone.oom;
	free(rec.p);
	free(gone.p);
}

static void ck_put(struct wbuf *w, const struct tables *cur, const struct tables *old)
{
	if (!wb_room(w, 1))
		return;
	w->p[w->len++] = old ? 0 : 1;
	wb_v(w, zz(cur->ts));
	wb_v(w, zz(cur->next_sweep));
	wb_v(w, cur->gc_requests);
	wb_v(w, cur->gc_syscalls);
	wb_v(w, cur->names);
	wb_v(w, cur->pids);
	wb_v(w, cur->ncpus);
	size_t oc = old ? old->ncpus : 0;
	for (size_t i = 0; i < cur->ncpus; i++) {
		struct icpu z;
		memset(&z, 0, sizeof(z));
		xor_put(w, (const uint8_t *)&cur->cpus[i],
			(const uint8_t *)(i < oc ? &old->cpus[i] : &z), sizeof(z));
	}
	tab_put(w, &cur->thr, old ? &old->thr : NULL);
	tab_put(w, &cur->fd, old ? &old->fd : NULL);
	tab_put(w, &cur->rq, old ? &old->rq : NULL);
}

#define CK_MAX_CPUS 65536

static int tab_get(struct rbuf *r, struct tab *t)
{
	uint64_t n = rb_v(r);

	for (uint64_t i = 0; i < n && !r->bad; i++) {
		uint64_t key = rb_v(r), k2;
		if (r->bad)
			break;
		uint8_t *rec = tr_tab_get(t, key, NULL);
		if (!rec)
			return -ENOMEM;
		xor_get(r, rec, t->rsz);
		memcpy(&k2, rec, sizeof(k2));
		if (k2 != key)
			r->bad = true;
	}
	n = rb_v(r);
	for (uint64_t i = 0; i < n && !r->bad; i++) {
		uint64_t key = rb_v(r);
		if (!tr_tab_find(t, key))
			r->bad = true;
		else
			tr_tab_del(t, key);
	}
	return r->bad ? -EBADMSG : 0;
}

/* One checkpoint's bytes applied to t (empty for a whole one). */
static int ck_get(const uint8_t *b, size_t len, struct tables *t, bool *whole)
{
	struct rbuf r = { b, b + len, false };
	int rc;

	if (!len || b[0] > 1)
		return -EBADMSG;
	*whole = b[0];
	r.p++;
	t->ts = unzz(rb_v(&r));
	t->next_sweep = unzz(rb_v(&r));
	t->gc_requests = rb_v(&r);
	t->gc_syscalls = rb_v(&r);
	t->names = (uint32_t)rb_v(&r);
	t->pids = (uint32_t)rb_v(&r);
	uint64_t nc = rb_v(&r);
	if (r.bad || nc > CK_MAX_CPUS)
		return -EBADMSG;
	if (nc != t->ncpus) {
		struct icpu *c = realloc(t->cpus, (nc ? nc : 1) * sizeof(*c));
		if (!c)
			return -ENOMEM;
		if (nc > t->ncpus)
			memset(c + t->ncpus, 0, (nc - t->ncpus) * sizeof(*c));
		t->cpus = c;
		t->ncpus = nc;
	}
	for (size_t i = 0; i < nc && !r.bad; i++)
		xor_get(&r, (uint8_t *)&t->cpus[i], sizeof(*t->cpus));
	if (r.bad)
		return -EBADMSG;
	if ((rc = tab_get(&r, &t->thr)) || (rc = tab_get(&r, &t->fd)) || (rc = tab_get(&r, &t->rq)))
		return rc;
	return r.p == r.e ? 0 : -EBADMSG;
}

/* Every string a record names is one the table has. */
static bool strings_ok(const struct tables *t, size_t nstr)
{
	for (size_t i = 0; i < t->ncpus; i++)
		if (t->cpus[i].idle >= nstr && t->cpus[i].idle)
			return false;
	for (size_t i = 0; i < t->thr.cap; i++) {
		const struct ithread *th = (const void *)(t->thr.rec + i * t->thr.rsz);
		if (t->thr.used[i] &&
		    ((th->comm && th->comm >= nstr) || (th->syscall && th->syscall >= nstr) ||
		     (th->cgroup && th->cgroup >= nstr) ||
		     (th->sc_path && th->sc_path >= nstr) ||
		     (th->origin.str && th->origin.str >= nstr) ||
		     (th->origin.str2 && th->origin.str2 >= nstr)))
			return false;
	}
	for (size_t i = 0; i < t->fd.cap; i++) {
		const struct ifd *f = (const void *)(t->fd.rec + i * t->fd.rsz);
		if (t->fd.used[i] &&
		    ((f->path && f->path >= nstr) || (f->origin.str && f->origin.str >= nstr) ||
		     (f->origin.str2 && f->origin.str2 >= nstr)))
			return false;
	}
	return true;
}

int tr_state_ck_restore(const struct trawl_state *s, const struct host *h, size_t i,
			struct tables *out)
{
	int rc;

	tr_tables_init(out);
	if (i >= h->nck)
		return -EINVAL;
	for (size_t k = h->ck[i].key; k <= i; k++) {
		bool whole;
		if (tr_state_ck_sum(s->ckbuf + h->ck[k].off, h->ck[k].len) != h->ck[k].sum) {
			rc = -EBADMSG;
			goto err;
		}
		if ((rc = ck_get(s->ckbuf + h->ck[k].off, h->ck[k].len, out, &whole)))
			goto err;
		if (whole != (k == h->ck[i].key)) {
			rc = -EBADMSG;
			goto err;
		}
	}
	if (!strings_ok(out, s->str.n ? s->str.n : 1)) {
		rc = -EBADMSG;
		goto err;
	}
	return 0;
err:
	tr_tables_release(out);
	tr_tables_init(out);
	return rc;
}

int tr_state_checkpoint(struct trawl_state *s, int64_t ts)
{
	struct wbuf w = { s->ckbuf, s->cklen, s->ckcap, false };

	for (size_t i = 0; i < s->nhosts; i++) {
		struct host *h = &s->hosts[i];
		if (h->nck == h->capck) {
			size_t cap = h->capck ? h->capck * 2 : 64;
			struct ckpt *n = realloc(h->ck, cap * sizeof(*n));
			if (!n)
				return -ENOMEM;
			h->ck = n;
			h->capck = cap;
		}
		bool whole = h->nck % TR_CK_KEY == 0;
		size_t at = w.len;
		ck_put(&w, &h->cur, whole ? NULL : &h->ckshadow);
		s->ckbuf = w.p;
		s->ckcap = w.cap;
		if (w.oom || w.len - at > UINT32_MAX)
			return -ENOMEM;
		s->cklen = w.len;
		struct ckpt *k = &h->ck[h->nck];
		k->ts = ts;
		k->off = at;
		k->len = (uint32_t)(w.len - at);
		k->key = whole ? (uint32_t)h->nck : h->ck[h->nck - 1].key;
		k->sum = tr_state_ck_sum(s->ckbuf + at, k->len);
		h->nck++;
		/* the state it was made of, for the next one's differences */
		if (tr_tables_set(&h->ckshadow, &h->cur))
			return -ENOMEM;
	}
	s->nck++;
	return 0;
}

void tr_state_ck_release(struct trawl_state *s)
{
	for (size_t i = 0; i < s->nhosts; i++) {
		free(s->hosts[i].ck);
		s->hosts[i].ck = NULL;
		s->hosts[i].nck = s->hosts[i].capck = 0;
		tr_tables_release(&s->hosts[i].ckshadow);
	}
	if (s->ckmap)
		munmap(s->ckmap, s->ckmap_len);
	else
		free(s->ckbuf);
	s->ckmap = NULL;
	s->ckbuf = NULL;
	s->cklen = s->ckcap = 0;
	s->nck = 0;
}

size_t tr_state_ck_bytes(const struct trawl_state *s)
{
	size_t n = s->cklen;

	for (size_t i = 0; i < s->nhosts; i++)
		n += s->hosts[i].capck * sizeof(struct ckpt) + tr_tables_bytes(&s->hosts[i].ckshadow);
	return n;
}

/* --------------------------------------------------------- identity */

#define ID_HASH (64 * 1024)

/* file's size, modification time and a hash of its first and last
 * ID_HASH bytes, as a line (a file rewritten has another time; one
 * changed with its time put back, another hash of its ends) */
static int file_line(struct wbuf *w, const char *path, const char *name, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	uint8_t *b = NULL;
	char line[512];
	int rc = 0;

	if (fd < 0 || fstat(fd, &st)) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	size_t n = st.st_size < 2 * ID_HASH ? (size_t)st.st_size : 2 * ID_HASH;
	if (!(b = malloc(n ? n : 1))) {
		rc = -ENOMEM;
		goto out;
	}
	size_t head = n < ID_HASH ? n : ID_HASH, got = 0;
	while (got < n) {
		off_t at = got < head ? (off_t)got : st.st_size - (off_t)(n - got);
		size_t want = got < head ? head - got : n - got;
		ssize_t r = pread(fd, b + got, want, at);
		if (r <= 0) {
			rc = r ? -errno : -EIO;
			snprintf(err, errlen, "%s: %s", path, r ? strerror(errno) : "shorter than it was");
			goto out;
		}
		got += (size_t)r;
	}
	snprintf(line, sizeof(line), "file %s size %jd mtime %jd.%09ld hash %016" PRIx64 "\n", name,
		 (intmax_t)st.st_size, (intmax_t)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec,
		 tr_state_ck_sum(b, n));
	size_t l = strlen(line);
	if (wb_room(w, l)) {
		memcpy(w->p + w->len, line, l);
		w->len += l;
	}
out:
	free(b);
	if (fd >= 0)
		close(fd);
	return rc;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/*
 * What identifies the traces under paths, as text (NUL-terminated, in
 * *out, the caller frees): per trace, in the reader's order, its host
 * and UUID, then its metadata and each stream file (name, size, hash).
 */
int tr_state_identity(const char *const *paths, size_t npaths, char **out,
		      char *err, size_t errlen)
{
	struct trawl_reader_opts ro = { .sz = sizeof(ro) };
	struct trawl_reader *r = trawl_reader_new(paths, npaths, &ro, err, errlen);
	struct wbuf w = { 0 };
	int rc = 0;

	if (!r)
		return -errno;
	for (size_t i = 0; i < trawl_reader_ntraces(r) && !rc; i++) {
		const struct trawl_reader_trace *t = trawl_reader_trace_at(r, i);
		const struct trawl_ctf_trace *m = trawl_reader_trace_meta(t);
		char line[256], path[4096];
		int l = snprintf(line, sizeof(line), "trace %s uuid ", trawl_reader_trace_hostname(t));
		for (int k = 0; k < 16 && l > 0 && (size_t)l + 3 < sizeof(line); k++)
			l += snprintf(line + l, sizeof(line) - (size_t)l, "%02x",
				      m && m->has_uuid ? m->uuid[k] : 0);
		snprintf(line + l, sizeof(line) - (size_t)l, "\n");
		size_t ll = strlen(line);
		if (wb_room(&w, ll)) {
			memcpy(w.p + w.len, line, ll);
			w.len += ll;
		}
		snprintf(path, sizeof(path), "%s/metadata", trawl_reader_trace_path(t));
		rc = file_line(&w, path, "metadata", err, errlen);
		for (size_t k = 0; !rc && k < trawl_reader_trace_nstreams(t); k++) {
			const char *sp = trawl_reader_stream_path(trawl_reader_trace_stream(t, k));
			rc = file_line(&w, sp, base_name(sp), err, errlen);
		}
	}
	trawl_reader_free(r);
	if (!rc && !wb_room(&w, 1))
		rc = -ENOMEM;
	if (rc) {
		free(w.p);
		if (rc == -ENOMEM)
			snprintf(err, errlen, "%s", strerror(ENOMEM));
		return rc;
	}
	w.p[w.len] = 0;
	*out = (char *)w.p;
	return 0;
}

/* ------------------------------------------------------------- file */

static const char magic[8] = "TRAWLSTC";
#define CK_VERSION 1

static void put_u64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_u64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/*
 * The file: magic, the header's length H (8 bytes, little-endian), the
 * header (H - 8 bytes of varints and byte strings), its checksum (8 bytes:
 * of all before it), then the checkpoints' bytes to the end: a load reads
 * the header and maps the rest, whose checkpoints are checked one by one
 * (their checksums are in the header) when restored, so that a query of
 * an hour's file reads the header and at most TR_CK_KEY checkpoints.
 */
int tr_state_ck_format(const struct trawl_state *s, const char *ident, uint8_t **out, size_t *len)
{
	struct wbuf w = { 0 };

	if (wb_room(&w, sizeof(magic) + 8)) {
		memcpy(w.p, magic, sizeof(magic));
		w.len = sizeof(magic) + 8;
	}
	struct tables probe;
	tr_tables_init(&probe);
	wb_v(&w, CK_VERSION);
	wb_v(&w, sizeof(struct icpu));
	wb_v(&w, probe.thr.rsz);
	wb_v(&w, probe.fd.rsz);
	wb_v(&w, probe.rq.rsz);
	tr_tables_release(&probe);
	wb_v(&w, zz(s->window));
	wb_v(&w, zz(s->interval));
	wb_v(&w, s->ck_events);
	wb_v(&w, s->events);
	wb_v(&w, zz(s->newest));
	wb_bytes(&w, ident, strlen(ident));
	size_t ns = s->str.n ? s->str.n : 1;
	wb_v(&w, ns);
	for (size_t i = 1; i < ns; i++)
		wb_bytes(&w, s->str.s[i], strlen(s->str.s[i]));
	wb_v(&w, s->nhosts);
	for (size_t i = 0; i < s->nhosts; i++) {
		const struct host *h = &s->hosts[i];
		int64_t prev = 0;
		wb_bytes(&w, h->name, strlen(h->name));
		wb_v(&w, h->nck);
		for (size_t k = 0; k < h->nck; k++) {
			wb_v(&w, zz((int64_t)((uint64_t)h->ck[k].ts - (uint64_t)prev)));
			prev = h->ck[k].ts;
			wb_v(&w, h->ck[k].off);
			wb_v(&w, h->ck[k].len);
			wb_v(&w, k - h->ck[k].key);
			wb_v(&w, h->ck[k].sum);
		}
	}
	wb_v(&w, s->cklen);
	if (wb_room(&w, 8 + s->cklen)) {
		put_u64(w.p + sizeof(magic), w.len + 8 - sizeof(magic) - 8);
		put_u64(w.p + w.len, tr_state_ck_sum(w.p, w.len));
		w.len += 8;
		if (s->cklen)
			memcpy(w.p + w.len, s->ckbuf, s->cklen);
		w.len += s->cklen;
	}
	if (w.oom) {
		free(w.p);
		return -ENOMEM;
	}
	*out = w.p;
	*len = w.len;
	return 0;
}

/* the first line that differs between a and b, for the message */
static void first_diff(const char *a, const char *b, char *out, size_t n)
{
	while (*a && *b) {
		const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
		size_t la = ea ? (size_t)(ea - a) : strlen(a), lb = eb ? (size_t)(eb - b) : strlen(b);
		if (la != lb || memcmp(a, b, la)) {
			snprintf(out, n, "it has \"%.*s\", the traces \"%.*s\"", (int)(la < 200 ? la : 200), a,
				 (int)(lb < 200 ? lb : 200), b);
			return;
		}
		a += la + !!ea;
		b += lb + !!eb;
	}
	snprintf(out, n, "%s", *a ? "the traces have fewer files" : "the traces have more files");
}

int tr_state_ck_parse(struct trawl_state *s, const uint8_t *buf, size_t len, const char *ident,
		      bool sum, bool borrow, char *err, size_t errlen)
{
	struct rbuf r;
	const uint8_t *b;
	size_t n;
	int rc = -EBADMSG;

#define BAD(...) do { snprintf(err, errlen, __VA_ARGS__); goto out; } while (0)
	if (len < sizeof(magic) + 16 || memcmp(buf, magic, sizeof(magic)))
		BAD("not a checkpoint file");
	uint64_t hl = get_u64(buf + sizeof(magic));
	if (hl < 8 || hl > len - sizeof(magic) - 8)
		BAD("corrupt: truncated (its header)");
	size_t end = sizeof(magic) + 8 + (size_t)hl;	/* the checkpoints' bytes from here */
	if (sum && get_u64(buf + end - 8) != tr_state_ck_sum(buf, end - 8))
		BAD("corrupt: its header's checksum does not match it");
	r = (struct rbuf){ buf + sizeof(magic) + 8, buf + end - 8, false };
	if (rb_v(&r) != CK_VERSION)
		BAD("a version of the format this trawl does not read");
	struct tables probe;
	tr_tables_init(&probe);
	bool layout = rb_v(&r) == sizeof(struct icpu) && rb_v(&r) == probe.thr.rsz &&
		      rb_v(&r) == probe.fd.rsz && rb_v(&r) == probe.rq.rsz;
	tr_tables_release(&probe);
	if (r.bad || !layout) {
		rc = -ESTALE;
		BAD("made by a trawl whose model differs from this one's");
	}
	int64_t window = unzz(rb_v(&r));
	if (!r.bad && window != s->window) {
		rc = -ESTALE;
		BAD("made with a window of %.9g s, not %.9g s", (double)window / 1e9,
		    (double)s->window / 1e9);
	}
	s->interval = unzz(rb_v(&r));
	if (!r.bad && s->interval < 0)
		BAD("corrupt: a negative checkpoint interval");
	s->ck_events = rb_v(&r);
	s->events = rb_v(&r);
	s->newest = unzz(rb_v(&r));
	n = rb_bytes(&r, &b);
	if (r.bad)
		BAD("corrupt: truncated");
	if (ident && (n != strlen(ident) || memcmp(b, ident, n))) {
		char *mine = strndup((const char *)b, n), d[512];
		if (!mine) {
			rc = -ENOMEM;
			BAD("%s", strerror(ENOMEM));
		}
		first_diff(mine, ident, d, sizeof(d));
		free(mine);
		rc = -ESTALE;
		BAD("made of other traces than these (%s)", d);
	}
	uint64_t ns = rb_v(&r);
	if (r.bad || !ns || ns > (uint64_t)(r.e - r.p) + 1)
		BAD("corrupt: its strings");
	for (uint64_t i = 1; i < ns; i++) {
		n = rb_bytes(&r, &b);
		if (r.bad || !n || memchr(b, 0, n))
			BAD("corrupt: its strings");
		if (tr_state_intern(&s->str, (const char *)b, n) != i) {
			if (s->str.n <= i)
				rc = -ENOMEM;
			BAD("corrupt: its strings (one twice, or %s)", strerror(ENOMEM));
		}
	}
	/* hosts: a session's, not millions (each is looked up by name) */
	uint64_t nh = rb_v(&r);
	if (r.bad || nh > (uint64_t)(r.e - r.p) || nh > TR_CK_MAX_HOSTS)
		BAD("corrupt: its hosts");
	for (uint64_t i = 0; i < nh; i++) {
		n = rb_bytes(&r, &b);
		char *name = r.bad || memchr(b, 0, n) ? NULL : strndup((const char *)b, n);
		if (!name)
			BAD("corrupt: its hosts");
		/* one twice: the lookup finds it instead of adding one */
		size_t had = s->nhosts;
		struct host *h = tr_state_host_get(s, name);
		if (h && s->nhosts == had)
			h = NULL;
		free(name);
		if (!h)
			BAD("corrupt: its hosts (one twice, or %s)", strerror(ENOMEM));
		uint64_t nk = rb_v(&r);
		if (r.bad || nk > (uint64_t)(r.e - r.p) / 5)
			BAD("corrupt: host %s's checkpoints", h->name);
		if (nk && !(h->ck = calloc(nk, sizeof(*h->ck)))) {
			rc = -ENOMEM;
			BAD("%s", strerror(ENOMEM));
		}
		h->capck = nk;
		int64_t prev = 0;
		for (uint64_t k = 0; k < nk; k++) {
			struct ckpt *c = &h->ck[k];
			c->ts = (int64_t)((uint64_t)prev + (uint64_t)unzz(rb_v(&r)));
			uint64_t off = rb_v(&r), l = rb_v(&r), back = rb_v(&r);
			c->sum = rb_v(&r);
			/* back: to its whole one, at most TR_CK_KEY - 1 before
			 * (a restore decodes at most TR_CK_KEY) */
			if (r.bad || (k && c->ts < prev) || back > k || back >= TR_CK_KEY ||
			    l > UINT32_MAX || !l)
				BAD("corrupt: host %s's checkpoint %" PRIu64, h->name, k);
			prev = c->ts;
			c->off = off;
			c->len = (uint32_t)l;
			c->key = (uint32_t)(k - back);
			h->nck++;
		}
		if (h->nck > s->nck)
			s->nck = h->nck;
	}
	uint64_t cl = rb_v(&r);
	if (r.bad || r.p != r.e)
		BAD("corrupt: %s", r.bad ? "truncated" : "bytes after its header");
	if (cl != len - end)
		BAD("corrupt: %s (%zu bytes of checkpoints, not %" PRIu64 ")",
		    cl > len - end ? "truncated" : "bytes after its end", len - end, cl);
	for (size_t i = 0; i < s->nhosts; i++)
		for (size_t k = 0; k < s->hosts[i].nck; k++) {
			const struct ckpt *c = &s->hosts[i].ck[k];
			if (c->off > cl || c->len > cl - c->off)
				BAD("corrupt: host %s's checkpoint %zu", s->hosts[i].name, k);
		}
	if (borrow) {
		s->ckbuf = (uint8_t *)buf + end;
	} else {
		if (cl && !(s->ckbuf = malloc(cl))) {
			rc = -ENOMEM;
			BAD("%s", strerror(ENOMEM));
		}
		if (cl)
			memcpy(s->ckbuf, buf + end, cl);
	}
	s->cklen = s->ckcap = cl;
	s->ck_loaded = true;
	s->nowin = true;
	rc = 0;
#undef BAD
out:
	return rc;
}

/* ------------------------------------------------------------ public */

int trawl_state_save(const struct trawl_state *s, const char *file,
		     const char *const *paths, size_t npaths, char *err, size_t errlen)
{
	char *ident = NULL, *tmp = NULL;
	uint8_t *b = NULL;
	size_t len;
	int fd = -1, rc;

	if ((rc = tr_state_identity(paths, npaths, &ident, err, errlen)))
		return rc;
	if ((rc = tr_state_ck_format(s, ident, &b, &len)))
		goto nomem;
	size_t fl = strlen(file) + 16;
	if (!(tmp = malloc(fl))) {
		rc = -ENOMEM;
		goto nomem;
	}
	snprintf(tmp, fl, "%s.%ld~", file, (long)getpid());
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	for (size_t at = 0; at < len;) {
		ssize_t w = write(fd, b + at, len - at);
		if (w < 0) {
			rc = -errno;
			snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
			goto out;
		}
		at += (size_t)w;
	}
	if (close(fd)) {
		fd = -1;
		rc = -errno;
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	fd = -1;
	if (rename(tmp, file)) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", file, strerror(errno));
		goto out;
	}
	rc = 0;
	goto out;
nomem:
	snprintf(err, errlen, "%s", strerror(ENOMEM));
out:
	if (fd >= 0)
		close(fd);
	if (rc && tmp)
		unlink(tmp);
	free(tmp);
	free(b);
	free(ident);
	return rc;
}

struct trawl_state *trawl_state_load(const char *file, const struct trawl_state_opts *o,
				     const char *const *paths, size_t npaths,
				     char *err, size_t errlen)
{
	struct trawl_state *s = NULL;
	char *ident = NULL;
	void *map = MAP_FAILED;
	struct stat st;
	size_t len = 0;
	int fd = open(file, O_RDONLY | O_CLOEXEC), rc;

	if (fd < 0 || fstat(fd, &st)) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", file, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode) || st.st_size < 32) {
		rc = -EBADMSG;
		snprintf(err, errlen, "%s: not a checkpoint file", file);
		goto out;
	}
	len = (size_t)st.st_size;
	/* (mapped, not read: a query touches the header and a few checkpoints) */
	if ((map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0)) == MAP_FAILED) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", file, strerror(errno));
		goto out;
	}
	if ((rc = tr_state_identity(paths, npaths, &ident, err, errlen)))
		goto out;
	if (!(s = trawl_state_new(o))) {
		rc = -errno;
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		goto out;
	}
	char m[900];
	if ((rc = tr_state_ck_parse(s, map, len, ident, true, true, m, sizeof(m)))) {
		snprintf(err, errlen, "%s: %s", file, m);
		goto out;
	}
	s->ckmap = map;
	s->ckmap_len = len;
	free(ident);
	close(fd);
	return s;
out:
	if (fd >= 0)
		close(fd);
	free(ident);
	if (s)
		s->ckbuf = NULL;	/* (borrowed, if it was) */
	trawl_state_free(s);
	if (map != MAP_FAILED)
		munmap(map, len);
	errno = -rc;
	return NULL;
}
