#!/bin/sh
# Impossible times say what is wrong (issue 28, item 11): a simulated
# session whose host1 kernel clock offset is edited to -9223372036 s (its
# events dated 1677) is still read, and trawl info prints the durations
# without overflowing (it printed "-7510201060.-..." and UBSan stopped
# it): the edited trace's duration and the session's time range are
# plain figures followed by "impossible: events dated before 1970", the
# other traces' as before.
. "$TRAWL_SRC/tests/e2e/lib.sh"

plan 7

"$TRAWL" simulate -o s --hosts 2 --events 3000 --seed 5 -q > /dev/null 2>&1
ok $? "a 2-host session"
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

finish
