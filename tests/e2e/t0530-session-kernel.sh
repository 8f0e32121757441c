#!/bin/sh
# Kernel events in agent sessions (`trawl enable NAME -k EVENTS`): a private
# agent (root) records the session's kernel part into SESSION/HOST/kernel/
# beside the user-space trace, with the session's clock, from start to stop.
#  - TSC session (the default clock where the clocksource is the TSC;
#    --clock tsc where ftrace has x86-tsc and the kernel still lists the TSC
#    among its clocksources; skipped elsewhere):
#    -k sched and the events of examples/ust-counter: both
#    traces exist and declare the identical clock; the kernel trace holds
#    the application's sched_process_exec and sched_process_exit (its pid),
#    and in the merged `trawl print` every event of the application lies
#    between them; babeltrace2 reads the kernel trace as trawl does;
#  - the same with --clock monotonic (ftrace's mono clock);
#  - a kernel-only session, with the default clock (x86-tsc where the
#    clocksource is the TSC, else mono), its tracefs instance present while
#    it records;
#  - errors: unknown tracepoint, enable -k after start, a filter that does
#    not apply, options without -k, a non-root agent (snapshot sessions
#    take kernel events: a flight recorder, t0535);
#  - disable -k; save/load keep the kernel rules.
. "$TRAWL_SRC/tests/e2e/lib.sh"
[ "$(id -u)" = 0 ] || skip_all "needs root (kernel events: tracefs instances)"
# kernel events name tasks by their pids in the initial pid namespace: from
# another one, the pids this test knows are not theirs
[ "$(stat -L -c %i /proc/self/ns/pid 2>/dev/null)" = 4026531836 ] ||
	skip_all "runs in a pid namespace other than the initial one: kernel events name tasks by pids it does not see"
APP="$TRAWL_BUILD/examples/ust-counter"
[ -x "$APP" ] || { echo "Bail out! $APP is not built"; exit 1; }
NORM="$TRAWL_SRC/tests/e2e/normalize.sh"
NORM_PY="$TRAWL_SRC/tests/e2e/normalize.py"

: > empty.conf
export TRAWL_CONFIG="$TRASH/empty.conf"
export TRAWL_AGENT_SOCKET="$TRASH/agent.sock"
AGENT_PID="" NR_PID="" NR_DIR=""
cleanup() {
	[ -n "$AGENT_PID" ] && kill "$AGENT_PID" 2>/dev/null
	[ -n "$NR_PID" ] && kill "$NR_PID" 2>/dev/null
	[ -n "$NR_DIR" ] && rm -rf "$NR_DIR"
}
trap cleanup EXIT

"$TRAWL" agent --host h --pidfile agent.pid > agent.out 2>&1 ||
	{ echo "Bail out! the agent does not start"; cat agent.out; exit 1; }
AGENT_PID=$(cat agent.pid)

# Can this machine record kernel events at all?
"$TRAWL" create probe -o probe > /dev/null
if ! "$TRAWL" enable probe -k sched:sched_switch > probe.out 2> probe.err; then
	skip_all "cannot record kernel events here: $(cat probe.err)"
fi
"$TRAWL" destroy probe > /dev/null

plan 67

# where trawl finds tracefs (the probe above mounted it if it was not)
TF=$(tracefs_dir)
[ -n "$TF" ] && [ -d "$TF/instances" ]
ok $? "tracefs is mounted (${TF:-nowhere}), with instances/"
# the instance the agent makes (cli/kernel/krec.c): trawl-PID in the
# initial pid namespace, where this test runs
AINST="trawl-$AGENT_PID"
# the default clock of a session with kernel events
if tsc_default; then AUTOCLK=x86-tsc; else AUTOCLK=mono; fi
# order FILE PID: X for the exec of PID, T for each counter:tick of vpid
# PID, E for its exit, in the merged trace's order
order() {
	awk -v p="$1" '
		/ sched_process_exec: / && index($0, " tid = " p ", old_tid") { printf "X" }
		/ counter:tick: / && index($0, "vpid = " p ",") { printf "T" }
		/ sched_process_exit: / && index($0, "{ comm = \"ust-counter\", tid = " p ",") { printf "E" }' "$2"
}
clockline() { "$TRAWL" info "$1" 2>/dev/null | grep '^ *clock '; }

N=40
WANT="X$(i=0; while [ $i -lt $N ]; do printf T; i=$((i + 1)); done)E"

# session NAME CLOCKOPT TRACECLOCK: one session with kernel and user space
session() {
	name=$1 copt=$2 tclk=$3
	"$TRAWL" create "$name" -o "$name" $copt > /dev/null &&
		"$TRAWL" enable "$name" -k sched 'counter:tick' > "$name-en.out" &&
		"$TRAWL" add-context "$name" vpid vtid > /dev/null
	ok $? "$name: create, enable -k sched 'counter:tick', add-context"
	"$TRAWL" list "$name" > "$name-list0.out"
	grep -q '^    kernel event sched$' "$name-list0.out"
	ok $? "$name: list shows the kernel rule"
	"$TRAWL" start "$name" > "$name-start.out"
	ok $? "$name: start"
	"$TRAWL" list "$name" > "$name-list1.out"
	grep -q "^    kernel: recording into $TRASH/$name/h/kernel, clock $tclk\$" "$name-list1.out"
	ok $? "$name: list: the kernel part records, clock $tclk"
	"$APP" -n $N > "$name-app.out" &
	APID=$!
	wait $APID
	"$TRAWL" stop "$name" > "$name-stop.out"
	ok $? "$name: stop"
	grep -Eq "^kernel: [1-9][0-9]* events, 0 lost, [1-9][0-9]* state dump events, clock $tclk\$" "$name-stop.out"
	ok $? "$name: stop reports kernel events, no loss, the state dump, clock $tclk"
	[ -s "$name/h/kernel/metadata" ] && [ -s "$name/h/ust/metadata" ]
	ok $? "$name: both traces exist (h/kernel, h/ust)"
	"$TRAWL" print "$name" > "$name.txt"
	ok $? "$name: trawl print merges them"
	is "$(grep -c " sched_process_exec: .* tid = $APID, old_tid = $APID }" "$name.txt")" 1 \
		"$name: the application's exec (pid $APID)"
	is "$(grep -c " sched_process_exit: .*{ comm = \"ust-counter\", tid = $APID," "$name.txt")" 1 \
		"$name: the application's exit"
	is "$(order "$APID" "$name.txt")" "$WANT" \
		"$name: its $N events lie between its exec and its exit"
	k=$(clockline "$name/h/kernel")
	u=$(clockline "$name/h/ust")
	[ -n "$k" ] && [ "$k" = "$u" ]
	ok $? "$name: both traces declare the same clock ($k)"
	"$TRAWL" list "$name" | grep -q "^    kernel: [1-9][0-9]* events, 0 lost"
	ok $? "$name: list: the kernel figures after stop"
}

# 1. the session's clock: the TSC (user space stamps with it when it is the
# clocksource; --clock tsc otherwise, where ftrace has x86-tsc and the
# kernel has not declared the TSC unstable: it then leaves tsc out of
# available_clocksource)
K1=""
if tsc_default; then
	K1=" "
elif ! grep -qw x86-tsc "$TF/trace_clock" 2>/dev/null; then
	K1WHY="ftrace has no x86-tsc clock here ($(cat "$TF/trace_clock" 2>/dev/null))"
elif ! grep -qw tsc /sys/devices/system/clocksource/clocksource0/available_clocksource 2>/dev/null; then
	K1WHY="the kernel does not offer the TSC as a clocksource (unstable?): $(cat /sys/devices/system/clocksource/clocksource0/available_clocksource 2>/dev/null)"
else
	K1="--clock tsc"
fi
if [ -n "$K1" ]; then
	session k1 "$K1" x86-tsc
	clockline k1/h/kernel | grep -q ' tsc, '; ok $? "k1: the clock is the TSC"
	if command -v babeltrace2 >/dev/null 2>&1 && command -v python3 >/dev/null 2>&1; then
		. "$TRAWL_SRC/tests/e2e/oracle.sh"
		oracle k1kernel k1/h/kernel
	else
		for i in 1 2 3; do skip "babeltrace2 or python3 missing"; done
	fi
else
	# the 13 checks of session, the clock, the 3 of oracle
	for i in $(seq 17); do skip "no TSC session: $K1WHY"; done
fi

# 2. --clock monotonic: ftrace's mono clock
session k2 "--clock monotonic" mono
clockline k2/h/kernel | grep -q ' monotonic, 1000000000 Hz'; ok $? "k2: a 1 GHz monotonic clock"

# 3. kernel only
"$TRAWL" create k3 -o k3 > /dev/null && "$TRAWL" enable k3 -k sched:sched_process_exec > /dev/null &&
	"$TRAWL" start k3 > /dev/null
ok $? "k3: a session with kernel events only starts"
[ -d "$TF/instances/$AINST" ]
ok $? "k3: while it records, the agent's tracefs instance $TF/instances/$AINST exists"
/bin/true &
TP=$!
wait "$TP"
"$TRAWL" stop k3 > k3-stop.out
ok $? "k3: stop"
grep -q "^kernel: .* clock $AUTOCLK\$" k3-stop.out
ok $? "k3: the default clock, $AUTOCLK (clocksource $(clocksource))"
[ -s k3/h/kernel/metadata ] && [ ! -e k3/h/ust ]
ok $? "k3: a kernel trace and no user-space trace"
"$TRAWL" print k3 | grep -q "sched_process_exec: .*filename = \"/bin/true\", tid = $TP, "
ok $? "k3: the exec of /bin/true is recorded (pid $TP)"

# 4. errors
"$TRAWL" create e1 -o e1 > /dev/null
"$TRAWL" enable e1 -k sched,nosuch:event 2> e1.err
is "$?:$(head -1 e1.err):$(sed -n '2s/:.*//p' e1.err)" "1:trawl enable: no tracepoint 'nosuch:event' in this kernel (see events/*/format in tracefs):hint" \
	"an unknown tracepoint: a clear error, exit 1, then a hint"
"$TRAWL" list e1 | grep -q 'kernel event'
is $? 1 "... and nothing of that request is enabled"
"$TRAWL" enable e1 -k 'nosuch*:*' 2> e1b.err
is "$?:$(grep -c "no tracepoint of this kernel matches 'nosuch\*:\*'" e1b.err)" "1:1" "a glob that matches nothing: exit 1"
"$TRAWL" enable e1 --filter 'prev_pid != 0' 2> /dev/null; is $? 2 "--filter without -k: usage error"
"$TRAWL" enable e1 -k sched --loglevel info 2> /dev/null; is $? 2 "--loglevel without a user-space glob: usage error"
"$TRAWL" enable e1 -k sched:sched_switch --filter 'no_such_field == 1' > /dev/null &&
	"$TRAWL" start e1 2> e1c.err
is "$?:$(grep -c "filter 'no_such_field == 1' does not apply to sched:sched_switch" e1c.err)" "1:1" \
	"start: a filter that does not apply is named"
"$TRAWL" list e1 | grep -q '^  e1 \[created\]'; ok $? "... and the session is still created, not started"
"$TRAWL" enable e1 -k sched:sched_switch --filter 'prev_pid != 0' 2> e1d.err
is "$?:$(grep -c 'already has the kernel filter' e1d.err)" "1:1" "one kernel filter per session"
"$TRAWL" destroy e1 > /dev/null
"$TRAWL" create e2 -o e2 > /dev/null && "$TRAWL" enable e2 -k sched:sched_switch > /dev/null &&
	"$TRAWL" start e2 > /dev/null
"$TRAWL" enable e2 -k irq 2> e2.err
is "$?:$(cat e2.err)" "1:trawl enable: session e2 is recording: rules change before start only" \
	"enable -k after start is refused like user-space rules"
"$TRAWL" disable e2 -k sched:sched_switch 2> /dev/null; is $? 1 "disable -k after start is refused"
"$TRAWL" stop e2 > /dev/null; ok $? "stop"
"$TRAWL" create e3 --snapshot -o e3 > /dev/null
"$TRAWL" enable e3 -k sched 2> e3.err
is "$?:$(cat e3.err)" "0:" \
	"snapshot sessions take kernel events (a kernel flight recorder: t0535)"
if command -v setpriv > /dev/null 2>&1; then
	NR_DIR=$(mktemp -d /tmp/trawl-kernel2-XXXXXX) && chmod 777 "$NR_DIR"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$TRAWL" agent --socket "$NR_DIR/a.sock" \
		--pidfile "$NR_DIR/a.pid" 2> nr-agent.err
	NR_PID=$(cat "$NR_DIR/a.pid" 2>/dev/null)
	TRAWL_AGENT_SOCKET="$NR_DIR/a.sock" "$TRAWL" create n1 -o "$NR_DIR/n1" > /dev/null &&
		TRAWL_AGENT_SOCKET="$NR_DIR/a.sock" "$TRAWL" enable n1 -k sched 2> nr.err
	is "$?:$(cat nr.err)" "1:trawl enable: kernel events need root (the agent runs as uid 65534)" \
		"an agent that is not root: enable -k says kernel events need root"
	[ -n "$NR_PID" ] && kill "$NR_PID"
	NR_PID=""
else
	skip "setpriv missing: no non-root agent"
fi

# 5. disable -k
"$TRAWL" create d1 -o d1 > /dev/null && "$TRAWL" enable d1 -k sched,irq --pid 1 > /dev/null &&
	"$TRAWL" disable d1 -k irq > /dev/null
ok $? "disable -k irq"
is "$("$TRAWL" list d1 | grep "^    kernel")" "    kernel event sched
    kernel pid 1" "list: sched and the pid are left"
"$TRAWL" disable d1 -k nosuch 2> d1.err
is "$?:$(cat d1.err)" "1:trawl disable: session d1 has no kernel rule 'nosuch'" "disable -k of a rule the session lacks: exit 1"
"$TRAWL" disable d1 -k --all > /dev/null
is "$("$TRAWL" list d1 | grep -c "^    kernel")" 0 "disable -k --all: no kernel rule, pid or filter left"
"$TRAWL" start d1 2> d1s.err
is "$?:$(grep -c 'no enabled event' d1s.err)" "1:1" "then start is refused: nothing to record"

# 6. save and load keep the kernel rules
"$TRAWL" create s7 -o s7dir --clock monotonic > /dev/null &&
	"$TRAWL" enable s7 'counter:*' > /dev/null &&
	"$TRAWL" enable s7 -k sched,syscalls -k 'irq:softirq_*' --filter 'common_pid != 0' --pid 1 --pid 2 > /dev/null
ok $? "s7: user-space and kernel rules, a filter and pids"
"$TRAWL" save s7 s7.session > /dev/null; ok $? "save"
grep -v '^#' s7.session > s7.body
cat > s7.want <<EOF
session = s7
output = $TRASH/s7dir
snapshot = no
mode = discard
subbuf-size = 262144
num-subbuf = 32
clock = monotonic
header = large
event = counter:*
kernel-event = sched
kernel-event = syscalls
kernel-event = irq:softirq_*
kernel-filter = common_pid != 0
kernel-pid = 1
kernel-pid = 2
EOF
cmp_files s7.body s7.want "the saved description has the kernel lines"
"$TRAWL" load --name s7b s7.session > /dev/null; ok $? "load --name"
"$TRAWL" save s7b - | grep -v '^#' | sed 's/^session = s7b$/session = s7/' > s7b.body
cmp_files s7b.body s7.want "the loaded session has the same kernel rules"
"$TRAWL" start s7b > /dev/null && "$TRAWL" stop s7b > s7b-stop.out
ok $? "the loaded session records"
grep -q '^kernel: .* clock mono$' s7b-stop.out && [ -s s7dir/*/kernel/metadata ]
ok $? "... its kernel part, with its clock (mono)"
printf 'session = bad\noutput = /tmp/x\nkernel-event = sched\nkernel-event = nosuch:event\n' > bad.session
"$TRAWL" load bad.session 2> bad.err
is "$?:$(grep -c "line 4: no tracepoint 'nosuch:event'" bad.err)" "1:1" "load: an unknown tracepoint names its line"
printf 'session = snap2\nsnapshot = yes\nkernel-event = sched\n' > snap2.session
"$TRAWL" load snap2.session 2> snap2.err
is "$?:$(cat snap2.err)" "0:" "load: kernel events in a snapshot session are taken (a flight recorder)"

"$TRAWL" list > list-end.out
kill "$AGENT_PID"
until_ok 30 gone "$AGENT_PID"; ok $? "the agent exits on SIGTERM"
AGENT_PID=""
[ -d "$TF/instances" ] && [ ! -e "$TF/instances/$AINST" ]
ok $? "no tracefs instance of the agent is left ($TF/instances/$AINST)"
finish
