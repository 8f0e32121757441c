#!/bin/sh
# Live latency with the defaults (docs/relay.md, "Live latency"): an agent
# session created with --relay and no --live-timer (100 ms), a program's
# tracepoints, `trawl print --live` attached. While the viewer waits, the
# relay tells the agent so (DEMAND) and the agent sends new events at its
# next turn instead of at the live timer.
#
# Checks:
#  - every event reaches the viewer's output, the median within a bound
#    derived from this machine: two of the agent's turns (a 2 ms poll
#    timeout, as long as it takes here) plus ten loopback round trips
#    measured here (the events cross three sockets, the viewer's index and
#    packet requests two round trips); at most one
#    in ten later than half the live timer (at the live timer alone, half
#    of them are); the bound must be below a quarter of the live timer,
#    else this machine cannot tell the two apart (skipped, with its
#    figures);
#  - once the program is idle, with the viewer still attached: over a
#    window that ends on a positive signal (20 more live ticks, counted by
#    `trawl list`), the relay told the agent at least once that a viewer
#    waits and at most once a second (plus one), no part was sent at once
#    (nothing came), and the live ticks came at most every 100 ms: the
#    producer is woken no more often than at the live timer;
#  - the viewer ends by itself (exit 0) once the session is stopped, with
#    every event.
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v cc > /dev/null 2>&1 || skip_all "needs a C compiler for the program and the reader"
command -v python3 > /dev/null 2>&1 || skip_all "needs python3 to measure this machine (a loopback round trip, a 2 ms turn)"
plan 9

: > empty.conf
export TRAWL_CONFIG="$TRASH/empty.conf"
RELAY="" AGENT="" EMIT="" VIEWER="" READER=""
cleanup() {
	for p in $VIEWER $READER $EMIT $AGENT $RELAY; do kill "$p" 2> /dev/null; done
}
trap cleanup EXIT
trap 'cleanup; exit 1' INT TERM HUP
bail() { echo "Bail out! $*"; exit 1; }
K=30
HOST=$(hostname)

# the program: event 0 at once (its thread's buffer goes to the agent, the
# stream to the relay), then, once `go` exists, events 1..K with random
# gaps of 20 to 40 ms, each carrying its CLOCK_REALTIME; then it stays
# (idle) until `end` exists
cat > emit.c << 'EOF'
#define TRAWL_TRACEPOINT_DEFINE
#include <trawl/tracepoint.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
TRAWL_TRACEPOINT_EVENT(lat, ping, TRAWL_LOGLEVEL_INFO,
	TRAWL_ARGS(uint64_t seq, uint64_t t_ns),
	TRAWL_FIELDS(
		TRAWL_FIELD_INT(uint64_t, seq, seq)
		TRAWL_FIELD_INT(uint64_t, t_ns, t_ns)))
static uint64_t rt_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}
int main(int argc, char **argv)
{
	int k = atoi(argv[1]);
	srand((unsigned)rt_ns());
	/* enabled once the agent answered (at most 30 s) */
	for (int i = 0; i < 3000 && !trawl_tracepoint_enabled(lat, ping); i++)
		usleep(10000);
	trawl_tracepoint(lat, ping, 0, rt_ns());
	for (int i = 0; i < 6000 && access("go", F_OK) != 0; i++)
		usleep(10000);
	for (int i = 1; i <= k; i++) {
		trawl_tracepoint(lat, ping, (uint64_t)i, rt_ns());
		usleep(20000 + (useconds_t)(rand() % 20000));
	}
	for (int i = 0; i < 12000 && access("end", F_OK) != 0; i++)
		usleep(10000);
	return 0;
}
EOF
# the reader: each "seq = S, t_ns = T" line as "S latency_ms", stamped as
# it arrives
cat > reader.c << 'EOF'
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
int main(void)
{
	char line[4096];
	while (fgets(line, sizeof(line), stdin)) {
		struct timespec now;
		clock_gettime(CLOCK_REALTIME, &now);
		uint64_t n = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
		char *ps = strstr(line, "seq = "), *pt = strstr(line, "t_ns = ");
		if (!ps || !pt)
			continue;
		unsigned long long s = strtoull(ps + 6, 0, 10), t = strtoull(pt + 7, 0, 10);
		printf("%llu %.3f\n", s, (double)(int64_t)(n - t) / 1e6);
		fflush(stdout);
	}
	return 0;
}
EOF
san=${TRAWL_SAN:+-fsanitize=$TRAWL_SAN}
${CC:-cc} -std=gnu11 -O2 $san -I"$TRAWL_SRC/include" -o emit emit.c "$TRAWL_BUILD/libtrawl.a" \
	-lpthread -lm > cc.log 2>&1 &&
	${CC:-cc} -std=gnu11 -O2 -o reader reader.c >> cc.log 2>&1 ||
	{ sed 's/^/# /' cc.log | head; bail "cannot build the program or the reader"; }

# this machine now, beside the test: a loopback round trip (median of
# 200) and the agent's turn (a 2 ms poll timeout, median of 50), in ms
cat > machine.py << 'EOF'
import select, socket, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
c = socket.create_connection(s.getsockname()); a, _ = s.accept()
for x in (a, c): x.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
t = []
for _ in range(200):
    t0 = time.monotonic(); c.sendall(b"x"); a.recv(1); a.sendall(b"y"); c.recv(1)
    t.append(time.monotonic() - t0)
p = select.poll(); p.register(a, select.POLLIN)
u = []
for _ in range(50):
    t0 = time.monotonic(); p.poll(2); u.append(time.monotonic() - t0)
t.sort(); u.sort()
print("%.3f %.3f" % (t[len(t) // 2] * 1e3, u[len(u) // 2] * 1e3))
EOF

relay_agent_up

"$TRAWL" create lat --relay "$DATA" > ctl.out 2>&1 && "$TRAWL" enable lat 'lat:ping' >> ctl.out 2>&1 &&
	"$TRAWL" start lat >> ctl.out 2>&1 || { cat ctl.out; bail "the session did not start"; }
./emit "$K" 2> emit.err &
EMIT=$!
mkfifo out.fifo
./reader < out.fifo > lat.txt &
READER=$!
timeout 300 "$TRAWL" print --live "net://$LIVE/host/$HOST/lat" --wait 30 > out.fifo 2> live.err &
VIEWER=$!

# live N: the `live:` line of trawl list lat, field N (2: timer ms, 4:
# ticks, 6: demands, 13: parts sent at once)
live() { "$TRAWL" list lat | sed -n 's/^ *live: timer \([0-9]*\) ms, \([0-9]*\) ticks\{0,1\}, \([0-9]*\) demands\{0,1\} from the relay (a viewer waits), \([0-9]*\) parts\{0,1\} sent at once.*/\1 \2 \3 \4/p'; }
waits() { "$TRAWL" list lat | grep -q '^ *live: .*(a viewer waits now)$'; }
until_ok 60 has_lines lat.txt 1 && until_ok 30 waits
ok $? "the viewer shows event 0, and the agent hears from the relay that a viewer waits ($(live))"
set -- $(python3 machine.py)
RTT=$1 TURN=$2
touch go
until_ok 60 has_lines lat.txt $((K + 1))
ok $? "all $K events reach the viewer's output ($(lines lat.txt) lines)"

set -- $(live)
TIMER=${1:-100}
# the figures over events 1..K: median, the count over half the timer
awk '$1 >= 1 { print $2 }' lat.txt | sort -n > l.sorted
n=$(lines l.sorted)
MED=$(awk -v n="$n" 'NR == int((n + 1) / 2) { print; exit }' l.sorted)
MAX=$(tail -1 l.sorted)
OVER=$(awk -v h=$((TIMER / 2)) '$1 > h { c++ } END { print c + 0 }' l.sorted)
BOUND=$(awk -v r="$RTT" -v u="$TURN" 'BEGIN { printf "%.1f", 2 * u + 10 * r }')
echo "# latency over $n events: median $MED ms, max $MAX ms, $OVER over $((TIMER / 2)) ms;" \
	"loopback round trip $RTT ms, a 2 ms turn $TURN ms, bound $BOUND ms; timer $TIMER ms"
if awk -v b="$BOUND" -v t="$TIMER" 'BEGIN { exit !(b < t / 4) }'; then
	awk -v m="$MED" -v b="$BOUND" 'BEGIN { exit !(m + 0 <= b + 0) }'
	ok $? "median latency $MED ms within the machine's bound $BOUND ms (2 turns of $TURN ms + 10 round trips of $RTT ms)"
	[ "$n" -eq "$K" ] && [ "$OVER" -le $((K / 10)) ]
	ok $? "$OVER of $n events later than half the live timer ($((TIMER / 2)) ms), at most $((K / 10))"
else
	skip "the bound ($BOUND ms: turns of $TURN ms, round trips of $RTT ms) is not below a quarter of the live timer: this machine cannot tell"
	skip "(the same)"
fi

# idle, the viewer attached: a window of 20 more live ticks
set -- $(live)
T0=$(date +%s%N) K0=${2:-0} D0=${3:-0} F0=${4:-0}
ticked() { set -- $(live); [ "${2:-0}" -ge $((K0 + 20)) ]; }
until_ok 30 ticked
ok $? "20 more live ticks while idle"
set -- $(live)
T1=$(date +%s%N) K1=${2:-0} D1=${3:-0} F1=${4:-0}
MS=$(( (T1 - T0) / 1000000 ))
DMAX=$(( MS / 1000 + 1 ))
echo "# idle window of $MS ms: $((K1 - K0)) ticks, $((D1 - D0)) demands, $((F1 - F0)) parts sent at once"
[ $((D1 - D0)) -ge 1 ] && [ $((D1 - D0)) -le "$DMAX" ]
ok $? "the relay told the agent $((D1 - D0)) times in $MS ms that a viewer waits: at least once, at most $DMAX"
is "$((F1 - F0))" 0 "no part sent at once while no event came"
[ $(( (K1 - K0) * TIMER )) -le $((MS + TIMER)) ]
ok $? "$((K1 - K0)) live ticks in $MS ms: at most one per $TIMER ms (one more)"

touch end
until_ok 30 gone "$EMIT"
"$TRAWL" stop lat > stop.out 2>&1
until_ok 30 gone "$VIEWER"
wait "$VIEWER"
rc=$?
until_ok 10 gone "$READER"
is "$rc:$(lines lat.txt)" "0:$((K + 1))" "the viewer ends by itself (exit 0) once the session stopped, with all $((K + 1)) events"
[ -s live.err ] && sed 's/^/# viewer: /' live.err | head -5
"$TRAWL" destroy lat > /dev/null 2>&1
finish
