#!/bin/sh
# A session started again after a stop loses nothing: every run is a
# complete trace of its own (docs/agent.md, "Runs"): the first in
# DIR/HOST/{ust,kernel}, the next ones in DIR/run-N/HOST/..., and a reader
# given DIR reads them all. Three runs of a user-space session, each with
# its own count of events; a session saved, destroyed, loaded and started
# into the same directory keeps the first runs; a session streamed to a
# relay records once (its second start is refused, saying why); a session
# with kernel events (where this machine can record them) restarted three
# times: each run's kernel trace holds what its stop reported and the exec
# of the applications of that run only; saved, destroyed, loaded and
# started again, it leaves the first kernel trace byte for byte.
. "$TRAWL_SRC/tests/e2e/lib.sh"
APP="$TRAWL_BUILD/examples/ust-counter"
[ -x "$APP" ] || { echo "Bail out! $APP is not built"; exit 1; }
plan 33

: > empty.conf
export TRAWL_CONFIG="$TRASH/empty.conf"
export TRAWL_AGENT_SOCKET="$TRASH/agent.sock"
AGENT_PID="" RELAY_PID=""
cleanup() {
	[ -n "$AGENT_PID" ] && kill "$AGENT_PID" 2>/dev/null
	[ -n "$RELAY_PID" ] && kill "$RELAY_PID" 2>/dev/null
}
trap cleanup EXIT

"$TRAWL" agent --host h --pidfile agent.pid > agent.out 2>&1 ||
	{ echo "Bail out! the agent does not start"; cat agent.out; exit 1; }
AGENT_PID=$(cat agent.pid)

ticks() { "$TRAWL" print "$1" 2>/dev/null | grep -c 'counter:tick'; }
# the directory of run N of a session in $1
rundir() { if [ "$2" = 1 ]; then echo "$1"; else echo "$1/run-$2"; fi; }

# 1. user space: three runs, 100, 200 and 300 events
"$TRAWL" create s -o S > /dev/null && "$TRAWL" enable s 'counter:*' > /dev/null
ok $? "create and enable"
good=0
for i in 1 2 3; do
	"$TRAWL" start s > start$i.out 2> start$i.err &&
		"$APP" -n $((i * 100)) > /dev/null &&
		"$TRAWL" stop s > stop$i.out 2> stop$i.err && good=$((good + 1))
done
is "$good" 3 "three start/run/stop in a row succeed"
is "$(cat stop1.out)" "session s stopped; trace in $TRASH/S" "run 1: in DIR"
is "$(cat stop2.out)" "session s stopped; trace in $TRASH/S/run-2 (beside the earlier runs' in $TRASH/S)" \
	"run 2: in DIR/run-2, and the stop says so"
is "$(cat stop3.out)" "session s stopped; trace in $TRASH/S/run-3 (beside the earlier runs' in $TRASH/S)" \
	"run 3: in DIR/run-3"
is "$(ticks S/h) $(ticks S/run-2/h) $(ticks S/run-3/h)" "100 200 300" \
	"each run's trace holds that run's events, none lost"
is "$(ticks S)" 600 "print DIR reads every run (600 events)"
"$TRAWL" info S > info.out 2> info.err
is "$?:$(grep -ci 'uuid\|corrupt\|metadata\|warning' info.err)" "0:0" \
	"info DIR: every run readable, no complaint"
u1=$(sed -n 's/.*uuid = "\([^"]*\)".*/\1/p' S/h/ust/metadata | head -1)
u2=$(sed -n 's/.*uuid = "\([^"]*\)".*/\1/p' S/run-2/h/ust/metadata | head -1)
[ -n "$u1" ] && [ "$u1" != "$u2" ]
ok $? "each run is a trace of its own (its own uuid)"
if command -v babeltrace2 > /dev/null 2>&1; then
	is "$(babeltrace2 S 2>/dev/null | grep -c 'counter:tick')" 600 "babeltrace2 reads every run"
else
	skip "babeltrace2 is not installed (the oracle)"
fi

# 2. saved, destroyed, loaded and started into the same directory: the
# earlier runs stay as they are
"$TRAWL" save s s.session > /dev/null && "$TRAWL" destroy s > /dev/null &&
	"$TRAWL" load s.session > /dev/null
ok $? "save, destroy, load"
sum1=$(cat S/h/ust/ust_* | cksum)
"$TRAWL" start s > /dev/null && "$APP" -n 50 > /dev/null && "$TRAWL" stop s > stop4.out
ok $? "the loaded session records"
is "$(cat stop4.out)" "session s stopped; trace in $TRASH/S/run-4 (beside the earlier runs' in $TRASH/S)" \
	"the loaded session's run goes beside the earlier ones"
is "$(ticks S/h) $(ticks S/run-2/h) $(ticks S/run-3/h) $(ticks S/run-4/h)" "100 200 300 50" \
	"no run written over another"
is "$(cat S/h/ust/ust_* | cksum)" "$sum1" "the first run's streams are byte for byte as they were"
"$TRAWL" destroy s > /dev/null

# 3. a session streamed to a relay records once: its run is complete at
# the relay under its name; a second start is refused, saying why
"$TRAWL" relay -o ROUT --data 127.0.0.1:0 --live 127.0.0.1:0 --foreground --ready-fd 3 \
	3> ready.txt 2> relay.err &
RELAY_PID=$!
ready() { grep -Eq '^ready 127\.0\.0\.1:[1-9][0-9]* 127\.0\.0\.1:[1-9][0-9]*$' ready.txt; }
until_ok 30 ready || { echo "Bail out! the relay is not ready"; cat relay.err; exit 1; }
DATA=$(sed -n 's/^ready \([^ ]*\) \([^ ]*\)$/\1/p' ready.txt)
"$TRAWL" create r --relay "$DATA" > /dev/null && "$TRAWL" enable r 'counter:*' > /dev/null &&
	"$TRAWL" start r > /dev/null && "$APP" -n 10 > /dev/null && "$TRAWL" stop r > /dev/null
ok $? "a session streamed to a relay records a run"
"$TRAWL" start r > rstart.out 2> rstart.err
is "$?:$(cat rstart.err)" "1:trawl start: session r streamed its run to relay $DATA: a session streamed to a relay records once (create a new one for another run)" \
	"its second start is refused, saying why"
is "$(ticks ROUT)" 10 "the relay's copy of the run is whole"
"$TRAWL" destroy r > /dev/null
kill "$RELAY_PID"; wait "$RELAY_PID" 2> /dev/null; RELAY_PID=""

# 4. kernel events, where this machine records them
kernel_ok=""
if [ "$(id -u)" = 0 ] &&
	[ "$(stat -L -c %i /proc/self/ns/pid 2>/dev/null)" = 4026531836 ]; then
	"$TRAWL" create probe -o probe > /dev/null
	"$TRAWL" enable probe -k sched:sched_process_exec > probe.out 2> probe.err && kernel_ok=1
	"$TRAWL" destroy probe > /dev/null
	why="cannot record kernel events here: $(cat probe.err)"
elif [ "$(id -u)" != 0 ]; then
	why="needs root (kernel events)"
else
	why="runs in a pid namespace other than the initial one: kernel events name other pids"
fi
if [ -z "$kernel_ok" ]; then
	n=0; while [ $n -lt 15 ]; do skip "$why"; n=$((n + 1)); done
	finish
fi
"$TRAWL" create k -o K > /dev/null && "$TRAWL" enable k -k sched:sched_process_exec > /dev/null &&
	"$TRAWL" enable k 'counter:*' > /dev/null
ok $? "a session with kernel and user-space events"
for i in 1 2 3; do
	"$TRAWL" start k > /dev/null 2>&1
	"$APP" -n $((i * 10)) > /dev/null & p=$!
	wait $p
	eval "pid$i=$p"
	"$TRAWL" stop k > kstop$i.out 2> kstop$i.err
	ok $? "kernel run $i: start, run, stop"
done
for i in 1 2 3; do
	d=$(rundir K $i)/h
	eval "p=\$pid$i"
	# "kernel: N events, L lost, D state dump events, clock C"
	want=$(sed -n 's/^kernel: \([0-9]*\) events, [0-9]* lost, \([0-9]*\) state dump events.*/\1 \2/p' kstop$i.out |
		awk '{ print $1 + $2 }')
	is "$("$TRAWL" print "$d/kernel" 2>/dev/null | wc -l | tr -d ' ')" "${want:-?}" \
		"kernel run $i: its trace holds every event its stop counted ($want)"
	"$TRAWL" print "$d/kernel" 2>/dev/null | grep 'sched_process_exec' > exec$i.txt
	ok $? "kernel run $i: sched_process_exec recorded"
	n=0 w=""
	for j in 1 2 3; do
		eval "q=\$pid$j"
		if grep -q "filename = \"$APP\", tid = $q," exec$i.txt; then n=$((n + 1)); w=$j; fi
	done
	is "$n:$w:$(ticks "$d/ust")" "1:$i:$((i * 10))" \
		"kernel run $i: the exec of its own application only, and its $((i * 10)) user-space events"
done
# saved, destroyed, loaded, started into K: the first kernel trace stays
ksum=$(cat K/h/kernel/channel0_* | cksum)
"$TRAWL" save k k.session > /dev/null && "$TRAWL" destroy k > /dev/null &&
	"$TRAWL" load k.session > /dev/null && "$TRAWL" start k > /dev/null 2>&1 &&
	"$APP" -n 5 > /dev/null && "$TRAWL" stop k > kstop4.out 2> /dev/null
ok $? "the kernel session saved, destroyed, loaded and run again"
is "$(cat K/h/kernel/channel0_* | cksum):$(grep -c "trace in $TRASH/K/run-4 " kstop4.out)" "$ksum:1" \
	"... into K/run-4: the first run's kernel streams byte for byte as they were"
finish
