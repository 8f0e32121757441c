#!/bin/sh
# bench/run.sh - trawl against its anchor, babeltrace2, on one machine in one
# run (run by `make bench`, which sets TRAWL_BUILD and TRAWL_SRC).
#
#   1. writer: `trawl simulate` writes a session of EVENTS events (default
#      20 M) over HOSTS hosts (4) x CPUS CPUs (2) with kernel and ust traces;
#      events/s and bytes/event on disk.
#   2. interleaved, RUNS times (5) each, on that session:
#        decode  trawl info S           vs  babeltrace2 -o dummy S
#        text    trawl print S >/dev/null  vs  babeltrace2 S >/dev/null
#      events/s (median, min-max), the ratios trawl/babeltrace2 against the
#      targets (decode >= 50x, text >= 10x), and each one's peak RSS.
#   3. trawl info's peak RSS on a session half the size: it must not grow
#      with the length of the trace.
#   4. trawl info on the session dropped from the page cache (from disk).
# Each timed run of 2 and 3 starts with the session read into the page
# cache (see warm()), as the anchors measured babeltrace2.
# Figures go to stdout and to $TRAWL_BUILD/bench/results-<UTC time>.md.
# Environment: EVENTS, RUNS, HOSTS, CPUS, SEED, BENCH_WORK (where the
# sessions are written; default $TRAWL_BUILD/bench/work, removed at the end
# unless KEEP=1).
set -u
: "${TRAWL_BUILD:?run through make bench}" "${TRAWL_SRC:?}"
TRAWL=${TRAWL:-$TRAWL_BUILD/trawl}
EVENTS=${EVENTS:-20000000}
RUNS=${RUNS:-5}
HOSTS=${HOSTS:-4}
CPUS=${CPUS:-2}
SEED=${SEED:-1}
WORK=${BENCH_WORK:-$TRAWL_BUILD/bench/work}
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT=$TRAWL_BUILD/bench/results-$STAMP.md
RAW=$WORK/raw.txt

die() { echo "bench: $*" >&2; exit 1; }
[ -x "$TRAWL" ] || die "$TRAWL is not built"
command -v babeltrace2 >/dev/null 2>&1 || die "babeltrace2 is not installed (make deps)"
[ -x /usr/bin/time ] || die "/usr/bin/time is not installed (make deps: package time)"
mkdir -p "$WORK" "$TRAWL_BUILD/bench" || die "cannot create $WORK"
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$WORK/full" "$WORK/half" "$WORK/wbench"' EXIT
: > "$RAW"

now_ns() { date +%s%N; }

# tm LABEL CMD...: runs CMD (stdout to /dev/null), appends
# "LABEL wall_s maxrss_kib exit cpu_s" to $RAW (cpu: user + system).
tm() {
	label=$1; shift
	t0=$(now_ns)
	/usr/bin/time -o "$WORK/time.out" -f '%M %U %S' "$@" > /dev/null 2> "$WORK/$label.err"
	rc=$?
	t1=$(now_ns)
	set -- $(tail -1 "$WORK/time.out")	# maxrss user system
	awk -v l="$label" -v a="$t0" -v b="$t1" -v m="${1:-0}" -v rc="$rc" -v u="${2:-0}" -v s="${3:-0}" \
		'BEGIN { printf "%s %.4f %s %s %.2f\n", l, (b - a) / 1e9, m, rc, u + s }' >> "$RAW"
	[ "$rc" -eq 0 ] || echo "bench: warning: $label exited $rc: $(head -2 "$WORK/$label.err")" >&2
}

# simulate DIR N: writes a session, prints "events bytes seconds maxrss".
simulate() {
	rm -rf "$1"
	t0=$(now_ns)
	/usr/bin/time -o "$WORK/time.out" -f '%M' "$TRAWL" simulate -o "$1" --hosts "$HOSTS" \
		--cpus "$CPUS" --events "$2" --seed "$SEED" > "$WORK/simulate.out" 2>&1 ||
		die "trawl simulate failed: $(tail -3 "$WORK/simulate.out")"
	t1=$(now_ns)
	n=$(sed -n 's/.*[^0-9]\([0-9][0-9]*\) events.*/\1/p; s/^\([0-9][0-9]*\) events.*/\1/p' \
		"$WORK/simulate.out" | head -1)
	bytes=$(find "$1" -type f ! -path '*/index/*' ! -name metadata -exec cat {} + | wc -c)
	echo "${n:-$2} $bytes $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", (b - a) / 1e9 }') $(tail -1 "$WORK/time.out")"
}

# cpuinfo FIELD: the first value of FIELD in /proc/cpuinfo ("?" if none).
cpuinfo() {
	awk -F': *' -v f="$1" '$1 ~ "^" f "[ \t]*$" { print $2; found = 1; exit } END { if (!found) print "?" }' /proc/cpuinfo
}
# cpuprobe: bench-cpu's effective clock and neighbour ratio, "GHZ RATIO".
cpuprobe() {
	if [ -x "$TRAWL_BUILD/bench/bench-cpu" ]; then
		"$TRAWL_BUILD/bench/bench-cpu" 2>/dev/null | awk '{ v[$1] = $2 } END { print (v["clock"] ? v["clock"] : "n/a"), (v["neighbour"] ? v["neighbour"] : "n/a") }'
	else
		echo "n/a n/a"
	fi
}
CPU_FAMILY=$(cpuinfo 'cpu family')
CPU_MODEL=$(cpuinfo model)
CPU_NAME=$(cpuinfo 'model name')
CPU_MHZ=$(cpuinfo 'cpu MHz')
CLOCKSOURCE=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo '?')
SMT=$(awk -F, '{ n = 0; for (i = 1; i <= NF; i++) { split($i, r, "-"); n += (r[2] != "" ? r[2] - r[1] + 1 : 1) } print n }' \
	/sys/devices/system/cpu/cpu0/topology/thread_siblings_list 2>/dev/null || echo '?')
set -- $(cpuprobe)
GHZ_BEFORE=$1 NEIGHBOUR=$2

echo "bench: writing $EVENTS events over $HOSTS hosts x $CPUS CPUs ..." >&2
set -- $(simulate "$WORK/full" "$EVENTS")
N=${1:-} BYTES=${2:-} SIM_S=${3:-} SIM_RSS=${4:-}
[ -n "$SIM_RSS" ] || exit 1
echo "bench: writing a session half the size ..." >&2
set -- $(simulate "$WORK/half" $((EVENTS / 2)))
HALF_N=${1:-}
[ -n "$HALF_N" ] || exit 1

# The writer API alone (no event generation): bench-writer, into $WORK.
WRITER_API=""
if [ -x "$TRAWL_BUILD/bench/bench-writer" ]; then
	mkdir -p "$WORK/wbench"
	WRITER_API=$("$TRAWL_BUILD/bench/bench-writer" "$WORK/wbench" 20000000 2>&1 | grep '^writer')
	rm -rf "$WORK/wbench"
fi

# Clock synchronization (no anchor tool on Debian): bench-sync's figures.
SYNC_OUT=""
if [ -x "$TRAWL_BUILD/bench/bench-sync" ]; then
	echo "bench: clock synchronization (bench-sync) ..." >&2
	SYNC_OUT=$("$TRAWL_BUILD/bench/bench-sync" 2>&1)
fi

# Sanity, outside the timings: both tools see every event.
got=$("$TRAWL" print "$WORK/full" 2>/dev/null | wc -l)
[ "$got" = "$N" ] || echo "bench: warning: trawl print printed $got lines, simulate wrote $N events" >&2

# Flush what the setup wrote (the sessions, bench-writer's files) to disk
# first: otherwise the kernel's writeback competes for the CPUs during the
# first timed runs.
sync

# cold DIR: drops the session's files from the page cache (their pages
# only), for the figure read from disk.
cold() {
	find "$1" -type f -exec sh -c 'for f; do dd if="$f" iflag=nocache count=0 status=none; done' sh {} +
}

# warm DIR: reads the session's files into the page cache and appends
# "cache DIR percent" (of its pages resident afterwards) to $RAW. Each timed
# run is preceded by one: on a machine that reclaims idle page cache within
# seconds, the session would otherwise be partly on disk for whichever tool
# runs after a long run of the other, and the figures would mix decoding
# with disk reads. Reading from the page cache is how the anchors measured
# babeltrace2 (CPU-bound decoding, not disk speed). The pages still cached
# stay as they are: the kernel caches a file in larger or smaller blocks
# depending on how it came in (written, read(), faulted in through a
# mapping; and larger for larger files), and a mapped reader's resident
# size counts whole blocks (trawl info: 32 MB on a session just written,
# 43 MB after reading it from disk itself, 48 MB after cat, for the same
# reads), so the runs that compare the full and the half session's peak
# RSS must find both as written. The from-disk runs come after them.
warm() {
	find "$1" -type f -exec cat {} + > /dev/null
	if command -v fincore > /dev/null 2>&1; then
		find "$1" -type f -exec fincore -b -n -o RES,SIZE {} + |
			awk -v d="$1" '{ r += $1 < $2 ? $1 : $2; s += $2 } END { printf "cache %s %.1f\n", d, s ? 100 * r / s : 100 }' >> "$RAW"
	fi
}

for r in $(seq "$RUNS"); do
	echo "bench: run $r/$RUNS ..." >&2
	warm "$WORK/full"; tm trawl-info "$TRAWL" info "$WORK/full"
	warm "$WORK/full"; tm bt2-dummy babeltrace2 -o dummy "$WORK/full"
	warm "$WORK/full"; tm trawl-print "$TRAWL" print "$WORK/full"
	warm "$WORK/full"; tm bt2-text babeltrace2 "$WORK/full"
	warm "$WORK/half"; tm trawl-info-half "$TRAWL" info "$WORK/half"
done
for r in $(seq "$RUNS"); do
	cold "$WORK/full"; tm trawl-info-cold "$TRAWL" info "$WORK/full"
done

set -- $(cpuprobe)
GHZ_AFTER=$1

# stats LABEL: "median_eps min_eps max_eps median_wall median_rss" over runs.
stats() {
	awk -v l="$1" -v n="$2" '$1 == l { k++; w[k] = $2; r[k] = $3 }
	function med(a, m,   i, j, x) {
		for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { x = a[i]; a[i] = a[j]; a[j] = x }
		return (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
	}
	END {
		if (!k) { print "0 0 0 0 0"; exit }
		mw = med(w, k); mr = med(r, k)
		lo = w[1]; hi = w[k]		# sorted by med()
		printf "%.0f %.0f %.0f %.3f %d\n", n / mw, n / hi, n / lo, mw, mr
	}' "$RAW"
}
set -- $(stats trawl-info "$N");	TI_E=$1 TI_LO=$2 TI_HI=$3 TI_W=$4 TI_RSS=$5
set -- $(stats bt2-dummy "$N");		BD_E=$1 BD_LO=$2 BD_HI=$3 BD_W=$4 BD_RSS=$5
set -- $(stats trawl-print "$N");	TP_E=$1 TP_LO=$2 TP_HI=$3 TP_W=$4 TP_RSS=$5
set -- $(stats bt2-text "$N");		BT_E=$1 BT_LO=$2 BT_HI=$3 BT_W=$4 BT_RSS=$5
set -- $(stats trawl-info-half "$HALF_N"); HI_RSS=$5
set -- $(stats trawl-info-cold "$N");	TC_E=$1 TC_LO=$2 TC_HI=$3 TC_W=$4
# the least of the session's pages found resident after a warm-up
CACHE_MIN=$(awk '$1 == "cache" { if (m == "" || $3 + 0 < m) m = $3 + 0 } END { print (m == "") ? "n/a" : m "%" }' "$RAW")

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f", a / b; else print "n/a" }'; }
verdict() { awk -v r="$1" -v t="$2" 'BEGIN { print (r + 0 >= t) ? "met" : "NOT met" }'; }
meps() { awk -v e="$1" 'BEGIN { printf "%.2f", e / 1e6 }'; }
# ratios A B: each run's B wall time / A's (paired: a slow period of the
# machine hits both sides), one per line, in run order.
ratios() {
	awk -v a="$1" -v b="$2" '$1 == a { x[++na] = $2 } $1 == b { y[++nb] = $2 }
	END { m = na < nb ? na : nb; for (i = 1; i <= m; i++) print ((x[i] > 0) ? y[i] / x[i] : 0) }' "$RAW"
}
# pratio A B: the median of ratios A B.
pratio() {
	ratios "$1" "$2" | sort -g | awk '{ r[NR] = $1 }
	END {
		if (!NR) { print "n/a"; exit }
		printf "%.1f", (NR % 2) ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2
	}'
}
# perrun A B TARGET: ratios A B on one line, then how many reach TARGET.
perrun() {
	ratios "$1" "$2" | awk -v t="$3" '{ printf "%s%.1f", (NR > 1 ? " " : ""), $1; k += $1 >= t }
		END { if (NR) printf " (%d of %d at or above %sx)", k, NR, t }'
}
R_DEC=$(pratio trawl-info bt2-dummy)
R_TXT=$(pratio trawl-print bt2-text)
# cpus LABEL: each run's CPU time / wall time, in run order.
cpus() {
	awk -v l="$1" '$1 == l && $2 > 0 { printf "%s%.2f", k++ ? " " : "", $5 / $2 }' "$RAW"
}

{
	echo "# trawl benchmark, $STAMP"
	echo
	echo "machine: $CPU_NAME x $(nproc)," \
		"$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo);" \
		"$($TRAWL --version 2>/dev/null | head -1); $(babeltrace2 --version | head -1)"
	echo "cpu: family $CPU_FAMILY model $CPU_MODEL ($CPU_NAME), nominal $CPU_MHZ MHz," \
		"clocksource $CLOCKSOURCE, $SMT thread(s) per core as shown;" \
		"effective clock $GHZ_BEFORE GHz before the runs, $GHZ_AFTER GHz after;" \
		"a busy neighbour CPU leaves $NEIGHBOUR of cpu 0's throughput (bench-cpu: about 0.5 when they share a core)"
	echo "session: $N events, $HOSTS hosts x $CPUS CPUs (kernel + ust traces), seed $SEED;" \
		"$RUNS runs each, interleaved; each run starts from the page cache"
	echo
	echo "## writer (trawl simulate)"
	echo
	echo "| events | seconds | events/s | stream bytes | bytes/event | peak RSS KiB |"
	echo "|---|---|---|---|---|---|"
	awk -v n="$N" -v s="$SIM_S" -v b="$BYTES" -v r="$SIM_RSS" \
		'BEGIN { printf "| %d | %.2f | %.2f M | %d | %.2f | %d |\n", n, s, n / s / 1e6, b, b / n, r }'
	if [ -n "$WRITER_API" ]; then
		echo
		echo "The writer API alone (bench-writer, 20 M events each; no anchor: LTTng's consumer copies whole sub-buffers):"
		echo
		printf '%s\n' "$WRITER_API" | sed 's/^/    /'
	fi
	echo
	echo "## reading: trawl vs babeltrace2 (M events/s, median and min-max)"
	echo
	echo "| what | trawl | babeltrace2 | ratio (paired) | target | |"
	echo "|---|---|---|---|---|---|"
	echo "| decode + merge (trawl info / bt2 -o dummy) | $(meps "$TI_E") ($(meps "$TI_LO")-$(meps "$TI_HI")) |" \
		"$(meps "$BD_E") ($(meps "$BD_LO")-$(meps "$BD_HI")) | ${R_DEC}x | >= 50x | $(verdict "$R_DEC" 50) |"
	echo "| text (trawl print / bt2, > /dev/null) | $(meps "$TP_E") ($(meps "$TP_LO")-$(meps "$TP_HI")) |" \
		"$(meps "$BT_E") ($(meps "$BT_LO")-$(meps "$BT_HI")) | ${R_TXT}x | >= 10x | $(verdict "$R_TXT" 10) |"
	echo
	if [ "$CACHE_MIN" = 100% ]; then
		resident="all of its pages were resident at each start"
	else
		resident="at least $CACHE_MIN of its pages were resident at each start"
	fi
	echo "Each timed run above starts with the session in the page cache (read just before;" \
		"$resident). From disk instead (the session's pages" \
		"dropped first), trawl info decodes $(meps "$TC_E") M events/s ($(meps "$TC_LO")-$(meps "$TC_HI")," \
		"median $TC_W s): the disk, not decoding, sets that figure."
	echo
	echo "## peak RSS (KiB, median)"
	echo
	echo "| what | trawl | babeltrace2 |"
	echo "|---|---|---|"
	echo "| decode, $N events | $TI_RSS | $BD_RSS |"
	echo "| text, $N events | $TP_RSS | $BT_RSS |"
	echo "| trawl info, $HALF_N events (half) | $HI_RSS | |"
	echo
	echo "ratio (paired): the median over the runs of trawl's speed / babeltrace2's speed in the same run."
	echo "per run, in order: decode $(perrun trawl-info bt2-dummy 50); text $(perrun trawl-print bt2-text 10)"
	echo "CPUs busy (CPU time / wall time) per run: trawl info $(cpus trawl-info); trawl print $(cpus trawl-print);" \
		"bt2 dummy $(cpus bt2-dummy)"
	echo "wall seconds (median): trawl info $TI_W, bt2 dummy $BD_W, trawl print $TP_W, bt2 text $BT_W"
	if [ -n "$SYNC_OUT" ]; then
		echo
		echo "## clock synchronization (bench-sync; research notes: trace-cmd ptp ~2 us)"
		echo
		printf '%s\n' "$SYNC_OUT" | sed 's/^/    /'
	fi
} | tee "$OUT"
echo "bench: results in $OUT" >&2
