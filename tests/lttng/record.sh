#!/bin/sh
# tests/lttng/record.sh OUTDIR [TICKS] - records reference CTF traces with
# LTTng 2.13 (lttng-ust) for the format oracle tests.
#
# Builds the instrumented program trawl_fixture.c (with $CC, default cc,
# into $FIXTURE_BUILD, default OUTDIR/build), then records three traces:
#   OUTDIR/normal  big buffers (8 x 1 MiB per CPU, more than the whole run
#                  writes) in blocking mode: lossless, every event the program
#                  emitted is in the trace; OUTDIR/normal.counts lists, per
#                  event name, how many the program emitted.
#   OUTDIR/lossy   tiny sub-buffers (2 x 4 KiB) in discard mode while the
#                  threads run flat out, so packets carry discarded events.
#   OUTDIR/snapshot  a flight-recorder (overwrite mode, 4 x 4 KiB) snapshot
#                  taken after the run: only the newest packets (older
#                  ones were overwritten).
# Each recording has the vpid, vtid and procname contexts. TICKS (default
# 20000) is the number of bulk events the worker threads emit.
#
# Starts an lttng-sessiond (--no-kernel) only if none answers, and stops
# only that one, by its pid, at exit. Exit status: 0 recorded; 77 when it
# cannot record here (no lttng, no lttng-ust headers, no session daemon),
# with the reason on stderr; 1 on a failure.
set -u

OUT=${1:?usage: record.sh OUTDIR [TICKS]}
TICKS=${2:-20000}
THREADS=${THREADS:-4}
HERE=$(cd "$(dirname "$0")" && pwd)
CC=${CC:-cc}
BUILD=${FIXTURE_BUILD:-$OUT/build}

skip() { echo "record.sh: cannot record here: $*" >&2; exit 77; }
fail() { echo "record.sh: $*" >&2; exit 1; }

command -v lttng >/dev/null 2>&1 || skip "lttng (lttng-tools) is not installed"
command -v lttng-sessiond >/dev/null 2>&1 || skip "lttng-sessiond is not installed"
. "$(dirname "$0")/turn.sh"
command -v "$CC" >/dev/null 2>&1 || skip "no C compiler ($CC)"

mkdir -p "$OUT" "$BUILD" || fail "cannot create $OUT"
OUT=$(cd "$OUT" && pwd)

# Build the instrumented program.
if ! "$CC" -O2 -I"$HERE" -o "$BUILD/trawl-fixture" "$HERE/trawl_fixture.c" \
	"$HERE/trawl_fixture_tp.c" -llttng-ust -ldl -lpthread 2> "$BUILD/cc.log"; then
	if grep -q 'lttng/tracepoint.h' "$BUILD/cc.log"; then
		skip "lttng-ust development files are missing"
	fi
	cat "$BUILD/cc.log" >&2
	fail "cannot build the fixture program"
fi

. "$(dirname "$0")/sessiond.sh"

# record NAME TICKS CHANNEL-OPTIONS... : one session, one run of the program.
record() {
	name=$1 n=$2; shift 2
	sess="trawl_fix_${name}_$$_$(date +%s%N)"
	rm -rf "${OUT:?}/$name"
	lttng create "$sess" --output="$OUT/$name" >/dev/null || fail "lttng create failed"
	SESSIONS="$SESSIONS $sess"
	lttng enable-channel -u -s "$sess" "$@" ch >/dev/null || fail "lttng enable-channel $* failed"
	lttng enable-event -u -s "$sess" -c ch 'trawl_fixture:*' >/dev/null || fail "lttng enable-event failed"
	lttng add-context -u -s "$sess" -c ch -t vpid -t vtid -t procname >/dev/null ||
		fail "lttng add-context failed"
	lttng start "$sess" >/dev/null || fail "lttng start failed"
	LTTNG_UST_ALLOW_BLOCKING=1 LTTNG_UST_REGISTER_TIMEOUT=10000 \
		"$BUILD/trawl-fixture" "$n" "$THREADS" > "$OUT/$name.counts" ||
		fail "the fixture program failed"
	lttng stop "$sess" >/dev/null || fail "lttng stop failed"
	lttng destroy "$sess" >/dev/null || fail "lttng destroy failed"
	SESSIONS=$(echo "$SESSIONS" | sed "s/ $sess//")
	[ -n "$(find "$OUT/$name" -name metadata 2>/dev/null)" ] ||
		fail "no trace was written under $OUT/$name (did the program register?)"
}

# snapshot TICKS : a snapshot session, overwrite mode, one snapshot at the end.
snapshot() {
	n=$1
	sess="trawl_fix_snap_$$_$(date +%s%N)"
	rm -rf "${OUT:?}/snapshot"
	lttng create "$sess" --snapshot --output="$OUT/snapshot" >/dev/null || fail "lttng create --snapshot failed"
	SESSIONS="$SESSIONS $sess"
	lttng enable-channel -u -s "$sess" --subbuf-size=4K --num-subbuf=4 --overwrite ch >/dev/null ||
		fail "lttng enable-channel --overwrite failed"
	lttng enable-event -u -s "$sess" -c ch 'trawl_fixture:*' >/dev/null || fail "lttng enable-event failed"
	lttng add-context -u -s "$sess" -c ch -t vpid -t vtid -t procname >/dev/null ||
		fail "lttng add-context failed"
	lttng start "$sess" >/dev/null || fail "lttng start failed"
	LTTNG_UST_REGISTER_TIMEOUT=10000 "$BUILD/trawl-fixture" "$n" "$THREADS" > "$OUT/snapshot.counts" ||
		fail "the fixture program failed"
	lttng stop "$sess" >/dev/null || fail "lttng stop failed"
	lttng snapshot record -s "$sess" >/dev/null || fail "lttng snapshot record failed"
	lttng destroy "$sess" >/dev/null || fail "lttng destroy failed"
	SESSIONS=$(echo "$SESSIONS" | sed "s/ $sess//")
	[ -n "$(find "$OUT/snapshot" -name metadata 2>/dev/null)" ] || fail "no snapshot was written"
}

record normal "$TICKS" --subbuf-size=1M --num-subbuf=8 --blocking-timeout=inf
record lossy $((TICKS * 10)) --subbuf-size=4K --num-subbuf=2 --discard
snapshot "$TICKS"
exit 0
