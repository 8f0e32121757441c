#!/bin/sh
# The relay's names, defaults and files (issue 20, items 7 and 8).
#
# Checks: --live 0 starts a relay on a port the kernel picked (as
# --data 0 would), the ready line tells the ports and both take
# connections; record --relay of a
# command without tracepoints gives its node a complete metadata file, and
# trawl info, trawl print and babeltrace2 read the session it shares with
# a node that has events; a trace of a session whose metadata file is
# empty is reported and skipped by trawl info and trawl print (the others
# are read, the exit status is 1), and one that came complete without
# metadata or a stream is not left at the relay; without HOME and without
# -o the relay refuses to start and says to give -o (no /tmp fallback); a
# stream name of 255 bytes is refused with its reason and leaves no file,
# 251 bytes gives both the stream and its index; a name refused at HELLO
# (session, host or trace '-x', '..') and a stream named '-x' get their
# reason back and the relay logs it; record --session -x is refused before
# connecting. Torn tails (issue 20 item 6): a stream cut inside its last
# indexed packet, a partial packet after the last indexed one, half an
# index entry, and an empty metadata file left by an older writer make
# babeltrace2 reject the session; a relay started over it cuts each stream
# and index back to the last complete indexed packet, removes the empty
# trace, logs each, and then babeltrace2 and trawl print read every trace,
# each event as before but for the one packet cut.
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v python3 > /dev/null 2>&1 || skip_all "no python3 (the raw producer)"
command -v babeltrace2 > /dev/null 2>&1 || skip_all "babeltrace2 is not installed (the oracle)"
[ -x "$TRAWL_BUILD/examples/ust-counter" ] || skip_all "examples/ust-counter is not built"
COUNTER="$TRAWL_BUILD/examples/ust-counter"
plan 35

: > empty.conf
export TRAWL_CONFIG="$TRASH/empty.conf"
RELAY="" R2=""
cleanup() {
	for p in $RELAY $R2; do kill "$p" 2> /dev/null; done
}
trap cleanup EXIT
trap 'cleanup; exit 1' INT TERM HUP
bail() { echo "Bail out! $*"; exit 1; }

# rawprod.py ADDR SESSION HOST TRACE [STREAM]: a producer at the byte
# level: HELLO, (a STREAM of that name,) CLOSE; prints each reply as
# "WELCOME STATUS MSG" / "ACK STATUS MSG", "CLOSED" when the relay closed
# the connection without one
cat > rawprod.py <<'EOF'
import socket, struct, sys
host, port = sys.argv[1].rsplit(':', 1)
s = socket.create_connection((host, int(port)), timeout=10)
def msg(t, p):
    s.sendall(struct.pack('<II', t, len(p)) + p)
def recv_all(n):
    b = b''
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            return None
        b += c
    return b
def reply():
    try:
        h = recv_all(8)
        p = h and recv_all(struct.unpack('<II', h)[1])
    except OSError:
        p = None
    if p is None:
        print('CLOSED', flush=True)
        return False
    t = struct.unpack('<I', h[:4])[0]
    st = struct.unpack('<i', p[:4])[0]
    print({2: 'WELCOME', 8: 'ACK'}.get(t, str(t)), st, p[4:].rstrip(b'\0').decode(), flush=True)
    return st == 0
names = b''.join(a.encode() + b'\0' for a in sys.argv[2:5])
msg(1, struct.pack('<IIQ', 1, 0, 0) + b'\0' * 16 + names)
if reply():
    if len(sys.argv) > 5:
        msg(4, struct.pack('<IIQ', 1, 0, 0) + sys.argv[5].encode() + b'\0')
    try:
        msg(7, b'')
    except OSError:
        pass
    reply()
EOF

# ---- 1. port 0: the kernel picks it, the ready line tells. A bare "0"
# (the default host: 127.0.0.1 for --live; --data's would be 0.0.0.0,
# this test stays on loopback) and HOST:0 go through the same parser
mkfifo ready.fifo
"$TRAWL" relay -f -o OUT --data 127.0.0.1:0 --live 0 --ready-fd 3 3> ready.fifo 2> relay.log &
RELAY=$!
line=$(wait_ready ready.fifo)
DP=$(echo "$line" | sed -n 's/^ready [^ ]*:\([0-9]*\) [^ ]*:\([0-9]*\)$/\1/p')
LP=$(echo "$line" | sed -n 's/^ready [^ ]*:\([0-9]*\) [^ ]*:\([0-9]*\)$/\2/p')
[ -n "$DP" ] && [ "$DP" -gt 0 ] && [ -n "$LP" ] && [ "$LP" -gt 0 ] && [ "$DP" != "$LP" ]
ok $? "--live 0: the relay starts on ports the kernel picked ($line)"
[ -n "$DP" ] && [ -n "$LP" ] || { cat relay.log; bail "the relay did not start"; }
DATA=127.0.0.1:$DP LIVE=127.0.0.1:$LP
python3 rawprod.py "$DATA" p0 n0 ust > p0.txt 2>&1
is "$(cat p0.txt | tr '\n' '|')" "WELCOME 0 |ACK 0 |" "the data port it printed takes a producer"
timeout 10 babeltrace2 -i lttng-live "net://$LIVE" > list.txt 2> list.err
ok $? "the live port it printed serves a viewer (babeltrace2 lists the sessions)"

# ---- 2. a node without tracepoints beside a node with events
"$TRAWL" record -q --relay "$DATA" --session s1 --host quiet --no-kernel -- true \
	> rq.out 2> rq.err
is "$?" 0 "record --relay of a command without tracepoints exits 0"
[ -s OUT/s1/quiet/ust/metadata ] && grep -q 'packet.header' OUT/s1/quiet/ust/metadata
ok $? "its trace at the relay has a complete metadata file ($(wc -c < OUT/s1/quiet/ust/metadata 2> /dev/null) bytes, with the packet header)"
"$TRAWL" record -q --relay "$DATA" --session s1 --host busy --no-kernel -- "$COUNTER" -n 10 \
	> rb.out 2> rb.err
is "$?" 0 "record --relay of a command with tracepoints exits 0"
babeltrace2 OUT/s1 > bt.txt 2> bt.err
is "$?:$(grep -c ' counter:' bt.txt)" "0:20" "babeltrace2 reads the session (the 20 events of the busy node)"
"$TRAWL" print OUT/s1 > pr.txt 2> pr.err
is "$?:$(grep -c ' counter:' pr.txt)" "0:20" "trawl print reads it alike"
"$TRAWL" info OUT/s1 > info.txt 2> info.err
is "$?:$(sed -n 's/^total: \([0-9]*\) hosts, \([0-9]*\) traces.*/\1 \2/p' info.txt)" "0:2 2" \
	"trawl info reads it: 2 hosts, 2 traces"

# ---- 3. an empty metadata file (an older relay's, a crash): reported, skipped
cp -r OUT/s1 S1B
mkdir -p S1B/old/ust/index
: > S1B/old/ust/metadata
"$TRAWL" print S1B > pr2.txt 2> pr2.err
rc=$?
is "$rc:$(grep -c ' counter:' pr2.txt)" "1:20" \
	"trawl print: a trace with an empty metadata file is skipped, the others printed (exit 1)"
grep -q '^trawl print: S1B/old/ust/metadata: empty metadata file; the trace is skipped$' pr2.err
ok $? "... and reported in trawl's voice ($(head -1 pr2.err))"
"$TRAWL" info S1B > info2.txt 2> info2.err
is "$?:$(sed -n 's/^total: \([0-9]*\) hosts, \([0-9]*\) traces, [0-9]* streams\?, \([0-9]*\) events.*/\1 \2 \3/p' info2.txt)" \
	"1:2 2 $(sed -n 's/^total: [0-9]* hosts, [0-9]* traces, [0-9]* streams\?, \([0-9]*\) events.*/\1/p' info.txt)" \
	"trawl info: the other traces are counted, exit 1"
grep -q 'S1B/old/ust/metadata: empty metadata file; the trace is skipped' info2.err &&
	grep -q '^skipped: 1 trace that could not be opened$' info2.txt
ok $? "... the skipped trace reported and counted"
"$TRAWL" analyze syscalls S1B > an2.txt 2> an2.err
is "$?:$(grep -c 'the trace is skipped' an2.err)" "1:1" \
	"trawl analyze: the trace is skipped, the others read (exit 1)"
grep -q '^trawl analyze: S1B/old/ust/metadata: empty metadata file; the trace is skipped$' an2.err
ok $? "... and reported in trawl's voice ($(head -1 an2.err))"
# a trace that came complete without metadata or a stream: not left behind
python3 rawprod.py "$DATA" s2 bare ust > p2.txt 2>&1
is "$(cat p2.txt | tr '\n' '|'):$(ls OUT/s2 2> /dev/null)" "WELCOME 0 |ACK 0 |:" \
	"a trace complete without metadata or a stream leaves no empty metadata file at the relay"

# ---- 4. names
long=$(printf 'a%.0s' $(seq 255))
python3 rawprod.py "$DATA" s3 n3 ust "$long" > p3.txt 2>&1
grep -q '^ACK -71 STREAM: a stream file name longer than 251 bytes' p3.txt
ok $? "a 255-byte stream name is refused with its reason ($(cut -c 1-60 p3.txt | tr '\n' '|'))"
is "$(find OUT/s3 -type f ! -name metadata 2> /dev/null | wc -l)" 0 "... and leaves no file of it (no orphan stream)"
ok251=$(printf 'b%.0s' $(seq 251))
python3 rawprod.py "$DATA" s4 n4 ust "$ok251" > p4.txt 2>&1
[ "$(cat p4.txt | tr '\n' '|')" = "WELCOME 0 |ACK 0 |" ] && [ -f "OUT/s4/n4/ust/$ok251" ] &&
	[ -f "OUT/s4/n4/ust/index/$ok251.idx" ]
ok $? "a 251-byte stream name gets both its file and its index"
python3 rawprod.py "$DATA" -x n5 ust > p5.txt 2>&1
python3 rawprod.py "$DATA" s5 -x ust >> p5.txt 2>&1
python3 rawprod.py "$DATA" s5 n5 -x >> p5.txt 2>&1
python3 rawprod.py "$DATA" .. n5 ust >> p5.txt 2>&1
is "$(grep -c '^WELCOME -71 HELLO: a session, host or trace name that is not a plain file name$' p5.txt)" 4 \
	"session, host or trace '-x' and session '..': refused, the reason in the WELCOME"
ls OUT | grep -q -- '^-' || [ -e OUT/s5 ] || [ -e ./-x ]
is "$?" 1 "... and nothing of them is created"
python3 rawprod.py "$DATA" s6 n6 ust -x > p6.txt 2>&1
is "$(cat p6.txt | tr '\n' '|')" "WELCOME 0 |ACK -71 STREAM: a stream file name that is not a plain file name|" \
	"a stream named '-x': refused, the reason in an ACK"
until_ok 10 eval '[ "$(grep -c "not a plain file name; connection closed" relay.log)" -ge 5 ]'
ok $? "the relay logs each refusal with its reason ($(grep -c 'not a plain file name; connection closed' relay.log) lines)"
"$TRAWL" record -q --relay "$DATA" --session -x --no-kernel -- true > r7.out 2> r7.err
rc=$?
[ $rc -ne 0 ] && grep -q "not starting with '.' or '-'" r7.err
ok $? "record --session -x is refused before it connects ($(head -1 r7.err))"

# ---- 5. no HOME, no -o: refused, never /tmp
env -u HOME timeout 10 "$TRAWL" relay -f --data 127.0.0.1:0 --live 127.0.0.1:0 \
	> nohome.out 2> nohome.err
rc=$?
is "$rc:$(head -1 nohome.err)" "1:trawl relay: no output directory: HOME is not set (or not an absolute path)" \
	"without HOME nor -o the relay does not start"
grep -q '^hint: give one: trawl relay -o DIR' nohome.err
ok $? "... and says to give -o"

# ---- 6. torn tails, repaired when the relay starts again
"$TRAWL" simulate -q -o LOCAL9 --hosts 2 --events 20000 --seed 9 --packet-size 4096 \
	--relay "$DATA" --session s9 > sim.out 2> sim.err
ok $? "simulate --relay: session s9 (2 hosts, 4096-byte packets) at the relay"
kill "$RELAY"
until_ok 10 gone "$RELAY"
RELAY=""
cp -r OUT/s9 S9.orig
for t in host0/kernel host0/ust host1/kernel host1/ust; do
	babeltrace2 "OUT/s9/$t" > "orig.$(echo $t | tr / .)" 2> /dev/null
done
# consistent.py DIR: every stream file of every trace under DIR ends where
# its index's last entry says, the entries contiguous, the index whole
cat > consistent.py <<'EOF'
import os, struct, sys
bad = []
for root, dirs, files in os.walk(sys.argv[1]):
    if 'index' not in dirs:
        continue
    for f in files:
        if f == 'metadata':
            continue
        idx = open(os.path.join(root, 'index', f + '.idx'), 'rb').read()
        e = struct.unpack('>I', idx[12:16])[0]
        end = 0
        if (len(idx) - 16) % e:
            bad.append(f'{root}/{f}: index of {len(idx)} bytes')
            continue
        for k in range(16, len(idx), e):
            off, bits = struct.unpack('>QQ', idx[k:k + 16])
            if off != end:
                bad.append(f'{root}/{f}: entry at {off}, not {end}')
            end = off + bits // 8
        size = os.path.getsize(os.path.join(root, f))
        if size != end:
            bad.append(f'{root}/{f}: {size} bytes, index ends at {end}')
print('\n'.join(bad) if bad else 'consistent')
EOF
s1=OUT/s9/host0/kernel/channel0_0 s2=OUT/s9/host0/ust/channel0_1
i3=OUT/s9/host1/kernel/index/channel0_1.idx
truncate -s $(($(stat -c %s $s1) - 100)) $s1		# its last packet cut
head -c 500 $s2 >> $s2					# half a packet after the last
head -c 30 /dev/zero >> $i3				# half an index entry
mkdir -p OUT/s9/host2/ust/index && : > OUT/s9/host2/ust/metadata	# an older writer's
babeltrace2 OUT/s9 > /dev/null 2>&1
is "$?:$(python3 consistent.py OUT/s9 | wc -l)" "1:3" \
	"torn tails: babeltrace2 rejects the session, 3 files inconsistent"
"$TRAWL" relay -f -o OUT --data 127.0.0.1:0 --live 127.0.0.1:0 --ready-fd 3 3> ready.fifo \
	2> relay2.log &
RELAY=$!
line=$(wait_ready ready.fifo)
ok $? "the relay starts again over the same directory ($line)"
is "$(grep -c 'torn tail repaired' relay2.log)" 3 "it logs 3 torn tails repaired"
cut=$(($(stat -c %s S9.orig/host0/kernel/channel0_0) - 100))
grep -q "OUT/s9/host0/kernel/channel0_0: torn tail repaired: stream cut from $cut to" relay2.log &&
	grep -q 'OUT/s9/host2/ust: an empty metadata file and no stream: removed' relay2.log &&
	[ ! -e OUT/s9/host2/ust ]
ok $? "... saying what was cut, and the empty trace is removed ($(grep -m1 'channel0_0: torn' relay2.log | sed 's/.*: torn/torn/'))"
is "$(python3 consistent.py OUT/s9)" "consistent" "every stream now ends where its index does"
babeltrace2 OUT/s9 > bt9.txt 2> bt9.err
rc=$?
"$TRAWL" print OUT/s9 > pr9.txt 2> pr9.err
is "$rc:$?:$(lines bt9.txt)" "0:0:$(lines pr9.txt)" \
	"babeltrace2 and trawl print read the repaired session ($(lines bt9.txt) events each)"
same=0
for t in host0/ust host1/kernel host1/ust; do
	babeltrace2 "OUT/s9/$t" 2> /dev/null | cmp -s - "orig.$(echo $t | tr / .)" || same=1
done
ok $same "the traces with a partial packet or index entry: every event kept, as before"
babeltrace2 OUT/s9/host0/kernel > k9.txt 2> /dev/null
lost=$(($(lines orig.host0.kernel) - $(lines k9.txt)))
# (the deltas to the previous event aside: they change around a gap)
sed 's/ (+[0-9.?]*)//' orig.host0.kernel | sort > k9o.s
sed 's/ (+[0-9.?]*)//' k9.txt | sort | comm -13 k9o.s - > k9.new
[ "$lost" -gt 0 ] && [ "$lost" -lt 200 ] && [ ! -s k9.new ] &&
	cmp -s OUT/s9/host0/kernel/channel0_1 S9.orig/host0/kernel/channel0_1
ok $? "the trace whose packet was cut: that packet's $lost events lost, nothing else changed"

kill "$RELAY"
until_ok 10 gone "$RELAY"
RELAY=""
finish
