#!/bin/sh
# trawl print --live to a pipe or a file writes its lines in a few write(2)
# calls, never one per event (docs/live.md: a viewer on a node that traces
# its own syscalls would flood the trace it reads): a producer streams 3000
# events to a relay in 10 flushes, 100 ms apart, and closes; the viewer
# (under strace, counting its writes to stdout) prints all 3000 lines, in
# far fewer writes than lines (at most one per flush and a few more, where
# it made 3000 before), and the same lines as trawl print of the relay's
# files.
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v cc > /dev/null 2>&1 || skip_all "needs a C compiler for the live producer"
command -v strace > /dev/null 2>&1 || skip_all "needs strace to count the viewer's writes"
strace -f -e trace=write -o /dev/null true 2> /dev/null ||
	skip_all "strace cannot trace here (ptrace not permitted)"
plan 5

pids=""
cleanup() { for p in $pids; do kill "$p" 2> /dev/null; done; }
trap cleanup EXIT

relay_up OUT
san=${TRAWL_SAN:+-fsanitize=$TRAWL_SAN}
${CC:-cc} -std=gnu11 -O2 -Wall -Wextra -Werror $san -I"$TRAWL_SRC/include" -o live-producer \
	"$TRAWL_SRC/tests/e2e/live-producer.c" "$TRAWL_BUILD/libtrawl.a" -lpthread -lm > lp-cc.log 2>&1
[ -x live-producer ] || { sed 's/^/# /' lp-cc.log | head; echo "Bail out! no live producer"; exit 1; }

{
	echo "stream 0"
	echo "ev 0 100000 10"
	echo "flush 0 900000"
	echo "touch first"
	echo "wait go"
	i=1
	while [ $i -le 10 ]; do
		echo "ev 0 $((i * 1000000)) 300"
		echo "flush 0 $((i * 1000000 + 999999))"
		echo "sleep 100"
		i=$((i + 1))
	done
	echo "close"
} > p.txt
./live-producer "$DATA" lw node ust < p.txt > p.out 2> p.err &
P=$!
pids="$pids $P"
until_ok 30 test -e first || { echo "Bail out! the producer does not start"; cat p.err; exit 1; }

# LeakSanitizer cannot run under ptrace: the leak check is the other
# live tests' (t0840) under SAN=address
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
	timeout 120 strace -f -e trace=write -o st.txt "$TRAWL" print --live "net://$LIVE/session/lw" \
	> live.txt 2> live.err &
V=$!
pids="$pids $V"
until_ok 30 has_lines live.txt 10
ok $? "the viewer shows the first flushed events (to a file)"
touch go
wait $P
ok $? "the producer streamed 3010 events in 11 flushes and closed"
wait $V
ok $? "the viewer ends by itself once the session is complete"
n=$(lines live.txt)
w=$(grep -c '^[0-9]* *write(1,' st.txt)
[ "$n" = 3010 ] && [ "$w" -ge 1 ] && [ "$w" -le 60 ]
ok $? "3010 lines in $w writes to stdout (far fewer than one per line)"
"$TRAWL" print OUT > files.txt 2> /dev/null
cmp_files live.txt files.txt "the same lines as trawl print of the relay's files"
finish
