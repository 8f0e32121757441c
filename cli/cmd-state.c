/* SPDX-License-Identifier: MIT */
/*
 * cli/cmd-state.c - trawl state: the state of a host's CPUs, threads,
 * file descriptors and block requests at given times, and the events that
 * built it (the state system, trawl/state.h; docs/state.md).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "util/json.h"
#include "trawl/pipe.h"
#include "trawl/state.h"

static const char usage[] =
	"usage: trawl state PATH... --at TIME [--at TIME]... [--host HOST]\n"
	"                   [--tid N | --cpu N | --fd N [--pid P]] [--json]\n"
	"       trawl state --live URL [--duration S] [--wait S] [--from-now]\n"
	"                   [--at TIME]... [options]\n"
	"\n"
	"The state of a host at TIME, from its kernel events (sched, syscalls, irq,\n"
	"block and the state dump, as `trawl record -k sched,syscalls,irq,block`\n"
	"records them): each CPU (current thread; idle, user, syscall, irq,\n"
	"softirq), each thread (running, runnable after preemption or wake-up,\n"
	"blocked, and on what), each open file descriptor (path, bytes read and\n"
	"written, opened when), the block requests in flight. With --tid, --cpu or\n"
	"--fd: that one, and the events that built its state, oldest first.\n"
	"Offline, the state at TIME is the latest checkpoint before it and a replay of\n"
	"at most a second or 131072 events after it; the checkpoints are read from\n"
	"PATH/.trawl-state-HOST.ckpt when it matches the traces, else made by\n"
	"reading them whole and written there (--checkpoints). The events that built\n"
	"an entity (--tid, --cpu, --fd) are the window's before TIME, read again.\n"
	"With --live: the state system follows a relay's session until --duration\n"
	"has passed, SIGINT or SIGTERM, then shows the state at the newest event\n"
	"(or at each --at inside the window).\n"
	"\n"
	"  -a, --at TIME         HH:MM:SS[.nnnnnnnnn] (the trace's day), a date\n"
	"                        YYYY-MM-DD HH:MM:SS[.n], S[.n] seconds or N ns since\n"
	"                        the epoch, or +S[.n] seconds after the first event\n"
	"                        (every <time> form: docs/time.md)\n"
	"      --host HOST       the host, a name or a glob matching one (default: the\n"
	"                        only one; several: an error listing them)\n"
	"  -t, --tid N           one thread\n"
	"  -c, --cpu N           one CPU\n"
	"      --fd N            one file descriptor (of --pid P, or of --tid's process)\n"
	"  -p, --pid P           the process of --fd\n"
	"  -l, --live URL        a relay's live session: net://RELAY[:PORT]/host/HOST/\n"
	"                        SESSION or net://RELAY[:PORT]/session/SESSION\n"
	"  -d, --duration S      with --live: stop after S seconds (decimals allowed)\n"
	CLI_LIVE_HELP
	"  -w, --window S        seconds of detailed history kept (default 10)\n"
	"      --checkpoints FILE  offline: the checkpoints of the state, read from FILE\n"
	"                        when it matches the traces (their UUIDs, files, sizes,\n"
	"                        window), else made by reading the traces whole and\n"
	"                        written to it (default: PATH/.trawl-state-HOST.ckpt;\n"
	"                        none: kept in memory only)\n"
	"      --stats           events, changes and entities held, memory (stderr)\n"
	"  -n, --changes N       at most the N newest changes (default 50; 0: all)\n"
	"      --clock-gmt       times in UTC (default: local time; alias --gmt)\n"
	"      --json            one JSON object per TIME\n"
	"  -h, --help            this help\n";

struct opts {
	const char *host;
	int64_t tid, cpu, fd, pid;
	size_t nchanges;
	bool json, gmt;
};

static const char *fmt_ts(int64_t ts, bool gmt, char *b, size_t n)
{
	if (ts == INT64_MIN)
		return "(before the trace)";
	/* a time before 1970 (impossible: a corrupt timestamp or clock
	 * offset) with its date, its nanoseconds never negative */
	int64_t frac = ts % 1000000000;
	time_t sec = (time_t)(ts / 1000000000 - (frac < 0));
	struct tm tm;
	if (frac < 0)
		frac += 1000000000;
	if (!(gmt ? gmtime_r(&sec, &tm) : localtime_r(&sec, &tm)))
		snprintf(b, n, "%" PRId64 " ns", ts);
	else if (ts < 0)
		snprintf(b, n, "%04d-%02d-%02d %02d:%02d:%02d.%09" PRId64, tm.tm_year + 1900,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
	else
		snprintf(b, n, "%02d:%02d:%02d.%09" PRId64, tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
	return b;
}

static void change_text(const struct trawl_state_change *c, char *b, size_t n)
{
	switch (c->kind) {
	case TRAWL_STATE_SWITCH:
		snprintf(b, n, "cpu %d: %" PRId64 " (%s, prev_state %" PRId64 ") -> %" PRId64 " (%s)",
			 c->cpu, c->tid, c->str2, c->a, c->tid2, c->str);
		break;
	case TRAWL_STATE_WAKEUP:
		snprintf(b, n, "%" PRId64 " (%s) woken up, target cpu %" PRId64, c->tid2, c->str, c->a);
		break;
	case TRAWL_STATE_FORK:
		snprintf(b, n, "%" PRId64 " forks %" PRId64 " (%s), pid %" PRId64, c->tid, c->tid2,
			 c->str, c->a);
		break;
	case TRAWL_STATE_EXEC:
		snprintf(b, n, "%" PRId64 " execs %s", c->tid, c->str);
		break;
	case TRAWL_STATE_EXIT:
		snprintf(b, n, "%" PRId64 " exits", c->tid);
		break;
	case TRAWL_STATE_SYSCALL_ENTRY:
		snprintf(b, n, "cpu %d: %" PRId64 " enters %s%s%s", c->cpu, c->tid, c->str,
			 *c->str2 ? " " : "", c->str2);
		if (c->a >= 0)
			snprintf(b + strlen(b), n - strlen(b), " fd %" PRId64, c->a);
		break;
	case TRAWL_STATE_SYSCALL_EXIT:
		snprintf(b, n, "cpu %d: %" PRId64 " leaves %s = %" PRId64, c->cpu, c->tid, c->str, c->b);
		break;
	case TRAWL_STATE_IRQ_ENTRY:
	case TRAWL_STATE_IRQ_EXIT:
	case TRAWL_STATE_SOFTIRQ_ENTRY:
	case TRAWL_STATE_SOFTIRQ_EXIT:
		snprintf(b, n, "cpu %d: %s %" PRId64, c->cpu, trawl_state_change_name(c->kind), c->a);
		break;
	case TRAWL_STATE_BLOCK_INSERT:
	case TRAWL_STATE_BLOCK_ISSUE:
	case TRAWL_STATE_BLOCK_COMPLETE:
		snprintf(b, n, "%s dev %" PRId64 " sector %" PRId64 " +%" PRId64 " (tid %" PRId64 ")",
			 trawl_state_change_name(c->kind), c->a, c->b, c->c, c->tid);
		break;
	case TRAWL_STATE_DUMP_PROCESS:
		snprintf(b, n, "state dump: tid %" PRId64 " pid %" PRId64 " ppid %" PRId64 " %s",
			 c->tid2, c->a, c->b, c->str);
		break;
	case TRAWL_STATE_DUMP_FD:
		snprintf(b, n, "state dump: pid %" PRId64 " fd %" PRId64 " <%s>", c->a, c->b, c->str);
		break;
	case TRAWL_STATE_OPEN:
		snprintf(b, n, "%" PRId64 " opens fd %" PRId64 " <%s>", c->tid, c->b, c->str);
		break;
	case TRAWL_STATE_CLOSE:
		snprintf(b, n, "%" PRId64 " closes fd %" PRId64, c->tid, c->b);
		break;
	case TRAWL_STATE_READ:
	case TRAWL_STATE_WRITE:
		snprintf(b, n, "%" PRId64 " %s %" PRId64 " bytes, fd %" PRId64, c->tid,
			 c->kind == TRAWL_STATE_READ ? "reads" : "writes", c->c, c->b);
		break;
	default:
		snprintf(b, n, "?");
	}
}

/* The changes, the first (what created it) and the newest nchanges. */
static int print_changes(const struct trawl_state_view *v, enum trawl_state_entity e,
			 int64_t x, int64_t y, const struct opts *o, struct json *j)
{
	char b[512], t[32];
	size_t n, from;
	struct trawl_state_change *c;

	if (o->nchanges) {
		/* the first and the newest, in one pass over the window: an
		 * array for what is shown, not all */
		if (!(c = calloc(o->nchanges + 1, sizeof(*c))))
			return -ENOMEM;
		errno = 0;
		n = trawl_state_view_changes_ends(v, e, x, y, c, c + 1, o->nchanges);
		if (!n && errno == ENOMEM) {
			free(c);
			return -ENOMEM;
		}
		from = n > o->nchanges + 1 ? n - o->nchanges : 1;
	} else {
		n = trawl_state_view_changes(v, e, x, y, 0, NULL, 0);
		if (!(c = calloc(n + 1, sizeof(*c))))
			return -ENOMEM;
		trawl_state_view_changes(v, e, x, y, 0, c, n);
		from = 1;
	}
	if (j) {
		tr_json_key(j, "changes");
		tr_json_arr(j);
	} else {
		printf("  changes (%zu):\n", n);
	}
	for (size_t i = 0; i < n; i++) {
		if (i && i < from) {
			if (i == 1 && !j)
				printf("    ... %zu more\n", from - 1);
			continue;
		}
		const struct trawl_state_change *ci = i ? &c[1 + i - from] : &c[0];
		change_text(ci, b, sizeof(b));
		if (j) {
			tr_json_obj(j);
			tr_json_kv_i64(j, "ts", ci->ts);
			tr_json_kv_str(j, "kind", trawl_state_change_name(ci->kind));
			tr_json_kv_str(j, "what", b);
			tr_json_obj_end(j);
		} else {
			printf("    [%s] %s\n", fmt_ts(ci->ts, o->gmt, t, sizeof(t)), b);
		}
	}
	if (j)
		tr_json_arr_end(j);
	free(c);
	return 0;
}

static void cpu_out(const struct trawl_state_cpu *c, const struct opts *o, struct json *j)
{
	char t[64];

	if (j) {
		tr_json_kv_u64(j, "cpu", c->cpu);
		tr_json_kv_i64(j, "tid", c->tid);
		tr_json_kv_str(j, "mode", trawl_state_cpu_mode_name(c->mode));
		if (c->mode == TRAWL_STATE_CPU_IRQ || c->mode == TRAWL_STATE_CPU_SOFTIRQ)
			tr_json_kv_i64(j, "irq", c->irq);
		if (c->since != INT64_MIN)
			tr_json_kv_i64(j, "since", c->since);
		return;
	}
	printf("cpu %u: tid %" PRId64 ", %s", c->cpu, c->tid, trawl_state_cpu_mode_name(c->mode));
	if (c->mode == TRAWL_STATE_CPU_IRQ || c->mode == TRAWL_STATE_CPU_SOFTIRQ)
		printf(" %" PRId64, c->irq);
	printf(" since %s\n", c->since == INT64_MIN ? "?" : fmt_ts(c->since, o->gmt, t, sizeof(t)));
}

static void thr_out(const struct trawl_state_thread *th, int64_t now, const struct opts *o,
		    struct json *j)
{
	char t[64];

	if (j) {
		tr_json_kv_i64(j, "tid", th->tid);
		tr_json_kv_i64(j, "pid", th->pid);
		tr_json_kv_i64(j, "ppid", th->ppid);
		tr_json_kv_str(j, "comm", th->comm);
		tr_json_kv_str(j, "status", trawl_state_thread_status_name(th->status));
		if (th->since != INT64_MIN)
			tr_json_kv_i64(j, "since", th->since);
		tr_json_kv_i64(j, "cpu", th->cpu);
		if (th->syscall) {
			tr_json_kv_str(j, "syscall", th->syscall);
			tr_json_kv_i64(j, "syscall_since", th->syscall_since);
		}
		tr_json_key(j, "blocked_io");
		tr_json_bool(j, th->blocked_io);
		tr_json_kv_u64(j, "io_inflight", th->io_inflight);
		return;
	}
	printf("thread %" PRId64 " (%s) pid %" PRId64 " ppid %" PRId64 ": %s", th->tid,
	       *th->comm ? th->comm : "?", th->pid, th->ppid,
	       trawl_state_thread_status_name(th->status));
	if (th->since != INT64_MIN)
		printf(" since %s (%.6f s)", fmt_ts(th->since, o->gmt, t, sizeof(t)),
		       ((double)now - (double)th->since) / 1e9);	/* (no overflow) */
	if (th->syscall)
		printf(", in %s since %s", th->syscall, fmt_ts(th->syscall_since, o->gmt, t, sizeof(t)));
	if (th->blocked_io)
		printf(", on block I/O");
	if (th->io_inflight)
		printf(", %u block requests in flight", th->io_inflight);
	printf(", cpu %" PRId64 "\n", th->cpu);
}

static void fd_out(const struct trawl_state_fd *f, const struct opts *o, struct json *j)
{
	char t[64];

	if (j) {
		tr_json_kv_i64(j, "pid", f->pid);
		tr_json_kv_i64(j, "fd", f->fd);
		tr_json_kv_str(j, "path", f->path);
		if (f->opened != INT64_MIN)
			tr_json_kv_i64(j, "opened", f->opened);
		tr_json_kv_u64(j, "bytes_read", f->bytes_read);
		tr_json_kv_u64(j, "bytes_written", f->bytes_written);
		tr_json_kv_u64(j, "reads", f->reads);
		tr_json_kv_u64(j, "writes", f->writes);
		return;
	}
	printf("fd %" PRId64 " of pid %" PRId64 " <%s> opened %s, %" PRIu64 " bytes read (%" PRIu64
	       " reads), %" PRIu64 " bytes written (%" PRIu64 " writes)\n",
	       f->fd, f->pid, *f->path ? f->path : "?",
	       f->opened == INT64_MIN ? "before the trace" : fmt_ts(f->opened, o->gmt, t, sizeof(t)),
	       f->bytes_read, f->reads, f->bytes_written, f->writes);
}

static int show(const struct trawl_state_view *v, const struct opts *o, struct json *j)
{
	int64_t now = trawl_state_view_time(v);
	char t[64];
	const void *e;

	if (j) {
		tr_json_obj(j);
		tr_json_kv_str(j, "host", trawl_state_view_host(v));
		tr_json_kv_i64(j, "at", now);
	} else {
		printf("host %s at %s\n", trawl_state_view_host(v), fmt_ts(now, o->gmt, t, sizeof(t)));
	}
	if (o->cpu >= 0) {
		const struct trawl_state_cpu *c = NULL;
		for (size_t i = 0; (e = trawl_state_view_cpu(v, i)); i++)
			if (((const struct trawl_state_cpu *)e)->cpu == o->cpu)
				c = e;
		if (!c)
			return cli_err("cpu %" PRId64 ": no event of it by then", o->cpu);
		cpu_out(c, o, j);
		return print_changes(v, TRAWL_STATE_ENTITY_CPU, o->cpu, 0, o, j) ? cli_err("out of memory") : 0;
	}
	if (o->fd >= 0) {
		int64_t pid = o->pid;
		if (pid < 0) {
			const struct trawl_state_thread *th = trawl_state_view_thread_find(v, o->tid);
			pid = th && th->pid >= 0 ? th->pid : o->tid;
		}
		const struct trawl_state_fd *f = trawl_state_view_fd_find(v, pid, o->fd);
		if (!f)
			return cli_err("fd %" PRId64 " of pid %" PRId64 ": not open then (as far as the trace says)",
				       o->fd, pid);
		fd_out(f, o, j);
		return print_changes(v, TRAWL_STATE_ENTITY_FD, pid, o->fd, o, j) ? cli_err("out of memory") : 0;
	}
	if (o->tid >= 0) {
		const struct trawl_state_thread *th = trawl_state_view_thread_find(v, o->tid);
		if (!th)
			return cli_err("tid %" PRId64 ": no such thread then", o->tid);
		thr_out(th, now, o, j);
		return print_changes(v, TRAWL_STATE_ENTITY_THREAD, o->tid, 0, o, j) ? cli_err("out of memory") : 0;
	}
	/* everything */
	if (j)
		tr_json_key(j, "cpus"), tr_json_arr(j);
	for (size_t i = 0; (e = trawl_state_view_cpu(v, i)); i++) {
		if (j)
			tr_json_obj(j);
		cpu_out(e, o, j);
		if (j)
			tr_json_obj_end(j);
	}
	if (j)
		tr_json_arr_end(j), tr_json_key(j, "threads"), tr_json_arr(j);
	for (size_t i = 0; (e = trawl_state_view_thread(v, i)); i++) {
		if (j)
			tr_json_obj(j);
		thr_out(e, now, o, j);
		if (j)
			tr_json_obj_end(j);
	}
	if (j)
		tr_json_arr_end(j), tr_json_key(j, "fds"), tr_json_arr(j);
	for (size_t i = 0; (e = trawl_state_view_fd(v, i)); i++) {
		if (j)
			tr_json_obj(j);
		fd_out(e, o, j);
		if (j)
			tr_json_obj_end(j);
	}
	if (j)
		tr_json_arr_end(j), tr_json_key(j, "requests"), tr_json_arr(j);
	for (size_t i = 0; (e = trawl_state_view_request(v, i)); i++) {
		const struct trawl_state_request *q = e;
		if (j) {
			tr_json_obj(j);
			tr_json_kv_u64(j, "dev", q->dev);
			tr_json_kv_u64(j, "sector", q->sector);
			tr_json_kv_u64(j, "nr_sector", q->nr_sector);
			tr_json_kv_i64(j, "tid", q->tid);
			tr_json_obj_end(j);
		} else {
			printf("request dev %" PRIu64 " sector %" PRIu64 " +%u %s, tid %" PRId64 ", issued %s\n",
			       q->dev, q->sector, q->nr_sector, q->write ? "write" : "read", q->tid,
			       q->issued == INT64_MIN ? "not yet" : fmt_ts(q->issued, o->gmt, t, sizeof(t)));
		}
	}
	if (j)
		tr_json_arr_end(j);
	return 0;
}

static int by_str(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

static void hosts_free(char **h, size_t n)
{
	for (size_t i = 0; h && i < n; i++)
		free(h[i]);
	free(h);
}

/* The traces' host names (env.hostname), sorted, each once: 0 or 1 (said). */
static int trace_hosts(const char *const *paths, size_t npaths, char ***out, size_t *n)
{
	struct trawl_reader_opts ro = { .sz = sizeof(ro), .bad_trace = cli_report_bad_trace };
	char err[512];
	struct trawl_reader *r = trawl_reader_new(paths, npaths, &ro, err, sizeof(err));
	if (!r)
		return cli_err("%s", err);
	size_t nt = trawl_reader_ntraces(r);
	char **h = calloc(nt + 1, sizeof(*h));
	bool nomem = !h;
	*n = 0;
	for (size_t i = 0; h && !nomem && i < nt; i++) {
		const char *name = trawl_reader_trace_hostname(trawl_reader_trace_at(r, i));
		size_t k = 0;
		while (k < *n && strcmp(h[k], name ? name : ""))
			k++;
		if (k == *n && !(h[(*n)++] = strdup(name ? name : "")))
			nomem = true;
	}
	trawl_reader_free(r);
	if (nomem) {
		hosts_free(h, *n);
		return cli_err("out of memory");
	}
	qsort(h, *n, sizeof(*h), by_str);
	*out = h;
	return 0;
}

static const char *host_list(char *const *h, size_t n, char *b, size_t cap)
{
	return cli_name_list((const char *const *)h, n, b, cap);
}

/* The first and last events' times of the reader (hosts as ro), 0 0: none. */
static int trace_range(const char *const *paths, size_t npaths, const struct trawl_reader_opts *base,
		       int64_t *first, int64_t *last)
{
	struct trawl_reader_opts ro = { .sz = sizeof(ro), .hosts = base->hosts,
					.nhosts = base->nhosts, .bad_trace = cli_report_bad_trace };
	char err[512];
	struct trawl_reader *r = trawl_reader_new(paths, npaths, &ro, err, sizeof(err));
	const struct trawl_event *ev;
	int rc;
	if (!r)
		return cli_err("%s", err);
	*first = *last = 0;
	while ((rc = trawl_reader_next(r, &ev)) != 0) {
		if (rc < 0)
			continue;
		if (!*first)
			*first = ev->ts;
		*last = ev->ts;
	}
	trawl_reader_free(r);
	return 0;
}

/* Whether the reader (hosts as ro) has an event after ts: *after. 0 or 1 (said). */
static int event_after(const char *const *paths, size_t npaths, const struct trawl_reader_opts *base,
		       int64_t ts, bool *after)
{
	struct trawl_reader_opts ro = { .sz = sizeof(ro), .hosts = base->hosts,
					.nhosts = base->nhosts, .begin = ts + 1,
					.bad_trace = cli_report_bad_trace };
	char err[512];
	struct trawl_reader *r = trawl_reader_new(paths, npaths, &ro, err, sizeof(err));
	const struct trawl_event *ev;
	int rc;
	if (!r)
		return cli_err("%s", err);
	while ((rc = trawl_reader_next(r, &ev)) < 0)
		;
	*after = rc == 1 && ev->ts > ts;
	trawl_reader_free(r);
	return 0;
}

/* Offline checkpoints: every second of trace time or 2^17 events, so that
 * a query replays at most that much (docs/state.md, "Offline"). */
#define CK_NS 1000000000LL
#define CK_EVENTS (1u << 17)

/* PATH/.trawl-state-HOST.ckpt (PATH's directory when it is a file); a
 * hidden name, as readers of CTF (babeltrace2, trawl) skip those. */
static char *default_ckfile(const char *path, const char *host)
{
	struct stat st;
	char *dir = strdup(path), *f;
	size_t n;

	if (!dir)
		return NULL;
	if (stat(path, &st) || !S_ISDIR(st.st_mode)) {
		char *sl = strrchr(dir, '/');
		if (sl)
			*sl = 0;
		else
			strcpy(dir, ".");
	}
	n = strlen(dir) + strlen(host ? host : "") + 32;
	if ((f = malloc(n))) {
		snprintf(f, n, "%s/.trawl-state-%s.ckpt", dir, host && *host ? host : "_");
		for (char *p = f + strlen(dir) + 1; *p; p++)
			if (*p == '/')
				*p = '_';
	}
	free(dir);
	return f;
}

static volatile int live_stop;	/* SIGINT, SIGTERM, SIGALRM (--duration) */

/*
 * The offline pass: the traces read into s (up to ro->end; whole when
 * ckfile is given, which is then written); *rp the reader (for its losses,
 * freed first if one is there). 0, or 1 said.
 */
static int pass_files(struct trawl_state *s, const char *const *paths, size_t npaths,
		      const struct opts *o, struct trawl_reader_opts *ro, struct trawl_reader **rp,
		      int *nbad, const char *ckfile, char *how, size_t howlen,
		      char *err, size_t errlen)
{
	struct cli_reader_opts co = { .hosts = ro->hosts, .nhosts = ro->nhosts, .nbad = nbad };
	struct trawl_reader *r;

	(void)o;
	trawl_reader_free(*rp);
	if (ckfile)
		ro->end = 0;	/* (the file: the traces whole) */
	if (!(*rp = r = cli_open_reader(paths, npaths, &co, ro, err, errlen)))
		return cli_err("%s", err);
	struct trawl_sink sink = trawl_state_sink(s);
	struct trawl_run_opts run = { .sz = sizeof(run), .stop = &live_stop };
	int rc = trawl_pipe_run(r, &sink, 1, &run);
	if (rc < 0)
		return cli_err("reading: %s", strerror(-rc));
	/* a trace that lost events (or had regions skipped) gets no file: its
	 * losses are reported by the pass that reads it, and a run from a
	 * file reads none of it (docs/state.md) */
	uint64_t lost = 0;
	for (size_t i = 0; i < trawl_reader_ntraces(r); i++) {
		const struct trawl_reader_trace *t = trawl_reader_trace_at(r, i);
		for (size_t k = 0; k < trawl_reader_trace_nstreams(t); k++) {
			struct trawl_reader_stream_stats st;
			trawl_reader_stream_stats(trawl_reader_trace_stream(t, k), &st);
			lost += st.discarded;
		}
	}
	if (!ckfile || *nbad || trawl_reader_nerrors(r) || lost)
		snprintf(how, howlen, ", made, kept in memory%s",
			 ckfile && lost ? " (the traces lost events: no file, so that each run reports them)" : "");
	else if (trawl_state_save(s, ckfile, paths, npaths, err, errlen))
		cli_note("checkpoints not kept: %s", err);
	else
		snprintf(how, howlen, ", made, written to %s", ckfile);
	return 0;
}


static void on_stop(int sig)
{
	(void)sig;
	live_stop = 1;
}

int cmd_state(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "at", required_argument, NULL, 'a' },
		{ "host", required_argument, NULL, 'H' },
		{ "tid", required_argument, NULL, 't' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "fd", required_argument, NULL, 'F' },
		{ "pid", required_argument, NULL, 'p' },
		{ "window", required_argument, NULL, 'w' },
		{ "checkpoints", required_argument, NULL, 'K' },
		{ "live", required_argument, NULL, 'l' },
		{ "duration", required_argument, NULL, 'd' },
		CLI_LIVE_OPTIONS,
		{ "stats", no_argument, NULL, 'S' },
		{ "changes", required_argument, NULL, 'n' },
		CLI_GMT_OPTIONS('G'),
		{ "json", no_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { .tid = -1, .cpu = -1, .fd = -1, .pid = -1, .nchanges = 50 };
	const char *at_s[64];
	int64_t at[64];
	size_t nat = 0;
	double window = 10, duration = 0;
	const char *live = NULL, *ckopt = NULL;
	long wait_ms = CLI_WAIT_FOREVER;
	bool stats = false, from_now = false, wait_given = false;
	int c, status = 1;
	char *end;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":a:t:c:p:w:n:l:d:h", lo, NULL)) != -1) {
		switch (c) {
		case 'a':
			if (nat == 64)
				return cli_usage("at most 64 --at");
			at_s[nat++] = optarg;
			break;
		case 'H':
			o.host = optarg;
			break;
		case 't':
		case 'c':
		case 'F':
		case 'p':
		case 'n': {
			long long v = strtoll(optarg, &end, 10);
			if (*end || !*optarg || v < 0)
				return cli_usage("--%s: '%s' is not a number",
						 c == 't' ? "tid" : c == 'c' ? "cpu" : c == 'F' ? "fd"
						 : c == 'p' ? "pid" : "changes", optarg);
			if (c == 't')
				o.tid = v;
			else if (c == 'c')
				o.cpu = v;
			else if (c == 'F')
				o.fd = v;
			else if (c == 'p')
				o.pid = v;
			else
				o.nchanges = (size_t)v;
			break;
		}
		case 'w':
			window = strtod(optarg, &end);
			if (*end || !*optarg || !(window > 0))
				return cli_usage("--window: '%s' is not a number of seconds", optarg);
			break;
		case 'K':
			if (!*optarg)
				return cli_usage("--checkpoints: a file, or none");
			ckopt = optarg;
			break;
		case 'l':
			if ((status = cli_live_check(optarg)))
				return status;
			live = optarg;
			break;
		case CLI_OPT_WAIT:
			if ((status = cli_wait_arg(optarg, &wait_ms)))
				return status;
			wait_given = true;
			break;
		case CLI_OPT_FROM_NOW:
			from_now = true;
			break;
		case 'd':
			duration = strtod(optarg, &end);
			if (*end || !*optarg || !(duration > 0))
				return cli_usage("--duration: '%s' is not a number of seconds", optarg);
			break;
		case 'S':
			stats = true;
			break;
		case 'G':
			o.gmt = true;
			break;
		case 'J':
			o.json = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			return cli_opt_error(c, argv);
		}
	}
	const char *const *paths = (const char *const *)argv + optind;
	size_t npaths = (size_t)(argc - optind);
	if (!npaths && !live)
		return cli_usage("no trace given");
	if (npaths && live)
		return cli_usage("trace paths or --live, not both");
	if (!nat && !live)
		return cli_usage("no --at TIME given");
	if (duration > 0 && !live)
		return cli_usage("--duration goes with --live");
	if (ckopt && live)
		return cli_usage("--checkpoints goes with trace paths, not --live");
	if ((wait_given || from_now) && !live)
		return cli_usage("%s goes with --live", wait_given ? "--wait" : "--from-now");
	if ((o.tid >= 0) + (o.cpu >= 0) + (o.fd >= 0) > 1 && !(o.fd >= 0 && o.tid >= 0))
		return cli_usage("one of --tid, --cpu and --fd");
	if (o.fd >= 0 && o.pid < 0 && o.tid < 0)
		return cli_usage("--fd needs --pid (or --tid)");
	if (npaths && cli_trace_paths(paths, npaths))
		return 1;

	/*
	 * Files: the host is one of the traces' (--host, a name or a glob,
	 * matching one), or the only one; several without --host is an
	 * error, as is a --host that matches none, both listing the hosts.
	 */
	char **hl = NULL, hosts_b[1024];
	size_t nhl = 0;
	if (npaths) {
		if (trace_hosts(paths, npaths, &hl, &nhl))
			return 1;
		size_t m = nhl, pick = 0;
		if (o.host) {
			m = 0;
			for (size_t i = 0; i < nhl; i++)
				if (tr_glob_match(o.host, hl[i]))
					pick = m++ ? pick : i;
		}
		int rc = 0;
		if (!nhl)
			rc = cli_err("no traces in %s", paths[0]);
		else if (o.host && !m) {
			/* as cli_filters_check says it: the message, the near
			 * name, exit 2 (a statement that can never match) */
			cli_err("--host %s: no host matches; the traces' hosts: %s", o.host,
				host_list(hl, nhl, hosts_b, sizeof(hosts_b)));
			cli_near_hint(o.host, (const char *const *)hl, nhl);
			rc = CLI_EXIT_USAGE;
		}
		else if (m > 1 && o.host)
			rc = cli_usage("--host %s: matches %zu hosts; give one of: %s", o.host, m,
				       host_list(hl, nhl, hosts_b, sizeof(hosts_b)));
		else if (m > 1)
			rc = cli_usage("%zu hosts: say which with --host (%s)", m,
				       host_list(hl, nhl, hosts_b, sizeof(hosts_b)));
		if (rc) {
			hosts_free(hl, nhl);
			return rc;
		}
		o.host = hl[pick];	/* (the only one without --host; hl is kept to the end) */
	}

	int64_t t0 = 0, last = INT64_MIN;
	bool need_t0 = npaths > 0;	/* files: the trace's start, for --at before it */
	for (size_t i = 0; i < nat; i++) {
		bool rel;
		if (cli_parse_time(at_s[i], o.gmt, INT64_MIN, &at[i], &rel) == 0) {
			need_t0 |= rel;
		} else {
			hosts_free(hl, nhl);
			return cli_usage("--at: '%s' is not a time", at_s[i]);
		}
	}
	if (need_t0 && live) {
		hosts_free(hl, nhl);
		return cli_usage("--live takes dates or times since the epoch");
	}
	struct trawl_reader_opts fo = { .sz = sizeof(fo), .hosts = o.host && *o.host ? &o.host : NULL,
					.nhosts = o.host && *o.host ? 1 : 0 };
	if (need_t0) {
		if (cli_first_ts(paths, npaths, &fo, &t0)) {
			hosts_free(hl, nhl);
			return 1;
		}
		if (!t0) {
			hosts_free(hl, nhl);
			return cli_err("no events in the traces of host %s", *o.host ? o.host : "(no name)");
		}
	}
	for (size_t i = 0; i < nat; i++) {
		bool rel;
		cli_parse_time(at_s[i], o.gmt, t0, &at[i], &rel);	/* also +S: after t0 */
		if (at[i] > last)
			last = at[i];
	}
	for (size_t i = 0; i < nat && npaths; i++) {
		if (at[i] >= t0)
			continue;
		/* before the trace's start: say so, with the range */
		int64_t f = 0, l = 0;
		char b1[64], b2[64];
		int rc = trace_range(paths, npaths, &fo, &f, &l);
		if (!rc)
			rc = cli_err("--at %s: before the trace's start: host %s's events run from %s "
				     "to %s", at_s[i], *o.host ? o.host : "(no name)",
				     fmt_ts(f, o.gmt, b1, sizeof(b1)), fmt_ts(l, o.gmt, b2, sizeof(b2)));
		hosts_free(hl, nhl);
		return rc;
	}

	/*
	 * Offline: the checkpoints of the state (every CK_NS of trace time
	 * or CK_EVENTS events), from the checkpoint file when it matches the
	 * traces, else from a pass over them (whole, to write the file; else
	 * up to the latest time); every --at is then a restore and a replay
	 * of at most one interval (trawl_state_at_files). Live: the window.
	 */
	char err[1024];
	int64_t wns = (int64_t)(window * 1e9);
	struct trawl_state_opts so = { .sz = sizeof(so), .window_ns = wns,
				       .checkpoint_ns = live ? 0 : CK_NS,
				       .checkpoint_events = live ? 0 : CK_EVENTS,
				       .no_window = !live };
	struct trawl_reader_opts ro = { .sz = sizeof(ro), .end = live ? 0 : last };
	struct trawl_state *s = NULL;
	struct trawl_reader *r = NULL;
	struct json js, *j = o.json ? &js : NULL;
	char *ckfile = NULL, *ck_loaded = NULL;
	char ck_how[1200] = "";		/* --stats: where the checkpoints came from */
	int nbad = 0;

	tr_json_init(&js);
	if (!live && !(ckopt && !strcmp(ckopt, "none")) &&
	    !(ckfile = ckopt ? strdup(ckopt) : default_ckfile(paths[0], o.host))) {
		status = cli_err("out of memory");
		goto out;
	}
	if (ckfile) {
		if ((s = trawl_state_load(ckfile, &so, paths, npaths, err, sizeof(err)))) {
			snprintf(ck_how, sizeof(ck_how), ", read from %s", ckfile);
			ck_loaded = ckfile;	/* (matches: nothing to write) */
			ckfile = NULL;
		} else if (errno == ESTALE) {
			cli_note("%s: reading the traces again", err);
		} else if (errno == EBADMSG) {
			cli_warn("%s: ignored, reading the traces again", err);
		} else if (errno != ENOENT) {
			cli_warn("%s: reading the traces instead", err);
		}
		if (!s)
			ro.end = 0;	/* (the file: the traces whole) */
	}
	if (!s && !(s = trawl_state_new(&so))) {
		status = cli_err("out of memory");
		goto out;
	}
	if (o.host && *o.host)
		ro.hosts = &o.host, ro.nhosts = 1;
	if (live) {
		struct cli_reader_opts co = { .hosts = ro.hosts, .nhosts = ro.nhosts,
					      .live = &live, .nlive = 1, .wait_ms = wait_ms,
					      .from_now = from_now, .lazy = true };
		if (!(r = cli_open_reader(NULL, 0, &co, &ro, err, sizeof(err)))) {
			status = cli_err("%s", err);
			goto out;
		}
		cli_note("following %s", live);	/* attached: a test waits for this */
		struct sigaction sa = { .sa_handler = on_stop };
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGALRM, &sa, NULL);
		if (duration > 0) {
			struct itimerval it = { .it_value = { (time_t)duration,
				(suseconds_t)((duration - (double)(time_t)duration) * 1e6) } };
			setitimer(ITIMER_REAL, &it, NULL);
		}
	} else if (!ck_loaded) {
		if (pass_files(s, paths, npaths, &o, &ro, &r, &nbad, ckfile, ck_how, sizeof(ck_how),
			       err, sizeof(err))) {
			status = 1;
			goto out;
		}
	}
	if (live) {
		struct trawl_sink sink = trawl_state_sink(s);
		struct trawl_run_opts run = { .sz = sizeof(run), .stop = &live_stop };
		int rc = trawl_pipe_run(r, &sink, 1, &run);
		if (rc < 0) {
			status = cli_err("reading: %s", strerror(-rc));
			goto out;
		}
	}
	if (!o.host) {
		/* (live: the session's hosts are known once read) */
		size_t nh = trawl_state_nhosts(s);
		if (nh != 1) {
			char **names = calloc(nh + 1, sizeof(*names));
			for (size_t i = 0; names && i < nh; i++)
				names[i] = (char *)trawl_state_host(s, i);
			if (names)
				qsort(names, nh, sizeof(*names), by_str);
			status = nh ? cli_usage("%zu hosts: say which with --host (%s)", nh,
						names ? host_list(names, nh, hosts_b, sizeof(hosts_b)) : "")
				    : cli_err("no kernel events in the %s", live ? "session" : "traces");
			free(names);
			goto out;
		}
		o.host = trawl_state_host(s, 0);
	}
	if (stats) {
		struct trawl_state_stats st;
		trawl_state_stats(s, &st);
		fprintf(stderr, "state: %" PRIu64 " events, %" PRIu64 " changes held, %" PRIu64
			" threads, %" PRIu64 " fds, %" PRIu64 " requests, %" PRIu64
			" checkpoints%s, %.1f MB\n", st.events, st.changes, st.threads, st.fds,
			st.requests, st.checkpoints, ck_how, (double)st.bytes / 1e6);
	}
	if (!nat) {
		at[nat] = trawl_state_newest(s);
		at_s[nat++] = "the newest event";
	}
	status = 0;
	for (size_t i = 0; i < nat && !status; i++) {
		struct trawl_state_view *v;
		bool after = true;
		if (!live && at[i] > trawl_state_newest(s) &&
		    event_after(paths, npaths, &fo, at[i], &after)) {
			status = 1;
			break;
		}
		if (!live && at[i] > trawl_state_newest(s) && !after) {
			char b1[64];
			cli_warn("--at %s: after the trace's end (host %s's last event at %s): "
				 "the state as of that event", at_s[i], *o.host ? o.host : "(no name)",
				 fmt_ts(trawl_state_newest(s), o.gmt, b1, sizeof(b1)));
		}
		if (live && at[i] >= trawl_state_window_start(s, o.host)) {
			v = trawl_state_at(s, o.host, at[i]);
		} else if (live) {
			status = cli_err("%s: before the window (--window)", at_s[i]);
			break;
		} else
			v = trawl_state_at_files(s, paths, npaths, NULL, o.host, at[i], err, sizeof(err));
		if (!v && errno == EBADMSG && ck_loaded) {
			/* a checkpoint of the file that does not decode (each is
			 * checked when used): the file is not used, made again */
			cli_warn("%s: corrupt (%s): ignored, reading the traces again", ck_loaded, err);
			trawl_state_free(s);
			if (!(s = trawl_state_new(&so)) ||
			    pass_files(s, paths, npaths, &o, &ro, &r, &nbad, ck_loaded, ck_how,
				       sizeof(ck_how), err, sizeof(err))) {
				status = s ? 1 : cli_err("out of memory");
				break;
			}
			free(ck_loaded);
			ck_loaded = NULL;
			i--;
			continue;
		}
		if (v && (o.tid >= 0 || o.cpu >= 0 || o.fd >= 0) &&
		    trawl_state_view_history(v, err, sizeof(err))) {
			status = cli_err("%s: its history: %s", at_s[i], err);
			trawl_state_view_free(v);
			break;
		}
		if (!v) {
			status = errno == ENOENT ? cli_err("no kernel events of host '%s'", o.host)
			       : cli_err("%s: %s", at_s[i], errno == ERANGE ? "before the trace" : err);
			break;
		}
		status = show(v, &o, j);
		if (j) {
			cli_reader_json_losses(j, r);
			tr_json_obj_end(j);
			tr_json_char(j, '\n');
			if (tr_json_flush(j, stdout))
				status = cli_err("out of memory");
		}
		trawl_state_view_free(v);
	}
out:
	if (r) {
		int rs = cli_reader_report(r, nbad);	/* losses, skips: trawl(1) */
		if (!status)
			status = rs;
	}
	tr_json_release(&js);
	trawl_reader_free(r);
	trawl_state_free(s);
	free(ckfile);
	free(ck_loaded);
	hosts_free(hl, nhl);
	return status;
}
