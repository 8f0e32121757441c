/* SPDX-License-Identifier: MIT */
/*
 * cli/cmd-tcpcap.c - `trawl tcpcap`: records every IPv4 TCP segment sent or
 * received in the recorder's own network namespace, through eBPF, as the
 * sync-point events trawl_sync:tcp_send / trawl_sync:tcp_recv of a CTF
 * trace DIR/HOST/tcp/ (see docs/tcpcap.md). The engine is lib/kern/tcpcap.c
 * (its eBPF program lib/kern/tcpcap.bpf.c); this file has the options, the
 * signals and the summary.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "kern/tcpcap.h"

static void usage(FILE *f)
{
	fputs("usage: trawl tcpcap -o DIR [--host NAME] [--duration S] [--port P]...\n"
	      "                    [--clock-offset NS] [--buffer-size BYTES] [--ready-fd N] [-q]\n"
	      "\n"
	      "Records every IPv4 TCP segment sent or received in this process's network\n"
	      "namespace (eBPF; needs root) as trawl_sync:tcp_send / trawl_sync:tcp_recv\n"
	      "events in the CTF trace DIR/NAME/tcp/, on this node's CLOCK_MONOTONIC, until\n"
	      "--duration or SIGINT/SIGTERM. `trawl sync` matches them across nodes.\n"
	      "\n"
	      "  -o, --output DIR        the session directory (DIR/NAME/tcp must not exist\n"
	      "                          or be empty)\n"
	      "  -H, --host NAME         this node's name (env hostname; default: the\n"
	      "                          machine's hostname)\n"
	      "  -d, --duration S        stop after S seconds (decimals allowed)\n"
	      "  -p, --port P            only segments from or to port P (repeatable, up\n"
	      "                          to 64)\n"
	      "      --clock-offset NS   the CTF clock's offset to the epoch, in ns\n"
	      "                          (default: CLOCK_REALTIME - CLOCK_MONOTONIC now)\n"
	      "      --buffer-size BYTES the ring buffer, a power of two >= 4096 (suffix\n"
	      "                          K, M; default 8M)\n"
	      "      --ready-fd N        once the capture is attached (segments from then on\n"
	      "                          are recorded), write \"ready\\n\" to descriptor N and\n"
	      "                          close it; the line \"trawl tcpcap: recording ...\" on\n"
	      "                          stderr comes at the same moment\n"
	      "  -q, --quiet             only errors and warnings on stderr\n"
	      "  -h, --help              this help\n", f);
}


struct opts {
	const char *out, *host;
	int64_t duration_ns;		/* 0: until a signal */
	uint16_t ports[TCPCAP_MAX_PORTS];
	unsigned nports;
	bool has_clock_offset;
	int64_t clock_offset;
	uint64_t ring_size;		/* 0: the default */
	int ready_fd;			/* --ready-fd, or -1 */
};

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "host", required_argument, NULL, 'H' },
		{ "duration", required_argument, NULL, 'd' },
		{ "port", required_argument, NULL, 'p' },
		{ "clock-offset", required_argument, NULL, 'C' },
		{ "buffer-size", required_argument, NULL, 'B' },
		{ "ready-fd", required_argument, NULL, 'R' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	char *end;
	int c;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:H:d:p:qh", lopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (!*optarg)
				return cli_usage("empty output directory");
			o->out = optarg;
			break;
		case 'H':
			if (!*optarg || strchr(optarg, '/') || !strcmp(optarg, ".") ||
			    !strcmp(optarg, ".."))
				return cli_usage("--host: '%s' is not a host name", optarg);
			o->host = optarg;
			break;
		case 'd': {
			double d;

			errno = 0;
			d = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(d > 0) || d > 1e9)
				return cli_usage("--duration: '%s' is not a number of seconds > 0",
						 optarg);
			o->duration_ns = (int64_t)(d * 1e9);
			if (!o->duration_ns)
				o->duration_ns = 1;
			break;
		}
		case 'p': {
			unsigned long p;

			errno = 0;
			p = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || *optarg == '-' || p < 1 || p > 65535)
				return cli_usage("--port: '%s' is not a port in 1..65535", optarg);
			if (o->nports == TCPCAP_MAX_PORTS)
				return cli_usage("--port: at most %d ports", TCPCAP_MAX_PORTS);
			o->ports[o->nports++] = (uint16_t)p;
			break;
		}
		case 'C': {
			long long v;

			errno = 0;
			v = strtoll(optarg, &end, 10);
			if (errno || end == optarg || *end)
				return cli_usage("--clock-offset: '%s' is not a number of ns", optarg);
			o->has_clock_offset = true;
			o->clock_offset = v;
			break;
		}
		case 'B': {
			unsigned long long v;

			errno = 0;
			v = strtoull(optarg, &end, 10);
			if (!errno && end != optarg && *optarg != '-') {
				if (*end == 'k' || *end == 'K')
					v <<= 10, end++;
				else if (*end == 'm' || *end == 'M')
					v <<= 20, end++;
			}
			if (errno || end == optarg || *end || *optarg == '-' || v < 4096 ||
			    v > (1ull << 30) || (v & (v - 1)))
				return cli_usage("--buffer-size: '%s' is not a power of two in 4096..1G",
						 optarg);
			o->ring_size = v;
			break;
		}
		case 'R':
			if ((o->ready_fd = cli_ready_fd_arg(optarg)) < 0)
				return cli_usage("--ready-fd: '%s' is not an open descriptor", optarg);
			break;
		case 'q':
			cli_verbosity = -1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			return cli_opt_error(c, argv);
		}
	}
	if (optind < argc)
		return cli_usage("unexpected argument '%s'", argv[optind]);
	if (!o->out)
		return cli_usage("no output directory (-o DIR)");
	return -1;	/* go on */
}

static volatile sig_atomic_t stop_signal;
static struct tcpcap *volatile running;		/* what a signal stops */

static void on_signal(int sig)
{
	stop_signal = sig;
	if (running)
		tr_tcpcap_stop(running);
}

static void on_log(void *arg, const char *msg)
{
	(void)arg;
	cli_warn("%s", msg);
}

int cmd_tcpcap(int argc, char **argv)
{
	struct opts o = { .ready_fd = -1 };
	struct tcpcap *t = NULL;
	char host[256], err[512] = "", *path = NULL;
	struct sigaction sa = { .sa_handler = on_signal }, old_int, old_term;
	int ret, rc = 1;

	ret = parse_opts(argc, argv, &o);
	if (ret >= 0)
		return ret;
	if (!o.host) {
		if (gethostname(host, sizeof(host) - 1) < 0)
			return cli_err("gethostname: %s", strerror(errno));
		host[sizeof(host) - 1] = 0;
		o.host = host;
	}
	if (asprintf(&path, "%s/%s/tcp", o.out, o.host) < 0)
		return cli_err("%s", strerror(ENOMEM));
	struct tcpcap_opts to = {
		.sz = sizeof(to),
		.path = path,
		.host = o.host,
		.duration_ns = o.duration_ns,
		.ports = o.ports,
		.nports = o.nports,
		.has_clock_offset = o.has_clock_offset,
		.clock_offset = o.clock_offset,
		.ring_size = o.ring_size,
		.log = on_log,
	};
	t = tr_tcpcap_new(&to, err, sizeof(err));
	if (!t) {
		rc = cli_err("%s", err);
		goto out;
	}

	sigemptyset(&sa.sa_mask);
	running = t;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	if (tr_tcpcap_start(t, err, sizeof(err)) < 0) {
		rc = cli_err("%s", err);
		goto restore;
	}
	cli_note("recording TCP segments of network namespace net:[%lu] as host %s into %s",
		 (unsigned long)tr_tcpcap_netns(t), o.host, path);
	cli_ready(&o.ready_fd, NULL);	/* attached: what comes now is recorded */
	if (tr_tcpcap_run(t, err, sizeof(err)) < 0) {
		rc = cli_err("%s", err);
		goto restore;
	}
	struct tr_tcpcap_stats st;
	tr_tcpcap_stats(t, &st);
	uint64_t lost = st.lost + st.late + st.negative;
	printf("trawl tcpcap: %" PRIu64 " segments (%" PRIu64 " sent, %" PRIu64 " received), "
	       "%" PRIu64 " lost, %" PRIu64 " skipped, in %s\n",
	       st.sent + st.received, st.sent, st.received, lost, st.skipped, path);
	if (lost) {
		cli_warn("%" PRIu64 " segments lost (%" PRIu64 " with the ring buffer full, %" PRIu64
			 " out of order, %" PRIu64 " before the clock's zero), counted as discarded "
			 "events", lost, st.lost, st.late, st.negative);
		if (st.lost)
			cli_hint("a larger --buffer-size may help");
	}
	rc = 0;
restore:
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	running = NULL;
out:
	if (o.ready_fd >= 0)
		close(o.ready_fd);	/* never ready: the reader gets end of file */
	tr_tcpcap_free(t);
	free(path);
	return rc;
}
