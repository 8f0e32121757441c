/* SPDX-License-Identifier: MIT */
/*
 * tests/e2e/getppid-rate.c - a workload whose syscall rate is known:
 * getppid-rate N SECONDS makes exactly N getppid(2) calls each second (N/10
 * every 100 ms, at absolute deadlines of CLOCK_MONOTONIC, so the rate does
 * not drift with the time the calls take), for SECONDS seconds, then prints
 * the calls made. The raw syscall: no libc cache in the way.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 3)
		return fprintf(stderr, "usage: getppid-rate N SECONDS\n"), 2;
	long n = atol(argv[1]), secs = atol(argv[2]), done = 0;
	struct timespec t;

	if (n < 10 || n % 10 || secs < 1)
		return fprintf(stderr, "getppid-rate: N a multiple of 10, SECONDS >= 1\n"), 2;
	clock_gettime(CLOCK_MONOTONIC, &t);
	for (long tick = 0; tick < secs * 10; tick++) {
		for (long i = 0; i < n / 10; i++, done++)
			syscall(SYS_getppid);
		t.tv_nsec += 100 * 1000000L;
		if (t.tv_nsec >= 1000000000L) {
			t.tv_nsec -= 1000000000L;
			t.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL);
	}
	printf("%ld\n", done);
	return 0;
}
