#!/bin/sh
# End to end, cluster control (docs/cluster.md): a relay and 4 nodes, each
# node in its own network namespace joined by a veth to a bridge in a
# namespace of ours (10.232.0.0/24), the relay listening on the bridge's
# address in that namespace. Each node runs `trawl agent --relay` (it
# dials the relay), and `trawl cluster` drives them all through the
# relay's control socket:
#   - nodes: 4 up, clock offsets known;
#   - create/start/stop on every node: the session at the relay holds every
#     node's events (exactly what each node's program emitted), and start
#     reports each node's apply time on the relay's clock;
#   - start at an agreed time (--margin): recording begins on every node
#     after the margin, within a bound of each other derived from the
#     offsets' uncertainty and this machine's timer lateness, and no
#     node's first event precedes the time it reported;
#   - --nodes 'node[01]': only those two act, the others have no session;
#   - snapshot: every node's flight recorder gathered at the relay into
#     one session directory, each node's events there;
#   - a node down (its agent killed): reported as down, exit 1, the
#     others go on;
#   - the relay restarted on the same port: the agents join again;
#   - kernel flight recorders: a cluster snapshot streams them too.
# Everything waits on positive signals, bounded; namespaces removed at exit.
. "$TRAWL_SRC/tests/e2e/lib.sh"
. "$TRAWL_SRC/tests/e2e/netns.sh"

[ "$(id -u)" -eq 0 ] || skip_all "needs root (network namespaces)"
command -v ip > /dev/null 2>&1 || skip_all "no ip command (iproute2)"
command -v python3 > /dev/null 2>&1 || skip_all "no python3 (reads the JSON answers)"
APP="$TRAWL_BUILD/examples/ust-counter"
[ -x "$APP" ] || { echo "Bail out! $APP is not built"; exit 1; }

N=4
P=trawl-cl-$$
NET=10.232.0
RELAY_IP=$NET.254
: > empty.conf
export TRAWL_CONFIG="$TRASH/empty.conf"

pids=""
relay_pid=""
cleanup() {
	for p in $pids $relay_pid; do kill "$p" 2> /dev/null; done
	netns_down "$P" "$N"
}
trap cleanup EXIT
trap 'cleanup; exit 1' INT TERM HUP

# ---- the network (tests/e2e/netns.sh)
netns_up "$P" "$NET" "$N" || { cat netns.err; skip_all "cannot build the veth/bridge network ($(head -1 netns.err))"; }

plan 48

# trawl cluster finds the control socket in [relay] control
printf '[relay]\ncontrol = %s\n' "$TRASH/ctl.sock" > cl.conf
CL() { TRAWL_CONFIG="$TRASH/cl.conf" "$TRAWL" cluster "$@"; }
# python3 over the JSON answer in $1: the expression $2 (j: the object)
jq_() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"; }

start_relay() {	# start_relay [PORT]: the first with --control, the next from [relay] control
	rm -f ready
	if [ -z "${1:-}" ]; then set -- 0 --control "$TRASH/ctl.sock"; else set -- "$1"; fi
	_port=$1; shift
	TRAWL_CONFIG="$TRASH/cl.conf" ip netns exec "$P-br" "$TRAWL" relay -o "$TRASH/out" \
		--data "$RELAY_IP:$_port" --live 127.0.0.1:0 "$@" --foreground --ready-fd 3 \
		3> ready 2>> relay.log &
	relay_pid=$!
	until_ok 10 has_lines ready 1
}
start_relay
ok $? "the relay listens in the bridge's namespace"
PORT=$(sed -n "s/^ready $RELAY_IP:\([0-9]*\) .*/\1/p" ready)

# node0-2 with --relay, node3 from [agent] relay of its configuration
printf '[agent]\nrelay = %s\n' "$RELAY_IP:$PORT" > node3.conf
for i in $(seq 0 $((N - 1))); do
	if [ "$i" -eq 3 ]; then set -- ; c=node3.conf; else set -- --relay "$RELAY_IP:$PORT"; c=empty.conf; fi
	TRAWL_CONFIG="$TRASH/$c" ip netns exec "$P-n$i" "$TRAWL" agent --socket "$TRASH/a$i.sock" \
		--host "node$i" "$@" --foreground --quiet 2> "agent$i.log" &
	pids="$pids $!"
	eval "agent$i=$!"
done

# nodes up with their offsets known: N
nodes_up() {
	CL nodes --json > nodes.json 2> /dev/null &&
		[ "$(jq_ nodes.json "sum(1 for n in j['nodes'] if n['state'] == 'up' and n['offset_ns'] is not None)")" -eq "$1" ]
}
until_ok 20 nodes_up $N
ok $? "trawl cluster nodes: $N nodes up (node3 by its [agent] relay), each with its clock offset known"
is "$(jq_ nodes.json "' '.join(n['name'] for n in j['nodes'])")" "node0 node1 node2 node3" \
	"... named by their --host, in order"
CL nodes > nodes.txt
is "$(grep -c '^node[0-3]  *up  ' nodes.txt)" $N "the text listing says so too"
# one host: the offsets are those of one CLOCK_MONOTONIC, within the round trip
is "$(jq_ nodes.json "all(abs(n['offset_ns']) <= n['rtt_ns'] for n in j['nodes'])")" True \
	"every offset is within its round trip of 0 (one machine, one clock)"

# a second agent under a name that is up: refused with the reason, which
# its log tells (it keeps trying, with backoff); the nodes stay as they were
ip netns exec "$P-n0" "$TRAWL" agent --socket "$TRASH/dup.sock" --host node0 \
	--relay "$RELAY_IP:$PORT" --foreground --quiet 2> dup.log &
dup=$!
refused() { grep -q 'node node0 is joined already' dup.log; }
until_ok 10 refused
ok $? "a second agent named node0 is refused, and told why"
kill "$dup"; wait "$dup" 2> /dev/null
CL nodes --json > nodes2.json
is "$(jq_ nodes2.json "' '.join(n['name'] + ':' + n['address'] for n in j['nodes'] if n['name'] == 'node0')")" \
	"$(jq_ nodes.json "' '.join(n['name'] + ':' + n['address'] for n in j['nodes'] if n['name'] == 'node0')")" \
	"... node0 is still the first one"

# programs registered on every node, waiting for their events to be enabled
run_apps() {	# run_apps SESSION-TAG NODES EVENTS
	for i in $2; do
		TRAWL_AGENT_SOCKET="$TRASH/a$i.sock" "$APP" -w -n "$3" > "app-$1-$i.out" &
		eval "app$i=$!"
	done
}
wait_apps() {	# wait_apps NODES: their programs end (each waits for its events 10 s at most)
	_r=0
	for i in $1; do eval "wait \$app$i" || _r=1; done
	return $_r
}
registered() {	# registered NODE: its agent lists an application
	TRAWL_AGENT_SOCKET="$TRASH/a$1.sock" "$TRAWL" list 2> /dev/null | grep -q ust-counter
}
all_registered() { for i in $1; do registered "$i" || return 1; done; }

ALL="0 1 2 3"
run_apps web "$ALL" 50
until_ok 10 all_registered "$ALL"
ok $? "a program registered with each node's agent"

CL create web > create.out
ok $? "cluster create web: every node acknowledged"
is "$(grep -c '^node[0-3]  *ok ' create.out)" $N "... $N lines 'ok', one per node"
mono() { python3 -c 'import time; print(time.monotonic_ns())'; }
# how late a timer wakes a process on this machine now: the worst of 20
# sleeps of 2 ms (the agents switch recording on from a timer)
late_us=$(python3 -c '
import time
w = 0
for _ in range(20):
    t = time.monotonic_ns(); time.sleep(0.002); w = max(w, time.monotonic_ns() - t - 2000000)
print(w // 1000)')
MARGIN=500
before=$(mono)
CL start web --margin $MARGIN --json > start.json
ok $? "cluster start web --margin $MARGIN"
after=$(mono)
# the agreed time is the relay's clock at the request plus the margin; a
# node's begin time on the relay's clock is its own less its offset
is "$(jq_ start.json "sum(1 for n in j['nodes'] if n['applied_relay_ns'] >= $before + $MARGIN * 1000000)")" $N \
	"... every node began recording at the agreed time, not before: $MARGIN ms after the request"
# one machine, one CLOCK_MONOTONIC: the nodes' own times are the true ones.
# They differ by the offsets' errors (each within half its round trip) and
# each timer's lateness (this machine's, times 4 for its variation, plus
# 1 ms for the agent's loop turn)
bound=$(jq_ start.json "max(n['rtt_ns'] for n in j['nodes']) // 1000 + 4 * $late_us + 1000")
tspread=$(jq_ start.json "(max(n['applied_node_ns'] for n in j['nodes']) - min(n['applied_node_ns'] for n in j['nodes'])) // 1000")
echo "# recording began on $N nodes within $tspread us (one clock); bound $bound us (timer lateness $late_us us)"
[ "$tspread" -le "$bound" ]
ok $? "... within $tspread us of each other, at most $bound us"
# one machine: the nodes' CLOCK_MONOTONIC is ours, so each apply time lies
# between our readings before and after the command
is "$(jq_ start.json "sum(1 for n in j['nodes'] if $before <= n['applied_node_ns'] <= $after)")" $N \
	"... each node's apply time is inside the command's run (one clock)"
is "$(jq_ start.json "sum(1 for n in j['nodes'] if n['status'] == 0 and 'applied_relay_ns' in n)")" $N \
	"... each node acknowledged, with the time it took effect (relay's clock)"
spread=$(jq_ start.json "(max(n['applied_relay_ns'] for n in j['nodes']) - min(n['applied_relay_ns'] for n in j['nodes'])) // 1000")
echo "# start took effect on $N nodes within $spread us (relay's clock)"
[ "$spread" -ge 0 ] && [ "$spread" -lt 2000000 ]
ok $? "... measured: the spread of the apply times is a real figure ($spread us, under 2 s)"
wait_apps "$ALL"
ok $? "the programs emitted their events and ended"
CL stop web > stop.out
ok $? "cluster stop web"
is "$(grep -c '^node[0-3]  *ok ' stop.out)" $N "... every node stopped"
"$TRAWL" info out/web > web.info 2>/dev/null
ok $? "trawl info reads the session at the relay"
# each node's first event, on its CLOCK_MONOTONIC (the event's time less
# the trace's clock offset), is not before the begin time the node reported
for i in $ALL; do
	"$TRAWL" print -f json --no-sync -H "node$i" -n 1 out/web > first$i.json || echo "# print node$i failed"
done
early=$(python3 -c '
import json, re
j = json.load(open("start.json"))
bad = []
for n in j["nodes"]:
    h = n["name"]
    md = open("out/web/%s/ust/metadata" % h, "rb").read().decode("latin-1")
    off = int(re.search(r"offset_s = (-?\d+);", md).group(1)) * 10**9 + \
        int(re.search(r"\boffset = (-?\d+);", md).group(1))
    ts = json.loads(open("first%s.json" % h[4:]).readline())["ts"] - off
    if ts < n["applied_node_ns"]:
        bad.append("%s %d ns early" % (h, n["applied_node_ns"] - ts))
print(" ".join(bad) or "none")')
is "$early" none "no node's first event is before the begin time it reported"
is "$(grep -c '^host node[0-3]$' web.info)" $N "it holds every node's trace"
is "$(sed -n 's/^total: .* \([0-9]*\) events, \([0-9]*\) discarded.*/\1 \2/p' web.info)" "400 0" \
	"... every event each node emitted (4 x 2 x 50), none discarded"
is "$(for i in $ALL; do grep -h '^emitted' app-web-$i.out; done | sort -u)" "emitted 50" \
	"(each program said it emitted 50 of each event)"

# ---- a selection
CL create sel --nodes 'node[01]' > sel.out
ok $? "cluster create sel --nodes 'node[01]'"
is "$(grep -o '^node[0-9]' sel.out | tr '\n' ' ')" "node0 node1 " "... only node0 and node1 answered"
has_sel() { CL nodes --json > n2.json && [ "$(jq_ n2.json "' '.join(n['name'] for n in j['nodes'] if 'sel:' in n['sessions'])")" = "node0 node1" ]; }
until_ok 5 has_sel
ok $? "the nodes listing shows sel on node0 and node1 only"
run_apps sel "0 1" 30
until_ok 10 all_registered "0 1"
CL start sel --nodes 'node[01]' > /dev/null && wait_apps "0 1" && CL stop sel --nodes 'node[01]' > /dev/null
ok $? "start and stop sel on the selection"
is "$(ls out/sel | tr '\n' ' ')" "node0 node1 " "the relay holds sel of node0 and node1 only"

CL stop sel --nodes 'nope*' > /dev/null 2> nope.err
is "$? $(cat nope.err)" "1 trawl cluster: stop: no node that joined the relay matches 'nope*'" \
	"a glob that matches no node: exit 1, saying so"

# ---- a snapshot of the live cluster
CL create snap --snapshot --nodes 'node*' > /dev/null && CL start snap > /dev/null
ok $? "cluster create snap --snapshot, start"
mkfifo ctl
for i in $ALL; do
	TRAWL_AGENT_SOCKET="$TRASH/a$i.sock" "$APP" -n 20 -b < ctl > "app-snap-$i.out" &
	pids="$pids $!"
done
exec 7> ctl
emitted_all() { for i in $ALL; do grep -q '^emitted 20$' "app-snap-$i.out" || return 1; done; }
until_ok 10 emitted_all
ok $? "a program on every node emitted 20 events into its flight recorder and waits"
CL snapshot snap > snap.out
ok $? "cluster snapshot snap"
is "$(grep -c 'snapshot of snap: 40 events to relay' snap.out)" $N \
	"... every node streamed its 40 events (20 tick + 20 debug) to the relay"
"$TRAWL" info out/snap-snapshot-1 > snap.info 2>/dev/null
is "$(grep -c '^host node[0-3]$' snap.info)" $N "one session directory at the relay with every node's snapshot"
is "$(sed -n 's/^total: .* \([0-9]*\) events, .*/\1/p' snap.info)" 160 "... 4 x 40 events"
exec 7>&-

# ---- a node down
kill "$agent3"
down3() { CL nodes --json > n3.json && [ "$(jq_ n3.json "[n['state'] for n in j['nodes'] if n['name'] == 'node3'][0]")" = down ]; }
until_ok 10 down3
ok $? "node3's agent killed: the relay lists it down"
CL create late > late.out
is $? 1 "cluster create late: exit 1 (a node is down)"
is "$(grep -c '^node[0-2]  *ok ' late.out) $(grep -c '^node3  *down ' late.out)" "3 1" \
	"... node0-2 did it, node3 reported down"
grep -q '^create late: 3 of 4 nodes ok' late.out
ok $? "... and the summary counts them"

# ---- the relay restarted: the agents join again (with backoff)
kill "$relay_pid"; wait "$relay_pid" 2> /dev/null
start_relay "$PORT"
ok $? "the relay restarted on the same port (its control socket from [relay] control)"
until_ok 30 nodes_up 3
ok $? "node0-2 joined the new relay by themselves"
CL stop snap --nodes 'node[0-2]' > late2.out
ok $? "... and take commands: stop snap on node0-2"

# ---- kernel flight recorders in a cluster snapshot (needs root, tracefs,
# the initial pid namespace), on node0-2 (node3 is down, snap stopped):
# each node's kernel trace at the relay as ksnap-snapshot-1/NODE/kernel,
# read by trawl info with events
AS() { TRAWL_AGENT_SOCKET="$TRASH/a$1.sock"; export TRAWL_AGENT_SOCKET; shift; "$TRAWL" "$@"; }
CL create ksnap --snapshot --nodes 'node[0-2]' > /dev/null
ok $? "cluster create ksnap --snapshot"
if [ "$(stat -L -c %i /proc/self/ns/pid 2>/dev/null)" != 4026531836 ]; then
	kskip="runs in a pid namespace other than the initial one"
elif ! (AS 0 enable ksnap -k sched:sched_switch > /dev/null 2> ks0.err); then
	kskip="cannot record kernel events here: $(cat ks0.err)"
else
	kskip=""
fi
if [ -n "$kskip" ]; then
	i=0; while [ $i -lt 4 ]; do skip "$kskip"; i=$((i + 1)); done
else
	kok=0
	for i in 1 2; do (AS $i enable ksnap -k sched:sched_switch > /dev/null 2>> ks.err) || kok=1; done
	[ $kok -eq 0 ] && CL start ksnap --nodes 'node[0-2]' > kstart.out 2>&1
	ok $? "enable -k sched:sched_switch on node0-2's agents, cluster start ksnap"
	CL snapshot ksnap --nodes 'node[0-2]' > ksnap.out
	is "$?:$(grep -c '^    snapshot of ksnap: kernel: [1-9][0-9]* events, .* as ksnap-snapshot-1/node[0-2]/kernel' ksnap.out)" \
		"0:3" "cluster snapshot ksnap: node0-2 each streamed its kernel flight recorder, with events"
	kinfo() { "$TRAWL" info "out/ksnap-snapshot-1/node$1/kernel" 2> /dev/null |
		sed -n 's/^total: .* \([0-9]*\) events, .*/\1/p'; }
	kn=0
	for i in 0 1 2; do e=$(kinfo $i); [ "${e:-0}" -gt 0 ] && kn=$((kn + 1)); done
	is "$kn" 3 "trawl info reads node0-2's kernel traces at the relay, events > 0"
	"$TRAWL" info out/ksnap-snapshot-1 > ksnap.info 2> /dev/null
	is "$(grep -c '^host node[0-2]$' ksnap.info)" 3 "... one session directory with their kernel trace"
fi

finish
