#!/bin/sh
# trawl view: the page's data against the trace. An independent reader
# (viewpage.py) decodes the page's index and tiles; a checker compares them
# with `trawl print`: hosts, each CPU's spans (start, end, thread) exactly,
# thread states at every switch, events per host, every message as an
# arrow (probes, and --match'ed application events), the sync factors of
# sync.txt; the levels of detail (at most two items per bucket, counts
# kept); the page is self-contained; the size limit and its hint; --serve
# (the page, a tile's bytes, errors) on loopback; usage errors.
. "$TRAWL_SRC/tests/e2e/lib.sh"

command -v python3 > /dev/null 2>&1 || skip_all "python3 is not installed (the checker)"
plan 26

"$TRAWL" simulate -o s --hosts 3 --events 60000 --sync --seed 5 -q > /dev/null
"$TRAWL" sync s > sync.out 2>&1
ok $? "trawl sync"
"$TRAWL" view s -o v.html > out 2> err
ok $? "trawl view s -o v.html"
grep -q '^trawl view: v.html: [0-9]* events, 3 hosts, ' out
ok $? "summary line: $(cat out)"
"$TRAWL" print --no-sync -f json s > all.json 2> /dev/null

cat > check.py <<'EOF'
import json, sys, re
from collections import defaultdict
sys.path.insert(0, sys.argv[1])
import viewpage
what = sys.argv[2]
ix, blob = viewpage.load(sys.argv[3])
base = ix['base_s'] * 10**9 + ix['base_ns']
hosts = [h['name'] for h in ix['hosts']]
S = ix['strings']
rows = ix['rows']
def row(kind, host, id, depth=0):
    for r in rows:
        if r['kind'] == kind and hosts[r['host']] == host and r['id'] == id and r['depth'] == depth:
            return r
def fail(*a):
    print(*a); sys.exit(1)
evs = [json.loads(l) for l in open('all.json')] if what != 'serve' else []

if what == 'hosts':
    want = sorted(set(e['host'] for e in evs))
    if sorted(hosts) != want: fail(hosts, want)
    per = defaultdict(int)
    for e in evs: per[e['host']] += 1
    for h in hosts:
        r = row('host', h, 0)
        got = sum(i[3] for i in viewpage.items(ix, blob, r))
        if got != per[h]: fail(h, 'events', got, per[h])
    print(' '.join('%s:%d' % (h, per[h]) for h in sorted(hosts)))

elif what == 'cpus':
    last = defaultdict(int)
    for e in evs: last[e['host']] = max(last[e['host']], e['ts'])
    n = 0
    for h in hosts:
        for cpu in range(2):
            sw = [e for e in evs if e['host'] == h and e['cpu'] == cpu and e['event'] == 'sched_switch']
            want = []
            for i, e in enumerate(sw):
                end = sw[i + 1]['ts'] if i + 1 < len(sw) else last[h]
                if e['fields']['next_tid'] > 0:
                    want.append((e['ts'] - base, end - base, '%s %d' % (e['fields']['next_comm'], e['fields']['next_tid'])))
            got = [(s, e, S[v]) for s, e, v, c, d in viewpage.items(ix, blob, row('cpu', h, cpu))]
            if got != want:
                for a, b in zip(got, want):
                    if a != b: fail(h, cpu, 'got', a, 'want', b)
                fail(h, cpu, len(got), len(want))
            n += len(want)
    print(n, 'spans')

elif what == 'threads':
    n = 0
    idx = {}
    for r in rows:
        if r['kind'] == 'thread':
            idx[(hosts[r['host']], r['id'])] = {s: v & 7 for s, e, v, c, d in viewpage.items(ix, blob, r)}
    for e in evs:
        if e['event'] != 'sched_switch': continue
        f, t = e['fields'], e['ts'] - base
        if f['next_tid'] > 0:
            if idx[(e['host'], f['next_tid'])].get(t) not in (1, 4): fail('switched in, not running', e)
            n += 1
        if f['prev_tid'] > 0:
            want = 2 if f['prev_state'] == 0 else 3
            if idx[(e['host'], f['prev_tid'])].get(t) != want: fail('switched out', e, idx[(e['host'], f['prev_tid'])].get(t))
            n += 1
        if f['next_tid'] > 0 and S[[r for r in rows if r['kind'] == 'thread' and hosts[r['host']] == e['host'] and r['id'] == f['next_tid']][0]['label']] == '':
            fail('no name', e)
    print(n, 'states')

elif what == 'arrows':
    n = back = 0
    for r in rows:
        if r['kind'] != 'arrows': continue
        for s, e, v, c, d in viewpage.items(ix, blob, r):
            n += c; back += e < s
    print(n, back)

elif what == 'factors':
    sync = {}
    for l in open(sys.argv[4]):
        w = l.split()
        if len(w) > 1 and w[0] == 'host': sync[w[1]] = w
    for h in ix['hosts']:
        s = h.get('sync')
        if not s: fail('no sync for', h['name'])
        if h['name'] not in sync: fail('not in sync.txt', h['name'])
        w = sync[h['name']]
        if s['t0'] + base != int(w[w.index('t0') + 1]) or s['y0'] + base != int(w[w.index('y0') + 1]):
            fail(h['name'], s, sync[h['name']])
    print('ok')

elif what == 'lod':
    for r in rows:
        lv = r['levels']
        raw = viewpage.items(ix, blob, r, 0)
        for li in range(1, len(lv)):
            w = lv[li][0]
            its = viewpage.items(ix, blob, r, li)
            per = defaultdict(int)
            for s, e, v, c, d in its: per[s // w] += 1
            if max(per.values()) > 2: fail(r['kind'], w, 'bucket with', max(per.values()))
            if len(its) * 2 > len(viewpage.items(ix, blob, r, li - 1)): fail(r['kind'], w, 'level not half the last')
            if any(its[k][0] < its[k - 1][0] for k in range(1, len(its))): fail('unsorted')
            if r['kind'] in ('marks', 'slices', 'arrows', 'host') and sum(i[3] for i in its) != sum(i[3] for i in raw):
                fail(r['kind'], w, 'counts', sum(i[3] for i in its), sum(i[3] for i in raw))
    print('ok')

elif what == 'blob':
    # the tiles' characters cover the blob once, coarsest level first (the
    # page draws the whole trace from the first elements, docs/view.md)
    ts = sorted((t[4], t[5], lv[0]) for r in rows for lv in r['levels'] for t in lv[1])
    at = 0
    for off, n, w in ts:
        if off != at: fail('tile at', off, 'expected at', at)
        at += n
    if at != len(blob): fail('tiles cover', at, 'of', len(blob))
    widths = [w for _, _, w in ts]
    if any(widths[k] > widths[k - 1] for k in range(1, len(widths))): fail('a finer level before a coarser one')
    chunks = len(re.findall(rb'id="trawl-t[0-9]+"', open(sys.argv[3], 'rb').read()))
    if chunks != max(1, -(-len(blob) // ix['chunk'])): fail(chunks, 'tile elements for', len(blob))
    print(len(ts), chunks)

elif what == 'serve':
    import urllib.request, zlib
    url = sys.argv[4]
    page = urllib.request.urlopen(url).read()
    six = json.loads(re.search(rb'id="trawl-index">(.*?)</script>', page, re.S).group(1))
    if not six['served'] or six['rows'] != ix['rows']: fail('served index differs')
    t = rows[0]['levels'][0][1][0]
    got = urllib.request.urlopen(url + 'tile/%d' % t[3]).read()
    want = viewpage.unescape(blob[t[4]:t[4] + t[5]])
    if got != want: fail('tile bytes differ')
    print(len(page), len(got))
EOF
chk() { python3 check.py "$TRAWL_SRC/tests/e2e" "$@"; }

r=$(chk hosts v.html); ok $? "a host row per host, its events counted: $r"
r=$(chk cpus v.html); ok $? "every CPU's spans are the trace's switches (start, end, thread): $r"
r=$(chk threads v.html); ok $? "every thread's state at every switch: $r"
msgs=$(sed -n 's/.* messages (probe \([0-9]*\), tcp \([0-9]*\), match \([0-9]*\)).*/\1 \2 \3/p' sync.out | awk '{ print $1 + $2 + $3 }')
r=$(chk arrows v.html); is "${r% *}" "$msgs" "every message of trawl sync is an arrow ($msgs)"
[ "${r#* }" -gt 0 ]; ok $? "raw clocks: some arrows point back in time (${r#* })"
r=$(chk factors v.html s/sync.txt); ok $? "the sync factors are sync.txt's"
r=$(chk lod v.html); ok $? "levels of detail: <= 2 items per bucket, half the items of the level below, counts kept"
r=$(chk blob v.html); ok $? "the tiles cover the blob once, coarsest level first, in elements of the index's chunk: $r"
! grep -qiE '<(script|link|img)[^>]* (src|href)="([^d]|d[^a])' v.html; ok $? "no external resource in the page (data: only)"
grep -q "connect-src 'self'" v.html; ok $? "a content security policy: nothing fetched from elsewhere"

# --match: application events as messages too
"$TRAWL" sync s --match 'app:rpc_send.msg_id = app:rpc_recv.msg_id' > sync2.out 2>&1
m2=$(sed -n 's/.* messages (probe \([0-9]*\), tcp \([0-9]*\), match \([0-9]*\)).*/\1 \2 \3/p' sync2.out | awk '{ print $1 + $2 + $3 }')
"$TRAWL" view s -o m.html --match 'app:rpc_send.msg_id = app:rpc_recv.msg_id' > /dev/null 2>&1
r=$(chk arrows m.html); is "${r% *}" "$m2" "--match: the RPCs are arrows too ($m2 > $msgs)"

# without sync.txt: raw clocks only
"$TRAWL" view s --no-sync -o n.html > /dev/null 2>&1
ok $? "--no-sync"
! grep -q '"sync":{' n.html; ok $? "--no-sync: no clock factors in the page"

# too large for one file: refused, with the way out
"$TRAWL" view s -o big.html --max-size 64K > out 2> err
is "$?" 1 "--max-size 64K: refused"
grep -q '^trawl view: big.html: the page would be ' err && grep -q 'hint: .*trawl view --serve s' err
ok $? "says why and hints at --serve: $(grep '^trawl view: big' err)"
[ ! -e big.html ]; ok $? "no page written"

"$TRAWL" view s > /dev/null 2> err; is "$?" 2 "no -o nor --serve: usage error"
"$TRAWL" view -o x.html > /dev/null 2> err; is "$?" 2 "no session: usage error"
"$TRAWL" view s -o x.html --serve > /dev/null 2> err; is "$?" 2 "-o and --serve: usage error"

# --serve: on loopback, the same index and the same tile bytes
"$TRAWL" view --serve s > serve.out 2> serve.err &
pid=$!
until_ok 60 grep -q '^trawl view: serving http://127.0.0.1:[0-9]*/' serve.out
ok $? "--serve says where it listens"
url=$(sed -n 's|^trawl view: serving \(http://127.0.0.1:[0-9]*/\).*|\1|p' serve.out)
r=$(chk serve v.html "$url"); ok $? "--serve: the page (its index) and a tile's bytes: $r"
code() { python3 -c '
import sys, socket
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(sys.argv[2].encode().decode("unicode_escape").encode())
print(s.recv(64).decode().split()[1])' "$1" "$2"; }
port=${url#http://127.0.0.1:}; port=${port%/}
c1=$(code "$port" "GET /tile/999999 HTTP/1.1\r\n\r\n"); c2=$(code "$port" "POST / HTTP/1.1\r\n\r\n")
c3=$(code "$port" "GET nope\r\n\r\n")
is "$c1 $c2 $c3" "404 405 400" "--serve: no such tile, another method, a bad request"
# HEAD: GET's status and Content-Length, and no body (read until the server closes)
r=$(python3 -c '
import sys, socket, urllib.request
url = sys.argv[1]
page = urllib.request.urlopen(url).read()
s = socket.create_connection(("127.0.0.1", int(url.rsplit(":", 1)[1].strip("/"))))
s.sendall(b"HEAD / HTTP/1.1\r\n\r\n")
got = b""
while True:
    b = s.recv(65536)
    if not b: break
    got += b
head, _, body = got.partition(b"\r\n\r\n")
lines = head.decode().split("\r\n")
cl = [l.split(":")[1].strip() for l in lines if l.lower().startswith("content-length:")]
print(lines[0].split()[1], cl == [str(len(page))] and len(page) > 0, len(body))' "$url")
is "$r" "200 True 0" "--serve: HEAD, GET's length and no body"
kill "$pid"; wait "$pid"
finish
