#!/bin/sh
# A recording in progress can be read (docs/ust.md, docs/kernel.md: the
# metadata is written when the trace starts, and again before a packet of
# a class it does not declare yet): while an agent session records, and
# while `trawl record -d` records kernel events (root), once a packet is
# written (its index entry: the positive signal, waited for at most 20 s),
# `trawl info` reads the trace: events > 0, no complaint about metadata,
# and the first event's time is today's (the clock is declared from the
# start, with --clock monotonic; with the TSC, its frequency measured so
# far, every second).
. "$TRAWL_SRC/tests/e2e/lib.sh"
APP="$TRAWL_BUILD/examples/ust-counter"
[ -x "$APP" ] || { echo "Bail out! $APP is not built"; exit 1; }
plan 15

: > empty.conf
export TRAWL_CONFIG="$TRASH/empty.conf"
export TRAWL_AGENT_SOCKET="$TRASH/agent.sock"
AGENT_PID="" APID="" RPID=""
cleanup() {
	[ -n "$APID" ] && kill "$APID" 2>/dev/null
	[ -n "$RPID" ] && kill "$RPID" 2>/dev/null
	[ -n "$AGENT_PID" ] && kill "$AGENT_PID" 2>/dev/null
}
trap cleanup EXIT

# a packet written: an index file longer than its header (16 bytes)
packet_in() {
	for f in "$1"/index/*.idx; do
		[ -f "$f" ] && [ "$(wc -c < "$f")" -gt 16 ] && return 0
	done
	return 1
}
# info's event count of a trace directory, and its first time (s)
info_events() { sed -n 's/^ *events *\([0-9]*\), .*/\1/p' "$1" | head -1; }
info_first_s() { sed -n 's/^ *first .*(\([0-9]*\) ns)$/\1/p' "$1" | head -1 | cut -c1-10; }
near_now() { [ -n "$1" ] && d=$(($(date +%s) - $1)) && [ "$d" -ge 0 ] && [ "$d" -lt 300 ]; }

"$TRAWL" agent --host h --pidfile agent.pid > agent.out 2>&1 ||
	{ echo "Bail out! the agent does not start"; cat agent.out; exit 1; }
AGENT_PID=$(cat agent.pid)

# 1. an agent session (user space), recording
"$TRAWL" create u -o U --clock monotonic > /dev/null && "$TRAWL" enable u 'counter:*' > /dev/null &&
	"$TRAWL" start u > /dev/null
ok $? "a user-space session records"
"$APP" -n 0 -s 100 > /dev/null & APID=$!
until_ok 20 packet_in U/h/ust
ok $? "a packet of the running application is written"
"$TRAWL" info U > uinfo.out 2> uinfo.err
is "$?:$(grep -c metadata uinfo.err)" "0:0" "info reads the session while it records"
n=$(info_events uinfo.out)
[ "${n:-0}" -gt 0 ]
ok $? "... with its events so far ($n)"
near_now "$(info_first_s uinfo.out)"
ok $? "... at their real times (the clock is declared from the start)"
kill "$APID"; wait "$APID" 2>/dev/null; APID=""
"$TRAWL" stop u > /dev/null
ok $? "the session then stops"

# 1b. the same with the TSC clock (where it is the clocksource): the
# frequency measured so far is declared every second
if tsc_default; then
	"$TRAWL" create u2 -o U2 --clock tsc > /dev/null && "$TRAWL" enable u2 'counter:*' > /dev/null &&
		"$TRAWL" start u2 > /dev/null
	"$APP" -n 0 -s 100 > /dev/null & APID=$!
	umeasured() { packet_in U2/h/ust && grep -q 'freq = ' U2/h/ust/metadata &&
		! grep -q 'freq = 1000000000;' U2/h/ust/metadata; }
	until_ok 20 umeasured
	ok $? "a TSC session recording: a packet, and the frequency measured so far declared"
	"$TRAWL" info U2 > u2info.out 2> u2info.err
	n=$(info_events u2info.out)
	[ "${n:-0}" -gt 0 ] && near_now "$(info_first_s u2info.out)" && ! grep -q metadata u2info.err
	ok $? "... info reads it at its real times ($n events)"
	kill "$APID"; wait "$APID" 2>/dev/null; APID=""
	"$TRAWL" stop u2 > /dev/null
	ok $? "... and it stops"
else
	skip "the clocksource is not the TSC"; skip "the clocksource is not the TSC"
	skip "the clocksource is not the TSC"
fi

# 2. trawl record (kernel events), recording
if [ "$(id -u)" != 0 ]; then
	n=0; while [ $n -lt 6 ]; do skip "needs root (kernel events)"; n=$((n + 1)); done
	finish
fi
"$TRAWL" record -o R --host h --clock mono -d 60 > rec.out 2> rec.err & RPID=$!
until_ok 20 packet_in R/h/kernel
if [ $? -ne 0 ] && ! kill -0 "$RPID" 2>/dev/null; then
	why=$(head -1 rec.err)
	n=0; while [ $n -lt 6 ]; do skip "cannot record kernel events here: $why"; n=$((n + 1)); done
	RPID=""
	finish
fi
"$TRAWL" info R > rinfo.out 2> rinfo.err
is "$?:$(grep -c metadata rinfo.err)" "0:0" "info reads a kernel recording in progress"
n=$(info_events rinfo.out)
[ "${n:-0}" -gt 0 ] && near_now "$(info_first_s rinfo.out)"
ok $? "... its events so far ($n), at their real times"
kill -INT "$RPID"; wait "$RPID"
is "$?" 0 "record then stops on SIGINT"
RPID=""

# 3. the same with the TSC clock (where it is the clocksource): its
# frequency, measured as the recording goes, is declared every second
if ! tsc_default; then
	skip "the clocksource is not the TSC"; skip "the clocksource is not the TSC"
	skip "the clocksource is not the TSC"
	finish
fi
"$TRAWL" record -o T --host h --clock tsc -d 60 > trec.out 2> trec.err & RPID=$!
measured() { packet_in T/h/kernel && grep -q 'freq = ' T/h/kernel/metadata &&
	! grep -q 'freq = 1000000000;' T/h/kernel/metadata; }
until_ok 20 measured
ok $? "a TSC recording in progress: a packet, and the frequency measured so far declared"
"$TRAWL" info T > tinfo.out 2> tinfo.err
n=$(info_events tinfo.out)
[ "${n:-0}" -gt 0 ] && near_now "$(info_first_s tinfo.out)" && ! grep -q metadata tinfo.err
ok $? "... info reads it at its real times ($n events)"
kill -INT "$RPID"; wait "$RPID"
is "$?" 0 "... and it stops on SIGINT"
RPID=""
finish
