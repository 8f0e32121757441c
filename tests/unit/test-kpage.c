/* SPDX-License-Identifier: MIT */
/*
 * test-kpage: lib/kern/kpage.h, the kernel recorder's page iterator,
 * against libtraceevent's kbuffer on the same pages. Pages are built
 * record by record as the kernel writes them: small and large events,
 * time extends, absolute time stamps, discarded events (padding with a
 * delta), the empty rest of a page, missed-event flags with and without a
 * stored count. Both iterators must give the same events (time, data
 * offset, size) in the same order, and kpage must stay inside the bytes it
 * was given on random pages and on pages cut short.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <traceevent/kbuffer.h>

#include "kern/kpage.h"
#include "tap.h"

#define PSIZE 4096

struct ev {
	uint64_t ts;
	uint32_t off, size;
};

static uint64_t rng = 88172645463325252ull;

static uint32_t rnd(uint32_t n)
{
	return (uint32_t)(tap_xorshift(&rng) % n);
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/*
 * Builds a page; returns the events it holds (as the kernel means them) in
 * want. missed: 0 none, -1 flag only, > 0 stored count.
 */
static size_t build(uint8_t *page, uint64_t ts0, long missed, struct ev *want, size_t cap,
		    uint32_t *commit_out)
{
	memset(page, 0xa5, PSIZE);
	put64(page, ts0);
	uint8_t *d = page + KPAGE_HDR;
	uint32_t pos = 0, room = PSIZE - KPAGE_HDR - 8;	/* a stored count fits */
	uint64_t t = ts0;
	size_t n = 0;
	for (;;) {
		uint32_t kind = rnd(10);
		uint32_t delta = rnd(4) ? rnd(1000) : rnd(1u << 27);
		uint32_t need;
		if (kind < 5) {			/* small event */
			uint32_t words = 1 + rnd(28);
			need = 4 + words * 4;
			if (pos + need > room || n == cap)
				break;
			put32(d + pos, words | delta << 5);
			for (uint32_t i = 0; i < words * 4; i++)
				d[pos + 4 + i] = (uint8_t)rnd(256);
			t += delta;
			want[n++] = (struct ev){ t, KPAGE_HDR + pos + 4, words * 4 };
		} else if (kind < 7) {		/* large event: length word */
			uint32_t bytes = 4 * (29 + rnd(60));
			need = 8 + bytes;
			if (pos + need > room || n == cap)
				break;
			put32(d + pos, 0 | delta << 5);
			put32(d + pos + 4, bytes + 4);
			t += delta;
			want[n++] = (struct ev){ t, KPAGE_HDR + pos + 8, bytes };
		} else if (kind == 7) {		/* time extend */
			need = 8;
			if (pos + need > room)
				break;
			uint32_t hi = rnd(1u << 20);
			put32(d + pos, 30 | delta << 5);
			put32(d + pos + 4, hi);
			t += ((uint64_t)hi << 27) + delta;
		} else if (kind == 8) {		/* discarded event */
			uint32_t bytes = 4 * (1 + rnd(20));
			need = 4 + bytes;
			if (pos + need > room)
				break;
			if (!delta)
				delta = 1;
			put32(d + pos, 29 | delta << 5);
			put32(d + pos + 4, bytes);
			t += delta;
		} else {			/* absolute time stamp */
			need = 8;
			if (pos + need > room)
				break;
			uint64_t abs = ((t & ((1ull << 59) - 1)) + rnd(100000)) & ((1ull << 59) - 1);
			put32(d + pos, 31 | (uint32_t)(abs & ((1u << 27) - 1)) << 5);
			put32(d + pos + 4, (uint32_t)(abs >> 27));
			t = abs | (t & KPAGE_TS_MSB);
		}
		pos += need;
	}
	uint64_t commit = pos;
	uint32_t rest = pos;
	if (missed) {
		commit |= KPAGE_MISSED;
		if (missed > 0) {
			commit |= KPAGE_MISSED_STORED;
			put64(d + pos, (uint64_t)missed);
			rest += 8;
		}
	}
	/* the rest of the page: a null padding, as the kernel leaves it */
	if (rest + 4 <= PSIZE - KPAGE_HDR)
		put32(d + rest, 29);
	put64(page + 8, commit);
	*commit_out = pos;
	return n;
}

static size_t by_kpage(const uint8_t *page, size_t len, struct ev *out, size_t cap,
		       int64_t *missed)
{
	struct kpage p;
	if (kpage_load(&p, page, len) < 0)
		return 0;
	*missed = p.missed;
	size_t n = 0;
	uint64_t ts;
	uint32_t size;
	for (const uint8_t *d; (d = kpage_next(&p, &ts, &size)) && n < cap;)
		out[n++] = (struct ev){ ts, (uint32_t)(d - page), size };
	return n;
}

static size_t by_kbuffer(struct kbuffer *kb, uint8_t *page, struct ev *out, size_t cap,
			 int *missed)
{
	if (kbuffer_load_subbuffer(kb, page) < 0)
		return 0;
	*missed = kbuffer_missed_events(kb);
	size_t n = 0;
	unsigned long long ts;
	for (void *d = kbuffer_read_event(kb, &ts); d && n < cap; d = kbuffer_next_event(kb, &ts))
		out[n++] = (struct ev){ ts, (uint32_t)((uint8_t *)d - page),
					(uint32_t)kbuffer_event_size(kb) };
	return n;
}

static bool same(const struct ev *a, size_t na, const struct ev *b, size_t nb, size_t *at)
{
	for (*at = 0; *at < na && *at < nb; (*at)++)
		if (a[*at].ts != b[*at].ts || a[*at].off != b[*at].off || a[*at].size != b[*at].size)
			return false;
	return na == nb;
}

int main(void)
{
	static uint8_t page[PSIZE];
	static struct ev want[1024], a[1024], b[1024];
	struct kbuffer *kb = kbuffer_alloc(KBUFFER_LSIZE_8, KBUFFER_ENDIAN_LITTLE);
	ok(kb != NULL, "kbuffer_alloc");

	/* one hand-made page: every record type once, known times */
	memset(page, 0, sizeof(page));
	put64(page, 1000);
	uint8_t *d = page + KPAGE_HDR;
	put32(d + 0, 2 | 5u << 5);		/* +5: 8 bytes  -> 1005 */
	put32(d + 12, 30 | 7u << 5);		/* extend +(1<<27)+7 */
	put32(d + 16, 1);
	put32(d + 20, 29 | 3u << 5);		/* discarded, +3, 8 bytes after */
	put32(d + 24, 8);
	put32(d + 32, 0 | 2u << 5);		/* +2: large, 120 bytes */
	put32(d + 36, 124);
	put32(d + 160, 31 | 9u << 5);		/* absolute: 9 + (4 << 27) */
	put32(d + 164, 4);
	put32(d + 168, 1 | 1u << 5);		/* +1: 4 bytes */
	put64(page + 8, 176);
	int64_t missed64;
	size_t n = by_kpage(page, PSIZE, a, 16, &missed64);
	is_int(n, 3, "hand-made page: 3 events");
	is_int(a[0].ts, 1005, "small event at page time + delta");
	is_int(a[0].size, 8, "small event: type_len * 4 bytes");
	is_int(a[1].ts, 1005 + (1ull << 27) + 7 + 3 + 2, "extend and discarded deltas count");
	is_int(a[1].off, KPAGE_HDR + 40, "large event's data after its length word");
	is_int(a[1].size, 120, "large event: length word - 4");
	is_int(a[2].ts, (4ull << 27) + 9 + 1, "absolute time stamp replaces the time");
	is_int(missed64, 0, "no missed events");

	/* random well-formed pages: same events as kbuffer */
	int mismatched = 0, total = 0, missed_bad = 0;
	for (int i = 0; i < 3000; i++) {
		long missed = i % 5 == 0 ? -1 : i % 5 == 1 ? (long)rnd(100000) + 1 : 0;
		uint64_t ts0 = i % 7 == 0 ? (0x1full << 59) | rnd(1000) : (uint64_t)rnd(1u << 30) << 10;
		uint32_t commit;
		size_t nw = build(page, ts0, missed, want, 1024, &commit);
		size_t na = by_kpage(page, PSIZE, a, 1024, &missed64);
		int missed_kb = 0;
		size_t nb = by_kbuffer(kb, page, b, 1024, &missed_kb);
		size_t at;
		if (!same(a, na, want, nw, &at) || !same(a, na, b, nb, &at)) {
			if (!mismatched)
				printf("# page %d: event %zu differs (kpage %zu, built %zu, kbuffer %zu)\n",
				       i, at, na, nw, nb);
			mismatched++;
		}
		/* kbuffer reports the count only while at offset 0: not when the
		 * page starts with a time extend or a discarded event */
		bool kb_tells = (page[KPAGE_HDR] & 31) <= 28;
		if (missed64 != missed || (kb_tells && missed_kb != (int)missed))
			missed_bad++;
		total += (int)na;
	}
	is_int(mismatched, 0, "3000 random pages: kpage = kbuffer = what was written");
	is_int(missed_bad, 0, "missed-event counts: stored, unknown (-1), none");
	ok(total > 50000, "the random pages held %d events", total);

	/* pages cut short: never past len, every event whole */
	int past = 0;
	for (int i = 0; i < 500; i++) {
		uint32_t commit;
		build(page, 0, 0, want, 1024, &commit);
		size_t len = KPAGE_HDR + rnd(commit + 1);
		size_t na = by_kpage(page, len, a, 1024, &missed64);
		for (size_t j = 0; j < na; j++)
			if (a[j].off + a[j].size > len)
				past++;
	}
	is_int(past, 0, "short reads: no event runs past the bytes read");

	/* random bytes: bounded, no event outside the page (ASan checks reads) */
	past = 0;
	for (int i = 0; i < 3000; i++) {
		for (size_t j = 0; j < PSIZE; j++)
			page[j] = (uint8_t)rnd(256);
		if (i & 1)
			put64(page + 8, rnd(PSIZE) | (uint64_t)rnd(4) << 30);
		size_t na = by_kpage(page, PSIZE, a, 1024, &missed64);
		for (size_t j = 0; j < na; j++)
			if (a[j].off + a[j].size > PSIZE)
				past++;
	}
	is_int(past, 0, "random pages: every event inside the page");
	kbuffer_free(kb);
	return done_testing();
}
