#!/bin/sh
# The live viewer client (lib/net/live-client.h) against a real
# lttng-relayd: an LTTng 2.13 live session (lttng create --live, lttng-ust,
# the program of tests/lttng/trawl_fixture.c) streamed to an lttng-relayd
# started here on free loopback ports. The client (test-live-client --lttng,
# built with the unit tests) must list the session with this machine's
# hostname and its name, attach to it, read its metadata (which parses),
# read a packet (CTF magic), and detach. Then `trawl print --live` (the
# pipeline's live source) follows the session until lttng destroys it: it
# ends by itself, with every event the program made, as `trawl print` reads
# them from lttng-relayd's files afterwards.
#
# Starts lttng-relayd (stopped by its pid at the end), and lttng-sessiond
# only if none answers (then stopped by its pid too). Skips where lttng-tools,
# lttng-ust's headers or a C compiler are missing, or no session daemon can
# run.
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v lttng-relayd > /dev/null 2>&1 || skip_all "lttng-relayd is not installed (lttng-tools)"
command -v lttng > /dev/null 2>&1 || skip_all "lttng is not installed (lttng-tools)"
command -v lttng-sessiond > /dev/null 2>&1 || skip_all "lttng-sessiond is not installed (lttng-tools)"
. "$TRAWL_SRC/tests/lttng/turn.sh"
command -v "${CC:-cc}" > /dev/null 2>&1 || skip_all "no C compiler to build the LTTng-UST program"
TLC="$TRAWL_BUILD/tests/test-live-client"
[ -x "$TLC" ] || { echo "Bail out! $TLC is not built"; exit 1; }

FIX="$TRAWL_SRC/tests/lttng"
if ! ${CC:-cc} -O2 -I"$FIX" -o trawl-fixture "$FIX/trawl_fixture.c" "$FIX/trawl_fixture_tp.c" \
	-llttng-ust -ldl -lpthread > cc.log 2>&1; then
	grep -q 'lttng/tracepoint.h' cc.log && skip_all "lttng-ust development files are missing"
	echo "Bail out! cannot build tests/lttng/trawl_fixture.c: $(head -3 cc.log)"
	exit 1
fi

RELAYD="" OWN_SESSIOND="" SESS=""
# stop PID: SIGTERM, then wait for it, 10 s at most (SIGKILL after)
stop() {
	kill "$1" 2> /dev/null || return 0
	until_ok 10 gone "$1" || kill -9 "$1" 2> /dev/null
}
cleanup() {
	[ -n "$SESS" ] && lttng destroy "$SESS" > /dev/null 2>&1
	[ -n "$RELAYD" ] && stop "$RELAYD"
	[ -n "$OWN_SESSIOND" ] && stop "$OWN_SESSIOND"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# three distinct free ports on 127.0.0.1
P1=$("$TLC" --free-port) P2=$("$TLC" --free-port) P3=$("$TLC" --free-port)
while [ "$P2" = "$P1" ]; do P2=$("$TLC" --free-port); done
while [ "$P3" = "$P1" ] || [ "$P3" = "$P2" ]; do P3=$("$TLC" --free-port); done

lttng-relayd -C "tcp://127.0.0.1:$P1" -D "tcp://127.0.0.1:$P2" -L "tcp://127.0.0.1:$P3" \
	-o "$TRASH/relayd-out" > relayd.log 2>&1 &
RELAYD=$!
until_ok 10 "$TLC" --connect "net://127.0.0.1:$P3" ||
	skip_all "lttng-relayd does not answer on its live port ($(head -2 relayd.log | tr '\n' ' '))"

if ! lttng list > /dev/null 2>&1; then
	if [ "$(id -u)" = 0 ]; then pidfile=/var/run/lttng/lttng-sessiond.pid
	else pidfile=${LTTNG_HOME:-$HOME}/.lttng/lttng-sessiond.pid; fi
	lttng-sessiond --daemonize --no-kernel > /dev/null 2> sessiond.log ||
		skip_all "cannot start lttng-sessiond: $(head -1 sessiond.log)"
	OWN_SESSIOND=$(cat "$pidfile" 2> /dev/null)
	[ -n "$OWN_SESSIOND" ] || skip_all "lttng-sessiond started but wrote no pid file ($pidfile)"
	lttng list > /dev/null 2>&1 || skip_all "lttng-sessiond does not answer"
fi

plan 12
SESS="trawl_lc_$$_$(date +%s)"
HOST=$(uname -n)
{ lttng create "$SESS" --live=100000 --set-url="net://127.0.0.1:$P1:$P2" &&
	lttng enable-event -u -s "$SESS" 'trawl_fixture:*' &&
	lttng start "$SESS"; } > lttng.log 2>&1
ok $? "a live session streamed to lttng-relayd on 127.0.0.1:$P1:$P2"
LTTNG_UST_REGISTER_TIMEOUT=10000 ./trawl-fixture 200 2 > counts 2> fixture.err
ok $? "the LTTng-UST program ran in it"

"$TLC" --lttng "net://127.0.0.1:$P3/host/$HOST/$SESS" 30 > view.out 2> view.err
rc=$?
sed 's/^/# /' view.out view.err
is "$rc" 0 "the client read the session (exit 0)"
grep -q "^listed: host $HOST session $SESS live_timer 100000 streams [1-9]" view.out
ok $? "LIST_SESSIONS: the session, with this machine's hostname, its live timer and streams"
grep -Eq '^attached: ([2-9]|[1-9][0-9]+) streams, [1-9][0-9]* metadata$' view.out
ok $? "ATTACH_SESSION: data and metadata streams"
grep -Eq '^metadata: [1-9][0-9]* bytes, parses, [1-9][0-9]* event classes$' view.out
ok $? "GET_METADATA: the trace's metadata, which parses, with its event classes"
grep -Eq '^packet: [1-9][0-9]* bytes, content [1-9][0-9]* bits, magic ok$' view.out
ok $? "GET_NEXT_INDEX, GET_PACKET: a packet with the CTF magic"
grep -q '^detach: ok$' view.out
ok $? "DETACH_SESSION"

# a viewer in no hurry (agg: trawl's lazy seek, which lttng-relayd
# refuses, leaving the session attached to that connection): it attaches
# all the same, on a connection of its own, with lttng-relayd's seek, and
# counts the events; then it leaves (lttng-relayd takes one viewer)
want=$(awk '$1 ~ /^trawl_fixture:/ { n += $2 } END { print n + 0 }' counts)
timeout 120 "$TRAWL" agg --live "net://127.0.0.1:$P3/host/$HOST/$SESS" -i 0.5 \
	'count(trawl_fixture:*)' > agg.txt 2> agg.err &
A=$!
got() { awk '$1 ~ /^[0-9]+$/ { s += $1 } END { exit !(s >= w) }' w="$want" agg.txt; }
until_ok 60 got
ok $? "trawl agg --live (a lazy viewer) attaches to lttng-relayd and counts the $want events ($(head -1 agg.err))"
kill "$A" 2> /dev/null
wait "$A" 2> /dev/null

# the pipeline's live source on the same session, until it is destroyed
timeout 120 "$TRAWL" print --live "net://127.0.0.1:$P3/host/$HOST/$SESS" > live.txt 2> live.err &
V=$!
want=$(awk '$1 ~ /^trawl_fixture:/ { n += $2 } END { print n + 0 }' counts)
until_ok 60 has_lines live.txt "$want"
{ lttng stop "$SESS" && lttng destroy "$SESS"; } >> lttng.log 2>&1
SESS=""
until_ok 60 gone "$V"
wait "$V"
is "$?:$(grep -c ' trawl_fixture:' live.txt)" "0:$want" \
	"trawl print --live: every event the program made ($want), and it ends with the session"
dir=$(find "$TRASH/relayd-out" -name metadata -path '*ust*' | head -1)
"$TRAWL" print "$(dirname "$dir")" > files.txt 2> files.err
ok $? "trawl print reads lttng-relayd's files of the session"
# (events of the same nanosecond on two CPUs may come in either order: the
# merge breaks ties by stream, and the files and the live session number
# their streams apart; the deltas then differ too)
strip() { sed -E 's/^(\[[^]]*\]) \([^)]*\)/\1/' "$1" | LC_ALL=C sort; }
strip live.txt > live.sorted
strip files.txt > files.sorted
cmp_files live.sorted files.sorted "... the same events as trawl print --live showed"
finish
