/* SPDX-License-Identifier: MIT */
/*
 * lib/view: the scheduling rows (sched.c) on hand-made sequences of the
 * kernel model's changes (lib/kstate, applied first, as the view does):
 * the CPU intervals and thread states it emits, in order, exactly; and the
 * HTTP request parser of --serve (lib/util/http.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tap.h"
#include "kstate/kstate.h"
#include "util/http.h"
#include "view/view-internal.h"

struct ev {
	enum tr_vrow_kind kind;
	int64_t id, s, e;
	uint32_t v;
};
static struct ev got[64];
static int ngot;
static char names[16][32];
static int nnames = 1;

static int emit(void *arg, uint32_t host, enum tr_vrow_kind kind, int64_t id, int64_t s, int64_t e,
		uint32_t v)
{
	(void)arg;
	if (host != 7 || ngot >= 64)
		return -EINVAL;
	got[ngot++] = (struct ev){ kind, id, s, e, v };
	return 0;
}

static uint32_t name(void *arg, const char *s)
{
	(void)arg;
	for (int i = 1; i < nnames; i++)
		if (!strcmp(names[i], s))
			return (uint32_t)i;
	snprintf(names[nnames], sizeof(names[0]), "%s", s);
	return (uint32_t)nnames++;
}

static void expect(const char *what, const struct ev *want, int n)
{
	int same = ngot == n;

	for (int i = 0; same && i < n; i++)
		same = got[i].kind == want[i].kind && got[i].id == want[i].id && got[i].s == want[i].s &&
		       got[i].e == want[i].e && got[i].v == want[i].v;
	ok(same, "%s: %d intervals as expected", what, n);
	if (!same)
		for (int i = 0; i < ngot; i++)
			fprintf(stderr, "#   got %d: kind %d id %lld [%lld, %lld] v %u\n", i, got[i].kind,
				(long long)got[i].id, (long long)got[i].s, (long long)got[i].e, got[i].v);
	ngot = 0;
}

static struct tables m;
static struct strtab str;

/* c into the model, then into the rows (host 7) */
static int feed(struct tr_vsched *s, struct chg c)
{
	int rc = tr_state_apply(&m, &c, 0);
	return rc ? rc : tr_vsched_change(s, 7, &m, &str, &c);
}

static void sw(struct tr_vsched *s, int64_t ts, int32_t prev, int64_t state, int32_t next,
	       const char *comm)
{
	feed(s, (struct chg){ .ts = ts, .kind = TRAWL_STATE_SWITCH, .cpu = 0, .tid = prev,
			      .tid2 = next, .a = state, .str = tr_state_intern(&str, comm, 16) });
}

/* a system call on cpu: the thread the model has on it, as
 * tr_kin_changes() takes it without a tid context */
static void sc(struct tr_vsched *s, int16_t cpu, int64_t ts, const char *call, bool entry)
{
	feed(s, (struct chg){ .ts = ts, .cpu = cpu, .tid = tr_ks_cpu_tid(&m, (uint32_t)cpu),
			      .tid2 = -1, .str = tr_state_intern(&str, call, 16),
			      .kind = entry ? TRAWL_STATE_SYSCALL_ENTRY : TRAWL_STATE_SYSCALL_EXIT });
}

static void sched(void)
{
	struct tr_vsched_ops ops = { emit, name, NULL };
	struct tr_vsched *s = tr_vsched_new(&ops);
	const uint32_t H = 7;

	tr_tables_init(&m);
	ok(s != NULL, "tr_vsched_new");
	/* (emitted as each interval ends) cpu 0: idle -> 100 (a) at 10; 100 enters read at 20, blocks at 30
	 * (switch to 200, b); 200 wakes 100 at 40; 200 preempted (state 0) at
	 * 50 by 100, which leaves read at 60; everything ends at 70 */
	sw(s, 10, 0, 0, 100, "a");
	ok(tr_ks_cpu_tid(&m, 0) == 100, "cpu 0 runs 100");
	sc(s, 0, 20, "read", true);
	sw(s, 30, 100, 1, 200, "b");
	feed(s, (struct chg){ .ts = 40, .kind = TRAWL_STATE_WAKEUP, .cpu = 0, .tid = 200, .tid2 = 100,
			      .a = 0 });
	sw(s, 50, 200, 0, 100, "a");
	sc(s, 0, 60, "read", false);
	tr_vsched_close(s, H, 70);
	uint32_t a = name(NULL, "a 100"), b = name(NULL, "b 200"), rd = name(NULL, "read");
	const struct ev want[] = {
		{ TR_VROW_THREAD, 100, 10, 20, TR_VST_RUNNING },
		{ TR_VROW_CPU, 0, 10, 30, a },
		{ TR_VROW_THREAD, 100, 20, 30, TR_VST_SYSCALL | rd << 3 },
		{ TR_VROW_THREAD, 100, 30, 40, TR_VST_BLOCKED },
		{ TR_VROW_CPU, 0, 30, 50, b },
		{ TR_VROW_THREAD, 200, 30, 50, TR_VST_RUNNING },
		{ TR_VROW_THREAD, 100, 40, 50, TR_VST_RUNNABLE },
		{ TR_VROW_THREAD, 100, 50, 60, TR_VST_SYSCALL | rd << 3 },
		{ TR_VROW_CPU, 0, 50, 70, a },
		/* close: the threads in hash order; each thread's own in order */
	};
	int n = sizeof(want) / sizeof(want[0]);

	ok(ngot == n + 2, "two intervals closed at the end (%d)", ngot - n);
	struct ev last[2] = { got[n], got[n + 1] };

	ngot = n;
	expect("switch, syscall, block, wake, preempt, exit", want, n);
	bool r100 = false, r200 = false;

	for (int i = 0; i < 2; i++) {
		r100 |= last[i].id == 100 && last[i].s == 60 && last[i].e == 70 && last[i].v == TR_VST_RUNNING;
		r200 |= last[i].id == 200 && last[i].s == 50 && last[i].e == 70 && last[i].v == TR_VST_RUNNABLE;
	}
	ok(r100 && r200, "closing: 100 running [60, 70], 200 runnable [50, 70]");
	/* a syscall before any switch on a CPU (and no tid context) is nobody's */
	ok(tr_ks_cpu_tid(&m, 3) == -1, "a CPU never seen: unknown");
	sc(s, 3, 80, "write", true);
	ok(ngot == 0, "a syscall on a CPU not seen switching: nothing");
	tr_vsched_free(s);
	tr_tables_release(&m);
	tr_state_strtab_release(&str);
}

static void http(void)
{
	char p[32];

	is_int(tr_http_request("GET /tile/3?x HTTP/1.1\r\nHost: a\r\n\r\n", 36, p, sizeof(p)), TR_HTTP_GET,
	       "GET");
	is_str(p, "/tile/3", "its path, without the query");
	is_int(tr_http_request("HEAD / HTTP/1.0\n\n", 17, p, sizeof(p)), TR_HTTP_HEAD, "HEAD, bare LFs");
	is_int(tr_http_request("GET / HTTP/1.1\r\nHost:", 21, p, sizeof(p)), -EAGAIN, "header not ended");
	is_int(tr_http_request("POST / HTTP/1.1\r\n\r\n", 19, p, sizeof(p)), -ENOTSUP, "POST");
	is_int(tr_http_request("GET x HTTP/1.1\r\n\r\n", 18, p, sizeof(p)), -EINVAL, "not a path");
	const char *lng = "GET /aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa HTTP/1.1\r\n\r\n";

	is_int(tr_http_request(lng, strlen(lng), p, sizeof(p)), -EINVAL, "a path longer than the buffer");
	is_int(tr_http_request("GET /\x01 HTTP/1.1\r\n\r\n", 19, p, sizeof(p)), -EINVAL, "a control byte");
}

int main(void)
{
	sched();
	http();
	return done_testing();
}
