/* SPDX-License-Identifier: MIT */
/*
 * bench-cpu: the clock this CPU actually runs at, and whether its neighbour
 * CPU shares its core, for the header of the benchmark's results (in a VM,
 * /proc/cpuinfo gives the nominal frequency, and the topology the
 * hypervisor chose to show).
 *
 *   clock: a chain of dependent 64-bit adds retires one add per cycle on
 *     every x86-64 core, so adds / second is the clock, with its boost;
 *     best of 5 runs of about 20 ms on CPU 0.
 *   neighbour: the throughput of independent adds on CPU 0 with the same
 *     loop running on CPU 1, over CPU 0's alone. About 1: separate cores;
 *     about 0.5: two threads of one core (SMT), where a busy sibling takes
 *     half of what a throughput-bound loop (trawl's decoding, much more
 *     than babeltrace2's) can issue.
 *
 * Prints "clock GHZ" and "neighbour RATIO" (or "neighbour n/a" with one
 * CPU). x86-64 only (elsewhere it prints "clock n/a").
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdint.h>
#include <unistd.h>

#include "util/clock.h"

#define RUNS 5

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

#if defined(__x86_64__)
/* n iterations of 8 dependent adds: 8 n cycles. */
static void chain(uint64_t n)
{
	uint64_t x = 0;

	for (uint64_t i = 0; i < n; i++)
		__asm__ volatile("add $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\t"
				 "add $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\tadd $1,%0" : "+r"(x));
}

/* n iterations of 8 adds in 4 independent chains: as many per cycle as
 * the core has ALUs to spare. */
static void wide(uint64_t n)
{
	uint64_t a = 0, b = 0, c = 0, d = 0;

	for (uint64_t i = 0; i < n; i++)
		__asm__ volatile("add $1,%0\n\tadd $1,%1\n\tadd $1,%2\n\tadd $1,%3\n\t"
				 "add $1,%0\n\tadd $1,%1\n\tadd $1,%2\n\tadd $1,%3"
				 : "+r"(a), "+r"(b), "+r"(c), "+r"(d));
}

/* The best rate of RUNS runs of f(n): iterations per ns. */
static double best(void (*f)(uint64_t), uint64_t n)
{
	double r = 0;

	for (int k = 0; k < RUNS; k++) {
		int64_t t0 = tr_clock_ns(CLOCK_MONOTONIC);
		f(n);
		double x = (double)n / (double)(tr_clock_ns(CLOCK_MONOTONIC) - t0);
		r = x > r ? x : r;
	}
	return r;
}

static volatile int stop;

static void *busy(void *arg)
{
	(void)arg;
	pin(1);
	while (!stop)
		wide(1u << 16);
	return NULL;
}

int main(void)
{
	const uint64_t n = 10000000;	/* 80 M cycles: about 20 ms */

	pin(0);
	chain(n / 10);			/* wakes the clock up */
	printf("clock %.2f\n", 8 * best(chain, n));
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		printf("neighbour n/a\n");
		return 0;
	}
	double alone = best(wide, n);
	pthread_t t;
	if (pthread_create(&t, NULL, busy, NULL)) {
		printf("neighbour n/a\n");
		return 0;
	}
	usleep(20000);
	double shared = best(wide, n);
	stop = 1;
	pthread_join(t, NULL);
	printf("neighbour %.2f\n", shared / alone);
	return 0;
}
#else
int main(void)
{
	(void)pin;
	printf("clock n/a\nneighbour n/a\n");
	return 0;
}
#endif
