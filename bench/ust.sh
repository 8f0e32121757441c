#!/bin/sh
# bench/ust.sh - user-space tracepoints: trawl against lttng-ust 2.13, on one
# machine, in one run, interleaved (a slow period of the shared machine hits
# both). Same event on both sides: 3 integers and a short string (u64 seq,
# s32 tid, s64 val, "hello"); same buffers: 8 sub-buffers of 256 KiB (trawl:
# per thread; lttng-ust: per CPU, per-UID channel); N events in total split
# over T threads, between a barrier and a CLOCK_MONOTONIC read (the method of
# the lttng-ust anchor script).
#
# Figures, median over RUNS (min-max):
#   ns/event enabled, T = 1 and 2, discard and overwrite modes (overwrite:
#     trawl's flight recorder / an lttng snapshot session, nothing drained)
#   ns/event disabled (compiled in, no session) and the empty loop
#   events lost (flat out, discard mode) and bytes/event on disk
#   zero-loss check: one thread paced at RATE events/s (default 5 M/s) for
#     SECONDS seconds with default buffers; events lost on each side:
#     trawl in-process session, trawl through `trawl agent --oneshot` (the
#     deployment: the agent process drains the application's buffers), and
#     lttng-ust with its default channel (no channel options)
#   trawl only: per-thread vs per-CPU buffer prototypes (producer cost),
#     fixed vs large event header, TSC vs CLOCK_MONOTONIC timestamps
#
#   TRAWL_BUILD=build sh bench/ust.sh        (env: RUNS=3 N=10000000
#                                             RATE=5000000 SECONDS=5 WORK=...)
#   PACED_ONLY=1 SECONDS=3 RUNS=5 ...        only the zero-loss check, with
#                                             one line per run (emitted,
#                                             recorded, discarded, lost)
# lttng-ust needs root to install (apt) or an installed lttng-tools; without
# it the trawl figures are printed alone. Starts its own lttng-sessiond if
# none runs and stops it (by pid) at exit; touches no other session.
set -u
: "${TRAWL_BUILD:?set TRAWL_BUILD to a build directory}"
SRC=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${RUNS:-3}
N=${N:-10000000}
RATE=${RATE:-5000000}
SECS=${SECONDS_PACED:-${SECONDS:-5}}
WORK=${WORK:-$TRAWL_BUILD/bench/ust-work}
BENCH=$TRAWL_BUILD/bench/bench-ust
mkdir -p "$WORK" || exit 1
[ -x "$BENCH" ] || make -s -C "$SRC" O="$TRAWL_BUILD" "$BENCH" || exit 1
RAW=$WORK/raw.txt
: > "$RAW"

# ---------------------------------------------------------------- lttng side
LTTNG=0
if command -v lttng >/dev/null 2>&1 && [ -e /usr/include/lttng/tracepoint.h ] &&
   command -v babeltrace2 >/dev/null 2>&1; then
	LTTNG=1
elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		lttng-tools liblttng-ust-dev babeltrace2 >/dev/null 2>&1 && LTTNG=1
fi
OWN_SESSIOND=""
cleanup() {
	if [ "$LTTNG" = 1 ]; then
		for s in $(lttng list 2>/dev/null | awk '/^ *[0-9]+\) trawlb_/{print $2}'); do
			lttng destroy "$s" >/dev/null 2>&1
		done
	fi
	if [ -n "$OWN_SESSIOND" ]; then
		kill "$OWN_SESSIOND" 2>/dev/null
	fi
}
trap cleanup EXIT
if [ "$LTTNG" = 1 ]; then
	L=$WORK/lttng
	mkdir -p "$L"
	cat > "$L/tp.h" <<'EOF'
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER bench
#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./tp.h"
#if !defined(BENCH_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define BENCH_TP_H
#include <lttng/tracepoint.h>
LTTNG_UST_TRACEPOINT_EVENT(bench, ev,
  LTTNG_UST_TP_ARGS(uint64_t, seq, int32_t, tid, int64_t, val, const char *, msg),
  LTTNG_UST_TP_FIELDS(
    lttng_ust_field_integer(uint64_t, seq, seq)
    lttng_ust_field_integer(int32_t, tid, tid)
    lttng_ust_field_integer(int64_t, val, val)
    lttng_ust_field_string(msg, msg)))
#endif
#include <lttng/tracepoint-event.h>
EOF
	cat > "$L/tp.c" <<'EOF'
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "tp.h"
EOF
	# the same loop as bench-ust.c (barrier, CLOCK_MONOTONIC, optional pacing)
	cat > "$L/bench.c" <<'EOF'
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>
#include "tp.h"
static uint64_t nevents, rate; static int nthreads; static double tsc_per_ns;
static pthread_barrier_t bar; static uint64_t t_start[64], t_end[64];
static uint64_t now_ns(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return (uint64_t)t.tv_sec*1000000000ull+t.tv_nsec;}
static void *worker(void *arg){
  int idx=(int)(intptr_t)arg; uint64_t n=nevents/nthreads; int32_t tid=(int32_t)syscall(SYS_gettid);
  pthread_barrier_wait(&bar);
  uint64_t t0=now_ns(), c0=__rdtsc(); double gap=rate? tsc_per_ns*1e9/(double)rate:0;
  for(uint64_t i=0;i<n;i++){
    if(rate){uint64_t due=c0+(uint64_t)(gap*(double)i); while(__rdtsc()<due) __builtin_ia32_pause();}
    lttng_ust_tracepoint(bench, ev, i, tid, (int64_t)(i*7), "hello");
  }
  t_end[idx]=now_ns(); t_start[idx]=t0; return NULL;
}
int main(int argc,char**argv){
  nevents=argc>1?strtoull(argv[1],0,10):10000000ull; nthreads=argc>2?atoi(argv[2]):1; rate=argc>3?strtoull(argv[3],0,10):0;
  uint64_t a=now_ns(),ca=__rdtsc(); struct timespec d={0,20000000}; nanosleep(&d,NULL);
  tsc_per_ns=(double)(__rdtsc()-ca)/(double)(now_ns()-a);
  pthread_t th[64]; pthread_barrier_init(&bar,NULL,nthreads);
  for(int i=0;i<nthreads;i++) pthread_create(&th[i],NULL,worker,(void*)(intptr_t)i);
  for(int i=0;i<nthreads;i++) pthread_join(th[i],NULL);
  uint64_t s=t_start[0],e=t_end[0]; double sum=0;
  for(int i=0;i<nthreads;i++){ if(t_start[i]<s)s=t_start[i]; if(t_end[i]>e)e=t_end[i]; sum+=(double)(t_end[i]-t_start[i])/(nevents/nthreads);}
  uint64_t tot=(nevents/nthreads)*nthreads;
  printf("events=%llu threads=%d ns_per_event_wall=%.2f ns_per_event_thread=%.2f Mev_per_s=%.3f\n",
    (unsigned long long)tot,nthreads,(double)(e-s)/tot,sum/nthreads,tot/((double)(e-s)/1e3));
  return 0;
}
EOF
	# the same loop alignment as trawl's benchmark (Makefile BENCH_CFLAGS):
	# unaligned, the disabled loop measured 0.5 or 1.2 ns by its placement
	(cd "$L" && gcc -O2 -falign-loops=64 -I. -o bench bench.c tp.c -llttng-ust -ldl -lpthread) || LTTNG=0
fi
if [ "$LTTNG" = 1 ]; then
	if [ "$(id -u)" = 0 ]; then RUNDIR=/var/run/lttng; else RUNDIR=$HOME/.lttng; fi
	if ! lttng list >/dev/null 2>&1; then
		lttng-sessiond --daemonize --no-kernel >/dev/null 2>&1 &&
			OWN_SESSIOND=$(cat "$RUNDIR/lttng-sessiond.pid" 2>/dev/null)
	fi
	lttng list >/dev/null 2>&1 || LTTNG=0
fi
[ "$LTTNG" = 1 ] || echo "# lttng-ust is not available here: trawl figures only"

# --------------------------------------------------------------- one run
kv() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
dusb() { du -sb "$1" 2>/dev/null | awk '{print $1}'; }
bt_count() { babeltrace2 -c sink.utils.counter -p step=+0 "$1" 2>/dev/null | awk '/Event messages/{print $1}'; }

# rec TOOL SCENARIO THREADS ns_wall ns_thread lost bytes_per_event
rec() { echo "$*" >> "$RAW"; }

trawl_run() {	# scenario threads [bench options]
	scn=$1 t=$2; shift 2
	line=$("$BENCH" -n "$n" -t "$t" -o "$WORK/trawl-trace" "$@")
	rec trawl "$scn" "$t" "$(kv "$line" ns_per_event_wall)" "$(kv "$line" ns_per_event_thread)" \
		"$(kv "$line" lost)" "$(kv "$line" bytes_per_event)"
}

# the paced run through the agent: a one-shot agent (default settings:
# buffers 8 x 256 KiB per thread, drained every 2 ms) records the benchmark
# program, which registers with it (TRAWL_AGENT_SOCKET)
agent_run() {	# scenario threads rate
	scn=$1 t=$2 rate=$3 dir="$WORK/agent-trace" sock="$WORK/agent.sock"
	rm -rf "$dir" "$sock" "$WORK/agent.pid"
	# setsid: the agent in a session (autogroup) of its own, as a daemon
	# is, so the spinning producer's group does not starve it
	setsid "$TRAWL_BUILD/trawl" agent --oneshot --socket "$sock" -o "$dir" --enable 'bench:ev' \
		--pidfile "$WORK/agent.pid" 2> "$WORK/agent.err" &
	apid=$!
	for i in $(seq 200); do [ -S "$sock" ] && [ -s "$WORK/agent.pid" ] && break; sleep 0.05; done
	line=$(TRAWL_AGENT_SOCKET="$sock" "$BENCH" -n "$n" -t "$t" -m agent -r "$rate")
	kill -TERM "$apid"
	wait "$apid"
	cnt=$("$BENCH" -m count -o "$dir")
	ev=$(kv "$line" events) got=$(kv "$cnt" recorded) disc=$(kv "$cnt" discarded)
	echo "# $scn: emitted=$ev recorded=$got discarded=$disc lost=$((ev - got))" \
		"rate=$(kv "$line" Mev_per_s)M/s" >&2
	rec trawl-agent "$scn" "$t" "$(kv "$line" ns_per_event_wall)" \
		"$(kv "$line" ns_per_event_thread)" "$((ev - got))" "$(kv "$cnt" bytes_per_event)"
	rm -rf "$dir"
}

# the paced run, lttng-ust with its default channel (the one `lttng
# enable-event -u` creates when no channel is given)
lttng_default_run() {	# scenario threads rate
	scn=$1 t=$2 rate=$3 sess="trawlb_$$" dir="$WORK/lttng-trace"
	rm -rf "$dir"
	lttng create "$sess" --output="$dir" >/dev/null
	lttng enable-event -u -s "$sess" bench:ev >/dev/null
	lttng start "$sess" >/dev/null
	line=$("$L/bench" "$n" "$t" "$rate")
	lttng stop "$sess" >/dev/null 2>&1
	lttng destroy "$sess" >/dev/null
	got=$(bt_count "$dir")
	ev=$(kv "$line" events)
	echo "# $scn: emitted=$ev recorded=${got:-0} lost=$((ev - ${got:-0}))" \
		"rate=$(kv "$line" Mev_per_s)M/s" >&2
	rec lttng "$scn" "$t" "$(kv "$line" ns_per_event_wall)" "$(kv "$line" ns_per_event_thread)" \
		"$((ev - ${got:-0}))" -
	rm -rf "$dir"
}

lttng_run() {	# scenario threads [rate]
	scn=$1 t=$2 rate=${3:-0} sess="trawlb_$$" dir="$WORK/lttng-trace"
	rm -rf "$dir"
	case $scn in
	disabled)
		line=$("$L/bench" "$n" "$t")
		rec lttng "$scn" "$t" "$(kv "$line" ns_per_event_wall)" "$(kv "$line" ns_per_event_thread)" - -
		return ;;
	overwrite) lttng create "$sess" --snapshot --output="$dir" >/dev/null ;;
	*) lttng create "$sess" --output="$dir" >/dev/null ;;
	esac
	ow=""
	[ "$scn" = overwrite ] && ow="--overwrite"
	lttng enable-channel -u -s "$sess" --subbuf-size 256K --num-subbuf 8 $ow ch >/dev/null
	lttng enable-event -u -s "$sess" -c ch bench:ev >/dev/null
	lttng start "$sess" >/dev/null
	line=$("$L/bench" "$n" "$t" "$rate")
	lttng stop "$sess" >/dev/null 2>&1
	lttng destroy "$sess" >/dev/null
	lost=- bpe=-
	if [ "$scn" != overwrite ]; then
		got=$(bt_count "$dir")
		lost=$(( $(kv "$line" events) - ${got:-0} ))
		bpe=$(awk -v b="$(dusb "$dir")" -v n="${got:-0}" 'BEGIN { if (n > 0) printf "%.2f", b / n; else print "-" }')
	fi
	rec lttng "$scn" "$t" "$(kv "$line" ns_per_event_wall)" "$(kv "$line" ns_per_event_thread)" "$lost" "$bpe"
	rm -rf "$dir"
}

# Each paced run starts once the previous run's trace is on disk (sync):
# otherwise its writeback (about 0.5 GB) competes with the next recorder.
paced() {
	n=$((RATE * SECS))
	sync
	trawl_run paced 1 -m discard -r "$RATE"
	tail -n 1 "$RAW" | awk '{ print "# paced (in-process): lost=" $6 }' >&2
	sync
	agent_run paced-agent 1 "$RATE"
	sync
	[ "$LTTNG" = 1 ] && lttng_default_run paced-default 1 "$RATE"
}
if [ "${PACED_ONLY:-0}" = 1 ]; then
	for r in $(seq "$RUNS"); do
		echo "# run $r/$RUNS" >&2
		paced
	done
	awk -v rate="$RATE" '
	$6 != "-" { lost[$1 " " $2] = lost[$1 " " $2] " " $6 }
	END {
		printf "\n| lost at %d events/s, 1 thread, default buffers (each run) | events lost |\n", rate
		print "|---|---|"
		printf "| trawl, in-process session |%s |\n", lost["trawl paced"]
		printf "| trawl, through trawl agent --oneshot |%s |\n", lost["trawl-agent paced-agent"]
		printf "| lttng-ust 2.13, default channel |%s |\n", lost["lttng paced-default"]
	}' "$RAW" | tee "$WORK/summary.md"
	exit 0
fi

for r in $(seq "$RUNS"); do
	echo "# run $r/$RUNS" >&2
	n=$N
	for t in 1 2; do
		trawl_run notp "$t" -m notp
		trawl_run disabled "$t" -m disabled
		[ "$LTTNG" = 1 ] && lttng_run disabled "$t"
		trawl_run discard "$t" -m discard
		[ "$LTTNG" = 1 ] && lttng_run discard "$t"
		trawl_run overwrite "$t" -m overwrite
		[ "$LTTNG" = 1 ] && lttng_run overwrite "$t"
		trawl_run perthread "$t" -m perthread
		trawl_run percpu "$t" -m percpu
		trawl_run discard-fixed "$t" -m discard -H fixed
		trawl_run overwrite-fixed "$t" -m overwrite -H fixed
		trawl_run overwrite-mono "$t" -m overwrite -c monotonic
	done
	# the paced runs: each after a sync (see paced() above), not in the
	# writeback of the flat-out runs before them
	n=$((RATE * SECS))
	sync
	trawl_run paced 1 -m discard -r "$RATE"
	sync
	[ "$LTTNG" = 1 ] && lttng_run paced 1 "$RATE"
	sync
	agent_run paced-agent 1 "$RATE"
	sync
	[ "$LTTNG" = 1 ] && lttng_default_run paced-default 1 "$RATE"
done

# ---------------------------------------------------------------- summary
awk -v lt="$LTTNG" -v runs="$RUNS" -v rate="$RATE" '
function med(s,   a, m, i, j, x) {
	m = split(s, a, " "); if (m == 0) return "-"
	for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] + 0 < a[i] + 0) { x = a[i]; a[i] = a[j]; a[j] = x }
	return (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
}
function rng(s,   a, m, i, lo, hi) {
	m = split(s, a, " "); if (m == 0) return ""
	lo = hi = a[1]; for (i = 2; i <= m; i++) { if (a[i] + 0 < lo + 0) lo = a[i]; if (a[i] + 0 > hi + 0) hi = a[i] }
	return sprintf(" (%s-%s)", lo, hi)
}
$6 != "-" && $6 != "" { lost[$1 " " $2 " " $3] = lost[$1 " " $2 " " $3] " " $6 }
$7 != "-" && $7 != "" { bpe[$1 " " $2 " " $3] = bpe[$1 " " $2 " " $3] " " $7 }
{ w[$1 " " $2 " " $3] = w[$1 " " $2 " " $3] " " $4 }
function row(label, tk, lk,   a, b, ratio) {
	a = med(w[tk]); b = (lk != "") ? med(w[lk]) : "-"
	ratio = (b != "-" && a + 0 > 0 && lt == 1) ? sprintf("%.2f", a / b) : "-"
	printf "| %s | %s%s | %s%s | %s |\n", label, a, rng(w[tk]), b, (lk != "" ? rng(w[lk]) : ""), ratio
}
END {
	printf "\nns/event (wall), median of %d runs (min-max); ratio = trawl / lttng-ust\n\n", runs
	print "| figure | trawl | lttng-ust 2.13 | ratio |"
	print "|---|---|---|---|"
	for (t = 1; t <= 2; t++) {
		row("enabled, discard, " t " thread(s)", "trawl discard " t, "lttng discard " t)
		row("enabled, overwrite, " t " thread(s)", "trawl overwrite " t, "lttng overwrite " t)
		row("disabled, " t " thread(s)", "trawl disabled " t, "lttng disabled " t)
		row("empty loop, " t " thread(s)", "trawl notp " t, "")
	}
	printf "\nEvents lost flat out (discard mode) and bytes/event on disk, median (min-max)\n\n"
	print "| figure | trawl | lttng-ust 2.13 |"
	print "|---|---|---|"
	for (t = 1; t <= 2; t++) {
		printf "| lost, %d thread(s) | %s%s | %s%s |\n", t, med(lost["trawl discard " t]), rng(lost["trawl discard " t]), med(lost["lttng discard " t]), rng(lost["lttng discard " t])
		printf "| bytes/event, %d thread(s) | %s | %s |\n", t, med(bpe["trawl discard " t]), med(bpe["lttng discard " t])
	}
	printf "| lost at %d events/s, 1 thread, 8 x 256 KiB (all runs) |%s |%s |\n", rate, lost["trawl paced 1"], lost["lttng paced 1"]
	printf "| lost at %d events/s, 1 thread, default buffers, trawl through the agent / lttng default channel (all runs) |%s |%s |\n", rate, lost["trawl-agent paced-agent 1"], lost["lttng paced-default 1"]
	printf "\ntrawl design measurements (ns/event wall, median)\n\n"
	print "| figure | 1 thread | 2 threads |"
	print "|---|---|---|"
	printf "| prototype per-thread buffer (plain reserve, release commit) | %s | %s |\n", med(w["trawl perthread 1"]), med(w["trawl perthread 2"])
	printf "| prototype per-CPU buffer (getcpu + CAS reserve + atomic commit) | %s | %s |\n", med(w["trawl percpu 1"]), med(w["trawl percpu 2"])
	printf "| overwrite, large header (LTTng: u16 id + u32 ts, escape), TSC | %s | %s |\n", med(w["trawl overwrite 1"]), med(w["trawl overwrite 2"])
	printf "| overwrite, fixed header (u16 id + u64 ts), TSC | %s | %s |\n", med(w["trawl overwrite-fixed 1"]), med(w["trawl overwrite-fixed 2"])
	printf "| overwrite, large header, CLOCK_MONOTONIC | %s | %s |\n", med(w["trawl overwrite-mono 1"]), med(w["trawl overwrite-mono 2"])
	printf "| bytes/event on disk, large / fixed header (discard, 1 thread) | %s | %s |\n", med(bpe["trawl discard 1"]), med(bpe["trawl discard-fixed 1"])
}' "$RAW" | tee "$WORK/summary.md"
echo "# raw figures: $RAW" >&2
