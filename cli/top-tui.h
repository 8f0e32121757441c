/* SPDX-License-Identifier: MIT */
/* cli/top-tui.h - trawl top's full-screen display (cli/top-tui.c, ncurses). */
#ifndef TRAWL_CLI_TOP_TUI_H
#define TRAWL_CLI_TOP_TUI_H

#include <stdbool.h>
#include <stdint.h>

#include <trawl/top.h>

struct cli_top_tui;
/* The display's state, from the command's options (q: view, filters,
 * grouping, sort); NULL when out of memory. The screen starts at _start(). */
struct cli_top_tui *cli_top_tui_new(const struct trawl_top_query *q, int64_t interval_ns,
				    bool live);
/* Takes the terminal; q sets *stop (the run ends after its batch). */
void cli_top_tui_start(struct cli_top_tui *u, volatile int *stop);
/* trawl_top_opts.slice: a slice closed: redraws; a replay waits one
 * interval (keys handled meanwhile; paused: until unpaused or q). */
void cli_top_tui_slice(void *arg, struct trawl_top *t);
/* trawl_top_opts.idle: keys; -ECANCELED once q was pressed. */
int cli_top_tui_idle(void *arg, struct trawl_top *t);
/* The replay's end: the history browsed until q. */
void cli_top_tui_end(struct cli_top_tui *u, struct trawl_top *t);
/* Gives the terminal back; accepts NULL. */
void cli_top_tui_free(struct cli_top_tui *u);
/* A column's table title (times in us): "CPU%", "MAX_us", ... */
const char *cli_top_col_title(enum trawl_top_column c);

#endif
