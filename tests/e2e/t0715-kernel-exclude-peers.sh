#!/bin/sh
# record --exclude-self leaves out trawl's own threads and also the node's
# relay and live viewers (docs/kernel.md, "Where the events come from"): a
# relay streams a session to `trawl print --live` and to `trawl top
# net://...` (its URL without --live; all busy: a viewer asks the relay
# for news every few ms); `record -k syscalls -d 1` without
# the option records their system calls (the control), with it none of
# theirs nor its own. And `record -- CMD` says in its first line that it
# records the whole machine's kernel events (and how to record only the
# command's); with --only-command, the command (forked by record) is not
# left out with it.
. "$TRAWL_SRC/tests/e2e/lib.sh"
[ "$(id -u)" = 0 ] || skip_all "needs root (tracefs instances)"
command -v cc > /dev/null 2>&1 || skip_all "needs a C compiler for the live producer"
plan 9

pids=""
cleanup() { for p in $pids; do kill "$p" 2> /dev/null; done; }
trap cleanup EXIT

relay_up OUT
san=${TRAWL_SAN:+-fsanitize=$TRAWL_SAN}
${CC:-cc} -std=gnu11 -O2 -Wall -Wextra -Werror $san -I"$TRAWL_SRC/include" -o live-producer \
	"$TRAWL_SRC/tests/e2e/live-producer.c" "$TRAWL_BUILD/libtrawl.a" -lpthread -lm > lp-cc.log 2>&1
[ -x live-producer ] || { sed 's/^/# /' lp-cc.log | head; echo "Bail out! no live producer"; exit 1; }
printf 'stream 0\nev 0 100000 10\nflush 0 900000\ntouch first\nwait go\nclose\n' > p.txt
./live-producer "$DATA" xp node ust < p.txt > p.out 2> p.err &
P=$!
pids="$pids $P"
until_ok 30 test -e first || { echo "Bail out! the producer does not start"; cat p.err; exit 1; }
"$TRAWL" print --live "net://$LIVE/session/xp" > v.txt 2> v.err &
V=$!
pids="$pids $V"
# and trawl top, which takes its live URL without --live
"$TRAWL" top -b -d 0.25 "net://$LIVE/session/xp" > top.txt 2> top.err &
V2=$!
pids="$pids $V2"
until_ok 30 has_lines v.txt 10 && until_ok 30 eval '[ "$(grep -c "attached to node/xp$" relay.err)" -ge 2 ]'
ok $? "a relay and two live viewers run (print printed the first events, both are attached)"

# the tids of the relay's and the viewer's threads, as an ERE alternation
tids() { for p in "$@"; do ls "/proc/$p/task"; done | tr '\n' '|' | sed 's/|$//'; }
theirs() { "$TRAWL" print "$1" 2> /dev/null | grep -E "\{ tid = ($2) \}" | grep -c 'syscall_'; }

"$TRAWL" record -o A --host h -k syscalls -d 1 > a.out 2> a.err & R=$!
wait $R
st=$?
if [ $st -ne 0 ]; then
	why=$(head -1 a.err)
	n=0; while [ $n -lt 5 ]; do skip "cannot record kernel events here: $why"; n=$((n + 1)); done
	finish
fi
T=$(tids "$RELAY" "$V" "$V2")
na=$(theirs A "$T")
[ "$na" -gt 0 ]
ok $? "without --exclude-self, the relay's and the viewer's system calls are recorded ($na)"
nself=$("$TRAWL" print A 2> /dev/null | grep -E "\{ tid = $R \}" | grep -c 'syscall_')
[ "$nself" -gt 0 ]
ok $? "... and record's own ($nself)"

"$TRAWL" record -o B --host h -k syscalls -d 1 --exclude-self > b.out 2> b.err & R=$!
wait $R
is "$?" 0 "record --exclude-self"
T=$(tids "$RELAY" "$V" "$V2")
is "$(theirs B "$T")" 0 "with --exclude-self, none of the relay's nor the viewer's system calls"
is "$("$TRAWL" print B 2> /dev/null | grep -E "\{ tid = $R \}" | grep -c 'syscall_')" 0 \
	"... nor record's own"
touch go

"$TRAWL" record -o C --host h --no-ust -- true > c.out 2> c.err
is "$?:$(head -1 c.err)" "0:trawl record: recording the kernel events of the whole machine into C/h/kernel while 'true' runs (only the command's and its children's: --only-command)" \
	"record -- CMD: the first line says it records the whole machine, and how not to"
"$TRAWL" record -o D --host h --no-ust --only-command -- true > d.out 2> d.err
is "$?:$(head -1 d.err)" "0:trawl record: recording kernel events into D/h/kernel while 'true' runs (the command's and its children's only)" \
	"record --only-command -- CMD: the first line says the command's only"
# the command is forked by record: it must not inherit record's exclusion
"$TRAWL" record -o E --host h -k syscalls --no-ust --only-command --exclude-self -- /bin/true \
	> e.out 2> e.err
n=$("$TRAWL" print E 2> /dev/null | grep -c 'syscall_entry_')
[ "$n" -gt 0 ]
ok $? "--exclude-self --only-command -- CMD records the command's system calls ($n)"
finish
