/* SPDX-License-Identifier: MIT */
/*
 * lib/kern/convert.c - ftrace records to CTF events with LTTng's names.
 *
 * Each event type (ftrace common_type) is compiled once, when its first
 * record comes, into a list of copy operations from the record to the CTF
 * payload (byte-aligned little-endian, the writer's layout) and a CTF event
 * class; contiguous fixed-size fields become one copy. A type whose payload
 * has a fixed size (struct fixed: sched_switch, the syscalls' ...) is
 * written straight into the packet (tr_ctf_wstream_reserve), its spans
 * copied and fixed in place. Names follow
 * LTTng's kernel tracer, as the family table says (family.h, families.c:
 * event name rules, field renames, priorities shown as prio - 100, so a
 * normal task has 20 and a real-time one -100..-1). Two families have
 * converters of their own (enum tr_kconv):
 *  - raw_syscalls sys_enter/sys_exit -> syscall_entry_<name> with the
 *    syscall's arguments as its syscalls:sys_enter_<name> format names
 *    them, and syscall_exit_<name> { ret } (syscall_entry_unknown /
 *    syscall_exit_unknown with id and args when the number or format is
 *    unknown);
 *  - syscalls:sys_enter_X / sys_exit_X map to the same classes.
 * A system without a row keeps its own names and fields.
 * Fixed char arrays (comm) become char[N] arrays printed as text (bytes
 * after the NUL are zeroed), __data_loc strings CTF strings, other dynamic
 * arrays a <name>_length + sequence pair, pointers hexadecimal integers.
 * With tid_context, every event carries { tid } = ftrace's common_pid.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <traceevent/event-parse.h>

#include "ctf/ctf-internal.h"	/* tr_ctf_wstream_reserve: events written in place */
#include "kern/family.h"	/* names, field renames, converter kinds */
#include "kern/kcopy.h"	/* kcopy_small, kcopy_comm: a field's bytes */
#include "kern/kpage.h"	/* kpage_ld32/64: unaligned little-endian loads */
#include "kern/krec.h"
#include "kern/pathnames.h"	/* the path arguments: strings */

enum op_kind { OP_COPY, OP_PRIO, OP_COMM, OP_DSTR, OP_DSEQ, OP_TGID, OP_RWBS, OP_ARG };

/*
 * A syscall argument, 8 bytes as ftrace stores the register, made the
 * value of its declared C type (as lttng-modules declares it): an int is
 * the low 32 bits sign-extended (dfd = -100, not 4294967196), an unsigned
 * int the low 32 bits (fd = 4294967295 for -1, as LTTng's), 64-bit types
 * as they are.
 */
enum arg_fix { FIX_NONE, FIX_S32, FIX_U32, FIX_S16, FIX_U16 };

struct op {
	uint8_t kind;
	uint8_t rel;			/* OP_DSTR/OP_DSEQ: __rel_loc */
	uint16_t elem;			/* OP_DSEQ: element size */
	uint32_t off, len;
};

enum conv_kind { CV_NORMAL, CV_SYS_ENTER, CV_SYS_EXIT, CV_SYS_ENTER_FMT, CV_SKIP };

/*
 * The fixed form of an event type whose payload has a size of its own
 * (only copies, priorities, comms and syscall arguments: no strings,
 * sequences, tgid or rwbs), what nearly every record of a busy machine is:
 * the record's spans copied straight into the packet (the tid and the
 * fields after it are one span when they follow each other in the record,
 * as sched_switch's do), then fixed there. No switch per field (its
 * indirect jump was a fifth of the converter's time), no copy of a payload
 * built aside.
 */
#define FX_MAX 8

struct fixed {
	uint16_t len;			/* the payload's bytes, tid included */
	uint8_t nspan, ncomm, nprio, narg;
	struct { uint16_t src, dst, len; } span[FX_MAX];
	struct { uint16_t dst, len; } comm[FX_MAX];
	uint16_t prio[FX_MAX];		/* where to take 100 off */
	struct { uint16_t dst; uint8_t fix; } arg[FX_MAX];
};

struct conv {
	int kind;
	const struct trawl_ctf_event_class *ec;
	struct op *ops;
	unsigned nops;
	unsigned minsize;		/* bytes the fixed ops read */
	long nr;			/* CV_SYS_ENTER_FMT: the syscall */
	struct fixed *fx;		/* CV_NORMAL of a fixed size, or NULL */
};

struct sysent {
	const struct trawl_ctf_event_class *entry, *exit;
	unsigned nargs;
	int path_arg;			/* the argument written as a path string, or -1 */
	uint8_t fix[6];			/* enum arg_fix of each argument */
	bool built;
};

struct named {
	char *name;
	const struct trawl_ctf_event_class *ec;
	unsigned nargs;			/* syscall entries */
	int path_arg;
	uint8_t fix[6];
};

#define MAX_SYSCALLS 1024
#define PAYLOAD_MAX 16384

struct krec_conv {
	struct trawl_ctf_writer *w;
	struct tep_handle *tep;
	bool tid;
	struct trawl_ctf_stream_class *sc;
	struct conv **byid;
	size_t nbyid;
	struct sysent sys[MAX_SYSCALLS];
	const struct trawl_ctf_event_class *sys_entry_unknown, *sys_exit_unknown;
	struct named *names;
	size_t nnames, capnames;
	struct kpath *paths;		/* path arguments as strings (NULL: pointers) */
	bool final;			/* a path not known yet will not be waited for */
	uint8_t buf[PAYLOAD_MAX];
};

/* ------------------------------------------------------------ names */

static struct named *named_find(struct krec_conv *c, const char *name)
{
	for (size_t i = 0; i < c->nnames; i++)
		if (!strcmp(c->names[i].name, name))
			return &c->names[i];
	return NULL;
}

static struct named *named_add(struct krec_conv *c, const char *name,
			       const struct trawl_ctf_event_class *ec)
{
	if (c->nnames == c->capnames) {
		size_t cap = c->capnames ? 2 * c->capnames : 64;
		struct named *n = realloc(c->names, cap * sizeof(*n));
		if (!n)
			return NULL;
		c->names = n;
		c->capnames = cap;
	}
	struct named *n = &c->names[c->nnames];
	if (!(n->name = strdup(name)))
		return NULL;
	n->ec = ec;
	n->nargs = 0;
	n->path_arg = -1;
	c->nnames++;
	return n;
}

/* A class name not used yet: name, else name_<sys> */
static const char *unique_name(struct krec_conv *c, const char *name, const char *sys,
			       char *tmp, size_t cap)
{
	if (!named_find(c, name))
		return name;
	snprintf(tmp, cap, "%s_%s", name, sys);
	return tmp;
}

/* ------------------------------------------------------------ types */

static struct trawl_ctf_type *int_type(struct krec_conv *c, unsigned bytes, bool sign, bool hex)
{
	return trawl_ctf_type_int(c->w, bytes * 8, sign, hex ? 16 : 10);
}

static struct trawl_ctf_type *text_array(struct krec_conv *c, unsigned n)
{
	struct trawl_ctf_type *ch = trawl_ctf_type_int(c->w, 8, false, 10);
	if (!ch)
		return NULL;
	ch->u.i.encoding = TRAWL_CTF_ENC_UTF8;
	return trawl_ctf_type_array(c->w, ch, n);
}

static bool is_pow2_size(unsigned n)
{
	return n == 1 || n == 2 || n == 4 || n == 8;
}

static int add_op(struct conv *cv, int kind, unsigned off, unsigned len, unsigned elem,
		  bool rel)
{
	/* contiguous copies merge into one memcpy */
	if (kind == OP_COPY && cv->nops && cv->ops[cv->nops - 1].kind == OP_COPY &&
	    cv->ops[cv->nops - 1].off + cv->ops[cv->nops - 1].len == off) {
		cv->ops[cv->nops - 1].len += len;
	} else {
		struct op *o = realloc(cv->ops, (cv->nops + 1) * sizeof(*o));
		if (!o)
			return -ENOMEM;
		cv->ops = o;
		o[cv->nops++] = (struct op){ .kind = (uint8_t)kind, .off = off, .len = len,
					     .elem = (uint16_t)elem, .rel = rel };
	}
	if (kind == OP_DSTR || kind == OP_DSEQ)
		len = 4;
	if (off + len > cv->minsize)
		cv->minsize = off + len;
	return 0;
}

static int struct_add(struct krec_conv *c, struct trawl_ctf_type *st, const char *name,
		      const char *orig, struct trawl_ctf_type *t)
{
	if (!t)
		return -ENOMEM;
	int r = trawl_ctf_struct_add(c->w, st, name, t);
	if (r == -EEXIST && orig != name)
		r = trawl_ctf_struct_add(c->w, st, orig, t);
	return r;
}

/* The payload of one ftrace field: type + op. */
static int add_field(struct krec_conv *c, struct conv *cv, struct trawl_ctf_type *st,
		     const char *event, struct tep_format_field *f, const struct tr_kfamily *fam)
{
	char tmp[128];
	const char *name = tr_kfamily_field(fam, f->name, tmp, sizeof(tmp));
	unsigned off = (unsigned)f->offset, size = (unsigned)f->size;
	bool sign = f->flags & TEP_FIELD_IS_SIGNED;
	bool hex = (f->flags & TEP_FIELD_IS_POINTER) || strchr(f->type, '*');
	int r;

	if (f->flags & TEP_FIELD_IS_DYNAMIC) {
		bool rel = f->flags & TEP_FIELD_IS_RELATIVE;
		if ((f->flags & TEP_FIELD_IS_STRING) || strstr(f->type, "char")) {
			r = struct_add(c, st, name, f->name, trawl_ctf_type_string(c->w));
			return r ? r : add_op(cv, OP_DSTR, off, 4, 0, rel);
		}
		unsigned elem = is_pow2_size(f->elementsize) ? f->elementsize : 1;
		char lname[160];
		snprintf(lname, sizeof(lname), "%s_length", name);
		r = struct_add(c, st, lname, lname, int_type(c, 4, false, false));
		if (!r) {
			struct trawl_ctf_type *e = int_type(c, elem, sign, hex);
			struct trawl_ctf_type *q = e ? trawl_ctf_type_sequence(c->w, e, lname) : NULL;
			r = struct_add(c, st, name, f->name, q);
		}
		return r ? r : add_op(cv, OP_DSEQ, off, 4, elem, rel);
	}
	if (f->flags & TEP_FIELD_IS_ARRAY) {
		if (!strncmp(f->type, "char", 4) && tr_kfamily_rwbs(fam, f->name)) {
			r = struct_add(c, st, name, f->name, int_type(c, 4, false, false));
			return r ? r : add_op(cv, OP_RWBS, off, size, 0, false);
		}
		if ((f->flags & TEP_FIELD_IS_STRING) || !strncmp(f->type, "char", 4)) {
			r = struct_add(c, st, name, f->name, text_array(c, size));
			return r ? r : add_op(cv, OP_COMM, off, size, 0, false);
		}
		unsigned elem = f->elementsize, n = f->arraylen;
		if (!is_pow2_size(elem) || !n || elem * n != size) {
			elem = 1;
			n = size;
			sign = false;
		}
		struct trawl_ctf_type *e = int_type(c, elem, sign, hex);
		r = struct_add(c, st, name, f->name, e ? trawl_ctf_type_array(c->w, e, n) : NULL);
		return r ? r : add_op(cv, OP_COPY, off, size, 0, false);
	}
	if (!is_pow2_size(size)) {
		struct trawl_ctf_type *e = int_type(c, 1, false, true);
		r = struct_add(c, st, name, f->name, e ? trawl_ctf_type_array(c->w, e, size) : NULL);
		return r ? r : add_op(cv, OP_COPY, off, size, 0, false);
	}
	bool prio = size == 4 && tr_kfamily_prio(fam, f->name);
	r = struct_add(c, st, name, f->name, int_type(c, size, sign || prio, hex));
	r = r ? r : add_op(cv, prio ? OP_PRIO : OP_COPY, off, size, 0, false);
	/* the thread's process id after it, under ftrace's name of the thread id */
	if (!r && size == 4 && name != f->name && tr_kfamily_tgid(fam, event, f->name)) {
		r = struct_add(c, st, f->name, f->name, int_type(c, 4, true, false));
		r = r ? r : add_op(cv, OP_TGID, off, 4, 0, false);
	}
	return r;
}

static const struct trawl_ctf_event_class *new_class(struct krec_conv *c, const char *name,
						     struct trawl_ctf_type *fields)
{
	const struct trawl_ctf_event_class *ec =
		trawl_ctf_writer_event_class(c->w, c->sc, name, INT64_MIN, fields);
	if (ec && !named_add(c, name, ec))
		return NULL;
	return ec;
}

static bool type_in(const char *t, const char *const *set)
{
	for (; *set; set++)
		if (!strcmp(t, *set))
			return true;
	return false;
}

/*
 * A syscall argument's signedness, base and fix from its C type in the
 * syscalls:sys_enter_<name> format (ftrace's own signed: flag says 0 for
 * every argument): pointers unsigned hexadecimal, int-like types signed,
 * unsigned ones unsigned, a type not known here as the format says.
 * lttng-modules declares mmap's fd an int (the format: unsigned long), so
 * that -1 is -1: so does trawl.
 */
static void arg_type(const char *sname, const struct tep_format_field *f, bool *sign, bool *hex,
		     uint8_t *fix)
{
	static const char *const s32[] = { "int", "signed int", "signed", "pid_t", "key_t",
		"mqd_t", "clockid_t", "timer_t", "rwf_t", "key_serial_t", "__s32", "s32", NULL };
	static const char *const s64[] = { "long", "signed long", "long int", "long long",
		"loff_t", "off_t", "ssize_t", "__s64", "s64", "time_t", NULL };
	static const char *const u32[] = { "unsigned int", "unsigned", "u32", "__u32", "uid_t",
		"gid_t", "qid_t", NULL };
	static const char *const u64[] = { "unsigned long", "unsigned long int", "size_t",
		"aio_context_t", "u64", "__u64", "unsigned long long", NULL };
	static const char *const ptr[] = { "cap_user_header_t", "cap_user_data_t", NULL };
	const char *t = f->type;
	while (!strncmp(t, "const ", 6) || !strncmp(t, "volatile ", 9))
		t += t[0] == 'c' ? 6 : 9;
	*hex = false;
	*fix = FIX_NONE;
	*sign = f->flags & TEP_FIELD_IS_SIGNED;
	if ((f->flags & TEP_FIELD_IS_POINTER) || strchr(t, '*') || type_in(t, ptr)) {
		*hex = true;
		*sign = false;
	} else if ((!strcmp(sname, "mmap") && !strcmp(f->name, "fd")) || type_in(t, s32) ||
		   !strncmp(t, "enum ", 5)) {
		*sign = true;
		*fix = FIX_S32;
	} else if (type_in(t, s64)) {
		*sign = true;
	} else if (type_in(t, u32)) {
		*sign = false;
		*fix = FIX_U32;
	} else if (type_in(t, u64)) {
		*sign = false;
	} else if (!strcmp(t, "short") || !strcmp(t, "__s16") || !strcmp(t, "s16")) {
		*sign = true;
		*fix = FIX_S16;
	} else if (!strcmp(t, "unsigned short") || !strcmp(t, "umode_t") || !strcmp(t, "u16") ||
		   !strcmp(t, "__u16")) {
		*sign = false;
		*fix = FIX_U16;
	}
}

/* An argument's 8 bytes at p made its type's value (enum arg_fix). */
static void fix_arg(uint8_t *p, uint8_t fix)
{
	uint64_t v;
	if (fix == FIX_NONE)
		return;
	memcpy(&v, p, 8);
	switch (fix) {
	case FIX_S32: v = (uint64_t)(int64_t)(int32_t)(uint32_t)v; break;
	case FIX_U32: v = (uint32_t)v; break;
	case FIX_S16: v = (uint64_t)(int64_t)(int16_t)(uint16_t)v; break;
	case FIX_U16: v = (uint16_t)v; break;
	}
	memcpy(p, &v, 8);
}

/*
 * cv's fixed form (struct fixed), when its ops allow one: NULL otherwise
 * (the ops are then run one by one). tid: the payload starts with the
 * record's common_pid.
 */
static struct fixed *fixed_make(const struct conv *cv, bool tid)
{
	struct fixed f = { 0 };
	unsigned dst = 0;
	if (tid) {
		f.span[f.nspan++] = (typeof(f.span[0])){ 4, 0, 4 };
		dst = 4;
	}
	for (unsigned i = 0; i < cv->nops; i++) {
		const struct op *o = &cv->ops[i];
		unsigned len = o->kind == OP_ARG ? 8 : o->kind == OP_PRIO ? 4 : o->len;
		if ((o->kind != OP_COPY && o->kind != OP_PRIO && o->kind != OP_COMM &&
		     o->kind != OP_ARG) || o->off > UINT16_MAX || len > UINT16_MAX)
			return NULL;
		if (o->kind == OP_COMM) {
			if (f.ncomm == FX_MAX)
				return NULL;
			f.comm[f.ncomm].dst = (uint16_t)dst;
			f.comm[f.ncomm++].len = (uint16_t)len;
		} else if (o->kind == OP_PRIO) {
			if (f.nprio == FX_MAX)
				return NULL;
			f.prio[f.nprio++] = (uint16_t)dst;
		} else if (o->kind == OP_ARG) {
			if (f.narg == FX_MAX)
				return NULL;
			f.arg[f.narg].dst = (uint16_t)dst;
			f.arg[f.narg++].fix = (uint8_t)o->elem;
		}
		/* the span goes on where the record does */
		if (f.nspan && f.span[f.nspan - 1].src + f.span[f.nspan - 1].len == o->off) {
			f.span[f.nspan - 1].len = (uint16_t)(f.span[f.nspan - 1].len + len);
		} else {
			if (f.nspan == FX_MAX)
				return NULL;
			f.span[f.nspan++] = (typeof(f.span[0])){ (uint16_t)o->off, (uint16_t)dst,
								 (uint16_t)len };
		}
		dst += len;
		if (dst > PAYLOAD_MAX)
			return NULL;
	}
	f.len = (uint16_t)dst;
	struct fixed *m = malloc(sizeof(*m));
	if (m)
		*m = f;
	return m;
}

/*
 * The syscall_entry_<name> / syscall_exit_<name> classes of a syscall,
 * made once and shared by raw_syscalls and syscalls:sys_enter_<name>.
 * Entry fields: those of syscalls:sys_enter_<name>, each a 64-bit integer
 * (as ftrace stores them) with the signedness of its C type (arg_type),
 * hexadecimal for pointers; *fix: how each is made its type's value. Exit:
 * { ret }.
 * *fmt receives the sys_enter_<name> format (NULL if the kernel has none:
 * then nothing is made and -ENOENT returned).
 */
static int sys_classes(struct krec_conv *c, const char *sname,
		       const struct trawl_ctf_event_class **entry,
		       const struct trawl_ctf_event_class **exit_, unsigned *nargs,
		       int *path_arg, uint8_t fix[6])
{
	char en[160], xn[160];
	snprintf(en, sizeof(en), "syscall_entry_%s", sname);
	snprintf(xn, sizeof(xn), "syscall_exit_%s", sname);
	struct named *ne = named_find(c, en), *nx = named_find(c, xn);
	if (ne && nx) {
		*entry = ne->ec;
		*exit_ = nx->ec;
		*nargs = ne->nargs;
		*path_arg = ne->path_arg;
		memcpy(fix, ne->fix, 6);
		return 0;
	}
	char evn[160];
	snprintf(evn, sizeof(evn), "sys_enter_%s", sname);
	struct tep_event *fmt = tep_find_event_by_name(c->tep, "syscalls", evn);
	if (!fmt)
		return -ENOENT;
	struct trawl_ctf_type *st = trawl_ctf_type_struct(c->w);
	struct trawl_ctf_type *xt = trawl_ctf_type_struct(c->w);
	if (!st || !xt)
		return -ENOMEM;
	unsigned n = 0;
	int parg = -1;
	uint8_t fx[6] = { 0 };
	for (struct tep_format_field *f = fmt->format.fields; f; f = f->next) {
		if (!strcmp(f->name, "__syscall_nr"))
			continue;
		bool hex, sign;
		uint8_t one;
		arg_type(sname, f, &sign, &hex, &one);
		struct trawl_ctf_type *t;
		/* a path LTTng writes as a string: so do we, when the eBPF
		 * program copies it (lib/kern/pathnames.c) */
		if (c->paths && parg < 0 && tr_kpath_is_path(sname, f->name)) {
			t = trawl_ctf_type_string(c->w);
			parg = (int)n;
		} else {
			t = int_type(c, 8, sign, hex);
			if (n < 6)
				fx[n] = one;
		}
		int r = trawl_ctf_struct_add(c->w, st, f->name, t);
		if (r)
			return r;
		n++;
	}
	if (n > 6)
		return -EINVAL;
	int r = trawl_ctf_struct_add(c->w, xt, "ret", int_type(c, 8, true, false));
	if (r)
		return r;
	/* new_class() may move c->names: look both up again after */
	if (!ne) {
		if (!new_class(c, en, st))
			return -errno;
		named_find(c, en)->nargs = n;
		named_find(c, en)->path_arg = parg;
		memcpy(named_find(c, en)->fix, fx, 6);
	}
	if (!nx && !new_class(c, xn, xt))
		return -errno;
	ne = named_find(c, en);
	nx = named_find(c, xn);
	*entry = ne->ec;
	*exit_ = nx->ec;
	*nargs = ne->nargs;
	*path_arg = ne->path_arg;
	memcpy(fix, ne->fix, 6);
	return 0;
}

static int unknown_sys_classes(struct krec_conv *c)
{
	if (c->sys_entry_unknown)
		return 0;
	struct trawl_ctf_type *st = trawl_ctf_type_struct(c->w);
	struct trawl_ctf_type *xt = trawl_ctf_type_struct(c->w);
	struct trawl_ctf_type *u64x = int_type(c, 8, false, true);
	if (!st || !xt || !u64x)
		return -ENOMEM;
	int r = 0;
	r |= trawl_ctf_struct_add(c->w, st, "id", int_type(c, 8, true, false));
	r |= trawl_ctf_struct_add(c->w, st, "args", trawl_ctf_type_array(c->w, u64x, 6));
	r |= trawl_ctf_struct_add(c->w, xt, "id", int_type(c, 8, true, false));
	r |= trawl_ctf_struct_add(c->w, xt, "ret", int_type(c, 8, true, false));
	if (r)
		return -EINVAL;
	c->sys_entry_unknown = new_class(c, "syscall_entry_unknown", st);
	c->sys_exit_unknown = new_class(c, "syscall_exit_unknown", xt);
	return c->sys_entry_unknown && c->sys_exit_unknown ? 0 : -errno;
}

static struct sysent *sysent_get(struct krec_conv *c, long nr)
{
	static struct sysent unknown;
	if (nr < 0 || nr >= MAX_SYSCALLS) {
		unknown.entry = c->sys_entry_unknown;
		unknown.exit = c->sys_exit_unknown;
		unknown.path_arg = -1;
		return &unknown;
	}
	struct sysent *s = &c->sys[nr];
	if (s->built)
		return s;
	s->built = true;
	const char *name = tr_krec_syscall_name(nr);
	if (!name ||
	    sys_classes(c, name, &s->entry, &s->exit, &s->nargs, &s->path_arg, s->fix) < 0) {
		s->entry = c->sys_entry_unknown;
		s->exit = c->sys_exit_unknown;
		s->nargs = 0;
		s->path_arg = -1;
	}
	return s;
}

/* Compiles event type `type`. */
static struct conv *conv_build(struct krec_conv *c, int type)
{
	struct conv *cv = calloc(1, sizeof(*cv));
	if (!cv)
		return NULL;
	cv->kind = CV_SKIP;
	struct tep_event *ev = tep_find_event(c->tep, type);
	if (!ev)
		return cv;
	const char *sys = ev->system;
	const struct tr_kfamily *fam = tr_kfamily_by_system(sys);
	enum tr_kconv kind = fam ? fam->conv : TR_KCONV_FIELDS;
	if (kind == TR_KCONV_RAW_SYSCALLS) {
		if (unknown_sys_classes(c) < 0)
			goto err;
		if (!strcmp(ev->name, "sys_enter"))
			cv->kind = CV_SYS_ENTER, cv->minsize = 16 + 48;
		else if (!strcmp(ev->name, "sys_exit"))
			cv->kind = CV_SYS_EXIT, cv->minsize = 24;
		return cv;
	}
	if (kind == TR_KCONV_SYSCALLS &&
	    (!strncmp(ev->name, "sys_enter_", 10) || !strncmp(ev->name, "sys_exit_", 9))) {
		bool enter = ev->name[4] == 'e' && ev->name[5] == 'n';
		const char *sname = ev->name + (enter ? 10 : 9);
		const struct trawl_ctf_event_class *en, *ex;
		unsigned nargs;
		int parg;
		uint8_t fx[6];
		if (sys_classes(c, sname, &en, &ex, &nargs, &parg, fx) == 0) {
			cv->ec = enter ? en : ex;
			if (enter && parg >= 0) {
				/* its path as a string: the raw_syscalls way, from the
				 * syscall's number and its arguments (8 bytes each) */
				unsigned i = 0;
				for (struct tep_format_field *f = ev->format.fields; f; f = f->next)
					if (strcmp(f->name, "__syscall_nr") &&
					    (f->size != 8 || f->offset != 16 + 8 * (int)i++))
						goto generic;
				int nr = -1;
				for (long k = 0; k < MAX_SYSCALLS && nr < 0; k++)
					if (tr_krec_syscall_name(k) && !strcmp(tr_krec_syscall_name(k), sname))
						nr = (int)k;
				if (nr < 0)
					goto generic;
				cv->kind = CV_SYS_ENTER_FMT;
				cv->nr = nr;
				cv->minsize = 16 + 8 * i;
				return cv;
			}
			unsigned i = 0;
			for (struct tep_format_field *f = ev->format.fields; f; f = f->next) {
				if (!strcmp(f->name, "__syscall_nr"))
					continue;
				/* entries: each argument its type's value */
				uint8_t one = enter && i < 6 ? fx[i] : FIX_NONE;
				i++;
				if (f->size != 8 ||
				    add_op(cv, one ? OP_ARG : OP_COPY, (unsigned)f->offset, 8, one, false))
					goto generic;
			}
			cv->kind = CV_NORMAL;
			cv->fx = fixed_make(cv, c->tid);	/* NULL: the ops */
			return cv;
		}
generic:
		free(cv->ops);
		cv->ops = NULL;
		cv->nops = 0;
		cv->minsize = 0;
	}
	char tmp[300];
	const char *lname = tr_krec_lttng_name(sys, ev->name);
	char lbuf[256];
	snprintf(lbuf, sizeof(lbuf), "%s", lname);
	lname = unique_name(c, lbuf, sys, tmp, sizeof(tmp));
	struct trawl_ctf_type *st = trawl_ctf_type_struct(c->w);
	if (!st)
		goto err;
	for (struct tep_format_field *f = ev->format.fields; f; f = f->next)
		if (add_field(c, cv, st, ev->name, f, fam) < 0)
			goto err;
	if (!(cv->ec = new_class(c, lname, st)))
		goto err;
	cv->kind = CV_NORMAL;
	cv->fx = fixed_make(cv, c->tid);	/* NULL: the ops */
	return cv;
err:
	free(cv->ops);
	free(cv);
	return NULL;
}

/*
 * The process id (tgid) of thread tid, from /proc/TID/status, for the
 * fields LTTng adds after a thread id (sched_process_fork's parent_pid,
 * child_pid). Read when the event is converted, a few ms after it: a
 * thread gone by then is taken for a process of its own (its tid). Forks
 * are rare next to the other events, so one read each costs little.
 */
static int32_t tgid_of(int32_t tid)
{
	char path[64], buf[1024];
	if (tid <= 0)
		return tid;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	if (tr_krec_read_file(path, buf, sizeof(buf)) <= 0)
		return tid;
	const char *t = strstr(buf, "\nTgid:");
	return t ? (int32_t)strtol(t + 6, NULL, 10) : tid;
}

/*
 * A syscall entry whose argument path_arg is a path (d: the record, its
 * arguments at 16, 8 bytes each): the arguments before it, the path the
 * eBPF program copied (or, when there is none, the pointer as text,
 * "0x7ffd..."), the arguments after it, at *p. Returns 1, or
 * KREC_CONV_WAIT when the path may still come (not final).
 */
static int path_entry(struct krec_conv *c, const struct sysent *s, int32_t nr,
		      const uint8_t *d, uint64_t ts, uint8_t **pp)
{
	uint8_t *p = *pp, *end = c->buf + sizeof(c->buf);
	unsigned a = (unsigned)s->path_arg;
	uint64_t ptr = kpage_ld64(d + 16 + 8 * a);
	int32_t tid;
	const char *str;
	char hex[32];
	size_t n;

	memcpy(&tid, d + 4, 4);
	enum tr_pj_result r = tr_kpath_find(c->paths, tid, nr, ptr, ts, c->final, &str, &n);
	if (r == TR_PJ_WAIT && !c->final)
		return KREC_CONV_WAIT;
	if (r != TR_PJ_FOUND) {
		n = (size_t)snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)ptr);
		str = hex;
	}
	if (p + 8 * s->nargs + n + 1 > end)
		return 0;
	memcpy(p, d + 16, 8 * a);
	for (unsigned i = 0; i < a; i++)
		fix_arg(p + 8 * i, s->fix[i]);
	p += 8 * a;
	memcpy(p, str, n);
	p[n] = 0;
	p += n + 1;
	memcpy(p, d + 16 + 8 * (a + 1), 8 * (s->nargs - a - 1));
	for (unsigned i = a + 1; i < s->nargs && i < 6; i++)
		fix_arg(p + 8 * (i - a - 1), s->fix[i]);
	p += 8 * (s->nargs - a - 1);
	*pp = p;
	return 1;
}

/* ------------------------------------------------------------ public */

void tr_krec_conv_paths(struct krec_conv *c, struct kpath *paths)
{
	c->paths = paths;
}

void tr_krec_conv_final(struct krec_conv *c, bool final)
{
	c->final = final;
}

struct krec_conv *tr_krec_conv_new(struct trawl_ctf_writer *w, struct tep_handle *tep,
				bool tid_context)
{
	struct krec_conv *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->w = w;
	c->tep = tep;
	c->tid = tid_context;
	struct trawl_ctf_type *ctx = NULL;
	if (tid_context) {
		ctx = trawl_ctf_type_struct(w);
		if (!ctx || trawl_ctf_struct_add(w, ctx, "tid", int_type(c, 4, true, false)))
			goto err;
	}
	if (!(c->sc = trawl_ctf_writer_stream_class(w, TRAWL_CTF_HEADER_COMPACT, ctx)))
		goto err;
	int maxid = 0;
	for (int i = 0; i < tep_get_events_count(tep); i++) {
		struct tep_event *e = tep_get_event(tep, i);
		if (e && e->id > maxid)
			maxid = e->id;
	}
	c->nbyid = (size_t)maxid + 1;
	if (!(c->byid = calloc(c->nbyid, sizeof(*c->byid))))
		goto err;
	return c;
err:
	tr_krec_conv_free(c);
	errno = ENOMEM;
	return NULL;
}

void tr_krec_conv_free(struct krec_conv *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nbyid; i++)
		if (c->byid[i]) {
			free(c->byid[i]->ops);
			free(c->byid[i]->fx);
			free(c->byid[i]);
		}
	free(c->byid);
	for (size_t i = 0; i < c->nnames; i++)
		free(c->names[i].name);
	free(c->names);
	free(c);
}

struct trawl_ctf_stream_class *tr_krec_conv_stream_class(struct krec_conv *c)
{
	return c->sc;
}

int tr_krec_conv_record(struct krec_conv *c, struct trawl_ctf_wstream *ws, uint64_t ts,
		     const void *data, unsigned size)
{
	const uint8_t *d = data;
	if (size < 8)
		return 0;
	uint16_t type;
	memcpy(&type, d, 2);
	struct conv *cv = type < c->nbyid ? c->byid[type] : NULL;
	if (!cv) {
		if (type >= c->nbyid)
			return 0;
		if (!(cv = conv_build(c, type)))
			return -ENOMEM;
		c->byid[type] = cv;
	}
	if (cv->kind == CV_SKIP || size < cv->minsize)
		return 0;
	int err;
	if (likely(cv->fx)) {
		const struct fixed *fx = cv->fx;
		uint8_t *p = tr_ctf_wstream_reserve(ws, cv->ec, ts, fx->len, &err);
		if (unlikely(!p))
			return err;
		for (unsigned i = 0; i < fx->nspan; i++)
			kcopy_span(p + fx->span[i].dst, d + fx->span[i].src, fx->span[i].len);
		for (unsigned i = 0; i < fx->ncomm; i++)
			kcopy_comm_here(p + fx->comm[i].dst, fx->comm[i].len);
		for (unsigned i = 0; i < fx->nprio; i++) {
			int32_t v;
			memcpy(&v, p + fx->prio[i], 4);
			v -= 100;
			memcpy(p + fx->prio[i], &v, 4);
		}
		for (unsigned i = 0; i < fx->narg; i++)
			fix_arg(p + fx->arg[i].dst, fx->arg[i].fix);
		tr_ctf_wstream_commit(ws, ts, p + fx->len);
		return 1;
	}
	uint8_t *p = c->buf, *end = c->buf + sizeof(c->buf);
	if (c->tid) {
		memcpy(p, d + 4, 4);
		p += 4;
	}
	const struct trawl_ctf_event_class *ec = cv->ec;
	if (cv->kind == CV_SYS_ENTER || cv->kind == CV_SYS_ENTER_FMT) {
		int64_t nr = cv->kind == CV_SYS_ENTER ? (int64_t)kpage_ld64(d + 8) : cv->nr;
		struct sysent *s = sysent_get(c, nr);
		ec = s->entry;
		if (ec == c->sys_entry_unknown) {
			if (cv->kind == CV_SYS_ENTER_FMT)
				return 0;
			memcpy(p, d + 8, 8 + 48);
			p += 56;
		} else if (s->path_arg >= 0 && c->paths) {
			int r = path_entry(c, s, (int32_t)nr, d, ts, &p);
			if (r != 1)
				return r;
		} else {
			kcopy_small(p, d + 16, 8 * s->nargs);
			for (unsigned i = 0; i < s->nargs && i < 6; i++)
				fix_arg(p + 8 * i, s->fix[i]);
			p += 8 * s->nargs;
		}
	} else if (cv->kind == CV_SYS_EXIT) {
		int64_t nr = (int64_t)kpage_ld64(d + 8);
		struct sysent *s = sysent_get(c, nr);
		ec = s->exit;
		if (ec == c->sys_exit_unknown) {
			memcpy(p, d + 8, 16);
			p += 16;
		} else {
			memcpy(p, d + 16, 8);
			p += 8;
		}
	} else {
		for (unsigned i = 0; i < cv->nops; i++) {
			const struct op *o = &cv->ops[i];
			switch (o->kind) {
			case OP_COPY:
				kcopy_small(p, d + o->off, o->len);
				p += o->len;
				break;
			case OP_ARG:
				memcpy(p, d + o->off, 8);
				fix_arg(p, (uint8_t)o->elem);
				p += 8;
				break;
			case OP_PRIO: {
				int32_t v;
				memcpy(&v, d + o->off, 4);
				v -= 100;
				memcpy(p, &v, 4);
				p += 4;
				break;
			}
			case OP_TGID: {
				int32_t tid, tgid;
				memcpy(&tid, d + o->off, 4);
				tgid = tgid_of(tid);
				memcpy(p, &tgid, 4);
				p += 4;
				break;
			}
			case OP_RWBS: {
				uint32_t bits = tr_kfamily_rwbs_bits((const char *)d + o->off, o->len);
				memcpy(p, &bits, 4);
				p += 4;
				break;
			}
			case OP_COMM:
				kcopy_comm(p, d + o->off, o->len);
				p += o->len;
				break;
			case OP_DSTR:
			case OP_DSEQ: {
				uint32_t loc = kpage_ld32(d + o->off);
				size_t at = (loc & 0xffff) + (o->rel ? o->off + 4 : 0), n = loc >> 16;
				if (at > size || n > size - at)
					n = 0;
				if (o->kind == OP_DSTR) {
					const uint8_t *z = n ? memchr(d + at, 0, n) : NULL;
					if (z)
						n = (size_t)(z - (d + at));
					if (p + n + 1 > end)
						return 0;
					memcpy(p, d + at, n);
					p[n] = 0;
					p += n + 1;
				} else {
					uint32_t cnt = (uint32_t)(n / o->elem);
					if (p + 4 + (size_t)cnt * o->elem > end)
						return 0;
					memcpy(p, &cnt, 4);
					memcpy(p + 4, d + at, (size_t)cnt * o->elem);
					p += 4 + (size_t)cnt * o->elem;
				}
				break;
			}
			}
		}
	}
	int r = trawl_ctf_wstream_event(ws, ec, ts, c->buf, (size_t)(p - c->buf));
	return r < 0 ? r : 1;
}
