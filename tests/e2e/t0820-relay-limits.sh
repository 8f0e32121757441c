#!/bin/sh
# The relay against peers that misbehave, and producers whose relay fails.
#
# Checks: a viewer that sends requests without ever reading the replies
# does not make the relay grow (its memory stays bounded, other viewers are
# served meanwhile); a producer with a local copy whose relay is killed
# mid-way goes on, exits 0, says the relay was lost, and its local trace
# holds every event; a beacon while events wait in the open packet is
# refused (EBUSY) instead of breaking the relay's promise; a host name too
# long for the live protocol is refused at HELLO.
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v python3 > /dev/null 2>&1 || skip_all "no python3 (the misbehaving viewer)"
command -v "${CC:-cc}" > /dev/null 2>&1 || skip_all "no C compiler to build the live producer"
plan 10

: > empty.conf
export TRAWL_CONFIG="$TRASH/empty.conf"
RELAY="" RELAY2="" pids=""
cleanup() {
	for p in $pids $RELAY $RELAY2; do kill "$p" 2> /dev/null; done
}
trap cleanup EXIT
trap 'cleanup; exit 1' INT TERM HUP
bail() { echo "Bail out! $*"; exit 1; }
start_relay() {	# start_relay DIR PIDFILE OUTFILE
	"$TRAWL" relay -o "$1" --data 127.0.0.1:0 --live 127.0.0.1:0 --pidfile "$2" > "$3" 2>&1
}
addr() { sed -n "s/^trawl relay: data on \\([^,]*\\), live on \\([^,]*\\), .*/\\$2/p" "$1"; }
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

san=""
case "$TRAWL_BUILD" in
*-address*) san="-fsanitize=address,undefined" ;;
*-thread*) san="-fsanitize=thread" ;;
esac
# shellcheck disable=SC2086
${CC:-cc} -std=gnu11 -O1 $san -I"$TRAWL_SRC/include" -o live-producer \
	"$TRAWL_SRC/tests/e2e/live-producer.c" "$TRAWL_BUILD/libtrawl.a" -lpthread -lm ||
	bail "cannot build the live producer"

start_relay OUT relay.pid relay.out || { cat relay.out; bail "the relay did not start"; }
RELAY=$(cat relay.pid)
DATA=$(addr relay.out 1) LIVE=$(addr relay.out 2)

# ---- 1. a viewer that never reads: 200000 LIST_SESSIONS (68 MB of replies)
cat > s1.txt <<EOF
stream 0
ev 0 1000000 5
flush 0 1100000
wait $TRASH/end1
close
EOF
./live-producer "$DATA" s1 n1 ust < s1.txt > p1.out 2>&1 &
pids="$pids $!"
until_ok 10 eval 'timeout 5 babeltrace2 -i lttng-live "net://$LIVE" 2> /dev/null | grep -q /host/n1/s1'
rss0=$(rss_kb "$RELAY")
cat > flood.py <<'EOF'
import os, socket, struct, sys, time
host, port = sys.argv[1].split(':')
s = socket.create_connection((host, int(port)))
s.sendall(struct.pack('>QII', 20, 1, 0) + struct.pack('>QIII', 2**64 - 1, 2, 4, 1))
s.recv(20)
req = struct.pack('>QII', 0, 2, 0)
s.settimeout(5)
sent = 0
try:
    for i in range(200000):
        s.sendall(req)
        sent += 1
except OSError:
    pass
print(sent, flush=True)
# the relay holds what it has while the connection stays open: until the
# test is done with it (at most 10 minutes)
for i in range(6000):
    if os.path.exists(sys.argv[2]):
        break
    time.sleep(0.1)
EOF
# busy_ns PID: the time PID's threads ran or waited to run (ns), from
# /proc/PID/task/*/schedstat (on-CPU, run-queue wait); without schedstat,
# the CPU time alone (clock ticks)
if [ -r "/proc/$RELAY/schedstat" ]; then
	busy_ns() { cat /proc/"$1"/task/*/schedstat 2> /dev/null | awk '{ n += $1 + $2 } END { printf "%.0f\n", n }'; }
	BUSY="ran or waited to run"
else
	busy_ns() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.0f\n", ($14 + $15) * 1e9 / hz }' "/proc/$1/stat"; }
	BUSY="ran (no schedstat here: CPU time only)"
fi
# busy_pct PID: the share of the next second PID was busy, in %
busy_pct() { _b0=$(busy_ns "$1"); sleep 1; _b1=$(busy_ns "$1"); echo $(( (_b1 - _b0) / 10000000 )); }
# quiet: the relay was busy less than half of a second. A relay that spins
# (epoll_wait returning at once, on a viewer it does not read) is runnable
# the whole second, ~100 % whatever the load (waiting for a CPU counts);
# one that waits in epoll_wait is busy a few % (its 1 s timeout, the
# producer's beacons every 100 ms, each with its wait for a CPU)
quiet() { _p=$(busy_pct "$RELAY"); echo "$_p" >> busy.txt; [ "$_p" -lt 50 ]; }
python3 flood.py "$LIVE" "$TRASH/flood.end" > flood.out 2>&1 &
FLOOD=$!
pids="$pids $FLOOD"
# the flood handed its 200000 requests to the kernel (or the relay stopped
# taking them: a send waited 5 s); then the relay reads what it will and
# goes quiet: bounded, at once; unbounded, only once it queued all 68 MB
# of replies (a slow machine takes longer to get there, never less far)
until_ok 120 has_lines flood.out 1
until_ok 120 quiet
q=$?
rss1=$(rss_kb "$RELAY")
[ "$rss1" -lt $((rss0 + 40000)) ]
ok $? "a viewer that does not read: the relay's memory stays bounded (${rss0} -> ${rss1} KiB, $(cat flood.out) requests sent)"
ok $q "and the relay waits for it without spinning ($BUSY $(tail -1 busy.txt) % of 1 s; < 50)"
timeout 5 babeltrace2 -i lttng-live "net://$LIVE" 2> /dev/null | grep -q /host/n1/s1
ok $? "meanwhile another viewer is served (the listing)"
touch flood.end
until_ok 30 gone $FLOOD
wait $FLOOD 2> /dev/null
touch end1

# ---- 2. the relay dies while a producer with a local copy records
start_relay OUT2 relay2.pid relay2.out || bail "relay 2 did not start"
RELAY2=$(cat relay2.pid)
DATA2=$(addr relay2.out 1)
cat > s2.txt <<EOF
stream 0
ev 0 1000000 10
flush 0 1100000
touch $TRASH/at2
wait $TRASH/go2
ev 0 2000000 10
flush 0 2100000
class later
stream 1
ev 1 3000000 10 later
close
EOF
./live-producer "$DATA2" s2 n2 ust LOCAL2 < s2.txt > p2.out 2> p2.err &
P2=$!
until_ok 10 test -f at2
kill "$RELAY2"
until_ok 10 gone "$RELAY2"
RELAY2=""
touch go2
until_ok 30 gone "$P2"
wait "$P2"
is "$?" 0 "the producer goes on once its relay is gone, new class and stream included (exit 0)"
n=$("$TRAWL" print LOCAL2 2> /dev/null | wc -l)
is "$n" 30 "its local trace holds all 30 events"
n=$("$TRAWL" print OUT2/s2 2> /dev/null | wc -l)
is "$n" 10 "the relay's copy keeps the 10 events that reached it"

# ---- 3. a beacon while events wait: refused, the relay's trace intact
cat > s3.txt <<EOF
stream 0
ev 0 1000 3
beacon 0 50000
EOF
./live-producer "$DATA" s3 n3 ust < s3.txt > p3.out 2> p3.err
rc=$?
[ $rc -ne 0 ] && grep -q 'beacon: Device or resource busy' p3.err
ok $? "a beacon over events not yet sent is refused ($(head -1 p3.err))"
cat > s4.txt <<EOF
stream 0
ev 0 1000 3
flush 0 5000
beacon 0 50000
ev 0 60000 2
close
EOF
./live-producer "$DATA" s4 n4 ust < s4.txt > p4.out 2> p4.err
is "$?:$("$TRAWL" print OUT/s4 2> /dev/null | wc -l)" "0:5" \
	"flushed first, the beacon goes, and the trace keeps its 5 events"

# ---- 4. a host name longer than the live protocol's 63 bytes
long=$(printf 'h%.0s' $(seq 64))
./live-producer "$DATA" s5 "$long" ust < /dev/null > p5.out 2> p5.err
rc=$?
[ $rc -ne 0 ] && grep -q 'host name longer than 63' p5.err
ok $? "a 64-byte host name is refused at HELLO ($(head -c 120 p5.err))"
[ ! -e "OUT/s5" ] || [ -z "$(find OUT/s5 -type f)" ]
ok $? "and nothing of it is written"
finish
