#!/bin/sh
# Impossible times say what is wrong (issue 28, item 11): a simulated
# session whose host1 kernel clock offset is edited to -9223372036 s (its
# events dated 1677) is still read, and trawl info prints the durations
# without overflowing (it printed "-7510201060.-..." and UBSan stopped
# it): the edited trace's duration and the session's time range are
# plain figures followed by "impossible: events dated before 1970", the
# other traces' as before. trawl sync on it gives host1's span as a
# figure and says what is wrong (it printed a negative span; UBSan stopped
# it), --apply refuses to correct that clock (its offset leaves int64)
# instead of overflowing, and print and export read it with the stored
# corrections (the transform saturates: UBSan stopped them too).
# analyze (every analysis), view and state read it too (UBSan stopped
# each: the report's range, the timeline's offsets from its first event,
# the state's checkpoint grid and a thread's time in its state): analyze
# prints the range's dates and says what is wrong with it, and how many
# intervals it could not count; view says how many events it left out of
# the timeline; state prints a time before 1970 with its date, never
# negative nanoseconds. Run under SAN=address,undefined, an overflow
# aborts the command.
. "$TRAWL_SRC/tests/e2e/lib.sh"

plan 25

"$TRAWL" simulate -o s --hosts 2 --events 3000 --seed 5 --sync -q > /dev/null 2>&1
ok $? "a 2-host session with sync probes"
"$TRAWL" info s > good.txt 2> /dev/null
ok $? "info on it"
sed -i 's/^\(\toffset_s = \)[0-9]*;/\1-9223372036;/' s/host1/kernel/metadata
grep -q "offset_s = -9223372036;" s/host1/kernel/metadata
ok $? "host1's kernel clock offset edited to -9223372036 s"

"$TRAWL" info s > info.txt 2> info.err
is "$?" 0 "info reads it (exit 0: the trace is well formed)"
is "$(grep -c '^    duration .* s, impossible: events dated before 1970' info.txt)" 1 \
	"one trace's duration: a figure, then what is wrong"
grep -q '^time range: .* s, impossible: events dated before 1970: a corrupt timestamp or clock offset)$' info.txt
ok $? "the time range says it too ($(grep '^time range' info.txt | cut -c1-60)...)"
is "$(grep -c '\.-[0-9]' info.txt) $(grep -c 'runtime error' info.err)" "0 0" \
	"no negative nanoseconds printed, no overflow"


"$TRAWL" sync s > sync.txt 2> sync.err
is "$?" 0 "sync computes a result for it"
grep -q "^  start      1677-.*, span [0-9]*\.[0-9]\{9\} s, impossible: events dated before 1970" sync.txt
ok $? "host1's span: a figure, then what is wrong"
is "$(grep -c 'span -' sync.txt) $(grep -c 'runtime error' sync.err)" "0 0" "no negative span, no overflow"
"$TRAWL" sync --apply -o fixed s > /dev/null 2> apply.err
is "$?" 1 "sync --apply: exit 1"
grep -qx "trawl sync: s/host1/[a-z]*/metadata: cannot correct clock monotonic" apply.err
ok $? "... it says which clock it cannot correct ($(tail -n 1 apply.err))"
"$TRAWL" print s > print.txt 2> print.err
is "$? $(grep -c 'runtime error' print.err)" "0 0" "print with the stored corrections: exit 0, no overflow"
is "$(wc -l < print.txt)" "$(sed -n 's/^total: .*, \([0-9]*\) events,.*/\1/p' good.txt)" "... every event"
"$TRAWL" export s -o s.pftrace 2> export.err
is "$? $(grep -c 'runtime error' export.err)" "0 0" "export with them: exit 0, no overflow"

for a in cputop schedlat iolatency irq syscalls; do
	"$TRAWL" analyze $a s > "an-$a.txt" 2> "an-$a.err"
	echo "$a $? $(grep -c 'runtime error' "an-$a.err")"
done > an.rc
is "$(cat an.rc | tr '\n' ' ')" "cputop 0 0 schedlat 0 0 iolatency 0 0 irq 0 0 syscalls 0 0 " \
	"analyze: every analysis exit 0, no overflow"
grep -q '^cputop: \[1677-[0-9-]* [0-9:.]*, [0-9:.]*\] ([0-9.]* s, impossible: events dated before 1970: a corrupt timestamp or clock offset; the shares are of 2^63 ns)$' an-cputop.txt
ok $? "analyze: the range's first date, then what is wrong ($(head -n 1 an-cputop.txt | cut -c1-60)...)"
is "$(cat an-*.txt | grep -c '\.-[0-9]')" 0 "analyze: no negative nanoseconds printed"
grep -q '^trawl analyze: warning: [1-9][0-9]* intervals\{0,1\} not counted: \(its\|their\) ends 2^63 ns or more apart (impossible: a corrupt timestamp or clock offset)$' an-cputop.err
ok $? "analyze cputop: says how many intervals it could not count ($(cat an-cputop.err))"

"$TRAWL" view s -o v.html > view.out 2> view.err
is "$? $(grep -c 'runtime error' view.err)" "0 0" "view: exit 0, no overflow"
grep -q '^trawl view: warning: [1-9][0-9]* events\{0,1\} or arrows\{0,1\} left out of the timeline: 2^63 ns or more after its first event (impossible: a corrupt timestamp or clock offset)$' view.err
ok $? "view: says how many events it left out ($(cat view.err))"
test -s v.html
ok $? "view: the page written"

# host1's kernel events at both ends: its trace as edited, and host0's
# copied as a second kernel trace of host1's
cp -R s/host0/kernel s/host1/kernel2
sed -i 's/hostname = "host0"/hostname = "host1"/' s/host1/kernel2/metadata
at=$(sed -n 's/^time range: .* \.\. \([0-9-]* [0-9:]*\)\..*/\1/p' good.txt)
"$TRAWL" state s --host host1 --at +0.5 > st1.txt 2> st1.err
is "$? $(grep -c 'runtime error' st1.err)" "0 0" "state at the trace's start (1677): exit 0, no overflow"
grep -q '^host host1 at 1677-[0-9]*-[0-9]* [0-9:]*\.[0-9]\{9\}$' st1.txt && ! grep -q '\.-[0-9]' st1.txt
ok $? "state: a time before 1970 with its date, no negative nanoseconds ($(head -n 1 st1.txt))"
"$TRAWL" state s --host host1 --at "$at" > st2.txt 2> st2.err
is "$? $(grep -c 'runtime error' st2.err)" "0 0" "state at the session's end ($at), 2^63 ns and more after its first event: exit 0, no overflow"

finish
