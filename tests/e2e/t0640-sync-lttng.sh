#!/bin/sh
# trawl sync --match on real LTTng traces: tests/lttng/record-sync.sh
# records, with LTTng 2.13 (lttng-ust), two processes posing as nodes A and
# B that exchange requests and replies over a socket pair
# (app_sync:msg_send before each write, app_sync:msg_recv after each read),
# each in its own LTTng session, and prepares them as a trawl session
# s/nodeA/ust, s/nodeB/ust (hostnames rewritten, nodeB's clock offset
# shifted by exactly SHIFT s: the truth is known, one machine's clock).
# trawl sync with --match only must find every message each way, mark the
# pair accurate and recover the shift within the reported bound (at start,
# middle, end and 21 instants); trawl print of the synced session must show
# the exact causal order (request sent, received, reply sent, received),
# which --no-sync does not; sync --apply -o OUT must give a copy that
# babeltrace2 reads in the same order with the same timestamps (within the
# documented rounding).
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v babeltrace2 >/dev/null 2>&1 || skip_all "babeltrace2 is not installed (the oracle)"
command -v python3 >/dev/null 2>&1 || skip_all "python3 is needed (output checks)"

COUNT=${COUNT:-300} SHIFT=5
MATCH='app_sync:msg_send.msg_id = app_sync:msg_recv.msg_id'
# (the fixture takes turns with other recordings on root's lttng-sessiond)
FIXTURE_BUILD="$TRASH/build" sh "$TRAWL_SRC/tests/lttng/record-sync.sh" rec "$COUNT" 1000 "$SHIFT" \
	> record.log 2>&1
rc=$?
if [ "$rc" -eq 77 ]; then
	skip_all "$(grep 'cannot record here' record.log | tail -1 | sed 's/^record-sync.sh: //')"
fi
if [ "$rc" -ne 0 ]; then
	plan 1
	ok 1 "tests/lttng/record-sync.sh records the LTTng sync fixture (exit $rc)"
	sed 's/^/#   /' record.log | tail -15
	finish
fi

plan 17
mv rec/session s
printf 'A->B %s\nB->A %s\n' "$COUNT" "$COUNT" > counts.want
cmp_files rec/counts counts.want "the program exchanged $COUNT messages each way"
grep -q '^	hostname = "nodeB";$' s/nodeB/ust/metadata &&
	grep -q '^	offset_s = 5;$' s/nodeB/ust/metadata && head -c 13 s/nodeA/ust/metadata | grep -q 'CTF 1.8'
ok $? "the prepared traces: text metadata, hostnames, nodeB's clock shifted"

# ---- sync with --match only
"$TRAWL" sync --match "$MATCH" s > sync.out 2> sync.err
ok $? "trawl sync --match '$MATCH' s"
[ ! -s sync.err ]
ok $? "nothing on stderr"
sed 's/^/# /' sync.out
n2=$((COUNT * 2))
grep -q "^session s: 2 hosts, 2 traces, $((n2 * 2)) sync events, $n2 messages (probe 0, tcp 0, match $n2), batch$" sync.out
ok $? "every event read, every message matched ($(head -1 sync.out))"
grep -q "^  nodeA - nodeB  accurate: messages $COUNT / $COUNT, lost 0 / 0, duplicates 0 / 0, violations 0, " sync.out
ok $? "the pair: accurate, $COUNT messages each way, none lost, no duplicates, no violation"
ref=$(sed -n 's/^reference \(node[AB]\) .*/\1/p' sync.out)
case "$ref" in nodeA) other=nodeB want=$((SHIFT * 1000000000)) ;;
	*) other=nodeA want=$((-SHIFT * 1000000000)) ;; esac
grep -A8 "^host $other\$" sync.out | grep -q "^  quality    accurate, via $other -> $ref (1 hop)$"
ok $? "$other: quality accurate (reference $ref)"
off=$(grep -A6 "^host $other\$" sync.out | sed -n 's/^  offset     \([-+][0-9]*\) ns.*/\1/p')
bs=$(grep -A7 "^host $other\$" sync.out | sed -n 's/^  bound      start \([0-9]*\) ns.*/\1/p')
awk -v o="$off" -v w="$want" -v b="$bs" 'BEGIN { e = o - w; if (e < 0) e = -e; exit !(b != "" && e <= b) }'
ok $? "$other: offset $off ns == the injected $want ns within the bound at start ($bs ns)"

# The truth: node time t of $other is reference time t - want, exactly.
# Check the stored transform against it at start, middle, end (with the
# bounds there) and 21 instants (with the largest bound).
python3 - s/sync.txt "$other" "$want" > truth.out <<'PYEOF'
import sys
path, node, want = sys.argv[1], sys.argv[2], int(sys.argv[3])
h = None
for line in open(path):
    w = line.split()
    if len(w) > 1 and w[0] == 'host' and w[1] == node:
        h = dict(zip(w[2::2], w[3::2]))
if h is None or '-' in (h['bound_start'], h['bound_mid'], h['bound_end'], h['bound_max']):
    print('no bounded entry for', node)
    sys.exit(1)
t0, y0, slope = int(h['t0']), int(h['y0']), int(h['slope'])
first, last = int(h['first']), int(h['last'])
def xf(t):
    return y0 + (slope * (t - t0) >> 60)
checks = [(first, int(h['bound_start'])), ((first + last) // 2, int(h['bound_mid']) + 1),
          (last, int(h['bound_end']))]
checks += [(first + (last - first) * k // 20, int(h['bound_max'])) for k in range(21)]
worst, bad = 0, 0
for t, b in checks:
    err = xf(t) - (t - want)
    worst = max(worst, abs(err))
    if abs(err) > b:
        bad += 1
print('%d instants, %d outside the bound, worst error %d ns, bound mid %s max %s ns'
      % (len(checks), bad, worst, h['bound_mid'], h['bound_max']))
sys.exit(1 if bad else 0)
PYEOF
ok $? "sync.txt: the true clock within the stored bound at 24 instants ($(cat truth.out))"

# ---- the exact causal order: request i sent (A), received (B), reply sent
# (B), received (A); every receive after its send, in order and in time.
cat > order.py <<'PYEOF'
import re, sys
path, count = sys.argv[1], int(sys.argv[2])
R = 1000000
want = []
for i in range(1, count + 1):
    want += [('nodeA', 'send', i), ('nodeB', 'recv', i), ('nodeB', 'send', R + i),
             ('nodeA', 'recv', R + i)]
got, ts, sent = [], {}, {}
inv = 0
for line in open(path):
    m = re.match(r'^\[(\d+)\.(\d{9})\] \([^)]*\) (\S+) app_sync:msg_(send|recv): .*msg_id = (\d+)', line)
    if not m:
        continue
    t = int(m.group(1)) * 10**9 + int(m.group(2))
    host, kind, key = m.group(3), m.group(4), int(m.group(5))
    got.append((host, kind, key))
    ts[(kind, key)] = t
    if kind == 'send':
        sent[key] = t
    elif key not in sent or sent[key] > t:
        inv += 1
print('%d events, %d received before sent, order %s' %
      (len(got), inv, 'exact' if got == want else 'differs'))
with open(path + '.ts', 'w') as f:
    for (kind, key), t in sorted(ts.items()):
        f.write('%s %d %d\n' % (kind, key, t))
sys.exit(0 if got == want and inv == 0 else 1)
PYEOF
"$TRAWL" print --clock-seconds s > p.txt 2> p.err
is "$(cat p.err)" "trawl print: clocks corrected by s/sync.txt (reference $ref)" "print applies s/sync.txt and says so"
res=$(python3 order.py p.txt "$COUNT")
ok $? "synced print: the exact causal order, no message received before sent ($res)"
"$TRAWL" print --no-sync --clock-seconds s > raw.txt 2> /dev/null
res=$(python3 order.py raw.txt "$COUNT")
[ $? -ne 0 ] && echo "$res" | grep -q "^$((COUNT * 4)) events, $COUNT received before sent"
ok $? "--no-sync: every reply shown received before sent, the check can fail ($res)"

# ---- --apply: a corrected copy, read by babeltrace2
"$TRAWL" sync --match "$MATCH" --no-store --apply -o out s > apply.out 2> apply.err
ok $? "trawl sync --match ... --apply -o out s"
[ ! -e out/sync.txt ] && grep -q 'corrected by trawl sync: nodeB\|corrected by trawl sync: nodeA' out/$other/ust/metadata
ok $? "the copy: $other's clock rewritten, no sync.txt"
babeltrace2 --clock-seconds out > out.bt 2> out.bt.err
ok $? "babeltrace2 reads the copy"
res=$(python3 order.py out.bt "$COUNT")
ok $? "babeltrace2 on the copy: the same exact causal order ($res)"
# same timestamps as trawl print of the synced session, within the
# documented residual (0.5 ns per second from the node's start + 2 ns)
res=$(python3 -c '
import sys
a = dict((tuple(l.split()[:2]), int(l.split()[2])) for l in open(sys.argv[1]))
b = dict((tuple(l.split()[:2]), int(l.split()[2])) for l in open(sys.argv[2]))
w = max(abs(b[k] - a[k]) for k in a) if a.keys() == b.keys() and a else -1
print(len(b), w)
sys.exit(0 if 0 <= w <= 3 else 1)' p.txt.ts out.bt.ts)
ok $? "babeltrace2 on the copy == trawl print of the synced session within 3 ns (events, worst ns: $res)"
finish
