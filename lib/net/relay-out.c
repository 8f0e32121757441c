/* SPDX-License-Identifier: MIT */
/*
 * lib/net/relay-out.c - a producer's connection to `trawl relay`, as a
 * destination of the CTF writer (lib/ctf/dest.h; made by
 * trawl_relay_dest_new, trawl/relay.h): at the writer's open, connect,
 * HELLO, WELCOME; then METADATA, STREAM, PACKET and BEACON messages
 * (relay-proto.h) as the writer hands them over, through a write queue of
 * the destination's own when the writer has one; and at its close, CLOSE,
 * whose ACK says the trace is written at the relay.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "trawl/relay.h"
#include "ctf/dest.h"
#include "ctf/ioq.h"
#include "net/auth.h"
#include "net/reconnect.h"
#include "net/relay-proto.h"
#include "net/sock.h"
#include "util/clock.h"

struct relay_dest {
	struct trawl_ctf_dest d;	/* first: what the writer holds */
	char *addr, *session, *trace;	/* the options (trace NULL: the domain) */
	uint64_t live_timer_us;
	int timeout_ms;
	char *secret_file;		/* the credential (docs/auth.md); NULL: none */
	int fd;				/* -1 until open (or once rs has it) */
	struct ioq *q;			/* NULL: sent by the caller's thread */
	/* resumable (resume_ms > 0): the sender that reconnects, and what
	 * its HELLO says again */
	unsigned resume_ms;
	bool demand;			/* HELLO asks for DEMAND (live.c, relay side) */
	void (*on_demand)(void *arg);	/* the options' */
	void *demand_arg;
	bool horizon;			/* HELLO asks to send HORIZON */
	bool horizon_ok;		/* and the relay's WELCOME granted it (atomic:
					 * set again at a resume) */
	struct rsend *rs;
	char *hello;			/* the HELLO message, whole */
	size_t hello_len;
	char host[256];
	unsigned port;
	char why[300];			/* the relay's reason for cutting it off */
	/* what the relay wrote (HELLO flag RELAY_HELLO_COUNT; the resumable
	 * sender counts its own): the PACKETs sent and not yet confirmed, in
	 * the order sent, until a PROGRESS, the ACK of CLOSE or a cut's ACK
	 * says they are written. Under mu (ops may come from several
	 * threads when the writer has a queue) */
	pthread_mutex_t mu;
	uint64_t cseq;			/* messages sent after HELLO */
	struct pend { uint64_t cseq, events; } *pend;	/* a ring */
	size_t phead, plen, pcap;
	uint64_t given, stored;		/* events of the PACKETs sent, written */
	bool untracked;			/* no PROGRESS came (an older relay): the
					 * ring was given up */
	bool acked, cut_counted;
	int cut;			/* the status of the relay's cut (-errno) */
	uint8_t in[RELAY_HDR_LEN + 4 + 256 + 8];	/* replies being read */
	size_t inlen;
};

/* Unconfirmed PACKETs kept at most: a relay that sends PROGRESS keeps
 * them to what the sockets hold; one that sends none is older. */
#define PEND_MAX 65536

static struct relay_dest *rd_of(struct trawl_ctf_dest *d)
{
	return (struct relay_dest *)d;
}

/* Gives a connected socket (tr_net_connect) the options of a producer's:
 * blocking, and sends that fail within seconds. fd, or -errno (then fd
 * is closed). */
static int producer_socket(int fd)
{
	int ret;
	/* blocking from now on: the writer's sends wait for the network */
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		ret = -errno;
		goto err;
	}
	/* a relay that stops reading, or a network that swallows everything,
	 * fails the sends within seconds instead of stalling the recorder */
	int one = 1, idle = 10, intvl = 5, cnt = 3;
	unsigned user_ms = RELAY_SEND_TIMEOUT_MS;
	struct timeval tv = { RELAY_SEND_TIMEOUT_MS / 1000, 0 };
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
	setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_ms, sizeof(user_ms));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	return fd;
err:
	close(fd);
	return ret;
}

/* Reads one WELCOME or ACK: its status, the relay's message in msg. With
 * nonce, a CHALLENGE may come instead of the WELCOME: 1, its nonce there.
 * With proof, a PROOF may: 2, the relay's MAC there. */
static int read_reply(int fd, enum relay_type want, int64_t deadline, char *msg, size_t msglen,
		      uint8_t *nonce, uint8_t *proof, uint32_t *granted)
{
	uint8_t hdr[RELAY_HDR_LEN];
	int ret = tr_net_read_full(fd, hdr, sizeof(hdr), deadline);
	if (ret)
		return ret;
	uint32_t plen = get_le32(hdr + 4);
	if (proof && get_le32(hdr) == RELAY_PROOF && plen == RELAY_PROOF_LEN) {
		if ((ret = tr_net_read_full(fd, proof, RELAY_PROOF_LEN, deadline)))
			return ret;
		return 2;
	}
	if (nonce && get_le32(hdr) == RELAY_CHALLENGE && plen == RELAY_CHALLENGE_LEN) {
		uint8_t c[RELAY_CHALLENGE_LEN];
		if ((ret = tr_net_read_full(fd, c, sizeof(c), deadline)))
			return ret;
		if (get_le32(c) != RELAY_AUTH_VERSION) {
			snprintf(msg, msglen, "a challenge of version %u (this producer speaks %d)",
				 get_le32(c), RELAY_AUTH_VERSION);
			return -EPROTONOSUPPORT;
		}
		memcpy(nonce, c + 4, AUTH_NONCE_LEN);
		return 1;
	}
	if (get_le32(hdr) != want || plen > 4096 || plen < 5)
		return -EPROTO;
	uint8_t buf[RELAY_HDR_LEN + 4096];
	memcpy(buf, hdr, sizeof(hdr));
	ret = tr_net_read_full(fd, buf + RELAY_HDR_LEN, plen, deadline);
	if (ret)
		return ret;
	struct relay_msg m;
	char perr[128];
	if (tr_relay_msg_parse(buf, RELAY_HDR_LEN + plen, &m, perr, sizeof(perr)) <= 0)
		return -EPROTO;
	snprintf(msg, msglen, "%s", m.u.welcome.msg);
	if (granted)
		*granted = m.u.welcome.granted;
	return m.u.welcome.status > 0 ? -EPROTO : m.u.welcome.status;
}

/* Under rd->mu: the PACKETs of the connection's first n messages are
 * written. */
static void confirm(struct relay_dest *rd, uint64_t n)
{
	while (rd->plen && rd->pend[rd->phead].cseq <= n) {
		rd->stored += rd->pend[rd->phead].events;
		rd->phead = (rd->phead + 1) % rd->pcap;
		rd->plen--;
	}
}

/* Under rd->mu: a PACKET of events sent as the connection's cseq-th
 * message, kept until the relay says it is written. */
static void pend_add(struct relay_dest *rd, uint64_t events)
{
	rd->given += events;
	if (!events || rd->untracked)
		return;
	if (rd->plen == rd->pcap) {
		size_t n = rd->pcap ? rd->pcap * 2 : 64;
		struct pend *p = n <= PEND_MAX ? malloc(n * sizeof(*p)) : NULL;
		if (!p) {
			/* a relay that never says: not counted any more */
			rd->untracked = true;
			free(rd->pend);
			rd->pend = NULL;
			rd->phead = rd->plen = rd->pcap = 0;
			return;
		}
		for (size_t i = 0; i < rd->plen; i++)
			p[i] = rd->pend[(rd->phead + i) % rd->pcap];
		free(rd->pend);
		rd->pend = p;
		rd->phead = 0;
		rd->pcap = n;
	}
	rd->pend[(rd->phead + rd->plen++) % rd->pcap] = (struct pend){ rd->cseq, events };
}

/*
 * Under rd->mu: reads what the relay said, waiting until deadline (0: not
 * at all) for an ACK: PROGRESS (the PACKETs it wrote are forgotten), an
 * ACK of CLOSE (all written), or an ACK with an error (the relay cut the
 * trace off: the disk full, a quota, its buffers, its descriptors), whose
 * status is kept with its reason for rd_why and the messages it wrote
 * (before, the producer saw only "Connection reset by peer" or "Broken
 * pipe"). Returns the ACK's status (0 or -errno), 1 when none came, or
 * -errno of the connection with none.
 */
static int read_replies(struct relay_dest *rd, int64_t deadline)
{
	for (;;) {
		size_t off = 0;
		for (;;) {
			struct relay_msg m;
			char perr[128];
			ssize_t k = tr_relay_msg_parse(rd->in + off, rd->inlen - off, &m, perr,
						       sizeof(perr));
			if (k == 0 && rd->inlen - off == sizeof(rd->in))
				k = -EPROTO;
			if (k < 0 || (k > 0 && m.type != RELAY_PROGRESS && m.type != RELAY_ACK &&
				      m.type != RELAY_HORIZON)) {
				rd->inlen = 0;
				return -EPROTO;	/* not what a relay says */
			}
			if (k == 0)
				break;
			off += (size_t)k;
			if (m.type == RELAY_HORIZON)
				continue;	/* an ask: this sender has no loop to wake */
			if (m.type == RELAY_PROGRESS) {
				confirm(rd, m.u.progress.written);
				continue;
			}
			if (m.u.ack.status >= 0) {
				rd->acked = true;
				rd->stored = rd->given;	/* everything is written */
				rd->plen = 0;
				rd->inlen = 0;
				return 0;
			}
			/* a cut that says where: what came before is written */
			if (m.u.ack.counted && !rd->untracked) {
				confirm(rd, m.u.ack.written);
				rd->cut_counted = true;
			}
			snprintf(rd->why, sizeof(rd->why), "%s", m.u.ack.msg);
			rd->cut = m.u.ack.status;
			rd->inlen = 0;
			return rd->cut;
		}
		memmove(rd->in, rd->in + off, rd->inlen - off);
		rd->inlen -= off;
		if (deadline) {
			int64_t left = deadline - tr_mono_ms();
			if (left <= 0)
				return -ETIMEDOUT;
			struct pollfd p = { .fd = rd->fd, .events = POLLIN };
			int n = poll(&p, 1, (int)left);
			if (n < 0 && errno != EINTR)
				return -errno;
			if (n <= 0)
				continue;
		}
		/* without a deadline: one system call, nothing waited for */
		ssize_t got = recv(rd->fd, rd->in + rd->inlen, sizeof(rd->in) - rd->inlen,
				   MSG_DONTWAIT);
		if (got == 0)
			return -ECONNRESET;
		if (got < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		if (got < 0 && !deadline)
			return 1;
		if (got > 0)
			rd->inlen += (size_t)got;
	}
}

/*
 * A send to the relay failed with err: when the relay said why it cut the
 * trace off before it closed (an ACK with a status and its reason), that
 * status is the error and the reason is kept for rd_why. Reads what is
 * there, without waiting. Under rd->mu.
 */
static int relay_reason(struct relay_dest *rd, int err)
{
	if (rd->fd < 0)
		return err;
	if (!rd->cut)
		read_replies(rd, 0);
	return rd->cut ? rd->cut : err;
}

/* Sends one message (a PACKET's events, else 0): through the queue when
 * there is one (a stalled relay then does not hold up the writer's local
 * files). 0 or -errno. */
static int put(struct relay_dest *rd, const void *hdr, size_t hlen, const void *body,
	       size_t blen, uint64_t events)
{
	/* the queue's thread blocks every signal: a relay gone gives it
	 * EPIPE, not SIGPIPE */
	if (rd->rs)
		return tr_rsend_put(rd->rs, hdr, hlen, body, blen, events);
	pthread_mutex_lock(&rd->mu);
	/* cut off already (its ACK read with a PROGRESS): nothing more */
	int ret = rd->cut;
	if (!ret)
		ret = rd->q ? tr_ioq_write(rd->q, rd->fd, hdr, hlen, rd->fd, body, blen) :
		      tr_net_send2(rd->fd, hdr, hlen, body, blen);
	if (!ret) {
		rd->cseq++;
		pend_add(rd, events);
		/* the relay's PROGRESS, and its word if it cut the trace off:
		 * every 16 messages (a send that fails reads them at once) */
		if (!(rd->cseq % 16) && read_replies(rd, 0) < 0 && rd->cut)
			ret = rd->cut;
	} else {
		ret = relay_reason(rd, ret);
	}
	pthread_mutex_unlock(&rd->mu);
	return ret;
}

/*
 * rd's credential (docs/auth.md) into *cred for a HELLO of host: 1 when
 * there is one (wipe it after use), 0 when none, -errno with err set when
 * it cannot serve (unreadable, a viewer's, another host's node key).
 */
static int load_cred(struct relay_dest *rd, const char *hostname, struct auth_cred *cred,
		     char *err, size_t errlen)
{
	char cerr[300];
	int ret;
	if (!rd->secret_file)
		return 0;
	if ((ret = tr_auth_ready(cerr, sizeof(cerr))) < 0)
		return tr_seterr(err, errlen, -ret, "relay %s: %s", rd->addr, cerr);
	if ((ret = tr_auth_load(rd->secret_file, cred, cerr, sizeof(cerr))) < 0)
		return tr_seterr(err, errlen, -ret, "relay %s: secret file %s", rd->addr, cerr);
	if (cred->kind == AUTH_VIEWER)
		ret = tr_seterr(err, errlen, EACCES, "relay %s: secret file %s: a viewer's "
				"credential, which cannot write (a node's or the cluster's is "
				"needed)", rd->addr, rd->secret_file);
	else if (cred->kind == AUTH_NODE && strcmp(cred->host, hostname) != 0)
		ret = tr_seterr(err, errlen, EACCES, "relay %s: secret file %s: the node key of "
				"host %s, not of this host (%s)", rd->addr, rd->secret_file,
				cred->host, hostname);
	if (ret < 0) {
		tr_auth_wipe(cred);
		return ret;
	}
	return 1;
}

/*
 * Connects to the relay and says rd's HELLO: the socket once WELCOMEd
 * (then *meta_len, from the RESUMED a resumable producer gets), or -errno
 * with the reason in err; *refused when the relay said no (a WELCOME with
 * an error), not when it could not be reached. A relay with a secret
 * challenges the HELLO: the credential's proof answers (every connection:
 * a resume proves itself again).
 */
static int connect_hello(struct relay_dest *rd, int timeout, uint64_t *meta_len, int *refused,
			 char *err, size_t errlen)
{
	int64_t deadline = tr_mono_ms() + timeout;
	char gai[128] = "";
	*refused = 0;
	const uint8_t *h = (const uint8_t *)rd->hello + RELAY_HDR_LEN + 32;
	const char *session = (const char *)h, *host = session + strlen(session) + 1;
	struct auth_cred cred = { 0 };
	int auth = load_cred(rd, host, &cred, err, errlen);
	if (auth < 0) {
		*refused = 1;	/* no use trying again */
		return auth;
	}
	int fd = tr_net_connect(rd->host, rd->port, deadline, gai, sizeof(gai));
	if (fd >= 0)
		fd = producer_socket(fd);
	if (fd < 0) {
		if (auth)
			tr_auth_wipe(&cred);
		if (gai[0])
			return tr_seterr(err, errlen, -fd, "relay %s: %s", rd->addr, gai);
		return tr_seterr(err, errlen, -fd, "relay %s: cannot connect: %s", rd->addr,
			      strerror(-fd));
	}
	char msg[256] = "";
	uint32_t granted = 0;
	uint8_t nonce[AUTH_NONCE_LEN], am[RELAY_HDR_LEN + RELAY_AUTH_LEN], proof[RELAY_PROOF_LEN];
	const char *impostor = NULL;
	int ret = tr_net_send2(fd, rd->hello, rd->hello_len, NULL, 0);
	if (!ret)
		ret = read_reply(fd, RELAY_WELCOME, deadline, msg, sizeof(msg), auth ? nonce : NULL,
				 NULL, &granted);
	/* a relay with a secret challenges, then proves the same secret
	 * (docs/auth.md): with a credential, a WELCOME without both is not
	 * the relay of this secret, and gets no trace */
	if (auth && ret == 0)
		impostor = "it asked no proof (a relay without a secret, or not the relay "
			   "of this secret)";
	if (ret == 1 && !(ret = tr_auth_put(&cred, AUTH_ROLE_PRODUCER, nonce, rd->hello,
					    rd->hello_len, am)) &&
	    !(ret = tr_net_send2(fd, am, sizeof(am), NULL, 0))) {
		ret = read_reply(fd, RELAY_WELCOME, deadline, msg, sizeof(msg), NULL, proof,
				 &granted);
		if (ret == 0)
			impostor = "a WELCOME without its proof";
		else if (ret == 2 && !tr_auth_relay_check(cred.key, AUTH_ROLE_PRODUCER,
							  (uint32_t)cred.kind, nonce,
							  am + RELAY_HDR_LEN + 4, rd->hello,
							  rd->hello_len, proof))
			impostor = "its proof is wrong";
		else if (ret == 2)
			ret = read_reply(fd, RELAY_WELCOME, deadline, msg, sizeof(msg), NULL, NULL,
					 &granted);
	}
	if (auth)
		tr_auth_wipe(&cred);
	if (impostor) {
		*refused = 1;
		tr_seterr(err, errlen, EACCES, "relay %s did not prove it holds the secret of %s: "
			  "%s; nothing sent to it", rd->addr, rd->secret_file, impostor);
		ret = -EACCES;
		goto err;
	}
	if (ret == -EPIPE || ret == -ECONNRESET) {
		tr_seterr(err, errlen, -ret, "relay %s: %s", rd->addr, strerror(-ret));
		goto err;
	}
	if (ret) {
		if (*msg) {
			/* the relay's words as they are: escaped where printed */
			*refused = 1;
			tr_seterr(err, errlen, -ret, "relay %s refused %s/%s/%s: %s", rd->addr,
				  session, host, host + strlen(host) + 1, msg);
		} else {
			tr_seterr(err, errlen, -ret, "relay %s: no welcome: %s", rd->addr,
				  ret == -EPROTO ? "not a trawl relay" : strerror(-ret));
		}
		goto err;
	}
	*meta_len = 0;
	__atomic_store_n(&rd->horizon_ok, rd->horizon && (granted & RELAY_HELLO_HORIZON),
			 __ATOMIC_RELAXED);
	if (rd->resume_ms) {
		uint8_t b[RELAY_HDR_LEN + 8];
		struct relay_msg m;
		char perr[128];
		ret = tr_net_read_full(fd, b, sizeof(b), deadline);
		if (!ret && (tr_relay_msg_parse(b, sizeof(b), &m, perr, sizeof(perr)) <= 0 ||
			     m.type != RELAY_RESUMED))
			ret = -EPROTO;
		if (ret) {
			tr_seterr(err, errlen, -ret, "relay %s: no RESUMED after the WELCOME: %s",
				  rd->addr, strerror(-ret));
			goto err;
		}
		*meta_len = m.u.resumed.meta_len;
	}
	return fd;
err:
	close(fd);
	return ret;
}

/* The sender's way back (reconnect.h). */
static int rehello(void *arg, uint64_t *meta_len, int *refused, char *err, size_t errlen)
{
	struct relay_dest *rd = arg;
	return connect_hello(rd, rd->timeout_ms > 0 ? rd->timeout_ms : 5000, meta_len, refused,
			     err, errlen);
}

static int rd_open(struct trawl_ctf_dest *d, const struct ctf_dest_trace *t, char *err,
		   size_t errlen)
{
	struct relay_dest *rd = rd_of(d);
	const char *session = rd->session ? rd->session : "trawl";
	const char *trace = rd->trace ? rd->trace : t->domain ? t->domain : "ust";
	const char *hostname = t->hostname ? t->hostname : "";
	char host[256];
	unsigned p;
	int timeout = rd->timeout_ms > 0 ? rd->timeout_ms : 5000;
	int ret;

	if (rd->fd >= 0 || rd->rs)
		return tr_seterr(err, errlen, EBUSY, "relay %s: opened twice", rd->addr);
	if (tr_net_split_addr(rd->addr, host, sizeof(host), &p, RELAY_DATA_PORT) < 0)
		return tr_seterr(err, errlen, EINVAL, "relay address '%s': expected HOST[:PORT]",
			      rd->addr);
	if (!tr_relay_name_ok(session) || !tr_relay_name_ok(hostname) || !tr_relay_name_ok(trace))
		return tr_seterr(err, errlen, EINVAL,
			      "relay: session, host and trace names must be of [A-Za-z0-9._-], "
			      "not starting with '.' or '-' ('%s', '%s', '%s')", session, hostname,
			      trace);
	if (strlen(hostname) > RELAY_HOST_MAX)
		return tr_seterr(err, errlen, ENAMETOOLONG,
			      "relay: host name longer than %d bytes (live viewers could not name it)",
			      RELAY_HOST_MAX);
	size_t ls = strlen(session) + 1, lh = strlen(hostname) + 1, lt = strlen(trace) + 1;
	size_t plen = 4 + 4 + 8 + 16 + ls + lh + lt;
	uint8_t *b = calloc(1, RELAY_HDR_LEN + plen);
	if (!b)
		return tr_seterr(err, errlen, ENOMEM, "relay: out of memory");
	relay_put_hdr(b, RELAY_HELLO, (uint32_t)plen);
	uint8_t *q = b + RELAY_HDR_LEN;
	put_le32(q, RELAY_VERSION);
	/* DEMAND is read by the resumable sender's thread only */
	put_le32(q + 4, (rd->secret_file ? RELAY_HELLO_AUTH : 0) |
			(rd->resume_ms ? RELAY_HELLO_RESUME : 0) |
			(rd->resume_ms && rd->demand ? RELAY_HELLO_DEMAND : 0) |
			(rd->horizon ? RELAY_HELLO_HORIZON : 0) | RELAY_HELLO_COUNT);
	put_le64(q + 8, rd->live_timer_us);
	if (t->uuid)
		memcpy(q + 16, t->uuid, 16);
	q += 32;
	memcpy(q, session, ls);
	memcpy(q + ls, hostname, lh);
	memcpy(q + ls + lh, trace, lt);
	free(rd->hello);
	rd->hello = (char *)b;
	rd->hello_len = RELAY_HDR_LEN + plen;
	snprintf(rd->host, sizeof(rd->host), "%s", host);
	rd->port = p;
	uint64_t meta_len;
	int refused;
	int fd = connect_hello(rd, timeout, &meta_len, &refused, err, errlen);
	if (fd < 0)
		return fd;
	if (rd->resume_ms) {
		/* its own sender, which comes back when cut off */
		const struct rsend_opts so = {
			.budget = t->io_queue ? t->io_queue : (size_t)16 << 20, .fd = fd,
			.hello = rehello, .arg = rd, .resume_ms = rd->resume_ms, .addr = rd->addr,
			.on_demand = rd->demand ? rd->on_demand : NULL, .demand_arg = rd->demand_arg,
		};
		if (!(rd->rs = tr_rsend_new(&so))) {
			ret = tr_seterr(err, errlen, errno, "relay: %s", strerror(errno));
			goto err;
		}
		return 0;
	}
	/* its own queue: a stalled relay does not hold up the local files */
	if (t->io_queue && !(rd->q = tr_ioq_new(t->io_queue))) {
		ret = tr_seterr(err, errlen, errno, "relay: %s", strerror(errno));
		goto err;
	}
	rd->fd = fd;
	return 0;
err:
	close(fd);
	return ret;
}

static int rd_metadata(struct trawl_ctf_dest *d, const char *text, size_t len)
{
	if (len > RELAY_MSG_MAX)
		return -EMSGSIZE;
	uint8_t hdr[RELAY_HDR_LEN];
	relay_put_hdr(hdr, RELAY_METADATA, (uint32_t)len);
	return put(rd_of(d), hdr, sizeof(hdr), text, len, 0);
}

static int rd_stream(struct trawl_ctf_dest *d, uint32_t handle, uint32_t cpu, uint64_t class_id,
		     const char *name)
{
	size_t nl = strlen(name) + 1;
	uint8_t m[RELAY_HDR_LEN + 16 + RELAY_NAME_MAX + 1];
	if (nl > RELAY_STREAM_NAME_MAX + 1)
		return -ENAMETOOLONG;
	relay_put_hdr(m, RELAY_STREAM, (uint32_t)(16 + nl));
	put_le32(m + RELAY_HDR_LEN, handle);
	put_le32(m + RELAY_HDR_LEN + 4, cpu);
	put_le64(m + RELAY_HDR_LEN + 8, class_id);
	memcpy(m + RELAY_HDR_LEN + 16, name, nl);
	return put(rd_of(d), m, RELAY_HDR_LEN + 16 + nl, NULL, 0, 0);
}

static int rd_packet(struct trawl_ctf_dest *d, uint32_t handle, const struct ctf_index *ix,
		     const void *pkt, size_t size)
{
	uint8_t m[RELAY_HDR_LEN + RELAY_INDEX_LEN];
	if (size > RELAY_MSG_MAX - RELAY_INDEX_LEN)
		return -EMSGSIZE;
	relay_put_hdr(m, RELAY_PACKET, (uint32_t)(RELAY_INDEX_LEN + size));
	tr_relay_put_index(m + RELAY_HDR_LEN, handle, ix);
	return put(rd_of(d), m, sizeof(m), pkt, size, ix->events);
}

static int rd_beacon(struct trawl_ctf_dest *d, uint32_t handle, uint64_t ts)
{
	uint8_t m[RELAY_HDR_LEN + 16];
	relay_put_hdr(m, RELAY_BEACON, 16);
	put_le32(m + RELAY_HDR_LEN, handle);
	put_le32(m + RELAY_HDR_LEN + 4, 0);
	put_le64(m + RELAY_HDR_LEN + 8, ts);
	return put(rd_of(d), m, sizeof(m), NULL, 0, 0);
}

/* HORIZON, to a relay that granted it (an older one takes none). */
static int rd_horizon(struct trawl_ctf_dest *d, uint64_t ts, int later)
{
	struct relay_dest *rd = rd_of(d);
	if (!__atomic_load_n(&rd->horizon_ok, __ATOMIC_RELAXED))
		return 0;
	uint8_t m[RELAY_HDR_LEN + RELAY_HORIZON_LEN];
	relay_put_hdr(m, RELAY_HORIZON, RELAY_HORIZON_LEN);
	put_le64(m + RELAY_HDR_LEN, ts);
	if (later && rd->rs)
		return tr_rsend_put_later(rd->rs, m, sizeof(m));
	return put(rd, m, sizeof(m), NULL, 0, 0);
}

/* Everything queued goes out, then CLOSE; waits for the ACK. */
static int rd_close(struct trawl_ctf_dest *d)
{
	struct relay_dest *rd = rd_of(d);
	char msg[256];
	if (rd->rs)
		return tr_rsend_close(rd->rs, msg, sizeof(msg));
	if (rd->fd < 0)
		return -EBADF;
	int ret = tr_ioq_free(rd->q);
	rd->q = NULL;
	pthread_mutex_lock(&rd->mu);
	if (ret)
		ret = relay_reason(rd, ret);
	uint8_t hdr[RELAY_HDR_LEN];
	relay_put_hdr(hdr, RELAY_CLOSE, 0);
	if (!ret && !(ret = rd->cut) && !(ret = tr_net_send2(rd->fd, hdr, sizeof(hdr), NULL, 0)))
		ret = read_replies(rd, tr_mono_ms() + 10000);
	else if (ret && ret != rd->cut)
		ret = relay_reason(rd, ret);
	if (ret == 1)
		ret = -EPROTO;
	pthread_mutex_unlock(&rd->mu);
	(void)msg;
	return ret;
}

static void rd_free(struct trawl_ctf_dest *d)
{
	struct relay_dest *rd = rd_of(d);
	/* after an error, the queue's thread stopped writing at it */
	tr_ioq_free(rd->q);
	tr_rsend_free(rd->rs);
	if (rd->fd >= 0)
		close(rd->fd);
	free(rd->hello);
	free(rd->addr);
	free(rd->session);
	free(rd->trace);
	free(rd->secret_file);
	free(rd->pend);
	pthread_mutex_destroy(&rd->mu);
	free(rd);
}

static const char *rd_why(struct trawl_ctf_dest *d)
{
	struct relay_dest *rd = rd_of(d);
	return rd->rs ? tr_rsend_why(rd->rs) : rd->why;
}

static int64_t rd_demand(struct trawl_ctf_dest *d)
{
	return tr_rsend_demand(rd_of(d)->rs);
}

static bool rd_horizon_asked(struct trawl_ctf_dest *d)
{
	return tr_rsend_horizon_asked(rd_of(d)->rs);
}

static int rd_stored(struct trawl_ctf_dest *d, uint64_t *events)
{
	struct relay_dest *rd = rd_of(d);
	if (rd->rs)
		return tr_rsend_stored(rd->rs, events);
	pthread_mutex_lock(&rd->mu);
	*events = rd->stored;
	/* exact: all written (the ACK of CLOSE), or the relay said where it
	 * cut, or nothing sent is left unconfirmed */
	int ret = rd->acked || (!rd->untracked && (rd->cut_counted || !rd->plen)) ? 0 : -ENODATA;
	pthread_mutex_unlock(&rd->mu);
	return ret;
}

static const struct ctf_dest_ops relay_dest_ops = {
	.open = rd_open,
	.metadata = rd_metadata,
	.stream = rd_stream,
	.packet = rd_packet,
	.beacon = rd_beacon,
	.close = rd_close,
	.free = rd_free,
	.why = rd_why,
	.demand = rd_demand,
	.stored = rd_stored,
	.horizon = rd_horizon,
	.horizon_asked = rd_horizon_asked,
};

struct trawl_ctf_dest *trawl_relay_dest_new(const struct trawl_relay_dest_opts *o)
{
	struct trawl_relay_dest_opts opt = { 0 };
	if (!o || o->sz < offsetof(struct trawl_relay_dest_opts, session) + sizeof(char *) ||
	    !o->addr) {
		errno = EINVAL;
		return NULL;
	}
	memcpy(&opt, o, o->sz < sizeof(opt) ? o->sz : sizeof(opt));
	struct relay_dest *rd = calloc(1, sizeof(*rd));
	if (!rd)
		return NULL;
	rd->d.ops = &relay_dest_ops;
	rd->fd = -1;
	pthread_mutex_init(&rd->mu, NULL);
	rd->live_timer_us = opt.live_timer_us;
	rd->timeout_ms = opt.timeout_ms;
	rd->resume_ms = opt.resume_ms;
	rd->demand = opt.live_demand;
	rd->on_demand = opt.on_demand;
	rd->demand_arg = opt.demand_arg;
	rd->horizon = opt.horizon;
	/* the credential: the option's, else the environment's */
	const char *secret = opt.secret_file;
	if (!secret && (secret = getenv("TRAWL_SECRET_FILE")) && !*secret)
		secret = NULL;
	if (!(rd->addr = strdup(opt.addr)) || (opt.session && !(rd->session = strdup(opt.session))) ||
	    (opt.trace && !(rd->trace = strdup(opt.trace))) ||
	    (secret && !(rd->secret_file = strdup(secret)))) {
		rd_free(&rd->d);
		errno = ENOMEM;
		return NULL;
	}
	return &rd->d;
}
