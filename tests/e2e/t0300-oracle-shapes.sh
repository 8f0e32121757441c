#!/bin/sh
# Format oracle, synthetic traces: babeltrace2 (the independent reference)
# and `trawl print` must print the same lines for sessions written by
# `trawl simulate --shapes` (idle gaps > 2^27 and > 2^32 ns, discarded
# events, empty packets, extended event ids, extreme values, tricky strings)
# of several sizes: one host with one CPU, three hosts with two CPUs, many
# hosts. Lines are compared one by one after sorting only within runs of
# identical timestamps (normalize.sh). Also: the default clock format in two
# time zones, --clock-gmt and --no-delta, and the event counts against what
# simulate reported.
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v babeltrace2 >/dev/null 2>&1 || skip_all "babeltrace2 is not installed (the oracle)"
NORM="$TRAWL_SRC/tests/e2e/normalize.sh"
NORM_PY="$TRAWL_SRC/tests/e2e/normalize.py"
command -v python3 >/dev/null 2>&1 || skip_all "python3 is needed (normalize.py)"

# The number of events a simulate run reported in its summary.
sim_events() {
	sed -n 's/.*[^0-9]\([0-9][0-9]*\) events.*/\1/p; s/^\([0-9][0-9]*\) events.*/\1/p' "$1" | head -1
}

. "$TRAWL_SRC/tests/e2e/oracle.sh"

# session NAME SIMULATE-ARGS...: simulate, then the --clock-seconds oracle
# and the count check against simulate's summary.
session() {
	name=$1; shift
	"$TRAWL" simulate -o "$name" "$@" > "$name.sim" 2>&1
	ok $? "$name: trawl simulate $*"
	oracle "$name" "$name" --clock-seconds
	want=$(sim_events "$name.sim")
	is "$(wc -l < "$name.bt")" "${want:-?}" "$name: babeltrace2 prints as many events as simulate reported"
}

plan 32

# 1. one host, one CPU; 2. three hosts x two CPUs; 3. many hosts.
session one --hosts 1 --cpus 1 --events 5000 --seed 11 --shapes
session three --hosts 3 --cpus 2 --events 20000 --seed 7 --shapes
session many --hosts 12 --cpus 2 --events 24000 --seed 1234 --shapes
# 4. small packets: many packet boundaries, extended headers after them.
session smallpk --hosts 2 --cpus 2 --events 20000 --seed 5 --shapes --packet-size 4096

# The default clock format depends on the time zone: UTC, then an odd one
# (+05:45, no DST) given as a POSIX TZ string, then --clock-gmt under it.
TZ=UTC0 oracle three-utc three
TZ=NPT-5:45 oracle three-npt three
TZ=NPT-5:45 oracle three-gmt three --clock-gmt
oracle three-nodelta three --no-delta --clock-seconds

finish
