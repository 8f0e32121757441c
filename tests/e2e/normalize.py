#!/usr/bin/env python3
# tests/e2e/normalize.py --bt2-empty-strings TRAWL BT > BT.fixed
#
# Works around a known babeltrace2 2.0.x bug (2.0.4 is Debian 12's): a
# string field that is empty in the trace (a `string` of length 0, or an
# empty text sequence) is printed with the value the same field had in an
# earlier event, because the recycled field object is not cleared. The fix
# was proposed upstream after 2.0 (review.lttng.org/c/babeltrace/+/4528, see
# efficios/babeltrace pull request #116).
#
# Both inputs are outputs of normalize.sh (sorted within identical
# timestamps). For each babeltrace2 line with no identical line at the same
# position of the trawl output's timestamp group, a trawl line of the group
# is looked for that differs only in string values which trawl prints as ""
# and babeltrace2 prints with a value the same event field had earlier in
# babeltrace2's output (a stale value). Such a babeltrace2 line is replaced
# by the trawl line. Anything else is left alone, so real differences still
# show. The "(+delta)" column is left out of the comparisons (it is
# positional within a group, see normalize.sh) and each line keeps its own.
# Prints the fixed babeltrace2 text on stdout, in its order, and the number
# of lines fixed on stderr.
import re
import sys

STR = re.compile(rb'"(?:[^"\\]|\\.)*"')
NAME = re.compile(rb'([A-Za-z_][A-Za-z0-9_]*) = $')


DELTA = re.compile(rb'^(\[[^]]*\] )(\([-+][^)]*\) )')


def nodelta(line):
    return DELTA.sub(rb'\1', line, count=1)


def with_delta_of(line, src):
    """line (without a delta column) with the delta column of src"""
    m = DELTA.match(src)
    if not m or not line.startswith(b'[') or b'] ' not in line:
        return line
    p = line.index(b'] ') + 2
    return line[:p] + m.group(2) + line[p:]


def key(line):
    return line[:line.index(b']') + 1] if line.startswith(b'[') else None


def event_name(line):
    m = re.match(rb'\[[^]]*\] (?:\([^)]*\) )?\S+ (\S+): ', line)
    return m.group(1) if m else b''


def split(line):
    """(non-string parts, [(field name, string literal)])"""
    parts, strs, pos = [], [], 0
    for m in STR.finditer(line):
        pre = line[pos:m.start()]
        parts.append(pre)
        n = NAME.search(pre)
        strs.append((n.group(1) if n else b'', m.group(0)))
        pos = m.end()
    parts.append(line[pos:])
    return parts, strs


def groups(lines):
    out, cur, k = [], [], object()
    for line in lines:
        lk = key(line)
        if lk is None or lk != k:
            if cur:
                out.append(cur)
            cur, k = [], lk
        cur.append(line)
    if cur:
        out.append(cur)
    return out


def main():
    if len(sys.argv) != 4 or sys.argv[1] != '--bt2-empty-strings':
        sys.exit('usage: normalize.py --bt2-empty-strings TRAWL BT')
    trawl = open(sys.argv[2], 'rb').read().splitlines()
    bt = open(sys.argv[3], 'rb').read().splitlines()
    tg = {}
    for g in groups(trawl):
        tg.setdefault(key(g[0]), []).append(g)
    seen = set()	# (event, field, literal) printed by babeltrace2 so far
    fixed = 0
    out = []
    for g in groups(bt):
        k = key(g[0])
        cand = tg.get(k, [[]])[0] if k is not None else []
        pool = [nodelta(t) for t in cand]
        res = []
        for line in g:
            nd = nodelta(line)
            if nd in pool:
                pool.remove(nd)
                res.append(line)
            else:
                res.append(None)
        for i, line in enumerate(g):
            if res[i] is not None:
                continue
            bp, bs = split(nodelta(line))
            ev = event_name(line)
            for t in pool:
                tp, ts = split(t)
                if tp != bp or len(ts) != len(bs):
                    continue
                if all(a == b or (a[1] == b'""' and (ev, b[0], b[1]) in seen)
                       for a, b in zip(ts, bs)):
                    pool.remove(t)
                    res[i] = with_delta_of(t, line)
                    fixed += 1
                    break
            if res[i] is None:
                res[i] = line
        for line in g:
            _, bs = split(line)
            ev = event_name(line)
            for name, lit in bs:
                seen.add((ev, name, lit))
        out.extend(res)
    sys.stdout.buffer.write(b''.join(l + b'\n' for l in out))
    print(fixed, file=sys.stderr)


main()
