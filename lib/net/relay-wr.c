/* SPDX-License-Identifier: MIT */
/*
 * lib/net/relay-wr.c - building relay protocol messages (relay-wr.h).
 */
#include <stdlib.h>
#include <string.h>

#include "net/relay-wr.h"

static void put(struct relay_wr *w, const void *p, size_t n)
{
	if (w->bad)
		return;
	if (w->len + n > RELAY_HDR_LEN + (size_t)RELAY_MSG_MAX) {
		w->bad = true;
		return;
	}
	if (w->len + n > w->cap) {
		size_t cap = w->cap ? w->cap : 256;
		while (cap < w->len + n)
			cap *= 2;
		uint8_t *b = realloc(w->buf, cap);
		if (!b) {
			w->bad = true;
			return;
		}
		w->buf = b;
		w->cap = cap;
	}
	memcpy(w->buf + w->len, p, n);
	w->len += n;
}

void tr_relay_wr_begin(struct relay_wr *w, enum relay_type type)
{
	uint8_t h[RELAY_HDR_LEN];
	relay_put_hdr(h, type, 0);
	w->len = 0;
	w->bad = false;
	put(w, h, sizeof(h));
}

void tr_relay_wr_32(struct relay_wr *w, uint32_t v)
{
	uint8_t b[4];
	put_le32(b, v);
	put(w, b, 4);
}

void tr_relay_wr_64(struct relay_wr *w, uint64_t v)
{
	uint8_t b[8];
	put_le64(b, v);
	put(w, b, 8);
}

void tr_relay_wr_str(struct relay_wr *w, const char *s)
{
	put(w, s ? s : "", s ? strlen(s) + 1 : 1);
}

size_t tr_relay_wr_done(struct relay_wr *w)
{
	if (w->bad || w->len < RELAY_HDR_LEN)
		return 0;
	put_le32(w->buf + 4, (uint32_t)(w->len - RELAY_HDR_LEN));
	return w->len;
}
