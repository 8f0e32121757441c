/* SPDX-License-Identifier: MIT */
/*
 * lib/metrics/cluster.c - the cluster as metrics (cluster.h): readers of
 * the relay's live sessions, the analyses' slices added up per host.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "kstate/kstate.h"
#include "metrics/cluster.h"
#include "trawl/analysis.h"
#include "trawl/pipe.h"
#include "trawl/sync.h"

/* Histogram bounds: 1 us times powers of 4, up to 4.2 s: log2 bucket
 * index 2k of the analyses' histograms ends at 4^k us exactly. */
#define NLE 12
#define NAN_ 5				/* analyses per session */

struct csys {
	char name[64];
	uint64_t count, errors, hist[TRAWL_ANALYSIS_HIST];
	double sum;			/* seconds */
};

struct chist {
	uint64_t count, hist[TRAWL_ANALYSIS_HIST];
	double sum;
};

struct chost {
	struct csess *s;
	char host[128];
	int64_t mode_ns[TR_KS_MODES];	/* CPU time by mode, the kernel model's */
	unsigned ncpus;			/* CPUs seen (1 + the highest id) */
	struct chist rq, bio;
	struct csys *sys;		/* top_k + 1 ("other" last) */
	unsigned nsys;
	int64_t newest;			/* ns since the epoch: the slices' end */
	/* its clock as the live merge corrects it (lib/sync/live.c): 0 not
	 * heard of yet, 1 not synchronized, 2 synchronized */
	int clock;
	bool is_ref;
	double offset_s, bound_s;	/* bound_s < 0: none */
	char ref[128];
	struct chost *next;
};

struct csess {
	struct tr_cluster *c;
	char name[256];
	pthread_t thread;
	bool running, done;		/* done: the thread returned */
	volatile int stop;
	bool listed;			/* in the last tr_cluster_sessions() */
	struct trawl_analysis *an[NAN_];
	struct csess *next;
};

struct tr_cluster {
	struct tr_cluster_opts o;
	char *live;
	pthread_mutex_t mu;		/* everything below, and the hosts */
	struct csess *sessions;
	struct chost *hosts;
	unsigned nsessions, nhosts;
	uint64_t hosts_gen;		/* one more at each hosts_drop(): chost pointers
					 * kept elsewhere are stale */
	uint64_t hosts_dropped;		/* over max_hosts */
	uint64_t reader_errors;
};

static void logf_(struct tr_cluster *c, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void logf_(struct tr_cluster *c, int level, const char *fmt, ...)
{
	char b[512];
	va_list ap;

	if (!c->o.log)
		return;
	va_start(ap, fmt);
	vsnprintf(b, sizeof(b), fmt, ap);
	va_end(ap);
	c->o.log(c->o.log_arg, level, b);
}

/* Under c->mu. NULL: over max_hosts. */
static struct chost *host_of(struct csess *s, const char *name)
{
	struct tr_cluster *c = s->c;

	for (struct chost *h = c->hosts; h; h = h->next)
		if (h->s == s && !strcmp(h->host, name))
			return h;
	if (c->nhosts >= c->o.max_hosts) {
		c->hosts_dropped++;
		return NULL;
	}
	struct chost *h = calloc(1, sizeof(*h));

	if (!h || !(h->sys = calloc(c->o.top_k + 1, sizeof(*h->sys)))) {
		free(h);
		return NULL;
	}
	h->s = s;
	snprintf(h->host, sizeof(h->host), "%s", name);
	snprintf(h->sys[c->o.top_k].name, sizeof(h->sys[0].name), "other");
	h->next = c->hosts;
	c->hosts = h;
	c->nhosts++;
	return h;
}

static void hist_add(uint64_t *dst, const uint64_t *src)
{
	for (size_t i = 0; i < TRAWL_ANALYSIS_HIST; i++)
		dst[i] += src[i];
}

static int by_count(const void *a, const void *b)
{
	const struct trawl_analysis_row *x = *(const struct trawl_analysis_row *const *)a;
	const struct trawl_analysis_row *y = *(const struct trawl_analysis_row *const *)b;

	return x->count < y->count ? 1 : x->count > y->count ? -1 : strcmp(x->label, y->label);
}

/* A syscall's series: its own once it has one; a free one for a name
 * among the slice's top by count while some are free; else "other". A
 * series, once given, stays (its counter only grows). */
static struct csys *sys_of(struct tr_cluster *c, struct chost *h, const char *name)
{
	for (unsigned i = 0; i < h->nsys; i++)
		if (!strcmp(h->sys[i].name, name))
			return &h->sys[i];
	if (h->nsys < c->o.top_k) {
		struct csys *y = &h->sys[h->nsys++];

		snprintf(y->name, sizeof(y->name), "%s", name);
		return y;
	}
	return &h->sys[c->o.top_k];
}

static void period(void *arg, const struct trawl_analysis *a)
{
	struct csess *s = arg;
	struct tr_cluster *c = s->c;
	const char *kind = trawl_analysis_kind(a);
	size_t n = trawl_analysis_nrows(a);
	int64_t b, e;

	trawl_analysis_range(a, &b, &e);
	pthread_mutex_lock(&c->mu);
	if (!strcmp(kind, "syscalls")) {
		/* by count, so that the slice's busiest take the free series */
		const struct trawl_analysis_row **v = malloc((n ? n : 1) * sizeof(*v));

		for (size_t i = 0; v && i < n; i++)
			v[i] = trawl_analysis_row_at(a, i);
		if (v)
			qsort(v, n, sizeof(*v), by_count);
		for (size_t i = 0; v && i < n; i++) {
			const struct trawl_analysis_row *r = v[i];
			struct chost *h = r->kind == TRAWL_ANALYSIS_SYSCALL ? host_of(s, r->host) : NULL;

			if (!h)
				continue;
			struct csys *y = sys_of(c, h, r->label);

			y->count += r->count;
			y->errors += r->errors;
			y->sum += (double)r->sum / 1e9;
			hist_add(y->hist, r->hist);
		}
		free(v);
	}
	for (size_t i = 0; i < n; i++) {
		const struct trawl_analysis_row *r = trawl_analysis_row_at(a, i);
		struct chost *h = host_of(s, r->host);

		if (!h)
			continue;
		if (e > h->newest)
			h->newest = e;
		if (!strcmp(kind, "schedlat") && r->kind == TRAWL_ANALYSIS_THREAD) {
			h->rq.count += r->count;
			h->rq.sum += (double)r->sum / 1e9;
			hist_add(h->rq.hist, r->hist);
		} else if (!strcmp(kind, "iolatency") && r->kind == TRAWL_ANALYSIS_DISK) {
			h->bio.count += r->count;
			h->bio.sum += (double)r->sum / 1e9;
			hist_add(h->bio.hist, r->hist);
		}
	}
	pthread_mutex_unlock(&c->mu);
}

/*
 * CPU time by mode (user, system, irq, softirq, idle) from the one kernel
 * model (lib/kstate) of each host of the session, fed the scheduler's,
 * the system calls' and the IRQs' events: a sink beside the analyses. Its
 * totals go to the hosts after every batch.
 */
struct cmodel {
	struct csess *s;
	struct tr_kmodel km;
	struct cmhost {			/* by host number */
		char name[128];
		bool dirty;		/* its events in this batch */
		struct chost *ch;	/* valid while gen is the cluster's hosts_gen */
	} *hn;
	uint32_t nnames;
	uint32_t *bycls;		/* event class index -> host number + 1 */
	size_t nbycls;
	uint64_t gen;
};

static int cm_start(void *self, struct trawl_reader *r)
{
	struct cmodel *m = self;
	return tr_kmodel_start(&m->km, r);
}

/* The host number of ev: cached by its class (the reader's classes are
 * each one trace's; a merged stream alternates hosts), else by its
 * trace's hostname, a new number for a new one. */
static int cm_host(struct cmodel *m, const struct trawl_event *ev, uint32_t *n)
{
	uint32_t ci = ev->cls->index;
	if (ci < m->nbycls && m->bycls[ci]) {
		*n = m->bycls[ci] - 1;
		return 0;
	}
	const char *name = trawl_reader_trace_hostname(trawl_reader_stream_trace(ev->stream));
	uint32_t i;
	for (i = 0; i < m->nnames && strcmp(m->hn[i].name, name); i++)
		;
	if (i == m->nnames) {
		if (m->nnames >= 65536)
			return -E2BIG;
		struct cmhost *nh = realloc(m->hn, (m->nnames + 1) * sizeof(*nh));
		if (!nh)
			return -ENOMEM;
		m->hn = nh;
		nh[i] = (struct cmhost){ .dirty = false };
		snprintf(nh[i].name, sizeof(nh[i].name), "%s", name);
		m->nnames++;
	}
	if (ci >= m->nbycls) {
		size_t nc = ci + 64;
		uint32_t *b = realloc(m->bycls, nc * sizeof(*b));
		if (!b)
			return -ENOMEM;
		memset(b + m->nbycls, 0, (nc - m->nbycls) * sizeof(*b));
		m->bycls = b;
		m->nbycls = nc;
	}
	m->bycls[ci] = i + 1;
	*n = i;
	return 0;
}

static int cm_events(void *self, const struct trawl_event *ev, size_t n)
{
	struct cmodel *m = self;
	struct chg out[2];
	for (size_t i = 0; i < n; i++) {
		uint32_t h;
		int rc = cm_host(m, &ev[i], &h);
		if (rc == -E2BIG)
			continue;	/* (the metrics take at most max_hosts anyway) */
		if (rc || (rc = tr_kmodel_take(&m->km, h, &ev[i], out)) < 0)
			return rc;
		m->hn[h].dirty = true;
	}
	struct tr_cluster *c = m->s->c;
	pthread_mutex_lock(&c->mu);
	if (m->gen != c->hosts_gen) {
		for (uint32_t i = 0; i < m->nnames; i++)
			m->hn[i].ch = NULL;
		m->gen = c->hosts_gen;
	}
	for (uint32_t i = 0; i < m->nnames && i < m->km.nhost; i++) {
		struct cmhost *x = &m->hn[i];
		if (!x->dirty)
			continue;
		x->dirty = false;
		const struct tables *t = &m->km.host[i];
		if (!t->ncpus)
			continue;
		struct chost *h = x->ch ? x->ch : (x->ch = host_of(m->s, x->name));
		if (!h)
			continue;
		tr_ks_cpu_times(t, t->ts, h->mode_ns);
		if (t->ncpus > h->ncpus && t->ncpus <= 4096)
			h->ncpus = (unsigned)t->ncpus;
	}
	pthread_mutex_unlock(&c->mu);
	return 0;
}

static const struct trawl_sink_ops cm_ops = {
	.sz = sizeof(cm_ops),
	.name = "metrics-cpu-modes",
	.start = cm_start,
	.events = cm_events,
};

static void run_error(void *arg, const char *msg)
{
	struct csess *s = arg;

	logf_(s->c, LOG_WARNING, "metrics: session %s: %s", s->name, msg);
}

/* Forgets s's hosts (under c->mu): their counters start again from 0. */
static void hosts_drop(struct tr_cluster *c, struct csess *s)
{
	c->hosts_gen++;
	for (struct chost **pp = &c->hosts; *pp;) {
		struct chost *h = *pp;

		if (h->s == s) {
			*pp = h->next;
			free(h->sys);
			free(h);
			c->nhosts--;
		} else {
			pp = &h->next;
		}
	}
}

/* The session's live clock says a node's correction changed. */
static void clock_changed(void *arg, const struct trawl_sync_live_node *n)
{
	struct csess *s = arg;
	struct tr_cluster *c = s->c;

	pthread_mutex_lock(&c->mu);
	struct chost *h = host_of(s, n->host);
	if (h) {
		bool syn = n->quality != TRAWL_SYNC_ABSENT;
		h->clock = syn ? 2 : 1;
		h->is_ref = n->is_ref;
		h->offset_s = syn ? (double)n->offset_ns / 1e9 : 0;
		h->bound_s = syn && n->bound_ns != TRAWL_SYNC_UNBOUNDED ? (double)n->bound_ns / 1e9
									: -1;
		snprintf(h->ref, sizeof(h->ref), "%s", syn ? n->reference : "");
	}
	pthread_mutex_unlock(&c->mu);
}

static void nap(struct csess *s, int ms)
{
	for (int i = 0; i < ms / 50 && !s->stop; i++)
		nanosleep(&(struct timespec){ 0, 50 * 1000000L }, NULL);
}

static void *sess_run(void *arg)
{
	struct csess *s = arg;
	struct tr_cluster *c = s->c;
	static const char *const names[NAN_] = { "cputop", "schedlat", "iolatency", "irq",
						 "syscalls" };
	char url[600], err[512];

	snprintf(url, sizeof(url), "net://%s/session/%s", c->live, s->name);
	while (!s->stop) {
		/* a scrape's figures: the live timer is soon enough */
		struct trawl_source_opts so = { .sz = sizeof(so), .live_lazy = true };
		struct trawl_source *src = trawl_source_live(url, &so, err, sizeof(err));

		if (!src) {
			__atomic_fetch_add(&c->reader_errors, 1, __ATOMIC_RELAXED);
			nap(s, 1000);
			continue;
		}
		/* every node's clock corrected from the session's messages */
		struct trawl_sync_live_opts lo = { .size = sizeof(lo), .changed = clock_changed,
						   .arg = s };
		struct trawl_sync_live *lc = trawl_sync_live_new(&lo, err, sizeof(err));
		struct trawl_reader_opts ro = { .sz = sizeof(ro), .threads = 1,
						.clock = trawl_sync_live_clock(lc) };
		struct trawl_reader *r = lc ? trawl_reader_open(&src, 1, &ro, err, sizeof(err))
					    : NULL;
		if (!lc)
			trawl_source_free(src);
		struct trawl_sink sinks[NAN_ + 1];
		struct cmodel cm = { .s = s };
		int rc = r ? 0 : -1;

		tr_kmodel_init(&cm.km, TR_KIN_F_NAMES | TR_KIN_F_WAKEUP | TR_KIN_F_EXIT |
					       TR_KIN_F_SYSCALL | TR_KIN_F_IRQ);
		sinks[NAN_] = (struct trawl_sink){ &cm_ops, &cm };

		for (size_t i = 0; !rc && i < NAN_; i++) {
			struct trawl_analysis_opts ao = {
				.sz = sizeof(ao), .name = names[i], .tid = -1, .cpu = -1,
				.interval_ns = c->o.interval_ns, .period = period, .arg = s,
			};

			s->an[i] = trawl_analysis_new(&ao, err, sizeof(err));
			if (!s->an[i])
				rc = -1;
			else
				sinks[i] = trawl_analysis_sink(s->an[i]);
		}
		if (!rc) {
			struct trawl_run_opts ro2 = { .sz = sizeof(ro2), .error = run_error, .arg = s,
						      .stop = &s->stop };

			rc = trawl_pipe_run(r, sinks, NAN_ + 1, &ro2);
		} else {
			logf_(c, LOG_WARNING, "metrics: session %s: %s", s->name, err);
		}
		trawl_reader_free(r);
		trawl_sync_live_free(lc);
		tr_kmodel_release(&cm.km);
		free(cm.hn);
		free(cm.bycls);
		for (size_t i = 0; i < NAN_; i++) {
			trawl_analysis_free(s->an[i]);
			s->an[i] = NULL;
		}
		if (rc >= 0)
			break;	/* the session ended, everything read */
		/* a reader that failed starts again from the session's beginning:
		 * its hosts' counters start again from 0 (a reset, to Prometheus) */
		__atomic_fetch_add(&c->reader_errors, 1, __ATOMIC_RELAXED);
		pthread_mutex_lock(&c->mu);
		hosts_drop(c, s);
		pthread_mutex_unlock(&c->mu);
		nap(s, 1000);
	}
	__atomic_store_n(&s->done, true, __ATOMIC_RELEASE);
	return NULL;
}

struct tr_cluster *tr_cluster_new(const struct tr_cluster_opts *o)
{
	struct tr_cluster *c = calloc(1, sizeof(*c));

	if (!c || !o || !o->live_addr || !(c->live = strdup(o->live_addr))) {
		free(c);
		errno = o && o->live_addr ? ENOMEM : EINVAL;
		return NULL;
	}
	c->o = *o;
	c->o.live_addr = c->live;
	if (!c->o.top_k)
		c->o.top_k = 16;
	if (!c->o.max_sessions)
		c->o.max_sessions = 16;
	if (!c->o.max_hosts)
		c->o.max_hosts = 1024;
	if (c->o.interval_ns <= 0)
		c->o.interval_ns = 250 * 1000000LL;
	pthread_mutex_init(&c->mu, NULL);
	return c;
}

static void sess_end(struct tr_cluster *c, struct csess *s)
{
	s->stop = 1;
	if (s->running)
		pthread_join(s->thread, NULL);
	pthread_mutex_lock(&c->mu);
	hosts_drop(c, s);
	pthread_mutex_unlock(&c->mu);
	free(s);
}

void tr_cluster_sessions(struct tr_cluster *c, const char *const *names, size_t n)
{
	for (struct csess *s = c->sessions; s; s = s->next)
		s->listed = false;
	for (size_t i = 0; i < n; i++) {
		struct csess *s;

		for (s = c->sessions; s && strcmp(s->name, names[i]); s = s->next)
			;
		if (s) {
			s->listed = true;
			continue;
		}
		if (c->nsessions >= c->o.max_sessions || strlen(names[i]) >= sizeof(s->name))
			continue;
		if (!(s = calloc(1, sizeof(*s))))
			return;
		s->c = c;
		s->listed = true;
		snprintf(s->name, sizeof(s->name), "%s", names[i]);
		if (pthread_create(&s->thread, NULL, sess_run, s)) {
			free(s);
			continue;
		}
		s->running = true;
		pthread_mutex_lock(&c->mu);
		s->next = c->sessions;
		c->sessions = s;
		c->nsessions++;
		pthread_mutex_unlock(&c->mu);
	}
	/* a name the relay forgot: its reader and its series go */
	for (struct csess **pp = &c->sessions; *pp;) {
		struct csess *s = *pp;

		if (s->listed) {
			pp = &s->next;
			continue;
		}
		pthread_mutex_lock(&c->mu);
		*pp = s->next;
		c->nsessions--;
		pthread_mutex_unlock(&c->mu);
		sess_end(c, s);
	}
}

static void cum_of(const uint64_t *hist, uint64_t *cum)
{
	uint64_t run = 0;
	size_t j = 0;

	for (size_t k = 0; k < NLE; k++) {
		for (; j <= 2 * k && j < TRAWL_ANALYSIS_HIST; j++)
			run += hist[j];
		cum[k] = run;
	}
}

void tr_cluster_render(struct tr_cluster *c, struct tr_expo *e)
{
	double le[NLE];
	uint64_t cum[NLE];
	char lab[600];
	struct timespec now;

	for (size_t k = 0; k < NLE; k++)
		le[k] = 1e-6 * (double)(1ull << (2 * k));
	clock_gettime(CLOCK_REALTIME, &now);
	double now_s = (double)now.tv_sec + (double)now.tv_nsec / 1e9;

	pthread_mutex_lock(&c->mu);
#define EACH_HOST for (struct chost *h = c->hosts; h; h = h->next)
#define HLAB(...) tr_expo_labels(lab, sizeof(lab), "session", h->s->name, "host", h->host, \
				 __VA_ARGS__)
	tr_expo_family(e, "trawl_host_cpu_seconds", TR_EXPO_COUNTER, "seconds",
		       "CPU time by state from the host's kernel trace (the kernel model's CPU "
		       "modes): user, system (in a system call), irq, softirq, idle, unknown "
		       "(before the trace showed the CPU's state)");
	static const char *const modes[TR_KS_MODES] = {
		[TRAWL_STATE_CPU_UNKNOWN] = "unknown", [TRAWL_STATE_CPU_IDLE] = "idle",
		[TRAWL_STATE_CPU_USER] = "user", [TRAWL_STATE_CPU_SYSCALL] = "system",
		[TRAWL_STATE_CPU_IRQ] = "irq", [TRAWL_STATE_CPU_SOFTIRQ] = "softirq",
	};
	EACH_HOST {
		if (!h->ncpus)
			continue;
		for (int m = 0; m < TR_KS_MODES; m++)
			tr_expo_value(e, HLAB("state", modes[m], NULL), (double)h->mode_ns[m] / 1e9);
	}
	tr_expo_family(e, "trawl_host_cpus", TR_EXPO_GAUGE, NULL,
		       "CPUs of the host seen running a thread (1 + the highest CPU id)");
	EACH_HOST
		if (h->ncpus)
			tr_expo_value(e, HLAB(NULL), h->ncpus);
	tr_expo_family(e, "trawl_host_runqueue_latency_seconds", TR_EXPO_HISTOGRAM, "seconds",
		       "Wake-up to running (schedlat's wake-up latency), per host");
	EACH_HOST {
		if (!h->rq.count)
			continue;
		cum_of(h->rq.hist, cum);
		tr_expo_hist(e, HLAB(NULL), le, cum, NLE, h->rq.sum, h->rq.count);
	}
	tr_expo_family(e, "trawl_host_block_io_latency_seconds", TR_EXPO_HISTOGRAM, "seconds",
		       "Block request issue to completion (iolatency's disks), per host");
	EACH_HOST {
		if (!h->bio.count)
			continue;
		cum_of(h->bio.hist, cum);
		tr_expo_hist(e, HLAB(NULL), le, cum, NLE, h->bio.sum, h->bio.count);
	}
	tr_expo_family(e, "trawl_host_syscalls", TR_EXPO_COUNTER, NULL,
		       "System calls completed, per host and syscall (the top K of a host by "
		       "count, the rest as other)");
	EACH_HOST
		for (unsigned i = 0; i <= c->o.top_k; i++)
			if (i < h->nsys || (i == c->o.top_k && h->sys[i].count))
				tr_expo_value(e, HLAB("syscall", h->sys[i].name, NULL),
					      (double)h->sys[i].count);
	tr_expo_family(e, "trawl_host_syscall_errors", TR_EXPO_COUNTER, NULL,
		       "System calls that returned an error, per host and syscall");
	EACH_HOST
		for (unsigned i = 0; i <= c->o.top_k; i++)
			if (i < h->nsys || (i == c->o.top_k && h->sys[i].count))
				tr_expo_value(e, HLAB("syscall", h->sys[i].name, NULL),
					      (double)h->sys[i].errors);
	tr_expo_family(e, "trawl_host_syscall_latency_seconds", TR_EXPO_HISTOGRAM, "seconds",
		       "System call entry to exit, per host and syscall");
	EACH_HOST
		for (unsigned i = 0; i <= c->o.top_k; i++)
			if (i < h->nsys || (i == c->o.top_k && h->sys[i].count)) {
				cum_of(h->sys[i].hist, cum);
				tr_expo_hist(e, HLAB("syscall", h->sys[i].name, NULL), le, cum,
					     NLE, h->sys[i].sum, h->sys[i].count);
			}
	tr_expo_family(e, "trawl_host_data_age_seconds", TR_EXPO_GAUGE, "seconds",
		       "Now minus the end of the newest slice of the host's events the "
		       "metrics cover (its clock, not corrected)");
	EACH_HOST
		if (h->newest)
			tr_expo_value(e, HLAB(NULL), now_s - (double)h->newest / 1e9);
	tr_expo_family(e, "trawl_host_clock_synchronized", TR_EXPO_GAUGE, NULL,
		       "1: the host's clock is corrected from the session's messages (or is "
		       "the reference), 0: it exchanged no message yet (its own clock)");
	EACH_HOST
		if (h->clock)
			tr_expo_value(e, HLAB(NULL), h->clock == 2);
	tr_expo_family(e, "trawl_host_clock_offset_seconds", TR_EXPO_GAUGE, "seconds",
		       "The host's clock minus its reference's, at its newest event, as the "
		       "live merge corrects it");
	EACH_HOST
		if (h->clock == 2)
			tr_expo_value(e, HLAB("reference", h->ref, NULL), h->offset_s);
	tr_expo_family(e, "trawl_host_clock_bound_seconds", TR_EXPO_GAUGE, "seconds",
		       "The accuracy bound of the offset: the truth is within it (none when "
		       "the messages give no bound)");
	EACH_HOST
		if (h->clock == 2 && h->bound_s >= 0)
			tr_expo_value(e, HLAB("reference", h->ref, NULL), h->bound_s);
	tr_expo_family(e, "trawl_metrics_hosts_dropped", TR_EXPO_COUNTER, NULL,
		       "Hosts left out of the cluster's metrics (over the limit of hosts)");
	tr_expo_value(e, NULL, (double)c->hosts_dropped);
	tr_expo_family(e, "trawl_metrics_reader_errors", TR_EXPO_COUNTER, NULL,
		       "Live readers of the relay's sessions that failed (and started again)");
	tr_expo_value(e, NULL, (double)__atomic_load_n(&c->reader_errors, __ATOMIC_RELAXED));
	tr_expo_family(e, "trawl_metrics_sessions", TR_EXPO_GAUGE, NULL,
		       "Session names whose hosts the cluster's metrics follow");
	tr_expo_value(e, NULL, c->nsessions);
#undef EACH_HOST
#undef HLAB
	pthread_mutex_unlock(&c->mu);
}

void tr_cluster_stop(struct tr_cluster *c)
{
	for (struct csess *s = c->sessions; s; s = s->next)
		s->stop = 1;
}

void tr_cluster_free(struct tr_cluster *c)
{
	if (!c)
		return;
	while (c->sessions) {
		struct csess *s = c->sessions;

		c->sessions = s->next;
		sess_end(c, s);
	}
	pthread_mutex_destroy(&c->mu);
	free(c->live);
	free(c);
}
