#!/bin/sh
# make demo: a small cluster on this one machine, recorded, synchronized and
# shown on one timeline.
#
# Three nodes, each a network namespace (veth to a bridge in a fourth one,
# 10.233.0.1-3/24) AND a time namespace whose CLOCK_MONOTONIC is shifted by
# whole seconds (0, +4, -3 s): each node has its own clock. On each node
# trawl probe and trawl tcpcap record for about 3 s while node0, a client,
# sends small TCP requests to servers on node1 and node2; the kernel's
# scheduler events of the whole machine are recorded too (node0's clock is
# the machine's), when trawl record works here; that recording also streams
# to a trawl relay, which a babeltrace2 live viewer follows while it
# records. Then: the raw session, a request received before it was sent
# (raw clocks), trawl sync's table beside the truth, and the corrected
# timeline of that request.
#
# Without root, network or time namespaces or eBPF (or with
# DEMO_SIMULATE=1), it falls back to a simulated session and says why.
# DEMO_KERNEL=0 leaves the kernel out.
set -eu
: "${TRAWL_BUILD:?run through make demo}"
TRAWL_SRC=${TRAWL_SRC:-$(dirname "$0")/..}
TRAWL="$TRAWL_BUILD/trawl"
DIR=${DEMO_DIR:-"$TRAWL_BUILD/demo-session"}
W="$TRAWL_BUILD/demo-work"	# logs, pid files, the corrected copy
export TRAWL_CONFIG=		# no user configuration changes the output

# ---------------------------------------------------------------- simulated
simulated_demo() {
	rm -rf "$DIR"
	echo "== trawl simulate: 4 hosts x 2 CPUs, 200000 events -> $DIR"
	"$TRAWL" simulate -o "$DIR" --hosts 4 --cpus 2 --events 200000 --seed 1 --sync
	echo
	echo "== trawl info $DIR"
	"$TRAWL" info "$DIR"
	echo
	echo "== trawl print $DIR | head -25   (every host, one timeline)"
	"$TRAWL" print "$DIR" | head -25
	echo
	echo "== trawl print --host host2 -e 'app:*' $DIR | head -6"
	"$TRAWL" print --host host2 -e 'app:*' "$DIR" | head -6
	echo
	if command -v babeltrace2 > /dev/null; then
		echo "== babeltrace2 reads the same session (first 3 lines)"
		babeltrace2 "$DIR" 2> /dev/null | head -3
	fi
	echo
	echo "== trawl sync $DIR (the simulated clocks are seconds apart)"
	"$TRAWL" sync "$DIR" 2> /dev/null | sed -n '1,2p'
	mkdir -p "$W"
	VIEW_WHAT="make demo (simulated)" view_demo "$DIR"
}

# ---------------------------------------------------------------- the view
# view_demo SESSION [RAW_B RAW_E SYNC_B SYNC_E]: the session as one page,
# and a screenshot of it (chromium, headless, through playwright-core as the
# browser tests drive it) at a moment: raw clocks and synchronized side by
# side (ns since the epoch; the whole session without them)
view_demo() {
	echo
	echo "== trawl view SESSION -o $TRAWL_BUILD/view.html: the cluster on one timeline (open it in a browser)"
	"$TRAWL" view "$1" -o "$TRAWL_BUILD/view.html" --title "make demo" 2> /dev/null | sed 's/^/   /'
	echo "== trawl export SESSION -o $TRAWL_BUILD/demo.pftrace: the same for Perfetto (ui.perfetto.dev, Open trace file)"
	if "$TRAWL" export "$1" -o "$TRAWL_BUILD/demo.pftrace" -q 2> "$W/export.err"; then
		echo "   $(wc -c < "$TRAWL_BUILD/demo.pftrace") bytes, a machine per host, clocks synchronized: $TRAWL_BUILD/demo.pftrace"
	else
		echo "   (export failed: $(tail -1 "$W/export.err"))"
	fi
	B="$TRAWL_BUILD/browser"
	if [ ! -x /usr/bin/chromium ] || ! command -v node > /dev/null 2>&1; then
		echo "   (no screenshot: chromium or node is not installed)"
		return 0
	fi
	sh "$TRAWL_SRC/tests/browser/install.sh" "$TRAWL_SRC" "$TRAWL_BUILD" 2> "$W/npm.err" ||
		{ echo "   (no screenshot: $(cat "$W/npm.err"))"; return 0; }
	if [ $# -ge 5 ]; then
		set -- "$2" "$3" "$4" "$5"
	else
		# the whole session: its first and last events, on both clocks
		r=$("$TRAWL" print --no-sync --clock-seconds "$1" 2> /dev/null | sed -n '1p;$p' |
			sed -E 's/^\[([0-9]+)\.([0-9]+)\].*/\1\2/' | tr '\n' ' ')
		set -- $r $r
	fi
	if timeout 60 node "$B/view-shot.mjs" "file://$TRAWL_BUILD/view.html" "$TRAWL_BUILD/view.png" "$@" \
		"${VIEW_WHAT:-make demo}" > "$W/view-shot.out" 2>&1; then
		echo "   a screenshot, raw clocks and synchronized side by side: $TRAWL_BUILD/view.png"
	else
		echo "   (no screenshot: $(tail -1 "$W/view-shot.out"))"
	fi
}

fallback() {
	echo "demo: $1: showing a simulated cluster instead"
	echo
	simulated_demo
	exit 0
}

# ---------------------------------------------------------------- checks
[ "${DEMO_SIMULATE:-0}" = 0 ] || fallback "DEMO_SIMULATE is set"
[ "$(id -u)" -eq 0 ] || fallback "not root (a live cluster needs namespaces and eBPF)"
for c in ip unshare python3; do
	command -v $c > /dev/null 2>&1 || fallback "no $c command"
done
unshare --time --monotonic 1 --fork true 2> /dev/null ||
	fallback "no time namespaces here (unshare --time fails)"

N=3
OFFS="0 4 -3"			# each node's CLOCK_MONOTONIC shift, s
NS=trawl-demo
PORT=8080			# the servers
PPORT=7070			# the probes
COUNT=100			# requests, alternately to node1 and node2
K=50				# the request shown (even: to node2)
off_of() { _i=$1; set -- $OFFS; shift "$_i"; echo "$1"; }
addr_of() { echo "10.233.0.$(($1 + 1))"; }

pids=""
cleanup() {
	trap - EXIT INT TERM HUP
	for f in "$W"/*.pid; do
		[ ! -f "$f" ] || kill "$(cat "$f")" 2> /dev/null || true
	done
	for p in $pids; do kill "$p" 2> /dev/null || true; done
	for _n in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do	# 2 s for them to end
		_alive=no
		for p in $pids; do kill -0 "$p" 2> /dev/null && _alive=yes; done
		[ $_alive = yes ] || break
		sleep 0.1
	done
	for i in 0 1 2; do ip netns del "$NS-node$i" 2> /dev/null || true; done
	ip netns del "$NS-br" 2> /dev/null || true
}
trap cleanup EXIT
trap 'cleanup; echo "demo: interrupted" >&2; exit 130' INT TERM HUP

rm -rf "$DIR" "$W"
mkdir -p "$W"
cleanup				# namespaces left by a killed run
trap cleanup EXIT
trap 'cleanup; echo "demo: interrupted" >&2; exit 130' INT TERM HUP

# eBPF: a tcpcap of 50 ms here tells
if ! "$TRAWL" tcpcap -o "$W/check" --host check --duration 0.05 > "$W/check.out" 2> "$W/check.err"; then
	fallback "trawl tcpcap cannot record here ($(grep -m1 '^trawl: ' "$W/check.err" | cut -c1-90))"
fi

# The kernel: only when trawl record works here, on CLOCK_MONOTONIC (node0's
# clock, as node0's time namespace does not shift it). Its epoch offset is
# then every node's --clock-offset, so node0's traces share one clock.
kernel=no
if [ "${DEMO_KERNEL:-1}" != 0 ] && "$TRAWL" record --help > /dev/null 2>&1 &&
	timeout 10 "$TRAWL" record -q -k sched -o "$W/kcheck" --host k --clock mono --no-statedump \
		-- sleep 0.2 > /dev/null 2>&1 &&
	"$TRAWL" info "$W/kcheck" 2> /dev/null | grep -q '^    events *[1-9]'; then
	kernel=yes
fi
if [ $kernel = yes ]; then
	# CLOCK_REALTIME - CLOCK_MONOTONIC, as trawl record measures it
	CLKOFF=$(python3 -c 'import time
b = None
for i in range(16):
	m1 = time.monotonic_ns(); r = time.time_ns(); m2 = time.monotonic_ns()
	if b is None or m2 - m1 < b[0]: b = (m2 - m1, r - (m1 + m2) // 2)
print(b[1])')
else
	CLKOFF=0
fi

# ---------------------------------------------------------------- the network
ip netns add "$NS-br" 2> "$W/net.err" || fallback "cannot create a network namespace ($(head -1 "$W/net.err"))"
{
	ip -n "$NS-br" link add br0 type bridge &&
		ip -n "$NS-br" link set br0 up &&
		ip -n "$NS-br" link set lo up
	r=$?
	for i in 0 1 2; do
		[ $r -eq 0 ] || break
		ip netns add "$NS-node$i" &&
			ip link add eth0 netns "$NS-node$i" type veth peer name "p$i" netns "$NS-br" &&
			ip -n "$NS-br" link set "p$i" master br0 &&
			ip -n "$NS-br" link set "p$i" up &&
			ip -n "$NS-node$i" addr add "$(addr_of $i)/24" dev eth0 &&
			ip -n "$NS-node$i" link set eth0 up &&
			ip -n "$NS-node$i" link set lo up
		r=$?
	done
} 2> "$W/net.err" || r=$?
[ "$r" -eq 0 ] || fallback "cannot build the veth/bridge network ($(head -1 "$W/net.err"))"

# run_on I TAG CMD...: CMD on node I (its network and time namespaces), in
# the background; its pid in $W/TAG.pid, its output in $W/TAG.{out,err}
run_on() {
	_i=$1 _t=$2
	shift 2
	ip netns exec "$NS-node$_i" unshare --time --monotonic "$(off_of "$_i")" --kill-child=TERM \
		sh -c 'echo $$ > "$0"; exec "$@"' "$W/$_t.pid" "$@" > "$W/$_t.out" 2> "$W/$_t.err" &
	pids="$pids $!"
}
# wait_for FILE PATTERN: 10 s at most
wait_for() {
	_n=0
	until grep -q "$2" "$1" 2> /dev/null; do
		_n=$((_n + 1))
		[ $_n -le 200 ] || { echo "demo: timeout waiting for '$2' in $1:" >&2; cat "$1" >&2; exit 1; }
		sleep 0.05
	done
}
stop() {	# stop TAG...: SIGINT, by pid
	for _t; do kill -INT "$(cat "$W/$_t.pid")" 2> /dev/null || true; done
}

echo "== a cluster of 3 nodes on this machine: network + time namespaces"
for i in 0 1 2; do
	printf '   node%d  %-12s CLOCK_MONOTONIC %+d s\n' $i "$(addr_of $i)" "$(off_of $i)"
done
if [ $kernel = yes ]; then
	echo "   + the machine's kernel (trawl record -k sched, CLOCK_MONOTONIC = node0's clock)"
else
	echo "   (no kernel trace: DEMO_KERNEL=0, or trawl record -k does not work here)"
fi

# ---------------------------------------------------------------- recording
# node0's kernel recording also streams to a relay (on this machine's
# loopback), which a live viewer follows, when babeltrace2 is here
live=no
if [ $kernel = yes ] && command -v babeltrace2 > /dev/null 2>&1 && command -v stdbuf > /dev/null 2>&1 &&
	"$TRAWL" relay -o "$W/relay" --data 127.0.0.1:0 --live 127.0.0.1:0 --pidfile "$W/relay.pid" \
		> "$W/relay.out" 2> "$W/relay.err"; then
	RDATA=$(sed -n 's/^trawl relay: data on \([^,]*\), live on \([^,]*\), .*/\1/p' "$W/relay.out")
	RLIVE=$(sed -n 's/^trawl relay: data on \([^,]*\), live on \([^,]*\), .*/\2/p' "$W/relay.out")
	[ -n "$RDATA" ] && [ -n "$RLIVE" ] && live=yes
fi
if [ $kernel = yes ]; then
	relay=""
	[ $live = no ] || relay="--relay $RDATA --session demo"
	# shellcheck disable=SC2086
	"$TRAWL" record -o "$DIR" --host node0 -k sched:sched_switch,sched:sched_wakeup \
		-b 16384 --clock mono --no-statedump $relay > "$W/kernel.out" 2> "$W/kernel.err" &
	kpid=$!
	pids="$pids $kpid"
	wait_for "$W/kernel.err" 'recording into'
fi
if [ $live = yes ]; then
	_n=0
	until babeltrace2 -i lttng-live "net://$RLIVE" 2> /dev/null | grep -q '/host/node0/demo '; do
		_n=$((_n + 1))
		[ $_n -le 100 ] || { live=no; break; }
		sleep 0.05
	done
fi
if [ $live = yes ]; then
	stdbuf -oL babeltrace2 -i lttng-live "net://$RLIVE/host/node0/demo" > "$W/live.txt" 2> "$W/live.err" &
	vpid=$!
	pids="$pids $vpid"
fi
for i in 0 1 2; do
	run_on $i tcp$i "$TRAWL" tcpcap -o "$DIR" --host node$i --port $PORT --clock-offset "$CLKOFF"
done
for i in 0 1 2; do wait_for "$W/tcp$i.err" 'recording'; done
for i in 1 2; do
	run_on $i srv$i python3 "$TRAWL_SRC/scripts/demo-app.py" server "server$i" "$(addr_of $i)" $PORT "$W/srv$i.ready"
done
for i in 0 1 2; do
	peers=""
	for j in 0 1 2; do
		[ $j -eq $i ] || peers="$peers --peer node$j=$(addr_of $j):$PPORT"
	done
	run_on $i probe$i "$TRAWL" probe -o "$DIR" --host node$i --listen "$(addr_of $i):$PPORT" $peers \
		--rate 20 --duration 3 --clock-offset "$CLKOFF"
done
for i in 1 2; do wait_for "$W/srv$i.ready" ready; done
run_on 0 client python3 "$TRAWL_SRC/scripts/demo-app.py" client client0 $COUNT 0.02 \
	"$(addr_of 1):$PORT" "$(addr_of 2):$PORT"

# the client and the probes end by themselves, then the servers
for t in client probe0 probe1 probe2 srv1 srv2; do wait_for "$W/$t.out" ': '; done
# what the live viewer has shown while node0 still records
[ $live = no ] || cp "$W/live.txt" "$W/live-during.txt"
stop tcp0 tcp1 tcp2
for i in 0 1 2; do wait_for "$W/tcp$i.out" 'segments'; done
if [ $kernel = yes ]; then
	kill -INT $kpid 2> /dev/null || true
	wait $kpid || { cat "$W/kernel.err" >&2; exit 1; }
fi
if [ $live = yes ]; then
	wait $vpid || true	# the viewer ends once the recording is complete
	kill "$(cat "$W/relay.pid")" 2> /dev/null || true
	rm -f "$W/relay.pid"
fi
wait
pids=""
rm -f "$W"/*.pid
echo "   $(cat "$W/client.out")"

# ---------------------------------------------------------------- showing
if [ $live = yes ]; then
	echo
	echo "== live: node0's kernel recording streamed to a trawl relay ($RDATA), followed by"
	echo "   babeltrace2 -i lttng-live net://$RLIVE/host/node0/demo while it recorded"
	nd=$(wc -l < "$W/live-during.txt")
	na=$(wc -l < "$W/live.txt")
	echo "   the viewer showed $nd events while node0 still recorded, $na in all; the first:"
	head -2 "$W/live-during.txt" | cut -c1-110 | sed 's/^/   /'
	"$TRAWL" print "$DIR/node0/kernel" > "$W/local-print.txt" 2> /dev/null
	"$TRAWL" print "$W/relay/demo/node0/kernel" > "$W/relay-print.txt" 2> /dev/null
	if [ -s "$W/local-print.txt" ] && cmp -s "$W/local-print.txt" "$W/relay-print.txt"; then
		echo "   the relay's copy ($W/relay/demo) holds the same $(wc -l < "$W/local-print.txt") events as the local one"
	else
		echo "   THE RELAY'S COPY DIFFERS FROM THE LOCAL ONE"
	fi
fi
echo
echo "== trawl info --no-sync SESSION (short): the raw session"
"$TRAWL" info --no-sync "$DIR" 2> /dev/null |
	awk '/^host / { h = $2 } /^  trace / { t = $2; sub(".*/", "", t) }
	     /^    events / { printf "   %s %-6s %7d events%s\n", h, t, $2, t == "kernel" ? " (the whole machine: scheduler)" : "" }
	     /^total:/ { sub(/, [0-9]* packets.*/, ""); print "   " $0 }'

# request K: 100+K bytes from node0 to node2, its reply 1000+K bytes back.
# fmt: trawl print lines, shortened (only the fields that tell the story),
# with the time since the previous line shown and what happens
fmt() {
	sed -E 's/\{ cpu_id = [0-9]+ \}, //; s/\{ tid = [0-9]+ \}, //; s/saddr = [0-9]+, daddr = [0-9]+, //
		s/, seq = [0-9]+, ack = [0-9]+//; s/flags = [0-9x]+, //
		s/, prev_tid = [0-9]+, prev_prio = [0-9]+, prev_state = [0-9]+//
		s/, next_tid = [0-9]+, next_prio = [0-9]+//; s/, prio = [0-9]+, target_cpu = [0-9]+//
		s/sport = [0-9]+, dport = [0-9]+, //; s/^\[([0-9:.]+)\] \(\+[0-9.?]+\) /[\1] /' |
	awk -v k="$K" '{
		split(substr($1, 2, 18), t, ":"); ns = ((t[1] * 60 + t[2]) * 60 + t[3]) * 1e9
		d = NR == 1 ? "(+?.?????????)" : sprintf("(%+.9f)", (ns - last) / 1e9); last = ns
		w = ""
		if (index($0, "tcp_send: { len = " 100 + k " }")) w = "client0 sends request " k
		else if (index($0, "tcp_recv: { len = " 100 + k " }")) w = "server" substr($2, 5) " receives it"
		else if (index($0, "tcp_send: { len = " 1000 + k " }")) w = "server" substr($2, 5) " sends the reply"
		else if (index($0, "tcp_recv: { len = " 1000 + k " }")) w = "client0 receives the reply"
		else if (/sched_wakeup/) { w = $0; sub(/.*comm = "/, "", w); sub(/".*/, "", w); w = "kernel wakes " w }
		else if (/sched_switch/) { p = n = $0; sub(/.*prev_comm = "/, "", p); sub(/".*/, "", p)
			sub(/.*next_comm = "/, "", n); sub(/".*/, "", n); sub(/\/[0-9]+$/, "", n)
			w = "kernel: " p (n == "swapper" ? " sleeps" : " -> " n) }
		$1 = $1 " " d
		printf "%-84s %s\n", $0, w }'
}
req() {	# the 4 segments of request K, as trawl print shows them ($@: options)
	"$TRAWL" print "$@" -e 'trawl_sync:tcp_*' "$DIR" 2> /dev/null | grep -E "len = (1$K|10$K) \}"
}
echo
echo "== trawl print --no-sync: request $K (node0 -> node2, 1$K bytes), its reply (10$K bytes): raw clocks"
req --no-sync | fmt
echo "   node2 receives the request 3 s before node0 sends it: each node's own clock is wrong"

echo
echo "== trawl sync SESSION (condensed; in full: $W/sync.out), beside the truth"
"$TRAWL" sync "$DIR" > "$W/sync.out"
sed -n "1,2{s|session $DIR|SESSION|;s/^/   /p}" "$W/sync.out"
awk -v offs="$OFFS" 'BEGIN { split(offs, o, " ")
		printf "   %-6s %14s %6s %10s %10s %11s  %s\n", "node", "offset (s)", "truth", "error (ns)",
			"bound (ns)", "drift (ppm)", "quality" }
	$1 == "host" { h = $2 }
	$1 == "drift" { dr[h] = $2 }
	$1 == "offset" { of[h] = $2 + 0 }
	$1 == "bound" { bs[h] = $3; bm[h] = $NF == "ns" ? $(NF - 1) : $NF }
	$1 == "quality" { q[h] = $2; sub(/,$/, "", q[h])
		i = substr(h, 5) + 1; tr = o[i] - o[1]
		e = of[h] - tr * 1e9; if (e < 0 ? -e > bs[h] : e > bs[h]) bad++
		printf "   %-6s %+14.9f %+6d %+10d %10d %11s  %s\n", h, of[h] / 1e9, tr, e, bs[h], dr[h], q[h] }
	END { print "   (truth: the time namespaces, no drift: one machine; error = offset - truth, bound at start)"
	      print bad ? "   SOME ERROR IS OUT OF ITS BOUND" : "   every node: |error| <= bound" }' "$W/sync.out"
grep '^  node[0-9] - node[0-9] ' "$W/sync.out" | sed -E 's/, duplicates [0-9]+ \/ [0-9]+//; s/, hull.*//; s/^  /   /'
if [ $kernel = yes ]; then
	ko=$(sed -n '/^clock {/,/^}/{s/.*offset_s = \(-\{0,1\}[0-9]*\);/\1/p}' "$DIR/node0/kernel/metadata")
	kn=$(sed -n '/^clock {/,/^}/{s/.*[^_]offset = \(-\{0,1\}[0-9]*\);/\1/p}' "$DIR/node0/kernel/metadata")
	echo "   node0's kernel trace: its clock is node0's (epoch offsets $((ko * 1000000000 + kn - CLKOFF)) ns apart)"
fi

echo
echo "== trawl print (sync.txt applied): request $K in causal order$([ $kernel = no ] || echo ", with the kernel's view")"
b=$(req --clock-seconds | head -1 | sed -E 's/^\[([0-9]+)\.([0-9]+)\].*/\1\2/')
e=$(req --clock-seconds | tail -1 | sed -E 's/^\[([0-9]+)\.([0-9]+)\].*/\1\2/')
[ -n "$b" ] && [ -n "$e" ] || { echo "demo: request $K was not recorded" >&2; exit 1; }
"$TRAWL" print -b "${b}ns" -E "$((e + 100000))ns" "$DIR" 2> /dev/null |
	grep -E "len = (1$K|10$K) \}|sched_.*comm = \"(client0|server2)\"" | head -14 | fmt

echo
echo "== trawl sync --apply -o COPY SESSION, then babeltrace2 COPY: the same order"
"$TRAWL" sync --apply -o "$W/copy" "$DIR" 2>&1 > /dev/null | sed 's/^/   /'
if command -v babeltrace2 > /dev/null 2>&1; then
	babeltrace2 "$W/copy" 2> /dev/null | grep -E "tcp_.*len = (1$K|10$K) \}" | fmt
else
	echo "   (babeltrace2 is not installed)"
fi

# request K as the page shows it: raw (each node's clock), then synchronized
rb=$(req --no-sync --clock-seconds | sed -E 's/^\[([0-9]+)\.([0-9]+)\].*/\1\2/' | sort -n | head -1)
re=$(req --no-sync --clock-seconds | sed -E 's/^\[([0-9]+)\.([0-9]+)\].*/\1\2/' | sort -n | tail -1)
VIEW_WHAT="make demo: request $K (node0 -> node2 -> node0)" view_demo "$DIR" "$rb" "$re" "$b" "$e"
