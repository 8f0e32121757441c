#!/bin/sh
# trawl agg --live: aggregations on a relay's live session while it is
# recorded (trawl record --relay of a workload's system calls):
#  - each 1 s interval is printed as it closes, at most one interval
#    after its end (the time each line came, taken by a reader of the
#    output, against the interval's end);
#  - the intervals' counts of getppid under the workload's comm add up to
#    the number it made (it says how many), none left out as late;
#  - --sync (on a second session, recorded alongside: a relay's session
#    has one viewer at a time): a stored correction moving the host 10 s
#    later moves the intervals 10 s later, counts alike;
#  - the viewer ends by itself once the session has ended.
. "$TRAWL_SRC/tests/e2e/lib.sh"
[ "$(id -u)" = 0 ] || skip_all "needs root (kernel recording)"
command -v cc > /dev/null 2>&1 || skip_all "needs a C compiler for the workload"
command -v python3 > /dev/null 2>&1 || skip_all "needs python3 (the line stamper)"
[ -n "$(tracefs_dir)" ] || skip_all "no tracefs"
plan 9

pids=""
cleanup() { for p in $pids; do kill "$p" 2> /dev/null; done; }
trap cleanup EXIT

cat > work.c << 'EOF2'
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
/* waits for "go", then a getppid every 10 ms until "stop"; prints how
 * many; then blocks (no more events) opening the fifo "end" until the
 * test opens it */
int main(void)
{
	struct timespec ts = { 0, 10000000 };
	long n = 0;
	while (access("../go", F_OK))
		nanosleep(&ts, NULL);
	while (access("../stop", F_OK)) {
		syscall(SYS_getppid);
		n++;
		nanosleep(&ts, NULL);
	}
	FILE *f = fopen("n.tmp", "w");
	fprintf(f, "%ld\n", n);
	if (fclose(f) || rename("n.tmp", "n.txt"))
		return 1;
	FILE *e = fopen("end", "r");
	return e ? fclose(e) != 0 : 1;
}
EOF2
mkdir w1 w2 w3
mkfifo w1/end w2/end w3/end
cc -O2 -o aggwork work.c || { echo "Bail out! the workload does not build"; exit 1; }
# each line of the viewer, with the wall time it came at
cat > stamp.py << 'EOF2'
import sys, time
for l in sys.stdin:
    sys.stdout.write("%.3f %s" % (time.time(), l))
    sys.stdout.flush()
EOF2

relay_up OUT

"$TRAWL" record -q --relay "$DATA" --session lv --host n1 -k sched,syscalls --only-command \
	--live-timer 50 -- sh -c 'cd w1 && exec ../aggwork' > rec.out 2> rec.err &
REC=$!
"$TRAWL" record -q --relay "$DATA" --session lv2 --host n1 -k sched,syscalls --only-command \
	--live-timer 50 -- sh -c 'cd w2 && exec ../aggwork' > rec2.out 2> rec2.err &
REC2=$!
"$TRAWL" record -q --relay "$DATA" --session lv3 --host n1 -k sched,syscalls --only-command \
	--live-timer 50 -- sh -c 'cd w3 && exec ../aggwork' > rec3.out 2> rec3.err &
REC3=$!
pids="$pids $REC $REC2 $REC3"
until_ok 60 test -d OUT/lv/n1/kernel || { echo "Bail out! no session at the relay"; cat rec.err; exit 1; }
until_ok 60 test -d OUT/lv2/n1/kernel || { echo "Bail out! no session lv2 at the relay"; cat rec2.err; exit 1; }
until_ok 60 test -d OUT/lv3/n1/kernel || { echo "Bail out! no session lv3 at the relay"; cat rec3.err; exit 1; }

# n1 10 s later, as a stored sync result would say
cat > sync.txt << 'EOF2'
# trawl sync 1
groups 1
host ref t0 0 y0 0 slope 1152921504606846976 quality reference reference ref group 0 hops 0 path ref first 0 last 0 bound_start 0 bound_mid 0 bound_end 0 bound_max 0
host n1 t0 1700000000000000000 y0 1700000010000000000 slope 1152921504606846976 quality accurate reference ref group 0 hops 1 path n1,ref first 0 last 0 bound_start 1000 bound_mid 1000 bound_end 1000 bound_max 1000
EOF2
STMT='count(syscall_entry_getppid) by comm'
(timeout 120 "$TRAWL" agg --live "net://$LIVE/session/lv" -i 1 "$STMT" 2> live.err;
	echo "exit $?" > live.rc) | python3 stamp.py > live.txt &
pids="$pids $!"
(timeout 120 "$TRAWL" agg --live "net://$LIVE/session/lv2" --sync sync.txt -i 1 "$STMT" \
	2> sync.err; echo "exit $?" > sync.rc) > sync.out &
pids="$pids $!"
# trawl analyze, live too: its --interval slices close by the beacons as well
(timeout 120 "$TRAWL" analyze syscalls --live "net://$LIVE/session/lv3" --interval 1 --json \
	2> an.err; echo "exit $?" > an.rc) | python3 stamp.py > an.txt &
pids="$pids $!"
t0=$(date +%s)
touch go
# four intervals with the workload's calls printed while it still runs
calls() { [ "$(grep -c ' aggwork ' live.txt)" -ge "$1" ]; }
# (5: at least three whole intervals while the workload runs)
until_ok 60 calls 5
ok $? "live: intervals with the workload's calls are printed while it runs ($(grep -c '^[0-9.]* -- interval' live.txt) so far)"
touch stop
# the workload is quiet now (blocked opening a fifo): no later event
# closes the interval of its last calls; the beacons (or the clock) must, within one interval
until_ok 30 test -f w1/n.txt
quiet=$(python3 -c 'import time; print("%.3f" % time.time())')
# the interval holding the quiet moment: printed all the same
qend=$(python3 -c "import math; print(math.floor($quiet) + 1)")
until_ok 10 grep -q "interval \[[0-9.]*, $qend\.000)" live.txt
got=$(sed -n "s/^\([0-9.]*\) -- interval \[[0-9.]*, $qend\.000).*/\1/p" live.txt)
python3 -c "import sys; sys.exit(0 if '$got' and float('$got') - $qend < 1.0 else 1)"
ok $? "a quiet session: the interval is closed without a later event (the beacons) within one interval of its end (at +$(python3 -c "print('%.3f' % (float('${got:-0}') - $qend))") s)"
# trawl analyze's slice holding the quiet moment: closed (printed) within
# one interval of its end, with no later event
anq() {
	python3 - "$quiet" << 'EOF2'
import json, sys
q = float(sys.argv[1]) * 1e9
for l in open("an.txt"):
    t, _, j = l.partition(" ")
    try:
        o = json.loads(j)
    except ValueError:
        continue
    if o.get("begin", 0) <= q < o.get("end", 0):
        print("%.3f" % (float(t) - o["end"] / 1e9))
        sys.exit(0)
sys.exit(1)
EOF2
}
until_ok 30 test -f w3/n.txt
until_ok 10 anq > /dev/null
alag=$(anq)
python3 -c "import sys; sys.exit(0 if '$alag' and float('$alag') < 1.0 else 1)"
ok $? "a quiet session: trawl analyze --interval closes its slice without a later event within one interval of its end (at +${alag:-never} s)"
echo > w1/end &
echo > w2/end &
echo > w3/end &
until_ok 60 gone "$REC" && until_ok 60 gone "$REC2" && until_ok 60 gone "$REC3"
until_ok 60 test -f live.rc && until_ok 60 test -f sync.rc && until_ok 60 test -f an.rc
is "$(cat live.rc 2> /dev/null):$(cat sync.rc 2> /dev/null):$(cat an.rc 2> /dev/null)" \
	"exit 0:exit 0:exit 0" \
	"the three viewers (agg, agg --sync, analyze) end by themselves (exit 0) once the session has ended"
# lag: when each interval's line came, after its end; those that ended
# after the viewer began (the earlier ones are read at once on attaching)
# and before the last
python3 - live.txt "$t0" > lag.txt << 'EOF2'
import re, sys
t0 = float(sys.argv[2]) + 1
lags = []
for l in open(sys.argv[1]):
    m = re.match(r"([0-9.]+) -- interval \[([0-9.]+), ([0-9.]+)\)", l)
    if m and float(m.group(3)) > t0:
        lags.append(float(m.group(1)) - float(m.group(3)))
lags = lags[:-1]  # the last: closed when the session ended, before its end
print(len(lags), "%.3f" % max(lags) if lags else "none", "%.3f" % min(lags) if lags else "none")
EOF2
read nlag maxlag minlag < lag.txt
python3 -c "import sys; sys.exit(0 if $nlag >= 3 and $maxlag < 1.0 and $minlag >= 0 else 1)" 2> /dev/null
ok $? "each 1 s interval printed within one interval after its end ($nlag intervals, lag $minlag .. $maxlag s; taken on a loaded machine)"
n=$(cat w1/n.txt)
n2=$(cat w2/n.txt)
sum=$(awk '$2 == "aggwork" { s += $3 } END { print s + 0 }' live.txt)
is "$sum" "$n" "the intervals' counts of aggwork's getppid add up to the $n it made"
grep -q 'came after' live.err
is "$?" 1 "none left out as late"
# --sync: same counts, intervals 10 s later
ssum=$(awk '$1 == "aggwork" { s += $2 } END { print s + 0 }' sync.out)
is "$ssum" "$n2" "--sync on a live session: its workload's $n2 calls"
python3 - live.txt sync.out > shift.txt << 'EOF2'
import re, sys
def firsts(path, stamped):
    out = []
    for l in open(path):
        m = re.search(r"-- interval \[([0-9.]+),", l)
        if m:
            cur = float(m.group(1))
        elif re.search(r" aggwork ", " " + l if not stamped else l):
            out.append(cur)
    return out
a, b = firsts(sys.argv[1], True), firsts(sys.argv[2], False)
# both workloads began at the same "go": 10 s apart, give or take the
# interval where a boundary fell between their first calls
print("10" if a and b and abs(b[0] - a[0] - 10) <= 1 else "%s %s" % (a[:1], b[:1]))
EOF2
is "$(cat shift.txt)" 10 "... its first interval with the workload's calls is 10 s later"
finish
