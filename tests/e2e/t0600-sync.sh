#!/bin/sh
# trawl sync, the command: usage and errors; the printed result (per node
# drift, offset, start, bounds, quality, reference; per pair messages,
# lost, duplicates) against a session with known clocks written by the
# test-sync-store generator (probes, TCP segments, application messages
# with integer and string keys); SESSION/sync.txt; print and info applying
# it by default (and --no-sync); --json; --incremental; --apply -o OUT read
# by babeltrace2 against trawl print of the synced session, within the
# documented error; a bad sync.txt; sessions without messages.
. "$TRAWL_SRC/tests/e2e/lib.sh"

GEN="$TRAWL_BUILD/tests/test-sync-store"
[ -x "$GEN" ] || { echo "Bail out! $GEN is not built"; exit 1; }
command -v python3 > /dev/null 2>&1 || skip_all "python3 is not installed (output checks)"

plan 60

# ---- usage
"$TRAWL" sync --help > help.out 2>&1
ok $? "sync --help exits 0"
grep -q '^usage: trawl sync ' help.out
ok $? "sync --help shows the usage"
"$TRAWL" help sync > help2.out 2>&1
grep -q '^NAME' help2.out && grep -q 'trawl-sync' help2.out
ok $? "trawl help sync shows the manual page"
[ -f "$TRAWL_SRC/docs/man/trawl-sync.1" ] && grep -q -- '^\.BR \\-\\-apply ' "$TRAWL_SRC/docs/man/trawl-sync.1"
ok $? "the man page exists and documents --apply"
rcs=""
for args in "" "--bogus x" "a b" "--apply x" "-o y x" "--match nodot x" "--max-drift 0 x" \
	"--no-probes --no-tcp x"; do
	"$TRAWL" sync $args > /dev/null 2> usage.err
	rcs="$rcs$? "
done
is "$rcs" "2 2 2 2 2 2 2 2 " "bad arguments exit 2"
"$TRAWL" sync --match 'a.b = c' x > /dev/null 2> match.err
grep -q "^trawl sync: --match: bad match 'a.b = c': want SEND_EVENT.FIELD = RECV_EVENT.FIELD" match.err
ok $? "a bad --match says the form ($(cat match.err))"
"$TRAWL" sync does-not-exist > /dev/null 2> nx.err
is $? 1 "a missing session exits 1"
grep -q '^trawl sync: does-not-exist: ' nx.err
ok $? "... and says which ($(cat nx.err))"

# ---- a session with known clocks: node1 +1.5 s, +41.5 ppm; node2 -3 s, -87.25 ppm
"$GEN" --make-session s --tcp --loss 0.05 --dup 0.02 --seconds 4 > gen.out
ok $? "generate a 3-node session with probes, tcp and rpc events ($(cat gen.out))"
"$TRAWL" sync --reference node0 --match 'app:rpc_send.msg_id = app:rpc_recv.msg_id' s > sync.out 2> sync.err
ok $? "trawl sync --reference node0 --match ... s"
[ ! -s sync.err ]
ok $? "nothing on stderr"
grep -q '^session s: 3 hosts, 6 traces, [0-9]* sync events, [0-9]* messages (probe [1-9][0-9]*, tcp [1-9][0-9]*, match 480), batch$' sync.out
ok $? "summary: hosts, traces, messages by kind ($(head -1 sync.out))"
grep -q '^reference node0 (chosen)$' sync.out
ok $? "the chosen reference"
for f in traces start drift offset bound quality reference transform; do
	n=$(grep -c "^  $f " sync.out)
	[ "$n" -eq 3 ] || break
done
is "$n" 3 "every node has traces, start, drift, offset, bound, quality, reference, transform"
grep -A3 '^host node1$' sync.out | grep -q '^  traces     s/node1/kernel s/node1/ust$'
ok $? "a node's traces listed"
grep -A4 '^host node1$' sync.out | grep -q '^  start      2023-11-14 22:13:21.500123457 UTC (1700000001500123457 ns), span 3.99'
ok $? "node1 starts at its own clock's 1.500123457 s after the true start"
# offsets and drifts against the truth (bound ~ 50 us: check within 60 us, 2 ppm... see t0610 for bounds)
off1=$(grep -A6 '^host node1$' sync.out | sed -n 's/^  offset     \([-+][0-9]*\) ns.*/\1/p')
off2=$(grep -A6 '^host node2$' sync.out | sed -n 's/^  offset     \([-+][0-9]*\) ns.*/\1/p')
awk -v a="$off1" -v b="$off2" 'BEGIN { d1 = a - 1500123457; d2 = b + 3000123457;
	exit !(d1 < 60000 && d1 > -60000 && d2 < 60000 && d2 > -60000) }'
ok $? "offsets recovered: node1 $off1 ns (true +1500123457), node2 $off2 ns (true -3000123457)"
d1=$(grep -A6 '^host node1$' sync.out | sed -n 's/^  drift      \([-+][0-9.]*\) ppm.*/\1/p')
d2=$(grep -A6 '^host node2$' sync.out | sed -n 's/^  drift      \([-+][0-9.]*\) ppm.*/\1/p')
awk -v a="$d1" -v b="$d2" 'BEGIN { exit !(a > 41.5 - 30 && a < 41.5 + 30 && b > -87.25 - 30 && b < -87.25 + 30) }'
ok $? "drifts recovered within the slope uncertainty of 4 s at 50 us: node1 $d1 ppm (41.5), node2 $d2 ppm (-87.25)"
grep -A8 '^host node0$' sync.out | grep -q '^  quality    reference$' &&
	grep -A8 '^host node2$' sync.out | grep -q '^  quality    accurate, via node2 -> node0 (1 hop)$'
ok $? "qualities: reference, accurate via the path"
grep -A8 '^host node1$' sync.out | grep -Eq '^  bound      start [0-9]+ ns, mid [0-9]+ ns, end [0-9]+ ns, max [0-9]+ ns$'
ok $? "bounds at start, mid, end and max"
pl=$(grep -c '^  node[0-9] - node[0-9]  accurate: messages [0-9]* / [0-9]*, lost [0-9]* / [0-9]*, duplicates [0-9]* / [0-9]*, violations 0, bound mid [0-9]* ns, drift' sync.out)
is "$pl" 3 "three pairs with messages, lost, duplicates, violations, bound"
# the generator's loss and duplicates per direction, e.g. node0>node1:400/L/D
g01=$(sed 's/.*node0>node1:\([0-9/]*\).*/\1/' gen.out) g10=$(sed 's/.*node1>node0:\([0-9/]*\).*/\1/' gen.out)
lost=$(grep '^  node0 - node1 ' sync.out | sed 's/.*lost \([0-9]*\) \/ \([0-9]*\),.*/\1 \2/')
is "$lost" "$(echo "$g01" | cut -d/ -f2) $(echo "$g10" | cut -d/ -f2)" "node0 - node1: lost per direction as generated"
grep -q '^groups 1$' sync.out && grep -q '^stored s/sync.txt$' sync.out
ok $? "one group; stored s/sync.txt"

# ---- sync.txt
head -1 s/sync.txt | grep -q '^# trawl sync 1$'
ok $? "sync.txt: versioned header"
is "$(grep -c '^host node[0-2] t0 -\?[0-9]* y0 [0-9]* slope [0-9]* quality [a-z-]* reference node0 group 0 hops [01] path [a-z0-9,]* first [0-9]* last [0-9]* bound_start [0-9]* bound_mid [0-9]* bound_end [0-9]* bound_max [0-9]*$' s/sync.txt)" 3 \
	"sync.txt: one line per host with transform, quality, reference, path, span, bounds"

# ---- print and info apply it
"$TRAWL" print --clock-seconds s > p.txt 2> p.err
ok $? "print the synced session"
is "$(cat p.err)" "trawl print: clocks corrected by s/sync.txt (reference node0)" "print says so, once"
"$TRAWL" print --clock-seconds s/node1/ust > p1.txt 2> p1.err
grep -q 'clocks corrected by .*/s/sync.txt (reference node0)' p1.err
ok $? "print of one trace finds the session's sync.txt two levels up"
"$TRAWL" print --no-sync --clock-seconds s > raw.txt 2> raw.err
[ ! -s raw.err ] && ! cmp -s raw.txt p.txt
ok $? "--no-sync: raw clocks, nothing said"
first_tick() { grep " $2 timer_tick: .*{ n = 0 }" "$1" | sed 's/^\[\([0-9.]*\)\].*/\1/'; }
is "$(first_tick raw.txt node1)" "1700000001.500123457" "raw: node1's first tick at its own clock"
awk -v t="$(first_tick p.txt node1)" 'BEGIN { d = (t - 1700000000) * 1e9; exit !(d < 60000 && d > -60000) }'
ok $? "synced: node1's first tick at the true start ($(first_tick p.txt node1))"
python3 - p.txt > inv.out <<'EOF'
import sys, re
s, bad, n = {}, 0, 0
for i, line in enumerate(open(sys.argv[1])):
    m = re.search(r'\) (\S+) trawl_sync:probe_(send|recv): .*key = (\d+), peer = "(\S+)"', line)
    if not m:
        continue
    h, k, key, peer = m.groups()
    if k == 'send':
        s.setdefault((h, key), i)
    elif (peer, key) in s:
        n += 1
    else:
        bad += 1
print(n, bad)
EOF
res=$(cat inv.out)
[ "${res% *}" -gt 1000 ] && [ "${res#* }" -eq 0 ]
ok $? "synced print: no probe_recv before its probe_send ($res)"
"$TRAWL" info s > info.txt 2> info.err
grep -q 'clocks corrected by s/sync.txt' info.err
ok $? "info applies it too"
"$TRAWL" info --no-sync s > info-raw.txt 2> info-raw.err
! grep -q 'clocks corrected' info-raw.err
ok $? "info --no-sync does not"
# print and agg take --sync and --no-sync as the others do (cli_sync_use)
mkdir -p nosync
for c in print agg; do
	a=""
	[ $c = agg ] && a="count(timer_tick)"
	"$TRAWL" $c --sync s --no-sync $a s > /dev/null 2> x.err
	is "$? $(head -n 1 x.err)" "2 trawl $c: --sync and --no-sync exclude each other" \
		"$c --sync --no-sync: a usage error"
	"$TRAWL" $c --sync s --no-sync $a nowhere > /dev/null 2> x.err
	is "$? $(head -n 1 x.err)" "2 trawl $c: --sync and --no-sync exclude each other" \
		"$c --sync --no-sync: the usage error before the paths are looked at"
	"$TRAWL" $c --sync nosync $a s > /dev/null 2> x.err
	is "$? $(cat x.err)" "1 trawl $c: nosync: no sync.txt there" "$c --sync DIR without one: said, exit 1"
done

# ---- json, incremental, match with string keys
"$TRAWL" sync --json --no-store --reference node0 s > s.json
python3 -c '
import json, sys
d = json.load(open("s.json"))
h = {x["host"]: x for x in d["hosts"]}
ok = (len(d["hosts"]) == 3 and len(d["pairs"]) == 3 and d["groups"][0]["reference"] == "node0"
      and h["node1"]["quality"] == "accurate" and h["node0"]["quality"] == "reference"
      and d["stored"] is None and d["messages"]["tcp"] > 0 and abs(h["node1"]["drift_ppm"] - 41.5) < 30
      and isinstance(h["node1"]["bound_max_ns"], int))
sys.exit(0 if ok else 1)'
ok $? "--json: hosts, pairs, groups, qualities, bounds; --no-store"
"$TRAWL" sync --json --no-store --incremental --reference node0 s > si.json
sed -e 's/"mode":"[a-z]*",//' -e 's/"hull_ab":[0-9]*,"hull_ba":[0-9]*,//g' s.json > a.json
sed -e 's/"mode":"[a-z]*",//' -e 's/"hull_ab":[0-9]*,"hull_ba":[0-9]*,//g' si.json > b.json
cmp_files b.json a.json "--incremental gives the same result as batch"
"$TRAWL" sync --no-store --no-probes --no-tcp --match 'app:req_send.req = app:req_recv.req' s > str.out 2>&1
ok $? "--match on a string field alone"
grep -q '(probe 0, tcp 0, match 480)' str.out && [ "$(grep -c 'accurate: messages 80 / 80' str.out)" -eq 3 ]
ok $? "... 480 messages, 80 each way per pair"

# ---- --apply: a corrected copy for babeltrace2
"$TRAWL" sync --reference node0 --apply -o out s > apply.out 2> apply.err
ok $? "sync --apply -o out"
grep -q '^trawl sync: wrote out: 6 traces with corrected clocks' apply.err
ok $? "apply says what it wrote ($(cat apply.err))"
[ ! -e out/sync.txt ] && [ -f out/node1/ust/metadata ] && [ -f out/node1/kernel/index/channel0_0.idx ] &&
	[ "$(stat -c %i s/node1/ust/channel0_0)" = "$(stat -c %i out/node1/ust/channel0_0)" ]
ok $? "the copy: metadata rewritten, streams and indexes hard-linked, no sync.txt"
grep -q 'corrected by trawl sync: node1 on node0' out/node1/ust/metadata &&
	[ "$(grep -c '^	freq = ' out/node1/ust/metadata)" -eq 1 ]
ok $? "the clock block carries one new freq, offset_s, offset and a note"
"$TRAWL" sync --apply -o out s > /dev/null 2> again.err
is $? 1 "apply into a non-empty directory fails"
"$GEN" --make-session k --kernel-freq 2500000000 --seconds 8 --rate 20 --hosts 3 > /dev/null &&
	"$TRAWL" sync k > /dev/null && "$TRAWL" sync --no-store --apply -o kout k > /dev/null 2>&1
ok $? "a session with a 2.5 GHz kernel clock, synced and applied"
cat > cmp.py <<'EOF'
import sys, re, collections
def load(p):
    d = collections.defaultdict(list)
    for line in open(p):
        m = re.match(r'^\[(\d+)\.(\d{9})\] \([^)]*\) (.*)$', line.rstrip('\n'))
        if m:
            d[m.group(3)].append(int(m.group(1)) * 10**9 + int(m.group(2)))
    return d
a, b = load(sys.argv[1]), load(sys.argv[2])
span = float(sys.argv[3])
worst, n, miss = 0, 0, 0
for k in set(a) | set(b):
    x, y = sorted(a.get(k, [])), sorted(b.get(k, []))
    if len(x) != len(y):
        miss += 1
        continue
    for u, v in zip(x, y):
        worst = max(worst, abs(u - v))
        n += 1
limit = 0.5 * span + 2 + 1
print(n, miss, worst, limit)
sys.exit(0 if n > 1000 and miss == 0 and worst <= limit else 1)
EOF
if command -v babeltrace2 > /dev/null 2>&1; then
	for c in s:out:4 k:kout:8; do
		sess=${c%%:*} rest=${c#*:} o=${rest%%:*} span=${rest#*:}
		babeltrace2 --clock-seconds "$o" > "$o.bt" 2> "$o.bt.err"
		"$TRAWL" print --clock-seconds "$sess" > "$sess.tp" 2> /dev/null
		res=$(python3 cmp.py "$o.bt" "$sess.tp" "$span")
		ok $? "babeltrace2 on $o == trawl print of the synced $sess within 0.5 ns/s + 2 ns (events, missing, worst ns, limit: $res)"
	done
	# (events at the same ns may come in another order: compare sorted, without deltas)
	"$TRAWL" print --clock-seconds out 2> out.tp.err | sed 's/ ([^)]*)//' | sort > out.tp
	sed 's/ ([^)]*)//' out.bt | sort > out.bts
	cmp_files out.tp out.bts "trawl print of the copy == babeltrace2 of the copy (same ns)"
else
	for i in 1 2 3; do skip "babeltrace2 is not installed"; done
fi

# ---- a bad sync.txt: a clear error, --no-sync still reads
cp s/sync.txt good.txt
sed -i 's/slope [0-9]*/slope zero/' s/sync.txt
"$TRAWL" print s > /dev/null 2> bad.err
is $? 1 "print with a malformed sync.txt fails"
grep -q "^trawl print: s/sync.txt:[0-9]*: bad value 'zero' of slope$" bad.err &&
	grep -q "^hint: run trawl sync again, or read raw clocks with --no-sync$" bad.err
ok $? "... saying where and what to do ($(cat bad.err))"
"$TRAWL" print --no-sync s > /dev/null 2>&1
ok $? "--no-sync reads it anyway"
cp good.txt s/sync.txt

# ---- sessions without messages
"$GEN" --make-session quiet --rate 0 --rpc-rate 0 --hosts 2 > /dev/null
"$TRAWL" sync quiet > /dev/null 2> quiet.err
is $? 1 "two nodes without any message: exit 1"
grep -q '^trawl sync: no message between the nodes of quiet' quiet.err && [ ! -e quiet/sync.txt ]
ok $? "... said, nothing stored"
"$GEN" --make-session solo --hosts 1 > /dev/null
"$TRAWL" sync solo > solo.out 2>&1
ok $? "one node: its own reference, exit 0"
"$GEN" --make-session two --split --hosts 4 --seconds 2 > /dev/null
"$TRAWL" sync two > two.out 2>&1 && grep -q '^groups 2 (disconnected' two.out
ok $? "two groups reported"
finish
