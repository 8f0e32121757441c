/* SPDX-License-Identifier: MIT */
/*
 * lib/pipe/source.c - what every source has: its filters (host and event
 * globs) and clock corrections, copied from its options; its traces; the
 * reader that takes it (trawl_reader_open()).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pipe/pipe-internal.h"

static char **copy_strv(const char *const *v, size_t n)
{
	char **c = calloc(n ? n : 1, sizeof(*c));

	for (size_t i = 0; c && i < n; i++) {
		if (!(c[i] = strdup(v[i]))) {
			while (i--)
				free(c[i]);
			free(c);
			return NULL;
		}
	}
	return c;
}

static void free_strv(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

struct trawl_source *tr_source_alloc(const struct source_ops *ops, const struct trawl_source_opts *o)
{
	struct trawl_source *src = calloc(1, sizeof(*src));

	if (!src)
		return NULL;
	src->ops = ops;
	if (o && o->sz >= offsetof(struct trawl_source_opts, nevents) + sizeof(o->nevents)) {
		if (o->hosts && o->nhosts) {
			if (!(src->hosts = copy_strv(o->hosts, o->nhosts)))
				goto err;
			src->nhosts = o->nhosts;
		}
		if (o->events && o->nevents) {
			if (!(src->events = copy_strv(o->events, o->nevents)))
				goto err;
			src->nevents = o->nevents;
		}
	}
	if (o && o->sz >= offsetof(struct trawl_source_opts, nfixes) + sizeof(o->nfixes) &&
	    o->fixes && o->nfixes) {
		src->fixes = calloc(o->nfixes, sizeof(*src->fixes));
		if (!src->fixes)
			goto err;
		src->nfixes = o->nfixes;
		for (size_t i = 0; i < o->nfixes; i++) {
			src->fixes[i].xform = o->fixes[i].xform;
			if (o->fixes[i].host && !(src->fixes[i].host = strdup(o->fixes[i].host)))
				goto err;
		}
	}
	if (o && o->sz >= offsetof(struct trawl_source_opts, bad_trace_arg) + sizeof(void *)) {
		src->bad_trace = o->bad_trace;
		src->bad_trace_arg = o->bad_trace_arg;
	}
	return src;
err:
	trawl_source_free(src);
	errno = ENOMEM;
	return NULL;
}

void trawl_source_free(struct trawl_source *src)
{
	if (!src)
		return;
	if (src->ops && src->ops->release)
		src->ops->release(src);
	for (size_t i = 0; i < src->ntraces; i++)
		tr_reader_trace_free(src->traces[i]);
	free(src->traces);
	free_strv(src->hosts, src->nhosts);
	free_strv(src->events, src->nevents);
	for (size_t i = 0; i < src->nfixes; i++)
		free((char *)src->fixes[i].host);
	free(src->fixes);
	free(src);
}

bool tr_source_wants_host(const struct trawl_source *src, const char *host)
{
	if (!src->nhosts)
		return true;
	for (size_t i = 0; i < src->nhosts; i++)
		if (tr_glob_match(src->hosts[i], host))
			return true;
	return false;
}

void tr_source_trace_fix(const struct trawl_source *src, struct trawl_reader_trace *t)
{
	for (size_t i = 0; i < src->nfixes; i++)
		if (src->fixes[i].host && strcmp(src->fixes[i].host, t->hostname) == 0) {
			t->fixv = src->fixes[i].xform;
			t->dec.fix = &t->fixv;
		}
}

int tr_source_add_trace(struct trawl_source *src, struct trawl_reader_trace *t)
{
	void *nt = realloc(src->traces, (src->ntraces + 1) * sizeof(*src->traces));

	if (!nt)
		return -ENOMEM;
	src->traces = nt;
	src->traces[src->ntraces++] = t;
	return 0;
}

int tr_source_add_stream(struct trawl_source *src, struct trawl_reader_trace *t,
		      struct trawl_reader_stream *s)
{
	void *ns = realloc(t->streams, (t->nstreams + 1) * sizeof(*t->streams));

	(void)src;
	if (!ns)
		return -ENOMEM;
	t->streams = ns;
	t->streams[t->nstreams++] = s;
	return 0;
}

void tr_reader_opts_source(const struct trawl_reader_opts *o, struct trawl_source_opts *so)
{
	memset(so, 0, sizeof(*so));
	so->sz = sizeof(*so);
	if (o && o->sz >= offsetof(struct trawl_reader_opts, nevents) + sizeof(o->nevents)) {
		so->hosts = o->hosts;
		so->nhosts = o->hosts ? o->nhosts : 0;
		so->events = o->events;
		so->nevents = o->events ? o->nevents : 0;
	}
	if (o && o->sz >= offsetof(struct trawl_reader_opts, nfixes) + sizeof(o->nfixes)) {
		so->fixes = o->fixes;
		so->nfixes = o->fixes ? o->nfixes : 0;
	}
	if (o && o->sz >= offsetof(struct trawl_reader_opts, bad_trace_arg) + sizeof(void *)) {
		so->bad_trace = o->bad_trace;
		so->bad_trace_arg = o->bad_trace_arg;
	}
}

struct trawl_reader *trawl_reader_open(struct trawl_source *const *srcs, size_t nsrcs,
				       const struct trawl_reader_opts *o, char *err, size_t errlen)
{
	struct trawl_reader *r = tr_reader_alloc(o);
	int rc = -ENOMEM;

	if (!r || !(r->srcs = calloc(nsrcs ? nsrcs : 1, sizeof(*r->srcs)))) {
		tr_seterr(err, errlen, ENOMEM, "out of memory");
		for (size_t i = 0; i < nsrcs; i++)
			trawl_source_free(srcs[i]);
		goto err;
	}
	for (size_t i = 0; i < nsrcs; i++) {
		if (srcs[i]->r) {
			rc = tr_seterr(err, errlen, EBUSY, "a source given twice, or to two readers");
			for (size_t j = i; j < nsrcs; j++)
				if (!srcs[j]->r)
					trawl_source_free(srcs[j]);
			goto err;
		}
		r->srcs[r->nsrcs++] = srcs[i];
		srcs[i]->r = r;
	}
	for (size_t i = 0; i < r->nsrcs; i++)
		if ((rc = tr_reader_adopt(r, r->srcs[i]))) {
			tr_seterr(err, errlen, -rc, "out of memory");
			goto err;
		}
	if ((rc = tr_reader_ready(r, err, errlen)))
		goto err;
	return r;
err:
	trawl_reader_free(r);
	errno = -rc;
	return NULL;
}
