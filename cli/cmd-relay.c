/* SPDX-License-Identifier: MIT */
/*
 * cli/cmd-relay.c - `trawl relay`: receives the traces every node streams
 * (trawl record --relay, trawl create --relay) into one session directory
 * per session name, and serves them live on LTTng's viewer protocol.
 * Settings: [relay] output-dir, data, live, max-conns, secret-file,
 * live-open (docs/config.md).
 * The relay itself is lib/relay (trawl/relay.h); this file parses the
 * arguments and the settings, detaches, writes the pidfile and the ready
 * line, stops the relay on SIGTERM and SIGINT, and prints its log in the
 * foreground.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <trawl/relay.h>

#include "cli.h"
#include "util/config.h"
#include "util/outfile.h"

static void usage(FILE *f)
{
	fputs("usage: trawl relay [-o DIR] [--data [HOST:]PORT] [--live [HOST:]PORT]\n"
	      "                   [--secret-file FILE] [--live-open [HOST:]PORT]\n"
	      "                   [--foreground] [--pidfile FILE] [--ready-fd N]\n"
	      "                   [--live-from-now] [--control PATH] [--quiet] [LIMITS]\n"
	      "                   [--metrics [HOST:]PORT [--metrics-token-file FILE]]\n"
	      "Receives the traces nodes stream to it and serves them live.\n"
	      "  -o, --output DIR   where sessions go: DIR/SESSION/HOST/{kernel,ust}/\n"
	      "                     (default: [relay] output-dir, else ~/trawl-traces;\n"
	      "                     without HOME, -o is needed)\n"
	      "  --data [HOST:]PORT producers connect there (default 127.0.0.1:5347, loopback\n"
	      "                     only: give an address, e.g. 0.0.0.0:5347, for other\n"
	      "                     machines; port 0: any free one, told on the ready line)\n"
	      "  --live [HOST:]PORT live viewers connect there, LTTng's viewer protocol\n"
	      "                     (default 127.0.0.1:5344, babeltrace2's default port):\n"
	      "                     babeltrace2 -i lttng-live net://RELAY/host/HOST/SESSION\n"
	      "  --secret-file FILE the cluster's secret (trawl secret new; mode 600): every\n"
	      "                     producer and live viewer must prove it holds it, or a key\n"
	      "                     derived from it (docs/auth.md); refusals say why\n"
	      "  --live-open [HOST:]PORT  also a live port where viewers prove nothing\n"
	      "                     (babeltrace2 cannot), read-only; off by default, on\n"
	      "                     127.0.0.1 for a bare port\n"
	      "  --live-from-now    a viewer asking for the latest data starts at the next\n"
	      "                     packet, as with lttng-relayd (default: from the first)\n"
	      "  --group GROUP      the group of the trace directories (mode 750) and files\n"
	      "                     (640) it makes (default: [relay] group, else the relay's)\n"
	      "  --control PATH     cluster control: `trawl cluster` asks there (a Unix socket,\n"
	      "                     mode 0600) for the agents that joined (trawl agent\n"
	      "                     --relay) and has them run session commands (default:\n"
	      "                     [relay] control; none without)\n"
	      "  --metrics [HOST:]PORT  serve GET /metrics for Prometheus there (text 0.0.4,\n"
	      "                     or OpenMetrics 1.0 when asked): each node's health and\n"
	      "                     the cluster's figures from its kernel traces\n"
	      "                     (docs/metrics.md); a bare port: on 127.0.0.1; port 0: any\n"
	      "                     free one, told on the ready line (default: [relay]\n"
	      "                     metrics, else none)\n"
	      "  --metrics-token-file FILE  scrapes must carry this bearer token (the file's\n"
	      "                     first line; mode 600); needed on an address other than\n"
	      "                     loopback\n"
	      "  --metrics-top-k N  syscalls with a series of their own per host (default 16;\n"
	      "                     the others are summed as syscall=\"other\")\n"
	      "  -f, --foreground   do not detach (logs on stderr); the default detaches once\n"
	      "                     listening and prints where\n"
	      "  -q, --quiet        in the foreground, log only errors and warnings\n"
	      "  --pidfile FILE     write the relay's pid there\n"
	      "  --ready-fd N       write \"ready DATA-ADDR LIVE-ADDR\\n\" to descriptor N once\n"
	      "                     listening\n"
	      "Limits (docs/relay.md; a newcomer over one is refused with the reason):\n"
	      "  --max-producers N  producers connected at once (default 1000)\n"
	      "  --max-viewers N    live viewers connected at once (default 100)\n"
	      "  --max-conns N      both together (default: the sum of the two)\n"
	      "  --fd-pool-size N   descriptors for connections and trace files (default:\n"
	      "                     the descriptor limit less a tenth of it, 16 to 1024)\n"
	      "  --max-conn-buffer BYTES  input one connection may buffer (suffix K, M, G;\n"
	      "                     default: the largest message, 64 MiB + 80)\n"
	      "  --max-total-buffer BYTES input all connections may buffer (default 256M)\n"
	      "  --message-timeout SEC  a message must arrive whole within SEC of its first\n"
	      "                     byte; the first (HELLO, CONNECT) of the connection\n"
	      "                     (default 30)\n"
	      "  --idle-timeout SEC a viewer silent for SEC is closed (default 300)\n"
	      "  --max-session-size BYTES  disk quota of each host of a session name, its\n"
	      "                     traces and what its directory held before: a message\n"
	      "                     over it is refused with the reason (default: none)\n"
	      "  --disk-reserve BYTES  once less is free on the disk, the session that wrote\n"
	      "                     the most is refused, the others write on (default: 1 %\n"
	      "                     of the file system, at most 1G)\n"
	      "Peers that prove nothing (no HELLO or JOIN taken yet, no authentication):\n"
	      "  --max-pending N    of each kind at once (default 256; at most a quarter of\n"
	      "                     --max-producers or --max-viewers, not below 8, and a\n"
	      "                     quarter of the pool; at least 1): the oldest is closed\n"
	      "                     for a newcomer\n"
	      "  --max-pending-per-addr N  from one address (default 64): a newcomer over it\n"
	      "                     is refused\n"
	      "  --proof-timeout SEC  time from the connection to prove it (default 10)\n"
	      "SIGTERM or SIGINT stops it; every trace keeps what reached it. At start, streams\n"
	      "a relay killed mid-write left torn are cut back to their last complete packet\n"
	      "listed in their index (logged).\n", f);
}

/* A number from lo to hi, with a suffix K, M or G (powers of 1024) when
 * size; -1 when it is none. */
static long long num_arg(const char *s, long long lo, long long hi, bool size)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (end == s || errno || v < 0)
		return -1;
	if (size && *end) {
		int sh = strchr("kK", *end) ? 10 : strchr("mM", *end) ? 20 : strchr("gG", *end) ? 30 : -1;
		if (sh < 0 || end[1] || v > (hi >> sh))
			return -1;
		v <<= sh;
		end++;
	}
	return *end || v < lo || v > hi ? -1 : v;
}

/* The output directory when -o is not given: [relay] output-dir (base),
 * else ~/trawl-traces. NULL with errno: ENOENT when HOME is not set (no
 * shared fallback such as /tmp, where anyone could have put a symbolic link
 * or a directory of their own first), ENOMEM. */
static char *home_dir(const char *base)
{
	char *dir;
	if (base && *base)
		return strdup(base);
	const char *home = getenv("HOME");
	if (!home || home[0] != '/') {
		errno = ENOENT;
		return NULL;
	}
	if (asprintf(&dir, "%s/trawl-traces", home) < 0) {
		errno = ENOMEM;
		return NULL;
	}
	return dir;
}

/*
 * The secret file's place, checked at startup as ssh checks its keys
 * (its contents and mode are the authentication's, lib/net/auth.c): a
 * regular file (a FIFO would hold the relay in its read), owned by the
 * relay's user or root, in a directory that not everyone may write (where
 * anyone could have put the file, or may replace it). 0, or -1 with the
 * reason said.
 */
static int secret_file_safe(const char *path);
/* The metrics' bearer token: the file's first line, at least 16 bytes of
 * printable ASCII without blanks. 0, or -1 (said). */
static int read_token(const char *path, char *tok, size_t cap)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return cli_err("--metrics-token-file %s: %s", path, strerror(errno)), -1;
	bool got = fgets(tok, (int)cap, f) != NULL;
	fclose(f);
	size_t n = got ? strcspn(tok, "\r\n") : 0;
	if (got)
		tok[n] = 0;
	bool okay = n >= 16 && n < cap - 1;
	for (size_t i = 0; okay && i < n; i++)
		okay = tok[i] > ' ' && tok[i] < 0x7f;
	if (!okay)
		return cli_err("--metrics-token-file %s: its first line must be a token of 16 to "
			       "%zu printable characters without blanks", path, cap - 2), -1;
	return 0;
}

static int secret_file_safe(const char *path)
{
	struct stat sb, db;
	if (stat(path, &sb) < 0)
		return 0;	/* missing, unreadable: the authentication says so */
	if (!S_ISREG(sb.st_mode)) {
		cli_err("secret file %s: not a regular file (%s): refused", path,
			S_ISFIFO(sb.st_mode) ? "a FIFO" : S_ISDIR(sb.st_mode) ? "a directory" :
			S_ISCHR(sb.st_mode) || S_ISBLK(sb.st_mode) ? "a device" :
			S_ISSOCK(sb.st_mode) ? "a socket" : "not a file");
		return -1;
	}
	if (sb.st_uid != geteuid() && sb.st_uid != 0) {
		cli_err("secret file %s: owned by another user (uid %u): refused", path,
			(unsigned)sb.st_uid);
		cli_hint("the relay's user (or root) must own it: chown it, or make one with "
			 "trawl secret new");
		return -1;
	}
	char *copy = strdup(path);
	if (!copy) {
		cli_err("out of memory");
		return -1;
	}
	char *slash = strrchr(copy, '/');
	const char *dir = !slash ? "." : slash == copy ? "/" : (*slash = 0, copy);
	int bad = stat(dir, &db) == 0 && (db.st_mode & S_IWOTH);
	if (bad) {
		cli_err("secret file %s: in a directory anyone may write (%s): refused", path, dir);
		cli_hint("keep it in a directory of the relay's user, e.g. mode 700");
	}
	free(copy);
	return bad ? -1 : 0;
}

/* The running relay, for the signal handlers. */
static struct trawl_relay *running;

static void on_signal(int sig)
{
	(void)sig;
	int e = errno;
	trawl_relay_stop(running);	/* async-signal-safe */
	errno = e;
}

/* The relay's log: stderr, in the foreground. */
static void log_line(void *arg, int level, const char *msg)
{
	(void)arg;
	cli_log(level, msg);
}

/* Options parsed (the relay's own, and what this command does around it). */
struct relay_cmd {
	struct trawl_relay_opts ro;
	bool foreground;
	const char *pidfile;
	int ready_fd;			/* -1, or "ready\n" written there and closed */
};

/* Whether the bound address "HOST:PORT" is loopback, or every address. */
static bool loopback(const char *at)
{
	return strncmp(at, "127.", 4) == 0 || strncmp(at, "[::1]:", 6) == 0;
}

static bool wildcard(const char *at)
{
	return strncmp(at, "0.0.0.0:", 8) == 0 || strncmp(at, "[::]:", 5) == 0;
}

/* The startup line: where it listens, that it is loopback only when it
 * is, whether peers authenticate; detached (the parent's stdout) or in the
 * foreground (a note). A warning for a port others reach without a
 * secret. */
static void announce(const struct relay_cmd *o, const char *data_at, const char *live_at,
		     const char *open_at, const char *metrics_at, bool detached)
{
	if (metrics_at && detached)
		printf("trawl relay: metrics on http://%s/metrics%s\n", metrics_at,
		       o->ro.metrics_token ? " (bearer token)" : "");
	else if (metrics_at)
		cli_note("metrics on http://%s/metrics%s", metrics_at,
			 o->ro.metrics_token ? " (bearer token)" : "");
	char open[340] = "";
	if (open_at)
		snprintf(open, sizeof(open), ", open live port (read-only, no authentication) on "
			 "%s", open_at);
	bool ld = loopback(data_at), ll = loopback(live_at) && (!open_at || loopback(open_at));
	const char *where = ld && ll ? "loopback only" : ld ? "data on loopback only" :
			    ll ? "live on loopback only" : "reachable from other machines";
	const char *auth = o->ro.secret_file ? "peers authenticate (--secret-file)" :
			   "no authentication (--secret-file)";
	if (detached)
		printf("trawl relay: data on %s, live on %s, sessions in %s; %s, %s%s\n", data_at,
		       live_at, o->ro.output, where, auth, open);
	else
		cli_note("data on %s, live on %s, writing to %s; %s, %s%s", data_at, live_at,
			 o->ro.output, where, auth, open);
	const char *at[3] = { data_at, live_at, open_at };
	for (int i = 0; i < 3; i++) {
		if (!at[i] || loopback(at[i]) || (o->ro.secret_file && i < 2))
			continue;
		cli_warn("%s port on %s%s %s", i == 0 ? "data" : "live", at[i],
			 wildcard(at[i]) ? " (every address)" : "",
			 i == 0 ? "without a secret: anyone who reaches it can write into any "
			 "session; give --secret-file (docs/auth.md)" : i == 1 ?
			 "without a secret: anyone who reaches it can follow any session; give "
			 "--secret-file (docs/auth.md)" : "asks viewers for no secret: anyone who "
			 "reaches it can follow any session");
	}
}

/* Runs the relay until SIGTERM/SIGINT; returns the exit status. */
static int serve(struct relay_cmd *o)
{
	char err[512];
	if (o->foreground) {
		o->ro.log = log_line;
		o->ro.log_arg = NULL;
	}
	struct trawl_relay *r = trawl_relay_new(&o->ro, err, sizeof(err));
	if (!r)
		return cli_err("%s", err);
	running = r;
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	struct sigaction sa = { .sa_handler = on_signal };	/* no SA_RESTART */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* a file over RLIMIT_FSIZE: its write fails (EFBIG, the stream cut
	 * back to its last whole packet, the producer told), not the relay */
	signal(SIGXFSZ, SIG_IGN);

	int status = 0;
	if (o->pidfile) {
		/* not through a symbolic link (util/outfile.h) */
		char pid[32], why[512];
		int n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());

		if (tr_outfile_write(o->pidfile, 0, 0644, pid, (size_t)n, why, sizeof(why))) {
			status = cli_err("cannot write the pid: %s", why);
			goto out;
		}
	}
	const char *data_at = trawl_relay_data_addr(r), *live_at = trawl_relay_live_addr(r);
	const char *open_at = trawl_relay_live_open_addr(r);
	const char *metrics_at = trawl_relay_metrics_addr(r);
	char mw[320] = "";
	if (metrics_at)
		snprintf(mw, sizeof(mw), " metrics=%s", metrics_at);
	/* the open live port, then the metrics' metrics=ADDR last: readers of
	 * the first two words are as before */
	if (open_at)
		cli_ready(&o->ready_fd, "%s %s %s%s", data_at, live_at, open_at, mw);
	else
		cli_ready(&o->ready_fd, "%s %s%s", data_at, live_at, mw);
	if (o->foreground)
		announce(o, data_at, live_at, open_at, metrics_at, false);
	else {
		int nul = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (nul >= 0) {
			dup2(nul, 2);
			close(nul);
		}
	}
	int ret = trawl_relay_run(r);
	if (ret < 0)
		status = cli_err("%s", strerror(-ret));
	if (o->foreground)
		cli_note("exiting");
out:
	/* no handler may see the relay freed */
	sigprocmask(SIG_BLOCK, &set, NULL);
	running = NULL;
	trawl_relay_free(r);
	return status;
}

int cmd_relay(int argc, char **argv)
{
	enum { O_DATA = 256, O_LIVE, O_PID, O_READY, O_NOW, O_MAX, O_MAXP, O_MAXV, O_POOL, O_CBUF,
	       O_TBUF, O_MSGT, O_IDLE, O_CTL, O_SECRET, O_OPEN, O_QUOTA, O_PEND, O_PENDA,
	       O_PROOF, O_GROUP, O_RESERVE, O_METRICS, O_MTOKEN, O_MTOPK };
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "data", required_argument, NULL, O_DATA },
		{ "live", required_argument, NULL, O_LIVE },
		{ "foreground", no_argument, NULL, 'f' },
		{ "pidfile", required_argument, NULL, O_PID },
		{ "ready-fd", required_argument, NULL, O_READY },
		{ "live-from-now", no_argument, NULL, O_NOW },
		{ "max-conns", required_argument, NULL, O_MAX },
		{ "max-producers", required_argument, NULL, O_MAXP },
		{ "max-viewers", required_argument, NULL, O_MAXV },
		{ "fd-pool-size", required_argument, NULL, O_POOL },
		{ "max-conn-buffer", required_argument, NULL, O_CBUF },
		{ "max-total-buffer", required_argument, NULL, O_TBUF },
		{ "message-timeout", required_argument, NULL, O_MSGT },
		{ "idle-timeout", required_argument, NULL, O_IDLE },
		{ "control", required_argument, NULL, O_CTL },
		{ "secret-file", required_argument, NULL, O_SECRET },
		{ "live-open", required_argument, NULL, O_OPEN },
		{ "max-session-size", required_argument, NULL, O_QUOTA },
		{ "max-pending", required_argument, NULL, O_PEND },
		{ "max-pending-per-addr", required_argument, NULL, O_PENDA },
		{ "proof-timeout", required_argument, NULL, O_PROOF },
		{ "group", required_argument, NULL, O_GROUP },
		{ "disk-reserve", required_argument, NULL, O_RESERVE },
		{ "metrics", required_argument, NULL, O_METRICS },
		{ "metrics-token-file", required_argument, NULL, O_MTOKEN },
		{ "metrics-top-k", required_argument, NULL, O_MTOPK },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct relay_cmd o = { .ro = { .sz = sizeof(o.ro) }, .ready_fd = -1 };
	long long n;
	const char *out = NULL, *max = NULL, *token_file = NULL;
	char token[256] = "";
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:fqh", opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case O_DATA: o.ro.data_addr = optarg; break;
		case O_LIVE: o.ro.live_addr = optarg; break;
		case 'f': o.foreground = true; break;
		case O_PID: o.pidfile = optarg; break;
		case O_READY:
			if ((o.ready_fd = cli_ready_fd_arg(optarg)) < 0) {
				return cli_usage("--ready-fd: '%s' is not an open descriptor", optarg);
			}
			break;
		case O_NOW: o.ro.live_from_now = true; break;
		case O_CTL: o.ro.control = optarg; break;
		case O_SECRET: o.ro.secret_file = optarg; break;
		case O_OPEN: o.ro.live_open_addr = optarg; break;
		case O_GROUP: o.ro.group = optarg; break;
		case O_METRICS: o.ro.metrics_addr = optarg; break;
		case O_MTOKEN: token_file = optarg; break;
		case O_MTOPK:
			if ((n = num_arg(optarg, 1, 1000, false)) < 0)
				return cli_usage("--metrics-top-k: '%s' is not a number from 1 to 1000",
						 optarg);
			o.ro.metrics_top_k = (unsigned)n;
			break;
		case O_MAX: max = optarg; break;
		case O_MAXP:
		case O_MAXV:
		case O_POOL:
		case O_PEND:
		case O_PENDA:
			if ((n = num_arg(optarg, 1, 1000000, false)) < 0)
				return cli_usage("--%s: '%s' is not a number from 1 to 1000000",
						 c == O_MAXP ? "max-producers" : c == O_MAXV ?
						 "max-viewers" : c == O_POOL ? "fd-pool-size" :
						 c == O_PEND ? "max-pending" : "max-pending-per-addr",
						 optarg);
			*(c == O_MAXP ? &o.ro.max_producers : c == O_MAXV ? &o.ro.max_viewers :
			  c == O_POOL ? &o.ro.fd_pool_size : c == O_PEND ? &o.ro.max_pending :
			  &o.ro.max_pending_per_addr) = (int)n;
			break;
		case O_CBUF:
		case O_TBUF:
			if ((n = num_arg(optarg, 65536, 1ll << 40, true)) < 0)
				return cli_usage("--%s: '%s' is not a size from 64K to 1024G",
						 c == O_CBUF ? "max-conn-buffer" : "max-total-buffer",
						 optarg);
			*(c == O_CBUF ? &o.ro.max_conn_buffer : &o.ro.max_total_buffer) = (size_t)n;
			break;
		case O_MSGT:
		case O_IDLE:
		case O_PROOF:
			if ((n = num_arg(optarg, 1, 86400, false)) < 0)
				return cli_usage("--%s: '%s' is not a number of seconds from 1 to 86400",
						 c == O_MSGT ? "message-timeout" : c == O_IDLE ?
						 "idle-timeout" : "proof-timeout", optarg);
			*(c == O_MSGT ? &o.ro.msg_timeout_ms : c == O_IDLE ? &o.ro.idle_timeout_ms :
			  &o.ro.proof_timeout_ms) = (unsigned)n * 1000;
			break;
		case O_RESERVE:
			if ((n = num_arg(optarg, 4096, 1ll << 50, true)) < 0)
				return cli_usage("--disk-reserve: '%s' is not a size from 4K to "
						 "1048576G", optarg);
			o.ro.disk_reserve = (uint64_t)n;
			break;
		case O_QUOTA:
			if ((n = num_arg(optarg, 4096, 1ll << 50, true)) < 0)
				return cli_usage("--max-session-size: '%s' is not a size from 4K to "
						 "1048576G", optarg);
			o.ro.max_session_size = (uint64_t)n;
			break;
		case 'q': cli_verbosity = -1; break;
		case 'h': usage(stdout); return 0;
		default: return cli_opt_error(c, argv);
		}
	}
	if (optind < argc)
		return cli_usage("unexpected argument '%s'", argv[optind]);
	char err[256];
	struct trawl_conf *conf = tr_conf_load(err, sizeof(err));
	if (!conf)
		return cli_err("%s", err);
	if (!o.ro.data_addr)
		o.ro.data_addr = tr_conf_get(conf, "relay", "data");
	if (!o.ro.live_addr)
		o.ro.live_addr = tr_conf_get(conf, "relay", "live");
	if (!max)
		max = tr_conf_get(conf, "relay", "max-conns");
	if (!o.ro.control)
		o.ro.control = tr_conf_get(conf, "relay", "control");
	if (!o.ro.secret_file)
		o.ro.secret_file = tr_conf_get(conf, "relay", "secret-file");
	if (!o.ro.live_open_addr)
		o.ro.live_open_addr = tr_conf_get(conf, "relay", "live-open");
	if (!o.ro.group)
		o.ro.group = tr_conf_get(conf, "relay", "group");
	if (!o.ro.metrics_addr)
		o.ro.metrics_addr = tr_conf_get(conf, "relay", "metrics");
	if (!token_file)
		token_file = tr_conf_get(conf, "relay", "metrics-token-file");
	if (token_file) {
		if (secret_file_safe(token_file) < 0 || read_token(token_file, token,
								  sizeof(token)) < 0) {
			tr_conf_free(conf);
			return CLI_EXIT_FAILURE;
		}
		o.ro.metrics_token = token;
	}
	/* the cluster's readers (docs/metrics.md) are viewers of the live
	 * port: with a secret, they prove it as any viewer does */
	if (o.ro.metrics_addr && o.ro.secret_file)
		setenv("TRAWL_SECRET_FILE", o.ro.secret_file, 0);
	if (o.ro.secret_file && secret_file_safe(o.ro.secret_file) < 0) {
		tr_conf_free(conf);
		return CLI_EXIT_FAILURE;
	}
	if (max) {
		char *end;
		long v = strtol(max, &end, 10);
		if (*end || v < 1 || v > 1000000) {
			/* max may be the settings' string: said before they are freed */
			int r = cli_usage("max-conns: '%s' is not a number from 1 to 1000000", max);
			tr_conf_free(conf);
			return r;
		}
		o.ro.max_conns = (int)v;
	}
	char *dir = out ? strdup(out) : home_dir(tr_conf_get(conf, "relay", "output-dir"));
	if (!dir && errno == ENOENT) {
		tr_conf_free(conf);
		cli_err("no output directory: HOME is not set (or not an absolute path)");
		cli_hint("give one: trawl relay -o DIR, or output-dir in the [relay] section of the "
			 "config file");
		return CLI_EXIT_FAILURE;
	}
	char *abs = dir ? realpath(dir, NULL) : NULL;
	if (dir && !abs && dir[0] != '/') {
		/* not there yet: absolute from here, so detaching keeps it */
		char cwd[PATH_MAX];
		if (getcwd(cwd, sizeof(cwd)) && asprintf(&abs, "%s/%s", cwd, dir) < 0)
			abs = NULL;
	}
	o.ro.output = abs ? abs : dir;
	/* absolute too, so that detaching keeps it */
	char *ctl = NULL;
	if (o.ro.control && o.ro.control[0] != '/') {
		char cwd[PATH_MAX];
		if (getcwd(cwd, sizeof(cwd)) && asprintf(&ctl, "%s/%s", cwd, o.ro.control) >= 0)
			o.ro.control = ctl;
	}
	if (!o.ro.output) {
		tr_conf_free(conf);
		return cli_err("out of memory");
	}
	/* every stream holds two descriptors while it lives */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	int r;
	if (!o.foreground) {
		char line[700];
		int d = cli_detach(&o.ready_fd, line, sizeof(line));
		if (d != 0) {
			char data[300], live[300], w3[320], w4[320];
			int nw = d > 0 ? sscanf(line, "ready %299s %299s %319s %319s", data, live, w3,
						w4) : 0;
			const char *open = nw >= 3 && strncmp(w3, "metrics=", 8) ? w3 : NULL;
			const char *mat = nw >= 3 && !open ? w3 + 8 : nw >= 4 &&
					  !strncmp(w4, "metrics=", 8) ? w4 + 8 : NULL;
			if (nw >= 2)
				announce(&o, data, live, open, mat, true);
			r = d > 0 ? 0 : 1;
			goto out;
		}
	}
	r = serve(&o);
out:
	free(ctl);
	free(abs);
	free(dir);
	tr_conf_free(conf);
	return r;
}
