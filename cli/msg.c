/* SPDX-License-Identifier: MIT */
/*
 * cli/msg.c - the one voice of every command on stderr (cli.h):
 *
 *   trawl CMD: WHAT: WHY             cli_err(), cli_usage() (+ the Try line)
 *   trawl CMD: warning: WHAT: WHY    cli_warn()
 *   hint: WHAT TO DO                 cli_hint()
 *   trawl CMD: WHAT                  cli_note() (not with -q), cli_info() (-v)
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "cli.h"

const char *cli_cmd;
int cli_verbosity;

static int stdout_errno;	/* of the first failed flush of standard output */

int cli_flush_stdout(void)
{
	if (!fflush(stdout))
		return 0;
	if (!stdout_errno)
		stdout_errno = errno ? errno : EIO;
	return EOF;
}

static void line(const char *tag, const char *fmt, va_list ap)
{
	cli_flush_stdout();
	cli_progress_hide();	/* a progress line is redrawn after it */
	if (cli_cmd)
		fprintf(stderr, "trawl %s: %s", cli_cmd, tag);
	else
		fprintf(stderr, "trawl: %s", tag);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

int cli_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	line("", fmt, ap);
	va_end(ap);
	return CLI_EXIT_FAILURE;
}

void cli_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	line("warning: ", fmt, ap);
	va_end(ap);
}

void cli_hint(const char *fmt, ...)
{
	va_list ap;

	cli_flush_stdout();
	cli_progress_hide();
	fputs("hint: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void cli_note(const char *fmt, ...)
{
	va_list ap;

	if (cli_verbosity < 0)
		return;
	va_start(ap, fmt);
	line("", fmt, ap);
	va_end(ap);
}

void cli_info(const char *fmt, ...)
{
	va_list ap;

	if (cli_verbosity < 1)
		return;
	va_start(ap, fmt);
	line("", fmt, ap);
	va_end(ap);
}

int cli_usage(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	line("", fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try 'trawl %s%s--help'.\n", cli_cmd ? cli_cmd : "", cli_cmd ? " " : "");
	return CLI_EXIT_USAGE;
}

int cli_opt_error(int c, char **argv)
{
	const char *arg = optind > 0 ? argv[optind - 1] : "";
	char opt[64];

	/* an unknown short option has optopt; a long one only its text (the
	 * element may also carry "=VALUE", not part of the name) */
	if (c == '?' && optopt && strncmp(arg, "--", 2) == 0 && strchr(arg, '=')) {
		snprintf(opt, sizeof(opt), "%.*s", (int)strcspn(arg, "="), arg);
		return cli_usage("option '%s' takes no value", opt);
	}
	if (c == '?' && optopt)
		snprintf(opt, sizeof(opt), "-%c", optopt);
	else if (c == ':' && strncmp(arg, "--", 2) != 0 && optopt > 0 && optopt < 128)
		snprintf(opt, sizeof(opt), "-%c", optopt);
	else
		snprintf(opt, sizeof(opt), "%.*s", (int)strcspn(arg, "="), arg);
	if (c == ':')
		return cli_usage("option '%s' requires a value", opt);
	return cli_usage("unrecognized option '%s'", opt);
}

int cli_stdout_done(int status)
{
	cli_flush_stdout();
	if (!stdout_errno && !ferror(stdout))
		return status;
	if (stdout_errno == EPIPE || status != CLI_EXIT_OK)
		return status;
	if (stdout_errno)
		return cli_err("standard output: %s", strerror(stdout_errno));
	return cli_err("standard output: write error");
}

void cli_log(int level, const char *msg)
{
	if (level <= LOG_ERR)
		cli_err("%s", msg);
	else if (level == LOG_WARNING)
		cli_warn("%s", msg);
	else if (level >= LOG_DEBUG)
		cli_info("%s", msg);
	else
		cli_note("%s", msg);	/* a daemon's log is its output */
}

int cli_trace_paths(const char *const *paths, size_t npaths)
{
	for (size_t i = 0; i < npaths; i++) {
		unsigned char head[16] = { 0 };
		struct stat st;
		const char *p = paths[i], *what;
		ssize_t n = 0;
		int fd;

		if (stat(p, &st) != 0 || S_ISDIR(st.st_mode))
			continue;	/* the reader says what is missing */
		if ((fd = open(p, O_RDONLY | O_CLOEXEC)) >= 0) {
			n = read(fd, head, sizeof(head));
			close(fd);
		}
		uint32_t magic = n >= 4 ? (uint32_t)head[0] | (uint32_t)head[1] << 8 |
					  (uint32_t)head[2] << 16 | (uint32_t)head[3] << 24 : 0;
		bool text = n > 0 && memchr(head, 0, (size_t)n) == NULL;

		if (n >= 10 && memcmp(head, "/* CTF 1.8", 10) == 0)
			what = "a CTF metadata file";
		else if (magic == 0x75D11D57 || magic == 0x571DD175)
			what = "a CTF metadata file (packetized)";
		else if (magic == 0xC1FC1FC1 || magic == 0xC11FFCC1)
			what = "a CTF stream file";
		else if (n >= 12 && memcmp(head, "# trawl sync", 12) == 0)
			what = "a stored sync result";
		else if (!S_ISREG(st.st_mode))
			what = "not a regular file";
		else if (n == 0)
			what = "an empty file";
		else
			what = text ? "a text file" : "a binary file";
		cli_err("%s: not a trace: %s, not a directory", p, what);
		const char *slash = strrchr(p, '/');
		int dirlen = slash ? (int)(slash - p) + (slash == p) : 1;	/* "/x": "/" */

		if (strstr(what, "CTF"))
			cli_hint("give the trace directory that holds it: '%.*s' (a 'metadata' file "
				 "and stream files)", dirlen, slash ? p : ".");
		else if (strcmp(cli_cmd ? cli_cmd : "", "sync") == 0)
			cli_hint("give a session directory (traces under it, one per node)");
		else if (strstr(what, "sync"))
			cli_hint("give the session directory: its sync.txt applies by itself%s",
				 strcmp(cli_cmd ? cli_cmd : "", "print") == 0 ?
				 " (or --sync FILE)" : "");
		else
			cli_hint("give a trace directory (holding a CTF 'metadata' file) or a "
				 "directory above traces (a session)");
		return CLI_EXIT_FAILURE;
	}
	return 0;
}
