/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test-agent-relay-may.c - what even a proven relay may ask an
 * agent (tr_verb_relay_may, lib/agent/verbs.c; docs/cluster.md): the
 * session verbs only; a session streamed to the relay joined only; output
 * paths beneath the trace root only (none without one): no "." or ".."
 * component, no relative path, no sibling sharing the root's prefix, no
 * symbolic link inside the root leading out of it, a path yet to be made
 * beneath it taken. And the session names an agent takes are the relay's.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "agent/agent-internal.h"

static char trash[64];
#define path(...) tap_path(trash, __VA_ARGS__)

/* May the relay ask argv (NULL-terminated)? The reason in why. */
static bool may(struct trawl_agent *a, char *why, size_t wlen, ...)
{
	char *argv[16];
	int argc = 0;
	va_list ap;
	va_start(ap, wlen);
	while (argc < 15 && (argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	why[0] = 0;
	return tr_verb_relay_may(a, "relay.example:5347", argc, argv, why, wlen);
}

static char *kv(const char *k, const char *v)
{
	static char b[4][PATH_MAX + 16];
	static int i;
	char *s = b[i++ % 4];
	snprintf(s, PATH_MAX + 16, "%s%s", k, v);
	return s;
}

int main(void)
{
	char why[600];
	snprintf(trash, sizeof(trash), "/tmp/test-agent-relay-may-%d", (int)getpid());
	if (tr_mkdir_p(path("root/sub")) < 0 || tr_mkdir_p(path("outside")) < 0 ||
	    tr_mkdir_p(path("rootx")) < 0 || symlink(path("outside"), path("root/link")) < 0) {
		printf("Bail out! cannot make %s\n", trash);
		return 1;
	}
	struct trawl_agent a;
	memset(&a, 0, sizeof(a));

	ok(!may(&a, why, sizeof(why), "create", "s", kv("output=", path("root/s")), NULL) &&
	   strstr(why, "has no trace root"), "no root: no output path at all (%s)", why);
	ok(may(&a, why, sizeof(why), "create", "s", "relay=.", NULL),
	   "no root: a session streamed to the relay itself is fine");

	a.root = realpath(path("root"), NULL);
	char rp[PATH_MAX];
	snprintf(rp, sizeof(rp), "%s", a.root);
	ok(may(&a, why, sizeof(why), "create", "s", kv("output=", path("root/s")), "relay=.", NULL),
	   "an output beneath the root, yet to be made (%s)", why);
	ok(may(&a, why, sizeof(why), "create", "s", kv("output=", path("root/sub/new/deeper")), NULL),
	   "deeper, beneath an existing directory (%s)", why);
	ok(may(&a, why, sizeof(why), "create", "s", kv("output=", rp), NULL), "the root itself (%s)",
	   why);
	ok(!may(&a, why, sizeof(why), "create", "s", kv("output=", path("root/../outside/x")), NULL) &&
	   strstr(why, "not beneath this node's trace root"), "'..' is refused (%s)", why);
	ok(!may(&a, why, sizeof(why), "create", "s", kv("output=", path("root/./s")), NULL),
	   "'.' is refused");
	ok(!may(&a, why, sizeof(why), "create", "s", "output=root/s", NULL), "a relative path is refused");
	ok(!may(&a, why, sizeof(why), "create", "s", kv("output=", path("rootx/s")), NULL),
	   "a sibling sharing the root's prefix is refused");
	ok(!may(&a, why, sizeof(why), "create", "s", kv("output=", path("root/link/s")), NULL),
	   "a symbolic link inside the root leading out of it is refused (%s)", why);
	ok(!may(&a, why, sizeof(why), "create", "s", kv("output=", path("outside")), NULL),
	   "a directory outside is refused");
	ok(may(&a, why, sizeof(why), "create", "s", "relay=relay.example:5347", NULL),
	   "relay= the address joined is fine");
	ok(!may(&a, why, sizeof(why), "create", "s", "relay=.", "relay=127.0.0.1:9", NULL) &&
	   strstr(why, "to itself only"), "another relay, even after relay=., is refused (%s)", why);
	ok(may(&a, why, sizeof(why), "snapshot", "s", kv("", path("root/snap")), NULL),
	   "a snapshot into the root");
	ok(!may(&a, why, sizeof(why), "snapshot", "s", kv("", path("outside/snap")), NULL) &&
	   strstr(why, "snapshot into"), "a snapshot outside it is refused (%s)", why);
	ok(may(&a, why, sizeof(why), "snapshot", "s", "--relay=s-snapshot-1", NULL) &&
	   may(&a, why, sizeof(why), "snapshot", "s", NULL), "a snapshot to the relay, or to the session's own output");
	ok(!may(&a, why, sizeof(why), "load", "session = s\noutput = /etc\n", NULL) &&
	   strstr(why, "not a request the relay may make"), "load is not the relay's (%s)", why);
	ok(!may(&a, why, sizeof(why), "frobnicate", NULL), "nor an unknown verb");
	ok(may(&a, why, sizeof(why), "start", "s", NULL) && may(&a, why, sizeof(why), "stop", "s", NULL) &&
	   may(&a, why, sizeof(why), "destroy", "s", NULL) && may(&a, why, sizeof(why), "list", NULL),
	   "start, stop, destroy, list are");

	static const char *const bad[] = { ".", "..", "-rf", "*", "a/b", "a b", "", ".hidden" };
	bool all = true;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		all &= !tr_session_name_ok(bad[i], why, sizeof(why)) && strstr(why, "bad session name");
	ok(all, "session names the relay refuses are refused: . .. -rf * a/b 'a b' '' .hidden");
	ok(tr_session_name_ok("web-1.prod_2", why, sizeof(why)), "a name of [A-Za-z0-9._-] is taken");
	free(a.root);
	tap_rm_tree(trash);
	return done_testing();
}
