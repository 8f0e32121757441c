"""Compares `trawl agg --json` with the text output of the same statement
on the same traces (used by t0890-agg.sh and t0891-agg-json.sh). Keys
must hold no spaces (the text's columns are split on them).

  aggjson.py report TEXT JSON [ORACLE]
      one object; its aggregations, rows (keys, count, the function's
      figures to the text's rounding), histogram buckets (bounds and
      counts) and heat map cells are the text's, and so is the total of
      rows of several hosts ("totals": the text's last row or histogram,
      "total (N hosts)"), or there is none in either. ORACLE: t0890's file of
      the script's own pairs ("hist LOW:N ...", "heat CELLS ROWS"), which
      the first hist() and heatmap() must also equal.
  aggjson.py intervals TEXT JSON TOTAL
      one object per "-- interval [B, E)" of the text, B and E equal (to
      the ms), each of one count() whose counts add up to TOTAL.

Prints "same ..." when they agree, else raises (the difference)."""
import json
import re
import sys

SFX = {"K": 1024, "M": 1024 ** 2, "G": 1024 ** 3, "T": 1024 ** 4}


def size(s):
    """A bucket label (512, 1K, 2M) back to its value."""
    return int(s[:-1]) * SFX[s[-1]] if s[-1] in SFX else int(s)


def text_buckets(block):
    """The non-empty buckets of a text histogram: (low, high, count), None
    where unbounded: "[lo, hi)", "[0]", "(..., hi)", "[lo, ...)"."""
    out = []
    for line in block:
        m = re.match(r"^(\[0\]|\(\.\.\., (\S+)\)|\[(\S+), (\S+)\)) +(\d+) \|", line)
        if not m:
            continue
        if m.group(1) == "[0]":
            lo, hi = 0, 1
        elif m.group(2):
            lo, hi = None, size(m.group(2))
        else:
            lo = size(m.group(3))
            hi = None if m.group(4) == "..." else size(m.group(4))
        if int(m.group(5)):
            out.append((lo, hi, int(m.group(5))))
    return out


def totals(a):
    """The JSON's total (rows of several hosts) as a row of the text: its
    label "total (N hosts)" in place of the keys; [] when none."""
    t = a.get("totals")
    if t is None:
        return []
    assert len(t) == 1 and t[0]["hosts"] > 1, (a["statement"], t)
    return [dict(t[0], label="total (%d hosts)" % t[0]["hosts"])]


def table(a, block):
    nk = len(a["keys"])
    rows = [line.split() for line in block[2:]]
    want_rows = a["rows"] + totals(a)
    assert len(rows) == len(want_rows), (a["statement"], len(rows), len(want_rows))
    f = a["function"]
    for t, r in zip(rows, want_rows):
        if "label" in r:	# the total: its label's 3 words for the keys
            assert nk and t[:3] == r["label"].split(), (t, r)
            t = [None] * nk + t[3:]
        else:
            assert t[:nk] == ["-" if v is None else str(v) for v in r["key"].values()], (t, r)
        if f == "stats":
            want = [str(r["count"]), "%.0f" % r["sum"], "%.0f" % r["min"], "%.1f" % r["avg"],
                    "%.0f" % r["max"], "%.1f" % r["stddev"]]
        elif f == "count":
            want = [str(r["count"])]
        elif f in ("avg", "stddev"):
            want = ["%.1f" % r[f]]
        else:
            want = ["%.0f" % r[f]]
        assert t[nk:] == want, (a["statement"], t, want)


def hist(a, block, oracle):
    # per row: "KEY = V, ...: count N, avg A, min M, max X", its buckets
    rows, cur = [], None
    for line in block[1:]:
        if re.search(r"count \d+, avg ", line):
            cur = [line]
            rows.append(cur)
        elif cur is not None:
            cur.append(line)
    want_rows = a["rows"] + totals(a)
    assert len(rows) == len(want_rows) and rows, (a["statement"], len(rows), len(want_rows))
    for t, r in zip(rows, want_rows):
        if "label" in r:
            keys = r["label"]
        else:
            keys = ", ".join("%s = %s" % (k, "-" if v is None else v) for k, v in r["key"].items())
        head = "%scount %d, avg %.1f, min %.0f, max %.0f" % (
            keys + ": " if keys else "", r["count"], r["avg"], r["min"], r["max"])
        assert t[0] == head, (t[0], head)
        got = [(x["low"], x["high"], x["count"]) for x in r["buckets"]]
        assert got == text_buckets(t[1:]), (a["statement"], got, text_buckets(t[1:]))
        assert all(x["low"] is None or x["high"] is None or x["low"] < x["high"]
                   for x in r["buckets"])
    if oracle and a["function"] == "hist" and "hist" in oracle:
        want = " ".join("%d:%d" % (x["low"], x["count"]) for x in a["rows"][0]["buckets"])
        assert want == oracle.pop("hist"), (want, "the script's pairs")


def heat(a, block, oracle):
    cols = a["columns"]
    tot = sum(int(line.split()[-1]) for line in block if re.match(r"^\d\d:\d\d:", line))
    assert sum(x["count"] for c in cols for x in c["buckets"]) == tot, tot
    assert all(x["high"] == 2 * x["low"] for c in cols for x in c["buckets"] if x["low"])
    assert all(cols[i + 1]["begin"] - cols[i]["begin"] == a["width"] for i in range(len(cols) - 1))
    if oracle and "heat" in oracle:
        cells = sum(len(c["buckets"]) for c in cols)
        assert "%d" % cells == oracle.pop("heat").split()[0], (cells, "the script's cells")


def report(text_path, json_path, oracle_path=None):
    oracle = None
    if oracle_path:
        oracle = dict(line.split(" ", 1) for line in open(oracle_path).read().splitlines())
    lines = open(json_path).read().splitlines()
    assert len(lines) == 1, "one JSON line, not %d" % len(lines)
    aggs = json.loads(lines[0])["aggregations"]
    blocks = [b.strip("\n").splitlines() for b in open(text_path).read().split("\n\n")
              if b.strip()]
    assert len(aggs) == len(blocks) and aggs, (len(aggs), len(blocks))
    for a, b in zip(aggs, blocks):
        assert a["statement"] == b[0], (a["statement"], b[0])
        if a["function"] == "heatmap":
            heat(a, b, oracle)
        elif a["function"] in ("hist", "lhist", "llhist"):
            hist(a, b, oracle)
        else:
            table(a, b)
    assert not oracle or not {"hist", "heat"} & oracle.keys(), "the script's figures unchecked"
    print("same %d aggregations, %d rows" % (len(aggs), sum(len(a.get("rows", a.get("columns")))
                                                            for a in aggs)))


def intervals(text_path, json_path, total):
    heads = re.findall(r"^-- interval \[(\d+)\.(\d{3}), (\d+)\.(\d{3})\)",
                       open(text_path).read(), re.M)
    objs = [json.loads(line) for line in open(json_path)]
    assert len(objs) == len(heads) >= 2, (len(objs), len(heads))
    for o, h in zip(objs, heads):
        assert (o["begin"] // 1000000, o["end"] // 1000000) == \
            (int(h[0]) * 1000 + int(h[1]), int(h[2]) * 1000 + int(h[3])), (o["begin"], o["end"], h)
    got = sum(r["count"] for o in objs for r in o["aggregations"][0]["rows"])
    assert got == int(total), (got, total)
    print("same %d intervals" % len(objs))


if sys.argv[1] == "report":
    report(*sys.argv[2:])
else:
    intervals(*sys.argv[2:])
