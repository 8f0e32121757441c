#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs each libFuzzer target (built by `make fuzz`) for SECONDS on a copy of
# its seed corpus, one target at a time, one process each; prints one line
# per target and fails when any target crashed, leaked, timed out or ran out
# of memory (its input is kept as RUNDIR/NAME/crash-..., its log beside it).
# The seed corpora in tests/fuzz/corpus are never written.
# Usage: fuzz-run.sh FUZZDIR CORPUSDIR RUNDIR SECONDS [NAME...]
set -u
fuzzdir=$1 corpus=$2 rundir=$3 seconds=$4
shift 4
case $seconds in
''|*[!0-9]*|0) echo "fuzz-run: FUZZ_SECONDS=$seconds: not a positive number of seconds" >&2; exit 2 ;;
esac
if [ $# -eq 0 ]; then
	for b in "$fuzzdir"/fuzz-*; do
		[ -x "$b" ] && set -- "$@" "${b##*/fuzz-}"
	done
fi
[ $# -gt 0 ] || { echo "fuzz-run: no fuzz targets in $fuzzdir (make fuzz builds them)" >&2; exit 1; }
failed=0 ran=0
for name in "$@"; do
	bin=$fuzzdir/fuzz-$name dir=$rundir/$name
	if [ ! -x "$bin" ]; then
		echo "FAIL $name: no binary $bin"; failed=$((failed + 1)); continue
	fi
	rm -rf "$dir" && mkdir -p "$dir/corpus" || exit 1
	[ -d "$corpus/$name" ] && cp -R "$corpus/$name/." "$dir/corpus/"
	# -timeout: one input taking 25 s is a hang; -rss_limit_mb: a blow-up.
	"$bin" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$dir/" "$dir/corpus" \
		>"$dir/log" 2>&1
	rc=$?
	ran=$((ran + 1))
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" | tail -n 1)
	cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' "$dir/log" | tail -n 1)
	if [ $rc -eq 0 ]; then
		echo "ok   $name: ${runs:-?} runs in ${seconds} s, coverage ${cov:-?}, corpus $(ls "$dir/corpus" | wc -l)"
	else
		art=$(ls "$dir" | grep -E '^(crash|leak|timeout|oom|slow-unit)-' | head -n 1)
		why=$(grep -m 1 -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error)' "$dir/log")
		echo "FAIL $name: exit $rc${art:+, input $dir/$art}${why:+: $why} (log $dir/log)"
		failed=$((failed + 1))
	fi
done
echo "fuzz-run: $ran target(s) run, $failed failed"
[ $failed -eq 0 ]
