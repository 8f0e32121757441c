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
# corrections (the transform saturates: UBSan stopped them too). Run
# under SAN=address,undefined, an overflow aborts the command.
. "$TRAWL_SRC/tests/e2e/lib.sh"

plan 15

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

finish
