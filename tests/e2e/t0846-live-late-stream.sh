#!/bin/sh
# A stream that joins a live session late (an application's thread, one
# stream each, whose buffer the agent reads after the kernel recorder's
# packets of that time went out). Two producers of one host and session
# on trawl's relay (tests/e2e/live-producer.c): "kernel", its stream there
# from the start, and "ust", whose HELLO asks to send horizons (as the
# agent's does) and whose stream comes only later, with events older
# than the kernel's next ones:
#   kernel: 5 events at 1.0 s, then (at go) 3 at 2.0 s
#   ust:    horizon 1.2 s; at go its stream, 5 events at 1.5 s, horizon 3 s
# - babeltrace2 (attached before go) shows the first 5 before go, and
#   then all 13 in time order, exit 0: the relay gave it nothing past the
#   ust trace's horizon, so the new stream was announced before the
#   kernel's events at 2.0 s;
# - trawl print --live the same 13, in time order;
# - without horizons (an older producer), babeltrace2 2.0 meets the
#   stream's events after later ones and stops with an error (its
#   lttng-live source refuses a "late" message): what the horizon
#   prevents, and the proof that this scenario tests it.
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v cc > /dev/null 2>&1 || skip_all "needs a C compiler for the live producer"
command -v babeltrace2 > /dev/null 2>&1 || skip_all "needs babeltrace2 (the viewer)"
plan 6

pids=""
cleanup() { for p in $pids; do kill "$p" 2> /dev/null; done; }
trap cleanup EXIT
san=${TRAWL_SAN:+-fsanitize=$TRAWL_SAN}
${CC:-cc} -std=gnu11 -O2 -Wall -Wextra -Werror $san -I"$TRAWL_SRC/include" -o live-producer \
	"$TRAWL_SRC/tests/e2e/live-producer.c" "$TRAWL_BUILD/libtrawl.a" -lpthread -lm -lz > lp-cc.log 2>&1
[ -x live-producer ] || { sed 's/^/# /' lp-cc.log | head; echo "Bail out! no live producer"; exit 1; }

cat > k.txt << 'EOS'
stream 0
ev 0 1000000000 5
flush 0 1000100000
beacon 0 2000000000
touch kfirst
wait go
ev 0 2000000000 3
flush 0 2000100000
beacon 0 3000000000
wait done
close
EOS
cat > u.txt << 'EOS'
horizon 1200000000
touch ufirst
wait go
stream 0
ev 0 1500000000 5
flush 0 1500100000
horizon 3000000000
beacon 0 3000000000
wait done
close
EOS
# times in order, as babeltrace2 and trawl print write them ([HH:MM:SS.ns])
stamps() { sed -n 's/^\[[0-9:]*\.\([0-9]*\)\].*/\1/p' "$1" | tr '\n' ' '; }
want="000000001 000001001 000002001 000003001 000004001 500000001 500001001 500002001 500003001 500004001 000000001 000001001 000002001 "

# run NAME VIEWER HORIZON: a relay, both producers, the viewer (attached
# before go); NAME.txt, NAME.err, NAME.rc, NAME.before (lines before go)
run() {
	rm -rf OUT go done kfirst ufirst
	relay_up OUT
	./live-producer "$DATA" s1 h1 kernel < k.txt > "$1-k.out" 2> "$1-k.err" &
	PK=$!
	./live-producer $3 "$DATA" s1 h1 ust < u.txt > "$1-u.out" 2> "$1-u.err" &
	PU=$!
	pids="$pids $PK $PU"
	until_ok 30 eval '[ -f kfirst ] && [ -f ufirst ]'
	case $2 in
	bt) timeout 60 babeltrace2 -i lttng-live "net://$LIVE/host/h1/s1" > "$1.txt" 2> "$1.err" & ;;
	trawl) timeout 60 "$TRAWL" print --live "net://$LIVE/session/s1" > "$1.txt" 2> "$1.err" & ;;
	esac
	V=$!
	pids="$pids $V"
	until_ok 30 has_lines "$1.txt" 5
	lines "$1.txt" > "$1.before"
	touch go
	# the kernel's events at 2.0 s come once the viewer had the stream's
	if [ -n "$3" ]; then until_ok 30 has_lines "$1.txt" 13; else until_ok 30 gone "$V"; fi
	touch done
	until_ok 60 gone "$V"
	wait "$V"
	echo $? > "$1.rc"
	until_ok 30 eval 'gone $PK && gone $PU'
	wait "$PK"
	_k=$?
	wait "$PU"
	echo "$_k $?" > "$1.prc"
	kill "$RELAY" 2> /dev/null
	wait "$RELAY" 2> /dev/null
	cat relay.err >> relays.err
}

run bt bt --horizon
is "$(cat bt.before)" 5 "babeltrace2 shows the kernel's first events before the late stream comes (up to the horizon)"
is "$(cat bt.rc)|$(stamps bt.txt)" "0|$want" \
	"babeltrace2: the late stream's events between the kernel's, all 13 in time order, exit 0"
run tp trawl --horizon
is "$(cat tp.before)|$(cat tp.rc)|$(stamps tp.txt)" "5|0|$want" \
	"trawl print --live: the same 13 events in time order, exit 0"
run old bt ""
ok $([ "$(cat old.rc)" != 0 ] && [ "$(lines old.txt)" -lt 13 ]; echo $?) \
	"without horizons, babeltrace2 stops at the late stream's events (exit $(cat old.rc), $(lines old.txt) shown): what the horizon prevents"
is "$(grep -c 'producer .*complete' relays.err)|$(grep -ci 'horizon\|refused\|connection closed' relays.err)|$(cat bt.prc tp.prc old.prc | tr '\n' ' ')" \
	"6|0|0 0 0 0 0 0 " "each producer's trace complete at the relay, no message refused, each producer exits 0"

# a horizon that never moves (a stopped agent; a peer that asked to send
# horizons and sends none) holds the session's viewers back for a while
# (5 s and ten live timers: 6 s here), not for good
cat > u2.txt << 'EOS'
horizon 1200000000
touch ufirst
wait done
close
EOS
rm -rf OUT go done kfirst ufirst
relay_up OUT
./live-producer "$DATA" s2 h1 kernel < k.txt > st-k.out 2> st-k.err &
PK=$!
./live-producer --horizon "$DATA" s2 h1 ust < u2.txt > st-u.out 2> st-u.err &
PU=$!
pids="$pids $PK $PU"
until_ok 30 eval '[ -f kfirst ] && [ -f ufirst ]'
timeout 60 "$TRAWL" print --live "net://$LIVE/session/s2" > st.txt 2> st.err &
V=$!
pids="$pids $V"
until_ok 30 has_lines st.txt 5
t0=$(date +%s%N)
touch go
until_ok 30 has_lines st.txt 8
ok=$?
t1=$(date +%s%N)
ms=$(( (t1 - t0) / 1000000 ))
[ $ok -eq 0 ] && [ "$ms" -ge 5000 ]
ok $? "a horizon that never moves holds the kernel's later events back $ms ms (at least 5000: its bound), then lets them go"
touch done
until_ok 30 eval 'gone $PK && gone $PU && gone $V'
finish
