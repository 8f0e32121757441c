/* SPDX-License-Identifier: MIT */
/*
 * trawl/tracepoint.h - user-space tracepoints (the instrumentation API) and
 * the in-process recording session.
 *
 * Declaring events, once, in an application header:
 *
 *   #include <trawl/tracepoint.h>
 *   TRAWL_TRACEPOINT_EVENT(myapp, request, TRAWL_LOGLEVEL_INFO,
 *       TRAWL_ARGS(uint64_t id, int32_t status, const char *path),
 *       TRAWL_FIELDS(
 *           TRAWL_FIELD_INT(uint64_t, id, id)
 *           TRAWL_FIELD_INT(int32_t, status, status)
 *           TRAWL_FIELD_STRING(path, path)))
 *
 * TRAWL_ARGS is the parameter list of the emitting function, as in a C
 * prototype (TRAWL_ARGS(void) for none); the compiler checks the arguments
 * of every trawl_tracepoint() call against it. TRAWL_FIELDS lists the
 * recorded fields, each computed from the arguments:
 *
 *   TRAWL_FIELD_INT(type, name, expr)        integer type, 8 to 64 bits,
 *                                            signedness from the type
 *   TRAWL_FIELD_HEX(type, name, expr)        same, shown in hexadecimal
 *   TRAWL_FIELD_FLOAT(type, name, expr)      float or double
 *   TRAWL_FIELD_STRING(name, expr)           NUL-terminated (NULL: "(null)")
 *   TRAWL_FIELD_BYTES(name, ptr, len)        byte sequence, len < 2^32
 *                                            (shown with a `<name>_length`
 *                                            field before it)
 *   TRAWL_FIELD_ARRAY(type, name, ptr, n)    fixed array of n integers
 *                                            (n a constant)
 *   TRAWL_FIELD_ENUM(prov, enm, type, name, expr)  integer of an enum
 *                                            declared with TRAWL_ENUM
 *
 *   TRAWL_ENUM(myapp, color, TRAWL_ENUM_VALUE("red", 0)
 *                            TRAWL_ENUM_RANGE("warm", 1, 9))
 *
 * Exactly one .c file of the program defines TRAWL_TRACEPOINT_DEFINE before
 * including the header: that instantiates the event descriptors and a
 * constructor that registers them with libtrawl (a list insertion: no
 * thread, no file, no system call).
 *
 * Emitting: trawl_tracepoint(myapp, request, id, 200, "/index.html");
 * When no session enables the event this is one load and one predictable
 * branch; the arguments are not evaluated. When enabled it calls a typed
 * static inline function that reserves room in the calling thread's ring
 * buffer, writes the fields and commits: no lock, no allocation, no system
 * call (the first enabled event of a thread creates its buffer). It may be
 * called from any thread and from signal handlers: an event that interrupts
 * another event of the same thread is counted as discarded.
 *
 * Works from C (gnu11) and C++.
 */
#ifndef TRAWL_TRACEPOINT_H
#define TRAWL_TRACEPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* Log levels (LTTng's numbering: lower is more severe). */
enum {
	TRAWL_LOGLEVEL_EMERG = 0,
	TRAWL_LOGLEVEL_ALERT = 1,
	TRAWL_LOGLEVEL_CRIT = 2,
	TRAWL_LOGLEVEL_ERR = 3,
	TRAWL_LOGLEVEL_WARNING = 4,
	TRAWL_LOGLEVEL_NOTICE = 5,
	TRAWL_LOGLEVEL_INFO = 6,
	TRAWL_LOGLEVEL_DEBUG = 14,
};

/* ------------------------------------------------- descriptors (internal) */

enum trawl_tp_kind {
	TRAWL_TP_INT,
	TRAWL_TP_FLOAT,
	TRAWL_TP_STRING,
	TRAWL_TP_BYTES,
	TRAWL_TP_ARRAY,
	TRAWL_TP_ENUM,
};

struct trawl_tp_enum_entry {
	const char *label;
	int64_t lo, hi;		/* inclusive */
};

struct trawl_tp_enum {
	const char *provider, *name;
	const struct trawl_tp_enum_entry *entries;
	size_t n;
};

struct trawl_tp_field {
	const char *name;		/* NULL ends the list */
	uint8_t kind;			/* enum trawl_tp_kind */
	uint8_t size;			/* bytes of one integer/float element */
	uint8_t sign;
	uint8_t base;			/* 10 or 16 */
	uint32_t length;		/* ARRAY: element count */
	const struct trawl_tp_enum *enm;	/* ENUM */
};

/* One event; defined by TRAWL_TRACEPOINT_DEFINE, set by libtrawl. */
struct trawl_tp_event {
	int enabled;			/* read by trawl_tracepoint() (acquire load: a
					 * plain load on every architecture) */
	uint32_t id;			/* event class id in the session */
	const char *provider, *name;
	int loglevel;
	const struct trawl_tp_field *fields;
	struct trawl_tp_event *next;	/* libtrawl's registry */
};

/* Registers an event (called by the constructors TRAWL_TRACEPOINT_DEFINE
 * generates); if a session is recording and its rules match, the event is
 * enabled at once. Never fails; safe before main(). */
void trawl_tp_register(struct trawl_tp_event *ev);
/* Removes an event from the registry (library unload). */
void trawl_tp_unregister(struct trawl_tp_event *ev);

/*
 * The recording path, used by the generated emit functions: reserve room
 * for an event of payload size len in the calling thread's buffer; returns
 * where the payload goes, with *ctx set, or NULL when the event is not
 * recorded (counted as discarded when the buffer is full or the thread is
 * already inside an event). Every non-NULL reserve is followed by one
 * trawl_ust_commit(ctx) in the same thread.
 */
struct trawl_ust_ctx {
	void *buf;
	uint32_t end;
};
uint8_t *trawl_ust_reserve(const struct trawl_tp_event *ev, size_t len,
			   struct trawl_ust_ctx *ctx);
void trawl_ust_commit(const struct trawl_ust_ctx *ctx);

/* ------------------------------------------------------- declaration macros */

#define TRAWL_ARGS(...) (__VA_ARGS__)
#define TRAWL_FIELDS(...) __VA_ARGS__

#define TRAWL_FIELD_INT(t, n, e) (INT, t, n, (e), 10)
#define TRAWL_FIELD_HEX(t, n, e) (INT, t, n, (e), 16)
#define TRAWL_FIELD_FLOAT(t, n, e) (FLOAT, t, n, (e))
#define TRAWL_FIELD_STRING(n, e) (STRING, n, (e))
#define TRAWL_FIELD_BYTES(n, p, len) (BYTES, n, (p), (len))
#define TRAWL_FIELD_ARRAY(t, n, p, cnt) (ARRAY, t, n, (p), cnt)
#define TRAWL_FIELD_ENUM(prov, enm, t, n, e) (ENUM, prov, enm, t, n, (e))

#define TRAWL_ENUM_VALUE(label, v) { label, (int64_t)(v), (int64_t)(v) },
#define TRAWL_ENUM_RANGE(label, lo, hi) { label, (int64_t)(lo), (int64_t)(hi) },

/*
 * Iteration over a field sequence (a)(b)(c): two alternating macros, each
 * handling one element and naming the other as the next; an (END, ~)
 * element appended by TRAWL__EACH stops the chain.
 */
#define TRAWL__EACH(ctx, seq) TRAWL__##ctx##_A seq (END, ~)
#define TRAWL__NEXT_INT(m) m
#define TRAWL__NEXT_FLOAT(m) m
#define TRAWL__NEXT_STRING(m) m
#define TRAWL__NEXT_BYTES(m) m
#define TRAWL__NEXT_ARRAY(m) m
#define TRAWL__NEXT_ENUM(m) m
#define TRAWL__NEXT_END(m)

/* context SZ: locals and the payload size */
#define TRAWL__SZ_A(k, ...) TRAWL__SZ_##k(__VA_ARGS__) TRAWL__NEXT_##k(TRAWL__SZ_B)
#define TRAWL__SZ_B(k, ...) TRAWL__SZ_##k(__VA_ARGS__) TRAWL__NEXT_##k(TRAWL__SZ_A)
#define TRAWL__SZ_END(...)
#define TRAWL__SZ_INT(t, n, e, b) __len += sizeof(t);
#define TRAWL__SZ_FLOAT(t, n, e) __len += sizeof(t);
#define TRAWL__SZ_STRING(n, e)						\
	const char *__s_##n = (e);					\
	if (!__s_##n)							\
		__s_##n = "(null)";					\
	size_t __l_##n = strlen(__s_##n) + 1;				\
	__len += __l_##n;
#define TRAWL__SZ_BYTES(n, p, len)					\
	const void *__s_##n = (p);					\
	uint32_t __l_##n = (uint32_t)(len);				\
	__len += 4 + (size_t)__l_##n;
#define TRAWL__SZ_ARRAY(t, n, p, cnt) __len += sizeof(t) * (cnt);
#define TRAWL__SZ_ENUM(prov, enm, t, n, e) __len += sizeof(t);

/* context WR: serialization (byte-aligned, host = little-endian order) */
#define TRAWL__WR_A(k, ...) TRAWL__WR_##k(__VA_ARGS__) TRAWL__NEXT_##k(TRAWL__WR_B)
#define TRAWL__WR_B(k, ...) TRAWL__WR_##k(__VA_ARGS__) TRAWL__NEXT_##k(TRAWL__WR_A)
#define TRAWL__WR_END(...)
#define TRAWL__WR_INT(t, n, e, b)					\
	{ t __v = (t)(e); memcpy(__p, &__v, sizeof(__v)); __p += sizeof(__v); }
#define TRAWL__WR_FLOAT(t, n, e)					\
	{ t __v = (t)(e); memcpy(__p, &__v, sizeof(__v)); __p += sizeof(__v); }
#define TRAWL__WR_STRING(n, e)						\
	memcpy(__p, __s_##n, __l_##n - 1);				\
	__p[__l_##n - 1] = 0;						\
	__p += __l_##n;
#define TRAWL__WR_BYTES(n, p, len)					\
	memcpy(__p, &__l_##n, 4);					\
	if (__l_##n)							\
		memcpy(__p + 4, __s_##n, __l_##n);			\
	__p += 4 + (size_t)__l_##n;
#define TRAWL__WR_ARRAY(t, n, p, cnt)					\
	memcpy(__p, (p), sizeof(t) * (cnt));				\
	__p += sizeof(t) * (cnt);
#define TRAWL__WR_ENUM(prov, enm, t, n, e) TRAWL__WR_INT(t, n, e, 10)

/* context DESC: the field descriptors */
#define TRAWL__DESC_A(k, ...) TRAWL__DESC_##k(__VA_ARGS__) TRAWL__NEXT_##k(TRAWL__DESC_B)
#define TRAWL__DESC_B(k, ...) TRAWL__DESC_##k(__VA_ARGS__) TRAWL__NEXT_##k(TRAWL__DESC_A)
#define TRAWL__DESC_END(...)
#define TRAWL__SIGNED(t) ((t)-1 < (t)1)
#define TRAWL__DESC_INT(t, n, e, b)					\
	{ #n, TRAWL_TP_INT, sizeof(t), TRAWL__SIGNED(t), b, 0, NULL },
#define TRAWL__DESC_FLOAT(t, n, e)					\
	{ #n, TRAWL_TP_FLOAT, sizeof(t), 1, 10, 0, NULL },
#define TRAWL__DESC_STRING(n, e) { #n, TRAWL_TP_STRING, 1, 0, 10, 0, NULL },
#define TRAWL__DESC_BYTES(n, p, len) { #n, TRAWL_TP_BYTES, 1, 0, 16, 0, NULL },
#define TRAWL__DESC_ARRAY(t, n, p, cnt)					\
	{ #n, TRAWL_TP_ARRAY, sizeof(t), TRAWL__SIGNED(t), 10, (cnt), NULL },
#define TRAWL__DESC_ENUM(prov, enm, t, n, e)				\
	{ #n, TRAWL_TP_ENUM, sizeof(t), TRAWL__SIGNED(t), 10, 0,	\
	  &__trawl_enum_##prov##_##enm },

#ifdef TRAWL_TRACEPOINT_DEFINE
#define TRAWL_ENUM(prov, enm, ...)					\
	static const struct trawl_tp_enum_entry				\
		__trawl_enum_entries_##prov##_##enm[] = { __VA_ARGS__ };	\
	const struct trawl_tp_enum __trawl_enum_##prov##_##enm = {	\
		#prov, #enm, __trawl_enum_entries_##prov##_##enm,	\
		sizeof(__trawl_enum_entries_##prov##_##enm) /		\
			sizeof(__trawl_enum_entries_##prov##_##enm[0]) };
#define TRAWL__DEFINE_EVENT(prov, ev, ll, fields)			\
	static const struct trawl_tp_field __trawl_fields_##prov##_##ev[] = { \
		TRAWL__EACH(DESC, fields)				\
		{ NULL, 0, 0, 0, 0, 0, NULL } };			\
	struct trawl_tp_event __trawl_ev_##prov##_##ev = {		\
		0, 0, #prov, #ev, ll, __trawl_fields_##prov##_##ev, NULL }; \
	__attribute__((constructor)) static void			\
	__trawl_reg_##prov##_##ev(void)					\
	{								\
		trawl_tp_register(&__trawl_ev_##prov##_##ev);		\
	}								\
	__attribute__((destructor)) static void				\
	__trawl_unreg_##prov##_##ev(void)				\
	{								\
		trawl_tp_unregister(&__trawl_ev_##prov##_##ev);		\
	}
#else
#define TRAWL_ENUM(prov, enm, ...)					\
	extern const struct trawl_tp_enum __trawl_enum_##prov##_##enm;
#define TRAWL__DEFINE_EVENT(prov, ev, ll, fields)
#endif

#define TRAWL_TRACEPOINT_EVENT(prov, ev, ll, args, fields)		\
	extern struct trawl_tp_event __trawl_ev_##prov##_##ev;		\
	TRAWL__DEFINE_EVENT(prov, ev, ll, fields)			\
	static inline void __trawl_emit_##prov##_##ev args		\
	{								\
		size_t __len = 0;					\
		struct trawl_ust_ctx __c;				\
		TRAWL__EACH(SZ, fields)					\
		uint8_t *__p = trawl_ust_reserve(&__trawl_ev_##prov##_##ev, \
						 __len, &__c);		\
		if (!__p)						\
			return;						\
		TRAWL__EACH(WR, fields)					\
		(void)__p;						\
		trawl_ust_commit(&__c);					\
	}

/* Emits event prov:ev when a session enables it. */
#define trawl_tracepoint(prov, ev, ...)					\
	do {								\
		if (__builtin_expect(__atomic_load_n(&__trawl_ev_##prov##_##ev.enabled, \
						     __ATOMIC_ACQUIRE), 0))	\
			__trawl_emit_##prov##_##ev(__VA_ARGS__);	\
	} while (0)

/* Is prov:ev enabled (e.g. to skip computing arguments)? */
#define trawl_tracepoint_enabled(prov, ev)				\
	__builtin_expect(__atomic_load_n(&__trawl_ev_##prov##_##ev.enabled, __ATOMIC_ACQUIRE), 0)

/* ------------------------------------------------- the in-process session */

/*
 * A recording session inside the process: per-thread ring buffers in shared
 * memory (memfd), and a consumer thread that writes full sub-buffers (each a
 * complete CTF packet) to a CTF trace. One session records at a time.
 */
enum trawl_ust_mode {
	TRAWL_UST_DISCARD = 0,		/* full buffer: new events dropped, counted */
	TRAWL_UST_OVERWRITE = 1,	/* flight recorder: oldest packets reused */
};

enum trawl_ust_header {
	TRAWL_UST_HEADER_LARGE = 0,	/* LTTng's: u16 id + u32 ts (6 bytes), or
					 * 14 bytes when the delta needs more */
	TRAWL_UST_HEADER_FIXED = 1,	/* u16 id + u64 timestamp (10 bytes) */
};

enum {
	TRAWL_UST_CTX_VPID = 1 << 0,
	TRAWL_UST_CTX_VTID = 1 << 1,
	TRAWL_UST_CTX_PROCNAME = 1 << 2,
	TRAWL_UST_CTX_CGROUP_ID = 1 << 3,
};

enum trawl_ust_clock {
	TRAWL_UST_CLOCK_AUTO = 0,	/* TSC when it is the kernel's clocksource */
	TRAWL_UST_CLOCK_MONOTONIC = 1,
	TRAWL_UST_CLOCK_TSC = 2,	/* force (x86 only) */
};

struct trawl_ust_session_opts {
	size_t sz;			/* sizeof(struct trawl_ust_session_opts) */
	/*
	 * Directory of the CTF trace written by the consumer (created).
	 * A forked child that traces writes its own trace beside it, in
	 * `<output>-<pid>`. NULL: nothing is drained (overwrite mode only;
	 * use trawl_ust_session_snapshot()).
	 */
	const char *output;
	enum trawl_ust_mode mode;
	size_t subbuf_size;		/* bytes, power of two >= 4096; default 256 KiB */
	unsigned nsubbuf;		/* power of two >= 2; default 32 (discard), 8 (overwrite) */
	const char *const *events;	/* globs on "provider:event"; NULL: all */
	size_t nevents;
	/* with by_loglevel: only events whose loglevel <= loglevel (this
	 * level or more severe); without: every level */
	bool by_loglevel;
	int loglevel;
	unsigned contexts;		/* TRAWL_UST_CTX_* */
	enum trawl_ust_header header;
	enum trawl_ust_clock clock;
	const char *hostname;		/* env.hostname; default this machine's */
	unsigned flush_ms;		/* consumer poll period; default 1 */
};

/*
 * Default buffer of each thread: 32 x 256 KiB (52 ms at 5 M events/s of
 * 32 bytes) in discard mode, of which a thread that traces slowly keeps
 * about two sub-buffers resident (docs/ust.md, "Buffer size and memory");
 * 8 x 256 KiB in overwrite mode, whose memory all stays in use.
 */
#define TRAWL_UST_DEFAULT_SUBBUF_SIZE (256u * 1024)
#define TRAWL_UST_DEFAULT_NSUBBUF(mode) ((mode) == TRAWL_UST_OVERWRITE ? 8u : 32u)

/* Counters, summed over the session's buffers (including exited threads'). */
struct trawl_ust_stats {
	uint64_t recorded;		/* events committed into buffers */
	uint64_t discarded;		/* counted as discarded (full, nested) */
	uint64_t overwritten;		/* overwrite mode: events in reused packets */
	uint64_t packets;		/* packets written by the consumer */
	uint64_t buffers;		/* thread buffers created */
	/* last snapshot: */
	uint64_t snap_events;		/* events in the copied packets */
	uint64_t snap_torn;		/* packets dropped: rewritten during the copy */
};

struct trawl_ust_session;

/*
 * Creates a session (nothing recorded until _start). Returns NULL and sets
 * errno (EINVAL for bad options, message in err). Free with
 * trawl_ust_session_free().
 */
struct trawl_ust_session *trawl_ust_session_new(const struct trawl_ust_session_opts *o,
						char *err, size_t errlen);
/*
 * Starts recording: enables the matching events, samples the clock, and
 * (with an output) creates the trace directory and starts the consumer
 * thread. Returns 0, -EBUSY if another session records, or -errno.
 */
int trawl_ust_session_start(struct trawl_ust_session *s);
/*
 * Stops recording: disables the events, waits until no thread is inside an
 * event, flushes every buffer's last partial packet, drains them and writes
 * the metadata (clock frequency measured over the whole session). Returns 0
 * or -errno (the first I/O error). After stop the session may not restart.
 */
int trawl_ust_session_stop(struct trawl_ust_session *s);
/*
 * Overwrite mode: writes the newest packets of every buffer to a new CTF
 * trace in dir while producers keep writing, the packet each thread is
 * still filling included (up to its last committed event; stats.snap_events
 * counts the events written, what a reader reads). A packet rewritten during its
 * copy is dropped and counted (stats.snap_torn). The events that precede
 * the copied packets of a buffer are counted in their events_discarded, so
 * that for each thread: events in the snapshot + discarded = emitted up to
 * the copy. Returns 0 or -errno.
 */
int trawl_ust_session_snapshot(struct trawl_ust_session *s, const char *dir);
/* Fills *st. Exact once the session is stopped. */
void trawl_ust_session_stats(struct trawl_ust_session *s, struct trawl_ust_stats *st);
/* Stops (if recording) and frees. */
void trawl_ust_session_free(struct trawl_ust_session *s);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
