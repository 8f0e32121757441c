/* SPDX-License-Identifier: MIT */
/*
 * bench-sync - clock synchronization figures:
 *   1. matched pairs per second, batch and incremental (same messages);
 *   2. the incremental form's memory over 10^8 messages (RSS before and
 *      after, and the bytes it holds), which must not grow;
 *   3. the accuracy table of docs/sync.md: bound and true error in us for
 *      LAN-like delays, beside the reference figures of the research notes.
 * Usage: bench-sync [MESSAGES_FOR_RATES [MESSAGES_FOR_MEMORY]]
 * (defaults 2000000 and 100000000).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../tests/unit/sync-gen.h"
#include "trawl/sync.h"
#include "util/clock.h"

static long rss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long v = -1;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			v = strtol(line + 6, NULL, 10);
	fclose(f);
	return v;
}

/* LAN-like link: A->B and B->A each at `rate` msg/s for `secs`. */
static void make(double rate, double secs, double dab, double dba, uint64_t seed,
		 struct gen_clock *A, struct gen_clock *B,
		 struct trawl_sync_msg **ab, size_t *nab, struct trawl_sync_msg **ba, size_t *nba)
{
	struct gen_rng rng = { seed };
	struct gen_link l = { rate, 0, secs * 1e9, dab, 5000, GEN_EXP, 0, 0, 1 };
	size_t c1 = 0, c2 = 0;
	*nab = *nba = 0;
	*ab = *ba = NULL;
	gen_messages(&rng, A, B, &l, ab, nab, &c1);
	l.min_delay = dba;
	gen_messages(&rng, B, A, &l, ba, nba, &c2);
}

static void rates(size_t n)
{
	struct gen_clock A = { 1700000000000000000ll, 0, 0, 0, 0 };
	struct gen_clock B = { 1700000000000000000ll, 3.2e9, 25e-6, 0, 0 };
	struct trawl_sync_msg *ab, *ba;
	size_t nab, nba;
	double secs = (double)n / 2 / 1000;	/* 1000 msg/s each way */
	make(1000, secs, 20000, 20000, 1, &A, &B, &ab, &nab, &ba, &nba);

	struct trawl_sync_pair r;
	double t0 = tr_mono_s();
	trawl_sync_pair_compute(ab, nab, ba, nba, NULL, &r, NULL, 0);
	double t1 = tr_mono_s();
	trawl_sync_pair_release(&r);

	struct trawl_sync_inc *s = trawl_sync_inc_new(NULL);
	double t2 = tr_mono_s();
	size_t i = 0, j = 0;
	while (i < nab || j < nba) {	/* in time order, as a relay sees them */
		if (j == nba || (i < nab && ab[i].send <= ba[j].recv)) {
			trawl_sync_inc_add(s, TRAWL_SYNC_AB, ab[i].send, ab[i].recv);
			i++;
		} else {
			trawl_sync_inc_add(s, TRAWL_SYNC_BA, ba[j].send, ba[j].recv);
			j++;
		}
	}
	trawl_sync_inc_result(s, &r);
	double t3 = tr_mono_s();
	printf("pairs                 %zu matched messages (%zu + %zu), %.0f s at 1000/s each way\n",
	       nab + nba, nab, nba, secs);
	printf("batch                 %.2f M pairs/s (%.3f s, sort + hulls + solve)\n",
	       (nab + nba) / (t1 - t0) / 1e6, t1 - t0);
	printf("incremental           %.2f M pairs/s (%.3f s, add one by one + result)\n",
	       (nab + nba) / (t3 - t2) / 1e6, t3 - t2);
	printf("incremental hulls     %zu + %zu vertices kept, quality %s\n", r.hull_ab, r.hull_ba,
	       trawl_sync_quality_name(r.quality));
	trawl_sync_pair_release(&r);
	trawl_sync_inc_free(s);
	free(ab);
	free(ba);
}

/* 10^8 messages generated on the fly: nothing but the state is kept. */
static void memory(uint64_t n)
{
	struct gen_clock A = { 1700000000000000000ll, 0, -13e-6, 0, 0 };
	struct gen_clock B = { 1700000000000000000ll, 3.2e9, 25e-6, 0, 0 };
	struct gen_rng rng = { 7 };
	struct trawl_sync_inc *s = trawl_sync_inc_new(NULL);
	struct trawl_sync_pair r;
	long rss0 = rss_kib(), rss_mid = 0;
	double t0 = tr_mono_s();
	size_t maxh = 0;
	/* 10 000 msg/s each way: 10^8 messages = 83 min of trace. */
	for (uint64_t k = 0; k < n; k++) {
		long double t = (long double)(k / 2) * 1e5L + 1e5L * gen_u(&rng);
		double d = 20000 - 5000 * log(1 - gen_u(&rng));
		if (k & 1)
			trawl_sync_inc_add(s, TRAWL_SYNC_BA, gen_local(&B, t), gen_local(&A, t + d));
		else
			trawl_sync_inc_add(s, TRAWL_SYNC_AB, gen_local(&A, t), gen_local(&B, t + d));
		if ((k & ((1u << 22) - 1)) == 0) {
			trawl_sync_inc_result(s, &r);
			if (r.hull_ab > maxh)
				maxh = r.hull_ab;
			if (r.hull_ba > maxh)
				maxh = r.hull_ba;
			trawl_sync_pair_release(&r);
			if (k == n / 2 - (n / 2) % (1u << 22))
				rss_mid = rss_kib();
		}
	}
	double t1 = tr_mono_s();
	trawl_sync_inc_result(s, &r);
	long rss1 = rss_kib();
	printf("memory                %llu messages (incremental, generated on the fly, %.1f s incl. generation)\n",
	       (unsigned long long)n, t1 - t0);
	printf("memory                state %zu bytes; RSS %ld KiB before, %ld KiB at half, %ld KiB at end\n",
	       trawl_sync_inc_memory(s), rss0, rss_mid, rss1);
	printf("memory                hulls kept: max %zu vertices seen, %zu + %zu at end; quality %s, "
	       "bound at mid %lld ns\n", maxh, r.hull_ab, r.hull_ba, trawl_sync_quality_name(r.quality),
	       (long long)trawl_sync_pair_bound(&r, r.fwd.t0));
	trawl_sync_pair_release(&r);
	trawl_sync_inc_free(s);
}

static void accuracy(const char *label, double rate, double dab, double dba, const char *ref)
{
	struct gen_clock A = { 1700000000000000000ll, 0, 0, 0, 0 };
	struct gen_clock B = { 1700000000000000000ll, 3.2e9, 25e-6, 0, 0 };
	struct trawl_sync_msg *ab, *ba;
	size_t nab, nba;
	struct trawl_sync_pair r;
	double emax = 0, bmid = 0, bmax = 0, emid = 0;

	make(rate, 60, dab, dba, 4242, &A, &B, &ab, &nab, &ba, &nba);
	trawl_sync_pair_compute(ab, nab, ba, nba, NULL, &r, NULL, 0);
	for (int k = 0; k <= 600; k++) {
		int64_t x = A.base + (int64_t)(k * 1e8);
		double e = (double)fabsl((long double)(trawl_sync_xform_apply(&r.fwd, x) - B.base) -
					 gen_map(&A, &B, x)) / 1000;
		double b = trawl_sync_pair_bound(&r, x) / 1000.0;
		if (e > emax)
			emax = e;
		if (b > bmax)
			bmax = b;
		if (k == 300) {
			emid = e;
			bmid = b;
		}
	}
	printf("| %-34s | %-8s | %7.3f | %7.3f | %7.2f | %7.2f | %-22s |\n", label,
	       trawl_sync_quality_name(r.quality), emid, emax, bmid, bmax, ref);
	trawl_sync_pair_release(&r);
	free(ab);
	free(ba);
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 2000000;
	uint64_t nm = argc > 2 ? strtoull(argv[2], NULL, 10) : 100000000;

	rates(n);
	if (nm)
		memory(nm);
	printf("\naccuracy: 60 s, drift 25 ppm, delay = minimum + exp(mean 5 us), periodic sends\n");
	printf("| %-34s | %-8s | %-7s | %-7s | %-7s | %-7s | %-22s |\n", "case", "quality",
	       "err mid", "err max", "bnd mid", "bnd max", "notes' figure (error)");
	printf("|%s|%s|%s|%s|%s|%s|%s|\n", "------------------------------------", "----------",
	       "---------", "---------", "---------", "---------", "------------------------");
	accuracy("symmetric 20 us, 100 msg/s", 100, 20000, 20000, "0.04 us, band +-20 us");
	accuracy("asymmetric 20/40 us, 100 msg/s", 100, 20000, 40000, "10 us, band +-30 us");
	accuracy("symmetric 20 us, 1 msg/s", 1, 20000, 20000, "1.7 us");
	accuracy("asymmetric 20/40 us, 1 msg/s", 1, 20000, 40000, "-");
	accuracy("symmetric 20 us, 10 msg/s", 10, 20000, 20000, "-");
	printf("(us; err = |true - estimate|, bnd = the reported bound; trace-cmd ptp: ~2 us)\n");
	return 0;
}
