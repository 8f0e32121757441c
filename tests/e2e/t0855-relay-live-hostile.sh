#!/bin/sh
# The relay's live port (lib/relay/live.c) against a viewer that sends its
# requests ahead without reading the replies, and what babeltrace2 makes of
# the relay's live sessions.
#
# Checks: a viewer (tests/e2e/live-viewer.py, a raw socket) that sends 50
# GET_PACKET requests for a whole 7.6 MB stream in one go and reads nothing
# costs the relay at most its 4 MiB cap of waiting replies plus two such
# replies (its peak resident size, VmHWM; every reply queued would be 380
# MB), while babeltrace2 follows another session of the same relay to its
# end meanwhile; having read nothing for 10 s with the cap reached, it is
# closed, with a log line saying so. babeltrace2 -i lttng-live prints no
# "Cannot deterministically pick next live stream message iterator" for a
# session whose two streams' packets end, and whose beacons fall, at the
# same times (as the agents' and the kernel recorder's live timers make
# them), nor for an agent session streamed with its 50 ms live timer; and it
# shows the same events as from the relay's files.
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v python3 > /dev/null 2>&1 || skip_all "no python3 (the misbehaving viewer)"
command -v babeltrace2 > /dev/null 2>&1 || skip_all "babeltrace2 is not installed (the oracle)"
command -v "${CC:-cc}" > /dev/null 2>&1 || skip_all "no C compiler to build the live producer"
plan 11

: > empty.conf
export TRAWL_CONFIG="$TRASH/empty.conf"
RELAY="" AGENT="" pids=""
cleanup() {
	for p in $pids $AGENT $RELAY; do kill "$p" 2> /dev/null; done
}
trap cleanup EXIT
trap 'cleanup; exit 1' INT TERM HUP
bail() { echo "Bail out! $*"; exit 1; }
status_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }	# status_kb PID VmRSS
size() { stat -c %s "$1" 2> /dev/null || echo 0; }
tie_warnings() { grep -c 'Cannot deterministically pick' "$1"; }

san=""
case "$TRAWL_BUILD" in
*-address*) san="-fsanitize=address,undefined" ;;
*-thread*) san="-fsanitize=thread" ;;
esac
# shellcheck disable=SC2086
${CC:-cc} -std=gnu11 -O1 $san -I"$TRAWL_SRC/include" -o live-producer \
	"$TRAWL_SRC/tests/e2e/live-producer.c" "$TRAWL_BUILD/libtrawl.a" -lpthread -lm ||
	bail "cannot build the live producer"

# in the foreground: its log on relay.out
"$TRAWL" relay -f -o OUT --data 127.0.0.1:0 --live 127.0.0.1:0 > relay.out 2>&1 &
RELAY=$!
until_ok 30 grep -q '^trawl relay: data on' relay.out || { cat relay.out; bail "the relay did not start"; }
DATA=$(sed -n 's/^trawl relay: data on \([^,]*\), live on \([^,]*\), .*/\1/p' relay.out)
LIVE=$(sed -n 's/^trawl relay: data on \([^,]*\), live on \([^,]*\), .*/\2/p' relay.out)

# ---- 1. 50 GET_PACKET requests ahead, none of the replies read
# the producers wait until the test is done (at most 30 s: `wait`)
waits() { echo "wait $TRASH/$1"; }
{ printf 'stream 0\nev 0 1000000 280000\nflush 0 900000000\ntouch %s/atA\n' "$TRASH"
  waits endA; echo close; } > a.txt
./live-producer "$DATA" big n1 ust REFA < a.txt > pa.out 2>&1 &
pids="$pids $!"
until_ok 60 test -e atA || bail "producer big did not flush"
len=$(size REFA/channel0_0)
until_ok 60 eval '[ "$(size OUT/big/n1/ust/channel0_0)" -eq "$len" ]' ||
	bail "the relay does not have the $len bytes of big/n1/ust/channel0_0"
rss0=$(status_kb "$RELAY" VmRSS)
python3 "$TRAWL_SRC/tests/e2e/live-viewer.py" "$LIVE" big pipeline 50 "$len" "$TRASH/doneA" \
	> pipe.out 2> pipe.err &
PIPE=$!
pids="$pids $PIPE"
until_ok 60 has_lines pipe.out 1 || { cat pipe.err; bail "the pipelining viewer did not send"; }

# meanwhile a viewer that reads: babeltrace2 on another session, to its end
{ printf 'stream 0\nstream 1\nev 0 1000000 5\nev 1 1000500 5\nflush 0 2000000\nflush 1 2000000\n'
  printf 'touch %s/atB\n' "$TRASH"; waits goB
  printf 'ev 0 3000000 5\nev 1 3000500 5\nclose\n'; } > b.txt
./live-producer "$DATA" small n1 ust REFB < b.txt > pb.out 2>&1 &
PB=$!
pids="$pids $PB"
until_ok 60 test -e atB || bail "producer small did not flush"
timeout 120 babeltrace2 -i lttng-live "net://$LIVE/host/n1/small" > vb.txt 2> vb.err &
VB=$!
pids="$pids $VB"
until_ok 60 has_lines vb.txt 10
shown=$?
grep -q 'reads none of its' relay.out
closed_before=$?
# the relay read the 50 requests before it served babeltrace2 (one thread,
# and they came first): whatever it would take for them, it took
rss1=$(status_kb "$RELAY" VmRSS) hwm1=$(status_kb "$RELAY" VmHWM)
# a sanitizer's shadow memory multiplies what the relay touches (seen:
# x3.3 under TSan); every reply queued would be 380 MB, x1 or not
mult=1
case "$TRAWL_BUILD" in
*-address*) mult=3 ;;
*-thread*) mult=5 ;;
esac
bound=$((rss0 + (4096 + 2 * len / 1024 + 8192) * mult))
[ "$hwm1" -lt "$bound" ]
ok $? "50 GET_PACKET of $len bytes sent ahead, none read: the relay peaks at ${hwm1} KiB (${rss0} before, ${rss1} now; bound ${bound}: (the 4 MiB cap + 2 replies + 8 MiB) x $mult)"
[ $shown -eq 0 ] && [ $closed_before -ne 0 ]
ok $? "meanwhile babeltrace2 shows another session's 10 flushed events (the stuck viewer still connected)"
touch goB
waitpid() { until_ok "$2" gone "$1" && wait "$1"; }
waitpid "$VB" 60
rc=$?
babeltrace2 REFB > refb.txt 2> /dev/null
[ $rc -eq 0 ] && [ "$(lines vb.txt)" -eq 20 ] && cmp -s vb.txt refb.txt
ok $? "... and all 20 once its producer closed, exactly babeltrace2 REFB's (exit $rc, $(lines vb.txt) lines)"
until_ok 40 grep -q 'reads none of its' relay.out
ok $? "the viewer that reads nothing is closed after 10 s: $(grep -o 'reads none of its.*' relay.out | head -1)"
timeout 10 babeltrace2 -i lttng-live "net://$LIVE" 2> /dev/null > list.txt
grep -q '/host/n1/big (.*, 0 client(s) connected)' list.txt
ok $? "the relay goes on, the session it read listed without it: $(grep /host/n1/big list.txt)"
touch endA doneA
until_ok 60 gone "$PIPE"
wait "$PIPE"
grep -q '^closed by the relay' pipe.out
ok $? "... it finds its connection closed ($(tail -1 pipe.out))"

# ---- 2. two streams whose packets end, and beacons fall, at the same times
{ printf 'stream 0\nstream 1\nev 0 1000000 5\nev 1 1000500 5\nflush 0 2000000\nflush 1 2000000\n'
  printf 'beacon 0 3000000\nbeacon 1 3000000\ntouch %s/atC\n' "$TRASH"; waits goC
  printf 'ev 0 4000000 3\nev 1 4000500 3\nflush 0 5000000\nflush 1 5000000\n'
  printf 'beacon 0 6000000\nbeacon 1 6000000\ntouch %s/atC2\n' "$TRASH"; waits goC2; echo close; } > c.txt
./live-producer "$DATA" tie n1 ust REFC < c.txt > pc.out 2>&1 &
pids="$pids $!"
until_ok 60 test -e atC || bail "producer tie did not flush"
timeout 120 babeltrace2 -i lttng-live "net://$LIVE/host/n1/tie" > vc.txt 2> vc.err &
VC=$!
pids="$pids $VC"
# each step shown while the producer waits: the viewer went past both
# streams' packet ends and beacons
until_ok 60 has_lines vc.txt 10 && touch goC && until_ok 60 test -e atC2 &&
	until_ok 60 has_lines vc.txt 16
ok $? "babeltrace2 follows two streams whose packets end and beacons fall at the same times ($(lines vc.txt) events)"
touch goC2
waitpid "$VC" 60
rc=$?
babeltrace2 OUT/tie > outc.txt 2> /dev/null
[ $rc -eq 0 ] && cmp -s vc.txt outc.txt
ok $? "... to the end (exit $rc), the events of the relay's files"
is "$(tie_warnings vc.err)" 0 "... without a \"Cannot deterministically pick next live stream message iterator\" warning"

# ---- 3. an agent session streamed with its live timer (every stream's
# beacon at the same tick)
COUNTER="$TRAWL_BUILD/examples/ust-counter"
if [ -x "$COUNTER" ]; then
	export TRAWL_AGENT_SOCKET="$TRASH/agent.sock"
	"$TRAWL" agent --pidfile agent.pid 2> agent.err
	AGENT=$(cat agent.pid 2> /dev/null)
	[ -n "$AGENT" ] || { cat agent.err; bail "the agent did not start"; }
	"$TRAWL" create s4 --relay "$DATA" --relay-session a4 --live-timer 50 > c4.out 2> c4.err &&
		"$TRAWL" enable s4 'counter:*' > /dev/null && "$TRAWL" start s4 > /dev/null ||
		{ cat c4.err; bail "the agent session did not start"; }
	H=$(hostname)
	listed() { timeout 10 babeltrace2 -i lttng-live "net://$LIVE" 2> /dev/null | grep -q "/host/$H/a4 ("; }
	until_ok 60 listed
	timeout 120 babeltrace2 -i lttng-live "net://$LIVE/host/$H/a4" > v4.txt 2> v4.err &
	V4=$!
	pids="$pids $V4"
	"$COUNTER" -n 30 -t 3 -s 10000 > app4.out
	# live: most of them before the stop (not all: the streams of an
	# application that exited get no beacon after their last packet, so
	# the other streams' later events wait for the stop)
	until_ok 60 eval '[ "$(grep -c " counter:" v4.txt)" -ge 90 ]'
	live=$(grep -c ' counter:' v4.txt)
	"$TRAWL" stop s4 > /dev/null 2>&1
	waitpid "$V4" 60
	rc=$?
	babeltrace2 OUT/a4 > out4.txt 2> /dev/null
	[ "$live" -ge 90 ] && [ $rc -eq 0 ] && [ "$(grep -c ' counter:' v4.txt)" -eq 180 ] &&
		cmp -s v4.txt out4.txt
	ok $? "an agent session (3 threads, live timer 50 ms): babeltrace2 shows its events live ($live before the stop), all 180 as from the files (exit $rc)"
	is "$(tie_warnings v4.err)" 0 "... without a \"Cannot deterministically pick\" warning"
	"$TRAWL" destroy s4 > /dev/null 2>&1
	kill "$AGENT" 2> /dev/null
	until_ok 10 gone "$AGENT"
	AGENT=""
else
	skip "examples/ust-counter is not built"
	skip "examples/ust-counter is not built"
fi
kill "$RELAY"
until_ok 10 gone "$RELAY"
RELAY=""
finish
