#!/bin/sh
# An idle node's live streaming costs no busy polling (docs/relay.md, "Live
# latency"): an agent session created with --relay and no --live-timer
# (100 ms), a program that emits one event and then stays idle, `trawl
# print --live` attached. While no ring moves, the agent's drain loop
# sleeps until the next live tick (the program's next commit wakes it),
# instead of turning every 2 ms.
#
# Checks, over an idle window that ends on a positive signal (20 more live
# ticks, counted by `trawl list`), on the agent's loop thread (its main
# thread, /proc/PID/status voluntary_ctxt_switches: one per sleep):
#  - it woke at least once per tick (the live timer runs: the right thread
#    is counted);
#  - at most three times per tick, plus what this test's own `trawl list`
#    calls cost it (measured here, after the window: 10 calls in a row),
#    plus 5; a loop turning every 2 ms wakes 50 times per tick;
#  - then the program's next event, after the idle window, reaches the
#    viewer (the loop woken by the commit), and the viewer ends by itself
#    (exit 0) once the session is stopped, with both events.
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v cc > /dev/null 2>&1 || skip_all "needs a C compiler for the program"
[ -r /proc/self/status ] && grep -q '^voluntary_ctxt_switches:' /proc/self/status ||
	skip_all "needs /proc/PID/status with voluntary_ctxt_switches"
plan 5

: > empty.conf
export TRAWL_CONFIG="$TRASH/empty.conf"
RELAY="" AGENT="" EMIT="" VIEWER=""
cleanup() {
	for p in $VIEWER $EMIT $AGENT $RELAY; do kill "$p" 2> /dev/null; done
}
trap cleanup EXIT
trap 'cleanup; exit 1' INT TERM HUP
bail() { echo "Bail out! $*"; exit 1; }
HOST=$(hostname)

# the program: event 0 once enabled, event 1 once `go` exists, then it
# stays until `end` exists
cat > emit.c << 'EOF'
#define TRAWL_TRACEPOINT_DEFINE
#include <trawl/tracepoint.h>
#include <stdint.h>
#include <unistd.h>
TRAWL_TRACEPOINT_EVENT(idle, ping, TRAWL_LOGLEVEL_INFO,
	TRAWL_ARGS(uint64_t seq),
	TRAWL_FIELDS(TRAWL_FIELD_INT(uint64_t, seq, seq)))
int main(void)
{
	for (int i = 0; i < 3000 && !trawl_tracepoint_enabled(idle, ping); i++)
		usleep(10000);
	trawl_tracepoint(idle, ping, 0);
	for (int i = 0; i < 6000 && access("go", F_OK) != 0; i++)
		usleep(10000);
	trawl_tracepoint(idle, ping, 1);
	for (int i = 0; i < 12000 && access("end", F_OK) != 0; i++)
		usleep(10000);
	return 0;
}
EOF
san=${TRAWL_SAN:+-fsanitize=$TRAWL_SAN}
${CC:-cc} -std=gnu11 -O2 $san -I"$TRAWL_SRC/include" -o emit emit.c "$TRAWL_BUILD/libtrawl.a" \
	-lpthread -lm > cc.log 2>&1 || { sed 's/^/# /' cc.log | head; bail "cannot build the program"; }

relay_agent_up

"$TRAWL" create idle --relay "$DATA" > ctl.out 2>&1 && "$TRAWL" enable idle 'idle:ping' >> ctl.out 2>&1 &&
	"$TRAWL" start idle >> ctl.out 2>&1 || { cat ctl.out; bail "the session did not start"; }
./emit 2> emit.err &
EMIT=$!
timeout 300 "$TRAWL" print --live "net://$LIVE/host/$HOST/idle" --wait 30 > out.txt 2> live.err &
VIEWER=$!

# the live line of trawl list: timer ms and ticks
live() { "$TRAWL" list idle | sed -n 's/^ *live: timer \([0-9]*\) ms, \([0-9]*\) ticks\{0,1\},.*/\1 \2/p'; }
waits() { "$TRAWL" list idle | grep -q '^ *live: .*(a viewer waits now)$'; }
shown() { grep -c 'seq = ' out.txt 2> /dev/null | awk -v n="$1" '{ exit !($1 >= n) }'; }
# the agent's loop thread's sleeps so far
vcs() { awk '$1 == "voluntary_ctxt_switches:" { print $2 }' /proc/"$AGENT"/status; }

until_ok 60 shown 1 && until_ok 30 waits
ok $? "the viewer shows event 0 and waits ($(live))"

# the idle window: 20 more live ticks, `trawl list` every 0.5 s (counted)
set -- $(live)
TIMER=${1:-100} K0=${2:-0}
V0=$(vcs) T0=$(date +%s%N) CALLS=0 K1=$K0
while [ "$K1" -lt $((K0 + 20)) ] && [ "$CALLS" -lt 120 ]; do
	sleep 0.5
	set -- $(live)
	K1=${2:-0} CALLS=$((CALLS + 1))
done
V1=$(vcs) T1=$(date +%s%N)
TICKS=$((K1 - K0)) WAKES=$((V1 - V0)) MS=$(( (T1 - T0) / 1000000 ))
# what one `trawl list` costs the loop here: 10 in a row
C0=$(vcs) KC0=$(live | awk '{ print $2 }')
for i in 1 2 3 4 5 6 7 8 9 10; do live > /dev/null; done
C1=$(vcs) KC1=$(live | awk '{ print $2 }')
PER=$(( (C1 - C0 - 3 * (KC1 - KC0) + 9) / 10 ))
[ "$PER" -ge 1 ] || PER=1
BOUND=$((3 * TICKS + PER * (CALLS + 1) + 5))
echo "# idle window of $MS ms: $TICKS ticks of $TIMER ms, the loop slept $WAKES times;" \
	"$CALLS trawl list calls of about $PER wakeups each; bound $BOUND (2 ms turns: $((MS / 2)))"
[ "$TICKS" -ge 20 ] && [ "$WAKES" -ge "$TICKS" ]
ok $? "$TICKS live ticks in $MS ms, and the loop woke at least once per tick ($WAKES)"
[ "$WAKES" -le "$BOUND" ]
ok $? "the loop woke $WAKES times in $MS ms: at most 3 per tick plus the test's $CALLS calls ($BOUND)"

touch go
until_ok 30 shown 2
ok $? "the event after the idle window reaches the viewer ($(grep -c 'seq = ' out.txt) shown)"

touch end
until_ok 30 gone "$EMIT"
"$TRAWL" stop idle > stop.out 2>&1
until_ok 30 gone "$VIEWER"
wait "$VIEWER"
rc=$?
is "$rc:$(grep -c 'seq = ' out.txt)" "0:2" "the viewer ends by itself (exit 0) once the session stopped, with both events"
[ -s live.err ] && sed 's/^/# viewer: /' live.err | head -5
"$TRAWL" destroy idle > /dev/null 2>&1
finish
