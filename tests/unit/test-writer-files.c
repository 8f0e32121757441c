/* SPDX-License-Identifier: MIT */
/*
 * The CTF writer's files: the metadata of a trace being written (there
 * from the start, declaring each class before a packet of it is on the
 * disk, its env grown), and nothing below the trace root reached through
 * a symbolic link (directories, stream, index and metadata files), nor a
 * FIFO or a hard-linked file truncated: each refusal with its errno and
 * the path and why in trawl_ctf_writer_why() / opts.err, the link's
 * target untouched. Direct writes (tr_ctf_writer_direct): the stream file
 * O_DIRECT while packets are a multiple of 4 KiB, through the page cache
 * when they are not or after a write slower than the limit, the events
 * read back the same in every case.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctf/ctf-internal.h"	/* tr_ctf_writer_direct */
#include "tap.h"
#include "trawl/ctf.h"
#include "trawl/pipe.h"

static char tmpl[] = "/tmp/test-writer-files-XXXXXX";
static const char *top;

static char *at(const char *rel)
{
	char *p;
	if (asprintf(&p, "%s/%s", top, rel) < 0)
		abort();
	return p;
}

static void put(const char *rel, const char *text)
{
	char *p = at(rel);
	FILE *f = fopen(p, "w");
	if (!f || fputs(text, f) < 0 || fclose(f))
		abort();
	free(p);
}

static char *get(const char *rel)
{
	char *p = at(rel), buf[256] = "";
	FILE *f = fopen(p, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	if (f)
		fclose(f);
	free(p);
	buf[n] = 0;
	return strdup(buf);
}

static void mkdirs(const char *rel)
{
	char *p = at(rel), cmd[600];
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", p);
	if (system(cmd) != 0)
		abort();
	free(p);
}

static void link_to(const char *target, const char *rel)
{
	char *p = at(rel), *t = at(target);
	if (symlink(t, p) < 0)
		abort();
	free(p);
	free(t);
}

/* The trace at rel's metadata as the reader parses it; NULL if none. */
static struct trawl_ctf_trace *meta(const char *rel)
{
	char *d = at(rel), *m, err[256];
	if (asprintf(&m, "%s/metadata", d) < 0)
		abort();
	size_t len = 0;
	char *text = trawl_ctf_metadata_read(m, &len, err, sizeof(err));
	struct trawl_ctf_trace *t = text ? trawl_ctf_metadata_parse(text, len, err, sizeof(err)) : NULL;
	free(text);
	free(m);
	free(d);
	return t;
}

static struct trawl_ctf_writer *writer(const char *rel, const char *root, char *err, size_t errlen)
{
	char *p = at(rel), *r = root ? at(root) : NULL;
	struct trawl_ctf_writer_opts o = {
		.sz = sizeof(o), .path = p, .hostname = "h", .domain = "kernel",
		.clock_offset_s = 1700000000, .packet_size = 4096, .err = err, .errlen = errlen,
		.root = r,
	};
	struct trawl_ctf_writer *w = trawl_ctf_writer_new(&o);
	free(p);
	free(r);
	return w;
}

static void growing(void)
{
	struct trawl_ctf_writer *w = writer("g/h/kernel", "g", NULL, 0);
	ok(w, "a writer");
	struct trawl_ctf_trace *t = meta("g/h/kernel");
	ok(t && t->nstreams == 0 && trawl_ctf_trace_env(t, "hostname"),
	   "the metadata is there from the start: the trace, its env, no stream yet");
	trawl_ctf_trace_free(t);
	struct trawl_ctf_stream_class *sc = trawl_ctf_writer_stream_class(w, TRAWL_CTF_HEADER_COMPACT, NULL);
	struct trawl_ctf_type *st = trawl_ctf_type_struct(w);
	trawl_ctf_struct_add(w, st, "v", trawl_ctf_type_int(w, 64, true, 10));
	const struct trawl_ctf_event_class *a = trawl_ctf_writer_event_class(w, sc, "a", 0, st);
	struct trawl_ctf_wstream *s = trawl_ctf_writer_stream(w, sc, "channel0", 0);
	int64_t v = -1;
	ok(a && s && !trawl_ctf_wstream_event(s, a, 10, &v, 8) && !trawl_ctf_wstream_flush(s, 20),
	   "an event of class a, its packet flushed");
	t = meta("g/h/kernel");
	ok(t && t->nstreams == 1 && t->streams[0]->nevents == 1,
	   "the metadata declares the stream class and class a before its packet is read");
	trawl_ctf_trace_free(t);
	const struct trawl_ctf_event_class *b = trawl_ctf_writer_event_class(w, sc, "b", 0, st);
	t = meta("g/h/kernel");
	ok(t && t->streams[0]->nevents == 1, "a class without a packet yet: not rewritten for it");
	trawl_ctf_trace_free(t);
	ok(b && !trawl_ctf_wstream_event(s, b, 30, &v, 8) && !trawl_ctf_wstream_flush(s, 40),
	   "an event of class b flushed");
	t = meta("g/h/kernel");
	ok(t && t->streams[0]->nevents == 2, "... the metadata then declares b");
	trawl_ctf_trace_free(t);
	trawl_ctf_writer_env_str(w, "late", "yes");
	is_int(trawl_ctf_writer_close(w), 0, "close");
	t = meta("g/h/kernel");
	const struct trawl_ctf_env *e = t ? trawl_ctf_trace_env(t, "late") : NULL;
	ok(e && e->sval && !strcmp(e->sval, "yes"), "at close, the whole metadata (an env entry set late)");
	trawl_ctf_trace_free(t);
	trawl_ctf_writer_free(w);
	char *p = at("g/h/kernel/.metadata.tmp");
	ok(access(p, F_OK) != 0, "no temporary left");
	free(p);
}

/* A writer of trace rel beneath root with a stream: 0 or -errno, why. */
static int try_trace(const char *rel, const char *root, char *why, size_t wlen)
{
	char err[600] = "";
	struct trawl_ctf_writer *w = writer(rel, root, err, sizeof(err));
	if (!w) {
		snprintf(why, wlen, "%s", err);
		return -errno;
	}
	struct trawl_ctf_stream_class *sc = trawl_ctf_writer_stream_class(w, TRAWL_CTF_HEADER_COMPACT, NULL);
	int r = trawl_ctf_writer_stream(w, sc, "channel0", 0) ? 0 : -errno;
	snprintf(why, wlen, "%s", trawl_ctf_writer_why(w));
	trawl_ctf_writer_free(w);
	return r;
}

static void refused(void)
{
	char why[600], want[900], *v;
	put("victim", "precious");
	mkdirs("elsewhere");

	mkdirs("s/h/kernel");
	link_to("victim", "s/h/kernel/channel0_0");
	is_int(try_trace("s/h/kernel", "s", why, sizeof(why)), -ELOOP, "a link at a stream file: ELOOP");
	snprintf(want, sizeof(want), "%s/s/h/kernel/channel0_0: a symbolic link where the trace writer "
		 "writes a file: refused (links are not followed)", top);
	is_str(why, want, "... the path and why");
	is_str(v = get("victim"), "precious", "... its target untouched");
	free(v);

	mkdirs("m/h/kernel");
	link_to("victim", "m/h/kernel/metadata");
	is_int(try_trace("m/h/kernel", "m", why, sizeof(why)), -ELOOP, "a link at the metadata: ELOOP");
	snprintf(want, sizeof(want), "%s/m/h/kernel/metadata: a symbolic link where the trace writer "
		 "writes a file: refused (links are not followed)", top);
	is_str(why, want, "... the path and why (in opts.err: the writer was not made)");
	is_str(v = get("victim"), "precious", "... its target untouched");
	free(v);

	mkdirs("i/h/kernel/index");
	link_to("victim", "i/h/kernel/index/channel0_0.idx");
	is_int(try_trace("i/h/kernel", "i", why, sizeof(why)), -ELOOP, "a link at an index file: ELOOP");
	is_str(v = get("victim"), "precious", "... its target untouched");
	free(v);

	mkdirs("d");
	link_to("elsewhere", "d/h");
	is_int(try_trace("d/h/kernel", "d", why, sizeof(why)), -ELOOP, "a link at the host directory below the root: ELOOP");
	snprintf(want, sizeof(want), "%s/d/h: a symbolic link where the trace writer makes a "
		 "directory: refused (links are not followed)", top);
	is_str(why, want, "... the path and why");
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "test -z \"$(ls -A '%s/elsewhere')\"", top);
	is_int(system(cmd), 0, "... nothing made where it points");
	is_int(try_trace("d/h/kernel", NULL, why, sizeof(why)), 0,
	       "without a root, the trace directory is the root: the link above it is the caller's");

	mkdirs("u/h");
	link_to("elsewhere", "u/h/kernel");
	is_int(try_trace("u/h/kernel", "u/", why, sizeof(why)), -ELOOP,
	       "a link at the trace directory itself (root given with a trailing /): ELOOP");

	mkdirs("f/h/kernel");
	char *fifo = at("f/h/kernel/channel0_0");
	if (mkfifo(fifo, 0644) < 0)
		abort();
	free(fifo);
	is_int(try_trace("f/h/kernel", "f", why, sizeof(why)), -EPERM, "a FIFO at a stream file: EPERM, no wait");
	snprintf(want, sizeof(want), "%s/f/h/kernel/channel0_0: not a regular file: refused", top);
	is_str(why, want, "... the path and why");

	mkdirs("k/h/kernel");
	char *vic = at("victim"), *hl = at("k/h/kernel/channel0_0");
	if (link(vic, hl) < 0)
		abort();
	free(vic);
	free(hl);
	is_int(try_trace("k/h/kernel", "k", why, sizeof(why)), -EPERM, "a hard link of another file: EPERM");
	is_str(v = get("victim"), "precious", "... the other file untouched");
	free(v);

	mkdirs("ok/h/kernel");
	put("ok/h/kernel/channel0_0", "an earlier trace's stream");
	is_int(try_trace("ok/h/kernel", "ok", why, sizeof(why)), 0,
	       "a regular file of its own is replaced (as before)");
	is_str(why, "", "... nothing refused");
	char *p = at("ok/h/kernel/channel0_0");
	struct stat st;
	ok(stat(p, &st) == 0 && st.st_size == 0, "... truncated (no packet written)");
	free(p);

	is_int(try_trace("dd/../x/h/kernel", "dd", why, sizeof(why)), -EPERM, "'..' below the root: EPERM");
}

/* The open file's flags (/proc/self/fdinfo) of the descriptor on path; -1
 * when none is open on it. */
static long open_flags(const char *path)
{
	char fdp[64], link[4096], line[256];
	for (int fd = 0; fd < 1024; fd++) {
		snprintf(fdp, sizeof(fdp), "/proc/self/fd/%d", fd);
		ssize_t n = readlink(fdp, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = 0;
		if (strcmp(link, path))
			continue;
		snprintf(fdp, sizeof(fdp), "/proc/self/fdinfo/%d", fd);
		FILE *f = fopen(fdp, "r");
		long fl = -1;
		while (f && fgets(line, sizeof(line), f))
			if (!strncmp(line, "flags:", 6))
				fl = strtol(line + 6, NULL, 8);
		if (f)
			fclose(f);
		return fl;
	}
	return -1;
}

/*
 * A trace written with direct writes (limit slow_ns), packet_size bytes a
 * packet, 3000 events of 16 bytes (a dozen packets of 4 KiB): *flags_mid
 * are the stream file's open flags after the first packets, *flags_end
 * after all; returns the events read back in order with their values.
 */
static int direct_trace(const char *rel, size_t packet_size, uint64_t slow_ns, long *flags_mid,
			long *flags_end)
{
	char *p = at(rel), err[600] = "";
	struct trawl_ctf_writer_opts o = {
		.sz = sizeof(o), .path = p, .hostname = "h", .domain = "kernel",
		.clock_offset_s = 1700000000, .packet_size = packet_size, .err = err,
		.errlen = sizeof(err),
	};
	struct trawl_ctf_writer *w = trawl_ctf_writer_new(&o);
	if (!w)
		return -1;
	tr_ctf_writer_direct(w, slow_ns);
	struct trawl_ctf_stream_class *sc = trawl_ctf_writer_stream_class(w, TRAWL_CTF_HEADER_COMPACT, NULL);
	struct trawl_ctf_type *st = trawl_ctf_type_struct(w);
	trawl_ctf_struct_add(w, st, "v", trawl_ctf_type_int(w, 64, true, 10));
	trawl_ctf_struct_add(w, st, "u", trawl_ctf_type_int(w, 64, false, 10));
	const struct trawl_ctf_event_class *a = trawl_ctf_writer_event_class(w, sc, "a", 0, st);
	struct trawl_ctf_wstream *s = trawl_ctf_writer_stream(w, sc, "channel0", 0);
	char *file;
	if (asprintf(&file, "%s/channel0_0", p) < 0)
		abort();
	int r = a && s ? 0 : -1;
	for (int64_t i = 0; i < 3000 && !r; i++) {
		int64_t v[2] = { -i, 7 * i };
		r = trawl_ctf_wstream_event(s, a, 1000 + (uint64_t)i * 10, v, sizeof(v));
		if (i == 1000)
			*flags_mid = open_flags(file);
	}
	*flags_end = open_flags(file);
	if (trawl_ctf_writer_close(w) < 0)
		r = -1;
	trawl_ctf_writer_free(w);
	free(file);
	if (r)
		return -1;
	const char *paths[] = { p };
	struct trawl_reader *rd = trawl_reader_new(paths, 1, NULL, err, sizeof(err));
	const struct trawl_event *ev;
	char line[512], want[64];
	int n = 0;
	while (rd && trawl_reader_next(rd, &ev) == 1) {
		trawl_text_event(line, sizeof(line), ev, 0, 0);
		snprintf(want, sizeof(want), "{ v = %d, u = %d }", -n, 7 * n);
		if (!strstr(line, want))
			break;
		n++;
	}
	trawl_reader_free(rd);
	free(p);
	return n;
}

static void direct(void)
{
	long mid = -1, end = -1;
	/* does this filesystem take O_DIRECT at all? */
	char *probe = at("probe");
	int fd = open(probe, O_WRONLY | O_CREAT | O_DIRECT, 0644);
	free(probe);
	if (fd < 0) {
		for (int i = 0; i < 6; i++)
			printf("ok %d # SKIP the test directory's filesystem refuses O_DIRECT (%s)\n",
			       ++tap_n, strerror(errno));
		return;
	}
	close(fd);
	is_int(direct_trace("d1/h/kernel", 4096, 1000000000ull, &mid, &end), 3000,
	       "direct writes of 4 KiB packets: 3000 events read back, in order, their values");
	ok(mid >= 0 && (mid & O_DIRECT) && (end & O_DIRECT),
	   "... the stream file was O_DIRECT all along (flags %lo, %lo)", mid, end);
	is_int(direct_trace("d2/h/kernel", 4096 + 8, 1000000000ull, &mid, &end), 3000,
	       "packets of 4104 bytes: 3000 events read back");
	ok(mid >= 0 && !(mid & O_DIRECT), "... written through the page cache (flags %lo)", mid);
	/* a limit of 1 ns: the first write is too slow */
	is_int(direct_trace("d3/h/kernel", 4096, 1, &mid, &end), 3000,
	       "a write slower than the limit: 3000 events read back");
	ok(end >= 0 && !(end & O_DIRECT), "... and the stream went back to the page cache (flags %lo)", end);
}

int main(void)
{
	top = mkdtemp(tmpl);
	if (!top)
		return 1;
	growing();
	refused();
	direct();
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	if (system(cmd) != 0)
		return 1;
	return done_testing();
}
