/* SPDX-License-Identifier: MIT */
/*
 * lib/sync/store.c - the stored result of `trawl sync`: SESSION/sync.txt,
 * a versioned line-oriented text file (docs/sync.md), and its loader,
 * which gives the reader's clock corrections.
 *
 *	# trawl sync 1
 *	groups 1
 *	host host1 t0 T y0 Y slope S quality accurate reference host0 group 0
 *	     hops 1 path host1,host0 first F last L bound_start B bound_mid B
 *	     bound_end B bound_max B                          (one line)
 *
 * Lines are "key value" pairs after "host NAME"; '#' starts a comment
 * line; unknown keys are ignored (a later version 1 may add some); a
 * missing bound is "-".
 */
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "trawl/ctf.h"
#include "trawl/pipe.h"
#include "trawl/sync.h"
#include "util/outfile.h"

static void entry_release(struct trawl_sync_store_entry *e)
{
	free(e->host);
	free(e->reference);
	free(e->path);
}

void trawl_sync_store_free(struct trawl_sync_store *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		entry_release(&s->entries[i]);
	free(s->entries);
	free(s->fixes);
	free(s);
}

static bool plain_word(const char *s)
{
	if (!s || !*s)
		return false;
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || *s == 0x7f)
			return false;
	return true;
}

static void put_bound(FILE *f, const char *key, int64_t b)
{
	if (b == TRAWL_SYNC_UNBOUNDED || b < 0)
		fprintf(f, " %s -", key);
	else
		fprintf(f, " %s %" PRId64, key, b);
}

int trawl_sync_store_write(const char *path, const struct trawl_sync_store_entry *e, size_t n,
			   char *err, size_t errlen)
{
	size_t groups = 0;
	struct tr_outfile of;
	FILE *f;
	int rc = 0;

	for (size_t i = 0; i < n; i++) {
		if (!plain_word(e[i].host) || !plain_word(e[i].reference) ||
		    (e[i].path && !plain_word(e[i].path)))
			return tr_seterr(err, errlen, EINVAL,
				      "%s: host name '%s' cannot be stored (empty or with spaces)",
				      path, e[i].host ? e[i].host : "");
		if (e[i].group + 1 > groups)
			groups = e[i].group + 1;
	}
	/* a regular file replaced once complete and on disk; a symbolic link
	 * refused; a device or FIFO written in place (util/outfile.h) */
	if ((rc = tr_outfile_open(&of, path, 0, 0666, err, errlen)))
		return rc;
	if (!(f = tr_outfile_stdio(&of))) {
		tr_outfile_release(&of);
		return tr_seterr(err, errlen, ENOMEM, "out of memory");
	}
	fprintf(f, "# trawl sync %d\n", TRAWL_SYNC_STORE_VERSION);
	fprintf(f, "# Clock corrections computed by `trawl sync` (see trawl-sync(1)): per node,\n"
		   "# reference time = y0 + floor(slope * (node time - t0) / 2^%d), times in ns\n"
		   "# since the epoch; bounds in ns (\"-\": none).\n", TRAWL_SYNC_SHIFT);
	fprintf(f, "groups %zu\n", groups);
	for (size_t i = 0; i < n; i++) {
		const struct trawl_sync_store_entry *x = &e[i];
		fprintf(f, "host %s t0 %" PRId64 " y0 %" PRId64 " slope %" PRId64 " quality %s"
			" reference %s group %zu hops %zu path %s first %" PRId64 " last %" PRId64,
			x->host, x->xform.t0, x->xform.y0, x->xform.slope,
			x->is_ref ? "reference" : trawl_sync_quality_name(x->quality), x->reference,
			x->group, x->hops, x->path ? x->path : x->host, x->first_ts, x->last_ts);
		put_bound(f, "bound_start", x->bound_start);
		put_bound(f, "bound_mid", x->bound_mid);
		put_bound(f, "bound_end", x->bound_end);
		put_bound(f, "bound_max", x->bound_max);
		fputc('\n', f);
	}
	rc = tr_outfile_commit(&of, err, errlen);
	tr_outfile_release(&of);
	return rc;
}

/* ------------------------------------------------------------ loading */

static int parse_i64(const char *s, int64_t *v)
{
	char *end;
	long long x;

	if (!s || !*s)
		return -1;
	errno = 0;
	x = strtoll(s, &end, 10);
	if (errno || *end)
		return -1;
	*v = x;
	return 0;
}

static int parse_bound(const char *s, int64_t *v)
{
	if (s && !strcmp(s, "-")) {
		*v = TRAWL_SYNC_UNBOUNDED;
		return 0;
	}
	return parse_i64(s, v) || *v < 0 ? -1 : 0;
}

static int parse_quality(const char *s, struct trawl_sync_store_entry *e)
{
	if (!strcmp(s, "reference")) {
		e->quality = TRAWL_SYNC_ACCURATE;
		e->is_ref = 1;
		return 0;
	}
	for (int q = TRAWL_SYNC_ABSENT; q <= TRAWL_SYNC_FAIL; q++)
		if (!strcmp(s, trawl_sync_quality_name((enum trawl_sync_quality)q))) {
			e->quality = (enum trawl_sync_quality)q;
			return 0;
		}
	return -1;
}

/* One "host ..." line (tokens after "host"). NULL on success, else why. */
static const char *parse_host(char **tok, size_t ntok, struct trawl_sync_store_entry *e)
{
	int64_t v;
	unsigned have = 0;

	memset(e, 0, sizeof(*e));
	e->bound_start = e->bound_mid = e->bound_end = e->bound_max = TRAWL_SYNC_UNBOUNDED;
	e->first_ts = INT64_MAX;
	e->last_ts = INT64_MIN;
	if (ntok < 1)
		return "no host name";
	if (!(e->host = strdup(tok[0])))
		return "out of memory";
	if ((ntok - 1) % 2)
		return "a key without a value";
	for (size_t i = 1; i + 1 < ntok; i += 2) {
		const char *k = tok[i], *val = tok[i + 1];
		int bad = 0;

		if (!strcmp(k, "t0")) {
			bad = parse_i64(val, &e->xform.t0);
			have |= 1;
		} else if (!strcmp(k, "y0")) {
			bad = parse_i64(val, &e->xform.y0);
			have |= 2;
		} else if (!strcmp(k, "slope")) {
			bad = parse_i64(val, &e->xform.slope) || e->xform.slope <= 0;
			have |= 4;
		} else if (!strcmp(k, "quality")) {
			bad = parse_quality(val, e);
		} else if (!strcmp(k, "reference")) {
			free(e->reference);
			if (!(e->reference = strdup(val)))
				return "out of memory";
		} else if (!strcmp(k, "path")) {
			free(e->path);
			if (!(e->path = strdup(val)))
				return "out of memory";
		} else if (!strcmp(k, "group")) {
			bad = parse_i64(val, &v) || v < 0;
			e->group = (size_t)v;
		} else if (!strcmp(k, "hops")) {
			bad = parse_i64(val, &v) || v < 0;
			e->hops = (size_t)v;
		} else if (!strcmp(k, "first")) {
			bad = parse_i64(val, &e->first_ts);
		} else if (!strcmp(k, "last")) {
			bad = parse_i64(val, &e->last_ts);
		} else if (!strcmp(k, "bound_start")) {
			bad = parse_bound(val, &e->bound_start);
		} else if (!strcmp(k, "bound_mid")) {
			bad = parse_bound(val, &e->bound_mid);
		} else if (!strcmp(k, "bound_end")) {
			bad = parse_bound(val, &e->bound_end);
		} else if (!strcmp(k, "bound_max")) {
			bad = parse_bound(val, &e->bound_max);
		}
		if (bad) {
			static __thread char why[96];
			snprintf(why, sizeof(why), "bad value '%.40s' of %.20s", val, k);
			return why;
		}
	}
	if ((have & 7) != 7)
		return "t0, y0 and slope are required";
	if (!e->reference && !(e->reference = strdup(e->host)))
		return "out of memory";
	return NULL;
}

struct trawl_sync_store *trawl_sync_store_load(const char *path, char *err, size_t errlen)
{
	struct trawl_sync_store *s = NULL;
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0, lineno = 0, ecap = 0;
	ssize_t len;
	int rc = 0;
	bool header = false;

	if (!f) {
		rc = tr_seterr(err, errlen, errno, "%s: %s", path, strerror(errno));
		errno = -rc;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		rc = tr_seterr(err, errlen, ENOMEM, "out of memory");
		goto out;
	}
	while ((len = getline(&line, &cap, f)) >= 0) {
		char *tok[64], *save = NULL, *t;
		size_t ntok = 0;

		lineno++;
		if (len && line[len - 1] == '\n')
			line[--len] = 0;
		if (lineno == 1) {
			int v;
			char c;
			if (sscanf(line, "# trawl sync %d%c", &v, &c) != 1) {
				rc = tr_seterr(err, errlen, EINVAL, "%s:1: not a trawl sync result "
					    "(want '# trawl sync %d')", path, TRAWL_SYNC_STORE_VERSION);
				goto out;
			}
			if (v != TRAWL_SYNC_STORE_VERSION) {
				rc = tr_seterr(err, errlen, EINVAL, "%s:1: version %d, this trawl reads "
					    "version %d: run trawl sync again", path, v,
					    TRAWL_SYNC_STORE_VERSION);
				goto out;
			}
			header = true;
			continue;
		}
		if (line[0] == '#')
			continue;
		for (t = strtok_r(line, " \t", &save); t && ntok < 64; t = strtok_r(NULL, " \t", &save))
			tok[ntok++] = t;
		if (!ntok)
			continue;
		if (t) {
			rc = tr_seterr(err, errlen, EINVAL, "%s:%zu: too many fields", path, lineno);
			goto out;
		}
		if (!strcmp(tok[0], "groups")) {
			int64_t g;
			if (ntok != 2 || parse_i64(tok[1], &g) || g < 0) {
				rc = tr_seterr(err, errlen, EINVAL, "%s:%zu: bad groups line", path, lineno);
				goto out;
			}
			s->groups = (size_t)g;
		} else if (!strcmp(tok[0], "host")) {
			if (tr_grow(&s->entries, &ecap, s->n, sizeof(*s->entries))) {
				rc = tr_seterr(err, errlen, ENOMEM, "out of memory");
				goto out;
			}
			const char *why = parse_host(tok + 1, ntok - 1, &s->entries[s->n]);
			s->n++;
			if (why) {
				rc = tr_seterr(err, errlen, EINVAL, "%s:%zu: %s", path, lineno, why);
				goto out;
			}
			for (size_t i = 0; i + 1 < s->n; i++)
				if (!strcmp(s->entries[i].host, s->entries[s->n - 1].host)) {
					rc = tr_seterr(err, errlen, EINVAL, "%s:%zu: host %s twice", path,
						    lineno, s->entries[i].host);
					goto out;
				}
		}
		/* other lines: later additions, ignored */
	}
	if (ferror(f)) {
		rc = tr_seterr(err, errlen, EIO, "%s: read error", path);
		goto out;
	}
	if (!header) {
		rc = tr_seterr(err, errlen, EINVAL, "%s: empty file", path);
		goto out;
	}
	s->fixes = calloc(s->n ? s->n : 1, sizeof(*s->fixes));
	if (!s->fixes) {
		rc = tr_seterr(err, errlen, ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < s->n; i++) {
		s->fixes[i].host = s->entries[i].host;
		s->fixes[i].xform = s->entries[i].xform;
	}
	s->nfixes = s->n;
out:
	free(line);
	fclose(f);
	if (rc) {
		trawl_sync_store_free(s);
		errno = -rc;
		return NULL;
	}
	return s;
}

/* ------------------------------------------------------------ finding */

static char *exists_in(const char *dir)
{
	char *p;
	struct stat st;

	if (asprintf(&p, "%s%s%s", dir, dir[0] && dir[strlen(dir) - 1] == '/' ? "" : "/",
		     TRAWL_SYNC_STORE_NAME) < 0)
		return NULL;
	if (stat(p, &st) == 0 && S_ISREG(st.st_mode))
		return p;
	free(p);
	return NULL;
}

char *trawl_sync_store_find(const char *const *paths, size_t npaths)
{
	for (size_t i = 0; i < npaths; i++) {
		char *p = exists_in(paths[i]), *real;
		struct stat st;

		if (p)
			return p;
		if (stat(paths[i], &st))
			continue;
		if (S_ISREG(st.st_mode)) {
			/* a stored result named itself */
			if (!(p = strdup(paths[i])))
				return NULL;
			return p;
		}
		if (!S_ISDIR(st.st_mode))
			continue;
		real = realpath(paths[i], NULL);
		if (!real)
			continue;
		for (int up = 0; up < 2 && strcmp(real, "/"); up++) {
			char *d = dirname(real);	/* in place for a path from realpath */
			if (d != real)
				memmove(real, d, strlen(d) + 1);
			if ((p = exists_in(real))) {
				free(real);
				return p;
			}
		}
		free(real);
	}
	errno = ENOENT;
	return NULL;
}
