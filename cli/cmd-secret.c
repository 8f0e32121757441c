/* SPDX-License-Identifier: MIT */
/*
 * cli/cmd-secret.c - `trawl secret`: makes the credentials of a relay that
 * authenticates its peers (docs/auth.md): the cluster's secret, a node's
 * key (writes only that host's traces), the viewers' key (reads only).
 * Also cli_secret_env(), which the producing commands (record, simulate,
 * agent) use to find their credential: --secret-file, else the
 * environment's TRAWL_SECRET_FILE, else [relay] secret-file.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "net/auth.h"
#include "util/config.h"

static void usage(FILE *f)
{
	fputs("usage: trawl secret new FILE\n"
	      "       trawl secret node HOST FILE [--secret-file CLUSTER]\n"
	      "       trawl secret viewer FILE [--secret-file CLUSTER]\n"
	      "Makes the credentials of a relay that authenticates its peers (docs/auth.md).\n"
	      "  new      a new cluster secret (32 random bytes): the relay's --secret-file;\n"
	      "           whoever holds it may write any host's traces and read them all\n"
	      "  node     HOST's node key, derived from the cluster secret: it writes only\n"
	      "           traces of host HOST, and reads nothing\n"
	      "  viewer   the viewers' key, derived from the cluster secret: it reads (live\n"
	      "           port), and writes nothing\n"
	      "  --secret-file CLUSTER  the cluster secret to derive from (default: the\n"
	      "           environment's TRAWL_SECRET_FILE, else [relay] secret-file)\n"
	      "FILE is created with mode 600 and never overwritten. Producers take theirs\n"
	      "with --secret-file (record, simulate, agent), TRAWL_SECRET_FILE or [relay]\n"
	      "secret-file; trawl print a viewer's with --secret-file.\n", f);
}

const char *cli_secret_env(const char *opt)
{
	if (opt) {
		setenv("TRAWL_SECRET_FILE", opt, 1);
		return opt;
	}
	const char *e = getenv("TRAWL_SECRET_FILE");
	if (e && *e)
		return e;
	char err[256];
	struct trawl_conf *conf = tr_conf_load(err, sizeof(err));
	const char *v = conf ? tr_conf_get(conf, "relay", "secret-file") : NULL;
	if (v && *v)
		setenv("TRAWL_SECRET_FILE", v, 1);
	tr_conf_free(conf);
	e = getenv("TRAWL_SECRET_FILE");
	return e && *e ? e : NULL;
}

/* Writes c's line to a new file (mode 600, not over an existing one). */
static int write_new(const char *path, const struct auth_cred *c)
{
	char line[200];
	int n = tr_auth_format(c, line, sizeof(line));
	int fd = n < 0 ? -1 :
		 open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	int ret = 0;
	if (fd < 0) {
		ret = cli_err("%s: %s", path, strerror(errno));
	} else {
		int w = tr_write_all(fd, line, (size_t)n);
		if (w < 0 || close(fd) < 0) {
			ret = cli_err("%s: %s", path, strerror(w < 0 ? -w : errno));
			unlink(path);
		}
	}
	explicit_bzero(line, sizeof(line));
	return ret;
}

int cmd_secret(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "secret-file", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *from = NULL;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 'S': from = optarg; break;
		case 'h': usage(stdout); return 0;
		default: return cli_opt_error(c, argv);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1)
		return cli_usage("what to make: new, node HOST or viewer");
	const char *what = argv[0];
	int want = strcmp(what, "new") == 0 ? 2 : strcmp(what, "node") == 0 ? 3 :
		   strcmp(what, "viewer") == 0 ? 2 : 0;
	if (!want)
		return cli_usage("'%s': expected new, node or viewer", what);
	if (argc != want)
		return cli_usage("%s takes %s", what, want == 3 ? "HOST FILE" : "FILE");
	const char *file = argv[want - 1];
	struct auth_cred out = { 0 }, cluster;
	int ret;
	if (strcmp(what, "new") == 0) {
		if (from)
			return cli_usage("new makes a cluster secret: --secret-file is for "
					 "node and viewer");
		out.kind = AUTH_CLUSTER;
		if ((ret = tr_auth_nonce(out.key)) < 0)
			return cli_err("no random bytes: %s", strerror(-ret));
	} else {
		char err[400];
		if (!(from = cli_secret_env(from)))
			return cli_usage("%s derives from the cluster secret: give --secret-file "
					 "CLUSTER", what);
		/* without nettle a derived key would be random bytes (auth.c's
		 * hmac): refused here, not written */
		if (tr_auth_ready(err, sizeof(err)) < 0 ||
		    tr_auth_load(from, &cluster, err, sizeof(err)) < 0)
			return cli_err("%s", err);
		if (cluster.kind != AUTH_CLUSTER) {
			tr_auth_wipe(&cluster);
			return cli_err("%s: a %s credential, not the cluster secret", from,
				       tr_auth_kind_name(cluster.kind));
		}
		const char *host = want == 3 ? argv[1] : NULL;
		ret = tr_auth_derive(&cluster, host ? AUTH_NODE : AUTH_VIEWER, host, &out);
		tr_auth_wipe(&cluster);
		if (ret < 0)
			return cli_usage("'%s' is not a host name of [A-Za-z0-9._-] of at most %d "
					 "bytes, not starting with '.' or '-'", host, AUTH_HOST_MAX);
	}
	ret = write_new(file, &out);
	tr_auth_wipe(&out);
	return ret;
}
