#!/bin/sh
# An idle session with a viewer attached wakes the relay and the viewer
# only for what the viewer needs (docs/relay.md, "What an idle relay
# costs"): an agent session created with --relay and no --live-timer
# (100 ms), a program that emits one event and then stays idle, `trawl
# print --live` attached.
#
# Over an idle window that ends on a positive signal (20 more live ticks,
# counted by `trawl list`), the voluntary context switches of every thread
# of the relay and of the viewer (/proc/PID/task/*/status: one per sleep
# that ended) are counted, and bounded by what the timers call for:
#  - the relay: twice per live tick (the agent's tick: the stream's
#    beacon, read as it comes), plus four per hold of the viewer's request
#    (the relay holds it up to live_hold_ms, its default 1000 ms: at the
#    hold's end the answer, and the viewer's next requests), plus 5. The
#    relay's loop woke every 10 ms while a request was held (100 a second:
#    about 15 per tick with the viewer's polls);
#  - the viewer: eight per hold, plus 5 (before, its polls at every tick:
#    about 10 per tick);
#  - each woke at least once (the right processes are counted: the hold
#    ends once a second);
#  - the program's next event, after the idle window, reaches the viewer
#    (an idle relay still answers at once), and the viewer ends by itself
#    (exit 0) once the session is stopped, with both events.
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v cc > /dev/null 2>&1 || skip_all "needs a C compiler for the program"
[ -r /proc/self/status ] && grep -q '^voluntary_ctxt_switches:' /proc/self/status ||
	skip_all "needs /proc/PID/status with voluntary_ctxt_switches"
plan 6

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
HOLD_MS=1000	# the relay's live_hold_ms (trawl relay's default)

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
# (not under timeout: its own pid is counted; the trap ends it)
"$TRAWL" print --live "net://$LIVE/host/$HOST/idle" --wait 30 > out.txt 2> live.err &
VIEWER=$!

# the live line of trawl list: timer ms and ticks
live() { "$TRAWL" list idle | sed -n 's/^ *live: timer \([0-9]*\) ms, \([0-9]*\) ticks\{0,1\},.*/\1 \2/p'; }
waits() { "$TRAWL" list idle | grep -q '^ *live: .*(a viewer waits now)$'; }
shown() { grep -c 'seq = ' out.txt 2> /dev/null | awk -v n="$1" '{ exit !($1 >= n) }'; }
# the sleeps of every thread of PID so far
vcs() { cat /proc/"$1"/task/*/status 2> /dev/null | awk '$1 == "voluntary_ctxt_switches:" { n += $2 } END { print n + 0 }'; }

until_ok 60 shown 1 && until_ok 30 waits
ok $? "the viewer shows event 0 and waits ($(live))"
# the viewer's first round trips after event 0 are done once a hold
# passed: the window begins 15 ticks later
ticks() { live | awk '{ print $2 + 0 }'; }
KS=$(ticks)
past() { [ "$(ticks)" -ge $((KS + 15)) ]; }
until_ok 30 past

set -- $(live)
TIMER=${1:-100} K0=${2:-0}
R0=$(vcs "$RELAY") V0=$(vcs "$VIEWER") T0=$(date +%s%N) CALLS=0 K1=$K0
while [ "$K1" -lt $((K0 + 20)) ] && [ "$CALLS" -lt 120 ]; do
	sleep 0.5
	set -- $(live)
	K1=${2:-0} CALLS=$((CALLS + 1))
done
R1=$(vcs "$RELAY") V1=$(vcs "$VIEWER") T1=$(date +%s%N)
TICKS=$((K1 - K0)) RW=$((R1 - R0)) VW=$((V1 - V0)) MS=$(( (T1 - T0) / 1000000 ))
HOLDS=$((MS / HOLD_MS + 1))
RB=$((2 * TICKS + 4 * HOLDS + 5)) VB=$((8 * HOLDS + 5))
echo "# idle window of $MS ms: $TICKS ticks of $TIMER ms, $HOLDS holds of $HOLD_MS ms;" \
	"the relay woke $RW times (bound $RB), the viewer $VW (bound $VB)"
[ "$TICKS" -ge 20 ]
ok $? "20 live ticks in the window ($TICKS in $MS ms)"
[ "$RW" -ge 1 ] && [ "$RW" -le "$RB" ]
ok $? "the relay woke $RW times: at least once, at most 2 per tick and 4 per hold, plus 5 ($RB)"
[ "$VW" -ge 1 ] && [ "$VW" -le "$VB" ]
ok $? "the viewer woke $VW times: at least once, at most 8 per hold, plus 5 ($VB)"

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
