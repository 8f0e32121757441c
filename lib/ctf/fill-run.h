/* SPDX-License-Identifier: MIT */
/*
 * lib/ctf/fill-run.h - the decode-ahead fast loop, a template that
 * stream.c includes twice: plain (FR_SIMD 0), and compiled for AVX-512
 * VBMI (FR_SIMD 1, FR_ATTR its target attribute, FR_NAME a suffix), chosen
 * at run time by tr_ctf_simd(). The AVX-512 copy decodes a fixed layout's
 * integers (and a semi-fixed layout's fixed runs) with their struct vfix,
 * scans char arrays and strings with one compare, and widens byte
 * sequences 8 elements at a time; everything else is the same code. The
 * plain copy's semi_decode() also serves the single-threaded reader.
 */

#ifndef TRAWL_FILL_RUN_ONCE
#define TRAWL_FILL_RUN_ONCE
/* semi_decode() inlines its step for this many first segments (SEMI_STEP) */
#define SEMI_UNROLL 6
/* tape slots the vector copy's stores may write past a body's last value */
#define SEMI_OVER (FR_SIMD ? 16 : 0)

/*
 * The cnt elements of a sequence of nb-byte integers (2, 4, 8, or signed
 * bytes) at p, onto e: out of line, so that semi_seg()'s copies stay small.
 */
static __attribute__((noinline)) void seq_wide(union trawl_ctf_value *e, const uint8_t *p,
					       uint64_t cnt, unsigned nb, bool sign)
{
	const unsigned sh = 64 - 8 * nb;

	for (uint64_t k = 0; k < cnt; k++) {
		uint64_t v = 0;
		memcpy(&v, p + k * nb, nb);	/* little-endian host */
		e[k].u = sign ? (uint64_t)((int64_t)(v << sh) >> sh) : v;
	}
}
#endif

#if FR_SIMD
#include <immintrin.h>

/* Elements 16 and on of a byte sequence of cnt > 16 at p, widened onto e
 * 8 at a time (up to 7 slots of scratch past the last). */
static __attribute__((noinline)) FR_ATTR
void seq_u8_tail(union trawl_ctf_value *e, const uint8_t *p, uint64_t cnt, const uint8_t *limit)
{
	const __m512i lo = _mm512_set_epi64(3, 3, 2, 2, 1, 1, 0, 0);
	const __m512i hi = _mm512_set_epi64(7, 7, 6, 6, 5, 5, 4, 4);

	for (uint64_t k = 16; k < cnt; k += 8) {
		uint64_t left = cnt - k;
		__mmask64 in = left >= 8 ? 0xff : ((__mmask64)1 << left) - 1;
		__m512i q = _mm512_cvtepu8_epi64(
			likely(limit - (p + k) >= 8) ?
			_mm_loadl_epi64((const __m128i *)(p + k)) :
			_mm512_castsi512_si128(_mm512_maskz_loadu_epi8(in, p + k)));
		_mm512_storeu_si512(e + k, _mm512_maskz_permutexvar_epi64(0x55, lo, q));
		_mm512_storeu_si512(e + k + 4, _mm512_maskz_permutexvar_epi64(0x55, hi, q));
	}
}

/*
 * The 64 bytes at p, of which those in `need` are readable (lim: the end
 * of what is): one plain load, unless p is within 64 bytes of lim.
 */
static inline __attribute__((always_inline)) FR_ATTR
__m512i vload(const uint8_t *p, __mmask64 need, const uint8_t *lim)
{
	if (likely(lim - p >= 64))
		return _mm512_loadu_si512(p);
	return _mm512_maskz_loadu_epi8(need, p);
}

/* The integer slots of a fixed body at p (see struct vfix), and the other
 * slots up to the last integer's as 0: 4 * x->nquads slots at v. */
static inline __attribute__((always_inline)) FR_ATTR
void vfix_decode(union trawl_ctf_value *v, const struct vfix *x, const uint8_t *p,
		 const uint8_t *lim)
{
	const __m512i raw = vload(p, x->load, lim);
	const __m512i lo = _mm512_set_epi64(3, 3, 2, 2, 1, 1, 0, 0);
	const __m512i hi = _mm512_set_epi64(7, 7, 6, 6, 5, 5, 4, 4);
	const uint32_t nq = x->nquads;
	uint32_t g = 0;

	do {
		__m512i q = _mm512_maskz_permutexvar_epi8(x->take[g / 2],
							  _mm512_loadu_si512(x->idx[g / 2]), raw);
		const __m512i sh = _mm512_loadu_si512(x->shift[g / 2]);
		q = _mm512_srav_epi64(_mm512_sllv_epi64(q, sh), sh);
		/* value, 0 in each 16-byte slot */
		_mm512_storeu_si512(v + 4 * g, _mm512_maskz_permutexvar_epi64(0x55, lo, q));
		if (g + 1 < nq)
			_mm512_storeu_si512(v + 4 * g + 4, _mm512_maskz_permutexvar_epi64(0x55, hi, q));
		g += 2;
	} while (g < nq);
}

/* ctf_text_len() of a char array of n <= 64 bytes at q. */
static inline __attribute__((always_inline)) FR_ATTR
uint32_t vtext_len(const uint8_t *q, uint32_t n, const uint8_t *lim)
{
	const __mmask64 in = n >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << n) - 1;
	const __mmask64 z = _mm512_mask_cmpeq_epi8_mask(in, vload(q, in, lim),
							 _mm512_setzero_si512());
	return z ? (uint32_t)__builtin_ctzll(z) : n;
}

/* The n fixed entries at f (nint integers first) of a body at p, by x. */
static inline __attribute__((always_inline)) FR_ATTR
void vfix_decode_ents(union trawl_ctf_value *v, const struct vfix *x, const struct fent *f,
		      uint32_t nint, uint32_t n, const uint8_t *p, const uint8_t *lim)
{
	vfix_decode(v, x, p, lim);
	for (const struct fent *e = f + n, *g = f + nint; g < e; g++) {
		if (g->kind == FK_TEXT && g->mask <= 64) {
			v[g->slot].s.p = (const char *)(p + g->off);
			v[g->slot].s.len = vtext_len(p + g->off, (uint32_t)g->mask, lim);
		} else {
			fixed_slow(&v[g->slot], g, p + g->off);
		}
	}
}

/* ctf_decode_fixed_to() with the integers done by vfix_decode(). */
static inline __attribute__((always_inline)) FR_ATTR
void vfix_decode_all(union trawl_ctf_value *v, const struct ec_dec *d, const uint8_t *p,
		     const uint8_t *lim)
{
	vfix_decode_ents(v, d->vx, d->fix, d->nint, d->nfix, p, lim);
}
#endif

/*
 * One segment of semi_decode(): the values of g at p onto t (from *nvp),
 * or NULL. Inlined once per position of the first SEMI_UNROLL segments, so
 * that each position has its own jump on the segment's kind: the same
 * target every time for a given class, where one shared jump would follow
 * the kinds of the whole body (and mispredict on them).
 */
static inline __attribute__((always_inline)) FR_ATTR
const uint8_t *FR_NAME(semi_seg)(struct dctx *c, const struct ec_dec *d, const struct seg *g,
				 const uint8_t *p, const uint8_t *end, const uint8_t *limit,
				 union trawl_ctf_value *t, uint32_t *nvp)
{
	const uint32_t cap = c->cap, scan = FR_SIMD ? 64 : 32;
	uint32_t nv = *nvp;

	switch (g->kind) {
	case SG_INT: {
		if (unlikely((size_t)(end - p) < g->bytes))
			return NULL;
		uint64_t x = 0;
		if (likely((size_t)(limit - p) >= (size_t)g->off + 8))
			memcpy(&x, p + g->off, 8);
		else
			memcpy(&x, p + g->off, (64u - g->sh) / 8);	/* little-endian host */
		int64_t v = ((int64_t)(x << g->sh) >> g->sh) & (int64_t)g->mask;
		t[nv++].i = v;
		if (g->dst >= 0)
			c->regs[g->dst] = (uint64_t)v;
		p += g->bytes;
		break;
	}
	case SG_FIXED: {
		if (unlikely((size_t)(end - p) < g->bytes))
			return NULL;
		union trawl_ctf_value *v = t + nv;
		const struct fent *f = d->semifix + g->fix;
#if FR_SIMD
		if (likely(g->vx))
			vfix_decode_ents(v, g->vx, f, g->nint, g->nfix, p, limit);
		else
#endif
			ctf_decode_fents(v, f, g->nint, g->nfix, p,
					 (size_t)(limit - p) >= (size_t)g->bytes + 8);
		/* from the bytes, not the tape: a load of what a vector
		 * store just wrote waits for it */
		for (const struct rstore *rs = d->rst + g->rst, *re = rs + g->nrst; rs < re; rs++)
			c->regs[rs->reg] = ctf_reg_load(p + rs->off, rs->bytes, rs->sign);
		nv += g->nfix;
		p += g->bytes;
		break;
	}
	case SG_STRING: {
		/* short strings in one scan; long ones: memchr */
		size_t left = (size_t)(end - p);
		uint32_t n = left < scan ? (uint32_t)left : scan;
#if FR_SIMD
		size_t len = vtext_len(p, n, limit);
#else
		size_t len = ctf_text_len(p, n);
#endif
		if (len == scan) {
			const uint8_t *z = memchr(p + scan, 0, left - scan);
			len = z ? (size_t)(z - p) : left;
		}
		if (unlikely(len >= left || len > UINT32_MAX))
			return NULL;
		t[nv].s.p = (const char *)p;
		t[nv].s.len = (uint32_t)len;
		nv++;
		p += len + 1;
		break;
	}
	case SG_TEXTSEQ: {
		uint64_t cnt = c->regs[g->src];
		if (unlikely(cnt > (uint64_t)(end - p) || cnt > UINT32_MAX))
			return NULL;
		t[nv].s.p = (const char *)p;
		t[nv].s.len = (uint32_t)strnlen((const char *)p, cnt);
		nv++;
		p += cnt;
		break;
	}
	case SG_SEQ: {
		uint64_t cnt = c->regs[g->src];
		unsigned nb = g->esize;
		/* nb is 1, 2, 4 or 8: a shift, not a division */
		if (unlikely(cnt > (uint64_t)(end - p) >> __builtin_ctz(nb) ||
			     cnt + d->semi_min + SEMI_OVER > cap - nv))
			return NULL;
		union trawl_ctf_value *e = t + nv;
		e->n = cnt;
		e++;
		if (nb == 1 && !g->esign) {
#if FR_SIMD
			const __m512i lo = _mm512_set_epi64(3, 3, 2, 2, 1, 1, 0, 0);
			const __m512i hi = _mm512_set_epi64(7, 7, 6, 6, 5, 5, 4, 4);
			/* the first 16 elements without a test of the count
			 * (short payloads of varying length would mispredict
			 * the loop's exit); slots past cnt get scratch */
			__m128i b16 = likely(limit - p >= 16) ?
				_mm_loadu_si128((const __m128i *)p) :
				_mm512_castsi512_si128(_mm512_maskz_loadu_epi8(
					cnt >= 16 ? 0xffff : ((__mmask64)1 << cnt) - 1, p));
			__m512i q0 = _mm512_cvtepu8_epi64(b16);
			__m512i q1 = _mm512_cvtepu8_epi64(_mm_srli_si128(b16, 8));
			_mm512_storeu_si512(e, _mm512_maskz_permutexvar_epi64(0x55, lo, q0));
			_mm512_storeu_si512(e + 4, _mm512_maskz_permutexvar_epi64(0x55, hi, q0));
			_mm512_storeu_si512(e + 8, _mm512_maskz_permutexvar_epi64(0x55, lo, q1));
			_mm512_storeu_si512(e + 12, _mm512_maskz_permutexvar_epi64(0x55, hi, q1));
			if (unlikely(cnt > 16))
				seq_u8_tail(e, p, cnt, limit);
#else
			for (uint64_t k = 0; k < cnt; k++)
				e[k].u = p[k];
#endif
		} else {
			seq_wide(e, p, cnt, nb, g->esign);
		}
		nv += (uint32_t)cnt + 1;
		p += cnt * nb;
		break;
	}
	}
	*nvp = nv;
	return p;
}

/*
 * Decodes a semi-fixed body (d->semi) at p, in c's packet, into c's tape
 * (c->nv values); `limit`: the end of the readable mapping. It never grows
 * the tape. Returns the end of the body, or NULL having decoded part of it
 * (truncated, bad data, more values than the tape holds): the caller then
 * decodes the body again with tr_ctf_exec() from the same position, for its
 * exact error or a larger tape. The position goes in and out as a pointer,
 * not through c->pos: with strings and sequences, each event's end waits
 * for the previous one's, and a round trip through memory would lengthen
 * that chain. Out of line: fill_run_hdr() keeps its state in registers.
 * The vector copy decodes fixed runs by their vfix, scans strings 64
 * bytes at a time and widens byte sequences 8 elements at a time; its
 * stores may run up to 16 slots past the last value written.
 */
static __attribute__((noinline)) FR_ATTR
const uint8_t *FR_NAME(semi_decode)(struct dctx *c, const struct ec_dec *d, const uint8_t *p,
				    const uint8_t *limit)
{
	const uint8_t *const end = c->pkt + (c->end >> 3);
	union trawl_ctf_value *const t = c->tape;
	uint32_t nv = 0;

	/* Room for every value but the sequences' elements (a sequence
	 * checks for its elements and all of these); else the caller's
	 * interpreter, which grows the tape, does it. */
	if (unlikely(c->cap < d->semi_min + SEMI_OVER))
		return NULL;
	const struct seg *g = d->segs;
	const uint32_t n = d->nseg;
#define SEMI_STEP(i) \
	if (n > (i)) { \
		p = FR_NAME(semi_seg)(c, d, g + (i), p, end, limit, t, &nv); \
		if (unlikely(!p)) \
			return NULL; \
	} else { \
		goto done; \
	}
	SEMI_STEP(0) SEMI_STEP(1) SEMI_STEP(2) SEMI_STEP(3) SEMI_STEP(4) SEMI_STEP(5)
#undef SEMI_STEP
	_Static_assert(SEMI_UNROLL == 6, "one SEMI_STEP per unrolled position");
	for (uint32_t i = SEMI_UNROLL; i < n; i++) {
		p = FR_NAME(semi_seg)(c, d, g + i, p, end, limit, t, &nv);
		if (unlikely(!p))
			return NULL;
	}
done:
	c->nv = nv;
	return p;
}

/*
 * fill()'s fast path: decodes the run of common events that comes next (as
 * fast_next() defines them; no time range) straight into b, with the
 * decode state in registers. Returns how many; stops before the first
 * event it does not handle, having changed nothing for it. `compact`: the
 * stream's header form (a constant in each copy of the loop).
 */
static inline __attribute__((always_inline)) FR_ATTR
uint32_t FR_NAME(fill_run_hdr)(struct ctf_stream *s, struct batch *b, size_t least,
			       const bool compact)
{
	struct dctx *c = &s->d;
	const struct sc_dec *sd = s->scd;
	const unsigned hl = compact ? 4 : 6;	/* header bytes */
	const struct fastent *const tab = sd->fast;	/* compact: 32 entries or more */
	const uint64_t ntab = sd->nbyid, base = s->base;
	const uint8_t *const pkt = c->pkt, *const mapend = s->map + s->size;

	batch_same(b, base, s->ev.cpu);
	if (unlikely(!b->ghz || !b->onecpu))
		return 0;	/* events need their own cycles or cpu: fill() */
	/*
	 * Byte positions. Everything decoded here ends by qflim: within the
	 * content, with 8 readable bytes after it in the mapping (integers
	 * are read as 8-byte loads). A header needs 14 bytes before it (the
	 * longest); the events closer to the end (a packet's last one or
	 * two) are left to the general path.
	 */
	const uint64_t mapbits = (uint64_t)(mapend - pkt) * 8, end = c->end;
	const uint64_t flim = mapbits < 64 ? 0 : end < mapbits - 64 ? end : mapbits - 64;
	const uint8_t *const qflim = pkt + (flim >> 3);
	struct brec *const recs = b->rec;
	struct brec *r = recs + b->n;
	const struct brec *const r0 = r;
	union trawl_ctf_value *const vals = b->vals, *const vlim = vals + (b->capv - least);
	union trawl_ctf_value *vp = vals + b->nv;
	const uint64_t pos0 = c->pos;
	const uint8_t *q = pkt + ((pos0 + 7) >> 3);
	uint64_t clock = c->clock;
	/* leaving out what no sink wants: an event of such a class is
	 * written, then taken back when the next one comes (struct batch's
	 * pend; pnv: its values), unless it is the batch's first */
	const uint8_t *const want = s->want;
	const uint32_t nwant = s->nwant;
	uint32_t pend = b->pend, pnv = pend ? r[-1].nv : 0;
	uint32_t d = 0;			/* events decoded */
	const uint32_t dlim = b->cap - b->ndec;

	while (d < dlim && vp <= vlim) {
		uint64_t id, ncl;
		if (unlikely(qflim - q < 14))
			break;	/* no room for the longest header */
		__builtin_prefetch(q + CTF_PREFETCH);
		if (unlikely(!ctf_hdr_short(compact, q, clock, &id, &ncl)) ||
		    (!compact && unlikely(id >= ntab)))
			break;	/* extended, or no such class */
		const struct fastent *fe = &tab[id];
		const struct ec_dec *ed = fe->ed;
		const uint8_t *body = q + hl;
		uint32_t nval;
		if (likely(ed)) {
			const uint8_t *nq = body + fe->bytes;
			if (unlikely(nq > qflim))
				break;
			r -= pend;	/* the last one, left out */
			vp -= pnv;
#if FR_SIMD
			if (likely(ed->vx))
				vfix_decode_all(vp, ed, body, mapend);
			else
#endif
				ctf_decode_fixed_to(vp, ed, body, true);
			q = nq;
			nval = fe->nfix;
		} else if (fe->semi) {
			/* a fixed prefix and strings/sequences: decoded in place
			 * into the batch; anything unusual (the values outgrow
			 * the batch, bad data) is left to the general path */
			size_t room = (size_t)(vals + b->capv - vp);
			c->tape = vp;
			c->cap = (uint32_t)(room > UINT32_MAX ? UINT32_MAX : room);
			const uint8_t *nq = FR_NAME(semi_decode)(c, fe->semi, body, mapend);
			if (unlikely(!nq))
				break;
			q = nq;
			nval = c->nv;
			if (pend) {	/* decoded after the last one: moved down */
				memmove(vp - pnv, vp, nval * sizeof(*vp));
				r--;
				vp -= pnv;
			}
		} else {
			break;
		}
		clock = ncl;
		r->ts = (int64_t)(base + ncl);
		r->cls = fe->cls;
		r->nv = nval;
		pend = ctf_unwanted(want, nwant, fe->cls) && r != recs;
		pnv = pend ? nval : 0;
		r++;
		vp += nval;
		d++;
	}
	c->tape = c->own;
	c->cap = c->owncap;
	if (!d)
		return 0;
	c->pos = (uint64_t)(q - pkt) * 8;
	c->clock = clock;
	s->st.events += d;
	/* the stream's first event is the batch's first (b->n was 0, nothing
	 * pending), which is never taken back */
	if (unlikely(s->st.first_ts == INT64_MAX))
		s->st.first_ts = r0->ts;
	s->st.last_ts = r[-1].ts;
	b->nv = (size_t)(vp - vals);
	b->n = (uint32_t)(r - recs);
	b->ndec += d;
	b->pend = pend;
	return d;
}

/* Each its own function: inlined into fill(), the loop's state spills. */
static __attribute__((noinline)) FR_ATTR
uint32_t FR_NAME(fill_run_compact)(struct ctf_stream *s, struct batch *b, size_t least)
{
	return FR_NAME(fill_run_hdr)(s, b, least, true);
}

static __attribute__((noinline)) FR_ATTR
uint32_t FR_NAME(fill_run_large)(struct ctf_stream *s, struct batch *b, size_t least)
{
	return FR_NAME(fill_run_hdr)(s, b, least, false);
}

#undef FR_SIMD
#undef FR_NAME
#undef FR_ATTR
