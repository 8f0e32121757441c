/* SPDX-License-Identifier: MIT */
/*
 * cli/cmd-print.c - `trawl print`: every event of every trace under the
 * given paths, merged in time order, one line each in babeltrace2's text
 * format, so that `trawl print DIR` and `babeltrace2 DIR` can be compared
 * line by line.
 *
 * Output goes through one large buffer written with write(2); a closed pipe
 * (`| head`) ends the command quietly. A corrupt stream is reported on
 * stderr and the others go on; the exit status is then 1.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "trawl/ctf.h"
#include "trawl/pipe.h"
#include "trawl/sync.h"

static void print_usage(FILE *f)
{
	fprintf(f,
		"usage: trawl print [<options>] <path>...\n"
		"\n"
		"Prints the events of the CTF traces found under each path (a trace\n"
		"directory or a session above several), merged in time order, one line\n"
		"each, as babeltrace2 does.\n"
		"\n"
		"  -H, --host <glob>      only traces whose env hostname matches (repeatable)\n"
		"  -e, --event <glob>     only events whose name matches (repeatable)\n"
		"  -b, --begin <time>     only events at or after <time>\n"
		"  -E, --end <time>       only events at or before <time>\n"
		"  -n, --limit <n>        stop after <n> events\n"
		"      --clock-seconds    print times as [seconds.nanoseconds]\n"
		"      --clock-gmt        print times in UTC instead of local time\n"
		"      --no-delta         do not print the time since the previous event\n"
		"      --no-sync          raw clocks: do not apply the session's sync.txt\n"
		"      --threads <n>      1: read and format in one thread; 2 (default):\n"
		"                         format and write in a second thread; 3: also\n"
		"                         decode the traces ahead in a third thread\n"
		"  -h, --help             this help\n"
		"\n"
		"<time>: seconds since the epoch with an optional fraction (1700000000.5),\n"
		"nanoseconds since the epoch (an integer of 13 digits or more, or with an\n"
		"'ns' suffix), 'YYYY-MM-DD HH:MM:SS[.n]', or 'HH:MM:SS[.n]' on the day of\n"
		"the first event; dates are local time unless --clock-gmt is given.\n");
}

/* ------------------------------------------------------------- output */

struct outbuf {
	char *buf;
	size_t len, cap;
	bool broken;		/* EPIPE: stop quietly */
	int err;		/* other write error */
};

static int flush_out(struct outbuf *o)
{
	size_t off = 0;

	while (off < o->len && !o->broken) {
		ssize_t n = write(STDOUT_FILENO, o->buf + off, o->len - off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EPIPE)
				o->broken = true;
			else
				o->err = errno;
			break;
		}
		off += (size_t)n;
	}
	o->len = 0;
	return o->broken || o->err ? -1 : 0;
}

/* ---------------------------------------------------------- time parsing */

/* Digits -> value; *end past them. -1 if none or too large. */
static int parse_digits(const char *s, int64_t *v, const char **end)
{
	const char *p = s;

	*v = 0;
	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (*v > (INT64_MAX - 9) / 10)
			return -1;
		*v = *v * 10 + (*p - '0');
	}
	*end = p;
	return 0;
}

/* An optional ".digits" at s -> ns (up to 9 digits count); *end past it. */
static int64_t parse_frac(const char *s, const char **end)
{
	int64_t ns = 0, scale = 100000000;

	if (*s == '.') {
		for (s++; *s >= '0' && *s <= '9'; s++, scale /= 10)
			ns += (*s - '0') * scale;
	}
	*end = s;
	return ns;
}

/*
 * Parses a <time> (see the usage) into ns since the epoch. The HH:MM:SS
 * form is relative to the local (or UTC) midnight of the day of day_ref
 * (ns); it sets *rel, and with day_ref == INT64_MIN only checks the syntax.
 */
static int parse_time(const char *s, bool gmt, int64_t day_ref, int64_t *out, bool *rel)
{
	const char *p;
	int64_t v, frac;
	struct tm tm = { 0 };
	int n = 0;

	*rel = false;
	if (strlen(s) >= 19 && s[4] == '-' && s[7] == '-' && (s[10] == ' ' || s[10] == 'T')) {
		if (sscanf(s, "%4d-%2d-%2d%*c%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon,
			   &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &n) != 6)
			return -1;
		frac = parse_frac(s + n, &p);
		if (*p)
			return -1;
		tm.tm_year -= 1900;
		tm.tm_mon -= 1;
		tm.tm_isdst = -1;
		*out = (int64_t)(gmt ? timegm(&tm) : mktime(&tm)) * 1000000000 + frac;
		return 0;
	}
	if (strchr(s, ':')) {
		int hh, mm;
		time_t day;

		if (sscanf(s, "%2d:%2d:%n", &hh, &mm, &n) != 2 || n == 0 || hh < 0 ||
		    hh > 23 || mm < 0 || mm > 59)
			return -1;
		if (parse_digits(s + n, &v, &p) || v > 60)
			return -1;
		frac = parse_frac(p, &p);
		if (*p)
			return -1;
		*rel = true;
		if (day_ref == INT64_MIN)
			return 0;
		day = (time_t)(day_ref / 1000000000);
		if (gmt)
			gmtime_r(&day, &tm);
		else
			localtime_r(&day, &tm);
		tm.tm_hour = hh;
		tm.tm_min = mm;
		tm.tm_sec = (int)v;
		tm.tm_isdst = -1;
		*out = (int64_t)(gmt ? timegm(&tm) : mktime(&tm)) * 1000000000 + frac;
		return 0;
	}
	if (parse_digits(s, &v, &p))
		return -1;
	if (strcmp(p, "ns") == 0 || (!*p && p - s >= 13)) {
		*out = v;	/* nanoseconds */
		return 0;
	}
	frac = parse_frac(p, &p);
	if (*p && strcmp(p, "s") != 0)
		return -1;
	if (v > INT64_MAX / 1000000000 - 1)
		return -1;
	*out = v * 1000000000 + frac;
	return 0;
}

/* ------------------------------------------------------------ pipeline */

/*
 * With two threads, the main thread reads (decode + merge) and copies the
 * events into batches; a second thread formats and writes them in order.
 * When the formatter falls behind (two batches waiting), the reading
 * thread formats the batch it just filled itself, so both cores share the
 * formatting. Decoded strings point into the mapped traces, which stay
 * mapped until the reader is freed, so only the tapes are copied.
 */
#define BATCH 4096
#define NBATCH 8

struct batch {
	struct trawl_event ev[BATCH];
	size_t n;
	union trawl_ctf_value *vals;
	size_t nvals, capvals;
	int64_t prev_ts;		/* before ev[0]; INT64_MIN: none */
	bool formatted;
	char *out;
	size_t outlen, outcap;
	struct batch *next;
};

struct pipe_state {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct batch *free_list;
	struct batch *head, *tail;	/* ready, in order */
	size_t nready;
	bool done;			/* the reader has queued everything */
	bool stop;			/* the writer cannot go on */
	int werr;			/* write errno (not EPIPE) */
	bool nomem;
	struct trawl_text *tx;		/* the formatter thread's */
};

static int format_batch(struct trawl_text *tx, struct batch *b)
{
	trawl_text_set_prev(tx, b->prev_ts);
	b->outlen = 0;
	for (size_t i = 0; i < b->n; i++) {
		size_t room = b->outcap - b->outlen;
		size_t n = trawl_text_format(tx, b->out + b->outlen, room, &b->ev[i]);

		if (n > room) {
			size_t ncap = b->outcap * 2 + n;
			char *nb = realloc(b->out, ncap);

			if (!nb)
				return -1;
			b->out = nb;
			b->outcap = ncap;
			n = trawl_text_format(tx, b->out + b->outlen, b->outcap - b->outlen, &b->ev[i]);
		}
		if (n == 0)
			return -1;
		b->outlen += n;
	}
	b->formatted = true;
	return 0;
}

static void *writer_main(void *arg)
{
	struct pipe_state *ps = arg;

	for (;;) {
		struct batch *b;
		struct outbuf o;

		pthread_mutex_lock(&ps->mu);
		while (!ps->head && !ps->done)
			pthread_cond_wait(&ps->cv, &ps->mu);
		b = ps->head;
		if (!b) {
			pthread_mutex_unlock(&ps->mu);
			break;
		}
		ps->head = b->next;
		if (!ps->head)
			ps->tail = NULL;
		ps->nready--;
		pthread_mutex_unlock(&ps->mu);

		bool ok = b->formatted || format_batch(ps->tx, b) == 0;

		if (ok) {
			o = (struct outbuf){ .buf = b->out, .len = b->outlen, .cap = b->outcap };
			flush_out(&o);
		}
		pthread_mutex_lock(&ps->mu);
		if (!ok) {
			ps->nomem = true;
			ps->stop = true;
		} else if (o.broken || o.err) {
			ps->werr = o.err;
			ps->stop = true;
		}
		b->next = ps->free_list;
		ps->free_list = b;
		pthread_cond_broadcast(&ps->cv);
		pthread_mutex_unlock(&ps->mu);
	}
	return NULL;
}

/* Copies ev (and its tape) into b. */
static int batch_add(struct batch *b, const struct trawl_event *ev)
{
	if (b->nvals + ev->nvalues > b->capvals) {
		size_t ncap = (b->nvals + ev->nvalues) * 2 + 4096;
		union trawl_ctf_value *nv = realloc(b->vals, ncap * sizeof(*nv));

		if (!nv)
			return -1;
		b->vals = nv;
		b->capvals = ncap;
	}
	b->ev[b->n] = *ev;
	/* an offset for now: the tape may still move */
	b->ev[b->n].values = (const union trawl_ctf_value *)(uintptr_t)b->nvals;
	if (ev->nvalues)
		memcpy(b->vals + b->nvals, ev->values, ev->nvalues * sizeof(*ev->values));
	b->nvals += ev->nvalues;
	b->n++;
	return 0;
}

static void batch_fix(struct batch *b)
{
	for (size_t i = 0; i < b->n; i++)
		b->ev[i].values = b->vals + (uintptr_t)b->ev[i].values;
}

struct run_opts {
	int64_t begin, end;
	bool has_begin, has_end;
	uint64_t limit;
	unsigned flags;
};

/* Returns the exit status. */
static int print_threaded(struct trawl_reader *r, const struct run_opts *ro)
{
	struct pipe_state ps = { .head = NULL };
	struct batch *pool = calloc(NBATCH, sizeof(*pool));
	struct trawl_text *tx = trawl_text_new(ro->flags);
	pthread_t th;
	int64_t last_ts = INT64_MIN;
	uint64_t printed = 0;
	int status = 0, rc;
	bool end = false;

	ps.tx = trawl_text_new(ro->flags);
	if (!pool || !tx || !ps.tx) {
		status = die_msg("out of memory");
		goto out;
	}
	for (int i = 0; i < NBATCH; i++) {
		pool[i].outcap = 1 << 20;
		pool[i].out = malloc(pool[i].outcap);
		if (!pool[i].out) {
			status = die_msg("out of memory");
			goto out;
		}
		pool[i].next = ps.free_list;
		ps.free_list = &pool[i];
	}
	pthread_mutex_init(&ps.mu, NULL);
	pthread_cond_init(&ps.cv, NULL);
	if (pthread_create(&th, NULL, writer_main, &ps)) {
		status = die_msg("cannot start a thread");
		goto out;
	}
	while (!end) {
		struct batch *b;
		const struct trawl_event *ev;
		bool stop, help;

		pthread_mutex_lock(&ps.mu);
		while (!ps.free_list && !ps.stop)
			pthread_cond_wait(&ps.cv, &ps.mu);
		stop = ps.stop;
		b = ps.free_list;
		if (b && !stop)
			ps.free_list = b->next;
		pthread_mutex_unlock(&ps.mu);
		if (stop)
			break;

		b->n = 0;
		b->nvals = 0;
		b->formatted = false;
		b->prev_ts = last_ts;
		while (b->n < BATCH) {
			if (printed >= ro->limit) {
				end = true;
				break;
			}
			rc = trawl_reader_next(r, &ev);
			if (rc == 0) {
				end = true;
				break;
			}
			if (rc < 0) {
				die_msg("%s", trawl_reader_error(r));
				status = 1;
				continue;
			}
			if ((ro->has_begin && ev->ts < ro->begin) || (ro->has_end && ev->ts > ro->end))
				continue;
			if (batch_add(b, ev)) {
				status = die_msg("out of memory");
				end = true;
				break;
			}
			last_ts = ev->ts;
			printed++;
		}
		batch_fix(b);

		pthread_mutex_lock(&ps.mu);
		help = ps.nready >= 2;
		pthread_mutex_unlock(&ps.mu);
		if (help && format_batch(tx, b)) {
			status = die_msg("out of memory");
			end = true;
			b->n = 0;
			b->formatted = false;
		}

		pthread_mutex_lock(&ps.mu);
		b->next = NULL;
		if (ps.tail)
			ps.tail->next = b;
		else
			ps.head = b;
		ps.tail = b;
		ps.nready++;
		pthread_cond_broadcast(&ps.cv);
		pthread_mutex_unlock(&ps.mu);
	}
	pthread_mutex_lock(&ps.mu);
	ps.done = true;
	pthread_cond_broadcast(&ps.cv);
	pthread_mutex_unlock(&ps.mu);
	pthread_join(th, NULL);
	if (ps.nomem)
		status = die_msg("out of memory");
	if (ps.werr)
		status = die_msg("write error: %s", strerror(ps.werr));
	pthread_mutex_destroy(&ps.mu);
	pthread_cond_destroy(&ps.cv);
out:
	for (int i = 0; pool && i < NBATCH; i++) {
		free(pool[i].out);
		free(pool[i].vals);
	}
	free(pool);
	trawl_text_free(tx);
	trawl_text_free(ps.tx);
	return status;
}

/* One thread: read, format, write. */
static int print_serial(struct trawl_reader *r, const struct run_opts *ro)
{
	struct trawl_text *tx = trawl_text_new(ro->flags);
	struct outbuf o = { .cap = 1 << 20 };
	const struct trawl_event *ev;
	uint64_t printed = 0;
	int status = 0, rc;

	o.buf = malloc(o.cap);
	if (!tx || !o.buf) {
		status = die_msg("out of memory");
		goto out;
	}
	while (printed < ro->limit) {
		size_t n;

		rc = trawl_reader_next(r, &ev);
		if (rc == 0)
			break;
		if (rc < 0) {
			if (flush_out(&o))
				break;
			die_msg("%s", trawl_reader_error(r));
			status = 1;
			continue;
		}
		if ((ro->has_begin && ev->ts < ro->begin) || (ro->has_end && ev->ts > ro->end))
			continue;
		n = trawl_text_format(tx, o.buf + o.len, o.cap - o.len, ev);
		if (n > o.cap - o.len) {
			if (flush_out(&o))
				break;
			if (n > o.cap) {
				char *nb = realloc(o.buf, n + 1);

				if (!nb) {
					status = die_msg("out of memory");
					break;
				}
				o.buf = nb;
				o.cap = n + 1;
			}
			n = trawl_text_format(tx, o.buf, o.cap, ev);
		}
		if (n == 0) {
			status = die_msg("out of memory");
			break;
		}
		o.len += n;
		printed++;
		if (o.cap - o.len < 4096 && flush_out(&o))
			break;
	}
	flush_out(&o);
	if (o.err)
		status = die_msg("write error: %s", strerror(o.err));
out:
	trawl_text_free(tx);
	free(o.buf);
	return status;
}

/* ---------------------------------------------------------------- main */

struct print_opts {
	const char **hosts, **events;
	size_t nhosts, nevents;
	const char *begin_s, *end_s;
	int64_t begin, end;
	uint64_t limit;
	unsigned flags;
	int threads;
	bool no_sync;
	const struct trawl_reader_clock_fix *fixes;	/* from sync.txt */
	size_t nfixes;
};

static int push(const char ***v, size_t *n, const char *s)
{
	const char **nv = realloc(*v, (*n + 1) * sizeof(**v));

	if (!nv)
		return -1;
	nv[(*n)++] = s;
	*v = nv;
	return 0;
}

/* The first event's timestamp, for HH:MM:SS times. */
static int first_ts(char **paths, size_t npaths, const struct print_opts *po, int64_t *ts)
{
	struct trawl_reader_opts ro = {
		.sz = sizeof(ro), .hosts = po->hosts, .nhosts = po->nhosts, .threads = 1,
		.fixes = po->fixes, .nfixes = po->nfixes,
	};
	char err[512];
	struct trawl_reader *r = trawl_reader_new((const char *const *)paths, npaths, &ro,
						  err, sizeof(err));
	const struct trawl_event *ev;
	int rc;

	if (!r)
		return die_msg("%s", err);
	while ((rc = trawl_reader_next(r, &ev)) < 0)
		;
	*ts = rc == 1 ? ev->ts : 0;
	trawl_reader_free(r);
	return 0;
}

int cmd_print(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "host", required_argument, NULL, 'H' },
		{ "event", required_argument, NULL, 'e' },
		{ "begin", required_argument, NULL, 'b' },
		{ "end", required_argument, NULL, 'E' },
		{ "limit", required_argument, NULL, 'n' },
		{ "clock-seconds", no_argument, NULL, 1 },
		{ "clock-gmt", no_argument, NULL, 2 },
		{ "no-delta", no_argument, NULL, 3 },
		{ "threads", required_argument, NULL, 4 },
		{ "no-sync", no_argument, NULL, 5 },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct print_opts po = { .limit = UINT64_MAX, .threads = 2 };
	struct trawl_reader_opts ro = { .sz = sizeof(ro) };
	struct trawl_reader *r = NULL;
	struct trawl_sync_store *sync = NULL;
	char err[1024];
	int c, status = 0;
	bool brel = false, erel = false;

	optind = 1;
	while ((c = getopt_long(argc, argv, "H:e:b:E:n:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'H':
			if (push(&po.hosts, &po.nhosts, optarg))
				return die_msg("out of memory");
			break;
		case 'e':
			if (push(&po.events, &po.nevents, optarg))
				return die_msg("out of memory");
			break;
		case 'b':
			po.begin_s = optarg;
			break;
		case 'E':
			po.end_s = optarg;
			break;
		case 'n': {
			char *end;

			errno = 0;
			po.limit = strtoull(optarg, &end, 10);
			if (errno || *end || !*optarg || optarg[0] == '-') {
				fprintf(stderr, "trawl print: bad --limit '%s'\n", optarg);
				return 2;
			}
			break;
		}
		case 1:
			po.flags |= TRAWL_TEXT_CLOCK_SECONDS;
			break;
		case 2:
			po.flags |= TRAWL_TEXT_CLOCK_GMT;
			break;
		case 3:
			po.flags |= TRAWL_TEXT_NO_DELTA;
			break;
		case 4:
			po.threads = atoi(optarg);
			if (po.threads < 1 || po.threads > 3) {
				fprintf(stderr, "trawl print: --threads is 1, 2 or 3\n");
				return 2;
			}
			break;
		case 5:
			po.no_sync = true;
			break;
		case 'h':
			print_usage(stdout);
			return 0;
		default:
			print_usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "trawl print: no trace path given\n");
		print_usage(stderr);
		status = 2;
		goto out;
	}
	char **paths = argv + optind;
	size_t npaths = (size_t)(argc - optind);
	bool gmt = po.flags & TRAWL_TEXT_CLOCK_GMT;

	if (po.begin_s && parse_time(po.begin_s, gmt, INT64_MIN, &po.begin, &brel)) {
		fprintf(stderr, "trawl print: bad --begin time '%s'\n", po.begin_s);
		status = 2;
		goto out;
	}
	if (po.end_s && parse_time(po.end_s, gmt, INT64_MIN, &po.end, &erel)) {
		fprintf(stderr, "trawl print: bad --end time '%s'\n", po.end_s);
		status = 2;
		goto out;
	}
	if (cli_sync_load((const char *const *)paths, npaths, po.no_sync, &ro, &sync)) {
		status = 1;
		goto out;
	}
	po.fixes = ro.fixes;
	po.nfixes = ro.nfixes;
	if (brel || erel) {
		int64_t day = 0;

		if (first_ts(paths, npaths, &po, &day)) {
			status = 1;
			goto out;
		}
		if (brel)
			parse_time(po.begin_s, gmt, day, &po.begin, &brel);
		if (erel)
			parse_time(po.end_s, gmt, day, &po.end, &erel);
	}
	if (po.end_s && po.begin_s && po.end < po.begin) {
		fprintf(stderr, "trawl print: --end is before --begin\n");
		status = 2;
		goto out;
	}

	ro.hosts = po.hosts;
	ro.nhosts = po.nhosts;
	ro.events = po.events;
	ro.nevents = po.nevents;
	if (po.begin_s || po.end_s) {
		/* 0, 0 means everything: an explicit epoch begin is 1 ns early */
		ro.begin = po.begin_s ? po.begin : 0;
		ro.end = po.end_s ? po.end : 0;
		if (po.end_s && ro.end == 0)
			ro.end = -1;	/* nothing can be at or before 0 */
	}
	/*
	 * Formatting costs more than decoding: on 2 CPUs the formatter thread
	 * (which the reading thread helps) is the best use of the second one,
	 * and a decode worker on top only adds contention; --threads 3 asks
	 * for it anyway.
	 */
	ro.threads = po.threads >= 3 ? 2 : 1;
	r = trawl_reader_new((const char *const *)paths, npaths, &ro, err, sizeof(err));
	if (!r) {
		status = die_msg("%s", err);
		goto out;
	}
	signal(SIGPIPE, SIG_IGN);
	{
		struct run_opts rn = {
			.begin = po.begin, .end = po.end,
			.has_begin = po.begin_s != NULL, .has_end = po.end_s != NULL,
			.limit = po.limit, .flags = po.flags,
		};

		status = po.threads > 1 ? print_threaded(r, &rn) : print_serial(r, &rn);
	}
out:
	trawl_reader_free(r);
	trawl_sync_store_free(sync);
	free(po.hosts);
	free(po.events);
	return status;
}
