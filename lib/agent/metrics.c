/* SPDX-License-Identifier: MIT */
/*
 * lib/agent/metrics.c - the agent's /metrics (docs/metrics.md, "The
 * agent"): the same server (lib/net/httpd.c) and writer (lib/metrics/
 * expo.c) as the relay's. A scrape sets a flag and wakes the agent's loop
 * (its wake eventfd); the loop, at the end of its turn, copies a few words
 * per session under the mutex; the server waits at most 1 s for that, else
 * serves the previous copy. The recording path is never touched.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent-internal.h"
#include "metrics/expo.h"
#include "net/httpd.h"
#include "util/clock.h"

#define SNAP_WAIT_MS 1000

struct msess {
	char name[256];
	int state;
	bool relay, snapshot;
	uint64_t packets, ticks, demands;
	bool kdone;
	uint64_t kevents, klost;
};

struct ametrics {
	struct trawl_agent *a;
	struct tr_httpd *httpd;
	char at[300];
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t asked, done;		/* asked: also read by the loop (atomic) */
	bool running;
	struct msess *s;
	size_t ns, cap;
	int apps, clients;
	int64_t snap_ms;
};

void tr_agent_metrics_turn(struct trawl_agent *a)
{
	struct ametrics *m = a->metrics;

	if (!m)
		return;
	/* a scrape waits (acquire: pairs with the handler's release store) */
	uint64_t want = __atomic_load_n(&m->asked, __ATOMIC_ACQUIRE);

	if (want == m->done && m->running)
		return;
	pthread_mutex_lock(&m->mu);
	m->ns = 0;
	for (struct session *s = a->sessions; s; s = s->next) {
		if (tr_grow(&m->s, &m->cap, m->ns, sizeof(*m->s)))
			break;
		struct msess *x = &m->s[m->ns++];

		snprintf(x->name, sizeof(x->name), "%s", s->name);
		x->state = s->state;
		x->relay = s->relay != NULL;
		x->snapshot = s->snapshot;
		x->packets = s->packets;
		x->ticks = s->ticks;
		x->demands = s->demands;
		x->kdone = s->kdone;
		x->kevents = s->kst.events;
		x->klost = s->kst.lost;
	}
	m->apps = m->clients = 0;
	for (struct conn *c = a->conns; c; c = c->next) {
		m->apps += c->type == C_APP;
		m->clients += c->type == C_CLIENT;
	}
	m->snap_ms = tr_mono_ms();
	m->done = m->asked;
	m->running = true;
	pthread_cond_broadcast(&m->cv);
	pthread_mutex_unlock(&m->mu);
}

static void render(struct ametrics *m, struct tr_expo *e)
{
	static const char *const states[] = { "new", "active", "stopping", "stopped" };
	char lab[400];
	int n[4] = { 0 };

	for (size_t i = 0; i < m->ns; i++)
		if (m->s[i].state >= 0 && m->s[i].state < 4)
			n[m->s[i].state]++;
	tr_expo_family(e, "trawl_agent_sessions", TR_EXPO_GAUGE, NULL,
		       "The agent's sessions, by state");
	for (int i = 0; i < 4; i++)
		tr_expo_value(e, tr_expo_labels(lab, sizeof(lab), "state", states[i], NULL), n[i]);
	tr_expo_family(e, "trawl_agent_session_recording", TR_EXPO_GAUGE, NULL,
		       "1 while the session records (active), else 0");
	for (size_t i = 0; i < m->ns; i++)
		tr_expo_value(e, tr_expo_labels(lab, sizeof(lab), "session", m->s[i].name, NULL),
			      m->s[i].state == S_ACTIVE);
	tr_expo_family(e, "trawl_agent_session_packets", TR_EXPO_COUNTER, NULL,
		       "Packets of the applications' events the session wrote");
	for (size_t i = 0; i < m->ns; i++)
		tr_expo_value(e, tr_expo_labels(lab, sizeof(lab), "session", m->s[i].name, NULL),
			      (double)m->s[i].packets);
	tr_expo_family(e, "trawl_agent_session_live_ticks", TR_EXPO_COUNTER, NULL,
		       "Live timer ticks of a session streaming to a relay");
	for (size_t i = 0; i < m->ns; i++)
		if (m->s[i].relay)
			tr_expo_value(e, tr_expo_labels(lab, sizeof(lab), "session", m->s[i].name,
							NULL), (double)m->s[i].ticks);
	tr_expo_family(e, "trawl_agent_session_demands", TR_EXPO_COUNTER, NULL,
		       "The relay's DEMANDs (a live viewer waits) a session took");
	for (size_t i = 0; i < m->ns; i++)
		if (m->s[i].relay)
			tr_expo_value(e, tr_expo_labels(lab, sizeof(lab), "session", m->s[i].name,
							NULL), (double)m->s[i].demands);
	tr_expo_family(e, "trawl_agent_session_kernel_events", TR_EXPO_COUNTER, NULL,
		       "Kernel events the session's recording wrote (once it stopped)");
	for (size_t i = 0; i < m->ns; i++)
		if (m->s[i].kdone)
			tr_expo_value(e, tr_expo_labels(lab, sizeof(lab), "session", m->s[i].name,
							NULL), (double)m->s[i].kevents);
	tr_expo_family(e, "trawl_agent_session_kernel_discarded_events", TR_EXPO_COUNTER, NULL,
		       "Kernel events counted as discarded (once it stopped)");
	for (size_t i = 0; i < m->ns; i++)
		if (m->s[i].kdone)
			tr_expo_value(e, tr_expo_labels(lab, sizeof(lab), "session", m->s[i].name,
							NULL), (double)m->s[i].klost);
	tr_expo_family(e, "trawl_agent_connections", TR_EXPO_GAUGE, NULL,
		       "Connections to the agent's socket: instrumented applications, clients");
	tr_expo_value(e, "kind=\"app\"", m->apps);
	tr_expo_value(e, "kind=\"client\"", m->clients);
	tr_expo_family(e, "trawl_agent_snapshot_age_seconds", TR_EXPO_GAUGE, "seconds",
		       "Age of the agent's figures in this answer");
	tr_expo_value(e, NULL, m->snap_ms ? (double)(tr_mono_ms() - m->snap_ms) / 1e3 : -1);
}

static void handler(void *arg, const struct tr_httpd_req *req, struct tr_httpd_resp *resp)
{
	struct ametrics *m = arg;

	if (strcmp(req->path, "/metrics")) {
		resp->code = 404;
		resp->body = strdup("not found: the metrics are at /metrics\n");
		resp->len = resp->body ? strlen(resp->body) : 0;
		return;
	}
	bool om = tr_expo_wants_om(req->accept);
	struct tr_expo e;
	uint64_t one = 1;

	tr_expo_init(&e, om);
	pthread_mutex_lock(&m->mu);
	uint64_t want = m->asked + 1;

	/* release: the loop's acquire load sees the ask */
	__atomic_store_n(&m->asked, want, __ATOMIC_RELEASE);
	if (m->running && write(m->a->wakefd, &one, sizeof(one)) >= 0) {
		struct timespec dl;

		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_sec += SNAP_WAIT_MS / 1000;
		while (m->done < want && m->running)
			if (pthread_cond_timedwait(&m->cv, &m->mu, &dl))
				break;
	}
	render(m, &e);
	pthread_mutex_unlock(&m->mu);
	if (tr_expo_end(&e) < 0) {
		resp->code = 500;
		return;
	}
	resp->code = 200;
	resp->type = om ? TR_EXPO_TYPE_OM : TR_EXPO_TYPE_004;
	resp->body = e.p;
	resp->len = e.len;
}

int tr_agent_metrics_start(struct trawl_agent *a, const char *addr, const char *token, char *err,
			   size_t errlen)
{
	if (!tr_httpd_addr_loopback(addr) && !(token && *token))
		return tr_seterr(err, errlen, EINVAL, "metrics on %s, not loopback, need a token "
				 "(--metrics-token-file; docs/metrics.md)", addr);
	struct ametrics *m = calloc(1, sizeof(*m));

	if (!m)
		return tr_seterr(err, errlen, ENOMEM, "metrics: out of memory");
	m->a = a;
	pthread_mutex_init(&m->mu, NULL);
	pthread_cond_init(&m->cv, NULL);
	a->metrics = m;
	struct tr_httpd_opts ho = { .addr = addr, .token = token, .handler = handler, .arg = m };

	if (!(m->httpd = tr_httpd_new(&ho, err, errlen)))
		return -errno;
	snprintf(m->at, sizeof(m->at), "%s", tr_httpd_addr(m->httpd));
	return 0;
}

void tr_agent_metrics_stopped(struct trawl_agent *a)
{
	struct ametrics *m = a->metrics;

	if (!m)
		return;
	tr_agent_metrics_turn(a);
	pthread_mutex_lock(&m->mu);
	m->running = false;
	pthread_cond_broadcast(&m->cv);
	pthread_mutex_unlock(&m->mu);
}

void tr_agent_metrics_free(struct trawl_agent *a)
{
	struct ametrics *m = a->metrics;

	if (!m)
		return;
	tr_httpd_free(m->httpd);
	pthread_cond_destroy(&m->cv);
	pthread_mutex_destroy(&m->mu);
	free(m->s);
	free(m);
	a->metrics = NULL;
}

const char *trawl_agent_metrics_addr(const struct trawl_agent *a)
{
	return a && a->metrics ? a->metrics->at : NULL;
}
