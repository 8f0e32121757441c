/* SPDX-License-Identifier: MIT */
/* cli/cli.h - the trawl command's subcommands, one cmd_<name>() per file. */
#ifndef TRAWL_CLI_H
#define TRAWL_CLI_H

/* Each returns the process exit status: 0 ok, 1 failure, 2 usage error. */
int cmd_print(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
int cmd_tcpcap(int argc, char **argv);		/* cmd-tcpcap.c */

/* Prints "trawl: " + message + "\n" on stderr; returns 1. */
int die_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
