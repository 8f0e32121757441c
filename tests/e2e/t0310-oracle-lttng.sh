#!/bin/sh
# Format oracle, real LTTng traces: tests/lttng/record.sh records traces with
# LTTng 2.13 (lttng-ust) from a program whose events use every field type
# LTTng-UST offers, with the vpid/vtid/procname contexts: a lossless one, a
# lossy one (discarded events) and a flight-recorder snapshot. For each,
# babeltrace2 and `trawl print` must print the same lines (normalize.sh
# sorts only within runs of identical timestamps), and `trawl info` must
# count, per event name, what babeltrace2 printed. The lossless trace must
# hold exactly the events the program says it emitted, and trawl must print
# exactly the empty strings the program emitted (babeltrace2 2.0 prints a
# stale value for those, which normalize.py tolerates).
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v babeltrace2 >/dev/null 2>&1 || skip_all "babeltrace2 is not installed (the oracle)"
NORM="$TRAWL_SRC/tests/e2e/normalize.sh"
NORM_PY="$TRAWL_SRC/tests/e2e/normalize.py"
command -v python3 >/dev/null 2>&1 || skip_all "python3 is needed (normalize.py)"

FIXTURE_BUILD="$TRASH/build" sh "$TRAWL_SRC/tests/lttng/record.sh" rec "${TICKS:-20000}" \
	> record.log 2>&1
rc=$?
if [ "$rc" -eq 77 ]; then
	skip_all "$(grep 'cannot record here' record.log | tail -1 | sed 's/^record.sh: //')"
fi
if [ "$rc" -ne 0 ]; then
	plan 1
	ok 1 "tests/lttng/record.sh records the LTTng fixtures (exit $rc)"
	sed 's/^/#   /' record.log | tail -15
	finish
fi

. "$TRAWL_SRC/tests/e2e/oracle.sh"

# "NAME COUNT" per event name, sorted by name, from babeltrace2's text.
bt_counts() {
	awk '{ for (i = 1; i <= NF; i++) if ($i ~ /:$/ && $(i - 1) !~ /^\(/) { sub(/:$/, "", $i); n[$i]++; break } }
	     END { for (k in n) print k, n[k] }' "$1" | LC_ALL=C sort
}

# "NAME COUNT" per event name, sorted by name, from `trawl info`'s
# per-trace "event classes" tables ("COUNT NAME" lines), summed over traces.
info_counts() {
	"$TRAWL" info "$1" 2>/dev/null |
		awk '/^ *event classes/ { on = 1; next }
		     on && NF == 2 && $1 ~ /^[0-9]+$/ { n[$2] += $1; next }
		     { on = 0 }
		     END { for (k in n) print k, n[k] }' | LC_ALL=C sort
}

plan 18
for t in normal lossy snapshot; do
	oracle "$t" "rec/$t" --clock-seconds
	bt_counts "$t.bt" > "$t.bt.counts"
	info_counts "rec/$t" > "$t.info.counts"
	cmp_files "$t.info.counts" "$t.bt.counts" "$t: trawl info counts per event name == babeltrace2's"
done
grep -v '^empty ' rec/normal.counts | LC_ALL=C sort > normal.want
cmp_files normal.bt.counts normal.want "normal: the lossless trace holds every event the program emitted"
# Ground truth for empty strings, which babeltrace2 2.0 misprints: as many
# as the program emitted, per field.
{
	echo "empty strings.s $(grep -c 'trawl_fixture:strings: .* { s = "", t = ' normal.trawl.raw)"
	echo "empty strings.t $(grep -c 'trawl_fixture:strings: .*, t = "" }$' normal.trawl.raw)"
	echo "empty arrays.seq_text $(grep -c 'trawl_fixture:arrays: .* seq_text = "", ' normal.trawl.raw)"
} > normal.empty
grep '^empty ' rec/normal.counts > normal.empty.want
cmp_files normal.empty normal.empty.want "normal: trawl prints exactly the empty strings the program emitted"
grep -q 'discarded' lossy.bt.err
ok $? "lossy: babeltrace2 reports discarded events (the shape is really covered)"
TZ=UTC0 oracle normal-utc rec/normal
finish
