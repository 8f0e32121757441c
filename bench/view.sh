#!/bin/sh
# bench/view.sh - trawl view on a simulated session of EVENTS events (20 M)
# and one of SMALL (1 M), 4 hosts x 2 CPUs with clocks seconds apart
# (--sync, then trawl sync): the time to write the page, its bytes per
# event, the time to its first paint in Debian's chromium (headless, through
# playwright-core), the frame times of a scripted zoom from the whole trace
# to 1 us and of pans (median and worst; every host expanded); beside the
# anchor: the chrome://tracing JSON of the same session (bench/chrome-json.py),
# its size and whether chromium reads and parses it, and Perfetto's
# protobuf when `trawl export` is there. Targets: first paint <= 2 s at 1 M
# events, worst frame <= 50 ms, <= 8 bytes per event.
# Run it alone: BENCH=view make bench-run (or with TRAWL_BUILD and TRAWL_SRC
# set: sh bench/view.sh). Figures to stdout and
# $TRAWL_BUILD/bench/view-<UTC time>.md.
set -u
: "${TRAWL_BUILD:?run through make bench}" "${TRAWL_SRC:?}"
. "$TRAWL_SRC/bench/machine.sh"
TRAWL=${TRAWL:-$TRAWL_BUILD/trawl}
EVENTS=${EVENTS:-20000000}
SMALL=${SMALL:-1000000}
WORK=${BENCH_WORK:-$TRAWL_BUILD/bench/view-work}
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT=$TRAWL_BUILD/bench/view-$STAMP.md
B="$TRAWL_BUILD/browser"

die() { echo "bench/view: $*" >&2; exit 1; }
[ -x "$TRAWL" ] || die "$TRAWL is not built"
[ -x /usr/bin/chromium ] || die "chromium is not installed (make deps)"
command -v node > /dev/null 2>&1 || die "node is not installed (make deps)"
mkdir -p "$WORK" "$B" "$TRAWL_BUILD/bench" || die "cannot create $WORK"
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$WORK"' EXIT
sh "$TRAWL_SRC/tests/browser/install.sh" "$TRAWL_SRC" "$TRAWL_BUILD" || die "playwright-core is not installed"

{
echo "# trawl view, $(date -u '+%Y-%m-%d %H:%M UTC'), $(/usr/bin/chromium --version 2>/dev/null | head -1)"
echo "$(bench_machine)"
echo
echo "| events | write the page | page | bytes/event | first paint | zoom frames: median / worst | pan frames: median / worst | worst step with its tiles | chrome://tracing JSON | chromium parses it | perfetto |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
} > "$OUT"

for n in "$SMALL" "$EVENTS"; do
	S="$WORK/s$n"
	rm -rf "$S"
	"$TRAWL" simulate -o "$S" --hosts 4 --cpus 2 --events "$n" --sync --seed 1 -q > /dev/null ||
		die "trawl simulate failed"
	"$TRAWL" sync "$S" > /dev/null 2>&1 || die "trawl sync failed"
	t0=$(date +%s%N)
	/usr/bin/time -o "$WORK/time" -f '%M' "$TRAWL" view "$S" -o "$WORK/page.html" > "$WORK/view.out" 2>&1 ||
		die "trawl view failed: $(tail -2 "$WORK/view.out")"
	t1=$(date +%s%N)
	rss=$(tail -1 "$WORK/time")
	size=$(wc -c < "$WORK/page.html")
	# the anchor: chrome://tracing's JSON (written for the small session,
	# counted for the large one: gigabytes)
	if [ "$n" = "$SMALL" ]; then
		"$TRAWL" print -f json "$S" 2> /dev/null | python3 "$TRAWL_SRC/bench/chrome-json.py" > "$WORK/chrome.json"
		jsize=$(wc -c < "$WORK/chrome.json")
		cj="$WORK/chrome.json"
	else
		jsize=$("$TRAWL" print -f json "$S" 2> /dev/null | python3 "$TRAWL_SRC/bench/chrome-json.py" | wc -c)
		cj=""
	fi
	pf="not in this tree"
	if "$TRAWL" export --help > /dev/null 2>&1 &&
	   "$TRAWL" export --format perfetto "$S" -o "$WORK/t.pftrace" > /dev/null 2>&1; then
		pf="$(wc -c < "$WORK/t.pftrace") B ($(awk -v a="$(wc -c < "$WORK/t.pftrace")" -v n="$n" 'BEGIN { printf "%.1f", a / n }') B/event)"
	fi
	timeout 900 node "$B/view-bench.mjs" "file://$WORK/page.html" $cj > "$WORK/browser.json" 2> "$WORK/browser.err" ||
		die "chromium: $(tail -3 "$WORK/browser.err")"
	python3 - "$n" "$t0" "$t1" "$rss" "$size" "$jsize" "$WORK/browser.json" "$pf" >> "$OUT" <<'PY'
import json, sys
n, t0, t1, rss, size, jsize = (int(x) for x in sys.argv[1:7])
b = json.load(open(sys.argv[7]))
pf = sys.argv[8]
cj = b.get('chrome_json')
if cj is None:
    parses = 'no: %.2f GB is above V8\'s longest string (2^29 - 24 characters)' % (jsize / 1e9) if jsize >= 2**29 - 24 else 'not tried'
elif cj['loaded']:
    parses = 'yes, %d events in %.2f s' % (cj['events'], cj['ms'] / 1000)
else:
    parses = 'no: ' + cj['why']
z, p = b['zoom'], b['pan']
print('| %.1f M | %.2f s (%d MB peak) | %.1f MB | %.2f | %.2f s | %.1f / %.1f ms (%d frames) | %.1f / %.1f ms (%d frames) | %.0f ms | %.1f MB (%.1f B/event) | %s | %s |' % (
    n / 1e6, (t1 - t0) / 1e9, rss // 1024, size / 1e6, size / n, b['first_paint_ms'] / 1000,
    z['median_ms'], z['worst_ms'], z['frames'], p['median_ms'], p['worst_ms'], p['frames'],
    max(z['steps']['worst_step_with_tiles_ms'], p['steps']['worst_step_with_tiles_ms']),
    jsize / 1e6, jsize / n, parses, pf))
if b['errors']:
    print('\npage errors: %s\n' % b['errors'])
PY
	rm -rf "$S" "$WORK/page.html" "$WORK/chrome.json" "$WORK/t.pftrace"
done
{
echo
echo "Targets: first paint <= 2 s at 1 M events; worst frame <= 50 ms; <= 8 bytes per event."
echo "Frame: one draw of the canvas (the page's own timing); a step's tiles are decoded"
echo "between frames (worst step with its tiles: a zoom or pan step until every visible tile is drawn)."
} >> "$OUT"
cat "$OUT"
