/* SPDX-License-Identifier: MIT */
/*
 * test-state-fds: what the state system calls a descriptor that no open
 * made (lib/state/sink.c), on a kernel trace written here with LTTng's
 * names (one host "node", thread 100 of process 100):
 *  - the state dump's socket keeps its name, inode and all: "socket:[4242]";
 *  - socket(AF_INET, SOCK_STREAM|SOCK_CLOEXEC, IPPROTO_TCP) -> fd 3:
 *    "socket:[?] AF_INET SOCK_STREAM IPPROTO_TCP" (no event has its inode);
 *    socket(AF_UNIX, SOCK_DGRAM, 0) -> fd 4: "socket:[?] AF_UNIX SOCK_DGRAM";
 *  - accept4(fd 3) -> fd 5: "socket:[?] accepted on fd 3";
 *  - eventfd2 -> fd 6, epoll_create1 -> fd 7: the kernel's names
 *    ("anon_inode:[eventfd]", "anon_inode:[eventpoll]"), never "anon";
 *  - dup(5) -> fd 8: the same name as fd 5.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "trawl/ctf.h"
#include "trawl/pipe.h"
#include "trawl/state.h"

static char root[] = "/tmp/trawl-test-state-fds-XXXXXX";
#define US 1000LL
#define T0 (1700000000LL * 1000000000LL)

static struct trawl_ctf_type *st(struct trawl_ctf_writer *w, const char *spec)
{
	/* "s:name,i:name,l:name": string, s32, s64 fields */
	struct trawl_ctf_type *t = trawl_ctf_type_struct(w);
	char buf[256], *save, *tok;

	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		trawl_ctf_struct_add(w, t, tok + 2,
				     tok[0] == 's' ? trawl_ctf_type_string(w)
				     : tok[0] == 'i' ? trawl_ctf_type_int(w, 32, true, 10)
						     : trawl_ctf_type_int(w, 64, true, 10));
	return t;
}

static struct trawl_ctf_wstream *ws;
static int wrc;

static void ev(struct trawl_ctf_event_class *ec, int64_t ts, const char *fmt, ...)
{
	uint8_t buf[512];
	struct trawl_ctf_buf b;
	va_list ap;

	if (wrc)
		return;
	trawl_ctf_buf_init(&b, buf, sizeof(buf));
	trawl_ctf_buf_u32(&b, 100);	/* the tid context */
	va_start(ap, fmt);
	for (const char *f = fmt; *f; f++) {
		if (*f == 's')
			trawl_ctf_buf_str(&b, va_arg(ap, const char *));
		else if (*f == 'i')
			trawl_ctf_buf_u32(&b, (uint32_t)va_arg(ap, int));
		else
			trawl_ctf_buf_u64(&b, (uint64_t)va_arg(ap, long long));
	}
	va_end(ap);
	wrc = trawl_ctf_wstream_event(ws, ec, (uint64_t)ts, buf, b.len);
}

static int write_trace(const char *dir)
{
	struct trawl_ctf_writer_opts o = {
		.sz = sizeof(o), .path = dir, .hostname = "node", .domain = "kernel",
		.clock_offset_s = 1700000000, .packet_size = 4096,
	};
	struct trawl_ctf_writer *w = trawl_ctf_writer_new(&o);
	if (!w)
		return -1;
	struct trawl_ctf_stream_class *sc =
		trawl_ctf_writer_stream_class(w, TRAWL_CTF_HEADER_LARGE, st(w, "i:tid"));
#define EC(name, spec) trawl_ctf_writer_event_class(w, sc, name, 0, st(w, spec))
	struct trawl_ctf_event_class *sw = EC("sched_switch", "s:prev_comm,i:prev_tid,i:prev_prio,l:prev_state,s:next_comm,i:next_tid,i:next_prio"),
		*dp = EC("lttng_statedump_process_state", "i:tid,i:pid,i:ppid,s:name,i:status"),
		*df = EC("lttng_statedump_file_descriptor", "i:pid,i:fd,s:filename"),
		*se = EC("syscall_entry_socket", "l:family,l:type,l:protocol"),
		*sx = EC("syscall_exit_socket", "l:ret"),
		*ae = EC("syscall_entry_accept4", "l:fd,l:upeer_sockaddr,l:upeer_addrlen,l:flags"),
		*ax = EC("syscall_exit_accept4", "l:ret"),
		*ee = EC("syscall_entry_eventfd2", "l:count,l:flags"),
		*ex = EC("syscall_exit_eventfd2", "l:ret"),
		*pe = EC("syscall_entry_epoll_create1", "l:flags"),
		*px = EC("syscall_exit_epoll_create1", "l:ret"),
		*de = EC("syscall_entry_dup", "l:fildes"),
		*dx = EC("syscall_exit_dup", "l:ret");
#undef EC
	ws = trawl_ctf_writer_stream(w, sc, "channel0", 0);
	if (!ws || !dx)
		return -1;
	ev(dp, 1 * US, "iiisi", 100, 100, 1, "srv", 5);
	ev(df, 2 * US, "iis", 100, 9, "socket:[4242]");
	ev(sw, 10 * US, "siilsii", "swapper/0", 0, 20, 0LL, "srv", 100, 20);
	ev(se, 20 * US, "lll", 2LL, 0x80001LL, 6LL);
	ev(sx, 21 * US, "l", 3LL);
	ev(se, 30 * US, "lll", 1LL, 2LL, 0LL);
	ev(sx, 31 * US, "l", 4LL);
	ev(ae, 40 * US, "llll", 3LL, 0x7fff0000LL, 0x7fff0010LL, 0x80000LL);
	ev(ax, 41 * US, "l", 5LL);
	ev(ee, 50 * US, "ll", 0LL, 0LL);
	ev(ex, 51 * US, "l", 6LL);
	ev(pe, 60 * US, "l", 0LL);
	ev(px, 61 * US, "l", 7LL);
	ev(de, 70 * US, "l", 5LL);
	ev(dx, 71 * US, "l", 8LL);
	ev(sw, 80 * US, "siilsii", "srv", 100, 20, 1LL, "swapper/0", 0, 20);
	int rc = wrc ? wrc : trawl_ctf_writer_close(w);
	trawl_ctf_writer_free(w);
	return rc;
}

int main(void)
{
	char dir[600], err[256];

	if (!mkdtemp(root)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	snprintf(dir, sizeof(dir), "%s/kernel", root);
	ok(write_trace(dir) == 0, "a kernel trace of sockets and other descriptors");
	const char *p[] = { dir };
	struct trawl_state_opts so = { .sz = sizeof(so), .window_ns = 1000000000LL };
	struct trawl_state *s = trawl_state_new(&so);
	struct trawl_reader *r = trawl_reader_new(p, 1, NULL, err, sizeof(err));
	struct trawl_sink sink = s ? trawl_state_sink(s) : (struct trawl_sink){ 0 };
	ok(s && r && trawl_pipe_run(r, &sink, 1, NULL) == 0, "the state system read it (%s)",
	   r ? "" : err);
	trawl_reader_free(r);
	struct trawl_state_view *v = s ? trawl_state_at(s, "node", T0 + 90 * US) : NULL;
	ok(v != NULL, "a view after the last event");
	static const struct { int fd; const char *name; } want[] = {
		{ 9, "socket:[4242]" },
		{ 3, "socket:[?] AF_INET SOCK_STREAM IPPROTO_TCP" },
		{ 4, "socket:[?] AF_UNIX SOCK_DGRAM" },
		{ 5, "socket:[?] accepted on fd 3" },
		{ 6, "anon_inode:[eventfd]" },
		{ 7, "anon_inode:[eventpoll]" },
		{ 8, "socket:[?] accepted on fd 3" },
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct trawl_state_fd *f = v ? trawl_state_view_fd_find(v, 100, want[i].fd) : NULL;
		is_str(f ? f->path : "(none)", want[i].name, "fd %d of pid 100: %s", want[i].fd,
		       want[i].name);
	}
	trawl_state_view_free(v);
	trawl_state_free(s);
	tap_rm_tree(root);
	return done_testing();
}
