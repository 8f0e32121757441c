#!/bin/sh
# trawl sync against ground truth: sessions from `trawl simulate --sync`
# with known clocks (SESSION/truth.txt) for every case of the issue:
# offsets and drifts up to +-100 ppm, asymmetric delays, heavy jitter,
# loss, reordering, duplicate keys, one-way traffic, a drift change
# mid-trace, split and chain topologies. For each: the true clock of every
# node lies within the stored bound (sync.txt) at its start, middle and end
# and within its max bound at 21 instants, whenever the quality is not
# fail/one-way; the error is printed beside the bound; batch and
# incremental agree; after sync no probe_recv is printed before its
# probe_send; --match on app:rpc_* alone also holds against the truth; a
# drift change is never silently wrong.
. "$TRAWL_SRC/tests/e2e/lib.sh"

"$TRAWL" simulate --help 2>&1 | grep -q -- '--sync' ||
	skip_all "trawl simulate has no --sync (ground-truth sessions)"
command -v python3 > /dev/null 2>&1 || skip_all "python3 is not installed (the truth checker)"

# check.py TRUTH SYNC_TXT: checks every node against the truth, exact
# integer arithmetic; prints one line per node and "ok N" / "bad ..." lines.
cat > check.py <<'EOF'
import sys
from fractions import Fraction as F

def truth(path):
    hosts, start = {}, None
    for line in open(path):
        w = line.split()
        if not w or w[0].startswith('#'):
            continue
        if w[0] == 'start_ns':
            start = int(w[1])
        elif w[0] == 'host':
            kv = dict(zip(w[2::2], w[3::2]))
            h = {'off': F(kv['offset_ns']), 'd': F(kv['drift_ppm']) / 10**6}
            if 'change_ns' in kv:
                h['tc'] = F(int(kv['change_ns']))
                h['d2'] = F(kv['drift2_ppm']) / 10**6
            hosts[w[1]] = h
    return start, hosts

def local(h, t, t0):
    if 'tc' in h and t > h['tc']:
        return h['tc'] + h['off'] + h['d'] * (h['tc'] - t0) + (t - h['tc']) * (1 + h['d2'])
    return t + h['off'] + h['d'] * (t - t0)

def true_of(h, x, t0):
    # invert local (increasing, piecewise linear)
    t = (x - h['off'] + h['d'] * t0) / (1 + h['d'])
    if 'tc' in h and t > h['tc']:
        base = local(h, h['tc'], t0)
        t = h['tc'] + (x - base) / (1 + h['d2'])
    return t

def synced(path):
    out = {}
    for line in open(path):
        w = line.split()
        if w and w[0] == 'host':
            kv = dict(zip(w[2::2], w[3::2]))
            out[w[1]] = kv
    return out

def apply(kv, x):
    return int(kv['y0']) + ((int(kv['slope']) * (x - int(kv['t0']))) >> 60)

t0, th = truth(sys.argv[1])
sy = synced(sys.argv[2])
checks = bad = 0
worst = 0.0
for name, kv in sorted(sy.items()):
    q = kv['quality']
    first, last = int(kv['first']), int(kv['last'])
    ref = kv['reference']
    line = '%s %s ref %s' % (name, q, ref)
    if q in ('fail', 'one-way', 'absent') or kv['bound_max'] == '-':
        # no bound: report the error at mid only
        x = (first + last) // 2
        err = apply(kv, x) - local(th[ref], true_of(th[name], F(x), t0), t0)
        print('#', line, 'no bound, error at mid %.0f ns' % float(err))
        continue
    pts = [(first, 'bound_start'), ((first + last) // 2, 'bound_mid'), (last, 'bound_end')]
    pts += [(first + (last - first) * k // 20, 'bound_max') for k in range(21)]
    emax = 0
    for x, key in pts:
        want = local(th[ref], true_of(th[name], F(x), t0), t0)
        err = abs(apply(kv, x) - want)
        b = int(kv[key])
        checks += 1
        emax = max(emax, float(err))
        if err > b + 1:
            bad += 1
            print('bad %s at %d: error %.1f ns > %s %d' % (name, x, float(err), key, b))
        if b > 0:
            worst = max(worst, float(err) / b)
    print('#', line, 'error max %.0f ns, bound mid %s max %s ns' % (emax, kv['bound_mid'], kv['bound_max']))
print('checks %d bad %d worst_ratio %.3f' % (checks, bad, worst))
EOF

# inv.py: probe_recv printed before its probe_send (print --clock-seconds)
cat > inv.py <<'EOF'
import sys, re
sends, recvs = {}, {}
n = 0
for i, line in enumerate(open(sys.argv[1])):
    m = re.match(r'^\[(\d+)\.(\d+)\] \([^)]*\) (\S+) trawl_sync:probe_(send|recv): .*key = (\d+), peer = "([^"]*)"', line)
    if not m:
        continue
    ts = int(m.group(1)) * 10**9 + int(m.group(2))
    host, kind, key, peer = m.group(3), m.group(4), m.group(5), m.group(6)
    if kind == 'send':
        sends.setdefault((host, key), []).append((i, ts))
    else:
        recvs.setdefault((peer, key), []).append((i, ts))
inv = 0
for k, r in recvs.items():
    s = sends.get(k)
    if not s or len(s) > 1 or len(r) > 1:
        continue
    n += 1
    if r[0][0] < s[0][0] or r[0][1] < s[0][1]:
        inv += 1
print('%d %d' % (n, inv))
EOF

plan 57

# run_case NAME EXPECT SIMULATE-OPTIONS...: simulate, sync, check the truth.
# EXPECT: the quality every non-reference node must have ("accurate"), or
# "any" (checked by the caller).
run_case() {
	name=$1 expect=$2
	shift 2
	"$TRAWL" simulate -o "$name" --hosts 3 --events 3000 --seed 7 --sync "$@" > "$name.sim" 2>&1 &&
		"$TRAWL" sync "$name" > "$name.out" 2> "$name.err"
	ok $? "$name: simulate --sync $* and sync"
	python3 check.py "$name/truth.txt" "$name/sync.txt" > "$name.chk"
	grep -v '^#' "$name.chk" | sed 's/^/# /'
	grep '^#' "$name.chk"
	res=$(tail -1 "$name.chk")
	case "$res" in "checks "*" bad 0 "*) r=0 ;; *) r=1 ;; esac
	ok $r "$name: the truth within the bound at start, mid, end and 21 instants ($res)"
	if [ "$expect" != any ]; then
		q=$(awk '$1 == "host" { for (i = 2; i < NF; i++) if ($i == "quality") print $(i + 1) }' \
			"$name/sync.txt" | sort | uniq -c | tr -s ' ' | tr '\n' ';')
		is "$q" " 2 $expect; 1 reference;" "$name: quality $expect for both other nodes"
	fi
}

run_case base accurate
run_case asym accurate --asym 3
run_case jitter accurate --jitter 300
run_case loss accurate --loss 0.3
run_case reorder accurate --sync-rate 5000 --jitter 2000
run_case dups accurate --dup 0.2
run_case fardrift accurate --max-drift 100 --seed 11 --max-offset 50000000000

# the reported quantities: asymmetry shows up as error, inside the bound
grep -q 'worst_ratio' asym.chk
ok $? "asym: error/bound ratio reported ($(tail -1 asym.chk))"

# duplicates and loss are counted per pair
dup_json=$("$TRAWL" sync --json --no-store dups)
echo "$dup_json" | python3 -c '
import json, sys
d = json.load(sys.stdin)
n = sum(p["duplicates_ab"] + p["duplicates_ba"] for p in d["pairs"])
sys.exit(0 if n > 0 else 1)'
ok $? "dups: duplicate keys counted"
"$TRAWL" sync --json --no-store loss | python3 -c '
import json, sys
d = json.load(sys.stdin)
lost = sum(p["lost_ab"] + p["lost_ba"] for p in d["pairs"])
msgs = sum(p["messages_ab"] + p["messages_ba"] for p in d["pairs"])
sys.exit(0 if lost > msgs * 0.2 else 1)'
ok $? "loss: about 30 % of the probes counted lost"

# batch and incremental agree (same transforms, bounds, qualities)
for c in base loss reorder dups; do
	# the kept hull sizes differ by design: the incremental form prunes
	"$TRAWL" sync --json --no-store "$c" | sed -e 's/"mode":"batch",//' -e 's/"hull_ab":[0-9]*,"hull_ba":[0-9]*,//g' > "$c.b.json"
	"$TRAWL" sync --json --no-store --incremental "$c" | sed -e 's/"mode":"incremental",//' -e 's/"hull_ab":[0-9]*,"hull_ba":[0-9]*,//g' > "$c.i.json"
	cmp_files "$c.i.json" "$c.b.json" "$c: incremental == batch (every figure)"
done

# no probe received before it was sent, once synced
for c in base asym loss reorder; do
	"$TRAWL" print --clock-seconds -e 'trawl_sync:probe_*' "$c" > "$c.print" 2> "$c.print.err"
	res=$(python3 inv.py "$c.print")
	n=${res% *} inv=${res#* }
	[ "$n" -gt 500 ] && [ "$inv" -eq 0 ]
	ok $? "$c: after sync, no probe_recv before its probe_send ($n messages, $inv inverted)"
done
grep -q "^trawl print: clocks corrected by base/sync.txt (reference host" base.print.err
ok $? "print says it applied base/sync.txt ($(head -1 base.print.err))"
"$TRAWL" print --no-sync --clock-seconds -e 'trawl_sync:probe_*' base > raw.print 2> raw.err
res=$(python3 inv.py raw.print)
[ "${res#* }" -gt 0 ] && [ ! -s raw.err ]
ok $? "--no-sync: raw clocks, silently ($res: messages inverted by the offsets)"

# --match on the application's RPCs alone
"$TRAWL" sync --no-probes --match 'app:rpc_send.msg_id = app:rpc_recv.msg_id' base > rpc.out 2>&1
ok $? "sync with --match app:rpc_send.msg_id = app:rpc_recv.msg_id only"
grep -q 'probe 0, tcp 0, match [1-9]' rpc.out
ok $? "the messages are the matched RPCs ($(grep -o 'messages (.*)' rpc.out))"
python3 check.py base/truth.txt base/sync.txt > rpc.chk
tail -1 rpc.chk | grep -q ' bad 0 '
ok $? "--match: the truth within its bounds ($(tail -1 rpc.chk))"

# one-way traffic: marked, no bound, the fallback said
run_case oneway any --one-way
q=$(grep -c 'quality one-way' oneway/sync.txt)
is "$q" 2 "one-way: both other nodes marked one-way"
grep -q 'bound_max -' oneway/sync.txt && grep -q 'fallback = slope 1' oneway.out
ok $? "one-way: no bound, the fallback is printed"

# a drift change mid-trace (200 ppm at half the span of host2): marked
run_case bend any --delay 10 --jitter 3 --drift-change 2:0.5:200
q=$(awk '$1 == "host" && $2 == "host2" { for (i = 2; i < NF; i++) if ($i == "quality") print $(i + 1) }' bend/sync.txt)
is "$q" fail "bend: the node whose drift changed is fail"
grep -q 'fallback = the line with the fewest violations' bend.out &&
	grep -q 'warning: host2: quality fail' bend.err
ok $? "bend: the fallback is reported, and a warning"
grep -E '^  host[0-9] - host2 ' bend.out | grep -qv 'violations 0,'
ok $? "bend: the failed pairs report their violations"

# a split topology: two groups, each with its reference
run_case split any --hosts 4 --topology split
is "$(grep -c '^groups 2' split/sync.txt)" 1 "split: two groups stored"
grep -q '^groups 2 (disconnected' split.out
ok $? "split: the disconnected groups are reported"
refs=$(grep -c 'quality reference' split/sync.txt)
is "$refs" 2 "split: one reference per group"

# a chain with host0 as the reference: host3 is 3 hops away, its bounds
# add up along the path, and still hold
run_case chain any --hosts 4 --topology chain
"$TRAWL" sync --reference host0 chain > chain0.out 2>&1
ok $? "chain: sync --reference host0"
grep -q '^host host3 .* reference host0 .* hops 3 path host3,host2,host1,host0 ' chain/sync.txt
ok $? "chain: host3 is reached through host2 and host1"
python3 check.py chain/truth.txt chain/sync.txt > chain0.chk
tail -1 chain0.chk | grep -q ' bad 0 '
ok $? "chain: composed bounds hold against the truth ($(tail -1 chain0.chk))"
"$TRAWL" sync --reference nosuch chain > /dev/null 2> noref.err
is $? 1 "an unknown --reference fails"
finish
