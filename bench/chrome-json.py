"""bench/chrome-json.py - the chrome://tracing JSON (Trace Event Format) of a
session, from `trawl print -f json` on stdin, to stdout: the anchor of
bench/view.sh (what trawl view's page is compared with). A process per
host (pids remapped so hosts do not collide), what ran on each CPU as
complete events ("X"), user-space begin/end pairs as "B"/"E", other events
as instants ("i") with their fields as args."""
import json
import sys

out = sys.stdout
pids, last, first = {}, {}, [True]


def emit(o):
    out.write(('' if first[0] else ',\n') + json.dumps(o, separators=(',', ':')))
    first[0] = False


out.write('{"traceEvents":[\n')
for line in sys.stdin:
    e = json.loads(line)
    h = e['host']
    if h not in pids:
        pids[h] = len(pids) + 1
        emit({'ph': 'M', 'name': 'process_name', 'pid': pids[h], 'args': {'name': h}})
    pid, ts, name = pids[h], e['ts'] / 1000.0, e['event']
    f = e.get('fields', {})
    if name == 'sched_switch':
        k = (h, e['cpu'])
        if k in last and last[k][1] > 0:
            emit({'ph': 'X', 'name': last[k][0], 'pid': pid, 'tid': e['cpu'], 'ts': last[k][2],
                  'dur': ts - last[k][2]})
        last[k] = (f.get('next_comm', '?'), f.get('next_tid', 0), ts)
        continue
    tid = e.get('context', {}).get('vtid', 0)
    if name.endswith('_begin'):
        emit({'ph': 'B', 'name': name[:-6], 'pid': pid, 'tid': tid, 'ts': ts, 'args': f})
    elif name.endswith('_end'):
        emit({'ph': 'E', 'pid': pid, 'tid': tid, 'ts': ts, 'args': f})
    else:
        emit({'ph': 'i', 's': 't', 'name': name, 'pid': pid, 'tid': tid or e['cpu'], 'ts': ts, 'args': f})
out.write('\n]}\n')
