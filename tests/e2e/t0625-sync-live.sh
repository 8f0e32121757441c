#!/bin/sh
# trawl sync --live: 3 nodes on loopback, each in its own time namespace
# whose CLOCK_MONOTONIC is offset by whole seconds (0, +2, -1 s), exchange
# probes and stream them to a relay (trawl probe --relay, live); a 4th
# node, started once the viewer shows the first three (a host that joins
# the session later: net://RELAY/session/S is every host, late ones
# included), streams too but exchanges nothing. The truth: node i's clock is
# the reference's plus the difference of their namespace offsets, no
# drift (one host clock). Followed live:
#  - started before the session exists, sync --live waits for it, then
#    ends by itself (exit 0) once every node's trace has ended;
#  - a line per node each time its estimate changes: every line with a
#    bound holds the truth at its time (|estimate - truth| <= bound), at
#    least one such line comes while the nodes still probe, the reference
#    stays the same from the first estimate on, and the bound converges
#    (the last no wider than the first);
#  - the node that exchanged no message is "unsynchronized", not aligned;
#  - the final result (--save) is the offline sync's of the relay's copy,
#    line for line, and holds the truth over each node's span;
#  - a reference that no host of the session is: said, with the session's
#    hosts, once the session has ended (exit 1);
#  - usage: --live takes a relay's session, a relay's session takes
#    --live (exit 2).
. "$TRAWL_SRC/tests/e2e/lib.sh"
need_timens
command -v python3 > /dev/null 2>&1 || skip_all "needs python3 (the truth checker)"
# the shifted clocks must stay positive: -1 s needs an uptime over 1 s
plan 14

pids=""
cleanup() { for p in $pids; do kill "$p" 2> /dev/null; done; }
trap cleanup EXIT

relay_up OUT

# the viewer first: it waits for the session
timeout 120 "$TRAWL" sync --live --json -d 0.2 --save live-sync.txt \
	"net://$LIVE/session/pl" > live.jsonl 2> live.err &
SYNC=$!
pids="$pids $SYNC"
until_ok 30 grep -q 'no such session yet: waiting' live.err
ok $? "sync --live waits for a session the relay does not have yet"

# free UDP ports on loopback for the probes (each listens on its own)
set -- $(udp_ports 4)
P0=$1 P1=$2 P2=$3 P3=$4
OFF0=0 OFF1=2 OFF2=-1 OFF3=1
probe() { nsprobe loc pl "$@"; }	# probe I OFFSET PORT SECONDS PEERS...
probe 0 $OFF0 $P0 6 --rate 100 --peer n1=127.0.0.1:$P1 --peer n2=127.0.0.1:$P2 &
probe 1 $OFF1 $P1 6 --rate 100 --peer n0=127.0.0.1:$P0 --peer n2=127.0.0.1:$P2 &
probe 2 $OFF2 $P2 6 --rate 100 --peer n0=127.0.0.1:$P0 --peer n1=127.0.0.1:$P1 &
# the late node: once the viewer has shown the first three
until_ok 30 eval '[ "$(grep -c "\"host\":\"n[012]\"" live.jsonl)" -ge 3 ]'
probe 3 $OFF3 $P3 3 --rate 0 &
until_ok 60 eval '[ -f p0.rc ] && [ -f p1.rc ] && [ -f p2.rc ] && [ -f p3.rc ]'
ended=$(python3 -c 'import time; print(int(time.time() * 1e9))')
is "$(cat p0.rc p1.rc p2.rc p3.rc | tr -d '\n')" 0000 "the 4 probes ran, streaming to the relay"
until_ok 60 gone "$SYNC"
wait "$SYNC"
is "$?" 0 "sync --live ends by itself (exit 0) once every node's trace has ended"

cat > lines.py << 'EOF'
import json, sys
off = {'n0': 0, 'n1': 2 * 10**9, 'n2': -1 * 10**9, 'n3': 1 * 10**9}
ended = int(sys.argv[2])
per, bad, checked, early, refs, final = {}, 0, 0, 0, set(), None
for l in open(sys.argv[1]):
    o = json.loads(l)
    if o.get('type') != 'node':
        final = o
        continue
    h, ref = o['host'], o['reference']
    per.setdefault(h, []).append(o)
    if o['quality'] in ('reference', 'unsynchronized') or o['bound_ns'] is None:
        continue
    refs.add(ref)
    x, t = o['at_ns'], o['to_reference']
    got = t['y0'] + ((t['slope'] * (x - t['t0'])) >> 60)
    want = x - (off[h] - off[ref])
    checked += 1
    early += o['wall_ns'] < ended
    if abs(got - want) > o['bound_ns'] + 1:
        bad += 1
        print('# bad: %s at %d: error %d > bound %d' % (h, x, got - want, o['bound_ns']),
              file=sys.stderr)
def bounds(v):
    return [b['bound_ns'] for b in v if b['bound_ns'] is not None and b['quality'] != 'reference'
            and b['quality'] != 'unsynchronized']
conv = all(not bounds(v) or bounds(v)[-1] <= bounds(v)[0] for v in per.values())
lone = per.get('n3', [{}])[-1].get('quality', 'none')
print(len(per), checked, bad, early, len(refs), 'yes' if conv else 'no', lone,
      'yes' if final else 'no')
EOF
read -r nhosts checked bad early nrefs conv lone final << EOF
$(python3 lines.py live.jsonl "$ended")
EOF
is "$nhosts" 4 "lines for each of the 4 nodes"
ok $([ "${checked:-0}" -ge 3 ] && [ "$bad" = 0 ]; echo $?) \
	"every live estimate with a bound holds the truth at its time ($checked lines, $bad wrong)"
ok $([ "${early:-0}" -ge 1 ]; echo $?) "estimates with a bound come while the nodes still probe ($early)"
is "$nrefs" 1 "one reference for every estimate (kept from the first)"
is "$conv" yes "each node's bound converges (the last no wider than the first)"
is "$lone" unsynchronized "the node that exchanged no message is unsynchronized, not aligned"
is "$final" yes "the whole result at the end, after the lines"

ref=$(sed -n 's/^host \([^ ]*\) .* reference \1 .*/\1/p' live-sync.txt | head -1)
"$TRAWL" sync -r "${ref:-n0}" OUT/pl > offline.out 2> offline.err
grep '^host ' OUT/pl/sync.txt > offline.hosts
grep '^host ' live-sync.txt > live.hosts
[ -s live.hosts ] && cmp -s live.hosts offline.hosts
ok $? "the saved live result is the offline sync's of the relay's copy, line for line (reference ${ref:-?})"
python3 - live-sync.txt > truth.chk << 'EOF'
import sys
off = {'n0': 0, 'n1': 2 * 10**9, 'n2': -1 * 10**9, 'n3': 1 * 10**9}
checks = bad = 0
for line in open(sys.argv[1]):
    w = line.split()
    if not w or w[0] != 'host':
        continue
    kv = dict(zip(w[2::2], w[3::2]))
    if kv['bound_max'] == '-' or kv['quality'] in ('reference', 'absent'):
        continue
    first, last, ref = int(kv['first']), int(kv['last']), kv['reference']
    for x, key in ((first, 'bound_start'), ((first + last) // 2, 'bound_mid'), (last, 'bound_end')):
        got = int(kv['y0']) + ((int(kv['slope']) * (x - int(kv['t0']))) >> 60)
        checks += 1
        bad += abs(got - (x - (off[w[1]] - off[ref]))) > int(kv[key]) + 1
print('checks %d bad %d' % (checks, bad))
EOF
is "$(cat truth.chk)" "checks 6 bad 0" "the saved result holds the truth at each synced node's start, middle and end"

timeout 60 "$TRAWL" sync --live -r nosuch "net://$LIVE/session/pn" > nr.out 2> nr.err &
NR=$!
pids="$pids $NR"
until_ok 30 grep -q 'no such session yet: waiting' nr.err
"$TRAWL" probe -q --host solo --listen "127.0.0.1:$P3" --rate 0 --duration 1 --clock-offset 0 \
	--relay "$DATA" --session pn > solo.out 2> solo.err
until_ok 30 gone "$NR"
wait "$NR"
nr=$?
grep -q "^trawl sync: no host 'nosuch' in net://$LIVE/session/pn (its hosts: solo)" nr.err
is "$nr $?" "1 0" "a reference no host of the session is: said, with its hosts ($(tail -1 nr.err | head -c 120))"

"$TRAWL" sync --live OUT/pl > u1.out 2> u1.err
r1=$?
"$TRAWL" sync "net://$LIVE/session/pl" > u2.out 2> u2.err
is "$r1 $?" "2 2" "--live takes a relay's session, and a relay's session takes --live (usage errors)"
finish
