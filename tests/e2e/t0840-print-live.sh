#!/bin/sh
# trawl print --live: the live source of the reading pipeline, end to end.
# Two producers (tests/e2e/live-producer.c, built here) stream a session
# "lv" of two hosts to a `trawl relay`; `trawl print --live
# net://LIVE/session/lv` follows both hosts merged while they record:
#  - it shows the first flushed events while the producers still wait (the
#    viewer's own output is the signal: no pause proves anything);
#  - an event class that comes later (the metadata grows) and a stream
#    that comes later are read as they come;
#  - once the producers close, it ends by itself, and what it printed is,
#    line for line, `trawl print` of the relay's files (and babeltrace2's);
#  - --sync applies a stored sync result to live events as to files;
#  - -f json, the host form of the URL, and the errors (no such session,
#    a bad URL, the relay gone under a viewer).
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v cc > /dev/null 2>&1 || skip_all "needs a C compiler for the live producer"
plan 16

pids=""
cleanup() { for p in $pids; do kill "$p" 2> /dev/null; done; }
trap cleanup EXIT

relay_up OUT
san=${TRAWL_SAN:+-fsanitize=$TRAWL_SAN}
${CC:-cc} -std=gnu11 -O2 -Wall -Wextra -Werror $san -I"$TRAWL_SRC/include" -o live-producer \
	"$TRAWL_SRC/tests/e2e/live-producer.c" "$TRAWL_BUILD/libtrawl.a" -lpthread -lm > lp-cc.log 2>&1
[ -x live-producer ] || { sed 's/^/# /' lp-cc.log | head; echo "Bail out! no live producer"; exit 1; }

# nodeA: 2 streams, 10 events each flushed, then waits; a new class and a
# new stream after go. nodeB: 1 stream, interleaved in time.
cat > a.txt << 'EOF'
stream 0
stream 1
ev 0 1000000 10
ev 1 1000300 10
flush 0 2000000
flush 1 2000000
touch a1
wait go
class later
ev 0 3000000 4 later
stream 2
ev 2 3000100 6
ev 1 3000200 2
flush 0 4000000
flush 1 4000000
flush 2 4000000
close
EOF
cat > b.txt << 'EOF'
stream 0
ev 0 1000150 10
flush 0 2000000
touch b1
wait go
ev 0 3000050 5
flush 0 4000000
close
EOF
./live-producer "$DATA" lv nodeA ust < a.txt > pa.out 2> pa.err &
PA=$!
./live-producer "$DATA" lv nodeB ust < b.txt > pb.out 2> pb.err &
PB=$!
pids="$pids $PA $PB"
until_ok 30 test -e a1 && until_ok 30 test -e b1
ok $? "two producers of session lv (nodeA, nodeB) flushed their first events and wait"

URL="net://$LIVE/session/lv"
timeout 120 "$TRAWL" print --live "$URL" > live.txt 2> live.err &
V=$!
pids="$pids $V"
until_ok 30 has_lines live.txt 30
n1=$(lines live.txt)
[ -e go ]; went=$?
is "$n1:$went" "30:1" "print --live shows the 30 flushed events of both hosts before the producers go on"
awk '{ print $3 }' live.txt | sort | uniq -c | awk '{ printf "%s=%s ", $2, $1 }' > hosts1.txt
is "$(cat hosts1.txt)" "nodeA=20 nodeB=10 " "... 20 of nodeA, 10 of nodeB, merged"
touch go
until_ok 60 gone "$V"
wait "$V"
is "$?" 0 "print --live ends by itself (exit 0) once the session has ended"
is "$(lines live.txt)" 47 "all 47 events (a new class and a new stream among them)"
grep -c ' nodeA later: ' live.txt > later.n
is "$(cat later.n)" 4 "the 4 events of the class that came later (the metadata grew)"
"$TRAWL" print OUT/lv > files.txt 2> files.err
cmp_files live.txt files.txt "line for line trawl print of the relay's files"
sort -c -t' ' -k1,1 live.txt 2> /dev/null
ok $? "in time order"
if command -v babeltrace2 > /dev/null 2>&1; then
	babeltrace2 OUT/lv > bt.txt 2> bt.err
	cmp_files live.txt bt.txt "... and babeltrace2's of the same files"
else
	skip "babeltrace2 is not installed (the oracle)"
fi

# --sync: nodeB 2 s ahead, as a stored result says; live and files alike
cat > sync.txt << 'EOF'
# trawl sync 1
groups 1
host nodeA t0 0 y0 0 slope 1152921504606846976 quality reference reference nodeA group 0 hops 0 path nodeA first 0 last 0 bound_start 0 bound_mid 0 bound_end 0 bound_max 0
host nodeB t0 1700000000001000000 y0 1700000002001000000 slope 1152921504606846976 quality accurate reference nodeA group 0 hops 1 path nodeB,nodeA first 0 last 0 bound_start 1000 bound_mid 1000 bound_end 1000 bound_max 1000
EOF
"$TRAWL" print --sync sync.txt OUT/lv > fsync.txt 2> fsync.err
ok $? "print --sync FILE reads the files ($(head -1 fsync.err))"
awk '{ print $3 }' fsync.txt | uniq | tr '\n' ' ' > order.txt
is "$(cat order.txt)" "nodeA nodeB " "... nodeB's events corrected 2 s later: every nodeA event first"

# --sync and json on a live session: the same producers, session lv2
sed 's/^wait go$/wait go2/' a.txt > a2.txt
sed 's/^wait go$/wait go2/' b.txt > b2.txt
rm -f a1 b1
./live-producer "$DATA" lv2 nodeA ust < a2.txt > pa2.out 2> pa2.err &
pids="$pids $!"
./live-producer "$DATA" lv2 nodeB ust < b2.txt > pb2.out 2> pb2.err &
pids="$pids $!"
until_ok 30 test -e a1 && until_ok 30 test -e b1
timeout 120 "$TRAWL" print --live "net://$LIVE/session/lv2" --sync sync.txt -f json > live2.json \
	2> live2.err &
V2=$!
pids="$pids $V2"
until_ok 30 has_lines live2.json 10
touch go2
until_ok 60 gone "$V2"
wait "$V2"
rc=$?
python3 - live2.json live.txt > json.check << 'EOF'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
raw = {}
for l in open(sys.argv[2]):   # the text of session lv: host, seq -> raw time
    t = l.split()
    hms, host = t[0][1:-1], t[2]
    seq = int(l.split("seq = ")[1].split(",")[0])
    raw[(host, seq)] = hms
hosts = [e["host"] for e in ev]
ordered = all(ev[i]["ts"] <= ev[i + 1]["ts"] for i in range(len(ev) - 1))
first_b = hosts.index("nodeB")
shift = {e["host"]: e["ts"] for e in ev if e["fields"]["seq"] == 0}
print(len(ev), ordered, all(h == "nodeA" for h in hosts[:first_b]),
      shift["nodeB"] - shift["nodeA"])
EOF
is "$rc:$(cat json.check)" "0:47 True True 2000000150" \
	"live, --sync and -f json: 47 JSON events in corrected order, nodeB 2 s later (seq 0: +2 s + 150 ns)"

# the host form, errors
# (--wait 0: a viewer waits for a session not listed otherwise, issue 27.13)
"$TRAWL" print --live "net://$LIVE/host/nodeB/lv" -n 1 --wait 0 > /dev/null 2> ended.err
is "$?" 1 "an ended session is not listed: exit 1"
grep -q "no such live session" ended.err
ok $? "... with a message naming it ($(head -1 ended.err))"
"$TRAWL" print --live "nett://x/y" > /dev/null 2> bad.err
is "$?:$(grep -c 'nett://x/y' bad.err)" "2:1" "a bad URL: a usage error (exit 2), the URL named"

# the relay goes away under a viewer: it ends (exit 1) with the reason, at once
printf 'stream 0\nev 0 1000000 3\nflush 0 2000000\ntouch a3\nwait never\n' > a3.txt
./live-producer "$DATA" lv3 nodeA ust < a3.txt > pa3.out 2> pa3.err &
P3=$!
pids="$pids $P3"
until_ok 30 test -e a3
timeout 60 "$TRAWL" print --live "net://$LIVE/session/lv3" > live3.txt 2> live3.err &
V3=$!
pids="$pids $V3"
until_ok 30 has_lines live3.txt 3
kill "$RELAY"
until_ok 30 gone "$V3"
wait "$V3"
rc=$?
is "$rc:$(grep -c "net://$LIVE/session/lv3" live3.err)" "1:1" \
	"the relay killed under a viewer: exit 1, the session named ($(head -1 live3.err))"
finish
