#!/bin/sh
# trawl analyze on a cluster keeps its machines apart (a simulated session
# of 4 hosts x 2 CPUs, where the same tids run on several hosts):
#  - oracle: each host read alone (--host H); every analysis's rows of
#    host H in the session's report are that host's alone: the same rows
#    (kind, label), counts and sums, text and JSON;
#  - no row of two hosts: 8 CPU rows (4 x 2), none above 100 %; a tid seen
#    on several hosts is a row on each;
#  - the cluster's figure is an explicit total (count and sum of every
#    host's rows, "hosts": 4), in the text as a "total (4 hosts)" line;
#  - --by host: a total line per host; --by host --top 3 gives the top 3
#    threads of each host (those of the host alone), not of the cluster;
#  - one host: the host column names it (not "-"), and no total.
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v python3 > /dev/null 2>&1 || skip_all "needs python3"
plan 12

"$TRAWL" simulate -q -o sim -n 4 -c 2 -e 100000 > sim.log 2>&1
ok $? "a simulated session of 4 hosts"

# rows_of FILE.json HOST: "kind label count sum" per row of HOST, sorted
rows_of() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["rows"]:
    if r["host"] == sys.argv[2]:
        print(r["kind"], r["label"].replace(" ", "_"), r["count"], r["sum_ns"])' "$1" "$2" | sort
}
bad=""
for a in cputop schedlat iolatency syscalls; do
	"$TRAWL" analyze $a --json sim > $a.json 2> $a.err || bad="$bad $a(exit)"
	for h in host0 host1 host2 host3; do
		"$TRAWL" analyze $a --json --host $h sim > $a-$h.json 2>> $a.err || bad="$bad $a-$h(exit)"
		rows_of $a.json $h > got.rows
		rows_of $a-$h.json $h > want.rows
		[ -s want.rows ] && cmp -s got.rows want.rows || bad="$bad $a/$h"
	done
done
[ -z "$bad" ]
ok $? "each host's rows in the session's report are the host's alone (4 analyses x 4 hosts;${bad:- all equal})"

python3 -c '
import json, sys
d = json.load(open("cputop.json"))
cpus = [r for r in d["rows"] if r["kind"] == "cpu"]
hosts = {(r["host"], r["id"]) for r in cpus}
sys.exit(not (len(cpus) == 8 and len(hosts) == 8 and all(r["percent"] <= 100.0 for r in cpus)))'
ok $? "cputop: 8 CPU rows, one per host and CPU, none above 100 %"

python3 -c '
import json, collections, sys
d = json.load(open("cputop.json"))
th = [r for r in d["rows"] if r["kind"] == "thread"]
by = collections.defaultdict(set)
for r in th:
    by[r["id"]].add(r["host"])
shared = [t for t, h in by.items() if len(h) > 1]
# each (host, tid) once
sys.exit(not (shared and len({(r["host"], r["id"]) for r in th}) == len(th)))'
ok $? "cputop: a tid of several hosts is a row of each (host, tid), once"

python3 -c '
import json, sys
ok = True
for a in ("cputop", "schedlat", "iolatency", "syscalls"):
    d = json.load(open(a + ".json"))
    tot = {t["kind"]: t for t in d["totals"]}
    for k in {r["kind"] for r in d["rows"]}:
        rs = [r for r in d["rows"] if r["kind"] == k]
        t = tot.get(k)
        ok = ok and t is not None and t["hosts"] == len({r["host"] for r in rs}) \
             and t["count"] == sum(r["count"] for r in rs) \
             and t["sum_ns"] == sum(r["sum_ns"] for r in rs) \
             and t["max_ns"] == max(r["max_ns"] for r in rs)
sys.exit(not ok)'
ok $? "JSON: a total per kind of row: the hosts, count, sum and max of every host's rows"

"$TRAWL" analyze cputop sim > cputop.txt
# the CPU table: 8 rows, then the total of their times
python3 -c '
import sys
lines = open("cputop.txt").read().split("\n")
i = [n for n, l in enumerate(lines) if l.split()[:2] == ["host", "cpu"]][0]
rows = lines[i + 1:i + 9]
tot = lines[i + 9].split()
ms = sum(float(l.split()[-1]) for l in rows)
sys.exit(not (all(l.split()[0].startswith("host") for l in rows) and tot[:4] == ["all", "total", "(4", "hosts)"]
              and abs(float(tot[-1]) - ms) < 0.01))'
ok $? "text: each host's CPU rows and a total line of their times ($(grep '^all ' cputop.txt | tail -1))"

"$TRAWL" analyze syscalls --by host sim > by.txt
python3 -c '
import json, sys
d = json.load(open("syscalls.json"))
lines = [l for l in open("by.txt") if l.startswith("total ")]
cells = [c.split() for c in lines[0].split("|")[1:]] if len(lines) == 1 else []
hosts = sorted({r["host"] for r in d["rows"]})
want = [sum(r["count"] for r in d["rows"] if r["host"] == h) for h in hosts]
sys.exit(not (len(cells) == 4 and [int(c[0]) for c in cells] == want))'
ok $? "--by host: a total line, each host's count in its column, the hosts in order"

"$TRAWL" analyze cputop --by host --top 3 sim > top3.txt
bad=""
for h in host0 host1 host2 host3; do
	got=$(awk -v h=$h '/^host +thread/ { on = 1; next } !NF { on = 0 } on && $1 == h { print $2 $3 }' top3.txt)
	want=$("$TRAWL" analyze cputop --top 3 --host $h sim |
		awk '/^host +thread/ { on = 1; next } !NF { on = 0 } on { print $2 $3 }')
	[ "$(echo "$got" | wc -l)" = 3 ] && [ "$got" = "$want" ] || bad="$bad $h"
done
[ -z "$bad" ]
ok $? "--by host --top 3: the top 3 threads of each host, as the host alone (${bad:-all 4})"
test "$(awk '/^host +thread/ { on = 1; next } !NF { on = 0 } on && /^host/' top3.txt | wc -l)" = 12
ok $? "--by host --top 3: 12 thread rows, 3 a host"

"$TRAWL" analyze syscalls --by host --top 2 sim > top2.txt
python3 -c '
import sys, collections
ls = open("top2.txt").read().split("\n")
i = [n for n, l in enumerate(ls) if l.startswith("longest 2 of each host")][0]
s = [l.split() for l in ls[i + 1:] if l.startswith("[")]
c = collections.Counter(x[2] for x in s)
sys.exit(not (len(s) == 8 and sorted(c) == ["host0", "host1", "host2", "host3"] and set(c.values()) == {2}))'
ok $? "--by host --top 2: the 2 longest samples of each host"

"$TRAWL" analyze cputop --host host2 sim > one.txt
test "$(awk '/^host +(thread|cpu)/ { on = 1; next } !NF { on = 0 } on && $1 != "host2"' one.txt | wc -l)" = 0 &&
	test "$(awk '/^host +(thread|cpu)/ { on = 1; next } !NF { on = 0 } on' one.txt | wc -l)" -gt 2
ok $? "one host: the host column names it on every row, no total line"
python3 -c '
import json, sys
d = json.load(open("cputop-host2.json"))
sys.exit(not ("totals" not in d and all(r["host"] == "host2" for r in d["rows"])))'
ok $? "one host, JSON: every row has its host, no totals"
finish
