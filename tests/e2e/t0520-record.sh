#!/bin/sh
# `trawl record -- COMMAND`, the one-shot form: a private agent records the
# trawl tracepoints of the command and of its children into DIR/HOST/ust/
# while the kernel recorder writes DIR/HOST/kernel/; both stop when the
# command exits, whose status is trawl's.
#  - user space only (--no-kernel): every event the command emitted, no
#    kernel trace, the private agent's socket gone afterwards;
#  - the command's children are traced too, its exit status is returned;
#  - -u GLOB selects events;
#  - with the kernel (root): the command's user-space events lie between
#    its sched_process_exec and its sched_process_exit in the merged trace
#    (the two traces' TSC clocks agree), and babeltrace2 reads both;
#  - the user-space trace is on the kernel recorder's clock, whatever the
#    private agent would choose by itself: --clock mono on a TSC machine
#    (and a clocksource changed between the two starts) gave a kernel
#    trace on mono and a user-space one on the TSC.
. "$TRAWL_SRC/tests/e2e/lib.sh"
APP="$TRAWL_BUILD/examples/ust-counter"
[ -x "$APP" ] || skip_all "examples/ust-counter is not built"
plan 26

# sockdir ERRFILE: the private socket directory the record's agent logged (-v)
sockdir() { sed -n 's/.*listening on \(\/tmp\/trawl-record-[A-Za-z0-9]*\)\/agent.sock.*/\1/p' "$1" | head -1; }
# count FILE: what ust-counter -c FILE counted for its thread 0 (events
# returned); 0 before the program created the file
count() { c=$(od -An -tu8 -N8 "$1" 2>/dev/null | tr -d ' '); echo "${c:-0}"; }

# 1. user space only
"$TRAWL" record -v --no-kernel --host h1 -o s1 -- "$APP" -n 700 -t 3 > app1.out 2> rec1.err
is "$?" 0 "record --no-kernel -- ust-counter exits 0"
is "$(cat app1.out)" "emitted 2100" "the program emitted 3 x 700 ticks"
"$TRAWL" print s1 > s1.txt 2> /dev/null
is "$(grep -c 'counter:tick' s1.txt)" 2100 "every tick is in s1/h1/ust"
is "$(grep -c 'counter:debug' s1.txt)" 2100 "and every debug event (all events by default)"
[ -d s1/h1/ust ] && [ ! -e s1/h1/kernel ]
ok $? "a user-space trace and no kernel trace"
# this record's own directory (others may run at the same time)
sdir1=$(sockdir rec1.err)
[ -n "$sdir1" ] && [ ! -S "$sdir1/agent.sock" ]
ok $? "no private agent socket left behind (${sdir1:-none found in the log})"

# 2. children of the command, its exit status, -u GLOB
"$TRAWL" record -q --no-kernel --host h2 -u 'counter:tick' -o s2 -- \
	sh -c "'$APP' -n 50 -t 1 > /dev/null; '$APP' -n 60 -t 2 > /dev/null; exit 7" 2> rec2.err
is "$?" 7 "the command's exit status (7) is trawl record's"
"$TRAWL" print s2 > s2.txt 2> /dev/null
is "$(grep -c 'counter:tick' s2.txt)" 170 "both children of the shell traced: 50 + 2 x 60 ticks"
is "$(grep -c 'counter:debug' s2.txt)" 0 "-u counter:tick: no other event"
is "$(grep -c 'vpid = ' s2.txt)" 0 "no context asked, none recorded"

# 3. usage errors
"$TRAWL" record --no-kernel -o s3 > /dev/null 2>&1
is "$?" 2 "--no-kernel without a command: usage error"
"$TRAWL" record --no-kernel --no-ust -o s3 -- true > /dev/null 2>&1
is "$?" 2 "--no-kernel --no-ust: usage error"

# 4. with the kernel
if [ "$(id -u)" != 0 ]; then
	for i in 1 2 3 4 5 6; do skip "kernel part: needs root (tracefs)"; done
	finish
fi
# record killed outright (SIGKILL): its agent is told by the kernel (parent
# death signal), ends the trace and exits instead of waiting forever
"$TRAWL" record -v --no-kernel --host h5 -o s5 -- "$APP" -n 100000 -s 1000 -c "$TRASH/counts5.bin" > /dev/null 2> rec5.err &
rpid=$!
apid="" cpid=""
# killed once its agent and the command run, the command's stream is
# begun and the command has returned from some ticks (counted): waited
# for, bounded (the metadata file is written later: not waited for)
started() {
	apid=$(pgrep -P "$rpid" -f 'agent --oneshot')
	cpid=$(pgrep -P "$rpid" -f 'ust-counter')
	[ -n "$apid" ] && [ -n "$cpid" ] && ls s5/h5/ust 2> /dev/null | grep -q '^ust_' &&
		[ "$(count counts5.bin)" -ge 10 ]
}
until_ok 30 started
c5=$(count counts5.bin)
kill -9 "$rpid"
wait "$rpid" 2> /dev/null
[ -n "$apid" ] && until_ok 30 gone "$apid"
gone=$?
[ -n "$apid" ] && [ "$gone" -eq 0 ]
ok $? "record killed: its agent (${apid:-none found}) exits by itself"
[ "$gone" -ne 0 ] && [ -n "$apid" ] && kill "$apid" 2> /dev/null	# not left running
sdir=$(sockdir rec5.err)
[ -n "$sdir" ] && [ ! -e "$sdir" ]
ok $? "record killed: its private socket directory (${sdir:-not found in the log}) is gone"
[ -n "$cpid" ] && kill "$cpid" 2> /dev/null
"$TRAWL" print s5 > s5.txt 2> s5.err
is "$?" 0 "record killed: the trace its agent ended reads cleanly"
n5=$(grep -c 'counter:tick' s5.txt)
[ "$c5" -ge 10 ] && [ "$n5" -ge "$c5" ]
ok $? "record killed: the ticks before the kill are there ($n5 >= $c5 returned before it)"

"$TRAWL" record -q -k sched --only-command --host h4 -o s4 -- "$APP" -n 400 -t 2 > app4.out 2> rec4.err
rc=$?
if [ "$rc" -ne 0 ] && grep -qE 'tracefs|instance|Permission|not permitted' rec4.err; then
	for i in 1 2 3 4 5 6; do skip "kernel part: $(grep -m1 'trawl record' rec4.err)"; done
	finish
fi
is "$rc" 0 "record -k sched -- ust-counter exits 0"
[ -f s4/h4/kernel/metadata ] && [ -f s4/h4/ust/metadata ]
ok $? "a kernel and a user-space trace under one host"
"$TRAWL" print s4 > s4.txt 2> /dev/null
is "$(grep -c 'counter:tick' s4.txt)" 800 "every tick recorded beside the kernel events"
pid=$(grep -m1 'sched_process_exec: .*ust-counter' s4.txt | sed -n 's/.*, tid = \([0-9]*\), old_tid.*/\1/p')
# the order of the command's life in the merged trace: exec, ticks, exit
order=$(grep -E "sched_process_exec: .*tid = $pid,|counter:tick|sched_process_exit: .*tid = $pid," s4.txt |
	sed -e 's/.*sched_process_exec.*/E/' -e 's/.*counter:tick.*/t/' -e 's/.*sched_process_exit.*/X/' | uniq | tr -d '\n')
is "$order" "EtX" "merged: exec, then every user-space event, then exit (one clock for both traces)"
# clockof DIR: its metadata's clock name and, for the TSC, "tsc" alone
clockof() { sed -n '/^clock {/,/^};/s/^[[:space:]]*name = \([a-z_]*\);.*/\1/p' "$1/metadata" | head -1; }
cs=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)
[ -n "${TRAWL_CLOCKSOURCE:-}" ] && cs=$TRAWL_CLOCKSOURCE
for clk in mono tsc; do
	if [ "$clk" = tsc ] && { [ "$cs" != tsc ] || ! case "$(uname -m)" in x86_64|i?86) true ;; *) false ;; esac; }; then
		skip "--clock tsc: the clocksource is ${cs:-unknown}, not the TSC"
		skip "--clock tsc: the clocksource is ${cs:-unknown}, not the TSC"
		continue
	fi
	"$TRAWL" record -q -k sched --only-command --clock $clk --host hc -o c-$clk -- "$APP" -n 50 -t 1 > /dev/null 2> recc-$clk.err
	is "$?" 0 "record --clock $clk -- ust-counter exits 0"
	want=monotonic
	[ "$clk" = tsc ] && want=tsc
	is "$(clockof c-$clk/hc/kernel) $(clockof c-$clk/hc/ust)" "$want $want" \
		"--clock $clk: the kernel's and the user space's trace are both on the $want clock"
done
if command -v babeltrace2 > /dev/null 2>&1; then
	babeltrace2 s4 > bt4.txt 2> bt4.err
	is "$?" 0 "babeltrace2 reads the kernel and user-space traces"
	is "$(wc -l < bt4.txt)" "$(wc -l < s4.txt)" "babeltrace2 and trawl print: the same number of events"
else
	skip "babeltrace2 missing"
	skip "babeltrace2 missing"
fi
finish
