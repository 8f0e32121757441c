/* SPDX-License-Identifier: MIT */
/*
 * lib/kern/families.c - the kernel event families (family.h): one row per
 * ftrace system that has a preset or is named differently by LTTng. The
 * names follow LTTng's kernel tracer (lttng-modules' instrumentation), so
 * that traces of either tool read the same; docs/kernel.md lists them and
 * docs/CONTRIBUTING.md says how to add a row.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"	/* tr_glob_match */
#include "kern/family.h"
#include "kern/krec.h"

#define EVENTS(...) ((const char *const[]){ __VA_ARGS__, NULL })

const struct tr_kfamily tr_kfamilies[] = {
	/* the task's pid is the thread id; priorities as LTTng shows them */
	{ .system = "sched", .preset = "sched",
	  .events = EVENTS("sched_switch", "sched_wakeup", "sched_wakeup_new",
			   "sched_migrate_task", "sched_process_fork", "sched_process_exec",
			   "sched_process_exit"),
	  .renames = { { "pid", "tid" }, { "*_pid", "*_tid" } },
	  .prio = "*prio", .tgid = "sched_process_fork.*_pid" },
	/* syscall_entry_<name> with the arguments syscalls:sys_enter_<name> names */
	{ .system = "raw_syscalls", .preset = "syscalls",
	  .events = EVENTS("sys_enter", "sys_exit"),
	  .formats = "syscalls", .conv = TR_KCONV_RAW_SYSCALLS },
	{ .system = "syscalls",
	  .names = { { "sys_enter_*", "sys_enter_", "syscall_entry_" },
		     { "sys_exit_*", "sys_exit_", "syscall_exit_" } },
	  .conv = TR_KCONV_SYSCALLS },
	{ .system = "irq", .preset = "irq",
	  .events = EVENTS("irq_handler_entry", "irq_handler_exit", "softirq_entry",
			   "softirq_exit", "softirq_raise"),
	  .names = { { "softirq_*", "", "irq_" } } },
	{ .system = "block", .preset = "block",
	  .events = EVENTS("block_rq_insert", "block_rq_issue", "block_rq_complete",
			   "block_bio_queue"),
	  .rwbs = "rwbs" },
	{ .system = "net", .preset = "net",
	  .events = EVENTS("net_dev_queue", "net_dev_xmit", "netif_receive_skb", "netif_rx") },
	{ .system = "kvm", .preset = "kvm", .events = EVENTS("kvm_entry", "kvm_exit") },
	/* timer wheel, high-resolution timers, interval timers, the tick */
	{ .system = "timer", .preset = "timer",
	  .events = EVENTS("timer_init", "timer_start", "timer_expire_entry",
			   "timer_expire_exit", "timer_cancel", "hrtimer_init", "hrtimer_setup",
			   "hrtimer_start", "hrtimer_expire_entry", "hrtimer_expire_exit",
			   "hrtimer_cancel", "itimer_state", "itimer_expire", "tick_stop"),
	  .names = { { "hrtimer_*", "", "timer_" }, { "itimer_*", "", "timer_" } } },
	/* the system as prefix, unless the name has it already */
	{ .system = "kmem", .preset = "kmem",
	  .events = EVENTS("kmalloc", "kfree", "kmem_cache_alloc", "kmem_cache_free",
			   "mm_page_alloc", "mm_page_free"),
	  .names = { { "kmem*", "", "" }, { "*", "", "kmem_" } } },
	{ .system = "power", .preset = "power",
	  .events = EVENTS("cpu_idle", "cpu_idle_miss", "cpu_frequency", "cpu_frequency_limits",
			   "suspend_resume", "wakeup_source_activate",
			   "wakeup_source_deactivate", "pm_qos_add_request",
			   "pm_qos_update_request", "pm_qos_remove_request"),
	  .names = { { "power*", "", "" }, { "*", "", "power_" } } },
	/* presets of systems that keep ftrace's names (as LTTng's probes of
	 * the same name do); events the kernel lacks are left out */
	{ .system = "workqueue", .preset = "workqueue",
	  .events = EVENTS("workqueue_queue_work", "workqueue_activate_work",
			   "workqueue_execute_start", "workqueue_execute_end") },
	{ .system = "signal", .preset = "signal",
	  .events = EVENTS("signal_generate", "signal_deliver") },
	{ .system = "module", .preset = "module",
	  .events = EVENTS("module_load", "module_free", "module_get", "module_put",
			   "module_request") },
	{ .system = "writeback", .preset = "writeback",
	  .events = EVENTS("writeback_*", "wbc_writepage", "balance_dirty_pages",
			   "global_dirty_state", "bdi_dirty_ratelimit") },
	{ .system = "vmscan", .preset = "vmscan", .events = EVENTS("mm_vmscan_*") },
	{ .system = "rcu", .preset = "rcu", .events = EVENTS("*") },
	{ .system = "lock", .preset = "lock",
	  .events = EVENTS("contention_begin", "contention_end", "lock_acquire", "lock_release",
			   "lock_contended", "lock_acquired") },
	{ .system = "printk", .preset = "printk", .events = EVENTS("console") },
	{ .system = "random", .preset = "random", .events = EVENTS("*") },
	{ .system = "irq_vectors", .preset = "irq_vectors",
	  .events = EVENTS("*_entry", "*_exit") },
};

const size_t tr_nkfamilies = ARRAY_SIZE(tr_kfamilies);

const struct tr_kfamily *tr_kfamily_by_system(const char *sys)
{
	for (size_t i = 0; sys && i < ARRAY_SIZE(tr_kfamilies); i++)
		if (!strcmp(tr_kfamilies[i].system, sys))
			return &tr_kfamilies[i];
	return NULL;
}

const struct tr_kfamily *tr_kfamily_by_preset(const char *name)
{
	for (size_t i = 0; name && i < ARRAY_SIZE(tr_kfamilies); i++)
		if (tr_kfamilies[i].preset && !strcmp(tr_kfamilies[i].preset, name))
			return &tr_kfamilies[i];
	return NULL;
}

const char *tr_kfamily_field(const struct tr_kfamily *f, const char *name, char *tmp,
			     size_t cap)
{
	size_t n = strlen(name);
	for (size_t i = 0; f && i < TR_KFAMILY_RULES && f->renames[i].from; i++) {
		const struct tr_kfield_rename *r = &f->renames[i];
		if (r->from[0] != '*') {
			if (!strcmp(name, r->from))
				return r->to;
			continue;
		}
		size_t sl = strlen(r->from + 1);
		if (n > sl && !strcmp(name + n - sl, r->from + 1)) {
			snprintf(tmp, cap, "%.*s%s", (int)(n - sl), name, r->to + 1);
			return tmp;
		}
	}
	return name;
}

bool tr_kfamily_prio(const struct tr_kfamily *f, const char *name)
{
	return f && f->prio && tr_glob_match(f->prio, name);
}

bool tr_kfamily_tgid(const struct tr_kfamily *f, const char *event, const char *name)
{
	char spec[256];
	if (!f || !f->tgid)
		return false;
	snprintf(spec, sizeof(spec), "%s.%s", event, name);
	return tr_glob_match(f->tgid, spec);
}

bool tr_kfamily_rwbs(const struct tr_kfamily *f, const char *name)
{
	return f && f->rwbs && tr_glob_match(f->rwbs, name);
}

enum {
	RWBS_WRITE = 1 << 0, RWBS_DISCARD = 1 << 1, RWBS_READ = 1 << 2, RWBS_RAHEAD = 1 << 3,
	RWBS_BARRIER = 1 << 4, RWBS_SYNC = 1 << 5, RWBS_META = 1 << 6, RWBS_SECURE = 1 << 7,
	RWBS_FLUSH = 1 << 8, RWBS_FUA = 1 << 9, RWBS_PREFLUSH = 1 << 10,
};

unsigned tr_kfamily_rwbs_bits(const char *s, size_t n)
{
	unsigned bits = 0;
	size_t i = 0;
	/* a leading F before another operation letter is a preflush */
	if (n > 1 && s[0] == 'F' && s[1] && strchr("WDFRN", s[1]))
		bits |= RWBS_PREFLUSH, i = 1;
	if (i < n) {
		switch (s[i]) {
		case 'W': bits |= RWBS_WRITE; break;
		case 'D': bits |= RWBS_DISCARD;
			if (i + 1 < n && s[i + 1] == 'E')
				bits |= RWBS_SECURE, i++;
			break;
		case 'F': bits |= RWBS_FLUSH; break;
		case 'R': bits |= RWBS_READ; break;
		default: break;		/* N: none */
		}
		i++;
	}
	for (; i < n && s[i]; i++)
		switch (s[i]) {
		case 'F': bits |= RWBS_FUA; break;
		case 'A': bits |= RWBS_RAHEAD; break;
		case 'S': bits |= RWBS_SYNC; break;
		case 'M': bits |= RWBS_META; break;
		default: break;
		}
	return bits;
}

/* ------------------------------------------------- krec.h's names */

const char *tr_krec_lttng_name(const char *sys, const char *name)
{
	static char out[256];
	const struct tr_kfamily *f = tr_kfamily_by_system(sys);

	for (size_t i = 0; f && i < TR_KFAMILY_RULES && f->names[i].glob; i++) {
		const struct tr_kname_rule *r = &f->names[i];
		if (!tr_glob_match(r->glob, name))
			continue;
		size_t sl = strlen(r->strip);
		if (strncmp(name, r->strip, sl))
			sl = 0;
		snprintf(out, sizeof(out), "%s%s", r->add, name + sl);
		return out;
	}
	snprintf(out, sizeof(out), "%s", name);
	return out;
}

const char *tr_krec_preset_system(const char *preset)
{
	const struct tr_kfamily *f = tr_kfamily_by_preset(preset);
	return f ? f->system : NULL;
}

size_t tr_krec_presets(char *buf, size_t cap)
{
	size_t n = 0;
	if (cap)
		buf[0] = 0;
	for (size_t i = 0; i < ARRAY_SIZE(tr_kfamilies); i++) {
		if (!tr_kfamilies[i].preset)
			continue;
		int w = snprintf(buf + (n < cap ? n : cap), n < cap ? cap - n : 0, "%s%s",
				 n ? ", " : "", tr_kfamilies[i].preset);
		n += w > 0 ? (size_t)w : 0;
	}
	return n;
}
