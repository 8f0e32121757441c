/* SPDX-License-Identifier: MIT */
/*
 * trawl probe: exchanges clock-sync probe messages (UDP) with peer nodes and
 * records them as sync points, DIR/HOST/sync/ (a CTF trace, see the sync
 * contract in docs/sync.md). The engine is the library's probe object
 * (<trawl/probe.h>, lib/sync/probe.c); this file has the options, the
 * [probe] settings, --show-config, the signals and the summary.
 *
 * SIGINT/SIGTERM stop the probe (trawl_probe_stop(), safe in a handler),
 * which then finalizes the trace (last packet, metadata, index).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "trawl/probe.h"
#include "cli.h"
#include "util/config.h"
#include "util/clock.h"

#define DEFAULT_RATE	100
#define MAX_RATE	TRAWL_PROBE_MAX_RATE
#define MAX_NAME	TRAWL_PROBE_MAX_NAME
#define MAX_PEERS	TRAWL_PROBE_MAX_PEERS

struct peer {
	char name[MAX_NAME + 1];
	char addr[256];			/* ADDR:PORT as given */
	const char *origin;		/* where it was set */
};

/* The settings in effect, each with where it came from. */
struct settings {
	const char *out;
	char host[MAX_NAME + 1];
	char listen[256];
	char listen_origin[320];
	unsigned rate;
	char rate_origin[320];
	struct peer *peers;
	size_t npeers;
	char peers_origin[320];
	double duration;		/* seconds; 0: until a signal */
	bool have_offset;
	int64_t clock_offset;		/* ns, epoch -> clock zero */
	bool force;
};

static volatile sig_atomic_t stop_signal;
static struct trawl_probe *volatile running;	/* what a signal stops */

static void on_signal(int sig)
{
	stop_signal = sig;
	if (running)
		trawl_probe_stop(running);
}

static void on_warning(void *arg, const char *msg)
{
	(void)arg;
	cli_warn("%s", msg);
}

/* ------------------------------------------------------------ options */

static void usage(FILE *f)
{
	fputs("usage: trawl probe -o DIR [--host NAME] [--listen ADDR:PORT] [--peer NAME=ADDR:PORT]...\n"
	      "                   [--rate N] [--duration SECONDS] [--clock-offset NS] [--force] [-q]\n"
	      "                   [--ready-fd N] [--relay HOST[:PORT] [--session NAME] [--live-timer MS]]\n"
	      "       trawl probe --show-config [options]\n"
	      "\n"
	      "Exchanges clock-synchronization probes (UDP) with peer nodes and records\n"
	      "every send and receive in DIR/NAME/sync/, a CTF trace on this node's\n"
	      "CLOCK_MONOTONIC, for 'trawl sync'. Run one on every node, until --duration\n"
	      "or SIGINT/SIGTERM; the trace is then finalized. Settings also come from the\n"
	      "[probe] section of the configuration (trawl.conf; the options win).\n"
	      "\n"
	      "  -o, --output DIR          the session directory; the trace goes to DIR/NAME/sync/\n"
	      "  -H, --host NAME           this node's name (default: the system's host name)\n"
	      "  -l, --listen ADDR:PORT    where to receive probes (default " TRAWL_PROBE_LISTEN ";\n"
	      "                            [ADDR]:PORT for IPv6)\n"
	      "  -p, --peer NAME=ADDR:PORT a peer to probe (repeatable; replaces the\n"
	      "                            configuration's peers)\n"
	      "  -r, --rate N              probes per second to each peer, 0..100000 (default\n"
	      "                            100; 0: only receive)\n"
	      "  -d, --duration SECONDS    stop after this long (default: at SIGINT/SIGTERM)\n"
	      "      --clock-offset NS     the trace clock's offset from the epoch, in ns\n"
	      "                            (default: CLOCK_REALTIME - CLOCK_MONOTONIC now)\n"
	      "  -f, --force               overwrite an existing DIR/NAME/sync/ trace\n"
	      "      --relay HOST[:PORT]   also stream the trace to a trawl relay (without -o:\n"
	      "                            only there), as SESSION/NAME/sync, live: a viewer\n"
	      "                            (trawl sync --live) has the probes within --live-timer\n"
	      "      --session NAME        the relay's session (default \"trawl\")\n"
	      "      --live-timer MS       how often the probes so far go to the relay (default 100)\n"
	      "      --secret-file FILE    the relay's credential (docs/auth.md; default:\n"
	      "                            TRAWL_SECRET_FILE)\n"
	      "  -q, --quiet               only errors and warnings on stderr\n"
	      "      --ready-fd N          once listening, write \"ready ADDR:PORT\\n\" (where it\n"
	      "                            listens) to descriptor N and close it\n"
	      "      --show-config         print the settings in effect and where each comes\n"
	      "                            from, then exit\n"
	      "  -h, --help                this help\n", f);
}


static int parse_uint(const char *s, uint64_t max, uint64_t *v)
{
	char *end;
	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return -1;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 10);
	if (errno || *end || x > max)
		return -1;
	*v = x;
	return 0;
}

/* "NAME=ADDR:PORT" (command line, sep '=') or "NAME ADDR:PORT" (settings). */
static int add_peer(struct settings *P, const char *spec, int sep, const char *origin,
		    char *why, size_t whylen)
{
	const char *s = spec;
	while (sep == ' ' && (*s == ' ' || *s == '\t'))
		s++;
	const char *e = sep == '=' ? strchr(s, '=') : strpbrk(s, " \t");
	if (!e) {
		snprintf(why, whylen, "'%s' is not %s", spec,
			 sep == '=' ? "NAME=ADDR:PORT" : "'NAME ADDR:PORT'");
		return -1;
	}
	char name[MAX_NAME + 2];
	size_t n = (size_t)(e - s);
	if (n > MAX_NAME) {
		snprintf(why, whylen, "peer name longer than %d characters in '%s'", MAX_NAME, spec);
		return -1;
	}
	memcpy(name, s, n);
	name[n] = 0;
	if (!trawl_probe_name_valid(name)) {
		snprintf(why, whylen, "bad peer name '%s' (letters, digits, '-', '_', '.')", name);
		return -1;
	}
	const char *addr = e + 1;
	while (sep == ' ' && (*addr == ' ' || *addr == '\t'))
		addr++;
	char a[256];
	snprintf(a, sizeof(a), "%s", addr);
	for (size_t k = strlen(a); sep == ' ' && k && (a[k - 1] == ' ' || a[k - 1] == '\t'); k--)
		a[k - 1] = 0;
	if (strpbrk(a, " \t")) {
		snprintf(why, whylen, "'%s' is not 'NAME ADDR:PORT'", spec);
		return -1;
	}
	for (size_t i = 0; i < P->npeers; i++)
		if (!strcmp(P->peers[i].name, name)) {
			snprintf(why, whylen, "peer '%s' given twice", name);
			return -1;
		}
	if (P->npeers >= MAX_PEERS) {
		snprintf(why, whylen, "more than %d peers", MAX_PEERS);
		return -1;
	}
	struct peer *np = realloc(P->peers, (P->npeers + 1) * sizeof(*np));
	if (!np) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	P->peers = np;
	struct peer *p = &np[P->npeers];
	memset(p, 0, sizeof(*p));
	memcpy(p->name, name, n + 1);
	snprintf(p->addr, sizeof(p->addr), "%s", a);
	p->origin = origin;
	/* resolved here for the message; trawl_probe_new() does it again */
	char w2[200];
	struct sockaddr_storage ss;
	socklen_t sl;
	if (trawl_probe_addr_parse(a, false, &ss, &sl, w2, sizeof(w2))) {
		snprintf(why, whylen, "peer %s: address '%s': %s", name, a, w2);
		return -1;
	}
	P->npeers++;
	return 0;
}

/* ------------------------------------------------------------ settings */

/* Applies the [probe] settings the command line did not give, then defaults. */
static int apply_config(struct settings *P, bool cli_listen, bool cli_rate, bool cli_peers)
{
	char err[600] = "", why[400];
	struct trawl_conf *c = tr_conf_load(err, sizeof(err));
	int ret = 0;

	if (!c)
		return cli_err("settings: %s", err);
	if (!cli_listen) {
		const char *v = tr_conf_get(c, "probe", "listen");
		if (v && *v) {
			if (strlen(v) >= sizeof(P->listen)) {
				ret = cli_err("listen = '%.40s...' (%s): too long", v,
					      tr_conf_origin(c, "probe", "listen"));
				goto out;
			}
			snprintf(P->listen, sizeof(P->listen), "%s", v);
			snprintf(P->listen_origin, sizeof(P->listen_origin), "%s",
				 tr_conf_origin(c, "probe", "listen"));
		} else {
			snprintf(P->listen, sizeof(P->listen), "%s", TRAWL_PROBE_LISTEN);
			snprintf(P->listen_origin, sizeof(P->listen_origin), "default");
		}
	}
	if (!cli_rate) {
		const char *v = tr_conf_get(c, "probe", "rate");
		uint64_t r;
		if (v) {
			if (parse_uint(v, MAX_RATE, &r)) {
				ret = cli_err("rate = '%s' (%s): not a number in 0..%d", v,
					      tr_conf_origin(c, "probe", "rate"), MAX_RATE);
				goto out;
			}
			P->rate = (unsigned)r;
			snprintf(P->rate_origin, sizeof(P->rate_origin), "%s",
				 tr_conf_origin(c, "probe", "rate"));
		} else {
			P->rate = DEFAULT_RATE;
			snprintf(P->rate_origin, sizeof(P->rate_origin), "default");
		}
	}
	if (!cli_peers) {
		const char *const *vals;
		size_t n = tr_conf_get_all(c, "probe", "peer", &vals);
		const char *origin = P->peers_origin;
		if (n)
			snprintf(P->peers_origin, sizeof(P->peers_origin), "%s",
				 tr_conf_origin(c, "probe", "peer"));
		for (size_t i = 0; i < n; i++) {
			/* one value may list several peers, separated by commas */
			char *copy = strdup(vals[i]), *save = NULL;
			if (!copy) {
				ret = cli_err("out of memory");
				goto out;
			}
			for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				bool blank = true;
				for (char *q = tok; *q; q++)
					blank = blank && (*q == ' ' || *q == '\t');
				if (blank)
					continue;
				if (add_peer(P, tok, ' ', origin, why, sizeof(why))) {
					ret = cli_err("peer = '%s' (%s): %s", vals[i], origin, why);
					free(copy);
					goto out;
				}
			}
			free(copy);
		}
	}
out:
	tr_conf_free(c);
	return ret;
}

static void show_config(const struct settings *P)
{
	printf("# trawl probe: the settings in effect, each after where it comes from\n"
	       "[probe]\n"
	       "# from: %s\n"
	       "listen = %s\n"
	       "# from: %s\n"
	       "rate = %u\n", P->listen_origin, P->listen, P->rate_origin, P->rate);
	if (P->npeers)
		printf("# from: %s\n", P->peers_origin);
	else
		printf("# no peers\n");
	for (size_t i = 0; i < P->npeers; i++)
		printf("peer = %s %s\n", P->peers[i].name, P->peers[i].addr);
}

int cmd_probe(int argc, char **argv)
{
	enum { OPT_OFFSET = 256, OPT_SHOW, OPT_READY, OPT_RELAY, OPT_SESSION, OPT_LIVE, OPT_SECRET };
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "host", required_argument, NULL, 'H' },
		{ "listen", required_argument, NULL, 'l' },
		{ "peer", required_argument, NULL, 'p' },
		{ "rate", required_argument, NULL, 'r' },
		{ "duration", required_argument, NULL, 'd' },
		{ "clock-offset", required_argument, NULL, OPT_OFFSET },
		{ "force", no_argument, NULL, 'f' },
		{ "show-config", no_argument, NULL, OPT_SHOW },
		{ "quiet", no_argument, NULL, 'q' },
		{ "ready-fd", required_argument, NULL, OPT_READY },
		{ "relay", required_argument, NULL, OPT_RELAY },
		{ "session", required_argument, NULL, OPT_SESSION },
		{ "live-timer", required_argument, NULL, OPT_LIVE },
		{ "secret-file", required_argument, NULL, OPT_SECRET },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct settings P = { 0 };
	bool cli_listen = false, cli_rate = false, cli_peers = false, show = false;
	const char **cli_peer_specs = NULL;
	size_t ncli_peers = 0;
	char why[400];
	uint64_t v;
	int c, ret = 0, ready_fd = -1;
	const char *relay = NULL, *session = NULL, *secret = NULL;
	uint64_t live_us = 0;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:H:l:p:r:d:fqh", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (!*optarg)
				return cli_usage("empty output directory");
			P.out = optarg;
			break;
		case 'H':
			if (!trawl_probe_name_valid(optarg))
				return cli_usage("--host: bad name '%s' (1..%d letters, digits, '-', '_', '.')",
						 optarg, MAX_NAME);
			snprintf(P.host, sizeof(P.host), "%s", optarg);
			break;
		case 'l':
			if (strlen(optarg) >= sizeof(P.listen) || !*optarg)
				return cli_usage("--listen: '%s' is not ADDR:PORT", optarg);
			snprintf(P.listen, sizeof(P.listen), "%s", optarg);
			snprintf(P.listen_origin, sizeof(P.listen_origin), "command line");
			cli_listen = true;
			break;
		case 'p': {
			const char **np = realloc(cli_peer_specs, (ncli_peers + 1) * sizeof(*np));
			if (!np)
				return cli_err("out of memory");
			cli_peer_specs = np;
			cli_peer_specs[ncli_peers++] = optarg;
			cli_peers = true;
			break;
		}
		case 'r':
			if (parse_uint(optarg, MAX_RATE, &v)) {
				free(cli_peer_specs);
				return cli_usage("--rate: '%s' is not a number in 0..%d", optarg, MAX_RATE);
			}
			P.rate = (unsigned)v;
			snprintf(P.rate_origin, sizeof(P.rate_origin), "command line");
			cli_rate = true;
			break;
		case 'd': {
			char *end;
			errno = 0;
			double d = strtod(optarg, &end);
			if (errno || end == optarg || *end || !isfinite(d) || d <= 0 || d > 1e9) {
				free(cli_peer_specs);
				return cli_usage("--duration: '%s' is not a number of seconds > 0", optarg);
			}
			P.duration = d;
			break;
		}
		case OPT_OFFSET: {
			char *end;
			errno = 0;
			long long x = strtoll(optarg, &end, 10);
			if (errno || end == optarg || *end) {
				free(cli_peer_specs);
				return cli_usage("--clock-offset: '%s' is not an integer (ns)", optarg);
			}
			P.clock_offset = x;
			P.have_offset = true;
			break;
		}
		case 'f':
			P.force = true;
			break;
		case OPT_SHOW:
			show = true;
			break;
		case 'q':
			cli_verbosity = -1;
			break;
		case OPT_READY:
			if ((ready_fd = cli_ready_fd_arg(optarg)) < 0) {
				free(cli_peer_specs);
				return cli_usage("--ready-fd: '%s' is not an open descriptor", optarg);
			}
			break;
		case OPT_RELAY:
			relay = optarg;
			break;
		case OPT_SESSION:
			session = optarg;
			break;
		case OPT_SECRET:
			secret = optarg;
			break;
		case OPT_LIVE:
			if (parse_uint(optarg, 3600000, &v) || !v) {
				free(cli_peer_specs);
				return cli_usage("--live-timer: '%s' is not a number of ms in 1..3600000",
						 optarg);
			}
			live_us = v * 1000;
			break;
		case 'h':
			free(cli_peer_specs);
			usage(stdout);
			return 0;
		default:
			free(cli_peer_specs);
			return cli_opt_error(c, argv);
		}
	}
	if (optind < argc) {
		free(cli_peer_specs);
		return cli_usage("unexpected argument '%s'", argv[optind]);
	}
	if (!P.out && !show && !relay) {
		free(cli_peer_specs);
		return cli_usage("no output directory (-o DIR) and no relay (--relay)");
	}
	if (!relay && (session || live_us || secret)) {
		free(cli_peer_specs);
		return cli_usage("--session, --live-timer and --secret-file are the relay's: they need --relay");
	}
	if (!P.host[0]) {
		char h[256] = "";
		if (gethostname(h, sizeof(h) - 1) < 0 || !trawl_probe_name_valid(h)) {
			free(cli_peer_specs);
			cli_err("the host name '%s' is not usable as a node name", h);
			cli_hint("give this node's name with --host NAME");
			return CLI_EXIT_FAILURE;
		}
		/* trawl_probe_name_valid() bounded it to MAX_NAME: the copy is whole */
		memcpy(P.host, h, strlen(h) + 1);
	}
	if (cli_peers)
		snprintf(P.peers_origin, sizeof(P.peers_origin), "command line");
	for (size_t i = 0; i < ncli_peers; i++)
		if (add_peer(&P, cli_peer_specs[i], '=', P.peers_origin, why, sizeof(why))) {
			free(cli_peer_specs);
			free(P.peers);
			return cli_usage("--peer: %s", why);
		}
	free(cli_peer_specs);

	struct trawl_probe_peer *peers = NULL;
	if ((ret = apply_config(&P, cli_listen, cli_rate, cli_peers)))
		goto out;
	for (size_t i = 0; i < P.npeers; i++) {
		if (strcmp(P.peers[i].name, P.host))
			continue;
		if (cli_peers) {
			ret = cli_usage("--peer: '%s' is this node", P.host);
			goto out;
		}
		/* one settings file can serve every node: each skips itself */
		memmove(&P.peers[i], &P.peers[i + 1], (P.npeers - i - 1) * sizeof(P.peers[0]));
		P.npeers--;
		break;
	}
	if (show) {
		show_config(&P);
		goto out;
	}
	/* the listen address here, for a message naming where it was set */
	struct sockaddr_storage ss;
	socklen_t sl;
	if (trawl_probe_addr_parse(P.listen, true, &ss, &sl, why, sizeof(why))) {
		ret = cli_err("listen address '%s' (%s): %s", P.listen, P.listen_origin, why);
		goto out;
	}
	peers = calloc(P.npeers ? P.npeers : 1, sizeof(*peers));
	if (!peers) {
		ret = cli_err("out of memory");
		goto out;
	}
	for (size_t i = 0; i < P.npeers; i++)
		peers[i] = (struct trawl_probe_peer){ .name = P.peers[i].name, .addr = P.peers[i].addr };
	struct trawl_probe_opts po = {
		.sz = sizeof(po),
		.dir = P.out,
		.host = P.host,
		.listen = P.listen,
		.peers = peers,
		.npeers = P.npeers,
		.rate = P.rate,
		.duration_ns = (int64_t)llround(P.duration * 1e9),
		.has_clock_offset = P.have_offset,
		.clock_offset = P.clock_offset,
		.force = P.force,
		.log = on_warning,
		.relay = relay,
		.session = session,
		.secret_file = secret,
		.live_timer_us = live_us,
	};
	char err[600] = "";
	struct trawl_probe *probe = trawl_probe_new(&po, err, sizeof(err));
	if (!probe) {
		ret = cli_err("%s", err);
		goto out;
	}

	/* SIGINT/SIGTERM stop the probe, which then finalizes the trace */
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART }, old_int, old_term;
	sigemptyset(&sa.sa_mask);
	running = probe;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);

	char laddr[300];
	trawl_probe_listen_addr(probe, laddr, sizeof(laddr));
	cli_note("%s listening on %s, probing %zu peer%s at %u/s", P.host, laddr, P.npeers,
		 P.npeers == 1 ? "" : "s", P.rate);
	if (!P.npeers)
		cli_warn("no peers (--peer or [probe] peer): only receiving");
	fflush(stderr);
	cli_ready(&ready_fd, "%s", laddr);	/* the socket is bound: probes are received */
	int64_t t0 = tr_clock_ns(CLOCK_MONOTONIC);
	if (trawl_probe_run(probe, err, sizeof(err)) < 0)
		ret = cli_err("%s", err);
	double secs = (double)(tr_clock_ns(CLOCK_MONOTONIC) - t0) / 1e9;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	running = NULL;

	struct trawl_probe_stats st;
	trawl_probe_stats(probe, &st);
	printf("trawl probe: %s: %" PRIu64 " probes sent to %zu peer%s (%" PRIu64 " failed), %" PRIu64
	       " received (%" PRIu64 " from unlisted nodes; %" PRIu64 " invalid, %" PRIu64
	       " misaddressed, %" PRIu64 " from itself, not recorded), %" PRIu64 " ticks late (not"
	       " sent), %.2f s%s, in %s%s%s%s%s%s%s\n",
	       P.host, st.sent, P.npeers, P.npeers == 1 ? "" : "s", st.send_failed, st.received,
	       st.from_unlisted, st.invalid, st.misaddressed, st.from_self, st.ticks_late, secs,
	       stop_signal ? " (stopped by a signal)" : "", P.out ? P.out : "", P.out ? "/" : "",
	       P.out ? P.host : "", P.out ? "/sync" : "", P.out && relay ? " and " : "",
	       relay ? "relay " : "", relay ? relay : "");
	for (size_t i = 0; i < P.npeers; i++) {
		struct trawl_probe_peer_stats ps;
		trawl_probe_peer_stats(probe, i, &ps);
		printf("  peer %s %s: sent %" PRIu64 " (%" PRIu64 " failed), received %" PRIu64 "\n",
		       P.peers[i].name, P.peers[i].addr, ps.sent, ps.send_failed, ps.received);
	}
	trawl_probe_free(probe);
out:
	if (ready_fd >= 0)
		close(ready_fd);	/* never ready: the reader gets end of file */
	free(peers);
	free(P.peers);
	return ret;
}
