/* SPDX-License-Identifier: MIT */
/*
 * lib/kern/krec.c - the kernel recorder: a private tracefs instance
 * (never the top-level buffer, so another tracer on the machine is not
 * disturbed), its events, filters and pid lists, and one reader thread that
 * reads every CPU's raw ring-buffer pages (trace_pipe_raw, read(2) a
 * page per call, never a system call per event), walks their
 * records with kpage.h (libtraceevent's kbuffer where the page layout is
 * another), decodes them and writes one CTF stream per CPU (O_DIRECT with
 * large buffers). See docs/kernel.md.
 *
 * Losses: the instance keeps ftrace's overwrite mode; when the reader falls
 * behind, the kernel overwrites the oldest pages and flags the next page
 * read with the number of events missed before it (the page's missed-events
 * count). That number becomes events_discarded of the packet the page's
 * events go to. When the kernel could not store the count on the page, the
 * per-CPU stats file (overrun + dropped events) gives it; at the end, the
 * stats are checked again and whatever the pages did not account for is
 * added to the last packet: nothing is lost silently.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <tracefs/tracefs.h>
#include <traceevent/event-parse.h>
#include <traceevent/kbuffer.h>

#include "trawl/relay.h"
#include "ctf/ctf-internal.h"	/* tr_ctf_writer_direct, tr_ctf_writer_demand */
#include "internal.h"	/* tr_glob_match */
#include "kern/family.h"
#include "kern/kpage.h"
#include "kern/krec.h"
#include "kern/pathnames.h"
#include "util/clock.h"
#include "util/escape.h"

/* reader sleep after a pass that found data: a 64 KiB/CPU burst at 2 M
 * events/s fills ~20 pages in this time, far below any buffer size */
#define BUSY_SLEEP_MS 2
/* the ring buffer's sub-buffers ("pages"), KiB */
#define SUBBUF_KB 64

/*
 * A syscall entry whose path has not come yet (its call has not returned,
 * or its record is still on its way: docs/kernel.md, "File names") holds
 * its CPU's stream: its page and the pages read after it wait, at most
 * HOLD_NS or hold_pages pages (HOLD_BYTES of them, or the CPU buffer's if
 * more), then the entry gets the pointer.
 */
#define HOLD_NS (1000 * 1000000ull)
/* streamed live: a held CPU sends no beacon, and a viewer waits for it:
 * at most two live periods, and this at least */
#define HOLD_LIVE_MIN_NS (100 * 1000000ull)
#define HOLD_BYTES (2048 * 4096)
/* at the stop, the calls in progress get this long to return */
#define HOLD_END_NS (200 * 1000000ull)

struct held {
	uint8_t *page;
	size_t len;
	bool loaded;			/* its losses and size counted */
};

struct kcpu {
	int fd;
	struct trawl_ctf_wstream *ws;
	struct krec_cpu_stats st;
	uint64_t last_ts;
	uint64_t attributed;		/* losses counted so far */
	bool any;			/* an event was written */
	/* held pages q[hq..nq), q[hq] resumed at event `skip`; both 0 when
	 * none (nq != 0: the CPU is held) */
	struct held *q;
	size_t hq, nq, capq;
	unsigned skip;
	uint64_t hold_since;		/* CLOCK_MONOTONIC when q[hq] was held */
	uint64_t pages_mark;		/* st.pages when the reader last slept */
};

struct evname {
	char *sys, *name;
};

struct krec {
	struct tracefs_instance *inst;
	char *inst_dir;			/* the instance's directory */
	struct tep_handle *tep;
	struct kbuffer *kb;
	struct trawl_ctf_writer *w;
	struct krec_conv *conv;
	struct trawl_ctf_wstream *sd_ws;
	struct kcpu *cpus;
	unsigned ncpus;
	size_t psize;
	uint8_t *page;
	struct evname *evs;
	size_t nevs;
	bool tsc, statedump, tid, started, stopped, thread;
	bool flight;			/* a flight recorder: read at snapshots only */
	int sd_pipe[2];			/* the reader says the state dump is written */
	bool snapped;			/* a snapshot was written (flight) */
	char *hostname;			/* for the snapshots' traces (flight) */
	const char *dir, *root;		/* the trace's (krec_opts), during tr_krec_new */
	size_t buf_pages;		/* pages of one CPU's buffer */
	size_t hold_pages;		/* a held CPU's pages at most: HOLD_BYTES, or its buffer's */
	bool exclude_self;
	/* only some threads' events (pids, a filter): the trace's
	 * trawl_pid_filter env says so, switches of others are absent by
	 * design (docs/kernel.md) */
	bool filtered;
	bool fast;			/* pages read by kpage.h, not kbuffer */
	bool direct;			/* the trace's files O_DIRECT (tr_ctf_writer_direct) */
	int rt_prio;
	unsigned period_ms;
	unsigned live_ms;		/* live timer; 0: none */
	/* live demand (reader(); docs/kernel.md, "Buffers and the reader"):
	 * a relay's viewer waits; the buffers are polled (buffer_percent 0)
	 * and cut at once */
	struct pollfd *pfd;		/* every CPU's trace_pipe_raw */
	bool demand_poll;		/* buffer_percent 0 was taken */
	int64_t demand_until;		/* the last DEMAND's end seen (ms) */
	int64_t fast_at;		/* the last cut made at once (ms) */
	struct krec_live_stats lst;
	uint64_t hold_ns;		/* how long a CPU may be held (HOLD_NS, live less) */
	bool relay;
	/* what the relay did not store, counted at stop (tr_krec_relay_discarded) */
	int relay_count;		/* -ENOENT: not known yet */
	uint64_t relay_events, relay_discarded;
	struct tr_clock_sample s0, s1;
	pthread_t th;
	int stop;			/* atomic: the reader drains and exits */
	int err;			/* the reader's first error */
	char errmsg[256];
	long sd_events;
	struct kpath *paths;		/* path names (NULL: pointers) */
	char paths_why[256];		/* why not, when syscalls are recorded */
};

/* ------------------------------------------------------------ tracefs */

static char *inst_path(struct krec *k, const char *rel)
{
	char *p;
	if (asprintf(&p, "%s/%s", k->inst_dir, rel) < 0)
		return NULL;
	return p;
}

/* Writes s to the instance file rel (append: no O_TRUNC). */
static int inst_write(struct krec *k, const char *rel, const char *s, bool append)
{
	char *p = inst_path(k, rel);
	if (!p)
		return -ENOMEM;
	int fd = open(p, O_WRONLY | O_CLOEXEC | (append ? 0 : O_TRUNC));
	free(p);
	if (fd < 0)
		return -errno;
	size_t n = strlen(s);
	ssize_t w = write(fd, s, n);
	int r = w == (ssize_t)n ? 0 : (w < 0 ? -errno : -EIO);
	close(fd);
	return r;
}

/* ------------------------------------------------- --exclude-self peers */

/*
 * Is process pid a trawl relay or a live viewer (print, agg, analyze,
 * view with --live or -l; any command given a live URL, net://..., as
 * top and state take it)? They are the recorder's partners on a node that
 * streams its trace: recorded, their reads and writes of the trace itself
 * would flood it. self_exe: this program's path, "" if unknown.
 */
static bool trawl_peer(const char *pid, const char *self_exe)
{
	char path[300], exe[PATH_MAX], cmd[4096];
	snprintf(path, sizeof(path), "/proc/%s/exe", pid);
	ssize_t n = readlink(path, exe, sizeof(exe) - 1);
	bool same = n > 0 && *self_exe && (exe[n] = 0, strcmp(exe, self_exe) == 0);
	snprintf(path, sizeof(path), "/proc/%s/cmdline", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, cmd, sizeof(cmd) - 1);
	close(fd);
	if (n <= 0)
		return false;
	cmd[n] = 0;
	const char *a0 = strrchr(cmd, '/') ? strrchr(cmd, '/') + 1 : cmd;
	if (!same && strcmp(a0, "trawl") != 0)
		return false;
	const char *verb = NULL;
	for (const char *a = cmd + strlen(cmd) + 1; a < cmd + n; a += strlen(a) + 1) {
		if (!verb && *a != '-') {
			verb = a;
			if (!strcmp(verb, "relay"))
				return true;
			continue;
		}
		if (!strcmp(a, "--live") || !strncmp(a, "--live=", 7) || !strncmp(a, "net://", 6) ||
		    (verb && !strcmp(a, "-l") && (!strcmp(verb, "print") || !strcmp(verb, "agg") ||
						  !strcmp(verb, "analyze") || !strcmp(verb, "view"))))
			return true;
	}
	return false;
}

static int inst_write(struct krec *k, const char *rel, const char *s, bool append);

/* Every thread of every relay and live viewer of this node into the
 * instance's set_event_notrace_pid (at start, then every second: a viewer
 * started later is left out within a second, a new thread of one too). */
static void exclude_peers(struct krec *k)
{
	char self_exe[PATH_MAX] = "", me[32];
	ssize_t n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	self_exe[n > 0 ? n : 0] = 0;
	snprintf(me, sizeof(me), "%d", (int)getpid());
	DIR *d = opendir("/proc");
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9' || !strcmp(e->d_name, me) ||
		    !trawl_peer(e->d_name, self_exe))
			continue;
		char tdir[300];
		snprintf(tdir, sizeof(tdir), "/proc/%s/task", e->d_name);
		DIR *t = opendir(tdir);
		struct dirent *te;
		while (t && (te = readdir(t)))
			if (te->d_name[0] >= '1' && te->d_name[0] <= '9')
				inst_write(k, "set_event_notrace_pid", te->d_name, true);
		if (t)
			closedir(t);
	}
	if (d)
		closedir(d);
}

static int read_text(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, cap - 1);
	int e = errno;
	close(fd);
	if (n < 0)
		return -e;
	buf[n] = 0;
	return 0;
}

/* The kernel's loss count of one CPU: overrun + dropped events. */
static uint64_t kernel_lost(struct krec *k, unsigned cpu)
{
	char rel[64], buf[1024];
	snprintf(rel, sizeof(rel), "per_cpu/cpu%u/stats", cpu);
	char *p = inst_path(k, rel);
	if (!p)
		return 0;
	int r = read_text(p, buf, sizeof(buf));
	free(p);
	if (r < 0)
		return 0;
	uint64_t n = 0;
	const char *s;
	if ((s = strstr(buf, "overrun:")))
		n += strtoull(s + 8, NULL, 10);
	if ((s = strstr(buf, "dropped events:")))
		n += strtoull(s + 15, NULL, 10);
	return n;
}

/* ------------------------------------------------------------ events */

static bool have_event(const char *sys, const char *ev)
{
	char p[1100];
	struct stat st;
	snprintf(p, sizeof(p), "%s/events/%s/%s/format", tracefs_tracing_dir(), sys, ev);
	return stat(p, &st) == 0;
}

static int add_ev(struct krec *k, const char *sys, const char *name)
{
	for (size_t i = 0; i < k->nevs; i++)
		if (!strcmp(k->evs[i].sys, sys) && !strcmp(k->evs[i].name, name))
			return 0;
	struct evname *e = realloc(k->evs, (k->nevs + 1) * sizeof(*e));
	if (!e)
		return -ENOMEM;
	k->evs = e;
	e[k->nevs].sys = strdup(sys);
	e[k->nevs].name = strdup(name);
	if (!e[k->nevs].sys || !e[k->nevs].name)
		return -ENOMEM;
	k->nevs++;
	return 0;
}

void tr_krec_spec_split(const char *spec, char sysg[256], char evg[256])
{
	const char *sep = strpbrk(spec, ":/");
	if (sep) {
		snprintf(sysg, 256, "%.*s", (int)(sep - spec), spec);
		snprintf(evg, 256, "%s", sep + 1);
	} else {
		snprintf(sysg, 256, "*");
		snprintf(evg, 256, "%s", spec);
	}
}

/* "sys:event", "sys/event", globs in either part, or a bare event name. */
static int add_spec(struct krec *k, const char *spec, bool from_preset, char *err, size_t errlen)
{
	char sysg[256], evg[256];
	tr_krec_spec_split(spec, sysg, evg);
	if (!*sysg || !*evg)
		return tr_seterr(err, errlen, EINVAL, "'%s' is not a tracepoint (SYSTEM:EVENT)", spec);
	if (!strpbrk(sysg, "*?[") && !strpbrk(evg, "*?[")) {
		if (have_event(sysg, evg))
			return add_ev(k, sysg, evg);
		if (from_preset)
			return 0;
		tr_seterr(err, errlen, ENOENT,
			  "no tracepoint '%s:%s' in this kernel (see events/*/format in tracefs)",
			  sysg, evg);
		return tr_krec_add_hint(err, errlen, spec), -ENOENT;
	}
	char **systems = tracefs_event_systems(NULL);
	int n = 0, r = 0;
	for (size_t i = 0; systems && systems[i] && !r; i++) {
		if (!tr_glob_match(sysg, systems[i]))
			continue;
		char **evs = tracefs_system_events(NULL, systems[i]);
		for (size_t j = 0; evs && evs[j] && !r; j++)
			if (tr_glob_match(evg, evs[j])) {
				r = add_ev(k, systems[i], evs[j]);
				n++;
			}
		tracefs_list_free(evs);
	}
	tracefs_list_free(systems);
	if (r)
		return tr_seterr(err, errlen, -r, "out of memory");
	if (!n && !from_preset) {
		tr_seterr(err, errlen, ENOENT, "no tracepoint of this kernel matches '%s'", spec);
		return tr_krec_add_hint(err, errlen, spec), -ENOENT;
	}
	return 0;
}

/* The events of preset f that this kernel has, added to k. */
static int expand_preset(struct krec *k, const struct tr_kfamily *f, char *err, size_t errlen)
{
	for (const char *const *e = f->events; *e; e++) {
		char spec[300];
		snprintf(spec, sizeof(spec), "%s:%s", f->system, *e);
		int r = add_spec(k, spec, true, err, errlen);
		if (r)
			return r;
	}
	return 0;
}

int tr_krec_preset_events(const char *name, char ***out, size_t *n)
{
	const struct tr_kfamily *f = tr_kfamily_by_preset(name);
	*out = NULL;
	*n = 0;
	if (!f)
		return -ENOENT;
	struct krec *k = calloc(1, sizeof(*k));
	char err[256];
	int r = k ? expand_preset(k, f, err, sizeof(err)) : -ENOMEM;
	char **v = k && k->nevs ? calloc(k->nevs, sizeof(*v)) : NULL;
	if (!r && k->nevs && !v)
		r = -ENOMEM;
	for (size_t i = 0; k && i < k->nevs; i++) {
		if (!r && asprintf(&v[i], "%s:%s", k->evs[i].sys, k->evs[i].name) < 0) {
			v[i] = NULL;
			r = -ENOMEM;
		}
		free(k->evs[i].sys);
		free(k->evs[i].name);
	}
	if (r) {
		for (size_t i = 0; v && k && i < k->nevs; i++)
			free(v[i]);
		free(v);
	} else if (k) {
		*out = v;
		*n = k->nevs;
	}
	if (k)
		free(k->evs);
	free(k);
	return r;
}

/* ------------------------------------------------ hints ("did you mean") */

struct cand {
	char *name, *show;	/* what is compared, what the hint proposes */
};

struct cands {
	struct cand *v;
	size_t n, cap;
};

/* A candidate name, proposed as sys:ev (ev NULL: as sys). */
static void cand_add(struct cands *c, const char *name, const char *sys, const char *ev)
{
	char *show = NULL, *nm;
	if (tr_grow(&c->v, &c->cap, c->n, sizeof(*c->v)) < 0 ||
	    asprintf(&show, "%s%s%s", sys, ev ? ":" : "", ev ? ev : "") < 0)
		return;
	if (!(nm = strdup(name))) {
		free(show);
		return;
	}
	c->v[c->n++] = (struct cand){ nm, show };
}

static bool is_system(const char *sys)
{
	char p[1100];
	struct stat st;
	if (!*sys || strchr(sys, '/') || !strcmp(sys, ".") || !strcmp(sys, ".."))
		return false;
	snprintf(p, sizeof(p), "%s/events/%s", tracefs_tracing_dir(), sys);
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

void tr_krec_add_hint(char *err, size_t errlen, const char *spec)
{
	char sysg[256], evg[256];
	size_t len = strlen(err);
	if (len + 1 >= errlen)
		return;
	tr_krec_spec_split(spec, sysg, evg);
	bool bare = !strpbrk(spec, ":/");
	if (!strcmp(spec, "statedump")) {
		snprintf(err + len, errlen - len, "\nhint: the state dump (lttng_statedump_*) is "
			 "written at every start; --no-statedump leaves it out");
		return;
	}
	if (bare && !strpbrk(spec, "*?[") && is_system(spec)) {
		snprintf(err + len, errlen - len, "\nhint: '%s:*' selects every event of the %s "
			 "subsystem", spec, spec);
		return;
	}
	struct cands c = { 0 };
	bool sys_known = !bare && is_system(sysg);
	char **systems = tracefs_event_systems(NULL);
	if (bare) {
		/* a preset, a subsystem or a tracepoint of any subsystem */
		for (size_t i = 0; i < tr_nkfamilies; i++)
			if (tr_kfamilies[i].preset)
				cand_add(&c, tr_kfamilies[i].preset, tr_kfamilies[i].preset, NULL);
	}
	for (size_t i = 0; systems && systems[i]; i++) {
		if (bare)
			cand_add(&c, systems[i], systems[i], "*");
		else if (!sys_known)
			cand_add(&c, systems[i], systems[i], evg);
		if (!bare && (!sys_known || strcmp(systems[i], sysg)))
			continue;
		if (!bare && strpbrk(evg, "*?["))
			continue;
		char **evs = tracefs_system_events(NULL, systems[i]);
		for (size_t j = 0; evs && evs[j]; j++)
			cand_add(&c, evs[j], systems[i], evs[j]);
		tracefs_list_free(evs);
	}
	tracefs_list_free(systems);
	const char **names = calloc(c.n + 1, sizeof(*names));
	for (size_t i = 0; names && i < c.n; i++)
		names[i] = c.v[i].name;
	const char *key = bare ? spec : sys_known ? evg : sysg;
	const char *best = names ? tr_closest(key, names, c.n, 2) : NULL;
	for (size_t i = 0; best && i < c.n; i++)
		if (c.v[i].name == best) {
			snprintf(err + len, errlen - len, "\nhint: did you mean '%s'?", c.v[i].show);
			break;
		}
	if (!best)
		snprintf(err + len, errlen - len, "\nhint: 'trawl record --list-kernel' shows the "
			 "presets and their events");
	for (size_t i = 0; i < c.n; i++) {
		free(c.v[i].name);
		free(c.v[i].show);
	}
	free(c.v);
	free(names);
}

static int expand_events(struct krec *k, const struct krec_opts *o, char *err, size_t errlen)
{
	for (size_t i = 0; i < o->nevents; i++) {
		const char *s = o->events[i];
		const struct tr_kfamily *f = tr_kfamily_by_preset(s);
		if (f) {
			size_t before = k->nevs;
			int r = expand_preset(k, f, err, errlen);
			if (r)
				return r;
			if (k->nevs == before)
				return tr_seterr(err, errlen, ENOENT,
					      "preset '%s': this kernel offers none of its tracepoints", s);
			continue;
		}
		int r = add_spec(k, s, false, err, errlen);
		if (r)
			return r;
	}
	if (!k->nevs)
		return tr_seterr(err, errlen, EINVAL, "no kernel event to record");
	return 0;
}

static bool in_list(const char **l, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(l[i], s))
			return true;
	return false;
}

/* The event formats of every system we record, plus those their families'
 * converters read (raw_syscalls: syscalls', for the argument names). */
static struct tep_handle *load_formats(struct krec *k)
{
	const char **sys = calloc(2 * k->nevs + 1, sizeof(*sys));
	size_t n = 0;
	if (!sys)
		return NULL;
	for (size_t i = 0; i < k->nevs; i++) {
		const char *s = k->evs[i].sys;
		if (!in_list(sys, n, s))
			sys[n++] = s;
		const struct tr_kfamily *f = tr_kfamily_by_system(s);
		if (f && f->formats && !in_list(sys, n, f->formats))
			sys[n++] = f->formats;
	}
	sys[n] = NULL;
	struct tep_handle *t = tracefs_local_events_system(NULL, sys);
	free(sys);
	return t;
}

/* Does the recording have syscall entries with a path argument? */
static bool records_paths(struct krec *k)
{
	for (size_t i = 0; i < k->nevs; i++) {
		if (!strcmp(k->evs[i].sys, "raw_syscalls") && !strcmp(k->evs[i].name, "sys_enter"))
			return true;
		if (!strcmp(k->evs[i].sys, "syscalls") && !strncmp(k->evs[i].name, "sys_enter_", 10))
			for (size_t j = 0; j < tr_kpath_nargs; j++)
				if (!strcmp(k->evs[i].name + 10, tr_kpath_args[j].syscall))
					return true;
	}
	return false;
}

/* ------------------------------------------------------------ pids */

static int add_pid_threads(struct krec *k, const char *file, pid_t pid)
{
	char path[64], num[32];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	int r = 0;
	snprintf(num, sizeof(num), "%d", (int)pid);
	r = inst_write(k, file, num, true);
	struct dirent *e;
	while (!r && d && (e = readdir(d))) {
		int tid = atoi(e->d_name);
		if (tid <= 0 || tid == pid)
			continue;
		snprintf(num, sizeof(num), "%d", tid);
		r = inst_write(k, file, num, true);
		if (r == -ESRCH || r == -EINVAL)
			r = 0;	/* exited meanwhile */
	}
	if (d)
		closedir(d);
	return r;
}

int tr_krec_add_pid(struct krec *k, pid_t pid, char *err, size_t errlen)
{
	int r = add_pid_threads(k, "set_event_pid", pid);
	if (r)
		return tr_seterr(err, errlen, -r, "set_event_pid %d: %s", (int)pid, strerror(-r));
	k->filtered = true;
	if (k->w)	/* (-EBUSY: streamed, its metadata gone: not said) */
		trawl_ctf_writer_env_int(k->w, "trawl_pid_filter", 1);
	/* --exclude-self with a COMMAND (--only-command): forked by us with
	 * event-fork on, the command inherited our place in the notrace
	 * list, and nothing of it would be recorded: the list again, without
	 * it (before the start: the reader thread adds itself then) */
	if (k->exclude_self && !k->started) {
		char self[32];
		snprintf(self, sizeof(self), "%d", (int)getpid());
		if ((r = inst_write(k, "set_event_notrace_pid", self, false)))
			return tr_seterr(err, errlen, -r, "set_event_notrace_pid: %s", strerror(-r));
		exclude_peers(k);
	}
	return 0;
}

/* ------------------------------------------------------------ setup */

/*
 * tracefs mounted (mounting it at /sys/kernel/tracing if needed). Not
 * through tracefs_tracing_dir_is_mounted(), which leaks a copy of the path
 * on every call in libtracefs 1.6.
 */
static bool tracing_dir_ready(void)
{
	struct stat st;
	const char *d = tracefs_tracing_dir();
	char p[1100];
	if (d) {
		snprintf(p, sizeof(p), "%s/events", d);
		if (stat(p, &st) == 0)
			return true;
	}
	if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) < 0 && errno != EBUSY)
		return false;
	return stat("/sys/kernel/tracing/events", &st) == 0 && tracefs_tracing_dir();
}

/* The inode of the initial pid namespace (PROC_PID_INIT_INO). */
#define PID_INIT_INO 0xEFFFFFFCu

/* Our pid namespace's inode, or 0 when /proc does not tell. */
static unsigned long pidns_ino(void)
{
	struct stat st;
	return stat("/proc/self/ns/pid", &st) == 0 ? (unsigned long)st.st_ino : 0;
}

/*
 * The instance's name: "trawl-PID" in the initial pid namespace, else
 * "trawl-NS-PID" (NS our pid namespace's inode), so that a recorder can
 * tell which instances were made by processes whose pids it sees.
 */
static void instance_name(char *name, size_t sz, unsigned long ns, int pid)
{
	if (ns == PID_INIT_INO || !ns)
		snprintf(name, sz, "trawl-%d", pid);
	else
		snprintf(name, sz, "trawl-%lu-%d", ns, pid);
}

/*
 * Removes the instances left by recorders that died without removing
 * theirs (SIGKILL, a crash): named for a process of our pid namespace that
 * no longer exists. Their events stay enabled, so every tracepoint they
 * name keeps costing the whole machine something until they go.
 */
static void remove_stale_instances(unsigned long ns)
{
	char dir[1100], name[64];
	const char *td = tracefs_tracing_dir();
	if (!td || !ns)
		return;
	snprintf(dir, sizeof(dir), "%s/instances", td);
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		unsigned long ens = PID_INIT_INO;
		int pid, n = 0;
		if (sscanf(e->d_name, "trawl-%d%n", &pid, &n) != 1 || e->d_name[n]) {
			n = 0;
			if (sscanf(e->d_name, "trawl-%lu-%d%n", &ens, &pid, &n) != 2 || e->d_name[n])
				continue;
		}
		if (ens != ns || pid <= 0 || pid == getpid() || kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		instance_name(name, sizeof(name), ns, pid);
		if (strcmp(name, e->d_name))
			continue;	/* not in our canonical form */
		struct tracefs_instance *in = tracefs_instance_alloc(td, name);
		if (in) {
			tracefs_instance_destroy(in);
			tracefs_instance_free(in);
		}
	}
	closedir(d);
}

static int setup_instance(struct krec *k, const struct krec_opts *o, char *err, size_t errlen)
{
	char name[64];
	unsigned long ns = pidns_ino();
	remove_stale_instances(ns);
	instance_name(name, sizeof(name), ns, (int)getpid());
	errno = 0;
	k->inst = tracefs_instance_create(name);
	if (!k->inst) {
		int e = errno ? errno : EPERM;
		return tr_seterr(err, errlen, e, "cannot create the tracefs instance %s/instances/%s: %s",
			      tracefs_tracing_dir(), name, strerror(e));
	}
	k->inst_dir = tracefs_instance_get_dir(k->inst);
	if (!k->inst_dir)
		return tr_seterr(err, errlen, ENOMEM, "out of memory");
	/* a new instance traces at once: off until tr_krec_start() */
	int r = inst_write(k, "tracing_on", "0", false);
	if (r)
		return tr_seterr(err, errlen, -r, "%s/tracing_on: %s", k->inst_dir, strerror(-r));
	const char *clk = k->tsc ? "x86-tsc" : "mono";
	if ((r = inst_write(k, "trace_clock", clk, false)))
		return tr_seterr(err, errlen, -r, "trace clock %s: %s", clk, strerror(-r));
	char kb[32];
	snprintf(kb, sizeof(kb), "%zu", o->buffer_kb ? o->buffer_kb : 4096);
	if ((r = inst_write(k, "buffer_size_kb", kb, false)))
		return tr_seterr(err, errlen, -r, "buffer size %s KiB per CPU: %s", kb, strerror(-r));
	/* the kernel overwrites the oldest pages when the reader falls
	 * behind: a flight recorder's very principle (and the default) */
	if (o->flight && (r = inst_write(k, "options/overwrite", "1", false)))
		return tr_seterr(err, errlen, -r, "options/overwrite: %s", strerror(-r));
	if (o->follow_fork && (r = inst_write(k, "options/event-fork", "1", false)))
		return tr_seterr(err, errlen, -r, "options/event-fork: %s", strerror(-r));
	/* with exclude_self, our own threads are not traced (the reader adds
	 * itself); it costs a pid-list check at every context switch */
	if (o->exclude_self) {
		char self[32];
		snprintf(self, sizeof(self), "%d", (int)getpid());
		inst_write(k, "set_event_notrace_pid", self, true);
		exclude_peers(k);	/* and the node's relays and live viewers */
	}
	for (size_t i = 0; i < o->npids; i++)
		if ((r = tr_krec_add_pid(k, o->pids[i], err, errlen)))
			return r;
	for (size_t i = 0; i < k->nevs; i++) {
		char rel[600];
		if (o->filter && *o->filter) {
			k->filtered = true;
			snprintf(rel, sizeof(rel), "events/%s/%s/filter", k->evs[i].sys, k->evs[i].name);
			if ((r = inst_write(k, rel, o->filter, false)))
				return tr_seterr(err, errlen, -r,
					      "filter '%s' does not apply to %s:%s (ftrace filter syntax; fields of the event or common_pid)",
					      o->filter, k->evs[i].sys, k->evs[i].name);
		}
		snprintf(rel, sizeof(rel), "events/%s/%s/enable", k->evs[i].sys, k->evs[i].name);
		if ((r = inst_write(k, rel, "1", false)))
			return tr_seterr(err, errlen, -r, "enabling %s:%s: %s", k->evs[i].sys,
				      k->evs[i].name, strerror(-r));
	}
	return 0;
}

static size_t subbuf_size(struct krec *k)
{
	char buf[64];
	char *p = inst_path(k, "buffer_subbuf_size_kb");
	size_t sz = (size_t)getpagesize();
	if (p && read_text(p, buf, sizeof(buf)) == 0 && atol(buf) > 0)
		sz = (size_t)atol(buf) * 1024;
	free(p);
	return sz;
}

/* kpage.h reads this kernel's pages: little-endian, 8-byte timestamps and
 * commit words (events/header_page), the current record format */
static bool kpage_layout_ok(struct krec *k)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return sizeof(long) == 8 && tep_get_header_page_size(k->tep) == 8 &&
	       tep_get_header_timestamp_size(k->tep) == 8 && !tep_is_old_format(k->tep);
#else
	return false;
#endif
}

/*
 * How long a direct write of the trace may take (tr_ctf_writer_direct)
 * before its stream goes back to the page cache: as long as the busiest
 * CPU's buffer takes to fill a quarter (fill_ms, at the rate the reader
 * last saw; 0: not seen yet, then at DIRECT_RATE), DIRECT_MIN_MS to
 * DIRECT_MAX_MS: a stall that long leaves three quarters of the buffer.
 * Direct writes at all only where that takes DIRECT_START_MS at
 * DIRECT_RATE (buffers of 40 MiB per CPU or more): the device's stalls
 * are the buffer's to absorb, and this loaded VM's reached 220 ms, which a
 * 4 MiB buffer (the default) does not outlast at hackbench's rate.
 */
#define DIRECT_RATE (100ull << 20)	/* bytes/s per CPU: hackbench's is 60 M */
#define DIRECT_START_MS 100
#define DIRECT_MIN_MS 20
#define DIRECT_MAX_MS 1000

static uint64_t direct_slow_ms(const struct krec *k, uint64_t fill_ms)
{
	if (!fill_ms)
		fill_ms = (uint64_t)k->buf_pages * k->psize / 4 * 1000 / DIRECT_RATE;
	return fill_ms < DIRECT_MIN_MS ? DIRECT_MIN_MS : fill_ms > DIRECT_MAX_MS ? DIRECT_MAX_MS : fill_ms;
}

/*
 * The trace the events go to (dir, and the relay dest, which it takes):
 * its writer, the converter, one stream per CPU and the state dump's. 0,
 * or -errno with a message (what was made is freed with the recorder).
 */
/* A stream the writer could not make: why (a path refused), or errno. */
static int stream_err(struct krec *k, const char *dir, char *err, size_t errlen)
{
	int e = errno ? errno : ENOMEM;
	if (*trawl_ctf_writer_why(k->w))
		return tr_seterr(err, errlen, e, "%s", trawl_ctf_writer_why(k->w));
	return tr_seterr(err, errlen, e, "%s: %s", dir ? dir : "the trace", strerror(e));
}

static int open_trace(struct krec *k, const char *dir, const char *hostname,
		      struct trawl_ctf_dest *dest, size_t io_queue, char *err, size_t errlen)
{
	struct utsname u;
	uname(&u);
	char werr[600] = "";
	struct trawl_ctf_writer_opts wo = {
		.sz = sizeof(wo), .path = dir, .hostname = hostname, .domain = "kernel",
		.tracer_name = "trawl", .clock_name = k->tsc ? "tsc" : "monotonic",
		.clock_freq = 1000000000, .clock_offset_s = 0, .clock_offset = 1,
		.io_queue = io_queue, .dest = dest, .err = werr, .errlen = sizeof(werr),
		.root = dir == k->dir ? k->root : NULL,
	};
	if (!(k->w = trawl_ctf_writer_new(&wo))) {
		if (*werr)
			return tr_seterr(err, errlen, errno, "%s", werr);
		return tr_seterr(err, errlen, errno, "%s: %s", dir, strerror(errno));
	}
	/* the stream files O_DIRECT where they can be (not streamed, no I/O
	 * queue): the copy of every packet into the page cache was the
	 * largest part of the recorder's CPU (docs/kernel.md, "Cost");
	 * TRAWL_KBUFFERED set: through the page cache, for comparison */
	k->direct = !getenv("TRAWL_KBUFFERED") && direct_slow_ms(k, 0) >= DIRECT_START_MS;
	if (k->direct)
		tr_ctf_writer_direct(k->w, direct_slow_ms(k, 0) * 1000000ull);
	/* streamed, the metadata leaves when the first stream is created
	 * (below): the clock must be final now (mono: from one sample) */
	if (k->relay) {
		tr_clock_sample(false, &k->s0);
		tr_clock_fill(false, &k->s0, &k->s0, &trawl_ctf_writer_trace(k->w)->clocks[0]);
	} else if (dest) {
		/* a flight recorder's snapshot streamed: mono, from its start's
		 * sample alone, the same clock its close would declare */
		tr_clock_fill(false, &k->s0, &k->s0, &trawl_ctf_writer_trace(k->w)->clocks[0]);
	}
	trawl_ctf_writer_env_str(k->w, "sysname", u.sysname);
	trawl_ctf_writer_env_str(k->w, "kernel_release", u.release);
	trawl_ctf_writer_env_str(k->w, "kernel_version", u.version);
	trawl_ctf_writer_env_str(k->w, "trace_clock", k->tsc ? "x86-tsc" : "mono");
	if (k->filtered)
		trawl_ctf_writer_env_int(k->w, "trawl_pid_filter", 1);
	if (!(k->conv = tr_krec_conv_new(k->w, k->tep, k->tid)))
		return tr_seterr(err, errlen, ENOMEM, "out of memory");
	tr_krec_conv_paths(k->conv, k->paths);
	trawl_ctf_writer_env_str(k->w, "trawl_file_names", k->paths ? "ebpf" : "pointers");
	for (unsigned c = 0; c < k->ncpus; c++) {
		k->cpus[c].ws = trawl_ctf_writer_stream(k->w, tr_krec_conv_stream_class(k->conv),
							"channel0", c);
		if (!k->cpus[c].ws)
			return stream_err(k, dir, err, errlen);
	}
	if (k->statedump) {
		int cpu = sched_getcpu();
		k->sd_ws = trawl_ctf_writer_stream(k->w, tr_krec_conv_stream_class(k->conv),
						   "statedump", cpu < 0 ? 0 : (uint32_t)cpu);
		if (!k->sd_ws)
			return stream_err(k, dir, err, errlen);
	}
	return 0;
}

struct krec *tr_krec_new(const struct krec_opts *o, char *err, size_t errlen)
{
	struct krec *k = calloc(1, sizeof(*k));
	int r = -ENOMEM;
	if (!k) {
		errno = ENOMEM;
		tr_seterr(err, errlen, ENOMEM, "out of memory");
		return NULL;
	}
	k->sd_pipe[0] = k->sd_pipe[1] = -1;
	k->statedump = o->statedump;
	k->tid = o->tid_context;
	k->rt_prio = o->rt_prio;
	k->exclude_self = o->exclude_self;
	k->period_ms = o->period_ms ? o->period_ms : 50;
	k->tsc = o->clock == KREC_CLOCK_TSC ||
		 (o->clock == KREC_CLOCK_AUTO && tr_clocksource_is_tsc());
	k->relay = o->relay != NULL;
	k->relay_count = -ENOENT;
	k->flight = o->flight && !o->relay;
	k->live_ms = o->relay ? o->live_ms : 0;
	k->hold_ns = HOLD_NS;
	if (k->live_ms) {
		uint64_t h = 2 * (uint64_t)k->live_ms * 1000000;
		k->hold_ns = h < HOLD_LIVE_MIN_NS ? HOLD_LIVE_MIN_NS : h > HOLD_NS ? HOLD_NS : h;
	}
	if (k->relay && o->clock == KREC_CLOCK_TSC) {
		r = tr_seterr(err, errlen, EINVAL,
			   "streaming to a relay takes the mono clock (the TSC's frequency is only "
			   "known at the end)");
		goto fail;
	}
	if (k->relay)
		k->tsc = false;
	if (!tracing_dir_ready()) {
		r = tr_seterr(err, errlen, ENODEV,
			   "tracefs is not mounted and could not be mounted (mount -t tracefs nodev /sys/kernel/tracing)");
		goto fail;
	}
	if ((r = expand_events(k, o, err, errlen)))
		goto fail;
	if ((r = setup_instance(k, o, err, errlen)))
		goto fail;
	if (!(k->tep = load_formats(k))) {
		r = tr_seterr(err, errlen, EIO, "cannot read the event formats from tracefs");
		goto fail;
	}
	if (!(k->kb = kbuffer_alloc(sizeof(long) == 8 ? KBUFFER_LSIZE_8 : KBUFFER_LSIZE_4,
				    KBUFFER_ENDIAN_LITTLE))) {
		r = tr_seterr(err, errlen, ENOMEM, "cannot make a kbuffer for this kernel's pages");
		goto fail;
	}
	k->fast = kpage_layout_ok(k) && !getenv("TRAWL_KBUFFER");
	/* larger sub-buffers where kpage.h reads them (not a flight
	 * recorder's: its snapshots keep the kernel's granularity): SUBBUF_KB,
	 * but a sixteenth of the buffer at most (the kernel rounds a buffer
	 * up to two sub-buffers), the page size at least; TRAWL_KSUBBUF_KB
	 * sets it, for comparison */
	if (k->fast && !k->flight) {
		const char *e = getenv("TRAWL_KSUBBUF_KB");
		size_t bkb = o->buffer_kb ? o->buffer_kb : 4096, sub = SUBBUF_KB;
		while (sub > 4 && sub * 16 > bkb)
			sub /= 2;
		if (e && atoi(e) > 0)
			sub = (size_t)atoi(e);
		char kb[32];
		snprintf(kb, sizeof(kb), "%zu", sub);
		if (sub > 4)	/* kernels before 6.8 have no such file: 4 KiB pages */
			inst_write(k, "buffer_subbuf_size_kb", kb, false);
	}
	k->psize = subbuf_size(k);
	if (records_paths(k) && !k->flight) {
		/* attached now, tracing off: every traced call is seen */
		if (o->no_paths)
			snprintf(k->paths_why, sizeof(k->paths_why), "--no-file-names");
		else
			k->paths = tr_kpath_new(k->tep, k->tsc, k->paths_why, sizeof(k->paths_why));
	}
	if (!(k->page = malloc(k->psize)))
		goto nomem;

	long nc = sysconf(_SC_NPROCESSORS_CONF);
	k->ncpus = nc > 0 ? (unsigned)nc : 1;
	k->buf_pages = (o->buffer_kb ? o->buffer_kb : 4096) * 1024 / k->psize + 1;
	k->hold_pages = k->buf_pages > HOLD_BYTES / k->psize ? k->buf_pages : HOLD_BYTES / k->psize;
	if (!(k->cpus = calloc(k->ncpus, sizeof(*k->cpus))))
		goto nomem;
	for (unsigned c = 0; c < k->ncpus; c++)
		k->cpus[c].fd = -1;
	for (unsigned c = 0; c < k->ncpus; c++) {
		char rel[64];
		snprintf(rel, sizeof(rel), "per_cpu/cpu%u/trace_pipe_raw", c);
		char *p = inst_path(k, rel);
		if (!p)
			goto nomem;
		k->cpus[c].fd = open(p, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (k->cpus[c].fd < 0) {
			r = tr_seterr(err, errlen, errno, "%s: %s", p, strerror(errno));
			free(p);
			goto fail;
		}
		free(p);
	}
	/* streamed live: while a viewer waits (the relay's DEMAND), the
	 * reader polls the buffers, which wake it at an event only with
	 * buffer_percent 0 (the default, 50, at half a buffer) */
	if (k->live_ms) {
		if (!(k->pfd = calloc(k->ncpus, sizeof(*k->pfd))))
			goto nomem;
		for (unsigned c = 0; c < k->ncpus; c++) {
			k->pfd[c].fd = k->cpus[c].fd;
			k->pfd[c].events = POLLIN;
		}
		k->demand_poll = inst_write(k, "buffer_percent", "0", false) == 0;
	}
	/* a flight recorder's traces are made at its snapshots */
	if (k->flight && !(k->hostname = strdup(o->hostname ? o->hostname : "")))
		goto nomem;
	struct trawl_ctf_dest *dest = NULL;
	if (o->relay) {
		const struct trawl_relay_dest_opts ro = {
			.sz = sizeof(ro), .addr = o->relay, .session = o->relay_session,
			.live_timer_us = (uint64_t)k->live_ms * 1000,
			.resume_ms = TRAWL_RELAY_RESUME_MS,
			/* DEMAND, when the buffers can be polled */
			.live_demand = k->demand_poll,
		};
		if (!(dest = trawl_relay_dest_new(&ro)))
			goto nomem;
	}
	k->dir = o->dir;
	k->root = o->root;
	r = k->flight ? 0 : open_trace(k, o->dir, o->hostname, dest, o->io_queue, err, errlen);
	k->dir = k->root = NULL;	/* the caller's */
	if (r)
		goto fail;
	return k;
nomem:
	r = tr_seterr(err, errlen, ENOMEM, "out of memory");
fail:
	tr_krec_free(k);
	errno = -r;
	return NULL;
}

/* ------------------------------------------------------------ reader */

static void set_err(struct krec *k, int r, const char *what)
{
	if (!k->err) {
		k->err = r;
		/* the relay's own words when it was the relay */
		const char *why = k->w ? trawl_ctf_writer_relay_why(k->w) : "";
		snprintf(k->errmsg, sizeof(k->errmsg), "%s: %s", what, *why ? why : strerror(-r));
	}
}

static void count_lost(struct krec *k, unsigned cpu, uint64_t n)
{
	struct kcpu *c = &k->cpus[cpu];
	if (!n)
		return;
	trawl_ctf_wstream_discarded(c->ws, n);
	c->st.lost += n;
	c->attributed += n;
}

static void page_missed(struct krec *k, unsigned cpu, int64_t missed)
{
	struct kcpu *c = &k->cpus[cpu];
	if (missed > 0) {
		count_lost(k, cpu, (uint64_t)missed);
	} else if (missed < 0) {
		/* lost, count not on the page: the kernel's stats tell */
		uint64_t total = kernel_lost(k, cpu);
		count_lost(k, cpu, total > c->attributed ? total - c->attributed : 1);
	}
}

/* 1: written (or skipped), 2: held (its path may come later), 0: error */
static inline int page_event(struct krec *k, struct kcpu *c, uint64_t t, const void *d,
			     unsigned size)
{
	if (t < c->last_ts)
		t = c->last_ts;	/* never backwards within a stream */
	int r = tr_krec_conv_record(k->conv, c->ws, t, d, size);
	if (r == KREC_CONV_WAIT)
		return 2;
	if (r < 0) {
		set_err(k, r, "writing the kernel trace");
		return 0;
	}
	c->last_ts = t;
	if (r) {
		/* one writer (this thread); tr_krec_events() reads it meanwhile */
		__atomic_store_n(&c->st.events, c->st.events + 1, __ATOMIC_RELAXED);
		c->any = true;
	}
	return 1;
}

/*
 * Decodes one page from its event c->skip on; returns its data bytes (less
 * than a full page when the reader caught up with the writer). loaded: its
 * losses and size were counted already. *held: it stopped at an event
 * whose path may come later (c->skip is then that event's index).
 */
static size_t process_page(struct krec *k, unsigned cpu, uint8_t *page, size_t len,
			   bool loaded, bool *held)
{
	struct kcpu *c = &k->cpus[cpu];
	*held = false;
	if (len < 16)
		return 0;
	if (k->fast) {
		struct kpage pg;
		if (kpage_load(&pg, page, len) < 0)
			return 0;
		if (!loaded) {
			c->st.pages++;
			c->st.bytes += len;
			page_missed(k, cpu, pg.missed);
		}
		uint64_t ts;
		uint32_t size;
		unsigned i = 0;
		for (const uint8_t *d; (d = kpage_next(&pg, &ts, &size)); i++) {
			if (i < c->skip)
				continue;
			int r = page_event(k, c, ts, d, size);
			if (!r)
				return 0;
			if (r == 2) {
				c->skip = i;
				*held = true;
				return pg.size;
			}
		}
		c->skip = 0;
		return pg.size;
	}
	/* kbuffer (TRAWL_KBUFFER, other layouts): paths are not waited for */
	if (len < k->psize)
		memset(page + len, 0, k->psize - len);
	if (kbuffer_load_subbuffer(k->kb, page) < 0)
		return 0;
	c->st.pages++;
	c->st.bytes += len;
	page_missed(k, cpu, kbuffer_missed_events(k->kb));
	unsigned long long ts;
	if (k->paths)
		tr_krec_conv_final(k->conv, true);
	for (void *d = kbuffer_read_event(k->kb, &ts); d; d = kbuffer_next_event(k->kb, &ts))
		if (!page_event(k, c, ts, d, (unsigned)kbuffer_event_size(k->kb)))
			return 0;
	if (k->paths)
		tr_krec_conv_final(k->conv, false);
	int data = kbuffer_subbuffer_size(k->kb);
	return data > 0 ? (size_t)data : 0;
}

/* Appends len bytes of page src to cpu's held pages. */
static int hold_copy(struct krec *k, struct kcpu *c, const uint8_t *src, size_t len, bool loaded)
{
	uint8_t *copy = malloc(k->psize);
	/* the pages resumed leave by c->hq; once they are as many as those
	 * still held, the held move to the front (amortized: a CPU held again
	 * and again would otherwise grow the queue by a page each read) */
	if (c->hq && c->hq >= c->nq - c->hq) {
		memmove(c->q, c->q + c->hq, (c->nq - c->hq) * sizeof(*c->q));
		c->nq -= c->hq;
		c->hq = 0;
	}
	if (!copy || tr_grow(&c->q, &c->capq, c->nq, sizeof(*c->q)) < 0) {
		free(copy);
		set_err(k, -ENOMEM, "holding a page of the kernel trace");
		return -ENOMEM;
	}
	memcpy(copy, src, len);
	c->q[c->nq++] = (struct held){ copy, len, loaded };
	return 0;
}

/*
 * Resumes cpu's held pages; final (or the hold is too old or too long):
 * the paths not known yet are not waited for. Returns whether it is still
 * held.
 */
static bool resume_held(struct krec *k, unsigned cpu, bool final)
{
	struct kcpu *c = &k->cpus[cpu];
	uint64_t now = tr_mono_ns();	/* once: a page's processing is microseconds */
	while (c->nq && !k->err) {
		bool late = final || c->nq - c->hq >= k->hold_pages ||
			    now - c->hold_since >= k->hold_ns;
		bool held;
		if (late)
			tr_krec_conv_final(k->conv, true);
		unsigned skip = c->skip;
		struct held *h = &c->q[c->hq];
		process_page(k, cpu, h->page, h->len, h->loaded, &held);
		if (late)
			tr_krec_conv_final(k->conv, false);
		h->loaded = true;
		if (held) {
			if (c->skip != skip)	/* held again, further on */
				c->hold_since = now;
			return true;
		}
		free(h->page);
		if (++c->hq == c->nq)	/* empty: from the start again */
			c->hq = c->nq = 0;
		c->hold_since = now;
	}
	return false;
}

/*
 * One page of CPU cpu (n bytes at page): converted, or held behind a held
 * page, or held itself (an entry waits for its path). Returns its data
 * bytes, or -1 on an error (k->err).
 */
static ssize_t take_page(struct krec *k, unsigned cpu, const uint8_t *page, size_t n)
{
	struct kcpu *c = &k->cpus[cpu];
	bool held = false;
	if (c->nq) {
		struct kpage pg;
		if (hold_copy(k, c, page, n, false) < 0)
			return -1;
		return n >= 16 && kpage_load(&pg, page, n) == 0 ? pg.size : 0;
	}
	/* the records of the calls this page's entries made, as far as they
	 * returned: fewer holds */
	if (k->paths && tr_kpath_poll(k->paths) < 0)
		set_err(k, -EIO, "reading the path names' ring buffer");
	size_t data = process_page(k, cpu, (uint8_t *)page, n, false, &held);
	if (held) {
		if (hold_copy(k, c, page, n, true) < 0)
			return -1;
		c->hold_since = tr_mono_ns();
	}
	return (ssize_t)data;
}

/*
 * Takes CPU cpu's pages, up to max, with read(2), up to the first that is
 * not full (the reader caught up with the writer). A full page the kernel
 * swaps out of the ring buffer for the reader's spare and copies to us
 * whole; the page the writer is on, it copies event by event under the
 * ring buffer's lock, and the rest of that page later the same way: once
 * per CPU and pass (docs/kernel.md, "Buffers and the reader"). Returns
 * the pages taken; *caught_up tells whether it stopped for lack of pages.
 * Behind a held page, pages are read (the kernel would overwrite them)
 * and held.
 */
static unsigned drain_cpu(struct krec *k, unsigned cpu, unsigned max, bool *caught_up)
{
	unsigned pages = 0;
	*caught_up = true;
	while (pages < max && !k->err) {
		ssize_t n = read(k->cpus[cpu].fd, k->page, k->psize);
		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			return pages;
		}
		ssize_t data = take_page(k, cpu, k->page, (size_t)n);
		if (data < 0)
			return pages;
		pages++;
		if ((size_t)data < k->psize / 2)
			return pages;
	}
	*caught_up = false;
	return pages;
}

/* Takes the eBPF program's records and resumes the held CPUs. */
static void paths_poll(struct krec *k, bool final)
{
	if (!k->paths)
		return;
	int r = tr_kpath_poll(k->paths);
	if (r < 0)
		set_err(k, r, "reading the path names' ring buffer");
	for (unsigned c = 0; c < k->ncpus && !k->err; c++)
		resume_held(k, c, final);
}

static bool any_held(struct krec *k)
{
	for (unsigned c = 0; c < k->ncpus; c++)
		if (k->cpus[c].nq)
			return true;
	return false;
}

/*
 * The live timer: everything the buffers hold now is read, then every
 * stream's packet is closed (or, if it holds nothing, a beacon sent) at a
 * time just before the reads began. An event still being written then
 * (preemption is off while the kernel writes one: microseconds) has an
 * earlier timestamp; one found later is moved up to the flush's time
 * (page_event), never behind it.
 */
#define LIVE_MARGIN_NS 100000

/*
 * fast: a cut for a waiting viewer (live_demand), made microseconds after
 * the event that woke the reader, which is then later than now less the
 * margin: every stream is cut just after the latest event read instead
 * (a few ns after it: the relay gives two streams' beacons of one time a
 * few ns apart, and no beacon may fall before that event, or the viewer
 * would wait for the next tick to show it). An event written meanwhile
 * on another CPU with an earlier stamp is moved up to that time, as at a
 * tick.
 */
static void live_tick(struct krec *k, bool fast)
{
	uint64_t now = tr_mono_ns();
	uint64_t t0 = now > LIVE_MARGIN_NS ? now - LIVE_MARGIN_NS : 0;
	for (unsigned c = 0; c < k->ncpus && !k->err; c++) {
		bool cu;
		while (drain_cpu(k, c, 256, &cu) && !cu && !k->err)
			;
	}
	for (unsigned c = 0; fast && c < k->ncpus; c++) {
		uint64_t after = k->cpus[c].last_ts + k->ncpus + 2;
		if (after > now)
			after = now;
		if (!k->cpus[c].nq && after > t0)
			t0 = after;
	}
	for (unsigned c = 0; c < k->ncpus && !k->err; c++) {
		struct kcpu *kc = &k->cpus[c];
		/* held: its stream cannot pass the held event, but what came
		 * before it goes out (nothing written later is before last_ts) */
		uint64_t ts = kc->nq ? kc->last_ts : t0 > kc->last_ts ? t0 : kc->last_ts;
		int r = trawl_ctf_wstream_tick(kc->ws, ts);
		if (r < 0)
			set_err(k, r, "streaming the kernel trace");
		kc->last_ts = ts;
	}
	if (k->sd_ws && !k->err) {
		int r = trawl_ctf_wstream_tick(k->sd_ws, t0);
		if (r < 0 && r != -EINVAL)
			set_err(k, r, "streaming the state dump");
	}
}

/*
 * Whether a relay's viewer waits on the trace now (its last DEMAND holds,
 * docs/relay.md "Live latency"): the reader then sleeps in a poll of the
 * buffers, and cuts every stream as at a tick once events came (at most
 * every KDEMAND_PART_MS), instead of waiting for the next tick. Counts
 * the DEMANDs seen.
 */
#define KDEMAND_PART_MS 8

static bool live_demand(struct krec *k, int64_t now_ms)
{
	int64_t until = tr_ctf_writer_demand(k->w);
	if (until != k->demand_until) {
		k->demand_until = until;
		k->lst.demands++;
	}
	return now_ms < until;
}

/* The processes, threads and files now, into the state dump's stream. */
static void state_dump(struct krec *k)
{
	if (!k->sd_ws)
		return;
	long n = tr_krec_statedump(k->w, tr_krec_conv_stream_class(k->conv), k->sd_ws, k->tsc,
				k->tid);
	if (n < 0)
		set_err(k, (int)n, "state dump");
	else
		k->sd_events = n;
}

static void *reader(void *arg)
{
	struct krec *k = arg;
	char self[32];
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	if (k->exclude_self) {
		snprintf(self, sizeof(self), "%d", (int)gettid());
		inst_write(k, "set_event_notrace_pid", self, true);
	}
	if (k->rt_prio > 0) {
		struct sched_param sp = { .sched_priority = k->rt_prio };
		pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	} else {
		/* not the priority of the thread that started it (an agent's
		 * real-time loop): decoding is bulk work */
		struct sched_param sp = { 0 };
		pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp);
	}
	state_dump(k);
	if (k->sd_pipe[1] >= 0) {	/* tr_krec_wait_statedump() */
		char b = 1;
		if (write(k->sd_pipe[1], &b, 1) != 1) {
		}
		close(k->sd_pipe[1]);
		k->sd_pipe[1] = -1;
	}
	/*
	 * Each pass reads every CPU's full pages. Once all CPUs are caught up,
	 * sleep: when the pass found data, as long as the busiest CPU takes
	 * at the rate of this pass to fill a quarter of its buffer (at least
	 * BUSY_SLEEP_MS, at most the idle period), so that a busy buffer is
	 * read in large batches of full pages without filling up; else the
	 * idle period.
	 */
	uint64_t pass_ns = tr_mono_ns();
	/* ticks on multiples of the period, as the agent's: a viewer waits
	 * for every stream's news, so they all come at once */
	uint64_t next_tick = k->live_ms ? ((uint64_t)tr_mono_ms() / k->live_ms + 1) * k->live_ms : 0;
	uint64_t next_peers = (uint64_t)tr_mono_ms() + 1000;
	bool woke = false;		/* the poll saw events while a viewer waited */
	while (!__atomic_load_n(&k->stop, __ATOMIC_ACQUIRE) && !k->err) {
		unsigned pages = 0;
		bool all_caught_up = true;
		if ((k->exclude_self || (k->tsc && !k->relay)) &&
		    (uint64_t)tr_mono_ms() >= next_peers) {
			if (k->exclude_self)
				exclude_peers(k);
			/* the TSC's frequency so far: a reader of the growing
			 * trace sees its times (final at stop, from s0 to s1) */
			if (k->tsc && !k->relay) {
				struct tr_clock_sample now;
				tr_clock_sample(true, &now);
				tr_clock_fill(true, &k->s0, &now, &trawl_ctf_writer_trace(k->w)->clocks[0]);
				trawl_ctf_writer_metadata_now(k->w);
			}
			next_peers = (uint64_t)tr_mono_ms() + 1000;
		}
		paths_poll(k, false);
		for (unsigned c = 0; c < k->ncpus; c++) {
			bool cu;
			pages += drain_cpu(k, c, 256, &cu);
			all_caught_up &= cu;
		}
		uint64_t now = k->live_ms ? (uint64_t)tr_mono_ms() : 0;
		bool demand = k->demand_poll && live_demand(k, (int64_t)now);
		if (k->live_ms && now >= next_tick) {
			live_tick(k, false);
			k->lst.ticks++;
			next_tick = (now / k->live_ms + 1) * k->live_ms;
			woke = false;
		} else if (woke && demand) {
			/* a viewer waits and events came: cut now, as at a tick */
			live_tick(k, true);
			k->lst.fast_cuts++;
			k->fast_at = (int64_t)now;
			woke = false;
		}
		if (!all_caught_up)
			continue;
		unsigned ms = k->period_ms;
		uint64_t t = tr_mono_ns(), dt = t - pass_ns, pmax = 0;
		for (unsigned c = 0; c < k->ncpus; c++) {
			struct kcpu *kc = &k->cpus[c];
			if (kc->st.pages - kc->pages_mark > pmax)
				pmax = kc->st.pages - kc->pages_mark;
			kc->pages_mark = kc->st.pages;
		}
		pass_ns = t;
		if (pages > k->ncpus && pmax) {
			/* the busiest CPU filled pmax pages in dt: a quarter of
			 * its buffer in fill ms */
			uint64_t fill = dt * (k->buf_pages / 4) / pmax / 1000000;
			ms = fill < BUSY_SLEEP_MS ? BUSY_SLEEP_MS : fill < ms ? (unsigned)fill : ms;
			if (k->direct)
				tr_ctf_writer_direct(k->w, direct_slow_ms(k, fill ? fill : 1) * 1000000ull);
		}
		if (k->live_ms && next_tick - now < ms)
			ms = (unsigned)(next_tick - now);
		/* a viewer waits: sleep until an event (the poll), but a steady
		 * flow (trawl's own wakeups are events of a sched session too)
		 * goes in cuts KDEMAND_PART_MS apart */
		int64_t rest = demand ? k->fast_at + KDEMAND_PART_MS - (int64_t)now : 0;
		if (demand && rest < (int64_t)ms) {
			if (rest > 0) {
				struct timespec ts = { 0, (long)rest * 1000000 };
				nanosleep(&ts, NULL);
				ms -= (unsigned)rest;
			}
			woke = poll(k->pfd, k->ncpus, (int)ms) > 0;
			continue;
		}
		struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };
		nanosleep(&ts, NULL);
	}
	/* tracing is off now: take everything left */
	for (unsigned c = 0; c < k->ncpus && !k->err; c++) {
		bool cu;
		while (drain_cpu(k, c, 1024, &cu) > 0)
			;
	}
	/* the held entries' calls get HOLD_END_NS to return, then the pointer */
	uint64_t end = tr_mono_ns() + HOLD_END_NS;
	for (paths_poll(k, false); any_held(k) && !k->err && tr_mono_ns() < end;
	     paths_poll(k, false)) {
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
	paths_poll(k, true);
	return NULL;
}

/* What the pages did not report of the kernel's losses: onto each CPU's
 * last packet. */
static void settle_lost(struct krec *k)
{
	for (unsigned c = 0; c < k->ncpus; c++) {
		struct kcpu *kc = &k->cpus[c];
		uint64_t total = kernel_lost(k, c);
		if (total > kc->attributed) {
			count_lost(k, c, total - kc->attributed);
			trawl_ctf_wstream_flush(kc->ws, kc->last_ts);
		}
	}
}

/*
 * Every stream's last packet ends at the same time, the last event's of
 * any CPU (an empty packet where the stream's events were all written),
 * as LTTng's streams do at a stop: readers that keep only the time range
 * all streams cover (babeltrace's stream intersection, which the
 * lttng-analyses use by default) then keep the whole recording, not only
 * up to the state dump's last event or an idle CPU's.
 */
static void end_streams(struct krec *k)
{
	uint64_t end = 0;
	for (unsigned c = 0; c < k->ncpus; c++)
		if (k->cpus[c].last_ts > end)
			end = k->cpus[c].last_ts;
	if (!end)
		return;
	for (unsigned c = 0; c < k->ncpus; c++)
		if (k->cpus[c].ws && !trawl_ctf_wstream_flush(k->cpus[c].ws, end))
			k->cpus[c].last_ts = end;
	if (k->sd_ws)
		trawl_ctf_wstream_flush(k->sd_ws, end);	/* -EINVAL: it ends later */
}

int tr_krec_snapshot_to(struct krec *k, const char *dir, const char *relay,
			const char *relay_session, char *err, size_t errlen)
{
	if (!k->flight || !k->started || k->stopped)
		return tr_seterr(err, errlen, EINVAL, "not a recording flight recorder");
	if (relay && k->tsc)
		return tr_seterr(err, errlen, EINVAL,
				 "a snapshot streamed to a relay takes the mono clock (the TSC's "
				 "frequency is only known at the end)");
	struct trawl_ctf_dest *dest = NULL;
	if (relay) {
		const struct trawl_relay_dest_opts ro = {
			.sz = sizeof(ro), .addr = relay, .session = relay_session,
			.resume_ms = TRAWL_RELAY_RESUME_MS,
		};
		if (!(dest = trawl_relay_dest_new(&ro)))
			return tr_seterr(err, errlen, errno, "relay %s: %s", relay, strerror(errno));
	}
	for (unsigned c = 0; c < k->ncpus; c++) {
		struct kcpu *kc = &k->cpus[c];
		memset(&kc->st, 0, sizeof(kc->st));
		kc->last_ts = 0;
		kc->any = false;
	}
	k->sd_events = 0;
	k->err = 0;
	/* a snapshot's DIR/HOST/kernel: nothing below DIR through a link */
	char *root = NULL;
	size_t dl = dir ? strlen(dir) : 0, hl = k->hostname ? strlen(k->hostname) : 0;
	if (dl > hl + 8 && hl && !strcmp(dir + dl - 7, "/kernel") &&
	    !strncmp(dir + dl - 7 - hl, k->hostname, hl) && dir[dl - 8 - hl] == '/')
		root = strndup(dir, dl - 8 - hl);
	k->dir = dir;
	k->root = root;
	int r = open_trace(k, dir, k->hostname, dest, 0, err, errlen);
	k->dir = k->root = NULL;
	free(root);
	if (r == 0)
		state_dump(k);
	/*
	 * Every CPU's buffer, read out: the newest events (the kernel
	 * overwrote the older ones, counted on the first page read as missed:
	 * events_discarded), the page being written included. Bounded by the
	 * buffer's size (and a margin): events that come meanwhile are for
	 * the next snapshot.
	 */
	for (unsigned c = 0; c < k->ncpus && !r && !k->err; c++)
		for (size_t i = 0; i < k->buf_pages + 16 && !k->err; i++) {
			ssize_t n = read(k->cpus[c].fd, k->page, k->psize);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			bool held;
			process_page(k, c, k->page, (size_t)n, false, &held);
		}
	if (!r && !k->err) {
		settle_lost(k);
		end_streams(k);
	}
	if (!r && k->err)
		r = tr_seterr(err, errlen, -k->err, "%s", k->errmsg);
	if (k->w) {
		tr_clock_sample(k->tsc, &k->s1);
		tr_clock_fill(k->tsc, &k->s0, &k->s1, &trawl_ctf_writer_trace(k->w)->clocks[0]);
		int rc = trawl_ctf_writer_close(k->w);
		if (rc < 0 && !r)
			r = tr_seterr(err, errlen, -rc, "closing the kernel trace: %s", strerror(-rc));
		k->snapped = !r;
	}
	trawl_ctf_writer_free(k->w);
	k->w = NULL;
	tr_krec_conv_free(k->conv);
	k->conv = NULL;
	for (unsigned c = 0; c < k->ncpus; c++)
		k->cpus[c].ws = NULL;
	k->sd_ws = NULL;
	return r;
}

int tr_krec_start(struct krec *k, char *err, size_t errlen)
{
	if (k->started)
		return tr_seterr(err, errlen, EBUSY, "already started");
	if (!k->relay)	/* streamed: sampled by tr_krec_new */
		tr_clock_sample(k->tsc, &k->s0);
	/* the mono clock is final from this sample: the metadata written
	 * while it records declares it already (a growing trace is read
	 * with its real times; the TSC's frequency is known at stop) */
	if (!k->relay && !k->tsc && k->w)
		tr_clock_fill(false, &k->s0, &k->s0, &trawl_ctf_writer_trace(k->w)->clocks[0]);
	int r = inst_write(k, "tracing_on", "1", false);
	if (r)
		return tr_seterr(err, errlen, -r, "tracing_on: %s", strerror(-r));
	k->started = true;
	if (k->flight)		/* read at its snapshots */
		return 0;
	/* without a state dump (or a pipe) there is nothing to wait for */
	if (!k->statedump || pipe2(k->sd_pipe, O_CLOEXEC))
		k->sd_pipe[0] = k->sd_pipe[1] = -1;
	r = pthread_create(&k->th, NULL, reader, k);
	if (r) {
		inst_write(k, "tracing_on", "0", false);
		return tr_seterr(err, errlen, r, "reader thread: %s", strerror(r));
	}
	k->thread = true;
	return 0;
}

void tr_krec_wait_statedump(struct krec *k)
{
	if (k->sd_pipe[0] < 0)
		return;
	char b;
	/* one byte, or end of file if the reader ended first */
	while (read(k->sd_pipe[0], &b, 1) < 0 && errno == EINTR)
		;
	close(k->sd_pipe[0]);
	k->sd_pipe[0] = -1;
}

int tr_krec_stop(struct krec *k, char *err, size_t errlen)
{
	if (!k || k->stopped)
		return 0;
	k->stopped = true;
	if (k->started)
		inst_write(k, "tracing_on", "0", false);
	/* a flight recorder's clock is its last snapshot's */
	if (k->flight)
		return 0;
	tr_clock_sample(k->tsc, &k->s1);
	__atomic_store_n(&k->stop, 1, __ATOMIC_RELEASE);
	if (k->thread)
		pthread_join(k->th, NULL);
	k->thread = false;
	int r = k->err;
	if (r)
		tr_seterr(err, errlen, -r, "%s", k->errmsg);
	settle_lost(k);
	end_streams(k);
	if (k->paths) {
		struct tr_kpath_stats ps;
		tr_kpath_stats(k->paths, &ps);
		trawl_ctf_writer_env_int(k->w, "trawl_file_names_named", (int64_t)ps.named);
		trawl_ctf_writer_env_int(k->w, "trawl_file_names_missing",
					 (int64_t)tr_kpath_missing(&ps));
	}
	if (k->started && !k->relay)
		tr_clock_fill(k->tsc, &k->s0, &k->s1, &trawl_ctf_writer_trace(k->w)->clocks[0]);
	int rc = trawl_ctf_writer_close(k->w);
	if (k->relay)
		k->relay_count = trawl_ctf_writer_relay_discarded(k->w, &k->relay_events,
								  &k->relay_discarded);
	const char *why = trawl_ctf_writer_relay_why(k->w);
	if (rc < 0 && !r)
		r = tr_seterr(err, errlen, -rc, "closing the kernel trace: %s",
			      *why ? why : strerror(-rc));
	int rl = trawl_ctf_writer_relay_error(k->w);
	if (rl) {
		/* printed here: the relay's words escaped */
		char *e = tr_escape_dup(*why ? why : strerror(-rl), false);
		fprintf(stderr, "trawl: warning: the relay was lost during the recording (%s): "
			"the kernel trace is complete only in the local copy\n",
			e ? e : *why ? why : strerror(-rl));
		free(e);
	}
	return r;
}

void tr_krec_free(struct krec *k)
{
	if (!k)
		return;
	if (k->w && !k->stopped)
		tr_krec_stop(k, NULL, 0);
	for (int i = 0; i < 2; i++) {
		if (k->sd_pipe[i] >= 0)
			close(k->sd_pipe[i]);
	}
	free(k->pfd);
	for (unsigned c = 0; k->cpus && c < k->ncpus; c++)
		if (k->cpus[c].fd >= 0)
			close(k->cpus[c].fd);
	if (k->inst) {
		if (k->inst_dir)
			inst_write(k, "tracing_on", "0", false);
		tracefs_instance_destroy(k->inst);
		tracefs_instance_free(k->inst);
	}
	free(k->inst_dir);
	free(k->hostname);
	trawl_ctf_writer_free(k->w);
	tr_krec_conv_free(k->conv);
	tr_kpath_free(k->paths);
	for (unsigned c = 0; k->cpus && c < k->ncpus; c++) {
		for (size_t i = k->cpus[c].hq; i < k->cpus[c].nq; i++)
			free(k->cpus[c].q[i].page);
		free(k->cpus[c].q);
	}
	if (k->kb)
		kbuffer_free(k->kb);
	if (k->tep)
		tep_free(k->tep);
	for (size_t i = 0; i < k->nevs; i++) {
		free(k->evs[i].sys);
		free(k->evs[i].name);
	}
	free(k->evs);
	free(k->cpus);
	free(k->page);
	free(k);
}

const struct krec_live_stats *tr_krec_live_stats(const struct krec *k)
{
	return k->live_ms ? &k->lst : NULL;
}

unsigned tr_krec_ncpus(const struct krec *k)
{
	return k->ncpus;
}

const struct krec_cpu_stats *tr_krec_stats(const struct krec *k, unsigned cpu)
{
	return cpu < k->ncpus ? &k->cpus[cpu].st : NULL;
}

uint64_t tr_krec_events(const struct krec *k)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < k->ncpus; i++)
		n += __atomic_load_n(&k->cpus[i].st.events, __ATOMIC_RELAXED);
	return n;
}

int tr_krec_relay_discarded(const struct krec *k, uint64_t *events, uint64_t *discarded)
{
	if (!k->relay || k->relay_count == -ENOENT)
		return -ENOENT;
	*events = k->relay_events;
	*discarded = k->relay_discarded;
	return k->relay_count;
}

uint64_t tr_krec_statedump_events(const struct krec *k)
{
	return k->sd_events > 0 ? (uint64_t)k->sd_events : 0;
}

const char *tr_krec_paths_why(const struct krec *k)
{
	return *k->paths_why ? k->paths_why : NULL;
}

int tr_krec_paths_stats(const struct krec *k, struct tr_kpath_stats *st)
{
	if (!k->paths)
		return -ENOENT;
	tr_kpath_stats(k->paths, st);
	return 0;
}

bool tr_krec_is_tsc(const struct krec *k)
{
	return k->tsc;
}

const char *tr_krec_clock_name(const struct krec *k)
{
	return k->tsc ? "x86-tsc" : "mono";
}

int tr_krec_clock_get(const struct krec *k, uint64_t *freq, int64_t *offset_s, int64_t *offset)
{
	/* streamed, the clock is final from the start (mono, from s0 alone);
	 * a flight recorder's is its last snapshot's */
	if (!k->started || (k->flight ? !k->snapped : !k->stopped && !k->relay))
		return -EAGAIN;
	struct trawl_ctf_clock c = { .freq = 1000000000 };
	tr_clock_fill(k->tsc, &k->s0, &k->s1, &c);
	*freq = c.freq;
	*offset_s = c.offset_s;
	*offset = c.offset;
	return 0;
}
