#!/bin/sh
# trawl agg's cluster-wide figure is an explicit sum (issue 27.1): an
# aggregation whose rows are of more than one host (a host key, written or
# added for tid/cpu) ends with a "total (N hosts)" row in the text and a
# "totals" array beside "rows" in the JSON (a simulated session of 4 hosts
# x 2 CPUs):
#  - the total is the rows merged: counts and sums added, min of the mins,
#    max of the maxes, avg weighted by the counts, histograms' buckets
#    added; and it is the same figure as the aggregation without keys
#    (one row for the whole session: a second computation);
#  - with top N, the total is of every row, those left out too;
#  - one host: no total row, no "totals".
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v python3 > /dev/null 2>&1 || skip_all "needs python3"
plan 9

"$TRAWL" simulate -q -o sim -n 4 -c 2 -e 40000 > sim.log 2>&1
ok $? "a simulated session of 4 hosts"

F='sched_switch.prev_prio'
S="count(sched_switch) by cpu; sum($F) by host; min($F) by host; max($F) by host;"
S="$S avg($F) by host, cpu; stats($F) by host; lhist($F, 0, 140, 10) by host"
# the same functions without keys: one row each, the whole session's
K="count(sched_switch); sum($F); min($F); max($F); avg($F); stats($F); lhist($F, 0, 140, 10)"
"$TRAWL" agg --json "$S" sim > by.json 2> by.err
ok $? "agg --json with host keys on the session ($(head -c 200 by.err))"
"$TRAWL" agg --json "$K" sim > all.json 2> all.err
ok $? "the same without keys ($(head -c 200 all.err))"

python3 - > check.out 2>&1 << 'EOF'
import json, math, sys
by = json.load(open("by.json"))["aggregations"]
al = json.load(open("all.json"))["aggregations"]
bad = []
def close(a, b):
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
for a, k in zip(by, al):
    f, rows, t = a["function"], a["rows"], a.get("totals")
    one = k["rows"][0]
    if not t or len(t) != 1 or t[0]["hosts"] != 4:
        bad.append((a["statement"], "totals", t)); continue
    t = t[0]
    hosts = {r["key"]["host"] for r in rows}
    if hosts != {"host0", "host1", "host2", "host3"}:
        bad.append((a["statement"], "hosts", hosts))
    n = sum(r["count"] for r in rows)
    if t["count"] != n or t["count"] != one["count"]:
        bad.append((a["statement"], "count", t["count"], n, one["count"]))
    want = {}
    if f in ("sum", "stats"):
        want["sum"] = sum(r["sum"] for r in rows)
    if f in ("min", "stats", "lhist"):
        want["min"] = min(r["min"] for r in rows)
    if f in ("max", "stats", "lhist"):
        want["max"] = max(r["max"] for r in rows)
    if f in ("avg", "stats", "lhist"):
        want["avg"] = sum(r["avg"] * r["count"] for r in rows) / n
    for key, v in want.items():
        if not close(t[key], v) or not close(t[key], one[key]):
            bad.append((a["statement"], key, t[key], v, one[key]))
    if f == "stats" and not close(t["stddev"], one["stddev"]):
        bad.append((a["statement"], "stddev", t["stddev"], one["stddev"]))
    if f == "lhist":
        b = {}
        for r in rows:
            for x in r["buckets"]:
                b[(x["low"], x["high"])] = b.get((x["low"], x["high"]), 0) + x["count"]
        got = {(x["low"], x["high"]): x["count"] for x in t["buckets"]}
        kb = {(x["low"], x["high"]): x["count"] for x in one["buckets"]}
        if got != b or got != kb:
            bad.append((a["statement"], "buckets", got, b, kb))
print(bad)
sys.exit(1 if bad or len(by) != 7 else 0)
EOF
ok $? "JSON: each total is its rows merged and the keyless figure, 4 hosts ($(head -c 300 check.out))"

"$TRAWL" agg 'count(sched_switch) by cpu; lhist(sched_switch.prev_prio, 0, 140, 10) by host' sim > by.txt
# the table: 8 rows of host, cpu, count, then the total of the 8
awk 'NR > 2 && $1 ~ /^host[0-3]$/ && NF == 3 { n += $3; r++ }
     $1 == "total" && $2 == "(4" && $3 == "hosts)" && !t { t = $4 }
     END { exit !(r == 8 && t == n && n > 0) }' by.txt
ok $? "text: a 'total (4 hosts)' row, the sum of the 8 rows"
# the histogram: each host's head line, then the total's with the counts added
awk -F'[:,]' '/^host = host[0-3]: count / { sub(/ *count /, "", $2); n += $2; h++ }
     /^total \(4 hosts\): count / { sub(/ *count /, "", $2); t = $2 }
     END { exit !(h == 4 && t == n && n > 0) }' by.txt
ok $? "text: the histograms' total (4 hosts), its count the 4 hosts' added"

"$TRAWL" agg --json 'count(sched_switch) by cpu top 2' sim > top.json
python3 -c '
import json, sys
a = json.load(open("top.json"))["aggregations"][0]
k = json.load(open("all.json"))["aggregations"][0]["rows"][0]
sys.exit(not (len(a["rows"]) == 2 and a["totals"][0]["count"] == k["count"]
              and a["totals"][0]["hosts"] == 4))'
ok $? "top 2: the total is of every row (the session's count), not of the 2 shown"

"$TRAWL" agg --json "$S" sim/host2 > one.json
python3 -c '
import json, sys
a = json.load(open("one.json"))["aggregations"]
sys.exit(not (len(a) == 7 and all("totals" not in x and x["rows"] for x in a)))'
ok $? "one host: no totals in the JSON"
"$TRAWL" agg "$S" sim/host2 > one.txt && ! grep -q total one.txt && grep -q '^  host2 ' one.txt
ok $? "one host: no total row in the text"
finish
