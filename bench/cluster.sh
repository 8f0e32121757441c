#!/bin/sh
# bench/cluster.sh - cluster control and relay ingest (docs/cluster.md).
#
# (a) Start latency: NODES nodes (default 16), each in a network namespace
#     of its own (tests/e2e/netns.sh), each running `trawl agent --relay`
#     joined to a relay in the bridge's namespace, and a program
#     (examples/ust-counter -n 0 -s 100: an event every ~100 us, disabled
#     until a session starts) registered with it. `trawl cluster create`,
#     then `trawl cluster start`: per node, the time from the moment
#     `trawl cluster start` was run (CLOCK_REALTIME, read just before) to
#     the node's first event recorded at the relay (its timestamp,
#     CLOCK_MONOTONIC put on CLOCK_REALTIME by the trace's clock offset:
#     one machine, one clock), and the spread of those first events across
#     the nodes (target <= 10 ms). The start is at an agreed time, the
#     relay's clock plus MARGIN ms (default 250, `--margin`): the time to
#     the first event includes it. Also the times recording began that
#     the nodes report (relay's clock), and their spread.
#
# (b) Relay ingest: SIMS producers at once (default 64; each `trawl
#     simulate --relay --hosts 1 -e EVENTS`, a session of its own) to one
#     relay on 127.0.0.1: MB/s and events/s at the relay (bytes written
#     under its output / wall time from the first producer's start to the
#     last one's end), the relay's CPU time per MB (/proc/PID/stat), against
#     `dd` of the same number of bytes to the same disk in the same run
#     (without and with fdatasync: the relay does not fsync). AUTH=1 (the
#     default) runs the relay with --secret-file and each producer with its
#     node key (trawl secret node), as a production cluster does; AUTH=0
#     without authentication.
#
# (c) lttng-relayd ingest, the same figures: SIMS lttng sessions (`lttng
#     create --set-url=net://127.0.0.1:C:D`, each enabling the same event),
#     one lttng-sessiond and one lttng-relayd of our own (free ports), one
#     UST program emitting EVENTS events of about the size of (b)'s, traced
#     by all SIMS sessions (so SIMS x EVENTS events reach the relay; blocking
#     channels: none discarded). Wall time from the program's start to the
#     return of every session's `lttng stop` (which waits until the relay
#     has the data); lttng-relayd's CPU from /proc/PID/stat. Printed beside
#     (b)'s figures with the ratio trawl / lttng-relayd. The sessiond, its
#     consumerd, the relayd and the program run as user nobody with a
#     private LTTNG_HOME under WORK, so no other lttng-sessiond is touched.
#
#   TRAWL_BUILD=build sh bench/cluster.sh     (root: namespaces)
#   env: NODES=16 SIMS=64 EVENTS=200000 WORK=/tmp/... KEEP=0 MARGIN=250 AUTH=1
#        PARTS=abc (a: the start, b: trawl's ingest, c: lttng-relayd's)
#
# Starts its relays and agents and stops exactly those (by pid) at exit;
# removes its namespaces. Figures on a shared machine are noisy: say so.
set -u
: "${TRAWL_BUILD:?set TRAWL_BUILD to a build directory}"
TRAWL_BUILD=$(cd "$TRAWL_BUILD" && pwd) || exit 1
SRC=$(cd "$(dirname "$0")/.." && pwd)
TRAWL=$TRAWL_BUILD/trawl
APP=$TRAWL_BUILD/examples/ust-counter
NODES=${NODES:-16}
SIMS=${SIMS:-64}
EVENTS=${EVENTS:-200000}
WORK=${WORK:-$(mktemp -d "${TMPDIR:-/tmp}/trawl-bench-cluster.XXXXXX")}
KEEP=${KEEP:-0}
MARGIN=${MARGIN:-250}
PARTS=${PARTS:-abc}
P=trawl-bc-$$
NET=10.233.0
RIP=$NET.254
. "$SRC/tests/e2e/netns.sh"
. "$SRC/bench/machine.sh"
bench_machine

die() { echo "bench/cluster.sh: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root (network namespaces)"
[ -x "$TRAWL" ] && [ -x "$APP" ] || die "build first (make)"
command -v python3 > /dev/null || die "needs python3"
mkdir -p "$WORK" && cd "$WORK" || exit 1
: > empty.conf
export TRAWL_CONFIG="$WORK/empty.conf"

pids="" relay="" lpids=""
LH=$WORK/c-home	# WORK: no spaces (it is split in $AS)
# as nobody, in (c)'s private LTTNG_HOME; daemons started with "$AS" directly
# (not through a function) so that $! is the daemon's pid (setpriv, env exec)
AS="setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=$LH LTTNG_HOME=$LH"
AS() { $AS "$@"; }
lttng_down() {	# (c)'s sessions, then its daemons, by pid
	[ -n "$lpids" ] || return 0
	for s in $(AS timeout 10 lttng list 2> /dev/null | sed -n 's/^ *[0-9]*) \(ing[0-9]*\) .*/\1/p'); do
		AS timeout 10 lttng destroy "$s" > /dev/null 2>&1
	done
	for p in $lpids; do kill "$p" 2> /dev/null; wait "$p" 2> /dev/null; done
	lpids=""
}
cleanup() {
	for p in $pids $relay; do kill "$p" 2> /dev/null; done
	lttng_down
	netns_down "$P" "$NODES"
	[ "$KEEP" = 1 ] || rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

wait_for() {	# wait_for SECONDS CMD...: bounded
	_end=$(( $(date +%s) + $1 )); shift
	while ! "$@"; do [ "$(date +%s)" -ge "$_end" ] && return 1; sleep 0.05; done
}
ready() { [ -s "$1" ]; }
cpu() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }	# utime + stime, ticks
HZ=$(getconf CLK_TCK)

echo "# bench/cluster.sh at $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"

# ------------------------------------------------------------ (a) start
case $PARTS in *a*) ;; *) NODES=0 ;; esac
if [ "$NODES" -gt 0 ]; then
netns_up "$P" "$NET" "$NODES" || die "network: $(cat netns.err)"
ip netns exec "$P-br" "$TRAWL" relay -o "$WORK/a-out" --data "$RIP:0" --live 127.0.0.1:0 \
	--control "$WORK/ctl.sock" --foreground --quiet --ready-fd 3 3> a.ready 2> a-relay.log &
relay=$!
wait_for 10 ready a.ready || die "the relay did not start: $(cat a-relay.log)"
PORT=$(sed -n "s/^ready $RIP:\([0-9]*\) .*/\1/p" a.ready)
i=0
while [ $i -lt "$NODES" ]; do
	ip netns exec "$P-n$i" "$TRAWL" agent --socket "$WORK/a$i.sock" --host "$(printf 'node%02d' $i)" \
		--relay "$RIP:$PORT" --foreground --quiet 2> "agent$i.log" &
	pids="$pids $!"
	i=$((i + 1))
done
CL() { "$TRAWL" cluster --control "$WORK/ctl.sock" "$@"; }
joined() {
	CL nodes --json > nodes.json 2> /dev/null && python3 -c "
import json,sys; j=json.load(open('nodes.json'))
sys.exit(0 if sum(1 for n in j['nodes'] if n['state']=='up' and n['offset_ns'] is not None)==$NODES else 1)"
}
wait_for 30 joined || die "not every node joined"
i=0
while [ $i -lt "$NODES" ]; do
	TRAWL_AGENT_SOCKET="$WORK/a$i.sock" "$APP" -n 0 -s 100 > /dev/null &
	pids="$pids $!"
	i=$((i + 1))
done
registered() {
	_i=0
	while [ $_i -lt "$NODES" ]; do
		TRAWL_AGENT_SOCKET="$WORK/a$_i.sock" "$TRAWL" list 2> /dev/null | grep -q ust-counter || return 1
		_i=$((_i + 1))
	done
}
wait_for 20 registered || die "the programs did not register"
CL create go --enable 'counter:tick' > create.out || die "create: $(cat create.out)"
T0=$(python3 -c 'import time; print(time.time_ns())')
CL start go --margin "$MARGIN" --json > start.json || die "start failed: $(cat start.json)"
sleep 1
CL stop go > stop.out || die "stop failed: $(cat stop.out)"
i=0
: > first.txt
while [ $i -lt "$NODES" ]; do
	h=$(printf 'node%02d' $i)
	"$TRAWL" print -f json -n 1 -H "$h" "$WORK/a-out/go" >> first.txt 2> /dev/null
	i=$((i + 1))
done
python3 - "$T0" "$NODES" "$MARGIN" <<'EOF'
import json, sys
t0 = int(sys.argv[1]); n = int(sys.argv[2]); margin = int(sys.argv[3])
firsts = {}
for line in open('first.txt'):
    e = json.loads(line)
    firsts[e['host']] = int(e['ts'])
st = json.load(open('start.json'))
app = [x['applied_relay_ns'] for x in st['nodes'] if 'applied_relay_ns' in x]
d = sorted((v - t0) / 1e6 for v in firsts.values())
print("(a) trawl cluster start --margin %d on %d nodes (network namespaces, one relay):"
      % (margin, n))
print("    nodes with a first event: %d of %d" % (len(d), n))
if d:
    print("    cluster start -> first event recorded: min %.3f ms, median %.3f ms, max %.3f ms"
          % (d[0], d[len(d) // 2], d[-1]))
    print("    spread of the first events across nodes: %.3f ms (target <= 10 ms)" % (d[-1] - d[0]))
if app:
    print("    spread of the times recording began, as the nodes reported them "
          "(relay's clock): %.3f ms" % ((max(app) - min(app)) / 1e6))
EOF
kill $pids 2> /dev/null
for p in $pids; do wait "$p" 2> /dev/null; done
kill "$relay"; wait "$relay" 2> /dev/null
pids="" relay=""
netns_down "$P" "$NODES"
fi

# ------------------------------------------------------------ (b) ingest
case $PARTS in *b*) ;; *) PARTS_B=0 ;; esac
if [ "${PARTS_B:-1}" = 1 ]; then
AUTH=${AUTH:-1}
b_rsec="" authw="without authentication"
if [ "$AUTH" = 1 ]; then
	rm -f b-cluster.key
	"$TRAWL" secret new b-cluster.key > /dev/null || die "(b): trawl secret new failed"
	b_rsec="--secret-file b-cluster.key" authw="with --secret-file (node keys)"
fi
# shellcheck disable=SC2086
"$TRAWL" relay -o "$WORK/b-out" --data 127.0.0.1:0 --live 127.0.0.1:0 --foreground --quiet \
	$b_rsec --ready-fd 3 3> b.ready 2> b-relay.log &
relay=$!
wait_for 10 ready b.ready || die "the relay did not start: $(cat b-relay.log)"
BP=$(sed -n 's/^ready 127.0.0.1:\([0-9]*\) .*/\1/p' b.ready)
c0=$(cpu "$relay")
s0=$(python3 -c 'import time; print(time.monotonic())')
i=0
bp=""
while [ $i -lt "$SIMS" ]; do
	b_psec=""
	if [ "$AUTH" = 1 ]; then
		# the simulated host is host0 (--hosts 1): its node key
		rm -f "b-node$i.key"
		"$TRAWL" secret node host0 "b-node$i.key" --secret-file b-cluster.key > /dev/null ||
			die "(b): trawl secret node failed"
		b_psec="--secret-file b-node$i.key"
	fi
	# shellcheck disable=SC2086
	"$TRAWL" simulate --relay "127.0.0.1:$BP" --session "s$i" --hosts 1 -e "$EVENTS" -s "$i" -q \
		$b_psec > "sim$i.out" 2>&1 &
	bp="$bp $!"
	i=$((i + 1))
done
fail=0
for p in $bp; do wait "$p" || fail=$((fail + 1)); done
s1=$(python3 -c 'import time; print(time.monotonic())')
c1=$(cpu "$relay")
bytes=$(du -sb "$WORK/b-out" | cut -f1)
events=$("$TRAWL" info "$WORK/b-out" 2> /dev/null | sed -n 's/^total: .* \([0-9]*\) events, .*/\1/p')
kill "$relay"; wait "$relay" 2> /dev/null
relay=""
mb=$((bytes / 1048576 + 1))
d0=$(python3 -c 'import time; print(time.monotonic())')
# dd's own CPU (user + system), the kernel's copy into the page cache that
# the relay pays too: the floor of any writer's CPU per MB
/usr/bin/time -f '%U %S' -o dd.cpu dd if=/dev/zero of="$WORK/dd.bin" bs=1M count="$mb" 2> /dev/null
d1=$(python3 -c 'import time; print(time.monotonic())')
ddcpu=$(awk '{ print $1 + $2 }' dd.cpu 2> /dev/null)
rm -f "$WORK/dd.bin"
dd if=/dev/zero of="$WORK/dd.bin" bs=1M count="$mb" conv=fdatasync 2> /dev/null
d2=$(python3 -c 'import time; print(time.monotonic())')
rm -f "$WORK/dd.bin"
python3 - "$s0" "$s1" "$c0" "$c1" "$HZ" "$bytes" "${events:-0}" "$mb" "$d0" "$d1" "$d2" "$SIMS" "$fail" "$authw" "${ddcpu:-0}" <<'EOF'
import sys
s0, s1, c0, c1, hz, b, ev, mb, d0, d1, d2, sims, fail, authw, ddcpu = sys.argv[1:]
wall = float(s1) - float(s0); cpu = (int(c1) - int(c0)) / int(hz); b = int(b); MB = b / 1e6
print("(b) relay ingest from %s producers at once (trawl simulate --relay, 127.0.0.1, %s), %s failed:" % (sims, authw, fail))
print("    %.1f MB, %s events in %.2f s: %.1f MB/s, %.2f M events/s" % (MB, ev, wall, MB / wall, int(ev) / wall / 1e6))
print("    relay CPU: %.2f s, %.2f ms per MB (the producers shared the same CPUs)" % (cpu, cpu * 1e3 / MB))
ddsync = int(mb) * 1.048576 / (float(d2) - float(d1))
print("    dd of %s MiB to the same disk: %.1f MB/s (page cache), %.1f MB/s (fdatasync)"
      % (mb, int(mb) * 1.048576 / (float(d1) - float(d0)), ddsync))
print("    ingest / dd with fdatasync: %.2f (goal >= 0.80); relay CPU per MB: %.2f ms (goal <= 1),"
      " dd's own CPU per MB (page cache): %.2f ms" % (MB / wall / ddsync, cpu * 1e3 / MB,
                                                   float(ddcpu) * 1e3 / (int(mb) * 1.048576)))
open('b.fig', 'w').write("%f %f %f %f\n" % (MB / wall, int(ev) / wall, cpu * 1e3 / MB, b / max(int(ev), 1)))
EOF

fi

# ------------------------------------------------------------ (c) lttng-relayd
case $PARTS in *c*) ;; *) exit 0 ;; esac
for c in lttng lttng-sessiond lttng-relayd gcc ss setpriv; do
	command -v "$c" > /dev/null || die "(c) needs $c (scripts/install-deps.sh)"
done
chmod 755 "$WORK"
mkdir -p "$LH" c-src c-out && chown 65534:65534 "$LH" c-out || die "(c): cannot make its directories"
cat > c-src/tp.h <<'EOF'
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER trawlingest
#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./tp.h"
#if !defined(TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define TP_H
#include <lttng/tracepoint.h>
LTTNG_UST_TRACEPOINT_EVENT(trawlingest, ev,
	LTTNG_UST_TP_ARGS(uint64_t, seq, uint64_t, a, uint32_t, b),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint64_t, seq, seq)
		lttng_ust_field_integer(uint64_t, a, a)
		lttng_ust_field_integer(uint32_t, b, b)))
#endif
#include <lttng/tracepoint-event.h>
EOF
cat > c-src/emit.c <<'EOF'
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include <stdlib.h>
#include "tp.h"
int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 0;
	for (unsigned long i = 0; i < n; i++)
		lttng_ust_tracepoint(trawlingest, ev, i, i * 7, (uint32_t)i);
	return 0;
}
EOF
(cd c-src && gcc -O2 -I. -o emit emit.c -llttng-ust -ldl) > c-build.log 2>&1 ||
	die "(c): cannot build the UST program: $(tail -3 c-build.log)"
chmod -R a+rX c-src
$AS lttng-sessiond --no-kernel > c-sessiond.log 2>&1 &
lpids="$!"
sessiond_up() { AS timeout 5 lttng list > /dev/null 2>&1; }
wait_for 30 sessiond_up || die "(c): lttng-sessiond did not start: $(tail -3 c-sessiond.log)"
listening() { [ -n "$(ss -ltnH "sport = :$1" 2> /dev/null)" ]; }
free_port() {	# lttng-relayd cannot take port 0
	for _ in $(seq 100); do
		_p=$(od -An -N2 -tu2 /dev/urandom | awk '{ print 20000 + $1 % 30000 }')
		case " $* " in *" $_p "*) continue ;; esac
		listening "$_p" || { echo "$_p"; return 0; }
	done
	return 1
}
lrelay_up() { listening "$LC" && listening "$LD" && listening "$LL"; }
lrelay=""
for attempt in 1 2 3 4 5; do
	LC=$(free_port) && LD=$(free_port "$LC") && LL=$(free_port "$LC" "$LD") || die "(c): no free ports"
	$AS lttng-relayd -o "$WORK/c-out" -C "tcp://127.0.0.1:$LC" -D "tcp://127.0.0.1:$LD" \
		-L "tcp://127.0.0.1:$LL" > c-relayd.log 2>&1 &
	lrelay=$!
	wait_for 10 lrelay_up && break
	kill "$lrelay" 2> /dev/null; wait "$lrelay" 2> /dev/null; lrelay=""
done
[ -n "$lrelay" ] || die "(c): lttng-relayd did not start: $(tail -3 c-relayd.log)"
lpids="$lrelay $lpids"	# the relayd first: the sessions are destroyed before
i=0
while [ $i -lt "$SIMS" ]; do
	{ AS lttng create "ing$i" --set-url="net://127.0.0.1:$LC:$LD" &&
	  AS lttng enable-channel -u -s "ing$i" --subbuf-size 256K --num-subbuf 4 \
		--blocking-timeout=inf ch &&
	  AS lttng enable-event -u -s "ing$i" -c ch trawlingest:ev &&
	  AS lttng start "ing$i"; } > c-sess.log 2>&1 || die "(c): session ing$i: $(tail -3 c-sess.log)"
	i=$((i + 1))
done
c0=$(cpu "$lrelay")
s0=$(python3 -c 'import time; print(time.monotonic())')
AS env LTTNG_UST_ALLOW_BLOCKING=1 LTTNG_UST_REGISTER_TIMEOUT=-1 ./c-src/emit "$EVENTS" || die "(c): the UST program failed"
i=0
sp=""
while [ $i -lt "$SIMS" ]; do
	AS lttng stop "ing$i" > /dev/null 2>&1 &
	sp="$sp $!"
	i=$((i + 1))
done
fail=0
for p in $sp; do wait "$p" || fail=$((fail + 1)); done
s1=$(python3 -c 'import time; print(time.monotonic())')
c1=$(cpu "$lrelay")
disc=$(AS lttng list ing0 2> /dev/null | sed -n 's/.*Discarded events: *\([0-9]*\).*/\1/p' | head -1)
lttng_down
bytes=$(du -sb "$WORK/c-out" | cut -f1)
events=$("$TRAWL" info "$WORK/c-out" 2> /dev/null | sed -n 's/^total: .* \([0-9]*\) events, .*/\1/p')
[ -n "$events" ] || events=$(babeltrace2 -c sink.utils.counter "$WORK/c-out" 2> /dev/null | awk '/Event messages/ { print $1 }')
cpumodel=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
cpufam=$(sed -n 's/^cpu family[[:space:]]*: //p' /proc/cpuinfo | head -1)
python3 - "$s0" "$s1" "$c0" "$c1" "$HZ" "$bytes" "${events:-0}" "$SIMS" "$fail" "$EVENTS" "${disc:-?}" \
	"$(lttng --version | head -1)" "$cpumodel" "$cpufam" "$(nproc)" <<'EOF'
import os, sys
s0, s1, c0, c1, hz, b, ev, sims, fail, n, disc, ver, model, fam, ncpu = sys.argv[1:]
wall = float(s1) - float(s0); cpu = (int(c1) - int(c0)) / int(hz); b = int(b); MB = b / 1e6
ev = int(ev)
print("(c) lttng-relayd ingest from %s lttng sessions (one lttng-sessiond, one UST program "
      "emitting %s events traced by all %s, 127.0.0.1), %s stops failed, ing0 discarded %s:"
      % (sims, n, sims, fail, disc))
print("    %s" % ver)
print("    %.1f MB, %d events in %.2f s: %.1f MB/s, %.2f M events/s, %.1f bytes per event"
      % (MB, ev, wall, MB / wall, ev / wall / 1e6, b / max(ev, 1)))
print("    lttng-relayd CPU: %.2f s, %.2f ms per MB (the program and consumerd shared the same CPUs)"
      % (cpu, cpu * 1e3 / MB))
print("    machine: %s, family %s, %s CPUs, load %s"
      % (model, fam, ncpu, " ".join(open('/proc/loadavg').read().split()[:3])))
if os.path.exists('b.fig'):
    tm, te, tc, tb = (float(x) for x in open('b.fig').read().split())
    lm, le, lc = MB / wall, ev / wall, cpu * 1e3 / MB
    print("    %-22s %12s %12s %12s" % ("", "trawl relay", "lttng-relayd", "trawl/lttng"))
    print("    %-22s %12.1f %12.1f %12.2f" % ("MB/s", tm, lm, tm / lm))
    print("    %-22s %12.2f %12.2f %12.2f" % ("M events/s", te / 1e6, le / 1e6, te / le))
    print("    %-22s %12.2f %12.2f %12.2f" % ("relay CPU ms per MB", tc, lc, tc / lc if lc else 0))
    print("    %-22s %12.1f %12.1f" % ("bytes per event", tb, b / max(ev, 1)))
EOF
