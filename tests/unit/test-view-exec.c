/* SPDX-License-Identifier: MIT */
/*
 * lib/view's scheduler model (sched.c) around exec: a thread that runs
 * exec is its new name from then on, on its CPU row: the CPU's interval
 * closes at the exec under the old name ("work.sh 501") and goes on under
 * the new one ("curl 501"); an exec by a thread on no CPU, or to the same
 * name, changes no interval.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tap.h"
#include "view/view-internal.h"

struct ev {
	enum tr_vrow_kind kind;
	int64_t id, s, e;
	char label[32];
};
static struct ev got[64];
static int ngot;
static char names[32][32];
static int nnames = 1;

static int emit(void *arg, uint32_t host, enum tr_vrow_kind kind, int64_t id, int64_t s, int64_t e,
		uint32_t v)
{
	(void)arg;
	if (host != 3 || ngot >= 64)
		return -EINVAL;
	got[ngot] = (struct ev){ kind, id, s, e, "" };
	if (kind == TR_VROW_CPU)
		snprintf(got[ngot].label, sizeof(got[ngot].label), "%s", v < 32 ? names[v] : "?");
	ngot++;
	return 0;
}

static uint32_t name(void *arg, const char *s)
{
	(void)arg;
	for (int i = 1; i < nnames; i++)
		if (!strcmp(names[i], s))
			return (uint32_t)i;
	if (nnames == 32)
		return 0;
	snprintf(names[nnames], sizeof(names[0]), "%s", s);
	return (uint32_t)nnames++;
}

/* the CPU intervals emitted, "[s, e) label; ..." */
static const char *cpu_rows(char *b, size_t n)
{
	size_t o = 0;
	b[0] = 0;
	for (int i = 0; i < ngot && o < n; i++)
		if (got[i].kind == TR_VROW_CPU)
			o += (size_t)snprintf(b + o, n - o, "[%lld, %lld) %s; ", (long long)got[i].s,
					      (long long)got[i].e, got[i].label);
	return b;
}

int main(void)
{
	struct tr_vsched_ops ops = { emit, name, NULL };
	struct tr_vsched *s = tr_vsched_new(&ops);
	const uint32_t H = 3;
	char b[512];

	ok(s != NULL, "tr_vsched_new");
	/* cpu 1: 501 (work.sh) on at 10, exec curl at 20, off at 30 (asleep);
	 * 502 execs at 35 while on no CPU; 501 back at 40 as curl, execs
	 * curl again at 45 (same name), off at 50 */
	tr_vsched_switch(s, H, 1, 10, 0, 0, 501, "work.sh");
	is_int(tr_vsched_exec(s, H, 1, 20, 501, "curl"), 0, "exec on a CPU");
	tr_vsched_switch(s, H, 1, 30, 501, 1, 0, "swapper/1");
	is_str(cpu_rows(b, sizeof(b)), "[10, 20) work.sh 501; [20, 30) curl 501; ",
	       "the CPU's time before the exec is work.sh's, after it curl's");
	ngot = 0;
	is_int(tr_vsched_exec(s, H, 1, 35, 502, "curl"), 0, "exec of a thread on no CPU");
	is_int(ngot, 0, "... emits nothing");
	tr_vsched_switch(s, H, 1, 40, 0, 0, 501, "curl");
	tr_vsched_exec(s, H, 1, 45, 501, "curl");
	tr_vsched_switch(s, H, 1, 50, 501, 1, 0, "swapper/1");
	is_str(cpu_rows(b, sizeof(b)), "[40, 50) curl 501; ",
	       "an exec to the same name: one interval");
	tr_vsched_free(s);
	return done_testing();
}
