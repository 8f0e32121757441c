/* SPDX-License-Identifier: MIT */
/*
 * The workload of t1000 (analyses against lttng-analyses and ground
 * truth): a thread that sleeps 10 ms N times (clock_nanosleep), and a
 * thread that burns about half a CPU (busy 5 ms, asleep 5 ms) for the same
 * time. Prints "sleeper TID", "burner TID CPU_NS" (its own CPU time, from
 * its thread CPU clock) when done.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int n = 20;

static long long now(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static void *sleeper(void *arg)
{
	(void)arg;
	printf("sleeper %ld\n", (long)syscall(SYS_gettid));
	struct timespec ts = { 0, 10000000 };
	for (int i = 0; i < n; i++)
		clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
	return NULL;
}

static void *burner(void *arg)
{
	(void)arg;
	long long end = now(CLOCK_MONOTONIC) + n * 10000000ll;
	struct timespec half = { 0, 5000000 };
	while (now(CLOCK_MONOTONIC) < end) {
		long long t = now(CLOCK_MONOTONIC) + 5000000;
		while (now(CLOCK_MONOTONIC) < t)
			;
		clock_nanosleep(CLOCK_MONOTONIC, 0, &half, NULL);
	}
	printf("burner %ld %lld\n", (long)syscall(SYS_gettid), now(CLOCK_THREAD_CPUTIME_ID));
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b;
	if (argc > 1)
		n = atoi(argv[1]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	pthread_create(&a, NULL, sleeper, NULL);
	pthread_create(&b, NULL, burner, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}
