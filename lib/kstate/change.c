/* SPDX-License-Identifier: MIT */
/*
 * lib/kstate/change.c - kernel events (LTTng's names, as trawl records
 * them and as LTTng does) turned into the model's changes (struct chg),
 * read from the host's current state (kstate.h).
 *
 * Fields are bound by name, every one optional: a trace without system
 * calls still gives the scheduler's states, a trace without the tid
 * context (LTTng's default) takes the current thread of the event's CPU.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kstate/kstate.h"

#define CLONE_THREAD 0x00010000
#define F_DUPFD_ 0
#define F_DUPFD_CLOEXEC_ 1030

enum ckind {
	K_UNSEEN, K_NONE, K_SWITCH, K_WAKEUP, K_FORK, K_EXEC, K_EXIT, K_SC_ENTRY, K_SC_EXIT,
	K_IRQ_ENTRY, K_IRQ_EXIT, K_SOFTIRQ_ENTRY, K_SOFTIRQ_EXIT, K_BLK_INSERT, K_BLK_ISSUE,
	K_BLK_COMPLETE, K_DUMP_PROCESS, K_DUMP_FD,
};

_Static_assert((int)K_UNSEEN == (int)TR_KIN_UNSEEN && (int)K_NONE == (int)TR_KIN_NONE,
	       "kstate.h's kinds");

/* What a system call does to file descriptors. */
enum sem { S_OTHER, S_READ, S_WRITE, S_OPEN, S_FDNEW, S_DUP, S_FCNTL, S_CLOSE, S_CLONE };

struct tr_kin_fields {
	const struct trawl_field *sw_prev, *sw_next, *sw_state, *sw_pcomm, *sw_ncomm;
	const struct trawl_field *wk_tid, *wk_cpu, *wk_comm;
	const struct trawl_field *fk_parent, *fk_child, *fk_comm, *fk_pid;
	const struct trawl_field *ex_file, *ex_tid, *exit_tid, *exit_dead;
	const struct trawl_field *sc_tid, *sc_fd, *sc_oldfd, *sc_fildes, *sc_outfd, *sc_count,
		*sc_file, *sc_pathname, *sc_flags, *sc_cmd, *sx_ret, *so_family, *so_type,
		*so_proto;
	const struct trawl_field *irq, *vec, *irq_tid;
	const struct trawl_field *blk_tid, *blk_dev, *blk_sector, *blk_nr, *blk_rwbs;
	const struct trawl_field *dp_tid, *dp_pid, *dp_ppid, *dp_name, *dp_status, *dp_cgroup;
	const struct trawl_field *df_pid, *df_fd, *df_file;
};

/* What turning one event into changes reads and interns into. */
struct kctx {
	struct tr_kin_fields *f;
	struct strtab *str;
	const struct tables *cur;
	struct tr_kin_name *names;	/* struct tr_kin's */
};

static const struct {
	const char *name;
	uint8_t sem;
} sems[] = {
	{ "read", S_READ }, { "pread64", S_READ }, { "readv", S_READ }, { "preadv", S_READ },
	{ "preadv2", S_READ }, { "recvfrom", S_READ }, { "recvmsg", S_READ },
	{ "write", S_WRITE }, { "pwrite64", S_WRITE }, { "writev", S_WRITE },
	{ "pwritev", S_WRITE }, { "pwritev2", S_WRITE }, { "sendto", S_WRITE },
	{ "sendmsg", S_WRITE }, { "sendfile64", S_WRITE }, { "sendfile", S_WRITE },
	{ "open", S_OPEN }, { "openat", S_OPEN }, { "openat2", S_OPEN }, { "creat", S_OPEN },
	{ "socket", S_FDNEW }, { "accept", S_FDNEW }, { "accept4", S_FDNEW },
	{ "eventfd2", S_FDNEW }, { "epoll_create1", S_FDNEW }, { "timerfd_create", S_FDNEW },
	{ "memfd_create", S_FDNEW }, { "pidfd_open", S_FDNEW }, { "signalfd4", S_FDNEW },
	{ "inotify_init1", S_FDNEW }, { "perf_event_open", S_FDNEW },
	{ "dup", S_DUP }, { "dup2", S_DUP }, { "dup3", S_DUP }, { "fcntl", S_FCNTL },
	{ "close", S_CLOSE },
	{ "clone", S_CLONE }, { "clone3", S_CLONE }, { "fork", S_CLONE }, { "vfork", S_CLONE },
};

static const uint8_t fams[] = {
	[K_SWITCH] = TR_KIN_F_NAMES, [K_FORK] = TR_KIN_F_NAMES, [K_EXEC] = TR_KIN_F_NAMES,
	[K_DUMP_PROCESS] = TR_KIN_F_NAMES, [K_WAKEUP] = TR_KIN_F_WAKEUP, [K_EXIT] = TR_KIN_F_EXIT,
	[K_SC_ENTRY] = TR_KIN_F_SYSCALL, [K_SC_EXIT] = TR_KIN_F_SYSCALL,
	[K_IRQ_ENTRY] = TR_KIN_F_IRQ, [K_IRQ_EXIT] = TR_KIN_F_IRQ, [K_SOFTIRQ_ENTRY] = TR_KIN_F_IRQ,
	[K_SOFTIRQ_EXIT] = TR_KIN_F_IRQ, [K_BLK_INSERT] = TR_KIN_F_BLOCK,
	[K_BLK_ISSUE] = TR_KIN_F_BLOCK, [K_BLK_COMPLETE] = TR_KIN_F_BLOCK,
	[K_DUMP_FD] = TR_KIN_F_FD,
};

static struct tr_kin_val val(const struct trawl_field *f, const struct trawl_ctf_event_class *ec)
{
	return (struct tr_kin_val){ f, f ? f->slot[ec->index] : -1 };
}

static bool prefix(const char *s, const char *p, const char **rest)
{
	size_t n = strlen(p);

	if (strncmp(s, p, n))
		return false;
	*rest = s + n;
	return true;
}

static void classify(struct kctx *s, const struct trawl_ctf_event_class *ec,
		     struct tr_kin_class *ci)
{
	const char *n = ec->name, *rest = n;
	static const struct { const char *name; uint8_t kind; } fixed[] = {
		{ "sched_switch", K_SWITCH }, { "sched_waking", K_WAKEUP },
		{ "sched_wakeup", K_WAKEUP },
		{ "sched_wakeup_new", K_WAKEUP }, { "sched_process_fork", K_FORK },
		{ "sched_process_exec", K_EXEC }, { "sched_process_exit", K_EXIT },
		{ "irq_handler_entry", K_IRQ_ENTRY }, { "irq_handler_exit", K_IRQ_EXIT },
		{ "irq_softirq_entry", K_SOFTIRQ_ENTRY }, { "irq_softirq_exit", K_SOFTIRQ_EXIT },
		{ "block_rq_insert", K_BLK_INSERT }, { "block_rq_issue", K_BLK_ISSUE },
		{ "block_rq_complete", K_BLK_COMPLETE },
		{ "lttng_statedump_process_state", K_DUMP_PROCESS },
		{ "lttng_statedump_file_descriptor", K_DUMP_FD },
	};

	memset(ci, 0, sizeof(*ci));
	ci->kind = K_NONE;
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if (!strcmp(n, fixed[i].name))
			ci->kind = fixed[i].kind;
	if (prefix(n, "compat_", &rest))
		n = rest;
	if (prefix(n, "syscall_entry_", &rest))
		ci->kind = K_SC_ENTRY;
	else if (prefix(n, "syscall_exit_", &rest))
		ci->kind = K_SC_EXIT;
	ci->fam = fams[ci->kind];
	if (ci->kind != K_SC_ENTRY && ci->kind != K_SC_EXIT)
		return;
	ci->name = tr_state_intern(s->str, rest, strlen(rest));
	for (size_t i = 0; i < sizeof(sems) / sizeof(sems[0]); i++)
		if (!strcmp(rest, sems[i].name))
			ci->sem = sems[i].sem;
	const struct trawl_field *pf[] = { s->f->sc_file, s->f->sc_pathname };
	for (size_t i = 0; i < 2 && !ci->path; i++)
		if (pf[i] && trawl_field_type(pf[i], ec) == TRAWL_FIELD_STRING)
			ci->path = pf[i];
	const struct tr_kin_fields *f = s->f;
	ci->tid = val(f->sc_tid, ec);
	ci->fd[0] = val(ci->sem == S_DUP ? f->sc_oldfd : ci->sem == S_WRITE ? f->sc_outfd
			: f->sc_fd, ec);
	ci->fd[1] = val(ci->sem == S_DUP ? f->sc_fildes : ci->sem == S_WRITE ? f->sc_fd : NULL, ec);
	ci->arg = val(ci->sem == S_CLONE ? f->sc_flags : ci->sem == S_FCNTL ? f->sc_cmd
		      : f->sc_count, ec);
	ci->ret = val(f->sx_ret, ec);
}

static const struct trawl_field *bind(struct trawl_reader *r, const char *spec,
				      enum trawl_field_type t)
{
	/* every field is optional: a trace without it gives less state */
	return trawl_field_bind(r, spec, t, TRAWL_FIELD_OPTIONAL, NULL, 0);
}

int tr_kin_start(struct tr_kin *k, struct trawl_reader *r)
{
	struct tr_kin_fields *f = k->f;

	if (!f && !(f = k->f = calloc(1, sizeof(*f))))
		return -ENOMEM;
	f->sw_prev = bind(r, "sched_switch.prev_tid", TRAWL_FIELD_INT);
	f->sw_next = bind(r, "sched_switch.next_tid", TRAWL_FIELD_INT);
	f->sw_state = bind(r, "sched_switch.prev_state", TRAWL_FIELD_INT);
	f->sw_pcomm = bind(r, "sched_switch.prev_comm", TRAWL_FIELD_STRING);
	f->sw_ncomm = bind(r, "sched_switch.next_comm", TRAWL_FIELD_STRING);
	f->wk_tid = bind(r, "sched_wak*.tid", TRAWL_FIELD_INT);
	f->wk_cpu = bind(r, "sched_wak*.target_cpu", TRAWL_FIELD_INT);
	f->wk_comm = bind(r, "sched_wak*.comm", TRAWL_FIELD_STRING);
	f->fk_parent = bind(r, "sched_process_fork.parent_tid", TRAWL_FIELD_INT);
	f->fk_child = bind(r, "sched_process_fork.child_tid", TRAWL_FIELD_INT);
	f->fk_comm = bind(r, "sched_process_fork.child_comm", TRAWL_FIELD_STRING);
	f->fk_pid = bind(r, "sched_process_fork.child_pid", TRAWL_FIELD_INT);
	f->ex_file = bind(r, "sched_process_exec.filename", TRAWL_FIELD_STRING);
	f->ex_tid = bind(r, "sched_process_exec.tid", TRAWL_FIELD_INT);
	f->exit_tid = bind(r, "sched_process_exit.tid", TRAWL_FIELD_INT);
	f->exit_dead = bind(r, "sched_process_exit.group_dead", TRAWL_FIELD_INT);
	f->sc_tid = bind(r, "*syscall_*.tid", TRAWL_FIELD_INT);
	f->sc_fd = bind(r, "*syscall_entry_*.fd", TRAWL_FIELD_INT);
	f->sc_oldfd = bind(r, "*syscall_entry_dup*.oldfd", TRAWL_FIELD_INT);
	f->sc_fildes = bind(r, "*syscall_entry_dup.fildes", TRAWL_FIELD_INT);
	f->sc_outfd = bind(r, "*syscall_entry_sendfile*.out_fd", TRAWL_FIELD_INT);
	f->sc_count = bind(r, "*syscall_entry_*.count", TRAWL_FIELD_INT);
	f->sc_file = bind(r, "*syscall_entry_*open*.filename", TRAWL_FIELD_ANY);
	f->sc_pathname = bind(r, "*syscall_entry_creat.pathname", TRAWL_FIELD_ANY);
	f->sc_flags = bind(r, "*syscall_entry_clone.clone_flags", TRAWL_FIELD_INT);
	f->sc_cmd = bind(r, "*syscall_entry_fcntl.cmd", TRAWL_FIELD_INT);
	f->so_family = bind(r, "*syscall_entry_socket.family", TRAWL_FIELD_INT);
	f->so_type = bind(r, "*syscall_entry_socket.type", TRAWL_FIELD_INT);
	f->so_proto = bind(r, "*syscall_entry_socket.protocol", TRAWL_FIELD_INT);
	f->sx_ret = bind(r, "*syscall_exit_*.ret", TRAWL_FIELD_INT);
	f->irq = bind(r, "irq_handler_*.irq", TRAWL_FIELD_INT);
	f->vec = bind(r, "irq_softirq_*.vec", TRAWL_FIELD_INT);
	f->irq_tid = bind(r, "irq_*.tid", TRAWL_FIELD_INT);	/* the context's */
	f->blk_tid = bind(r, "block_rq_*.tid", TRAWL_FIELD_INT);
	f->blk_dev = bind(r, "block_rq_*.dev", TRAWL_FIELD_INT);
	f->blk_sector = bind(r, "block_rq_*.sector", TRAWL_FIELD_INT);
	f->blk_nr = bind(r, "block_rq_*.nr_sector", TRAWL_FIELD_INT);
	f->blk_rwbs = bind(r, "block_rq_*.rwbs", TRAWL_FIELD_ANY);
	f->dp_tid = bind(r, "lttng_statedump_process_state.tid", TRAWL_FIELD_INT);
	f->dp_pid = bind(r, "lttng_statedump_process_state.pid", TRAWL_FIELD_INT);
	f->dp_ppid = bind(r, "lttng_statedump_process_state.ppid", TRAWL_FIELD_INT);
	f->dp_name = bind(r, "lttng_statedump_process_state.name", TRAWL_FIELD_STRING);
	f->dp_status = bind(r, "lttng_statedump_process_state.status", TRAWL_FIELD_INT);
	f->dp_cgroup = bind(r, "lttng_statedump_process_state.cgroup", TRAWL_FIELD_STRING);
	f->df_pid = bind(r, "lttng_statedump_file_descriptor.pid", TRAWL_FIELD_INT);
	f->df_fd = bind(r, "lttng_statedump_file_descriptor.fd", TRAWL_FIELD_INT);
	f->df_file = bind(r, "lttng_statedump_file_descriptor.filename", TRAWL_FIELD_STRING);
	return 0;
}

static inline bool ival(const struct trawl_field *f, const struct trawl_event *ev, int64_t *v)
{
	const union trawl_ctf_value *x;

	if (!f || !(x = trawl_field_value(f, ev)))
		return false;
	*v = x->i;
	return true;
}

static inline int64_t iget(const struct trawl_field *f, const struct trawl_event *ev, int64_t dflt)
{
	int64_t v;
	return ival(f, ev, &v) ? v : dflt;
}

/* ival() of a field of ev's class as the class has it (struct tr_kin_val) */
static inline bool cval(const struct tr_kin_val *x, const struct trawl_event *ev, int64_t *v)
{
	if (x->slot >= 0) {
		*v = ev->values[x->slot].i;
		return true;
	}
	return x->slot < -1 && ival(x->f, ev, v);
}

static inline int64_t cget(const struct tr_kin_val *x, const struct trawl_event *ev, int64_t dflt)
{
	int64_t v;
	return cval(x, ev, &v) ? v : dflt;
}

static uint32_t sget(struct kctx *s, const struct trawl_field *f,
		     const struct trawl_event *ev)
{
	const union trawl_ctf_value *x;

	if (!f || !(x = trawl_field_value(f, ev)) || !x->s.p)
		return 0;
	return tr_state_intern(s->str, x->s.p, x->s.len);
}

/* A text of up to 16 bytes as two words: its first and last 8 (4, or its
 * bytes, when shorter), loaded at once, that with its length tell it. */
static inline void words16(const char *p, size_t len, uint64_t *a, uint64_t *b)
{
	if (len >= 8) {
		memcpy(a, p, 8);
		memcpy(b, p + len - 8, 8);
	} else if (len >= 4) {
		uint32_t x, y;
		memcpy(&x, p, 4);
		memcpy(&y, p + len - 4, 4);
		*a = x;
		*b = y;
	} else {
		*a = *b = 0;
		for (size_t i = 0; i < len; i++)
			*a |= (uint64_t)(uint8_t)p[i] << (8 * i);
	}
}

/*
 * A thread's name (a comm field) for thread tid: the id it had last time
 * when the text is the same (a switch names two threads, each time the
 * same names: no hashing), else interned. The cache holds the text's
 * length and words16() beside its id; it serves one string table.
 */
static uint32_t sget_comm(struct kctx *s, const struct trawl_field *f,
			  const struct trawl_event *ev, int64_t tid)
{
	const union trawl_ctf_value *x;

	if (!f || !(x = trawl_field_value(f, ev)) || !x->s.p)
		return 0;
	size_t len = x->s.len;		/* s.len: the text's, to its NUL */
	if (len > 16)
		return tr_state_intern(s->str, x->s.p, len);
	struct tr_kin_name *c = &s->names[(uint64_t)tid % TR_KIN_NAMES];
	uint64_t w0, w1;
	words16(x->s.p, len, &w0, &w1);
	if (c->tid == tid && c->len == len && c->w[0] == w0 && c->w[1] == w1 && c->id &&
	    c->id < s->str->n)
		return c->id;
	uint32_t id = tr_state_intern(s->str, x->s.p, len);
	c->tid = (int32_t)tid;
	c->id = id;
	c->len = (uint32_t)len;
	c->w[0] = w0;
	c->w[1] = w1;
	return id;
}


/*
 * What a descriptor made by a system call other than open is, as the
 * kernel names it in /proc/PID/fd (what the state dump's file names are):
 * "anon_inode:[eventfd]", and for a socket "socket:[?]" (its inode is in
 * no event; the state dump's sockets have theirs) with what socket()'s
 * arguments say: "socket:[?] AF_INET SOCK_STREAM"; accept's: "socket:[?]
 * accepted on fd 3". 0 when the call is none of these.
 */
static uint32_t fdnew_name(struct kctx *s, uint32_t call, int64_t fd)
{
	static const struct { const char *call, *name; } t[] = {
		{ "eventfd2", "anon_inode:[eventfd]" }, { "eventfd", "anon_inode:[eventfd]" },
		{ "epoll_create1", "anon_inode:[eventpoll]" },
		{ "epoll_create", "anon_inode:[eventpoll]" },
		{ "timerfd_create", "anon_inode:[timerfd]" }, { "pidfd_open", "anon_inode:[pidfd]" },
		{ "signalfd4", "anon_inode:[signalfd]" }, { "signalfd", "anon_inode:[signalfd]" },
		{ "inotify_init1", "anon_inode:inotify" }, { "inotify_init", "anon_inode:inotify" },
		{ "perf_event_open", "anon_inode:[perf_event]" }, { "memfd_create", "/memfd: (a memfd)" },
	};
	const char *c = tr_state_str(s->str, call);
	char b[96];

	if (!strcmp(c, "accept") || !strcmp(c, "accept4")) {
		snprintf(b, sizeof(b), "socket:[?] accepted on fd %lld", (long long)fd);
		return tr_state_intern(s->str, b, strlen(b));
	}
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(c, t[i].call))
			return tr_state_intern(s->str, t[i].name, strlen(t[i].name));
	return 0;
}

/* socket(family, type, protocol)'s descriptor: "socket:[?] AF_INET SOCK_STREAM" */
static uint32_t socket_name(struct kctx *s, const struct trawl_event *ev)
{
	static const char *const fam[] = {
		[1] = "AF_UNIX", [2] = "AF_INET", [10] = "AF_INET6", [16] = "AF_NETLINK",
		[17] = "AF_PACKET", [40] = "AF_VSOCK",
	};
	static const char *const typ[] = {
		[1] = "SOCK_STREAM", [2] = "SOCK_DGRAM", [3] = "SOCK_RAW", [4] = "SOCK_RDM",
		[5] = "SOCK_SEQPACKET", [10] = "SOCK_PACKET",
	};
	int64_t f = iget(s->f->so_family, ev, -1), t = iget(s->f->so_type, ev, -1);
	char b[96], fb[24], tb[24];

	if (f < 0)
		return tr_state_intern(s->str, "socket:[?]", 10);
	t = t >= 0 ? t & 0xf : -1;	/* less SOCK_NONBLOCK, SOCK_CLOEXEC */
	snprintf(fb, sizeof(fb), "AF_%lld", (long long)f);
	snprintf(tb, sizeof(tb), "SOCK_%lld", (long long)t);
	snprintf(b, sizeof(b), "socket:[?] %s %s",
		 f < (int64_t)(sizeof(fam) / sizeof(fam[0])) && fam[f] ? fam[f] : fb,
		 t >= 0 && t < (int64_t)(sizeof(typ) / sizeof(typ[0])) && typ[t] ? typ[t] : tb);
	if (iget(s->f->so_proto, ev, 0) > 0 && f != 1) {
		int64_t p = iget(s->f->so_proto, ev, 0);
		snprintf(b + strlen(b), sizeof(b) - strlen(b), " %s",
			 p == 6 ? "IPPROTO_TCP" : p == 17 ? "IPPROTO_UDP" : p == 1 ? "IPPROTO_ICMP"
			 : p == 58 ? "IPPROTO_ICMPV6" : p == 132 ? "IPPROTO_SCTP" : "IPPROTO_?");
	}
	return tr_state_intern(s->str, b, strlen(b));
}

/* The change a system call's exit makes to file descriptors, from its
 * entry (the thread's pending call, still in the current state), into
 * *out: 1, or 0 when none. */
static int sc_exit(struct kctx *s, const struct tr_kin_class *ci, const struct chg *c,
		   struct chg *out)
{
	const struct ithread *th = tr_tab_find(&s->cur->thr, (uint64_t)c->tid);
	int64_t ret = c->b;
	uint32_t str = 0;
	uint8_t kind;
	const struct ifd *f;

	if (!th || th->syscall != ci->name)
		return 0;
	int64_t pid = th->pid >= 0 ? th->pid : th->tid, fd = th->sc_fd;
	switch (ci->sem) {
	case S_READ:
	case S_WRITE:
		if (ret <= 0 || fd < 0)
			return 0;
		kind = ci->sem == S_READ ? TRAWL_STATE_READ : TRAWL_STATE_WRITE;
		break;
	case S_OPEN:
	case S_FDNEW:
		if (ret < 0)
			return 0;
		kind = TRAWL_STATE_OPEN;
		/* socket(): its description, made at the entry; the others:
		 * the kernel's names of such descriptors */
		str = ci->sem == S_OPEN || th->sc_path ? th->sc_path : fdnew_name(s, ci->name, fd);
		if (!str && ci->sem == S_FDNEW)
			str = tr_state_intern(s->str, "anon", 4);
		break;
	case S_FCNTL:
		if (th->sc_arg != F_DUPFD_ && th->sc_arg != F_DUPFD_CLOEXEC_)
			return 0;
		/* fallthrough */
	case S_DUP:
		if (ret < 0 || fd < 0)
			return 0;
		kind = TRAWL_STATE_OPEN;
		f = tr_tab_find(&s->cur->fd, tr_fd_key(pid, fd));
		str = f ? f->path : 0;
		break;
	case S_CLOSE:
		if (ret != 0 || fd < 0)
			return 0;
		kind = TRAWL_STATE_CLOSE;
		break;
	default:
		return 0;
	}
	/* the exit's time, CPU and thread, field by field (a copy of *c, just
	 * stored so, would wait for every store: a store-forwarding stall) */
	bool open = kind == TRAWL_STATE_OPEN;
	*out = (struct chg){ .ts = c->ts, .a = pid, .b = open ? ret : fd,
			     .c = !open && kind != TRAWL_STATE_CLOSE && ret > 0 ? (uint32_t)ret : 0,
			     .tid = c->tid, .tid2 = c->tid2, .str = str, .cpu = c->cpu, .kind = kind };
	return 1;
}

int tr_kin_changes(struct tr_kin *k, struct strtab *st, const struct tables *cur,
		   const struct trawl_event *ev, const struct tr_kin_class *ci, struct chg out[2])
{
	struct kctx ctx = { .f = k->f, .str = st, .cur = cur, .names = k->names }, *s = &ctx;
	struct tr_kin_fields *f = k->f;
	/* built where it is returned: no copy of a struct just written
	 * field by field (a store-forwarding stall per event) */
	struct chg *c = &out[1];
	const struct ithread *th;
	int64_t v;
	int n = 0;

	*c = (struct chg){ .ts = ev->ts, .cpu = (int16_t)ev->cpu, .tid2 = -1 };
	c->tid = tr_ks_cpu_tid(cur, ev->cpu);
	switch (ci->kind) {
	case K_SWITCH:
		c->kind = TRAWL_STATE_SWITCH;
		c->tid = (int32_t)iget(f->sw_prev, ev, -1);
		c->tid2 = (int32_t)iget(f->sw_next, ev, -1);
		c->a = iget(f->sw_state, ev, 0);
		c->str = sget_comm(s, f->sw_ncomm, ev, c->tid2);
		c->str2 = sget_comm(s, f->sw_pcomm, ev, c->tid);
		break;
	case K_WAKEUP:
		c->kind = TRAWL_STATE_WAKEUP;
		c->tid2 = (int32_t)iget(f->wk_tid, ev, -1);
		c->a = iget(f->wk_cpu, ev, -1);
		c->str = sget_comm(s, f->wk_comm, ev, c->tid2);
		break;
	case K_FORK: {
		c->kind = TRAWL_STATE_FORK;
		c->tid = (int32_t)iget(f->fk_parent, ev, c->tid);
		c->tid2 = (int32_t)iget(f->fk_child, ev, -1);
		c->str = sget_comm(s, f->fk_comm, ev, c->tid2);
		th = tr_tab_find(&s->cur->thr, (uint64_t)c->tid);
		int64_t ppid = th ? th->pid >= 0 ? th->pid : th->tid : c->tid;
		bool thread = false, given = ival(f->fk_pid, ev, &v);
		if (given) {		/* LTTng's: the child's pid (its tgid) */
			thread = v != c->tid2;
		} else if (th && th->syscall) {
			const char *sc = tr_state_str(s->str, th->syscall);
			thread = !strcmp(sc, "clone3") ||
				 (!strcmp(sc, "clone") && (th->sc_arg & CLONE_THREAD));
		}
		c->a = given ? v : thread ? ppid : c->tid2;
		c->b = thread ? (th ? th->ppid : -1) : ppid;
		break;
	}
	case K_EXEC: {
		c->kind = TRAWL_STATE_EXEC;
		c->tid = (int32_t)iget(f->ex_tid, ev, c->tid);
		c->a = c->tid;
		c->str = sget(s, f->ex_file, ev);
		const char *p = tr_state_str(s->str, c->str), *b = strrchr(p, '/');
		b = b ? b + 1 : p;
		c->str2 = tr_state_intern(s->str, b, 15);	/* TASK_COMM_LEN - 1 */
		break;
	}
	case K_EXIT:
		c->kind = TRAWL_STATE_EXIT;
		c->tid = (int32_t)iget(f->exit_tid, ev, c->tid);
		th = tr_tab_find(&s->cur->thr, (uint64_t)c->tid);
		c->a = iget(f->exit_dead, ev, th && th->pid == c->tid);
		break;
	case K_SC_ENTRY:
		c->kind = TRAWL_STATE_SYSCALL_ENTRY;
		c->tid = (int32_t)cget(&ci->tid, ev, c->tid);
		c->str = ci->name;
		c->a = cval(&ci->fd[0], ev, &v) || cval(&ci->fd[1], ev, &v) ? v : -1;
		c->b = cget(&ci->arg, ev, ci->sem == S_FCNTL ? -1 : 0);
		if (ci->path)
			c->str2 = sget(s, ci->path, ev);
		else if (ci->sem == S_FDNEW && !strcmp(tr_state_str(s->str, ci->name), "socket"))
			c->str2 = socket_name(s, ev);
		break;
	case K_SC_EXIT:
		c->kind = TRAWL_STATE_SYSCALL_EXIT;
		c->tid = (int32_t)cget(&ci->tid, ev, c->tid);
		c->str = ci->name;
		c->b = cget(&ci->ret, ev, 0);
		if (ci->sem != S_OTHER)
			n = sc_exit(s, ci, c, &out[0]);
		break;
	case K_IRQ_ENTRY:
	case K_IRQ_EXIT:
		c->kind = ci->kind == K_IRQ_ENTRY ? TRAWL_STATE_IRQ_ENTRY : TRAWL_STATE_IRQ_EXIT;
		c->tid = (int32_t)iget(f->irq_tid, ev, c->tid);
		c->a = iget(f->irq, ev, -1);
		break;
	case K_SOFTIRQ_ENTRY:
	case K_SOFTIRQ_EXIT:
		c->kind = ci->kind == K_SOFTIRQ_ENTRY ? TRAWL_STATE_SOFTIRQ_ENTRY
						     : TRAWL_STATE_SOFTIRQ_EXIT;
		c->tid = (int32_t)iget(f->irq_tid, ev, c->tid);
		c->a = iget(f->vec, ev, -1);
		break;
	case K_BLK_INSERT:
	case K_BLK_ISSUE:
	case K_BLK_COMPLETE: {
		c->kind = ci->kind == K_BLK_INSERT ? TRAWL_STATE_BLOCK_INSERT
		       : ci->kind == K_BLK_ISSUE ? TRAWL_STATE_BLOCK_ISSUE : TRAWL_STATE_BLOCK_COMPLETE;
		c->tid = (int32_t)iget(f->blk_tid, ev, c->tid);
		c->a = iget(f->blk_dev, ev, 0);
		c->b = iget(f->blk_sector, ev, 0);
		c->c = (uint32_t)iget(f->blk_nr, ev, 0);
		const union trawl_ctf_value *x = f->blk_rwbs ? trawl_field_value(f->blk_rwbs, ev) : NULL;
		if (x && trawl_field_type(f->blk_rwbs, ev->cls) == TRAWL_FIELD_STRING) {
			c->str = x->s.p ? tr_state_intern(s->str, x->s.p, x->s.len) : 0;
			c->str2 = x->s.p && memchr(x->s.p, 'W', strnlen(x->s.p, x->s.len));	/* a write */
		} else if (x) {
			c->str2 = x->i & 1;			/* LTTng: RWBS_FLAG_WRITE */
		}
		break;
	}
	case K_DUMP_PROCESS:
		c->kind = TRAWL_STATE_DUMP_PROCESS;
		c->tid2 = (int32_t)iget(f->dp_tid, ev, -1);
		c->a = iget(f->dp_pid, ev, -1);
		c->b = iget(f->dp_ppid, ev, -1);
		c->c = (uint32_t)iget(f->dp_status, ev, 0);
		c->str = sget(s, f->dp_name, ev);
		c->str2 = sget(s, f->dp_cgroup, ev);
		if (c->tid2 < 0)
			return 0;
		break;
	case K_DUMP_FD:
		c->kind = TRAWL_STATE_DUMP_FD;
		c->a = iget(f->df_pid, ev, -1);
		c->b = iget(f->df_fd, ev, -1);
		c->str = sget(s, f->df_file, ev);
		if (c->a < 0 || c->b < 0)
			return 0;
		break;
	default:
		return 0;
	}
	return n + 1;
}

const struct tr_kin_class *tr_kin_classify(struct tr_kin *k, struct strtab *st,
					   const struct trawl_ctf_event_class *cls)
{
	uint32_t i = cls->index;

	if (i >= k->nci) {
		size_t cap = k->nci ? k->nci : 64;
		while (cap <= i)
			cap *= 2;
		struct tr_kin_class *ci = realloc(k->ci, cap * sizeof(*ci));
		if (!ci)
			return NULL;
		memset(ci + k->nci, 0, (cap - k->nci) * sizeof(*ci));
		k->ci = ci;
		k->nci = cap;
	}
	struct tr_kin_class *ci = &k->ci[i];
	if (__builtin_expect(ci->kind == K_UNSEEN, 0)) {
		struct kctx ctx = { .f = k->f, .str = st };
		classify(&ctx, cls, ci);
	}
	return ci;
}

void tr_kin_finish(struct tr_kin *k)
{
	free(k->ci);
	k->ci = NULL;
	k->nci = 0;
}

void tr_kin_free(struct tr_kin *k)
{
	free(k->ci);
	free(k->f);
	k->ci = NULL;
	k->nci = 0;
	k->f = NULL;
}

int tr_kin_take(struct tr_kin *k, struct strtab *st, struct tables *t, const struct trawl_event *ev)
{
	const struct tr_kin_class *ci = tr_kin_class(k, st, ev->cls);
	struct chg c[2];
	int n, rc = 0;

	if (!ci)
		return -ENOMEM;
	if (ci->kind == K_NONE)
		return 0;
	if ((n = tr_kin_changes(k, st, t, ev, ci, c)) < 0)
		return n;
	for (int i = 2 - n; i < 2 && !rc; i++)
		rc = tr_state_apply(t, &c[i], 0);
	return rc;
}

int tr_kin_context_name(struct tr_kin *k, struct strtab *st, struct tables *t,
			const struct trawl_field *f, const struct trawl_event *ev, int64_t tid)
{
	struct kctx ctx = { .f = k->f, .str = st, .cur = t, .names = k->names };
	uint32_t id = sget_comm(&ctx, f, ev, tid);

	return id ? tr_state_name(t, tid, id) : 0;
}
