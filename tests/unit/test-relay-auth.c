/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test-relay-auth.c - the library's two ends of the relay's
 * authentication (docs/auth.md), in one process: a relay embedded with a
 * secret (trawl_relay_opts.secret_file), CTF writers streaming to it with
 * credentials (trawl_relay_dest_opts.secret_file, TRAWL_SECRET_FILE), and
 * trawl's live client proving a viewer's. Checks: host h0's node key
 * writes h0's trace and the session is listed to a viewer holding the
 * viewer key or the cluster secret; h1's node key cannot stream as h0 (the
 * producer says so before connecting), a viewer key cannot write, a
 * writer without a credential gets the relay's reason; a node key cannot
 * read, a wrong secret is refused with the relay's reason, and a viewer
 * without a proof is closed (a node key is not even sent: the viewer says
 * it cannot read); the relay logs the refusals.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <trawl/ctf.h>
#include <trawl/relay.h>

#include "tap.h"
#include "internal.h"
#include "net/auth.h"
#include "net/live-client.h"
#include "net/relay-proto.h"	/* tr_net_split_addr */

#define BAIL_OUT(...) do { printf("Bail out! "); printf(__VA_ARGS__); printf("\n"); \
			   exit(1); } while (0)

static char trash[64];
#define path(...) tap_path(trash, __VA_ARGS__)

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static char logbuf[8192];
static size_t loglen;

static void hear(void *arg, int level, const char *msg)
{
	(void)arg;
	(void)level;
	pthread_mutex_lock(&mu);
	int n = snprintf(logbuf + loglen, sizeof(logbuf) - loglen, "%s\n", msg);
	if (n > 0 && (size_t)n < sizeof(logbuf) - loglen)
		loglen += (size_t)n;
	pthread_mutex_unlock(&mu);
}

static bool heard(const char *what)
{
	pthread_mutex_lock(&mu);
	bool y = strstr(logbuf, what) != NULL;
	pthread_mutex_unlock(&mu);
	return y;
}

static void *run(void *arg)
{
	trawl_relay_run(arg);
	return NULL;
}

/* c written to a new file name (mode 600); returns its path (a copy). */
static char *save(const struct auth_cred *c, const char *name)
{
	char line[200];
	char *p = strdup(path("%s", name));
	int n = tr_auth_format(c, line, sizeof(line));
	int fd = p && n > 0 ? open(p, O_WRONLY | O_CREAT | O_EXCL, 0600) : -1;
	if (fd < 0 || write(fd, line, (size_t)n) != n)
		BAIL_OUT("cannot write %s", name);
	close(fd);
	return p;
}

/* A writer of host host streaming session "s" trace trace to data with
 * the credential file secret (NULL: TRAWL_SECRET_FILE, if any); NULL
 * with the reason in err when refused. */
static struct trawl_ctf_writer *writer(const char *data, const char *secret, const char *host,
				       const char *trace, char *err, size_t errlen)
{
	struct trawl_relay_dest_opts d = { .sz = sizeof(d), .addr = data, .session = "s",
					   .trace = trace, .secret_file = secret };
	struct trawl_ctf_dest *dest = trawl_relay_dest_new(&d);
	struct trawl_ctf_writer_opts o = {
		.sz = sizeof(o), .hostname = host, .domain = "ust", .packet_size = 4096,
		.dest = dest, .err = err, .errlen = errlen,
	};
	err[0] = 0;
	struct trawl_ctf_writer *w = dest ? trawl_ctf_writer_new(&o) : NULL;
	if (!w)
		return NULL;
	struct trawl_ctf_stream_class *sc = trawl_ctf_writer_stream_class(w,
							TRAWL_CTF_HEADER_LARGE, NULL);
	if (!sc || !trawl_ctf_writer_stream(w, sc, "channel0", 0)) {
		trawl_ctf_writer_free(w);
		return NULL;
	}
	return w;
}

/* Connects a viewer with the credential file secret (NULL: none) and
 * lists: the sessions' "HOST/NAME" joined by spaces in out, or "refused:
 * REASON" / "error: REASON". */
static void view(const char *live, const char *secret, char *out, size_t len)
{
	char host[64], err[400];
	unsigned port;
	if (secret)
		setenv("TRAWL_SECRET_FILE", secret, 1);
	else
		unsetenv("TRAWL_SECRET_FILE");
	tr_net_split_addr(live, host, sizeof(host), &port, 0);
	struct live_client *c = tr_live_client_connect(host, (uint16_t)port, 5000, err, sizeof(err));
	unsetenv("TRAWL_SECRET_FILE");
	if (!c) {
		snprintf(out, len, "%s: %s", errno == EACCES ? "refused" : "error", err);
		return;
	}
	struct live_session_info *s = NULL;
	size_t n = 0;
	out[0] = 0;
	if (tr_live_client_list(c, &s, &n) < 0)
		snprintf(out, len, "error: %s", tr_live_client_errmsg(c));
	for (size_t i = 0; i < n; i++)
		snprintf(out + strlen(out), len - strlen(out), "%s%s/%s", i ? " " : "",
			 s[i].hostname, s[i].name);
	free(s);
	tr_live_client_free(c);
}

int main(void)
{
	char why[256], err[512], got[600];
	if (tr_auth_ready(why, sizeof(why)) < 0) {
		printf("1..0 # SKIP %s\n", why);
		return 0;
	}
	snprintf(trash, sizeof(trash), "/tmp/test-relay-auth-%d", (int)getpid());
	if (tr_mkdir_p(trash) < 0)
		BAIL_OUT("mkdir %s", trash);
	unsetenv("TRAWL_SECRET_FILE");
	struct auth_cred cl = { .kind = AUTH_CLUSTER }, other = { .kind = AUTH_CLUSTER }, d;
	if (tr_auth_nonce(cl.key) < 0 || tr_auth_nonce(other.key) < 0)
		BAIL_OUT("no random bytes");
	char *cluster = save(&cl, "cluster.key"), *wrong = save(&other, "other.key");
	tr_auth_derive(&cl, AUTH_NODE, "h0", &d);
	char *n0 = save(&d, "h0.key");
	tr_auth_derive(&cl, AUTH_NODE, "h1", &d);
	char *n1 = save(&d, "h1.key");
	tr_auth_derive(&cl, AUTH_VIEWER, NULL, &d);
	char *vk = save(&d, "viewer.key");

	struct trawl_relay_opts ro = {
		.sz = sizeof(ro), .output = path("out"), .data_addr = "127.0.0.1:0",
		.live_addr = "127.0.0.1:0", .secret_file = cluster, .log = hear,
	};
	struct trawl_relay *r = trawl_relay_new(&ro, err, sizeof(err));
	if (!r)
		BAIL_OUT("relay: %s", err);
	ok(trawl_relay_live_open_addr(r) == NULL, "no open live port unless asked");
	char data[300], live[300];
	snprintf(data, sizeof(data), "%s", trawl_relay_data_addr(r));
	snprintf(live, sizeof(live), "%s", trawl_relay_live_addr(r));
	pthread_t th;
	if (pthread_create(&th, NULL, run, r))
		BAIL_OUT("pthread_create");

	struct trawl_ctf_writer *w = writer(data, n0, "h0", "ust", err, sizeof(err));
	ok(w != NULL, "h0's node key streams h0's trace (%s)", err);
	view(live, vk, got, sizeof(got));
	is_str(got, "h0/s", "a viewer with the viewer key lists the session");
	view(live, cluster, got, sizeof(got));
	is_str(got, "h0/s", "so does one with the cluster secret");
	view(live, n0, got, sizeof(got));
	ok(strstr(got, "refused: ") && strstr(got, "a node's key, which cannot read"),
	   "a node key cannot read: %s", got);
	view(live, wrong, got, sizeof(got));
	ok(strstr(got, "refused: live relay refused the viewer: authentication failed: not "
			"this relay's cluster secret"), "a wrong secret: the relay's reason: %s", got);
	view(live, NULL, got, sizeof(got));
	/* closed without a word; the viewer finds out why (issue 27.13) */
	ok(strstr(got, "refused: ") == got && strstr(got, "requires a credential"),
	   "a viewer without a proof is closed, and told it needs a credential: %s", got);

	struct trawl_ctf_writer *w2 = writer(data, n1, "h0", "ust2", err, sizeof(err));
	ok(!w2 && strstr(err, "the node key of host h1, not of this host (h0)"),
	   "h1's node key does not stream as h0: %s", err);
	w2 = writer(data, vk, "h0", "ust2", err, sizeof(err));
	ok(!w2 && strstr(err, "a viewer's credential, which cannot write"),
	   "a viewer key does not write: %s", err);
	w2 = writer(data, NULL, "h0", "ust2", err, sizeof(err));
	ok(!w2 && strstr(err, "this relay requires authentication"),
	   "without a credential, the relay's reason: %s", err);
	setenv("TRAWL_SECRET_FILE", cluster, 1);
	w2 = writer(data, NULL, "h1", "ust", err, sizeof(err));
	unsetenv("TRAWL_SECRET_FILE");
	ok(w2 != NULL, "TRAWL_SECRET_FILE gives a writer the cluster secret: it streams h1 (%s)", err);
	view(live, vk, got, sizeof(got));
	is_str(got, "h0/s h1/s", "both hosts' sessions are listed");

	ok(w && trawl_ctf_writer_close(w) == 0 && w2 && trawl_ctf_writer_close(w2) == 0,
	   "both traces complete (the relay's ACK)");
	trawl_ctf_writer_free(w);
	trawl_ctf_writer_free(w2);
	ok(heard("refused: a HELLO without a credential") &&
	   heard("viewer 127.0.0.1") && heard("refused: authentication failed: not this relay's "
						    "cluster secret") &&
	   heard("refused: a viewer without a credential"),
	   "the relay logged the refusals");
	trawl_relay_stop(r);
	pthread_join(th, NULL);
	trawl_relay_free(r);

	/* a relay refuses a secret file others can read, and starts nothing */
	chmod(cluster, 0644);
	ro.output = path("out2");
	r = trawl_relay_new(&ro, err, sizeof(err));
	ok(!r && errno == EPERM && strstr(err, "chmod 600") && access(path("out2"), F_OK) < 0,
	   "a relay refuses a secret others can read: %s", err);
	trawl_relay_free(r);
	free(cluster);
	free(wrong);
	free(n0);
	free(n1);
	free(vk);
	tap_rm_tree(trash);
	return done_testing();
}
