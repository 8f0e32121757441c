#!/bin/sh
# The relay's names, defaults and files (issue 20, items 7 and 8).
#
# Checks: --data 0 --live 0 start a relay on ports the kernel picked, the
# ready line tells them and both take connections; record --relay of a
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
# connecting.
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v python3 > /dev/null 2>&1 || skip_all "no python3 (the raw producer)"
command -v babeltrace2 > /dev/null 2>&1 || skip_all "babeltrace2 is not installed (the oracle)"
[ -x "$TRAWL_BUILD/examples/ust-counter" ] || skip_all "examples/ust-counter is not built"
COUNTER="$TRAWL_BUILD/examples/ust-counter"
plan 24

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

# ---- 1. port 0 for both ports: the kernel picks them, the ready line tells
mkfifo ready.fifo
"$TRAWL" relay -f -o OUT --data 0 --live 0 --ready-fd 3 3> ready.fifo 2> relay.log &
RELAY=$!
line=$(wait_ready ready.fifo)
DP=$(echo "$line" | sed -n 's/^ready [^ ]*:\([0-9]*\) [^ ]*:\([0-9]*\)$/\1/p')
LP=$(echo "$line" | sed -n 's/^ready [^ ]*:\([0-9]*\) [^ ]*:\([0-9]*\)$/\2/p')
[ -n "$DP" ] && [ "$DP" -gt 0 ] && [ -n "$LP" ] && [ "$LP" -gt 0 ] && [ "$DP" != "$LP" ]
ok $? "--data 0 --live 0: the relay starts on two ports the kernel picked ($line)"
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
is "$?:$(sed -n 's/^total: \([0-9]*\) hosts, \([0-9]*\) traces, [0-9]* streams, \([0-9]*\) events.*/\1 \2 \3/p' info2.txt)" \
	"1:2 2 $(sed -n 's/^total: [0-9]* hosts, [0-9]* traces, [0-9]* streams, \([0-9]*\) events.*/\1/p' info.txt)" \
	"trawl info: the other traces are counted, exit 1"
grep -q 'S1B/old/ust/metadata: empty metadata file; the trace is skipped' info2.err &&
	grep -q '^skipped: 1 trace that could not be opened$' info2.txt
ok $? "... the skipped trace reported and counted"
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

kill "$RELAY"
until_ok 10 gone "$RELAY"
RELAY=""
finish
