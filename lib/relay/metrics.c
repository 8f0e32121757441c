/* SPDX-License-Identifier: MIT */
/*
 * lib/relay/metrics.c - the relay's /metrics (docs/metrics.md).
 *
 * Three threads meet here. The HTTP server's (lib/net/httpd.c) answers a
 * scrape: it asks the relay's loop for a snapshot (an eventfd the loop
 * polls), waits for it at most SNAP_WAIT_MS (else serves the previous
 * one: a busy relay is never waited on for long), and formats it. The
 * relay's loop copies its figures into the snapshot under the mutex: a
 * few words per node, the only cost a scrape puts on it. The cluster's
 * readers (lib/metrics/cluster.c) follow the relay's sessions on its live
 * port, on threads of their own.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "metrics/cluster.h"
#include "metrics/expo.h"
#include "net/httpd.h"
#include "relay/relay-internal.h"
#include "util/clock.h"

#define SNAP_WAIT_MS 1000
#define TICK_MS 1000

static const char *const reasons[RREF_N] = {
	[RREF_PRODUCERS] = "max_producers", [RREF_VIEWERS] = "max_viewers",
	[RREF_CONNS] = "max_conns", [RREF_FD_POOL] = "fd_pool",
	[RREF_OUT_OF_FDS] = "out_of_fds", [RREF_PENDING] = "pending",
	[RREF_UNPROVEN] = "unproven", [RREF_AUTH] = "auth", [RREF_QUOTA] = "quota",
	[RREF_DISK_FULL] = "disk_full", [RREF_BUFFERS] = "buffers",
	[RREF_PROTOCOL] = "protocol", [RREF_TIMEOUT] = "timeout", [RREF_OTHER] = "other",
};

struct mnode {
	char session[256], host[256];
	uint64_t rx_bytes, rx_packets, discarded, quota_used;
	int64_t rx_age_ms;		/* -1: no packet yet */
	int viewers, traces, traces_open;
};

struct rmetrics {
	struct trawl_relay *r;
	struct tr_httpd *httpd;
	struct tr_cluster *cluster;
	char at[300];
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t asked, done;		/* snapshots asked for, made */
	bool running;			/* the loop runs (it answers asks) */
	/* the snapshot */
	struct mnode *nodes;
	size_t nnodes, cap;
	uint64_t refused[RREF_N];
	int producers, viewers, conns, fds, fd_pool;
	uint64_t buffered, max_session_size;
	int64_t snap_mono_ms;
	int64_t next_tick;
};

void tr_relay_refused(struct trawl_relay *r, enum rrefusal why)
{
	if (why >= 0 && why < RREF_N)
		r->refused[why]++;
}

enum rrefusal tr_relay_refusal_of(int e)
{
	if (e < 0)
		e = -e;
	switch (e) {
	case EDQUOT: return RREF_QUOTA;
	case ENOSPC: return RREF_DISK_FULL;
	case EACCES: case EPERM: return RREF_AUTH;
	case EPROTO: case EEXIST: case EINVAL: case EBADMSG: case E2BIG: return RREF_PROTOCOL;
	case EMFILE: case ENFILE: return RREF_FD_POOL;
	case ENOBUFS: case ENOMEM: return RREF_BUFFERS;
	case ETIMEDOUT: return RREF_TIMEOUT;
	case EUSERS: return RREF_CONNS;
	default: return RREF_OTHER;
	}
}

/* The loop's side: copies its figures (under mu). */
void tr_relay_metrics_snap(struct trawl_relay *r)
{
	struct rmetrics *m = r->metrics;
	uint64_t v;

	if (!m)
		return;
	if (read(r->mfd, &v, sizeof(v)) < 0) {
		/* nothing to read: a snapshot anyway */
	}
	int64_t now = tr_mono_ms();

	pthread_mutex_lock(&m->mu);
	m->nnodes = 0;
	for (struct rsession *s = r->sessions; s; s = s->next) {
		if (tr_grow(&m->nodes, &m->cap, m->nnodes, sizeof(*m->nodes)))
			break;
		struct mnode *n = &m->nodes[m->nnodes++];

		snprintf(n->session, sizeof(n->session), "%s", s->name);
		snprintf(n->host, sizeof(n->host), "%s", s->host);
		n->rx_bytes = s->rx_bytes;
		n->rx_packets = s->rx_packets;
		n->rx_age_ms = s->rx_last_ms ? now - s->rx_last_ms : -1;
		n->viewers = s->viewers;
		n->quota_used = tr_relay_quota_used(s);
		n->discarded = 0;
		n->traces = (int)s->ntraces;
		n->traces_open = 0;
		for (size_t i = 0; i < s->ntraces; i++) {
			const struct rtrace *t = s->traces[i];

			n->traces_open += !t->closed;
			for (size_t k = 0; k < t->nstreams; k++)
				n->discarded += t->streams[k]->discarded;
		}
	}
	memcpy(m->refused, r->refused, sizeof(m->refused));
	m->producers = r->nproducers;
	m->viewers = r->nviewers;
	m->conns = r->nconns;
	m->fds = r->nfds;
	m->fd_pool = r->fd_pool;
	m->buffered = r->buffered;
	m->max_session_size = r->max_session_size;
	m->snap_mono_ms = now;
	m->done = m->asked;
	m->running = true;
	pthread_cond_broadcast(&m->cv);
	pthread_mutex_unlock(&m->mu);
}

void tr_relay_metrics_stopped(struct trawl_relay *r)
{
	struct rmetrics *m = r->metrics;

	if (!m)
		return;
	pthread_mutex_lock(&m->mu);
	m->running = false;
	pthread_cond_broadcast(&m->cv);
	pthread_mutex_unlock(&m->mu);
	/* the readers end at the close of their connections that follows */
	tr_cluster_stop(m->cluster);
	m->next_tick = 0;
}

void tr_relay_metrics_tick(struct trawl_relay *r, int64_t now)
{
	struct rmetrics *m = r->metrics;

	if (!m || now < m->next_tick)
		return;
	m->next_tick = now + TICK_MS;
	/* the distinct session names, for the cluster's readers */
	const char *names[64];
	size_t n = 0;

	for (struct rsession *s = r->sessions; s && n < 64; s = s->next) {
		size_t i;

		for (i = 0; i < n && strcmp(names[i], s->name); i++)
			;
		if (i == n)
			names[n++] = s->name;
	}
	tr_cluster_sessions(m->cluster, names, n);
}

static void render(struct rmetrics *m, struct tr_expo *e)
{
	char lab[600];

	tr_expo_family(e, "trawl_relay_node_received_bytes", TR_EXPO_COUNTER, "bytes",
		       "Bytes of packets received from the node's producers this run");
	for (size_t i = 0; i < m->nnodes; i++)
		tr_expo_value(e, tr_expo_labels(lab, sizeof(lab), "session", m->nodes[i].session,
						"host", m->nodes[i].host, NULL),
			      (double)m->nodes[i].rx_bytes);
	tr_expo_family(e, "trawl_relay_node_received_packets", TR_EXPO_COUNTER, NULL,
		       "Packets received from the node's producers this run");
	for (size_t i = 0; i < m->nnodes; i++)
		tr_expo_value(e, tr_expo_labels(lab, sizeof(lab), "session", m->nodes[i].session,
						"host", m->nodes[i].host, NULL),
			      (double)m->nodes[i].rx_packets);
	tr_expo_family(e, "trawl_relay_node_discarded_events", TR_EXPO_COUNTER, NULL,
		       "Events the node's tracers discarded (full buffers), as its packets say");
	for (size_t i = 0; i < m->nnodes; i++)
		tr_expo_value(e, tr_expo_labels(lab, sizeof(lab), "session", m->nodes[i].session,
						"host", m->nodes[i].host, NULL),
			      (double)m->nodes[i].discarded);
	tr_expo_family(e, "trawl_relay_node_receive_age_seconds", TR_EXPO_GAUGE, "seconds",
		       "Seconds since the relay received the node's last packet");
	for (size_t i = 0; i < m->nnodes; i++)
		if (m->nodes[i].rx_age_ms >= 0)
			tr_expo_value(e, tr_expo_labels(lab, sizeof(lab), "session",
							m->nodes[i].session, "host",
							m->nodes[i].host, NULL),
				      (double)m->nodes[i].rx_age_ms / 1e3);
	tr_expo_family(e, "trawl_relay_node_traces", TR_EXPO_GAUGE, NULL,
		       "The node's traces at the relay (state open: a producer writes it)");
	for (size_t i = 0; i < m->nnodes; i++) {
		const struct mnode *n = &m->nodes[i];

		tr_expo_value(e, tr_expo_labels(lab, sizeof(lab), "session", n->session, "host",
						n->host, "state", "open", NULL), n->traces_open);
		tr_expo_value(e, tr_expo_labels(lab, sizeof(lab), "session", n->session, "host",
						n->host, "state", "ended", NULL),
			      n->traces - n->traces_open);
	}
	tr_expo_family(e, "trawl_relay_node_viewers", TR_EXPO_GAUGE, NULL,
		       "Live viewers attached to the node's session");
	for (size_t i = 0; i < m->nnodes; i++)
		tr_expo_value(e, tr_expo_labels(lab, sizeof(lab), "session", m->nodes[i].session,
						"host", m->nodes[i].host, NULL),
			      m->nodes[i].viewers);
	if (m->max_session_size) {
		tr_expo_family(e, "trawl_relay_node_quota_used_bytes", TR_EXPO_GAUGE, "bytes",
			       "Bytes the node's session directory holds against its quota");
		for (size_t i = 0; i < m->nnodes; i++)
			tr_expo_value(e, tr_expo_labels(lab, sizeof(lab), "session",
							m->nodes[i].session, "host",
							m->nodes[i].host, NULL),
				      (double)m->nodes[i].quota_used);
		tr_expo_family(e, "trawl_relay_quota_limit_bytes", TR_EXPO_GAUGE, "bytes",
			       "The disk quota of each host of a session (--max-session-size)");
		tr_expo_value(e, NULL, (double)m->max_session_size);
	}
	tr_expo_family(e, "trawl_relay_refused_connections", TR_EXPO_COUNTER, NULL,
		       "Peers refused or cut off, by reason, this run");
	for (int i = 0; i < RREF_N; i++)
		tr_expo_value(e, tr_expo_labels(lab, sizeof(lab), "reason", reasons[i], NULL),
			      (double)m->refused[i]);
	tr_expo_family(e, "trawl_relay_connections", TR_EXPO_GAUGE, NULL,
		       "Connections the relay serves, by kind");
	tr_expo_value(e, "kind=\"producer\"", m->producers);
	tr_expo_value(e, "kind=\"viewer\"", m->viewers);
	tr_expo_value(e, "kind=\"other\"", m->conns - m->producers - m->viewers);
	tr_expo_family(e, "trawl_relay_descriptors", TR_EXPO_GAUGE, NULL,
		       "Descriptors the relay holds for connections and files");
	tr_expo_value(e, NULL, m->fds);
	tr_expo_family(e, "trawl_relay_descriptor_pool", TR_EXPO_GAUGE, NULL,
		       "The size of the relay's descriptor pool (--fd-pool-size)");
	tr_expo_value(e, NULL, m->fd_pool);
	tr_expo_family(e, "trawl_relay_input_buffered_bytes", TR_EXPO_GAUGE, "bytes",
		       "Bytes of input buffers the relay holds, all connections");
	tr_expo_value(e, NULL, (double)m->buffered);
	tr_expo_family(e, "trawl_relay_snapshot_age_seconds", TR_EXPO_GAUGE, "seconds",
		       "Age of the relay's figures in this answer (the loop was busy if large)");
	tr_expo_value(e, NULL, m->snap_mono_ms ? (double)(tr_mono_ms() - m->snap_mono_ms) / 1e3
					       : -1);
}

static void handler(void *arg, const struct tr_httpd_req *req, struct tr_httpd_resp *resp)
{
	struct rmetrics *m = arg;

	if (strcmp(req->path, "/metrics")) {
		resp->code = 404;
		resp->body = strdup("not found: the metrics are at /metrics\n");
		resp->len = resp->body ? strlen(resp->body) : 0;
		return;
	}
	bool om = tr_expo_wants_om(req->accept);
	struct tr_expo e;
	struct tr_httpd_stats hs;
	uint64_t one = 1;

	tr_expo_init(&e, om);
	pthread_mutex_lock(&m->mu);
	uint64_t want = ++m->asked;

	if (m->running && write(m->r->mfd, &one, sizeof(one)) >= 0) {
		struct timespec dl;

		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_sec += SNAP_WAIT_MS / 1000;
		while (m->done < want && m->running)
			if (pthread_cond_timedwait(&m->cv, &m->mu, &dl))
				break;
	}
	render(m, &e);
	pthread_mutex_unlock(&m->mu);
	tr_cluster_render(m->cluster, &e);
	tr_httpd_stats(m->httpd, &hs);
	tr_expo_family(&e, "trawl_metrics_scrapes", TR_EXPO_COUNTER, NULL,
		       "Requests the metrics endpoint answered (this one not counted)");
	tr_expo_value(&e, NULL, (double)hs.requests);
	tr_expo_family(&e, "trawl_metrics_refused_requests", TR_EXPO_COUNTER, NULL,
		       "Requests the metrics endpoint refused, by reason");
	tr_expo_value(&e, "reason=\"too_many\"", (double)hs.too_many);
	tr_expo_value(&e, "reason=\"too_large\"", (double)hs.too_large);
	tr_expo_value(&e, "reason=\"timeout\"", (double)hs.timed_out);
	tr_expo_value(&e, "reason=\"bad\"", (double)hs.bad);
	tr_expo_value(&e, "reason=\"unauthorized\"", (double)hs.unauthorized);
	if (tr_expo_end(&e) < 0) {
		resp->code = 500;
		return;
	}
	resp->code = 200;
	resp->type = om ? TR_EXPO_TYPE_OM : TR_EXPO_TYPE_004;
	resp->body = e.p;
	resp->len = e.len;
}

int tr_relay_metrics_start(struct trawl_relay *r, const char *addr, const char *token,
			   unsigned top_k, char *err, size_t errlen)
{
	struct rmetrics *m = calloc(1, sizeof(*m));

	if (!m)
		return tr_seterr(err, errlen, ENOMEM, "metrics: out of memory");
	if (!tr_httpd_addr_loopback(addr) && !(token && *token)) {
		free(m);
		return tr_seterr(err, errlen, EINVAL, "metrics on %s, not loopback, need a token "
				 "(--metrics-token-file; docs/metrics.md)", addr);
	}
	m->r = r;
	pthread_mutex_init(&m->mu, NULL);
	pthread_cond_init(&m->cv, NULL);
	r->metrics = m;
	r->mfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (r->mfd < 0)
		return tr_seterr(err, errlen, errno, "metrics: %s", strerror(errno));
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &r->mfd };

	if (r->epfd >= 0 && epoll_ctl(r->epfd, EPOLL_CTL_ADD, r->mfd, &ev) < 0)
		return tr_seterr(err, errlen, errno, "epoll: %s", strerror(errno));
	struct tr_cluster_opts co = { .live_addr = r->live_at, .top_k = top_k,
				      .log = r->log, .log_arg = r->log_arg };

	if (!(m->cluster = tr_cluster_new(&co)))
		return tr_seterr(err, errlen, errno, "metrics: %s", strerror(errno));
	struct tr_httpd_opts ho = { .addr = addr, .token = token, .handler = handler, .arg = m };

	if (!(m->httpd = tr_httpd_new(&ho, err, errlen)))
		return -errno;
	snprintf(m->at, sizeof(m->at), "%s", tr_httpd_addr(m->httpd));
	return 0;
}

void tr_relay_metrics_free(struct trawl_relay *r)
{
	struct rmetrics *m = r->metrics;

	if (!m)
		return;
	/* the server first: no scrape waits on the loop after this */
	tr_httpd_free(m->httpd);
	tr_cluster_free(m->cluster);
	pthread_cond_destroy(&m->cv);
	pthread_mutex_destroy(&m->mu);
	free(m->nodes);
	free(m);
	r->metrics = NULL;
	if (r->mfd >= 0)
		close(r->mfd);
	r->mfd = -1;
}

const char *trawl_relay_metrics_addr(const struct trawl_relay *r)
{
	return r && r->metrics ? r->metrics->at : NULL;
}
