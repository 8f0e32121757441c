#!/bin/sh
# trawl top -b on simulated sessions (no kernel needed):
#  - the snapshots: -n 0 gives every interval of -d of the session's span,
#    contiguous, from its first event to its last (trawl info's); -n 2
#    gives 2;
#  - per host and grouped: every grouped row (CPU per process name,
#    syscalls) is the sum of the per-host rows of that name, in every
#    interval (counts, CPU time: exact; hosts: how many had it);
#  - against trawl analyze cputop --interval on the same session: each
#    thread's CPU time in each interval is the analysis' to the ns, and
#    its share within 0.01 point; syscalls' counts as trawl analyze
#    syscalls';
#  - each host's events over the intervals add up to trawl info's count,
#    its discarded events to info's discarded (--shapes has losses);
#  - --host, --comm, --sort, --limit select and order what they say;
#  - what a user meets when things go wrong: no terminal and no -b (use
#    -b, exit 2), a directory that is not a session, a path that does not
#    exist, a relay not there: one line each (exit 1).
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v python3 > /dev/null 2>&1 || skip_all "needs python3"
plan 18

"$TRAWL" simulate -q -o sim -n 3 -c 2 -e 200000 > sim.log 2>&1
ok $? "a simulated session of 3 hosts"
"$TRAWL" info --json sim > info.json 2> /dev/null
"$TRAWL" top -b -n 0 -d 0.25 --json --threads sim > thr.json 2> thr.err
ok $? "top -b --json --threads on every interval"
python3 - info.json thr.json 250000000 > span.txt << 'EOF2'
import json, sys
info = json.load(open(sys.argv[1]))
first = min(t["first_ts"] for t in info["traces"])
last = max(t["last_ts"] for t in info["traces"])
d = int(sys.argv[3])
iv = {}
for l in open(sys.argv[2]):
    o = json.loads(l)
    iv[o["interval"]] = (o["begin"], o["end"])
ks = sorted(iv)
want = (last - first) // d + 1
bad = []
if ks != list(range(want)):
    bad.append("intervals %s, want 0..%d" % (ks, want - 1))
elif iv[0][0] != first or iv[ks[-1]][1] != last:
    bad.append("span %d..%d, want %d..%d" % (iv[0][0], iv[ks[-1]][1], first, last))
else:
    for k in ks[1:]:
        if iv[k][0] != iv[k - 1][1] or iv[k][0] != first + k * d:
            bad.append("interval %d begins at %d" % (k, iv[k][0]))
print("ok %d" % want if not bad else " ".join(bad))
EOF2
n=$(sed -n 's/^ok //p' span.txt)
ok $([ -n "$n" ]; echo $?) "-n 0: every interval of 0.25 s, contiguous, from the first event to the last ($(cat span.txt))"
"$TRAWL" top -b -n 2 -d 0.25 --json sim > two.json 2> /dev/null
is "$(python3 -c "
import json, sys
print(sorted({json.loads(l)['interval'] for l in open('two.json')}))")" "[0, 1]" "-n 2: two snapshots, the first two intervals"

# grouped = the sum of the per-host rows of that name
for v in cpu syscalls; do
	"$TRAWL" top -b -d 0.25 --json --view $v sim > per-$v.json 2> /dev/null
	"$TRAWL" top -b -d 0.25 --json --view $v --group sim > grp-$v.json 2> /dev/null
done
python3 - per-cpu.json grp-cpu.json per-syscalls.json grp-syscalls.json > grp.txt << 'EOF2'
import json, sys
def rows(p):
    return [o for o in map(json.loads, open(p)) if o["type"] == "row"]
bad, n = [], 0
for per, grp, name in ((sys.argv[1], sys.argv[2], "comm"), (sys.argv[3], sys.argv[4], "name")):
    want = {}
    for r in rows(per):
        k = (r["interval"], r[name])
        w = want.setdefault(k, {"count": 0, "sum_ns": 0, "hosts": set()})
        w["count"] += r["count"]
        w["sum_ns"] += r["sum_ns"]
        w["hosts"].add(r["host"])
    got = {}
    for r in rows(grp):
        if r["host"] != "*":
            bad.append("grouped row of host %s" % r["host"])
        got[(r["interval"], r[name])] = r
    if set(got) != set(want):
        bad.append("%s: names differ: %s" % (per, sorted(set(got) ^ set(want))[:5]))
    for k, w in want.items():
        g = got.get(k)
        if not g:
            continue
        n += 1
        # (sums of rounded ns: within a ns per row summed)
        if g["count"] != w["count"] or abs(g["sum_ns"] - w["sum_ns"]) > len(w["hosts"]) or \
           g["hosts"] != len(w["hosts"]):
            bad.append("%s %s: got %s %s %s, want %s %s %s" % (per, k, g["count"], g["sum_ns"],
                       g["hosts"], w["count"], w["sum_ns"], len(w["hosts"])))
print("ok %d" % n if not bad and n else "; ".join(bad[:5]) or "no rows")
EOF2
ok $(grep -q '^ok ' grp.txt; echo $?) "--group: every grouped row is the sum of its per-host rows, in every interval, CPU and syscalls ($(cat grp.txt))"
python3 -c "
import json
m = [o for o in map(json.loads, open('grp-cpu.json')) if o['type'] == 'row' and o['hosts'] > 1]
print(len(m))" > multi.txt
ok $([ "$(cat multi.txt)" -gt 0 ]; echo $?) "... some names run on several hosts, summed ($(cat multi.txt) rows)"

# against trawl analyze cputop / syscalls on the same intervals
"$TRAWL" analyze cputop --interval 0.25 --json sim > an-cpu.json 2> /dev/null
"$TRAWL" analyze syscalls --interval 0.25 --json sim > an-sys.json 2> /dev/null
python3 - thr.json an-cpu.json per-syscalls.json an-sys.json > oracle.txt << 'EOF2'
import json, sys
def slices(p):
    return [o for o in map(json.loads, open(p)) if "analysis" in o]
bad, n = [], 0
an = slices(sys.argv[2])
top = {}
for o in map(json.loads, open(sys.argv[1])):
    if o["type"] == "row":
        top[(o["begin"], o["host"], o["tid"])] = o
seen = set()
for s in an:
    for r in s["rows"]:
        if r["kind"] != "thread":
            continue
        k = (s["begin"], r["host"], r["id"])
        t = top.get(k)
        seen.add(k)
        n += 1
        if not t or t["sum_ns"] != r["sum_ns"] or abs(t["cpu_pct"] - r["percent"]) > 0.01:
            bad.append("%s: top %s, analyze %s %s" % (k, t and (t["sum_ns"], t["cpu_pct"]),
                       r["sum_ns"], r["percent"]))
extra = set(top) - seen
if extra:
    bad.append("threads not in analyze: %s" % sorted(extra)[:3])
sysr = {}
for o in map(json.loads, open(sys.argv[3])):
    if o["type"] == "row":
        sysr[(o["begin"], o["host"], o["name"])] = o["count"]
for s in slices(sys.argv[4]):
    for r in s["rows"]:
        k = (s["begin"], r["host"], r["label"])
        n += 1
        if sysr.get(k) != r["count"]:
            bad.append("syscall %s: top %s, analyze %s" % (k, sysr.get(k), r["count"]))
print("ok %d" % n if not bad and n else "; ".join(bad[:4]) or "no rows")
EOF2
ok $(grep -q '^ok ' oracle.txt; echo $?) "each thread's CPU time and share, each syscall's count, per interval, as trawl analyze's ($(cat oracle.txt))"

# events and discarded per host, against trawl info (--shapes loses some)
"$TRAWL" simulate -q -o shp -n 2 -e 50000 --shapes > shp.log 2>&1
"$TRAWL" info --json shp > shp-info.json 2> /dev/null
"$TRAWL" top -b --json shp > shp.json 2> shp.err
python3 - sim info.json thr.json shp shp-info.json shp.json > ev.txt << 'EOF2'
import json, sys
out = []
for info, top in ((sys.argv[2], sys.argv[3]), (sys.argv[5], sys.argv[6])):
    want_e, want_d = {}, {}
    for t in json.load(open(info))["traces"]:
        want_e[t["hostname"]] = want_e.get(t["hostname"], 0) + t["events"]
        want_d[t["hostname"]] = want_d.get(t["hostname"], 0) + t["discarded"]
    got_e, got_d = {}, {}
    for o in map(json.loads, open(top)):
        if o["type"] == "host":
            got_e[o["host"]] = got_e.get(o["host"], 0) + o["events"]
            got_d[o["host"]] = got_d.get(o["host"], 0) + o["discarded"]
    out.append("events %s discarded %s" % ("same" if got_e == want_e else "%s != %s" % (got_e, want_e),
               "same" if got_d == want_d else "%s != %s" % (got_d, want_d)))
    out.append("(%d lost)" % sum(want_d.values()))
print(" ".join(out))
EOF2
is "$(sed 's/ ([0-9]* lost)//g' ev.txt)" "events same discarded same events same discarded same" \
	"each host's events and discarded events over the intervals, as trawl info's ($(cat ev.txt))"
python3 -c "
import json, sys
print(sum(1 for o in map(json.loads, open('shp.json')) if o['type'] == 'host' and o['discarded']))" > nd.txt
ok $([ "$(cat nd.txt)" -gt 0 ]; echo $?) "... with losses in some intervals ($(cat nd.txt) host lines)"

# filters, sort, limit
"$TRAWL" top -b -n 1 --json --host 'host1' sim > h1.json 2> /dev/null
is "$(python3 -c "
import json
print(sorted({o['host'] for o in map(json.loads, open('h1.json'))}))")" "['host1']" "--host host1: only host1's header and rows"
"$TRAWL" top -b -n 1 --json --comm 'ngin*' --threads sim > cm.json 2> /dev/null
python3 -c "
import json
r = [o for o in map(json.loads, open('cm.json')) if o['type'] == 'row']
print(len(r) > 0 and all(o['comm'].startswith('ngin') for o in r))" > cm.txt
is "$(cat cm.txt)" True "--comm 'ngin*': only nginx's threads"
"$TRAWL" top -b -n 1 --json --view syscalls --sort max_ns --limit 3 sim > so.json 2> /dev/null
python3 -c "
import json
r = [o['max_ns'] for o in map(json.loads, open('so.json')) if o['type'] == 'row']
print(len(r), r == sorted(r, reverse=True))" > so.txt
is "$(cat so.txt)" "3 True" "--sort max_ns --limit 3: the 3 rows of the highest max, in order"
"$TRAWL" top -b -n 1 sim > text.txt 2> /dev/null
grep -q '^HOST .*KIND .*PID .*TID .*NAME .*CPU%' text.txt && grep -q '^-- cpu \[' text.txt
ok $? "text: the interval line, the hosts' header and the rows' table"

# what goes wrong
"$TRAWL" top sim < /dev/null > tty.out 2> tty.err
is "$?:$(grep -c 'use -b' tty.err)" "2:1" "no terminal and no -b: says to use -b (exit 2)"
mkdir notsession
echo x > notsession/file
"$TRAWL" top -b notsession > ns.out 2> ns.err
is "$?:$(wc -l < ns.err | tr -d ' '):$(grep -c 'notsession' ns.err)" "1:1:1" "a directory without traces: one line naming it (exit 1): $(cat ns.err)"
"$TRAWL" top -b --host host1x sim > nh.out 2> nh.err
is "$?:$(grep -c 'no host matches it (the hosts: host0, host1, host2)' nh.err):$(grep -c "did you mean 'host1'" nh.err)" "2:1:1" \
	"--host matching no host: the hosts and the near name (exit 2), as every reading command"
"$TRAWL" top -b nowhere > nw.out 2> nw.err
is "$?:$(wc -l < nw.err | tr -d ' '):$(grep -c 'nowhere' nw.err)" "1:1:1" "no such path: one line (exit 1): $(cat nw.err)"
# a port nothing listens on: bound then closed here
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$TRAWL" top -b --wait 0 "net://127.0.0.1:$port/session/s" > nr.out 2> nr.err
is "$?:$(wc -l < nr.err | tr -d ' ')" "1:1" "a relay not there: one line (exit 1): $(cat nr.err)"
finish
