#!/bin/sh
# trawl agg --json on a simulated session of two hosts (no kernel needed;
# t0890 does the same on a real recording), checked against the text
# output and against the events as trawl print -f json shows them:
#  - every function (count, sum, stats, avg, hist, lhist, llhist,
#    heatmap), keyed by host, cpu, event: the JSON's rows, figures,
#    buckets and cells are the text's (tests/e2e/aggjson.py);
#  - count by host, cpu and hist(ret) equal the events' own counts and
#    log2 buckets (a short script over trawl print's JSON);
#  - --interval: one object per interval, begin and end as the text's,
#    the counts adding up to the total; a heat map's object holds its
#    interval's column only.
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v python3 > /dev/null 2>&1 || skip_all "needs python3"
plan 7

"$TRAWL" simulate -q -o sim -n 2 -e 20000 > sim.log 2>&1
ok $? "a simulated session of two hosts"
"$TRAWL" print -f json sim > ev.json

SPEC='count(syscall_entry_*) by host, cpu; sum(syscall_exit_read.ret) by host; stats(syscall_exit_write.ret) by cpu; avg(syscall_exit_read.ret) by event; hist(syscall_exit_read.ret) by host; lhist(sched_switch.prev_prio, -100, 40, 20); llhist(syscall_exit_write.ret, 10, 0, 5, 5); heatmap(syscall_exit_read.ret)'
"$TRAWL" agg "$SPEC" sim > all.txt 2> all.err && "$TRAWL" agg --json "$SPEC" sim > all.json 2>> all.err
ok $? "agg and agg --json: exit 0 ($(head -c 200 all.err))"
python3 "$TRAWL_SRC/tests/e2e/aggjson.py" report all.txt all.json > all.cmp 2>&1
case "$(tail -1 all.cmp)" in same*) true ;; *) false ;; esac
ok $? "--json: every function's rows, figures, buckets and cells are the text's ($(tail -1 all.cmp))"

# the events' own figures
python3 - ev.json all.json > truth.cmp 2>&1 << 'EOF'
import json, sys
count, hist = {}, {}
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e["event"].startswith("syscall_entry_"):
        k = (e["host"], e["cpu"])
        count[k] = count.get(k, 0) + 1
    if e["event"] == "syscall_exit_read":
        v = e["fields"]["ret"]
        lo = None if v < 0 else 0 if v == 0 else 1 << (v.bit_length() - 1)
        hist.setdefault(e["host"], {})
        hist[e["host"]][lo] = hist[e["host"]].get(lo, 0) + 1
aggs = json.load(open(sys.argv[2]))["aggregations"]
got = {(r["key"]["host"], r["key"]["cpu"]): r["count"] for r in aggs[0]["rows"]}
assert got == count and len(got) == 4, (got, count)
for r in aggs[4]["rows"]:
    h = {x["low"]: x["count"] for x in r["buckets"]}
    assert h == hist[r["key"]["host"]], (r["key"], h, hist[r["key"]["host"]])
assert len(aggs[4]["rows"]) == 2
print("same")
EOF
is "$(tail -1 truth.cmp)" same "count by host, cpu and hist(ret) by host: the events' own counts and log2 buckets"

TOTAL=$(grep -c '"event":"syscall_entry_' ev.json)
"$TRAWL" agg -i 0.1 'count(syscall_entry_*)' sim > iv.txt &&
	"$TRAWL" agg -i 0.1 --json 'count(syscall_entry_*)' sim > iv.json
python3 "$TRAWL_SRC/tests/e2e/aggjson.py" intervals iv.txt iv.json "$TOTAL" > iv.cmp 2>&1
case "$(tail -1 iv.cmp)" in same*) true ;; *) false ;; esac
ok $? "--interval 0.1 --json: an object per interval as the text's, counts adding up to $TOTAL ($(tail -1 iv.cmp))"

"$TRAWL" agg -i 0.1 --json 'heatmap(syscall_exit_read.ret)' sim > ivh.json
python3 - ivh.json ev.json > ivh.cmp 2>&1 << 'EOF'
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
n = sum(1 for l in open(sys.argv[2]) if '"event":"syscall_exit_read"' in l)
cols = [o["aggregations"][0]["columns"] for o in objs]
assert len(objs) >= 5 and all(len(c) <= 1 for c in cols), [len(c) for c in cols]
assert all(c[0]["begin"] == o["begin"] for c, o in zip(cols, objs) if c)
got = sum(x["count"] for c in cols for col in c for x in col["buckets"])
assert got == n, (got, n)
print("same %d intervals" % len(objs))
EOF
case "$(tail -1 ivh.cmp)" in same*) true ;; *) false ;; esac
ok $? "--interval --json heatmap: each object its interval's column, all the values ($(tail -1 ivh.cmp))"

"$TRAWL" agg --json 'count(x) by' sim > bad.out 2> bad.err
is "$?:$(wc -c < bad.out)" "2:0" "a bad statement with --json: exit 2, nothing on stdout"
finish
