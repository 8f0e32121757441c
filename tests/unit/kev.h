/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/kev.h - one kernel event into a test's CTF stream, with the
 * tid context (as trawl records kernel events and LTTng does with
 * add-context), at KEV_T0 + t ns of the trace clock: the payload from
 * fmt, a letter a field: i 32-bit, l 64-bit, s a string.
 */
#ifndef TRAWL_TEST_KEV_H
#define TRAWL_TEST_KEV_H

#include <stdarg.h>
#include <stdint.h>

#include "trawl/ctf.h"

#define KEV_T0 1000000000ull	/* 1 s after the clock's offset */

static inline int kev(struct trawl_ctf_wstream *s, struct trawl_ctf_event_class *ec, uint64_t t,
		      int32_t tid, const char *fmt, ...)
{
	uint8_t buf[256];
	struct trawl_ctf_buf b;
	va_list ap;
	trawl_ctf_buf_init(&b, buf, sizeof(buf));
	trawl_ctf_buf_u32(&b, (uint32_t)tid);
	va_start(ap, fmt);
	for (const char *f = fmt; *f; f++)
		switch (*f) {
		case 'i': trawl_ctf_buf_u32(&b, (uint32_t)va_arg(ap, int)); break;
		case 'l': trawl_ctf_buf_u64(&b, (uint64_t)va_arg(ap, long long)); break;
		case 's': trawl_ctf_buf_str(&b, va_arg(ap, const char *)); break;
		}
	va_end(ap);
	return trawl_ctf_wstream_event(s, ec, KEV_T0 + t, buf, b.len);
}

#endif
