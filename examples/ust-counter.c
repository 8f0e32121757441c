/* SPDX-License-Identifier: MIT */
/*
 * ust-counter: a program traced by the agent (no in-process session): each
 * thread emits numbered events and counts them, so a test can check that
 * the trace holds exactly what was emitted.
 *
 *   TRAWL_AGENT_SOCKET=S ust-counter [-n EVENTS] [-t THREADS] [-w] [-s USEC]
 *                                    [-c FILE] [-f] [-x] [-N] [-i]
 *     -n  events per thread (default 1000; 0: until killed)
 *     -t  threads (default 1)
 *     -w  wait (up to 10 s) until the event is enabled before emitting
 *     -s  sleep USEC between events
 *     -c  count in FILE: one u64 per thread, stored after each event
 *         returned (survives kill -9)
 *     -f  fork once the threads are done: the child emits the same again
 *     -x  then exec itself (with -n, -t) to emit the same again
 *     -N  nested: a SIGALRM handler emits events too (counter:sig), in every
 *         thread; each thread also raises it three times from a thread-exit
 *         destructor that runs after libtrawl's (the event then has no
 *         buffer and is counted as discarded)
 *     -i  print "ready" once events are enabled (or after -w's wait)
 *     -b  then block reading stdin: each line M emits M more events
 *         (thread 0, seq going on) and prints "emitted TOTAL"; EOF exits
 *   prints "emitted N" (the events every thread of this process emitted)
 */
#define TRAWL_TRACEPOINT_DEFINE
#include <trawl/tracepoint.h>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

TRAWL_TRACEPOINT_EVENT(counter, tick, TRAWL_LOGLEVEL_INFO,
	TRAWL_ARGS(uint32_t thread, uint64_t seq, int32_t phase, const char *tag),
	TRAWL_FIELDS(
		TRAWL_FIELD_INT(uint32_t, thread, thread)
		TRAWL_FIELD_INT(uint64_t, seq, seq)
		TRAWL_FIELD_INT(int32_t, phase, phase)
		TRAWL_FIELD_STRING(tag, tag)))

TRAWL_TRACEPOINT_EVENT(counter, debug, TRAWL_LOGLEVEL_DEBUG,
	TRAWL_ARGS(uint64_t seq), TRAWL_FIELDS(TRAWL_FIELD_INT(uint64_t, seq, seq)))

TRAWL_TRACEPOINT_EVENT(counter, sig, TRAWL_LOGLEVEL_INFO,
	TRAWL_ARGS(uint64_t n), TRAWL_FIELDS(TRAWL_FIELD_INT(uint64_t, n, n)))

static uint64_t nevents = 1000;
static unsigned usec;
static volatile uint64_t *counts;	/* shared file, one per thread */
static int phase;
static uint64_t sigs;			/* atomic: handlers run in every thread */
static pthread_key_t late_key;
static int late_set;			/* late_key exists (-N) */
static uint64_t first_seq;		/* run()'s first seq (-b: going on) */

static void *run(void *arg)
{
	uint32_t th = (uint32_t)(uintptr_t)arg;
	for (uint64_t i = first_seq; !nevents || i < first_seq + nevents; i++) {
		trawl_tracepoint(counter, tick, th, i, phase, "tick");
		trawl_tracepoint(counter, debug, i);
		if (counts)
			__atomic_store_n(&counts[th], i + 1, __ATOMIC_RELEASE);
		if (usec)
			usleep(usec);
	}
	return NULL;
}

static void on_alarm(int sig)
{
	(void)sig;
	trawl_tracepoint(counter, sig, __atomic_fetch_add(&sigs, 1, __ATOMIC_RELAXED));
}

/* A destructor that runs after libtrawl's (its key is created later):
 * signal handlers in an exiting thread */
static void late_dtor(void *arg)
{
	(void)arg;
	for (int i = 0; i < 3; i++)
		pthread_kill(pthread_self(), SIGALRM);
}

static void *run_worker(void *arg)
{
	void *r = run(arg);
	if (late_set)
		pthread_setspecific(late_key, (void *)1);
	return r;
}

/* Thread 0 is the main thread. With -N the SIGALRM handler runs in any
 * thread, interrupting its events (nested events are counted as
 * discarded), and also after a worker's exit handlers ran (late_dtor):
 * events without a buffer, counted as discarded too. */
static uint64_t run_threads(unsigned nt)
{
	pthread_t th[64];
	for (unsigned i = 1; i < nt; i++)
		pthread_create(&th[i], NULL, run_worker, (void *)(uintptr_t)i);
	run((void *)(uintptr_t)0);
	for (unsigned i = 1; i < nt; i++)
		pthread_join(th[i], NULL);
	return nevents * nt;
}

int main(int argc, char **argv)
{
	unsigned nt = 1;
	int wait = 0, do_fork = 0, do_exec = 0, nested = 0, ready = 0, block = 0, opt;
	const char *cfile = NULL;
	while ((opt = getopt(argc, argv, "n:t:ws:c:fxNibP:")) != -1) {
		switch (opt) {
		case 'n': nevents = strtoull(optarg, NULL, 10); break;
		case 't': nt = (unsigned)atoi(optarg); break;
		case 'w': wait = 1; break;
		case 's': usec = (unsigned)atoi(optarg); break;
		case 'c': cfile = optarg; break;
		case 'f': do_fork = 1; break;
		case 'x': do_exec = 1; break;
		case 'N': nested = 1; break;
		case 'i': ready = 1; break;
		case 'b': block = 1; break;
		case 'P': phase = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: ust-counter [-n N] [-t T] [-w] [-s USEC] [-c FILE] "
				"[-f] [-x] [-N] [-i] [-b]\n");
			return 2;
		}
	}
	if (nt < 1 || nt > 64)
		return 2;
	if (cfile) {
		int fd = open(cfile, O_RDWR | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || ftruncate(fd, 64 * 8) < 0)
			return 1;
		counts = mmap(NULL, 64 * 8, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		close(fd);
		if (counts == MAP_FAILED)
			return 1;
	}
	for (int i = 0; wait && i < 10000 && !trawl_tracepoint_enabled(counter, tick); i++)
		usleep(1000);
	if (ready) {
		printf("ready %d\n", trawl_tracepoint_enabled(counter, tick) ? 1 : 0);
		fflush(stdout);
	}
	if (nested) {
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_alarm;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGALRM, &sa, NULL);
		late_set = pthread_key_create(&late_key, late_dtor) == 0;
		struct itimerval it = { { 0, 200 }, { 0, 200 } };
		setitimer(ITIMER_REAL, &it, NULL);
	}
	uint64_t n = run_threads(nt);
	if (nested) {
		struct itimerval it = { { 0, 0 }, { 0, 0 } };
		setitimer(ITIMER_REAL, &it, NULL);
	}
	printf("emitted %llu\n", (unsigned long long)n);
	if (nested)
		printf("signals %llu\n",
		       (unsigned long long)__atomic_load_n(&sigs, __ATOMIC_RELAXED));
	fflush(stdout);
	/* -b: more events on demand, the process (and its buffers) staying */
	for (char line[64]; block && fgets(line, sizeof(line), stdin);) {
		first_seq += nevents;
		nevents = strtoull(line, NULL, 10);
		if (!nevents)
			continue;
		run((void *)(uintptr_t)0);
		n += nevents;
		printf("emitted %llu\n", (unsigned long long)n);
		fflush(stdout);
	}
	if (do_fork) {
		pid_t pid = fork();
		if (pid == 0) {
			phase = 1;
			uint64_t m = run_threads(nt);
			printf("child %d emitted %llu\n", (int)getpid(), (unsigned long long)m);
			fflush(stdout);
			exit(0);
		}
		int st;
		waitpid(pid, &st, 0);
	}
	if (do_exec) {
		char nb[32], tb[16];
		snprintf(nb, sizeof(nb), "%llu", (unsigned long long)nevents);
		snprintf(tb, sizeof(tb), "%u", nt);
		execl("/proc/self/exe", argv[0], "-n", nb, "-t", tb, "-P", "2", (char *)NULL);
		perror("exec");
		return 1;
	}
	return 0;
}
