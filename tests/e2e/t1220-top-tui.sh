#!/bin/sh
# trawl top's full-screen mode, driven through tmux (a server of its own):
# keys sent, the screen captured, and each key's effect checked on it:
#  - a session directory replays at trace time: one interval per refresh
#    (-d 0.25: the intervals' numbers go up, the last shown no sooner than
#    the intervals' count x 0.25 s), then "(end of trace)";
#  - 5: the syscalls view (its columns, syscall rows); g: grouped (host *);
#    1 then c: grouped by cgroup (one row "-": a simulated session has none);
#    1 then t: the CPU view per thread (tids shown); >: the sort column
#    moves; /nginx: only nginx rows; left: one interval back, paused;
#    right: forward; p: pause off and on; Enter: host, process (its threads only), its samples;
#    Backspace: up; a resize: redrawn at the new size; q: exits (status 0).
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v tmux > /dev/null 2>&1 || skip_all "needs tmux"
command -v python3 > /dev/null 2>&1 || skip_all "needs python3"
plan 17

"$TRAWL" simulate -q -o sim -n 3 -c 2 -e 200000 > sim.log 2>&1 || { echo "Bail out! simulate"; exit 1; }
NINT=$("$TRAWL" top -b -d 0.25 --json sim 2> /dev/null | python3 -c "
import json, sys
print(len({json.loads(l)['interval'] for l in sys.stdin}))")
SOCK="trawl-t1220-$$"
tm() { tmux -L "$SOCK" "$@"; }
cleanup() { tm kill-server 2> /dev/null; }
trap cleanup EXIT
screen() { tm capture-pane -p -t top > screen.txt; }
has() { screen; grep -q -- "$1" screen.txt; }
# the screen's title line (the first)
title() { screen; head -1 screen.txt; }
t0=$(python3 -c 'import time; print(time.time())')
tm new-session -d -s top -x 150 -y 40 \
	"TERM=xterm '$TRAWL' top -d 0.25 sim 2> top.err; echo \$? > top.rc; sleep 60"
seen=""
end_ok=1
for i in $(seq 1 200); do
	screen
	k=$(sed -n '1s/.*) #\([0-9]*\).*/\1/p' screen.txt)
	[ -n "$k" ] && case " $seen " in *" $k "*) ;; *) seen="$seen $k";; esac
	if grep -q 'end of trace' screen.txt; then end_ok=0; break; fi
	sleep 0.05
done
t1=$(python3 -c 'import time; print(time.time())')
ok $end_ok "the replay ends on its last interval: (end of trace)"
python3 -c "
import sys
s = [int(x) for x in '$seen'.split()]
sys.exit(0 if len(s) >= 2 and s == sorted(s) and s[-1] == $NINT - 1 and $t1 - $t0 >= 0.25 * ($NINT - 1) else 1)"
ok $? "replayed at trace time: intervals shown in order ($seen of $NINT) over $(python3 -c "print('%.2f' % ($t1 - $t0))") s (one per 0.25 s refresh)"
has 'host0 .* ev/s' && has 'host1 .* ev/s' && has 'host2 .* ev/s' && has 'CPU%'
ok $? "a header line per host, the CPU view's columns"

tm send-keys -t top 5
until_ok 5 has 'COUNTv'
ok $? "5: the syscalls view, sorted by count"
grep -Eq '^host[0-9] +- +- +(read|write) ' screen.txt
ok $? "... its rows are syscalls per host"
tm send-keys -t top g
until_ok 5 has grouped
grep -Eq '^\* +- +- +(read|write) ' screen.txt && ! grep -Eq '^host[0-9] +- +- +(read|write)' screen.txt
ok $? "g: grouped: the rows are summed across hosts (host *)"
# c: by cgroup (a simulated session has no state dump: every process's
# cgroup is unknown, "-": one row); the syscalls stay grouped by name
tm send-keys -t top 1 c
until_ok 5 has 'grouped by cgroup'
until_ok 5 sh -c 'tmux -L "$0" capture-pane -p -t top | grep -Eq "^\* +- +- +- "' "$SOCK" &&
	[ "$(grep -Ec '^\* ' screen.txt)" = 1 ]
ok $? "1 then c: the CPU view grouped by cgroup: one row, - (no cgroup known)"
tm send-keys -t top c g 1 t
until_ok 5 has 'CPU%v'
# per thread: the TID column has numbers
until_ok 5 sh -c 'tmux -L "$0" capture-pane -p -t top | grep -Eq "^host[0-9] +[0-9]+ +[0-9]+ "' "$SOCK"
ok $? "1 then t: the CPU view per thread (tids)"
tm send-keys -t top '>'
until_ok 5 has 'SUM_usv'
ok $? ">: sorted by the next column (SUM_us)"
tm send-keys -t top / n g i n x Enter
until_ok 5 has 'filter: nginx'
screen
rows=$(grep -Ec '^host[0-9] +[0-9]+ +[0-9]+ ' screen.txt)
nginx=$(grep -Ec '^host[0-9] +[0-9]+ +[0-9]+ nginx ' screen.txt)
ok $([ "$rows" -gt 0 ] && [ "$rows" = "$nginx" ]; echo $?) "/nginx: only nginx's rows ($nginx of $rows)"
last=$(title | sed -n 's/.*) #\([0-9]*\).*/\1/p')
tm send-keys -t top Left
until_ok 5 has PAUSED
is "$(title | sed -n 's/.*) #\([0-9]*\).*/\1/p')" "$((last - 1))" "left: one interval back (#$((last - 1))), paused"
tm send-keys -t top Right
until_ok 5 sh -c 'tmux -L "$0" capture-pane -p -t top | head -1 | grep -q ") #$1 "' "$SOCK" "$last"
ok $? "right: one interval forward (#$last)"
tm send-keys -t top p
until_ok 5 sh -c '! tmux -L "$0" capture-pane -p -t top | head -1 | grep -q PAUSED' "$SOCK"
p1=$?
tm send-keys -t top p
until_ok 5 has PAUSED
p2=$?
ok $([ $p1 = 0 ] && [ $p2 = 0 ]; echo $?) "p: follows the newest (PAUSED gone), p again: paused"
# drill down: the first row's host, then its process's threads, then samples
tm send-keys -t top / Enter
until_ok 5 sh -c '! tmux -L "$0" capture-pane -p -t top | grep -q "filter: nginx"' "$SOCK"
tm send-keys -t top Enter
until_ok 5 has ' host$'
screen
hosts=$(grep -E '^host[0-9] +[0-9]+ +[0-9]+ ' screen.txt | awk '{ print $1 }' | sort -u | wc -l)
is "$hosts" 1 "Enter: one host's rows"
pid=$(grep -E '^host[0-9] +[0-9]+ +[0-9]+ ' screen.txt | head -1 | awk '{ print $2 }')
tm send-keys -t top Enter
until_ok 5 has ' process$'
screen
pids=$(grep -E '^host[0-9] +[0-9]+ +[0-9]+ ' screen.txt | awk '{ print $2 }' | sort -u | tr '\n' ' ')
tm send-keys -t top Enter
until_ok 5 has 'WHAT'
samples=$?
tm send-keys -t top BSpace
until_ok 5 has ' process$'
ok $([ "$pids" = "$pid " ] && [ $samples = 0 ] && has ' process$'; echo $?) "Enter again: process $pid's threads only ($pids), then its samples; Backspace: back up"
tm resize-window -t top -x 100 -y 30 2> /dev/null || tm resize-pane -t top -x 100 -y 30
until_ok 5 sh -c 'tmux -L "$0" capture-pane -p -t top | sed -n 30p | grep -q "q quit"' "$SOCK"
ok $? "a resize: redrawn at the new size (the key line on row 30)"
tm send-keys -t top q
until_ok 10 test -s top.rc
is "$(cat top.rc 2> /dev/null):$(cat top.err 2> /dev/null)" "0:" "q: exits, status 0, nothing on stderr"
finish
