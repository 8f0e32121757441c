#!/bin/sh
# Settings (docs/config.md), through `trawl probe --show-config`: defaults;
# a file (TRAWL_CONFIG) with values, lists and FILE:LINE origins; the user
# file ($XDG_CONFIG_HOME, else ~/.config) over the system one; the
# environment (TRAWL_PROBE_*) over the files, replacing lists; the command
# line over everything; errors naming the file and line or the variable;
# --show-config's output read back as a file; and a real probe run taking
# its peers and rate from a file.
. "$TRAWL_SRC/tests/e2e/lib.sh"

unset TRAWL_PROBE_RATE TRAWL_PROBE_LISTEN TRAWL_PROBE_PEER XDG_CONFIG_HOME
export HOME="$TRASH/home"
mkdir -p home/.config/trawl xdg/trawl

# show [ARGS...]: the settings as "key = value <- origin" lines
show() {
	"$TRAWL" probe --host me --show-config "$@" > show.out 2> show.err || return $?
	awk '/^# from: / { o = substr($0, 9) } /^# no peers/ { print "no peers" }
	     /^[a-z]+ = / { print $0 " <- " o }' show.out
}

# ---- defaults (no file at all)
got=$(TRAWL_CONFIG= show)
ok $? "--show-config with no settings exits 0"
is "$got" "listen = 0.0.0.0:7077 <- default
rate = 100 <- default
no peers" "defaults: listen 0.0.0.0:7077, rate 100, no peers"

# ---- one file
cat > a.conf <<'EOF'
# the probe settings of this node
[probe]
listen = 127.0.0.1:9000
rate = 250
peer = alpha 10.1.0.1:7077

[agent]
whatever = kept, not ours
[probe]
peer = beta 10.1.0.2:7078
EOF
got=$(TRAWL_CONFIG=a.conf show)
is "$got" "listen = 127.0.0.1:9000 <- a.conf:3
rate = 250 <- a.conf:4
peer = alpha 10.1.0.1:7077 <- a.conf:10
peer = beta 10.1.0.2:7078 <- a.conf:10" "a file: values, a list over two [probe] sections, FILE:LINE origins"

# ---- system < user file: the XDG one, else ~/.config
cat > xdg/trawl/trawl.conf <<'EOF'
[probe]
rate = 30
listen = 127.0.0.1:9100
peer = gamma 10.1.0.3:1
EOF
cat > home/.config/trawl/trawl.conf <<'EOF'
[probe]
rate = 40
listen = 127.0.0.1:9200
peer = delta 10.1.0.4:1
EOF
[ -e /etc/trawl/trawl.conf ] && echo "# note: /etc/trawl/trawl.conf exists here; the user files set every key"
got=$(XDG_CONFIG_HOME="$TRASH/xdg" show)
is "$got" "listen = 127.0.0.1:9100 <- $TRASH/xdg/trawl/trawl.conf:3
rate = 30 <- $TRASH/xdg/trawl/trawl.conf:2
peer = gamma 10.1.0.3:1 <- $TRASH/xdg/trawl/trawl.conf:4" "\$XDG_CONFIG_HOME/trawl/trawl.conf is read"
got=$(show)
is "$got" "listen = 127.0.0.1:9200 <- $TRASH/home/.config/trawl/trawl.conf:3
rate = 40 <- $TRASH/home/.config/trawl/trawl.conf:2
peer = delta 10.1.0.4:1 <- $TRASH/home/.config/trawl/trawl.conf:4" "without XDG_CONFIG_HOME: ~/.config/trawl/trawl.conf"
got=$(TRAWL_CONFIG=a.conf XDG_CONFIG_HOME="$TRASH/xdg" show | head -2)
is "$got" "listen = 127.0.0.1:9000 <- a.conf:3
rate = 250 <- a.conf:4" "TRAWL_CONFIG replaces the system and user files"

# ---- environment over files
got=$(TRAWL_CONFIG=a.conf TRAWL_PROBE_RATE=50 show)
is "$(echo "$got" | grep '^rate')" "rate = 50 <- environment TRAWL_PROBE_RATE" "TRAWL_PROBE_RATE over the file"
is "$(echo "$got" | grep '^listen')" "listen = 127.0.0.1:9000 <- a.conf:3" "... other keys still from the file"
got=$(TRAWL_CONFIG=a.conf TRAWL_PROBE_PEER='x 10.0.0.9:1, y 10.0.0.10:2' show | grep '^peer')
is "$got" "peer = x 10.0.0.9:1 <- environment TRAWL_PROBE_PEER
peer = y 10.0.0.10:2 <- environment TRAWL_PROBE_PEER" "TRAWL_PROBE_PEER replaces the file's peers (commas separate peers)"
got=$(TRAWL_CONFIG=a.conf TRAWL_PROBE_PEER= show | grep -c '^peer')
is "$got" 0 "an empty TRAWL_PROBE_PEER clears the peers"

# ---- command line over everything
got=$(TRAWL_CONFIG=a.conf TRAWL_PROBE_RATE=50 show --rate 20 --listen '[::1]:9300' --peer z=10.0.0.11:3)
is "$got" "listen = [::1]:9300 <- command line
rate = 20 <- command line
peer = z 10.0.0.11:3 <- command line" "the command line wins over environment and file; --peer replaces the list"

# ---- --show-config's output is a settings file
TRAWL_CONFIG=a.conf "$TRAWL" probe --host me --show-config > back.conf 2>&1
got=$(TRAWL_CONFIG=back.conf show | sed 's/ <- .*//')
want=$(TRAWL_CONFIG=a.conf show | sed 's/ <- .*//')
is "$got" "$want" "--show-config output read back as a file gives the same settings"

# ---- errors
printf '[probe]\nrate = 10\nlisten\n' > bad1.conf
TRAWL_CONFIG=bad1.conf "$TRAWL" probe --host me --show-config > /dev/null 2> err1
is $? 1 "a syntax error exits 1"
grep -q "^trawl probe: settings: bad1.conf:3: " err1
ok $? "... naming the file and line ($(cat err1))"
printf '[probe]\nrate = fast\n' > bad2.conf
TRAWL_CONFIG=bad2.conf "$TRAWL" probe --host me --show-config > /dev/null 2> err2
is $? 1 "a bad rate in a file exits 1"
grep -q "^trawl probe: rate = 'fast' (bad2.conf:2): " err2
ok $? "... naming the value and where it is ($(cat err2))"
TRAWL_CONFIG= TRAWL_PROBE_PEER='nameonly' "$TRAWL" probe --host me --show-config > /dev/null 2> err3
is $? 1 "a bad peer in the environment exits 1"
grep -q "environment TRAWL_PROBE_PEER" err3
ok $? "... naming the variable ($(cat err3))"
TRAWL_CONFIG= "$TRAWL" probe --host me --show-config --rate -1 > /dev/null 2> err4
is $? 2 "a bad --rate is a usage error (exit 2)"
TRAWL_CONFIG= "$TRAWL" probe --host me --show-config --peer me=127.0.0.1:1 > /dev/null 2> err5
is $? 2 "--peer naming this node is a usage error"
got=$(TRAWL_CONFIG=a.conf show --host alpha | grep '^peer')
is "$got" "peer = beta 10.1.0.2:7078 <- a.conf:10" "a settings peer named like this node is skipped (one file for all nodes)"
TRAWL_CONFIG= "$TRAWL" probe --host me --show-config --peer a=1.2.3.4 > /dev/null 2> err6
is $? 2 "a peer without a port is a usage error"
TRAWL_CONFIG= "$TRAWL" probe --host me --show-config --peer a=1.2.3.4:1 --peer a=1.2.3.5:1 > /dev/null 2> err7
is $? 2 "a peer given twice is a usage error"
TRAWL_CONFIG= "$TRAWL" probe --host me > /dev/null 2> err8
is $? 2 "no -o DIR is a usage error"
"$TRAWL" probe --help > help.out
ok $? "trawl probe --help exits 0"
grep -q "^usage: trawl probe " help.out
ok $? "... and shows the usage"

# ---- a real run from settings: two nodes on loopback, peers and rate from files
p1=$((20000 + $$ % 20000)) p2=$((20001 + $$ % 20000))
printf '[probe]\nlisten = 127.0.0.1:%s\nrate = 40\npeer = two 127.0.0.1:%s\n' $p1 $p2 > one.conf
printf '[probe]\nlisten = 127.0.0.1:%s\nrate = 40\npeer = one 127.0.0.1:%s\n' $p2 $p1 > two.conf
TRAWL_CONFIG=one.conf "$TRAWL" probe -o S --host one --duration 1 > one.out 2> one.err &
pid=$!
TRAWL_CONFIG=two.conf "$TRAWL" probe -o S --host two --duration 1 > two.out 2> two.err
r2=$?
wait $pid
r1=$?
is "$r1 $r2" "0 0" "two probes configured by files run and exit 0"
grep -q "^trawl probe: one listening on 127.0.0.1:$p1, probing 1 peer at 40/s" one.err
ok $? "the listen address, peer and rate come from the file"
# A loaded machine runs the probe late: the ticks it let go are counted
# (its summary's "ticks late"), and sent + late is the rate times the time.
n=$("$TRAWL" print -H one -e trawl_sync:probe_send S 2> /dev/null | grep -c 'peer = "two"')
s1=$(sed -n 's/^trawl probe: one: \([0-9]*\) probes sent.*/\1/p' one.out)
l1=$(sed -n 's/^trawl probe: one: .* \([0-9]*\) ticks late.*/\1/p' one.out)
[ "$n" = "$s1" ] && [ $((n + l1)) -ge 36 ] && [ $((n + l1)) -le 41 ]
ok $? "40 probes/s for 1 s from 'one' to 'two', each recorded ($n sent + ${l1:-?} ticks late)"
n2=$("$TRAWL" print -H two -e trawl_sync:probe_recv S 2> /dev/null | grep -c 'peer = "one"')
# (two starts after one: what one sent before two listened is lost)
[ "$n2" -le "$n" ] && [ $((4 * n2)) -ge $((3 * n)) ]
ok $? "'two' recorded their receipt ($n2 of $n)"

# ---- stopping by a signal: 'three' runs until 'four' (1 s) is done, then
# gets SIGTERM; 'four' also names a peer wrongly (its address is three's);
# garbage datagrams go to 'three' too
p3=$((20002 + $$ % 20000)) p4=$((20003 + $$ % 20000))
mkfifo three.ready
TRAWL_CONFIG= "$TRAWL" probe -o T --host three --listen 127.0.0.1:$p3 --peer four=127.0.0.1:$p4 \
	--ready-fd 3 3> three.ready > three.out 2> three.err &
pid=$!
wait_ready three.ready > /dev/null
TRAWL_CONFIG= "$TRAWL" probe -o T --host four --listen 127.0.0.1:$p4 --peer three=127.0.0.1:$p3 \
	--peer five=127.0.0.1:$p3 --rate 50 --duration 1 > four.out 2> four.err
r4=$?
if command -v python3 > /dev/null 2>&1; then
	python3 -c 'import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for d in (b"", b"TRWP", b"TRWP\x01\x01\x05\x05" + bytes(8) + b"four!three", b"x" * 600,
	  b"TRWP\x02\x01\x04\x05" + bytes(8) + b"fourthree"):
	s.sendto(d, ("127.0.0.1", int(sys.argv[1])))' $p3
	garbage=5
else
	garbage=0
fi
kill -TERM $pid
wait $pid
r3=$?
is "$r3 $r4" "0 0" "a probe stopped by SIGTERM exits 0"
grep -q "(stopped by a signal)" three.out
ok $? "... and says it was stopped by a signal"
"$TRAWL" print -H three T > three.txt 2> three.perr
ok $? "... its trace is complete and readable"
s=$(sed -n 's/^trawl probe: three: \([0-9]*\) probes sent.*/\1/p' three.out)
rv=$(sed -n 's/.* sent to [0-9]* peers\{0,1\} ([0-9]* failed), \([0-9]*\) received.*/\1/p' three.out)
is "$(grep -c probe_send three.txt) $(grep -c probe_recv three.txt)" "$s $rv" \
	"... with every send and receive it reported ($s, $rv)"
s4=$(sed -n 's/^  peer three [^ ]*: sent \([0-9]*\) .*/\1/p' four.out)
l4=$(sed -n 's/^trawl probe: four: .* \([0-9]*\) ticks late.*/\1/p' four.out)
[ "$rv" = "$s4" ] && [ $((rv + l4)) -ge 45 ] && [ $((rv + l4)) -le 51 ]
ok $? "... 50/s for 1 s from 'four' received, none of those meant for 'five' ($rv of $s4 sent, ${l4:-?} ticks late)"
# (four sends to both peers at each tick: as many meant for five as for
# three; on a loaded machine fewer ticks than 50 fit in the second)
grep -q "sent a probe meant for 'five' to this node (three)" three.err &&
	grep -q " $rv misaddressed" three.out
ok $? "probes meant for another node: warned, counted ($rv, one per tick as for three), not recorded"
if [ $garbage -gt 0 ]; then
	grep -q " $garbage invalid" three.out
	ok $? "malformed datagrams counted as invalid, not recorded ($(grep -o '[0-9]* invalid' three.out))"
else
	skip "python3 missing: no malformed datagrams sent"
fi
if command -v babeltrace2 > /dev/null 2>&1; then
	is "$(babeltrace2 T/three 2> /dev/null | wc -l)" "$(wc -l < three.txt)" \
		"babeltrace2 reads the signal-stopped trace: the same number of events"
else
	skip "babeltrace2 missing"
fi
TRAWL_CONFIG= "$TRAWL" probe -o T --host three --listen 127.0.0.1:$p3 --duration 0.1 > /dev/null 2> again.err
is $? 1 "an existing trace is not overwritten"
grep -q "already holds a trace (use --force" again.err
ok $? "... and the message says --force"
TRAWL_CONFIG= "$TRAWL" probe -o T --host three --listen 127.0.0.1:$p3 --duration 0.1 --force > /dev/null 2>&1
ok $? "--force overwrites it"

plan "$_n"
finish
