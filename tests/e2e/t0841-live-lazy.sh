#!/bin/sh
# Viewers in no hurry (docs/relay.md): `trawl agg --live`, `state --live`
# and `top` attach to a trawl relay as lazy viewers (seek flag
# LIVE_SEEK_TRAWL_LAZY): the relay holds their requests without telling
# the producers that a viewer waits (no DEMAND), so an idle node sends its
# events at its live timer, not each at once. An agent session streams to
# the relay, idle (its program emits one event and waits):
#  - with `trawl agg --live` attached, over 20 live ticks, the relay told
#    the agent 0 times that a viewer waits (`trawl list`: its demands);
#  - with `trawl print --live` attached as well, it does (the control);
#  - the lazy viewer still gets the events: once the session stops, agg
#    ends by itself and counts both.
. "$TRAWL_SRC/tests/e2e/lib.sh"
[ -x "$TRAWL_BUILD/examples/ust-counter" ] || skip_all "examples/ust-counter is not built"
plan 5

: > empty.conf
export TRAWL_CONFIG="$TRASH/empty.conf"
RELAY="" AGENT="" EMIT="" V1="" V2=""
cleanup() { for p in $V2 $V1 $EMIT $AGENT $RELAY; do kill "$p" 2> /dev/null; done; }
trap cleanup EXIT
trap 'cleanup; exit 1' INT TERM HUP
bail() { echo "Bail out! $*"; exit 1; }
HOST=$(hostname)

relay_agent_up
"$TRAWL" create lz --relay "$DATA" > ctl.out 2>&1 && "$TRAWL" enable lz 'counter:*' >> ctl.out 2>&1 &&
	"$TRAWL" start lz >> ctl.out 2>&1 || { cat ctl.out; bail "the session did not start"; }
# one tick (2 events: its tick and its debug event), then it waits for `end`
"$TRAWL_BUILD/examples/ust-counter" -n 1 -w -c end > emit.out 2> emit.err &
EMIT=$!

# ticks and demands of the session (trawl list)
live() { "$TRAWL" list lz | sed -n 's/^ *live: timer [0-9]* ms, \([0-9]*\) ticks\{0,1\}, \([0-9]*\) demands\{0,1\} from the relay.*/\1 \2/p'; }
# window: 20 more live ticks; prints the demands in it
ticked() { _t=$(live); [ "${_t%% *}" -ge $((_k0 + 20)) ] 2> /dev/null; }
window() {
	set -- $(live)
	_k0=${1:-0} _d0=${2:-0}
	until_ok 30 ticked || { echo "no ticks"; return; }
	set -- $(live)
	echo $((${2:-0} - _d0))
}

timeout 120 "$TRAWL" agg --live "net://$LIVE/host/$HOST/lz" 'count(counter:*)' > agg.txt 2> agg.err &
V1=$!
until_ok 30 eval '[ "$(grep -c "attached to $HOST/lz$" relay.err)" -ge 1 ]'
ok $? "trawl agg --live attached"
is "$(window)" 0 "a lazy viewer attached, 20 live ticks: the relay told the agent 0 times that a viewer waits"

timeout 120 "$TRAWL" print --live "net://$LIVE/host/$HOST/lz" > print.txt 2> print.err &
V2=$!
until_ok 30 has_lines print.txt 2
d=$(window)
[ "$d" -ge 1 ] 2> /dev/null
ok $? "with trawl print --live attached too, it does ($d times in 20 ticks)"

touch end
until_ok 30 gone "$EMIT"
"$TRAWL" stop lz > stop.out 2>&1
until_ok 30 gone "$V1"
wait "$V1"
rc=$?
n=$(awk '$1 ~ /^[0-9]+$/ { print $1 }' agg.txt | tail -1)
is "$rc:${n:-none}" "0:2" "the lazy viewer ends by itself with the session, both events counted"
until_ok 30 gone "$V2"
wait "$V2"
is "$?:$(lines print.txt)" "0:2" "trawl print --live ends with it too, with both"
"$TRAWL" destroy lz > /dev/null 2>&1
finish
