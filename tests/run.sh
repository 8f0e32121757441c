#!/bin/sh
# Runs every unit test program (build/tests/test-*) and end-to-end script
# (tests/e2e/tNNNN-*.sh), all of which speak TAP, and prints one summary line:
#   tests: N passed, N failed, N skipped
# A whole file that skips prints "1..0 # SKIP why"; that reason is shown.
# Exit status: 0 when nothing failed.  T=pattern runs the matching files only.
set -u
: "${TRAWL_BUILD:?}" "${TRAWL_SRC:?}"
export TRAWL_BUILD TRAWL_SRC
export TRAWL="$TRAWL_BUILD/trawl"
pass=0 fail=0 skip=0 files_failed=""
logdir="$TRAWL_BUILD/test-logs"
mkdir -p "$logdir"

run_one() {
	name=$1; shift
	case "$name" in *${T:-}*) ;; *) return ;; esac
	log="$logdir/$name.log"
	start=$(date +%s)
	"$@" > "$log" 2>&1
	rc=$?
	p=$(grep -c '^ok ' "$log")
	s=$(grep -c '^ok .*# *SKIP' "$log")
	f=$(grep -c '^not ok ' "$log")
	p=$((p - s))
	plan=$(grep -m1 -E '^1\.\.[0-9]+' "$log" | sed 's/^1\.\.\([0-9]*\).*/\1/')
	total=$((p + s + f))
	note=""
	if grep -q '^1\.\.0 *# *SKIP' "$log"; then
		s=$((s + 1))
		note="skipped: $(sed -n 's/^1\.\.0 *# *SKIP *//p' "$log" | head -1)"
	elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=$((f + 1)); note="exited $rc"
	elif [ -z "$plan" ] || [ "$plan" -ne "$total" ]; then
		f=$((f + 1)); note="plan ${plan:-missing}, ran $total"
	fi
	pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
	secs=$(( $(date +%s) - start ))
	if [ "$f" -gt 0 ]; then
		files_failed="$files_failed $name"
		printf '%-40s FAIL (%d passed, %d failed) %s [%ss]\n' "$name" "$p" "$f" "$note" "$secs"
		grep -B2 -A8 '^not ok' "$log" | head -60 | sed 's/^/    /'
		[ -n "$note" ] && tail -15 "$log" | sed 's/^/    | /'
	else
		printf '%-40s ok (%d passed, %d skipped) %s [%ss]\n' "$name" "$p" "$s" "$note" "$secs"
	fi
}

for t in "$TRAWL_BUILD"/tests/test-*; do
	[ -x "$t" ] || continue
	run_one "$(basename "$t")" "$t"
done
# the reader's plain decoding too, where the CPU has the vector one
if [ -x "$TRAWL_BUILD/tests/test-reader" ]; then
	run_one test-reader-nosimd env TRAWL_NO_SIMD=1 "$TRAWL_BUILD/tests/test-reader"
fi
for t in "$TRAWL_SRC"/tests/e2e/t[0-9]*.sh; do
	[ -f "$t" ] || continue
	run_one "$(basename "$t" .sh)" sh "$t"
done

echo
[ -n "$files_failed" ] && echo "failed:$files_failed (logs in $logdir)"
echo "tests: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
