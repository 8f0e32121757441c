/* SPDX-License-Identifier: MIT */
/*
 * The CTF 1.8 writer: builds a trace model through constructors, writes
 * per-CPU stream files packet by packet (LTTng layout: packet header, packet
 * context, compact or large event headers, byte-aligned little-endian
 * fields), one index file per stream, and the TSDL metadata at close.
 *
 * Packet layout (bytes, all little-endian):
 *   0 magic u32 (0xC1FC1FC1)     32 timestamp_begin u64     64 packet_seq_num u64
 *   4 trace uuid u8[16]          40 timestamp_end u64       72 events_discarded u64
 *  20 stream_id u32              48 content_size u64 (bits) 80 cpu_id u32
 *  24 stream_instance_id u64     56 packet_size u64 (bits)  84 first event
 * then zeros up to packet_size. Event header: compact = u32 (id:5 | ts:27 << 5)
 * or, extended, u8 31 + u32 id + u64 ts (13 bytes); large = u16 id + u32 ts
 * or u16 65535 + u32 id + u64 ts (14 bytes); fixed = u16 id + u64 ts (10).
 *
 * Files: everything below the trace root (opts.root, else the trace
 * directory) is made and opened relative to directory descriptors, each
 * component with O_NOFOLLOW: a symbolic link planted where a directory,
 * stream, index or metadata file goes is refused, never followed, and so
 * is a FIFO, a device or a file with another hard link. The metadata is
 * written when the trace starts and again before a packet of a class it
 * does not declare yet, each time whole (a temporary renamed over it), so
 * that a trace being written can be read up to its last complete packet.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ctf/ctf-internal.h"
#include "internal.h"
#include "ctf/dest.h"
#include "ctf/ioq.h"
#include "ctf/packet.h"
#include "util/clock.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
/* Payloads are serialized in host order (trawl_ctf_buf) into LE traces. */
#error "the CTF writer supports little-endian hosts only"
#endif



#define COMPACT_ID_EXT		31u
#define COMPACT_TS_BITS		27
#define LARGE_ID_EXT		65535u
#define LARGE_TS_BITS		32
#define MIN_PACKET_SIZE		4096
#define DEFAULT_PACKET_SIZE	(256 * 1024)
/* Direct writes (tr_ctf_writer_direct): buffers, sizes and offsets in
 * multiples of this (a page: what any block device's logical block
 * divides) */
#define DIRECT_ALIGN		4096u

struct trawl_ctf_wstream {
	/* hot: touched for every event */
	uint8_t *buf;
	size_t pos, cap;
	uint64_t last_ts;		/* previous event (or flush) ts */
	uint64_t nev;			/* events in the current packet */
	uint64_t sc_id;
	bool compact;
	bool fixed;			/* TRAWL_CTF_HEADER_FIXED */
	int err;			/* sticky I/O error */
	/* cold */
	uint64_t ts_begin;
	uint64_t discarded;		/* cumulative */
	uint64_t seq;			/* next packet_seq_num */
	uint64_t offset;		/* file offset of the next packet */
	uint64_t instance_id;
	uint32_t cpu;
	int fd, idxfd;			/* -1: no local files (destination only) */
	bool direct;			/* fd is O_DIRECT (tr_ctf_writer_direct) */
	char *name;			/* file name */
	uint32_t handle;		/* index in w->streams: the destination's handle */
	bool announced;			/* the destination has the stream */
	struct trawl_ctf_writer *w;
};

struct trawl_ctf_writer {
	struct trawl_ctf_arena *arena;
	struct trawl_ctf_trace *t;
	char *path;
	size_t packet_size;
	size_t env_cap;
	struct trawl_ctf_wstream **streams;
	size_t nstreams, streams_cap;
	struct trawl_ctf_type *hdr_compact, *hdr_large, *packet_context;
	struct trawl_ctf_type *hdr_fixed;	/* made on first use */
	struct ioq *ioq;		/* NULL: synchronous writes */
	struct trawl_ctf_dest *dest;	/* NULL: not streamed (or no more) */
	uint64_t horizon;		/* the last given (tr_ctf_writer_horizon) */
	int dest_err;			/* the destination was lost (a local copy goes on) */
	char dest_why[512];		/* its reason (ops->why), "" */
	struct metadata_mark sent;	/* metadata the destination has */
	/* what the destination did not store (trawl_ctf_writer_relay_discarded) */
	bool had_dest;
	bool raw_packets;		/* packets of uncounted events went to it */
	bool dest_complete;		/* it closed with everything (a relay's ACK) */
	uint64_t built;			/* events of the packets closed (atomic) */
	uint64_t dest_stored;		/* events the destination stored */
	int dest_count;			/* 0: dest_stored exact; -errno */
	int dirfd, idxdirfd;		/* the trace directory, its index/ (-1: none) */
	size_t meta_sig;		/* the model the local metadata declares */
	char why[512];			/* a path refused, "" */
	bool closed;
	uint64_t direct_slow;		/* streams' files O_DIRECT, a write this long (ns)
					 * at most; 0: through the page cache */
	int err;
};

/* ------------------------------------------------------------ helpers */

/*
 * Model arrays have no capacity field: their capacity is implied by their
 * length (0, then 4, then powers of two), so we grow exactly when full.
 */
static void *grow(struct trawl_ctf_arena *a, void *arr, size_t n, size_t sz)
{
	void **parr = arr;
	if (n != 0 && (n < 4 || (n & (n - 1))))
		return (char *)*parr + n * sz;
	size_t ncap = n ? n * 2 : 4;
	void *m = tr_arena_alloc(a, ncap * sz);
	if (!m)
		return NULL;
	if (n)
		memcpy(m, *parr, n * sz);
	*parr = m;
	return (char *)m + n * sz;
}

/*
 * epoch -> CLOCK_MONOTONIC zero, in ns: a CLOCK_REALTIME read bracketed by
 * two monotonic reads; the tightest of several samples wins.
 */
static int64_t measure_offset_ns(void)
{
	struct tr_clock_sample s;
	tr_clock_sample(false, &s);
	return s.real - s.mono;
}

/* ---------------------------------------------------------------- files */

/* A refusal's reason in w->why (the first one kept); returns -e. */
static int refuse(struct trawl_ctf_writer *w, int e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int refuse(struct trawl_ctf_writer *w, int e, const char *fmt, ...)
{
	if (!w->why[0]) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(w->why, sizeof(w->why), fmt, ap);
		va_end(ap);
	}
	return -e;
}

/* The directory name in dfd (made if missing), never through a link:
 * its descriptor, or -errno (why set for a refusal). shown: for messages. */
static int dir_beneath(struct trawl_ctf_writer *w, int dfd, const char *name, const char *shown)
{
	if (mkdirat(dfd, name, 0777) < 0 && errno != EEXIST)
		return -errno;
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	int e = errno;
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
		return refuse(w, ELOOP, "%s: a symbolic link where the trace writer makes a "
			      "directory: refused (links are not followed)", shown);
	if (e == ENOTDIR)
		return refuse(w, ENOTDIR, "%s: not a directory", shown);
	return -e;
}

/* Opens (creates, truncates) file name in dfd for writing: a regular file
 * of its own only, never through a link. The fd, or -errno (why set). */
static int file_beneath(struct trawl_ctf_writer *w, int dfd, const char *name, const char *shown)
{
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
	if (fd < 0) {
		int e = errno;
		struct stat st;
		if (e == ELOOP || (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
				   S_ISLNK(st.st_mode)))
			return refuse(w, ELOOP, "%s: a symbolic link where the trace writer writes "
				      "a file: refused (links are not followed)", shown);
		if (e == ENXIO)		/* a FIFO without a reader */
			return refuse(w, EPERM, "%s: not a regular file: refused", shown);
		return -e;
	}
	struct stat st;
	int r = fstat(fd, &st) < 0 ? -errno : 0;
	if (!r && !S_ISREG(st.st_mode))
		r = refuse(w, EPERM, "%s: not a regular file: refused", shown);
	else if (!r && st.st_nlink > 1)
		r = refuse(w, EPERM, "%s: has another hard link: refused (it would be "
			   "truncated there too)", shown);
	if (!r && (fcntl(fd, F_SETFL, 0) < 0 || ftruncate(fd, 0) < 0))
		r = -errno;
	if (r) {
		close(fd);
		return r;
	}
	return fd;
}

/* root, then each component of path below it, without links: the trace
 * directory's descriptor, or -errno (why set). */
static int open_trace_dir(struct trawl_ctf_writer *w, const char *root)
{
	const char *path = w->path, *rel = NULL;
	size_t rl = root ? strlen(root) : 0;
	while (rl > 1 && root[rl - 1] == '/')
		rl--;
	if (root && rl && strncmp(path, root, rl) == 0 && (path[rl] == '/' || !path[rl]))
		rel = path + rl;
	if (root && !rel)	/* not beneath it: links below would be followed */
		return refuse(w, EPERM, "%s: not beneath the trace root %s", path, root);
	int ret;
	char *top = rel ? strndup(path, rl) : strdup(path);
	if (!top)
		return -ENOMEM;
	if ((ret = tr_mkdir_p(top)) < 0) {
		free(top);
		return ret;
	}
	int fd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(top);
	if (fd < 0)
		return -errno;
	char *p = rel ? strdup(rel) : NULL;
	if (rel && !p) {
		close(fd);
		return -ENOMEM;
	}
	for (char *c = p, *save = NULL, *tok; p && (tok = strtok_r(c, "/", &save)); c = NULL) {
		if (strcmp(tok, ".") == 0)
			continue;
		char shown[PATH_MAX];
		snprintf(shown, sizeof(shown), "%.*s%.*s", (int)rl, path,
			 (int)(tok + strlen(tok) - p), rel);
		if (strcmp(tok, "..") == 0) {
			fd = (close(fd), refuse(w, EPERM, "%s: '..' below the trace root", shown));
			break;
		}
		int nfd = dir_beneath(w, fd, tok, shown);
		close(fd);
		fd = nfd;
		if (fd < 0)
			break;
	}
	free(p);
	return fd;
}

/* ---------------------------------------------------------------- types */

static struct trawl_ctf_type *new_type(struct trawl_ctf_writer *w, enum trawl_ctf_kind k)
{
	struct trawl_ctf_type *t = tr_arena_alloc(w->arena, sizeof(*t));
	if (!t)
		return NULL;
	t->kind = k;
	t->align = 8;
	return t;
}

static struct trawl_ctf_type *mk_int(struct trawl_ctf_writer *w, unsigned bits, unsigned align,
				     bool sign, unsigned base, int clock)
{
	struct trawl_ctf_type *t = new_type(w, TRAWL_CTF_INT);
	if (!t)
		return NULL;
	t->align = align;
	t->u.i.size = bits;
	t->u.i.sign = sign;
	t->u.i.byte_order = TRAWL_CTF_LE;
	t->u.i.base = (uint8_t)base;
	t->u.i.encoding = TRAWL_CTF_ENC_NONE;
	t->u.i.clock = clock;
	return t;
}

struct trawl_ctf_type *trawl_ctf_type_int(struct trawl_ctf_writer *w, unsigned bits,
					  bool sign, unsigned base)
{
	if (!w || (bits != 8 && bits != 16 && bits != 32 && bits != 64) ||
	    (base != 2 && base != 8 && base != 10 && base != 16)) {
		errno = EINVAL;
		return NULL;
	}
	return mk_int(w, bits, 8, sign, base, -1);
}

struct trawl_ctf_type *trawl_ctf_type_float(struct trawl_ctf_writer *w, unsigned bits)
{
	if (!w || (bits != 32 && bits != 64)) {
		errno = EINVAL;
		return NULL;
	}
	struct trawl_ctf_type *t = new_type(w, TRAWL_CTF_FLOAT);
	if (!t)
		return NULL;
	t->u.f.exp_dig = bits == 32 ? 8 : 11;
	t->u.f.mant_dig = bits == 32 ? 24 : 53;
	t->u.f.byte_order = TRAWL_CTF_LE;
	return t;
}

struct trawl_ctf_type *trawl_ctf_type_string(struct trawl_ctf_writer *w)
{
	if (!w) {
		errno = EINVAL;
		return NULL;
	}
	struct trawl_ctf_type *t = new_type(w, TRAWL_CTF_STRING);
	if (t)
		t->u.str.encoding = TRAWL_CTF_ENC_UTF8;
	return t;
}

struct trawl_ctf_type *trawl_ctf_type_enum(struct trawl_ctf_writer *w,
					   struct trawl_ctf_type *container)
{
	if (!w || !container || container->kind != TRAWL_CTF_INT) {
		errno = EINVAL;
		return NULL;
	}
	struct trawl_ctf_type *t = new_type(w, TRAWL_CTF_ENUM);
	if (!t)
		return NULL;
	t->align = container->align;
	t->u.e.container = container;
	return t;
}

int trawl_ctf_enum_add(struct trawl_ctf_writer *w, struct trawl_ctf_type *e,
		       const char *label, uint64_t lo, uint64_t hi)
{
	if (!w || !e || e->kind != TRAWL_CTF_ENUM || !label || !*label)
		return -EINVAL;
	if (e->u.e.container->u.i.sign ? (int64_t)lo > (int64_t)hi : lo > hi)
		return -EINVAL;
	char *l = tr_arena_strdup(w->arena, label);
	struct trawl_ctf_enum_range *r = l ? grow(w->arena, &e->u.e.ranges, e->u.e.n, sizeof(*r)) : NULL;
	if (!r)
		return -ENOMEM;
	r->label = l;
	r->lo = lo;
	r->hi = hi;
	e->u.e.n++;
	return 0;
}

struct trawl_ctf_type *trawl_ctf_type_array(struct trawl_ctf_writer *w,
					    struct trawl_ctf_type *elem, uint64_t n)
{
	if (!w || !elem) {
		errno = EINVAL;
		return NULL;
	}
	struct trawl_ctf_type *t = new_type(w, TRAWL_CTF_ARRAY);
	if (!t)
		return NULL;
	t->align = elem->align;
	t->u.a.elem = elem;
	t->u.a.length = n;
	return t;
}

/* Field names are stored with a leading '_' (see trawl_ctf_struct_add). */
static char *field_name(struct trawl_ctf_writer *w, const char *name)
{
	size_t n = strlen(name);
	char *s = tr_arena_alloc(w->arena, n + 2);
	if (!s)
		return NULL;
	s[0] = '_';
	memcpy(s + 1, name, n);
	return s;
}

static bool valid_name(const char *s)
{
	if (!s || !*s)
		return false;
	for (const char *p = s; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (p != s && c >= '0' && c <= '9')))
			return false;
	}
	return true;
}

struct trawl_ctf_type *trawl_ctf_type_sequence(struct trawl_ctf_writer *w,
					       struct trawl_ctf_type *elem,
					       const char *length)
{
	if (!w || !elem || !valid_name(length)) {
		errno = EINVAL;
		return NULL;
	}
	struct trawl_ctf_type *t = new_type(w, TRAWL_CTF_SEQUENCE);
	if (!t)
		return NULL;
	t->align = elem->align;
	t->u.q.elem = elem;
	t->u.q.length = field_name(w, length);
	return t->u.q.length ? t : NULL;
}

struct trawl_ctf_type *trawl_ctf_type_struct(struct trawl_ctf_writer *w)
{
	if (!w) {
		errno = EINVAL;
		return NULL;
	}
	struct trawl_ctf_type *t = new_type(w, TRAWL_CTF_STRUCT);
	if (t)
		t->align = 1;
	return t;
}

/* Adds a field with the name exactly as given (internal structures). */
static int struct_add_raw(struct trawl_ctf_writer *w, struct trawl_ctf_type *s,
			  const char *name, struct trawl_ctf_type *t)
{
	struct trawl_ctf_field *f = grow(w->arena, &s->u.s.fields, s->u.s.n, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->name = name;
	f->type = t;
	s->u.s.n++;
	if (t->align > s->align)
		s->align = t->align;
	return 0;
}

int trawl_ctf_struct_add(struct trawl_ctf_writer *w, struct trawl_ctf_type *s,
			 const char *name, struct trawl_ctf_type *t)
{
	if (!w || !s || s->kind != TRAWL_CTF_STRUCT || !t || !valid_name(name))
		return -EINVAL;
	char *n = field_name(w, name);
	for (size_t i = 0; n && i < s->u.s.n; i++)
		if (strcmp(s->u.s.fields[i].name, n) == 0)
			return -EEXIST;
	if (t->kind == TRAWL_CTF_SEQUENCE) {
		/* the length must be an earlier unsigned integer sibling */
		size_t i;
		for (i = 0; i < s->u.s.n; i++)
			if (strcmp(s->u.s.fields[i].name, t->u.q.length) == 0)
				break;
		if (i == s->u.s.n || s->u.s.fields[i].type->kind != TRAWL_CTF_INT ||
		    s->u.s.fields[i].type->u.i.sign)
			return -EINVAL;
	}
	return n ? struct_add_raw(w, s, n, t) : -ENOMEM;
}

/* ----------------------------------------------------------- the model */

static struct trawl_ctf_type *mk_struct(struct trawl_ctf_writer *w, int n, ...)
{
	struct trawl_ctf_type *s = trawl_ctf_type_struct(w);
	va_list ap;
	va_start(ap, n);
	for (int i = 0; s && i < n; i++) {
		const char *name = va_arg(ap, const char *);
		struct trawl_ctf_type *t = va_arg(ap, struct trawl_ctf_type *);
		if (!t || struct_add_raw(w, s, name, t) < 0)
			s = NULL;
	}
	va_end(ap);
	return s;
}

/* LTTng's event_header_compact / event_header_large. */
static struct trawl_ctf_type *mk_header(struct trawl_ctf_writer *w, bool compact)
{
	unsigned idbits = compact ? 5 : 16, tsbits = compact ? 27 : 32;
	uint64_t ext = compact ? COMPACT_ID_EXT : LARGE_ID_EXT;
	struct trawl_ctf_type *idt = mk_int(w, idbits, compact ? 1 : 8, false, 10, -1);
	struct trawl_ctf_type *e = idt ? trawl_ctf_type_enum(w, idt) : NULL;
	if (!e || trawl_ctf_enum_add(w, e, "compact", 0, ext - 1) < 0 ||
	    trawl_ctf_enum_add(w, e, "extended", ext, ext) < 0)
		return NULL;
	struct trawl_ctf_type *c = mk_struct(w, 1, "timestamp",
					     mk_int(w, tsbits, compact ? 1 : 8, false, 10, 0));
	struct trawl_ctf_type *x = mk_struct(w, 2, "id", mk_int(w, 32, 8, false, 10, -1),
					     "timestamp", mk_int(w, 64, 8, false, 10, 0));
	struct trawl_ctf_type *v = new_type(w, TRAWL_CTF_VARIANT);
	struct trawl_ctf_field *opts = tr_arena_alloc(w->arena, 2 * sizeof(*opts));
	if (!c || !x || !v || !opts)
		return NULL;
	v->align = 1;
	opts[0].name = "compact";
	opts[0].type = c;
	opts[1].name = "extended";
	opts[1].type = x;
	v->u.v.tag = "id";
	v->u.v.options = opts;
	v->u.v.n = 2;
	struct trawl_ctf_type *h = mk_struct(w, 2, "id", e, "v", v);
	if (h)
		h->align = 8;
	return h;
}

static int build_model(struct trawl_ctf_writer *w, const struct trawl_ctf_writer_opts *o)
{
	struct trawl_ctf_trace *t = w->t;
	t->major = 1;
	t->minor = 8;
	t->byte_order = TRAWL_CTF_LE;
	t->has_uuid = true;
	if (o->trace_uuid)
		memcpy(t->uuid, o->trace_uuid, 16);
	else
		tr_uuid_random(t->uuid);

	struct trawl_ctf_clock *c = tr_arena_alloc(w->arena, sizeof(*c));
	if (!c)
		return -ENOMEM;
	t->clocks = c;
	t->nclocks = 1;
	c->name = tr_arena_strdup(w->arena, o->clock_name ? o->clock_name : "monotonic");
	if (!c->name)
		return -ENOMEM;
	c->description = o->clock_name ? NULL : "CLOCK_MONOTONIC";
	c->has_uuid = true;
	if (o->clock_uuid)
		memcpy(c->uuid, o->clock_uuid, 16);
	else
		tr_uuid_boot_id(c->uuid);
	c->absolute = true;
	c->freq = o->clock_freq ? o->clock_freq : 1000000000;
	c->precision = 1;
	if (o->clock_offset_s || o->clock_offset) {
		c->offset_s = o->clock_offset_s;
		c->offset = o->clock_offset;
	} else {
		int64_t off = measure_offset_ns();
		c->offset_s = off / 1000000000;
		c->offset = (int64_t)((__int128)(off % 1000000000) * (__int128)c->freq / 1000000000);
	}

	struct trawl_ctf_type *u32 = mk_int(w, 32, 8, false, 10, -1);
	struct trawl_ctf_type *u64 = mk_int(w, 64, 8, false, 10, -1);
	struct trawl_ctf_type *u8 = mk_int(w, 8, 8, false, 16, -1);
	struct trawl_ctf_type *clk64 = mk_int(w, 64, 8, false, 10, 0);
	struct trawl_ctf_type *uuid = u8 ? trawl_ctf_type_array(w, u8, 16) : NULL;
	if (!u32 || !u64 || !clk64 || !uuid)
		return -ENOMEM;
	t->packet_header = mk_struct(w, 4, "magic", mk_int(w, 32, 8, false, 16, -1),
				     "uuid", uuid, "stream_id", u32,
				     "stream_instance_id", u64);
	w->packet_context = mk_struct(w, 7, "timestamp_begin", clk64, "timestamp_end", clk64,
				      "content_size", u64, "packet_size", u64,
				      "packet_seq_num", u64, "events_discarded", u64,
				      "cpu_id", u32);
	w->hdr_compact = mk_header(w, true);
	w->hdr_large = mk_header(w, false);
	if (!t->packet_header || !w->packet_context || !w->hdr_compact || !w->hdr_large)
		return -ENOMEM;
	return 0;
}

static int env_set(struct trawl_ctf_writer *w, const char *key, bool is_int,
		   int64_t ival, const char *sval)
{
	if (!w || !valid_name(key) || (!is_int && !sval))
		return -EINVAL;
	/* the destination has the env block already: it cannot change any more */
	if (w->sent.header)
		return -EBUSY;
	struct trawl_ctf_trace *t = w->t;
	struct trawl_ctf_env *e = NULL;
	for (size_t i = 0; i < t->nenv; i++)
		if (strcmp(t->env[i].key, key) == 0)
			e = &t->env[i];
	if (!e) {
		char *k = tr_arena_strdup(w->arena, key);
		e = k ? grow(w->arena, &t->env, t->nenv, sizeof(*e)) : NULL;
		if (!e)
			return -ENOMEM;
		t->nenv++;
		e->key = k;
	}
	e->is_int = is_int;
	e->ival = is_int ? ival : 0;
	e->sval = NULL;
	if (!is_int && !(e->sval = tr_arena_strdup(w->arena, sval)))
		return -ENOMEM;
	return 0;
}

int trawl_ctf_writer_env_str(struct trawl_ctf_writer *w, const char *key, const char *val)
{
	return env_set(w, key, false, 0, val);
}

int trawl_ctf_writer_env_int(struct trawl_ctf_writer *w, const char *key, int64_t val)
{
	return env_set(w, key, true, val, NULL);
}

struct trawl_ctf_trace *trawl_ctf_writer_trace(struct trawl_ctf_writer *w)
{
	return w ? w->t : NULL;
}

static int version_part(int which)
{
	const char *v = TRAWL_VERSION;
	long p[3] = { 0, 0, 0 };
	char *end = (char *)v;
	for (int i = 0; i < 3; i++) {
		p[i] = strtol(end, &end, 10);
		if (*end != '.')
			break;
		end++;
	}
	return (int)p[which];
}

static int write_metadata(struct trawl_ctf_writer *w);

const char *trawl_ctf_writer_why(const struct trawl_ctf_writer *w)
{
	return w ? w->why : "";
}

struct trawl_ctf_writer *trawl_ctf_writer_new(const struct trawl_ctf_writer_opts *o)
{
	/* callers built before io_queue have none, nor a destination */
	struct trawl_ctf_dest *dest =
		o && o->sz >= offsetof(struct trawl_ctf_writer_opts, errlen) + sizeof(size_t) ?
		o->dest : NULL;
	int ret = -EINVAL;
	struct trawl_ctf_writer *w = NULL;
	if (!o || o->sz < offsetof(struct trawl_ctf_writer_opts, io_queue) ||
	    (!dest && (!o->path || !*o->path)) || (o->path && !*o->path) ||
	    (o->packet_size && (o->packet_size < MIN_PACKET_SIZE ||
				o->packet_size % 8 || o->packet_size > (1u << 30))))
		goto err;
	ret = -ENOMEM;
	w = calloc(1, sizeof(*w));
	if (!w)
		goto err;
	w->arena = tr_arena_new();
	if (!w->arena)
		goto err;
	w->t = tr_arena_alloc(w->arena, sizeof(*w->t));
	w->path = o->path ? strdup(o->path) : NULL;
	if (!w->t || (o->path && !w->path))
		goto err;
	w->t->arena = NULL;	/* owned by the writer, freed with it */
	w->dirfd = w->idxdirfd = -1;
	w->packet_size = o->packet_size ? o->packet_size : DEFAULT_PACKET_SIZE;
	ret = build_model(w, o);
	if (ret < 0)
		goto err;

	char host[256] = "";
	if (!o->hostname && gethostname(host, sizeof(host) - 1) < 0)
		strcpy(host, "localhost");
	if ((ret = env_set(w, "hostname", false, 0, o->hostname ? o->hostname : host)) < 0 ||
	    (ret = env_set(w, "domain", false, 0, o->domain ? o->domain : "ust")) < 0 ||
	    (ret = env_set(w, "tracer_name", false, 0,
			   o->tracer_name ? o->tracer_name : "trawl")) < 0 ||
	    (ret = env_set(w, "tracer_major", true, version_part(0), NULL)) < 0 ||
	    (ret = env_set(w, "tracer_minor", true, version_part(1), NULL)) < 0 ||
	    (ret = env_set(w, "tracer_patchlevel", true, version_part(2), NULL)) < 0)
		goto err;

	/* the destination first: refused, nothing is left on the disk */
	if (dest) {
		const struct ctf_dest_trace dt = {
			.uuid = w->t->uuid,
			.hostname = o->hostname ? o->hostname : host,
			.domain = o->domain ? o->domain : "ust",
			.io_queue = o->io_queue,
		};
		ret = dest->ops->open(dest, &dt, o->err, o->errlen);
		if (ret < 0)
			goto err;
		w->dest = dest;
		w->had_dest = true;
	}
	if (w->path) {
		const char *root = o->sz >= offsetof(struct trawl_ctf_writer_opts, root) +
				   sizeof(o->root) ? o->root : NULL;
		if ((ret = open_trace_dir(w, root)) < 0)
			goto err;
		w->dirfd = ret;
		char shown[PATH_MAX];
		snprintf(shown, sizeof(shown), "%s/index", w->path);
		if ((ret = dir_beneath(w, w->dirfd, "index", shown)) < 0)
			goto err;
		w->idxdirfd = ret;
		/* readable from the start (a trace without streams yet) */
		if ((ret = write_metadata(w)) < 0)
			goto err;
	}
	if (o->sz >= offsetof(struct trawl_ctf_writer_opts, io_queue) + sizeof(size_t) &&
	    o->io_queue && !(w->ioq = tr_ioq_new(o->io_queue))) {
		ret = -errno;
		goto err;
	}
	return w;
err:
	if (w && w->why[0] && o && o->sz >= offsetof(struct trawl_ctf_writer_opts, errlen) +
	    sizeof(size_t) && o->err && o->errlen)
		snprintf(o->err, o->errlen, "%s", w->why);
	trawl_ctf_dest_free(dest);	/* the writer's, even now */
	if (w) {
		if (w->dirfd >= 0)
			close(w->dirfd);
		if (w->idxdirfd >= 0)
			close(w->idxdirfd);
		tr_arena_free(w->arena);
		free(w->path);
		free(w);
	}
	errno = -ret;
	return NULL;
}

void trawl_ctf_dest_free(struct trawl_ctf_dest *d)
{
	if (d)
		d->ops->free(d);
}

struct trawl_ctf_stream_class *
trawl_ctf_writer_stream_class(struct trawl_ctf_writer *w, enum trawl_ctf_header h,
			      struct trawl_ctf_type *event_context)
{
	if (!w || w->closed || (h != TRAWL_CTF_HEADER_COMPACT && h != TRAWL_CTF_HEADER_LARGE &&
				h != TRAWL_CTF_HEADER_FIXED) ||
	    (event_context && event_context->kind != TRAWL_CTF_STRUCT)) {
		errno = EINVAL;
		return NULL;
	}
	struct trawl_ctf_trace *t = w->t;
	if (h == TRAWL_CTF_HEADER_FIXED && !w->hdr_fixed) {
		w->hdr_fixed = mk_struct(w, 2, "id", mk_int(w, 16, 8, false, 10, -1),
					 "timestamp", mk_int(w, 64, 8, false, 10, 0));
		if (!w->hdr_fixed) {
			errno = ENOMEM;
			return NULL;
		}
	}
	struct trawl_ctf_stream_class *sc = tr_arena_alloc(w->arena, sizeof(*sc));
	struct trawl_ctf_stream_class **slot =
		sc ? grow(w->arena, &t->streams, t->nstreams, sizeof(*slot)) : NULL;
	if (!slot) {
		errno = ENOMEM;
		return NULL;
	}
	sc->id = t->nstreams++;
	sc->packet_context = w->packet_context;
	sc->event_header = h == TRAWL_CTF_HEADER_COMPACT ? w->hdr_compact :
			   h == TRAWL_CTF_HEADER_LARGE ? w->hdr_large : w->hdr_fixed;
	sc->event_context = event_context;
	*slot = sc;
	return sc;
}

struct trawl_ctf_event_class *
trawl_ctf_writer_event_class(struct trawl_ctf_writer *w,
			     struct trawl_ctf_stream_class *sc, const char *name,
			     int64_t loglevel, struct trawl_ctf_type *fields)
{
	if (!w || w->closed || !sc || !name || !*name ||
	    sc->id >= w->t->nstreams || w->t->streams[sc->id] != sc ||
	    (fields && fields->kind != TRAWL_CTF_STRUCT) ||
	    sc->nevents >= UINT32_MAX) {
		errno = EINVAL;
		return NULL;
	}
	struct trawl_ctf_event_class *ec = tr_arena_alloc(w->arena, sizeof(*ec));
	struct trawl_ctf_event_class **slot =
		ec ? grow(w->arena, &sc->events, sc->nevents, sizeof(*slot)) : NULL;
	if (!slot || !(ec->name = tr_arena_strdup(w->arena, name))) {
		errno = ENOMEM;
		return NULL;
	}
	ec->id = sc->nevents++;
	ec->stream_id = sc->id;
	ec->loglevel = loglevel;
	ec->fields = fields;
	*slot = ec;
	return ec;
}

static int dest_ready(struct trawl_ctf_wstream *s);

struct trawl_ctf_wstream *trawl_ctf_writer_stream(struct trawl_ctf_writer *w,
						  struct trawl_ctf_stream_class *sc,
						  const char *name, uint32_t cpu)
{
	if (!w || w->closed || !sc || sc->id >= w->t->nstreams || w->t->streams[sc->id] != sc ||
	    !name || !*name || strchr(name, '/') || strcmp(name, "metadata") == 0) {
		errno = EINVAL;
		return NULL;
	}
	int ret = -ENOMEM;
	char *path = NULL;
	struct trawl_ctf_wstream *s = calloc(1, sizeof(*s));
	if (!s)
		goto err;
	s->fd = s->idxfd = -1;
	if (asprintf(&s->name, "%s_%u", name, cpu) < 0) {
		s->name = NULL;
		goto err;
	}
	for (size_t i = 0; i < w->nstreams; i++)
		if (strcmp(w->streams[i]->name, s->name) == 0) {
			ret = -EEXIST;
			goto err;
		}
	s->cap = w->packet_size;
	s->buf = aligned_alloc(DIRECT_ALIGN, (s->cap + DIRECT_ALIGN - 1) / DIRECT_ALIGN * DIRECT_ALIGN);
	if (!s->buf)
		goto err;
	s->w = w;
	s->sc_id = sc->id;
	s->compact = sc->event_header == w->hdr_compact;
	s->fixed = sc->event_header == w->hdr_fixed;
	s->cpu = cpu;
	s->instance_id = w->nstreams;
	s->handle = (uint32_t)w->nstreams;
	s->pos = PK_HDR_END;
	if (!w->path)
		goto add;
	if (asprintf(&path, "%s/%s", w->path, s->name) < 0) {
		path = NULL;
		goto err;
	}
	s->fd = file_beneath(w, w->dirfd, s->name, path);
	free(path);
	path = NULL;
	if (s->fd < 0) {
		ret = s->fd;
		goto err;
	}
	if (w->direct_slow && !w->ioq && !w->dest && s->cap % DIRECT_ALIGN == 0) {
		int fl = fcntl(s->fd, F_GETFL);
		s->direct = fl >= 0 && fcntl(s->fd, F_SETFL, fl | O_DIRECT) == 0;
	}
	char *iname = NULL;
	if (asprintf(&iname, "%s.idx", s->name) < 0 ||
	    asprintf(&path, "%s/index/%s", w->path, iname) < 0) {
		free(iname);
		path = NULL;
		goto err;
	}
	s->idxfd = file_beneath(w, w->idxdirfd, iname, path);
	free(iname);
	free(path);
	path = NULL;
	if (s->idxfd < 0) {
		ret = s->idxfd;
		goto err;
	}
	uint8_t ih[CTF_IDX_HEADER_LEN];
	ctf_index_put_header(ih);
	ret = tr_write_all(s->idxfd, ih, sizeof(ih));
	if (ret < 0)
		goto err;
add:
	if ((ret = tr_grow(&w->streams, &w->streams_cap, w->nstreams, sizeof(*w->streams))))
		goto err;
	w->streams[w->nstreams++] = s;
	/* streamed: announced at once, so that live viewers wait for it
	 * before they show what other streams recorded after it began */
	if (w->dest && (ret = dest_ready(s)) < 0) {
		w->nstreams--;
		goto err;
	}
	return s;
err:
	if (s) {
		if (s->fd >= 0)
			close(s->fd);
		if (s->idxfd >= 0)
			close(s->idxfd);
		free(s->buf);
		free(s->name);
		free(s);
	}
	errno = -ret;
	return NULL;
}

/* ------------------------------------------------------------- packets */

/* ---------------------------------------------------------- destination */

/* Frees the destination, what it stored counted first. */
static void dest_drop(struct trawl_ctf_writer *w)
{
	struct trawl_ctf_dest *d = w->dest;
	if (!d)
		return;
	w->dest_count = -ENODATA;
	if (d->ops->stored)
		w->dest_count = d->ops->stored(d, &w->dest_stored);
	trawl_ctf_dest_free(d);
	w->dest = NULL;
}

/*
 * The destination failed (a relay closed, or stopped reading for longer
 * than the socket's send timeout). With a local copy, the writer goes on
 * without it (trawl_ctf_writer_relay_error() tells); without, the error
 * sticks. Returns what the caller should: 0, or err.
 */
static int dest_lost(struct trawl_ctf_writer *w, int err)
{
	if (err && w->dest && w->dest->ops->why && !w->dest_why[0])
		snprintf(w->dest_why, sizeof(w->dest_why), "%s", w->dest->ops->why(w->dest));
	if (!err || !w->path)
		return err;
	w->dest_err = err;
	dest_drop(w);
	return 0;
}

void tr_ctf_writer_direct(struct trawl_ctf_writer *w, uint64_t slow_ns)
{
	if (w)
		__atomic_store_n(&w->direct_slow, slow_ns, __ATOMIC_RELAXED);
}

int64_t tr_ctf_writer_demand(const struct trawl_ctf_writer *w)
{
	if (!w || !w->dest || !w->dest->ops->demand)
		return 0;
	return w->dest->ops->demand(w->dest);
}

int tr_ctf_writer_horizon(struct trawl_ctf_writer *w, uint64_t ts, bool later)
{
	if (!w || !w->dest || !w->dest->ops->horizon || ts <= w->horizon)
		return 0;
	int ret = dest_lost(w, w->dest->ops->horizon(w->dest, ts, later));
	if (!ret)
		w->horizon = ts;
	return ret;
}

bool tr_ctf_writer_horizon_asked(struct trawl_ctf_writer *w)
{
	return w && w->dest && w->dest->ops->horizon_asked && w->dest->ops->horizon_asked(w->dest);
}

int trawl_ctf_writer_relay_discarded(const struct trawl_ctf_writer *w, uint64_t *events,
				     uint64_t *discarded)
{
	if (!w || !events || !discarded)
		return -EINVAL;
	if (!w->had_dest)
		return -ENOENT;
	if (!w->closed || w->dest)
		return -EBUSY;
	uint64_t n = w->built;
	for (size_t i = 0; i < w->nstreams; i++)
		n += w->streams[i]->nev;	/* never closed: never sent */
	*events = n;
	if (w->dest_complete) {
		*discarded = 0;	/* the relay has every packet */
		return 0;
	}
	*discarded = n > w->dest_stored ? n - w->dest_stored : 0;
	return w->raw_packets ? -ENODATA : w->dest_count;
}

int trawl_ctf_writer_relay_error(const struct trawl_ctf_writer *w)
{
	return w ? w->dest_err : -EINVAL;
}

const char *trawl_ctf_writer_relay_why(const struct trawl_ctf_writer *w)
{
	return w ? w->dest_why : "";
}

int trawl_ctf_writer_sync_metadata(struct trawl_ctf_writer *w)
{
	if (!w)
		return -EINVAL;
	if (!w->dest || tr_metadata_mark_current(w->t, &w->sent))
		return 0;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return -errno;
	/* on a failure the mark has moved on all the same: the destination
	 * is lost, or the error sticks to the streams */
	int ret = tr_metadata_print_new(w->t, f, &w->sent);
	if (fclose(f) != 0 && !ret)
		ret = -ENOMEM;
	if (!ret)
		ret = dest_lost(w, w->dest->ops->metadata(w->dest, text, len));
	free(text);
	return ret;
}

/* Metadata, then the stream, before anything of the stream goes out. */
static int dest_ready(struct trawl_ctf_wstream *s)
{
	struct trawl_ctf_writer *w = s->w;
	int ret = trawl_ctf_writer_sync_metadata(w);
	if (ret || s->announced || !w->dest)
		return ret;
	ret = dest_lost(w, w->dest->ops->stream(w->dest, s->handle, s->cpu, s->sc_id, s->name));
	if (ret || !w->dest)
		return ret;
	s->announced = true;
	return 0;
}

int trawl_ctf_wstream_beacon(struct trawl_ctf_wstream *s, uint64_t ts)
{
	if (!s || ts < s->last_ts)
		return -EINVAL;
	if (s->nev)
		return -EBUSY;	/* events wait in the open packet: not a promise */
	struct trawl_ctf_writer *w = s->w;
	if (!w->dest)
		return 0;
	if (s->err)
		return s->err;
	int ret = dest_ready(s);
	if (!ret && w->dest)
		ret = dest_lost(w, w->dest->ops->beacon(w->dest, s->handle, ts));
	if (ret)
		s->err = ret;
	else
		s->last_ts = ts;	/* a promise: nothing before it any more */
	return ret;
}

int trawl_ctf_wstream_tick(struct trawl_ctf_wstream *s, uint64_t ts)
{
	if (!s || ts < s->last_ts)
		return -EINVAL;
	return s->nev ? trawl_ctf_wstream_flush(s, ts) : trawl_ctf_wstream_beacon(s, ts);
}

/* ------------------------------------------------------------- packets */

/* What the model declares, as a number that grows with it (stream and
 * event classes, env entries only ever get added). */
static size_t model_sig(const struct trawl_ctf_trace *t)
{
	size_t n = t->nstreams + t->nenv;
	for (size_t i = 0; i < t->nstreams; i++)
		n += t->streams[i]->nevents;
	return n;
}

/* s's file through the page cache from now on. */
static void direct_off(struct trawl_ctf_wstream *s)
{
	int fl = fcntl(s->fd, F_GETFL);
	if (fl >= 0)
		fcntl(s->fd, F_SETFL, fl & ~O_DIRECT);
	s->direct = false;
}

/*
 * A packet to s's O_DIRECT file: straight from the packet's buffer to the
 * device, no copy into the page cache (nor the flusher's work later).
 * What direct I/O cannot take (a buffer, size or offset out of alignment,
 * EINVAL: a filesystem that refuses it) goes through the page cache, and
 * so does everything after a write that took longer than w->direct_slow
 * (the page cache absorbs a slow or busy device's stalls).
 */
static int write_direct(struct trawl_ctf_wstream *s, const uint8_t *p, size_t n)
{
	uint64_t t0 = tr_mono_ns(), off = s->offset;
	while (n) {
		if ((uintptr_t)p % DIRECT_ALIGN || n % DIRECT_ALIGN || off % DIRECT_ALIGN) {
			direct_off(s);
			return tr_write_all(s->fd, p, n);
		}
		ssize_t k = write(s->fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && errno == EINVAL) {
			direct_off(s);
			return tr_write_all(s->fd, p, n);
		}
		if (k < 0)
			return -errno;
		if (k == 0)
			return -EIO;
		p += k;
		n -= (size_t)k;
		off += (uint64_t)k;
	}
	uint64_t dt = tr_mono_ns() - t0;
	if (dt > __atomic_load_n(&s->w->direct_slow, __ATOMIC_RELAXED))
		direct_off(s);
	return 0;
}

/*
 * Writes a packet and its index entry (locally, or queues them for the I/O
 * thread), and hands them to the destination. The entry's offset is the
 * packet's in the stream file.
 */
static int put_out(struct trawl_ctf_wstream *s, const uint8_t *pkt, size_t size,
		   const struct ctf_index *ix)
{
	struct trawl_ctf_writer *w = s->w;
	int ret = 0;
	/* the metadata declares the packet's classes before it is written */
	if (s->fd >= 0 && w->meta_sig != model_sig(w->t) && (ret = write_metadata(w)) < 0)
		return ret;
	if (s->fd >= 0) {
		uint8_t e[CTF_IDX_ENTRY_LEN];
		ctf_index_put_entry(e, s->offset, ix);
		if (w->ioq)
			ret = tr_ioq_write(w->ioq, s->fd, pkt, size, s->idxfd, e, CTF_IDX_ENTRY_LEN);
		else if (!(ret = s->direct ? write_direct(s, pkt, size) : tr_write_all(s->fd, pkt, size)))
			ret = tr_write_all(s->idxfd, e, CTF_IDX_ENTRY_LEN);
	}
	if (!ret && w->dest && !(ret = dest_ready(s)) && w->dest)
		ret = dest_lost(w, w->dest->ops->packet(w->dest, s->handle, ix, pkt, size));
	return ret;
}

/* Completes the current packet (header, context, padding) and writes it. */
static int close_packet(struct trawl_ctf_wstream *s, uint64_t ts_end)
{
	struct trawl_ctf_writer *w = s->w;
	uint8_t *b = s->buf;
	/* streamed: trimmed, so that the live timer's flushes stay small */
	size_t bytes = w->dest ? (s->pos + 7) & ~(size_t)7 : s->cap;
	uint64_t content = (uint64_t)s->pos * 8, size = (uint64_t)bytes * 8;

	if (s->err)
		return s->err;
	put_le32(b + PK_MAGIC, CTF_MAGIC);
	memcpy(b + PK_UUID, w->t->uuid, 16);
	put_le32(b + PK_STREAM_ID, (uint32_t)s->sc_id);
	put_le64(b + PK_INSTANCE_ID, s->instance_id);
	put_le64(b + PK_TS_BEGIN, s->ts_begin);
	put_le64(b + PK_TS_END, ts_end);
	put_le64(b + PK_CONTENT_SIZE, content);
	put_le64(b + PK_PACKET_SIZE, size);
	put_le64(b + PK_SEQ_NUM, s->seq);
	put_le64(b + PK_DISCARDED, s->discarded);
	put_le32(b + PK_CPU_ID, s->cpu);
	memset(b + s->pos, 0, bytes - s->pos);

	const struct ctf_index ix = {
		.packet_size = size, .content_size = content, .ts_begin = s->ts_begin,
		.ts_end = ts_end, .events_discarded = s->discarded, .stream_id = s->sc_id,
		.instance_id = s->instance_id, .seq = s->seq, .events = s->nev,
	};
	int ret = put_out(s, b, bytes, &ix);
	if (ret) {
		s->err = ret;
		return ret;
	}
	/* counted once out: a packet that failed stays in s->nev */
	__atomic_fetch_add(&w->built, s->nev, __ATOMIC_RELAXED);
	s->offset += bytes;
	s->seq++;
	s->pos = PK_HDR_END;
	s->nev = 0;
	s->last_ts = ts_end;
	return 0;
}

uint8_t *tr_ctf_wstream_reserve(struct trawl_ctf_wstream *s,
			       const struct trawl_ctf_event_class *ec, uint64_t ts, size_t max,
			       int *err)
{
	uint64_t id = ec->id, delta;
	size_t hlen;
	bool ext;

	if (unlikely(ec->stream_id != s->sc_id || ts < s->last_ts)) {
		*err = -EINVAL;
		return NULL;
	}
	if (unlikely(s->err)) {
		*err = s->err;
		return NULL;
	}
again:
	delta = s->nev ? ts - s->last_ts : 0;
	if (s->fixed) {
		if (id > UINT16_MAX) {
			*err = -EINVAL;
			return NULL;
		}
		ext = false;
		hlen = 10;
	} else if (s->compact) {
		ext = id >= COMPACT_ID_EXT || delta >> COMPACT_TS_BITS;
		hlen = ext ? 13 : 4;
	} else {
		ext = id >= LARGE_ID_EXT || delta >> LARGE_TS_BITS;
		hlen = ext ? 14 : 6;
	}
	if (unlikely(s->pos + hlen + max > s->cap)) {
		/* would it fit in an empty packet (where the delta is 0)? */
		size_t h0 = s->fixed ? 10 : s->compact ? (id >= COMPACT_ID_EXT ? 13 : 4) :
					 (id >= LARGE_ID_EXT ? 14 : 6);
		if (PK_HDR_END + h0 + max > s->cap) {
			*err = -E2BIG;
			return NULL;
		}
		int ret = close_packet(s, s->last_ts);
		if (ret < 0) {
			*err = ret;
			return NULL;
		}
		goto again;
	}
	uint8_t *p = s->buf + s->pos;
	if (s->fixed) {
		uint16_t v = htole16((uint16_t)id);
		memcpy(p, &v, 2);
		put_le64(p + 2, ts);
	} else if (s->compact) {
		if (likely(!ext)) {
			put_le32(p, (uint32_t)id | (uint32_t)(ts << 5));
		} else {
			p[0] = COMPACT_ID_EXT;
			put_le32(p + 1, (uint32_t)id);
			put_le64(p + 5, ts);
		}
	} else {
		if (likely(!ext)) {
			uint16_t v = htole16((uint16_t)id);
			memcpy(p, &v, 2);
			put_le32(p + 2, (uint32_t)ts);
		} else {
			p[0] = 0xff;
			p[1] = 0xff;
			put_le32(p + 2, (uint32_t)id);
			put_le64(p + 6, ts);
		}
	}
	return p + hlen;
}

void tr_ctf_wstream_commit(struct trawl_ctf_wstream *s, uint64_t ts, const uint8_t *end)
{
	s->pos = (size_t)(end - s->buf);
	if (!s->nev++)
		s->ts_begin = ts;
	s->last_ts = ts;
}

int trawl_ctf_wstream_event(struct trawl_ctf_wstream *s,
			    const struct trawl_ctf_event_class *ec, uint64_t ts,
			    const void *payload, size_t len)
{
	int err;
	uint8_t *p = tr_ctf_wstream_reserve(s, ec, ts, len, &err);
	if (unlikely(!p))
		return err;
	if (len)	/* an event without a payload may come with payload NULL */
		memcpy(p, payload, len);
	tr_ctf_wstream_commit(s, ts, p + len);
	return 0;
}

int trawl_ctf_wstream_packet(struct trawl_ctf_wstream *s, const void *pkt, size_t size)
{
	return tr_ctf_wstream_packet_n(s, pkt, size, UINT64_MAX);
}

int tr_ctf_wstream_packet_n(struct trawl_ctf_wstream *s, const void *pkt, size_t size,
			    uint64_t nev)
{
	const uint8_t *b = pkt;
	if (!s || !b || size < PK_HDR_END || size > ((uint64_t)1 << 40) || s->nev)
		return -EINVAL;
	if (s->err)
		return s->err;
	uint64_t content = get_le64(b + PK_CONTENT_SIZE), psize = get_le64(b + PK_PACKET_SIZE);
	uint64_t tb = get_le64(b + PK_TS_BEGIN), te = get_le64(b + PK_TS_END);
	if (get_le32(b + PK_MAGIC) != CTF_MAGIC || memcmp(b + PK_UUID, s->w->t->uuid, 16) ||
	    get_le32(b + PK_STREAM_ID) != s->sc_id ||
	    get_le64(b + PK_INSTANCE_ID) != s->instance_id || psize != (uint64_t)size * 8 ||
	    content > psize || content < PK_HDR_END * 8 || te < tb || tb < s->last_ts)
		return -EINVAL;
	uint64_t seq = get_le64(b + PK_SEQ_NUM), disc = get_le64(b + PK_DISCARDED);
	const struct ctf_index ix = {
		.packet_size = psize, .content_size = content, .ts_begin = tb, .ts_end = te,
		.events_discarded = disc, .stream_id = s->sc_id, .instance_id = s->instance_id,
		.seq = seq, .events = nev == UINT64_MAX ? 0 : nev,
	};
	if (nev == UINT64_MAX && s->w->dest)	/* uncounted (streams of several threads) */
		__atomic_store_n(&s->w->raw_packets, true, __ATOMIC_RELAXED);
	int ret = put_out(s, b, size, &ix);
	if (ret) {
		s->err = ret;
		return ret;
	}
	if (nev != UINT64_MAX)
		__atomic_fetch_add(&s->w->built, nev, __ATOMIC_RELAXED);
	s->offset += size;
	s->seq = seq + 1;
	s->discarded = disc;
	s->last_ts = te;
	return 0;
}

uint64_t trawl_ctf_wstream_instance_id(const struct trawl_ctf_wstream *s)
{
	return s ? s->instance_id : 0;
}

void trawl_ctf_wstream_discarded(struct trawl_ctf_wstream *s, uint64_t n)
{
	if (s)
		s->discarded += n;
}

int trawl_ctf_wstream_flush(struct trawl_ctf_wstream *s, uint64_t ts)
{
	if (!s)
		return -EINVAL;
	if (ts < s->last_ts)
		return -EINVAL;
	if (!s->nev)
		s->ts_begin = ts;
	return close_packet(s, ts);
}

/* --------------------------------------------------------------- close */

static int write_metadata(struct trawl_ctf_writer *w)
{
	static const char tmp[] = ".metadata.tmp";
	char shown[PATH_MAX];
	struct stat st;
	snprintf(shown, sizeof(shown), "%s/metadata", w->path);
	/* renamed over a link, the link would go and its target stay; but
	 * what was planted there is not the writer's to remove */
	if (fstatat(w->dirfd, "metadata", &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode))
		return S_ISLNK(st.st_mode)
		       ? refuse(w, ELOOP, "%s: a symbolic link where the trace writer writes "
				"a file: refused (links are not followed)", shown)
		       : refuse(w, EPERM, "%s: not a regular file: refused", shown);
	if (unlinkat(w->dirfd, tmp, 0) < 0 && errno != ENOENT)
		return -errno;
	int fd = openat(w->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	size_t sig = model_sig(w->t);
	int ret = 0;
	FILE *f = fdopen(fd, "w");
	if (!f) {
		ret = -errno;
		close(fd);
		goto out;
	}
	ret = trawl_ctf_metadata_print(w->t, f);
	if (fclose(f) != 0 && !ret)
		ret = -errno;
	if (!ret && renameat(w->dirfd, tmp, w->dirfd, "metadata") < 0)
		ret = -errno;
out:
	if (ret)
		unlinkat(w->dirfd, tmp, 0);
	else
		w->meta_sig = sig;
	return ret;
}

int trawl_ctf_writer_metadata_now(struct trawl_ctf_writer *w)
{
	if (!w)
		return -EINVAL;
	if (w->closed || w->dirfd < 0)
		return 0;
	return write_metadata(w);
}

int trawl_ctf_writer_close(struct trawl_ctf_writer *w)
{
	if (!w)
		return -EINVAL;
	if (w->closed)
		return w->err;
	w->closed = true;
	int ret = 0;
	for (size_t i = 0; i < w->nstreams; i++) {
		struct trawl_ctf_wstream *s = w->streams[i];
		if (!s->err && s->nev)
			close_packet(s, s->last_ts);	/* an error stays in s->err */
	}
	/* the destination gets the whole metadata, even of a trace without a
	 * stream or an event class (its trace, clock and environment: readers
	 * take such a trace, not an empty file), and every stream (even one
	 * without a packet) */
	if (w->dest)
		ret = trawl_ctf_writer_sync_metadata(w);
	for (size_t i = 0; w->dest && i < w->nstreams; i++) {
		struct trawl_ctf_wstream *s = w->streams[i];
		if (!s->err && (s->err = dest_ready(s)) && !ret)
			ret = s->err;
	}
	/* everything queued is written before the files close */
	int qr = tr_ioq_free(w->ioq);
	w->ioq = NULL;
	if (qr && !ret)
		ret = qr;
	if (w->dest) {
		/* returns once the destination has it all (a relay's ACK) */
		int r = ret ? 0 : w->dest->ops->close(w->dest);
		w->dest_complete = !ret && !r;
		/* lost: with a local copy, only trawl_ctf_writer_relay_error()
		 * tells (dest_lost frees it) */
		r = dest_lost(w, r);
		dest_drop(w);
		if (r && !ret)
			ret = r;
	}
	for (size_t i = 0; i < w->nstreams; i++) {
		struct trawl_ctf_wstream *s = w->streams[i];
		int r = s->err;
		if (s->fd >= 0 && close(s->fd) < 0 && !r)
			r = -errno;
		if (s->idxfd >= 0 && close(s->idxfd) < 0 && !r)
			r = -errno;
		s->fd = s->idxfd = -1;
		s->err = r ? r : -EBADF;	/* no more events after close */
		if (r && !ret)
			ret = r;
	}
	int r = w->dirfd >= 0 ? write_metadata(w) : 0;
	if (r && !ret)
		ret = r;
	if (w->dirfd >= 0)
		close(w->dirfd);
	if (w->idxdirfd >= 0)
		close(w->idxdirfd);
	w->dirfd = w->idxdirfd = -1;
	w->err = ret;
	return ret;
}

void trawl_ctf_writer_free(struct trawl_ctf_writer *w)
{
	if (!w)
		return;
	if (!w->closed)
		trawl_ctf_writer_close(w);
	for (size_t i = 0; i < w->nstreams; i++) {
		free(w->streams[i]->buf);
		free(w->streams[i]->name);
		free(w->streams[i]);
	}
	free(w->streams);
	dest_drop(w);
	tr_metadata_mark_release(&w->sent);
	tr_arena_free(w->arena);
	free(w->path);
	free(w);
}
