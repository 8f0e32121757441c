/* SPDX-License-Identifier: MIT */
/*
 * lib/util/config.c - trawl's settings: the files, then the environment (see
 * config.h for the API and the order of precedence, docs/config.md for the
 * format).
 *
 * The settings are a flat list of entries (section, key, values), each value
 * with where it came from. A file's first occurrence of a key replaces what
 * earlier files gave; its later occurrences append (a list). The
 * environment is snapshotted at load: a variable TRAWL_<SECTION>_<KEY> is
 * looked up by the name computed from the section and key asked for, so
 * sections and keys with '_' or '-' in them map without ambiguity.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "util/config.h"

/* The system-wide file (a variable so that the unit test can move it). */
const char *tr_conf_sys_path = "/etc/trawl/trawl.conf";

extern char **environ;

struct conf_entry {
	char *section, *key;
	char **vals;			/* the list, in order */
	char **origins;			/* per value: "FILE:LINE" or "environment NAME" */
	size_t n, cap;
	unsigned gen;			/* which source set it (a file, the environment) */
};

struct trawl_conf {
	struct conf_entry *e;
	size_t n, cap;
	/* an index of e by section and key (open addressing: 1 + the entry's
	 * position, 0 empty; at most half full): a lookup costs the same with
	 * 40,000 sections as with 4 (it was a scan: quadratic parsing) */
	size_t *ix;
	size_t ixcap;
	char **env;			/* "TRAWL_...=value" copies, NULL-terminated */
	size_t nenv;
	/* environment values, materialized on lookup: one entry per name asked */
	struct conf_entry *envc;
	size_t nenvc, capenvc;
};

__attribute__((format(printf, 3, 4)))
static void cerr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static void entry_release(struct conf_entry *e)
{
	for (size_t i = 0; i < e->n; i++) {
		free(e->vals[i]);
		free(e->origins[i]);
	}
	free(e->vals);
	free(e->origins);
	free(e->section);
	free(e->key);
	e->vals = e->origins = NULL;
	e->n = e->cap = 0;
}

static void entry_clear(struct conf_entry *e)
{
	for (size_t i = 0; i < e->n; i++) {
		free(e->vals[i]);
		free(e->origins[i]);
		e->vals[i] = e->origins[i] = NULL;
	}
	e->n = 0;
}

/* Appends one value (copies of val and origin) to e. 0 or -ENOMEM. */
static int entry_push(struct conf_entry *e, const char *val, const char *origin)
{
	if (e->n == e->cap) {
		size_t cap = e->cap ? 2 * e->cap : 4;
		char **v = realloc(e->vals, (cap + 1) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		e->vals = v;
		char **o = realloc(e->origins, (cap + 1) * sizeof(*o));
		if (!o)
			return -ENOMEM;
		e->origins = o;
		e->cap = cap;
	}
	char *vv = strdup(val), *oo = strdup(origin);
	if (!vv || !oo) {
		free(vv);
		free(oo);
		return -ENOMEM;
	}
	e->vals[e->n] = vv;
	e->origins[e->n] = oo;
	e->n++;
	e->vals[e->n] = NULL;
	return 0;
}

static struct conf_entry *get_entry_new(struct conf_entry **v, size_t *n, size_t *cap,
					const char *section, const char *key);

static struct conf_entry *find_entry(struct conf_entry *v, size_t n, const char *section,
				     const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (strcasecmp(v[i].section, section) == 0 && strcasecmp(v[i].key, key) == 0)
			return &v[i];
	return NULL;
}

/* section.key's hash, case-insensitive as their comparison. */
static size_t name_hash(const char *section, const char *key)
{
	uint64_t h = 1469598103934665603ull;
	for (const char *p = section; *p; p++)
		h = (h ^ (unsigned char)tolower((unsigned char)*p)) * 1099511628211ull;
	h = (h ^ 0xff) * 1099511628211ull;	/* no character of a name */
	for (const char *p = key; *p; p++)
		h = (h ^ (unsigned char)tolower((unsigned char)*p)) * 1099511628211ull;
	return (size_t)(h ^ (h >> 32));
}

/* The slot of c->ix holding section.key, or the empty one where it goes. */
static size_t ix_slot(const struct trawl_conf *c, const char *section, const char *key)
{
	size_t mask = c->ixcap - 1, i = name_hash(section, key) & mask;
	while (c->ix[i]) {
		const struct conf_entry *e = &c->e[c->ix[i] - 1];
		if (strcasecmp(e->section, section) == 0 && strcasecmp(e->key, key) == 0)
			break;
		i = (i + 1) & mask;
	}
	return i;
}

/* The files' entry for section.key, or NULL. */
static struct conf_entry *file_entry(const struct trawl_conf *c, const char *section,
				     const char *key)
{
	if (!c->ixcap)
		return NULL;
	size_t i = ix_slot(c, section, key);
	return c->ix[i] ? &c->e[c->ix[i] - 1] : NULL;
}

/* Room in the index for one more entry: 0 or -ENOMEM. */
static int ix_reserve(struct trawl_conf *c)
{
	if (2 * (c->n + 1) <= c->ixcap)
		return 0;
	size_t cap = c->ixcap ? 2 * c->ixcap : 64;
	size_t *ix = calloc(cap, sizeof(*ix)), *old = c->ix;
	if (!ix)
		return -ENOMEM;
	c->ix = ix;
	c->ixcap = cap;
	for (size_t j = 0; j < c->n; j++)
		c->ix[ix_slot(c, c->e[j].section, c->e[j].key)] = j + 1;
	free(old);
	return 0;
}

/* The files' entry for section.key, created if needed; NULL on ENOMEM. */
static struct conf_entry *file_entry_get(struct trawl_conf *c, const char *section,
					 const char *key)
{
	struct conf_entry *e = file_entry(c, section, key);
	if (e)
		return e;
	if (ix_reserve(c) < 0)
		return NULL;
	size_t slot = ix_slot(c, section, key);
	struct conf_entry *ne = get_entry_new(&c->e, &c->n, &c->cap, section, key);
	if (ne)
		c->ix[slot] = c->n;
	return ne;
}

/* The entry for section.key, created if needed; NULL on ENOMEM. */
static struct conf_entry *get_entry(struct conf_entry **v, size_t *n, size_t *cap,
				    const char *section, const char *key)
{
	struct conf_entry *e = find_entry(*v, *n, section, key);
	return e ? e : get_entry_new(v, n, cap, section, key);
}

/* A new entry for section.key at the end of *v; NULL on ENOMEM. */
static struct conf_entry *get_entry_new(struct conf_entry **v, size_t *n, size_t *cap,
					const char *section, const char *key)
{
	struct conf_entry *e;
	if (*n == *cap) {
		size_t nc = *cap ? 2 * *cap : 16;
		struct conf_entry *nv = realloc(*v, nc * sizeof(*nv));
		if (!nv)
			return NULL;
		*v = nv;
		*cap = nc;
	}
	e = &(*v)[*n];
	memset(e, 0, sizeof(*e));
	e->section = strdup(section);
	e->key = strdup(key);
	if (!e->section || !e->key) {
		free(e->section);
		free(e->key);
		return NULL;
	}
	(*n)++;
	return e;
}

static bool name_char(int c)
{
	return isalnum(c) || c == '_' || c == '-' || c == '.';
}

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
		s[--n] = 0;
	return s;
}

/*
 * A value: the rest of the line, trimmed; or a double-quoted string (with
 * \" \\ \t \n escapes) to keep leading or trailing blanks. Unquotes in
 * place; returns NULL on a malformed quoted string (msg says why).
 */
static char *parse_value(char *v, const char **msg)
{
	if (*v != '"')
		return v;
	char *out = v, *p = v + 1;
	for (;;) {
		if (!*p) {
			*msg = "unterminated quoted value";
			return NULL;
		}
		if (*p == '"')
			break;
		if (*p == '\\') {
			p++;
			switch (*p) {
			case '"': case '\\': *out++ = *p; break;
			case 't': *out++ = '\t'; break;
			case 'n': *out++ = '\n'; break;
			default:
				*msg = "unknown escape in quoted value (\\\" \\\\ \\t \\n)";
				return NULL;
			}
			p++;
			continue;
		}
		*out++ = *p++;
	}
	p++;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p && *p != '#') {
		*msg = "text after the closing quote";
		return NULL;
	}
	*out = 0;
	return v;
}

int tr_conf_parse(struct trawl_conf *c, const char *text, size_t len, const char *name,
		  unsigned gen, char *err, size_t errlen)
{
	char *buf = malloc(len + 1);
	char section[128] = "";
	unsigned line = 0;
	int ret = 0;

	if (!buf)
		return -ENOMEM;
	memcpy(buf, text, len);
	buf[len] = 0;
	char *end = buf + len;
	for (char *p = buf, *next; p < end && !ret; p = next) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char *eol = nl ? nl : end;
		*eol = 0;
		next = eol + 1;
		line++;
		if (strlen(p) != (size_t)(eol - p)) {
			cerr(err, errlen, "%s:%u: NUL byte in the line", name, line);
			ret = -EINVAL;
			break;
		}
		char *s = trim(p);
		if (!*s || *s == '#' || *s == ';')
			continue;
		if (*s == '[') {
			char *e = strchr(s, ']');
			size_t n;
			if (!e || *trim(e + 1)) {
				cerr(err, errlen, "%s:%u: a section header is '[name]'", name, line);
				ret = -EINVAL;
				break;
			}
			*e = 0;
			s = trim(s + 1);
			n = strlen(s);
			bool okname = n > 0 && n < sizeof(section);
			for (size_t i = 0; okname && i < n; i++)
				okname = name_char((unsigned char)s[i]);
			if (!okname) {
				cerr(err, errlen, "%s:%u: bad section name '%.60s' (letters, digits, '_', '-', '.')",
				     name, line, s);
				ret = -EINVAL;
				break;
			}
			memcpy(section, s, n + 1);
			continue;
		}
		char *eq = strchr(s, '=');
		if (!eq) {
			cerr(err, errlen, "%s:%u: expected 'key = value', '[section]' or a '#' comment",
			     name, line);
			ret = -EINVAL;
			break;
		}
		*eq = 0;
		char *key = trim(s);
		bool okkey = *key != 0 && strlen(key) < 128;
		for (char *k = key; okkey && *k; k++)
			okkey = name_char((unsigned char)*k);
		if (!okkey) {
			cerr(err, errlen, "%s:%u: bad key '%.60s' (letters, digits, '_', '-', '.')",
			     name, line, key);
			ret = -EINVAL;
			break;
		}
		if (!section[0]) {
			cerr(err, errlen, "%s:%u: key '%s' outside a [section]", name, line, key);
			ret = -EINVAL;
			break;
		}
		const char *msg = NULL;
		char *val = parse_value(trim(eq + 1), &msg);
		if (!val) {
			cerr(err, errlen, "%s:%u: %s", name, line, msg);
			ret = -EINVAL;
			break;
		}
		struct conf_entry *e = file_entry_get(c, section, key);
		char origin[4200];
		snprintf(origin, sizeof(origin), "%.4000s:%u", name, line);
		if (!e) {
			ret = -ENOMEM;
			break;
		}
		if (e->gen != gen) {
			entry_clear(e);
			e->gen = gen;
		}
		ret = entry_push(e, val, origin);
	}
	free(buf);
	if (ret == -ENOMEM)
		cerr(err, errlen, "%s: out of memory", name);
	return ret;
}

/* Reads and parses one file; a missing file is no error. */
static int conf_file(struct trawl_conf *c, const char *path, unsigned gen, char *err,
		     size_t errlen)
{
	char *text = NULL;
	size_t len = 0, cap = 0;
	int ret = 0;
	/* opened without waiting (a FIFO's open waits for a writer: the
	 * command hung), then refused unless a regular file */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		ret = -errno;
		cerr(err, errlen, "%s: %s", path, strerror(errno));
		return ret;
	}
	struct stat sb;
	if (fstat(fd, &sb) == 0 && S_ISCHR(sb.st_mode) && sb.st_rdev == makedev(1, 3)) {
		close(fd);	/* /dev/null: no settings, as an empty file */
		return 0;
	}
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		ret = fstat(fd, &sb) < 0 ? -errno : -EINVAL;
		cerr(err, errlen, "%s: not a regular file (%s): a configuration file must be one",
		     path, ret != -EINVAL ? strerror(-ret) : S_ISFIFO(sb.st_mode) ? "a FIFO" :
		     S_ISDIR(sb.st_mode) ? "a directory" : S_ISCHR(sb.st_mode) ? "a device" :
		     S_ISSOCK(sb.st_mode) ? "a socket" : "a special file");
		close(fd);
		return ret;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	FILE *f = fdopen(fd, "r");
	if (!f) {
		ret = -errno;
		cerr(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		return ret;
	}
	for (;;) {
		if (cap - len < 4096) {
			if (cap >= (64u << 20)) {
				cerr(err, errlen, "%s: larger than 64 MiB", path);
				ret = -EFBIG;
				goto out;
			}
			cap = cap ? 2 * cap : 8192;
			char *t = realloc(text, cap);
			if (!t) {
				ret = -ENOMEM;
				cerr(err, errlen, "%s: out of memory", path);
				goto out;
			}
			text = t;
		}
		size_t r = fread(text + len, 1, cap - len, f);
		len += r;
		if (r == 0) {
			if (ferror(f)) {
				ret = -EIO;
				cerr(err, errlen, "%s: read error", path);
				goto out;
			}
			break;
		}
	}
	ret = tr_conf_parse(c, text ? text : "", len, path, gen, err, errlen);
out:
	free(text);
	fclose(f);
	return ret;
}

static int snapshot_env(struct trawl_conf *c)
{
	size_t n = 0;
	for (char **e = environ; e && *e; e++)
		if (strncmp(*e, "TRAWL_", 6) == 0)
			n++;
	c->env = calloc(n + 1, sizeof(*c->env));
	if (!c->env)
		return -ENOMEM;
	for (char **e = environ; e && *e; e++)
		if (strncmp(*e, "TRAWL_", 6) == 0) {
			if (!(c->env[c->nenv] = strdup(*e)))
				return -ENOMEM;
			c->nenv++;
		}
	return 0;
}

struct trawl_conf *tr_conf_new(void)
{
	return calloc(1, sizeof(struct trawl_conf));
}

bool tr_conf_key_at(const struct trawl_conf *c, size_t i, const char **section, const char **key)
{
	if (!c || i >= c->n)
		return false;
	*section = c->e[i].section;
	*key = c->e[i].key;
	return true;
}

struct trawl_conf *tr_conf_load(char *err, size_t errlen)
{
	struct trawl_conf *c = tr_conf_new();
	const char *only = getenv("TRAWL_CONFIG");
	unsigned gen = 0;
	int ret;

	if (err && errlen)
		err[0] = 0;
	if (!c) {
		cerr(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	if (only) {
		ret = *only ? conf_file(c, only, ++gen, err, errlen) : 0;
	} else {
		ret = conf_file(c, tr_conf_sys_path, ++gen, err, errlen);
		if (!ret) {
			const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
			char *path = NULL;
			/* the XDG spec: a relative XDG_CONFIG_HOME is invalid, ignored */
			if (xdg && xdg[0] == '/')
				ret = asprintf(&path, "%s/trawl/trawl.conf", xdg) < 0 ? -ENOMEM : 0;
			else if (home && home[0])
				ret = asprintf(&path, "%s/.config/trawl/trawl.conf", home) < 0 ? -ENOMEM : 0;
			if (!ret && path)
				ret = conf_file(c, path, ++gen, err, errlen);
			else if (ret)
				cerr(err, errlen, "out of memory");
			free(path);
		}
	}
	if (!ret && snapshot_env(c) < 0) {
		ret = -ENOMEM;
		cerr(err, errlen, "out of memory");
	}
	if (ret) {
		tr_conf_free(c);
		errno = -ret;
		return NULL;
	}
	return c;
}

void tr_conf_free(struct trawl_conf *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		entry_release(&c->e[i]);
	for (size_t i = 0; i < c->nenvc; i++)
		entry_release(&c->envc[i]);
	for (size_t i = 0; i < c->nenv; i++)
		free(c->env[i]);
	free(c->env);
	free(c->e);
	free(c->ix);
	free(c->envc);
	free(c);
}

/* The environment variable's "NAME=value" for section.key, or NULL. */
static const char *env_lookup(const struct trawl_conf *c, const char *section, const char *key,
			      char *name, size_t cap)
{
	size_t n = (size_t)snprintf(name, cap, "TRAWL_%s_%s", section, key);
	if (n >= cap)
		return NULL;
	for (char *p = name; *p; p++)
		*p = *p == '-' ? '_' : (char)toupper((unsigned char)*p);
	for (size_t i = 0; i < c->nenv; i++)
		if (strncmp(c->env[i], name, n) == 0 && c->env[i][n] == '=')
			return c->env[i] + n + 1;
	return NULL;
}

/*
 * The entry that holds section.key's values: the environment's (made on
 * first use; c is logically const, its cache is not) or the files'. NULL if
 * unset or on ENOMEM.
 */
static struct conf_entry *lookup(const struct trawl_conf *cc, const char *section, const char *key)
{
	struct trawl_conf *c = (struct trawl_conf *)cc;
	char name[300];

	if (!c || !section || !key)
		return NULL;
	const char *v = env_lookup(c, section, key, name, sizeof(name));
	if (v) {
		struct conf_entry *e = find_entry(c->envc, c->nenvc, section, key);
		if (e)
			return e;
		e = get_entry(&c->envc, &c->nenvc, &c->capenvc, section, key);
		char origin[320];
		snprintf(origin, sizeof(origin), "environment %s", name);
		if (!e || entry_push(e, v, origin) < 0)
			return NULL;
		return e;
	}
	struct conf_entry *e = file_entry(c, section, key);
	return e && e->n ? e : NULL;
}

const char *tr_conf_get(const struct trawl_conf *c, const char *section, const char *key)
{
	struct conf_entry *e = lookup(c, section, key);
	return e ? e->vals[e->n - 1] : NULL;
}

size_t tr_conf_get_all(const struct trawl_conf *c, const char *section, const char *key,
		    const char *const **vals)
{
	struct conf_entry *e = lookup(c, section, key);
	if (!e) {
		if (vals)
			*vals = NULL;
		return 0;
	}
	if (vals)
		*vals = (const char *const *)e->vals;
	return e->n;
}

const char *tr_conf_origin(const struct trawl_conf *c, const char *section, const char *key)
{
	struct conf_entry *e = lookup(c, section, key);
	return e ? e->origins[e->n - 1] : NULL;
}
