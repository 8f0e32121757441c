# tests/e2e/lib.sh - sourced by every tNNNN-*.sh end-to-end test.
# Gives each test a trash directory, TAP helpers, and the built binaries.
# A test calls plan N first (or skip_all "why"), then ok/is/cmp_files, and
# ends with `finish`.
set -u
: "${TRAWL_BUILD:?run through make check}" "${TRAWL_SRC:?}"
TRAWL=${TRAWL:-$TRAWL_BUILD/trawl}
# the tests' python modules (tests/e2e/*.py) leave no __pycache__ in the sources
export PYTHONDONTWRITEBYTECODE=1
# A missing binary is a failure, never a skip: make check builds it first.
if [ ! -x "$TRAWL" ]; then echo "Bail out! $TRAWL is not built"; exit 1; fi
_name=$(basename "$0" .sh)
TRASH="$TRAWL_BUILD/trash/$_name"
rm -rf "$TRASH"
mkdir -p "$TRASH"
cd "$TRASH" || exit 1
_n=0 _failed=0

plan() { echo "1..$1"; }
skip_all() { echo "1..0 # SKIP $*"; exit 0; }
ok() {	# ok COND-EXIT-STATUS DESCRIPTION  (use: cmd; ok $? "desc")
	_n=$((_n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $_n - $2"; else echo "not ok $_n - $2"; _failed=$((_failed + 1)); fi
}
is() {	# is GOT WANT DESCRIPTION
	_n=$((_n + 1))
	if [ "$1" = "$2" ]; then echo "ok $_n - $3"; else
		echo "not ok $_n - $3"; echo "#   got:  '$1'"; echo "#   want: '$2'"; _failed=$((_failed + 1)); fi
}
skip() { _n=$((_n + 1)); echo "ok $_n # SKIP $*"; }
cmp_files() {	# cmp_files GOT WANT DESCRIPTION: shows the first differences
	_n=$((_n + 1))
	if cmp -s "$1" "$2"; then echo "ok $_n - $3"; else
		echo "not ok $_n - $3"; diff "$1" "$2" | head -20 | sed 's/^/#   /'; _failed=$((_failed + 1)); fi
}
finish() { [ "$_failed" -eq 0 ]; exit $?; }
# until_ok SECS CMD...: runs CMD every 50 ms until it succeeds; 1 after SECS
until_ok() {
	_end=$(( $(date +%s) + $1 )); shift
	while ! "$@"; do
		[ "$(date +%s)" -ge "$_end" ] && return 1
		sleep 0.05
	done
	return 0
}
gone() { ! kill -0 "$1" 2> /dev/null; }		# gone PID: not running
# relay_up DIR: a trawl relay of the test's own on loopback (output DIR,
# free ports), in the background; once it said ready (--ready-fd:
# ready.txt; its stderr relay.err) RELAY is its pid (added to $pids, which
# the test's cleanup kills), DATA and LIVE its ports. Bails out when it is
# not ready within 30 s.
relay_up() {
	"$TRAWL" relay -o "$1" --data 127.0.0.1:0 --live 127.0.0.1:0 --foreground --ready-fd 3 \
		3> ready.txt 2> relay.err &
	RELAY=$!
	pids="${pids:-} $RELAY"
	until_ok 30 grep -Eq '^ready 127\.0\.0\.1:[1-9][0-9]* 127\.0\.0\.1:[1-9][0-9]*$' ready.txt ||
		{ echo "Bail out! the relay is not ready"; cat relay.err; exit 1; }
	DATA=$(sed -n 's/^ready \([^ ]*\) \([^ ]*\)$/\1/p' ready.txt)
	LIVE=$(sed -n 's/^ready \([^ ]*\) \([^ ]*\)$/\2/p' ready.txt)
}
# relay_agent_up: a trawl relay of the test's own (output OUT, free
# loopback ports; RELAY, DATA, LIVE; relay.err) and an agent on a private
# socket (AGENT; agent.err; TRAWL_AGENT_SOCKET exported), each once it
# said ready; bails out otherwise
relay_agent_up() {
	mkfifo relay.ready agent.ready
	"$TRAWL" relay -o OUT --data 127.0.0.1:0 --live 127.0.0.1:0 --foreground --ready-fd 3 \
		3> relay.ready 2> relay.err &
	RELAY=$!
	wait_ready relay.ready > relay.line || { cat relay.err; echo "Bail out! the relay is not ready"; exit 1; }
	set -- $(cat relay.line)
	DATA=$2 LIVE=$3
	"$TRAWL" agent --foreground --socket "$TRASH/agent.sock" --ready-fd 3 3> agent.ready \
		2> agent.err &
	AGENT=$!
	wait_ready agent.ready > /dev/null || { cat agent.err; echo "Bail out! the agent is not ready"; exit 1; }
	export TRAWL_AGENT_SOCKET="$TRASH/agent.sock"
}
# need_timens: skips the test unless time namespaces work here (root,
# unshare from util-linux, a kernel with them)
need_timens() {
	[ "$(id -u)" -eq 0 ] || skip_all "needs root (time namespaces)"
	command -v unshare > /dev/null 2>&1 || skip_all "no unshare command (util-linux)"
	unshare --time --monotonic 1 --fork true 2> timens.err ||
		skip_all "no time namespaces: unshare --time --monotonic fails ($(head -1 timens.err))"
}
# nsprobe DIR SESSION I OFFSET PORT SECONDS PEERS...: node nI, its
# CLOCK_MONOTONIC OFFSET seconds off in a time namespace of its own,
# probing on PORT for SECONDS and streaming to the relay at $DATA live
# (pI.out, pI.err; its exit status in pI.rc)
nsprobe() {
	_d=$1 _s=$2 _i=$3 _o=$4 _p=$5 _t=$6
	shift 6
	unshare --time --monotonic "$_o" --fork "$TRAWL" probe -o "$_d" --host "n$_i" \
		--listen "127.0.0.1:$_p" "$@" --duration "$_t" --clock-offset 0 \
		--relay "$DATA" --session "$_s" --live-timer 100 > "p$_i.out" 2> "p$_i.err"
	echo $? > "p$_i.rc"
}
# udp_ports N: N UDP ports free on loopback now (for probes that each listen)
udp_ports() {
	python3 -c '
import socket, sys
ss = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(int(sys.argv[1]))]
for s in ss: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))' "$1"
}
lines() { if [ -f "$1" ]; then wc -l < "$1" | tr -d ' '; else echo 0; fi; }
has_lines() { [ "$(lines "$1")" -ge "$2" ]; }	# has_lines FILE N

# ---- what this machine is: tests derive their expectations from these
# The time the hypervisor took from the CPUs of this virtual machine. A
# thread's CPU clock leaves out the time its vCPU was stolen while it ran,
# the kernel's trace cannot see it: a test that compares a thread's on-CPU
# time in a trace with its CPU clock allows what was stolen meanwhile (an
# upper bound: any CPU's steal counts).
#   steal_mark FILE     the steal column of /proc/stat per CPU, into FILE
#   stolen_since FILE   the ns stolen since: each CPU's ticks more, and one
#                       tick more for each CPU that had any (the counter's
#                       rounding); 0 on a machine that has none
steal_mark() { awk '$1 ~ /^cpu[0-9]+$/ { print $1, $9 }' /proc/stat > "$1"; }
stolen_since() {
	awk -v hz="$(getconf CLK_TCK 2>/dev/null || echo 100)" '
		NR == FNR { was[$1] = $2; next }
		$1 ~ /^cpu[0-9]+$/ && $9 > was[$1] { t += $9 - was[$1] + 1 }
		END { printf "%.0f\n", t * 1e9 / hz }' "$1" /proc/stat
}
# The kernel's clocksource as trawl sees it (TRAWL_CLOCKSOURCE overrides the
# kernel's word in the library too: tests/adverse.sh sets it).
clocksource() {
	if [ -n "${TRAWL_CLOCKSOURCE:-}" ]; then echo "$TRAWL_CLOCKSOURCE"
	else cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo unknown; fi
}
# trawl's default clock is the TSC: an x86 machine whose clocksource is the TSC
tsc_default() { case "$(uname -m)" in x86_64|i?86) [ "$(clocksource)" = tsc ];; *) false;; esac; }
# Where tracefs is mounted: the first tracefs mount, where libtracefs (and so
# trawl) finds it; empty when there is none. On a machine just booted nothing
# may have mounted it yet: trawl mounts it when it first records, so as root
# ask trawl (which mounts it as a recording would) before saying "none".
tracefs_mount() { awk '$3 == "tracefs" { print $2; exit }' /proc/mounts; }
tracefs_dir() {
	if [ -z "$(tracefs_mount)" ] && [ "$(id -u)" = 0 ]; then
		"$TRAWL" record --list-kernel > /dev/null 2>&1
	fi
	tracefs_mount
}
# The priority LTTng prints for a SCHED_OTHER task started from this shell:
# prio - 100 = 20 + nice.
lttng_prio() { echo $((20 + $(nice))); }
# wait_ready FIFO: prints the line a command wrote to its --ready-fd (given
# as `N> FIFO`, after mkfifo FIFO) once ready; fails when the command exited
# before (end of file) or after 60 s, or when the line is not "ready ...".
wait_ready() {
	timeout 60 sh -c 'IFS= read -r l < "$1" || exit 1; case $l in ready|"ready "*) echo "$l";; *) exit 1;; esac' \
		sh "$1"
}
