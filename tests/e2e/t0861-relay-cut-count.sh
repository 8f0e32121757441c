#!/bin/sh
# A producer cut off by the relay counts what the relay did not store as
# discarded, exactly (issue 28 item 8), on loopback.
#
# Checks, for trawl simulate --relay against a relay whose files may not
# grow past 300 kB (prlimit --fsize: as a full disk) and a relay with a
# per-host quota (then with a local copy too), and for the kernel recorder
# (trawl record --relay, root) against a quota: the producer's summary says
# how many events it emitted, how many the relay stored and how many it
# discarded, exactly (no "at most"); what the relay stored is what trawl
# info reads back from the relay's output; emitted = stored + discarded,
# and some were discarded; the local copy holds every emitted event. The
# same for an agent's session streamed, its application's events emitted:
# without a live timer (its packets go whole, their events counted by the
# ring) and with the default one (its packets go in parts cut at each
# tick, each part's events counted by the agent).
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v prlimit > /dev/null 2>&1 || skip_all "no prlimit (util-linux)"
plan 30

: > empty.conf
export TRAWL_CONFIG="$TRASH/empty.conf"
unset TRAWL_SECRET_FILE
PID="" AP=""
cleanup() { for p in $PID $AP; do kill "$p" 2> /dev/null; done; }
trap cleanup EXIT
bail() { echo "Bail out! $*"; exit 1; }
start() {	# start NAME [prlimit args] -- relay args: sets PID, DATA
	_nm=$1
	shift
	_pl=""
	while [ "$1" != -- ]; do _pl="$_pl $1"; shift; done
	shift
	rm -f "$_nm.fifo"
	mkfifo "$_nm.fifo" || return 1
	# shellcheck disable=SC2086
	prlimit $_pl "$TRAWL" relay -f -o "OUT-$_nm" --data 127.0.0.1:0 --live 127.0.0.1:0 \
		--ready-fd 3 "$@" 3> "$_nm.fifo" 2> "$_nm.log" &
	PID=$!
	_l=$(wait_ready "$_nm.fifo") || { cat "$_nm.log"; return 1; }
	# shellcheck disable=SC2086
	set -- $_l
	DATA=$2
}
stop() {
	kill -TERM "$PID" 2> /dev/null
	until_ok 10 gone "$PID" || kill -9 "$PID" 2> /dev/null
	wait "$PID" 2> /dev/null
	PID=""
}
# events DIR: the events trawl info reads in DIR (0 when none)
events() {
	_n=$("$TRAWL" info "$1" 2> /dev/null | sed -n 's/^total: .* \([0-9]*\) events, .*/\1/p')
	echo "${_n:-0}"
}
# counts FILE: "EMITTED STORED DISCARDED" of the simulate summary's relay line
counts() {
	sed -n 's/^trawl simulate: relay [^ ]*: \([0-9]*\) events* emitted, \([0-9]*\) stored at the relay, \([0-9]*\) discarded (not stored)$/\1 \2 \3/p' "$1"
}

# ---- files that may not grow: as a full disk
start fsz --fsize=300000 -- || bail "the relay did not start"
"$TRAWL" simulate --relay "$DATA" --session s --hosts 1 -e 400000 > sim.out 2> sim.err
is "$?" 1 "cut off, the producer fails (exit 1: $(cat sim.err))"
set -- $(counts sim.out) x x x
e=$1 st=$2 d=$3
[ "$e" != x ]
ok $? "its summary counts what the relay did not store, exactly ($(grep relay sim.out))"
stored=$(events OUT-fsz/s)
is "$stored" "$st" "the relay stored what the producer says (trawl info reads $stored events)"
[ "$e" != x ] && [ "$e" -eq $((stored + d)) ] && [ "$d" -gt 0 ] && [ "$stored" -gt 0 ]
ok $? "emitted $e = stored $stored + discarded $d, some stored, some discarded"
stop

# ---- a host over its quota
start quo -- --max-session-size 300K || bail "the relay did not start"
"$TRAWL" simulate --relay "$DATA" --session q --hosts 1 -e 400000 > q.out 2> q.err
is "$?" 1 "over its quota, the producer fails (exit 1: $(cat q.err))"
set -- $(counts q.out) x x x
e=$1 st=$2 d=$3
stored=$(events OUT-quo/q)
is "$stored" "$st" "over its quota: the relay stored what the producer says ($stored events; $(grep relay q.out))"
[ "$e" != x ] && [ "$e" -eq $((stored + d)) ] && [ "$d" -gt 0 ] && [ "$stored" -gt 0 ]
ok $? "over its quota: emitted $e = stored $stored + discarded $d, some stored, some discarded"

# ---- the same with a local copy: the relay's part is lost, the local
# copy holds everything emitted
"$TRAWL" simulate -o LOCAL --relay "$DATA" --session q2 --hosts 1 -e 400000 > l.out 2> l.err
rc=$?
grep -q 'the relay was lost' l.err
ok $? "with a local copy, the relay is lost, the copy goes on (exit $rc: $(head -c 300 l.err))"
set -- $(counts l.out) x x x
e=$1 st=$2 d=$3
stored=$(events OUT-quo/q2)
is "$stored" "$st" "with a local copy: the relay stored what the producer says ($stored events; $(grep relay l.out))"
[ "$e" != x ] && [ "$e" -eq $((stored + d)) ] && [ "$d" -gt 0 ] && [ "$stored" -gt 0 ]
ok $? "with a local copy: emitted $e = stored $stored + discarded $d, some stored, some discarded"
local=$("$TRAWL" info LOCAL/host0/kernel 2> /dev/null | sed -n 's/^total: .* \([0-9]*\) events, .*/\1/p')
is "$local" "$e" "the local copy holds every event emitted"
stop

# ---- an agent's session, over its quota: agent_case NAME [create args]
agent_case() {
	_s=$1
	shift
	start "ag$_s" -- --max-session-size 300K || bail "the relay did not start"
	export TRAWL_AGENT_SOCKET="$TRASH/agent-$_s.sock"
	mkfifo "agent-$_s.fifo"
	"$TRAWL" agent -f --host host0 --ready-fd 3 3> "agent-$_s.fifo" 2> "agent-$_s.log" &
	AP=$!
	wait_ready "agent-$_s.fifo" > /dev/null || bail "the agent did not start"
	"$TRAWL" create "$_s" --relay "$DATA" "$@" > /dev/null 2> "$_s.err" &&
		"$TRAWL" enable "$_s" 'counter:*' > /dev/null &&
		"$TRAWL" start "$_s" > /dev/null 2>> "$_s.err"
	ok $? "$_s: an agent's session streamed to the relay starts (create $*: $(cat "$_s.err"))"
	# slow enough for the rings to discard nothing: every event reaches the writer
	"$TRAWL_BUILD/examples/ust-counter" -n 5000 -t 2 -s 100 -w > "counter-$_s.out" 2> "counter-$_s.err"
	_em=$(sed -n 's/^emitted \([0-9]*\)$/\1/p' "counter-$_s.out")
	"$TRAWL" stop "$_s" > "stop-$_s.out" 2> "stop-$_s.err"
	_line=$(sed -n "s/.*session $_s: the relay did not store \([0-9]*\) of \([0-9]*\) events: counted as discarded\$/\1 \2/p" "agent-$_s.log")
	set -- $_line x x
	_d=$1 _e=$2
	[ "$_d" != x ]
	ok $? "$_s: the agent counts what the relay did not store, exactly ($(grep "session $_s" "agent-$_s.log" | tr '\n' '|'))"
	grep -q "session $_s: the relay did not store $_d of $_e events" "stop-$_s.err"
	ok $? "$_s: and tells the client that stops the session ($(cat "stop-$_s.err"))"
	# each of its ticks is two events (counter:tick, counter:debug)
	is "$_e" "$((2 * ${_em:-0}))" "$_s: the writer took every event the application emitted ($_em ticks)"
	_st=$(events "OUT-ag$_s/$_s")
	[ "$_e" != x ] && [ "$_e" -eq $((_st + _d)) ] && [ "$_d" -gt 0 ] && [ "$_st" -gt 0 ]
	ok $? "$_s: emitted $_e = stored $_st + discarded $_d, some stored, some discarded"
	"$TRAWL" agent --stop > /dev/null 2>&1
	until_ok 10 gone "$AP" || kill -9 "$AP"
	wait "$AP" 2> /dev/null
	AP=""
	stop
}
if [ -x "$TRAWL_BUILD/examples/ust-counter" ]; then
	# no live timer: whole packets
	agent_case a --live-timer 0
	# the default live timer (100 ms): parts of the open packets
	agent_case b
else
	for i in 1 2 3 4 5 6 7 8 9 10; do skip "examples/ust-counter is not built"; done
fi

# ---- the kernel recorder, over its quota
if [ "$(id -u)" != 0 ] || ! "$TRAWL" record -q -k sched_switch -o kcheck --host k --no-ust \
	--duration 0.1 > /dev/null 2>&1; then
	for i in 1 2 3 4 5 6 7 8 9; do skip "kernel recording is not available here (root and tracefs)"; done
	finish
fi
start kq -- --max-session-size 300K || bail "the relay did not start"
# a command that switches tasks thousands of times: more than the quota holds
"$TRAWL" record --relay "$DATA" --session k --host n1 -k sched_switch,sched_wakeup --no-ust \
	-- sh -c 'i=0; while [ $i -lt 6000 ]; do /bin/true; i=$((i + 1)); done' > k.out 2> k.err
is "$?" 1 "the kernel recorder cut off fails (exit 1)"
grep -q 'disk quota' k.err
ok $? "and says the relay's reason ($(grep -m1 quota k.err | cut -c1-200))"
line=$(sed -n 's/^trawl record: relay: \([0-9]*\) kernel events* streamed, \([0-9]*\) stored at the relay, \([0-9]*\) discarded (not stored)$/\1 \2 \3/p' k.err)
set -- $line x x x
e=$1 st=$2 d=$3
[ "$e" != x ]
ok $? "its summary counts what the relay did not store, exactly ($(grep 'relay:' k.err))"
# what the recorder wrote: its kernel and state dump events
set -- $(sed -n 's/^trawl record: \([0-9]*\) kernel events, [0-9]* lost, \([0-9]*\) state dump events.*/\1 \2/p' k.err) x x
is "$e" "$(($1 + $2))" "what it streamed is what it recorded (kernel and state dump events)"
stored=$(events OUT-kq/k)
is "$stored" "$st" "the relay stored what the recorder says ($stored events)"
[ "$e" != x ] && [ "$e" -eq $((stored + d)) ] && [ "$d" -gt 0 ] && [ "$stored" -gt 0 ]
ok $? "emitted $e = stored $stored + discarded $d, some stored, some discarded"
stop

# ---- an agent's kernel session, over its quota: the agent's log and the
# client that stops it say what the relay did not store
start akq -- --max-session-size 300K || bail "the relay did not start"
export TRAWL_AGENT_SOCKET="$TRASH/agent-k.sock"
mkfifo agent-k.fifo
"$TRAWL" agent -f --host host0 --ready-fd 3 3> agent-k.fifo 2> agent-k.log &
AP=$!
wait_ready agent-k.fifo > /dev/null || bail "the agent did not start"
"$TRAWL" create ks --relay "$DATA" > /dev/null 2> ks.err &&
	"$TRAWL" enable ks -k sched:sched_switch,sched:sched_wakeup > /dev/null 2>> ks.err &&
	"$TRAWL" start ks > /dev/null 2>> ks.err
ok $? "an agent's kernel session streamed to the relay starts ($(cat ks.err))"
sh -c 'i=0; while [ $i -lt 6000 ]; do /bin/true; i=$((i + 1)); done'
"$TRAWL" stop ks > stop-ks.out 2> stop-ks.err
line=$(sed -n 's/.*session ks: the relay did not store \([0-9]*\) of \([0-9]*\) kernel events: counted as discarded$/\1 \2/p' agent-k.log)
set -- $line x x
d=$1 e=$2
[ "$d" != x ] && grep -q "session ks: the relay did not store $d of $e kernel events" stop-ks.err
ok $? "the agent counts what the relay did not store of its kernel events, exactly, and tells the client that stops it ($(grep 'session ks' agent-k.log | tr '\n' '|') $(cat stop-ks.err))"
stored=$(events OUT-akq/ks)
[ "$e" != x ] && [ "$e" -eq $((stored + d)) ] && [ "$d" -gt 0 ] && [ "$stored" -gt 0 ]
ok $? "agent kernel session: emitted $e = stored $stored + discarded $d, some stored, some discarded"
"$TRAWL" agent --stop > /dev/null 2>&1
until_ok 10 gone "$AP" || kill -9 "$AP"
wait "$AP" 2> /dev/null
AP=""
stop
finish
