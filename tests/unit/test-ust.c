/* SPDX-License-Identifier: MIT */
/*
 * test-ust: user-space tracepoints recorded by an in-process session and
 * read back with the trawl reader: every field type round-trips; disabled
 * events emit nothing; per-thread order and timestamps; exact accounting
 * (events read + events_discarded = events emitted) under stress in discard
 * and overwrite modes, with snapshots taken while threads write; snapshots
 * holding the packet still open; events from
 * a signal handler storm; fork.
 */
#define TRAWL_TRACEPOINT_DEFINE
#include "trawl/tracepoint.h"
#include "trawl/ctf.h"
#include "trawl/pipe.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"
#include "ust/ust-internal.h"	/* tr_ust_lock_take/give: a slow registration */
#include "util/clock.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* The tests wait for what they need to see (a counter, a thread's state),
 * never for a time; each such wait is bounded by this, generous for a
 * loaded machine, and fails the check when it runs out. */
#define WAIT_BOUND_NS (30 * 1000000000ull)

TRAWL_ENUM(tst, mood, TRAWL_ENUM_VALUE("sad", -1) TRAWL_ENUM_VALUE("calm", 0)
		      TRAWL_ENUM_RANGE("happy", 1, 100))

TRAWL_TRACEPOINT_EVENT(tst, seq, TRAWL_LOGLEVEL_INFO,
	TRAWL_ARGS(uint32_t th, uint64_t seq),
	TRAWL_FIELDS(TRAWL_FIELD_INT(uint32_t, th, th) TRAWL_FIELD_INT(uint64_t, seq, seq)))

TRAWL_TRACEPOINT_EVENT(tst, sig, TRAWL_LOGLEVEL_INFO,
	TRAWL_ARGS(uint64_t n),
	TRAWL_FIELDS(TRAWL_FIELD_INT(uint64_t, n, n)))

TRAWL_TRACEPOINT_EVENT(tst, types, TRAWL_LOGLEVEL_NOTICE,
	TRAWL_ARGS(int8_t i8, uint8_t u8, int16_t i16, uint16_t u16, int32_t i32,
		   uint32_t u32, int64_t i64, uint64_t u64, float f, double d,
		   const char *s, const void *b, size_t blen, const int32_t *arr, int mood),
	TRAWL_FIELDS(
		TRAWL_FIELD_INT(int8_t, i8, i8)
		TRAWL_FIELD_INT(uint8_t, u8, u8)
		TRAWL_FIELD_INT(int16_t, i16, i16)
		TRAWL_FIELD_INT(uint16_t, u16, u16)
		TRAWL_FIELD_INT(int32_t, i32, i32)
		TRAWL_FIELD_HEX(uint32_t, u32, u32)
		TRAWL_FIELD_INT(int64_t, i64, i64)
		TRAWL_FIELD_HEX(uint64_t, u64, u64)
		TRAWL_FIELD_FLOAT(float, f, f)
		TRAWL_FIELD_FLOAT(double, d, d)
		TRAWL_FIELD_STRING(s, s)
		TRAWL_FIELD_BYTES(b, b, blen)
		TRAWL_FIELD_ARRAY(int32_t, arr, arr, 4)
		TRAWL_FIELD_ENUM(tst, mood, int8_t, mood, mood)
		TRAWL_FIELD_STRING(s2, s)))

TRAWL_TRACEPOINT_EVENT(tst, verbose, TRAWL_LOGLEVEL_DEBUG,
	TRAWL_ARGS(int x), TRAWL_FIELDS(TRAWL_FIELD_INT(int, x, x)))

TRAWL_TRACEPOINT_EVENT(other, ev, TRAWL_LOGLEVEL_INFO,
	TRAWL_ARGS(int x), TRAWL_FIELDS(TRAWL_FIELD_INT(int, x, x)))

static char base[256];

static void dir_of(char *out, size_t n, const char *name)
{
	snprintf(out, n, "%s/%s", base, name);
}

static struct trawl_ust_session *mk(const char *out, enum trawl_ust_mode mode, size_t S,
				    unsigned N, unsigned ctx, enum trawl_ust_header hdr,
				    enum trawl_ust_clock clk, const char *const *globs,
				    size_t nglobs, int loglevel)
{
	struct trawl_ust_session_opts o;
	char err[256] = "";
	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	o.output = out;
	o.mode = mode;
	o.subbuf_size = S;
	o.nsubbuf = N;
	o.contexts = ctx;
	o.header = hdr;
	o.clock = clk;
	o.events = globs;
	o.nevents = nglobs;
	o.by_loglevel = loglevel >= 0;
	o.loglevel = loglevel;
	o.hostname = "testhost";
	struct trawl_ust_session *s = trawl_ust_session_new(&o, err, sizeof(err));
	if (!s)
		printf("# session_new: %s\n", err);
	return s;
}

/* ---------------------------------------------------------- reading */

struct per_stream {
	const struct trawl_reader_stream *st;
	uint64_t events, discarded, last_cycles;
	int64_t vpid, vtid;
	uint64_t next_seq;	/* expected next seq of tst:seq */
	uint64_t first_seq;
	uint32_t th;		/* th of its first tst:seq */
	bool order_ok, ts_ok, seen_seq, gaps;
	uint64_t sig_events;
};

struct readback {
	struct per_stream s[256];
	size_t n;
	uint64_t total, errors;
	uint64_t by_name[8];	/* seq, sig, types, verbose, other */
	const struct trawl_event *last_types;
	union trawl_ctf_value types_vals[64];
	uint32_t ntypes_vals;
	char types_s[64], types_b[16];
	size_t ntraces;
	bool has_ctx;
};

static int name_idx(const char *n)
{
	static const char *names[] = { "tst:seq", "tst:sig", "tst:types", "tst:verbose", "other:ev" };
	for (int i = 0; i < 5; i++)
		if (strcmp(n, names[i]) == 0)
			return i;
	return 7;
}

static struct per_stream *stream_of(struct readback *rb, const struct trawl_reader_stream *st)
{
	for (size_t i = 0; i < rb->n; i++)
		if (rb->s[i].st == st)
			return &rb->s[i];
	if (rb->n == ARRAY_LEN(rb->s))
		return NULL;
	struct per_stream *p = &rb->s[rb->n++];
	memset(p, 0, sizeof(*p));
	p->st = st;
	p->order_ok = p->ts_ok = true;
	p->vpid = p->vtid = -1;
	return p;
}

/* ctx: number of leading context values (vpid, vtid) */
static int read_back(const char *dir, struct readback *rb, int nctx)
{
	memset(rb, 0, sizeof(*rb));
	char err[512] = "";
	const char *paths[] = { dir };
	struct trawl_reader_opts ro;
	memset(&ro, 0, sizeof(ro));
	ro.sz = sizeof(ro);
	ro.threads = 1;
	struct trawl_reader *r = trawl_reader_new(paths, 1, &ro, err, sizeof(err));
	if (!r) {
		printf("# reader: %s\n", err);
		return -1;
	}
	rb->ntraces = trawl_reader_ntraces(r);
	const struct trawl_event *ev;
	int ret;
	while ((ret = trawl_reader_next(r, &ev)) != 0) {
		if (ret < 0) {
			printf("# read error: %s\n", trawl_reader_error(r));
			rb->errors++;
			continue;
		}
		rb->total++;
		struct per_stream *p = stream_of(rb, ev->stream);
		if (!p)
			continue;
		int k = name_idx(ev->cls->name);
		rb->by_name[k]++;
		p->events++;
		if (ev->cycles < p->last_cycles)
			p->ts_ok = false;
		p->last_cycles = ev->cycles;
		const union trawl_ctf_value *v = ev->values;
		if (nctx >= 2) {
			if (p->vpid == -1) {
				p->vpid = v[0].i;
				p->vtid = v[1].i;
			} else if (p->vpid != v[0].i || p->vtid != v[1].i) {
				p->order_ok = false;
			}
		}
		v += nctx;
		if (k == 0) {
			if (!p->seen_seq) {
				p->seen_seq = true;
				p->th = (uint32_t)v[0].u;
				p->first_seq = v[1].u;
			} else if (v[1].u < p->next_seq) {
				p->order_ok = false;
			} else if (v[1].u != p->next_seq) {
				p->gaps = true;
			}
			p->next_seq = v[1].u + 1;
		} else if (k == 1) {
			p->sig_events++;
		} else if (k == 2 && ev->nvalues - nctx <= ARRAY_LEN(rb->types_vals)) {
			rb->ntypes_vals = ev->nvalues - (uint32_t)nctx;
			memcpy(rb->types_vals, v, rb->ntypes_vals * sizeof(*v));
			/* strings point into the mapped trace: copy them */
			size_t sl = v[10].s.len < sizeof(rb->types_s) - 1 ? v[10].s.len : sizeof(rb->types_s) - 1;
			memcpy(rb->types_s, v[10].s.p, sl);
			rb->types_s[sl] = 0;
		}
	}
	for (size_t i = 0; i < rb->n; i++) {
		struct trawl_reader_stream_stats st;
		trawl_reader_stream_stats(rb->s[i].st, &st);
		rb->s[i].discarded = st.discarded;
		if (st.events != rb->s[i].events)
			rb->errors++;
	}
	rb->errors += trawl_reader_nerrors(r);
	trawl_reader_free(r);
	return 0;
}

/* ---------------------------------------------------------- round trip */

static void test_types(enum trawl_ust_header hdr, enum trawl_ust_clock clk, const char *name)
{
	char dir[512];
	dir_of(dir, sizeof(dir), name);
	const char *globs[] = { "tst:*" };
	struct trawl_ust_session *s = mk(dir, TRAWL_UST_DISCARD, 65536, 4,
					 TRAWL_UST_CTX_VPID | TRAWL_UST_CTX_VTID, hdr, clk,
					 globs, 1, TRAWL_LOGLEVEL_NOTICE);
	ok(s != NULL, "%s: session", name);
	if (!s)
		return;
	trawl_tracepoint(tst, types, 1, 2, 3, 4, 5, 6, 7, 8, 0.5f, 0.25, "x", "", 0,
			 (int32_t[]){ 0, 0, 0, 0 }, 0);	/* before start: nothing */
	is_int(trawl_ust_session_start(s), 0, "%s: start", name);
	const int32_t arr[4] = { INT32_MIN, -1, 0, INT32_MAX };
	const uint8_t bytes[5] = { 0, 1, 0x7f, 0x80, 0xff };
	for (int i = 0; i < 200; i++) {
		trawl_tracepoint(tst, types, INT8_MIN, UINT8_MAX, INT16_MIN, UINT16_MAX, INT32_MIN,
				 0xdeadbeefu, INT64_MIN, UINT64_MAX, -1.25f, 3.141592653589793,
				 "h\xc3\xa9llo", bytes, sizeof(bytes), arr, i % 2 ? -1 : 42);
		trawl_tracepoint(tst, verbose, i);	/* loglevel DEBUG > NOTICE: off */
		trawl_tracepoint(other, ev, i);		/* glob does not match: off */
	}
	ok(!trawl_tracepoint_enabled(tst, verbose) && !trawl_tracepoint_enabled(other, ev) &&
	   trawl_tracepoint_enabled(tst, types), "%s: enabled flags follow glob and loglevel", name);
	is_int(trawl_ust_session_stop(s), 0, "%s: stop", name);
	ok(!trawl_tracepoint_enabled(tst, types), "%s: disabled after stop", name);
	trawl_tracepoint(tst, types, 1, 2, 3, 4, 5, 6, 7, 8, 0.5f, 0.25, "x", "", 0, arr, 0);
	struct trawl_ust_stats st;
	trawl_ust_session_stats(s, &st);
	is_int(st.recorded, 200, "%s: 200 recorded", name);
	is_int(st.discarded, 0, "%s: none discarded", name);
	trawl_ust_session_free(s);

	struct readback *rb = calloc(1, sizeof(*rb));
	ok(read_back(dir, rb, 2) == 0, "%s: read back", name);
	is_int(rb->errors, 0, "%s: no read errors", name);
	is_int(rb->by_name[2], 200, "%s: 200 tst:types events", name);
	is_int(rb->by_name[3] + rb->by_name[4], 0, "%s: disabled events absent", name);
	is_int(rb->n, 1, "%s: one stream", name);
	ok(rb->n == 1 && rb->s[0].vpid == getpid() && rb->s[0].vtid == syscall(SYS_gettid),
	   "%s: vpid/vtid context", name);
	/* tape: i8 u8 i16 u16 i32 u32 i64 u64 f d s b_length b(n, 5 elems)
	 * arr(n, 4 elems) mood s2 */
	const union trawl_ctf_value *v = rb->types_vals;
	is_int(rb->ntypes_vals, 10 + 1 + 1 + 6 + 5 + 1 + 1, "%s: value count", name);
	ok(v[0].i == INT8_MIN && v[1].u == UINT8_MAX && v[2].i == INT16_MIN &&
	   v[3].u == UINT16_MAX && v[4].i == INT32_MIN && v[5].u == 0xdeadbeefu &&
	   v[6].i == INT64_MIN && v[7].u == UINT64_MAX, "%s: integers", name);
	ok(v[8].d == -1.25 && v[9].d == 3.141592653589793, "%s: float and double", name);
	is_str(rb->types_s, "h\xc3\xa9llo", "%s: string", name);
	ok(v[11].u == 5 && v[12].n == 5 && v[13].u == 0 && v[14].u == 1 && v[15].u == 0x7f &&
	   v[16].u == 0x80 && v[17].u == 0xff, "%s: byte sequence", name);
	ok(v[18].n == 4 && v[19].i == INT32_MIN && v[20].i == -1 && v[21].i == 0 &&
	   v[22].i == INT32_MAX, "%s: array", name);
	is_int(v[23].i, -1, "%s: enum (last event: sad = -1)", name);
	free(rb);
}

/* ---------------------------------------------------------- open packet */

/*
 * A snapshot holds the packet still open: events emitted by a thread that
 * then does nothing are all in it, counted (snap_events) as the reader
 * reads them; the open packet's events are walked for that, through every
 * field kind (types) and context.
 */
static void test_snapshot_open(enum trawl_ust_header hdr, unsigned ctx, bool types,
			       const char *name)
{
	char dir[512], snap[512], sd[128];
	dir_of(dir, sizeof(dir), name);
	const char *globs[] = { "tst:*" };
	struct trawl_ust_session *s = mk(dir, TRAWL_UST_OVERWRITE, 65536, 4, ctx, hdr,
					 TRAWL_UST_CLOCK_AUTO, globs, 1, -1);
	if (!ok(s && trawl_ust_session_start(s) == 0, "%s: start", name))
		return;
	const int32_t arr[4] = { 1, 2, 3, 4 };
	for (uint64_t i = 0; i < 20; i++) {
		trawl_tracepoint(tst, seq, 0, i);
		if (types)
			trawl_tracepoint(tst, types, 1, 2, 3, 4, 5, 6, 7, 8, 0.5f, 0.25,
					 i % 2 ? "" : "a longer string", "xyz", i % 4, arr, 1);
	}
	uint64_t want = types ? 40 : 20;
	struct readback *rb = calloc(1, sizeof(*rb));
	struct trawl_ust_stats st;
	for (int k = 0; k < 2; k++) {
		/* the second after 5 more: the newer ones too */
		if (k)
			for (uint64_t i = 20; i < 25; i++, want++)
				trawl_tracepoint(tst, seq, 0, i);
		snprintf(sd, sizeof(sd), "%s-snap%d", name, k);
		dir_of(snap, sizeof(snap), sd);
		is_int(trawl_ust_session_snapshot(s, snap), 0, "%s: snapshot %d", name, k);
		trawl_ust_session_stats(s, &st);
		ok(read_back(snap, rb, ctx == (TRAWL_UST_CTX_VPID | TRAWL_UST_CTX_VTID) ? 2 : 0) == 0,
		   "%s: snapshot %d read back", name, k);
		ok(rb->errors == 0 && rb->total == want && st.snap_events == want,
		   "%s: snapshot %d: the open packet's %" PRIu64 " events, counted as read "
		   "(read %" PRIu64 ", counted %" PRIu64 ", %" PRIu64 " errors)", name, k, want,
		   rb->total, st.snap_events, rb->errors);
	}
	free(rb);
	trawl_ust_session_free(s);
}

/* ---------------------------------------------------------- stress */

struct worker {
	pthread_t th;
	uint32_t idx;
	uint64_t n;		/* at least n events, then until *stop */
	volatile int *go, *stop;
	uint64_t emitted;	/* atomic: events emitted so far */
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	while (!__atomic_load_n(w->go, __ATOMIC_ACQUIRE))
		;
	for (uint64_t i = 0; i < w->n || !__atomic_load_n(w->stop, __ATOMIC_ACQUIRE); i++) {
		trawl_tracepoint(tst, seq, w->idx, i);
		__atomic_store_n(&w->emitted, i + 1, __ATOMIC_RELEASE);
		if ((i & 1023) == 0)
			sched_yield();
	}
	return NULL;
}

/* Every stream: seq values consecutive (program order), timestamps
 * non-decreasing, and events read + discarded = emitted (emitted[th] by
 * the thread whose events it holds). */
static void check_streams(const char *what, struct readback *rb, size_t nthreads,
			  const uint64_t *emitted, bool window)
{
	bool order = true, ts = true, acct = true;
	uint64_t sum = 0, disc = 0, all = 0;
	for (size_t i = 0; i < nthreads; i++)
		all += emitted[i];
	for (size_t i = 0; i < rb->n; i++) {
		struct per_stream *p = &rb->s[i];
		order &= p->order_ok;
		ts &= p->ts_ok;
		sum += p->events;
		disc += p->discarded;
		uint64_t want = p->seen_seq && p->th < nthreads ? emitted[p->th] : 0;
		if (!p->seen_seq || p->events + p->discarded != want) {
			acct = false;
			printf("# stream %zu (thread %u): %" PRIu64 " events + %" PRIu64
			       " discarded != %" PRIu64 "\n", i, p->th, p->events, p->discarded, want);
		}
		/* a window of the newest events: they start right after the
		 * ones counted as lost */
		if (window && p->seen_seq && (p->first_seq != p->discarded || p->gaps)) {
			acct = false;
			printf("# stream %zu: first seq %" PRIu64 " != lost %" PRIu64 "\n",
			       i, p->first_seq, p->discarded);
		}
	}
	is_int(rb->errors, 0, "%s: no read errors", what);
	is_int(rb->n, nthreads, "%s: one stream per thread", what);
	ok(order, "%s: each thread's events in program order", what);
	ok(ts, "%s: timestamps non-decreasing per stream", what);
	ok(acct, "%s: events + discarded = emitted, per stream", what);
	is_int(sum + disc, all, "%s: %" PRIu64 " read + %" PRIu64 " discarded = emitted",
	       what, sum, disc);
}

static void test_stress(enum trawl_ust_mode mode, enum trawl_ust_header hdr, const char *name)
{
	enum { NT = 6 };
	const uint64_t per = 30000;
	char dir[512], snap[512];
	dir_of(dir, sizeof(dir), name);
	const char *globs[] = { "tst:seq" };
	struct trawl_ust_session *s = mk(dir, mode, 4096, 2, TRAWL_UST_CTX_VPID | TRAWL_UST_CTX_VTID,
					 hdr, TRAWL_UST_CLOCK_AUTO, globs, 1, -1);
	if (!ok(s && trawl_ust_session_start(s) == 0, "%s: start", name))
		return;
	/* discard mode: per events each; overwrite mode: at least per, and
	 * on until the snapshots are taken */
	volatile int go = 0, stop = mode != TRAWL_UST_OVERWRITE;
	struct worker w[NT];
	for (int i = 0; i < NT; i++) {
		w[i].idx = (uint32_t)i;
		w[i].n = per;
		w[i].go = &go;
		w[i].stop = &stop;
		w[i].emitted = 0;
		pthread_create(&w[i].th, NULL, worker_main, &w[i]);
	}
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	int nsnap = 0, snap_ok = 0;
	uint64_t torn = 0;
	if (mode == TRAWL_UST_OVERWRITE) {
		/* snapshots while the threads write: every thread has begun
		 * (waited for, bounded) and none ends before they are taken */
		bool begun = false;
		for (uint64_t end = tr_mono_ns() + WAIT_BOUND_NS; !begun && tr_mono_ns() < end;) {
			begun = true;
			for (int i = 0; i < NT; i++)
				begun &= __atomic_load_n(&w[i].emitted, __ATOMIC_ACQUIRE) > 0;
			if (!begun)
				usleep(1000);
		}
		ok(begun, "%s: every thread writes before the snapshots", name);
		for (int i = 0; i < 5; i++) {
			char sd[64];
			snprintf(sd, sizeof(sd), "%s-snap%d", name, i);
			dir_of(snap, sizeof(snap), sd);
			if (trawl_ust_session_snapshot(s, snap) == 0)
				snap_ok++;
			struct trawl_ust_stats st;
			trawl_ust_session_stats(s, &st);
			torn += st.snap_torn;
			nsnap++;
			usleep(2000);
		}
		__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	}
	uint64_t emitted[NT], total = 0;
	for (int i = 0; i < NT; i++) {
		pthread_join(w[i].th, NULL);	/* the threads exit before stop */
		emitted[i] = w[i].emitted;
		total += emitted[i];
	}
	is_int(trawl_ust_session_stop(s), 0, "%s: stop", name);
	struct trawl_ust_stats st;
	trawl_ust_session_stats(s, &st);
	trawl_ust_session_free(s);
	is_int(st.buffers, NT, "%s: one buffer per thread", name);
	if (mode == TRAWL_UST_DISCARD) {
		is_int(total, NT * per, "%s: %d x %" PRIu64 " emitted", name, NT, per);
		is_int(st.recorded + st.discarded, total, "%s: stats: recorded + discarded = emitted",
		       name);
	} else {
		is_int(st.recorded + st.discarded, total, "%s: stats: recorded + discarded = emitted",
		       name);
		ok(st.overwritten > 0, "%s: packets were overwritten (%" PRIu64 " events)", name,
		   st.overwritten);
		is_int(snap_ok, nsnap, "%s: %d snapshots taken while writing (%" PRIu64 " torn)", name,
		       nsnap, torn);
	}
	struct readback *rb = calloc(1, sizeof(*rb));
	ok(read_back(dir, rb, 2) == 0, "%s: read back", name);
	check_streams(name, rb, NT, emitted, mode == TRAWL_UST_OVERWRITE);
	if (mode == TRAWL_UST_OVERWRITE) {
		/* each snapshot: every stream is a window of consecutive events
		 * whose first seq equals the count of events before it */
		bool all = true;
		for (int i = 0; i < nsnap; i++) {
			char sd[64];
			snprintf(sd, sizeof(sd), "%s-snap%d", name, i);
			dir_of(snap, sizeof(snap), sd);
			struct readback *sb = calloc(1, sizeof(*sb));
			if (read_back(snap, sb, 2) < 0 || sb->errors)
				all = false;
			for (size_t j = 0; j < sb->n; j++) {
				struct per_stream *p = &sb->s[j];
				if (!p->order_ok || p->gaps || !p->ts_ok || p->first_seq != p->discarded ||
				    p->th >= NT || p->first_seq + p->events > emitted[p->th]) {
					all = false;
					printf("# snapshot %d stream %zu: first %" PRIu64 " discarded %" PRIu64
					       " events %" PRIu64 " order %d ts %d\n", i, j, p->first_seq,
					       p->discarded, p->events, p->order_ok, p->ts_ok);
				}
			}
			free(sb);
		}
		ok(all, "%s: snapshots: windows of consecutive events, losses counted", name);
	}
	free(rb);
}

/* ---------------------------------------------------- first events */

struct first_arg {
	pthread_t th;
	uint32_t idx;
	int tid;		/* atomic: set before the first event */
};

static void *first_main(void *arg)
{
	struct first_arg *a = arg;
	__atomic_store_n(&a->tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
	for (uint64_t i = 0; i < 3; i++)
		trawl_tracepoint(tst, seq, a->idx, i);
	return NULL;
}

/* 1: thread tid of this process is blocked in futex(2) on addr (what
 * /proc/self/task/TID/syscall shows); 0: not (yet); -1: this kernel does
 * not show it */
static int futex_waiting_on(int tid, const void *addr)
{
#ifdef SYS_futex
	char path[64], buf[256];
	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	long nr;
	unsigned long a0;
	return sscanf(buf, "%ld %lx", &nr, &a0) == 2 && nr == SYS_futex &&
	       a0 == (unsigned long)(uintptr_t)addr;
#else
	(void)tid, (void)addr;
	return -1;
#endif
}

/*
 * A thread's first event attaches a buffer under the library's lock. While
 * another thread holds it (registering its own buffer with a slow agent,
 * say; here the test holds it until every starting thread is seen blocked
 * on it), the first events of starting threads wait for it: none is lost.
 */
static void test_first_event_waits(void)
{
	enum { NT = 16 };
	char dir[512];
	dir_of(dir, sizeof(dir), "first");
	const char *globs[] = { "tst:seq" };
	struct trawl_ust_session *s = mk(dir, TRAWL_UST_DISCARD, 65536, 4, TRAWL_UST_CTX_VTID,
					 TRAWL_UST_HEADER_LARGE, TRAWL_UST_CLOCK_AUTO, globs, 1, -1);
	if (!ok(s && trawl_ust_session_start(s) == 0, "first events: start"))
		return;
	struct first_arg th[NT];
	tr_ust_lock_take();
	for (int i = 0; i < NT; i++) {
		th[i].idx = (uint32_t)i;
		th[i].tid = 0;
		pthread_create(&th[i].th, NULL, first_main, &th[i]);
	}
	/* the lock is given back only once every thread is provably waiting
	 * for it (blocked in futex(2) on it), however slow the machine:
	 * bounded */
	int waiting = 0, seen = 0;
	uint64_t end = tr_mono_ns() + WAIT_BOUND_NS;
	while (waiting < NT && seen >= 0 && tr_mono_ns() < end) {
		waiting = 0;
		for (int i = 0; i < NT && seen >= 0; i++) {
			int tid = __atomic_load_n(&th[i].tid, __ATOMIC_ACQUIRE);
			int w = tid ? futex_waiting_on(tid, &tr_ust_lock) : 0;
			if (w < 0)
				seen = -1;
			waiting += w > 0;
		}
		if (waiting < NT)
			usleep(1000);
	}
	tr_ust_lock_give();
	for (int i = 0; i < NT; i++)
		pthread_join(th[i].th, NULL);
	if (seen < 0)
		printf("ok %d # SKIP first events: this kernel does not show a thread's system call "
		       "(/proc/self/task/TID/syscall)\n", ++tap_n);
	else
		is_int(waiting, NT, "first events: all %d threads were blocked on the lock before "
		       "it was given back", NT);
	is_int(trawl_ust_session_stop(s), 0, "first events: stop");
	struct trawl_ust_stats st;
	trawl_ust_session_stats(s, &st);
	trawl_ust_session_free(s);
	ok(st.recorded == NT * 3 && st.discarded == 0 && st.buffers == NT,
	   "first events: a thread waits for the lock another holds: %" PRIu64 " recorded, %" PRIu64
	   " discarded, %" PRIu64 " buffers (want %d, 0, %d)", st.recorded, st.discarded, st.buffers,
	   NT * 3, NT);
}

/* ---------------------------------------------------------- residency */

/*
 * The trawl buffers (memfds) open in this process: up to max inode numbers
 * into ino; with want_new, the allocated bytes of the one whose inode is
 * not among the first nold of ino (-1: none, -2: more than one), and its
 * descriptor in *newfd (when not NULL).
 */
static long buffers(ino_t *ino, int max, int nold, bool want_new, int *n, int *newfd)
{
	long bytes = -1;
	*n = 0;
	for (int fd = 0; fd < 1024; fd++) {
		char link[64], target[128];
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		ssize_t len = readlink(link, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = 0;
		struct stat st;
		if (!strstr(target, "memfd:trawl-ust") || fstat(fd, &st) != 0)
			continue;
		if (!want_new) {
			if (*n < max)
				ino[(*n)++] = st.st_ino;
			continue;
		}
		bool old = false;
		for (int i = 0; i < nold; i++)
			old |= ino[i] == st.st_ino;
		if (!old) {
			bytes = bytes == -1 ? (long)st.st_blocks * 512 : -2;
			if (newfd)
				*newfd = fd;
		}
	}
	return bytes;
}

struct resid_arg {
	long resident;
	bool drained;		/* the consumer kept up, every time */
};

/*
 * 48 batches of events into a 16 x 4 KiB buffer (about a packet each); then
 * the allocated bytes of the buffer this thread got (the one memfd that is
 * new). After each batch the thread waits (bounded) until the consumer has
 * written out every finished packet (consumed = produced in the buffer's
 * header), then 4 ms more: every packet the consumer sees took longer than
 * tr_ust_reclaim_ns (1 ms) to fill, however late a loaded machine runs it.
 */
static void *resid_main(void *arg)
{
	struct resid_arg *a = arg;
	ino_t before[256];
	int nold, n, fd = -1;
	buffers(before, 256, 0, false, &nold, NULL);
	uint64_t seq = 0;
	const struct ust_shm *h = NULL;
	a->drained = true;
	uint64_t end = tr_mono_ns() + WAIT_BOUND_NS;
	for (int p = 0; p < 48; p++) {
		for (int i = 0; i < 200; i++, seq++)
			trawl_tracepoint(tst, seq, 7, seq);
		if (!h) {
			buffers(before, 256, nold, true, &n, &fd);
			void *m = fd >= 0 ? mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
			if (m == MAP_FAILED) {
				a->drained = false;
				break;
			}
			h = m;
		}
		while (__atomic_load_n(&h->consumed, __ATOMIC_ACQUIRE) !=
		       __atomic_load_n(&h->produced, __ATOMIC_ACQUIRE)) {
			if (tr_mono_ns() > end) {
				a->drained = false;
				break;
			}
			usleep(200);
		}
		usleep(4000);
	}
	a->resident = buffers(before, 256, nold, true, &n, NULL);
	if (h)
		munmap((void *)h, 4096);
	return NULL;
}

/*
 * A thread that fills a sub-buffer more slowly than tr_ust_reclaim_ns keeps
 * only a few of them resident: the consumer gives each back to the kernel
 * once written. The same thread without reclaiming holds all 16; both
 * traces hold every event in order.
 */
static void test_residency(void)
{
	uint64_t saved = tr_ust_reclaim_ns;
	for (int reclaim = 1; reclaim >= 0; reclaim--) {
		char dir[512];
		dir_of(dir, sizeof(dir), reclaim ? "resid" : "resid-kept");
		const char *globs[] = { "tst:seq" };
		struct trawl_ust_session *s = mk(dir, TRAWL_UST_DISCARD, 4096, 16, 0,
						 TRAWL_UST_HEADER_LARGE, TRAWL_UST_CLOCK_AUTO, globs, 1, -1);
		if (!ok(s && trawl_ust_session_start(s) == 0, "residency: start"))
			return;
		tr_ust_reclaim_ns = reclaim ? 1000000 : UINT64_MAX;
		struct resid_arg a = { 0 };
		pthread_t th;
		pthread_create(&th, NULL, resid_main, &a);
		pthread_join(th, NULL);
		is_int(trawl_ust_session_stop(s), 0, "residency: stop");
		struct trawl_ust_stats st;
		trawl_ust_session_stats(s, &st);
		trawl_ust_session_free(s);
		tr_ust_reclaim_ns = saved;
		struct readback rb;
		read_back(dir, &rb, 0);
		ok(st.recorded == 48 * 200 && st.discarded == 0 && rb.by_name[0] == 48 * 200 &&
		   rb.n == 1 && rb.s[0].order_ok && !rb.s[0].gaps,
		   "residency (%s): %" PRIu64 " recorded, %" PRIu64 " discarded, %" PRIu64
		   " read back in order", reclaim ? "reclaimed" : "kept", st.recorded, st.discarded,
		   rb.by_name[0]);
		ok(a.drained, "residency (%s): the consumer wrote out each packet (waited for, bounded)",
		   reclaim ? "reclaimed" : "kept");
		/* the data part: 16 sub-buffers of 4 KiB; the header page is one more */
		if (reclaim)
			ok(a.resident >= 0 && a.resident <= (4 + 1) * 4096,
			   "residency: a slow thread keeps %ld bytes of its 64 KiB buffer resident (<= 5 pages)",
			   a.resident);
		else
			ok(a.resident >= 16 * 4096,
			   "residency: without reclaiming, all of it stays: %ld bytes (>= 64 KiB)", a.resident);
	}
}

/* ---------------------------------------------------------- signals */

static void on_usr1_emit(int sig)
{
	(void)sig;
	trawl_tracepoint(tst, seq, 99, 0);
}

static void *self_lock_main(void *arg)
{
	(void)arg;
	/* this thread has no buffer yet and holds the lock: the handler's
	 * event must not wait for it (it would wait for itself) */
	tr_ust_lock_take();
	raise(SIGUSR1);
	tr_ust_lock_give();
	return NULL;
}

/* An event of a signal handler that interrupted its own thread inside the
 * library's locked code is counted as discarded, never a deadlock. */
static void test_signal_in_locked_code(void)
{
	char dir[512];
	dir_of(dir, sizeof(dir), "selflock");
	const char *globs[] = { "tst:seq" };
	struct trawl_ust_session *s = mk(dir, TRAWL_UST_DISCARD, 65536, 4, 0,
					 TRAWL_UST_HEADER_LARGE, TRAWL_UST_CLOCK_AUTO, globs, 1, -1);
	if (!ok(s && trawl_ust_session_start(s) == 0, "signal in locked code: start"))
		return;
	struct sigaction sa = { .sa_handler = on_usr1_emit }, old;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, &old);
	pthread_t th;
	pthread_create(&th, NULL, self_lock_main, NULL);
	pthread_join(th, NULL);
	sigaction(SIGUSR1, &old, NULL);
	is_int(trawl_ust_session_stop(s), 0, "signal in locked code: stop");
	struct trawl_ust_stats st;
	trawl_ust_session_stats(s, &st);
	trawl_ust_session_free(s);
	ok(st.recorded == 0 && st.discarded == 1,
	   "signal in locked code: the handler's event counted as discarded (%" PRIu64
	   " recorded, %" PRIu64 " discarded), no deadlock", st.recorded, st.discarded);
}

static volatile uint64_t sig_emitted;

static void on_alarm(int sig)
{
	(void)sig;
	trawl_tracepoint(tst, sig, sig_emitted);
	sig_emitted++;
}

static void test_signals(void)
{
	char dir[512];
	dir_of(dir, sizeof(dir), "signals");
	const char *globs[] = { "tst:seq", "tst:sig" };
	struct trawl_ust_session *s = mk(dir, TRAWL_UST_DISCARD, 8192, 4, 0,
					 TRAWL_UST_HEADER_FIXED, TRAWL_UST_CLOCK_AUTO, globs, 2, -1);
	if (!ok(s && trawl_ust_session_start(s) == 0, "signals: start"))
		return;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = { { 0, 20 }, { 0, 20 } };
	setitimer(ITIMER_REAL, &it, NULL);
	/* 400000 events, and on until the handler has emitted more than 10
	 * (a fast machine may be done before: bounded) */
	uint64_t n = 0;
	for (uint64_t end = tr_mono_ns() + WAIT_BOUND_NS;
	     n < 400000 || (sig_emitted <= 10 && (n & 1023 || tr_mono_ns() < end)); n++)
		trawl_tracepoint(tst, seq, 0, n);
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_REAL, &off, NULL);
	signal(SIGALRM, SIG_DFL);
	is_int(trawl_ust_session_stop(s), 0, "signals: stop");
	struct trawl_ust_stats st;
	trawl_ust_session_stats(s, &st);
	trawl_ust_session_free(s);
	uint64_t total = n + sig_emitted;
	ok(sig_emitted > 10, "signals: %" PRIu64 " events from the handler", (uint64_t)sig_emitted);
	is_int(st.recorded + st.discarded, total, "signals: stats: recorded + discarded = emitted");
	struct readback *rb = calloc(1, sizeof(*rb));
	ok(read_back(dir, rb, 0) == 0, "signals: read back");
	is_int(rb->errors, 0, "signals: no corruption (no read errors)");
	is_int(rb->n, 1, "signals: one stream");
	uint64_t disc = rb->n ? rb->s[0].discarded : 0;
	is_int(rb->total + disc, total, "signals: %" PRIu64 " read + %" PRIu64 " discarded = emitted",
	       rb->total, disc);
	ok(rb->n && rb->s[0].ts_ok, "signals: timestamps non-decreasing");
	printf("# signals: %" PRIu64 " seq, %" PRIu64 " sig events read\n", rb->by_name[0], rb->by_name[1]);
	free(rb);
}


/*
 * Signal handlers in every thread, also in a thread whose TLS destructors
 * (trawl's included) already ran: a later destructor raises SIGALRM in
 * its thread, and the handler's event has no buffer any more. It must
 * still be counted (as discarded), in the stats and in the trace.
 */
static uint64_t exit_sig_emitted;
static pthread_key_t late_key;

static void on_exit_alarm(int sig)
{
	(void)sig;
	trawl_tracepoint(tst, sig, 0);
	__atomic_fetch_add(&exit_sig_emitted, 1, __ATOMIC_RELAXED);
}

static void late_dtor(void *arg)
{
	(void)arg;
	for (int i = 0; i < 3; i++)
		pthread_kill(pthread_self(), SIGALRM);
}

static void *exit_sig_thread(void *arg)
{
	uint32_t th = (uint32_t)(uintptr_t)arg;
	for (uint64_t i = 0; i < 1000; i++)
		trawl_tracepoint(tst, seq, th, i);
	pthread_setspecific(late_key, (void *)1);
	return NULL;
}

static void test_signals_exiting_threads(void)
{
	char dir[512];
	dir_of(dir, sizeof(dir), "signals-exit");
	const char *globs[] = { "tst:seq", "tst:sig" };
	struct trawl_ust_session *s = mk(dir, TRAWL_UST_DISCARD, 65536, 4, 0,
					 TRAWL_UST_HEADER_LARGE, TRAWL_UST_CLOCK_AUTO, globs, 2, -1);
	if (!ok(s && trawl_ust_session_start(s) == 0, "signals in exiting threads: start"))
		return;
	/* created after the session's key: its destructor runs after trawl's */
	pthread_key_create(&late_key, late_dtor);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_exit_alarm;
	sigaction(SIGALRM, &sa, NULL);
	pthread_t th[4];
	for (unsigned i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, exit_sig_thread, (void *)(uintptr_t)i);
	for (unsigned i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	signal(SIGALRM, SIG_DFL);
	pthread_key_delete(late_key);
	struct trawl_ust_stats live;
	trawl_ust_session_stats(s, &live);
	is_int(trawl_ust_session_stop(s), 0, "signals in exiting threads: stop");
	struct trawl_ust_stats st;
	trawl_ust_session_stats(s, &st);
	trawl_ust_session_free(s);
	is_int(exit_sig_emitted, 12, "signals in exiting threads: 4 x 3 handler events");
	is_int(live.recorded + live.discarded, 4000 + 12,
	       "signals in exiting threads: stats before stop: recorded + discarded = emitted");
	is_int(st.recorded, 4000, "signals in exiting threads: stats: every event before exit recorded");
	is_int(st.discarded, 12, "signals in exiting threads: stats: the 12 handler events discarded");
	struct readback *rb = calloc(1, sizeof(*rb));
	ok(read_back(dir, rb, 0) == 0, "signals in exiting threads: read back");
	uint64_t disc = 0;
	for (size_t i = 0; i < rb->n; i++)
		disc += rb->s[i].discarded;
	is_int(rb->total, 4000, "signals in exiting threads: trace: 4000 events");
	is_int(disc, 12, "signals in exiting threads: trace: 12 counted as discarded");
	free(rb);
}

/* ---------------------------------------------------------- fork */

static __attribute__((unused)) void test_fork(void)
{
	char dir[512], cdir[600];
	dir_of(dir, sizeof(dir), "fork");
	const char *globs[] = { "tst:seq" };
	struct trawl_ust_session *s = mk(dir, TRAWL_UST_DISCARD, 65536, 4,
					 TRAWL_UST_CTX_VPID | TRAWL_UST_CTX_VTID,
					 TRAWL_UST_HEADER_FIXED, TRAWL_UST_CLOCK_AUTO, globs, 1, -1);
	if (!ok(s && trawl_ust_session_start(s) == 0, "fork: start"))
		return;
	for (uint64_t i = 0; i < 1000; i++)
		trawl_tracepoint(tst, seq, 1, i);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		for (uint64_t i = 0; i < 3000; i++)
			trawl_tracepoint(tst, seq, 2, i);
		exit(0);	/* the exit handler flushes the child's trace */
	}
	for (uint64_t i = 1000; i < 2000; i++)
		trawl_tracepoint(tst, seq, 1, i);
	int status = -1;
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "fork: child exited 0");
	is_int(trawl_ust_session_stop(s), 0, "fork: stop");
	trawl_ust_session_free(s);
	struct readback *rb = calloc(1, sizeof(*rb));
	ok(read_back(dir, rb, 2) == 0, "fork: read parent trace");
	ok(rb->n == 1 && rb->s[0].events == 2000 && rb->s[0].vpid == getpid() &&
	   rb->s[0].order_ok && !rb->s[0].gaps && rb->s[0].first_seq == 0,
	   "fork: parent stream: 2000 events in order, parent's vpid");
	snprintf(cdir, sizeof(cdir), "%s-%d", dir, (int)pid);
	ok(read_back(cdir, rb, 2) == 0, "fork: read child trace");
	ok(rb->n == 1 && rb->s[0].events == 3000 && rb->s[0].vpid == pid && rb->s[0].vtid == pid &&
	   rb->s[0].order_ok && !rb->s[0].gaps && rb->s[0].first_seq == 0,
	   "fork: child stream: its 3000 events, its own vpid");
	free(rb);
}

/* ---------------------------------------------------------- misc */

static void test_misc(void)
{
	char err[256] = "";
	struct trawl_ust_session_opts o;
	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	o.output = NULL;
	errno = 0;
	ok(trawl_ust_session_new(&o, err, sizeof(err)) == NULL && errno == EINVAL && strstr(err, "output"),
	   "discard mode without output: EINVAL (%s)", err);
	o.output = "x";
	o.subbuf_size = 5000;
	ok(trawl_ust_session_new(&o, err, sizeof(err)) == NULL && errno == EINVAL,
	   "sub-buffer size not a power of two: EINVAL");
	/* two sessions cannot record at once */
	char d1[512], d2[512];
	dir_of(d1, sizeof(d1), "busy1");
	dir_of(d2, sizeof(d2), "busy2");
	struct trawl_ust_session *a = mk(d1, TRAWL_UST_DISCARD, 0, 0, 0, 0, 0, NULL, 0, -1);
	struct trawl_ust_session *b = mk(d2, TRAWL_UST_DISCARD, 0, 0, 0, 0, 0, NULL, 0, -1);
	is_int(trawl_ust_session_start(a), 0, "first session starts");
	is_int(trawl_ust_session_start(b), -EBUSY, "second: -EBUSY");
	trawl_tracepoint(other, ev, 7);
	trawl_ust_session_free(a);
	trawl_ust_session_free(b);
	struct readback *rb = calloc(1, sizeof(*rb));
	ok(read_back(d1, rb, 0) == 0 && rb->by_name[4] == 1 && rb->total == 1,
	   "default options: all events, default buffers");
	free(rb);
}

/* ---------------------------------------------------------- sessions in turn */

struct relay {
	pthread_t th;
	int phase;		/* atomic: 1 emit, 2 done emitting, 3 quit */
	uint64_t emitted;
};

static void *relay_main(void *arg)
{
	struct relay *r = arg;
	for (;;) {
		int ph = __atomic_load_n(&r->phase, __ATOMIC_ACQUIRE);
		if (ph == 3)
			break;
		if (ph == 1) {
			for (int i = 0; i < 100; i++)
				trawl_tracepoint(tst, seq, 9, r->emitted++);
			__atomic_store_n(&r->phase, 2, __ATOMIC_RELEASE);
		}
		usleep(100);
	}
	return NULL;
}

/*
 * One thread lives across two sessions: its buffer of the first session is
 * freed with it, and its events of the second go to a new buffer. Also: an
 * event too big for a sub-buffer is counted as discarded; contexts procname
 * and cgroup_id are recorded.
 */
static void test_sessions_in_turn(void)
{
	struct relay r = { .phase = 0, .emitted = 0 };
	pthread_create(&r.th, NULL, relay_main, &r);
	bool all = true;
	for (int k = 0; k < 2; k++) {
		char dir[512], name[32];
		snprintf(name, sizeof(name), "turn%d", k);
		dir_of(dir, sizeof(dir), name);
		const char *globs[] = { "tst:seq" };
		struct trawl_ust_session *s = mk(dir, TRAWL_UST_DISCARD, 65536, 2,
						 TRAWL_UST_CTX_VPID | TRAWL_UST_CTX_VTID,
						 k ? TRAWL_UST_HEADER_LARGE : TRAWL_UST_HEADER_FIXED,
						 TRAWL_UST_CLOCK_AUTO, globs, 1, -1);
		if (!s || trawl_ust_session_start(s) < 0) {
			all = false;
			break;
		}
		__atomic_store_n(&r.phase, 1, __ATOMIC_RELEASE);
		for (uint64_t end = tr_mono_ns() + WAIT_BOUND_NS;
		     __atomic_load_n(&r.phase, __ATOMIC_ACQUIRE) != 2 && tr_mono_ns() < end;)
			usleep(100);
		if (__atomic_load_n(&r.phase, __ATOMIC_ACQUIRE) != 2) {
			printf("# session %d: the thread did not emit its 100 events\n", k);
			all = false;
		}
		trawl_ust_session_stop(s);
		trawl_ust_session_free(s);
		struct readback *rb = calloc(1, sizeof(*rb));
		if (read_back(dir, rb, 2) < 0 || rb->n != 1 || rb->total != 100 ||
		    rb->s[0].first_seq != (uint64_t)k * 100 || !rb->s[0].order_ok || rb->s[0].gaps) {
			all = false;
			printf("# session %d: %zu streams, %" PRIu64 " events\n", k, rb->n, rb->total);
		}
		free(rb);
	}
	__atomic_store_n(&r.phase, 3, __ATOMIC_RELEASE);
	pthread_join(r.th, NULL);
	ok(all, "a thread traced by two sessions in turn: 100 events in each, in order");

	char dir[512];
	dir_of(dir, sizeof(dir), "big");
	struct trawl_ust_session *s = mk(dir, TRAWL_UST_DISCARD, 4096, 2,
					 TRAWL_UST_CTX_PROCNAME | TRAWL_UST_CTX_CGROUP_ID,
					 TRAWL_UST_HEADER_FIXED, TRAWL_UST_CLOCK_AUTO, NULL, 0, -1);
	if (!ok(s && trawl_ust_session_start(s) == 0, "big: start"))
		return;
	static char big[5000];
	memset(big, 'x', sizeof(big) - 1);
	const int32_t arr[4] = { 0, 0, 0, 0 };
	trawl_tracepoint(tst, types, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, big, "", 0, arr, 0);
	trawl_tracepoint(tst, types, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "small", "", 0, arr, 0);
	trawl_ust_session_stop(s);
	struct trawl_ust_stats st;
	trawl_ust_session_stats(s, &st);
	trawl_ust_session_free(s);
	ok(st.recorded == 1 && st.discarded == 1, "event larger than a sub-buffer: counted as discarded");
	char err[256];
	const char *paths[] = { dir };
	struct trawl_reader_opts ro;
	memset(&ro, 0, sizeof(ro));
	ro.sz = sizeof(ro);
	struct trawl_reader *rd = trawl_reader_new(paths, 1, &ro, err, sizeof(err));
	const struct trawl_event *ev;
	int n = 0;
	bool ctx_ok = false;
	while (rd && trawl_reader_next(rd, &ev) > 0) {
		n++;
		/* procname (text array: one string value), then cgroup_id */
		ctx_ok = ev->values[0].s.len >= 8 && memcmp(ev->values[0].s.p, "test-ust", 8) == 0;
	}
	uint64_t disc = 0;
	if (rd) {
		const struct trawl_reader_trace *t = trawl_reader_trace_at(rd, 0);
		struct trawl_reader_stream_stats ss;
		trawl_reader_stream_stats(trawl_reader_trace_stream(t, 0), &ss);
		disc = ss.discarded;
	}
	trawl_reader_free(rd);
	ok(n == 1 && disc == 1, "big: the trace holds 1 event and counts 1 discarded");
	ok(ctx_ok, "procname context recorded");
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	snprintf(base, sizeof(base), "%s/trawl-test-ust-%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
		 (int)getpid());
	test_misc();
	test_types(TRAWL_UST_HEADER_FIXED, TRAWL_UST_CLOCK_AUTO, "types-fixed");
	test_types(TRAWL_UST_HEADER_LARGE, TRAWL_UST_CLOCK_MONOTONIC, "types-large-mono");
	test_stress(TRAWL_UST_DISCARD, TRAWL_UST_HEADER_FIXED, "discard");
	test_stress(TRAWL_UST_DISCARD, TRAWL_UST_HEADER_LARGE, "discard-large");
	test_stress(TRAWL_UST_OVERWRITE, TRAWL_UST_HEADER_FIXED, "overwrite");
	test_snapshot_open(TRAWL_UST_HEADER_LARGE, TRAWL_UST_CTX_VPID | TRAWL_UST_CTX_VTID, true,
			   "open-large-types");
	test_snapshot_open(TRAWL_UST_HEADER_FIXED, TRAWL_UST_CTX_VPID | TRAWL_UST_CTX_VTID |
			   TRAWL_UST_CTX_PROCNAME | TRAWL_UST_CTX_CGROUP_ID, false, "open-fixed-ctx");
	test_first_event_waits();
	test_residency();
	test_signal_in_locked_code();
	test_signals();
	test_signals_exiting_threads();
	test_sessions_in_turn();
#if defined(__SANITIZE_THREAD__)
	/* ThreadSanitizer cannot run threads in the child of a threaded
	 * fork() ("dup thread with used id"); the other builds test it */
	printf("ok %d # SKIP fork: not supported under ThreadSanitizer\n", ++tap_n);
#else
	test_fork();
#endif
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	if (!tap_fail && system(cmd) != 0)
		printf("# could not remove %s\n", base);
	return done_testing();
}
