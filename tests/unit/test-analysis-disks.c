/* SPDX-License-Identifier: MIT */
/*
 * test-analysis-disks: iolatency names a disk as the trace's state dump
 * does (lttng_statedump_block_device { dev, diskname }), else by its
 * (major,minor): on a trace written here, requests on 254:0 (the state
 * dump's "vda", whose event comes after the first request's issue) and on
 * 8:0 (never named).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "trawl/analysis.h"
#include "trawl/ctf.h"
#include "trawl/pipe.h"

static char root[] = "/tmp/trawl-test-analysis-disks-XXXXXX";
#define US 1000LL

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
	struct trawl_ctf_event_class *bd = EC("lttng_statedump_block_device", "i:dev,s:diskname"),
		*ri = EC("block_rq_issue", "i:dev,l:sector,i:nr_sector,s:rwbs"),
		*rc = EC("block_rq_complete", "i:dev,l:sector,i:nr_sector,i:error,s:rwbs");
#undef EC
	ws = trawl_ctf_writer_stream(w, sc, "channel0", 0);
	if (!ws || !rc)
		return -1;
	int vda = 254 << 20, sda = 8 << 20;
	ev(ri, 10 * US, "ilis", vda, 100LL, 8, "R");
	ev(bd, 11 * US, "is", vda, "vda");
	ev(bd, 12 * US, "is", vda + 1, "vda1");
	ev(ri, 20 * US, "ilis", sda, 200LL, 8, "W");
	ev(rc, 30 * US, "iliis", vda, 100LL, 8, 0, "R");
	ev(rc, 40 * US, "iliis", sda, 200LL, 8, 0, "W");
	ev(ri, 50 * US, "ilis", vda, 300LL, 16, "R");
	ev(rc, 60 * US, "iliis", vda, 300LL, 16, 0, "R");
	int r = wrc ? wrc : trawl_ctf_writer_close(w);
	trawl_ctf_writer_free(w);
	return r;
}

int main(void)
{
	char dir[600], err[256];

	if (!mkdtemp(root)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	snprintf(dir, sizeof(dir), "%s/kernel", root);
	ok(write_trace(dir) == 0, "a kernel trace of block requests and a state dump's disks");
	const char *p[] = { dir };
	struct trawl_analysis_opts o = { .sz = sizeof(o), .name = "iolatency", .tid = -1, .cpu = -1 };
	struct trawl_reader *r = trawl_reader_new(p, 1, NULL, err, sizeof(err));
	struct trawl_analysis *a = r ? trawl_analysis_new(&o, err, sizeof(err)) : NULL;
	struct trawl_sink s = a ? trawl_analysis_sink(a) : (struct trawl_sink){ 0 };
	ok(a && trawl_pipe_run(r, &s, 1, NULL) == 0, "iolatency read it (%s)", a ? "" : err);
	trawl_reader_free(r);
	char b[256] = "";
	size_t n = 0;
	for (size_t i = 0; a && i < trawl_analysis_nrows(a); i++) {
		const struct trawl_analysis_row *row = trawl_analysis_row_at(a, i);
		if (row->kind == TRAWL_ANALYSIS_DISK && n < sizeof(b))
			n += (size_t)snprintf(b + n, sizeof(b) - n, "%s=%llu/%llu ", row->label,
					      (unsigned long long)row->count,
					      (unsigned long long)row->bytes);
	}
	is_str(b, "vda=2/12288 (8,0)=1/4096 ",
	       "disks: 254:0 by the state dump's name (vda), 8:0 by its numbers");
	trawl_analysis_free(a);
	tap_rm_tree(root);
	return done_testing();
}
