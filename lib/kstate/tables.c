/* SPDX-License-Identifier: MIT */
/*
 * lib/kstate/tables.c - the model's records: the string table and the
 * open-addressing tables of threads, file descriptors and block requests
 * (kstate.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kstate/kstate.h"

_Static_assert(sizeof(struct chg) == 48, "a change is 48 bytes");

/* ----------------------------------------------------------- strings */

static uint64_t hash_str(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ULL;
	return h;
}

static int strtab_grow(struct strtab *st)
{
	size_t ns = st->nslot ? st->nslot * 2 : 256;
	uint32_t *slot = calloc(ns, sizeof(*slot));

	if (!slot)
		return -ENOMEM;
	for (size_t i = 1; i < st->n; i++) {
		size_t j = hash_str(st->s[i], strlen(st->s[i])) & (ns - 1);
		while (slot[j])
			j = (j + 1) & (ns - 1);
		slot[j] = (uint32_t)i + 1;
	}
	free(st->slot);
	st->slot = slot;
	st->nslot = ns;
	return 0;
}

/* The id of s[0 .. len) (up to a NUL), added when new; 0 ("") on ENOMEM. */
uint32_t tr_state_intern(struct strtab *st, const char *s, size_t len)
{
	len = strnlen(s, len);
	if (!len)
		return 0;
	if (!st->n) {
		st->s = calloc(64, sizeof(*st->s));
		if (!st->s)
			return 0;
		st->cap = 64;
		st->n = 1;		/* id 0: "" */
	}
	if ((st->n + 1) * 2 > st->nslot && strtab_grow(st))
		return 0;
	size_t j = hash_str(s, len) & (st->nslot - 1);
	for (; st->slot[j]; j = (j + 1) & (st->nslot - 1)) {
		const char *o = st->s[st->slot[j] - 1];
		if (!strncmp(o, s, len) && !o[len])
			return st->slot[j] - 1;
	}
	if (st->n == st->cap) {
		char **ns = realloc(st->s, st->cap * 2 * sizeof(*ns));
		if (!ns)
			return 0;
		st->s = ns;
		st->cap *= 2;
	}
	char *c = strndup(s, len);
	if (!c)
		return 0;
	st->s[st->n] = c;
	st->slot[j] = (uint32_t)st->n + 1;
	st->bytes += len + 1 + sizeof(char *) + 2 * sizeof(uint32_t);
	return (uint32_t)st->n++;
}

const char *tr_state_str(const struct strtab *st, uint32_t id)
{
	return id && id < st->n ? st->s[id] : "";
}

int tr_state_strtab_copy(struct strtab *dst, const struct strtab *src)
{
	memset(dst, 0, sizeof(*dst));
	for (size_t i = 1; i < src->n; i++)
		if (tr_state_intern(dst, src->s[i], strlen(src->s[i])) != i) {
			tr_state_strtab_release(dst);
			return -ENOMEM;
		}
	return 0;
}

void tr_state_strtab_release(struct strtab *st)
{
	for (size_t i = 1; i < st->n; i++)
		free(st->s[i]);
	free(st->s);
	free(st->slot);
	memset(st, 0, sizeof(*st));
}

/* ------------------------------------------------------------ tables */

static inline uint64_t rkey(const struct tab *t, size_t i)
{
	uint64_t k;

	memcpy(&k, t->rec + i * t->rsz, sizeof(k));
	return k;
}

static int tab_grow(struct tab *t)
{
	size_t cap = t->cap ? t->cap * 2 : 16;
	uint8_t *rec = malloc(cap * t->rsz), *used = calloc(cap, 1);

	if (!rec || !used) {
		free(rec);
		free(used);
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->cap; i++) {
		if (!t->used[i])
			continue;
		size_t j = tr_ks_mix(rkey(t, i)) & (cap - 1);
		while (used[j])
			j = (j + 1) & (cap - 1);
		used[j] = 1;
		memcpy(rec + j * t->rsz, t->rec + i * t->rsz, t->rsz);
	}
	free(t->rec);
	free(t->used);
	t->rec = rec;
	t->used = used;
	t->cap = cap;
	memset(t->hint, 0xff, sizeof(t->hint));	/* none: every record moved */
	return 0;
}

void *tr_tab_add(struct tab *t, uint64_t key)
{
	size_t i;
	uint8_t *r;

	if ((t->n + 1) * 4 > t->cap * 3 && tab_grow(t))
		return NULL;
	i = tr_ks_mix(key) & (t->cap - 1);
	while (t->used[i])
		i = (i + 1) & (t->cap - 1);
	t->used[i] = 1;
	t->n++;
	t->hint[tr_tab_hint(key)] = (uint32_t)i;
	r = t->rec + i * t->rsz;
	memset(r, 0, t->rsz);
	memcpy(r, &key, sizeof(key));
	return r;
}

void tr_tab_del(struct tab *t, uint64_t key)
{
	size_t i = tr_tab_slot(t, key), m = t->cap - 1;

	if (i == t->cap)
		return;
	t->used[i] = 0;
	t->n--;
	/* (the hints follow: a slot a hint names is in use) */
	if (t->hint[tr_tab_hint(key)] == i)
		t->hint[tr_tab_hint(key)] = UINT32_MAX;
	/* backward shift: move up every record of the cluster that probed past i */
	for (size_t j = (i + 1) & m; t->used[j]; j = (j + 1) & m) {
		uint64_t kj = rkey(t, j);
		size_t home = tr_ks_mix(kj) & m;
		if (((j - home) & m) >= ((j - i) & m)) {
			memcpy(t->rec + i * t->rsz, t->rec + j * t->rsz, t->rsz);
			t->used[i] = 1;
			t->used[j] = 0;
			if (t->hint[tr_tab_hint(kj)] == j)
				t->hint[tr_tab_hint(kj)] = (uint32_t)i;
			i = j;
		}
	}
}

static int tab_copy(struct tab *dst, const struct tab *src)
{
	*dst = *src;
	dst->rec = NULL;
	dst->used = NULL;
	if (!src->cap)
		return 0;
	dst->rec = malloc(src->cap * src->rsz);
	dst->used = malloc(src->cap);
	if (!dst->rec || !dst->used)
		return -ENOMEM;
	memcpy(dst->rec, src->rec, src->cap * src->rsz);
	memcpy(dst->used, src->used, src->cap);
	return 0;
}

int tr_tables_init(struct tables *t)
{
	memset(t, 0, sizeof(*t));
	t->thr.rsz = sizeof(struct ithread);
	t->fd.rsz = sizeof(struct ifd);
	t->rq.rsz = sizeof(struct irqst);
	t->ts = INT64_MIN;
	t->next_sweep = INT64_MIN;
	return 0;
}

void tr_tables_release(struct tables *t)
{
	free(t->cpus);
	free(t->thr.rec);
	free(t->thr.used);
	free(t->fd.rec);
	free(t->fd.used);
	free(t->rq.rec);
	free(t->rq.used);
	memset(t, 0, sizeof(*t));
}

int tr_tables_copy(struct tables *dst, const struct tables *src)
{
	*dst = *src;
	dst->cpus = NULL;
	dst->thr.rec = dst->fd.rec = dst->rq.rec = NULL;
	dst->thr.used = dst->fd.used = dst->rq.used = NULL;
	if (src->ncpus) {
		dst->cpus = malloc(src->ncpus * sizeof(*dst->cpus));
		if (!dst->cpus)
			goto err;
		memcpy(dst->cpus, src->cpus, src->ncpus * sizeof(*dst->cpus));
	}
	if (tab_copy(&dst->thr, &src->thr) || tab_copy(&dst->fd, &src->fd) ||
	    tab_copy(&dst->rq, &src->rq))
		goto err;
	return 0;
err:
	tr_tables_release(dst);
	return -ENOMEM;
}

/* dst (of src's sizes) made a copy of src in its own buffers */
static void tab_set(struct tab *dst, const struct tab *src)
{
	uint8_t *rec = dst->rec, *used = dst->used;

	*dst = *src;
	dst->rec = rec;
	dst->used = used;
	if (src->cap) {
		memcpy(rec, src->rec, src->cap * src->rsz);
		memcpy(used, src->used, src->cap);
	}
}

int tr_tables_set(struct tables *dst, const struct tables *src)
{
	const struct tab *d[3] = { &dst->thr, &dst->fd, &dst->rq };
	const struct tab *s[3] = { &src->thr, &src->fd, &src->rq };
	bool same = dst->ncpus == src->ncpus;

	for (int i = 0; i < 3; i++)
		same = same && d[i]->cap == s[i]->cap && d[i]->rsz == s[i]->rsz;
	if (!same) {
		tr_tables_release(dst);
		return tr_tables_copy(dst, src);
	}
	struct tables keep = *dst;
	*dst = *src;
	dst->cpus = keep.cpus;
	if (src->ncpus)
		memcpy(dst->cpus, src->cpus, src->ncpus * sizeof(*dst->cpus));
	dst->thr = keep.thr;
	dst->fd = keep.fd;
	dst->rq = keep.rq;
	tab_set(&dst->thr, &src->thr);
	tab_set(&dst->fd, &src->fd);
	tab_set(&dst->rq, &src->rq);
	return 0;
}

size_t tr_tables_bytes(const struct tables *t)
{
	return t->ncpus * sizeof(struct icpu) + t->thr.cap * (t->thr.rsz + 1) +
	       t->fd.cap * (t->fd.rsz + 1) + t->rq.cap * (t->rq.rsz + 1);
}

