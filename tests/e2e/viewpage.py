"""tests/e2e/viewpage.py - reads a `trawl view` page as the browser does
(the index, the escaped blob, deflated tiles by columns; docs/view.md), for
the end-to-end tests and the benchmark. Independent of lib/view's code."""
import json
import re
import zlib


def load(path):
    b = open(path, 'rb').read()
    m = re.search(rb'<script type="application/json" id="trawl-index">(.*?)</script>', b, re.S)
    ix = json.loads(m.group(1).decode('utf-8'))
    # the blob is cut into elements trawl-t0, trawl-t1, ... of ix['chunk']
    # characters each (a cut may fall inside an escape)
    parts = re.findall(rb'<script type="text/plain" id="trawl-t(\d+)">(.*?)</script>', b, re.S)
    assert [int(k) for k, _ in parts] == list(range(len(parts))), 'tile elements out of order'
    for _, p in parts[:-1]:
        assert len(p) == ix['chunk'], 'a tile element of %d characters' % len(p)
    return ix, b''.join(p for _, p in parts)


def unescape(blob):
    out = bytearray()
    i = 0
    while i < len(blob):
        c = blob[i]
        if c == 1:
            out.append({0x30: 0, 0x31: 1, 0x32: 13, 0x33: 60}[blob[i + 1]])
            i += 2
        else:
            out.append(c)
            i += 1
    return bytes(out)


def uv(b, p):
    v = sh = 0
    while True:
        c = b[p]
        p += 1
        v |= (c & 0x7f) << sh
        sh += 7
        if not c & 0x80:
            return v, p


def unzz(v):
    return (v >> 1) ^ -(v & 1)


def tile(raw, t, kind, width):
    """raw: the tile's deflated bytes; t: its index entry. Items as
    (start, end, value, count, fields or None)."""
    b = zlib.decompress(raw)
    n, p = t[2], 0
    cols = []
    for _ in range(4):
        col = []
        for _ in range(n):
            v, p = uv(b, p)
            col.append(v)
        cols.append(col)
    gaps, durs, vals, cnts = cols
    det = [None] * n
    if width == 0 and kind in ('marks', 'slices'):
        lens = []
        for _ in range(n):
            v, p = uv(b, p)
            lens.append(v)
        for k in range(n):
            det[k] = b[p:p + lens[k]].decode('utf-8', 'replace')
            p += lens[k]
    assert p == len(b), 'tile has %d bytes past its columns' % (len(b) - p)
    out, prev = [], t[0]
    for k in range(n):
        s = prev + unzz(gaps[k])
        e = s + unzz(durs[k])
        prev = s if kind == 'arrows' else e
        out.append((s, e, vals[k], cnts[k] + 1, det[k]))
    return out


def items(ix, blob, row, level=0, fetch=None):
    """Every item of a row's level (fetch(id): the tile's bytes, for a
    served page)."""
    width, tiles = row['levels'][level]
    out = []
    for t in tiles:
        raw = fetch(t[3]) if fetch else unescape(blob[t[4]:t[4] + t[5]])
        out.extend(tile(raw, t, row['kind'], width))
    return out
