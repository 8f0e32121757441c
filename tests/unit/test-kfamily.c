/* SPDX-License-Identifier: MIT */
/*
 * test-kfamily: the kernel event families (lib/kern/family.h,
 * families.c): LTTng's event names, field renames and priorities, the
 * presets, the table's own consistency; then ftrace records of known
 * formats (parsed by libtraceevent, no tracefs needed) through the
 * converter, read back as text: the names and values LTTng shows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <traceevent/event-parse.h>

#include "internal.h"
#include "kern/family.h"
#include "kern/krec.h"
#include "trawl/ctf.h"
#include "trawl/pipe.h"
#include "tap.h"

static void names(void)
{
	static const char *const want[][3] = {
		{ "sched", "sched_switch", "sched_switch" },
		{ "syscalls", "sys_enter_openat", "syscall_entry_openat" },
		{ "syscalls", "sys_exit_read", "syscall_exit_read" },
		{ "irq", "softirq_entry", "irq_softirq_entry" },
		{ "irq", "irq_handler_entry", "irq_handler_entry" },
		{ "timer", "hrtimer_start", "timer_hrtimer_start" },
		{ "timer", "itimer_state", "timer_itimer_state" },
		{ "timer", "timer_start", "timer_start" },
		{ "kmem", "kmalloc", "kmem_kmalloc" },
		{ "kmem", "kmem_cache_alloc", "kmem_cache_alloc" },
		{ "power", "cpu_idle", "power_cpu_idle" },
		{ "power", "power_domain_target", "power_domain_target" },
		{ "block", "block_rq_issue", "block_rq_issue" },
		{ "nosuchsystem", "softirq_entry", "softirq_entry" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(want); i++)
		is_str(tr_krec_lttng_name(want[i][0], want[i][1]), want[i][2], "name: %s:%s",
		       want[i][0], want[i][1]);
}

static void fields(void)
{
	const struct tr_kfamily *sched = tr_kfamily_by_system("sched");
	const struct tr_kfamily *irq = tr_kfamily_by_system("irq");
	char tmp[64];

	ok(sched && irq, "sched and irq have rows");
	is_str(tr_kfamily_field(sched, "pid", tmp, sizeof(tmp)), "tid", "sched: pid -> tid");
	is_str(tr_kfamily_field(sched, "prev_pid", tmp, sizeof(tmp)), "prev_tid",
	       "sched: prev_pid -> prev_tid");
	is_str(tr_kfamily_field(sched, "_pid", tmp, sizeof(tmp)), "_pid",
	       "sched: a bare suffix is not renamed");
	is_str(tr_kfamily_field(sched, "pidfd", tmp, sizeof(tmp)), "pidfd", "sched: pidfd stays");
	is_str(tr_kfamily_field(irq, "pid", tmp, sizeof(tmp)), "pid", "irq: pid stays");
	is_str(tr_kfamily_field(NULL, "pid", tmp, sizeof(tmp)), "pid", "no family: pid stays");
	ok(tr_kfamily_prio(sched, "prio") && tr_kfamily_prio(sched, "next_prio"),
	   "sched: prio and next_prio are priorities");
	ok(!tr_kfamily_prio(sched, "priority") && !tr_kfamily_prio(irq, "prio") &&
	   !tr_kfamily_prio(NULL, "prio"), "... priority, irq's and no family's are not");
}

static void presets(void)
{
	char buf[256], small[10];
	size_t n = tr_krec_presets(buf, sizeof(buf));

	is_str(buf, "sched, syscalls, irq, block, net, kvm, timer, kmem, power, workqueue, signal, "
	       "module, writeback, vmscan, rcu, lock, printk, random, irq_vectors",
	       "the presets, in table order");
	is_int(n, strlen(buf), "tr_krec_presets returns the length");
	is_int(tr_krec_presets(small, sizeof(small)), n, "... also when the buffer is short");
	is_str(small, "sched, sy", "... which gets the list cut, terminated");
	is_str(tr_krec_preset_system("syscalls"), "raw_syscalls", "preset syscalls records raw_syscalls");
	is_str(tr_krec_preset_system("timer"), "timer", "preset timer records the timer system");
	is_str(tr_krec_preset_system("power"), "power", "preset power records the power system");
	ok(tr_krec_preset_system("sched:*") == NULL && tr_krec_preset_system("cgroup") == NULL,
	   "a tracepoint or a system without a preset is no preset");

	/* the table itself */
	int bad = 0;
	for (size_t i = 0; i < tr_nkfamilies; i++) {
		const struct tr_kfamily *f = &tr_kfamilies[i];
		bad += tr_kfamily_by_system(f->system) != f;
		if (f->preset) {
			bad += tr_kfamily_by_preset(f->preset) != f;
			bad += !f->events || !f->events[0];
			for (const char *const *e = f->events; e && *e; e++)
				bad += strpbrk(*e, ":/") != NULL;	/* names in f->system */
		} else {
			bad += f->events != NULL;
		}
		for (int j = 0; j < TR_KFAMILY_RULES && f->names[j].glob; j++)
			bad += !f->names[j].strip || !f->names[j].add ||
			       strncmp(f->names[j].glob, f->names[j].strip, strlen(f->names[j].strip));
		for (int j = 0; j < TR_KFAMILY_RULES && f->renames[j].from; j++)
			bad += !f->renames[j].to ||
			       (f->renames[j].from[0] == '*') != (f->renames[j].to[0] == '*');
	}
	is_int(bad, 0, "table: systems and presets unique, presets name events of their system, "
	       "rules well formed");
}

/* ---- records through the converter */

static const char fmt_switch[] =
	"name: sched_switch\nID: 372\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
	"\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
	"\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n\n"
	"print fmt: \"prev_pid=%d\", REC->prev_pid\n";

static const char fmt_softirq[] =
	"name: softirq_entry\nID: 223\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:unsigned int vec;\toffset:8;\tsize:4;\tsigned:0;\n\n"
	"print fmt: \"vec=%u\", REC->vec\n";

static void put(uint8_t *rec, size_t off, const void *v, size_t n)
{
	memcpy(rec + off, v, n);
}

static void convert(void)
{
	char dir[] = "/tmp/test-kfamily-XXXXXX", err[256] = "", line[512];
	struct tep_handle *tep = tep_alloc();
	struct trawl_ctf_writer *w = NULL;
	struct krec_conv *c = NULL;

	ok(tep && mkdtemp(dir), "a tep handle and a directory");
	if (!tep)
		return;
	struct tep_event *e1 = NULL, *e2 = NULL;
	ok(tep_parse_format(tep, &e1, fmt_switch, strlen(fmt_switch), "sched") == 0 &&
	   tep_parse_format(tep, &e2, fmt_softirq, strlen(fmt_softirq), "irq") == 0,
	   "libtraceevent parses the two formats");
	char path[64];
	snprintf(path, sizeof(path), "%s/kernel", dir);
	struct trawl_ctf_writer_opts o = { .sz = sizeof(o), .path = path, .hostname = "h",
					   .domain = "kernel", .clock_offset_s = 1 };
	w = trawl_ctf_writer_new(&o);
	c = w ? tr_krec_conv_new(w, tep, true) : NULL;
	struct trawl_ctf_wstream *ws =
		c ? trawl_ctf_writer_stream(w, tr_krec_conv_stream_class(c), "channel0", 0) : NULL;
	ok(ws != NULL, "writer, converter and stream");
	if (!ws)
		goto out;

	uint8_t rec[64] = { 0 };
	uint16_t type = 372;
	int32_t pid = 42, prio = 120, nprio = 98, npid = 7;
	int64_t state = 1;
	put(rec, 0, &type, 2);
	put(rec, 4, &pid, 4);
	put(rec, 8, "prev\0garbage", 12);
	put(rec, 24, &pid, 4);
	put(rec, 28, &prio, 4);
	put(rec, 32, &state, 8);
	put(rec, 40, "next", 4);
	put(rec, 56, &npid, 4);
	put(rec, 60, &nprio, 4);
	is_int(tr_krec_conv_record(c, ws, 1000, rec, 64), 1, "sched_switch converted");
	uint8_t rec2[12] = { 0 };
	uint32_t vec = 3;
	type = 223;
	put(rec2, 0, &type, 2);
	put(rec2, 4, &pid, 4);
	put(rec2, 8, &vec, 4);
	is_int(tr_krec_conv_record(c, ws, 2000, rec2, 12), 1, "softirq_entry converted");
	type = 999;
	put(rec2, 0, &type, 2);
	is_int(tr_krec_conv_record(c, ws, 3000, rec2, 12), 0, "an unknown type is skipped");
	ok(trawl_ctf_writer_close(w) == 0, "trace closed");

	const char *paths[] = { dir };
	struct trawl_reader *r = trawl_reader_new(paths, 1, NULL, err, sizeof(err));
	ok(r != NULL, "the trace reads back (%s)", err);
	const char *want[] = {
		"sched_switch: { cpu_id = 0 }, { tid = 42 }, { prev_comm = \"prev\", prev_tid = 42, "
		"prev_prio = 20, prev_state = 1, next_comm = \"next\", next_tid = 7, next_prio = -2 }",
		"irq_softirq_entry: { cpu_id = 0 }, { tid = 42 }, { vec = 3 }",
	};
	const struct trawl_event *ev;
	for (int i = 0; r && i < 2; i++) {
		if (trawl_reader_next(r, &ev) != 1) {
			ok(0, "event %d read", i);
			continue;
		}
		trawl_text_event(line, sizeof(line), ev, 0, 0);
		const char *p = strstr(line, want[i]);
		ok(p != NULL, "LTTng's names and values: %s", p ? want[i] : line);
	}
	ok(r && trawl_reader_next(r, &ev) == 0, "and nothing else");
	trawl_reader_free(r);
out:
	tr_krec_conv_free(c);
	trawl_ctf_writer_free(w);
	tep_free(tep);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "# could not remove %s\n", dir);
}

/* "did you mean": tr_closest (lib/util, also the command names' in cli/trawl.c) */
static void closest(void)
{
	const char *const p[] = { "sched", "syscalls", "timer", "power", "kmem" };
	size_t n = sizeof(p) / sizeof(p[0]);

	is_int(tr_edit_distance("timr", "timer"), 1, "edit distance: one deletion");
	is_int(tr_edit_distance("kitten", "sitting"), 3, "edit distance: kitten, sitting");
	is_str(tr_closest("timr", p, n, 2), "timer", "timr: did you mean timer");
	is_str(tr_closest("pwoer", p, n, 2), "power", "pwoer: power (two substitutions)");
	is_str(tr_closest("sys", p, n, 2), "syscalls", "sys: a prefix of syscalls");
	ok(tr_closest("zzzzzz", p, n, 2) == NULL, "zzzzzz: nothing close");
	/* TR_NEAR: a third of the name's length, at least 2 */
	const char *const q[] = { "sched_switch", "sched_wakeup" };
	is_str(tr_closest("shed_swtch", q, 2, TR_NEAR), "sched_switch", "shed_swtch: 2 edits, near");
	ok(tr_closest("xxhxd_swtch", q, 2, TR_NEAR) == NULL, "xxhxd_swtch: 4 edits > 11/3: none");
	const char *const r[] = { "sched_switch_prev_comm_long" };
	is_str(tr_closest("sxhed_swxtch_prev_comm_lng", r, 1, TR_NEAR), "sched_switch_prev_comm_long",
	       "a 26-character name: 4 edits are within a third");
}

/* LTTng's block rwbs bits from ftrace's text; fork's tgid fields */
static void lttng_fields(void)
{
	static const struct { const char *s; unsigned bits; } t[] = {
		{ "R", 4 }, { "RA", 4 | 8 }, { "WS", 1 | 32 }, { "FWS", 1024 | 1 | 32 },
		{ "WFS", 1 | 512 | 32 }, { "F", 256 }, { "FF", 1024 | 256 }, { "DE", 2 | 128 },
		{ "RM", 4 | 64 }, { "N", 0 }, { "", 0 },
	};
	int bad = 0;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char a[10] = { 0 };
		memcpy(a, t[i].s, strlen(t[i].s));
		unsigned b = tr_kfamily_rwbs_bits(a, sizeof(a));
		if (b != t[i].bits) {
			printf("# rwbs '%s': %u, want %u", t[i].s, b, t[i].bits);
			bad++;
		}
	}
	is_int(bad, 0, "rwbs text -> LTTng's bits (write 1, read 4, sync 32, preflush 1024 ...)");
	const struct tr_kfamily *sched = tr_kfamily_by_system("sched"),
				*block = tr_kfamily_by_system("block");
	ok(tr_kfamily_tgid(sched, "sched_process_fork", "child_pid") &&
	   tr_kfamily_tgid(sched, "sched_process_fork", "parent_pid") &&
	   !tr_kfamily_tgid(sched, "sched_switch", "prev_pid") &&
	   !tr_kfamily_tgid(block, "sched_process_fork", "child_pid"),
	   "fork's parent_pid and child_pid get a tgid after them, no other");
	ok(tr_kfamily_rwbs(block, "rwbs") && !tr_kfamily_rwbs(sched, "rwbs") &&
	   !tr_kfamily_rwbs(block, "comm"), "block's rwbs only");
}

int main(void)
{
	lttng_fields();
	names();
	fields();
	presets();
	closest();
	convert();
	return done_testing();
}
