#!/bin/sh
# bench/analyze.sh - the standard analyses (`trawl analyze`) against
# lttng-analyses and against pure decoding (`trawl info`), on kernel
# recordings of a real workload (hackbench -p -g 2 -l LOOPS, recorded with
# -k sched,syscalls,irq,block), in one run:
#   events/s     events of the trace / wall time of the command (best of RUNS)
#   vs lttng     trawl's events/s over lttng-analyses' (same trace, same
#                run, lttng-X --no-intersection; target >= 100x)
#   vs info      trawl's events/s over `trawl info`'s, pure decoding, with the
#                same threads (a decode-ahead worker on 2+ CPUs; target >= 0.5)
#   vs info -t1  the same over `trawl info --threads 1`'s (one thread)
#   peak RSS     of trawl analyze on the trace and on one of twice the
#                workload (must not grow)
# lttng-analyses read the smaller trace (LTTNG_LOOPS): they take minutes on
# the bigger ones. Prints the CPU model and family first.
#
# Then the same on the simulated session (`trawl simulate`, SIM_EVENTS events,
# default 20M, and twice as many; no lttng-analyses: they take hours there).
# Its kernel traces have sched_switch, sched_wakeup and read/write system
# calls, a quarter of its events are user-space ones: irq finds nothing
# there (it measures decoding and leaving out), iolatency counts the reads
# and writes.
# SIM_ONLY=1: only the simulated session (no root, no hackbench needed).
#
#   TRAWL_BUILD=build sh bench/analyze.sh   (env: LOOPS=400 LTTNG_LOOPS=40 RUNS=3
#                                            SIM_EVENTS=20M SIM_ONLY=)
# Needs root (kernel tracing), hackbench (rt-tests), /usr/bin/time and
# python3-lttnganalyses.
set -u
: "${TRAWL_BUILD:?set TRAWL_BUILD to a build directory}"
TRAWL=$TRAWL_BUILD/trawl
LOOPS=${LOOPS:-400}
LTTNG_LOOPS=${LTTNG_LOOPS:-40}
RUNS=${RUNS:-3}
SIM_EVENTS=${SIM_EVENTS:-20M}
SIM_ONLY=${SIM_ONLY:-}
WORK=${WORK:-$TRAWL_BUILD/bench/analyze-work}
[ -n "$SIM_ONLY" ] || [ "$(id -u)" = 0 ] || { echo "bench/analyze.sh: needs root (or SIM_ONLY=1)"; exit 1; }
[ -x "$TRAWL" ] || { echo "bench/analyze.sh: $TRAWL is not built"; exit 1; }
rm -rf "$WORK" && mkdir -p "$WORK" || exit 1
. "$(dirname "$0")/machine.sh"
bench_machine

record() {	# record DIR LOOPS: 64 MiB per CPU; says what it lost
	"$TRAWL" record -b 65536 -o "$1" -k sched,syscalls,irq,block -- hackbench -p -g 2 -l "$2" \
		> /dev/null 2> "$1.log" || { echo "record failed: $(cat "$1.log")"; exit 1; }
	sed -n 's/^trawl record: \([0-9]* kernel events, [0-9]* lost\).*/  '"$(basename "$1")"': \1/p' "$1.log"
}
events() { "$TRAWL" info --json "$1" 2> /dev/null | python3 -c 'import json,sys; print(sum(t["events"] for t in json.load(sys.stdin)["traces"]))'; }
# best DIR CMD...: the best wall time (s) of RUNS runs of CMD on DIR
best() {
	d=$1; shift
	b=""
	i=0
	while [ $i -lt "$RUNS" ]; do
		t0=$(date +%s.%N)
		"$@" "$d" > /dev/null 2>&1
		t1=$(date +%s.%N)
		b=$(awk -v a="$t0" -v z="$t1" -v b="$b" 'BEGIN { t = z - a; print (b == "" || t < b) ? t : b }')
		i=$((i + 1))
	done
	echo "$b"
}
rss() { /usr/bin/time -f %M "$@" > /dev/null 2> "$WORK/rss"; tail -1 "$WORK/rss"; }

simulated() {	# the simulated session: trawl only
	"$TRAWL" simulate -q -o "$WORK/sim1" -e "$SIM_EVENTS" || exit 1
	"$TRAWL" simulate -q -o "$WORK/sim2" -e \
		"$(awk -v e="$SIM_EVENTS" 'BEGIN { m = e ~ /M$/ ? 1e6 : e ~ /k$/ ? 1e3 : e ~ /G$/ ? 1e9 : 1;
			printf "%.0f", 2 * (e + 0) * m }')" || exit 1
	S1=$(events "$WORK/sim1"); S2=$(events "$WORK/sim2")
	echo "simulated: $S1 and $S2 events (trawl simulate -e $SIM_EVENTS, and twice as many)"
	TI=$(best "$WORK/sim1" "$TRAWL" info)
	SINFO=$(awk -v n="$S1" -v t="$TI" 'BEGIN { printf "%.0f", n / t }')
	TI=$(best "$WORK/sim1" "$TRAWL" info --threads 1)
	SINFO1=$(awk -v n="$S1" -v t="$TI" 'BEGIN { printf "%.0f", n / t }')
	echo "trawl info: $SINFO events/s; trawl info --threads 1: $SINFO1 events/s"
	printf '%-10s %14s %9s %12s %12s %12s\n' analysis "trawl ev/s" "x info" "x info -t1" "RSS 1x KiB" "RSS 2x KiB"
	for a in cputop schedlat iolatency irq syscalls; do
		T1=$(best "$WORK/sim1" "$TRAWL" analyze "$a")
		R1=$(rss "$TRAWL" analyze "$a" "$WORK/sim1"); R2=$(rss "$TRAWL" analyze "$a" "$WORK/sim2")
		awk -v a="$a" -v n="$S1" -v t="$T1" -v info="$SINFO" -v info1="$SINFO1" -v r1="$R1" \
			-v r2="$R2" 'BEGIN {
			printf "%-10s %14.0f %8.2fx %11.2fx %12d %12d\n", a, n / t, n / t / info, n / t / info1, r1, r2 }'
	done
}
[ -n "$SIM_ONLY" ] && { simulated; exit 0; }

record "$WORK/small" "$LTTNG_LOOPS"
record "$WORK/one" "$LOOPS"
record "$WORK/two" $((2 * LOOPS))
KS=$(dirname "$(find "$WORK/small" -name metadata -path '*kernel*' | head -1)")
NS=$(events "$WORK/small"); N1=$(events "$WORK/one"); N2=$(events "$WORK/two")
echo "traces: $NS events (lttng comparison), $N1 and $N2 events (hackbench -l $LOOPS, $((2 * LOOPS)))"
TI=$(best "$WORK/one" "$TRAWL" info)
INFO=$(awk -v n="$N1" -v t="$TI" 'BEGIN { printf "%.0f", n / t }')
TI=$(best "$WORK/one" "$TRAWL" info --threads 1)
INFO1=$(awk -v n="$N1" -v t="$TI" 'BEGIN { printf "%.0f", n / t }')
echo "trawl info: $INFO events/s; trawl info --threads 1: $INFO1 events/s"
printf '%-10s %14s %14s %9s %9s %11s %12s %12s\n' analysis "trawl ev/s" "lttng ev/s" "x lttng" "x info" "x info -t1" "RSS 1x KiB" "RSS 2x KiB"
for a in cputop schedlat iolatency irq syscalls; do
	case $a in
	cputop) l=lttng-cputop ;; schedlat) l=lttng-schedstats ;; iolatency) l=lttng-iolatencystats ;;
	irq) l=lttng-irqstats ;; syscalls) l=lttng-syscallstats ;;
	esac
	T1=$(best "$WORK/one" "$TRAWL" analyze "$a")
	TS=$(best "$WORK/small" "$TRAWL" analyze "$a")
	t0=$(date +%s.%N); $l --no-intersection --skip-validation "$KS" > /dev/null 2>&1; t1=$(date +%s.%N)
	R1=$(rss "$TRAWL" analyze "$a" "$WORK/one"); R2=$(rss "$TRAWL" analyze "$a" "$WORK/two")
	awk -v a="$a" -v n1="$N1" -v ns="$NS" -v t1="$T1" -v ts="$TS" -v l0="$t0" -v l1="$t1" \
		-v info="$INFO" -v info1="$INFO1" -v r1="$R1" -v r2="$R2" 'BEGIN {
		tr = n1 / t1; trs = ns / ts; lt = ns / (l1 - l0)
		printf "%-10s %14.0f %14.0f %8.0fx %8.2fx %10.2fx %12d %12d\n", a, tr, lt, trs / lt, tr / info, tr / info1, r1, r2 }'
done
simulated
