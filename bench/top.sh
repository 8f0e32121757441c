#!/bin/sh
# bench/top.sh - `trawl top` on a streaming cluster (docs/top.md): NODES
# simulated nodes (bench/bench-nodes.c: kernel events stamped with the wall
# clock, RATE events a second each, two CPUs each, a 100 ms live timer)
# stream to a trawl relay for SECS seconds while `trawl top -b --json
# --from-now -d 1` watches the session.
#
# Figures:
#  - top's CPU, % of one CPU over its run (utime + stime, from wait4);
#  - the time from an event to the refresh that shows it: each snapshot's
#    lines are stamped with the wall clock as they come (python3); an
#    interval [begin, end) printed at P shows its events P - end to
#    P - begin after they happened: the distribution over the events
#    (spread evenly in each interval), p50 and p99;
#  - the relay's CPU seconds (all threads, /proc/PID/stat) without
#    --metrics, and with --metrics scraped every second (curl), top
#    attached to both;
#  - the anchor, in the same run: babeltrace2 attached live to the same
#    stream (one `babeltrace2 -i lttng-live ... -o dummy` per host, as LTTng
#    viewers attach, decoding without printing), its CPU over the same
#    time; the ratio top / babeltrace2;
#  - the scrape of SNODES nodes at once (SRATE events a second each):
#    time (curl's time_total) and size, median and max.
# Targets (issue "watch the cluster live"): top <= 10 % of one CPU at 16 x
# 100 k events/s, refresh latency p50 <= 1.5 s at a 1 s refresh.
#
#   TRAWL_BUILD=build sh bench/top.sh
#   env: NODES=16 RATE=100000 SECS=20 SNODES=64 SRATE=10000 KEEP=0 WORK=...
#
# Starts its own relays on free loopback ports and stops exactly those (by
# pid). Results: stdout and $TRAWL_BUILD/bench/top-results-<UTC>.md.
set -u
: "${TRAWL_BUILD:?set TRAWL_BUILD to a build directory}"
TRAWL_BUILD=$(cd "$TRAWL_BUILD" && pwd) || exit 1
SRC=$(cd "$(dirname "$0")/.." && pwd)
TRAWL=$TRAWL_BUILD/trawl
NODES_BIN=$TRAWL_BUILD/bench/bench-nodes
NODES=${NODES:-16}
RATE=${RATE:-100000}
SECS=${SECS:-20}
SNODES=${SNODES:-64}
SRATE=${SRATE:-10000}
KEEP=${KEEP:-0}
WORK=${WORK:-$TRAWL_BUILD/bench/top-work}
. "$SRC/bench/machine.sh"
for c in curl python3; do
	command -v $c > /dev/null || { echo "top.sh: needs $c" >&2; exit 2; }
done
[ -x "$NODES_BIN" ] || { echo "top.sh: build $NODES_BIN first (make bench)" >&2; exit 2; }
rm -rf "$WORK"; mkdir -p "$WORK" || exit 1
cd "$WORK" || exit 1
: > empty.conf
export TRAWL_CONFIG="$WORK/empty.conf"
RELAY="" SCRAPER="" PROD="" BTS=""
cleanup() { for p in $SCRAPER $PROD $BTS $RELAY; do kill "$p" 2> /dev/null; done; }
trap cleanup EXIT
trap 'cleanup; exit 1' INT TERM HUP

relay_up() {	# relay_up [--metrics]: RELAY, DATA, LIVE, METRICS
	rm -rf OUT
	# shellcheck disable=SC2068
	"$TRAWL" relay -o OUT --data 127.0.0.1:0 --live 127.0.0.1:0 $@ --pidfile relay.pid \
		> relay.out 2> relay.err || { cat relay.err >&2; exit 1; }
	RELAY=$(cat relay.pid)
	DATA=$(sed -n 's/^trawl relay: data on \([^,]*\),.*/\1/p' relay.out)
	LIVE=$(sed -n 's/.*, live on \([^,]*\),.*/\1/p' relay.out)
	METRICS=$(sed -n 's|^trawl relay: metrics on http://\([^/]*\)/metrics.*|\1|p' relay.out)
}
relay_down() { kill "$RELAY"; RELAY=""; }

# the watcher: runs top, stamps its lines, prints "cpu_pct p50_s p99_s
# late_p50_s snapshots"
cat > watch.py << 'EOF'
import json, os, subprocess, sys, time
cmd = sys.argv[2:]
t0 = time.time()
p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
lat, late, seen = [], [], set()
for line in p.stdout:
    now = time.time_ns()
    try:
        o = json.loads(line)
    except ValueError:
        continue
    if o.get("type") != "host" or o["interval"] in seen:
        continue
    seen.add(o["interval"])
    b, e = o["begin"], o["end"]
    late.append((now - e) / 1e9)
    for k in range(1000):	# the interval's events, evenly spread
        lat.append((now - (b + (e - b) * (k + 0.5) / 1000)) / 1e9)
_, st, ru = os.wait4(p.pid, 0)
wall = time.time() - t0
lat.sort(); late.sort()
q = lambda v, f: v[min(len(v) - 1, int(f * len(v)))] if v else float("nan")
with open(sys.argv[1], "w") as f:
    print("%.2f %.3f %.3f %.3f %d %d" % (100 * (ru.ru_utime + ru.ru_stime) / wall, q(lat, .5),
          q(lat, .99), q(late, .5), len(seen), os.waitstatus_to_exitcode(st)), file=f)
EOF

one() {	# one MODE (plain|metrics|bt): a line "MODE relay_cpu top_cpu p50 p99 late n"
	if [ "$1" = metrics ]; then relay_up --metrics 127.0.0.1:0; else relay_up; fi
	if [ "$1" = metrics ]; then
		( while :; do
			curl -s -o scrape.txt -w '%{time_total} %{size_download}\n' \
				"http://$METRICS/metrics" >> scrapes.txt 2> /dev/null
			sleep 1
		done ) &
		SCRAPER=$!
	fi
	c0=$(cpu_s "$RELAY")
	"$NODES_BIN" "$DATA" s "$NODES" "$RATE" "$SECS" > prod.out 2>&1 &
	PROD=$!
	n=$((SECS - 6))
	if [ "$1" = bt ]; then
		# one babeltrace2 per host once the hosts are there (at most 10 s)
		i=0
		while [ $i -lt 100 ]; do
			h=$(timeout 10 babeltrace2 -i lttng-live "net://$LIVE" 2> /dev/null | grep -c '/s (')
			[ "$h" -ge "$NODES" ] && break
			i=$((i + 1)); sleep 0.1
		done
		sleep 2
		for k in $(seq 1 "$NODES"); do
			babeltrace2 -i lttng-live "net://$LIVE/host/$(printf 'node%02d' "$k")/s" \
				-o dummy > /dev/null 2>&1 &
			BTS="$BTS $!"
		done
		sleep "$n"
		bt=0
		for p in $BTS; do bt=$(echo "$bt + $(cpu_s "$p")" | bc -l); done
		top="$(echo "100 * $bt / $n" | bc -l | cut -c1-6) - - - $n 0"
		for p in $BTS; do kill "$p" 2> /dev/null; done; BTS=""
	else
		sleep 2
		python3 watch.py watch.txt "$TRAWL" top -b --json --from-now --wait 10 -d 1 \
			-n "$n" "net://$LIVE/session/s" 2> top.err
		top=$(cat watch.txt)
	fi
	wait "$PROD"; PROD=""
	c1=$(cpu_s "$RELAY")
	[ -n "$SCRAPER" ] && kill "$SCRAPER" 2> /dev/null; SCRAPER=""
	relay_down
	echo "$1 $(echo "$c1 - $c0" | bc -l | cut -c1-6) $top"
}

machine=$(bench_machine)
echo "$machine"
: > runs.txt
for m in plain metrics bt; do
	one $m | tee -a runs.txt
	cat prod.out
done
set -- $(awk '$1 == "plain"' runs.txt); rp=$2 tcp=$3 tp50=$4 tp99=$5 tlate=$6 tn=$7 trc=$8
set -- $(awk '$1 == "metrics"' runs.txt); rm=$2 mcp=$3 mp50=$4 mp99=$5
set -- $(awk '$1 == "bt"' runs.txt); bcp=$3
sc=$(wc -l < scrapes.txt 2> /dev/null || echo 0)

# ---- SNODES nodes at once, scraped
relay_up --metrics 127.0.0.1:0
"$NODES_BIN" "$DATA" s "$SNODES" "$SRATE" 12 > sprod.out 2>&1 &
PROD=$!
bench_scrape "$METRICS" "$SNODES" 20 full.txt trawl_host_cpus	# (the hosts' readers have run)
hosts=$(grep -c '^trawl_relay_node_received_bytes_total{' scrape.txt)
chosts=$(grep -c '^trawl_host_cpus{' scrape.txt)
lines=$(grep -vc '^#' scrape.txt)
wait "$PROD"; PROD=""
relay_down
st=$(awk '{ print $1 * 1000 }' full.txt | median)
smax=$(awk '{ print $1 * 1000 }' full.txt | sort -g | tail -n 1)
sz=$(awk '{ print $2 }' full.txt | median)

out="$TRAWL_BUILD/bench/top-results-$(date -u +%Y%m%dT%H%M%SZ).md"
{
	echo "# bench/top.sh: $NODES nodes x $RATE events/s for $SECS s, trawl top -d 1"
	echo "$machine"
	echo "trawl top CPU: $tcp % of one CPU (target <= 10 %), $tn snapshots, exit $trc"
	echo "event to the refresh that shows it: p50 $tp50 s, p99 $tp99 s (target p50 <= 1.5 s); an interval's end to its refresh: median $tlate s"
	echo "anchor, babeltrace2 live (one per host, -o dummy) on the same stream: $bcp % of one CPU; top / babeltrace2: $(echo "$tcp / $bcp" | bc -l | cut -c1-5)"
	echo "relay CPU seconds, without --metrics: $rp; with --metrics scraped every 1 s ($sc scrapes): $rm; ratio $(echo "$rm / $rp" | bc -l | cut -c1-5) (top attached to both: $tcp % and $mcp % of a CPU, p50 $tp50 s and $mp50 s)"
	echo "scrape of $hosts nodes at once ($SRATE events/s each, $chosts with cluster families, $lines samples): time median ${st:-?} ms, max ${smax:-?} ms; size median ${sz:-?} bytes"
} | tee "$out"
[ "$KEEP" = 1 ] || rm -rf "$WORK"
