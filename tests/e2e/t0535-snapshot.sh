#!/bin/sh
# Snapshot semantics (docs/agent.md "Snapshots"): an overwrite session's
# snapshot holds the newest events of every stream, the packet still open
# included (a program that emitted a few events and then waits has them
# all in its open packet); the count `snapshot record` reports is what
# `trawl info` reads from the snapshot; a later snapshot holds the newer
# events, in order, the ones before its window counted as discarded. The
# kernel part: an overwrite-mode session refuses `enable -k` with the
# reason and a hint, and so does `load` (kernel events would go to disk as
# they come, never into a snapshot).
. "$TRAWL_SRC/tests/e2e/lib.sh"
APP="$TRAWL_BUILD/examples/ust-counter"
[ -x "$APP" ] || { echo "Bail out! $APP is not built"; exit 1; }
plan 30

: > empty.conf
export TRAWL_CONFIG="$TRASH/empty.conf"
export TRAWL_AGENT_SOCKET="$TRASH/agent.sock"
AGENT_PID="" APP_PID=""
cleanup() {
	[ -n "$APP_PID" ] && kill "$APP_PID" 2>/dev/null
	[ -n "$AGENT_PID" ] && kill "$AGENT_PID" 2>/dev/null
}
trap cleanup EXIT

# reported FILE: the count of "snapshot of S: N events in DIR"
reported() { sed -n 's/^snapshot of [^:]*: \([0-9]*\) events in .*/\1/p' "$1"; }
# totals DIR: "EVENTS DISCARDED" from trawl info
totals() { "$TRAWL" info "$1" 2>/dev/null | sed -n 's/^total: .* \([0-9]*\) events, \([0-9]*\) discarded.*/\1 \2/p'; }
# seqs DIR: the counter:tick seq numbers, in the trace's order
seqs() { "$TRAWL" print "$1" | sed -n 's/.*counter:tick.* seq = \([0-9]*\),.*/\1/p'; }
# window FILE LAST: the seqs in FILE are consecutive and end at LAST;
# prints "ok" or the first problem
window() {
	awk -v last="$2" 'NR > 1 && $1 != p + 1 { print "gap after " p ": " $1; bad = 1; exit }
		{ p = $1 } END { if (!bad) { if (p != last) print "last " p ", not " last; else print "ok" } }' "$1"
}
emitted() { grep -q "^emitted $1\$" app.out; }

"$TRAWL" agent --pidfile agent.pid > agent.out 2>&1
ok $? "trawl agent detaches once it listens"
AGENT_PID=$(cat agent.pid)

# 1. a program that emitted 10 events and waits: its open packet is the snapshot
"$TRAWL" create s1 --snapshot -o s1 --subbuf-size 4096 --num-subbuf 4 --clock monotonic > /dev/null &&
	"$TRAWL" enable s1 'counter:tick' > /dev/null && "$TRAWL" add-context s1 vtid > /dev/null &&
	"$TRAWL" start s1 > /dev/null
ok $? "snapshot session (4 x 4 KiB) started"
mkfifo ctl
"$APP" -n 10 -b < ctl > app.out &
APP_PID=$!
exec 7> ctl
until_ok 20 emitted 10; ok $? "the program emitted 10 events and waits for more"
"$TRAWL" snapshot record s1 -o snap1 > snap1.out
ok $? "snapshot record while it waits"
is "$(reported snap1.out)" 10 "the snapshot holds its 10 events (all in its open packet)"
is "$(totals snap1)" "10 0" "trawl info reads 10 events, 0 discarded: the reported count"
seqs snap1 > snap1.seq
is "$(window snap1.seq 9)" ok "... seq 0 to 9, in order"
is "$(head -1 snap1.seq)" 0 "... from the first"

# 2. more than the buffers hold: the newest, contiguous, up to the last one
echo 3000 >&7
until_ok 20 emitted 3010; ok $? "3000 more events (the buffers hold a few hundred)"
"$TRAWL" snapshot record s1 -o snap2 > snap2.out
ok $? "second snapshot"
n2=$(reported snap2.out)
set -- $(totals snap2)
is "${1:-none}" "$n2" "the reported count ($n2) is what trawl info reads"
[ "$n2" -gt 0 ] && [ "$n2" -lt 3010 ]; ok $? "the window is smaller than what was emitted ($n2 < 3010)"
seqs snap2 > snap2.seq
is "$(window snap2.seq 3009)" ok "the newest events, consecutive, up to the last one emitted (3009)"
is "$(head -1 snap2.seq):$(lines snap2.seq)" "${2:-none}:$n2" \
	"the events before the window count as discarded (first seq = discarded)"
is "$(totals snap1)" "10 0" "the first snapshot is left as it was"

# 3. a few more: a third snapshot, into the session's output
echo 5 >&7
until_ok 20 emitted 3015; ok $? "5 more events"
"$TRAWL" snapshot record s1 > snap3.out
ok $? "snapshot record into OUTPUT/snapshot-1"
seqs s1/snapshot-1 > snap3.seq
is "$(window snap3.seq 3014):$(lines snap3.seq)" "ok:$(reported snap3.out)" \
	"it holds the newest events up to 3014, as many as it reported"
exec 7>&-
wait "$APP_PID"; APP_PID=""
"$TRAWL" stop s1 > /dev/null; ok $? "stop"

# 4. kernel events: the kernel part of an overwrite session is a flight
# recorder too (needs root and tracefs: the agent's kernel recorder)
# exits PID DIR: the kernel snapshot in DIR holds PID's sched_process_exit
exits() { "$TRAWL" print "$2" | grep -c "sched_process_exit: .* { tid = $1 }, { comm = "; }
# range DIR: "FIRST LAST" ns of trawl info's time range
range() { "$TRAWL" info "$1" 2>/dev/null | sed -n 's/^ *\([0-9]*\) \.\. \([0-9]*\) ns$/\1 \2/p'; }
"$TRAWL" create k0 -o k0 > /dev/null
if [ "$(id -u)" != 0 ]; then
	kskip="needs root (kernel events: tracefs instances)"
elif [ "$(stat -L -c %i /proc/self/ns/pid 2>/dev/null)" != 4026531836 ]; then
	kskip="runs in a pid namespace other than the initial one: kernel events name pids it does not see"
elif ! "$TRAWL" enable k0 -k sched:sched_switch > /dev/null 2> k0.err; then
	kskip="cannot record kernel events here: $(cat k0.err)"
else
	kskip=""
fi
if [ -n "$kskip" ]; then
	i=0; while [ $i -lt 11 ]; do skip "$kskip"; i=$((i + 1)); done
else
	"$TRAWL" create k1 --snapshot -o k1 > /dev/null &&
		"$TRAWL" enable k1 'counter:tick' -k sched > k1.out 2> k1.err
	is "$?:$(cat k1.err)" "0:" "enable -k on a snapshot session: accepted (a kernel flight recorder)"
	t0=$(date +%s%N)
	"$TRAWL" start k1 > /dev/null
	"$TRAWL" list k1 | grep -q '^    kernel: flight recorder (written by snapshot record), clock '
	ok $? "list: the kernel part is a flight recorder"
	"$APP" -n 3 > m1.out & M1=$!; wait $M1
	"$TRAWL" snapshot record k1 -o ks1 > ks1.out
	ok $? "snapshot record with kernel events"
	t1=$(date +%s%N)
	set -- $(totals ks1)
	is "${1:-none}" "$(reported ks1.out)" "the reported count ($(reported ks1.out): user space, kernel, state dump) is what trawl info reads"
	is "$(exits $M1 ks1)" 1 "the kernel snapshot holds the sched events of a program run just before it (pid $M1 exits)"
	is "$("$TRAWL" print ks1 | grep -c 'counter:tick')" 3 "... and its 3 user-space events, in the same trace"
	set -- $(range ks1)
	[ "${1:-0}" -ge "$t0" ] && [ "${2:-0}" -le "$t1" ]
	ok $? "every event lies between start and the snapshot (${1:-none} .. ${2:-none} in $t0 .. $t1)"
	"$APP" -n 3 > m2.out & M2=$!; wait $M2
	"$TRAWL" snapshot record k1 -o ks2 > ks2.out
	set -- $(totals ks2)
	is "$(exits $M2 ks2):$(exits $M1 ks2):${1:-none}" "1:0:$(reported ks2.out)" \
		"a second snapshot holds the kernel events since the first (pid $M2 exits, not $M1), as many as reported"
	"$TRAWL" stop k1 > k1stop.out
	is "$?:$(grep -c '^kernel:' k1stop.out)" "0:0" "stop: a snapshot session writes nothing more"

	"$TRAWL" create k2 --overwrite -o k2 > /dev/null && "$TRAWL" enable k2 -k sched > /dev/null &&
		"$TRAWL" start k2 > /dev/null
	ok $? "an overwrite session with an output records kernel events"
	"$APP" -n 3 > m3.out & M3=$!; wait $M3
	"$TRAWL" stop k2 > k2stop.out
	kn=$(sed -n 's/^kernel: \([0-9]*\) events, [0-9]* lost, \([0-9]*\) state dump events.*/\1 \2/p' k2stop.out)
	set -- $kn $(totals k2)
	is "$(exits $M3 k2):$(( ${1:-0} + ${2:-0} ))" "1:${3:-none}" \
		"stop writes the flight recorder's content (pid $M3 exits), as many events as it says"
fi

finish
