#!/bin/sh
# trawl simulate: the session layout (hosts x {kernel,ust}, one stream file
# and one index per CPU, metadata), determinism (same seed -> identical
# bytes, another seed -> different), uuids and clocks per host, babeltrace2
# (the independent reader) decoding exactly as many events as simulate
# reported, per host and per event name, sched_switch chains consistent per
# CPU, --shapes corner cases, bounded memory, and argument errors (exit 2).
. "$TRAWL_SRC/tests/e2e/lib.sh"

# The number of events a simulate run reported in its summary.
sim_events() {
	sed -n 's/^trawl simulate: \([0-9][0-9]*\) events.*/\1/p' "$1" | head -1
}

plan 31

"$TRAWL" simulate -o a --hosts 3 --cpus 2 --events 20000 --seed 42 > a.sim 2>&1
ok $? "simulate 3 hosts x 2 CPUs, 20000 events"
is "$(sim_events a.sim)" 20000 "the summary reports 20000 events"

# --- layout
want=""
for h in 0 1 2; do for d in kernel ust; do
	want="$want host$h/$d/channel0_0 host$h/$d/channel0_1 host$h/$d/index/channel0_0.idx"
	want="$want host$h/$d/index/channel0_1.idx host$h/$d/metadata"
done; done
got=$(cd a && find . -type f | sed 's|^\./||' | sort | tr '\n' ' ' | sed 's/ $//')
is "$got" "$(echo $want | tr ' ' '\n' | sort | tr '\n' ' ' | sed 's/ $//')" \
	"layout: host<i>/{kernel,ust}/{channel0_<cpu>,index/channel0_<cpu>.idx,metadata}"

n=0
for m in a/host*/*/metadata; do
	[ "$(head -1 "$m")" = "/* CTF 1.8 */" ] && n=$((n + 1))
done
is "$n" 6 "every metadata starts with /* CTF 1.8 */"
grep -q 'hostname = "host1";' a/host1/ust/metadata && grep -q 'domain = "ust";' a/host1/ust/metadata &&
	grep -q 'domain = "kernel";' a/host1/kernel/metadata && grep -q 'absolute = true;' a/host1/kernel/metadata
ok $? "env hostname and domain, absolute clock"

# one trace uuid per trace; one clock uuid (boot_id) and offset per host
tu=$(for m in a/host*/*/metadata; do sed -n '/^trace {/,/^}/s/.*uuid = "\(.*\)";/\1/p' "$m"; done | sort -u | wc -l)
is "$tu" 6 "six traces, six trace uuids"
clk() { sed -n '/^clock {/,/^}/{s/.*uuid = "\(.*\)";/\1/p;s/.*offset_s = \(.*\);/\1/p}' "$1" | tr '\n' ' '; }
[ "$(clk a/host0/kernel/metadata)" = "$(clk a/host0/ust/metadata)" ] &&
	[ "$(clk a/host2/kernel/metadata)" = "$(clk a/host2/ust/metadata)" ]
ok $? "kernel and ust traces of a host share its clock (uuid, offset)"
cu=$(for h in 0 1 2; do clk a/host$h/kernel/metadata; echo; done | sort -u | wc -l)
is "$cu" 3 "each host has its own clock uuid and offset"

# every packet is whole, and each index has one 72-byte entry per packet
bad=0
for f in a/host*/*/channel0_*; do
	d=$(dirname "$f") b=$(basename "$f")
	size=$(wc -c < "$f") isize=$(wc -c < "$d/index/$b.idx")
	[ $((size % 262144)) -eq 0 ] && [ "$isize" -eq $((16 + size / 262144 * 72)) ] || bad=$((bad + 1))
done
is "$bad" 0 "whole 256 KiB packets, one index entry per packet"

# --- determinism
"$TRAWL" simulate -o b --hosts 3 --cpus 2 --events 20000 --seed 42 > b.sim 2>&1
ok $? "simulate again, same seed"
diff -r a b > /dev/null
ok $? "same seed: byte-identical session"
"$TRAWL" simulate -o c --hosts 3 --cpus 2 --events 20000 --seed 43 > c.sim 2>&1
cmp -s a/host0/kernel/channel0_0 c/host0/kernel/channel0_0 ||
	cmp -s a/host0/kernel/metadata c/host0/kernel/metadata
[ $? -ne 0 ]
ok $? "another seed: different data and metadata"

# --- babeltrace2 reads it
if command -v babeltrace2 > /dev/null 2>&1; then
	babeltrace2 --clock-seconds a > a.bt 2> a.bt.err
	ok $? "babeltrace2 reads the session"
	is "$(wc -l < a.bt)" "$(sim_events a.sim)" "babeltrace2 counts as many events as simulate reported"
	is "$(grep -c '^\[[^]]*\] ([^)]*) host0 ' a.bt) $(grep -c ') host1 ' a.bt) $(grep -c ') host2 ' a.bt)" \
		"6667 6667 6666" "events per host: the total split over the hosts"
	names=$(sed 's/^[^)]*) host[0-9]* \([^:]*\(:[a-z_]*\)\?\):.*/\1/' a.bt | sort -u | tr '\n' ' ')
	is "$names" "app:request_begin app:request_end sched_switch sched_wakeup syscall_entry_read syscall_entry_write syscall_exit_read syscall_exit_write " \
		"the kernel and ust event names"
	k=$(grep -c 'sched_switch\|sched_wakeup\|syscall_' a.bt)
	[ "$k" -ge 14000 ] && [ "$k" -le 16000 ]
	ok $? "about three quarters kernel events ($k)"
	# on each CPU of each host, a switch's next is the following switch's prev
	broken=$(grep ' sched_switch: ' a.bt | awk '{
		host = $3; cpu = $8
		match($0, /prev_tid = -?[0-9]+/); prev = substr($0, RSTART + 11, RLENGTH - 11)
		match($0, /next_tid = -?[0-9]+/); next_ = substr($0, RSTART + 11, RLENGTH - 11)
		key = host "/" cpu
		if ((key in last) && last[key] != prev) bad++
		last[key] = next_; n++
	} END { print (n > 100 ? bad + 0 : "too few switches: " n) }')
	is "$broken" 0 "sched_switch chains are consistent per CPU"
	# request_end latency_ms = time since its request_begin (spot check)
	lat=$(grep ' host0 app:request_end: { cpu_id = 0 }' a.bt | head -1 |
		sed 's/.*{ id = \([0-9]*\),.*latency_ms = \([0-9.e+-]*\),.*/\1 \2/')
	id=${lat% *} ms=${lat#* }
	tb=$(grep " host0 app:request_begin: .* id = $id," a.bt | sed 's/^\[\([0-9.]*\)\].*/\1/')
	te=$(grep " host0 app:request_end: .* id = $id," a.bt | sed 's/^\[\([0-9.]*\)\].*/\1/')
	awk -v b="$tb" -v e="$te" -v ms="$ms" 'BEGIN { d = (e - b) * 1000 - ms; exit !(d < 0.001 && d > -0.001 && ms > 0) }'
	ok $? "latency_ms ($ms) is the time between begin and end of request $id"
	[ ! -s a.bt.err ]
	ok $? "no warning without --shapes"
else
	for i in 1 2 3 4 5 6 7 8; do skip "babeltrace2 is not installed"; done
fi

# --- --shapes
"$TRAWL" simulate -o s --hosts 2 --cpus 2 --events 8000 --seed 3 --shapes --packet-size 8K > s.sim 2>&1
ok $? "simulate --shapes with 8 KiB packets"
if command -v babeltrace2 > /dev/null 2>&1; then
	babeltrace2 --clock-seconds s > s.bt 2> s.bt.err
	ok $? "babeltrace2 reads the --shapes session"
	is "$(wc -l < s.bt)" "$(sim_events s.sim)" "babeltrace2 counts as many events as simulate reported"
	is "$(grep -c 'Tracer discarded' s.bt.err)" 8 "discarded events in each of the 8 streams"
	grep -q 'syscall_entry_clock_gettime' s.bt && grep -q 'id = 18446744073709551615,' s.bt &&
		grep -q 'b = -9223372036854775808 }' s.bt && grep -q 'path = "/new\\nline\\n"' s.bt &&
		grep -q 'payload_length = 0, payload = \[ \]' s.bt && grep -q '( "ABORTED" : container = -1 )' s.bt
	ok $? "event ids >= 31, UINT64_MAX, INT64_MIN, escaped strings, empty sequences, negative enums"
	# gaps over 2^32 ns inside streams: deltas of 5 s between neighbours of a stream
	gaps=$(grep ' host1 app:' s.bt | grep '{ cpu_id = 1 }' | awk -F'[][]' '{ t = $2 + 0; if (p && t - p > 4.3) n++; p = t } END { print n + 0 }')
	is "$gaps" 1 "one idle gap over 2^32 ns in a ust stream"
else
	for i in 1 2 3 4 5; do skip "babeltrace2 is not installed"; done
fi

# --- bounded memory, streaming
if [ -x /usr/bin/time ]; then
	/usr/bin/time -f '%M' -o big.rss "$TRAWL" simulate -o big --hosts 2 --events 3M --seed 1 > big.sim 2>&1
	rss=$(tail -1 big.rss)
	[ "$(sim_events big.sim)" = 3000000 ] && [ "$rss" -lt 65536 ]
	ok $? "3 M events in bounded memory (max RSS $rss KiB)"
	rm -rf big
else
	skip "/usr/bin/time is not installed"
fi

# --- errors
"$TRAWL" simulate -o a > err.out 2> err.err
is "$?" 1 "a non-empty output directory: exit 1"
rcs=""
for args in "--hosts 0 -o x" "--events abc -o x" "--bogus -o x" "--hosts 2" "--packet-size 100 -o x" \
	"-o x extra" "--cpus 2000 -o x" "-o"; do
	"$TRAWL" simulate $args > /dev/null 2> err.txt
	rcs="$rcs$? "
done
is "$rcs" "2 2 2 2 2 2 2 2 " "bad arguments exit 2"
grep -q "trawl simulate: .*'-o'" err.txt
ok $? "with a clear message ($(head -1 err.txt))"
[ ! -e x ]
ok $? "and write nothing"

finish
