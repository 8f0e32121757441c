#!/bin/sh
# trawl state: the state system on a real kernel recording (`trawl record
# -k sched,syscalls,irq,block`), against a workload whose answers are known.
# A helper opened FILE before the recording (so its path comes from the
# state dump), then, once the recorded command tells it to, writes 8192
# bytes to it and sleeps 10 ms in clock_nanosleep, measuring the sleep
# itself with CLOCK_MONOTONIC.
#  - at the middle of the sleep the helper is blocked in clock_nanosleep;
#    it was blocked from its switch out (S) to its wake-up (W):
#    W - entry >= 10 ms (the timer is armed after the entry), W - S <= the
#    sleep the helper measured around the call (it encloses the call), and
#    entry <= S;
#  - at the end of the recording its fd shows the path (the state dump's:
#    the helper stays alive, its file open, until the recording ended) and
#    8192 bytes written in one write, and the changes that built it hold
#    that write;
#  - live: `trawl state --live` follows a relay's session while it is
#    recorded (loopback) and ends with it; its state at the newest event
#    equals the one `trawl state` gives on the relay's stored files;
#  - the usage: --help, no --at (exit 2), an unknown tid (exit 1).
. "$TRAWL_SRC/tests/e2e/lib.sh"
[ "$(id -u)" = 0 ] || skip_all "needs root (tracefs instances)"
[ "$(stat -L -c %i /proc/self/ns/pid 2>/dev/null)" = 4026531836 ] ||
	skip_all "runs in a pid namespace other than the initial one: kernel events name tasks by pids it does not see"
command -v cc >/dev/null 2>&1 || skip_all "needs a C compiler for the workload program"
command -v python3 >/dev/null 2>&1 || skip_all "needs python3 to read the JSON"
plan 17

cat > helper.c <<'EOF'
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long long ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv)	/* FILE GO-FIFO DONE-FIFO OUT QUIT-FIFO */
{
	static char buf[8192];
	struct timespec req = { 0, 10000000 };
	char c;
	if (argc != 6)
		return 2;
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	FILE *o = fopen(argv[4], "w");
	if (fd < 0 || !o)
		return 1;
	fprintf(o, "pid %d fd %d\n", getpid(), fd);
	fflush(o);
	printf("ready\n");
	fflush(stdout);
	int g = open(argv[2], O_RDONLY);
	if (g < 0 || read(g, &c, 1) != 1)
		return 1;
	memset(buf, 'x', sizeof(buf));
	if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
		return 1;
	long long a = ns();
	clock_nanosleep(CLOCK_MONOTONIC, 0, &req, NULL);
	long long b = ns();
	fprintf(o, "slept %lld\n", b - a);
	fclose(o);
	int d = open(argv[3], O_WRONLY);
	if (d < 0 || write(d, "d\n", 2) != 2)
		return 1;
	close(d);
	/* alive, its file open, until the recording (and its state dump) ended */
	int q = open(argv[5], O_RDONLY);
	return q < 0 || read(q, &c, 1) != 1;
}
EOF
cc -O2 -o helper helper.c || { echo "Bail out! cannot build the helper"; exit 1; }

mkfifo go done ready quit
FILE="$PWD/test-file"
./helper "$FILE" go done out quit > ready &
HPID=$!
pids=$HPID
trap 'for p in $pids; do kill $p 2>/dev/null; done' EXIT
timeout 20 sh -c 'read l < ready' || { echo "Bail out! the helper did not start"; exit 1; }
timeout 60 "$TRAWL" record -q -o s -k sched,syscalls,irq,block -- \
	sh -c 'echo g > go; cat done > /dev/null' > rec.log 2>&1
ok $? "recorded the workload"
echo q > quit
wait $HPID
ok $? "the helper wrote and slept"
pid=$(awk '/^pid/ { print $2 }' out); fd=$(awk '/^pid/ { print $4 }' out)
slept=$(awk '/^slept/ { print $2 }' out)

# the helper's clock_nanosleep, entry and exit, as recorded
"$TRAWL" print -f json s > all.json
python3 - "$pid" > sleep.txt <<'EOF'
import json, sys
tid = int(sys.argv[1]); entry = exit_ = None; last = 0
for line in open("all.json"):
    e = json.loads(line)
    last = max(last, e["ts"])
    if e["context"].get("tid") != tid:
        continue
    if e["event"] == "syscall_entry_clock_nanosleep" and entry is None:
        entry = e["ts"]
    elif e["event"] == "syscall_exit_clock_nanosleep" and entry is not None and exit_ is None:
        exit_ = e["ts"]
print(entry, exit_, last)
EOF
read entry exit_ last < sleep.txt
[ "$entry" != None ] && [ "$exit_" != None ]
ok $? "the sleep's entry and exit are in the trace ($entry $exit_)"

mid=$((entry + 5000000))
"$TRAWL" state s --at "$mid" --tid "$pid" --json > mid.json
ok $? "trawl state --at the middle of the sleep"
python3 - "$entry" > mid.txt <<'EOF'
import json, sys
j = json.load(open("mid.json"))
print(j["status"], j.get("syscall"), j.get("syscall_since"), j.get("since"))
EOF
read status sc sc_since since < mid.txt
is "$status $sc $sc_since" "blocked clock_nanosleep $entry" "blocked in clock_nanosleep, entered at its entry"

"$TRAWL" state s --at "$exit_" --tid "$pid" -n 0 --json > end.json
python3 - "$since" > wake.txt <<'EOF'
import json, sys
S = int(sys.argv[1])
w = [c["ts"] for c in json.load(open("end.json"))["changes"] if c["kind"] == "wakeup" and c["ts"] >= S]
print(w[0] if w else "None")
EOF
read wake < wake.txt
[ "$wake" != None ] && [ "$since" -ge "$entry" ] && [ $((wake - entry)) -ge 10000000 ] &&
	[ $((wake - since)) -le "$slept" ]
ok $? "blocked $((wake - since)) ns: woken $((wake - entry)) ns after the entry (>= 10 ms), within the $slept ns the helper measured"

# at the end: the state dump (written while the workload ran) has given
# the path of the fd the helper opened before the recording
"$TRAWL" state s --at "$last" --fd "$fd" --pid "$pid" --json > fd.json
ok $? "trawl state --fd"
python3 > fd.txt <<'EOF'
import json
j = json.load(open("fd.json"))
w = [c for c in j["changes"] if c["kind"] == "write"]
print(j["path"], j["bytes_written"], j["writes"], len(w), w[0]["what"].split()[2] if w else None)
EOF
is "$(cat fd.txt)" "$FILE 8192 1 1 8192" "fd $fd: its path (state dump), 8192 bytes in one write, that write among its changes"

"$TRAWL" state s --at "$last" --fd "$fd" --pid "$pid" > fd-text.txt
grep -q "^fd $fd of pid $pid <$FILE> opened before the trace, 0 bytes read (0 reads), 8192 bytes written (1 writes)" fd-text.txt
ok $? "the same as text"

"$TRAWL" state --help | grep -q "^usage: trawl state"
ok $? "--help"
"$TRAWL" state s > /dev/null 2> usage.err
is $? 2 "no --at: a usage error"
"$TRAWL" state s --at "$mid" --tid 999999999 > /dev/null 2> tid.err
is "$?:$(cat tid.err)" "1:trawl state: tid 999999999: no such thread then" "an unknown thread: an error in trawl's voice"

# live, through a relay on loopback
"$TRAWL" relay -o OUT --data 127.0.0.1:0 --live 127.0.0.1:0 --foreground --ready-fd 3 \
	3> relay-ready.txt 2> relay.err &
pids="$pids $!"
rready() { grep -Eq '^ready 127\.0\.0\.1:[1-9][0-9]* 127\.0\.0\.1:[1-9][0-9]*$' relay-ready.txt; }
until_ok 30 rready || { echo "Bail out! the relay is not ready"; cat relay.err; exit 1; }
DATA=$(sed -n 's/^ready \([^ ]*\) \([^ ]*\)$/\1/p' relay-ready.txt)
LIVE=$(sed -n 's/^ready \([^ ]*\) \([^ ]*\)$/\2/p' relay-ready.txt)
mkfifo gate
# the workload ends only once the viewer follows the session (the gate)
"$TRAWL" record -q --relay "$DATA" --session st -k sched,syscalls -- \
	sh -c "dd if=/dev/zero of='$PWD/live-file' bs=8192 count=1 status=none; cat gate > /dev/null" \
	> lrec.log 2>&1 &
LREC=$!
pids="$pids $LREC"
# until the session is listed, the viewer fails at once ("no such live
# session"); one that neither follows nor fails in 10 s is stopped before
# the next try (two would write live.json)
follow() {
	"$TRAWL" state --live "net://$LIVE/session/st" --json > live.json 2> live.err &
	LV=$!
	until_ok 10 eval 'grep -q following live.err || gone "$LV"'
	grep -q following live.err && return 0
	kill "$LV" 2> /dev/null
	wait "$LV" 2> /dev/null
	return 1
}
until_ok 30 follow
ok $? "trawl state --live follows the session while it is recorded"
echo open > gate
wait $LREC
ok $? "the recording ended"
until_ok 30 gone "$LV"
wait $LV
ok $? "the live state ended with the session"
at=$(python3 -c 'import json; print(json.load(open("live.json"))["at"])')
lastf=$("$TRAWL" print -f json OUT/st | python3 -c 'import json, sys; print(max(json.loads(l)["ts"] for l in sys.stdin))')
is "$at" "$lastf" "the live state is at the session's last event"
"$TRAWL" state OUT/st --at "$at" --json > files.json
# (when the recording lost events, both name the lossy streams: the live
# viewer by the relay's session path, st/..., the files by theirs,
# OUT/st/...; the counts and ranges must be the same)
sed 's|"OUT/st/|"st/|g' files.json > files-rel.json
cmp_files live.json files-rel.json "the same state at the newest event from the relay's files"
finish
