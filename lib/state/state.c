/* SPDX-License-Identifier: MIT */
/*
 * lib/state/state.c - the state system: per host the kernel model
 * (lib/kstate: tables of CPUs, threads, file descriptors and block
 * requests, the one function that moves them forward by a change), the
 * moving window, checkpoints and views.
 * The sink that turns events into changes is sink.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "state/state-internal.h"

/* ------------------------------------------------------------- hosts */

struct host *tr_state_host_get(struct trawl_state *s, const char *name)
{
	for (size_t i = 0; i < s->nhosts; i++)
		if (!strcmp(s->hosts[i].name, name))
			return &s->hosts[i];
	struct host *h = realloc(s->hosts, (s->nhosts + 1) * sizeof(*h));
	if (!h)
		return NULL;
	s->hosts = h;
	h = &s->hosts[s->nhosts];
	memset(h, 0, sizeof(*h));
	if (!(h->name = strdup(name)))
		return NULL;
	tr_tables_init(&h->cur);
	h->cut = INT64_MIN;
	s->nhosts++;
	return h;
}

/* ------------------------------------------------------------ public */

struct trawl_state *trawl_state_new(const struct trawl_state_opts *o)
{
	struct trawl_state *s;

	if (o && o->sz < offsetof(struct trawl_state_opts, window_ns) + sizeof(int64_t)) {
		errno = EINVAL;
		return NULL;
	}
	if (!(s = calloc(1, sizeof(*s))))
		return NULL;
	s->window = o && o->window_ns ? o->window_ns : 10 * 1000000000LL;
	if (o && o->sz >= offsetof(struct trawl_state_opts, checkpoint_ns) + sizeof(int64_t))
		s->interval = o->checkpoint_ns > 0 ? o->checkpoint_ns : 0;
	if (o && o->sz >= offsetof(struct trawl_state_opts, no_window) + sizeof(bool)) {
		s->ck_events = o->checkpoint_events;
		s->nowin = o->no_window;
	}
	s->newest = INT64_MIN;
	s->next_ck = INT64_MIN;
	s->first_ts = INT64_MIN;
	s->replay_from = INT64_MIN;
	return s;
}

void trawl_state_free(struct trawl_state *s)
{
	if (!s)
		return;
	tr_state_ck_release(s);
	for (size_t i = 0; i < s->nhosts; i++) {
		free(s->hosts[i].name);
		tr_tables_release(&s->hosts[i].cur);
		tr_state_window_release(&s->hosts[i]);
	}
	free(s->hosts);
	tr_state_ingest_free(s);
	tr_state_strtab_release(&s->str);
	free(s);
}

int64_t trawl_state_newest(const struct trawl_state *s)
{
	return s->newest;
}

int64_t trawl_state_checkpoints_end(const struct trawl_state *s)
{
	return s->ck_loaded || s->interval ? s->newest : INT64_MIN;
}

size_t trawl_state_nhosts(const struct trawl_state *s)
{
	return s->nhosts;
}

const char *trawl_state_host(const struct trawl_state *s, size_t i)
{
	return i < s->nhosts ? s->hosts[i].name : NULL;
}

/* ------------------------------------------------------------- names */

static const char *const change_names[TRAWL_STATE_NKINDS] = {
	[TRAWL_STATE_SWITCH] = "switch",
	[TRAWL_STATE_WAKEUP] = "wakeup",
	[TRAWL_STATE_FORK] = "fork",
	[TRAWL_STATE_EXEC] = "exec",
	[TRAWL_STATE_EXIT] = "exit",
	[TRAWL_STATE_SYSCALL_ENTRY] = "syscall_entry",
	[TRAWL_STATE_SYSCALL_EXIT] = "syscall_exit",
	[TRAWL_STATE_IRQ_ENTRY] = "irq_entry",
	[TRAWL_STATE_IRQ_EXIT] = "irq_exit",
	[TRAWL_STATE_SOFTIRQ_ENTRY] = "softirq_entry",
	[TRAWL_STATE_SOFTIRQ_EXIT] = "softirq_exit",
	[TRAWL_STATE_BLOCK_INSERT] = "block_insert",
	[TRAWL_STATE_BLOCK_ISSUE] = "block_issue",
	[TRAWL_STATE_BLOCK_COMPLETE] = "block_complete",
	[TRAWL_STATE_DUMP_PROCESS] = "statedump_process",
	[TRAWL_STATE_DUMP_FD] = "statedump_fd",
	[TRAWL_STATE_OPEN] = "open",
	[TRAWL_STATE_CLOSE] = "close",
	[TRAWL_STATE_READ] = "read",
	[TRAWL_STATE_WRITE] = "write",
};

const char *trawl_state_change_name(enum trawl_state_change_kind k)
{
	return (unsigned)k < TRAWL_STATE_NKINDS ? change_names[k] : "?";
}

const char *trawl_state_cpu_mode_name(enum trawl_state_cpu_mode m)
{
	static const char *const n[] = { "unknown", "idle", "user", "syscall", "irq", "softirq" };
	return (unsigned)m < sizeof(n) / sizeof(n[0]) ? n[m] : "?";
}

const char *trawl_state_thread_status_name(enum trawl_state_thread_status st)
{
	static const char *const n[] = { "unknown", "running", "runnable (preempted)",
					 "runnable (woken up)", "blocked" };
	return (unsigned)st < sizeof(n) / sizeof(n[0]) ? n[st] : "?";
}
