#!/bin/sh
# make demo: a small cluster on this one machine, shown on one timeline.
# Until live recording exists, the cluster is simulated: four hosts, each
# with its own clock, kernel and user-space traces; then its summary and its
# first events, every host merged in time order.
set -eu
: "${TRAWL_BUILD:?run through make demo}"
TRAWL="$TRAWL_BUILD/trawl"
DIR=${DEMO_DIR:-"$TRAWL_BUILD/demo-session"}
rm -rf "$DIR"
echo "== trawl simulate: 4 hosts x 2 CPUs, 200000 events -> $DIR"
"$TRAWL" simulate -o "$DIR" --hosts 4 --cpus 2 --events 200000 --seed 1
echo
echo "== trawl info $DIR"
"$TRAWL" info "$DIR"
echo
echo "== trawl print $DIR | head -25   (every host, one timeline)"
"$TRAWL" print "$DIR" | head -25
echo
echo "== trawl print --host host2 -e 'app:*' $DIR | head -6"
"$TRAWL" print --host host2 -e 'app:*' "$DIR" | head -6
echo
if command -v babeltrace2 >/dev/null; then
	echo "== babeltrace2 reads the same session (first 3 lines)"
	babeltrace2 "$DIR" 2>/dev/null | head -3
fi
