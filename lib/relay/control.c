/* SPDX-License-Identifier: MIT */
/*
 * lib/relay/control.c - cluster control at the relay (docs/cluster.md).
 *
 * Agents join on the data port: a JOIN instead of a HELLO makes the
 * connection a node's, kept for as long as the agent runs (the relay never
 * dials out). The relay pings each node and keeps an estimate of its
 * clock's offset (the sample with the shortest round trip of the last
 * OFF_SAMPLES). `trawl cluster` connects to the relay's Unix control
 * socket (its peer must be the relay's user or root) and sends one
 * CLUSTER request: "nodes" is answered from what the relay knows; any
 * other verb goes to the selected nodes as a CTL, and each node's
 * CTL_REPLY (its status, output, and the agent's clock when the verb ran)
 * comes back as a NODE, then an ACK ends the answer. A node that is down,
 * or that leaves or does not answer in time, is reported so; the others
 * go on.
 *
 * A node record outlives its connection (state "down" since it left), so
 * that a request names the nodes that are missing.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "relay-internal.h"
#include "net/relay-proto.h"
#include "net/relay-wr.h"
#include "util/clock.h"

#define OFF_SAMPLES 8		/* offset samples kept per node */
#define PING_FAST_MS 100	/* the first OFF_SAMPLES pings, then */
#define PING_MS 1000
#define NODES_MAX 4096		/* node records (a peer may JOIN under many names) */
#define START_MARGIN_MS 250	/* a start's agreed time: now plus this */
#define START_MARGIN_MAX_MS 10000

struct rnode {
	char name[RELAY_HOST_MAX + 1];
	char addr[64];
	struct rconn *c;		/* NULL: down */
	uint64_t since;			/* CLOCK_REALTIME ns: joined, or left */
	struct {
		int64_t off;
		uint64_t rtt;
	} s[OFF_SAMPLES];
	unsigned nsamples, pings;
	int64_t next_ping;		/* ms */
	uint64_t buffers, discarded;
	char *sessions;
	struct rnode *next;
};

/* One node's part of a request. */
struct rans {
	struct rnode *n;
	bool waiting, answered;
	int status;
	uint64_t t_apply, t_done;
	char *out, *err;
};

struct rreq {
	uint32_t id;
	struct rconn *client;
	struct rans *ans;
	size_t nans, nwaiting;
	int64_t deadline;		/* ms */
	struct rreq *next;
};

/* The best offset sample: the shortest round trip. */
static bool best(const struct rnode *n, int64_t *off, uint64_t *rtt)
{
	unsigned k = n->nsamples < OFF_SAMPLES ? n->nsamples : OFF_SAMPLES;
	if (!k)
		return false;
	unsigned b = 0;
	for (unsigned i = 1; i < k; i++)
		if (n->s[i].rtt < n->s[b].rtt)
			b = i;
	*off = n->s[b].off;
	*rtt = n->s[b].rtt;
	return true;
}

static int send_wr(struct rconn *c, struct relay_wr *w)
{
	size_t n = tr_relay_wr_done(w);
	int r = n ? tr_rconn_queue(c, w->buf, n) : -ENOMEM;
	free(w->buf);
	w->buf = NULL;
	return r;
}

static void queue_ack(struct rconn *c, int status, const char *msg)
{
	struct relay_wr w = { 0 };
	tr_relay_wr_begin(&w, RELAY_ACK);
	tr_relay_wr_32(&w, (uint32_t)status);
	tr_relay_wr_str(&w, msg);
	send_wr(c, &w);
	c->closing = true;
}

static void ping(struct rnode *n, int64_t now)
{
	struct relay_wr w = { 0 };
	tr_relay_wr_begin(&w, RELAY_PING);
	tr_relay_wr_64(&w, tr_mono_ns());
	send_wr(n->c, &w);
	n->pings++;
	n->next_ping = now + (n->pings < OFF_SAMPLES ? PING_FAST_MS : PING_MS);
}

/* A NODE: n's state and figures, and its answer a (or none). */
static void queue_node(struct rconn *c, const struct rnode *n, const struct rans *a)
{
	int64_t off = 0;
	uint64_t rtt = 0;
	bool known = best(n, &off, &rtt);
	struct relay_wr w = { 0 };
	tr_relay_wr_begin(&w, RELAY_NODE);
	tr_relay_wr_32(&w, n->c ? RELAY_NODE_UP : RELAY_NODE_DOWN);
	tr_relay_wr_32(&w, (known ? RELAY_NODE_OFFSET : 0) | (a && a->answered ? RELAY_NODE_ANSWER : 0));
	tr_relay_wr_32(&w, (uint32_t)(a ? a->status : 0));
	tr_relay_wr_32(&w, 0);
	tr_relay_wr_64(&w, n->since);
	tr_relay_wr_64(&w, (uint64_t)off);
	tr_relay_wr_64(&w, rtt);
	tr_relay_wr_64(&w, a ? a->t_apply : 0);
	tr_relay_wr_64(&w, a ? a->t_done : 0);
	tr_relay_wr_64(&w, n->buffers);
	tr_relay_wr_64(&w, n->discarded);
	tr_relay_wr_str(&w, n->name);
	tr_relay_wr_str(&w, n->addr);
	tr_relay_wr_str(&w, n->sessions);
	tr_relay_wr_str(&w, a ? a->out : NULL);
	tr_relay_wr_str(&w, a ? a->err : NULL);
	send_wr(c, &w);
}

static void req_free(struct trawl_relay *r, struct rreq *q)
{
	for (struct rreq **pp = &r->reqs; *pp; pp = &(*pp)->next)
		if (*pp == q) {
			*pp = q->next;
			break;
		}
	for (size_t i = 0; i < q->nans; i++) {
		free(q->ans[i].out);
		free(q->ans[i].err);
	}
	free(q->ans);
	free(q);
}

/* Every node answered (or will not): the answer goes to the client. */
static void req_finish(struct trawl_relay *r, struct rreq *q)
{
	int status = 0;
	for (size_t i = 0; i < q->nans; i++) {
		queue_node(q->client, q->ans[i].n, &q->ans[i]);
		if (q->ans[i].status)
			status = 1;
	}
	queue_ack(q->client, status, "");
	req_free(r, q);
}

static void ans_fail(struct rans *a, const char *why)
{
	a->waiting = false;
	a->status = -1;
	free(a->err);
	a->err = strdup(why);
}

static int by_name(const void *x, const void *y)
{
	const struct rnode *a = *(struct rnode *const *)x, *b = *(struct rnode *const *)y;
	return strcmp(a->name, b->name);
}

static int count_nodes(const struct trawl_relay *r)
{
	int k = 0;
	for (const struct rnode *x = r->nodes; x; x = x->next)
		k++;
	return k;
}

/* The nodes whose names match glob, by name: a malloc'd array, or NULL
 * (none: *n = 0; else out of memory). */
static struct rnode **select_nodes(struct trawl_relay *r, const char *glob, size_t *n)
{
	int k = count_nodes(r);
	*n = 0;
	struct rnode **v = calloc(k ? (size_t)k : 1, sizeof(*v));
	if (!v)
		return NULL;
	for (struct rnode *x = r->nodes; x; x = x->next)
		if (tr_glob_match(glob, x->name))
			v[(*n)++] = x;
	qsort(v, *n, sizeof(*v), by_name);
	return v;
}

/* A name at the relay for a snapshot of session: SESSION-snapshot-N,
 * the first N whose directory does not exist. */
static int snapshot_name(struct trawl_relay *r, const char *session, char *out, size_t len)
{
	for (unsigned i = 1; i < 100000; i++) {
		snprintf(out, len, "%s-snapshot-%u", session, i);
		char *p = NULL;
		if (asprintf(&p, "%s/%s", r->output, out) < 0)
			return -ENOMEM;
		struct stat st;
		int e = lstat(p, &st);
		free(p);
		if (e < 0 && errno == ENOENT)
			return 0;
	}
	return -EEXIST;
}

/* The client c's CLUSTER request. */
static int on_cluster(struct rconn *c, const struct relay_msg *m, char *err, size_t errlen)
{
	struct trawl_relay *r = c->r;
	for (struct rreq *q = r->reqs; q; q = q->next)
		if (q->client == c)
			return tr_seterr(err, errlen, EPROTO, "a second request before the answer");
	const char *argv[RELAY_CTL_ARGS_MAX + 2];
	size_t argc = 0;
	const char *p = m->u.ctl.args;
	for (uint32_t i = 0; i < m->u.ctl.argc; i++) {
		argv[argc++] = p;
		p += strlen(p) + 1;
	}
	size_t nn;
	struct rnode **sel = select_nodes(r, m->u.ctl.glob, &nn);
	if (!sel)
		return tr_seterr(err, errlen, ENOMEM, "out of memory");
	if (strcmp(argv[0], "nodes") == 0) {
		for (size_t i = 0; i < nn; i++)
			queue_node(c, sel[i], NULL);
		free(sel);
		queue_ack(c, 0, "");
		return 0;
	}
	if (!nn) {
		free(sel);
		char why[300];
		snprintf(why, sizeof(why), "no node that joined the relay matches '%s'",
			 m->u.ctl.glob);
		queue_ack(c, -ENOENT, why);
		return 0;
	}
	/* a snapshot is streamed by every node to one new session here */
	char snap[RELAY_NAME_MAX + 1], rel[RELAY_NAME_MAX + 16];
	if (strcmp(argv[0], "snapshot") == 0 && argc == 2) {
		if (!tr_relay_name_ok(argv[1]) || strlen(argv[1]) > RELAY_NAME_MAX - 20 ||
		    snapshot_name(r, argv[1], snap, sizeof(snap)) < 0) {
			free(sel);
			queue_ack(c, -EINVAL, "snapshot: a session name that is not a plain file name");
			return 0;
		}
		snprintf(rel, sizeof(rel), "--relay=%s", snap);
		argv[argc++] = rel;
	}
	/* a start at an agreed time: the relay's clock plus a margin that
	 * lets every node receive it and prepare (docs/cluster.md) */
	uint64_t t_at = 0;
	if (strcmp(argv[0], "start") == 0 && argc >= 2 && argc <= 3) {
		unsigned long margin = START_MARGIN_MS;
		if (argc == 3) {
			char *end;
			if (strncmp(argv[2], "--margin=", 9) != 0 ||
			    (margin = strtoul(argv[2] + 9, &end, 10), *end || end == argv[2] + 9) ||
			    margin > START_MARGIN_MAX_MS) {
				free(sel);
				queue_ack(c, -EINVAL, "start: --margin=MS from 0 to 10000 expected");
				return 0;
			}
			argc = 2;
		}
		if (margin)
			t_at = tr_mono_ns() + margin * 1000000u;
	}
	struct rreq *q = calloc(1, sizeof(*q));
	if (!q || !(q->ans = calloc(nn, sizeof(*q->ans)))) {
		free(q);
		free(sel);
		return tr_seterr(err, errlen, ENOMEM, "out of memory");
	}
	q->id = ++r->next_req;
	q->client = c;
	q->nans = nn;
	q->deadline = tr_mono_ms() + (m->u.ctl.timeout_ms ? m->u.ctl.timeout_ms : 15000);
	q->next = r->reqs;
	r->reqs = q;
	struct relay_wr w = { 0 };
	for (size_t i = 0; i < nn; i++) {
		struct rans *a = &q->ans[i];
		a->n = sel[i];
		if (!a->n->c) {
			ans_fail(a, "down: not joined");
			continue;
		}
		/* the agreed time on the node's clock, when its offset is
		 * known; otherwise it starts on receipt */
		int64_t off;
		uint64_t rtt;
		char at[40];
		bool timed = t_at && best(a->n, &off, &rtt) && (int64_t)t_at + off > 0;
		if (timed)
			snprintf(at, sizeof(at), "--at=%" PRIu64, (uint64_t)((int64_t)t_at + off));
		tr_relay_wr_begin(&w, RELAY_CTL);
		tr_relay_wr_32(&w, q->id);
		tr_relay_wr_32(&w, (uint32_t)argc + timed);
		for (size_t k = 0; k < argc; k++)
			tr_relay_wr_str(&w, argv[k]);
		if (timed)
			tr_relay_wr_str(&w, at);
		size_t len = tr_relay_wr_done(&w);
		if (!len || tr_rconn_queue(a->n->c, w.buf, len) < 0) {
			ans_fail(a, "the request could not be sent");
			continue;
		}
		a->waiting = true;
		q->nwaiting++;
	}
	free(w.buf);
	free(sel);
	tr_relay_log(r, LOG_INFO, "%s: %s %s%s on %zu nodes matching '%s'", c->peer, argv[0],
		     argc > 1 ? argv[1] : "", argc > 2 ? " ..." : "", nn, m->u.ctl.glob);
	if (!q->nwaiting)
		req_finish(r, q);
	return 0;
}

static int on_join(struct rconn *c, const struct relay_msg *m, char *err, size_t errlen)
{
	struct trawl_relay *r = c->r;
	if (c->trace || c->node)
		return tr_seterr(err, errlen, EPROTO, "JOIN after HELLO or JOIN");
	struct rnode *n = NULL;
	for (struct rnode *x = r->nodes; x; x = x->next)
		if (strcmp(x->name, m->u.join.host) == 0)
			n = x;
	char why[300] = "";
	int e = 0;
	if (m->u.join.version != RELAY_VERSION)
		e = EPROTO, snprintf(why, sizeof(why), "protocol version %u (this relay speaks %u)",
				     m->u.join.version, RELAY_VERSION);
	else if (n && n->c)
		e = EEXIST, snprintf(why, sizeof(why), "node %s is joined already (from %s)",
				     n->name, n->addr);
	else if (!n && count_nodes(r) >= NODES_MAX)
		e = EUSERS, snprintf(why, sizeof(why), "the relay knows %d nodes already",
				     NODES_MAX);
	if (*why) {
		tr_relay_refuse(c, e, why);
		tr_relay_log(r, LOG_WARNING, "%s: JOIN refused: %s", c->peer, why);
		return 0;
	}
	if (!n) {
		n = calloc(1, sizeof(*n));
		if (!n)
			return tr_seterr(err, errlen, ENOMEM, "out of memory");
		snprintf(n->name, sizeof(n->name), "%s", m->u.join.host);
		n->next = r->nodes;
		r->nodes = n;
	}
	const char *sp = strchr(c->peer, ' ');
	snprintf(n->addr, sizeof(n->addr), "%s", sp ? sp + 1 : c->peer);
	n->c = c;
	n->since = (uint64_t)tr_clock_ns(CLOCK_REALTIME);
	n->nsamples = n->pings = 0;
	c->node = n;
	/* the log names it so from now on (cut: the peer field is short) */
	snprintf(c->peer, sizeof(c->peer), "node %.40s", n->name);
	struct relay_wr w = { 0 };
	tr_relay_wr_begin(&w, RELAY_WELCOME);
	tr_relay_wr_32(&w, 0);
	tr_relay_wr_str(&w, "");
	send_wr(c, &w);
	tr_relay_log(r, LOG_INFO, "node %s joined from %s", n->name, n->addr);
	ping(n, tr_mono_ms());
	return 0;
}

int tr_control_msg(struct rconn *c, const struct relay_msg *m, char *err, size_t errlen)
{
	struct trawl_relay *r = c->r;
	if (c->local) {
		if (m->type != RELAY_CLUSTER)
			return tr_seterr(err, errlen, EPROTO, "%s on the control socket",
					 tr_relay_type_name(m->type));
		return on_cluster(c, m, err, errlen);
	}
	if (m->type == RELAY_JOIN)
		return on_join(c, m, err, errlen);
	struct rnode *n = c->node;
	if (!n)
		return tr_seterr(err, errlen, EPROTO, "%s before JOIN", tr_relay_type_name(m->type));
	switch (m->type) {
	case RELAY_PONG: {
		uint64_t now = tr_mono_ns(), t1 = m->u.ping.t_relay;
		if (t1 > now)
			return tr_seterr(err, errlen, EPROTO, "a PONG from the future");
		uint64_t rtt = now - t1;
		unsigned i = n->nsamples++ % OFF_SAMPLES;
		n->s[i].rtt = rtt;
		n->s[i].off = (int64_t)(m->u.ping.t_agent - (t1 + rtt / 2));
		n->buffers = m->u.ping.buffers;
		n->discarded = m->u.ping.discarded;
		char *s = strdup(m->u.ping.sessions);
		if (s) {
			free(n->sessions);
			n->sessions = s;
		}
		return 0;
	}
	case RELAY_CTL_REPLY:
		for (struct rreq *q = r->reqs; q; q = q->next) {
			if (q->id != m->u.reply.id)
				continue;
			for (size_t i = 0; i < q->nans; i++) {
				struct rans *a = &q->ans[i];
				if (a->n != n || !a->waiting)
					continue;
				a->waiting = false;
				a->answered = true;
				a->status = m->u.reply.status;
				a->t_apply = m->u.reply.t_apply;
				a->t_done = m->u.reply.t_done;
				a->out = strdup(m->u.reply.out);
				a->err = strdup(m->u.reply.err);
				if (!--q->nwaiting)
					req_finish(r, q);
				return 0;
			}
		}
		return 0;	/* an answer too late: its request was answered */
	default:
		return tr_seterr(err, errlen, EPROTO, "%s from a node", tr_relay_type_name(m->type));
	}
}

void tr_control_conn_gone(struct rconn *c)
{
	struct trawl_relay *r = c->r;
	if (c->local) {
		for (struct rreq *q = r->reqs; q; q = q->next)
			if (q->client == c) {
				req_free(r, q);
				break;
			}
		return;
	}
	struct rnode *n = c->node;
	if (!n)
		return;
	tr_relay_log(r, LOG_WARNING, "node %s (%s) left", n->name, n->addr);
	n->c = NULL;
	n->since = (uint64_t)tr_clock_ns(CLOCK_REALTIME);
	c->node = NULL;
	for (struct rreq *q = r->reqs, *next; q; q = next) {
		next = q->next;
		for (size_t i = 0; i < q->nans; i++)
			if (q->ans[i].n == n && q->ans[i].waiting) {
				ans_fail(&q->ans[i], "the node left before answering");
				if (!--q->nwaiting)
					req_finish(r, q);
				break;
			}
	}
}

void tr_control_tick(struct trawl_relay *r, int64_t now)
{
	for (struct rnode *n = r->nodes; n; n = n->next)
		if (n->c && !n->c->dead && !n->c->closing && now >= n->next_ping)
			ping(n, now);
	for (struct rreq *q = r->reqs, *next; q; q = next) {
		next = q->next;
		if (now < q->deadline)
			continue;
		for (size_t i = 0; i < q->nans; i++)
			if (q->ans[i].waiting)
				ans_fail(&q->ans[i], "no answer in time");
		req_finish(r, q);
	}
}

int64_t tr_control_due(const struct trawl_relay *r)
{
	int64_t due = INT64_MAX;
	for (const struct rnode *n = r->nodes; n; n = n->next)
		if (n->c && !n->c->dead && !n->c->closing && n->next_ping < due)
			due = n->next_ping;
	for (const struct rreq *q = r->reqs; q; q = q->next)
		if (q->deadline < due)
			due = q->deadline;
	return due;
}

/* --------------------------------------------------------- the socket */

int tr_control_listen(struct trawl_relay *r, const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(sa.sun_path))
		return tr_seterr(err, errlen, ENAMETOOLONG, "control socket %s: path too long", path);
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return tr_seterr(err, errlen, errno, "control socket: %s", strerror(errno));
	/* a socket left by a relay that died is replaced; one that answers is
	 * another relay's */
	int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		close(probe);
		close(fd);
		return tr_seterr(err, errlen, EADDRINUSE, "control socket %s: another relay "
				 "listens there", path);
	}
	if (probe >= 0)
		close(probe);
	struct stat st;
	if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
		unlink(path);
	mode_t old = umask(0177);
	int b = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (b < 0 || listen(fd, 64) < 0) {
		int e = errno;
		close(fd);
		return tr_seterr(err, errlen, e, "control socket %s: %s", path, strerror(e));
	}
	r->control = strdup(path);
	if (!r->control) {
		close(fd);
		unlink(path);
		return tr_seterr(err, errlen, ENOMEM, "out of memory");
	}
	r->cfd = fd;
	return 0;
}

void tr_control_accept(struct trawl_relay *r)
{
	for (int i = 0; i < 16; i++) {
		int fd = accept4(r->cfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0)
			return;
		struct ucred cr;
		socklen_t cl = sizeof(cr);
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) < 0 ||
		    (cr.uid != 0 && cr.uid != geteuid())) {
			tr_relay_log(r, LOG_WARNING, "control client of uid %d refused (not the relay's "
				     "user nor root)", (int)cr.uid);
			close(fd);
			continue;
		}
		if (r->nconns >= r->max_conns) {
			tr_relay_log(r, LOG_WARNING, "control client pid %d refused: the relay serves "
				     "%d connections already (--max-conns)", (int)cr.pid, r->nconns);
			close(fd);
			continue;
		}
		char peer[64];
		snprintf(peer, sizeof(peer), "control client pid %d", (int)cr.pid);
		struct rconn *c = tr_relay_conn_add(r, fd, RC_PRODUCER, peer);
		if (c)
			c->local = true;
	}
}

void tr_control_free(struct trawl_relay *r)
{
	while (r->reqs)
		req_free(r, r->reqs);
	while (r->nodes) {
		struct rnode *n = r->nodes;
		r->nodes = n->next;
		free(n->sessions);
		free(n);
	}
	if (r->cfd >= 0) {
		close(r->cfd);
		r->cfd = -1;
		unlink(r->control);
	}
	free(r->control);
	r->control = NULL;
}
