/* SPDX-License-Identifier: MIT */
/*
 * lib/kern/tcpcap-bpf.h - what the tcpcap eBPF program (tcpcap.bpf.c) and
 * its user-space side (tcpcap.c) share: the ring buffer record and the
 * indexes of the per-CPU counters. Included by the BPF program (clang,
 * -target bpf) and by user space.
 */
#ifndef TRAWL_TCPCAP_BPF_H
#define TRAWL_TCPCAP_BPF_H

#include <linux/types.h>

enum tcpcap_dir {
	TCPCAP_SEND = 0,	/* leaving through a device of the namespace */
	TCPCAP_RECV = 1,	/* arriving on a device of the namespace */
};

/* Per-CPU counters (the `stats` map, a per-CPU array indexed by these). */
enum tcpcap_stat {
	TCPCAP_STAT_LOST = 0,	/* ring buffer full: segment not recorded */
	TCPCAP_STAT_SKIPPED,	/* IPv4 TCP, but headers unreadable (not linear) */
	TCPCAP_NSTATS,
};

/* Port filter: at most this many --port values. */
#define TCPCAP_MAX_PORTS 64

/*
 * One segment, as the kernel saw it; every field in host byte order. The
 * identity (saddr .. len) is what trawl sync matches a send and a receive
 * on; len is the TCP payload length: IP total length - IP header - TCP
 * header (for a GSO packet, the whole super-packet's payload).
 */
struct tcpcap_rec {
	__u64 ts;		/* bpf_ktime_get_ns(): the kernel's CLOCK_MONOTONIC */
	__u32 saddr, daddr;
	__u16 sport, dport;
	__u32 seq, ack;
	__u32 len;
	__u32 cpu;
	__u8 flags;		/* TCP header byte 13: CWR ECE URG ACK PSH RST SYN FIN */
	__u8 dir;		/* enum tcpcap_dir */
	__u8 pad[2];
};

#endif
