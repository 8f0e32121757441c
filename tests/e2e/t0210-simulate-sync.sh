#!/bin/sh
# trawl simulate --sync: every host's own clock and the sync traffic, checked
# against the truth file. For each session an independent checker (python3)
# reads `trawl print` and truth.txt and asserts: the links of the topology,
# counts (sends = messages + duplicates, receives = sends - lost, per pair
# and kind; rate x span messages), key and id layouts, every recorded time
# attainable by the truth's clock, and, mapping each matched send and
# receive back to true time, no delay below the minimum, the minimum and
# mean delays of each pair as modelled, the asymmetry in the means, the
# local times apart by the offsets, and reordering where the jitter
# exceeds the spacing. Then: a host's kernel and ust events are the ones
# written without --sync, each time mapped exactly by the host's clock
# (drift changes included), host0 unchanged, determinism, babeltrace2 on
# the sync stream, a session of 300 k messages in bounded memory, and
# argument errors.
. "$TRAWL_SRC/tests/e2e/lib.sh"

command -v python3 > /dev/null 2>&1 || skip_all "python3 is not installed (the checker)"

cat > check.py <<'EOF'
import sys, re, statistics
from collections import defaultdict

def parse_truth(path):
    T = {'hosts': {}, 'links': {}, 'params': {}}
    lines = open(path).read().splitlines()
    T['magic'] = lines[0]
    for ln in lines:
        w = ln.split()
        if ln.startswith('start_ns '):
            T['start'] = int(w[1])
        elif ln.startswith('host '):
            h = {'off': int(w[3]), 'ppm': w[5], 'ppb': ppb(w[5]), 'change': None, 'ppb2': None}
            if len(w) > 6:
                h['change'] = int(w[7]); h['ppb2'] = ppb(w[9])
            T['hosts'][w[1]] = h
        elif ln.startswith('# span_ns '):
            T['span'] = int(w[2])
        elif ln.startswith('# topology '):
            kv = w[1:]
            T['params'] = dict(zip(kv[0::2], kv[1::2]))
        elif ln.startswith('# link host'):
            kv = dict(zip(w[4::2], w[5::2]))
            T['links'][(w[2], w[3])] = {k: float(v) for k, v in kv.items()}
    return T

def ppb(s):     # exact: at most 3 decimals
    neg = s.startswith('-'); s = s.lstrip('-')
    i, _, f = s.partition('.')
    assert len(f) <= 3, s
    v = int(i) * 1000 + int((f + '000')[:3])
    return -v if neg else v

def local(c, start, t):
    if c['change'] is None or t < c['change']:
        x = c['ppb'] * (t - start)
    else:
        x = c['ppb'] * (c['change'] - start) + c['ppb2'] * (t - c['change'])
    return t + c['off'] + (x + 500000000) // 1000000000

def inverse(c, start, L):
    """smallest true t with local(t) >= L, and whether local(t) == L"""
    if c['change'] is not None and L >= local(c, start, c['change']):
        base, lb, p = c['change'], local(c, start, c['change']), c['ppb2']
    else:
        base, lb, p = start, start + c['off'], c['ppb']
    t = base + ((L - lb) * 10**9) // (10**9 + p)
    t -= 3
    while local(c, start, t) < L:
        t += 1
    return t, local(c, start, t) == L

EV = re.compile(r'^\[(\d+)\.(\d{9})\] host(\d+) (\S+): \{ cpu_id = \d+ \}(.*)$')
SYNC = re.compile(r', \{ (key|msg_id) = (\d+), peer = "host(\d+)" \}$')

def read_print(path):
    for ln in open(path):
        m = EV.match(ln.rstrip('\n'))
        if m:
            yield int(m.group(1)) * 10**9 + int(m.group(2)), int(m.group(3)), m.group(4), m.group(5)

def linked(topo, one_way, H, a, b):
    if a == b or (one_way and a > b):
        return False
    if topo == 'star':
        return a == 0 or b == 0
    if topo == 'chain':
        return abs(a - b) == 1
    if topo == 'split':
        half = (H + 1) // 2
        return (a < half) == (b < half)
    return True

def report(ok, desc):
    print(('OK ' if ok else 'FAIL ') + desc)

def session(printfile, truthfile, reorder):
    T = parse_truth(truthfile)
    P = T['params']
    H = len(T['hosts'])
    start, span = T['start'], T['span']
    clk = [T['hosts']['host%d' % i] for i in range(H)]
    KIND = {'trawl_sync:probe_send': (0, 's'), 'trawl_sync:probe_recv': (0, 'r'),
            'app:rpc_send': (1, 's'), 'app:rpc_recv': (1, 'r')}
    sends = defaultdict(list)   # (kind, src, dst) -> [(ts, id)]
    recvs = defaultdict(list)   # (kind, src, dst) -> [(ts, id)]
    bad = 0; n = 0
    for ts, h, name, rest in read_print(printfile):
        if name not in KIND:
            continue
        n += 1
        k, side = KIND[name]
        m = SYNC.match(rest)
        if not m or (m.group(1) == 'key') != (k == 0) or int(m.group(3)) >= H:
            bad += 1
            continue
        ident, peer = int(m.group(2)), int(m.group(3))
        if side == 's':
            sends[(k, h, peer)].append((ts, ident))
        else:
            recvs[(k, peer, h)].append((ts, ident))
    report(n > 0 and bad == 0, 'sync events: %d, each with key/msg_id and peer (%d malformed)' % (n, bad))

    one_way = P['one_way'] == '1'
    want = {(a, b) for a in range(H) for b in range(H) if linked(P['topology'], one_way, H, a, b)}
    got = {(s, d) for (k, s, d) in list(sends) + list(recvs)}
    tl = {(int(a[4:]), int(b[4:])) for (a, b) in T['links']}
    report(want == got == tl, 'traffic on exactly the %s%s links (%d directed pairs)' %
           (P['topology'], ' one-way' if one_way else '', len(want)))

    rate = [float(P['sync_rate']), float(P['rpc_rate'])]
    per = [int(r * span // 10**9) for r in rate]
    names = ['probe', 'rpc']
    ok_n = all(T['links']['host%d' % a, 'host%d' % b][names[k] + 's'] == per[k]
               for (a, b) in want for k in (0, 1))
    report(ok_n, 'messages per pair = rate x span (%d probes, %d rpcs)' % (per[0], per[1]))

    ok_s = True; ok_r = True; tot = defaultdict(int)
    for (a, b) in want:
        L = T['links']['host%d' % a, 'host%d' % b]
        for k in (0, 1):
            s, r = sends[(k, a, b)], recvs[(k, a, b)]
            dups, lost = int(L[names[k] + '_dups']), int(L[names[k] + '_lost'])
            ids = defaultdict(int)
            for _, i in s:
                ids[i] += 1
            twice = sum(1 for v in ids.values() if v == 2)
            if len(s) != per[k] + dups or twice != dups or max(ids.values(), default=1) > 2:
                ok_s = False
            if len(r) != per[k] + dups - lost:
                ok_r = False
            tot['msgs'] += per[k]; tot['dups'] += dups; tot['lost'] += lost
            tot['copies'] += per[k] + dups
    report(ok_s, 'sends = messages + duplicates, duplicated keys sent twice, per pair and kind')
    report(ok_r, 'receives = sends - lost, per pair and kind')
    loss, dup = float(P['loss']), float(P['dup'])
    fl = tot['lost'] / max(tot['copies'], 1); fd = tot['dups'] / max(tot['msgs'], 1)
    def binom(k, n, p):     # within 4 standard deviations
        return abs(k - n * p) <= 4 * (n * p * (1 - p)) ** 0.5 + 0.5
    report(binom(tot['lost'], tot['copies'], loss) and binom(tot['dups'], tot['msgs'], dup),
           'lost fraction %.4f (asked %g), duplicated %.4f (asked %g)' % (fl, loss, fd, dup))

    ok_k = True; senders = {}
    for (k, a, b), lst in sends.items():
        for _, i in lst:
            if k == 0:
                if senders.setdefault(a, i >> 32) != i >> 32 or (i & 0xffffffff) % H != b:
                    ok_k = False
            elif i >> 44 != a or (i >> 27) & 0x1ffff != b:
                ok_k = False
    ok_k = ok_k and len(set(senders.values())) == len(senders)
    report(ok_k, 'probe keys: one sender id per host, receiver in the sequence; rpc ids: sender, receiver')

    # back to true time
    unatt = 0; below = 0; nmatch = 0
    delays = defaultdict(list); locdiff = defaultdict(list); order = defaultdict(list)
    inv = {}
    for key in want:
        a, b = key
        mind = T['links']['host%d' % a, 'host%d' % b]['min_delay_ns']
        for k in (0, 1):
            sm = defaultdict(list)
            for ts, i in sends[(k, a, b)]:
                sm[i].append(ts)
            rm = defaultdict(list)
            for ts, i in recvs[(k, a, b)]:
                rm[i].append(ts)
            for lst, h in ((sends[(k, a, b)], a), (recvs[(k, a, b)], b)):
                for ts, _ in lst:
                    t, exact = inverse(clk[h], start, ts)
                    inv[(h, ts)] = t
                    unatt += not exact
            for i, r in rm.items():
                s = sm.get(i)
                if s is None:
                    below += 1      # a receive without a send
                    continue
                if len(s) != 1 or len(r) != 1:
                    continue
                ts_s, ts_r = s[0], r[0]
                d = inv[(b, ts_r)] - inv[(a, ts_s)]
                nmatch += 1
                if d < mind - 3:
                    below += 1
                delays[key].append(d)
                locdiff[key].append(ts_r - ts_s - d)
                if k == 0:
                    order[key].append((ts_r, (i & 0xffffffff) // H))
    report(unatt == 0, 'every recorded time is the truth clock\'s reading of a true time (%d not)' % unatt)
    report(below == 0 and nmatch > 0,
           'no message below the minimum delay in true time (%d matched, %d below or unmatched)' % (nmatch, below))

    ok_min = True; ok_mean = True; worst = 0.0
    for key, ds in delays.items():
        L = T['links']['host%d' % key[0], 'host%d' % key[1]]
        mind, jit = L['min_delay_ns'], L['jitter_mean_ns']
        if min(ds) - mind > max(0.2 * jit, 100):
            ok_min = False
        if jit > 0 and len(ds) >= 100:
            rel = abs((statistics.fmean(ds) - mind) / jit - 1)
            worst = max(worst, rel)
            if rel > 0.2:
                ok_mean = False
        elif jit == 0 and max(ds) - mind > 3:
            ok_mean = False
    report(ok_min, 'per pair, the smallest true delay is close to the minimum delay')
    report(ok_mean, 'per pair, mean true delay - minimum = jitter mean (worst %.0f%% off)' % (100 * worst))

    up = [d for (a, b), ds in delays.items() if a < b for d in ds]
    dn = [d for (a, b), ds in delays.items() if a > b for d in ds]
    asym = float(P['asym'])
    if up and dn:
        ratio = statistics.fmean(dn) / statistics.fmean(up)
        report(abs(ratio / asym - 1) < 0.1, 'asymmetry: mean delay down / up = %.3f (asked %g)' % (ratio, asym))
    else:
        report(not dn and one_way, 'one direction only: no message from a higher- to a lower-numbered host')

    ok_off = True; worst = 0
    for (a, b), xs in locdiff.items():
        # (recv local - send local) - true delay = what the clocks add: the
        # offsets' difference plus the drifts' accumulated difference
        tol = (abs(clk[a]['ppb']) + abs(clk[b]['ppb']) + abs(clk[a]['ppb2'] or 0) +
               abs(clk[b]['ppb2'] or 0)) * (span + 10**9) // 10**9 + 3
        dev = max(abs(x - (clk[b]['off'] - clk[a]['off'])) for x in xs)
        worst = max(worst, dev)
        if dev > tol:
            ok_off = False
    report(ok_off, 'local times apart by the clock offsets (within the drifts: worst %d ns)' % worst)

    inversions = 0
    for key, lst in order.items():
        lst.sort()
        inversions += sum(1 for x, y in zip(lst, lst[1:]) if y[1] < x[1])
    report((inversions > 0) == (reorder == 'yes'),
           'receives out of send order: %d (expected %s)' % (inversions, 'some' if reorder == 'yes' else 'none'))

def shift(plain, synced, truthfile, host):
    """host's kernel/ust events of a run with --sync = those without, at local(t)"""
    T = parse_truth(truthfile)
    c = T['hosts']['host%d' % host]
    KEEP = re.compile(r'^(sched_|syscall_|app:request_begin)')
    a = sorted((local(c, T['start'], ts), name, rest) for ts, h, name, rest in read_print(plain)
               if h == host and KEEP.match(name))
    b = sorted((ts, name, rest) for ts, h, name, rest in read_print(synced)
               if h == host and KEEP.match(name))
    ends = sum(1 for ts, h, name, rest in read_print(synced) if h == host and name == 'app:request_end')
    ends0 = sum(1 for ts, h, name, rest in read_print(plain) if h == host and name == 'app:request_end')
    k = sum(1 for x in a if not x[1].startswith('app'))
    report(len(a) > 100 and a == b and ends == ends0,
           'host%d: %d kernel and %d ust events as without --sync, each at local(true time), exactly'
           % (host, k, len(a) - k))

if sys.argv[1] == 'session':
    session(sys.argv[2], sys.argv[3], sys.argv[4])
else:
    shift(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
EOF

# check SESSION-PRINT TRUTH REORDER: the checker's 14 results as TAP
check() {
	python3 check.py session "$1" "$2" "$3" > check.out 2>&1
	[ "$(grep -c '^OK \|^FAIL ' check.out)" -eq 14 ] || { cat check.out; echo "FAIL checker"; } >> check.out
	while read -r st desc; do
		case "$st" in OK) ok 0 "$4: $desc" ;; FAIL) ok 1 "$4: $desc" ;; *) echo "# $st $desc" ;; esac
	done < check.out
}
shiftcheck() {
	python3 check.py shift "$@" > check.out 2>&1
	st=$(head -1 check.out | cut -d' ' -f1) desc=$(head -1 check.out | cut -d' ' -f2-)
	[ "$st" = OK ]
	ok $? "$desc"
}
pr() { "$TRAWL" print --clock-seconds --no-delta "$1" > "$2"; }

plan 98

# --- 1. defaults: mesh of 3, +-5 s, +-100 ppm, 200 probes and 50 RPCs /s/pair
"$TRAWL" simulate -o d --hosts 3 --events 6000 --seed 11 --sync > d.sim 2>&1
ok $? "simulate --sync, 3 hosts"
grep -q '^trawl simulate: sync: 1200 probes and 300 RPCs: 1500 sends (0 duplicated), 1500 receives (0 lost); truth in d/truth.txt$' d.sim
ok $? "summary: 1200 probes and 300 RPCs ($(tail -1 d.sim | cut -c1-60)...)"
head -3 d/truth.txt > h.txt
printf '%s\n' '# trawl simulate truth 1' "start_ns $(sed -n 's/^start_ns //p' d/truth.txt)" \
	'# host NAME offset_ns OFFSET drift_ppm DRIFT [change_ns T drift2_ppm DRIFT2]' > w.txt
cmp_files h.txt w.txt "truth.txt: magic, start_ns, host line format"
grep -q '^host host0 offset_ns 0 drift_ppm 0$' d/truth.txt
ok $? "host0 is the reference: offset 0, drift 0"
awk '/^host host[12] / { n++; o = $4 < 0 ? -$4 : $4; d = $6 < 0 ? -$6 : $6;
	if (o > 5000000000 || o < 1000 || d > 100 || NF != 6) bad++ }
	END { exit !(n == 2 && !bad) }' d/truth.txt
ok $? "host1, host2: offsets within +-5 s, drifts within +-100 ppm, no change"
pr d d.txt
start=$(sed -n 's/^start_ns //p' d/truth.txt)
first=$(grep -m1 ' host0 ' d.txt | cut -c2-21)
python3 -c "import sys; s, f = sys.argv[1:]; f = int(f.replace('.', '')); sys.exit(not s.isdigit() or not 0 <= f - int(s) < 2000000)" "$start" "$first"
ok $? "start_ns ($start) is the session's start (host0's first event $first)"
check d.txt d/truth.txt no defaults

# the same seed without --sync: host1's events shifted by its clock, host0's not
"$TRAWL" simulate -o p --hosts 3 --events 6000 --seed 11 > p.sim 2>&1
pr p p.txt
shiftcheck p.txt d.txt d/truth.txt 1
shiftcheck p.txt d.txt d/truth.txt 0
f0=$(grep -m1 ' host1 sched_' p.txt | cut -c2-21) f1=$(grep -m1 ' host1 sched_' d.txt | cut -c2-21)
off1=$(sed -n 's/^host host1 offset_ns \([-0-9]*\) .*/\1/p' d/truth.txt)
python3 -c "import sys; a, b, o = sys.argv[1:]; d = round((float(b) - float(a)) * 1e9) - int(o); sys.exit(abs(d) > 200000)" "$f0" "$f1" "$off1"
ok $? "host1's first kernel event moved by its offset ($off1 ns): $f0 -> $f1"

"$TRAWL" simulate -o d2 --hosts 3 --events 6000 --seed 11 --sync > /dev/null 2>&1 && diff -r d d2 > /dev/null
ok $? "same seed: byte-identical session and truth"
"$TRAWL" simulate -o d3 --hosts 3 --events 6000 --seed 12 --sync > /dev/null 2>&1
[ "$(grep '^host host1' d/truth.txt)" != "$(grep '^host host1' d3/truth.txt)" ]
ok $? "another seed: other clocks"
rm -rf d2 d3

if command -v babeltrace2 > /dev/null 2>&1; then
	babeltrace2 --clock-seconds --no-delta d 2> d.bt.err | grep 'trawl_sync:\|app:rpc_' > d.bt
	grep 'trawl_sync:\|app:rpc_' d.txt > d.sy
	is "$(wc -l < d.bt)" 3000 "babeltrace2 reads 3000 sync events"
	sort d.bt > d.bt.s; sort d.sy > d.sy.s
	cmp_files d.bt.s d.sy.s "babeltrace2 and trawl print show the same sync events"
	[ ! -s d.bt.err ]
	ok $? "babeltrace2: no warning"
else
	for i in 1 2 3; do skip "babeltrace2 is not installed"; done
fi

# --- 2. star, asymmetric delays, loss, duplicates
"$TRAWL" simulate -o a --hosts 4 --events 4000 --seed 3 --sync --topology star \
	--delay 100 --jitter 10 --asym 3 --loss 0.1 --dup 0.1 > a.sim 2>&1
ok $? "simulate --sync --topology star --asym 3 --loss 0.1 --dup 0.1"
grep -q '^# link host1 host0 min_delay_ns 300000 jitter_mean_ns 30000 ' a/truth.txt &&
	grep -q '^# link host0 host1 min_delay_ns 100000 jitter_mean_ns 10000 ' a/truth.txt
ok $? "truth: per-pair delay parameters, asymmetry applied upward-to-downward"
pr a a.txt
check a.txt a/truth.txt no star

# --- 3. chain, one-way only, small offsets and drifts
"$TRAWL" simulate -o c --hosts 4 --events 4000 --seed 5 --sync --topology chain --one-way \
	--max-offset 100M --max-drift 2.5 --jitter 0 > c.sim 2>&1
ok $? "simulate --sync --topology chain --one-way --max-offset 100M --max-drift 2.5 --jitter 0"
awk '/^host host[1-3] / { o = $4 < 0 ? -$4 : $4; d = $6 < 0 ? -$6 : $6; if (o > 100000000 || d > 2.5) bad++; n++ }
	END { exit !(n == 3 && !bad) }' c/truth.txt
ok $? "offsets within +-100 ms, drifts within +-2.5 ppm"
pr c c.txt
check c.txt c/truth.txt no chain

# --- 4. split, jitter over the spacing: receives reordered
"$TRAWL" simulate -o s --hosts 4 --events 4000 --seed 8 --sync --topology split \
	--sync-rate 5000 --rpc-rate 1000 --delay 20 --jitter 400 > s.sim 2>&1
ok $? "simulate --sync --topology split --sync-rate 5000 --jitter 400"
pr s s.txt
check s.txt s/truth.txt yes split

# --- 5. drift changes mid-trace
"$TRAWL" simulate -o x --hosts 3 --events 6000 --seed 11 --sync \
	--drift-change 1:0.5:-60 --drift-change host2:0.25:80.125 > x.sim 2>&1
ok $? "simulate --sync --drift-change 1:0.5:-60 --drift-change host2:0.25:80.125"
span=$(sed -n 's/^# span_ns \([0-9]*\) .*/\1/p' x/truth.txt)
start=$(sed -n 's/^start_ns //p' x/truth.txt)
grep -q "^host host1 offset_ns $off1 drift_ppm [-0-9.]* change_ns $((start + span / 2)) drift2_ppm -60\$" x/truth.txt &&
	grep -q "^host host2 .* change_ns $((start + span / 4)) drift2_ppm 80.125\$" x/truth.txt
ok $? "truth: change_ns at the fraction of the span, drift2_ppm as asked"
pr x x.txt
check x.txt x/truth.txt no drift-change
shiftcheck p.txt x.txt x/truth.txt 1

# --- 6. a few hundred thousand messages, bounded memory
if [ -x /usr/bin/time ]; then
	/usr/bin/time -f '%M %e' -o big.rss "$TRAWL" simulate -o big --hosts 4 --events 40000 --seed 2 \
		--sync --sync-rate 25000 --rpc-rate 5000 --dup 0.01 --loss 0.01 > big.sim 2>&1
	ok $? "simulate --sync with 300 k messages"
	rss=$(tail -1 big.rss | cut -d' ' -f1) secs=$(tail -1 big.rss | cut -d' ' -f2)
	grep -q '^trawl simulate: sync: 300000 probes and 60000 RPCs' big.sim && [ "$rss" -lt 65536 ]
	ok $? "300000 probes and 60000 RPCs in bounded memory (max RSS $rss KiB, $secs s)"
	"$TRAWL" info big > big.info 2>&1
	ok $? "trawl info reads it"
	rm -rf big
else
	for i in 1 2 3; do skip "/usr/bin/time is not installed"; done
fi

# --- errors
rcs=""
for args in "--sync --hosts 300" "--sync --topology ring" "--sync --loss 1.5" "--sync --dup -0.1" \
	"--sync --asym 0" "--sync --max-drift 2000" "--sync --max-offset 2000G" \
	"--sync --drift-change 1:1.5:10" "--sync --drift-change 1:0.5" "--sync --drift-change 7:0.5:10" \
	"--sync --drift-change 1:0.5:1 --drift-change 1:0.7:2" "--sync --sync-rate x" "--delay 5"; do
	"$TRAWL" simulate -o e $args > /dev/null 2> err.txt
	rcs="$rcs$? "
done
is "$rcs" "2 2 2 2 2 2 2 2 2 2 2 2 2 " "bad sync arguments exit 2"
grep -q "^trawl simulate: --delay needs --sync" err.txt
ok $? "a sync option without --sync says so ($(head -1 err.txt))"
[ ! -e e ]
ok $? "and nothing is written"

finish
