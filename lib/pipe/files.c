/* SPDX-License-Identifier: MIT */
/*
 * lib/pipe/files.c - the traces a reader reads: CTF trace directories found
 * under paths (a trace, or a session above several), their stream files
 * mapped; or stream buffers in memory (tests, fuzzing).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pipe/pipe-internal.h"

#define MAX_DIR_DEPTH 16

static char *join(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	char *p = malloc(la + lb + 2);
	if (!p)
		return NULL;
	memcpy(p, a, la);
	size_t o = la;
	if (!la || a[la - 1] != '/')
		p[o++] = '/';
	memcpy(p + o, b, lb + 1);
	return p;
}


static int stream_file(const struct dirent *d)
{
	return d->d_name[0] != '.' && strcmp(d->d_name, "metadata") != 0;
}

/* Opens stream file `name` of trace t (at path). 0 or -errno. */
static int open_stream(struct trawl_source *src, struct trawl_reader_trace *t, const char *path,
		       const char *name, char *err, size_t errlen)
{
	struct trawl_reader_stream *s = tr_reader_stream_new(t, path);
	int rc;

	if (!s)
		return tr_seterr(err, errlen, ENOMEM, "out of memory");
	if ((rc = tr_ctf_stream_map_file(&s->cs, t->path, name, err, errlen)))
		goto err;
	if (tr_source_add_stream(src, t, s)) {
		rc = tr_seterr(err, errlen, ENOMEM, "out of memory");
		goto err;
	}
	return 0;
err:
	tr_reader_stream_free(s);
	return rc;
}

/* Opens the trace in dir: 1, 0 when skipped (given twice, or its host is
 * not wanted), or -errno with a message in err. */
static int open_trace(struct trawl_source *src, const char *dir, char *err, size_t errlen)
{
	char msg[512] = "";
	struct trawl_reader_trace *t = NULL;
	struct dirent **ents = NULL;
	int nents = 0, rc;
	char *mpath = join(dir, "metadata"), *text = NULL, *real = realpath(dir, NULL);
	struct trawl_ctf_trace *meta = NULL;

	if (!mpath || !real) {
		rc = tr_seterr(err, errlen, errno ? errno : ENOMEM, "%s: %s", dir, strerror(errno));
		goto out;
	}
	for (size_t i = 0; i < src->ntraces; i++) {
		if (strcmp(src->traces[i]->real, real) == 0) {
			rc = 0;	/* given twice */
			goto out;
		}
	}
	size_t len = 0;
	text = trawl_ctf_metadata_read(mpath, &len, msg, sizeof(msg));
	if (!text) {
		/* msg names mpath already */
		rc = tr_seterr(err, errlen, errno ? errno : EINVAL, "%s", msg);
		goto out;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		rc = tr_seterr(err, errlen, ENOMEM, "out of memory");
		goto out;
	}
	meta = trawl_ctf_metadata_parse(text, len, msg, sizeof(msg));
	if (!meta) {
		rc = tr_seterr(err, errlen, errno ? errno : EINVAL, "%s: %s", mpath, msg);
		goto out;
	}
	t->dec.meta = meta;
	const struct trawl_ctf_env *h = trawl_ctf_trace_env(meta, "hostname");
	t->hostname = h && !h->is_int && h->sval ? h->sval : "";
	tr_source_trace_fix(src, t);
	if (!tr_source_wants_host(src, t->hostname)) {
		rc = 0;
		goto out;
	}
	rc = tr_ctf_tdec_init(&t->dec, meta, (const char *const *)src->events, src->nevents,
			   msg, sizeof(msg));
	if (rc) {
		rc = tr_seterr(err, errlen, -rc, "%s: %s", mpath, msg);
		goto out;
	}
	t->path = strdup(dir);
	t->real = real;
	real = NULL;
	if (!t->path) {
		rc = tr_seterr(err, errlen, ENOMEM, "out of memory");
		goto out;
	}
	nents = scandir(dir, &ents, stream_file, versionsort);
	if (nents < 0) {
		rc = tr_seterr(err, errlen, errno, "%s: %s", dir, strerror(errno));
		goto out;
	}
	for (int i = 0; i < nents; i++) {
		char *p = join(dir, ents[i]->d_name);
		struct stat st;
		if (!p) {
			rc = tr_seterr(err, errlen, ENOMEM, "out of memory");
			goto out;
		}
		if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) {
			rc = open_stream(src, t, p, ents[i]->d_name, err, errlen);
			if (rc) {
				free(p);
				goto out;
			}
		}
		free(p);
	}
	if (tr_source_add_trace(src, t)) {
		rc = tr_seterr(err, errlen, ENOMEM, "out of memory");
		goto out;
	}
	t = NULL;
	rc = 1;
out:
	for (int i = 0; i < nents; i++)
		free(ents[i]);
	free(ents);
	if (t)
		tr_reader_trace_free(t);	/* frees meta */
	else if (rc <= 0)
		trawl_ctf_trace_free(meta);
	free(text);
	free(mpath);
	free(real);
	return rc;
}

static bool is_trace_dir(const char *dir)
{
	char *m = join(dir, "metadata");
	struct stat st;
	bool yes = m && stat(m, &st) == 0 && S_ISREG(st.st_mode);
	free(m);
	return yes;
}

static int subdir(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

/* Opens every trace at or under dir; returns how many or -errno. */
static int discover(struct trawl_source *src, const char *dir, int depth, char *err, size_t errlen)
{
	if (is_trace_dir(dir)) {
		int rc = open_trace(src, dir, err, errlen);
		/* below a path given (a session): one trace that cannot be read
		 * does not hide the others, when the caller hears of it */
		if (rc < 0 && rc != -ENOMEM && depth > 0 && src->bad_trace) {
			src->bad_trace(src->bad_trace_arg, err);
			src->nbad++;
			return 0;
		}
		return rc < 0 ? rc : 1;	/* a skipped trace still counts as found */
	}
	if (depth >= MAX_DIR_DEPTH)
		return 0;
	struct dirent **ents;
	int n = scandir(dir, &ents, subdir, versionsort), found = 0, rc = 0;
	if (n < 0)
		return depth ? 0 : tr_seterr(err, errlen, errno, "%s: %s", dir, strerror(errno));
	for (int i = 0; i < n; i++) {
		if (rc >= 0) {
			char *p = join(dir, ents[i]->d_name);
			struct stat st;
			if (!p)
				rc = tr_seterr(err, errlen, ENOMEM, "out of memory");
			else if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
				rc = discover(src, p, depth + 1, err, errlen);
				if (rc > 0)
					found += rc;
			}
			free(p);
		}
		free(ents[i]);
	}
	free(ents);
	return rc < 0 ? rc : found;
}


static const struct source_ops files_ops = { .kind = "files" };

struct trawl_source *trawl_source_files(const char *const *paths, size_t npaths,
					const struct trawl_source_opts *o, char *err, size_t errlen)
{
	struct trawl_source *src = tr_source_alloc(&files_ops, o);
	int rc;

	if (!src) {
		tr_seterr(err, errlen, ENOMEM, "out of memory");
		return NULL;
	}
	for (size_t i = 0; i < npaths; i++) {
		struct stat st;
		if (stat(paths[i], &st) < 0) {
			rc = tr_seterr(err, errlen, errno, "%s: %s", paths[i], strerror(errno));
			goto err;
		}
		if (!S_ISDIR(st.st_mode)) {
			rc = tr_seterr(err, errlen, ENOTDIR, "%s: not a directory", paths[i]);
			goto err;
		}
		size_t nbad = src->nbad;
		rc = discover(src, paths[i], 0, err, errlen);
		if (rc < 0)
			goto err;
		if (rc == 0 && src->nbad > nbad) {
			rc = tr_seterr(err, errlen, EINVAL, "%s: no readable CTF trace (%zu skipped)",
				       paths[i], src->nbad - nbad);
			goto err;
		}
		if (rc == 0) {
			rc = tr_seterr(err, errlen, ENOENT, "%s: no CTF trace found (no `metadata` file)", paths[i]);
			goto err;
		}
	}
	return src;
err:
	trawl_source_free(src);
	errno = -rc;
	return NULL;
}

struct trawl_reader *trawl_reader_new(const char *const *paths, size_t npaths,
				      const struct trawl_reader_opts *o, char *err, size_t errlen)
{
	struct trawl_source_opts so;

	tr_reader_opts_source(o, &so);
	struct trawl_source *src = trawl_source_files(paths, npaths, &so, err, errlen);
	if (!src)
		return NULL;
	return trawl_reader_open(&src, 1, o, err, errlen);
}

/* ------------------------------------------------------------- memory */

struct mem_priv {
	struct trawl_ctf_trace *owned;	/* parsed from the caller's text */
};

static void mem_release(struct trawl_source *src)
{
	struct mem_priv *mp = src->priv;

	/* the traces go first (trawl_source_free), then the model */
	for (size_t i = 0; i < src->ntraces; i++)
		tr_reader_trace_free(src->traces[i]);
	src->ntraces = 0;
	if (mp)
		trawl_ctf_trace_free(mp->owned);
	free(mp);
}

static const struct source_ops mem_ops = { .kind = "memory", .release = mem_release };

/* A memory source over a model (borrowed: the caller's, or mem_priv's). */
static struct trawl_source *mem_source(struct trawl_ctf_trace *meta, const uint8_t *const *bufs,
				       const size_t *lens, size_t n, const struct trawl_source_opts *o,
				       struct mem_priv *mp, char *err, size_t errlen)
{
	struct trawl_source *src = tr_source_alloc(&mem_ops, o);
	struct trawl_reader_trace *t = NULL;
	int rc = -ENOMEM;

	if (!src) {
		free(mp);
		tr_seterr(err, errlen, ENOMEM, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	src->priv = mp;
	if (!(t = calloc(1, sizeof(*t))))
		goto nomem;
	t->borrowed = true;
	t->dec.meta = meta;
	const struct trawl_ctf_env *h = trawl_ctf_trace_env(meta, "hostname");
	t->hostname = h && !h->is_int && h->sval ? h->sval : "";
	tr_source_trace_fix(src, t);
	if (!(t->path = strdup("mem")))
		goto nomem;
	if ((rc = tr_ctf_tdec_init(&t->dec, meta, (const char *const *)src->events, src->nevents,
				err, errlen)))
		goto err;
	if ((rc = tr_source_add_trace(src, t)))
		goto nomem;
	t = NULL;
	struct trawl_reader_trace *tr = src->traces[0];
	for (size_t i = 0; i < n; i++) {
		char name[32];
		snprintf(name, sizeof(name), "mem/s_%zu", i);
		struct trawl_reader_stream *s = tr_reader_stream_new(tr, name);
		if (!s)
			goto nomem;
		s->cs.borrowed = true;
		s->cs.map = bufs[i];
		s->cs.size = lens[i];
		s->cs.st.bytes = lens[i];
		if (tr_source_add_stream(src, tr, s)) {
			tr_reader_stream_free(s);
			goto nomem;
		}
	}
	return src;
nomem:
	rc = tr_seterr(err, errlen, ENOMEM, "out of memory");
err:
	tr_reader_trace_free(t);
	trawl_source_free(src);
	errno = -rc;
	return NULL;
}

struct trawl_source *trawl_source_memory(const char *metadata, size_t len,
					 const uint8_t *const *streams, const size_t *lens,
					 size_t nstreams, const struct trawl_source_opts *o,
					 char *err, size_t errlen)
{
	char msg[512] = "";
	struct mem_priv *mp = calloc(1, sizeof(*mp));

	if (!mp) {
		tr_seterr(err, errlen, ENOMEM, "out of memory");
		return NULL;
	}
	mp->owned = trawl_ctf_metadata_parse(metadata, len, msg, sizeof(msg));
	if (!mp->owned) {
		int e = errno ? errno : EINVAL;
		tr_seterr(err, errlen, e, "metadata: %s", msg);
		free(mp);
		errno = e;
		return NULL;
	}
	return mem_source(mp->owned, streams, lens, nstreams, o, mp, err, errlen);
}

struct trawl_reader *tr_reader_new_mem(struct trawl_ctf_trace *meta, const uint8_t *const *bufs,
				    const size_t *lens, size_t n, const struct trawl_reader_opts *o,
				    char *err, size_t errlen)
{
	struct trawl_source_opts so;

	tr_reader_opts_source(o, &so);
	struct trawl_source *src = mem_source(meta, bufs, lens, n, &so, NULL, err, errlen);
	if (!src)
		return NULL;
	return trawl_reader_open(&src, 1, o, err, errlen);
}
