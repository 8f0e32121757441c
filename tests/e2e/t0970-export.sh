#!/bin/sh
# trawl export: a simulated 3-host session with clock offsets and probes,
# synchronized, written as Perfetto's protobuf trace and decoded by protoc
# against tests/data/perfetto/trace.proto (the subset of Perfetto's
# messages trawl writes), and as chrome://tracing's JSON, parsed by python3.
# Expectations come from `trawl print -f json` and `trawl sync --json` on
# the same session: one machine per host, sched_switch per CPU of each
# host, timestamps corrected (as print's, not the raw ones), every probe a
# flow from one machine to another that never points back once synchronized
# (and some that do on raw clocks), --match adds the RPCs, slices and their
# names, --fields; chrome-json's pids per host, its flows, its limit. Then a real
# `trawl record -k sched` (root and tracefs, else skipped): its context
# switches per CPU, and the kernel's release (how Perfetto reads prev_state).
. "$TRAWL_SRC/tests/e2e/lib.sh"

command -v protoc > /dev/null 2>&1 || skip_all "protoc is not installed (protobuf-compiler)"
command -v python3 > /dev/null 2>&1 || skip_all "python3 is not installed"
plan 24

PROTO="$TRAWL_SRC/tests/data/perfetto"
decode() { protoc -I "$PROTO" --decode perfetto.protos.Trace trace.proto < "$1" > "$1.txt"; }
export PYTHONPATH="$TRAWL_SRC/tests/e2e"

"$TRAWL" simulate -o s --hosts 3 --cpus 2 --events 60000 --seed 7 --sync -q > /dev/null 2>&1
ok $? "a 3-host session with clocks seconds apart"
"$TRAWL" sync s > /dev/null 2>&1 && "$TRAWL" sync --json s > sync.json 2> /dev/null
ok $? "synchronized"
"$TRAWL" print -f json s > events.json 2> /dev/null &&
	"$TRAWL" print -f json --no-sync s > raw.json 2> /dev/null
ok $? "its events, corrected and raw"

"$TRAWL" export s -o s.pftrace > out.txt 2> err.txt
ok $? "trawl export (perfetto)"
grep -q "s.pftrace: .* records from .* events, 3 hosts" err.txt
ok $? "it says what it wrote"
"$TRAWL" export -H host0 -H 'host[2]' --no-flows s -o h.pftrace 2> herr.txt &&
	grep -q "h.pftrace: .* records from .* events, 2 hosts" herr.txt
ok $? "two --host options: the two hosts only"
mkdir nosync
"$TRAWL" export --sync nosync s -o n.pftrace 2> nerr.txt
is "$? $(cat nerr.txt)" "1 trawl export: nosync: no sync.txt there" "--sync DIR without a sync.txt: an error"
"$TRAWL" export --sync s --no-sync s -o n.pftrace > /dev/null 2>&1
is "$? $(ls n.pftrace 2> /dev/null)" "2 " "--sync and --no-sync: a usage error, nothing written"
decode s.pftrace
ok $? "protoc decodes it as perfetto.protos.Trace"

# check.py: compares the decoded trace with print's events and sync's
# messages; one line per check, "ok WHAT" or "bad WHAT: why"
cat > check.py <<'PY'
import json, sys, collections
from pftext import load, one
pk = load(sys.argv[1])
ev = [json.loads(l) for l in open(sys.argv[2])]
raw = [json.loads(l) for l in open(sys.argv[3])]
sync = json.load(open(sys.argv[4]))
want_flows = int(sys.argv[5])
hosts = sorted({e['host'] for e in ev})
refs = {h['host'] for h in sync['hosts'] if h['reference'] == h['host']}
def say(c, what, why=''):
    print(('ok ' if c else 'bad ') + what + ('' if c else ': ' + why))

machines = {one(p, 'machine_id'): one(one(p, 'system_info'), 'machine_name')
            for p in pk if 'system_info' in p}
say(machines == {i + 1: h for i, h in enumerate(hosts)}, 'machines', repr(machines))
say(all(one(p, 'machine_id') in machines for p in pk), 'every packet on a machine')

got = collections.Counter()
got_ts = collections.defaultdict(set)
for p in pk:
    for b in p.get('ftrace_events', []):
        m = machines[one(p, 'machine_id')]
        for e in b.get('event', []):
            if 'sched_switch' in e:
                got[(m, one(b, 'cpu'))] += 1
                got_ts[m].add(one(e, 'timestamp'))
want = collections.Counter((e['host'], e['cpu']) for e in ev if e['event'] == 'sched_switch')
say(got == want and len(want) == 2 * len(hosts), 'sched_switch per host and CPU',
    '%r != %r' % (sorted(got.items()), sorted(want.items())))
ok_ts = all(got_ts[h] == {e['ts'] for e in ev if e['event'] == 'sched_switch' and e['host'] == h}
            for h in hosts)
raw_ts = {e['ts'] for e in raw if e['event'] == 'sched_switch' and e['host'] not in refs}
say(ok_ts and not (raw_ts & set().union(*got_ts.values())), 'timestamps are the corrected ones')

names = {one(one(e, 'sched_switch'), 'next_comm') for p in pk for b in p.get('ftrace_events', [])
         for e in b['event'] if 'sched_switch' in e}
want_names = {e['fields']['next_comm'] for e in ev if e['event'] == 'sched_switch'}
say(names == want_names, 'thread names of the switches', repr(names ^ want_names))
prio = {one(one(e, 'sched_switch'), 'next_prio') for p in pk for b in p.get('ftrace_events', [])
        for e in b['event'] if 'sched_switch' in e}
say(120 in prio and all(p >= 0 for p in prio), "priorities are the kernel's (LTTng's + 100)")

ends = collections.defaultdict(dict)
for p in pk:
    te = one(p, 'track_event')
    if not te:
        continue
    for k in ('flow_ids', 'terminating_flow_ids'):
        for f in te.get(k, []):
            ends[f][k] = (one(p, 'machine_id'), one(p, 'timestamp'))
both = [v for v in ends.values() if len(v) == 2]
say(len(both) == want_flows and len(ends) == want_flows, 'flows: one per message',
    '%d tied, %d ids, want %d' % (len(both), len(ends), want_flows))
say(all(v['flow_ids'][0] != v['terminating_flow_ids'][0] for v in both), 'each between two machines')
back = sum(v['flow_ids'][1] > v['terminating_flow_ids'][1] for v in both)
say(back == 0, 'none received before it was sent', '%d backwards' % back)

kinds = collections.Counter(one(one(p, 'track_event'), 'type') for p in pk if 'track_event' in p)
nb = sum(e['event'] == 'app:request_begin' for e in ev)
ne = sum(e['event'] == 'app:request_end' for e in ev)
say(kinds['TYPE_SLICE_BEGIN'] == nb and kinds['TYPE_SLICE_END'] == ne,
    'a slice begins per app:request_begin, ends per app:request_end', repr(kinds))
snames = {one(one(p, 'track_event'), 'name') for p in pk if 'track_event' in p
          and one(one(p, 'track_event'), 'type') == 'TYPE_SLICE_BEGIN'}
say(snames == {'app:request'}, 'slices are named by their stem', repr(snames))
tracks = {one(one(p, 'track_descriptor'), 'uuid') for p in pk if 'track_descriptor' in p}
used = {one(one(p, 'track_event'), 'track_uuid') for p in pk if 'track_event' in p}
say(used <= tracks, 'every track event is on a described track', repr(len(used - tracks)))
PY
probes=$(python3 -c "import json; print(json.load(open('sync.json'))['messages']['probe'])")
python3 check.py s.pftrace.txt events.json raw.json sync.json "$probes" > check.txt 2>&1
ok $? "the checker ran"
bad=$(grep -c -v '^ok ' check.txt)
is "$bad" 0 "every check of the decoded trace holds ($(grep -c '^ok ' check.txt) checks)"
grep -v '^ok ' check.txt | sed 's/^/#   /'

# raw clocks: the same probes, some pointing back in time
"$TRAWL" export --no-sync s -o raw.pftrace 2> /dev/null && decode raw.pftrace
python3 - raw.pftrace.txt > back.txt <<'PY'
import sys
from pftext import load, one
ends = {}
for p in load(sys.argv[1]):
    te = one(p, 'track_event')
    for k in ('flow_ids', 'terminating_flow_ids') if te else ():
        for f in te.get(k, []):
            ends.setdefault(f, {})[k] = one(p, 'timestamp')
print(sum(len(v) == 2 and v['flow_ids'] > v['terminating_flow_ids'] for v in ends.values()))
PY
ok $([ "$(cat back.txt)" -gt 0 ]; echo $?) "raw clocks: $(cat back.txt) of $probes messages received before sent"

# --match ties the RPCs too
rpcs=$("$TRAWL" sync --json --match 'app:rpc_send.msg_id = app:rpc_recv.msg_id' s 2> /dev/null |
	python3 -c "import json,sys; print(json.load(sys.stdin)['messages']['total'])")
"$TRAWL" export --match 'app:rpc_send.msg_id = app:rpc_recv.msg_id' s -o m.pftrace -q && decode m.pftrace
python3 - m.pftrace.txt > m.txt <<'PY'
import sys
from pftext import load, one
ids = [f for p in load(sys.argv[1]) if 'track_event' in p
       for f in one(p, 'track_event').get('terminating_flow_ids', [])]
print(len(set(ids)))
PY
ok $([ "${rpcs:-0}" -gt "$probes" ] && [ "$(cat m.txt)" = "$rpcs" ]; echo $?) \
	"--match: probes and RPCs are flows ($(cat m.txt) of $rpcs)"
"$TRAWL" sync s > /dev/null 2>&1	# sync.txt as before --match

# --fields: each slice begins with its event's context and fields
"$TRAWL" export --fields s -o f.pftrace -q && decode f.pftrace
python3 - f.pftrace.txt events.json > f.txt <<'PY'
import json, sys
from pftext import load, one
key = lambda t: (t[0], json.dumps(t[1], sort_keys=True))
got = sorted([(one(p, 'timestamp'), json.loads(one(one(one(p, 'track_event'), 'debug_annotations'), 'legacy_json_value')))
              for p in load(sys.argv[1]) if 'track_event' in p
              and one(one(p, 'track_event'), 'type') == 'TYPE_SLICE_BEGIN'], key=key)
want = sorted(((e['ts'], {'context': e['context'], 'fields': e['fields']})
               for e in (json.loads(l) for l in open(sys.argv[2])) if e['event'] == 'app:request_begin'),
              key=key)
print('ok %d' % len(got) if got == want and got else 'bad %d %d' % (len(got), len(want)))
PY
ok $(grep -q '^ok [1-9]' f.txt; echo $?) "--fields: every slice's begin has its event's context and fields ($(cat f.txt))"

# chrome-json
"$TRAWL" export -f chrome-json s -o s.json 2> /dev/null
ok $? "trawl export --format chrome-json"
python3 - s.json events.json "$probes" > cj.txt <<'PY'
import json, sys, collections
d = json.load(open(sys.argv[1]))
ev = [json.loads(l) for l in open(sys.argv[2])]
hosts = sorted({e['host'] for e in ev})
t = d['traceEvents']
def say(c, what, why=''):
    print(('ok ' if c else 'bad ') + what + ('' if c else ': ' + why))
pname = {e['pid']: e['args']['name'] for e in t if e['ph'] == 'M' and e['name'] == 'process_name'}
say(all(pname.get((i + 1) * 10**7 + 9999999) == h for i, h in enumerate(hosts)), 'a process per host')
# every slice's pid is in a host's range, below Linux's largest pid there
ok_pid = True
for e in t:
    if e['ph'] in 'be':
        h = e['pid'] // 10**7 - 1
        ok_pid &= 0 <= h < len(hosts) and e['pid'] % 10**7 < 4194304
say(ok_pid, 'slice pids remapped per host')
nb = sum(e['event'] == 'app:request_begin' for e in ev)
say(sum(e['ph'] == 'b' for e in t) == nb, 'a slice per app:request_begin')
s = {e['id']: e for e in t if e['ph'] == 's'}
f = {e['id']: e for e in t if e['ph'] == 'f'}
n = int(sys.argv[3])
say(len(s) == n and set(s) == set(f), 'flows: one per message', '%d %d' % (len(s), len(f)))
say(all(s[i]['pid'] // 10**7 != f[i]['pid'] // 10**7 and s[i]['ts'] <= f[i]['ts'] for i in s),
    'between two hosts, forwards in time')
sw = collections.Counter((e['host'], e['cpu']) for e in ev if e['event'] == 'sched_switch')
runs = collections.Counter((e['pid'], e['tid']) for e in t if e['ph'] == 'X' and e['pid'] % 10**7 == 9999999
                           and e['tid'] < 1000)
say(sum(runs.values()) <= sum(sw.values()) and len(runs) == len(sw), 'CPU slices per host CPU')
PY
is "$(grep -c -v '^ok ' cj.txt)" 0 "every check of the JSON holds ($(grep -c '^ok ' cj.txt) checks)"
grep -v '^ok ' cj.txt | sed 's/^/#   /'

# past --max-events chrome-json keeps the first records (issue 27.12)
"$TRAWL" export -f chrome-json --max-events 1000 s -o big.json 2> big.err
is $? 0 "past --max-events: the first 1000 records written (exit 0)"
grep -q "warning: big.json: 1000 records, the limit: .* left out" big.err &&
	grep -q "hint: .*--format perfetto" big.err
ok $? "says what was left out and what to do"
n=$(python3 -c 'import json; d = json.load(open("big.json")); print(len(d["traceEvents"]))' 2> /dev/null)
ok $([ "$n" = 1000 ] && [ ! -e big.json.tmp ]; echo $?) "the file: valid JSON of exactly 1000 records ($n), and no temporary file left"

"$TRAWL" export s > /dev/null 2>&1
is $? 2 "no -o: a usage error"
"$TRAWL" export -f svg s -o x 2> fmt.err
is $? 2 "an unknown format: a usage error"

# a real kernel: root and tracefs
if [ "$(id -u)" != 0 ] || [ -z "$(tracefs_dir)" ]; then
	skip "not root or no tracefs: no real kernel recording"
	skip "(idem)"
	skip "(idem)"
else
	"$TRAWL" record -q -o k -k sched -- sh -c 'for i in 1 2 3 4 5 6 7 8; do sleep 0.01; done' > /dev/null 2>&1
	ok $? "trawl record -k sched"
	"$TRAWL" print -f json -e sched_switch k > k.json 2> /dev/null
	"$TRAWL" export k -o k.pftrace -q && decode k.pftrace
	ok $? "exported and decoded"
	python3 - k.pftrace.txt k.json > k.txt <<'PY'
import json, sys, collections
from pftext import load, one
got = collections.Counter()
for p in load(sys.argv[1]):
    for b in p.get('ftrace_events', []):
        got[one(b, 'cpu')] += sum('sched_switch' in e for e in b['event'])
want = collections.Counter(json.loads(l)['cpu'] for l in open(sys.argv[2]))
rel = [one(one(p, 'system_info'), 'utsname') for p in load(sys.argv[1]) if 'system_info' in p]
import os
ok_rel = len(rel) == 1 and one(rel[0], 'release') == os.uname().release
print('ok' if got == want and sum(want.values()) > 0 and ok_rel else 'bad %r %r %r' % (got, want, rel))
PY
	is "$(cat k.txt)" ok "the machine's context switches, per CPU; its kernel release"
fi
finish
