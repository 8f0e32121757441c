#!/bin/sh
# bench/export.sh - `trawl export`: time, peak memory and bytes per event of
# the perfetto and chrome-json formats, on simulated sessions of 1 M and
# 20 M events (4 hosts x 2 CPUs, clocks apart and probes: --sync; then
# `trawl sync`). chrome-json at 20 M is written with --max-events 0 (past
# its default limit) only to compare its size: chrome://tracing does not
# load such a file. Each export runs once (a shared machine: figures vary
# from run to run); the first pass (finding the messages) is included.
#
#   TRAWL_BUILD=build sh bench/export.sh
#   env: SIZES="1000000 20000000" HOSTS=4 CPUS=2 SEED=1 WORK=... KEEP=0
set -u
TRAWL_BUILD=${TRAWL_BUILD:-build}
TRAWL=${TRAWL:-$TRAWL_BUILD/trawl}
SIZES=${SIZES:-"1000000 20000000"}
HOSTS=${HOSTS:-4}
CPUS=${CPUS:-2}
SEED=${SEED:-1}
WORK=${WORK:-$TRAWL_BUILD/bench/export-work}

die() { echo "bench/export: $*" >&2; exit 1; }
[ -x "$TRAWL" ] || die "$TRAWL is not built"
[ -x /usr/bin/time ] || die "/usr/bin/time is not installed (package time)"
mkdir -p "$WORK" || die "cannot create $WORK"
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$WORK"' EXIT

now_ns() { date +%s%N; }

# run LABEL EVENTS OUT CMD...: one timed export; prints its row
run() {
	label=$1 n=$2 out=$3; shift 3
	t0=$(now_ns)
	/usr/bin/time -o "$WORK/time.out" -f '%M %U %S' "$@" > /dev/null 2> "$WORK/err" ||
		die "$label failed: $(tail -2 "$WORK/err")"
	t1=$(now_ns)
	bytes=$(wc -c < "$out")
	recs=$(sed -n 's/.*: \([0-9]*\) records from.*/\1/p' "$WORK/err")
	set -- $(tail -1 "$WORK/time.out")
	awk -v l="$label" -v n="$n" -v a="$t0" -v b="$t1" -v by="$bytes" -v r="$recs" \
		-v m="$1" -v u="$2" -v s="$3" 'BEGIN {
		w = (b - a) / 1e9
		printf "| %s | %d | %.2f s | %.2f M events/s | %.1f MB | %.2f | %d | %.0f MB |\n",
			l, n, w, n / w / 1e6, by / 1e6, by / n, r, m / 1024 }'
	rm -f "$out"
}

. "$(dirname "$0")/machine.sh"
echo "trawl export, $(date -u '+%Y-%m-%d %H:%M UTC')"
bench_machine
echo
echo "| format | events | wall | rate | file | bytes/event | records | peak RSS |"
echo "|---|---|---|---|---|---|---|---|"
for n in $SIZES; do
	s=$WORK/s$n
	rm -rf "$s"
	"$TRAWL" simulate -o "$s" --hosts "$HOSTS" --cpus "$CPUS" --events "$n" --seed "$SEED" \
		--sync -q > /dev/null 2>&1 || die "trawl simulate failed"
	"$TRAWL" sync "$s" > /dev/null 2>&1 || die "trawl sync failed"
	run perfetto "$n" "$WORK/t.pftrace" "$TRAWL" export "$s" -o "$WORK/t.pftrace"
	run chrome-json "$n" "$WORK/t.json" "$TRAWL" export -f chrome-json --max-events 0 "$s" \
		-o "$WORK/t.json"
	rm -rf "$s"
done
