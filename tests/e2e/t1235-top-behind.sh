#!/bin/sh
# trawl top's full-screen mode behind a live stream (tmux, a server of its
# own): a relay session holds 40 s of trace time already (a backlog of 160
# intervals at -d 0.25) when top attaches from its start:
#  - top reads the backlog faster than real time and does not draw every
#    interval: the title says how many it skipped ("skipped N (behind the
#    stream)"), most of them, and shows the newest interval once caught up;
#  - then the producer streams in real time (an interval each 0.25 s):
#    top draws each, skips none more, and the interval shown goes on.
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v tmux > /dev/null 2>&1 || skip_all "needs tmux"
plan 4

pids=""
SOCK="trawl-t1235-$$"
tm() { tmux -L "$SOCK" "$@"; }
cleanup() { tm kill-server 2> /dev/null; for p in $pids; do kill "$p" 2> /dev/null; done; }
trap cleanup EXIT
relay_up OUT
san=${TRAWL_SAN:+-fsanitize=$TRAWL_SAN}
${CC:-cc} -std=gnu11 -O2 -Wall -Wextra -Werror $san -I"$TRAWL_SRC/include" -o live-producer \
	"$TRAWL_SRC/tests/e2e/live-producer.c" "$TRAWL_BUILD/libtrawl.a" -lpthread -lm -lz > lp-cc.log 2>&1
[ -x live-producer ] || { sed 's/^/# /' lp-cc.log | head; echo "Bail out! no live producer"; exit 1; }

# the backlog: an event every 50 ms of trace time for 40 s; then, once the
# test says so, 8 more intervals in real time (an event, a flush, 250 ms)
{
	echo "stream 0"
	i=0
	while [ $i -lt 800 ]; do echo "ev 0 $((1000000000 + i * 50000000)) 1"; i=$((i + 1)); done
	echo "flush 0 $((1000000000 + 800 * 50000000))"
	echo "touch backlog"
	echo "wait go"
	i=0
	while [ $i -lt 8 ]; do
		t=$((1000000000 + 800 * 50000000 + i * 250000000))
		echo "ev 0 $((t + 1000)) 1"
		echo "flush 0 $((t + 250000000))"
		echo "sleep 250"
		i=$((i + 1))
	done
	echo "touch streamed"
	echo "wait end"
	echo "close"
} > p.script
./live-producer "$DATA" bk nodeA kernel < p.script > p.out 2> p.err &
pids="$pids $!"
until_ok 30 test -e backlog || { echo "Bail out! the producer did not stream"; cat p.err; exit 1; }

title() { tm capture-pane -p -t top | head -1; }
shown() { title | sed -n 's/.*) #\([0-9]*\).*/\1/p'; }
skipped() { title | sed -n 's/.*skipped \([0-9]*\) (behind the stream).*/\1/p'; }
tm new-session -d -s top -x 150 -y 40 \
	"TERM=xterm '$TRAWL' top -d 0.25 net://$LIVE/session/bk 2> top.err; echo \$? > top.rc; sleep 60"
# caught up: the newest interval of the backlog, [40.75, 41) s, is #159
caught() { [ "$(shown)" = 159 ]; }
until_ok 30 caught
ok $? "top shows the backlog's newest interval once caught up ($(title | cut -c1-120))"
n1=$(skipped)
[ -n "$n1" ] && [ "$n1" -ge 80 ] && [ "$n1" -le 159 ]
ok $? "... and says how many it did not draw: ${n1:-none} of 160 (behind the stream)"

touch go
until_ok 30 test -e streamed
at() { [ "$(shown)" -ge 166 ]; }
until_ok 10 at
ok $? "streamed in real time: the intervals shown go on (#$(shown))"
is "$(skipped)" "$n1" "... each drawn: skipped no more"
touch end
tm send-keys -t top q
