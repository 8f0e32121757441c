#!/bin/sh
# End to end, clock synchronization on one box: 4 nodes, each in its own
# network namespace (veth to a bridge in a namespace of ours, 10.231.0.0/24)
# AND its own time namespace whose CLOCK_MONOTONIC is offset by whole
# seconds (0, +3, -2, +7 s, as in seed 000's table). Each node runs
# `trawl probe --clock-offset 0`, so its trace's time is its own shifted
# CLOCK_MONOTONIC: the ground truth is exactly those offsets (no drift: one
# host clock). tc netem delays are used where the kernel has them (this one
# may not: a diagnostic says so, and the veths' natural delays serve).
#
# Checks: the probe traces (layout, hostname, counts, babeltrace2 reads
# them), the shifted clocks as recorded (raw one-way delays off by the
# offsets), the probes' own offset estimate per pair inside its half-RTT
# band (every recorded interval contains the transit), then `trawl sync`:
# every recovered offset equals the namespace offset within the reported
# bound, every node accurate, and `trawl print` of the synced session never
# shows a probe_recv before its probe_send (and all delays small again).
#
# A second run always has asymmetric delays, with or without netem: every
# probe goes through delay-relay (tests/e2e/delay-relay.c, built here with
# cc), a UDP relay in the bridge's namespace that forwards each datagram
# after a configured one-way delay per direction (base + seeded jitter).
# Each node addresses each peer through a relay port of its own, so the
# recorded send (before sendto) and receive (after recv) still bracket the
# true transit. Checks: every datagram recorded went through the relay,
# every raw one-way delay (less the namespace offsets) is at least the
# configured one, and `trawl sync`: every node accurate, its offset within
# its bound, the bound at least half the configured round trip along the
# node's path (so at least half the asymmetry), the error about what the
# asymmetry predicts (printed beside the bound: "# pair offset truth error
# bound"), and no probe_recv printed before its probe_send.
. "$TRAWL_SRC/tests/e2e/lib.sh"

[ "$(id -u)" -eq 0 ] || skip_all "needs root (network and time namespaces)"
command -v ip > /dev/null 2>&1 || skip_all "no ip command (iproute2)"
need_timens

N=4
P=trawl-netdelay-$$
OFFS="0 3 -2 7"
PORT=7077
RATE=200
DUR=2.5

pids=""
cleanup() {
	for p in $pids; do kill "$p" 2> /dev/null; done
	for i in $(seq 0 $((N - 1))); do ip netns del "$P-n$i" 2> /dev/null; done
	ip netns del "$P-br" 2> /dev/null
}
trap cleanup EXIT
trap 'cleanup; exit 1' INT TERM HUP

off_of() { _i=$1; set -- $OFFS; shift "$_i"; echo "$1"; }	# node I's offset (s)

# ---- the network: a bridge in its own namespace, one veth per node
ip netns add "$P-br" 2> netns.err || skip_all "cannot create a network namespace ($(head -1 netns.err))"
ip -n "$P-br" link add br0 type bridge &&
	ip -n "$P-br" link set br0 up &&
	ip -n "$P-br" link set lo up
r=$?
for i in $(seq 0 $((N - 1))); do
	[ $r -eq 0 ] || break
	ip netns add "$P-n$i" &&
		ip link add eth0 netns "$P-n$i" type veth peer name "p$i" netns "$P-br" &&
		ip -n "$P-br" link set "p$i" master br0 &&
		ip -n "$P-br" link set "p$i" up &&
		ip -n "$P-n$i" addr add "10.231.0.$((i + 1))/24" dev eth0 &&
		ip -n "$P-n$i" link set eth0 up &&
		ip -n "$P-n$i" link set lo up
	r=$?
done 2> net.err
[ $r -eq 0 ] || { cat net.err; skip_all "cannot build the veth/bridge network ($(head -1 net.err))"; }

# ---- delays: netem where the kernel has it (asymmetric: node i sends with
# (i+1) x 150 us), else the veths' own
netem=yes
for i in $(seq 0 $((N - 1))); do
	ip netns exec "$P-n$i" tc qdisc add dev eth0 root netem delay $(( (i + 1) * 150 ))us \
		2> netem.err || { netem=no; break; }
done
if [ $netem = yes ]; then
	echo "# netem: node i's egress delayed by (i+1) x 150 us (asymmetric)"
else
	echo "# netem unavailable ($(head -1 netem.err | cut -c1-100)): natural veth delays only"
fi

# The emulated cluster must keep its pace whatever else the machine does
# (each node of a real one has its own CPUs): the probes, and the relay of
# the second run, run SCHED_FIFO where this may. Else a loaded machine
# stretches the probes' 5 ms period (a probe that falls behind skips
# rounds) and adds its scheduling delays, milliseconds, to the relay's
# configured ones, hundreds of us, and the bounds and errors follow them.
RT=""
if chrt -f 10 true 2> rt.err; then
	RT="chrt -f 10"
	echo "# the probes and the relay: SCHED_FIFO 10"
else
	echo "# no SCHED_FIFO here ($(head -1 rt.err)): the checks of pace and delay hold on an idle machine only"
fi
# probe I OUT ARGS...: node I's probe into session OUT, in its network and
# time namespaces, behind a barrier: it touches OUT.I.ready, then waits for
# OUT.go, so that the 4 start together however slowly this shell starts
# them (a probe alone sends to peers not listening yet)
probe() {
	_i=$1 _o=$2
	shift 2
	TRAWL_CONFIG= $RT timeout 60 ip netns exec "$P-n$_i" unshare --time --monotonic "$(off_of "$_i")" --fork \
		sh -c 'touch "$1"; until [ -e "$2" ]; do sleep 0.01; done; shift 2; exec "$@"' sh \
		"$_o.$_i.ready" "$_o.go" "$TRAWL" probe -o "$_o" --host "node$_i" \
		--listen "10.231.0.$((_i + 1)):$PORT" "$@"
}
all_ready() { for _i in $(seq 0 $((N - 1))); do [ -e "$1.$_i.ready" ] || return 1; done; }

# ---- the probes: every node probes every other one
for i in $(seq 0 $((N - 1))); do
	peers=""
	for j in $(seq 0 $((N - 1))); do
		[ "$j" -eq "$i" ] || peers="$peers --peer node$j=10.231.0.$((j + 1)):$PORT"
	done
	probe "$i" S $peers --rate $RATE --duration $DUR --clock-offset 0 > "probe$i.out" 2> "probe$i.err" &
	pids="$pids $!"
done
until_ok 30 all_ready S
touch S.go
rc=0
for p in $pids; do wait "$p" || rc=$?; done
pids=""
ok $rc "4 probes in network + time namespaces exit 0"
[ $rc -eq 0 ] || for i in 0 1 2 3; do sed "s/^/# node$i: /" "probe$i.err"; done

n=0
for i in 0 1 2 3; do
	[ -f "S/node$i/sync/metadata" ] && [ -f "S/node$i/sync/index/channel0_0.idx" ] &&
		grep -q "hostname = \"node$i\";" "S/node$i/sync/metadata" && n=$((n + 1))
done
is "$n" 4 "S/node<i>/sync/: a CTF trace with its index, env hostname = node<i>"
grep -q 'offset_s = 0;' S/node0/sync/metadata && grep -q 'offset = 0;' S/node0/sync/metadata
ok $? "--clock-offset 0: the clock's offset is 0 (time = the node's CLOCK_MONOTONIC)"
clk() { sed -n '/^clock {/,/^}/s/.*uuid = "\(.*\)";/\1/p' "$1"; }
is "$(for i in 0 1 2 3; do clk S/node$i/sync/metadata; done | sort -u | wc -l) $(clk S/node0/sync/metadata)" \
	"4 $(cat /proc/sys/kernel/random/boot_id)" \
	"clock uuids: the boot_id unshifted (node0), one of its own per shifted CLOCK_MONOTONIC"

# ---- raw traces
"$TRAWL" print --clock-seconds S > raw.txt 2> raw.err
ok $? "trawl print reads the 4 traces (no correction yet)"
# "host event key peer seconds nanoseconds" per probe event
ev() {
	sed -n 's/^\[\([0-9]*\)\.\([0-9]*\)\] ([^)]*) \(node[0-9]\) trawl_sync:probe_\([a-z]*\): { cpu_id = [0-9]* }, { key = \([0-9]*\), peer = "\(node[0-9]\)" }$/\3 \4 \5 \6 \1 \2/p' "$1"
}
ev raw.txt > raw.ev
is "$(wc -l < raw.ev)" "$(wc -l < raw.txt)" "every line is a probe_send or probe_recv with key and peer"

# sends and receives per node against the probes' own summaries
sum_ok=0
for i in 0 1 2 3; do
	s=$(sed -n 's/^trawl probe: node[0-9]: \([0-9]*\) probes sent.*/\1/p' "probe$i.out")
	rv=$(sed -n 's/.* sent to [0-9]* peers\{0,1\} ([0-9]* failed), \([0-9]*\) received.*/\1/p' "probe$i.out")
	gs=$(awk -v h="node$i" '$1 == h && $2 == "send"' raw.ev | wc -l)
	gr=$(awk -v h="node$i" '$1 == h && $2 == "recv"' raw.ev | wc -l)
	[ -n "$s" ] && [ "$s" = "$gs" ] && [ "$rv" = "$gr" ] && sum_ok=$((sum_ok + 1))
	echo "# node$i: $gs sent, $gr received"
done
is "$sum_ok" 4 "the traces hold exactly the sends and receives each probe reported"
want=$(awk -v r=$RATE -v d=$DUR 'BEGIN { print int(3 * r * d) }')
awk -v w="$want" '$2 == "send" { n[$1]++ } END { bad = 0; for (h in n) { k++; if (n[h] < 0.5 * w || n[h] > w + 3) bad++ }
	print bad + (k != 4) }' raw.ev > sends.bad
is "$(cat sends.bad)" 0 "each node sent 3 x $RATE/s x $DUR s probes (about $want)"
# every receive matches one send of the named peer (keys unique per sender)
awk '$2 == "send" { if (($1, $3) in s) dup++; s[$1, $3] = $4 }
     $2 == "recv" { r[$4, $3] = $1; nr++ }
     END { for (k in r) { split(k, a, SUBSEP); if (!((a[1], a[2]) in s) || s[a[1], a[2]] != r[k]) bad++ }
	   print dup + bad + 0, nr + 0 }' raw.ev > match.txt
is "$(cut -d' ' -f1 match.txt)" 0 "every probe_recv matches a probe_send of its sender, to it; no key twice"
ns=$(awk '$2 == "send"' raw.ev | wc -l)
nr=$(cut -d' ' -f2 match.txt)
[ "$nr" -ge $((ns * 8 / 10)) ]
ok $? "most probes arrived ($nr of $ns)"

# per ordered pair: the minimum raw one-way delay recv - send, in ns
# ("A B min" lines); times are below 2^53 ns (CLOCK_MONOTONIC), exact in awk
pairs() {
	awk '{ t = $5 * 1000000000 + $6 }
	     $2 == "send" { s[$3] = t; from[$3] = $1 }
	     $2 == "recv" { r[$3] = t; to[$3] = $1 }
	     END { for (k in r) if (k in s) { d = r[k] - s[k]; p = from[k] " " to[k];
			if (!(p in m) || d < m[p]) m[p] = d }
		   for (p in m) printf "%s %.0f\n", p, m[p] }' "$1" | LC_ALL=C sort
}
pairs raw.ev > raw.min
is "$(wc -l < raw.min)" 12 "messages in all 12 directions"
# the time namespaces are in the data: raw min delay = off(B) - off(A) + delay
awk -v offs="$OFFS" 'BEGIN { split(offs, o, " ") }
	{ a = substr($1, 5) + 1; b = substr($2, 5) + 1; want = (o[b] - o[a]) * 1e9; d = $3 - want
	  if (d < 0 || d > 50e6) { bad++; print "# " $0 ": off by " d " ns" } }
	END { print bad + 0 }' raw.min > raw.check
is "$(tail -1 raw.check)" 0 "raw one-way delays are the namespace offsets + 0..50 ms (clocks really shifted)"
grep '^#' raw.check
# the probes' own estimate: offset(B-A) = (dAB - dBA) / 2 within +-(dAB + dBA) / 2,
# the band: half the pair's smallest round trip of some 500 each way, about
# 10 us here (at most 28 us measured with nice 19, with both CPUs busy with
# hogs, with one CPU shared with 3 hogs). The band's limit keeps "within
# its band" from holding for any estimate: a node dating sends and receives
# on different clocks (one of them without its namespace's offset, 2 to 7 s
# here) gives bands of seconds. 50 ms, as for the raw delays above: a
# loaded machine delays some exchanges, never all 500 of a pair by that much.
awk -v offs="$OFFS" 'BEGIN { split(offs, o, " ") }
	{ m[$1 " " $2] = $3 }
	END { for (p in m) { split(p, x, " "); if (x[1] >= x[2]) continue
		ab = m[p]; ba = m[x[2] " " x[1]]; est = (ab - ba) / 2; band = (ab + ba) / 2
		a = substr(x[1], 5) + 1; b = substr(x[2], 5) + 1; err = est - (o[b] - o[a]) * 1e9
		printf "# %s-%s: offset %.0f ns, band +-%.0f ns, true error %.0f ns\n", x[1], x[2], est, band, err
		if (band < 0 || band > 50e6 || err > band || -err > band) bad++; n++ }
	      print bad + 0, n + 0 }' raw.min > est.txt
grep '^#' est.txt
is "$(tail -1 est.txt)" "0 6" "per pair, the min-RTT offset is within its band (< 50 ms) of the truth"

# babeltrace2, the independent reader
if command -v babeltrace2 > /dev/null 2>&1; then
	babeltrace2 S > bt.txt 2> bt.err
	ok $? "babeltrace2 reads the probe session"
	is "$(wc -l < bt.txt)" "$(wc -l < raw.txt)" "babeltrace2: as many events as trawl print"
	is "$(grep -c 'trawl_sync:probe_recv: { cpu_id = 0 }, { key = [0-9]*, peer = "node[0-9]" }$' bt.txt)" \
		"$(awk '$2 == "recv"' raw.ev | wc -l)" "babeltrace2: the same probe_recv events with key and peer"
else
	skip "babeltrace2 missing"
	skip "babeltrace2 missing"
	skip "babeltrace2 missing"
fi

# ---- trawl sync
if ! "$TRAWL" sync --help > /dev/null 2>&1; then
	for k in 1 2 3 4 5 6 7 8 9 10 11 12; do skip "trawl sync is not implemented yet"; done
	plan "$_n"
	finish
fi
"$TRAWL" sync S > sync.out 2> sync.err
ok $? "trawl sync S exits 0"
sed 's/^/# /' sync.out
[ -s sync.err ] && sed 's/^/# stderr: /' sync.err
[ -f S/sync.txt ]
ok $? "trawl sync stores S/sync.txt"
# host lines: "host NAME key value ..." -> per host: name y(first)-truth y(mid).. bound_max quality ref
awk -v offs="$OFFS" 'BEGIN { split(offs, o, " "); S = 2 ^ 60 }
	$1 == "host" { h = $2; delete v; for (i = 3; i < NF; i += 2) v[$i] = $(i + 1)
		n++; H[n] = h; T0[h] = v["t0"]; Y0[h] = v["y0"]; SL[h] = v["slope"]; Q[h] = v["quality"]
		R[h] = v["reference"]; F[h] = v["first"]; L[h] = v["last"]; B[h] = v["bound_max"] }
	END {
		for (k = 1; k <= n; k++) {
			h = H[k]; r = R[h]; a = substr(h, 5) + 1; b = substr(r, 5) + 1
			delta = (o[a] - o[b]) * 1e9		# node time - reference time
			worst = 0
			for (j = 0; j <= 2; j++) {
				t = j == 0 ? F[h] : j == 1 ? T0[h] : L[h]
				y = Y0[h] + (SL[h] / S) * (t - T0[h])
				e = y - (t - delta); if (e < 0) e = -e; if (e > worst) worst = e
			}
			bound = B[h] == "-" ? -1 : B[h]
			printf "%s %s %s %.0f %s\n", h, r, Q[h], worst, bound
		}
	}' S/sync.txt > sync.check
sed 's/^/# host ref quality error_ns bound_ns: /' sync.check
is "$(wc -l < sync.check)" 4 "sync.txt: one line per node"
is "$(awk '$3 != "accurate" && !($3 == "reference" && $1 == $2)' sync.check | wc -l)" 0 \
	"every node's quality is accurate (the reference: reference)"
is "$(awk '$5 < 0 || $4 > $5' sync.check | wc -l)" 0 \
	"every recovered offset equals the namespace offset within the reported bound"
# The bounds: from the pairs' smallest round trips, tens of us here (10-46 us
# measured idle, with nice 19, both CPUs busy, one CPU shared with 3 hogs).
# Their limit keeps "within the reported bound" from holding for any
# offset: a bound that took in the clocks' offsets (2 to 9 s), or a node
# left without a bound, would pass it. 50 ms: only every one of a pair's
# ~500 exchanges delayed by that much would reach it.
is "$(awk '$5 >= 0 && $5 < 50000000' sync.check | wc -l)" 4 "every bound is below 50 ms"
# the pairs section of the text output: "  nodeA - nodeB  QUALITY: ..."
is "$(grep -c '^ *node[0-9] - node[0-9]  *accurate:' sync.out) $(grep -c '^ *node[0-9] - node[0-9] ' sync.out)" \
	"6 6" "all 6 pairs are accurate"

# "matched inverted over-1s min-delay" of a print of corrected times (the
# offsets between nodes are 2 to 9 s; 1 s leaves room for a loaded machine)
inversions() {
	ev "$1" | awk '{ t = $5 * 1000000000 + $6 }
	     $2 == "send" { s[$3] = t } $2 == "recv" { r[$3] = t }
	     END { for (k in r) if (k in s) { n++; d = r[k] - s[k]; if (d < 0) inv++; if (d > 1e9) big++
			if (d < min || n == 1) min = d }
		   printf "%d %d %d %.0f\n", n, inv + 0, big + 0, min }'
}
# the synced session as trawl print shows it (sync.txt applied by default)
"$TRAWL" print --clock-seconds S > synced.txt 2> synced.err
ok $? "trawl print of the synced session"
if cmp -s synced.txt raw.txt; then
	skip "trawl print does not apply S/sync.txt yet: no check of its order"
else
	inversions synced.txt > synced.check
	echo "# print: matched, inverted, over 1 s, min delay ns: $(cat synced.check)"
	set -- $(cat synced.check)
	[ "$1" -eq "$nr" ] && [ "$2" -eq 0 ] && [ "$3" -eq 0 ]
	ok $? "trawl print, synced: every one of $nr probes received after it was sent, within 1 s (offsets: 2 to 9 s)"
fi
# the corrected copy, read by babeltrace2
"$TRAWL" sync --apply -o C S > apply.out 2>&1
ok $? "trawl sync --apply -o C writes a corrected copy"
if command -v babeltrace2 > /dev/null 2>&1; then
	babeltrace2 --clock-seconds C > c.bt 2> c.bt.err
	ok $? "babeltrace2 reads the corrected copy"
	inversions c.bt > c.check
	echo "# babeltrace2 on the copy: matched, inverted, over 1 s, min delay ns: $(cat c.check)"
	set -- $(cat c.check)
	[ "$1" -eq "$nr" ] && [ "$2" -eq 0 ] && [ "$3" -eq 0 ]
	ok $? "babeltrace2, corrected copy: every one of $nr probes received after it was sent, within 1 s (offsets: 2 to 9 s)"
else
	skip "babeltrace2 missing"
	skip "babeltrace2 missing"
fi

# ==== second run: asymmetric delays through delay-relay (no netem needed)
# One-way delays in us, "from to base jitter" (jitter: exponential mean):
# node0 is the hub (smallest summed bound), 1 -> 2 / 2 -> 1 is 200 / 600.
DELAYS="0 1 100 0
1 0 300 0
0 2 250 0
2 0 250 0
0 3 300 0
3 0 100 0
1 2 200 0
2 1 600 0
1 3 300 100
3 1 300 100
2 3 500 0
3 2 300 0"
RELAY_CHECKS=13
_r0=$_n	# relay_skip WHY: skips the checks of this run not yet made, and ends
relay_skip() { while [ $((_n - _r0)) -lt $RELAY_CHECKS ]; do skip "$1"; done; plan "$_n"; finish; }
san=""
[ -n "${TRAWL_SAN:-}" ] && san="-fsanitize=$TRAWL_SAN"
command -v "${CC:-cc}" > /dev/null 2>&1 || relay_skip "no C compiler to build the delay relay"
${CC:-cc} -std=gnu11 -O2 -Wall -Wextra -Werror $san -o delay-relay \
	"$TRAWL_SRC/tests/e2e/delay-relay.c" -lm > relay-cc.log 2>&1
ok $? "the delay relay builds (-Wall -Wextra -Werror)"
[ -x delay-relay ] || { sed 's/^/#   /' relay-cc.log | head -10; relay_skip "no delay relay"; }
RELAY=10.231.0.254
rport() { echo $((7100 + 10 * $1 + $2)); }	# the relay's port for I -> J
if [ $netem = yes ]; then	# the relay's delays alone
	for i in $(seq 0 $((N - 1))); do ip netns exec "$P-n$i" tc qdisc del dev eth0 root 2> /dev/null; done
fi
routes=$(echo "$DELAYS" | while read -r a b d j; do
	echo "$RELAY:$(rport "$a" "$b")=10.231.0.$((b + 1)):$PORT:$d:$j"; done)
ip -n "$P-br" addr add "$RELAY/24" dev br0 2> relay-ip.err
$RT ip netns exec "$P-br" ./delay-relay -s 620 -t 120 -r relay.ready $routes > relay.out 2> relay.err &
relay_pid=$!
pids="$relay_pid"
relay_up() { [ -f relay.ready ] || gone $relay_pid; }
until_ok 30 relay_up
[ -f relay.ready ]
ok $? "delay-relay listens in the bridge namespace ($RELAY, 12 ports, one per direction)"
[ -f relay.ready ] || { cat relay-ip.err relay.err | sed 's/^/#   /'; relay_skip "no relay"; }

DUR2=2
# udp NETNS FIELD: the Udp counter FIELD of /proc/net/snmp in NETNS
udp() {
	ip netns exec "$1" awk -v f="$2" '$1 == "Udp:" { if (!h) { for (i = 2; i <= NF; i++) if ($i == f) c = i; h = 1 }
		else print $c }' /proc/net/snmp
}
# sent: the datagrams the nodes sent (counters since run 1's); read: those
# the relay has taken from its sockets
sent0=0
for i in $(seq 0 $((N - 1))); do sent0=$((sent0 + $(udp "$P-n$i" OutDatagrams))); done
read0=$(udp "$P-br" InDatagrams)
sent_all() {
	_s=0
	for _i in $(seq 0 $((N - 1))); do _s=$((_s + $(udp "$P-n$_i" OutDatagrams))); done
	echo $((_s - sent0))
}
relay_read() { echo $(( $(udp "$P-br" InDatagrams) - read0 )); }
relay_has_all() { [ "$(relay_read)" -eq "$(sent_all)" ]; }
ppids=""
for i in $(seq 0 $((N - 1))); do
	peers=""
	for j in $(seq 0 $((N - 1))); do
		[ "$j" -eq "$i" ] || peers="$peers --peer node$j=$RELAY:$(rport "$i" "$j")"
	done
	probe "$i" R $peers --rate $RATE --duration $DUR2 --clock-offset 0 > "rprobe$i.out" 2> "rprobe$i.err" &
	ppids="$ppids $!"
	pids="$pids $!"
done
until_ok 30 all_ready R
touch R.go
rc=0
for p in $ppids; do wait "$p" || rc=$?; done
# the probes are done: once the relay has read every datagram they sent, a
# SIGTERM makes it forward the ones it still holds, each when due, then exit
until_ok 30 relay_has_all
has=$?
echo "# the nodes sent $(sent_all) datagrams, the relay read $(relay_read)"
kill -TERM $relay_pid
wait $relay_pid
rrc=$?
pids=""
[ $rc -eq 0 ] && [ $rrc -eq 0 ] && [ $has -eq 0 ] && grep -qx 'pending 0' relay.out
ok $? "4 probes through the relay and the relay itself exit 0 (the relay read every datagram sent, and forwarded all it had)"
[ $rc -eq 0 ] || for i in 0 1 2 3; do sed "s/^/# node$i: /" "rprobe$i.err"; done
sed 's/^/# relay: /' relay.out

"$TRAWL" print --clock-seconds R > rraw.txt 2> rraw.err
ev rraw.txt > rraw.ev
is "$(wc -l < rraw.ev) $(wc -l < rraw.txt)" "$(wc -l < rraw.txt) $(wc -l < rraw.txt)" \
	"trawl print reads the 4 relayed traces: probe events only"
# per direction: the relay forwarded exactly the probes sent (none dropped),
# and the receives recorded are those (minus the few sent before the peer
# listened): "from to sent received" against "from to forwarded dropped"
awk '{ a = substr($1, 5); b = substr($4, 5) }
     $2 == "send" { s[a " " b]++ } $2 == "recv" { r[b " " a]++ }
     END { for (p in s) print p, s[p], r[p] + 0 }' rraw.ev | sort > rdir.count
sed -n 's/^route [0-9.]*:71\([0-9]\)\([0-9]\) -> .*forwarded \([0-9]*\) dropped \([0-9]*\) .*/\1 \2 \3 \4/p' relay.out |
	sort > relay.count
awk 'NR == FNR { s[$1 " " $2] = $3; r[$1 " " $2] = $4; next }
     { p = $1 " " $2; if (!(p in s) || s[p] != $3 || $4 != 0 || r[p] > $3 || r[p] < 0.9 * $3) bad++; n++ }
     END { print bad + 0, n + 0 }' rdir.count relay.count > relay.check
is "$(cat relay.check)" "0 12" \
	"every direction: the relay forwarded exactly the probes sent, none dropped; >= 90 % of them recorded as received"
# every message's one-way delay, less the namespace offsets, >= the configured
# delay; the minimum per direction close to it ("from to configured min" in us)
echo "$DELAYS" > delays.txt
awk -v offs="$OFFS" 'BEGIN { split(offs, o, " ") }
	NR == FNR { d[$1 " " $2] = $3; next }
	{ t = $5 * 1000000000 + $6 }
	$2 == "send" { s[$3] = t; from[$3] = substr($1, 5) }
	$2 == "recv" { r[$3] = t; to[$3] = substr($1, 5) }
	END { for (k in r) if (k in s) { a = from[k]; b = to[k]
		x = r[k] - s[k] - (o[b + 1] - o[a + 1]) * 1e9; p = a " " b
		if (x < d[p] * 1000) early++
		if (!(p in m) || x < m[p]) m[p] = x }
	      for (p in m) { split(p, q, " ")
		printf "# node%s -> node%s: configured %d us, min %.1f us\n", q[1], q[2], d[p], m[p] / 1e3
		printf "%s %.0f\n", p, m[p] > "rmin.txt"
		if (m[p] > d[p] * 1000 + 500000) slow++; n++ }
	      print early + 0, slow + 0, n + 0 }' delays.txt rraw.ev > rdelay.check
grep '^#' rdelay.check
is "$(tail -1 rdelay.check)" "0 0 12" \
	"every relayed probe's one-way delay >= its configured delay; the minimum within 0.5 ms of it, in all 12 directions"

"$TRAWL" sync R > rsync.out 2> rsync.err
ok $? "trawl sync R (relayed, asymmetric) exits 0"
sed 's/^/# /' rsync.out | grep -v '^#   \(traces\|start\|transform\) '
[ -s rsync.err ] && sed 's/^/# stderr: /' rsync.err
# per node: quality, the offset at mid-trace (t0 - y0) against the truth, the
# error the asymmetry predicts along the node's path, sum((d(y->x) - d(x->y))/2)
# per hop x -> y, the worst error at first/mid/last against bound_max,
# bound_mid against half the configured round trips along the path, and
# the error the delays the probes met predict: the same sum over each
# direction's smallest one-way delay (the relay's delay and its lateness:
# what the hull sees; the configured delay alone on an idle machine):
# "host ref quality offset truth error predicted bound_mid worst bound_max halfrtt predicted_met"
awk -v offs="$OFFS" 'BEGIN { split(offs, o, " "); S = 2 ^ 60 }
	FILENAME == "delays.txt" { d[$1 " " $2] = $3; next }
	FILENAME == "rmin.txt" { mm[$1 " " $2] = $3; next }
	$1 == "host" { h = $2; delete v; for (i = 3; i < NF; i += 2) v[$i] = $(i + 1)
		r = v["reference"]; a = substr(h, 5) + 1; b = substr(r, 5) + 1
		truth = (o[a] - o[b]) * 1e9
		off = v["t0"] - v["y0"]
		np = split(v["path"], pa, ","); pred = 0; half = 0; predm = 0
		for (i = 1; i < np; i++) { x = substr(pa[i], 5); y = substr(pa[i + 1], 5)
			pred += (d[y " " x] - d[x " " y]) * 500; half += (d[y " " x] + d[x " " y]) * 500
			predm += (mm[y " " x] - mm[x " " y]) / 2 }
		worst = 0
		for (j = 0; j <= 2; j++) {
			t = j == 0 ? v["first"] : j == 1 ? v["t0"] : v["last"]
			y = v["y0"] + (v["slope"] / S) * (t - v["t0"])
			e = y - (t - truth); if (e < 0) e = -e; if (e > worst) worst = e
		}
		printf "%s %s %s %.0f %.0f %.0f %.0f %s %.0f %s %.0f %.0f\n", h, r, v["quality"], off, truth,
			off - truth, pred, v["bound_mid"], worst, v["bound_max"], half, predm
	}' delays.txt rmin.txt R/sync.txt > rsync.check
echo "# pair offset truth error bound (ns; offset: node - reference at mid-trace; predicted: half the asymmetry along the path, configured and met; worst: over first/mid/last against bound_max)"
awk '{ printf "# %s-%s %s %s %s %s (predicted %s, met %s, worst %s of %s, half-RTT configured %s) %s\n",
	$1, $2, $4, $5, $6, $8, $7, $12, $9, $10, $11, $3 }' rsync.check
is "$(wc -l < rsync.check) $(awk '$3 != "accurate" && !($3 == "reference" && $1 == $2)' rsync.check | wc -l)" \
	"4 0" "relayed: one line per node, every node accurate (the reference: reference)"
is "$(awk '$1 != $2 && ($10 == "-" || $9 > $10 || $6 > $8 || -$6 > $8)' rsync.check | wc -l)" 0 \
	"relayed: every recovered offset equals the namespace offset within the reported bound (mid and max)"
is "$(awk '$1 != $2 && ($8 < 0.9 * $11 || $8 > $11 + 500000 || $8 < ($7 < 0 ? -$7 : $7))' rsync.check | wc -l)" 0 \
	"relayed: each bound is the configured half round trip along the path (+ < 0.5 ms), so >= half the asymmetry"
# (against the delays met: the relay adds its lateness, 40-60 us at least
# each way here, more on a loaded machine, and not alike both ways; errors
# came within 23 us of the configured asymmetry's, within 6 us of the one
# met, idle or loaded. An error that ignored the asymmetry would be off by
# half of it along the path, up to 200 us here)
is "$(awk '$1 != $2 && ($6 - $12 > ERRTOL || $12 - $6 > ERRTOL)' ERRTOL=40000 rsync.check | wc -l)" 0 \
	"relayed: each error is the asymmetry's (d(ref -> node) - d(node -> ref)) / 2 along the path (the delays met), within 40 us"
# the pairs: bound mid >= 0.9 x the configured half round trip (>= half the asymmetry)
sed -n 's/^ *node\([0-9]\) - node\([0-9]\)  *\([a-z-]*\):.* bound mid \([0-9]*\) ns.*/\1 \2 \3 \4/p' rsync.out > rpairs.txt
awk 'NR == FNR { d[$1 " " $2] = $3; next }
	{ ab = d[$1 " " $2]; ba = d[$2 " " $1]; half = (ab + ba) * 500; asym = (ab - ba) * 500; if (asym < 0) asym = -asym
	  printf "# node%s - node%s: %s, bound mid %s ns, configured %d / %d us (half RTT %d ns, half asymmetry %d ns)\n",
		$1, $2, $3, $4, ab, ba, half, asym
	  if ($3 != "accurate" || $4 < 0.9 * half || $4 < asym || $4 > half + 500000) bad++; n++ }
	END { print bad + 0, n + 0 }' delays.txt rpairs.txt > rpairs.check
grep '^#' rpairs.check
is "$(tail -1 rpairs.check)" "0 6" \
	"relayed: all 6 pairs accurate, bound mid = configured half round trip (+ < 0.5 ms), >= half the asymmetry"
"$TRAWL" print --clock-seconds R > rsynced.txt 2> rsynced.err
inversions rsynced.txt > rsynced.check
echo "# relayed print: matched, inverted, over 1 s, min delay ns: $(cat rsynced.check)"
set -- $(cat rsynced.check)
nrr=$(awk '$2 == "recv"' rraw.ev | wc -l)
[ "$1" -eq "$nrr" ] && [ "$2" -eq 0 ] && [ "$3" -eq 0 ] && [ "$nrr" -gt 0 ] && ! cmp -s rsynced.txt rraw.txt
ok $? "relayed, trawl print of the synced session: every one of $nrr probes received after it was sent"
plan "$_n"
finish
