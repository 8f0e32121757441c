/* SPDX-License-Identifier: MIT */
/*
 * lib/kern/statedump.c - the state at the start of a recording, as
 * LTTng's statedump events: lttng_statedump_start, then per thread
 * lttng_statedump_process_state { tid, pid, ppid, name, type, status, cpu,
 * cgroup_id, cgroup }, per open file of each process
 * lttng_statedump_file_descriptor { pid, fd, flags, filename }, per block
 * device lttng_statedump_block_device { dev, diskname } (from /sys/dev/block:
 * dev as the block events have it, major << 20 | minor), and
 * lttng_statedump_end. Read from /proc after tracing started, so a task
 * forked meanwhile shows in the sched_process_fork events instead.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kern/krec.h"
#include "util/clock.h"

/* LTTng's enums (lttng-statedump): process type and status. */
enum { LTTNG_USER_THREAD = 0, LTTNG_KERNEL_THREAD = 1 };
enum { ST_UNNAMED, ST_WAIT_FORK, ST_WAIT_CPU, ST_EXIT, ST_ZOMBIE, ST_WAIT, ST_RUN, ST_DEAD };
#define PF_KTHREAD 0x00200000u

struct dump {
	struct trawl_ctf_wstream *ws;
	const struct trawl_ctf_event_class *start, *proc, *file, *end, *bdev;
	bool tsc, tid;
	int32_t self;
	char cgroot[512];		/* the cgroup v2 hierarchy's mount */
	uint64_t last;
	long n;
	uint8_t buf[8192];
};

static int emit(struct dump *d, const struct trawl_ctf_event_class *ec, const uint8_t *p)
{
	uint64_t ts = tr_clock_now(d->tsc);
	if (ts < d->last)
		ts = d->last;
	d->last = ts;
	int r = trawl_ctf_wstream_event(d->ws, ec, ts, d->buf, (size_t)(p - d->buf));
	if (r < 0)
		return r;
	d->n++;
	return 0;
}

static uint8_t *put(uint8_t *p, const void *v, size_t n)
{
	memcpy(p, v, n);
	return p + n;
}

/* context { tid } first, when the stream class has it */
static uint8_t *ctx(struct dump *d)
{
	uint8_t *p = d->buf;
	if (d->tid)
		p = put(p, &d->self, 4);
	return p;
}

static uint8_t *put_str(struct dump *d, uint8_t *p, const char *s)
{
	size_t n = strlen(s), room = (size_t)(d->buf + sizeof(d->buf) - p) - 1;
	if (n > room)
		n = room;
	memcpy(p, s, n);
	p[n] = 0;
	return p + n + 1;
}

ssize_t tr_krec_read_file(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, cap - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return n;
}

struct taskinfo {
	char comm[16];
	char state;
	int32_t ppid, cpu;
	uint32_t flags;
};

/* /proc/.../stat: "pid (comm) S ppid ... flags(9) ... processor(39)" */
static int parse_stat(const char *path, struct taskinfo *t)
{
	char buf[1024];
	if (tr_krec_read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	char *l = strchr(buf, '('), *r = strrchr(buf, ')');
	if (!l || !r || r < l || r[1] != ' ')
		return -1;
	memset(t->comm, 0, sizeof(t->comm));
	size_t n = (size_t)(r - l - 1);
	memcpy(t->comm, l + 1, n < 15 ? n : 15);
	char *s = r + 2;
	t->state = *s;
	unsigned long v[40];
	int k = 0;
	char *tok = strtok(s + 1, " ");
	while (tok && k < 40) {
		v[k++] = strtoul(tok, NULL, 10);
		tok = strtok(NULL, " ");
	}
	/* v[0] = ppid (field 4), flags field 9 -> v[5], processor field 39 -> v[35] */
	if (k < 36)
		return -1;
	t->ppid = (int32_t)v[0];
	t->flags = (uint32_t)v[5];
	t->cpu = (int32_t)v[35];
	return 0;
}

static int status_of(char st)
{
	switch (st) {
	case 'R': return ST_RUN;
	case 'Z': return ST_ZOMBIE;
	case 'X': return ST_DEAD;
	default: return ST_WAIT;
	}
}

/* Where the cgroup v2 hierarchy is mounted: /sys/fs/cgroup, or elsewhere
 * (/sys/fs/cgroup/unified on a hybrid system); read once a dump. */
static void cgroup2_root(char *out, size_t cap)
{
	FILE *f = fopen("/proc/mounts", "re");
	char dev[256], at[512], type[64];

	snprintf(out, cap, "%s", "/sys/fs/cgroup");
	while (f && fscanf(f, "%255s %511s %63s %*[^\n]", dev, at, type) == 3)
		if (!strcmp(type, "cgroup2")) {
			snprintf(out, cap, "%s", at);
			break;
		}
	if (f)
		fclose(f);
}

/* "0::/path" (cgroup v2) -> path and the cgroup's id (its inode, under
 * root: the hierarchy's mount). */
static void cgroup_of(const char *root, int pid, char *path, size_t cap, uint64_t *id)
{
	char fn[64], buf[4096];
	snprintf(fn, sizeof(fn), "/proc/%d/cgroup", pid);
	*id = 0;
	snprintf(path, cap, "%s", "");
	if (tr_krec_read_file(fn, buf, sizeof(buf)) <= 0)
		return;
	char *line = strstr(buf, "0::");
	if (!line || (line != buf && line[-1] != '\n'))
		line = buf;
	char *p = strchr(line, ':');
	p = p ? strchr(p + 1, ':') : NULL;
	if (!p)
		return;
	p++;
	char *nl = strchr(p, '\n');
	if (nl)
		*nl = 0;
	snprintf(path, cap, "%s", p);
	char full[4200];
	struct stat st;
	snprintf(full, sizeof(full), "%s%s", root, strcmp(p, "/") ? p : "");
	if (stat(full, &st) == 0)
		*id = (uint64_t)st.st_ino;
}

/* The file's open flags (O_*, with O_CLOEXEC), from fdinfo's octal "flags:". */
static uint32_t fd_flags(int pid, const char *fd)
{
	char path[300], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", pid, fd);
	if (tr_krec_read_file(path, buf, sizeof(buf)) <= 0)
		return 0;
	const char *f = strstr(buf, "flags:");
	return f ? (uint32_t)strtoul(f + 6, NULL, 8) : 0;
}

static int dump_process(struct dump *d, int pid)
{
	char path[128], cg[2048];
	uint64_t cgid;
	struct taskinfo pt;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (parse_stat(path, &pt) < 0)
		return 0;	/* gone meanwhile */
	cgroup_of(d->cgroot, pid, cg, sizeof(cg), &cgid);
	int32_t type = (pt.flags & PF_KTHREAD) ? LTTNG_KERNEL_THREAD : LTTNG_USER_THREAD;
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	DIR *td = opendir(path);
	struct dirent *e;
	int r = 0;
	while (td && !r && (e = readdir(td))) {
		int tid = atoi(e->d_name);
		struct taskinfo t;
		if (tid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
		if (parse_stat(path, &t) < 0)
			continue;
		uint8_t *p = ctx(d);
		int32_t v;
		p = put(p, &tid, 4);
		p = put(p, &pid, 4);
		p = put(p, &pt.ppid, 4);
		p = put(p, t.comm, 16);
		p = put(p, &type, 4);
		v = status_of(t.state);
		p = put(p, &v, 4);
		p = put(p, &t.cpu, 4);
		p = put(p, &cgid, 8);
		p = put_str(d, p, cg);
		r = emit(d, d->proc, p);
	}
	if (td)
		closedir(td);
	if (r || type == LTTNG_KERNEL_THREAD)
		return r;
	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	DIR *fd = opendir(path);
	while (fd && !r && (e = readdir(fd))) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		int32_t n = atoi(e->d_name);
		char link[300], target[4096];
		snprintf(link, sizeof(link), "/proc/%d/fd/%s", pid, e->d_name);
		ssize_t len = readlink(link, target, sizeof(target) - 1);
		if (len < 0)
			continue;
		target[len] = 0;
		uint32_t flags = fd_flags(pid, e->d_name);
		uint8_t *p = ctx(d);
		p = put(p, &pid, 4);
		p = put(p, &n, 4);
		p = put(p, &flags, 4);
		p = put_str(d, p, target);
		r = emit(d, d->file, p);
	}
	if (fd)
		closedir(fd);
	return r;
}

/* Every block device of /sys/dev/block/MAJ:MIN with its uevent's DEVNAME. */
static int dump_block_devices(struct dump *d)
{
	DIR *bd = opendir("/sys/dev/block");
	struct dirent *e;
	int r = 0;

	while (bd && !r && (e = readdir(bd))) {
		unsigned maj, min;
		char path[320], buf[1024];
		if (sscanf(e->d_name, "%u:%u", &maj, &min) != 2)
			continue;
		snprintf(path, sizeof(path), "/sys/dev/block/%s/uevent", e->d_name);
		if (tr_krec_read_file(path, buf, sizeof(buf)) <= 0)
			continue;
		char *name = strstr(buf, "DEVNAME=");
		if (!name || (name != buf && name[-1] != '\n'))
			continue;
		name += 8;
		name[strcspn(name, "\n")] = 0;
		uint32_t dev = maj << 20 | (min & 0xfffff);
		uint8_t *p = ctx(d);
		p = put(p, &dev, 4);
		p = put_str(d, p, name);
		r = emit(d, d->bdev, p);
	}
	if (bd)
		closedir(bd);
	return r;
}

static int classes(struct trawl_ctf_writer *w, struct trawl_ctf_stream_class *sc, struct dump *d)
{
	struct trawl_ctf_type *i32 = trawl_ctf_type_int(w, 32, true, 10);
	struct trawl_ctf_type *u64 = trawl_ctf_type_int(w, 64, false, 10);
	struct trawl_ctf_type *oct = trawl_ctf_type_int(w, 32, false, 8);
	struct trawl_ctf_type *ch = trawl_ctf_type_int(w, 8, false, 10);
	struct trawl_ctf_type *str = trawl_ctf_type_string(w);
	struct trawl_ctf_type *te = i32 ? trawl_ctf_type_enum(w, i32) : NULL;
	struct trawl_ctf_type *se = i32 ? trawl_ctf_type_enum(w, i32) : NULL;
	struct trawl_ctf_type *u32 = trawl_ctf_type_int(w, 32, false, 10);
	struct trawl_ctf_type *ps = trawl_ctf_type_struct(w), *fs = trawl_ctf_type_struct(w),
			      *bs = trawl_ctf_type_struct(w);
	if (!i32 || !u32 || !u64 || !oct || !ch || !str || !te || !se || !ps || !fs || !bs)
		return -ENOMEM;
	ch->u.i.encoding = TRAWL_CTF_ENC_UTF8;
	struct trawl_ctf_type *comm = trawl_ctf_type_array(w, ch, 16);
	static const char *const st[] = { "UNNAMED", "WAIT_FORK", "WAIT_CPU", "EXIT", "ZOMBIE",
					  "WAIT", "RUN", "DEAD" };
	int r = 0;
	r |= trawl_ctf_enum_add(w, te, "USER_THREAD", 0, 0);
	r |= trawl_ctf_enum_add(w, te, "KERNEL_THREAD", 1, 1);
	for (unsigned i = 0; i < 8; i++)
		r |= trawl_ctf_enum_add(w, se, st[i], i, i);
	r |= trawl_ctf_struct_add(w, ps, "tid", i32);
	r |= trawl_ctf_struct_add(w, ps, "pid", i32);
	r |= trawl_ctf_struct_add(w, ps, "ppid", i32);
	r |= trawl_ctf_struct_add(w, ps, "name", comm);
	r |= trawl_ctf_struct_add(w, ps, "type", te);
	r |= trawl_ctf_struct_add(w, ps, "status", se);
	r |= trawl_ctf_struct_add(w, ps, "cpu", i32);
	r |= trawl_ctf_struct_add(w, ps, "cgroup_id", u64);
	r |= trawl_ctf_struct_add(w, ps, "cgroup", str);
	r |= trawl_ctf_struct_add(w, fs, "pid", i32);
	r |= trawl_ctf_struct_add(w, fs, "fd", i32);
	r |= trawl_ctf_struct_add(w, fs, "flags", oct);
	r |= trawl_ctf_struct_add(w, fs, "filename", str);
	r |= trawl_ctf_struct_add(w, bs, "dev", u32);
	r |= trawl_ctf_struct_add(w, bs, "diskname", str);
	if (r || !comm)
		return -EINVAL;
	d->start = trawl_ctf_writer_event_class(w, sc, "lttng_statedump_start", INT64_MIN, NULL);
	d->proc = trawl_ctf_writer_event_class(w, sc, "lttng_statedump_process_state", INT64_MIN, ps);
	d->file = trawl_ctf_writer_event_class(w, sc, "lttng_statedump_file_descriptor", INT64_MIN, fs);
	d->end = trawl_ctf_writer_event_class(w, sc, "lttng_statedump_end", INT64_MIN, NULL);
	d->bdev = trawl_ctf_writer_event_class(w, sc, "lttng_statedump_block_device", INT64_MIN, bs);
	return d->start && d->proc && d->file && d->end && d->bdev ? 0 : -ENOMEM;
}

long tr_krec_statedump(struct trawl_ctf_writer *w, struct trawl_ctf_stream_class *sc,
		    struct trawl_ctf_wstream *ws, bool tsc, bool tid_context)
{
	struct dump *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->ws = ws;
	d->tsc = tsc;
	d->tid = tid_context;
	d->self = (int32_t)gettid();
	cgroup2_root(d->cgroot, sizeof(d->cgroot));
	int r = classes(w, sc, d);
	if (!r)
		r = emit(d, d->start, ctx(d));
	/*
	 * The recorder's own process first: the dump's own reads of /proc are
	 * traced, and a reader of the trace then knows their thread before
	 * they come (lttng-analyses' I/O analysis fails on a thread whose
	 * files it met before the thread's state).
	 */
	int self = (int)getpid();
	if (!r)
		r = dump_process(d, self);
	DIR *pd = r ? NULL : opendir("/proc");
	if (!r && !pd)
		r = -errno;
	struct dirent *e;
	while (pd && !r && (e = readdir(pd))) {
		int pid = atoi(e->d_name);
		if (pid > 0 && pid != self)
			r = dump_process(d, pid);
	}
	if (pd)
		closedir(pd);
	if (!r)
		r = dump_block_devices(d);
	if (!r)
		r = emit(d, d->end, ctx(d));
	long n = r ? r : d->n;
	free(d);
	return n;
}
