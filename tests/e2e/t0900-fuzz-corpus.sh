#!/bin/sh
# Every fuzz target replays its whole seed corpus (and any crash reproducers
# kept in tests/fuzz/regress/<target>/) under the build's sanitizers.
. "$TRAWL_SRC/tests/e2e/lib.sh"
set --
for r in "$TRAWL_BUILD"/tests/replay-fuzz-*; do
	case "$r" in *.d) continue ;; esac
	[ -x "$r" ] && set -- "$@" "$r"
done
[ $# -gt 0 ] || skip_all "no fuzz targets built"
n=0
for r in "$@"; do n=$((n + 1)); done
plan "$n"
for r in "$@"; do
	t=${r##*/replay-fuzz-}
	dirs="$TRAWL_SRC/tests/fuzz/corpus/$t"
	[ -d "$TRAWL_SRC/tests/fuzz/regress/$t" ] && dirs="$dirs $TRAWL_SRC/tests/fuzz/regress/$t"
	out=$("$r" $dirs 2>&1)
	rc=$?
	cnt=$(printf '%s\n' "$out" | grep -c '^ok ')
	[ "$rc" -eq 0 ] && [ "$cnt" -gt 0 ] && ! printf '%s\n' "$out" | grep -q 'ERROR: \|runtime error'
	ok $? "fuzz target $t replays its $cnt corpus inputs cleanly"
done
finish
