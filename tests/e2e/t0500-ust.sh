#!/bin/sh
# User-space tracing end to end: examples/hello records events of every
# field type through an in-process session (1 and 3 threads, both event
# header forms, CLOCK_MONOTONIC and trawl's default clock); babeltrace2 (the
# format oracle) and `trawl print` must print the same events, line by line,
# with the default clock too. That clock is derived from the machine
# (lib.sh's tsc_default): the TSC where the kernel's clocksource is the TSC
# (its frequency, measured, is not 1 GHz: the reader converts cycles to
# nanoseconds the way babeltrace2 does, so the same nanosecond prints), else
# CLOCK_MONOTONIC at 1 GHz (a kvm-clock guest, TRAWL_CLOCKSOURCE=kvm-clock).
# A C++ program using <trawl/tracepoint.h> must build and record too.
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v babeltrace2 >/dev/null 2>&1 || skip_all "babeltrace2 is not installed (the oracle)"
HELLO="$TRAWL_BUILD/examples/hello"
NORM="$TRAWL_SRC/tests/e2e/normalize.sh"
[ -x "$HELLO" ] || { echo "Bail out! $HELLO is not built"; exit 1; }
plan 22

strip_time() { sed -E 's/^\[[^]]*\] \([^)]*\) //' "$1" | LC_ALL=C sort; }

oracle() {	# NAME EXACT(1|0) EVENTS HELLO-OPTIONS...
	name=$1 exact=$2 count=$3; shift 3
	"$HELLO" "$name" "$@" > "$name.out" 2>&1
	ok $? "$name: hello $* records"
	babeltrace2 "$name" > "$name.bt.raw" 2> "$name.bt.err" &&
		"$TRAWL" print "$name" > "$name.trawl.raw" 2> "$name.trawl.err"
	ok $? "$name: babeltrace2 and trawl print read it"
	sh "$NORM" < "$name.bt.raw" > "$name.bt"
	sh "$NORM" < "$name.trawl.raw" > "$name.trawl"
	is "$(wc -l < "$name.trawl")" "$count" "$name: $count events"
	if [ "$exact" = 1 ]; then
		cmp_files "$name.trawl" "$name.bt" "$name: trawl print == babeltrace2, line by line"
	else
		strip_time "$name.trawl" > "$name.trawl.nt"
		strip_time "$name.bt" > "$name.bt.nt"
		cmp_files "$name.trawl.nt" "$name.bt.nt" "$name: trawl print == babeltrace2 but for time"
	fi
}

oracle mono 1 9 monotonic
oracle mono-fixed-threads 1 27 monotonic fixed threads
# trawl's default clock on this machine
if tsc_default; then dclock=tsc; else dclock=monotonic; fi
oracle default 1 9
oracle default-fixed-threads 1 27 fixed threads

# the fields, as recorded (trawl's text of the second hello:types event)
line=$(grep 'hello:types' mono.trawl | sed -n 2p | sed -E 's/^.*hello:types: //; s/cpu_id = [0-9]+/cpu_id = C/; s/vpid = [0-9]+, vtid = [0-9]+/vpid = P, vtid = P/')
is "$line" '{ cpu_id = C }, { vpid = P, vtid = P, procname = "hello" }, { a = -5, b = 65535, c = -1, flags = 0xC0FFEE, f = 1.5, d = 2.25, color = ( "green" : container = 1 ), bytes_length = 4, bytes = [ [0] = 0xDE, [1] = 0xAD, [2] = 0xBE, [3] = 0xEF ], arr = [ [0] = -1, [1] = 0, [2] = 1 ] }' \
	"hello:types fields as emitted"
grep -q 'domain = "ust"' mono/metadata && grep -q 'tracer_name = "trawl"' mono/metadata
ok $? "metadata: domain ust, tracer trawl"
if [ "$dclock" = tsc ]; then
	grep -q 'name = tsc;' default/metadata && grep -Eq 'freq = [0-9]{7,};' default/metadata
	ok $? "default clock (clocksource $(clocksource)): tsc with a measured frequency"
else
	grep -q 'name = monotonic;' default/metadata && grep -q 'freq = 1000000000;' default/metadata
	ok $? "default clock (clocksource $(clocksource)): no TSC, CLOCK_MONOTONIC at 1 GHz"
fi

# C++
cat > cxx.cc <<'CXX'
#define TRAWL_TRACEPOINT_DEFINE
#include <trawl/tracepoint.h>
#include <cstdio>
#include <cstring>
#include <string>
TRAWL_ENUM(cxx, state, TRAWL_ENUM_VALUE("idle", 0) TRAWL_ENUM_VALUE("busy", 1))
TRAWL_TRACEPOINT_EVENT(cxx, ev, TRAWL_LOGLEVEL_INFO,
	TRAWL_ARGS(uint64_t n, const std::string &s, double d, int st),
	TRAWL_FIELDS(TRAWL_FIELD_INT(uint64_t, n, n) TRAWL_FIELD_STRING(s, s.c_str())
		     TRAWL_FIELD_FLOAT(double, d, d) TRAWL_FIELD_ENUM(cxx, state, int32_t, st, st)))
int main(int argc, char **argv)
{
	trawl_ust_session_opts o;
	std::memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	o.output = argv[1];
	char err[256];
	trawl_ust_session *s = trawl_ust_session_new(&o, err, sizeof(err));
	if (!s || trawl_ust_session_start(s) < 0)
		return 1;
	for (uint64_t i = 0; i < 5; i++)
		trawl_tracepoint(cxx, ev, i, std::string("c++"), 0.5, (int)(i & 1));
	int r = trawl_ust_session_stop(s);
	trawl_ust_session_free(s);
	return (r < 0 || argc < 2) ? 1 : 0;
}
CXX
if command -v g++ >/dev/null 2>&1; then
	san=""
	[ -n "${TRAWL_SAN:-}" ] && san="-fsanitize=$TRAWL_SAN"
	g++ -std=c++17 -Wall -Wextra -Werror $san -I"$TRAWL_SRC/include" -o cxx cxx.cc \
		"$TRAWL_BUILD/libtrawl.a" -lpthread -lm > cxx.log 2>&1
	ok $? "C++: a program using <trawl/tracepoint.h> builds with -Wall -Wextra -Werror"
	[ $? -eq 0 ] || sed 's/^/#   /' cxx.log | head -10
	./cxx cxx-trace
	ok $? "C++: records"
	is "$("$TRAWL" print cxx-trace | grep -c 'cxx:ev: .*n = 4, s = "c++", d = 0.5, st = ( "idle" : container = 0 )')" 1 \
		"C++: the fifth event reads back"
else
	skip "g++ not installed"; skip "g++ not installed"; skip "g++ not installed"
fi
finish
