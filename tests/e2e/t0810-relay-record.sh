#!/bin/sh
# The recorders streaming to a relay: trawl record --relay (kernel events of
# a private tracefs instance, and the command's tracepoints through its
# private agent) and trawl create --relay (a session of the agent), with
# their live timers, against babeltrace2 -i lttng-live.
#
# Checks: record -o DIR --relay writes the same traces to DIR and to the
# relay (every stream and index file byte for byte; trawl print alike); the
# kernel and user-space clocks at the relay are the machine's (events dated
# now, kernel and user space within the recording's seconds); a live viewer
# attached before the command starts shows, while the command still runs,
# the events it emitted so far, then ends with exactly babeltrace2's output
# of the relay's finished traces; record --relay without -o writes nothing
# locally; an agent session created with --relay streams the tracepoints of
# a program (every emitted event at the relay, live while the session
# records); create rejects --live-timer without --relay.
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v babeltrace2 > /dev/null 2>&1 || skip_all "babeltrace2 is not installed (the oracle)"
command -v stdbuf > /dev/null 2>&1 || skip_all "no stdbuf (coreutils): the live viewer must print line by line"
[ -x "$TRAWL_BUILD/examples/ust-counter" ] || skip_all "examples/ust-counter is not built"
COUNTER="$TRAWL_BUILD/examples/ust-counter"
plan 18

: > empty.conf
export TRAWL_CONFIG="$TRASH/empty.conf"
RELAY="" AGENT="" VIEWER=""
cleanup() {
	for p in $VIEWER $AGENT $RELAY; do kill "$p" 2> /dev/null; done
}
trap cleanup EXIT
trap 'cleanup; exit 1' INT TERM HUP
bail() { echo "Bail out! $*"; exit 1; }
listed() { timeout 10 babeltrace2 -i lttng-live "net://$LIVE" 2> /dev/null | grep -q "/host/$1/$2 ("; }
# attached HOST SESSION: listed with its viewer (the relay counts one at ATTACH)
attached() {
	timeout 10 babeltrace2 -i lttng-live "net://$LIVE" 2> /dev/null |
		grep -q "/host/$1/$2 (.*, 1 client(s) connected)"
}

"$TRAWL" relay -o OUT --data 127.0.0.1:0 --live 127.0.0.1:0 --pidfile relay.pid > relay.out 2> relay.err
RELAY=$(cat relay.pid 2> /dev/null)
DATA=$(sed -n 's/^trawl relay: data on \([^,]*\), live on \([^,]*\), .*/\1/p' relay.out)
LIVE=$(sed -n 's/^trawl relay: data on \([^,]*\), live on \([^,]*\), .*/\2/p' relay.out)
[ -n "$RELAY" ] && [ -n "$DATA" ] && [ -n "$LIVE" ] || { cat relay.err; bail "the relay did not start"; }

# ---- 1. trawl record -o DIR --relay: the same traces in both places
kernel=no
if [ "$(id -u)" = 0 ] && "$TRAWL" record -q -k sched_switch -o kcheck --host k --no-ust \
	--duration 0.1 > /dev/null 2>&1; then
	kernel=yes
fi
if [ $kernel = yes ]; then
	# the command waits for a file, so that the viewer attaches first
	cat > cmd.sh <<EOF
while [ ! -f go ]; do sleep 0.02; done
"$COUNTER" -n 20 -t 2 -s 20000 -w
touch emitted
while [ ! -f done ]; do sleep 0.02; done
EOF
	t0=$(date +%s)
	"$TRAWL" record -o LOCAL --relay "$DATA" --session r1 --host n1 -k sched_switch \
		--live-timer 50 -- sh cmd.sh > rec.out 2> rec.err &
	REC=$!
	until_ok 60 listed n1 r1
	ok $? "record --relay: the session n1/r1 is listed while it records"
	timeout 300 stdbuf -oL babeltrace2 -i lttng-live "net://$LIVE/host/n1/r1" > live.txt 2> live.err &
	VIEWER=$!
	until_ok 60 attached n1 r1
	att=$?
	touch go
	until_ok 60 test -f emitted
	# 80 tracepoint events (2 threads x 40 ticks and debug events) were
	# emitted; the viewer shows them while the command still waits (as long
	# as we like: it ends at `done`). In time order: behind every kernel
	# event before them, and a busy machine's scheduler makes many (160000
	# seen in a run beside other tests), so the wait is long
	until_ok 60 eval '[ "$(grep -c " counter:" live.txt)" -ge 80 ]'
	[ $? -eq 0 ] && [ $att -eq 0 ]
	ok $? "live: the viewer (attached before the command began) shows the command's 80 events while it still runs ($(grep -c ' counter:' live.txt) shown)"
	# (what the viewer said, when it shows less: its errors decide why)
	[ "$(grep -c ' counter:' live.txt)" -ge 80 ] ||
		{ echo "# $(lines live.txt) lines live, viewer alive: $(gone "$VIEWER" && echo no || echo yes)"; tail -5 live.err | sed 's/^/#   /'; }
	touch done
	until_ok 60 gone "$REC"
	wait "$REC"
	is "$?" 0 "record --relay exits 0"
	until_ok 60 gone "$VIEWER"
	wait "$VIEWER"
	is "$?" 0 "the live viewer ends by itself (exit 0) once the recording is over"
	VIEWER=""
	babeltrace2 OUT/r1/n1 > final.txt 2> /dev/null
	[ -s final.txt ] && cmp -s live.txt final.txt
	ok $? "the live viewer's output is babeltrace2's of the relay's traces ($(lines final.txt) lines)"
	same=yes
	for f in $(cd LOCAL/n1 && find . -type f ! -name metadata | sort); do
		cmp -s "LOCAL/n1/$f" "OUT/r1/n1/$f" || { same="no: $f"; break; }
	done
	[ "$(cd LOCAL/n1 && find . -type f | sort)" = "$(cd OUT/r1/n1 && find . -type f | sort)" ] ||
		same="no: other files"
	is "$same" yes "every stream and index file at the relay equals the local one"
	"$TRAWL" print LOCAL > local.txt 2> /dev/null
	"$TRAWL" print OUT/r1 > relay.txt 2> /dev/null
	[ -s local.txt ] && cmp -s local.txt relay.txt
	ok $? "trawl print: the relay's session equals the local one ($(lines relay.txt) events)"
	t1=$(date +%s)
	# --clock-seconds: seconds since the epoch; every event within the run
	babeltrace2 --clock-seconds OUT/r1/n1/kernel 2> /dev/null | head -1 |
		sed -E 's/^\[([0-9]+)\..*/\1/' > k.sec
	babeltrace2 --clock-seconds OUT/r1/n1/ust 2> /dev/null | head -1 |
		sed -E 's/^\[([0-9]+)\..*/\1/' > u.sec
	ks=$(cat k.sec) us=$(cat u.sec)
	[ -n "$ks" ] && [ "$ks" -ge $((t0 - 1)) ] && [ "$ks" -le $((t1 + 1)) ]
	ok $? "the relay's kernel trace is dated now (first event $ks s, recording $t0..$t1)"
	[ -n "$us" ] && [ "$us" -ge $((t0 - 1)) ] && [ "$us" -le $((t1 + 1)) ]
	ok $? "the relay's user-space trace is dated now (first event $us s)"
	grep -E 'offset(_s)? =' LOCAL/n1/kernel/metadata > lk.txt
	grep -E 'offset(_s)? =' OUT/r1/n1/kernel/metadata > rk.txt
	cmp -s lk.txt rk.txt && [ -s rk.txt ]
	ok $? "the kernel clock's offset at the relay is the local trace's"
	grep -q 'streamed\|relay' rec.err && grep -q "r1/n1/kernel" rec.err
	ok $? "record says where the traces went (the relay and the session)"

	# ---- 2. record --relay without -o: nothing local
	mkdir empty && cd empty
	"$TRAWL" record --relay "$DATA" --session r2 --host n2 -k sched_switch -q \
		-- "$COUNTER" -n 10 > ../r2.out 2> ../r2.err
	rc=$?
	cd ..
	is "$rc:$(ls -A empty)" "0:" "record --relay without -o exits 0 and writes nothing here"
	n=$("$TRAWL" print -e 'counter:*' OUT/r2 2> /dev/null | wc -l)
	is "$n" 20 "the relay has the command's 20 events (10 ticks, 10 debug events)"
else
	for i in 1 2 3 4 5 6 7 8 9 10 11 12; do skip "kernel recording needs root and tracefs"; done
fi

# ---- 3. an agent session streamed: trawl create --relay
export TRAWL_AGENT_SOCKET="$TRASH/agent.sock"
"$TRAWL" agent --pidfile agent.pid 2> agent.err
AGENT=$(cat agent.pid 2> /dev/null)
[ -n "$AGENT" ] || { cat agent.err; bail "the agent did not start"; }
"$TRAWL" create s3 --live-timer 50 > c0.out 2> c0.err
is "$?" 2 "create --live-timer without --relay is a usage error"
"$TRAWL" create s3 --relay "$DATA" --relay-session a3 --live-timer 50 > c.out 2> c.err &&
	"$TRAWL" enable s3 'counter:*' > /dev/null && "$TRAWL" start s3 > /dev/null
ok $? "create --relay, enable, start ($(cat c.out))"
until_ok 60 listed "$(hostname)" a3
timeout 300 stdbuf -oL babeltrace2 -i lttng-live "net://$LIVE/host/$(hostname)/a3" > live3.txt 2> live3.err &
VIEWER=$!
"$COUNTER" -n 30 -t 3 -s 10000 > app3.out
# 3 threads x 30 ticks + 30 debug events each: shown while the session records
until_ok 60 eval '[ "$(grep -c " counter:" live3.txt)" -ge 180 ]'
ok $? "live: the session's 180 events are shown while it still records ($(grep -c ' counter:' live3.txt))"
"$TRAWL" stop s3 > stop.out 2> stop.err
until_ok 60 gone "$VIEWER"
babeltrace2 OUT/a3 > final3.txt 2> /dev/null
n=$("$TRAWL" print -e 'counter:*' OUT/a3 2> /dev/null | wc -l)
[ "$n" = 180 ] && cmp -s live3.txt final3.txt
ok $? "after stop: the relay has all 180 events, and the viewer showed exactly them"
VIEWER=""
"$TRAWL" destroy s3 > /dev/null 2>&1
kill "$AGENT" 2> /dev/null
until_ok 10 gone "$AGENT"
AGENT=""
kill "$RELAY"
until_ok 10 gone "$RELAY"
ok $? "the relay stops on SIGTERM"
RELAY=""
finish
