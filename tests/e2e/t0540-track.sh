#!/bin/sh
# The application latency tracker (<trawl/track.h>) end to end:
# examples/track-demo, recorded by `trawl record`, tracks N requests of
# which K are slow on purpose and O never end. The trace must hold exactly
# K + O trawl_track:outlier events: the slow requests' keys (timeout = 0,
# duration over the threshold and over the 10 ms they were held) and the
# unended ones' (timeout = 1, past their 20 ms timeout), the same the
# program's callback saw; their start and end on the trace's clock (end,
# converted with the trace's clock, is the event's own time within a few
# ms; end - start is duration_ns). An outlier event not enabled (-u demo:*)
# is not recorded, while the callback still hears of every outlier.
. "$TRAWL_SRC/tests/e2e/lib.sh"
APP="$TRAWL_BUILD/examples/track-demo"
[ -x "$APP" ] || { echo "Bail out! $APP is not built"; exit 1; }
command -v python3 > /dev/null 2>&1 || skip_all "python3 is not installed"
plan 9

N=2000 K=4 O=2
"$TRAWL" record -q --no-kernel --host h1 -o s1 -- "$APP" -w -n $N -k $K -o $O > app1.out 2> rec1.err
is "$?" 0 "record -- track-demo exits 0"
is "$(grep -c '^outlier ' app1.out)" $((K + O)) "the callback saw K + O = $((K + O)) outliers"
grep -q "^pairs $N outliers $K timeouts $O suppressed 0\$" app1.out
ok $? "the tracker's counters: $N pairs, $K outliers, $O timeouts"
"$TRAWL" print s1 > s1.txt 2> print.err
is "$(grep -c 'trawl_track:outlier' s1.txt)" $((K + O)) "exactly K + O trawl_track:outlier events in the trace"
"$TRAWL" print -f json s1 > s1.json 2>> print.err
python3 - "$N" "$K" "$O" s1.json s1/h1/ust/metadata app1.out > check.out <<'PY'
import json, re, sys
n, k, o = map(int, sys.argv[1:4])
evs = [json.loads(l) for l in open(sys.argv[4])]
evs = [e for e in evs if e["event"] == "trawl_track:outlier"]
meta = open(sys.argv[5]).read()
freq = int(re.search(r"freq = (\d+);", meta).group(1))
off_s = int(re.search(r"offset_s = (-?\d+);", meta).group(1))
off = int(re.search(r"\boffset = (-?\d+);", meta).group(1))
slow = sorted(1000 + (2 * j + 1) * n // (2 * k) for j in range(k))
late = list(range(9000, 9000 + o))
f = [e["fields"] for e in evs]
print("keys", sorted(x["key"] for x in f if not x["timeout"]) == slow)
print("timeouts", sorted(x["key"] for x in f if x["timeout"] == 1) == late)
print("fields", all(x["rule"] == "demo" and x["threshold_ns"] == 5000000 and
                    x["duration_ns"] >= (20 if x["timeout"] else 10) * 1000000 for x in f))
# end - start in clock cycles against duration_ns (within 0.1 %), and the
# end on the trace's clock: the event is written just after it
print("duration", all(abs((x["end"] - x["start"]) * 1e9 / freq - x["duration_ns"])
                      <= 1e-3 * x["duration_ns"] for x in f))
print("clock", all(abs(off_s * 10**9 + (off + e["fields"]["end"]) * 10**9 // freq - e["ts"])
                   < 5 * 10**6 for e in evs))
cb = sorted(int(re.search(r"key=(\d+)", l).group(1)) for l in open(sys.argv[6]) if l.startswith("outlier "))
print("callback", cb == sorted(slow + late))
PY
sed "s/^/# /" check.out
is "$(grep -c ' True$' check.out)" 6 "keys, kinds, fields, durations, clock and callback agree (check.out)"

# the event not enabled: not recorded; the callback still called
"$TRAWL" record -q --no-kernel --host h2 -u 'demo:*' -o s2 -- "$APP" -w -n 100 -k 1 -o 1 > app2.out 2> rec2.err
is "$?" 0 "record -u 'demo:*' -- track-demo exits 0"
"$TRAWL" print s2 > s2.txt 2>> print.err
is "$(grep -c 'trawl_track:outlier' s2.txt)" 0 "-u 'demo:*': no outlier event recorded"
is "$(grep -c 'demo:start' s2.txt)" 1 "but demo:start is"
is "$(grep -c '^outlier ' app2.out)" 2 "and the callback saw both outliers"
finish
