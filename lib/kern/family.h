/* SPDX-License-Identifier: MIT */
/*
 * lib/kern/family.h - kernel event families: everything trawl knows about
 * one ftrace system, in one row of tr_kfamilies[] (lib/kern/families.c):
 *
 *  - its preset (`-k sched`) and the tracepoints the preset enables;
 *  - how its event names become LTTng's (sched_switch stays, irq's
 *    softirq_entry becomes irq_softirq_entry, ...);
 *  - how its field names become LTTng's (sched: pid -> tid, *_pid -> *_tid)
 *    and which fields are priorities shown as LTTng shows them (prio - 100);
 *  - the systems whose formats the converter also needs, and the converter
 *    kind (the generic field copier, or the syscall converters).
 *
 * The recorder (krec.c: presets, formats) and the converter (convert.c:
 * names, fields) read only this table, so a new family is one row there.
 * A system without a row keeps its names and fields as ftrace has them.
 * See docs/CONTRIBUTING.md.
 */
#ifndef TRAWL_KERN_FAMILY_H
#define TRAWL_KERN_FAMILY_H

#include <stdbool.h>
#include <stddef.h>

/*
 * An event name rule: an ftrace event name matching glob becomes add +
 * (the name without its prefix strip). The first matching rule of a row
 * applies; none: the name is kept.
 */
struct tr_kname_rule {
	const char *glob, *strip, *add;
};

/*
 * A field rename: the field from becomes to. A from of the form "*SUFFIX"
 * renames the suffix of any longer name: { "*_pid", "*_tid" } turns
 * prev_pid into prev_tid.
 */
struct tr_kfield_rename {
	const char *from, *to;
};

enum tr_kconv {
	TR_KCONV_FIELDS,		/* generic: every field copied, as renamed */
	TR_KCONV_RAW_SYSCALLS,		/* raw_syscalls sys_enter/exit -> syscall_entry_<name>/... */
	TR_KCONV_SYSCALLS,		/* syscalls:sys_enter_<name>: the same classes */
};

#define TR_KFAMILY_RULES 4

struct tr_kfamily {
	const char *system;		/* the ftrace system (events/SYSTEM/) */
	const char *preset;		/* the -k preset that records it, or NULL */
	const char *const *events;	/* the preset's events (globs allowed), NULL-ended */
	const char *formats;		/* another system whose formats the converter reads */
	struct tr_kname_rule names[TR_KFAMILY_RULES];
	struct tr_kfield_rename renames[TR_KFAMILY_RULES];
	const char *prio;		/* glob: 4-byte fields shown as value - 100, signed */
	/*
	 * glob "EVENT.FIELD" of 4-byte thread ids that LTTng follows with
	 * the thread's process id (tgid), named as ftrace names the thread id
	 * (sched_process_fork: parent_tid, then parent_pid)
	 */
	const char *tgid;
	const char *rwbs;		/* glob: char arrays "WS", "RA" ... -> LTTng's bits */
	enum tr_kconv conv;
};

extern const struct tr_kfamily tr_kfamilies[];
extern const size_t tr_nkfamilies;

/* The row of ftrace system sys, or NULL (then nothing is renamed). */
const struct tr_kfamily *tr_kfamily_by_system(const char *sys);
/* The row whose preset is name, or NULL. */
const struct tr_kfamily *tr_kfamily_by_preset(const char *name);
/*
 * The LTTng name of field `name` of an event of family f (NULL: none):
 * name itself, a renamed constant, or tmp (cap bytes) holding the rename.
 */
const char *tr_kfamily_field(const struct tr_kfamily *f, const char *name, char *tmp,
			     size_t cap);
/* Is field `name` of family f a priority shown as LTTng shows it? */
bool tr_kfamily_prio(const struct tr_kfamily *f, const char *name);
/* Is field `name` of event `event` (ftrace's names) followed by a tgid? */
bool tr_kfamily_tgid(const struct tr_kfamily *f, const char *event, const char *name);
/* Is field `name` of family f an rwbs string written as LTTng's bits? */
bool tr_kfamily_rwbs(const struct tr_kfamily *f, const char *name);
/*
 * LTTng's rwbs bits (lttng-modules' block events: write 1, discard 2,
 * read 4, read-ahead 8, barrier 16, sync 32, meta 64, secure 128, flush
 * 256, fua 512, preflush 1024) of ftrace's rwbs text (blk_fill_rwbs():
 * "F" preflush, then the operation W, D (DE: secure), F, R or N, then F
 * fua, A read-ahead, S sync, M meta); n: the array's size.
 */
unsigned tr_kfamily_rwbs_bits(const char *s, size_t n);

#endif
