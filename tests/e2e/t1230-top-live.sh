#!/bin/sh
# trawl top -b on a live relay session (trawl record --relay of top-work.c,
# --only-command: its caller makes exactly N getppid calls):
#  - snapshots come while the workload runs, each host line with its data
#    age (now minus its newest event), under 5 s;
#  - the workload then goes quiet (it blocks opening a fifo, no event): the
#    intervals of its last calls are closed all the same (the beacons,
#    through the sink's idle()), and the intervals' getppid counts add up
#    to its N calls, exactly, before the session ends;
#  - top ends by itself (exit 0) once the session has ended;
#  - a node that vanishes (a second session of two hosts, n2's recording
#    ends after 1 s while n1's goes on): n2 is marked down (quiet for more
#    than 5 s and 3 intervals) while n1 is not, and n2 has no rows then.
. "$TRAWL_SRC/tests/e2e/lib.sh"
[ "$(id -u)" = 0 ] || skip_all "needs root (kernel recording)"
[ -n "$(tracefs_dir)" ] || skip_all "no tracefs"
command -v cc > /dev/null 2>&1 || skip_all "needs a C compiler for the workload"
command -v python3 > /dev/null 2>&1 || skip_all "needs python3 (the line stamper)"
cc -O2 -pthread -o top-work "$TRAWL_SRC/tests/e2e/top-work.c" || skip_all "cannot build the workload"
plan 7

pids=""
cleanup() { for p in $pids; do kill "$p" 2> /dev/null; done; }
trap cleanup EXIT
mkfifo end
cat > stamp.py << 'EOF2'
import sys, time
for l in sys.stdin:
    sys.stdout.write("%.3f %s" % (time.time(), l))
    sys.stdout.flush()
EOF2
relay_up OUT
N=200
"$TRAWL" record -q --relay "$DATA" --session tp --host n1 -k sched,syscalls --only-command \
	--live-timer 50 -- ./top-work 2 $N 5000 go end > work.out 2> rec.err &
REC=$!
pids="$pids $REC"
until_ok 60 test -d OUT/tp/n1/kernel || { echo "Bail out! no session at the relay"; cat rec.err; exit 1; }
(timeout 120 "$TRAWL" top -b --json -d 1 --view syscalls "net://$LIVE/session/tp" 2> top.err;
	echo "exit $?" > top.rc) | python3 stamp.py > top.txt &
pids="$pids $!"
touch go
until_ok 60 grep -q '^burner ' work.out
running=$(python3 -c 'import time; print(time.time())')
# snapshots while it ran, host lines with their data age
python3 - top.txt "$running" > age.txt << 'EOF2'
import json, sys
n, ages = 0, []
for l in open(sys.argv[1]):
    t, _, j = l.partition(" ")
    o = json.loads(j)
    if o["type"] == "host" and float(t) <= float(sys.argv[2]):
        n += 1
        if o["age_ns"] is not None:
            ages.append(o["age_ns"] / 1e9)
print(n, len(ages), "%.3f" % max(ages) if ages else "none")
EOF2
read -r nh nage maxage < age.txt
ok $([ "$nh" -ge 2 ]; echo $?) "two snapshots or more while the workload runs (2 s) ($nh host lines)"
python3 -c "import sys; sys.exit(0 if $nage == $nh and $nage > 0 and $maxage < 5 else 1)" 2> /dev/null
ok $? "each host line has its data age, under 5 s (at most $maxage s)"
# quiet now: the intervals of its last calls close without a later event
count() {
	python3 -c "
import json, sys
s = 0
for l in open('top.txt'):
    o = json.loads(l.partition(' ')[2])
    if o['type'] == 'row' and o['name'] == 'getppid':
        s += o['count']
print(s)"
}
full() { [ "$(count)" = "$N" ]; }
until_ok 15 full
ok $? "quiet: the intervals' getppid counts add up to the $N calls ($(count)), before the session ends"
! gone "$REC"
ok $? "... while the workload still runs, quiet (the session not ended)"
echo > end &
until_ok 60 gone "$REC"
until_ok 60 test -f top.rc
is "$(cat top.rc 2> /dev/null)" "exit 0" "top ends by itself (exit 0) once the session has ended"

# a node that vanishes
"$TRAWL" record -q --relay "$DATA" --session tq --host n1 -k sched,syscalls --only-command \
	--live-timer 50 -- ./top-work 12 1200 10000 > work1.out 2> rec1.err &
R1=$!
"$TRAWL" record -q --relay "$DATA" --session tq --host n2 -k sched,syscalls --only-command \
	--live-timer 50 -- sh -c 'for i in 1 2 3 4 5 6 7 8 9 10; do sleep 0.1; done' > work2.out 2> rec2.err &
R2=$!
pids="$pids $R1 $R2"
until_ok 60 test -d OUT/tq/n1/kernel && until_ok 60 test -d OUT/tq/n2/kernel ||
	{ echo "Bail out! no session tq at the relay"; cat rec1.err rec2.err; exit 1; }
(timeout 120 "$TRAWL" top -b --json -d 0.5 "net://$LIVE/session/tq" 2> tq.err;
	echo "exit $?" > tq.rc) > tq.json &
pids="$pids $!"
down() {
	python3 - tq.json << 'EOF2'
import json, sys
hosts, rows = {}, {}
for l in open(sys.argv[1]):
    try:
        o = json.loads(l)
    except ValueError:
        continue
    if o["type"] == "host":
        hosts.setdefault(o["interval"], {})[o["host"]] = o.get("down")
    else:
        rows.setdefault(o["interval"], set()).add(o["host"])
for i in sorted(hosts):
    h = hosts[i]
    if h.get("n2") is True and h.get("n1") is False:
        print(i, "n2" in rows.get(i, set()))
        sys.exit(0)
sys.exit(1)
EOF2
}
until_ok 40 down > down.txt
ok $? "a node gone (n2's recording ended): marked down while n1 is not (interval $(cut -d' ' -f1 down.txt))"
is "$(cut -d' ' -f2 down.txt)" False "... and it has no rows then"
finish
