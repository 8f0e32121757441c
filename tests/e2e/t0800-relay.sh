#!/bin/sh
# trawl relay end to end, on 127.0.0.1 with ports the kernel picks: relay A
# detached (--pidfile, the detach message), relay B in the foreground
# (--ready-fd, --live-from-now, its log).
#
# Checks: simulate --relay writes OUT/SESSION/ byte for byte as the local
# copy (same files), trawl print and babeltrace2 read both alike; a second
# producer of an existing trace is refused with the directory named and
# nothing changed; live viewing with tests/e2e/live-producer.c (built here):
# babeltrace2 -i lttng-live shows the flushed events while the producer still
# waits (before it goes on), then exits 0 by itself once the producer closed,
# with exactly babeltrace2's output of the local reference and of the
# relay's copy (a class added mid-way, beacons); two traces of one (session,
# host) muxed by one viewer; the session listing; a second viewer refused
# while the first one goes on; a producer killed with SIGKILL (the relay
# stays up, the trace keeps exactly the flushed events); garbage on both
# ports (connections closed, nothing created outside OUT, the relay serves
# on); --live-from-now (a late viewer sees only the packets after it
# attached); SIGTERM (exit 0, traces readable, a trace whose producer was
# still connected keeps its flushed events); an unreachable relay ("cannot
# connect", quickly).
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v babeltrace2 > /dev/null 2>&1 || skip_all "babeltrace2 is not installed (the oracle)"
command -v "${CC:-cc}" > /dev/null 2>&1 || skip_all "no C compiler to build the live producer"
command -v bash > /dev/null 2>&1 || skip_all "no bash (its /dev/tcp sends the garbage)"
command -v timeout > /dev/null 2>&1 || skip_all "no timeout command (coreutils)"
plan 86

: > empty.conf
export TRAWL_CONFIG="$TRASH/empty.conf"
HERE=$(pwd -P)
RA="" RB="" pids=""
cleanup() {
	for p in $pids $RB $RA; do kill "$p" 2> /dev/null; done
}
trap cleanup EXIT
trap 'cleanup; exit 1' INT TERM HUP
bail() { echo "Bail out! $*"; exit 1; }

# waitpid PID SECS: the exit status of a child of ours; 124 if it still runs
waitpid() { until_ok "$2" gone "$1" || return 124; wait "$1"; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
seqs() { sed -n 's/.*{ seq = \([0-9]*\),.*/\1/p' "$1" | tr '\n' ' ' | sed 's/ $//'; }
# listing LIVEADDR: babeltrace2's list of the relay's sessions
listing() { timeout 10 babeltrace2 -i lttng-live "net://$1" 2> /dev/null; }
# listed LIVEADDR LINE: the listing is exactly LINE
listed() { [ "$(listing "$1")" = "$2" ]; }
# list_is LIVEADDR LINE DESCRIPTION: the listing becomes exactly LINE (the
# relay handles a producer's messages when it gets to them)
list_is() { until_ok 5 listed "$1" "$2"; is "$(listing "$1")" "$2" "$3"; }
# unlisted LIVEADDR SESSION: the listing works, and no line names SESSION
unlisted() { _l=$(listing "$1") && ! echo "$_l" | grep -q "/$2 ("; }
# tree DIR: every entry and every file's checksum (names have no blanks)
tree() { (cd "$1" && find . | sort && find . -type f | sort | xargs sha256sum); }
# closed: how the connection on descriptor 3 ended (bash): "closed BYTES"
# when the relay closed it within 5 s (an end of file, or a reset when it
# closed before the last bytes came), with the bytes it sent; "open" when
# it still was open; else cat's error
CLOSED='LC_ALL=C timeout 5 cat <&3 > poke.bin 2> poke.err; r=$?
	if [ $r -eq 0 ] || grep -q "Connection reset by peer" poke.err; then
		echo "closed $(wc -c < poke.bin)"
	elif [ $r -eq 124 ]; then echo open; else echo "cat: $r $(cat poke.err)"; fi'
# poke PORT FORMAT: sends printf FORMAT's bytes on a new connection, then
# tells how it ended
poke() {
	bash -c 'exec 3<> "/dev/tcp/127.0.0.1/$1" || exit 9
		printf "$2" >&3
		eval "$3"' poke "$1" "$2" "$CLOSED"
}

# ---- 1. the relays: A detached, B in the foreground
"$TRAWL" relay -o OUT --data 127.0.0.1:0 --live 127.0.0.1:0 --pidfile relayA.pid \
	> relayA.out 2> relayA.err
rc=$?
RA=$(cat relayA.pid 2> /dev/null)
DATA_A=$(sed -n 's/^trawl relay: data on \([^,]*\), live on \([^,]*\), sessions in .*/\1/p' relayA.out)
LIVE_A=$(sed -n 's/^trawl relay: data on \([^,]*\), live on \([^,]*\), sessions in .*/\2/p' relayA.out)
is "$rc:$(cat relayA.out)" "0:trawl relay: data on $DATA_A, live on $LIVE_A, sessions in $HERE/OUT; loopback only, no authentication (--secret-file)" \
	"relay A detaches (exit 0) and prints its addresses, its absolute output, loopback only, no authentication"
case "$DATA_A $LIVE_A" in
127.0.0.1:[1-9]*" "127.0.0.1:[1-9]*) [ "$DATA_A" != "$LIVE_A" ] ;;
*) false ;;
esac
ok $? "relay A: two ports the kernel chose on 127.0.0.1 ($DATA_A, $LIVE_A)"
[ -n "$RA" ] && kill -0 "$RA" 2> /dev/null && [ -d OUT ] &&
	tr '\0' ' ' < "/proc/$RA/cmdline" | grep -q ' relay -o OUT '
ok $? "relay A runs (pid $RA from --pidfile: a trawl relay) and created OUT"
[ -n "$RA" ] && [ -n "$DATA_A" ] && [ -n "$LIVE_A" ] || { cat relayA.err; bail "relay A did not start"; }

"$TRAWL" relay -o OUTB --data 127.0.0.1:0 --live 127.0.0.1:0 --foreground --live-from-now \
	--ready-fd 3 3> readyB.txt 2> relayB.err &
RB=$!
ready_line() { grep -Eq '^ready 127\.0\.0\.1:[1-9][0-9]* 127\.0\.0\.1:[1-9][0-9]*$' readyB.txt; }
until_ok 10 ready_line
ok $? "relay B (--foreground) writes 'ready DATA LIVE' to --ready-fd: $(cat readyB.txt)"
DATA_B=$(sed -n 's/^ready \([^ ]*\) \([^ ]*\)$/\1/p' readyB.txt)
LIVE_B=$(sed -n 's/^ready \([^ ]*\) \([^ ]*\)$/\2/p' readyB.txt)
[ -n "$DATA_B" ] && [ -n "$LIVE_B" ] || { cat relayB.err; bail "relay B did not start"; }
is "$(lines readyB.txt):$(head -1 relayB.err)" \
	"1:trawl relay: data on $DATA_B, live on $LIVE_B, writing to $HERE/OUTB; loopback only, no authentication (--secret-file)" \
	"relay B: one ready line; it logs the same addresses on stderr"
kill -0 "$RB" 2> /dev/null
ok $? "relay B stays in the foreground (pid $RB, our child)"

# ---- 2. simulate --relay: the relay's copy is the local one
"$TRAWL" simulate -o LOCAL --hosts 3 --events 200000 --seed 5 --shapes --relay "$DATA_A" \
	--session s1 > sim1.out 2> sim1.err
ok $? "simulate --relay $DATA_A --session s1 (3 hosts, 200000 events, --shapes) exits 0"
(cd LOCAL && find . | sort) > local.lst
(cd OUT/s1 2> /dev/null && find . | sort) > out.lst
cmp_files out.lst local.lst "OUT/s1 has exactly LOCAL's directories and files"
is "$(cd LOCAL && find . -type f | wc -l)" 30 "30 files: 3 hosts x 2 traces x (metadata, 2 streams, 2 indexes)"
n=0
for f in $(cd LOCAL && find . -type f | sort); do
	cmp -s "LOCAL/$f" "OUT/s1/$f" || { echo "# differs: $f"; n=$((n + 1)); }
done
is "$n" 0 "every file under OUT/s1 equals LOCAL's byte for byte"
"$TRAWL" print OUT/s1 > print-out.txt 2> print-out.err
"$TRAWL" print LOCAL > print-local.txt 2> print-local.err
is "$(lines print-out.txt)" 200000 "trawl print OUT/s1: 200000 events"
cmp_files print-out.txt print-local.txt "trawl print OUT/s1 = trawl print LOCAL"
babeltrace2 OUT/s1 > bt-out.txt 2> bt-out.err
babeltrace2 LOCAL > bt-local.txt 2> bt-local.err
is "$(lines bt-out.txt) $(lines bt-local.txt)" "200000 200000" "babeltrace2: 200000 events from each"
cmp_files bt-out.txt bt-local.txt "babeltrace2 OUT/s1 = babeltrace2 LOCAL, line for line"
sed -e "s|$HERE/OUT/s1/|D/|g" bt-out.err > bt-out.err.n
sed -e "s|$HERE/LOCAL/|D/|g" bt-local.err > bt-local.err.n
cmp_files bt-out.err.n bt-local.err.n \
	"babeltrace2's warnings (discarded events) are the same ($(grep -c WARNING bt-out.err) of them)"

# ---- 3. the same trace again is refused; another session name works
tree OUT/s1 > s1.before
"$TRAWL" simulate -o LOCAL2 --hosts 3 --events 200000 --seed 5 --shapes --relay "$DATA_A" \
	--session s1 > sim2.out 2> sim2.err
rc=$?
[ $rc -ne 0 ]; ok $? "simulate into the existing session s1: refused (exit $rc)"
grep -F "refused s1/host0/kernel: s1/host0/kernel exists" sim2.err > /dev/null &&
	! grep -F "$HERE" sim2.err > /dev/null
ok $? "... the message names the existing trace, not the relay's path (issue 28): $(head -1 sim2.err)"
tree OUT/s1 > s1.after
cmp_files s1.after s1.before "OUT/s1 unchanged (entries and checksums)"
"$TRAWL" simulate -o LOCAL3 --hosts 3 --events 200000 --seed 5 --shapes --relay "$DATA_A" \
	--session s1b > sim3.out 2> sim3.err
ok $? "the same with --session s1b exits 0"
diff -r LOCAL3 OUT/s1b > s1b.diff 2>&1
ok $? "OUT/s1b equals LOCAL3 (diff -r)"

# ---- the live producer
san=""
[ -n "${TRAWL_SAN:-}" ] && san="-fsanitize=$TRAWL_SAN"
${CC:-cc} -std=gnu11 -O2 -Wall -Wextra -Werror $san -I"$TRAWL_SRC/include" -o live-producer \
	"$TRAWL_SRC/tests/e2e/live-producer.c" "$TRAWL_BUILD/libtrawl.a" -lpthread -lm > lp-cc.log 2>&1
ok $? "the live producer builds (-Wall -Wextra -Werror $san)"
[ -x live-producer ] || { sed 's/^/#   /' lp-cc.log | head -10; bail "no live producer"; }

# ---- 5, 7, 8. one producer, one viewer while it records; the listing; a
# second viewer, attached later, served from the beginning too (each
# viewer its own positions)
cat > s5.txt << 'EOF'
stream 0
stream 1
ev 0 1000000 5
ev 1 1000500 5
flush 0 2000000
flush 1 2000000
touch at1
wait go1
class later
ev 0 3000000 4 later
flush 0 4000000
beacon 1 4000000
touch at2
wait go2
ev 0 5000000 3
ev 1 5000500 3
close
EOF
./live-producer "$DATA_A" live1 nodeA ust REF1 < s5.txt > p5.out 2> p5.err &
P5=$!
pids="$pids $P5"
until_ok 10 test -e at1
ok $? "producer live1/nodeA/ust: 10 events flushed, waiting on go1"
timeout 60 babeltrace2 -i lttng-live "net://$LIVE_A/host/nodeA/live1" > v5.txt 2> v5.err &
V5=$!
pids="$pids $V5"
# "Nothing more" is never proven by a pause: each snapshot is checked as it
# is (only a defect can make it longer), and the next events the producer
# flushes are the marker: when they show, the output before them must be
# exactly the snapshot (nothing shown twice, nothing unflushed shown);
# after the last ones, the viewer's own exit ends the output
until_ok 10 has_lines v5.txt 10
cp v5.txt v5.early
[ -e go1 ]; went=$?
kill -0 "$P5" 2> /dev/null; alive=$?
is "$(lines v5.early):$went:$alive" "10:1:0" \
	"the live viewer prints the 10 flushed events while the producer still waits (before go1)"
is "$(seqs v5.early)" "0 5 1 6 2 7 3 8 4 9" "... seqs 0-4 (stream 0) and 5-9 (stream 1), muxed by time"
list_is "$LIVE_A" \
	"net://$LIVE_A/host/nodeA/live1 (timer = 100000, 3 stream(s), 1 client(s) connected)" \
	"listing: net://$LIVE_A/host/nodeA/live1 alone, its live timer, 2 streams + metadata, 1 viewer"
timeout 60 babeltrace2 -i lttng-live "net://$LIVE_A/host/nodeA/live1" > v8.txt 2> v8.err &
V8=$!
pids="$pids $V8"
until_ok 10 has_lines v8.txt 10
cmp -s v8.txt v5.early
ok $? "a second viewer of live1, attached later, shows the same 10 events from the beginning ($(lines v8.txt) lines)"
kill -0 "$V5" 2> /dev/null && [ "$(lines v5.txt)" -eq 10 ]
ok $? "the first viewer goes on (still attached, still 10 events)"
touch go1
# stream 1 has nothing after 2000000, but its beacon says nothing before
# 4000000 is to come: the viewer can show stream 0's new packet (the
# marker: the 4 events of the class added mid-way)
later4() { [ "$(grep -c ' nodeA later: ' v5.txt)" -ge 4 ]; }
until_ok 10 test -e at2 && until_ok 10 later4
cp v5.txt v5.mid
[ -e go2 ]; went=$?
kill -0 "$P5" 2> /dev/null; alive=$?
is "$(lines v5.mid):$went:$alive:$(grep -c ' nodeA later: ' v5.mid)" "14:1:0:4" \
	"after go1: the 4 events of the class added mid-way are shown while the producer waits again"
is "$(seqs v5.mid)" "0 5 1 6 2 7 3 8 4 9 10 11 12 13" \
	"... (stream 1 idle behind its beacon): seqs 10-13 after the first 10"
touch go2
waitpid "$V5" 15
rc=$?
waitpid "$V8" 15
is "$rc $?" "0 0" "once the producer closed, both live viewers exit 0 by themselves"
waitpid "$P5" 15
ok $? "the producer exits 0 (the relay acknowledged its close)"
[ -s p5.err ] && sed 's/^/#   /' p5.err
babeltrace2 REF1 > ref1.txt 2> ref1.err
babeltrace2 OUT/live1/nodeA/ust > out1.txt 2> out1.err
is "$(lines v5.txt):$(grep -c ' nodeA later: ' v5.txt)" "20:4" \
	"the viewer got all 20 events, 4 of the class added mid-way"
is "$(seqs v5.txt | tr ' ' '\n' | sort -n | tr '\n' ' ')" \
	"0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 " "... seqs 0-19, each once"
head -10 v5.txt > v5.head
head -14 v5.txt > v5.head14
cmp -s v5.head v5.early && cmp -s v5.head14 v5.mid
ok $? "... the 10, then 14 shown early are its first 10, then 14"
cmp_files v5.txt ref1.txt "live output = babeltrace2 REF1 (the producer's local copy), line for line"
cmp_files v5.txt out1.txt "live output = babeltrace2 OUT/live1/nodeA/ust, line for line"
cmp_files v8.txt v5.txt "the second viewer's output = the first's, line for line"
diff -r REF1 OUT/live1/nodeA/ust > live1.diff 2>&1
ok $? "OUT/live1/nodeA/ust equals the local copy file for file (metadata grown mid-way)"

# ---- 6. two traces of one (session, host), one viewer; every timestamp
# differs (kernel ...100, ust ...300 and ...700)
cat > s6k.txt << 'EOF'
stream 0
ev 0 1000100 5
flush 0 2000000
touch k6.at
wait go6
ev 0 3000100 5
flush 0 4000000
close
EOF
cat > s6u.txt << 'EOF'
stream 0
stream 1
ev 0 1000300 3
ev 1 1000700 3
flush 0 2000000
flush 1 2000000
touch u6.at
wait go6
ev 0 3000300 3
ev 1 3000700 3
close
EOF
./live-producer "$DATA_A" live2 nodeB kernel REF6K < s6k.txt > p6k.out 2> p6k.err &
P6K=$!
./live-producer "$DATA_A" live2 nodeB ust REF6U < s6u.txt > p6u.out 2> p6u.err &
P6U=$!
pids="$pids $P6K $P6U"
until_ok 10 test -e k6.at && until_ok 10 test -e u6.at
ok $? "two producers of live2/nodeB (traces kernel and ust) flushed and wait"
list_is "$LIVE_A" \
	"net://$LIVE_A/host/nodeB/live2 (timer = 100000, 5 stream(s), 0 client(s) connected)" \
	"listing: one session for both traces (1 + 2 streams, 2 metadata), live1 gone"
timeout 60 babeltrace2 -i lttng-live "net://$LIVE_A/host/nodeB/live2" > v6.txt 2> v6.err &
V6=$!
pids="$pids $V6"
until_ok 10 has_lines v6.txt 11
cp v6.txt v6.early
[ -e go6 ]; went=$?
kill -0 "$P6K" 2> /dev/null && kill -0 "$P6U" 2> /dev/null; alive=$?
is "$(lines v6.early):$went:$alive" "11:1:0" "the viewer shows the 11 flushed events of both traces before go6"
touch go6
waitpid "$V6" 15
is $? 0 "the viewer exits 0 once both producers closed"
waitpid "$P6K" 15 && waitpid "$P6U" 15
ok $? "both producers exit 0"
babeltrace2 REF6K REF6U > ref6.txt 2> ref6.err
head -11 v6.txt > v6.head
is "$(lines v6.txt) $(lines ref6.txt):$(cmp -s v6.head v6.early; echo $?)" "22 22:0" \
	"22 events live, 22 in the two references; the 11 shown before go6 are the first 11"
cmp_files v6.txt ref6.txt "live output of both traces = babeltrace2 REF6K REF6U, line for line"
babeltrace2 OUT/live2 > out6.txt 2> out6.err
cmp_files out6.txt ref6.txt "babeltrace2 OUT/live2 (both traces) = the references"

# ---- 9. a producer killed with SIGKILL mid-way (relay B)
cat > s9.txt << 'EOF'
stream 0
stream 1
ev 0 1000000 6
ev 1 1000500 4
flush 0 2000000
flush 1 2000000
ev 0 3000000 5
touch k9.at
wait never9
EOF
./live-producer "$DATA_B" killed nodeK ust < s9.txt > p9.out 2> p9.err &
P9=$!
pids="$pids $P9"
until_ok 10 test -e k9.at
list_is "$LIVE_B" \
	"net://$LIVE_B/host/nodeK/killed (timer = 100000, 3 stream(s), 0 client(s) connected)" \
	"relay B lists the session of the connected producer"
kill -9 "$P9"
waitpid "$P9" 5
is $? 137 "the producer is killed (SIGKILL) after 2 flushes, 5 events unflushed"
until_ok 10 unlisted "$LIVE_B" killed
ok $? "the session is no longer listed once its producer is gone"
until_ok 5 grep -q 'killed/nodeK/ust: the producer left before CLOSE; the trace keeps what came' \
	relayB.err
ok $? "relay B logs the producer that left before CLOSE"
kill -0 "$RB" 2> /dev/null
ok $? "relay B is still up"
"$TRAWL" print OUTB/killed/nodeK/ust > p9.txt 2> p9.perr
is "$?:$(lines p9.txt)" "0:10" "trawl print of the killed trace: exactly the 10 flushed events"
is "$(seqs p9.txt)" "0 6 1 7 2 8 3 9 4 5" "... seqs 0-5 (stream 0) and 6-9 (stream 1), in time order"
babeltrace2 OUTB/killed/nodeK/ust > bt9.txt 2> bt9.err
is "$?:$(seqs bt9.txt)" "0:0 6 1 7 2 8 3 9 4 5" "babeltrace2 reads the killed trace alike"
"$TRAWL" simulate -o LOCAL9 --hosts 2 --events 20000 --seed 9 --relay "$DATA_B" --session s9 \
	> sim9.out 2> sim9.err && diff -r LOCAL9 OUTB/s9 > s9.diff 2>&1
ok $? "after the kill, relay B takes session s9 (simulate --relay), equal to the local copy"

# ---- 10. garbage on both ports of relay A
PA=${DATA_A##*:} PL=${LIVE_A##*:}
is "$(poke "$PA" 'GET / HTTP/1.0\r\n\r\n')" "closed 0" "data port: an HTTP request: closed without a reply"
is "$(poke "$PA" '\005\000\000\000\377\377\377\377')" "closed 0" \
	"data port: a PACKET header of 4 GiB: closed without a reply"
# HELLO: version 1, flags 0, live timer 0, uuid 0, session host trace
hello='\001\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000'
hello="$hello"'\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000'
# (issue 20: refused with its reason, no longer a bare close: WELCOME
# {type 2, status -EPROTO, the reason})
is "$(poke "$PA" '\001\000\000\000\053\000\000\000'"$hello"'..\000esc\000ust\000'):$(od -An -tx1 -N12 poke.bin | tr -d ' \n'):$(tail -c +13 poke.bin | tr -d '\0')" \
	"closed 79:0200000047000000b9ffffff:HELLO: a session, host or trace name that is not a plain file name" \
	"data port: a HELLO of session '..': refused with its reason, then closed"
[ ! -e esc ] && [ ! -e OUT/esc ]
ok $? "... nothing created outside OUT (no ./esc)"
# the same HELLO of session g10: WELCOME {type 2, 5 bytes: status 0, ""};
# then garbage: closed
bash -c 'exec 3<> "/dev/tcp/127.0.0.1/$1" || exit 9
	printf "$2" >&3
	timeout 5 head -c 13 <&3 > welcome.bin
	printf "GET / HTTP/1.0\r\n\r\n" >&3
	eval "$3"' poke "$PA" \
	'\001\000\000\000\054\000\000\000'"$hello"'g10\000esc\000ust\000' "$CLOSED" > g10.txt
is "$(od -An -tx1 welcome.bin | tr -d ' \n'):$(cat g10.txt)" "02000000050000000000000000:closed 0" \
	"data port: a HELLO of session g10: WELCOME status 0; then garbage: closed without a reply"
[ ! -e OUT/g10/esc/ust ]
ok $? "... and a trace that got no METADATA leaves no directory (issue 28 item 9; the WELCOME of status 0 above: the HELLO was well formed)"
# and a producer that hangs up after 3 bytes of a header
bash -c 'exec 3<> "/dev/tcp/127.0.0.1/$1" && printf "\001\000\000" >&3' poke "$PA"
is "$(poke "$PL" 'GET / HTTP/1.0\r\n\r\n')" "closed 0" "live port: an HTTP request: closed without a reply"
is "$(poke "$PL" '\000\000\000\000\000\000\000\000\000\000\000\002\000\000\000\000')" "closed 0" \
	"live port: LIST_SESSIONS before CONNECT: closed without a reply"
kill -0 "$RA" 2> /dev/null
ok $? "relay A is still up"
"$TRAWL" simulate -o LOCAL10 --hosts 2 --events 20000 --seed 10 --relay "$DATA_A" --session s10 \
	> sim10.out 2> sim10.err && diff -r LOCAL10 OUT/s10 > s10.diff 2>&1
ok $? "relay A still takes a session (s10, equal to the local copy)"
listing "$LIVE_A" > list10.txt
is "$?:$(cat list10.txt)" "0:" "relay A's live port still answers a listing (no session: none listed)"

# ---- 11. --live-from-now (relay B): a viewer attached after the first
# packets sees only the packets flushed after it attached
cat > s11.txt << 'EOF'
stream 0
stream 1
ev 0 1000000 5
ev 1 1000500 2
flush 0 2000000
flush 1 2000000
touch n11.at
wait n11.go
ev 0 3000000 4
ev 1 3000500 2
flush 0 4000000
flush 1 4000000
touch n11.at2
wait n11.go2
close
EOF
./live-producer "$DATA_B" now1 nodeN ust REF11 < s11.txt > p11.out 2> p11.err &
P11=$!
pids="$pids $P11"
until_ok 10 test -e n11.at
ok $? "producer now1/nodeN: 7 events flushed, waiting"
timeout 60 babeltrace2 -i lttng-live "net://$LIVE_B/host/nodeN/now1" > v11.txt 2> v11.err &
V11=$!
pids="$pids $V11"
# listed with 1 client: the relay took the attach, and with it the point
# from which this viewer is served (the relay counts a viewer at ATTACH)
until_ok 10 listed "$LIVE_B" \
	"net://$LIVE_B/host/nodeN/now1 (timer = 100000, 3 stream(s), 1 client(s) connected)"
ok $? "the viewer attached (listed with 1 client)"
cp v11.txt v11.early
# the marker: the 6 events flushed after it attached; whatever of the 7
# before would have been shown by then, and before them
touch n11.go
until_ok 10 test -e n11.at2 && until_ok 10 has_lines v11.txt 6
cp v11.txt v11.mid
[ -e n11.go2 ]; went=$?
kill -0 "$P11" 2> /dev/null; alive=$?
first=$(seqs v11.mid | cut -d' ' -f1)
is "$(lines v11.early):$first:$(seqs v11.mid | tr ' ' '\n' | awk '$1 < 7' | wc -l)" "0:7:0" \
	"--live-from-now: the packets before it attached are not shown (none at attach; none before, or among, the 6 after)"
is "$(lines v11.mid):$(seqs v11.mid):$went:$alive" "6:7 11 8 12 9 10:1:0" \
	"the packets flushed after it attached are shown (seqs 7-12), while the producer waits"
touch n11.go2
waitpid "$V11" 15
is $? 0 "the viewer exits 0 once the producer closed"
waitpid "$P11" 15
ok $? "the producer exits 0"
is "$(lines v11.txt)" 6 "... nothing else came"
babeltrace2 OUTB/now1/nodeN/ust > out11.txt 2> out11.err
is "$(seqs out11.txt)" "0 5 1 6 2 3 4 7 11 8 12 9 10" "the relay's copy has every event all the same"

# ---- 12. SIGTERM
cat > s12.txt << 'EOF'
stream 0
ev 0 1000000 3
flush 0 2000000
touch t12.at
wait t12.go
ev 0 3000000 3
flush 0 4000000
close
EOF
./live-producer "$DATA_B" term nodeT ust < s12.txt > p12.out 2> p12.err &
P12=$!
pids="$pids $P12"
until_ok 10 test -e t12.at
ok $? "a producer of relay B flushed 3 events and waits"
list_is "$LIVE_B" \
	"net://$LIVE_B/host/nodeT/term (timer = 100000, 2 stream(s), 0 client(s) connected)" \
	"relay B has it (listed: 1 stream + metadata)"
kill -TERM "$RB"
waitpid "$RB" 10
is $? 0 "relay B stops on SIGTERM with exit status 0"
RB=""
grep -q 'trawl relay: exiting' relayB.err
ok $? "... it logged that it exits"
"$TRAWL" print OUTB/term/nodeT/ust > p12.txt 2> p12.perr
is "$?:$(seqs p12.txt)" "0:0 1 2" "the trace of the producer still connected keeps its 3 flushed events"
touch t12.go
waitpid "$P12" 10
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ]
ok $? "that producer then fails (exit $rc: $(head -1 p12.err))"
kill -TERM "$RA"
until_ok 10 gone "$RA"
ok $? "relay A (detached) exits on SIGTERM"
RA=""
babeltrace2 OUT/s1 > bt-out2.txt 2> /dev/null
cmp_files bt-out2.txt bt-local.txt "after the relay stopped, babeltrace2 OUT/s1 still = babeltrace2 LOCAL"
babeltrace2 OUT/live1/nodeA/ust > out1b.txt 2> /dev/null
cmp_files out1b.txt ref1.txt "... and OUT/live1 = REF1"
babeltrace2 OUTB > btb.txt 2> btb.err
is "$?:$(lines btb.txt)" "0:$((10 + 20000 + 13 + 3))" \
	"babeltrace2 OUTB reads every trace of relay B (10 + 20000 + 13 + 3 events)"

# ---- 4. an unreachable relay: the data port of a stopped one
t0=$(now_ms)
timeout 20 "$TRAWL" simulate -o LOCAL4 --hosts 1 --events 1000 --relay "$DATA_B" --session s4 \
	> sim4.out 2> sim4.err
rc=$?
t1=$(now_ms)
[ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "relay $DATA_B: cannot connect" sim4.err &&
	[ $((t1 - t0)) -lt 10000 ]
ok $? "simulate --relay to a stopped relay: exit $rc in $((t1 - t0)) ms: $(head -1 sim4.err)"
t0=$(now_ms)
timeout 20 "$TRAWL" simulate --hosts 1 --events 1000 --relay "$DATA_A" --session s4 \
	> sim4b.out 2> sim4b.err
rc=$?
t1=$(now_ms)
[ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "relay $DATA_A: cannot connect" sim4b.err &&
	[ $((t1 - t0)) -lt 10000 ]
ok $? "... and without -o, to relay A's old port: exit $rc in $((t1 - t0)) ms"
finish
