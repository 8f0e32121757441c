#!/bin/sh
# The trawl command: help, usage and exit codes; `trawl print` filters (host
# globs, event globs, time ranges in every accepted form, limit) checked by
# counts and by every printed line; `trawl info` counts against print's
# lines, per class; a closed pipe; a corrupt stream; and the text format of
# every CTF type against babeltrace2 on a hand-written trace.
. "$TRAWL_SRC/tests/e2e/lib.sh"

# ---- help, usage, exit codes
"$TRAWL" --help > help.out 2>&1
ok $? "trawl --help exits 0"
for c in print info simulate help; do
	grep -q "^   $c " help.out
	ok $? "trawl --help lists $c"
done
"$TRAWL" > noargs.out 2> noargs.err
is "$?|$(lines noargs.out)" "2|0" "trawl without arguments: a usage error (exit 2), nothing on stdout"
cmp_files noargs.err help.out "trawl without arguments prints the usage on stderr"
v=$("$TRAWL" --version)
case "$v" in "trawl "[0-9]*.[0-9]*.[0-9]*) r=0 ;; *) r=1 ;; esac
ok $r "trawl --version prints 'trawl X.Y.Z' ($v)"
"$TRAWL" nosuchcommand > unk.out 2> unk.err
is $? 2 "unknown command exits 2"
grep -q "'nosuchcommand' is not a trawl command" unk.err
ok $? "unknown command is named on stderr"
"$TRAWL" prnt 2> sugg.err
is $? 2 "misspelled command exits 2"
grep -q "^hint: did you mean 'trawl print'?" sugg.err
ok $? "misspelled command suggests print"
"$TRAWL" --bogus > /dev/null 2>&1
is $? 2 "unknown global option exits 2"
for c in print info; do
	"$TRAWL" help "$c" > help-$c.out 2>&1
	ok $? "trawl help $c exits 0 (stdout not a tty: the page as text)"
	grep -q "^NAME" help-$c.out && grep -q "trawl-$c" help-$c.out
	ok $? "trawl help $c shows its manual page"
	"$TRAWL" "$c" --help > dash-$c.out 2>&1
	ok $? "trawl $c --help exits 0"
	grep -q "^usage: trawl $c " dash-$c.out
	ok $? "trawl $c --help shows its usage"
	"$TRAWL" "$c" > /dev/null 2> nopath-$c.err
	is $? 2 "trawl $c without a path exits 2"
	"$TRAWL" "$c" --no-such-option x > /dev/null 2>&1
	is $? 2 "trawl $c with an unknown option exits 2"
done
"$TRAWL" help nosuch > /dev/null 2>&1
is $? 2 "trawl help of an unknown command exits 2"
"$TRAWL" print --begin yesterday x > /dev/null 2> badtime.err
is $? 2 "a bad --begin time exits 2"
"$TRAWL" print -n -3 x > /dev/null 2>&1
is $? 2 "a bad --limit exits 2"
"$TRAWL" print does-not-exist > /dev/null 2> nx.err
is $? 1 "print of a missing path exits 1"
grep -q "^trawl print: .*does-not-exist" nx.err
ok $? "print of a missing path says which"
"$TRAWL" info does-not-exist > /dev/null 2> nxi.err
is $? 1 "info of a missing path exits 1"

# ---- a session
"$TRAWL" simulate -o sess --hosts 3 --events 30000 --seed 3 > sim.out 2>&1
ok $? "simulate a 3-host session"
"$TRAWL" print sess > all.txt 2> all.err
ok $? "print the session"
n=$(wc -l < all.txt)
[ "$n" -eq 30000 ]
ok $? "print: one line per event ($n)"
[ ! -s all.err ]
ok $? "print: nothing on stderr"
LC_ALL=C grep -Evc '^\[[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{9}\] \(\+([0-9]+\.[0-9]{9}|\?\.\?{9})\) host[0-2] [a-z_:0-9]+: (\{ .* \})?$' all.txt > badlines
is "$(cat badlines)" 0 "print: every line has babeltrace2's shape"
is "$(grep -c '(+?.?????????)' all.txt)" 1 "print: only the first line has an unknown delta"
head -1 all.txt | grep -q '(+?.?????????)'
ok $? "print: ... and it is the first"
"$TRAWL" print --threads 1 sess > serial.txt
cmp_files serial.txt all.txt "print --threads 1 == the two-thread output"

# info: totals and per-class counts equal print's
"$TRAWL" info --json sess > info.json 2> info.err
ok $? "info --json exits 0"
grep -q 'decoded 30000 events' info.err
ok $? "info reports the decode rate on stderr"
json_total() { sed 's/.*"total":{[^}]*"events":\([0-9]*\).*/\1/' "$1"; }
is "$(json_total info.json)" "$n" "info: total events == print's lines"
# per class: "name count" lines from info's JSON, summed over traces
sed 's/"event_classes":\[/\n/g' info.json | sed -n '2,$p' | sed 's/\].*//' |
	tr '{' '\n' | sed -n 's/"name":"\([^"]*\)","count":\([0-9]*\)}.*/\1 \2/p' |
	awk '{c[$1] += $2} END {for (k in c) print k, c[k]}' | LC_ALL=C sort > info.classes
awk '{name = $4; sub(/:$/, "", name); c[name]++} END {for (k in c) print k, c[k]}' all.txt |
	LC_ALL=C sort > print.classes
[ -s info.classes ]
ok $? "info: lists event classes"
cmp_files info.classes print.classes "info: per-class counts == print's"
"$TRAWL" info sess > info.txt 2>/dev/null
ok $? "info (text) exits 0"
grep -q "^total: 3 hosts, 6 traces, .* 30000 events" info.txt
ok $? "info (text): total line"
is "$(grep -c '^host host[0-2]$' info.txt)" 3 "info (text): one section per host"

# ---- filters
"$TRAWL" print --host host1 sess > h1.txt
is "$(awk '$3 != "host1"' h1.txt | wc -l)" 0 "--host host1: only host1's events"
is "$(wc -l < h1.txt)" "$(awk '$3 == "host1"' all.txt | wc -l)" "--host host1: all of host1's events"
"$TRAWL" print -H 'host[02]' sess > h02.txt
is "$(wc -l < h02.txt)" "$(awk '$3 != "host1"' all.txt | wc -l)" "--host glob 'host[02]': count"
is "$(awk '$3 == "host1"' h02.txt | wc -l)" 0 "--host glob 'host[02]': no host1"
"$TRAWL" print -H host0 -H host2 sess > h0h2.txt
cmp_files h0h2.txt h02.txt "two --host options == the glob"
"$TRAWL" info --json -H host1 sess > info1.json 2>/dev/null
is "$(json_total info1.json)" "$(wc -l < h1.txt)" "info --host host1: total == print --host host1"

"$TRAWL" print -e 'sched_*' sess > sched.txt
is "$(awk '$4 !~ /^sched_/' sched.txt | wc -l)" 0 "-e 'sched_*': only sched_* events"
want=$(awk '$1 ~ /^sched_/ {s += $2} END {print s + 0}' info.classes)
is "$(wc -l < sched.txt)" "$want" "-e 'sched_*': count == info's sched_* classes"
[ "$want" -gt 0 ]
ok $? "-e 'sched_*': there are some ($want)"
"$TRAWL" print -e 'sched_switch' --event 'app:*' sess > two.txt
want=$(awk '$1 == "sched_switch" || $1 ~ /^app:/ {s += $2} END {print s + 0}' info.classes)
is "$(wc -l < two.txt)" "$want" "two -e globs: their union"
"$TRAWL" print -e 'no_such_event' sess > none.txt 2> none.err
is "$?|$(cat none.err)" "2|trawl print: --event 'no_such_event': no event matches it" \
	"-e matching nothing: a usage error naming it (issue 27.5)"
[ ! -s none.txt ]
ok $? "-e matching nothing prints nothing"

"$TRAWL" print -n 10 sess > ten.txt
is "$(wc -l < ten.txt)" 10 "-n 10: ten lines"
head -10 all.txt | cmp -s - ten.txt
ok $? "-n 10: the first ten"
"$TRAWL" print --limit 0 sess > zero.txt
is "$(wc -l < zero.txt)" 0 "--limit 0: nothing"

# time ranges: from the --clock-seconds output
"$TRAWL" print --clock-seconds sess > secs.txt
LC_ALL=C grep -Evc '^\[[0-9]{10}\.[0-9]{9}\] ' secs.txt > badsecs
is "$(cat badsecs)" 0 "--clock-seconds: [SSSSSSSSSS.nnnnnnnnn] on every line"
cut -d' ' -f2- secs.txt > secs.rest
cut -d' ' -f2- all.txt > all.rest
cmp_files secs.rest all.rest "--clock-seconds: the rest of each line is unchanged"
b=$(sed -n '5000p' secs.txt | cut -c2-21)
e=$(sed -n '20000p' secs.txt | cut -c2-21)
# expected: lines with b <= ts <= e (fixed width, so string order is time order)
awk -v b="$b" -v e="$e" '{t = substr($1, 2, 20)} t >= b && t <= e' secs.txt > range.want
"$TRAWL" print --clock-seconds --begin "$b" --end "$e" sess > range.got
[ "$(wc -l < range.want)" -ge 15001 ]
ok $? "time range: the window holds the expected events ($(wc -l < range.want))"
# the delta of the first line differs (no previous event): compare the rest
sed '1s/(+[^)]*)/(+?.?????????)/' range.want > range.want1
cmp_files range.got range.want1 "--begin/--end seconds.fraction: exactly the events inside"
bns=$(echo "$b" | tr -d .)
ens=$(echo "$e" | tr -d .)
"$TRAWL" print --clock-seconds --begin "$bns" --end "${ens}ns" sess > range.ns
cmp_files range.ns range.got "--begin/--end as integer nanoseconds: the same"
"$TRAWL" print --clock-seconds --begin "$b" sess > from.got
is "$(wc -l < from.got)" "$(awk -v b="$b" 'substr($1, 2, 20) >= b' secs.txt | wc -l)" "--begin only: count"
"$TRAWL" print --clock-seconds --end "$e" sess > upto.got
is "$(wc -l < upto.got)" "$(awk -v e="$e" 'substr($1, 2, 20) <= e' secs.txt | wc -l)" "--end only: count"
# HH:MM:SS.n on the trace's day (UTC with --clock-gmt)
hms=$(TZ=UTC date -d "@${b%.*}" +%H:%M:%S).${b#*.}
"$TRAWL" print --clock-seconds --clock-gmt --begin "$hms" --end "$e" sess > range.hms
cmp_files range.hms range.got "--begin HH:MM:SS.nnnnnnnnn (trace day, --clock-gmt): the same"
ymd=$(TZ=UTC date -d "@${b%.*}" '+%Y-%m-%d %H:%M:%S').${b#*.}
"$TRAWL" print --clock-seconds --clock-gmt --begin "$ymd" --end "$e" sess > range.ymd
cmp_files range.ymd range.got "--begin 'YYYY-MM-DD HH:MM:SS.n' (--clock-gmt): the same"
"$TRAWL" print --begin "$e" --end "$b" sess > /dev/null 2>&1
is $? 2 "--end before --begin exits 2"

# clock options
"$TRAWL" print --no-delta sess > nodelta.txt
is "$(grep -c '(+' nodelta.txt)" 0 "--no-delta: no delta column"
sed 's/ (+[^)]*)//' all.txt | cmp -s - nodelta.txt
ok $? "--no-delta: otherwise the same lines"
TZ=UTC "$TRAWL" print -n 100 sess > utc.txt
TZ=Asia/Kolkata "$TRAWL" print -n 100 --clock-gmt sess > gmt.txt
cmp_files gmt.txt utc.txt "--clock-gmt prints UTC whatever TZ says"
TZ=Asia/Kolkata "$TRAWL" print -n 100 sess > ist.txt
t1=$(head -1 utc.txt | cut -c2-9)
t2=$(head -1 ist.txt | cut -c2-9)
h=$(echo "$t1" | cut -c1-2 | sed 's/^0//')
m=$(echo "$t1" | cut -c4-5 | sed 's/^0//')
exp=$(printf '%02d:%02d' $(( (h * 60 + m + 330) / 60 % 24 )) $(( (h * 60 + m + 330) % 60 )))
is "$(echo "$t2" | cut -c1-5)" "$exp" "local time follows TZ (+05:30)"

# ---- a closed pipe: quiet, exit 0
{ "$TRAWL" print sess 2> pipe.err; echo $? > pipe.rc; } | head -1 > pipe.out
is "$(cat pipe.rc)" 0 "print | head -1: exit 0"
[ ! -s pipe.err ]
ok $? "print | head -1: nothing on stderr"
head -1 all.txt | cmp -s - pipe.out
ok $? "print | head -1: the first line"

# ---- a corrupt stream: reported, the rest printed, exit 1
"$TRAWL" simulate -o small --hosts 2 --events 20000 --seed 5 --packet-size 4096 > /dev/null 2>&1
ok $? "simulate a session with 4 KiB packets"
"$TRAWL" print small > small.txt
cp -r small bad
f=bad/host0/kernel/channel0_0
# the magic of the 4th packet
printf '\377\377\377\377' | dd of="$f" bs=1 seek=$((3 * 4096)) conv=notrunc 2>/dev/null
"$TRAWL" print bad > bad.txt 2> bad.err
is $? 1 "corrupt stream: print exits 1"
grep -q "^trawl print: .*channel0_0.*byte" bad.err
ok $? "corrupt stream: file and byte offset on stderr ($(head -1 bad.err))"
nb=$(wc -l < bad.txt)
ns=$(wc -l < small.txt)
[ "$nb" -gt $((ns / 2)) ] && [ "$nb" -lt "$ns" ]
ok $? "corrupt stream: the other streams are printed ($nb of $ns lines)"
[ "$(grep -c ' host1 ' bad.txt)" -eq "$(grep -c ' host1 ' small.txt)" ]
ok $? "corrupt stream: every event of the other host is printed"
"$TRAWL" info bad > /dev/null 2> badinfo.err
is $? 1 "corrupt stream: info exits 1"

# ---- every CTF type against babeltrace2 (a hand-written trace)
if command -v babeltrace2 > /dev/null 2>&1 && command -v python3 > /dev/null 2>&1; then
	python3 - types <<'EOF'
import os, struct, sys, uuid
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
P = struct.pack
meta = r'''/* CTF 1.8 */
typealias integer { size = 8;  align = 8; signed = false; } := uint8_t;
typealias integer { size = 16; align = 8; signed = false; } := uint16_t;
typealias integer { size = 32; align = 8; signed = false; } := uint32_t;
typealias integer { size = 64; align = 8; signed = false; } := uint64_t;
typealias integer { size = 8; align = 8; signed = true;  } := int8_t;
typealias integer { size = 32; align = 8; signed = true;  } := int32_t;
typealias integer { size = 64; align = 8; signed = true;  } := int64_t;
typealias integer { size = 8;  align = 8; signed = false; encoding = UTF8; } := utf8_t;
typealias floating_point { exp_dig = 8; mant_dig = 24; align = 8; byte_order = le; } := float_t;
typealias floating_point { exp_dig = 11; mant_dig = 53; align = 8; byte_order = le; } := double_t;
trace {
	major = 1; minor = 8; uuid = "dbf56750-05d0-51e7-a92e-62744da1c219"; byte_order = le;
	packet.header := struct { uint32_t magic; uint8_t uuid[16]; uint32_t stream_id; uint64_t stream_instance_id; };
};
env { hostname = "node1"; domain = "ust"; tracer_name = "handmade"; tracer_major = 0; tracer_minor = 1; };
clock { name = "monotonic"; uuid = "52391d79-82f9-53a6-89e9-cc3902efefbb"; freq = 1000000000; precision = 1;
	offset_s = 1700000000; offset = 0; absolute = true; };
typealias integer { size = 64; align = 8; signed = false; map = clock.monotonic.value; } := uint64_clock_t;
stream {
	id = 0;
	event.header := struct { uint32_t id; uint64_clock_t timestamp; };
	packet.context := struct { uint64_clock_t timestamp_begin; uint64_clock_t timestamp_end;
		uint64_t content_size; uint64_t packet_size; uint64_t packet_seq_num;
		uint64_t events_discarded; uint32_t cpu_id; };
	event.context := struct { int32_t _vpid; int32_t _vtid; };
};
'''
EV = []
def ev(name, decl, payloads, ctx=None):
	EV.append((name, decl, payloads, ctx))
ev("ints", "struct { uint8_t _a; int8_t _b; int32_t c; int64_t _d; uint64_t __e; }",
   [P("<BbiqQ", 255, -1, -2147483648, -9223372036854775808, 18446744073709551615), P("<BbiqQ", 0, 0, 0, 0, 0)])
ev("bases", "struct { integer { size = 8; align = 8; signed = false; base = 16; } h8; integer { size = 12; align = 8; signed = true; base = hex; } h12s; integer { size = 32; align = 8; signed = false; base = 8; } o32; integer { size = 8; align = 8; signed = true; base = 8; } o8s; integer { size = 6; align = 8; signed = false; base = 2; } b6; integer { size = 7; align = 8; signed = true; base = 2; } b7s; }",
   [P("<BHIbBb", 0xab, 0xfff, 8, -1, 5, -1), P("<BHIbBb", 0, 0, 0, 0, 0, 0)])
ev("strs", "struct { string s; utf8_t arr[8]; uint32_t _n; utf8_t seq[_n]; }",
   [b'a\nb\tc"d\\e\'f?g\x01h\x7fi\xc3\xa9\x1b\0' + b"abc\0\0\0\0\0" + P("<I", 3) + b"xyz",
    b"\0" + b"12345678" + P("<I", 4) + b"p\0q\0"])
ev("floats", "struct { float_t f; double_t d; }",
   [P("<fd", 1.5, 3.141592653589793), P("<fd", 0.0, -0.0), P("<fd", 1e10, 1e-10), P("<fd", 0.1, 1234567.0),
    P("<fd", float('inf'), float('nan')), P("<fd", -2.5e-5, 99999.95)])
ev("enums", "struct { enum : uint8_t { ZERO, ONE, RANGE = 10 ... 20, DUP = 15, \"quo\\\"te\" = 30 } e; enum : int32_t { NEG = -5, POS = 5 } se; }",
   [P("<Bi", 0, -5), P("<Bi", 15, 5), P("<Bi", 99, 3), P("<Bi", 30, -5)])
ev("arrays", "struct { uint16_t a[3]; int8_t e[0]; uint32_t n; int32_t s[n]; uint32_t m; string ss[m]; struct { uint8_t x; string y; } st[2]; }",
   [P("<HHH", 1, 2, 3) + P("<I", 2) + P("<ii", -1, 7) + P("<I", 2) + b"u\0v\0" + b"\x01a\0\x02b\0",
    P("<HHH", 0, 0, 0) + P("<I", 0) + P("<I", 0) + b"\x01a\0\x02b\0"])
ev("nested", "struct { uint8_t a; struct { uint8_t c; struct { string d; } e; } b; struct { } empty; }", [P("<BB", 1, 2) + b"dd\0"])
ev("variant", "struct { enum : uint8_t { A, B, C } tag; variant <tag> { uint32_t A; string B; struct { uint8_t x; uint8_t y; } C; } v; }",
   [P("<BI", 0, 42), P("<B", 1) + b"bee\0", P("<BBB", 2, 7, 8)])
ev("nopayload", None, [b""])
ev("emptypayload", "struct { }", [b""])
ev("withctx", "struct { uint8_t p; }", [P("<iB", -3, 9)], ctx="struct { int32_t _ectx; }")
ev("clockfield", "struct { uint64_clock_t ts; uint8_t after; }", [P("<QB", 5, 6)])
ev("onlyclock", "struct { uint64_clock_t ts; }", [P("<Q", 5)])
for i, (name, decl, payloads, ctx) in enumerate(EV):
	meta += 'event {\n\tname = "%s"; id = %d; stream_id = 0;\n' % (name, i)
	if ctx: meta += "\tcontext := %s;\n" % ctx
	if decl is not None: meta += "\tfields := %s;\n" % decl
	meta += "};\n"
open(out + "/metadata", "w").write(meta)
t0 = t = 1000
body = b""
for i, (name, decl, payloads, ctx) in enumerate(EV):
	for p in payloads:
		body += P("<IQ", i, t) + P("<ii", 11, 22) + p
		t += 1234567
hdr = P("<I", 0xC1FC1FC1) + uuid.UUID("dbf56750-05d0-51e7-a92e-62744da1c219").bytes + P("<IQ", 0, 0)
total = len(hdr) + 52 + len(body)
psize = (total + 7) // 8 * 8
data = hdr + P("<QQQQQQI", t0, t, total * 8, psize * 8, 0, 0, 3) + body
open(out + "/chan_0", "wb").write(data + b"\0" * (psize - len(data)))
EOF
	ok $? "write a trace with every CTF type"
	babeltrace2 types > types.bt 2> types.bt.err
	"$TRAWL" print types > types.trawl 2> types.trawl.err
	ok $? "trawl print of every type exits 0"
	is "$(wc -l < types.trawl)" 27 "every type: 27 events"
	cmp_files types.trawl types.bt "every type: trawl print == babeltrace2, byte for byte"
	for opt in --clock-seconds --clock-gmt --no-delta; do
		babeltrace2 $opt types > types$opt.bt 2>/dev/null
		"$TRAWL" print $opt types > types$opt.trawl
		cmp_files types$opt.trawl types$opt.bt "every type, $opt: == babeltrace2"
	done
	TZ=America/New_York babeltrace2 types > types-ny.bt 2>/dev/null
	TZ=America/New_York "$TRAWL" print types > types-ny.trawl
	cmp_files types-ny.trawl types-ny.bt "every type, TZ=America/New_York: == babeltrace2"
else
	skip "babeltrace2 or python3 missing: no format oracle on every type"
fi

plan "$_n"
finish
