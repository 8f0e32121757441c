/* SPDX-License-Identifier: MIT */
/*
 * cli/progress.c - the one progress display of the trawl command: a line
 * on stderr redrawn in place (\r) while a long command runs, like pv,
 * rsync --info=progress2 or dd status=progress: done of total, percent,
 * rate, time left, and events so far where known; cleared at the end on
 * a terminal, ended with a newline in a file.
 *
 * It costs nothing measurable: an update is an add and a compare; the
 * clock is read only every `step` units, a step that doubles while the
 * reads come less than a millisecond apart (so at most about a thousand
 * reads a second, whatever the rate), and the line is drawn at most every
 * interval (100 ms; TRAWL_PROGRESS_INTERVAL_MS sets it, 0: at every
 * clock read, for tests), the first time after five intervals (a command
 * that ends sooner shows nothing unless --progress asked for the line).
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "util/clock.h"
#include "trawl/pipe.h"

#define MS 1000000ll
#define DEFAULT_INTERVAL (100 * MS)
#define MAX_STEP (1ull << 40)

/* The line on the terminal now, if any: cli_progress_hide() erases it. */
static struct cli_progress *shown;

static void put(const char *s, size_t n)
{
	while (n) {
		ssize_t w = write(STDERR_FILENO, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;	/* a progress line is not worth an error */
		s += w;
		n -= (size_t)w;
	}
}

bool cli_progress_same_tty(void)
{
	struct stat a, b;

	return isatty(STDOUT_FILENO) && isatty(STDERR_FILENO) && !fstat(STDOUT_FILENO, &a) &&
	       !fstat(STDERR_FILENO, &b) && a.st_rdev == b.st_rdev;
}

void cli_progress_start(struct cli_progress *p, const char *who, int opt,
			enum cli_progress_unit unit, uint64_t total)
{
	const char *env = getenv("TRAWL_PROGRESS_INTERVAL_MS");
	struct winsize ws;

	memset(p, 0, sizeof(*p));
	p->who = who;
	p->unit = unit;
	p->total = total;
	p->tty = isatty(STDERR_FILENO);
	if (cli_verbosity < 0)	/* -q: quiet means quiet */
		opt = CLI_OPT_NO_PROGRESS;
	p->forced = opt == CLI_OPT_PROGRESS;
	p->on = p->forced || (opt != CLI_OPT_NO_PROGRESS && p->tty);
	p->interval = DEFAULT_INTERVAL;
	if (env && *env) {
		char *end;
		long v = strtol(env, &end, 10);
		if (!*end && v >= 0 && v <= 3600000)
			p->interval = v * MS;
	}
	p->cols = 80;
	if (p->tty && !ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) && ws.ws_col >= 20)
		p->cols = ws.ws_col;
	p->step = 1;
	p->t0 = p->checked = (int64_t)tr_mono_ns();
	p->due = p->t0 + 5 * p->interval;
}

/* "1.23 GiB", "12.3 M", "950": v in unit (bytes, or a count). */
static const char *human(char *buf, size_t len, double v, bool bytes)
{
	static const char *const bu[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	static const char *const cu[] = { "", " k", " M", " G", " T", " P" };
	double k = bytes ? 1024 : 1000;
	int i = 0;

	while (v >= k && i < 5) {
		v /= k;
		i++;
	}
	if (!bytes && !i)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.*f%s%s", v < 10 ? 2 : v < 100 ? 1 : 0, v, bytes ? " " : "",
			 bytes ? bu[i] : cu[i]);
	return buf;
}

/* "1:05" or "2:01:05" */
static const char *hms(char *buf, size_t len, double s)
{
	uint64_t t = s < 0 ? 0 : s > 3.6e8 ? 360000000 : (uint64_t)(s + 0.5);

	if (t >= 3600)
		snprintf(buf, len, "%" PRIu64 ":%02u:%02u", t / 3600, (unsigned)(t / 60 % 60),
			 (unsigned)(t % 60));
	else
		snprintf(buf, len, "%u:%02u", (unsigned)(t / 60), (unsigned)(t % 60));
	return buf;
}

static void draw(struct cli_progress *p, int64_t now)
{
	char line[512], a[32], b[32], c[32];
	double secs = (double)(now - p->t0) / 1e9, done = (double)p->done;
	double total = (double)p->total, rate;
	bool bytes = p->unit == CLI_PROGRESS_BYTES;
	size_t n = 0;

#define ADD(...) (n += (size_t)snprintf(line + n, n < sizeof(line) ? sizeof(line) - n : 0, __VA_ARGS__))
	ADD("\r%s: ", p->who);
	if (p->unit == CLI_PROGRESS_TIME) {
		ADD("%.1f s", done / 1e9);
		if (p->total)
			ADD(" of %.1f s", total / 1e9);
	} else {
		ADD("%s", human(a, sizeof(a), done, bytes));
		if (p->total)
			ADD(" of %s", human(b, sizeof(b), total, bytes));
		if (!bytes)
			ADD(" events");
	}
	if (p->total)
		ADD("  %u%%", (unsigned)(done >= total ? 100 : 100 * done / total));
	if (p->unit != CLI_PROGRESS_EVENTS && p->counts)
		ADD("  %s events", human(c, sizeof(c), (double)p->events, false));
	/* the rate: of bytes or events; of events for a duration */
	rate = secs > 0 ? (p->unit == CLI_PROGRESS_TIME ? (double)p->events : done) / secs : 0;
	if (p->unit != CLI_PROGRESS_TIME || p->counts)
		ADD("  %s%s/s", human(a, sizeof(a), rate, bytes), bytes ? "" : " events");
	if (p->total && done < total) {
		double left = p->unit == CLI_PROGRESS_TIME ? (total - done) / 1e9 :
			      rate > 0 ? (total - done) / rate : -1;
		if (left >= 0)
			ADD("  %s left", hms(b, sizeof(b), left));
	}
#undef ADD
	if (n >= sizeof(line))
		n = sizeof(line) - 1;
	if (p->tty) {
		if (n > p->cols)
			n = p->cols;	/* a line that wraps cannot be redrawn */
		if (n + 3 < sizeof(line)) {
			memcpy(line + n, "\033[K", 3);	/* what the previous line had more */
			n += 3;
		}
	}
	put(line, n);
	p->drawn = true;
	shown = p;
}

void cli_progress_tick(struct cli_progress *p)
{
	int64_t now = (int64_t)tr_mono_ns();
	uint64_t pos = p->r ? p->events : p->done;

	if (now - p->checked < MS) {
		if (p->step < MAX_STEP)
			p->step *= 2;
	} else if (now - p->checked > 4 * MS && p->step > 1) {
		p->step /= 2;
	}
	p->checked = now;
	p->next = pos + p->step;
	if (!p->on || now < p->due)
		return;
	p->due = now + p->interval;
	if (p->r)
		trawl_reader_progress(p->r, &p->done, &p->total);
	draw(p, now);
}

void cli_progress_end(struct cli_progress *p, bool complete)
{
	if (!p->on)
		return;
	if (p->r) {
		trawl_reader_progress(p->r, &p->done, &p->total);
		p->r = NULL;
	}
	if (complete && p->total)
		p->done = p->total;
	if (p->drawn || p->forced) {
		draw(p, (int64_t)tr_mono_ns());
		if (p->tty)
			put("\r\033[K", 4);	/* the line goes: the output follows */
		else
			put("\n", 1);
	}
	if (shown == p)
		shown = NULL;
	p->on = false;
}

void cli_progress_hide(void)
{
	if (shown && shown->tty) {
		put("\r\033[K", 4);
		shown->due = 0;	/* back at the next clock read */
	}
}

/* ------------------------------------------------------------ the sink */

static int sink_start(void *self, struct trawl_reader *r)
{
	struct cli_progress *p = self;

	p->r = r;
	p->counts = true;
	trawl_reader_progress(r, &p->done, &p->total);
	if (!p->total)
		p->unit = CLI_PROGRESS_EVENTS;	/* live: events so far */
	return 0;
}

static int sink_events(void *self, const struct trawl_event *ev, size_t n)
{
	struct cli_progress *p = self;

	(void)ev;
	p->events += n;
	if (p->events >= p->next) {
		if (p->unit == CLI_PROGRESS_EVENTS)
			p->done = p->events;
		cli_progress_tick(p);
	}
	return 0;
}

static int sink_finish(void *self, struct trawl_reader *r)
{
	struct cli_progress *p = self;
	uint64_t done, total;

	trawl_reader_progress(r, &done, &total);
	if (p->unit == CLI_PROGRESS_EVENTS)
		p->done = p->events;
	cli_progress_end(p, total && done == total);
	return 0;
}

struct trawl_sink cli_progress_sink(struct cli_progress *p)
{
	static const struct trawl_sink_ops ops = {
		.sz = sizeof(ops), .name = "progress", .start = sink_start,
		.events = sink_events, .finish = sink_finish,
	};

	return (struct trawl_sink){ .ops = &ops, .self = p };
}

uint64_t cli_dir_bytes(const char *dir)
{
	uint64_t sum = 0;
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char *path;
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (asprintf(&path, "%s/%s", dir, e->d_name) < 0)
			continue;
		if (lstat(path, &st) == 0)
			sum += S_ISDIR(st.st_mode) ? cli_dir_bytes(path) : (uint64_t)st.st_size;
		free(path);
	}
	closedir(d);
	return sum;
}
