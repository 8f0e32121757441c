#!/bin/sh
# Runs every unit test program (build/tests/test-*) and end-to-end script
# (tests/e2e/tNNNN-*.sh), all of which speak TAP, and prints one summary line:
#   tests: N passed, N failed, N skipped
# A whole file that skips prints "1..0 # SKIP why"; that reason is shown.
# Exit status: 0 when nothing failed.
#   T=pattern   runs the matching files only
#   J=N         runs N files at a time (default: the number of CPUs, at
#               least 2); J=1 runs them one after the other
#   TRAWL_TEST_LOGS=DIR  where the logs go (default BUILD/test-logs)
# Files run longest first (the durations of the last run, in the log
# directory), so that the last to start is a short one. Each file's line is
# printed when it ends.
set -u
: "${TRAWL_BUILD:?}" "${TRAWL_SRC:?}"
export TRAWL_BUILD TRAWL_SRC
export TRAWL="$TRAWL_BUILD/trawl"
logdir="${TRAWL_TEST_LOGS:-$TRAWL_BUILD/test-logs}"
export TRAWL_TEST_LOGS="$logdir"

# ---- one file: run it, write NAME.result ("passed skipped failed secs"),
# print its line (and, when it failed, what failed) in one write
if [ "${1:-}" = --one ]; then
	name=$2
	case "$name" in
	test-reader-nosimd) set -- env TRAWL_NO_SIMD=1 "$TRAWL_BUILD/tests/test-reader" ;;
	test-*) set -- "$TRAWL_BUILD/tests/$name" ;;
	t[0-9]*) set -- sh "$TRAWL_SRC/tests/e2e/$name.sh" ;;
	esac
	log="$logdir/$name.log"
	start=$(date +%s)
	"$@" > "$log" 2>&1 < /dev/null
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
	secs=$(( $(date +%s) - start ))
	echo "$p $s $f $secs" > "$logdir/$name.result"
	out="$logdir/$name.line"
	if [ "$f" -gt 0 ]; then
		printf '%-40s FAIL (%d passed, %d failed) %s [%ss]\n' "$name" "$p" "$f" "$note" "$secs"
		grep -B2 -A8 '^not ok' "$log" | head -60 | sed 's/^/    /'
		[ -n "$note" ] && tail -15 "$log" | sed 's/^/    | /'
	else
		printf '%-40s ok (%d passed, %d skipped) %s [%ss]\n' "$name" "$p" "$s" "$note" "$secs"
	fi > "$out"
	cat "$out"
	exit 0
fi

mkdir -p "$logdir"
ncpu=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
[ "$ncpu" -ge 2 ] 2>/dev/null || ncpu=2
J=${J:-$ncpu}

# ---- the files, longest first by the last run's durations
names=$(
	for t in "$TRAWL_BUILD"/tests/test-*; do
		[ -x "$t" ] && basename "$t"
	done
	# the reader's plain decoding too, where the CPU has the vector one
	[ -x "$TRAWL_BUILD/tests/test-reader" ] && echo test-reader-nosimd
	for t in "$TRAWL_SRC"/tests/e2e/t[0-9]*.sh; do
		[ -f "$t" ] && basename "$t" .sh
	done
)
list=""
for name in $names; do
	case "$name" in *${T:-}*) ;; *) continue ;; esac
	secs=0
	[ -f "$logdir/$name.result" ] && secs=$(cut -d' ' -f4 "$logdir/$name.result")
	list="$list$secs $name
"
	rm -f "$logdir/$name.result"
done
order=$(printf '%s' "$list" | sort -k1,1nr -k2,2 | cut -d' ' -f2)

[ -n "$order" ] && printf '%s\n' $order | xargs -P "$J" -n 1 sh "$0" --one

pass=0 fail=0 skip=0 files_failed=""
for name in $order; do
	if [ -f "$logdir/$name.result" ]; then
		read -r p s f secs < "$logdir/$name.result"
	else	# the runner itself died
		p=0 s=0 f=1
	fi
	pass=$((pass + p)); skip=$((skip + s)); fail=$((fail + f))
	[ "$f" -gt 0 ] && files_failed="$files_failed $name"
done

echo
[ -n "$files_failed" ] && echo "failed:$files_failed (logs in $logdir)"
echo "tests: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
