#!/bin/sh
# bench/kernel.sh - kernel recording: `trawl record` against `trace-cmd
# record` and `perf record` (Debian's), in one run, interleaved, on the
# workload of the anchor: hackbench -p -g 4 -l 3000 with sched_switch,
# sched_wakeup and the read/write syscall entry/exit tracepoints.
#
# Every recorder records system-wide (as trace-cmd and perf -a did for the
# anchor) with the same ring-buffer memory per CPU (BUF_KB, default 64 MiB)
# and SCHED_FIFO 10 readers (-r 10 / --rt-prio 10); it is started alone,
# the workload runs once it is ready, then it gets SIGINT. So:
#   workload s     hackbench's own "Time:" (slowdown = against no tracing)
#   recorded       events in the output (trawl: its summary, = the events
#                  in the trace; trace-cmd: events decoded by trace-cmd
#                  report; perf: perf report --stats SAMPLE events)
#   lost           trawl: its summary (= events_discarded in the trace);
#                  trace-cmd: overrun + dropped events of the per-CPU stats
#                  in trace.dat; perf: LOST_SAMPLES
#   recorder CPU   user + system time of the recorder's process tree
#                  (/usr/bin/time), start to end, setup included
# The recorded counts include whatever else ran on the (shared) machine
# during the recording. trace-cmd runs in a private mount namespace where
# the function-tracer files (which refuse writes here) are masked by empty
# files, with -d; nothing changes outside that namespace.
#
#   TRAWL_BUILD=build sh bench/kernel.sh   (env: RUNS=3 BUF_KB=65536 LOOPS=3000
#                                           CONFIGS="base trawl tracecmd perf"
#                                           WARMUP=1)
# Needs root, tracefs; installs trace-cmd, linux-perf, rt-tests, time if
# missing (apt-get).
set -u
. "$(dirname "$0")/machine.sh"
: "${TRAWL_BUILD:?set TRAWL_BUILD to a build directory}"
TRAWL_BUILD=$(cd "$TRAWL_BUILD" && pwd)	# absolute: the runs cd to WORK
TRAWL=$TRAWL_BUILD/trawl
RUNS=${RUNS:-3}
BUF_KB=${BUF_KB:-65536}
LOOPS=${LOOPS:-3000}
CONFIGS=${CONFIGS:-"base trawl tracecmd perf"}
WORK=${WORK:-$TRAWL_BUILD/bench/kernel-work}
T=/sys/kernel/tracing
[ "$(id -u)" = 0 ] || { echo "bench/kernel.sh: needs root"; exit 1; }
[ -x "$TRAWL" ] || { echo "bench/kernel.sh: $TRAWL is not built"; exit 1; }
need=""
for p in trace-cmd linux-perf rt-tests time; do
	dpkg -s "$p" >/dev/null 2>&1 || need="$need $p"
done
if [ -n "$need" ]; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $need >/dev/null 2>&1 ||
		{ echo "bench/kernel.sh: cannot install$need"; exit 1; }
fi
[ -d $T/events ] || mount -t tracefs nodev $T 2>/dev/null
[ -d $T/events ] || { echo "bench/kernel.sh: no tracefs"; exit 1; }
mkdir -p "$WORK" || exit 1
cd "$WORK" || exit 1

EVENTS="sched:sched_switch sched:sched_wakeup syscalls:sys_enter_read syscalls:sys_exit_read syscalls:sys_enter_write syscalls:sys_exit_write"
TEV=$(echo $EVENTS | tr ' ' ',')
TCEV=""; PEV=""
for e in $EVENTS; do TCEV="$TCEV -e $e"; PEV="$PEV -e $e --exclude-perf"; done
PAGES=$((BUF_KB / 4))

# trace-cmd needs set_ftrace_* files it can write: masked in a private mount namespace
FAKE=$WORK/fake; mkdir -p "$FAKE"
NEED_NS=${TC_NO_NS:-1}
[ "$NEED_NS" = 0 ] || NEED_NS=1
# trace-cmd sizes the top-level buffer: put it back at the end
SAVED_BUF=$(sed -E 's/.*expanded: ([0-9]+).*/\1/' $T/buffer_size_kb)

REC=""
cleanup() {
	[ -n "$REC" ] && kill -INT "$REC" 2>/dev/null
	case "$SAVED_BUF" in [0-9]*) echo "$SAVED_BUF" > $T/buffer_size_kb 2>/dev/null;; esac
	rm -rf "$WORK/out" "$WORK"/trace.dat* "$WORK"/perf.data*
}
trap cleanup EXIT INT TERM

# wait_for FILE PATTERN SECONDS
wait_for() {
	i=0
	while [ $i -lt $(($3 * 20)) ]; do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.05; i=$((i + 1))
	done
	return 1
}

# the recorder under /usr/bin/time, in the background; REC = its pid
start_rec() {	# CONFIG
	rm -rf "$WORK/out" "$WORK"/trace.dat* "$WORK"/perf.data*
	: > rec.log
	case $1 in
	trawl)
		/usr/bin/time -f 'CPU %U %S' -o rtime "$TRAWL" record -o "$WORK/out" -b "$BUF_KB" \
			--rt-prio 10 -k "$TEV" > rec.log 2>&1 &
		TP=$!; wait_for rec.log 'Ctrl-C' 30;;
	tracecmd)
		if [ $NEED_NS = 1 ]; then
			/usr/bin/time -f 'CPU %U %S' -o rtime unshare -m --propagation private sh -c '
				for f in set_ftrace_pid set_ftrace_filter set_ftrace_notrace set_ftrace_notrace_pid; do
					[ -e "$1/$f" ] || continue
					: > "$2/$f"; mount --bind "$2/$f" "$1/$f"
				done
				shift 2
				exec trace-cmd record "$@"' _ "$T" "$FAKE" -d -b "$BUF_KB" -r 10 -o "$WORK/trace.dat" $TCEV \
				> rec.log 2>&1 &
		else
			/usr/bin/time -f 'CPU %U %S' -o rtime trace-cmd record -d -b "$BUF_KB" -r 10 \
				-o "$WORK/trace.dat" $TCEV > rec.log 2>&1 &
		fi
		TP=$!; wait_for rec.log 'Ctrl' 60;;
	perf)
		/usr/bin/time -f 'CPU %U %S' -o rtime perf record -a -m "$PAGES" -r 10 $PEV \
			-o "$WORK/perf.data" > rec.log 2>&1 &
		TP=$!; sleep 2;;
	esac
	# the recorder itself (time's child) gets the SIGINT
	REC=$(pgrep -P "$TP" | head -1)
}

stop_rec() {
	kill -INT "$REC" 2>/dev/null
	wait "$TP"
	REC=""
}

run_one() {	# CONFIG RUN -> one raw line
	cfg=$1 run=$2
	rec=n/a lost=n/a cpu=n/a
	[ "$cfg" != base ] && start_rec "$cfg"
	hb=$(hackbench -p -g 4 -l "$LOOPS" 2>&1 | awk '/^Time:/{print $2}')
	[ "$cfg" != base ] && stop_rec
	case $cfg in
	trawl)
		rec=$(sed -n 's/^trawl record: \([0-9]*\) kernel events, \([0-9]*\) lost.*/\1/p' rec.log)
		lost=$(sed -n 's/^trawl record: \([0-9]*\) kernel events, \([0-9]*\) lost.*/\2/p' rec.log);;
	tracecmd)
		# as the anchor: events decoded from trace.dat, kernel stats stored in it
		lost=$(trace-cmd report --stat -i "$WORK/trace.dat" 2>/dev/null |
			awk '/^overrun:|^dropped events:/{s+=$NF} END{print s+0}')
		rec=$(trace-cmd report -i "$WORK/trace.dat" 2>/dev/null | grep -cE '\[[0-9]+\] +[0-9]+\.[0-9]+: ');;
	perf)
		set -- $(perf report -i "$WORK/perf.data" --stats 2>/dev/null | awk '
			/Aggregated stats/{agg=1; next} /stats:$/{agg=0; per=1; next}
			agg && /SAMPLE events:/{rec=$3} per && /LOST_SAMPLES events:/{lost+=$3}
			END{print rec+0, lost+0}')
		rec=$1 lost=$2;;
	esac
	[ "$cfg" != base ] && cpu=$(awk '/^CPU/{printf "%.3f", $2 + $3}' rtime)
	echo "$cfg $run $hb $rec $lost $cpu"
}

RAW=$WORK/raw.txt
echo "config run workload_s recorded lost recorder_cpu_s" > "$RAW"
# One unmeasured run of each recorder first (WARMUP=0: none). Seen here: the
# first recorder run after other jobs took twice the CPU of the next ones
# (trawl 2.6-2.8 s against 1.1-1.5 s), the guest touching fresh memory for
# the gigabyte of page cache a run writes.
if [ "${WARMUP:-1}" = 1 ]; then
	for c in $CONFIGS; do
		[ "$c" = base ] || run_one "$c" 0 > /dev/null
	done
fi
for r in $(seq "$RUNS"); do
	for c in $CONFIGS; do
		run_one "$c" "$r" | tee -a "$RAW" | sed 's/^/# /'
	done
done

echo
echo "kernel recording, hackbench -p -g 4 -l $LOOPS, $BUF_KB KiB/CPU, $(nproc) CPUs, $(uname -r), $(date -u +%FT%TZ)"
echo "$(trace-cmd --version 2>&1 | grep -m1 version); $(perf --version)"
bench_machine
echo
awk -v runs="$RUNS" '
function sortv(str, a,   m, i, j, x) { m = split(str, a, " ");
	for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] + 0 < a[i] + 0) { x = a[i]; a[i] = a[j]; a[j] = x }
	return m }
function med(str,   a, m) { m = sortv(str, a); if (!m) return ""; return (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2 }
function rng(str, f,   a, m) { m = sortv(str, a); if (!m) return "n/a"; return sprintf(f "-" f, a[1], a[m]) }
NR > 1 { k = $1; if (!(k in seen)) { o[++n] = k; seen[k] = 1 }
	hb[k] = hb[k] " " $3
	if ($4 != "n/a") { rec[k] = rec[k] " " $4; lo[k] = lo[k] " " $5; cpu[k] = cpu[k] " " $6
		eps[k] = eps[k] " " ($4 / $3); us[k] = us[k] " " ($4 > 0 ? $6 * 1e6 / $4 : 0)
		lp[k] = lp[k] " " (($4 + $5) > 0 ? 100 * $5 / ($4 + $5) : 0) } }
END {
	b = med(hb["base"])
	printf "| recorder | workload s | slowdown | recorded | lost | lost %% | recorded/s | recorder CPU s | CPU us/event | slowdown / trace-cmd | CPU / trace-cmd |\n"
	printf "|---|---|---|---|---|---|---|---|---|---|---|\n"
	tcs = med(hb["tracecmd"]); tcc = med(cpu["tracecmd"])
	for (i = 1; i <= n; i++) { k = o[i]
		s = med(hb[k])
		printf "| %s | %.3f (%s) | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", k, s, rng(hb[k], "%.3f"),
			(b > 0 ? sprintf("%.2fx", s / b) : "n/a"),
			(rec[k] == "" ? "-" : sprintf("%d (%s)", med(rec[k]), rng(rec[k], "%d"))),
			(lo[k] == "" ? "-" : sprintf("%d (%s)", med(lo[k]), rng(lo[k], "%d"))),
			(lp[k] == "" ? "-" : sprintf("%.1f", med(lp[k]))),
			(eps[k] == "" ? "-" : sprintf("%.2f M", med(eps[k]) / 1e6)),
			(cpu[k] == "" ? "-" : sprintf("%.2f (%s)", med(cpu[k]), rng(cpu[k], "%.2f"))),
			(us[k] == "" ? "-" : sprintf("%.3f", med(us[k]))),
			(tcs > 0 && b > 0 && k != "base" ? sprintf("%.2f", (s / b) / (tcs / b)) : "-"),
			(tcc > 0 && cpu[k] != "" ? sprintf("%.2f", med(cpu[k]) / tcc) : "-") }
	printf "\nmedians over %d interleaved runs (min-max in brackets); anchor (RESULTS.md): trace-cmd 64 MiB/CPU lossless, 2.76x, ~0.33 us CPU/event all included; perf lossless 6.48x\n", runs
}' "$RAW"
echo "raw: $RAW"
