/* SPDX-License-Identifier: MIT */
/*
 * lib/agent/verbs.c - the clients' requests (what the session commands
 * send, docs/agent.md): one table, verb -> handler and argument rules.
 * tr_verb_run() checks the rules (the argument count, the session named by
 * the first argument, its state), then calls the handler, which answers
 * with tr_cprint()/tr_cend()/tr_cfail(), now or once the applications have
 * answered (start, stop). Kernel rules travel as "--kernel=SPEC",
 * "--filter=EXPR", "--pid=N" and "--kernel-all" arguments of enable and
 * disable. Adding a verb: a handler and a row here, and a command in cli/
 * that sends it (docs/CONTRIBUTING.md).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent-internal.h"
#include "net/relay-proto.h"	/* tr_relay_name_ok */
#include "ust/proto.h"

/* The session named by argv[1], in a state where rules change. */
enum { V_SESSION = 1, V_RULES = 2 };

struct verb {
	const char *name;
	/* s: the session named by argv[1] (V_SESSION), else NULL */
	void (*run)(struct conn *c, struct session *s, int argc, char **argv);
	int min, max;			/* arguments after the verb; max -1: any */
	const char *arg1;		/* what the first one is ("no ARG1" when missing) */
	unsigned flags;			/* V_* */
};

static bool is_kopt(const char *arg, const char *opt)
{
	return strncmp(arg, opt, strlen(opt)) == 0;
}

/* ------------------------------------------------------------- list */

static void list_session(struct conn *c, const struct session *s)
{
	struct trawl_agent *a = c->a;
	tr_cprint(c, AM_OUT, "  %s [%s] %s%s, %u x %u bytes%s%s\n", s->name,
		  tr_agent_state_names[s->state], s->snapshot ? "snapshot, " : "",
		  s->mode == TRAWL_UST_OVERWRITE ? "overwrite" : "discard", tr_nsubbuf(s), s->S,
		  s->output ? ", output " : "", s->output ? s->output : "");
	for (size_t i = 0; i < s->nrules; i++) {
		if (s->rules[i].loglevel >= 0)
			tr_cprint(c, AM_OUT, "    event %s (loglevel <= %d)\n", s->rules[i].glob,
				  s->rules[i].loglevel);
		else
			tr_cprint(c, AM_OUT, "    event %s\n", s->rules[i].glob);
	}
	for (unsigned i = 0; tr_ctx_name(i); i++)
		if (s->contexts & (1u << i))
			tr_cprint(c, AM_OUT, "    context %s\n", tr_ctx_name(i));
	for (size_t i = 0; i < s->nkev; i++)
		tr_cprint(c, AM_OUT, "    kernel event %s\n", s->kev[i]);
	if (s->kfilter)
		tr_cprint(c, AM_OUT, "    kernel filter %s\n", s->kfilter);
	for (size_t i = 0; i < s->nkpids; i++)
		tr_cprint(c, AM_OUT, "    kernel pid %d\n", (int)s->kpids[i]);
	if (s->krec && s->mode == TRAWL_UST_OVERWRITE)
		tr_cprint(c, AM_OUT, "    kernel: flight recorder (written by snapshot record%s), "
			  "clock %s\n", s->output && !s->snapshot ? " and stop" : "", s->kclock);
	else if (s->krec)
		tr_cprint(c, AM_OUT, "    kernel: recording into %s/%s/kernel, clock %s\n",
			  s->output, a->hostname, s->kclock);
	else if (s->kdone)
		tr_cprint(c, AM_OUT, "    kernel: %" PRIu64 " events, %" PRIu64 " lost, %" PRIu64
			  " state dump events, clock %s%s%s\n", s->kst.events, s->kst.lost,
			  s->kst.statedump, s->kclock, s->kerr ? "; error: " : "",
			  s->kerr ? s->kerr : "");
	if (s->relay && s->live_ms)
		tr_cprint(c, AM_OUT, "    live: timer %u ms, %" PRIu64 " tick%s, %" PRIu64 " demand%s "
			  "from the relay (a viewer waits), %" PRIu64 " part%s sent at once%s\n",
			  s->live_ms, s->ticks, s->ticks == 1 ? "" : "s", s->demands,
			  s->demands == 1 ? "" : "s", s->fast_cuts, s->fast_cuts == 1 ? "" : "s",
			  s->state == S_ACTIVE && tr_mono_ms() < s->demand_until ? " (a viewer waits now)"
										   : "");
	for (struct part *p = s->parts; p; p = p->next) {
		unsigned nr = 0;
		for (struct aring *r = p->rings; r; r = r->next)
			nr++;
		tr_cprint(c, AM_OUT, "    pid %d (%s): %zu event%s enabled, %u buffer%s%s\n",
			  (int)p->pid, p->name, p->nevs, p->nevs == 1 ? "" : "s", nr,
			  nr == 1 ? "" : "s", p->dead ? ", exited" : "");
	}
}

/* list [NAME]: the sessions (or one), then the registered applications */
static void v_list(struct conn *c, struct session *unused, int argc, char **argv)
{
	struct trawl_agent *a = c->a;
	const char *only = argc > 1 ? argv[1] : NULL;
	bool any = false;
	for (struct session *s = a->sessions; s; s = s->next) {
		if (only && strcmp(only, s->name) != 0)
			continue;
		if (!any)
			tr_cprint(c, AM_OUT, "Sessions:\n");
		any = true;
		list_session(c, s);
	}
	if (only) {
		if (!any)
			tr_cfail(c, 1, "no session %s", only);
		else
			tr_cend(c, 0);
		return;
	}
	if (!any)
		tr_cprint(c, AM_OUT, "Sessions: none\n");
	bool apps = false;
	for (struct conn *p = a->conns; p; p = p->next) {
		if (p->type != C_APP)
			continue;
		if (!apps)
			tr_cprint(c, AM_OUT, "Applications:\n");
		apps = true;
		tr_cprint(c, AM_OUT, "  pid %d (%s)%s\n", (int)p->pid, p->name,
			  p->part ? " recording" : "");
		for (size_t i = 0; i < p->nev; i++)
			tr_cprint(c, AM_OUT, "    %s (loglevel %d)\n", p->evnames[i], p->evll[i]);
	}
	if (!apps)
		tr_cprint(c, AM_OUT, "Applications: none\n");
	tr_cend(c, 0);
}

/* ------------------------------------------------------------- create, load */

/* create NAME key=value... */
static void v_create(struct conn *c, struct session *unused, int argc, char **argv)
{
	struct trawl_agent *a = c->a;
	char why[512] = "";
	if (!tr_session_name_ok(argv[1], why, sizeof(why)))
		return tr_cfail(c, 2, "%s", why);
	struct session *s = tr_session_new(a, argv[1], why, sizeof(why));
	if (!s)
		return tr_cfail(c, 1, "%s", why);
	for (int i = 2; i < argc; i++)
		if (tr_setting_apply(s, argv[i], why, sizeof(why)) < 0) {
			tr_session_free(s);
			return tr_cfail(c, 2, "%s", why);
		}
	if (tr_session_check(s, why, sizeof(why)) < 0) {
		tr_session_free(s);
		return tr_cfail(c, 2, "%s", why);
	}
	tr_session_add(s);
	if (s->snapshot)
		tr_cprint(c, AM_OUT, "session %s created in snapshot mode%s%s\n", s->name,
			  s->output ? ", snapshots in " : "", s->output ? s->output : "");
	else if (s->relay)
		tr_cprint(c, AM_OUT, "session %s created, streamed to relay %s as %s/%s%s%s%s\n",
			  s->name, s->relay, s->relay_session ? s->relay_session : s->name,
			  a->hostname, s->live_ms ? "" : " (no live timer)",
			  s->output ? ", trace also in " : "", s->output ? s->output : "");
	else
		tr_cprint(c, AM_OUT, "session %s created, trace in %s\n", s->name, s->output);
	tr_cend(c, 0);
}

/* load TEXT [NAME] */
static void v_load(struct conn *c, struct session *unused, int argc, char **argv)
{
	char why[512] = "";
	struct session *s = tr_session_load(c->a, argv[1], argc > 2 ? argv[2] : NULL, why,
					    sizeof(why));
	if (!s)
		return tr_cfail(c, 1, "%s", why);
	tr_session_add(s);
	tr_cprint(c, AM_OUT, "session %s loaded\n", s->name);
	tr_cend(c, 0);
}

/* describe NAME: the text `trawl save` writes */
static void v_describe(struct conn *c, struct session *s, int argc, char **argv)
{
	char *t = tr_session_describe(s);
	if (!t)
		return tr_cfail(c, 1, "out of memory");
	tr_ctext(c, AM_OUT, t);
	free(t);
	tr_cend(c, 0);
}

/* ------------------------------------------------------------- rules */

/* enable NAME (GLOB[@LEVEL] | --kernel=SPEC | --filter=EXPR | --pid=N)... */
static void v_enable(struct conn *c, struct session *s, int argc, char **argv)
{
	char why[512] = "";
	/* the kernel rules are all checked before any rule is applied */
	for (int i = 2; i < argc; i++) {
		bool kernel = is_kopt(argv[i], "--kernel="), filter = is_kopt(argv[i], "--filter=");
		if ((kernel || filter || is_kopt(argv[i], "--pid=")) && !c->a->o.kernel)
			return tr_cfail(c, 1, "this agent has no kernel support");
		if (filter && s->kfilter && strcmp(s->kfilter, argv[i] + 9) != 0)
			return tr_cfail(c, 1, "session %s already has the kernel filter '%s' (one "
					"filter applies to every kernel event; disable -k --all first)",
					s->name, s->kfilter);
		if (!kernel)
			continue;
		if (s->snapshot && !tr_kernel_flight(c->a)) {
			tr_cprint(c, AM_ERR, "session %s is in snapshot mode: kernel events are "
				  "recorded by sessions with an output only (not in snapshots)",
				  s->name);
			return tr_cfail(c, 1, TR_KERNEL_OVERWRITE_HINT);
		}
		if (s->mode == TRAWL_UST_OVERWRITE && !tr_kernel_flight(c->a)) {
			tr_cprint(c, AM_ERR, "session %s: " TR_KERNEL_OVERWRITE_WHY, s->name);
			return tr_cfail(c, 1, TR_KERNEL_OVERWRITE_HINT);
		}
		if (tr_kernel_check(c->a, argv[i] + 9, why, sizeof(why)) < 0)
			return tr_cfail(c, 1, "%s", why);
	}
	for (int i = 2; i < argc; i++) {
		const char *arg = argv[i];
		if (is_kopt(arg, "--kernel=")) {
			if (tr_kernel_add_event(s, arg + 9) < 0)
				return tr_cfail(c, 1, "out of memory");
			tr_cprint(c, AM_OUT, "kernel event %s enabled in session %s\n", arg + 9, s->name);
		} else if (is_kopt(arg, "--filter=")) {
			if (tr_kernel_set_filter(s, arg + 9, why, sizeof(why)) < 0)
				return tr_cfail(c, 1, "%s", why);
			tr_cprint(c, AM_OUT, "kernel filter '%s' set in session %s\n", arg + 9, s->name);
		} else if (is_kopt(arg, "--pid=")) {
			if (tr_kernel_add_pid(s, arg + 6, why, sizeof(why)) < 0)
				return tr_cfail(c, 2, "%s", why);
			tr_cprint(c, AM_OUT, "kernel events of pid %s in session %s\n", arg + 6, s->name);
		} else {
			int r = tr_rule_add_at(s, arg);
			if (r == -ENOMEM)
				return tr_cfail(c, 1, "out of memory");
			if (r < 0)
				return tr_cfail(c, 2, "bad event rule '%s'", arg);
			tr_cprint(c, AM_OUT, "event %.*s enabled in session %s\n",
				  (int)(strrchr(arg, '@') ? (size_t)(strrchr(arg, '@') - arg) : strlen(arg)),
				  arg, s->name);
		}
	}
	tr_cend(c, 0);
}

/* Removes the strings of v[0 .. *n) equal to what (all: every one); true
 * when one was. */
static bool remove_matching(char **v, size_t *n, const char *what, bool all)
{
	size_t k = 0;
	bool found = false;
	for (size_t j = 0; j < *n; j++) {
		if (all || strcmp(v[j], what) == 0) {
			found = true;
			free(v[j]);
		} else {
			v[k++] = v[j];
		}
	}
	*n = k;
	return found;
}

/* disable NAME (GLOB | --all | --kernel=SPEC | --kernel-all)... */
static void v_disable(struct conn *c, struct session *s, int argc, char **argv)
{
	for (int i = 2; i < argc; i++) {
		const char *arg = argv[i];
		if (strcmp(arg, "--kernel-all") == 0) {
			tr_kernel_clear(s);
			tr_cprint(c, AM_OUT, "every kernel event disabled in session %s\n", s->name);
		} else if (is_kopt(arg, "--kernel=")) {
			if (!remove_matching(s->kev, &s->nkev, arg + 9, false))
				return tr_cfail(c, 1, "session %s has no kernel rule '%s'", s->name, arg + 9);
			tr_cprint(c, AM_OUT, "kernel event %s disabled in session %s\n", arg + 9, s->name);
		} else {
			bool all = strcmp(arg, "--all") == 0, found = false;
			size_t k = 0;
			for (size_t j = 0; j < s->nrules; j++) {
				if (all || strcmp(s->rules[j].glob, arg) == 0) {
					found = true;
					free(s->rules[j].glob);
				} else {
					s->rules[k++] = s->rules[j];
				}
			}
			s->nrules = k;
			if (!found && !all)
				return tr_cfail(c, 1, "session %s has no rule '%s'", s->name, arg);
			tr_cprint(c, AM_OUT, "%s disabled in session %s\n", all ? "every event" : arg,
				  s->name);
		}
	}
	tr_cend(c, 0);
}

/* add-context NAME CONTEXT... */
static void v_add_context(struct conn *c, struct session *s, int argc, char **argv)
{
	char why[512] = "";
	for (int i = 2; i < argc; i++) {
		if (tr_setting_set(s, "context", argv[i], why, sizeof(why)) < 0)
			return tr_cfail(c, 2, "%s", why);
		tr_cprint(c, AM_OUT, "context %s added to session %s\n", argv[i], s->name);
	}
	tr_cend(c, 0);
}

/* ------------------------------------------------------------- recording */

static void v_start(struct conn *c, struct session *s, int argc, char **argv)
{
	char why[512] = "";
	if (tr_session_start(s, why, sizeof(why)) < 0)
		return tr_cfail(c, 1, "%s", why);
	s->waiter = c;		/* answered once the applications have */
}

static void v_stop(struct conn *c, struct session *s, int argc, char **argv)
{
	if (s->waiter)
		return tr_cfail(c, 1, "session %s is busy", s->name);
	if (s->state != S_ACTIVE)
		return tr_cfail(c, 1, "session %s is not recording (%s)", s->name,
				tr_agent_state_names[s->state]);
	tr_session_stop(s);
	s->waiter = c;		/* answered once the trace is complete */
}

static void v_destroy(struct conn *c, struct session *s, int argc, char **argv)
{
	if (s->waiter)
		return tr_cfail(c, 1, "session %s is busy", s->name);
	if (s->state == S_ACTIVE) {
		/* stopped (the trace is kept), then freed by tr_check_waiters */
		tr_session_stop(s);
		s->destroy = true;
	} else if (s->state == S_STOPPING) {
		return tr_cfail(c, 1, "session %s is stopping", s->name);
	}
	tr_cprint(c, AM_OUT, "session %s destroyed\n", s->name);
	tr_cend(c, 0);
	if (!s->destroy) {
		tr_session_remove(s);
		tr_session_free(s);
	}
}

/* Does a snapshot of s write a user-space trace? (Not when it records
 * kernel events only.) */
static bool snap_ust(const struct session *s)
{
	return s->nrules || !s->krec;
}

/* The flight recorders' newest packets: the kernel's into base (or to the
 * relay rel), then the user-space one into dir (or to rel). 0, or -errno
 * with why set when there is more to say. */
static int take_snapshot(struct session *s, const char *base, const char *dir,
			 const struct ust_writer_relay *rel, uint64_t *ev, char *why, size_t wlen)
{
	uint64_t torn = 0;
	tr_drain(s);
	/* the kernel's first: its clock is the user-space snapshot's too */
	int r = !s->krec ? 0
		: rel ? tr_kernel_snapshot_relay(s, rel->addr, rel->session, why, wlen)
		      : tr_kernel_snapshot(s, base, why, wlen);
	if (!r && snap_ust(s))
		r = tr_snapshot_to(s, dir, rel, ev, &torn);
	return r;
}

/* snapshot NAME --relay=RSESSION: the user-space flight recorder streamed
 * to the relay the agent joined, as RSESSION/HOST/ust there (cluster
 * control, docs/cluster.md) */
static void snapshot_relay(struct conn *c, struct session *s, const char *rsession)
{
	const char *addr = tr_join_addr(c->a);
	if (!addr)
		return tr_cfail(c, 2, "snapshot --relay: this agent joined no relay");
	if (s->krec && !tr_kernel_flight_relay(c->a))
		return tr_cfail(c, 1, "snapshot of %s: this agent's kernel part streams no flight "
				"recorder (snapshot record -o DIR on the node)", s->name);
	if (s->tsc)
		return tr_cfail(c, 1, "snapshot of %s: its clock is the TSC; a snapshot streamed "
				"to a relay needs clock=monotonic", s->name);
	char why[512] = "";
	struct ust_writer_relay rel = {
		.addr = addr, .session = rsession, .err = why, .errlen = sizeof(why),
	};
	uint64_t ev = 0;
	int r = take_snapshot(s, NULL, NULL, &rel, &ev, why, sizeof(why));
	if (r < 0)
		return tr_cfail(c, 1, "snapshot of %s to relay %s: %s", s->name, addr,
				why[0] ? why : strerror(-r));
	if (snap_ust(s))
		tr_cprint(c, AM_OUT, "snapshot of %s: %" PRIu64 " events to relay %s as %s/%s/ust\n",
			  s->name, ev, addr, rsession, c->a->hostname);
	if (s->krec)
		tr_cprint(c, AM_OUT, "snapshot of %s: kernel: %" PRIu64 " events, %" PRIu64
			  " overwritten before them, %" PRIu64 " state dump events, to relay %s "
			  "as %s/%s/kernel\n", s->name, s->kst.events, s->kst.lost,
			  s->kst.statedump, addr, rsession, c->a->hostname);
	tr_cend(c, 0);
}

/* snapshot NAME [DIR]: the newest packets of a flight recorder */
static void v_snapshot(struct conn *c, struct session *s, int argc, char **argv)
{
	if (s->mode != TRAWL_UST_OVERWRITE)
		return tr_cfail(c, 1, "session %s is not in snapshot (overwrite) mode", s->name);
	if (s->state == S_NEW || s->state == S_STOPPING)
		return tr_cfail(c, 1, "session %s is %s", s->name, tr_agent_state_names[s->state]);
	const char *out = argc > 2 ? argv[2] : NULL;
	if (out && strncmp(out, "--relay=", 8) == 0)
		return snapshot_relay(c, s, out + 8);
	char *base = NULL;
	if (!out) {
		if (!s->output)
			return tr_cfail(c, 2, "session %s has no output: snapshot record -o DIR",
					s->name);
		if (asprintf(&base, "%s/snapshot-%u", s->output, ++s->nsnap) < 0)
			return tr_cfail(c, 1, "out of memory");
		out = base;
	}
	char *d = tr_trace_dir(s, out), why[512] = "";
	uint64_t ev = 0;
	int r = d ? take_snapshot(s, out, d, NULL, &ev, why, sizeof(why)) : -ENOMEM;
	free(d);
	if (r < 0) {
		tr_cfail(c, 1, "snapshot of %s into %s: %s", s->name, out,
			 why[0] ? why : s->wwhy ? s->wwhy : strerror(-r));
	} else {
		/* what a reader of out then reads, the kernel's state dump included */
		uint64_t kev = s->krec ? s->kst.events + s->kst.statedump : 0;
		tr_cprint(c, AM_OUT, "snapshot of %s: %" PRIu64 " events in %s\n", s->name, ev + kev,
			  out);
		if (s->krec)
			tr_cprint(c, AM_OUT, "kernel: %" PRIu64 " events, %" PRIu64 " overwritten before "
				  "them, %" PRIu64 " state dump events, clock %s\n", s->kst.events,
				  s->kst.lost, s->kst.statedump, s->kclock);
		tr_cend(c, 0);
	}
	free(base);
}

/* ------------------------------------------------------------- names, the relay's requests */

bool tr_session_name_ok(const char *name, char *why, size_t wlen)
{
	/* the relay's rule (a session's directory there, and here a
	 * file name of the snapshots): one function for both */
	if (strlen(name) <= 200 && tr_relay_name_ok(name))
		return true;
	snprintf(why, wlen, "bad session name '%.80s': a session name is of [A-Za-z0-9._-], at "
		 "most 200 bytes, not starting with '.' or '-' (the relay's rule)", name);
	return false;
}

/* Is path (absolute) beneath root, its symbolic links resolved as far as
 * it exists, and no "." nor ".." in it? */
static bool beneath(const char *root, const char *path)
{
	if (path[0] != '/' || strlen(path) >= PATH_MAX)
		return false;
	for (const char *p = path; *p;) {
		while (*p == '/')
			p++;
		size_t n = strcspn(p, "/");
		if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		p += n;
	}
	/* the deepest part of it that exists, resolved */
	char buf[PATH_MAX], *res = NULL;
	snprintf(buf, sizeof(buf), "%s", path);
	for (;;) {
		if ((res = realpath(buf, NULL)) || errno != ENOENT)
			break;
		char *slash = strrchr(buf, '/');
		if (!slash || slash == buf)
			break;
		*slash = 0;
	}
	size_t rl = strlen(root);
	bool ok = res && strncmp(res, root, rl) == 0 && (res[rl] == 0 || res[rl] == '/' ||
							 (rl == 1 && root[0] == '/'));
	free(res);
	return ok;
}

/* An output path the relay named: beneath the trace root, or why not. */
static bool relay_path_ok(const struct trawl_agent *a, const char *what, const char *path,
			  char *why, size_t wlen)
{
	if (!a->root) {
		snprintf(why, wlen, "%s %.200s: the relay may not name output paths on this node "
			 "(it has no trace root: trawl agent --root DIR, [agent] root)", what, path);
		return false;
	}
	if (!beneath(a->root, path)) {
		snprintf(why, wlen, "%s %.200s: not beneath this node's trace root %s (the relay "
			 "may name output paths there only)", what, path, a->root);
		return false;
	}
	return true;
}

bool tr_verb_relay_may(const struct trawl_agent *a, const char *joined, int argc, char **argv,
		       char *why, size_t wlen)
{
	static const char *const ok[] = { "list", "create", "describe", "enable", "disable",
					  "add-context", "start", "stop", "destroy", "snapshot" };
	bool known = false;
	for (size_t i = 0; i < ARRAY_SIZE(ok); i++)
		known |= strcmp(argv[0], ok[i]) == 0;
	if (!known) {
		snprintf(why, wlen, "'%.64s' is not a request the relay may make", argv[0]);
		return false;
	}
	if (strcmp(argv[0], "create") == 0) {
		for (int i = 2; i < argc; i++) {
			if (strncmp(argv[i], "output=", 7) == 0 &&
			    !relay_path_ok(a, "output", argv[i] + 7, why, wlen))
				return false;
			if (strncmp(argv[i], "relay=", 6) == 0 && strcmp(argv[i] + 6, ".") != 0 &&
			    strcmp(argv[i] + 6, joined) != 0) {
				snprintf(why, wlen, "relay %.200s: the relay may stream sessions to "
					 "itself only (relay=.)", argv[i] + 6);
				return false;
			}
		}
	}
	if (strcmp(argv[0], "snapshot") == 0 && argc > 2 && strncmp(argv[2], "--relay=", 8) != 0 &&
	    !relay_path_ok(a, "snapshot into", argv[2], why, wlen))
		return false;
	return true;
}

/* ------------------------------------------------------------- the table */

static const struct verb verbs[] = {
	{ "list", v_list, 0, 1, NULL, 0 },
	{ "create", v_create, 1, -1, "session name", 0 },
	{ "load", v_load, 1, 2, "description", 0 },
	{ "describe", v_describe, 1, 1, "session name", V_SESSION },
	{ "enable", v_enable, 1, -1, "session name", V_SESSION | V_RULES },
	{ "disable", v_disable, 1, -1, "session name", V_SESSION | V_RULES },
	{ "add-context", v_add_context, 1, -1, "session name", V_SESSION | V_RULES },
	{ "start", v_start, 1, 1, "session name", V_SESSION },
	{ "stop", v_stop, 1, 1, "session name", V_SESSION },
	{ "destroy", v_destroy, 1, 1, "session name", V_SESSION },
	{ "snapshot", v_snapshot, 1, 2, "session name", V_SESSION },
};

void tr_verb_run(struct conn *c, int argc, char **argv)
{
	const struct verb *v = NULL;
	for (size_t i = 0; i < ARRAY_SIZE(verbs) && !v; i++)
		if (strcmp(argv[0], verbs[i].name) == 0)
			v = &verbs[i];
	if (!v)
		return tr_cfail(c, 2, "unknown request '%s'", argv[0]);
	if (argc - 1 < v->min)
		return tr_cfail(c, 2, "%s: no %s", v->name, v->arg1);
	if (v->max >= 0 && argc - 1 > v->max)
		return tr_cfail(c, 2, "%s: unexpected argument '%s'", v->name, argv[v->max + 1]);
	struct session *s = NULL;
	if (v->flags & V_SESSION) {
		s = tr_session_find(c->a, argv[1]);
		if (!s)
			return tr_cfail(c, 1, "no session %s", argv[1]);
		if ((v->flags & V_RULES) && s->state != S_NEW)
			return tr_cfail(c, 1, "session %s is %s: rules change before start only",
					s->name, tr_agent_state_names[s->state]);
		/* a start at an agreed time opened the trace with these rules */
		if ((v->flags & V_RULES) && s->prepared)
			return tr_cfail(c, 1, "session %s starts at an agreed time: rules change "
					"before start only", s->name);
	}
	v->run(c, s, argc, argv);
}
