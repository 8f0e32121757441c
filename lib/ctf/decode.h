/* SPDX-License-Identifier: MIT */
/*
 * lib/ctf/decode.h - the CTF reader's compiled decoders, shared by
 * decode.c (compiler and interpreter) and stream.c (packets, events).
 *
 * A decoder is a flat array of ops compiled once per scope from the model:
 * structs are flattened (an OP_ALIGN, then their fields), arrays, sequences
 * and variants own the `body` ops that follow them. Fields that a sequence
 * length or a variant tag refers to store their value into a register
 * (`reg`), numbered per trace. Packet header/context fields with a meaning
 * for the reader (magic, stream_id, content_size, ...) carry a `role`.
 *
 * Each event class also gets, when its whole body (stream event context,
 * event context, payload) is made of byte-sized, byte-aligned little-endian
 * scalars, static arrays of them and text arrays, a "fixed" layout: a list
 * of (byte offset, kind) entries decoded with straight loads.
 *
 * Everything one decoder needs lives in one malloc'd block stored in the
 * model's priv pointer, released with free() by trawl_ctf_trace_free().
 */
#ifndef TRAWL_CTF_READER_INTERNAL_H
#define TRAWL_CTF_READER_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "trawl/ctf.h"
#include "internal.h"

enum op_code {
	OP_INT,		/* also enums */
	OP_FLOAT,
	OP_STRING,
	OP_TEXT,	/* array (count) or sequence (src) of 8-bit chars: one .s */
	OP_ARRAY,	/* count elements of the body */
	OP_SEQ,		/* regs[src] elements of the body */
	OP_VARIANT,	/* option chosen by regs[src] through ranges */
	OP_ALIGN,	/* a struct's alignment */
};

#define OPF_SIGN	0x01
#define OPF_BE		0x02
#define OPF_CLOCK	0x04	/* updates the stream clock (size bits) */

enum role {
	ROLE_NONE,
	ROLE_MAGIC,
	ROLE_UUID,		/* value: bit position of the array */
	ROLE_STREAM_ID,
	ROLE_STREAM_INSTANCE_ID,
	ROLE_TS_BEGIN,
	ROLE_TS_END,
	ROLE_CONTENT_SIZE,
	ROLE_PACKET_SIZE,
	ROLE_DISCARDED,
	ROLE_CPU,
	ROLE_SEQ_NUM,
	ROLE_EVENT_ID,
	NROLES,
};

struct op {
	uint8_t code;
	uint8_t flags;
	uint8_t role;
	uint8_t size;		/* INT/FLOAT: bits, 1..64 */
	uint32_t align;		/* bits, power of two */
	int32_t reg;		/* >= 0: store the value into regs[reg] */
	int32_t src;		/* SEQ/TEXT(seq)/VARIANT: register read, else -1 */
	uint32_t body;		/* ARRAY/SEQ/VARIANT: ops owned after this one */
	uint32_t minbits;	/* ARRAY/SEQ: least bits one element takes */
	uint64_t count;		/* ARRAY/TEXT: static length */
	uint32_t vr, nvr;	/* VARIANT: ranges[vr .. vr+nvr) */
	uint32_t vo, nvo;	/* VARIANT: vopts[vo .. vo+nvo) */
};

struct vrange {
	uint64_t lo, hi;	/* inclusive; compared signed when the op says */
	uint32_t opt;
	uint32_t sign;
};

struct vopt {
	uint32_t start, len;	/* ops, relative to the op after the variant */
};

struct prog {
	const struct op *ops;
	uint32_t nops;
	const struct vrange *ranges;
	const struct vopt *vopts;
};

enum fixed_kind {
	FK_INT,		/* ((int64)(load64 << sh) >> sh) & mask: any 8..64-bit LE int */
	FK_F32,
	FK_CONST,	/* an array's element count: mask */
	FK_TEXT,	/* a char array of mask bytes: .s up to its first NUL */
};

/*
 * One fixed field. The entries of a layout (or of a semi-fixed run) are
 * stored integers first, each naming its place on the tape (`slot`), so
 * that the common integers decode in a loop with no test of their kind.
 */
struct fent {
	uint32_t off;		/* bytes from the start of the body */
	uint8_t kind;
	uint8_t sh;		/* FK_INT: 64 - bits */
	uint16_t slot;		/* tape index, from the layout's (run's) first value */
	uint64_t mask;		/* FK_INT: ~0 if signed else low bits; see kinds */
};

/*
 * The integers of a fixed layout decoded with AVX-512 (VBMI), on CPUs that
 * have it: the tape's first 16 slots in groups of 8 lanes, each group one
 * byte permutation of the body's first 64 bytes into zero-extended 64-bit
 * lanes, then a sign extension by a shift left and an arithmetic shift
 * right. Slots that are not integers come out 0 and are written after.
 */
#define VFIX_SLOTS 16
struct vfix {
	uint8_t idx[2][64];	/* per group: body byte of each lane byte */
	uint64_t shift[2][8];	/* per lane: 64 - bits when signed, else 0 */
	uint64_t take[2];	/* per group: the lane bytes taken from the body */
	uint64_t load;		/* body bytes read: the first min(64, bytes) */
	uint32_t nquads;	/* 1 to 4: slots written, 4 at a time (to the
				 * last integer's) */
};

/*
 * A "semi-fixed" layout: runs of fixed entries (offsets from the run's
 * start) between variable items: strings, sequences of chars (text) and
 * sequences of byte-sized little-endian integers. For bodies that are byte
 * aligned and made of these only (e.g. an id, a path string, a length and
 * a byte payload). A run's integers may store into registers (a later
 * sequence's length).
 */
enum seg_kind { SG_FIXED, SG_INT, SG_STRING, SG_TEXTSEQ, SG_SEQ };

struct seg {
	uint8_t kind;
	uint8_t esize;		/* SG_SEQ: element bytes (1, 2, 4, 8) */
	uint8_t esign;		/* SG_SEQ: signed elements */
	uint8_t pad;
	int32_t src;		/* SG_TEXTSEQ, SG_SEQ: length register */
	uint32_t fix, nfix;	/* SG_FIXED: d->semifix[fix .. fix+nfix) */
	uint32_t nint;		/* SG_FIXED: the FK_INT entries, first of them */
	uint32_t bytes;		/* SG_FIXED: bytes of the run */
	uint32_t rst, nrst;	/* SG_FIXED: d->rst[rst .. rst+nrst) */
	const struct vfix *vx;	/* SG_FIXED: as ec_dec.vx, or NULL */
	/*
	 * SG_INT: a run of one integer (a sequence's length, an enum between
	 * strings), decoded without a loop: its fent's off, sh and mask, and
	 * the register it also goes to (-1: none). fix, nfix (1), nint (1),
	 * bytes, rst and nrst stay those of the run.
	 */
	int32_t dst;
	uint32_t off;
	uint8_t sh;
	uint64_t mask;
};

struct rstore {
	int32_t reg;
	uint32_t off;		/* the integer's bytes from the run's start */
	uint8_t bytes;		/* 1, 2, 4, 8 */
	uint8_t sign;
};

/* cls->priv */
struct ec_dec {
	struct prog body;	/* stream event context + context + payload */
	const struct fent *fix;
	const struct vfix *vx;	/* fixed, with integers, on a CPU with VBMI */
	uint32_t nfix;		/* tape entries when fixed */
	uint32_t fixed_bytes;
	bool fixed;
	uint32_t nint;		/* fixed: the FK_INT entries, first in fix */
	bool fast;		/* fixed and wanted: the reader's fast path */
	bool wanted;		/* passes the reader's event filter */
	bool empty;		/* no body at all */
	bool semi;		/* not fixed, but semi-fixed: segs below */
	uint32_t nseg;
	uint32_t semi_min;	/* semi: values but the sequences' elements */
	const struct seg *segs;
	const struct fent *semifix;
	const struct rstore *rst;
};

enum hdr_kind { HDR_NONE, HDR_GENERIC, HDR_COMPACT, HDR_LARGE };

/* The reader's fast path by event id: ed is NULL unless the class is
 * fast (fixed and wanted); bytes is its fixed_bytes. semi: the class when
 * it is semi-fixed and wanted (a fixed prefix, then strings or sequences). */
struct fastent {
	const struct trawl_ctf_event_class *ec;
	const struct ec_dec *ed;
	const struct ec_dec *semi;
	uint32_t bytes;
	uint32_t nfix;
	uint32_t cls;		/* ec->index, set by the reader once numbered */
};

/* sc->priv */
struct sc_dec {
	struct prog pc;		/* packet context (may have no ops) */
	struct prog eh;		/* event header (generic) */
	enum hdr_kind hdr;
	int32_t clock;		/* index in trace->clocks, or -1 */
	uint32_t clock_bits_begin;	/* unused: timestamp_begin is full */
	/* event id -> class: a direct table when ids are dense */
	const struct trawl_ctf_event_class **byid;
	uint64_t nbyid;
	const struct trawl_ctf_event_class **sorted;	/* else sorted by id */
	uint64_t nsorted;
	const struct trawl_ctf_event_class *only;	/* single class */
	const struct fastent *fast;	/* [max(nbyid, 32)] when byid, else NULL */
};

/* Per-trace compile result that is not stored in the model. */
struct trace_dec {
	struct prog ph;		/* packet header */
	void *ph_mem;		/* malloc'd block of ph */
	uint32_t nregs;
};

/* The decode state of one stream. */
struct dctx {
	const uint8_t *pkt;		/* packet start */
	uint64_t pos, end;		/* bits from pkt */
	/*
	 * Where values go: normally `own` (malloc'd, owncap values); the decode
	 * worker lends a batch's tape area instead. tr_ctf_tape_grow() never
	 * reallocates a lent tape: it moves the event's values into `own`.
	 */
	union trawl_ctf_value *tape;
	uint32_t nv, cap;
	union trawl_ctf_value *own;
	uint32_t owncap;
	uint64_t *regs;
	uint64_t roles[NROLES];
	uint32_t rolemask;
	uint64_t clock;
	const char *why;		/* on error */
	uint64_t errpos;		/* bits from pkt */
	char whybuf[96];
};

/*
 * Compiles every decoder of a trace: packet header into td, stream classes
 * and event classes into their priv. Event classes whose name matches none
 * of the globs (when nevents > 0) get wanted = false. Returns 0 or -errno
 * with a message in err. On failure, whatever was compiled stays in the
 * model's priv pointers (freed by trawl_ctf_trace_free) and td->ph_mem.
 */
TRAWL_HIDDEN int tr_ctf_compile_trace(struct trawl_ctf_trace *t, struct trace_dec *td,
				   const char *const *events, size_t nevents,
				   char *err, size_t errlen);

/* Is e the element type of a text array or sequence (an encoded, byte
 * aligned 8-bit integer)? Such arrays decode to one string value. */
TRAWL_HIDDEN bool tr_ctf_is_text_elem(const struct trawl_ctf_type *e);

/* Runs ops [i, i+n) of p. Returns 0, or -EBADMSG with c->why, c->errpos. */
TRAWL_HIDDEN int tr_ctf_exec(struct dctx *c, const struct prog *p, uint32_t i, uint32_t n);

/* The CPU decodes with AVX-512 VBMI (struct vfix), and TRAWL_NO_SIMD is
 * not set in the environment. */
TRAWL_HIDDEN bool tr_ctf_simd(void);

/* Grows the tape to hold at least one more value (a lent tape: moves to
 * the own one, see struct dctx); 0 or -EBADMSG/-ENOMEM. */
TRAWL_HIDDEN int tr_ctf_tape_grow(struct dctx *c);

/* A register's little-endian integer of `bytes` (1, 2, 4, 8) at p. */
static inline uint64_t ctf_reg_load(const uint8_t *p, unsigned bytes, bool sign)
{
	uint8_t b8;
	uint16_t b16;
	uint32_t b32;
	uint64_t b64;

	switch (bytes) {
	case 1: memcpy(&b8, p, 1); return sign ? (uint64_t)(int8_t)b8 : b8;
	case 2: memcpy(&b16, p, 2); return sign ? (uint64_t)(int16_t)b16 : b16;
	case 4: memcpy(&b32, p, 4); return sign ? (uint64_t)(int32_t)b32 : b32;
	default: memcpy(&b64, p, 8); return b64;
	}
}

/* Length of the text in p[0..n) up to its first NUL. */
static inline uint32_t ctf_text_len(const uint8_t *p, uint32_t n)
{
	uint32_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t x;
		memcpy(&x, p + i, 8);
		uint64_t z = (x - UINT64_C(0x0101010101010101)) & ~x & UINT64_C(0x8080808080808080);
		if (z)
			return i + (uint32_t)__builtin_ctzll(z) / 8;
	}
	for (; i < n; i++)
		if (!p[i])
			return i;
	return n;
}

static inline void fixed_slow(union trawl_ctf_value *v, const struct fent *f, const uint8_t *q)
{
	switch (f->kind) {
	case FK_INT: {
		uint64_t x = 0;
		memcpy(&x, q, (64u - f->sh) / 8);	/* little-endian host */
		v->i = ((int64_t)(x << f->sh) >> f->sh) & (int64_t)f->mask;
		break;
	}
	case FK_F32: {
		float x;
		memcpy(&x, q, 4);
		v->d = x;
		break;
	}
	case FK_CONST:
		v->n = f->mask;
		break;
	case FK_TEXT:
		v->s.p = (const char *)q;
		v->s.len = ctf_text_len(q, (uint32_t)f->mask);
		break;
	}
}

/*
 * Decodes the n fixed fields at f (the first nint of them integers) of a
 * body at p into v. `slack`: at least 7 readable bytes follow the last
 * field, so every integer is one unaligned 8-byte load, shifted into place.
 */
static inline __attribute__((always_inline))
void ctf_decode_fents(union trawl_ctf_value *v, const struct fent *f, uint32_t nint, uint32_t n,
		      const uint8_t *p, bool slack)
{
	const struct fent *e = f + n;

	if (likely(slack)) {
		for (const struct fent *ie = f + nint; f < ie; f++) {
			uint64_t x;
			memcpy(&x, p + f->off, 8);
			v[f->slot].i = ((int64_t)(x << f->sh) >> f->sh) & (int64_t)f->mask;
		}
	}
	for (; f < e; f++)
		fixed_slow(&v[f->slot], f, p + f->off);
}

/* Decodes a fixed-layout body at p into v (d->nfix values); see above. */
static inline __attribute__((always_inline))
void ctf_decode_fixed_to(union trawl_ctf_value *v, const struct ec_dec *d, const uint8_t *p,
			 bool slack)
{
	ctf_decode_fents(v, d->fix, d->nint, d->nfix, p, slack);
}

/* The same into the tape (its capacity is ensured at open). */
static inline __attribute__((always_inline))
void ctf_decode_fixed(struct dctx *c, const struct ec_dec *d, const uint8_t *p, bool slack)
{
	ctf_decode_fixed_to(c->tape, d, p, slack);
	c->nv = d->nfix;
}

static inline uint64_t ctf_clock_update(uint64_t prev, uint64_t v, unsigned bits)
{
	if (bits >= 64)
		return v;
	uint64_t mask = (UINT64_C(1) << bits) - 1;
	uint64_t n = (prev & ~mask) | v;
	if (v < (prev & mask))
		n += mask + 1;
	return n;
}

#endif
