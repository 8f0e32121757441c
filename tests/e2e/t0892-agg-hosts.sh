#!/bin/sh
# trawl agg on a cluster keeps its machines apart: a tid or cpu key on the
# traces of several hosts is keyed by host too (a simulated session of 4
# hosts x 2 CPUs):
#  - oracle: each host read alone (-H HOST): count(sched_switch) by cpu of
#    the session has a row per (host, cpu), each the host's own count;
#  - the statement is written back with the host key ("by host, cpu"),
#    in the text and the JSON; an explicit host key stays where it is;
#  - one host: by cpu alone, no host column (as before).
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v python3 > /dev/null 2>&1 || skip_all "needs python3"
plan 6

"$TRAWL" simulate -q -o sim -n 4 -c 2 -e 40000 > sim.log 2>&1
ok $? "a simulated session of 4 hosts"

"$TRAWL" agg --json 'count(sched_switch) by cpu' sim > all.json 2> all.err
ok $? "agg by cpu on the session ($(head -c 200 all.err))"
for h in host0 host1 host2 host3; do
	"$TRAWL" agg --json -H $h 'count(sched_switch) by cpu' sim > $h.json || echo "$h failed"
done
python3 -c '
import json, sys
a = json.load(open("all.json"))["aggregations"][0]
got = sorted((r["key"]["host"], r["key"]["cpu"], r["count"]) for r in a["rows"])
want = []
for h in ("host0", "host1", "host2", "host3"):
    o = json.load(open(h + ".json"))["aggregations"][0]
    want += [(h, r["key"]["cpu"], r["count"]) for r in o["rows"]]
sys.exit(not (len(got) == 8 and got == sorted(want) and a["keys"] == ["host", "cpu"]
              and a["statement"] == "count(sched_switch) by host, cpu"))'
ok $? "by cpu on 4 hosts: a row per (host, cpu), each the host's own count (8 rows, keys host, cpu)"

"$TRAWL" agg 'count(sched_switch) by cpu' sim > all.txt
head -1 all.txt | grep -qx 'count(sched_switch) by host, cpu' &&
	test "$(awk 'NR > 2 && NF == 3 && $1 ~ /^host[0-3]$/' all.txt | wc -l)" = 8
ok $? "text: the statement with the host key, 8 rows of host, cpu, count"

"$TRAWL" agg --json 'count(sched_switch) by cpu, host' sim > ch.json
python3 -c '
import json, sys
a = json.load(open("ch.json"))["aggregations"][0]
sys.exit(not (a["keys"] == ["cpu", "host"] and len(a["rows"]) == 8))'
ok $? "an explicit host key: kept where it is (by cpu, host: 8 rows)"

"$TRAWL" agg --json 'count(sched_switch) by cpu' sim/host2 > one.json
python3 -c '
import json, sys
a = json.load(open("one.json"))["aggregations"][0]
sys.exit(not (a["keys"] == ["cpu"] and a["statement"] == "count(sched_switch) by cpu" and len(a["rows"]) == 2))'
ok $? "one host: by cpu alone (no host key added)"
finish
