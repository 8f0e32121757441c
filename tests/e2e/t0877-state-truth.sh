#!/bin/sh
# trawl state tells the truth about what it was asked (a simulated session
# of 4 hosts, and one host of it alone):
#  - several hosts without --host: a usage error (exit 2) listing them,
#    never a host picked silently;
#  - --host that matches no host: a usage error naming it, listing the
#    hosts; a glob matching several: a usage error; one matching one: ok;
#  - --at before the trace's start: "before the trace's start" with the
#    host's range (its first and last events, as trawl print shows them),
#    exit 1, no state;
#  - --at after the trace's end: the state as of the last event, with a
#    warning naming that event's time, exit 0; inside the trace: no warning.
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v python3 > /dev/null 2>&1 || skip_all "needs python3"
plan 11

TZ=UTC
export TZ
"$TRAWL" simulate -q -o sim -n 4 -c 2 -e 40000 > sim.log 2>&1
ok $? "a simulated session of 4 hosts"

"$TRAWL" state sim --at +0.5 > many.out 2> many.err
is "$?:$(head -1 many.err):$(wc -c < many.out)" \
	"2:trawl state: 4 hosts: say which with --host (host0, host1, host2, host3):0" \
	"4 hosts, no --host: a usage error listing them, no state printed"

"$TRAWL" state sim --host nosuch --at +0.5 > none.out 2> none.err
is "$?:$(head -1 none.err)" \
	"2:trawl state: --host nosuch: no host matches; the traces' hosts: host0, host1, host2, host3" \
	"--host nosuch: no host matches, the hosts listed (exit 2)"
"$TRAWL" state sim --host hots2 --at +0.5 > near.out 2> near.err
is "$?:$(sed -n 2p near.err)" "2:hint: did you mean 'host2'?" \
	"--host hots2: the near host named, as print, info and agg name it"

"$TRAWL" state sim --host 'host*' --at +0.5 > glob.out 2> glob.err
is "$?:$(head -1 glob.err)" \
	"2:trawl state: --host host*: matches 4 hosts; give one of: host0, host1, host2, host3" \
	"--host 'host*': matches 4, a usage error"

"$TRAWL" state sim --host 'host[2]' --at +0.5 > one.out 2> one.err
is "$?:$(head -1 one.out | cut -d' ' -f1-2):$(wc -c < one.err)" "0:host host2:0" \
	"--host 'host[2]': the one host it matches, no message"

# host1's first and last events, as trawl print shows them (the oracle)
"$TRAWL" print -H host1 sim 2> /dev/null | sed -n 's/^\[\([0-9:.]*\)\].*/\1/p' > ts.txt
FIRST=$(head -1 ts.txt) LAST=$(tail -1 ts.txt)
test -n "$FIRST" && test -n "$LAST"
ok $? "host1's events run from $FIRST to $LAST (trawl print)"

"$TRAWL" state sim --host host1 --at 1000000000 > before.out 2> before.err
is "$?:$(cat before.err):$(wc -c < before.out)" \
	"1:trawl state: --at 1000000000: before the trace's start: host host1's events run from $FIRST to $LAST:0" \
	"--at before the trace: before its start, with the host's range (exit 1, no state)"

"$TRAWL" state sim/host1 --at 1000000000 > before1.out 2> before1.err
is "$?:$(cat before1.err)" \
	"1:trawl state: --at 1000000000: before the trace's start: host host1's events run from $FIRST to $LAST" \
	"one host's directory, --at before it: the same message"

"$TRAWL" state sim --host host1 --at +100 > after.out 2> after.err
is "$?:$(cat after.err):$(head -1 after.out | cut -d' ' -f1-2)" \
	"0:trawl state: warning: --at +100: after the trace's end (host host1's last event at $LAST): the state as of that event:host host1" \
	"--at after the trace's end: the state, with a warning naming the last event's time (exit 0)"

"$TRAWL" state sim --host host1 --at +0.5 > in.out 2> in.err
is "$?:$(wc -c < in.err)" "0:0" "--at inside the trace: no warning"
finish
