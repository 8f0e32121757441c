/* SPDX-License-Identifier: MIT OR GPL-2.0-only */
/*
 * lib/kern/tcpcap.bpf.c - the eBPF side of `trawl tcpcap`: every IPv4 TCP
 * segment leaving or arriving on a network device of ONE network namespace
 * (the recorder's), with its identity (addresses, ports, seq, ack, flags,
 * payload length) and the kernel's CLOCK_MONOTONIC, into a ring buffer.
 *
 * Built by mk/bpf.mk with clang -target bpf and embedded in the trawl
 * binary as a libbpf skeleton that lib/kern/tcpcap.c loads. The Makefile
 * leaves *.bpf.c out of the host build; everything is under __bpf__
 * anyway, so the host compiler would see an empty file.
 *
 * Hooks (BTF-enabled raw tracepoints; no kprobes needed):
 *  - net_dev_start_xmit(skb, dev): a packet handed to a device's driver,
 *    after software GSO segmentation, so what leaves is what is seen;
 *  - netif_receive_skb(skb): a packet entering the stack from a device
 *    (every receive path, backlog, NAPI and GRO, passes through it).
 * Kernel structures are read with CO-RE through the minimal definitions
 * below, relocated at load time against the running kernel's BTF.
 */
#ifdef __bpf__

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>

#include "tcpcap-bpf.h"

/* ---- the few kernel fields we read (names as in the kernel; CO-RE) */

struct ns_common {
	unsigned int inum;
} __attribute__((preserve_access_index));

struct net {
	struct ns_common ns;
} __attribute__((preserve_access_index));

typedef struct {
	struct net *net;
} possible_net_t;

struct net_device {
	possible_net_t nd_net;
} __attribute__((preserve_access_index));

struct sk_buff {
	struct net_device *dev;
	unsigned int len;
	unsigned int data_len;
	__u16 protocol;			/* __be16 */
	__u16 network_header;		/* offset from head */
	unsigned char *head;
	unsigned char *data;
} __attribute__((preserve_access_index));

/* ---- set by user space before load */

const volatile __u32 netns_ino = 0;	/* the recorder's /proc/self/ns/net inode */
const volatile __u8 filter_ports = 0;	/* 1: only segments with a port in port_set */
const volatile __u64 wakeup_bytes = 0;	/* wake the reader when this much is queued */
const volatile __u8 port_set[65536 / 8] = { 0 };	/* bit p: port p (--port) */

/* ---- maps */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);	/* resized by user space */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, TCPCAP_NSTATS);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#define ETH_P_IP	0x0800
#define IPPROTO_TCP_	6

static __always_inline void count(__u32 what)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &what);

	if (v)
		__sync_fetch_and_add(v, 1);	/* a softirq may nest on this CPU */
}

static __always_inline int record(struct sk_buff *skb, __u8 dir)
{
	__u64 ts = bpf_ktime_get_ns();	/* first: as close to the hook as we can */
	unsigned char *head, *data, *iph;
	__u32 len, linear, ihl, doff, tot;
	__u8 ip[20], th[20];
	struct tcpcap_rec *r;
	__u16 sport, dport;
	long off;

	/*
	 * tp_btf: skb is a typed kernel pointer, so its fields (and those it
	 * points to) are plain loads, relocated by CO-RE and made fault-safe
	 * by the verifier; only the packet bytes need bpf_probe_read_kernel.
	 */
	if (skb->dev->nd_net.net->ns.inum != netns_ino)
		return 0;
	if (skb->protocol != bpf_htons(ETH_P_IP))
		return 0;
	head = skb->head;
	data = skb->data;
	len = skb->len;
	linear = len - skb->data_len;
	/*
	 * Sending, skb->data is at the link-layer header and network_header
	 * was set by IP; receiving, the driver pulled the link-layer header
	 * (eth_type_trans) so data is at the IP header, while network_header
	 * is only reset after this tracepoint.
	 */
	if (dir == TCPCAP_SEND)
		iph = head + skb->network_header;
	else
		iph = data;
	off = iph - data;
	if (off < 0 || off > 256)
		goto skipped;
	if (bpf_probe_read_kernel(ip, sizeof(ip), iph))
		goto skipped;
	ihl = (ip[0] & 0xf) * 4;
	if ((ip[0] >> 4) != 4 || ihl < 20)
		goto skipped;
	if (ip[9] != IPPROTO_TCP_)
		return 0;
	if ((ip[6] & 0x3f) | ip[7])	/* a fragment (MF or an offset) */
		goto skipped;
	if ((__u32)off + ihl + sizeof(th) > linear)	/* TCP header not in the linear part */
		goto skipped;
	if (bpf_probe_read_kernel(th, sizeof(th), iph + ihl))
		goto skipped;
	doff = (th[12] >> 4) * 4;
	tot = ((__u32)ip[2] << 8) | ip[3];
	if (!tot)		/* a BIG TCP GSO packet: the length is the skb's */
		tot = len - (__u32)off;
	if (doff < 20 || tot < ihl + doff)
		goto skipped;
	sport = ((__u16)th[0] << 8) | th[1];
	dport = ((__u16)th[2] << 8) | th[3];
	if (filter_ports && !(port_set[sport >> 3] & (1 << (sport & 7))) &&
	    !(port_set[dport >> 3] & (1 << (dport & 7))))
		return 0;

	r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	if (!r) {
		count(TCPCAP_STAT_LOST);
		return 0;
	}
	r->ts = ts;
	r->saddr = ((__u32)ip[12] << 24) | ((__u32)ip[13] << 16) | ((__u32)ip[14] << 8) | ip[15];
	r->daddr = ((__u32)ip[16] << 24) | ((__u32)ip[17] << 16) | ((__u32)ip[18] << 8) | ip[19];
	r->sport = sport;
	r->dport = dport;
	r->seq = ((__u32)th[4] << 24) | ((__u32)th[5] << 16) | ((__u32)th[6] << 8) | th[7];
	r->ack = ((__u32)th[8] << 24) | ((__u32)th[9] << 16) | ((__u32)th[10] << 8) | th[11];
	r->len = tot - ihl - doff;
	r->cpu = bpf_get_smp_processor_id();
	r->flags = th[13];
	r->dir = dir;
	r->pad[0] = r->pad[1] = 0;
	/* Wake the reader only when the ring fills up; it also drains on a timer. */
	bpf_ringbuf_submit(r, bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes ?
			      BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
	return 0;
skipped:
	count(TCPCAP_STAT_SKIPPED);
	return 0;
}

SEC("tp_btf/net_dev_start_xmit")
int BPF_PROG(tcpcap_send, struct sk_buff *skb, struct net_device *dev)
{
	return record(skb, TCPCAP_SEND);
}

SEC("tp_btf/netif_receive_skb")
int BPF_PROG(tcpcap_recv, struct sk_buff *skb)
{
	return record(skb, TCPCAP_RECV);
}

#endif /* __bpf__ */
