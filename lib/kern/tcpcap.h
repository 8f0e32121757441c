/* SPDX-License-Identifier: MIT */
/*
 * lib/kern/tcpcap.h - TCP segments as sync points, through eBPF: every
 * IPv4 TCP segment sent or received in the caller's network namespace is
 * recorded as trawl_sync:tcp_send / trawl_sync:tcp_recv (<trawl/sync-schema.h>)
 * in a CTF trace on the node's CLOCK_MONOTONIC (docs/tcpcap.md). `trawl
 * tcpcap` is this object with options and a summary.
 *
 * In libtrawl-kern.a (it needs libbpf; the eBPF program, tcpcap.bpf.c, is
 * embedded as a skeleton by mk/bpf.mk). Built without eBPF support (no
 * clang, bpftool or libbpf headers, or NO_BPF=1), tr_tcpcap_new() fails with
 * ENOTSUP and says so.
 *
 * Life cycle: tr_tcpcap_new() (the program loaded, the trace created: nothing
 * recorded yet), tr_tcpcap_start() (attached: recording), tr_tcpcap_run() (until
 * the duration or tr_tcpcap_stop(); then detached, drained, the trace
 * finalized), tr_tcpcap_free(). Functions return 0 or -errno with a message in
 * (err, errlen); nothing prints: libbpf's warnings go to the logging hook.
 */
#ifndef TRAWL_KERN_TCPCAP_H
#define TRAWL_KERN_TCPCAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kern/tcpcap-bpf.h"	/* TCPCAP_MAX_PORTS */

#define TCPCAP_RING_DEFAULT	(8u << 20)

struct tcpcap_opts {
	size_t sz;			/* sizeof(struct tcpcap_opts) */
	const char *path;		/* the trace directory (absent or empty), parents created */
	const char *host;		/* the trace's env hostname */
	int64_t duration_ns;		/* run() returns after this; 0: at tr_tcpcap_stop() */
	const uint16_t *ports;		/* only segments from or to these ports; NULL: all */
	unsigned nports;		/* <= TCPCAP_MAX_PORTS */
	bool has_clock_offset;		/* else CLOCK_REALTIME - CLOCK_MONOTONIC now */
	int64_t clock_offset;		/* the CTF clock's offset to the epoch, ns */
	uint64_t ring_size;		/* the BPF ring buffer: a power of two >= 4096; 0: default */
	/* libbpf's warnings (one line, no newline, "libbpf: ..."); NULL: none.
	 * Called from tr_tcpcap_new() and tr_tcpcap_start(). */
	void (*log)(void *arg, const char *msg);
	void *log_arg;
};

struct tr_tcpcap_stats {
	uint64_t sent, received;	/* segments written */
	uint64_t lost;			/* the ring buffer was full */
	uint64_t late;			/* older than the reorder window */
	uint64_t negative;		/* before the node clock's zero */
	uint64_t skipped;		/* IPv4 TCP, but headers unreadable (not counted as lost) */
};

struct tcpcap;

/*
 * Checks the trace directory, identifies the network namespace, loads the
 * eBPF program (needs root, or CAP_BPF and CAP_PERFMON) and creates the
 * trace. Returns the object, which the caller frees with tr_tcpcap_free();
 * NULL with errno and a message in err on error.
 */
struct tcpcap *tr_tcpcap_new(const struct tcpcap_opts *o, char *err, size_t errlen);
/* Attaches the program: segments are recorded from now on. */
int tr_tcpcap_start(struct tcpcap *t, char *err, size_t errlen);
/*
 * Drains the ring buffer into the trace (in time order per CPU, after a
 * reorder window) until the duration has passed or tr_tcpcap_stop() is
 * called; then detaches, drains what is left and finalizes the trace. Call
 * it once, after tr_tcpcap_start().
 */
int tr_tcpcap_run(struct tcpcap *t, char *err, size_t errlen);
/* Makes tr_tcpcap_run() return within its poll period (0.1 s); safe from
 * another thread and from a signal handler. */
void tr_tcpcap_stop(struct tcpcap *t);
/* Detaches and unloads the program, frees everything; accepts NULL. */
void tr_tcpcap_free(struct tcpcap *t);

void tr_tcpcap_stats(const struct tcpcap *t, struct tr_tcpcap_stats *s);
/* The inode of the recorded network namespace (net:[N]). */
uint64_t tr_tcpcap_netns(const struct tcpcap *t);

#endif
