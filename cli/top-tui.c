/* SPDX-License-Identifier: MIT */
/*
 * cli/top-tui.c - trawl top's full-screen display (ncurses): a header line
 * per host, the rows of the view of the slice shown, and the keys of
 * docs/top.md. It runs in the reading thread, from lib/top's callbacks: a
 * slice closed (redraw; a replay then waits one interval, reading keys),
 * the live reader waited (keys). The slice shown is the newest, unless
 * paused (p, or left/right through the history): then it stays on one.
 */
#include <curses.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "top-tui.h"

enum level { L_ALL, L_HOST, L_PROCESS, L_SAMPLES };

struct cli_top_tui {
	struct trawl_top_query q;	/* the command's */
	int64_t interval_ns;
	bool live, started, quit, paused, ended;
	volatile int *stop;
	uint64_t shown;			/* absolute slice index (dropped + i) when paused */
	char filter[64];		/* '/' */
	enum level level;
	char host[128];			/* drill-down: the host, the process */
	int64_t pid;
	char pname[96];
	int cursor;
	/* the rows drawn (for Enter) */
	struct trawl_top_row *rows;
	size_t nrows;
	/* live, behind the stream: intervals closing faster than real time
	 * (a backlog read) are not all drawn */
	int64_t slice_at, drawn_at;	/* CLOCK_MONOTONIC of the last slice, draw */
	uint64_t skipped;
	unsigned quick;			/* slices in a row that came that fast */
	bool stale;			/* the newest slice not drawn yet */
};

struct cli_top_tui *cli_top_tui_new(const struct trawl_top_query *q, int64_t interval_ns,
				    bool live)
{
	struct cli_top_tui *u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	u->q = *q;
	u->interval_ns = interval_ns;
	u->live = live;
	if (q->comm)
		snprintf(u->filter, sizeof(u->filter), "%s", q->comm);
	u->q.comm = NULL;
	return u;
}

void cli_top_tui_start(struct cli_top_tui *u, volatile int *stop)
{
	u->stop = stop;
	initscr();
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	u->started = true;
	mvprintw(0, 0, "trawl top: waiting for the first interval...");
	refresh();
}

void cli_top_tui_free(struct cli_top_tui *u)
{
	if (!u)
		return;
	if (u->started)
		endwin();
	free(u->rows);
	free(u);
}

static int64_t now_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void fmt_time(char *buf, size_t cap, int64_t ns)
{
	time_t s = (time_t)(ns / 1000000000);
	struct tm tm;
	localtime_r(&s, &tm);
	size_t n = strftime(buf, cap, "%H:%M:%S", &tm);
	snprintf(buf + n, cap - n, ".%03d", (int)(ns % 1000000000 / 1000000));
}

static void fmt_val(char *buf, size_t cap, enum trawl_top_column c, double v)
{
	switch (c) {
	case TRAWL_TOP_COL_CPU_PCT: snprintf(buf, cap, "%.1f", v); break;
	case TRAWL_TOP_COL_SUM:
	case TRAWL_TOP_COL_AVG:
	case TRAWL_TOP_COL_MAX: snprintf(buf, cap, "%.1f", v / 1e3); break;
	default: snprintf(buf, cap, "%.0f", v); break;
	}
}

/* The slice index (in the history) shown. */
static size_t shown(struct cli_top_tui *u, const struct trawl_top *t)
{
	size_t n = trawl_top_nslices(t);
	if (!u->paused || !n)
		return n ? n - 1 : 0;
	uint64_t d = trawl_top_dropped(t);
	if (u->shown < d)
		u->shown = d;
	if (u->shown >= d + n)
		u->shown = d + n - 1;
	return (size_t)(u->shown - d);
}

static void draw(struct cli_top_tui *u, const struct trawl_top *t)
{
	int rows_, cols_;
	getmaxyx(stdscr, rows_, cols_);
	erase();
	size_t ns = trawl_top_nslices(t);
	if (!ns) {
		mvprintw(0, 0, "trawl top: waiting for the first interval...");
		refresh();
		return;
	}
	size_t si = shown(u, t);
	int64_t begin, end;
	trawl_top_slice_range(t, si, &begin, &end);
	char b[32], e[32];
	fmt_time(b, sizeof(b), begin);
	fmt_time(e, sizeof(e), end);
	static const char *const lname[] = { "all hosts", "host", "process", "samples" };
	attron(A_BOLD);
	mvprintw(0, 0, "trawl top  %-8s [%s, %s) #%" PRIu64 "%s%s%s  %s", trawl_top_view_name(u->q.view),
		 b, e, trawl_top_dropped(t) + si, u->paused ? "  PAUSED" : "",
		 u->ended ? "  (end of trace)" : "", !u->q.group ? "" : u->q.by_cgroup ? "  grouped by cgroup" : "  grouped",
		 lname[u->level]);
	attroff(A_BOLD);
	if (u->skipped)
		printw("  skipped %" PRIu64 " (behind the stream)", u->skipped);
	int y = 1;
	if (u->filter[0] || u->level > L_ALL)
		mvprintw(y++, 0, "filter: %s  host: %s  process: %s", u->filter[0] ? u->filter : "-",
			 u->level >= L_HOST ? u->host : "*",
			 u->level >= L_PROCESS ? u->pname : "*");
	for (size_t h = 0; h < trawl_top_nhosts(t, si) && y < rows_ - 4; h++) {
		const struct trawl_top_host *ho = trawl_top_host_at(t, si, h);
		char age[48] = "";
		if (ho->down) {
			char d[32];
			fmt_time(d, sizeof(d), ho->newest);
			snprintf(age, sizeof(age), "  DOWN since %s", d);
		} else if (ho->age_ns >= 0) {
			snprintf(age, sizeof(age), "  age %.2fs", (double)ho->age_ns / 1e9);
		}
		char un[48] = "";
		if (ho->unseen_switches)	/* trawl-top(1): counted from wake-ups */
			snprintf(un, sizeof(un), "  unseen switches %" PRIu64, ho->unseen_switches);
		char ck[64];
		mvprintw(y++, 0, "%-16.16s cpu %6.1f%% (%u CPUs)  %9.0f ev/s  discarded %" PRIu64
			 " (%" PRIu64 " in all)  clock %s%s%s", ho->name, ho->cpu_pct, ho->ncpus,
			 ho->events_per_s, ho->discarded, ho->discarded_total,
			 cli_clock_text(ho->name, ck, sizeof(ck)), un, age);
	}
	y++;
	free(u->rows);
	u->rows = NULL;
	u->nrows = 0;
	if (u->level == L_SAMPLES) {
		attron(A_REVERSE);
		mvprintw(y++, 0, "%-16s %-6s %-12s %10s %4s %8s %8s %-16s", "HOST", "WHAT", "TIME",
			 "DUR_us", "CPU", "PID", "TID", "COMM");
		attroff(A_REVERSE);
		size_t n = 0;
		for (size_t i = 0; i < trawl_top_nsamples(t, si) && y < rows_ - 1; i++) {
			const struct trawl_top_sample *s = trawl_top_sample_at(t, si, i);
			if (strcmp(s->host, u->host) || s->pid != u->pid)
				continue;
			char ts[32];
			fmt_time(ts, sizeof(ts), s->ts);
			mvprintw(y++, 0, "%-16.16s %-6s %-12s %10.1f %4u %8" PRId64 " %8" PRId64 " %-16s",
				 s->host, s->what, ts, (double)s->dur / 1e3, s->cpu, s->pid, s->tid,
				 s->comm);
			n++;
		}
		if (!n)
			mvprintw(y++, 0, "(none of this process among the interval's longest samples)");
	} else {
		struct trawl_top_query q = u->q;
		q.slice = si;
		q.comm = u->filter[0] ? u->filter : NULL;
		if (u->level >= L_HOST) {
			q.host = u->host;
			q.group = false;
		}
		if (u->level == L_PROCESS) {
			q.pid = u->pid;
			q.threads = true;
		}
		enum trawl_top_column cols[TRAWL_TOP_NCOLS];
		size_t nc = trawl_top_view_columns(q.view, cols);
		if (trawl_top_query(t, &q, &u->rows, &u->nrows) < 0)
			u->nrows = 0;
		attron(A_REVERSE);
		mvprintw(y, 0, "%-16s %8s %8s %-20s", "HOST", "PID", "TID", "NAME");
		int x = 55;
		for (size_t c = 0; c < nc && x < cols_; c++, x += 11) {
			bool sorted = cols[c] == q.sort || (q.sort == TRAWL_TOP_NCOLS && !c);
			mvprintw(y, x, "%10s%s", cli_top_col_title(cols[c]), sorted ? (q.ascending ? "^" : "v") : " ");
		}
		attroff(A_REVERSE);
		y++;
		if (u->cursor >= (int)u->nrows)
			u->cursor = u->nrows ? (int)u->nrows - 1 : 0;
		for (size_t i = 0; i < u->nrows && y < rows_ - 1; i++, y++) {
			const struct trawl_top_row *r = &u->rows[i];
			char pid[24] = "-", tid[24] = "-";
			if (r->pid >= 0)
				snprintf(pid, sizeof(pid), "%" PRId64, r->pid);
			if (r->tid >= 0)
				snprintf(tid, sizeof(tid), "%" PRId64, r->tid);
			if ((int)i == u->cursor)
				attron(A_STANDOUT);
			mvprintw(y, 0, "%-16.16s %8s %8s %-20.20s", r->host, pid, tid, r->name);
			x = 55;
			for (size_t c = 0; c < nc && x < cols_; c++, x += 11) {
				char v[32];
				fmt_val(v, sizeof(v), cols[c], r->v[cols[c]]);
				mvprintw(y, x, "%10s ", v);
			}
			if ((int)i == u->cursor)
				attroff(A_STANDOUT);
		}
	}
	mvprintw(rows_ - 1, 0, "1-5 view  t threads  <> sort  / filter  g group  c cgroup  p pause  "
		 "<- -> step  Enter drill  q quit");
	refresh();
}

/* '/': a name glob typed on the last line (Enter: set; empty: none). */
static void prompt_filter(struct cli_top_tui *u)
{
	int rows_, cols_;
	getmaxyx(stdscr, rows_, cols_);
	(void)cols_;
	char buf[64] = "";
	move(rows_ - 1, 0);
	clrtoeol();
	mvprintw(rows_ - 1, 0, "filter (name glob): ");
	echo();
	curs_set(1);
	timeout(-1);
	getnstr(buf, (int)sizeof(buf) - 1);
	noecho();
	curs_set(0);
	snprintf(u->filter, sizeof(u->filter), "%s", buf);
	u->cursor = 0;
}

static void sort_step(struct cli_top_tui *u, int d)
{
	enum trawl_top_column cols[TRAWL_TOP_NCOLS];
	int n = (int)trawl_top_view_columns(u->q.view, cols), i;
	for (i = 0; i < n && cols[i] != u->q.sort; i++)
		;
	if (i == n)
		i = 0;
	i = (i + d + n) % n;
	u->q.sort = cols[i];
}

/* One key: true when the screen must be redrawn. */
static bool key(struct cli_top_tui *u, struct trawl_top *t, int k)
{
	size_t ns = trawl_top_nslices(t);
	switch (k) {
	case 'q':
	case 'Q':
		u->quit = true;
		if (u->stop)
			*u->stop = 1;
		return false;
	case '1': case '2': case '3': case '4': case '5':
		u->q.view = (enum trawl_top_view)(k - '1');
		u->q.sort = TRAWL_TOP_NCOLS;
		u->cursor = 0;
		return true;
	case 't': u->q.threads = !u->q.threads; return true;
	case 'g': u->q.group = !u->q.group; u->cursor = 0; return true;
	case 'c':	/* grouped by cgroup, or by name again */
		u->q.by_cgroup = !(u->q.group && u->q.by_cgroup);
		u->q.group = true;
		u->cursor = 0;
		return true;
	case '<': sort_step(u, -1); return true;
	case '>': sort_step(u, 1); return true;
	case 'r': u->q.ascending = !u->q.ascending; return true;
	case '/': prompt_filter(u); return true;
	case 'p':
		if (!u->paused && ns) {
			u->shown = trawl_top_dropped(t) + ns - 1;
			u->paused = true;
		} else {
			u->paused = false;
		}
		return true;
	case KEY_LEFT:
		if (!ns)
			return false;
		if (!u->paused) {
			u->paused = true;
			u->shown = trawl_top_dropped(t) + ns - 1;
		}
		if (u->shown > trawl_top_dropped(t))
			u->shown--;
		return true;
	case KEY_RIGHT:
		if (!ns)
			return false;
		if (!u->paused) {
			u->paused = true;
			u->shown = trawl_top_dropped(t) + ns - 1;
		}
		if (u->shown + 1 < trawl_top_dropped(t) + ns)
			u->shown++;
		return true;
	case KEY_UP: if (u->cursor > 0) u->cursor--; return true;
	case KEY_DOWN: u->cursor++; return true;
	case '\n':
	case '\r':
	case KEY_ENTER:
		if (u->level == L_SAMPLES || (size_t)u->cursor >= u->nrows)
			return false;
		{
			const struct trawl_top_row *r = &u->rows[u->cursor];
			if (u->level == L_ALL) {
				if (!strcmp(r->host, "*"))
					return false;	/* grouped: no one host */
				snprintf(u->host, sizeof(u->host), "%s", r->host);
				u->level = L_HOST;
			} else if (u->level == L_HOST) {
				if (r->pid < 0)
					return false;	/* a disk, a syscall ... */
				u->pid = r->pid;
				snprintf(u->pname, sizeof(u->pname), "%s (%" PRId64 ")", r->name, r->pid);
				u->level = L_PROCESS;
			} else {
				u->level = L_SAMPLES;
			}
		}
		u->cursor = 0;
		return true;
	case KEY_BACKSPACE:
	case 127:
	case 8:
	case 27:
		if (u->level > L_ALL)
			u->level--;
		u->cursor = 0;
		return true;
	case KEY_RESIZE:
		return true;
	default:
		return false;
	}
}

/* Reads keys until the wall clock reaches until (ns, CLOCK_MONOTONIC),
 * redrawing after each; paused in a replay, until unpaused. */
static void keys_until(struct cli_top_tui *u, struct trawl_top *t, int64_t until, bool hold)
{
	for (;;) {
		int64_t left = until - now_ns(CLOCK_MONOTONIC);
		if (u->quit || (u->stop && *u->stop) || (left <= 0 && !(hold && u->paused)))
			return;
		int ms = left > 0 ? (int)(left / 1000000) : 100;
		timeout(ms > 0 ? ms : 1);
		int k = getch();
		if (k != ERR && key(u, t, k))
			draw(u, t);
	}
}

void cli_top_tui_slice(void *arg, struct trawl_top *t)
{
	struct cli_top_tui *u = arg;
	if (u->quit)
		return;
	int64_t now = now_ns(CLOCK_MONOTONIC), prev = u->slice_at;
	u->slice_at = now;
	/* live: slices closing less than half an interval after the one
	 * before, a third in a row, are a backlog being read (the viewer
	 * behind the stream, or joining a session from its start; not one
	 * late beacon): drawn once an interval, the others counted, so that
	 * the screen catches up with the newest */
	u->quick = prev && now - prev < u->interval_ns / 2 ? u->quick + 1 : 0;
	if (u->live && !u->paused && u->quick >= 2 && now - u->drawn_at < u->interval_ns) {
		u->skipped++;
		u->stale = true;
		keys_until(u, t, now, false);
		return;
	}
	u->drawn_at = now;
	u->stale = false;
	draw(u, t);
	if (!u->live)	/* a replay: one slice per refresh */
		keys_until(u, t, now_ns(CLOCK_MONOTONIC) + u->interval_ns, true);
	else
		keys_until(u, t, now_ns(CLOCK_MONOTONIC), false);
}

int cli_top_tui_idle(void *arg, struct trawl_top *t)
{
	struct cli_top_tui *u = arg;
	if (u->quit)
		return -ECANCELED;
	timeout(0);
	int k;
	bool redraw = u->stale;	/* caught up: the newest, which was skipped */
	u->stale = false;
	while ((k = getch()) != ERR)
		redraw |= key(u, t, k);
	if (redraw)
		draw(u, t);
	return u->quit ? -ECANCELED : 0;
}

void cli_top_tui_end(struct cli_top_tui *u, struct trawl_top *t)
{
	u->ended = true;
	draw(u, t);
	while (!u->quit) {
		timeout(-1);
		int k = getch();
		if (k != ERR && key(u, t, k))
			draw(u, t);
	}
}
