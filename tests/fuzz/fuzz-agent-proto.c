/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the agent protocol's message reader (lib/ust/proto.h) on
 * arbitrary bytes, read the way the agent and the application read each
 * message type: the header, then the type's fixed part, counted lists
 * (START's globs, EVDESC's fields and enum entries) and NUL-terminated
 * strings. The reader must flag every short or unterminated message as
 * bad, never read outside the buffer, and never go past its length.
 * The input is copied to a buffer of its exact size (ASan sees overreads).
 * (The agent's handlers in lib/agent/ need an agent object and are
 * not compiled in here.)
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trawl/tracepoint.h"
#include "ust/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* a good reader never went past the message (a bad one reads nothing) */
static void check(const struct am_rd *r)
{
	if (!r->bad && r->off > r->len)
		abort();
}

static void read_start(struct am_rd *r)
{
	struct am_start st;
	am_get(r, &st, sizeof(st));
	for (uint32_t i = 0; i < st.nglobs && i < 65536 && !r->bad; i++) {
		int32_t ll;
		am_get(r, &ll, 4);
		const char *g = am_get_str(r);
		if (strlen(g) >= r->len)
			abort();
		check(r);
	}
}

static void read_evdesc(struct am_rd *r)
{
	struct am_evdesc d;
	am_get(r, &d, sizeof(d));
	am_get_str(r);
	am_get_str(r);
	for (uint32_t i = 0; i < d.nfields && !r->bad; i++) {
		uint8_t b[4];
		uint32_t length;
		am_get_str(r);
		am_get(r, b, 4);
		am_get(r, &length, 4);
		if (b[0] == TRAWL_TP_ENUM) {	/* provider, name, entries */
			uint32_t n;
			am_get_str(r);
			am_get_str(r);
			am_get(r, &n, 4);
			for (uint32_t k = 0; k < n && !r->bad; k++) {
				int64_t lo, hi;
				am_get_str(r);
				am_get(r, &lo, 8);
				am_get(r, &hi, 8);
			}
		}
		check(r);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > AM_MSG_MAX)
		return 0;
	uint8_t *m = malloc(size ? size : 1);
	if (!m)
		return 0;
	memcpy(m, data, size);
	struct am_rd r;
	am_rd_init(&r, m, size);
	struct am_hdr h = { 0, 0 };
	if (size >= sizeof(h))
		memcpy(&h, m, sizeof(h));
	switch (h.type) {
	case AM_HELLO: {
		struct am_hello x;
		am_get(&r, &x, sizeof(x));
		break;
	}
	case AM_START:
		read_start(&r);
		break;
	case AM_EVREG: {
		struct am_evreg e;
		am_get(&r, &e, sizeof(e));
		am_get_str(&r);
		break;
	}
	case AM_EVDESC:
		read_evdesc(&r);
		break;
	case AM_CMD:
		while (!r.bad && r.off < r.len)
			am_get_str(&r);
		break;
	default: {
		uint64_t key;
		am_get(&r, &key, sizeof(key));
		break;
	}
	}
	check(&r);
	/* a bad reader stays bad and reads zeros */
	if (r.bad) {
		uint32_t z = 1;
		if (am_get(&r, &z, 4) || z != 0 || *am_get_str(&r))
			abort();
	}
	free(m);
	return 0;
}
