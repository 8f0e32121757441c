# tests/e2e/oracle.sh - sourced by the format-oracle tests after lib.sh:
# babeltrace2 and `trawl print` on the same trace, compared line by line.
# Needs NORM (normalize.sh) and NORM_PY (normalize.py) set by the caller.
# oracle NAME DIR [OPTION...]: babeltrace2 and trawl print with the same
# clock options; checks both exit 0, prints the same number of lines, and
# the same normalized text. Leaves NAME.bt and NAME.trawl.
oracle() {
	name=$1 dir=$2; shift 2
	babeltrace2 "$@" "$dir" > "$name.bt.raw" 2> "$name.bt.err"
	brc=$?
	"$TRAWL" print "$@" "$dir" > "$name.trawl.raw" 2> "$name.trawl.err"
	trc=$?
	[ "$brc" -eq 0 ] && [ "$trc" -eq 0 ]
	ok $? "$name: babeltrace2 (exit $brc) and trawl print (exit $trc) both succeed"
	[ "$trc" -eq 0 ] || sed 's/^/#   trawl: /' "$name.trawl.err" | head -5
	sh "$NORM" < "$name.bt.raw" > "$name.bt"
	sh "$NORM" < "$name.trawl.raw" > "$name.trawl"
	is "$(wc -l < "$name.trawl")" "$(wc -l < "$name.bt")" "$name: same number of lines"
	# babeltrace2 2.0.x prints a stale value for empty strings: see normalize.py
	python3 "$NORM_PY" --bt2-empty-strings "$name.trawl" "$name.bt" > "$name.bt.fixed" 2> "$name.fixes" &&
		echo "# $name: $(cat "$name.fixes") lines with babeltrace2's empty-string bug adjusted"
	cmp_files "$name.trawl" "$name.bt.fixed" "$name: trawl print == babeltrace2, line by line"
}
