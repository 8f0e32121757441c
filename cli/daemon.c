/* SPDX-License-Identifier: MIT */
/* cli/daemon.c - what the daemons (agent, relay) share: detaching once ready;
 * the ready line of --ready-fd (agent, relay, probe, tcpcap). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

int cli_detach(int *ready_fd, char *line, size_t linelen)
{
	int p[2];
	if (pipe(p) < 0) {
		cli_err("pipe: %s", strerror(errno));
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		cli_err("fork: %s", strerror(errno));
		return -1;
	}
	if (pid > 0) {
		close(p[1]);
		size_t n = 0;
		for (;;) {
			ssize_t r = read(p[0], line + n, linelen - 1 - n);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			n += (size_t)r;
			if (memchr(line, '\n', n) || n == linelen - 1)
				break;
		}
		line[n] = 0;
		close(p[0]);
		if (n == 0) {
			int st;
			waitpid(pid, &st, 0);
			return -1;	/* the child said why */
		}
		return 1;
	}
	close(p[0]);
	setsid();
	if (*ready_fd >= 0)
		close(*ready_fd);
	*ready_fd = p[1];
	int nul = open("/dev/null", O_RDWR);
	if (nul >= 0) {
		dup2(nul, 0);
		dup2(nul, 1);
		/* stderr stays until ready: errors reach the caller */
		if (nul > 2)
			close(nul);
	}
	return 0;
}

int cli_ready_fd_arg(const char *arg)
{
	char *end;
	long v = strtol(arg, &end, 10);
	if (!*arg || *end || v < 0 || v > 65535 || fcntl((int)v, F_GETFD) < 0)
		return -1;
	return (int)v;
}

void cli_ready(int *fd, const char *fmt, ...)
{
	char line[700] = "ready";
	va_list ap;
	if (*fd < 0)
		return;
	if (fmt && *fmt) {
		line[5] = ' ';
		va_start(ap, fmt);
		vsnprintf(line + 6, sizeof(line) - 7, fmt, ap);
		va_end(ap);
	}
	strcat(line, "\n");
	if (write(*fd, line, strlen(line)) < 0) {
		/* the reader went away: carry on */
	}
	close(*fd);
	*fd = -1;
}
