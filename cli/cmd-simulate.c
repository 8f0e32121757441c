/* SPDX-License-Identifier: MIT */
/*
 * trawl simulate: the arguments and the output of the simulator
 * (trawl/sim.h, lib/sim/), which writes a synthetic multi-host session
 * DIR/host<i>/{kernel,ust}/, deterministic for a given seed.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trawl/sim.h"
#include "cli.h"
#include "util/clock.h"
#include "util/escape.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------ options */

static void usage(FILE *f)
{
	fputs("usage: trawl simulate -o DIR [--hosts N] [--events M] [--seed S] [--cpus C]\n"
	      "                      [--packet-size BYTES] [--shapes] [--[no-]progress] [--force]\n"
	      "                      [--relay HOST[:PORT] [--session NAME]] [--sync [SYNC OPTIONS]]\n"
	      "\n"
	      "Writes a synthetic multi-host session DIR/host<i>/{kernel,ust}/ of CTF 1.8\n"
	      "traces: M events in all (default 100000) over N hosts (default 2) with C CPUs\n"
	      "each (default 2). The same seed (default 1) gives identical traces.\n"
	      "\n"
	      "  -o, --output DIR        the session directory (created; must be empty)\n"
	      "  -n, --hosts N           number of hosts, 1..100000\n"
	      "  -e, --events M          events in all hosts' traces (suffix k, M, G: 10^3..)\n"
	      "  -s, --seed S            seed of the generator (an unsigned integer)\n"
	      "  -c, --cpus C            CPUs per host, 1..1024: one stream per CPU\n"
	      "      --packet-size BYTES packet size, >= 4096, a multiple of 8 (suffix K, M:\n"
	      "                          KiB, MiB; default 256K)\n"
	      "      --shapes            also write every format corner case: idle gaps over\n"
	      "                          2^27 and 2^32 ns, discarded events, empty packets,\n"
	      "                          event ids >= 31, extreme values, tricky strings\n"
	      "      --progress          show progress on stderr even when it is not a terminal\n"
	      "      --no-progress       never show progress (default: on a terminal)\n"
	      "  -f, --force             write into a non-empty DIR\n"
	      "  -q, --quiet             only errors and warnings (no progress, no summary)\n"
	      "      --relay HOST[:PORT] also stream every trace to a trawl relay (without -o:\n"
	      "                          only there), as session NAME (--session, default\n"
	      "                          \"simulate\"): RELAY-OUTPUT/NAME/host<i>/{kernel,ust}/\n"
	      "      --secret-file FILE  the relay's credential (docs/auth.md; default:\n"
	      "                          TRAWL_SECRET_FILE, else [relay] secret-file)\n"
	      "  -h, --help              this help\n"
	      "\n"
	      "Clocks and sync traffic with known truth (written to DIR/truth.txt):\n"
	      "      --sync              each host its own clock (host0 the reference), and\n"
	      "                          trawl_sync:probe_send/probe_recv and app:rpc_send/\n"
	      "                          app:rpc_recv messages between hosts (ust trace,\n"
	      "                          stream sync_0); at most 256 hosts\n"
	      "      --max-offset NS     clock offsets uniform in +-NS (default 5G = 5 s)\n"
	      "      --max-drift PPM     drifts uniform in +-PPM (default 100, at most 1000)\n"
	      "      --topology T        mesh (default), star (host0 and each other), chain\n"
	      "                          (host i and i+1), split (two meshes, no link between)\n"
	      "      --sync-rate N       probes per second per directed pair (default 200)\n"
	      "      --rpc-rate N        RPCs per second per directed pair (default 50)\n"
	      "      --delay US          minimum one-way delay, microseconds (default 50)\n"
	      "      --jitter US         mean of the exponential jitter added (default 20)\n"
	      "      --asym F            delays from higher- to lower-numbered hosts times F\n"
	      "                          (default 1)\n"
	      "      --loss P            fraction of receives lost (default 0)\n"
	      "      --dup P             fraction of messages sent twice with one key (default 0)\n"
	      "      --one-way           messages only from lower- to higher-numbered hosts\n"
	      "      --drift-change HOST:FRACTION:PPM\n"
	      "                          HOST's drift becomes PPM at FRACTION (0..1) of the\n"
	      "                          span (repeatable, once per host)\n", f);
}

static int parse_double(const char *s, double *v, double lo, double hi)
{
	char *end;
	if (!s || !*s)
		return -1;
	errno = 0;
	double x = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(x) || x < lo || x > hi)
		return -1;
	*v = x;
	return 0;
}

/* HOST:FRACTION:PPM, HOST an index or host<index> */
static int parse_change(const char *s, struct trawl_sim_drift_change *c)
{
	char *end;
	if (!strncmp(s, "host", 4))
		s += 4;
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	unsigned long h = strtoul(s, &end, 10);
	if (errno || *end != ':' || h > TRAWL_SIM_MAX_HOSTS)
		return -1;
	const char *f = end + 1, *colon = strchr(f, ':');
	if (!colon)
		return -1;
	char frac[64];
	double fr, ppm;
	if ((size_t)(colon - f) >= sizeof(frac))
		return -1;
	memcpy(frac, f, (size_t)(colon - f));
	frac[colon - f] = 0;
	if (parse_double(frac, &fr, 0, 1) || parse_double(colon + 1, &ppm, -TRAWL_SIM_MAX_DRIFT_PPB / 1000.0,
						       TRAWL_SIM_MAX_DRIFT_PPB / 1000.0))
		return -1;
	c->host = (unsigned)h;
	c->fraction = fr;
	c->ppb = llround(ppm * 1000);
	return 0;
}

static int parse_u64(const char *s, uint64_t *v, uint64_t unit_k)
{
	char *end;
	if (!s || !*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	uint64_t mul = 1;
	switch (*end) {
	case 0: break;
	case 'k': case 'K': mul = unit_k; end++; break;
	case 'm': case 'M': mul = unit_k * unit_k; end++; break;
	case 'g': case 'G': mul = unit_k * unit_k * unit_k; end++; break;
	default: return -1;
	}
	if (*end || (x && mul > UINT64_MAX / x))
		return -1;
	*v = x * mul;
	return 0;
}


/*
 * What the relay did not store of what the run emitted, counted as
 * discarded (docs/relay.md, "Cut off by the relay"): said when there is
 * any, after a failure too (not with -q).
 */
static void relay_summary(const struct trawl_sim_result *res, const char *relay)
{
	if (!relay || cli_verbosity < 0 || (!res->relay_discarded && !res->relay_inexact))
		return;
	printf("trawl simulate: relay %s: %" PRIu64 " event%s emitted, %" PRIu64 " stored at "
	       "the relay, %s%" PRIu64 " discarded (not stored)%s\n", relay, res->emitted,
	       CLI_S(res->emitted), res->relay_events - res->relay_discarded,
	       res->relay_inexact ? "at most " : "", res->relay_discarded,
	       res->relay_inexact ? "; the relay did not say where it cut" : "");
}

/* events written of all (called every 64 Ki events) */
static int on_progress(void *arg, uint64_t done, uint64_t total)
{
	struct cli_progress *p = arg;

	p->total = total;
	cli_progress_set(p, done);
	return 0;
}

/* The simulator's words carry the relay's (why it was lost): escaped
 * here, where they are printed. */
static void on_log(void *arg, int level, const char *msg)
{
	(void)arg;
	char *e = tr_escape_dup(msg, false);
	cli_log(level, e ? e : msg);
	free(e);
}

enum {
	O_SYNC = 256, O_MAX_OFFSET, O_MAX_DRIFT, O_TOPOLOGY, O_RATE, O_RPC_RATE, O_DELAY,
	O_JITTER, O_ASYM, O_LOSS, O_DUP, O_ONE_WAY, O_DRIFT_CHANGE, O_RELAY, O_SESSION,
	O_SECRET,
};

int cmd_simulate(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "hosts", required_argument, NULL, 'n' },
		{ "events", required_argument, NULL, 'e' },
		{ "seed", required_argument, NULL, 's' },
		{ "cpus", required_argument, NULL, 'c' },
		{ "packet-size", required_argument, NULL, 'P' },
		{ "shapes", no_argument, NULL, 'S' },
		CLI_PROGRESS_OPTIONS,
		{ "force", no_argument, NULL, 'f' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "sync", no_argument, NULL, O_SYNC },
		{ "relay", required_argument, NULL, O_RELAY },
		{ "session", required_argument, NULL, O_SESSION },
		{ "secret-file", required_argument, NULL, O_SECRET },
		{ "max-offset", required_argument, NULL, O_MAX_OFFSET },
		{ "max-drift", required_argument, NULL, O_MAX_DRIFT },
		{ "topology", required_argument, NULL, O_TOPOLOGY },
		{ "sync-rate", required_argument, NULL, O_RATE },
		{ "rpc-rate", required_argument, NULL, O_RPC_RATE },
		{ "delay", required_argument, NULL, O_DELAY },
		{ "jitter", required_argument, NULL, O_JITTER },
		{ "asym", required_argument, NULL, O_ASYM },
		{ "loss", required_argument, NULL, O_LOSS },
		{ "dup", required_argument, NULL, O_DUP },
		{ "one-way", no_argument, NULL, O_ONE_WAY },
		{ "drift-change", required_argument, NULL, O_DRIFT_CHANGE },
		{ 0 },
	};
	struct trawl_sim_opts so = TRAWL_SIM_OPTS_INIT;
	struct trawl_sim_drift_change changes[TRAWL_SIM_SYNC_MAX_HOSTS];
	const char *sync_opt = NULL;	/* a sync option seen */
	struct cli_progress prog;
	int progress = 0;
	double d;
	uint64_t v;
	int c;

	const char *secret = NULL;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:n:e:s:c:fqh", opts, NULL)) != -1) {
		for (size_t i = 0; c > O_SYNC && c < O_RELAY && opts[i].name; i++)
			if (opts[i].val == c)
				sync_opt = opts[i].name;
		switch (c) {
		case O_RELAY:
			so.relay = optarg;
			break;
		case O_SESSION:
			so.session = optarg;
			break;
		case O_SECRET:
			secret = optarg;
			break;
		case 'o':
			if (!*optarg)
				return cli_usage("empty output directory");
			so.output = optarg;
			break;
		case 'n':
			if (parse_u64(optarg, &v, 1000) || v < 1 || v > TRAWL_SIM_MAX_HOSTS)
				return cli_usage("--hosts: '%s' is not a number in 1..100000", optarg);
			so.hosts = (unsigned)v;
			break;
		case 'e':
			if (parse_u64(optarg, &v, 1000))
				return cli_usage("--events: '%s' is not a count", optarg);
			so.events = v;
			break;
		case 's':
			if (parse_u64(optarg, &v, 1000))
				return cli_usage("--seed: '%s' is not an unsigned integer", optarg);
			so.seed = v;
			break;
		case 'c':
			if (parse_u64(optarg, &v, 1000) || v < 1 || v > TRAWL_SIM_MAX_CPUS)
				return cli_usage("--cpus: '%s' is not a number in 1..1024", optarg);
			so.cpus = (unsigned)v;
			break;
		case 'P':
			if (parse_u64(optarg, &v, 1024) || v < 4096 || v % 8 || v > (1u << 30))
				return cli_usage("--packet-size: '%s' is not a size in 4096..1G, a multiple of 8",
						 optarg);
			so.packet_size = (size_t)v;
			break;
		case 'S':
			so.shapes = true;
			break;
		case CLI_OPT_PROGRESS:
		case CLI_OPT_NO_PROGRESS:
			progress = c;
			break;
		case 'f':
			so.force = true;
			break;
		case 'q':
			cli_verbosity = -1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case O_SYNC:
			so.sync = true;
			break;
		case O_MAX_OFFSET:
			if (parse_u64(optarg, &v, 1000) || v > TRAWL_SIM_MAX_OFFSET_NS)
				return cli_usage("--max-offset: '%s' is not a number of ns in 0..1000G",
						 optarg);
			so.max_offset_ns = v;
			break;
		case O_MAX_DRIFT:
			if (parse_double(optarg, &d, 0, TRAWL_SIM_MAX_DRIFT_PPB / 1000.0))
				return cli_usage("--max-drift: '%s' is not a number of ppm in 0..1000",
						 optarg);
			so.max_drift_ppb = llround(d * 1000);
			break;
		case O_TOPOLOGY: {
			static const char *const names[] = { "mesh", "star", "chain", "split" };
			size_t i = 0;
			while (i < ARRAY_LEN(names) && strcmp(optarg, names[i]))
				i++;
			if (i == ARRAY_LEN(names))
				return cli_usage("--topology: '%s' is not mesh, star, chain or split",
						 optarg);
			so.topology = (enum trawl_sim_topology)i;
			break;
		}
		case O_RATE:
		case O_RPC_RATE:
			if (parse_double(optarg, &d, 0, TRAWL_SIM_MAX_RATE))
				return cli_usage("%s: '%s' is not a rate in 0..1e7 per second",
						 c == O_RATE ? "--sync-rate" : "--rpc-rate", optarg);
			*(c == O_RATE ? &so.rate : &so.rpc_rate) = d;
			break;
		case O_DELAY:
		case O_JITTER:
			if (parse_double(optarg, &d, 0, TRAWL_SIM_MAX_DELAY_NS / 1000))
				return cli_usage("%s: '%s' is not a number of microseconds in 0..1e7",
						 c == O_DELAY ? "--delay" : "--jitter", optarg);
			*(c == O_DELAY ? &so.delay_ns : &so.jitter_ns) = d * 1000;
			break;
		case O_ASYM:
			if (parse_double(optarg, &d, 0, TRAWL_SIM_MAX_ASYM) || d == 0)
				return cli_usage("--asym: '%s' is not a factor in (0, 1000]", optarg);
			so.asym = d;
			break;
		case O_LOSS:
		case O_DUP:
			if (parse_double(optarg, &d, 0, 1))
				return cli_usage("%s: '%s' is not a fraction in 0..1",
						 c == O_LOSS ? "--loss" : "--dup", optarg);
			*(c == O_LOSS ? &so.loss : &so.dup) = d;
			break;
		case O_ONE_WAY:
			so.one_way = true;
			break;
		case O_DRIFT_CHANGE:
			if (so.nchanges == ARRAY_LEN(changes))
				return cli_usage("--drift-change: more than %d", TRAWL_SIM_SYNC_MAX_HOSTS);
			if (parse_change(optarg, &changes[so.nchanges]))
				return cli_usage("--drift-change: '%s' is not HOST:FRACTION:PPM "
						 "(fraction 0..1, ppm -1000..1000)", optarg);
			so.nchanges++;
			break;
		case ':':
			return cli_opt_error(c, argv);
		default:
			return cli_opt_error(c, argv);
		}
	}
	if (optind < argc)
		return cli_usage("unexpected argument '%s'", argv[optind]);
	if (sync_opt && !so.sync)
		return cli_usage("--%s needs --sync", sync_opt);
	if (secret && !so.relay)
		return cli_usage("--secret-file is the relay's credential: it needs --relay");
	if (so.relay)
		cli_secret_env(secret);
	so.changes = changes;
	cli_progress_start(&prog, "trawl simulate", progress, CLI_PROGRESS_EVENTS, so.events);
	if (prog.on) {
		so.progress = on_progress;
		so.progress_arg = &prog;
	}
	so.log = on_log;

	char err[512] = "";
	struct trawl_sim *sim = trawl_sim_new(&so, err, sizeof(err));
	if (!sim) {
		if (errno == EINVAL)
			return cli_usage("%s", err);
		if (errno == EEXIST) {
			cli_err("%s", err);
			cli_hint("add --force to write into it");
			return CLI_EXIT_FAILURE;
		}
		return cli_err("%s", err);
	}
	double t0 = tr_mono_s();
	if (trawl_sim_run(sim, err, sizeof(err)) < 0) {
		cli_progress_end(&prog, false);
		/* the relay's reason among it: escaped here */
		char *e = so.relay ? tr_escape_dup(err, false) : NULL;
		int rc = cli_err("%s", e ? e : err);
		free(e);
		relay_summary(trawl_sim_result(sim), so.relay);
		trawl_sim_free(sim);
		return rc;
	}
	cli_progress_end(&prog, true);
	double secs = tr_mono_s() - t0;
	const struct trawl_sim_result *res = trawl_sim_result(sim);
	uint64_t bytes = so.output ? cli_dir_bytes(so.output) : 0;
	if (cli_verbosity < 0)	/* -q: the summary is a note too */
		goto done;
	printf("trawl simulate: %" PRIu64 " event%s (%" PRIu64 " kernel, %" PRIu64 " ust), "
	       "%u host%s x %u CPU%s, %" PRIu64 " bytes (%.1f bytes/event), %.3f s, %.2f M/s, in %s\n",
	       res->events, CLI_S(res->events), res->kernel_events, res->ust_events, res->hosts,
	       CLI_S(res->hosts), res->cpus, CLI_S(res->cpus), bytes,
	       res->events ? (double)bytes / (double)res->events : 0.0, secs,
	       secs > 0 ? (double)res->events / secs / 1e6 : 0.0, so.output ? so.output : so.relay);
	if (so.sync)
		printf("trawl simulate: sync: %" PRIu64 " probes and %" PRIu64 " RPCs: %" PRIu64
		       " sends (%" PRIu64 " duplicated), %" PRIu64 " receives (%" PRIu64
		       " lost); truth in %s\n", res->probes, res->rpcs, res->sends, res->dups,
		       res->recvs, res->lost, res->truth);
	relay_summary(res, so.relay);
done:
	trawl_sim_free(sim);
	return 0;
}
