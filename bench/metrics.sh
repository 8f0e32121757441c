#!/bin/sh
# bench/metrics.sh - what `trawl relay --metrics` costs (docs/metrics.md):
# 64 simulated nodes (trawl simulate --relay: NODES hosts, EVENTS events in
# all, streamed as fast as the relay takes them) into a relay without
# --metrics, and into one with --metrics scraped every second (curl), RUNS
# times each, interleaved (without, with, without, ...) so that a slow
# period of the shared machine hits both.
#
# Figures per run: the relay process's CPU seconds (utime + stime of every
# thread, from /proc/PID/stat: with --metrics this includes the cluster's
# readers, which decode every event the relay receives, and the HTTP
# thread) and the wall time of the simulate; then the ratio with/without of
# the medians. (trawl simulate streams its hosts one after the other: the
# relay holds one node at a time there.)
#
# Then the scrape of NODES nodes at once: NODES producers
# (tests/e2e/live-producer.c, built here; one stream each, 1000 events
# streamed, then held open) in one session, and SCRAPES scrapes: time
# (curl's time_total) and size of the exposition, median and max. Their
# events are not kernel events: the per-host cluster families are empty
# there, the per-node relay families full (docs/metrics.md gives the size
# per host of the cluster's: about 330 lines at K = 16).
#
#   TRAWL_BUILD=build sh bench/metrics.sh
#   env: NODES=64 EVENTS=8M RUNS=3 SCRAPES=20 WORK=... KEEP=0
#
# Starts its own relays on free loopback ports and stops exactly those (by
# pid). Results: stdout and $TRAWL_BUILD/bench/metrics-results-<UTC>.md.
set -u
: "${TRAWL_BUILD:?set TRAWL_BUILD to a build directory}"
TRAWL_BUILD=$(cd "$TRAWL_BUILD" && pwd) || exit 1
SRC=$(cd "$(dirname "$0")/.." && pwd)
TRAWL=$TRAWL_BUILD/trawl
NODES=${NODES:-64}
EVENTS=${EVENTS:-8M}
SCRAPES=${SCRAPES:-20}
RUNS=${RUNS:-3}
KEEP=${KEEP:-0}
WORK=${WORK:-$TRAWL_BUILD/bench/metrics-work}
. "$SRC/bench/machine.sh"
command -v curl > /dev/null || { echo "metrics.sh: needs curl" >&2; exit 2; }
rm -rf "$WORK"; mkdir -p "$WORK" || exit 1
cd "$WORK" || exit 1
: > empty.conf
export TRAWL_CONFIG="$WORK/empty.conf"
RELAY="" SCRAPER="" PRODS=""
cleanup() { for p in $SCRAPER $PRODS $RELAY; do kill "$p" 2> /dev/null; done; }
trap cleanup EXIT
trap 'cleanup; exit 1' INT TERM HUP

one() {	# one RUN MODE (plain|metrics): a line "MODE cpu wall"
	rm -rf "OUT$1"
	m=""
	[ "$2" = metrics ] && m="--metrics 127.0.0.1:0"
	# shellcheck disable=SC2086
	"$TRAWL" relay -o "OUT$1" --data 127.0.0.1:0 --live 127.0.0.1:0 $m --pidfile relay.pid \
		> relay.out 2> relay.err || { cat relay.err >&2; exit 1; }
	RELAY=$(cat relay.pid)
	data=$(sed -n 's/^trawl relay: data on \([^,]*\),.*/\1/p' relay.out)
	if [ "$2" = metrics ]; then
		at=$(sed -n 's|^trawl relay: metrics on http://\([^/]*\)/metrics.*|\1|p' relay.out)
		( while :; do
			curl -s -o scrape.txt -w '%{time_total} %{size_download}\n' "http://$at/metrics" \
				> scrape.one 2> /dev/null
			h=$(grep -c '^trawl_relay_node_received_bytes_total{' scrape.txt)
			echo "$(cat scrape.one) $h" >> "scrapes$1.txt"
			sleep 1
		done ) &
		SCRAPER=$!
	fi
	c0=$(cpu_s "$RELAY")
	t0=$(date +%s.%N)
	"$TRAWL" simulate -q --relay "$data" --session b -n "$NODES" -e "$EVENTS" > sim.out 2>&1 ||
		{ cat sim.out >&2; exit 1; }
	t1=$(date +%s.%N)
	if [ "$2" = metrics ]; then
		# the readers catch up with what was streamed: wait until the
		# relay's CPU stops growing (bounded: 120 s)
		prev=-1 n=0
		while [ $n -lt 240 ]; do
			c=$(cpu_s "$RELAY")
			[ "$c" = "$prev" ] && break
			prev=$c; n=$((n + 1)); sleep 0.5
		done
	fi
	c1=$(cpu_s "$RELAY")
	[ -n "$SCRAPER" ] && kill "$SCRAPER" 2> /dev/null; SCRAPER=""
	kill "$RELAY"; RELAY=""
	echo "$2 $(echo "$c1 - $c0" | bc -l) $(echo "$t1 - $t0" | bc -l)"
}

machine=$(bench_machine)
echo "$machine"
: > runs.txt
for r in $(seq 1 "$RUNS"); do
	one "$r" plain | tee -a runs.txt
	one "$r" metrics | tee -a runs.txt
done
pmed=$(awk '$1 == "plain" { print $2 }' runs.txt | median)
mmed=$(awk '$1 == "metrics" { print $2 }' runs.txt | median)
pall=$(awk '$1 == "plain" { printf "%.2f ", $2 }' runs.txt)
mall=$(awk '$1 == "metrics" { printf "%.2f ", $2 }' runs.txt)
# ---- NODES nodes at once, scraped
${CC:-cc} -std=gnu11 -O2 -I"$SRC/include" -o live-producer "$SRC/tests/e2e/live-producer.c" \
	"$TRAWL_BUILD/libtrawl.a" -lpthread -lm || exit 1
"$TRAWL" relay -o OUTS --data 127.0.0.1:0 --live 127.0.0.1:0 --metrics 127.0.0.1:0 \
	--pidfile relay.pid > relay.out 2> relay.err || exit 1
RELAY=$(cat relay.pid)
data=$(sed -n 's/^trawl relay: data on \([^,]*\),.*/\1/p' relay.out)
at=$(sed -n 's|^trawl relay: metrics on http://\([^/]*\)/metrics.*|\1|p' relay.out)
now=$(date +%s)000000000
printf 'stream 0\nev 0 %s 1000\nflush 0 %s\nwait %s/done\nclose\n' "$now" "$((now + 2000000))" \
	"$WORK" > script.txt
for i in $(seq 1 "$NODES"); do
	./live-producer "$data" s "node$i" kernel < script.txt > /dev/null 2>&1 &
	PRODS="$PRODS $!"
done
bench_scrape "$at" "$NODES" "$SCRAPES" full.txt
hosts=$(grep -c '^trawl_relay_node_received_bytes_total{' scrape.txt)
lines=$(grep -vc '^#' scrape.txt)
touch "$WORK/done"
for pid in $PRODS; do wait "$pid"; done; PRODS=""
kill "$RELAY"; RELAY=""
st=$(awk '{ print $1 * 1000 }' full.txt | median)
smax=$(awk '{ print $1 * 1000 }' full.txt | sort -g | tail -n 1)
sz=$(awk '{ print $2 }' full.txt | median)
ns=$(wc -l < full.txt)
out="$TRAWL_BUILD/bench/metrics-results-$(date -u +%Y%m%dT%H%M%SZ).md"
{
	echo "# bench/metrics.sh: $NODES simulated nodes, $EVENTS events, $RUNS runs each"
	echo "$machine"
	echo "relay CPU seconds, without --metrics: median $pmed (runs: $pall)"
	echo "relay CPU seconds, with --metrics scraped every 1 s (its readers decode every event): median $mmed (runs: $mall)"
	echo "ratio with/without: $(echo "$mmed / $pmed" | bc -l | cut -c1-5)"
	echo "scrape of $hosts nodes at once ($ns scrapes, $lines samples): time median ${st:-?} ms, max ${smax:-?} ms; size median ${sz:-?} bytes"
} | tee "$out"
[ "$KEEP" = 1 ] || rm -rf "$WORK"
