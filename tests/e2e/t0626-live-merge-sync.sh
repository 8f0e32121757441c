#!/bin/sh
# The live merge corrects every node's clock as the stream flows: 3 nodes
# on loopback, each in its own time namespace whose CLOCK_MONOTONIC is
# offset by whole seconds (0, +2, -1 s), exchange probes and stream them
# to a relay; a 4th exchanges nothing. `trawl print --live -f json` over
# the session (no stored sync: the default is the live one), and after it
# the relay's copy with --no-sync:
#  - a note per node as its correction changes; the last of each
#    synchronized node holds the truth (|offset - truth| <= bound, the
#    truth the difference of the namespace offsets, no drift);
#  - the node that exchanged no message is said unsynchronized, and shown
#    in its own clock (not aligned);
#  - the output is in time order, each host's times never go back;
#  - after convergence (the second half of the messages) no message is
#    received before it is sent, and each one's latency is within 50 ms of
#    its true latency (the clocks are seconds apart: only corrected times
#    agree; the truth is the relay's raw copy less the namespaces' known
#    offsets, so a loaded machine's slow deliveries are no failure), while
#    with --no-sync the same messages are seconds off;
#  - trawl top -b --json over a second such session shows each node's
#    clock as corrected: its offset within its bound of the truth, one
#    reference, the lone node unsynchronized if shown (it has no events);
#  - a relay with --metrics (its cluster's reader corrects the clocks
#    too) over a third such session: trawl_host_clock_offset_seconds of
#    each node within trawl_host_clock_bound_seconds of the truth, the
#    reference at 0, while the session is streamed.
. "$TRAWL_SRC/tests/e2e/lib.sh"
need_timens
command -v python3 > /dev/null 2>&1 || skip_all "needs python3 (the truth checker)"
plan 13

pids=""
cleanup() { for p in $pids; do kill "$p" 2> /dev/null; done; }
trap cleanup EXIT

relay_up OUT

timeout 120 "$TRAWL" print -f json --live "net://$LIVE/session/pm" > synced.jsonl 2> synced.err &
V1=$!
pids="$pids $V1"
until_ok 30 grep -q 'no such session yet: waiting' synced.err

set -- $(udp_ports 4)
P0=$1 P1=$2 P2=$3 P3=$4
SESS=pm
probe() { nsprobe "loc-$SESS" "$SESS" "$@"; }	# probe I OFFSET PORT SECONDS PEERS...
# cluster SECONDS: the 3 probing nodes, each to the 2 others, at 100/s
cluster() {
	probe 0 0 $P0 "$1" --rate 100 --peer n1=127.0.0.1:$P1 --peer n2=127.0.0.1:$P2 &
	probe 1 2 $P1 "$1" --rate 100 --peer n0=127.0.0.1:$P0 --peer n2=127.0.0.1:$P2 &
	probe 2 -1 $P2 "$1" --rate 100 --peer n0=127.0.0.1:$P0 --peer n1=127.0.0.1:$P1 &
}
cluster 5
probe 3 1 $P3 5 --rate 0 &
until_ok 60 eval '[ -f p0.rc ] && [ -f p1.rc ] && [ -f p2.rc ] && [ -f p3.rc ]'
is "$(cat p0.rc p1.rc p2.rc p3.rc | tr -d '\n')" 0000 "the 4 probes ran, streaming to the relay"
until_ok 60 gone "$V1"
wait "$V1"
is "$?" 0 "the viewer ends by itself once the session has"
"$TRAWL" print --no-sync -f json OUT/pm > raw.jsonl 2> raw.err

cat > check.py << 'EOF'
import json, re, sys
off = {'n0': 0, 'n1': 2 * 10**9, 'n2': -1 * 10**9, 'n3': 1 * 10**9}
what = sys.argv[1]
if what == 'notes':
    last, unsync, ref = {}, set(), None
    for l in open(sys.argv[2]):
        m = re.search(r'live sync: (\S+): offset ([-+0-9.]+) s, drift \S+ ppm, bound ([0-9]+) ns, \S+, reference (\S+),', l)
        if m:
            last[m.group(1)] = (float(m.group(2)) * 1e9, int(m.group(3)), m.group(4))
        m = re.search(r'live sync: (\S+): not synchronized yet', l)
        if m:
            unsync.add(m.group(1))
    good = bad = 0
    for h, (o, b, r) in sorted(last.items()):
        truth = off[h] - off[r]
        if abs(o - truth) <= b + 1:	# (the offset is said to the ns)
            good += 1
        else:
            bad += 1
            print('# %s: offset %.0f, truth %d, bound %.0f' % (h, o, truth, b), file=sys.stderr)
    print(good, bad, 'yes' if 'n3' in unsync and 'n3' not in last else 'no')
    sys.exit(0)
evs = [json.loads(l) for l in open(sys.argv[2])]
order = all(evs[i]['ts'] <= evs[i + 1]['ts'] for i in range(len(evs) - 1))
lasth, back = {}, 0
for e in evs:
    h = e['host']
    back += h in lasth and e['ts'] < lasth[h]
    lasth[h] = e['ts']
sends, recvs = {}, {}
for e in evs:
    n = e['event']
    f = e['fields']
    if n.endswith('probe_send'):
        sends[(e['host'], f['key'])] = e['ts']
    elif n.endswith('probe_recv'):
        recvs[(f['peer'], f['key'])] = e['ts']
msgs = sorted((sends[k], recvs[k], k) for k in sends if k in recvs)
half = msgs[len(msgs) // 2:]
early = sum(r < s for s, r, k in half)
if len(sys.argv) > 3:
    # the true latency: the raw copy's times less each namespace's offset
    raw_s, raw_r = {}, {}
    for l in open(sys.argv[3]):
        e = json.loads(l)
        if e['event'].endswith('probe_send'):
            raw_s[(e['host'], e['fields']['key'])] = e['ts'] - off[e['host']]
        elif e['event'].endswith('probe_recv'):
            raw_r[(e['fields']['peer'], e['fields']['key'])] = e['ts'] - off[e['host']]
    slow = sum(k not in raw_s or k not in raw_r or
               abs((r - s) - (raw_r[k] - raw_s[k])) > 50 * 10**6 for s, r, k in half)
else:
    slow = sum(r - s > 50 * 10**6 for s, r, k in half)
print(len(msgs), len(half), early, slow, 'yes' if order else 'no', back)
EOF
read -r good bad lone << EOF
$(python3 check.py notes synced.err)
EOF
ok $([ "${good:-0}" = 2 ] && [ "$bad" = 0 ]; echo $?) \
	"the last correction noted of each synchronized node holds the truth ($good right, $bad wrong: $(grep -c 'live sync' synced.err) notes)"
is "$lone" yes "the node that exchanged no message is said unsynchronized (its own clock)"
read -r n nhalf early slow order back << EOF
$(python3 check.py events synced.jsonl raw.jsonl)
EOF
is "$order $back" "yes 0" "the live output is in time order, no host's times go back ($n messages)"
ok $([ "${nhalf:-0}" -ge 100 ] && [ "$early" = 0 ] && [ "$slow" = 0 ]; echo $?) \
	"after convergence no message received before it is sent, and each one's latency within 50 ms of the truth ($nhalf messages: $early early, $slow off)"
read -r rn rhalf rearly rslow rorder rback << EOF
$(python3 check.py events raw.jsonl)
EOF
ok $([ "${rhalf:-0}" -ge 100 ] && [ $((rearly + rslow)) -ge $((rhalf / 2)) ]; echo $?) \
	"--no-sync (the relay's copy): the same messages, most seconds off ($rhalf messages: $rearly early, $rslow late)"
grep -q 'live sync' raw.err
is "$(grep -c '^{' raw.jsonl) $?" "$(grep -c '^{' synced.jsonl) 1" "the relay's copy has the events shown live, and --no-sync notes no correction"

# top: the same cluster, its clocks in the hosts' headers
rm -f p?.rc
SESS=pt
timeout 120 "$TRAWL" top -b --json -d 0.5 "net://$LIVE/session/pt" > top.jsonl 2> top.err &
TOP=$!
pids="$pids $TOP"
until_ok 30 grep -q 'no such session yet: waiting' top.err
cluster 4
probe 3 1 $P3 4 --rate 0 &
until_ok 60 eval '[ -f p0.rc ] && [ -f p1.rc ] && [ -f p2.rc ] && [ -f p3.rc ]'
is "$(cat p0.rc p1.rc p2.rc p3.rc | tr -d '\n')" 0000 "the 4 probes ran again, into a second session"
until_ok 60 gone "$TOP"
wait "$TOP"
is "$?" 0 "trawl top -b --json follows the second session to its end"
python3 - top.jsonl > topclock.txt << 'EOF2'
import json, sys
off = {'n0': 0, 'n1': 2 * 10**9, 'n2': -1 * 10**9, 'n3': 1 * 10**9}
last = {}
for l in open(sys.argv[1]):
    o = json.loads(l)
    if o.get('type') == 'host':
        last[o['host']] = o['clock']
good = bad = 0
for h, c in sorted(last.items()):
    if h == 'n3' or c is None or c['quality'] in ('reference', 'unsynchronized'):
        continue
    truth = off[h] - off[c['reference']]
    if c['bound_ns'] is not None and abs(c['offset_ns'] - truth) <= c['bound_ns']:
        good += 1
    else:
        bad += 1
print(good, bad, last.get('n3', {}).get('quality') if last.get('n3') else 'none',
      sum(1 for c in last.values() if c and c['quality'] == 'reference'))
EOF2
read -r tgood tbad tlone tref < topclock.txt
ok $([ "${tgood:-0}" = 2 ] && [ "$tbad" = 0 ] && { [ "$tlone" = unsynchronized ] || [ "$tlone" = none ]; } && [ "$tref" = 1 ]; echo $?) \
	"top's host headers: each node's clock within its bound of the truth ($tgood right, $tbad wrong), one reference ($tref), the lone node unsynchronized if shown ($tlone: a node without events has no header)"

# metrics: a relay whose cluster reads the session (its only viewer)
rm -f p?.rc
SESS=px
"$TRAWL" relay -o OUTM --data 127.0.0.1:0 --live 127.0.0.1:0 --metrics 127.0.0.1:0 \
	--pidfile relaym.pid > relaym.out 2> relaym.err
RELAYM=$(cat relaym.pid 2> /dev/null)
pids="$pids $RELAYM"
DATA=$(sed -n 's/^trawl relay: data on \([^,]*\), live on \([^,]*\), .*/\1/p' relaym.out)
M=$(sed -n 's|^trawl relay: metrics on http://\([^/]*\)/metrics.*|\1|p' relaym.out)
[ -n "$RELAYM" ] && [ -n "$DATA" ] && [ -n "$M" ] || { cat relaym.out relaym.err; echo "Bail out! the metrics relay did not start"; exit 1; }
cluster 8
cat > mclock.py << 'EOF2'
import re, sys
off = {'n0': 0, 'n1': 2 * 10**9, 'n2': -1 * 10**9}
o, b = {}, {}
for l in open(sys.argv[1]):
    m = re.match(r'trawl_host_clock_(offset|bound)_seconds\{(.*)\} (\S+)$', l)
    if not m:
        continue
    lab = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
    (o if m.group(1) == 'offset' else b)[lab['host']] = (float(m.group(3)), lab['reference'])
good = bad = refs = 0
for h, (v, r) in o.items():
    if h == r:
        refs += v == 0
        continue
    if h in b and abs(v * 1e9 - (off[h] - off[r])) <= b[h][0] * 1e9 + 1000:
        good += 1
    else:
        bad += 1
print(good, bad, refs)
EOF2
# scraped until the three nodes are there (the estimate comes once they probe)
mc() { curl -s "http://$M/metrics" > mc.txt && python3 mclock.py mc.txt > mc.out && [ "$(cut -d' ' -f1,3 mc.out)" = "2 1" ]; }
until_ok 30 mc
read -r mgood mbad mref < mc.out
# and then, scrape after scrape while the nodes probe: still right (a
# moment caught right is not enough)
later=""
for k in 1 2 3 4 5 6 7 8 9 10; do
	[ -f p0.rc ] && break
	curl -s "http://$M/metrics" > mc$k.txt && later="$later$(python3 mclock.py mc$k.txt);"
done
ok $([ "${mgood:-0}" = 2 ] && [ "$mbad" = 0 ] && [ "$mref" = 1 ] &&
	[ -n "$later" ] && [ -z "$(echo "$later" | tr ';' '\n' | grep -v '^2 0 1$' | grep .)" ]; echo $?) \
	"metrics: each node's trawl_host_clock_offset_seconds within its bound of the truth ($mgood right, $mbad wrong), the reference at 0, and in the scrapes after ($later)"
if command -v promtool > /dev/null 2>&1; then
	promtool check metrics < mc.txt > mpt.txt 2>&1
	ok $? "promtool accepts the exposition with the clock families $(sed 's/^/# /' mpt.txt | head -3)"
else
	skip "promtool is not installed (Debian's prometheus package, scripts/install-deps.sh)"
fi
until_ok 60 eval '[ -f p0.rc ] && [ -f p1.rc ] && [ -f p2.rc ]'
finish
