/* SPDX-License-Identifier: MIT */
/*
 * lib/agent/settings.c - the session settings: one table, one row per key.
 * A row parses and checks a value into the session (set) and prints the
 * key's lines of a description (print). Everything that names a setting
 * goes through the table:
 *   - create's "key=value" arguments and the oneshot session's settings
 *     (tr_setting_apply),
 *   - the description `trawl save` writes (tr_session_describe: every
 *     row's lines, in the table's order) and `trawl load` reads
 *     (tr_session_load: each line's row),
 *   - the program's options and configuration (trawl_agent_setting_at():
 *     `trawl create` and `trawl agent --oneshot` make an option --KEY of
 *     each row flagged OPTION, and take [session] KEY for CONF rows).
 * Adding a setting: a field in struct session, a row here (docs/agent.md
 * lists the keys); see docs/CONTRIBUTING.md.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agent-internal.h"

struct setting {
	struct trawl_agent_setting pub;
	/* Parses v into s: 0, or -errno with a message in why (none: "bad
	 * value for KEY: 'v'"). */
	int (*set)(struct session *s, const char *v, char *why, size_t wlen);
	/* The key's "key = value" lines of a description (none when unset). */
	void (*print)(const struct session *s, FILE *f, const char *key);
};

/* ------------------------------------------------------------- values */

static int parse_u32(const char *v, uint32_t *out)
{
	char *end;
	unsigned long long x = strtoull(v, &end, 0);
	if (!*v || x > UINT32_MAX)
		return -EINVAL;
	if (*end == 'k' || *end == 'K')
		x <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		x <<= 20, end++;
	if (*end || x > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)x;
	return 0;
}

/* A power of two in [lo, hi] into *out: 0 or -EINVAL. */
static int parse_pow2(const char *v, uint32_t lo, uint32_t hi, unsigned *out)
{
	uint32_t u;
	if (parse_u32(v, &u) < 0 || u < lo || u > hi || (u & (u - 1)))
		return -EINVAL;
	*out = u;
	return 0;
}

/* One of names[] (NULL-terminated) into *out (its index): 0 or -EINVAL. */
static int parse_word(const char *v, const char *const *names, unsigned *out)
{
	for (unsigned i = 0; names[i]; i++)
		if (strcmp(v, names[i]) == 0) {
			*out = i;
			return 0;
		}
	return -EINVAL;
}

/* A string setting: "" unsets it. */
static int set_str(char **field, const char *v)
{
	char *n = NULL;
	if (*v && !(n = strdup(v)))
		return -ENOMEM;
	free(*field);
	*field = n;
	return 0;
}

static void print_str(FILE *f, const char *key, const char *v)
{
	if (v)
		fprintf(f, "%s = %s\n", key, v);
}

int trawl_agent_loglevel(const char *s)
{
	static const struct {
		const char *name;
		int v;
	} names[] = {
		{ "emerg", 0 }, { "alert", 1 }, { "crit", 2 }, { "err", 3 }, { "error", 3 },
		{ "warning", 4 }, { "warn", 4 }, { "notice", 5 }, { "info", 6 },
		{ "debug", 14 },
	};
	if (!s || !*s)
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (strcasecmp(s, names[i].name) == 0 ||
		    (strncasecmp(s, "TRAWL_LOGLEVEL_", 15) == 0 && strcasecmp(s + 15, names[i].name) == 0))
			return names[i].v;
	char *end;
	long v = strtol(s, &end, 10);
	return *end || v < 0 || v > 14 ? -1 : (int)v;
}

/* ------------------------------------------------------------- contexts, rules */

/* Bit i is TRAWL_UST_CTX_* of ctx_names[i]. */
static const char *const ctx_names[] = { "vpid", "vtid", "procname", "cgroup" };

unsigned tr_ctx_bit(const char *n)
{
	for (size_t i = 0; i < ARRAY_SIZE(ctx_names); i++)
		if (strcmp(n, ctx_names[i]) == 0)
			return 1u << i;
	if (strcmp(n, "cgroup_id") == 0 || strcmp(n, "cgroup-id") == 0)
		return TRAWL_UST_CTX_CGROUP_ID;
	return 0;
}

const char *tr_ctx_name(unsigned i)
{
	return i < ARRAY_SIZE(ctx_names) ? ctx_names[i] : NULL;
}

int tr_rule_add(struct session *s, const char *glob, int ll)
{
	for (size_t i = 0; i < s->nrules; i++)
		if (strcmp(s->rules[i].glob, glob) == 0) {
			s->rules[i].loglevel = ll;
			return 0;
		}
	void *m = realloc(s->rules, (s->nrules + 1) * sizeof(*s->rules));
	if (!m)
		return -ENOMEM;
	s->rules = m;
	s->rules[s->nrules].glob = strdup(glob);
	s->rules[s->nrules].loglevel = ll;
	if (!s->rules[s->nrules].glob)
		return -ENOMEM;
	s->nrules++;
	return 0;
}

int tr_rule_add_at(struct session *s, const char *spec)
{
	char *g = strdup(spec);
	if (!g)
		return -ENOMEM;
	char *at = strrchr(g, '@');
	int ll = -1, r = -EINVAL;
	if (at) {
		*at = 0;
		ll = trawl_agent_loglevel(at + 1);
	}
	if (*g && (!at || ll >= 0))
		r = tr_rule_add(s, g, ll);
	free(g);
	return r;
}

/* ------------------------------------------------------------- the rows */

static int set_output(struct session *s, const char *v, char *why, size_t wlen)
{
	return set_str(&s->output, v);
}

static void print_output(const struct session *s, FILE *f, const char *key)
{
	print_str(f, key, s->output);
}

static int set_snapshot(struct session *s, const char *v, char *why, size_t wlen)
{
	static const char *const yes[] = { "no", "yes", "0", "1", "false", "true", NULL };
	unsigned i;
	if (parse_word(v, yes, &i) < 0)
		return -EINVAL;
	s->snapshot = i & 1;
	if (s->snapshot)
		s->mode = TRAWL_UST_OVERWRITE;
	return 0;
}

static void print_snapshot(const struct session *s, FILE *f, const char *key)
{
	fprintf(f, "%s = %s\n", key, s->snapshot ? "yes" : "no");
}

/* indexes are TRAWL_UST_DISCARD, TRAWL_UST_OVERWRITE */
static const char *const mode_names[] = { "discard", "overwrite", NULL };

static int set_mode(struct session *s, const char *v, char *why, size_t wlen)
{
	return parse_word(v, mode_names, &s->mode);
}

static void print_mode(const struct session *s, FILE *f, const char *key)
{
	fprintf(f, "%s = %s\n", key, mode_names[s->mode == TRAWL_UST_OVERWRITE]);
}

static int set_subbuf_size(struct session *s, const char *v, char *why, size_t wlen)
{
	return parse_pow2(v, 4096, 1u << 30, &s->S);
}

static void print_subbuf_size(const struct session *s, FILE *f, const char *key)
{
	fprintf(f, "%s = %u\n", key, s->S);
}

static int set_num_subbuf(struct session *s, const char *v, char *why, size_t wlen)
{
	return parse_pow2(v, 2, 65536, &s->N);
}

static void print_num_subbuf(const struct session *s, FILE *f, const char *key)
{
	fprintf(f, "%s = %u\n", key, tr_nsubbuf(s));
}

/* indexes are TRAWL_UST_CLOCK_*; NULL-terminated */
static const char *const clock_names[4] = {
	[TRAWL_UST_CLOCK_AUTO] = "auto", [TRAWL_UST_CLOCK_TSC] = "tsc",
	[TRAWL_UST_CLOCK_MONOTONIC] = "monotonic",
};

static int set_clock(struct session *s, const char *v, char *why, size_t wlen)
{
	return parse_word(v, clock_names, &s->clock_opt);
}

static void print_clock(const struct session *s, FILE *f, const char *key)
{
	fprintf(f, "%s = %s\n", key, clock_names[s->clock_opt]);
}

/* indexes are TRAWL_UST_HEADER_*; NULL-terminated */
static const char *const header_names[3] = {
	[TRAWL_UST_HEADER_LARGE] = "large", [TRAWL_UST_HEADER_FIXED] = "fixed",
};

static int set_header(struct session *s, const char *v, char *why, size_t wlen)
{
	return parse_word(v, header_names, &s->header);
}

static void print_header(const struct session *s, FILE *f, const char *key)
{
	fprintf(f, "%s = %s\n", key, header_names[s->header]);
}

static int set_context(struct session *s, const char *v, char *why, size_t wlen)
{
	unsigned b = tr_ctx_bit(v);
	if (!b)
		return tr_seterr(why, wlen, EINVAL, "unknown context '%s' (vpid, vtid, procname, cgroup)",
			      v);
	s->contexts |= b;
	return 0;
}

static void print_context(const struct session *s, FILE *f, const char *key)
{
	for (unsigned i = 0; tr_ctx_name(i); i++)
		if (s->contexts & (1u << i))
			fprintf(f, "%s = %s\n", key, tr_ctx_name(i));
}

/* "GLOB [loglevel LEVEL]" */
static int set_event(struct session *s, const char *v, char *why, size_t wlen)
{
	size_t gl = strcspn(v, " \t");
	const char *rest = v + gl + strspn(v + gl, " \t");
	int ll = -1;
	if (v[gl] && (strncmp(rest, "loglevel", 8) != 0 ||
		      (ll = trawl_agent_loglevel(rest + 8 + strspn(rest + 8, " \t"))) < 0))
		return tr_seterr(why, wlen, EINVAL, "expected 'event = GLOB [loglevel LEVEL]'");
	char *g = strndup(v, gl);
	int r = g && *g ? tr_rule_add(s, g, ll) : -EINVAL;
	free(g);
	return r < 0 ? tr_seterr(why, wlen, -r, "bad event rule") : 0;
}

static void print_event(const struct session *s, FILE *f, const char *key)
{
	for (size_t i = 0; i < s->nrules; i++) {
		if (s->rules[i].loglevel >= 0)
			fprintf(f, "%s = %s loglevel %d\n", key, s->rules[i].glob, s->rules[i].loglevel);
		else
			fprintf(f, "%s = %s\n", key, s->rules[i].glob);
	}
}

static int set_kernel_event(struct session *s, const char *v, char *why, size_t wlen)
{
	int r = tr_kernel_check(s->a, v, why, wlen);
	if (r < 0)
		return r;
	r = tr_kernel_add_event(s, v);
	return r < 0 ? tr_seterr(why, wlen, -r, "out of memory") : 0;
}

static void print_kernel_event(const struct session *s, FILE *f, const char *key)
{
	for (size_t i = 0; i < s->nkev; i++)
		fprintf(f, "%s = %s\n", key, s->kev[i]);
}

static int set_kernel_filter(struct session *s, const char *v, char *why, size_t wlen)
{
	if (!s->a->o.kernel)
		return tr_seterr(why, wlen, ENOTSUP, "this agent has no kernel support");
	return tr_kernel_set_filter(s, v, why, wlen);
}

static void print_kernel_filter(const struct session *s, FILE *f, const char *key)
{
	print_str(f, key, s->kfilter);
}

static int set_kernel_pid(struct session *s, const char *v, char *why, size_t wlen)
{
	if (!s->a->o.kernel)
		return tr_seterr(why, wlen, ENOTSUP, "this agent has no kernel support");
	return tr_kernel_add_pid(s, v, why, wlen);
}

static void print_kernel_pid(const struct session *s, FILE *f, const char *key)
{
	for (size_t i = 0; i < s->nkpids; i++)
		fprintf(f, "%s = %d\n", key, (int)s->kpids[i]);
}

static int set_relay(struct session *s, const char *v, char *why, size_t wlen)
{
	return set_str(&s->relay, v);
}

static void print_relay(const struct session *s, FILE *f, const char *key)
{
	print_str(f, key, s->relay);
}

static int set_relay_session(struct session *s, const char *v, char *why, size_t wlen)
{
	return set_str(&s->relay_session, v);
}

static void print_relay_session(const struct session *s, FILE *f, const char *key)
{
	print_str(f, key, s->relay_session);
}

static int set_live_timer(struct session *s, const char *v, char *why, size_t wlen)
{
	uint32_t u;
	if (parse_u32(v, &u) < 0 || u > 60000)
		return -EINVAL;
	s->live_ms = u;
	return 0;
}

static void print_live_timer(const struct session *s, FILE *f, const char *key)
{
	if (s->live_ms)
		fprintf(f, "%s = %u\n", key, s->live_ms);
}

#define OPTION TRAWL_AGENT_SETTING_OPTION
#define CONF TRAWL_AGENT_SETTING_CONF
#define LIST TRAWL_AGENT_SETTING_LIST
#define ROW(key, fn, arg, flags, help) { { key, arg, help, flags }, set_##fn, print_##fn }

/* In the order of a description. The help: one line of at most 50 columns
 * (usage texts). */
static const struct setting settings[] = {
	ROW("output", output, "DIR", 0, "the session directory (absolute)"),
	ROW("snapshot", snapshot, "yes|no", 0, "a flight recorder, written by snapshot record"),
	ROW("mode", mode, "discard|overwrite", CONF, "full buffers drop new events, or overwrite"),
	ROW("subbuf-size", subbuf_size, "BYTES", OPTION | CONF,
	    "bytes per sub-buffer: a power of two, 4K..1G"),
	ROW("num-subbuf", num_subbuf, "N", OPTION | CONF,
	    "sub-buffers per thread: a power of two, 2..65536"),
	ROW("clock", clock, "auto|tsc|monotonic", OPTION | CONF,
	    "auto: the TSC where it is the clocksource"),
	ROW("header", header, "large|fixed", OPTION | CONF, "event header: large (compact) or fixed"),
	ROW("context", context, "vpid|vtid|procname|cgroup", LIST, "a context field of every event"),
	ROW("event", event, "GLOB [loglevel LEVEL]", LIST,
	    "an enable rule (LEVEL: that or more severe)"),
	ROW("kernel-event", kernel_event, "EVENT", LIST, "a kernel event, glob or preset (enable -k)"),
	ROW("kernel-filter", kernel_filter, "EXPR", 0, "the ftrace filter of every kernel event"),
	ROW("relay", relay, "HOST[:PORT]", OPTION, "streamed to this trawl relay"),
	ROW("relay-session", relay_session, "NAME", OPTION, "its name there (default: the session's)"),
	ROW("live-timer", live_timer, "MS", OPTION, "to the relay every MS ms (0: when full)"),
	ROW("kernel-pid", kernel_pid, "PID", LIST, "only this process's kernel events"),
};

const struct trawl_agent_setting *trawl_agent_setting_at(size_t i)
{
	return i < ARRAY_SIZE(settings) ? &settings[i].pub : NULL;
}

static const struct setting *find(const char *key, size_t kl)
{
	for (size_t i = 0; i < ARRAY_SIZE(settings); i++)
		if (strlen(settings[i].pub.key) == kl && strncmp(settings[i].pub.key, key, kl) == 0)
			return &settings[i];
	return NULL;
}

int tr_setting_set(struct session *s, const char *key, const char *v, char *why, size_t wlen)
{
	const struct setting *st = find(key, strlen(key));
	if (!st)
		return tr_seterr(why, wlen, EINVAL, "unknown setting '%s'", key);
	if (wlen)
		why[0] = 0;
	int r = st->set(s, v, why, wlen);
	if (r < 0 && wlen && !why[0])
		snprintf(why, wlen, r == -ENOMEM ? "out of memory" : "bad value for %s: '%s'", key, v);
	return r;
}

int tr_setting_apply(struct session *s, const char *kv, char *why, size_t wlen)
{
	const char *eq = strchr(kv, '=');
	size_t kl = eq ? (size_t)(eq - kv) : strlen(kv);
	char key[64];
	if (kl >= sizeof(key) || !find(kv, kl))
		return tr_seterr(why, wlen, EINVAL, "unknown setting '%.*s'", (int)kl, kv);
	memcpy(key, kv, kl);
	key[kl] = 0;
	return tr_setting_set(s, key, eq ? eq + 1 : "", why, wlen);
}

char *tr_session_describe(const struct session *s)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	if (!f)
		return NULL;
	fprintf(f, "# trawl session description (trawl save; trawl load reads it)\n");
	fprintf(f, "session = %s\n", s->name);
	for (size_t i = 0; i < ARRAY_SIZE(settings); i++)
		settings[i].print(s, f, settings[i].pub.key);
	if (fclose(f) != 0) {
		free(out);
		return NULL;
	}
	return out;
}

struct session *tr_session_load(struct trawl_agent *a, char *text, const char *rename, char *why,
				size_t wlen)
{
	struct session *s = NULL;
	char *save = NULL;
	unsigned lineno = 0;
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		lineno++;
		while (*l == ' ' || *l == '\t')
			l++;
		size_t n = strlen(l);
		while (n && (l[n - 1] == ' ' || l[n - 1] == '\t' || l[n - 1] == '\r'))
			l[--n] = 0;
		if (!*l || *l == '#')
			continue;
		char *eq = strchr(l, '=');
		if (!eq) {
			snprintf(why, wlen, "line %u: expected 'key = value'", lineno);
			goto err;
		}
		char *k = l, *v = eq + 1;
		char *ke = eq;
		while (ke > k && (ke[-1] == ' ' || ke[-1] == '\t'))
			ke--;
		*ke = 0;
		while (*v == ' ' || *v == '\t')
			v++;
		if (strcmp(k, "session") == 0) {
			if (s) {
				snprintf(why, wlen, "line %u: a second 'session'", lineno);
				goto err;
			}
			if (!tr_session_name_ok(rename ? rename : v, why, wlen))
				goto err;
			s = tr_session_new(a, rename ? rename : v, why, wlen);
			if (!s)
				goto err;
			continue;
		}
		if (!s) {
			snprintf(why, wlen, "line %u: 'session = NAME' must come first", lineno);
			goto err;
		}
		char w2[400];
		if (tr_setting_set(s, k, v, w2, sizeof(w2)) < 0) {
			snprintf(why, wlen, "line %u: %s", lineno, w2);
			goto err;
		}
	}
	if (!s) {
		snprintf(why, wlen, "no 'session = NAME' line");
		return NULL;
	}
	if (tr_session_check(s, why, wlen) < 0)
		goto err;
	return s;
err:
	if (s)
		tr_session_free(s);
	return NULL;
}
