#!/bin/sh
# bench/state.sh - the state system's cost, on two kernel recordings of this
# machine (`trawl record -k sched,syscalls,irq,block`, system-wide):
#   idle  SECONDS of whatever the machine does (a shared VM is never idle)
#   busy  hackbench -p -g 2 -l LOOPS, BUSY_KB per CPU
# For each: its events and trace seconds; `trawl info` (pure decode) and
# `trawl state --at END` (decode + the state system without a window, a
# checkpoint every second or 2^17 events) as CPU seconds (user + system) and
# peak RSS; the state system's events/s; and its CPU per second of trace:
# (state CPU - info CPU) / trace seconds, what feeding it live would cost
# beyond reading (a live reader's polling is not counted); and the ratio of
# their speeds, info CPU / state CPU (issue 29's goal: >= 0.5), against
# `trawl info` with two threads (as trawl state reads) and with one. Then
# `trawl state` writing its checkpoint file (its size, per hour of trace),
# and a query from it. Then, when built (make bench, or make
# build/bench/bench-state), bench-state on the busy recording: the pass
# against decoding (one thread each), queries anywhere (200 random times:
# median, worst) from memory and from the file, with history, and in the
# window.
# Then live: a relay on loopback, `trawl record --relay` for LIVE_SECONDS
# of the machine, idle and under hackbench (each also with --exclude-self:
# idle-x, busy-x), followed by `trawl state --live`
# (attached from the session's start; it ends with the session): its CPU
# (user + system, /usr/bin/time) per second recorded, and its peak RSS. It
# then shows CPU 0 at the newest event with its first and newest change
# (-n 1; until 2026-12-02 -n 0: every change of CPU 0 in the window was
# printed, 7 M lines at these rates, and the printing was counted).
#
#   TRAWL_BUILD=build sh bench/state.sh        (env: SECONDS_IDLE=10 LOOPS=8000
#                                               BUSY_KB=65536 LIVE_SECONDS=10)
# Needs root and tracefs; hackbench (rt-tests) and /usr/bin/time.
set -u
B=${TRAWL_BUILD:-build}
T="$B/trawl"
IDLE=${SECONDS_IDLE:-10}
LOOPS=${LOOPS:-8000}
BUSY_KB=${BUSY_KB:-65536}
D=$(mktemp -d /tmp/trawl-bench-state-XXXXXX)
RELAY=
trap '[ -n "$RELAY" ] && kill $RELAY 2>/dev/null; rm -rf "$D"' EXIT
LIVE_S=${LIVE_SECONDS:-10}

cpu() {	# cpu OUT CMD...: user+sys seconds and max RSS (KiB) of CMD into OUT
	out=$1; shift
	/usr/bin/time -f '%U %S %M' -o "$out" "$@" > /dev/null 2>&1
}

one() {	# one NAME SESSION
	name=$1; s=$2
	"$T" print -f json "$s" | python3 -c '
import json, sys
n = 0; lo = hi = None
for l in sys.stdin:
    t = json.loads(l)["ts"]; n += 1
    lo = t if lo is None or t < lo else lo; hi = t if hi is None or t > hi else hi
print(n, lo, hi)' > "$D/$name.range"
	read n lo hi < "$D/$name.range"
	cpu "$D/$name.info" "$T" info --threads 1 "$s"
	cpu "$D/$name.info2" "$T" info "$s"
	cpu "$D/$name.state" "$T" state "$s" --at "$hi" --checkpoints none
	cpu "$D/$name.statef" "$T" state "$s" --at "$hi"
	ck=$(ls "$s"/.trawl-state-*.ckpt 2>/dev/null | head -1)
	cksz=$(stat -c %s "$ck" 2>/dev/null || echo 0)
	trsz=$(( $(du -sb "$s" | cut -f1) - cksz ))
	cpu "$D/$name.query" "$T" state "$s" --at "$(( (lo + hi) / 2 ))"
	read iu is im < "$D/$name.info"
	read ju js jm < "$D/$name.info2"
	read su ss sm < "$D/$name.state"
	read fu fs fm < "$D/$name.statef"
	read qu qs qm < "$D/$name.query"
	python3 - "$name" "$n" "$lo" "$hi" "$iu" "$is" "$im" "$su" "$ss" "$sm" "$ju" "$js" \
		"$fu" "$fs" "$qu" "$qs" "$qm" "$cksz" "$trsz" <<'PY'
import sys
name, n, lo, hi, iu, is_, im, su, ss, sm, ju, js, fu, fs, qu, qs, qm, cksz, trsz = sys.argv[1:]
n = int(n); dur = (int(hi) - int(lo)) / 1e9
ic = float(iu) + float(is_); sc = float(su) + float(ss); jc = float(ju) + float(js)
fc = float(fu) + float(fs); qc = float(qu) + float(qs); cksz = int(cksz)
extra = max(sc - ic, 0.0)
print(f"{name}: {n} events over {dur:.2f} s of trace")
print(f"  trawl info --threads 1: {ic:.2f} s CPU, {int(im)/1024:.1f} MB peak; trawl info (2 threads, "
      f"as trawl state reads): {jc:.2f} s CPU")
print(f"  trawl state --at END --checkpoints none (the pass, checkpoints in memory, one query): "
      f"{sc:.2f} s CPU, {int(sm)/1024:.1f} MB peak, "
      f"{n / sc / 1e6 if sc else float('inf'):.2f} M events/s (decode included)")
print(f"  the state system beyond decoding: {extra:.3f} s CPU, "
      f"{100 * extra / dur if dur else 0:.3f} % of a CPU per second of trace")
print(f"  state speed / decode speed (info CPU / state CPU): {jc / sc if sc else 0:.2f} with the same "
      f"threads, {ic / sc if sc else 0:.2f} against --threads 1 (goal >= 0.5)")
print(f"  trawl state --at END writing its checkpoint file: {fc:.2f} s CPU; the file "
      f"{cksz / 1e6:.2f} MB ({cksz / 1e6 / dur * 3600 if dur else 0:.0f} MB per hour of trace at "
      f"{n / dur / 1e6 if dur else 0:.2f} M events/s; {100 * cksz / max(1, int(trsz)):.2f} % of the "
      f"trace's {int(trsz) / 1e6:.1f} MB)")
print(f"  trawl state --at MIDDLE from the file (a whole run: hosts, load, replay): {qc:.2f} s CPU, "
      f"{int(qm)/1024:.1f} MB peak")
PY
}

"$T" record -q -o "$D/idle" -k sched,syscalls,irq,block --duration "$IDLE" || exit 1
# lossless: BUSY_KB per CPU and a SCHED_FIFO reader, as bench/kernel.sh's
# (with the default 4 MiB, or a reader of normal priority among
# hackbench's 80 processes, half of the events or more were lost on a
# kernel of 4 KiB sub-buffers), and long enough that the CPU times, to
# 10 ms, compare to a few percent
"$T" record -q -o "$D/busy" -b "$BUSY_KB" --rt-prio 10 -k sched,syscalls,irq,block -- \
	hackbench -p -g 2 -l "$LOOPS" > /dev/null || exit 1
. "$(dirname "$0")/machine.sh"
echo "bench/state.sh"
bench_machine
one idle "$D/idle"
one busy "$D/busy"
# queries on the busy recording: the offline pass against decoding alone
# (one thread each), the state at 200 random times anywhere (the latest
# checkpoint and a replay; from memory and from the file), with history,
# and inside the window of a pass that keeps one
[ -x "$B/bench/bench-state" ] && "$B/bench/bench-state" "$D/busy" 2> /dev/null

live() {	# live NAME [WORKLOAD...]: the state system fed live for LIVE_S seconds
	name=$1; shift
	"$T" record -q --relay "$DATA" --session "$name" -k sched,syscalls,irq,block \
		--duration "$LIVE_S" ${RECFLAGS:-} > /dev/null 2>&1 &
	rec=$!
	work=
	if [ $# -gt 0 ]; then
		( while kill -0 $rec 2>/dev/null; do "$@" > /dev/null 2>&1; done ) &
		work=$!
	fi
	tries=0
	while :; do
		/usr/bin/time -f '%U %S %M' -o "$D/$name.live" "$T" state --stats \
			--live "net://$LIVE/session/$name" --cpu 0 -n 1 > /dev/null 2> "$D/$name.err" && break
		tries=$((tries + 1))
		[ $tries -lt 100 ] && kill -0 $rec 2>/dev/null || { echo "$name: the live state failed"; cat "$D/$name.err"; return 1; }
		sleep 0.05
	done
	wait $rec
	[ -z "$work" ] || wait $work
	read u s m < "$D/$name.live"
	ev=$(sed -n 's/^state: \([0-9]*\) events.*/\1/p' "$D/$name.err")
	python3 -c "import sys; u,s,m,ev,d=map(float,sys.argv[1:]); print(f'live {sys.argv[0] if 0 else \"\"}: %d events in %.0f s (%.0f events/s): state --live %.2f s CPU, %.3f %% of a CPU, %.1f MB peak' % (ev, d, ev/d, u+s, 100*(u+s)/d, m/1024))" "$u" "$s" "$m" "${ev:-0}" "$LIVE_S" | sed "s/^live :/live $name:/"
}

"$T" relay -o "$D/relay" --data 127.0.0.1:0 --live 127.0.0.1:0 --foreground --ready-fd 3 \
	3> "$D/ready" 2> "$D/relay.err" &
RELAY=$!
i=0
until grep -q '^ready ' "$D/ready" 2>/dev/null || [ $i -ge 300 ]; do sleep 0.1; i=$((i + 1)); done
DATA=$(sed -n 's/^ready \([^ ]*\) \([^ ]*\)$/\1/p' "$D/ready")
LIVE=$(sed -n 's/^ready \([^ ]*\) \([^ ]*\)$/\2/p' "$D/ready")
live idle
live busy hackbench -p -g 2 -l 500
# the same with record --exclude-self: the node's relay and the viewer (the
# state system itself) are not recorded; above, on an idle node, most of
# the events are the viewer's own reads of the trace and the relay's
# (measured 2026-12-04: 226657 of 238000 events were trawl's), a feedback
# the state system pays for twice
RECFLAGS=--exclude-self live idle-x
RECFLAGS=--exclude-self live busy-x hackbench -p -g 2 -l 500
