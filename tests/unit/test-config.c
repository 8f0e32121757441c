/* SPDX-License-Identifier: MIT */
/*
 * test-config: lib/util/config.c, trawl's settings. The format (sections, lists, quoting, comments),
 * every syntax error naming file and line, and the order of precedence:
 * /etc file < XDG (or ~/.config) file < environment, TRAWL_CONFIG replacing
 * both files, a later file's list replacing an earlier one's, an
 * environment value replacing the list, and where each value came from.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/config.h"

#include "tap.h"

static char dir[256];

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		printf("Bail out! %s: %s\n", path, strerror(errno));
		exit(1);
	}
	fputs(text, f);
	fclose(f);
}

static void clear_env(void)
{
	/* every TRAWL_* variable of the caller (make check sets some) */
	for (;;) {
		char name[256] = "";
		for (char **e = environ; e && *e; e++)
			if (strncmp(*e, "TRAWL_", 6) == 0) {
				size_t n = strcspn(*e, "=");
				snprintf(name, sizeof(name), "%.*s", (int)n, *e);
				break;
			}
		if (!name[0])
			break;
		unsetenv(name);
	}
	unsetenv("XDG_CONFIG_HOME");
	unsetenv("HOME");
}

/* Loads with TRAWL_CONFIG=path; expects success. */
static struct trawl_conf *load_only(const char *path)
{
	char err[512] = "";
	setenv("TRAWL_CONFIG", path, 1);
	struct trawl_conf *c = tr_conf_load(err, sizeof(err));
	if (!c)
		printf("# tr_conf_load: %s\n", err);
	return c;
}

/* Loads text from a file; expects an error; returns the message. */
static const char *load_error(const char *text)
{
	static char err[512];
	char path[300];
	snprintf(path, sizeof(path), "%s/bad.conf", dir);
	write_file(path, text);
	setenv("TRAWL_CONFIG", path, 1);
	err[0] = 0;
	struct trawl_conf *c = tr_conf_load(err, sizeof(err));
	if (c) {
		tr_conf_free(c);
		return NULL;
	}
	return err;
}

static void test_format(void)
{
	char path[300], want[400];
	snprintf(path, sizeof(path), "%s/a.conf", dir);
	write_file(path,
		   "# a comment\n"
		   "; another\n"
		   "\n"
		   "[probe]\n"
		   "rate = 100\n"
		   "  listen=10.0.0.1:7077   \n"
		   "peer = host1 10.0.0.2:7077\n"
		   "peer = host2 10.0.0.3:7077\n"
		   "\t# indented comment\n"
		   "[Agent]\n"
		   "name = \"  spaced \\\"quoted\\\" \\\\ \"  # comment after a quote\n"
		   "empty =\n"
		   "with-dash = a = b # not a comment\r\n"
		   "[probe]\n"
		   "peer = host3 10.0.0.4:7077\n"
		   "rate = 200");	/* no final newline */
	struct trawl_conf *c = load_only(path);
	ok(c != NULL, "a file with sections, lists, quotes, comments loads");
	if (!c)
		return;
	is_str(tr_conf_get(c, "probe", "rate"), "200", "the last value of a repeated key");
	is_str(tr_conf_get(c, "probe", "listen"), "10.0.0.1:7077", "blanks around key and value trimmed");
	const char *const *v = NULL;
	size_t n = tr_conf_get_all(c, "probe", "peer", &v);
	is_int(n, 3, "three peer values, a section reopened later adds to the list");
	if (n == 3) {
		is_str(v[0], "host1 10.0.0.2:7077", "list value 1");
		is_str(v[1], "host2 10.0.0.3:7077", "list value 2");
		is_str(v[2], "host3 10.0.0.4:7077", "list value 3, in file order");
	} else {
		ok(0, "list value 1");
		ok(0, "list value 2");
		ok(0, "list value 3, in file order");
	}
	is_int(tr_conf_get_all(c, "probe", "rate", NULL), 2, "a repeated scalar is a list of two");
	is_str(tr_conf_get(c, "agent", "name"), "  spaced \"quoted\" \\ ", "a quoted value keeps blanks, unescapes");
	is_str(tr_conf_get(c, "AGENT", "NAME"), "  spaced \"quoted\" \\ ", "sections and keys: any case");
	is_str(tr_conf_get(c, "agent", "empty"), "", "an empty value");
	is_str(tr_conf_get(c, "agent", "with-dash"), "a = b # not a comment", "'=' and '#' inside a value, CR dropped");
	snprintf(want, sizeof(want), "%s:6", path);
	is_str(tr_conf_origin(c, "probe", "listen"), want, "origin: FILE:LINE");
	snprintf(want, sizeof(want), "%s:16", path);
	is_str(tr_conf_origin(c, "probe", "rate"), want, "origin of a list: its last value's");
	ok(tr_conf_get(c, "probe", "nosuch") == NULL, "an unset key: NULL");
	ok(tr_conf_get(c, "nosuch", "rate") == NULL, "an unset section: NULL");
	ok(tr_conf_origin(c, "probe", "nosuch") == NULL, "an unset key has no origin");
	v = (const char *const *)1;
	is_int(tr_conf_get_all(c, "probe", "nosuch", &v), 0, "an unset key: an empty list");
	ok(v == NULL, "... and *vals is NULL");
	tr_conf_free(c);

	snprintf(path, sizeof(path), "%s/does-not-exist.conf", dir);
	c = load_only(path);
	ok(c != NULL, "a missing file is no error");
	ok(c && tr_conf_get(c, "probe", "rate") == NULL, "... and gives nothing");
	tr_conf_free(c);
	c = load_only("");
	ok(c != NULL, "TRAWL_CONFIG='' reads no file");
	tr_conf_free(c);
}

static void test_errors(void)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{ "[probe]\nrate 100\n", "bad.conf:2: expected 'key = value'" },
		{ "rate = 1\n", "bad.conf:1: key 'rate' outside a [section]" },
		{ "[probe\n", "bad.conf:1: a section header is '[name]'" },
		{ "[probe] x\n", "bad.conf:1: a section header is '[name]'" },
		{ "[]\n", "bad.conf:1: bad section name" },
		{ "[a b]\n", "bad.conf:1: bad section name" },
		{ "[p]\n\n\n = 3\n", "bad.conf:4: bad key ''" },
		{ "[p]\nmy key = 3\n", "bad.conf:2: bad key 'my key'" },
		{ "[p]\nk = \"abc\n", "bad.conf:2: unterminated quoted value" },
		{ "[p]\nk = \"a\\qb\"\n", "bad.conf:2: unknown escape" },
		{ "[p]\nk = \"a\" b\n", "bad.conf:2: text after the closing quote" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *e = load_error(cases[i].text);
		ok(e && strstr(e, cases[i].want) && strncmp(e, dir, strlen(dir)) == 0,
		   "syntax error %zu: '%s' (got '%s')", i + 1, cases[i].want, e ? e : "no error");
	}
	/* a NUL byte inside a line */
	char path[300];
	snprintf(path, sizeof(path), "%s/nul.conf", dir);
	FILE *f = fopen(path, "w");
	fwrite("[p]\nk = a\0b\n", 1, 12, f);
	fclose(f);
	setenv("TRAWL_CONFIG", path, 1);
	char err[512] = "";
	struct trawl_conf *c = tr_conf_load(err, sizeof(err));
	ok(!c && strstr(err, "nul.conf:2: NUL byte"), "a NUL byte: an error naming the line (%s)", err);
	tr_conf_free(c);
	/* a directory instead of a file */
	setenv("TRAWL_CONFIG", dir, 1);
	c = tr_conf_load(err, sizeof(err));
	ok(!c && strstr(err, dir), "a directory: an error naming it (%s)", err);
	tr_conf_free(c);
}

static void test_precedence(void)
{
	char sys[300], xdg[300], home[300], path[300], want[400];
	snprintf(sys, sizeof(sys), "%s/etc.conf", dir);
	snprintf(path, sizeof(path), "%s/xdg", dir);
	mkdir(path, 0777);
	snprintf(path, sizeof(path), "%s/xdg/trawl", dir);
	mkdir(path, 0777);
	snprintf(xdg, sizeof(xdg), "%s/xdg/trawl/trawl.conf", dir);
	snprintf(path, sizeof(path), "%s/home", dir);
	mkdir(path, 0777);
	snprintf(path, sizeof(path), "%s/home/.config", dir);
	mkdir(path, 0777);
	snprintf(path, sizeof(path), "%s/home/.config/trawl", dir);
	mkdir(path, 0777);
	snprintf(home, sizeof(home), "%s/home/.config/trawl/trawl.conf", dir);
	write_file(sys, "[probe]\nrate = 1\nlisten = sys\npeer = a 1.1.1.1:1\npeer = b 1.1.1.2:1\n"
			"[agent]\nmax-size = 5\n");
	write_file(xdg, "[probe]\nrate = 2\npeer = c 1.1.1.3:1\n");
	write_file(home, "[probe]\nrate = 3\nlisten = home\n");
	tr_conf_sys_path = sys;
	unsetenv("TRAWL_CONFIG");

	char err[512] = "";
	snprintf(path, sizeof(path), "%s/xdg", dir);
	setenv("XDG_CONFIG_HOME", path, 1);
	snprintf(path, sizeof(path), "%s/home", dir);
	setenv("HOME", path, 1);
	struct trawl_conf *c = tr_conf_load(err, sizeof(err));
	ok(c != NULL, "load the system and the XDG file (%s)", err);
	is_str(tr_conf_get(c, "probe", "rate"), "2", "XDG file over the system file");
	is_str(tr_conf_get(c, "probe", "listen"), "sys", "a key only the system file sets");
	snprintf(want, sizeof(want), "%s:3", sys);
	is_str(tr_conf_origin(c, "probe", "listen"), want, "... with the system file's origin");
	const char *const *v;
	size_t n = tr_conf_get_all(c, "probe", "peer", &v);
	ok(n == 1 && !strcmp(v[0], "c 1.1.1.3:1"), "a later file's list replaces an earlier one's (%zu)", n);
	snprintf(want, sizeof(want), "%s:3", xdg);
	is_str(tr_conf_origin(c, "probe", "peer"), want, "... with the later file's origin");
	tr_conf_free(c);

	/* the environment over the files; '-' -> '_'; upper case */
	setenv("TRAWL_PROBE_RATE", "7", 1);
	setenv("TRAWL_PROBE_PEER", "d 1.1.1.4:1", 1);
	setenv("TRAWL_AGENT_MAX_SIZE", "9", 1);
	c = tr_conf_load(err, sizeof(err));
	is_str(tr_conf_get(c, "probe", "rate"), "7", "environment over the files");
	is_str(tr_conf_origin(c, "probe", "rate"), "environment TRAWL_PROBE_RATE", "origin: environment NAME");
	n = tr_conf_get_all(c, "probe", "peer", &v);
	ok(n == 1 && !strcmp(v[0], "d 1.1.1.4:1"), "an environment value replaces the list with one value");
	is_str(tr_conf_get(c, "agent", "max-size"), "9", "TRAWL_AGENT_MAX_SIZE sets [agent] max-size");
	is_str(tr_conf_get(c, "probe", "listen"), "sys", "keys without a variable keep the files' value");
	tr_conf_free(c);
	unsetenv("TRAWL_PROBE_RATE");
	unsetenv("TRAWL_PROBE_PEER");
	unsetenv("TRAWL_AGENT_MAX_SIZE");

	/* the environment as it was at load time */
	c = tr_conf_load(err, sizeof(err));
	setenv("TRAWL_PROBE_RATE", "8", 1);
	is_str(tr_conf_get(c, "probe", "rate"), "2", "the environment is read at load time");
	tr_conf_free(c);
	unsetenv("TRAWL_PROBE_RATE");

	/* no XDG_CONFIG_HOME (or a relative one): ~/.config */
	unsetenv("XDG_CONFIG_HOME");
	c = tr_conf_load(err, sizeof(err));
	is_str(tr_conf_get(c, "probe", "rate"), "3", "without XDG_CONFIG_HOME: ~/.config/trawl/trawl.conf");
	is_str(tr_conf_get(c, "probe", "listen"), "home", "... over the system file");
	n = tr_conf_get_all(c, "probe", "peer", &v);
	is_int(n, 2, "... the system file's list stays when it sets none");
	tr_conf_free(c);
	setenv("XDG_CONFIG_HOME", "relative/dir", 1);
	c = tr_conf_load(err, sizeof(err));
	is_str(tr_conf_get(c, "probe", "rate"), "3", "a relative XDG_CONFIG_HOME is ignored");
	tr_conf_free(c);

	/* TRAWL_CONFIG replaces both files */
	snprintf(path, sizeof(path), "%s/only.conf", dir);
	write_file(path, "[probe]\nrate = 4\n");
	setenv("TRAWL_CONFIG", path, 1);
	c = tr_conf_load(err, sizeof(err));
	is_str(tr_conf_get(c, "probe", "rate"), "4", "TRAWL_CONFIG's file is read");
	ok(c && tr_conf_get(c, "probe", "listen") == NULL, "... instead of the system and user files");
	tr_conf_free(c);

	/* an error in the system file names it */
	write_file(sys, "[probe]\nrate\n");
	unsetenv("TRAWL_CONFIG");
	c = tr_conf_load(err, sizeof(err));
	snprintf(want, sizeof(want), "%s:2: ", sys);
	ok(!c && strncmp(err, want, strlen(want)) == 0, "a syntax error in the system file names it (%s)", err);
	tr_conf_free(c);
	tr_conf_sys_path = "/etc/trawl/trawl.conf";
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof(dir), "%s/test-config-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	clear_env();
	test_format();
	test_errors();
	test_precedence();
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
	return done_testing();
}
