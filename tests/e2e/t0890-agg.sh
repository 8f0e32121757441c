#!/bin/sh
# trawl agg on a real kernel recording (sched and syscalls of a workload
# built here, alone: 40 sleeps of 3 ms, 30 getppid), checked against the events
# as `trawl print` shows them (the oracle: the same events counted and
# paired per tid by a short script):
#  - count(syscall_entry_*) equals `trawl print | grep -c syscall_entry_`,
#    and by event equals the per-name counts;
#  - count by comm: the workload's 30 getppid under its comm (from
#    sched_switch / exec, not in the events themselves); by cgroup: the
#    cgroup of the shell it descends from (state dump, forks);
#  - stats and hist of lat(entry, exit) of clock_nanosleep: the count,
#    sum, min, max and every log2 bucket equal the script's pairs; each
#    sleep lasted at least 3 ms;
#  - heatmap --svg: one rect per non-empty cell of the script's own
#    columns and buckets, a label per bucket row, the axes' titles;
#  - --interval: the intervals' counts add up to the total;
#  - --json: one object per report, its rows, figures, histogram buckets
#    (with their bounds) and heat map cells equal the text output's (and
#    the script's pairs); with --interval one object per interval, its
#    begin and end as the text's, the counts adding up to the total;
#  - a bad statement: exit 2 and the column.
. "$TRAWL_SRC/tests/e2e/lib.sh"
[ "$(id -u)" = 0 ] || skip_all "needs root (kernel recording)"
[ "$(stat -L -c %i /proc/self/ns/pid 2>/dev/null)" = 4026531836 ] ||
	skip_all "runs in a pid namespace other than the initial one: kernel events name tasks by pids it does not see"
command -v cc > /dev/null 2>&1 || skip_all "needs a C compiler for the workload program"
command -v python3 > /dev/null 2>&1 || skip_all "needs python3 (the oracle script)"
[ -n "$(tracefs_dir)" ] || skip_all "no tracefs"
plan 19

cat > aggwork.c << 'EOF2'
#define _GNU_SOURCE
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
int main(void)
{
	struct timespec ts = { 0, 3000000 };
	for (int i = 0; i < 40; i++)
		clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
	for (int i = 0; i < 30; i++)
		syscall(SYS_getppid);
	return 0;
}
EOF2
cc -O2 -o aggwork aggwork.c || { echo "Bail out! the workload does not build"; exit 1; }
"$TRAWL" record -q -o S -k sched,syscalls --only-command -- ./aggwork > rec.out 2> rec.err
rc=$?
[ $rc -eq 0 ] || { sed 's/^/# /' rec.err; echo "Bail out! record failed"; exit 1; }
"$TRAWL" print -f json S > ev.json 2> print.err
# a loaded machine may make the kernel discard events: the workload's own
# figures are then not whole (the checks against trawl print still hold)
lost=$("$TRAWL" info S 2> /dev/null | sed -n 's/^total: .* \([0-9]*\) discarded.*/\1/p')

"$TRAWL" agg 'count(syscall_entry_*)' S > all.txt 2> all.err
want=$("$TRAWL" print S | grep -c ' syscall_entry_')
is "$(awk 'NR == 3 { print $1 }' all.txt)" "$want" "count(syscall_entry_*) = trawl print | grep -c syscall_entry_ ($want)"

"$TRAWL" agg 'count(syscall_entry_*) by event' S | awk 'NR > 2 && NF == 2 { print $1, $2 }' | sort > by-event.txt
"$TRAWL" print S | sed -n 's/.* \(syscall_entry_[a-z0-9_]*\): .*/\1/p' | sort | uniq -c |
	awk '{ print $2, $1 }' > want-event.txt
cmp_files by-event.txt want-event.txt "count by event = the per-name counts of trawl print"

"$TRAWL" agg 'count(syscall_entry_getppid) by comm' S > ppid.txt
if [ "$lost" = 0 ]; then
	is "$(awk '$1 == "aggwork" { print $2 }' ppid.txt)" 30 "count(syscall_entry_getppid) by comm: aggwork made 30"
else
	skip "the kernel discarded $lost events (a loaded machine): aggwork's 30 getppid may not all be there"
fi

# cgroup: the state dump's, inherited through the forks (the cgroup v2
# path of this shell, which aggwork descends from)
cg=$(sed -n 's/^0:://p' /proc/$$/cgroup 2> /dev/null)
"$TRAWL" agg 'count(syscall_entry_getppid) by comm, cgroup' S | awk '$1 == "aggwork" { print $2 }' > cg.txt
if [ -n "$cg" ]; then
	is "$(cat cg.txt)" "$cg" "count by comm, cgroup: aggwork in this shell's cgroup ($cg)"
else
	skip "no cgroup v2 line in /proc/self/cgroup"
fi

# the oracle: pairs of entry and exit of clock_nanosleep per tid, from the JSON
python3 - ev.json > oracle.txt << 'EOF2'
import json, sys
pend, lats, ts = {}, [], []
for l in open(sys.argv[1]):
    e = json.loads(l)
    n, tid = e["event"], e["context"].get("tid")
    if n.startswith("syscall_entry_"):
        pend[tid] = (n[14:], e["ts"])
    elif n.startswith("syscall_exit_"):
        p = pend.pop(tid, None)
        if p and p[0] == n[13:] and p[0] == "clock_nanosleep":
            lats.append(e["ts"] - p[1])
            ts.append(e["ts"])
b = {}
for v in lats:
    k = v.bit_length() - 1 if v > 0 else -1
    b[k] = b.get(k, 0) + 1
print("stats", len(lats), sum(lats), min(lats), max(lats))
print("hist", " ".join("%d:%d" % (1 << k, b[k]) for k in sorted(b)))
# the heat map's columns: 1 ms, doubled until at most 120 across the span
w = 1000000
while (max(ts) - (min(ts) - min(ts) % w)) // w >= 120:
    w *= 2
t0 = min(ts) - min(ts) % 1000000
cells = set(((t - t0) // w, v.bit_length()) for t, v in zip(ts, lats))
print("heat", len(cells), max(v.bit_length() for v in lats) - min(v.bit_length() for v in lats) + 1)
EOF2
[ -s oracle.txt ] || { echo "Bail out! the oracle script failed"; exit 1; }
"$TRAWL" agg 'stats(lat(syscall_entry_*, syscall_exit_*)) by event' S > stats.txt
got=$(awk '$1 == "syscall_entry_clock_nanosleep" { printf "stats %s %s %s %s", $2, $3, $4, $6 }' stats.txt)
is "$got" "$(sed -n 's/^stats //p' oracle.txt | sed 's/^/stats /')" \
	"stats(lat) of clock_nanosleep: count, sum, min, max equal the script's pairs"
n=$(sed -n 's/^stats \([0-9]*\) .*/\1/p' oracle.txt)
"$TRAWL" agg 'stats(lat(syscall_entry_clock_nanosleep, syscall_exit_clock_nanosleep)) by comm' S |
	awk '$1 == "aggwork" { print $2, $4 }' > mine.txt
read cnt min < mine.txt
if [ "$lost" = 0 ]; then
	[ "$cnt" = 40 ] && [ "$min" -ge 3000000 ]
	ok $? "... by comm: aggwork's 40 sleeps, each at least 3 ms ($(cat mine.txt))"
else
	skip "the kernel discarded $lost events (a loaded machine): aggwork's 40 sleeps may not all be there"
fi

"$TRAWL" agg 'hist(lat(syscall_entry_clock_nanosleep, syscall_exit_clock_nanosleep))' S > hist.txt
# "[2M, 4M)   40 |@@@|": the low bound in bytes-like units back to ns
got=$(awk '/^\[/ && $3 != 0 { l = $1; sub(/^\[/, "", l); sub(/,$/, "", l); m = 1
	if (l ~ /K$/) m = 1024; if (l ~ /M$/) m = 1048576; if (l ~ /G$/) m = 1073741824
	sub(/[KMG]$/, "", l); printf "%s%d:%s", sep, l * m, $3; sep = " " }' hist.txt)
is "$got" "$(sed -n 's/^hist //p' oracle.txt)" "hist(lat): every log2 bucket equals the script's"

"$TRAWL" agg 'heatmap(lat(syscall_entry_clock_nanosleep, syscall_exit_clock_nanosleep))' \
	--svg heat.svg S > heat.txt 2> heat.err
is "$?" 0 "heatmap --svg: exit 0"
cells=$(grep -c 'class="cell"' heat.svg)
rows=$(grep -c 'class="ylabel"' heat.svg)
is "heat $cells $rows" "$(grep '^heat ' oracle.txt)" "the SVG: one rect per non-empty cell, one label per bucket row"
grep -q 'class="axis"[^>]*>latency' heat.svg && grep -q '>time from ' heat.svg &&
	[ "$(grep -c 'class="swatch"' heat.svg)" = 6 ] && grep -q '</svg>' heat.svg
ok $? "the SVG: both axes titled, a legend of 6 swatches, well closed"
lines_=$(grep -c '^[0-9][0-9]:[0-9][0-9]:' heat.txt)
[ "$lines_" -ge 1 ] && grep -q 'log2 buckets' heat.txt
ok $? "heatmap in the terminal: a line per column ($lines_), a header"
tot=$(awk '/^[0-9][0-9]:/ { s += $NF } END { print s }' heat.txt)
is "$tot" "$n" "... its lines' totals add up to the pairs ($n)"

"$TRAWL" agg -i 0.01 'count(syscall_entry_*)' S > iv.txt
sum=$(awk '/^-- interval/ { getline; getline; getline; if ($1 ~ /^[0-9]+$/) s += $1 } END { print s }' iv.txt)
is "$sum" "$want" "--interval 0.01: the intervals' counts add up to the total"
[ "$(grep -c '^-- interval' iv.txt)" -ge 2 ]
ok $? "... in several intervals ($(grep -c '^-- interval' iv.txt))"

# ---- --json: the text output's figures, object by object
SPEC='count(syscall_entry_*) by event; stats(lat(syscall_entry_*, syscall_exit_*)) by event; sum(syscall_exit_read.ret) by tid top 5; hist(lat(syscall_entry_clock_nanosleep, syscall_exit_clock_nanosleep)); lhist(sched_switch.prev_prio, 0, 140, 10); heatmap(lat(syscall_entry_clock_nanosleep, syscall_exit_clock_nanosleep))'
"$TRAWL" agg "$SPEC" S > j.txt 2> j.err && "$TRAWL" agg --json "$SPEC" S > j.json 2>> j.err
ok $? "agg --json: exit 0 ($(head -c 200 j.err))"
python3 "$TRAWL_SRC/tests/e2e/aggjson.py" report j.txt j.json oracle.txt > j.cmp 2>&1
case "$(tail -1 j.cmp)" in same*) true ;; *) false ;; esac
ok $? "--json: the rows, figures, buckets and heat map cells of the text output ($(tail -1 j.cmp))"

"$TRAWL" agg -i 0.01 --json 'count(syscall_entry_*)' S > iv.json
python3 "$TRAWL_SRC/tests/e2e/aggjson.py" intervals iv.txt iv.json "$want" > iv.cmp 2>&1
case "$(tail -1 iv.cmp)" in same*) true ;; *) false ;; esac
ok $? "--interval 0.01 --json: an object per interval, begin and end as the text's, counts adding up to $want ($(tail -1 iv.cmp))"

"$TRAWL" agg --json 'hist(syscall_exit_read.ret); lhist(sched_switch.prev_prio, 0, 20, 10)' S > b.json
python3 -c '
import json, sys
a = json.load(open("b.json"))["aggregations"]
ok = all((x["low"] is None or x["high"] is None or x["low"] < x["high"]) for g in a for r in g["rows"] for x in r["buckets"])
lh = [x for r in a[1]["rows"] for x in r["buckets"]]
ok = ok and all(x["low"] in (None, 0, 10, 20) for x in lh)
ok = ok and [x["high"] for x in lh if x["low"] == 20] == [None]
sys.exit(not ok)'
ok $? "--json: buckets bounded low < high, lhist's last one open-ended (>= 20: LTTng's prio of a normal task)"

"$TRAWL" agg 'count(x) by' S > /dev/null 2> bad.err
is "$?:$(grep -c 'column 12' bad.err)" "2:1" "a bad statement: exit 2, the column named ($(head -1 bad.err))"
finish
