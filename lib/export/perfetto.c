// SPDX-License-Identifier: MIT
/*
 * lib/export/perfetto.c - the "perfetto" export format: a Trace of
 * TracePackets (Perfetto's .proto files under protos/perfetto/trace), written with
 * trawl's own encoder (pb.h). Field numbers are the public ones of those
 * files; docs/export.md lists the messages used and what each carries:
 *  - one machine per host: every packet's machine_id, and a SystemInfo
 *    packet naming it (machine_name);
 *  - the scheduler as ftrace: per host and CPU, FtraceEventBundles of
 *    sched_switch and sched_waking/wakeup/wakeup_new, from which
 *    trace_processor derives CPU slices and thread states;
 *  - user space as track events: thread and process track descriptors,
 *    slices on lanes under their process (async: begin/end pairs need not
 *    nest), instants on their thread, messages as flows;
 *  - names: a ProcessTree per host at the end.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "export/export-internal.h"
#include "export/pb.h"

/* Field numbers (perfetto.protos). */
enum {
	TRACE_PACKET = 1,
	/* TracePacket */
	TP_FTRACE_EVENTS = 1, TP_PROCESS_TREE = 2, TP_TIMESTAMP = 8,
	TP_SEQ_ID = 10, TP_TRACK_EVENT = 11, TP_SEQ_FLAGS = 13, TP_SYSTEM_INFO = 45,
	TP_TRACK_DESCRIPTOR = 60, TP_FIRST_ON_SEQ = 87, TP_MACHINE_ID = 98,
	SEQ_INCREMENTAL_STATE_CLEARED = 1,
	/* SystemInfo, Utsname */
	SI_UTSNAME = 1, SI_MACHINE_NAME = 17, UTS_SYSNAME = 1, UTS_VERSION = 2, UTS_RELEASE = 3,
	/* FtraceEventBundle, FtraceEvent */
	FB_CPU = 1, FB_EVENT = 2,
	FE_TIMESTAMP = 1, FE_PID = 2, FE_SCHED_SWITCH = 4, FE_SCHED_WAKEUP = 17,
	FE_SCHED_WAKING = 20, FE_SCHED_WAKEUP_NEW = 114,
	/* SchedSwitchFtraceEvent */
	SS_PREV_COMM = 1, SS_PREV_PID = 2, SS_PREV_PRIO = 3, SS_PREV_STATE = 4,
	SS_NEXT_COMM = 5, SS_NEXT_PID = 6, SS_NEXT_PRIO = 7,
	/* SchedWaking/Wakeup/WakeupNewFtraceEvent */
	SW_COMM = 1, SW_PID = 2, SW_PRIO = 3, SW_SUCCESS = 4, SW_TARGET_CPU = 5,
	/* TrackDescriptor, ProcessDescriptor, ThreadDescriptor */
	TD_UUID = 1, TD_NAME = 2, TD_PROCESS = 3, TD_THREAD = 4, TD_PARENT = 5,
	PD_PID = 1, PD_NAME = 6, THD_PID = 1, THD_TID = 2, THD_NAME = 5,
	/* TrackEvent */
	TE_DEBUG = 4, TE_TYPE = 9, TE_TRACK = 11, TE_NAME = 23, TE_FLOW = 47, TE_FLOW_END = 48,
	/* DebugAnnotation */
	DA_JSON = 9, DA_NAME = 10,
	TYPE_SLICE_BEGIN = 1, TYPE_SLICE_END = 2, TYPE_INSTANT = 3,
	/* ProcessTree */
	PT_PROCESSES = 1, PT_THREADS = 2,
	PTP_PID = 1, PTP_CMDLINE = 3, PTT_TID = 1, PTT_NAME = 2, PTT_TGID = 3,
};

#define BUNDLE_BYTES (64 * 1024)	/* a CPU's events per bundle, about */
#define OUT_BYTES (1024 * 1024)		/* written out in pieces of about */

/* tr_xthread/tr_xproc flags */
#define F_DESCRIBED 1u

struct pf_host {
	struct tr_pb *cpu;		/* FtraceEvents of each CPU, not yet written */
	uint32_t ncpu;
	uint64_t track;			/* the host's own track, 0: not described */
};

struct pf {
	struct tr_pb out;
	struct json args;		/* an event's context and fields (--fields) */
	struct pf_host *hosts;
	uint64_t next_uuid;		/* 1.. */
};

/*
 * Track uuids are numbered as tracks are described (short varints: a hash
 * would take ten bytes in every track event): a thread's track, a host's,
 * and a block per process: its track, then one per lane.
 */
static uint64_t uuid_block(struct pf *p, uint64_t n)
{
	uint64_t u = p->next_uuid;

	p->next_uuid += n;
	return u;
}

static int out_flush(struct tr_export *x, bool force)
{
	struct pf *p = x->priv;

	if (p->out.nomem)
		return -ENOMEM;
	if (!p->out.len || (!force && p->out.len < OUT_BYTES))
		return 0;
	if (fwrite(p->out.buf, 1, p->out.len, x->out) != p->out.len)
		return -EIO;
	tr_pb_clear(&p->out);
	return 0;
}

/* A packet's end: its machine and sequence (one per host), then closed. */
static int packet_end(struct tr_export *x, const struct tr_xhost *h)
{
	struct pf *p = x->priv;

	tr_pb_uint(&p->out, TP_SEQ_ID, h->machine);
	tr_pb_uint(&p->out, TP_MACHINE_ID, h->machine);
	tr_pb_end(&p->out);
	return out_flush(x, false);
}

static int pf_start(struct tr_export *x)
{
	struct pf *p = x->priv;
	int ret;

	tr_pb_init(&p->out);
	tr_json_init(&p->args);
	p->next_uuid = 1;
	if (!(p->hosts = calloc(x->nhosts ? x->nhosts : 1, sizeof(*p->hosts))))
		return -ENOMEM;
	for (size_t i = 0; i < x->nhosts; i++) {
		const struct tr_xhost *h = &x->hosts[i];

		tr_pb_begin(&p->out, TRACE_PACKET);
		tr_pb_begin(&p->out, TP_SYSTEM_INFO);
		/* the kernel's release tells trace_processor how to read
		 * sched_switch's prev_state */
		tr_pb_begin(&p->out, SI_UTSNAME);
		tr_pb_str(&p->out, UTS_SYSNAME, h->sysname ? h->sysname : "Linux");
		if (h->version)
			tr_pb_str(&p->out, UTS_VERSION, h->version);
		if (h->release)
			tr_pb_str(&p->out, UTS_RELEASE, h->release);
		tr_pb_end(&p->out);
		tr_pb_str(&p->out, SI_MACHINE_NAME, h->name);
		tr_pb_end(&p->out);
		tr_pb_uint(&p->out, TP_SEQ_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
		tr_pb_uint(&p->out, TP_FIRST_ON_SEQ, 1);
		if ((ret = packet_end(x, h)) || (ret = tr_export_count(x, 1)))
			return ret;
	}
	return 0;
}

static struct tr_pb *cpu_buf(struct tr_export *x, const struct tr_xhost *h, uint32_t cpu)
{
	struct pf_host *ph = &((struct pf *)x->priv)->hosts[h - x->hosts];

	if (cpu >= ph->ncpu) {
		struct tr_pb *b = realloc(ph->cpu, (cpu + 1) * sizeof(*b));

		if (!b)
			return NULL;
		for (uint32_t i = ph->ncpu; i <= cpu; i++)
			tr_pb_init(&b[i]);
		ph->cpu = b;
		ph->ncpu = cpu + 1;
	}
	return &ph->cpu[cpu];
}

/* Writes a CPU's buffered events as one FtraceEventBundle packet. */
static int bundle_flush(struct tr_export *x, const struct tr_xhost *h, uint32_t cpu,
			struct tr_pb *b)
{
	struct pf *p = x->priv;

	if (b->nomem)
		return -ENOMEM;
	if (!b->len)
		return 0;
	tr_pb_begin(&p->out, TRACE_PACKET);
	tr_pb_begin(&p->out, TP_FTRACE_EVENTS);
	tr_pb_uint(&p->out, FB_CPU, cpu);
	tr_pb_raw(&p->out, b->buf, b->len);
	tr_pb_end(&p->out);
	tr_pb_clear(b);
	return packet_end(x, h);
}

static int pf_switch(struct tr_export *x, struct tr_xhost *h, uint32_t cpu, int64_t ts,
		     const struct tr_xswitch *s)
{
	struct tr_pb *b = cpu_buf(x, h, cpu);

	if (!b)
		return -ENOMEM;
	tr_pb_begin(b, FB_EVENT);
	tr_pb_uint(b, FE_TIMESTAMP, (uint64_t)ts);
	tr_pb_uint(b, FE_PID, (uint32_t)s->prev_tid);
	tr_pb_begin(b, FE_SCHED_SWITCH);
	tr_pb_strn(b, SS_PREV_COMM, s->prev_comm, s->prev_len);
	tr_pb_int(b, SS_PREV_PID, s->prev_tid);
	tr_pb_int(b, SS_PREV_PRIO, s->prev_prio);
	tr_pb_int(b, SS_PREV_STATE, s->prev_state);
	tr_pb_strn(b, SS_NEXT_COMM, s->next_comm, s->next_len);
	tr_pb_int(b, SS_NEXT_PID, s->next_tid);
	tr_pb_int(b, SS_NEXT_PRIO, s->next_prio);
	tr_pb_end(b);
	tr_pb_end(b);
	int ret = tr_export_count(x, 1);

	if (!ret && b->len >= BUNDLE_BYTES)
		ret = bundle_flush(x, h, cpu, b);
	return ret;
}

static int pf_wakeup(struct tr_export *x, struct tr_xhost *h, uint32_t cpu, int64_t ts,
		     int32_t cur_tid, const struct tr_xwakeup *w)
{
	static const uint32_t field[] = {
		[TR_XWAKE_WAKING] = FE_SCHED_WAKING,
		[TR_XWAKE_WAKEUP] = FE_SCHED_WAKEUP,
		[TR_XWAKE_WAKEUP_NEW] = FE_SCHED_WAKEUP_NEW,
	};
	struct tr_pb *b = cpu_buf(x, h, cpu);

	if (!b)
		return -ENOMEM;
	tr_pb_begin(b, FB_EVENT);
	tr_pb_uint(b, FE_TIMESTAMP, (uint64_t)ts);
	if (cur_tid >= 0)
		tr_pb_uint(b, FE_PID, (uint32_t)cur_tid);
	tr_pb_begin(b, field[w->kind]);
	tr_pb_strn(b, SW_COMM, w->comm, w->comm_len);
	tr_pb_int(b, SW_PID, w->tid);
	tr_pb_int(b, SW_PRIO, w->prio);
	tr_pb_int(b, SW_SUCCESS, 1);
	tr_pb_int(b, SW_TARGET_CPU, w->target_cpu);
	tr_pb_end(b);
	tr_pb_end(b);
	int ret = tr_export_count(x, 1);

	if (!ret && b->len >= BUNDLE_BYTES)
		ret = bundle_flush(x, h, cpu, b);
	return ret;
}

/* A process's track (uuid pr->id): its pid and name, at ts. */
static int proc_desc(struct tr_export *x, const struct tr_xhost *h, const struct tr_xproc *pr,
		     int64_t ts)
{
	struct pf *p = x->priv;
	int ret;

	tr_pb_begin(&p->out, TRACE_PACKET);
	tr_pb_uint(&p->out, TP_TIMESTAMP, (uint64_t)ts);
	tr_pb_begin(&p->out, TP_TRACK_DESCRIPTOR);
	tr_pb_uint(&p->out, TD_UUID, pr->id);
	tr_pb_begin(&p->out, TD_PROCESS);
	tr_pb_int(&p->out, PD_PID, pr->pid);
	if (pr->name[0])
		tr_pb_str(&p->out, PD_NAME, pr->name);
	tr_pb_end(&p->out);
	tr_pb_end(&p->out);
	if ((ret = packet_end(x, h)))
		return ret;
	return tr_export_count(x, 1);
}

/* A thread's track (uuid t->id): its pid, tid and name, at ts. */
static int thread_desc(struct tr_export *x, const struct tr_xhost *h, const struct tr_xthread *t,
		       int64_t ts)
{
	struct pf *p = x->priv;
	int ret;

	tr_pb_begin(&p->out, TRACE_PACKET);
	tr_pb_uint(&p->out, TP_TIMESTAMP, (uint64_t)ts);
	tr_pb_begin(&p->out, TP_TRACK_DESCRIPTOR);
	tr_pb_uint(&p->out, TD_UUID, t->id);
	tr_pb_begin(&p->out, TD_THREAD);
	tr_pb_int(&p->out, THD_PID, t->pid >= 0 ? t->pid : t->tid);
	tr_pb_int(&p->out, THD_TID, t->tid);
	if (t->name[0])
		tr_pb_str(&p->out, THD_NAME, t->name);
	tr_pb_end(&p->out);
	tr_pb_end(&p->out);
	if ((ret = packet_end(x, h)))
		return ret;
	return tr_export_count(x, 1);
}

/*
 * A thread renamed (exec): the tracks already described are described
 * again, the same uuids with the new name, at the exec's time (Perfetto
 * takes a track's latest descriptor); one described later has the new
 * name at once. The ProcessTree at the end has the last names.
 */
static int pf_rename(struct tr_export *x, struct tr_xhost *h, uint32_t cpu, int64_t ts,
		     struct tr_xthread *t, struct tr_xproc *pr)
{
	int ret;

	(void)cpu;
	if ((t->flags & F_DESCRIBED) && (ret = thread_desc(x, h, t, ts)))
		return ret;
	if (pr && (pr->flags & F_DESCRIBED) && (ret = proc_desc(x, h, pr, ts)))
		return ret;
	return 0;
}

/* The track a record goes on, described the first time: its uuid. */
static int track_of(struct tr_export *x, const struct tr_xhost *h, const struct tr_xmark *m,
		    bool lane, int64_t ts, uint64_t *uuid)
{
	struct pf *p = x->priv;
	uint32_t hi = (uint32_t)(h - x->hosts);
	int ret;

	if (lane || (m->proc && !m->thread)) {
		struct tr_xproc *pr = m->proc;

		if (!(pr->flags & F_DESCRIBED)) {
			pr->id = uuid_block(p, 1 + TR_X_LANES);
			if ((ret = proc_desc(x, h, pr, ts)))
				return ret;
			pr->flags |= F_DESCRIBED;
		}
		*uuid = pr->id;
		if (!lane)
			return 0;
		*uuid = pr->id + 1 + m->lane;
		if (!(pr->lanes_seen & (1ull << m->lane))) {
			char name[32];

			snprintf(name, sizeof(name), "slices %u", m->lane);
			tr_pb_begin(&p->out, TRACE_PACKET);
			tr_pb_uint(&p->out, TP_TIMESTAMP, (uint64_t)ts);
			tr_pb_begin(&p->out, TP_TRACK_DESCRIPTOR);
			tr_pb_uint(&p->out, TD_UUID, *uuid);
			tr_pb_uint(&p->out, TD_PARENT, pr->id);
			tr_pb_str(&p->out, TD_NAME, name);
			tr_pb_end(&p->out);
			if ((ret = packet_end(x, h)) || (ret = tr_export_count(x, 1)))
				return ret;
			pr->lanes_seen |= 1ull << m->lane;
		}
		return 0;
	}
	if (m->thread) {
		struct tr_xthread *t = m->thread;

		if (t->flags & F_DESCRIBED) {
			*uuid = t->id;
			return 0;
		}
		*uuid = t->id = uuid_block(p, 1);
		t->flags |= F_DESCRIBED;
		return thread_desc(x, h, t, ts);
	}
	struct pf_host *ph = &p->hosts[hi];

	if (ph->track) {
		*uuid = ph->track;
		return 0;
	}
	*uuid = ph->track = uuid_block(p, 1);
	char name[300];

	snprintf(name, sizeof(name), "%s: events", h->name);
	tr_pb_begin(&p->out, TRACE_PACKET);
	tr_pb_uint(&p->out, TP_TIMESTAMP, (uint64_t)ts);
	tr_pb_begin(&p->out, TP_TRACK_DESCRIPTOR);
	tr_pb_uint(&p->out, TD_UUID, *uuid);
	tr_pb_str(&p->out, TD_NAME, name);
	tr_pb_end(&p->out);
	if ((ret = packet_end(x, h)))
		return ret;
	return tr_export_count(x, 1);
}

static int track_event(struct tr_export *x, struct tr_xhost *h, int64_t ts,
		       const struct tr_xmark *m, unsigned type)
{
	struct pf *p = x->priv;
	uint64_t uuid;
	int ret = track_of(x, h, m, type != TYPE_INSTANT, ts, &uuid);

	if (ret)
		return ret;
	tr_pb_begin(&p->out, TRACE_PACKET);
	tr_pb_uint(&p->out, TP_TIMESTAMP, (uint64_t)ts);
	tr_pb_begin(&p->out, TP_TRACK_EVENT);
	tr_pb_uint(&p->out, TE_TYPE, type);
	tr_pb_uint(&p->out, TE_TRACK, uuid);
	if (type != TYPE_SLICE_END)
		tr_pb_strn(&p->out, TE_NAME, m->name, m->name_len);
	if (m->flow_out)
		tr_pb_fixed64(&p->out, TE_FLOW, m->flow_out);
	if (m->flow_in)
		tr_pb_fixed64(&p->out, TE_FLOW_END, m->flow_in);
	if (x->fields) {
		tr_json_clear(&p->args);
		tr_json_obj(&p->args);
		tr_format_json_values(&p->args, m->ev);
		tr_json_obj_end(&p->args);
		if (p->args.nomem)
			return -ENOMEM;
		tr_pb_begin(&p->out, TE_DEBUG);
		tr_pb_str(&p->out, DA_NAME, "args");
		tr_pb_bytes(&p->out, DA_JSON, p->args.buf, p->args.len);
		tr_pb_end(&p->out);
	}
	tr_pb_end(&p->out);
	if ((ret = packet_end(x, h)))
		return ret;
	return tr_export_count(x, 1);
}

static int pf_begin(struct tr_export *x, struct tr_xhost *h, int64_t ts, const struct tr_xmark *m)
{
	return track_event(x, h, ts, m, TYPE_SLICE_BEGIN);
}

static int pf_end(struct tr_export *x, struct tr_xhost *h, int64_t ts, const struct tr_xmark *m)
{
	return track_event(x, h, ts, m, TYPE_SLICE_END);
}

static int pf_instant(struct tr_export *x, struct tr_xhost *h, int64_t ts,
		      const struct tr_xmark *m)
{
	return track_event(x, h, ts, m, TYPE_INSTANT);
}

/* Per host: what the traces said of processes and threads. */
static int process_tree(struct tr_export *x, const struct tr_xhost *h)
{
	struct pf *p = x->priv;
	uint32_t hi = (uint32_t)(h - x->hosts);
	bool any = false;

	tr_pb_begin(&p->out, TRACE_PACKET);
	tr_pb_uint(&p->out, TP_TIMESTAMP, (uint64_t)(x->first_ts == INT64_MIN ? 0 : x->first_ts));
	tr_pb_begin(&p->out, TP_PROCESS_TREE);
	for (size_t i = 0; i < x->nprocs; i++) {
		const struct tr_xproc *pr = &x->procs[i];

		if (pr->host != hi)
			continue;
		tr_pb_begin(&p->out, PT_PROCESSES);
		tr_pb_int(&p->out, PTP_PID, pr->pid);
		if (pr->name[0])
			tr_pb_str(&p->out, PTP_CMDLINE, pr->name);
		tr_pb_end(&p->out);
		any = true;
	}
	for (size_t i = 0; i < x->nthreads; i++) {
		const struct tr_xthread *t = &x->threads[i];

		if (t->host != hi || t->pid < 0)
			continue;
		tr_pb_begin(&p->out, PT_THREADS);
		tr_pb_int(&p->out, PTT_TID, t->tid);
		if (t->name[0])
			tr_pb_str(&p->out, PTT_NAME, t->name);
		tr_pb_int(&p->out, PTT_TGID, t->pid);
		tr_pb_end(&p->out);
		any = true;
	}
	tr_pb_end(&p->out);
	if (!any) {
		/* nothing known: drop the packet begun */
		tr_pb_end(&p->out);
		return -EAGAIN;
	}
	int ret = packet_end(x, h);

	return ret ? ret : tr_export_count(x, 1);
}

static int pf_finish(struct tr_export *x)
{
	struct pf *p = x->priv;
	int ret;

	for (size_t i = 0; i < x->nhosts; i++) {
		struct pf_host *ph = &p->hosts[i];

		for (uint32_t c = 0; c < ph->ncpu; c++)
			if ((ret = bundle_flush(x, &x->hosts[i], c, &ph->cpu[c])))
				return ret;
		size_t mark = p->out.len;

		ret = process_tree(x, &x->hosts[i]);
		if (ret == -EAGAIN) {
			p->out.len = mark;
			ret = 0;
		}
		if (ret)
			return ret;
	}
	return out_flush(x, true);
}

static void pf_release(struct tr_export *x)
{
	struct pf *p = x->priv;

	if (!p)
		return;
	tr_pb_release(&p->out);
	tr_json_release(&p->args);
	for (size_t i = 0; p->hosts && i < x->nhosts; i++) {
		for (uint32_t c = 0; c < p->hosts[i].ncpu; c++)
			tr_pb_release(&p->hosts[i].cpu[c]);
		free(p->hosts[i].cpu);
	}
	free(p->hosts);
}

const struct tr_xformat tr_xformat_perfetto = {
	.name = "perfetto",
	.help = "Perfetto protobuf trace (ui.perfetto.dev)",
	.priv_size = sizeof(struct pf),
	.start = pf_start,
	.sched_switch = pf_switch,
	.wakeup = pf_wakeup,
	.slice_begin = pf_begin,
	.slice_end = pf_end,
	.instant = pf_instant,
	.rename = pf_rename,
	.finish = pf_finish,
	.release = pf_release,
};
