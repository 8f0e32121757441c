/* SPDX-License-Identifier: MIT */
/*
 * lib/agent/join.c - the agent's side of cluster control
 * (docs/cluster.md): a connection to a relay's data port, opened by the
 * agent (the relay never dials out), that says JOIN with the agent's host
 * name and then carries the relay's pings and requests.
 *
 * A request (CTL: an id and argv) runs through the agent's own verbs
 * (verbs.c), as a client's would: the join makes a connection of the
 * agent's from a socketpair, calls tr_verb_run() on it at once (noting
 * the clock then: the time the verb took effect on this node), and reads
 * the verb's OUT, ERR and END from the other end when they come (start
 * and stop answer once the applications have). Each answer goes back as a
 * CTL_REPLY. Everything runs in the agent's loop; nothing here blocks but
 * the connect (at most CONNECT_MS, only while the relay is away).
 *
 * A relay with a secret (docs/auth.md) answers the JOIN with a CHALLENGE:
 * the agent proves its credential (TRAWL_SECRET_FILE, which `trawl agent
 * --secret-file` and [relay] secret-file set, read at each connection and
 * wiped once answered) with an AUTH whose MAC covers the JOIN, as a
 * producer's covers its HELLO (lib/net/auth.c); a refusal comes in the
 * WELCOME with its reason, and is logged as any loss of the relay.
 *
 * The relay gone (closed, refused, unreachable): connect again after 0.5
 * s, then twice as long each time, up to 30 s; a JOIN welcomed resets the
 * wait. Requests in flight are answered by the verbs all the same; their
 * answers are dropped when there is no relay to send them to.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "agent-internal.h"
#include "net/auth.h"
#include "net/relay-proto.h"
#include "net/relay-wr.h"
#include "net/sock.h"
#include "ust/proto.h"

#define CONNECT_MS 200
#define BACKOFF_MIN_MS 500
#define BACKOFF_MAX_MS 30000
#define WELCOME_MS 5000		/* a relay that does not answer the JOIN */
#define IN_MAX (1u << 20)	/* a relay's message: requests are small */

/* A verb running for the relay: its answer is read from fd. Or a start
 * waiting for its agreed time: fd is a timerfd then, session its name. */
struct jreq {
	uint32_t id;
	int fd;				/* our end of the verb's connection */
	uint64_t t_apply;		/* CLOCK_MONOTONIC ns when the verb ran */
	char *session;			/* non-NULL: a start at a time */
	uint64_t key;			/* ... of the session of that name then */
	char *out, *err;		/* its text so far */
	size_t outlen, errlen;
	struct jreq *next;
};

enum { J_DOWN, J_WAIT, J_UP };

struct tr_join {
	char *addr;
	char host[256];
	unsigned port;
	int fd;				/* -1: down */
	int state;
	int64_t next_try, welcome_by;	/* ms */
	unsigned backoff;		/* ms */
	bool said_down;			/* the loss is logged once per episode */
	uint8_t *in;
	size_t inlen, incap;
	struct relay_wr w;
	struct jreq *reqs;
	/* the handshake with a relay that authenticates (J_WAIT only) */
	struct auth_cred *cred;		/* NULL: none given */
	uint8_t *joinmsg;		/* the JOIN sent, header included: the
					 * proof's context */
	size_t joinlen;
	/* mutual: with a credential, the relay must prove the same key
	 * (its PROOF, over our nonce) before its WELCOME is taken */
	bool need_proof, challenged, proven;
	uint8_t rnonce[AUTH_NONCE_LEN], pnonce[AUTH_NONCE_LEN];
	/* the sessions' states last told the relay (a PONG), and the last
	 * PING (its time, ours when it came): a change is told at once, in a
	 * PONG of that PING again, not at the next ping */
	char told[1024];
	bool pinged;
	uint64_t ping_t_relay, ping_t_agent;
};

const char *tr_join_addr(const struct trawl_agent *a)
{
	return a->join ? a->join->addr : NULL;
}

int tr_join_new(struct trawl_agent *a, const char *addr, char *err, size_t errlen)
{
	struct tr_join *j = calloc(1, sizeof(*j));
	if (!j || !(j->addr = strdup(addr))) {
		free(j);
		return tr_seterr(err, errlen, ENOMEM, "out of memory");
	}
	if (tr_net_split_addr(addr, j->host, sizeof(j->host), &j->port, RELAY_DATA_PORT) < 0) {
		free(j->addr);
		free(j);
		return tr_seterr(err, errlen, EINVAL, "relay '%s': not HOST[:PORT]", addr);
	}
	j->fd = -1;
	j->backoff = BACKOFF_MIN_MS;
	a->join = j;
	return 0;
}

static void jreq_free(struct jreq *q)
{
	if (q->fd >= 0)
		close(q->fd);
	free(q->out);
	free(q->err);
	free(q->session);
	free(q);
}

/* The handshake's credential and JOIN forgotten. */
static void forget_cred(struct tr_join *j)
{
	if (j->cred) {
		tr_auth_wipe(j->cred);
		free(j->cred);
		j->cred = NULL;
	}
	free(j->joinmsg);
	j->joinmsg = NULL;
	j->joinlen = 0;
	explicit_bzero(j->rnonce, sizeof(j->rnonce));
	explicit_bzero(j->pnonce, sizeof(j->pnonce));
	j->challenged = false;
}

void tr_join_free(struct trawl_agent *a)
{
	struct tr_join *j = a->join;
	if (!j)
		return;
	if (j->fd >= 0)
		close(j->fd);
	while (j->reqs) {
		struct jreq *q = j->reqs;
		j->reqs = q->next;
		jreq_free(q);
	}
	forget_cred(j);
	free(j->in);
	free(j->w.buf);
	free(j->addr);
	free(j);
	a->join = NULL;
}

static void down(struct trawl_agent *a, const char *why)
{
	struct tr_join *j = a->join;
	forget_cred(j);
	if (j->fd >= 0)
		close(j->fd);
	j->fd = -1;
	j->inlen = 0;
	if (!j->said_down)
		tr_agent_log(a, TRAWL_AGENT_LOG_WARNING, "relay %s: %s; joining again in %u ms "
			     "(then less often, up to every %u s)", j->addr, why, j->backoff,
			     BACKOFF_MAX_MS / 1000);
	j->said_down = true;
	j->state = J_DOWN;
	j->next_try = tr_mono_ms() + j->backoff;
	j->backoff = j->backoff * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : j->backoff * 2;
}

/* Sends the message built in j->w (the relay reads it whole: a send that
 * cannot complete within the protocol's timeout loses the relay). */
static void send_w(struct trawl_agent *a)
{
	struct tr_join *j = a->join;
	size_t n = tr_relay_wr_done(&j->w);
	if (!n || j->fd < 0)
		return;
	int r = tr_net_write_full(j->fd, j->w.buf, n, tr_mono_ms() + RELAY_SEND_TIMEOUT_MS);
	if (r < 0)
		down(a, strerror(-r));
}

/* The credential of TRAWL_SECRET_FILE (docs/auth.md) into j->cred, if one
 * is given: 0, or -errno with the reason in why. */
static int load_cred(struct tr_join *j, char *why, size_t len)
{
	const char *path = getenv("TRAWL_SECRET_FILE");
	if (!path || !*path)
		return 0;
	char e[300];
	int ret = tr_auth_ready(e, sizeof(e));
	if (ret < 0) {
		snprintf(why, len, "%s", e);
		return ret;
	}
	if (!(j->cred = calloc(1, sizeof(*j->cred)))) {
		snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	if ((ret = tr_auth_load(path, j->cred, e, sizeof(e))) < 0) {
		snprintf(why, len, "secret file %s", e);
		forget_cred(j);
	}
	return ret;
}

static void try_connect(struct trawl_agent *a)
{
	struct tr_join *j = a->join;
	char why[360] = "";
	if (load_cred(j, why, sizeof(why)) < 0) {
		down(a, why);
		return;
	}
	int fd = tr_net_connect(j->host, j->port, tr_mono_ms() + CONNECT_MS, why, sizeof(why));
	if (fd < 0) {
		down(a, why[0] ? why : strerror(-fd));
		return;
	}
	j->fd = fd;
	j->state = J_WAIT;
	j->welcome_by = tr_mono_ms() + WELCOME_MS;
	j->need_proof = j->cred != NULL;
	j->proven = false;
	tr_relay_wr_begin(&j->w, RELAY_JOIN);
	tr_relay_wr_32(&j->w, RELAY_VERSION);
	tr_relay_wr_32(&j->w, j->cred ? RELAY_JOIN_AUTH : 0);
	tr_relay_wr_64(&j->w, tr_mono_ns());
	tr_relay_wr_str(&j->w, a->hostname);
	/* kept for the proof, should the relay ask for one */
	size_t n = tr_relay_wr_done(&j->w);
	if (j->cred && n && (j->joinmsg = malloc(n))) {
		memcpy(j->joinmsg, j->w.buf, n);
		j->joinlen = n;
	}
	send_w(a);
}

/* A CHALLENGE to our JOIN: the AUTH proving the credential, then the
 * credential forgotten. */
static void on_challenge(struct trawl_agent *a, const struct relay_msg *m)
{
	struct tr_join *j = a->join;
	uint8_t am[RELAY_HDR_LEN + RELAY_AUTH_LEN];
	char why[128];
	if (j->state != J_WAIT || !j->joinmsg)
		return down(a, j->cred || j->state != J_WAIT ? "an unexpected CHALLENGE" :
			    "this relay requires authentication: give the agent its node's key "
			    "or the cluster's secret (--secret-file, TRAWL_SECRET_FILE, [relay] "
			    "secret-file)");
	if (m->u.challenge.version != RELAY_AUTH_VERSION) {
		snprintf(why, sizeof(why), "a challenge of version %u (this agent speaks %d)",
			 m->u.challenge.version, RELAY_AUTH_VERSION);
		return down(a, why);
	}
	if (j->challenged)
		return down(a, "a second CHALLENGE");
	int ret = tr_auth_put(j->cred, AUTH_ROLE_NODE, m->u.challenge.nonce, j->joinmsg,
			      j->joinlen, am);
	if (ret < 0)
		return down(a, strerror(-ret));
	/* kept (with the credential) for the relay's proof */
	memcpy(j->rnonce, m->u.challenge.nonce, AUTH_NONCE_LEN);
	memcpy(j->pnonce, am + RELAY_HDR_LEN + 4, AUTH_NONCE_LEN);
	j->challenged = true;
	ret = tr_net_write_full(j->fd, am, sizeof(am), tr_mono_ms() + RELAY_SEND_TIMEOUT_MS);
	explicit_bzero(am, sizeof(am));
	if (ret < 0)
		down(a, strerror(-ret));
}

/* The relay's PROOF: the same key over our nonce, or the relay is not
 * the one of our secret (it learns nothing, and is obeyed in nothing). */
static void on_proof(struct trawl_agent *a, const struct relay_msg *m)
{
	struct tr_join *j = a->join;
	if (j->state != J_WAIT || !j->challenged || !j->cred || j->proven)
		return down(a, "an unexpected PROOF");
	bool ok = tr_auth_relay_check(j->cred->key, AUTH_ROLE_NODE, (uint32_t)j->cred->kind,
				      j->rnonce, j->pnonce, j->joinmsg, j->joinlen,
				      m->u.proof.mac);
	forget_cred(j);
	if (!ok)
		return down(a, "the relay did not prove it holds this agent's secret (its proof is "
			    "wrong): not obeying it");
	j->proven = true;
}

/* The sessions and their states, "NAME:STATE,...", in list (len bytes). */
static void session_list(const struct trawl_agent *a, char *list, size_t len)
{
	size_t off = 0;
	list[0] = 0;
	for (const struct session *s = a->sessions; s; s = s->next) {
		int k = snprintf(list + off, len - off, "%s%s:%s", off ? "," : "", s->name,
				 tr_agent_state_names[s->state]);
		if (k < 0 || (size_t)k >= len - off) {
			list[off] = 0;
			break;
		}
		off += (size_t)k;
	}
}

/* Sessions, buffers in use, events discarded: for the relay's PONG. */
static void figures(struct trawl_agent *a)
{
	struct tr_join *j = a->join;
	uint64_t nb = 0, disc = 0;
	for (struct session *s = a->sessions; s; s = s->next)
		for (struct part *p = s->parts; p; p = p->next)
			for (struct aring *r = p->rings; r; r = r->next)
				if (r->c.ring.shm && !r->done) {
					nb++;
					disc += __atomic_load_n(&r->c.ring.shm->discarded,
								__ATOMIC_RELAXED);
				}
	session_list(a, j->told, sizeof(j->told));
	tr_relay_wr_64(&j->w, nb);
	tr_relay_wr_64(&j->w, disc);
	tr_relay_wr_str(&j->w, j->told);
}

/* A PONG of the last PING: the figures now. */
static void pong(struct trawl_agent *a, uint64_t t_relay, uint64_t t_agent)
{
	struct tr_join *j = a->join;
	tr_relay_wr_begin(&j->w, RELAY_PONG);
	tr_relay_wr_64(&j->w, t_relay);
	tr_relay_wr_64(&j->w, t_agent);
	figures(a);
	send_w(a);
}

/* A session made, started, stopped or gone since the relay was told: told
 * now (trawl cluster nodes shows it at once). The PONG repeats the last
 * PING's times: its round trip is the longer by the wait, so the relay's
 * offset estimate (the shortest round trip of its samples) never takes it. */
static void tell_states(struct trawl_agent *a)
{
	struct tr_join *j = a->join;
	char now[sizeof(j->told)];
	if (j->state != J_UP || !j->pinged)
		return;
	session_list(a, now, sizeof(now));
	if (strcmp(now, j->told) != 0)
		pong(a, j->ping_t_relay, j->ping_t_agent);
}

static void reply_fail(struct trawl_agent *a, uint32_t id, const char *why)
{
	struct tr_join *j = a->join;
	tr_relay_wr_begin(&j->w, RELAY_CTL_REPLY);
	tr_relay_wr_32(&j->w, id);
	tr_relay_wr_32(&j->w, 1);
	tr_relay_wr_64(&j->w, 0);
	tr_relay_wr_64(&j->w, tr_mono_ns());
	tr_relay_wr_str(&j->w, "");
	tr_relay_wr_str(&j->w, why);
	send_w(a);
}

/* The verb runs now, on a connection of the agent's own; false when it
 * could not (answered so). */
static bool run_verb(struct trawl_agent *a, uint32_t id, int argc, char **argv)
{
	struct tr_join *j = a->join;
	int sp[2] = { -1, -1 };
	struct jreq *q = calloc(1, sizeof(*q));
	struct conn *c = calloc(1, sizeof(*c));
	if (!q || !c || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0,
				   sp) < 0) {
		free(q);
		free(c);
		reply_fail(a, id, "the agent is out of resources");
		return false;
	}
	/* room for a verb's whole answer (list): it is read on the loop's
	 * next turn */
	int sz = 1 << 20;
	setsockopt(sp[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	q->id = id;
	q->fd = sp[1];
	q->next = j->reqs;
	j->reqs = q;
	c->a = a;
	c->fd = sp[0];
	c->type = C_CLIENT;
	c->uid = geteuid();
	c->pid = getpid();
	c->next = a->conns;
	a->conns = c;
	tr_agent_log(a, TRAWL_AGENT_LOG_INFO, "relay %s asks: %s %s", j->addr, argv[0],
		     argc > 1 ? argv[1] : "");
	q->t_apply = tr_mono_ns();
	tr_verb_run(c, argc, argv);
	/* a start reports when recording was switched on */
	struct session *s;
	if (strcmp(argv[0], "start") == 0 && argc > 1 && (s = tr_session_find(a, argv[1])) &&
	    s->state != S_NEW && s->t_begin >= q->t_apply)
		q->t_apply = s->t_begin;
	return true;
}

/* "start SESSION --at=NS": the relay's agreed time on this node's clock.
 * The session is prepared now (its trace open and connected), recording
 * is switched on at NS by a timer. Anything that prevents the wait (a
 * time past, a session that cannot be prepared) starts it at once, and
 * the verb answers as it would have. */
static void start_at(struct trawl_agent *a, uint32_t id, char *sess, const char *at)
{
	struct tr_join *j = a->join;
	char *end;
	errno = 0;
	unsigned long long t = strtoull(at, &end, 10);
	char *argv[] = { "start", sess, NULL };
	if (errno || *end || end == at)
		return reply_fail(a, id, "start: a time that is not a number of nanoseconds");
	struct session *s = tr_session_find(a, sess);
	char why[512] = "";
	if (!s)
		return (void)run_verb(a, id, 2, argv);	/* its answer: no such session */
	if (tr_session_prepare(s, why, sizeof(why)) < 0)
		return reply_fail(a, id, why);		/* the start's own, not prepared twice */
	uint64_t now = tr_mono_ns();
	if (t <= now) {
		tr_agent_log(a, TRAWL_AGENT_LOG_WARNING, "relay %s: start %s at its agreed time "
			     "missed by %.3f ms (prepared too late): starting now", j->addr, sess,
			     (now - t) / 1e6);
		return (void)run_verb(a, id, 2, argv);
	}
	struct jreq *q = calloc(1, sizeof(*q));
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	struct itimerspec its = { .it_value = { (time_t)(t / 1000000000u),
						(long)(t % 1000000000u) } };
	if (!q || fd < 0 || !(q->session = strdup(sess)) ||
	    timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL) < 0) {
		if (fd >= 0)
			close(fd);
		if (q)
			free(q->session);
		free(q);
		return (void)run_verb(a, id, 2, argv);
	}
	q->id = id;
	q->fd = fd;
	q->key = s->key;
	q->next = j->reqs;
	j->reqs = q;
	tr_agent_log(a, TRAWL_AGENT_LOG_INFO, "relay %s asks: start %s in %.3f ms", j->addr,
		     s->name, (t - now) / 1e6);
}

/* A start's agreed time has come: the start verb, for the session
 * prepared then (destroyed since, even if made again: not started); when
 * the verb cannot run, the session lets its trace go rather than hold
 * the node (tr_session_start refuses others while one is prepared). */
static void timed_start(struct trawl_agent *a, struct jreq *q)
{
	struct session *s = tr_session_find(a, q->session);
	char *argv[] = { "start", q->session, NULL };
	if (!s || s->key != q->key) {
		char why[300];
		snprintf(why, sizeof(why), "session %s was destroyed before its agreed time",
			 q->session);
		reply_fail(a, q->id, why);
		return;
	}
	if (!run_verb(a, q->id, 2, argv) && s->prepared && s->state == S_NEW)
		tr_session_unprepare(s);
}

/* A CTL: the verb runs now, or a start at its agreed time. */
static void on_ctl(struct trawl_agent *a, const struct relay_msg *m)
{
	struct tr_join *j = a->join;
	char *argv[RELAY_CTL_ARGS_MAX + 1];
	int argc = 0;
	const char *p = m->u.ctl.args;
	for (uint32_t i = 0; i < m->u.ctl.argc; i++) {
		argv[argc++] = (char *)p;
		p += strlen(p) + 1;
	}
	argv[argc] = NULL;
	if (!argc)
		return reply_fail(a, m->u.ctl.id, "an empty request");
	/* the relay, even proven, asks for what cluster control needs only:
	 * no path outside the trace root, no other relay (docs/cluster.md) */
	char why[600];
	if (!tr_verb_relay_may(a, j->addr, argc, argv, why, sizeof(why))) {
		tr_agent_log(a, TRAWL_AGENT_LOG_WARNING, "relay %s: refused its request: %s",
			     j->addr, why);
		return reply_fail(a, m->u.ctl.id, why);
	}
	if (argc == 3 && strcmp(argv[0], "start") == 0 && strncmp(argv[2], "--at=", 5) == 0)
		return start_at(a, m->u.ctl.id, argv[1], argv[2] + 5);
	/* "relay=." in a create: the relay joined */
	char *rel = NULL;
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "relay=.") != 0 || rel)
			continue;
		if (asprintf(&rel, "relay=%s", j->addr) < 0)
			return reply_fail(a, m->u.ctl.id, "the agent is out of resources");
		argv[i] = rel;
	}
	run_verb(a, m->u.ctl.id, argc, argv);
	free(rel);
}

static void on_msg(struct trawl_agent *a, const struct relay_msg *m)
{
	struct tr_join *j = a->join;
	bool asked;
	switch (m->type) {
	case RELAY_WELCOME:
		if (j->state != J_WAIT)
			return down(a, "a second WELCOME");
		asked = j->challenged;
		forget_cred(j);
		if (m->u.welcome.status)
			return down(a, m->u.welcome.msg);
		if (j->need_proof && !j->proven)
			return down(a, asked ? "the relay did not prove it holds this agent's secret "
				    "(a WELCOME without its proof): not obeying it" :
				    "the relay did not prove it holds this agent's secret (it asked "
				    "no proof: a relay without a secret, or not the relay of this "
				    "secret): not obeying it");
		j->state = J_UP;
		j->pinged = false;
		j->told[0] = 0;
		j->backoff = BACKOFF_MIN_MS;
		j->said_down = false;
		tr_agent_log(a, TRAWL_AGENT_LOG_INFO, "joined relay %s as %s", j->addr, a->hostname);
		return;
	case RELAY_CHALLENGE:
		return on_challenge(a, m);
	case RELAY_PROOF:
		return on_proof(a, m);
	case RELAY_PING:
		if (j->state != J_UP)
			return down(a, "a PING before WELCOME");
		j->pinged = true;
		j->ping_t_relay = m->u.ping.t_relay;
		j->ping_t_agent = tr_mono_ns();
		return pong(a, j->ping_t_relay, j->ping_t_agent);
	case RELAY_CTL:
		if (j->state != J_UP)
			return down(a, "a request before WELCOME");
		return on_ctl(a, m);
	default:
		return down(a, "a message that is not cluster control");
	}
}

static void read_relay(struct trawl_agent *a)
{
	struct tr_join *j = a->join;
	for (;;) {
		if (j->inlen == j->incap) {
			if (j->incap >= IN_MAX)
				return down(a, "a message too large");
			size_t cap = j->incap ? j->incap * 2 : 4096;
			uint8_t *b = realloc(j->in, cap);
			if (!b)
				return down(a, "out of memory");
			j->in = b;
			j->incap = cap;
		}
		ssize_t n = recv(j->fd, j->in + j->inlen, j->incap - j->inlen, MSG_DONTWAIT);
		if (n == 0)
			return down(a, "the relay closed the connection");
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				down(a, strerror(errno));
			return;
		}
		j->inlen += (size_t)n;
		size_t off = 0;
		while (j->fd >= 0) {
			struct relay_msg m;
			char why[256];
			ssize_t k = tr_relay_msg_parse(j->in + off, j->inlen - off, &m, why, sizeof(why));
			if (k < 0)
				return down(a, why);
			if (k == 0)
				break;
			on_msg(a, &m);
			off += (size_t)k;
		}
		if (j->fd < 0)
			return;
		memmove(j->in, j->in + off, j->inlen - off);
		j->inlen -= off;
	}
}

/* A verb's answer, read from its connection; sent once it ended. */
static bool read_answer(struct trawl_agent *a, struct jreq *q)
{
	struct tr_join *j = a->join;
	uint8_t *m = a->msgbuf;
	for (;;) {
		ssize_t n = recv(q->fd, m, AM_MSG_MAX, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return false;
		struct am_hdr h;
		int status = 1;
		if (n >= (ssize_t)sizeof(h)) {
			memcpy(&h, m, sizeof(h));
			size_t tl = (size_t)n - sizeof(h);
			const char *text = (const char *)m + sizeof(h);
			if (h.type == AM_OUT || h.type == AM_ERR) {
				char **buf = h.type == AM_OUT ? &q->out : &q->err;
				size_t *len = h.type == AM_OUT ? &q->outlen : &q->errlen;
				char *b = realloc(*buf, *len + tl + 1);
				if (b) {
					memcpy(b + *len, text, tl);
					*len += tl;
					b[*len] = 0;
					*buf = b;
				}
				continue;
			}
			if (h.type != AM_END || tl < sizeof(struct am_end))
				continue;
			struct am_end e;
			memcpy(&e, text, sizeof(e));
			status = e.status;
		}
		/* the end (or the connection gone without one: failed) */
		if (j->state == J_UP) {
			tr_relay_wr_begin(&j->w, RELAY_CTL_REPLY);
			tr_relay_wr_32(&j->w, q->id);
			tr_relay_wr_32(&j->w, (uint32_t)status);
			tr_relay_wr_64(&j->w, q->t_apply);
			tr_relay_wr_64(&j->w, tr_mono_ns());
			tr_relay_wr_str(&j->w, q->out);
			tr_relay_wr_str(&j->w, q->err);
			send_w(a);
		}
		return true;
	}
}

size_t tr_join_nfds(const struct trawl_agent *a)
{
	size_t n = 1;
	if (!a->join)
		return 0;
	for (struct jreq *q = a->join->reqs; q; q = q->next)
		n++;
	return n;
}

size_t tr_join_fill(struct trawl_agent *a, struct pollfd *pf)
{
	struct tr_join *j = a->join;
	if (!j)
		return 0;
	int64_t now = tr_mono_ms();
	if (j->state == J_DOWN && now >= j->next_try && !a->quitting)
		try_connect(a);
	if (j->state == J_WAIT && now >= j->welcome_by)
		down(a, "no WELCOME in time");
	tell_states(a);
	size_t n = 0;
	pf[n++] = (struct pollfd){ j->fd, POLLIN, 0 };	/* -1: ignored by poll */
	for (struct jreq *q = j->reqs; q; q = q->next)
		pf[n++] = (struct pollfd){ q->fd, POLLIN, 0 };
	return n;
}

void tr_join_events(struct trawl_agent *a, const struct pollfd *pf, size_t n)
{
	struct tr_join *j = a->join;
	if (!j || !n)
		return;
	int fd0 = pf[0].fd;
	if (fd0 >= 0 && fd0 == j->fd && pf[0].revents)
		read_relay(a);
	/* answers: the pollfds name their descriptors */
	for (size_t i = 1; i < n; i++) {
		if (!pf[i].revents)
			continue;
		for (struct jreq **pp = &j->reqs; *pp; pp = &(*pp)->next) {
			struct jreq *q = *pp;
			if (q->fd != pf[i].fd)
				continue;
			if (q->session) {
				/* the agreed time: out of the list before the
				 * verb adds its own request */
				*pp = q->next;
				timed_start(a, q);
				jreq_free(q);
			} else if (read_answer(a, q)) {
				*pp = q->next;
				jreq_free(q);
			}
			break;
		}
	}
}
