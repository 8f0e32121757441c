#!/bin/sh
# Kernel recording: losses, filters at the source, state dump.
#  - losses: dd doing 2 x 200000 one-byte syscalls into an 8 KiB ring
#    buffer read once a second loses most events; recorded + lost must be
#    every event dd made (4 per byte, plus its start-up), the summary's
#    loss count must equal the trace's events_discarded (trawl info), and
#    babeltrace2 must read the lossy trace as trawl does;
#  - --filter: an ftrace filter keeps only matching events; a filter that
#    does not apply is a clear error;
#  - --pid: only the given process's system calls;
#  - --cgroup: only the tasks of a cgroup (made here in the first writable
#    hierarchy, v2 or v1, removed at the end);
#  - state dump: this shell and a file it holds open show up as
#    lttng_statedump_process_state and lttng_statedump_file_descriptor.
. "$TRAWL_SRC/tests/e2e/lib.sh"
[ "$(id -u)" = 0 ] || skip_all "needs root (tracefs instances)"
if ! "$TRAWL" record -o probe --no-statedump -k sched:sched_switch -- true > probe.log 2>&1; then
	if grep -qE '^trawl: record: .*(tracefs|instance|Permission|not permitted)' probe.log; then
		skip_all "cannot record kernel events here: $(grep -m1 '^trawl: record:' probe.log)"
	fi
fi
NORM="$TRAWL_SRC/tests/e2e/normalize.sh"
NORM_PY="$TRAWL_SRC/tests/e2e/normalize.py"
CG=""
BG=""
cleanup() {
	[ -n "$BG" ] && kill "$BG" 2>/dev/null
	if [ -n "$CG" ] && [ -d "$CG" ]; then
		[ -n "$BG" ] && wait "$BG" 2>/dev/null
		rmdir "$CG" 2>/dev/null
	fi
}
trap cleanup EXIT INT TERM

plan 25

# ---- losses
N=200000
"$TRAWL" record -o l1 --host h -k syscalls --only-command -b 8 --period 1000 --no-statedump \
	-- dd if=/dev/zero of=/dev/null bs=1 count=$N > loss.out 2> loss.err
ok $? "record dd into an 8 KiB buffer: exit 0"
rec=$(sed -n 's/^trawl record: \([0-9]*\) kernel events, \([0-9]*\) lost.*/\1/p' loss.err)
lost=$(sed -n 's/^trawl record: \([0-9]*\) kernel events, \([0-9]*\) lost.*/\2/p' loss.err)
[ "${lost:-0}" -gt 0 ]; ok $? "losses: the summary reports events lost (${lost:-none})"
tot=$((${rec:-0} + ${lost:-0}))
[ "$tot" -ge $((4 * N)) ] && [ "$tot" -le $((4 * N + 3000)) ]
ok $? "losses: recorded $rec + lost $lost = $tot, every event dd made (4 x $N + start-up)"
"$TRAWL" info l1 > loss.info
disc=$(sed -n 's/^total: .* \([0-9]*\) discarded.*/\1/p' loss.info)
is "$disc" "$lost" "losses: events_discarded in the trace == the summary's lost"
evs=$(sed -n 's/^total: .*streams, \([0-9]*\) events.*/\1/p' loss.info)
is "$evs" "$rec" "losses: events in the trace == the summary's recorded"
if command -v babeltrace2 >/dev/null 2>&1 && command -v python3 >/dev/null 2>&1; then
	. "$TRAWL_SRC/tests/e2e/oracle.sh"
	oracle lossy l1/h/kernel
else
	for i in 1 2 3; do skip "babeltrace2 or python3 missing"; done
fi

# ---- --filter
"$TRAWL" record -o f1 --host h -k sched:sched_switch --filter 'prev_state == 1' -d 0.3 --no-statedump \
	> filt.out 2> filt.err
ok $? "record with --filter 'prev_state == 1': exit 0"
"$TRAWL" print f1 > filt.txt
all=$(grep -c ' sched_switch: ' filt.txt)
good=$(grep -c ' sched_switch: .* prev_state = 1,' filt.txt)
[ "$all" -gt 0 ] && [ "$all" = "$good" ]
ok $? "--filter: all $all sched_switch events have prev_state 1"
inst_before=$(ls /sys/kernel/tracing/instances)
"$TRAWL" record -o f2 --host h -k sched:sched_switch --filter 'no_such_field == 1' -d 0.1 \
	> filt2.out 2> filt2.err
is "$?" 1 "--filter on a field the event lacks: exit 1"
grep -q "^trawl: record: filter 'no_such_field == 1' does not apply to sched:sched_switch" filt2.err
ok $? "--filter error names the filter and the event"
is "$(ls /sys/kernel/tracing/instances)" "$inst_before" "no tracefs instance is left behind by a failed record"

# ---- instances of recorders that died (SIGKILL) are removed; others stay
DEAD=$(sh -c 'echo $$')
sleep 30 &
LIVE=$!
mkdir /sys/kernel/tracing/instances/trawl-$DEAD /sys/kernel/tracing/instances/trawl-$LIVE
echo 1 > /sys/kernel/tracing/instances/trawl-$DEAD/events/sched/sched_switch/enable
"$TRAWL" record -o st1 --host h -k sched:sched_switch -d 0.1 --no-statedump > st.out 2> st.err
ok $? "record with a stale instance present: exit 0"
[ ! -e /sys/kernel/tracing/instances/trawl-$DEAD ]
ok $? "the instance of a dead recorder (pid $DEAD) is removed"
[ -d /sys/kernel/tracing/instances/trawl-$LIVE ]
ok $? "the instance named for a live process (pid $LIVE) stays"
rmdir /sys/kernel/tracing/instances/trawl-$LIVE /sys/kernel/tracing/instances/trawl-$DEAD 2>/dev/null
kill "$LIVE"; wait "$LIVE" 2>/dev/null

# ---- --pid
dd if=/dev/zero of=/dev/null bs=1 count=100000000 2>/dev/null &
BG=$!
"$TRAWL" record -o p1 --host h -k syscalls --pid "$BG" -d 0.2 --no-statedump > pid.out 2> pid.err
ok $? "record --pid $BG: exit 0"
"$TRAWL" print p1 > pid.txt
all=$(grep -c ' syscall_e' pid.txt)
good=$(grep -c " syscall_e.*{ tid = $BG }" pid.txt)
[ "$all" -gt 100 ] && [ "$all" = "$good" ]
ok $? "--pid: all $all syscall events are the process's own"
kill "$BG"; wait "$BG" 2>/dev/null; BG=""

# ---- --cgroup
for base in /sys/fs/cgroup /sys/fs/cgroup/unified /sys/fs/cgroup/pids; do
	[ -f "$base/cgroup.procs" ] && mkdir "$base/trawl-kernel-$$" 2>/dev/null && {
		CG="$base/trawl-kernel-$$"; break; }
done
if [ -n "$CG" ]; then
	REL=${CG#/sys/fs/cgroup/}
	sh -c 'echo $$ > '"$CG"'/cgroup.procs && exec dd if=/dev/zero of=/dev/null bs=1 count=100000000 2>/dev/null' &
	BG=$!
	sleep 0.1
	"$TRAWL" record -o c1 --host h -k syscalls --cgroup "$REL" -d 0.2 --no-statedump \
		> cg.out 2> cg.err
	ok $? "record --cgroup $REL: exit 0"
	"$TRAWL" print c1 > cg.txt
	all=$(grep -c ' syscall_e' cg.txt)
	good=$(grep -c " syscall_e.*{ tid = $BG }" cg.txt)
	[ "$all" -gt 100 ] && [ "$all" = "$good" ]
	ok $? "--cgroup: all $all syscall events are the cgroup's task's"
	kill "$BG"; wait "$BG" 2>/dev/null; BG=""
	rmdir "$CG"; CG=""
else
	skip "no cgroup hierarchy to make a cgroup in"
	skip "no cgroup hierarchy to make a cgroup in"
fi

# ---- state dump
exec 7> held-open.txt
"$TRAWL" record -o d1 --host h -k sched:sched_switch -d 0.05 > sd.out 2> sd.err
ok $? "record with the state dump: exit 0"
"$TRAWL" print d1 > sd.txt
grep -q " lttng_statedump_process_state: .*{ tid = $$, pid = $$, ppid = $PPID, name = \"sh\"" sd.txt ||
	grep -q " lttng_statedump_process_state: .*{ tid = $$, pid = $$, ppid = $PPID, " sd.txt
ok $? "state dump: this shell (tid = pid = $$, ppid $PPID)"
grep -q " lttng_statedump_file_descriptor: .*{ pid = $$, fd = 7, filename = \"$(pwd)/held-open.txt\" }" sd.txt
ok $? "state dump: its fd 7 on held-open.txt"
exec 7>&-

# ---- the recorder's own threads: recorded like any task, or not at all
# with --exclude-self (its threads are in the state dump, named trawl)
# selfreads DIR: syscall_entry_read events of the recorder's own threads
selfreads() {
	"$TRAWL" print "$1" > "$1.txt"
	awk '/lttng_statedump_process_state:/ && /name = "trawl"/ {
		match($0, /\}, \{ tid = [0-9]+, pid = [0-9]+/); split(substr($0, RSTART, RLENGTH), a, " ")
		self[a[5] + 0] = 1
	}
	/syscall_entry_read:/ { match($0, /\{ tid = [0-9]+ \}/); split(substr($0, RSTART, RLENGTH), b, " ")
		if ((b[4] + 0) in self) n++ }
	END { print n + 0 }' "$1.txt"
}
"$TRAWL" record -o s0 --host h -k syscalls:sys_enter_read -d 0.3 > s0.out 2>&1
n0=$(selfreads s0)
[ "$n0" -gt 0 ]; ok $? "by default the recorder's own reads are recorded ($n0)"
"$TRAWL" record -o s1 --host h -k syscalls:sys_enter_read -d 0.3 --exclude-self > s1.out 2>&1
is "$(selfreads s1)" 0 "--exclude-self: none of its own reads"
finish
