#!/bin/sh
# A relay's reason reaches a terminal or a log escaped once, where it is
# printed (issue 28 items 5 and 8): not raw, and not twice (relay-out.c
# escaped it, then the agent's log again: "\\x1b"). A fake relay
# (tests/e2e/cut-relay.py) whose reason is "disk ESC[2J full \ here BEL",
# on loopback.
#
# Checks: trawl simulate --relay cut off by it prints the reason escaped
# once ("disk \x1b[2J full \\ here\x07"), no control character; an agent
# session streamed to it, whose resume the fake refuses with the reason:
# the agent's log and the client that stops the session say it escaped
# once, the log without a control character.
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v python3 > /dev/null 2>&1 || skip_all "no python3 (the fake relay)"
plan 6

: > empty.conf
export TRAWL_CONFIG="$TRASH/empty.conf"
unset TRAWL_SECRET_FILE
FP="" AP=""
cleanup() { for p in $FP $AP; do kill "$p" 2> /dev/null; done; }
trap cleanup EXIT
bail() { echo "Bail out! $*"; exit 1; }
# fake MODE NAME: sets FP, DATA; its log is NAME.log
fake() {
	rm -f "$2.ready"
	python3 "$TRAWL_SRC/tests/e2e/cut-relay.py" "$1" "$TRASH/$2.ready" "$TRASH/$2.log" &
	FP=$!
	until_ok 10 test -s "$2.ready" || return 1
	read -r DATA < "$2.ready"
}
stop_fake() { kill "$FP"; wait "$FP" 2> /dev/null; FP=""; }
ONCE='disk \x1b[2J full \\ here\x07'
TWICE='\\x1b'
# ctl FILE: whether FILE holds a control character (tabs and newlines aside)
ctl() { LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" "$1"; }

# ---- simulate, cut off
fake ack sim || bail "the fake relay did not start"
"$TRAWL" simulate --relay "$DATA" --session s --hosts 1 -e 20000 > sim.out 2> sim.err
rc=$?
grep -qF "$ONCE" sim.err && ! grep -qF "$TWICE" sim.err
is "$rc|$?" "1|0" "simulate: exit 1, the reason escaped once ($(cat sim.err))"
ctl sim.err
ok $((! $?)) "simulate: no control character reaches the terminal"
stop_fake

# ---- an agent session, its resume refused
fake resume ag || bail "the fake relay did not start"
export TRAWL_AGENT_SOCKET="$TRASH/agent.sock"
mkfifo agent.fifo
"$TRAWL" agent -f --host host0 --ready-fd 3 3> agent.fifo 2> agent.log &
AP=$!
wait_ready agent.fifo > /dev/null || bail "the agent did not start"
"$TRAWL" create s --relay "$DATA" > create.out 2> create.err &&
	"$TRAWL" enable s '*' > /dev/null 2>&1 && "$TRAWL" start s > start.out 2> start.err
ok $? "a session streamed to the fake relay starts ($(cat create.err start.err))"
"$TRAWL" stop s > stop.out 2> stop.err
until_ok 10 grep -q 'refused 2' ag.log
grep -qF "$ONCE" agent.log && ! grep -qF "$TWICE" agent.log
ok $? "the agent's log says the reason escaped once ($(grep -F 'here' agent.log | head -1))"
ctl agent.log
ok $((! $?)) "the agent's log holds no control character"
grep -qF "$ONCE" stop.err && ! grep -qF "$TWICE" stop.err && ! ctl stop.err
ok $? "the client that stops it says the reason escaped once ($(cat stop.out stop.err))"
"$TRAWL" agent --stop > /dev/null 2>&1
until_ok 10 gone "$AP" || kill -9 "$AP"
wait "$AP" 2> /dev/null
AP=""
stop_fake
finish
