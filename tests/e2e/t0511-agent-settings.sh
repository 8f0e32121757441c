#!/bin/sh
# The session settings, one table in the agent (lib/agent/settings.c) that
# every entry point iterates: `trawl create` and `trawl agent --oneshot`
# options (--KEY VALUE for rows flagged as options, listed by --help),
# [session] defaults of the configuration (and TRAWL_SESSION_*) for rows
# flagged as configurable, the command line over them, the description
# `trawl save` writes and `trawl load` reads (a bad value named with its
# line), and the relay keys (a description keeps them).
. "$TRAWL_SRC/tests/e2e/lib.sh"
plan 20

cat > s.conf <<'EOF'
[session]
subbuf-size = 8192
num-subbuf = 4
clock = monotonic
header = fixed
EOF
export TRAWL_CONFIG="$TRASH/s.conf"
export TRAWL_AGENT_SOCKET="$TRASH/agent.sock"
AGENT_PID="" ONESHOT_PID=""
cleanup() {
	[ -n "$AGENT_PID" ] && kill "$AGENT_PID" 2>/dev/null
	[ -n "$ONESHOT_PID" ] && kill "$ONESHOT_PID" 2>/dev/null
}
trap cleanup EXIT
# body NAME [SOCKET]: the saved description without its comment and name
body() { TRAWL_AGENT_SOCKET=${2:-$TRAWL_AGENT_SOCKET} "$TRAWL" save "$1" - | grep -v '^#' | grep -v '^session = '; }

"$TRAWL" agent --pidfile agent.pid > agent.out 2>&1
ok $? "the agent starts"
AGENT_PID=$(cat agent.pid)

"$TRAWL" create --help > create-help.out
grep -q '^  --subbuf-size BYTES ' create-help.out && grep -q '^  --header large|fixed ' create-help.out &&
	grep -q '^  --live-timer MS ' create-help.out
ok $? "create --help lists the table's options"
"$TRAWL" agent --help | grep -q '^  --header large|fixed '
ok $? "agent --help lists them for --oneshot"

# [session] defaults
"$TRAWL" create c1 -o c1 > /dev/null
ok $? "create with [session] defaults"
is "$(body c1)" "output = $TRASH/c1
snapshot = no
mode = discard
subbuf-size = 8192
num-subbuf = 4
clock = monotonic
header = fixed" "the configuration's [session] values are the session's"

# the command line over the configuration, the environment over the file
TRAWL_SESSION_HEADER=large "$TRAWL" create c2 -o c2 --overwrite --subbuf-size 16k --clock auto > /dev/null
ok $? "create with options over the defaults"
is "$(body c2)" "output = $TRASH/c2
snapshot = no
mode = overwrite
subbuf-size = 16384
num-subbuf = 4
clock = auto
header = large" "options, then TRAWL_SESSION_HEADER, then the file"

# the relay keys: create sends them, save keeps them (nothing connects
# before start)
"$TRAWL" create r1 --relay 127.0.0.1:9 --relay-session far > r1.out
ok $? "create --relay --relay-session"
body r1 | grep -E '^(relay|relay-session|live-timer) = ' > r1.keys
printf 'relay = 127.0.0.1:9\nrelay-session = far\nlive-timer = 100\n' > r1.want
cmp_files r1.keys r1.want "a description keeps the relay keys (live-timer 100 by default with --relay)"
"$TRAWL" save r1 r1.session > /dev/null && "$TRAWL" load --name r2 r1.session > /dev/null
is "$(body r2)" "$(body r1)" "load: the relay keys come back"

# bad values and keys, named
"$TRAWL" create c3 -o c3 --num-subbuf 3 2> c3.err
is "$?:$(cat c3.err)" "2:trawl create: bad value for num-subbuf: '3'" "a bad value: a usage error naming the key"
printf 'session = b\noutput = /tmp/b\nsnapshot = maybe\n' > b1.session
"$TRAWL" load b1.session 2> b1.err
is "$?:$(cat b1.err)" "1:trawl load: line 3: bad value for snapshot: 'maybe'" "load: a bad value names its line"
printf 'session = b\nsubbuf = 4096\n' > b2.session
"$TRAWL" load b2.session 2> b2.err
is "$?:$(cat b2.err)" "1:trawl load: line 2: unknown setting 'subbuf'" "load: an unknown key names its line"
"$TRAWL" create c4 -o c4 --live-timer 50 2> /dev/null
is $? 2 "create: --live-timer without --relay is a usage error"

# the oneshot session: the same table, the same defaults, --header now
mkfifo one.ready
"$TRAWL" agent --oneshot --socket "$TRASH/one.sock" -o one --enable 'x:*@warning' \
	--context vtid --num-subbuf 2 --header large --pidfile one.pid --ready-fd 3 3> one.ready \
	2> one.err &
ONESHOT_PID=$!
wait_ready one.ready > /dev/null
ok $? "agent --oneshot with table options starts"
is "$(body oneshot "$TRASH/one.sock")" "output = $TRASH/one
snapshot = no
mode = discard
subbuf-size = 8192
num-subbuf = 2
clock = monotonic
header = large
context = vtid
event = x:* loglevel 4" "oneshot: [session] defaults, its options over them, its rule and context"
kill -TERM $ONESHOT_PID
wait $ONESHOT_PID
is $? 0 "oneshot: SIGTERM stops it (exit 0)"
ONESHOT_PID=""
"$TRAWL" agent --oneshot --socket "$TRASH/bad.sock" -o bad --enable 'x:*@nonsense' 2> bad.err
is "$?:$(grep -c "bad event rule 'x:\*@nonsense'" bad.err)" "2:1" "oneshot: a bad --enable is a usage error"
"$TRAWL" agent --oneshot --socket "$TRASH/bad.sock" -o bad --clock sundial 2> bad2.err
is "$?:$(cat bad2.err)" "1:trawl agent: bad value for clock: 'sundial'" "oneshot: a bad setting: the agent says why and exits 1"
[ ! -e bad.sock ]; ok $? "... and leaves no socket"

kill "$AGENT_PID"
AGENT_PID=""
finish
