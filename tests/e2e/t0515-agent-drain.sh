#!/bin/sh
# The agent's drain: its write queue (--io-queue, [agent] io-queue-mb) and
# its real-time priority (--rt-prio, [agent] rt-prio). Bad values are
# refused; the command line wins over the settings; where this machine
# lets the test's processes use SCHED_FIFO at the asked priority (derived:
# `chrt -f PRIO true`; root without CAP_SYS_NICE, RLIMIT_RTPRIO or a cgroup
# without a real-time budget refuse it) the loop and its write queue's
# thread run SCHED_FIFO at it, else at normal priority and the agent says
# why (normal with 0 either way); one-shot recordings through the queue and
# without it hold every event, in order, and the same events.
. "$TRAWL_SRC/tests/e2e/lib.sh"
APP="$TRAWL_BUILD/examples/ust-counter"
[ -x "$APP" ] || { echo "Bail out! $APP is not built"; exit 1; }
plan 15

: > empty.conf
export TRAWL_CONFIG="$TRASH/empty.conf"
ONESHOT_PID=""
trap '[ -n "$ONESHOT_PID" ] && kill "$ONESHOT_PID" 2>/dev/null' EXIT

# usage and settings errors
"$TRAWL" agent --io-queue -1 2> e1.err; is "$?:$(grep -c 'io-queue' e1.err)" "2:1" "--io-queue -1: usage error naming it"
"$TRAWL" agent --io-queue 12x 2>/dev/null; is $? 2 "--io-queue 12x: usage error"
"$TRAWL" agent --rt-prio 100 2> e2.err; is "$?:$(grep -c 'rt-prio' e2.err)" "2:1" "--rt-prio 100: usage error naming it"
printf '[agent]\nio-queue-mb = lots\n' > bad.conf
TRAWL_CONFIG="$TRASH/bad.conf" "$TRAWL" agent --socket "$TRASH/x.sock" 2> e3.err
is "$?:$(grep -c 'io-queue-mb' e3.err)" "1:1" "[agent] io-queue-mb = lots: refused, named"
TRAWL_AGENT_RT_PRIO=high "$TRAWL" agent --socket "$TRASH/x.sock" 2> e4.err
is "$?:$(grep -c 'rt-prio' e4.err)" "1:1" "TRAWL_AGENT_RT_PRIO=high: refused, named"
[ ! -e x.sock ]; ok $? "no agent was left listening"

# policy PID: "POLICY PRIO" from /proc/PID/stat (fields 41 and 40, after
# the parenthesized command name); threads PID: the same for each thread
policy() { sed 's/^.*) //' "/proc/$1/stat" | awk '{ print $39, $38 }'; }
threads() { for t in /proc/"$1"/task/*; do sed 's/^.*) //' "$t/stat" | awk '{ print $39, $38 }'; done | sort | uniq -c | awk '{ printf "%s x %s %s; ", $1, $2, $3 }'; }
threads_are() { [ "$(threads "$1")" = "$2" ]; }	# threads_are PID LISTING
# fifo_ok PRIO: this machine lets a process started from here take
# SCHED_FIFO at PRIO (what the agent asks for, with the same credentials,
# limits and cgroup)
fifo_ok() { chrt -f "$1" true 2> /dev/null; }
# oneshot NAME ARGS...: a one-shot agent recording counter:tick to NAME/,
# its pid in ONESHOT_PID once it listens
oneshot() {
	n=$1; shift
	rm -f "$n.ready"
	mkfifo "$n.ready"
	"$TRAWL" agent --oneshot --socket "$TRASH/$n.sock" -o "$n" --enable 'counter:tick' \
		--context vtid --pidfile "$n.pid" "$@" --ready-fd 3 3> "$n.ready" 2> "$n.err" &
	ONESHOT_PID=$!
	wait_ready "$n.ready" > /dev/null
}
stop_oneshot() {
	kill -TERM "$ONESHOT_PID"
	wait "$ONESHOT_PID"
	r=$?
	ONESHOT_PID=""
	return $r
}

# the priority (SCHED_FIFO is 1, SCHED_OTHER 0): "POLICY PRIO" as the
# agent must set it where SCHED_FIFO at PRIO is permitted, and where not;
# refused, it runs at normal priority and logs why
want_prio() { if fifo_ok "$1"; then echo "1 $1"; else echo "0 0"; fi; }
# rt_told NAME PRIO: the agent NAME's log says what it got; the line comes
# after the pid file: waited for, bounded
rt_told() {
	if fifo_ok "$2"; then until_ok 20 grep -q "drain loop at SCHED_FIFO priority $2\$" "$1.err"
	else until_ok 20 grep -q 'drain loop at normal priority (SCHED_FIFO: ' "$1.err"; fi
}
if command -v chrt > /dev/null 2>&1; then
	if fifo_ok 1; then how="SCHED_FIFO permitted"; else how="SCHED_FIFO refused here"; fi
	oneshot p1
	w=$(want_prio 1)
	rt_told p1 1; told=$?
	is "$(policy "$ONESHOT_PID"):$told" "$w:0" "default ($how): the drain loop runs at $w (policy, priority), and says so"
	# the one-shot session records at once: its writer's queue thread
	# too. Two threads: the loop and the queue (a ThreadSanitizer build
	# adds a background thread of its own, at normal priority: counted)
	# The queue's thread sets its own scheduling once it runs: waited
	# for, bounded.
	case "${TRAWL_SAN:-}" in *thread*) tsan=1 ;; *) tsan=0 ;; esac
	if [ "$w" = "1 1" ]; then
		want=$([ $tsan = 1 ] && printf '1 x 0 0; ')"2 x 1 1; "
	else
		want="$((2 + tsan)) x 0 0; "
	fi
	until_ok 20 threads_are "$ONESHOT_PID" "$want"
	is "$(threads "$ONESHOT_PID")" "$want" "... and so does its write queue's thread (2 threads)"
	stop_oneshot
	oneshot p0 --rt-prio 0
	is "$(policy "$ONESHOT_PID")" "0 0" "--rt-prio 0: normal priority"
	stop_oneshot
	printf '[agent]\nrt-prio = 3\n' > rt.conf
	TRAWL_CONFIG="$TRASH/rt.conf" oneshot p3
	w=$(want_prio 3)
	rt_told p3 3; told=$?
	is "$(policy "$ONESHOT_PID"):$told" "$w:0" "[agent] rt-prio = 3: priority 3 where permitted ($w)"
	stop_oneshot
	if fifo_ok 2; then
		TRAWL_CONFIG="$TRASH/rt.conf" oneshot p2 --rt-prio 2
		rt_told p2 2; told=$?
		is "$(policy "$ONESHOT_PID"):$told" "1 2:0" "--rt-prio 2 wins over the settings' 3"
		stop_oneshot
	else
		# no priority to see: --rt-prio 0 wins, so the agent (which
		# asked for 3 and said it was refused above) asks for nothing:
		# normal, and its whole log (once it exited) says nothing of it
		TRAWL_CONFIG="$TRASH/rt.conf" oneshot p2 --rt-prio 0
		pol=$(policy "$ONESHOT_PID")
		stop_oneshot
		is "$pol:$(grep -c 'drain loop' p2.err)" "0 0:0" "--rt-prio 0 wins over the settings' 3 (SCHED_FIFO refused here: nothing asked)"
	fi
else
	for i in 1 2 3 4 5; do skip "chrt is not installed: whether SCHED_FIFO is permitted is unknown"; done
fi

# the same recording with the default queue, a tiny one (always full: the
# drain waits for room) and none; 4 threads x 20000 events
for q in default 1 0; do
	if [ "$q" = default ]; then oneshot "q$q"; else oneshot "q$q" --io-queue "$q"; fi
	TRAWL_AGENT_SOCKET="$TRASH/q$q.sock" "$APP" -n 20000 -t 4 > "q$q-app.out"
	stop_oneshot
	"$TRAWL" print "q$q" > "q$q.txt"
	# each thread's seq numbers 0..19999 in order
	awk '/counter:tick/ { match($0, /vtid = [0-9]+/); k = substr($0, RSTART, RLENGTH)
		match($0, /seq = [0-9]+/); s = substr($0, RSTART + 6, RLENGTH - 6) + 0
		if (s != n[k]++) bad++ } END { print NR, length(n), bad + 0 }' "q$q.txt" > "q$q.chk"
	is "$(cat "q$q.chk")" "80000 4 0" "io-queue $q: 80000 events, 4 threads, each in order"
done
# the same events (seq per thread, thread order by first appearance aside)
for q in default 1 0; do
	sed -n 's/.*counter:tick.*\(seq = [0-9]*\).*/\1/p' "q$q.txt" | sort > "q$q.seqs"
done
cmp_files qdefault.seqs q0.seqs "the queued and the direct recordings: the same events"
finish
