#!/bin/sh
# tests/adverse.sh - the whole test suite, once plainly and then under each
# adverse condition a user's machine (or CI's) may present:
#   nice      nice -n 19
#   busy      every CPU busy with a CPU hog for the whole run
#   onecpu    one CPU only (taskset -c 0)
#   tracefs   tracefs mounted at another path (a private mount namespace
#             where /sys/kernel/tracing is unmounted): trawl and the tests
#             must find it there
#   notsc     the TSC declared unusable (TRAWL_CLOCKSOURCE=kvm-clock): the
#             clock choice sees a non-TSC clocksource, the fallback runs
# Every condition must pass, and skip no more than the plain run does (a
# test that skips under a condition proves nothing there): the skip reasons
# a condition adds (compared with their figures masked: a measured load or
# share in a reason is not a new reason) are listed and count as failures, but for notsc's skips
# of checks of the TSC clock itself (their reason: "the clocksource is ...
# not the TSC"), which cannot run without one.
#
#   make adverse                    (builds, then runs this)
#   tests/adverse.sh [CONDITION...] (TRAWL_BUILD and TRAWL_SRC set, as
#                                    make check sets them)
# Exit status: 0 when every condition passed.
set -u
: "${TRAWL_BUILD:?run through make adverse}" "${TRAWL_SRC:?}"
export TRAWL_BUILD TRAWL_SRC
RUN="$TRAWL_SRC/tests/run.sh"
out="$TRAWL_BUILD/adverse"
mkdir -p "$out"
conds=${*:-"plain nice busy onecpu tracefs notsc"}
case " $conds " in *" plain "*) ;; *) conds="plain $conds" ;; esac
ncpu=$(getconf _NPROCESSORS_ONLN)

HOGS=""
stop_hogs() {
	for p in $HOGS; do kill "$p" 2>/dev/null; done
	for p in $HOGS; do wait "$p" 2>/dev/null; done
	HOGS=""
}
trap 'stop_hogs' EXIT
trap 'stop_hogs; exit 130' INT TERM

# run_suite NAME CMD-PREFIX...: the suite under a prefix; its summary line
run_suite() {
	name=$1; shift
	logs="$out/$name"
	rm -rf "$logs"; mkdir -p "$logs"
	# the plain run's durations order the others' files, longest first
	[ "$name" != plain ] && cp "$out"/plain/*.result "$logs"/ 2>/dev/null
	start=$(date +%s)
	TRAWL_TEST_LOGS="$logs" "$@" sh "$RUN" > "$logs.out" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
	grep '^t[0-9].* FAIL\|^test-.* FAIL\|^    ' "$logs.out" | head -40
	# every skip reason of this run: "FILE: reason"
	for f in "$logs"/*.log; do
		n=$(basename "$f" .log)
		sed -n "s/^1\.\.0 *# *SKIP *\(.*\)/$n: \1/p; s/^ok [0-9]* # SKIP *\(.*\)/$n: \1/p" "$f"
	done | sort > "$logs.skips"
	echo "$rc $secs" > "$logs.rc"
}

tracefs_elsewhere() {	# the suite in a mount namespace with tracefs moved
	alt="$out/tracefs-mnt"
	mkdir -p "$alt"
	unshare -m sh -c '
		set -e
		mount --make-rprivate /
		mount -t tracefs nodev "$1"
		# every other mount of tracefs goes (the first one is what trawl finds)
		awk '\''$3 == "tracefs" { print $2 }'\'' /proc/mounts | while read -r m; do
			[ "$m" = "$1" ] || umount -l "$m"
		done
		[ "$(awk '\''$3 == "tracefs" { print $2; exit }'\'' /proc/mounts)" = "$1" ]
		[ ! -e /sys/kernel/tracing/events ]
		shift
		exec "$@"' sh "$alt" "$@"
}

fail=0
summary=""
for c in $conds; do
	echo "== $c"
	case "$c" in
	plain)	run_suite plain env ;;
	nice)	run_suite nice nice -n 19 ;;
	busy)
		i=0
		while [ "$i" -lt "$ncpu" ]; do
			taskset -c "$i" sh -c 'while :; do :; done' &
			HOGS="$HOGS $!"
			i=$((i + 1))
		done
		run_suite busy env
		stop_hogs ;;
	onecpu)	run_suite onecpu taskset -c 0 ;;
	tracefs)
		if [ "$(id -u)" != 0 ] || ! unshare -m true 2>/dev/null; then
			echo "tracefs: skipped (needs root and mount namespaces)"
			summary="$summary$c: skipped (needs root and mount namespaces)
"
			continue
		fi
		run_suite tracefs tracefs_elsewhere env ;;
	notsc)	run_suite notsc env TRAWL_CLOCKSOURCE=kvm-clock ;;
	*)	echo "adverse: unknown condition '$c'" >&2; exit 2 ;;
	esac
	read -r rc secs < "$out/$c.rc"
	line=$(grep '^tests: ' "$out/$c.out" | tail -1)
	[ -n "$line" ] || line="tests: no summary (the runner failed)"
	extra=""
	if [ "$c" != plain ]; then
		# the reasons compared with their figures masked: a skip the
		# plain run has too, for the same reason with other measured
		# figures ("the burner 29.07 % of a CPU, not its half"), is
		# not a new one
		for s in plain "$c"; do
			sed 's/[0-9][0-9.]*/N/g' "$out/$s.skips" | sort > "$out/$s.skips.n"
		done
		extra=$(comm -13 "$out/plain.skips.n" "$out/$c.skips.n")
		# notsc takes the TSC away: a check of the TSC clock itself
		# cannot run there (its reason names the clocksource); listed,
		# not a failure
		if [ "$c" = notsc ]; then
			expected=$(printf '%s\n' "$extra" | grep 'the clocksource is .*not the TSC')
			[ -n "$expected" ] && printf '%s\n' "$expected" | sort | uniq -c |
				sed 's/^ */    expected skip (no TSC): /'
			extra=$(printf '%s\n' "$extra" | grep -v 'the clocksource is .*not the TSC')
		fi
	fi
	verdict=ok
	if [ "$rc" -ne 0 ] || [ -z "$(grep '^tests: ' "$out/$c.out")" ]; then
		verdict=FAILED; fail=1
	fi
	if [ -n "$extra" ]; then
		verdict="FAILED (skips the plain run does not)"; fail=1
		echo "$extra" | sed 's/^/    new skip: /'
	fi
	echo "$c: $line [${secs}s] $verdict"
	summary="$summary$(printf '%-8s %s [%ss] %s' "$c" "$line" "$secs" "$verdict")
"
done
echo
echo "machine: $(grep -m1 '^model name' /proc/cpuinfo | sed 's/.*: //'), family $(grep -m1 '^cpu family' /proc/cpuinfo | sed 's/.*: //'), $ncpu CPUs, clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
printf '%s' "$summary"
exit $fail
