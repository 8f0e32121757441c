#!/bin/sh
# The agent and the session commands end to end, with a private agent
# socket: applications (examples/ust-counter) registered before and after
# start, started during start (race), exiting during tracing, killed with
# kill -9 mid-run (everything they had committed is in the trace), fork and
# exec, many threads with tiny buffers in both modes (emitted = recorded +
# discarded), order per thread, snapshot, save/load, the one-shot mode; every
# trace read by babeltrace2 (the oracle) with the same content as trawl print.
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v babeltrace2 >/dev/null 2>&1 || skip_all "babeltrace2 is not installed (the oracle)"
APP="$TRAWL_BUILD/examples/ust-counter"
[ -x "$APP" ] || { echo "Bail out! $APP is not built"; exit 1; }
NORM="$TRAWL_SRC/tests/e2e/normalize.sh"
NORM_PY="$TRAWL_SRC/tests/e2e/normalize.py"
. "$TRAWL_SRC/tests/e2e/oracle.sh"
plan 75

: > empty.conf
export TRAWL_CONFIG="$TRASH/empty.conf"
export TRAWL_AGENT_SOCKET="$TRASH/agent.sock"
AGENT_PID="" ONESHOT_PID=""
cleanup() {
	[ -n "$AGENT_PID" ] && kill "$AGENT_PID" 2>/dev/null
	[ -n "$ONESHOT_PID" ] && kill "$ONESHOT_PID" 2>/dev/null
}
trap cleanup EXIT

# seqs FILE: per (vpid, vtid, phase: an exec keeps pid and tid), the
# counter:tick seq numbers must be 0, 1, 2...
# in order (and time never goes back); prints "ok" or the first problem
seqs() {
	awk '/counter:tick/ {
		t = $1; gsub(/[][]/, "", t)
		match($0, /vpid = [0-9]+, vtid = [0-9]+/); k = substr($0, RSTART, RLENGTH)
		match($0, /phase = [0-9]+/); k = k " " substr($0, RSTART, RLENGTH)
		match($0, /seq = [0-9]+/); s = substr($0, RSTART + 6, RLENGTH - 6) + 0
		if (k in next_) { if (s != next_[k]) { print "gap " k " got " s " want " next_[k]; bad = 1; exit } }
		else if (s != 0) { print "first " k " is " s; bad = 1; exit }
		if ((k in last) && t < last[k]) { print "time goes back " k; bad = 1; exit }
		next_[k] = s + 1; last[k] = t
	} END { if (!bad) print "ok" }' "$1"
}
ticks() { grep -c 'counter:tick' "$1"; }
# count FILE THREAD: what ust-counter -c FILE counted for THREAD (events
# returned); 0 before the program created the file
count() { c=$(od -An -tu8 -j$(($2 * 8)) -N8 "$1" 2>/dev/null | tr -d ' '); echo "${c:-0}"; }
# counted FILE N THREADS: every thread counted at least N events
counted() { _t=0; while [ "$_t" -lt "$3" ]; do [ "$(count "$1" "$_t")" -ge "$2" ] || return 1; _t=$((_t + 1)); done; }
# registered PID: trawl list shows the application and its events
registered() { "$TRAWL" list > list1.out && grep -q "pid $1" list1.out && grep -q "counter:debug" list1.out; }
# totals DIR: "events discarded" from trawl info
totals() { "$TRAWL" info "$1" 2>/dev/null | sed -n 's/^total: .* \([0-9]*\) events, \([0-9]*\) discarded.*/\1 \2/p'; }

"$TRAWL" agent --pidfile agent.pid > agent.out 2>&1
ok $? "trawl agent detaches once it listens"
AGENT_PID=$(cat agent.pid)
[ -S agent.sock ] && kill -0 "$AGENT_PID"
ok $? "the agent runs (pid $AGENT_PID) and listens on its socket"
"$TRAWL" list > list0.out
is "$(cat list0.out)" "Sessions: none
Applications: none" "list: nothing yet"
"$TRAWL" agent --pidfile agent2.pid 2> second.err
is "$?:$(grep -c 'already listening' second.err)" "1:1" "a second agent on the same socket is refused"

# usage and errors
"$TRAWL" create 2>/dev/null; is $? 2 "create without a name: usage error (2)"
"$TRAWL" start nosuch 2> e.err; is $? 1 "start of an unknown session fails (1)"
grep -q '^trawl start: no session nosuch$' e.err; ok $? "... saying so"
TRAWL_AGENT_SOCKET="$TRASH/none.sock" "$TRAWL" list 2> e2.err
is "$?:$(grep -c 'trawl list: no agent at' e2.err)" "1:1" "no agent: a clear error"
"$TRAWL" create a -o a 2>&1 >/dev/null && "$TRAWL" start a 2> nr.err
is "$?:$(grep -c 'no enabled event' nr.err)" "1:1" "start without an enabled event is refused"
"$TRAWL" enable a 'counter:*' --loglevel nonsense 2>/dev/null; is $? 2 "enable: a bad log level is a usage error"
"$TRAWL" add-context a bogus 2>/dev/null; is $? 2 "add-context: an unknown context is a usage error"
"$TRAWL" destroy a > /dev/null; ok $? "destroy a created session"

# 1. registered before start, loglevel filter, contexts, exit during tracing
"$TRAWL" create s1 -o s1 --clock monotonic > /dev/null &&
	"$TRAWL" enable s1 'counter:*' --loglevel info > /dev/null &&
	"$TRAWL" add-context s1 vpid vtid procname > /dev/null
ok $? "create, enable --loglevel info, add-context"
"$APP" -w -i -n 3000 -t 3 -s 5 > before.out &
APID=$!
# the events are registered after the application itself: wait for both
# (bounded by the application's own wait for its events, -w: 10 s)
until_ok 10 registered "$APID"
grep -q "counter:tick (loglevel 6)" list1.out && grep -q "counter:debug (loglevel 14)" list1.out
ok $? "list: the registered application and its events"
"$TRAWL" start s1 > start1.out
ok $? "start"
"$APP" -n 2000 > after.out
ok $? "an application started after start runs"
wait $APID
"$TRAWL" stop s1 > stop1.out
ok $? "stop"
"$TRAWL" print s1 > s1.txt
is "$(ticks s1.txt)" 11000 "s1: 3 x 3000 (before start) + 2000 (after start) events, none lost"
is "$(grep -c counter:debug s1.txt)" 0 "s1: loglevel info excludes counter:debug"
is "$(seqs s1.txt)" ok "s1: each thread's events in program order, time non-decreasing"
is "$(grep -c 'procname = "ust-counter"' s1.txt)" 11000 "s1: procname context on every event"
is "$(totals s1)" "11000 0" "s1: trawl info: 11000 events, 0 discarded"
oracle s1 s1/*/ust

# 2. kill -9 mid-run: what was committed is in the trace
"$TRAWL" create s2 -o s2 --clock monotonic > /dev/null && "$TRAWL" enable s2 'counter:tick' > /dev/null &&
	"$TRAWL" add-context s2 vpid vtid > /dev/null && "$TRAWL" start s2 > /dev/null
ok $? "s2 starts"
"$APP" -n 0 -t 2 -s 20 -c counts.bin > /dev/null &
KPID=$!
# killed once both threads have provably emitted (and counted) more than
# 100 events each, however slow the machine (bounded)
until_ok 30 counted counts.bin 101 2
kill -9 $KPID
wait $KPID 2>/dev/null
c0=$(count counts.bin 0)
c1=$(count counts.bin 1)
"$TRAWL" stop s2 > /dev/null
ok $? "stop after the kill"
"$TRAWL" print s2 > s2.txt
n=$(ticks s2.txt)
want=$((c0 + c1))
[ "$c0" -gt 100 ] && [ "$c1" -gt 100 ] && [ "$n" -ge "$want" ] && [ "$n" -le $((want + 2)) ]
ok $? "kill -9: the trace has the $want ($c0 + $c1) events counted as returned (+ at most one per thread in flight): $n"
is "$(seqs s2.txt)" ok "kill -9: each thread's events 0..n-1, in order"
oracle s2 s2/*/ust

# 3. fork and exec (ThreadSanitizer cannot start threads in the child of a
# multi-threaded fork: the 10 checks are skipped there)
case "${TRAWL_SAN:-}" in
*thread*)
	for i in 1 2 3 4 5 6 7 8 9 10; do
		skip "fork/exec: ThreadSanitizer does not support threads after a multi-threaded fork"
	done ;;
*)
	"$TRAWL" create s3 -o s3 --clock monotonic > /dev/null && "$TRAWL" enable s3 'counter:tick' > /dev/null &&
		"$TRAWL" add-context s3 vpid vtid > /dev/null && "$TRAWL" start s3 > /dev/null
	"$APP" -n 500 -t 2 -f -x > fork.out
	ok $? "fork and exec run"
	"$TRAWL" stop s3 > /dev/null
	"$TRAWL" print s3 > s3.txt
	is "$(grep -c 'phase = 0' s3.txt)" 1000 "parent: 2 x 500 events"
	is "$(grep -c 'phase = 1' s3.txt)" 1000 "forked child: 2 x 500 events"
	is "$(grep -c 'phase = 2' s3.txt)" 1000 "after exec: 2 x 500 events"
	child=$(sed -n 's/^child \([0-9]*\) .*/\1/p' fork.out)
	is "$(grep 'phase = 1' s3.txt | grep -vc "vpid = $child,")" 0 "the child's events carry its own pid"
	is "$(ls s3/*/ust | grep -c "^ust_${child}_")" 2 "the child traced into its own buffers (2 threads, 2 streams)"
	is "$(seqs s3.txt)" ok "fork/exec: order per thread"
	oracle s3 s3/*/ust
	;;
esac

# 4. start during applications' start-up (race)
"$TRAWL" create s4 -o s4 --clock monotonic > /dev/null && "$TRAWL" enable s4 'counter:tick' > /dev/null &&
	"$TRAWL" add-context s4 vpid vtid > /dev/null
pids=""
for i in 1 2 3 4 5 6; do "$APP" -w -n 300 > race$i.out & pids="$pids $!"; done
"$TRAWL" start s4 > /dev/null
ok $? "start while 6 applications start"
for p in $pids; do wait $p; done
"$TRAWL" stop s4 > /dev/null
"$TRAWL" print s4 > s4.txt
is "$(ticks s4.txt)" 1800 "race: 6 x 300 events, all recorded"
is "$(seqs s4.txt)" ok "race: order per thread"

# 5. many threads, tiny buffers: emitted = recorded + discarded, both modes
for mode in discard overwrite; do
	"$TRAWL" create t$mode -o t$mode --$mode --subbuf-size 4096 --num-subbuf 2 > /dev/null &&
		"$TRAWL" enable t$mode 'counter:*' > /dev/null && "$TRAWL" start t$mode > /dev/null
	ok $? "$mode: tiny buffers, started"
	"$APP" -n 20000 -t 8 -N > tiny-$mode.out
	"$TRAWL" stop t$mode > /dev/null
	ok $? "$mode: stopped"
	set -- $(totals t$mode)
	em=$(( $(sed -n 's/^emitted //p' tiny-$mode.out) * 2 + $(sed -n 's/^signals //p' tiny-$mode.out) ))
	is "$(($1 + $2))" "$em" "$mode: recorded $1 + discarded $2 = emitted (ticks, debug, signal handler events)"
	babeltrace2 t$mode > /dev/null 2> bt-$mode.err
	ok $? "$mode: babeltrace2 reads it"
done
"$TRAWL" print tdiscard > td.txt
awk '/counter:tick/ { match($0, /thread = [0-9]+/); k = substr($0, RSTART, RLENGTH)
	match($0, /seq = [0-9]+/); s = substr($0, RSTART + 6, RLENGTH - 6) + 0
	if ((k in l) && s <= l[k]) { bad = 1 } l[k] = s } END { exit bad }' td.txt
ok $? "discard: each thread's seqs increase (losses are gaps, never reordering)"

# 6. snapshot mode
"$TRAWL" create s6 --snapshot -o s6 --subbuf-size 4096 --num-subbuf 4 --clock monotonic > s6c.out &&
	"$TRAWL" enable s6 'counter:tick' > /dev/null && "$TRAWL" add-context s6 vtid > /dev/null &&
	"$TRAWL" start s6 > /dev/null
ok $? "snapshot session started"
"$APP" -n 0 -s 50 -c snapcounts.bin > /dev/null &
SPID=$!
# the snapshot is taken once the application has emitted many times what
# the 4 x 4 KiB buffer holds (a few hundred events): the window has moved
until_ok 30 counted snapcounts.bin 5000 1
"$TRAWL" snapshot record s6 -o snap1 > snap1.out
ok $? "snapshot record -o DIR while the application runs"
kill $SPID; wait $SPID 2>/dev/null
"$TRAWL" snapshot record s6 > snap2.out
ok $? "snapshot record into the session's output after it exited"
[ -d s6/snapshot-1 ]; ok $? "... in OUTPUT/snapshot-1"
"$TRAWL" print snap1 > snap1.txt
n=$(ticks snap1.txt)
[ "$n" -gt 0 ]; ok $? "the snapshot holds the newest events ($n)"
first=$(sed -n '1s/.*seq = \([0-9]*\).*/\1/p' snap1.txt)
set -- $(totals snap1)
# (more than the buffer held was emitted: some events must be before it)
[ "${2:-0}" -gt 0 ] && [ "$2" = "$first" ]
ok $? "snapshot: the events before the window count as discarded (first seq $first = discarded ${2:-none}, > 0)"
oracle snap1 snap1/*/ust
"$TRAWL" stop s6 > /dev/null; ok $? "stop the snapshot session"

# 7. save and load
"$TRAWL" create s7 -o s7dir --overwrite --subbuf-size 8192 --num-subbuf 4 > /dev/null &&
	"$TRAWL" enable s7 'counter:t*' 'other:*' --loglevel warning > /dev/null &&
	"$TRAWL" add-context s7 vtid cgroup > /dev/null
"$TRAWL" save s7 s7.session > /dev/null
ok $? "save"
grep -v '^#' s7.session > s7.body
cat > s7.want <<EOF
session = s7
output = $TRASH/s7dir
snapshot = no
mode = overwrite
subbuf-size = 8192
num-subbuf = 4
clock = auto
header = large
context = vtid
context = cgroup
event = counter:t* loglevel 4
event = other:* loglevel 4
EOF
cmp_files s7.body s7.want "the saved description"
"$TRAWL" load s7.session 2> load-dup.err; is $? 1 "load: the name exists: refused"
"$TRAWL" load --name s7b s7.session > /dev/null
ok $? "load --name"
"$TRAWL" save s7b - | grep -v '^#' | sed 's/^session = s7b$/session = s7/' > s7b.body
cmp_files s7b.body s7.want "the loaded session is the saved one"
printf 'session = bad\nmode = sideways\n' > bad.session
"$TRAWL" load bad.session 2> bad.err
is "$?:$(grep -c 'line 2: bad value for mode' bad.err)" "1:1" "load: a bad line is named"
"$TRAWL" destroy s7 > /dev/null && "$TRAWL" destroy s7b > /dev/null
ok $? "destroy"

# 8. one-shot mode (what trawl record runs)
mkfifo one.ready
"$TRAWL" agent --oneshot --socket "$TRASH/one.sock" -o one --enable 'counter:tick' \
	--context vtid --clock monotonic --pidfile one.pid --ready-fd 3 3> one.ready 2> one.err &
ONESHOT_PID=$!
wait_ready one.ready > /dev/null
TRAWL_AGENT_SOCKET="$TRASH/one.sock" "$APP" -n 700 -t 2 > one-app.out
kill -TERM $ONESHOT_PID
wait $ONESHOT_PID
is $? 0 "oneshot: SIGTERM stops, flushes and exits 0"
ONESHOT_PID=""
[ ! -e one.sock ]; ok $? "oneshot: the socket is removed"
"$TRAWL" print one > one.txt
is "$(ticks one.txt)" 1400 "oneshot: every event of the traced command"

kill "$AGENT_PID"
until_ok 20 gone "$AGENT_PID"
ok $? "the agent exits on SIGTERM"
AGENT_PID=""
finish
