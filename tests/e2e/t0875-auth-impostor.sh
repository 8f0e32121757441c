#!/bin/sh
# Each side proves itself (issue 28 items 1, 5, 12; issue 27 item 15;
# docs/auth.md), on loopback.
#
# Checks: an impostor at a relay's address (tests/e2e/fake-relay.py: it
# asks no proof, or takes the proof and gives none, or gives a wrong one)
# is obeyed in nothing: an agent holding its node key creates nothing,
# writes nothing, answers none of its requests and connects to no address
# it names, and its log says why; a producer sends it no trace, a viewer no
# CONNECT, each exiting 1 with the reason. A relay's requests are held to
# the agent's trace root (--root): an output path outside it, a relay other
# than the one joined, or no root at all: refused with the reason, nothing
# created; beneath it: done. The agent takes no session name the relay
# refuses ('.', '..', '-rf', '*'). A FIFO as the secret file hangs neither
# the relay, a producer, a viewer nor the agent. Strings from peers (a
# relay's refusal in the agent's log; a node's sessions and answers in
# trawl cluster) reach no terminal with their control characters.
# trawl agent --stop stops the agent of a socket (and its pid file goes);
# trawl cluster nodes shows a session's new state at once.
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v python3 > /dev/null 2>&1 || skip_all "no python3 (the fake peers)"
"$TRAWL" secret new probe.key 2> probe.err || skip_all "no credentials here: $(cat probe.err)"
rm -f probe.key
plan 51

: > empty.conf
export TRAWL_CONFIG="$TRASH/empty.conf"
unset TRAWL_SECRET_FILE
FAKE="python3 $TRAWL_SRC/tests/e2e/fake-relay.py"
FP="" AP="" RP="" NP=""
cleanup() { for p in $FP $AP $RP $NP; do kill "$p" 2> /dev/null; done; }
trap cleanup EXIT
trap 'cleanup; exit 1' INT TERM HUP
bail() { echo "Bail out! $*"; exit 1; }
said() { grep -q "$2" "$1"; }			# said FILE PATTERN
"$TRAWL" secret new cl.key && "$TRAWL" secret node host0 --secret-file cl.key n0.key &&
	"$TRAWL" secret viewer --secret-file cl.key v.key || bail "no credentials"
mkdir -p root out

# fake MODE NAME: the impostor; sets FP, DATA, LIVE; its log is NAME.log
fake() {
	rm -f "$2.ready"
	$FAKE "$1" "$TRASH/$2.ready" "$TRASH/$2.log" "$TRASH/root" &
	FP=$!
	until_ok 10 test -s "$2.ready" || return 1
	read -r DATA LIVE _ < "$2.ready"
}
closed() { grep -c '^closed' "$1.log"; }	# closed NAME: connections it saw end
more_closed() { [ "$(closed "$1")" -gt "$2" ]; }
nfiles() { find "$@" -mindepth 1 | wc -l | tr -d ' '; }
stop_fake() { kill "$FP"; wait "$FP" 2> /dev/null; FP=""; }
# agent NAME ARGS...: an agent in the foreground on NAME.sock, its log NAME.log
agent() {
	_nm=$1
	shift
	rm -f "$_nm.fifo"
	mkfifo "$_nm.fifo"
	"$TRAWL" agent -f --socket "$TRASH/$_nm.sock" --host host0 --ready-fd 3 "$@" \
		3> "$_nm.fifo" 2> "$_nm.log" &
	AP=$!
	wait_ready "$_nm.fifo" > /dev/null
}
# stop_agent NAME: trawl agent --stop; an agent that does not go is killed
stop_agent() {
	"$TRAWL" agent --stop --socket "$TRASH/$1.sock" > /dev/null 2>&1
	gone "$AP" || { echo "# the agent $1 did not stop: killed"; kill -9 "$AP"; }
	wait "$AP" 2> /dev/null
	AP=""
}

# ---- 1. impostors (each mode): an agent with its node key obeys none
for mode in nochallenge noproof wrongproof; do
	fake $mode $mode || bail "the fake relay did not start"
	agent ag-$mode --relay "$DATA" --secret-file n0.key --root "$TRASH/root" ||
		bail "the agent did not start"
	# the first connection closed by the agent: every request was in it
	until_ok 10 said $mode.log "^closed 1"
	ok $? "$mode: the agent left the impostor's connection: $(tr '\n' ' ' < $mode.log | cut -c1-80)"
	is "$(grep -c '^ctl-reply' $mode.log) $(grep -c '^evil' $mode.log) $(nfiles root)" "0 0 0" \
		"$mode: it answered none of its 7 requests, created nothing in the root, connected to no address it named"
	case $mode in
	nochallenge) why="it asked no proof" ;;
	noproof) why="a WELCOME without its proof" ;;
	wrongproof) why="its proof is wrong" ;;
	esac
	said ag-$mode.log "relay $DATA: the relay did not prove it holds this agent's secret ($why.*not obeying it"
	ok $? "$mode: its log says why: $(grep 'did not prove' ag-$mode.log | head -1)"
	# trawl agent --stop (issue 27 item 15): the socket's agent, its pid file gone
	pidf="$TRASH/ag-$mode.pid"
	[ "$mode" != nochallenge ] || is "$(cat "$pidf" 2> /dev/null)" "$AP" "the agent's pid file beside its socket holds its pid"
	"$TRAWL" agent --stop --socket "$TRASH/ag-$mode.sock" > stop.out 2> stop.err
	st=$?
	gone "$AP"
	is "$st $? $(ls "$pidf" 2> /dev/null)" "0 0 " "$mode: trawl agent --stop: exit 0 once the agent is gone, its pid file removed"
	wait "$AP" 2> /dev/null
	AP=""
	# a producer holding the cluster secret sends no trace
	n0=$(grep -c '^data' $mode.log)
	"$TRAWL" simulate --relay "$DATA" --session s --events 10 --hosts 1 --secret-file cl.key \
		> sim.out 2> sim-$mode.err
	is "$? $(grep -c "did not prove it holds the secret of cl.key: $why" sim-$mode.err)" "1 1" \
		"$mode: a producer refuses it, exit 1: $(cat sim-$mode.err)"
	until_ok 10 said $mode.log "^closed $((n0 + 1))"
	is "$(grep -Ec '^got (METADATA|STREAM|PACKET)' $mode.log)" 0 "$mode: and sends it neither metadata, stream nor packet"
	# a viewer holding the viewer key says no CONNECT
	n0=$(closed $mode)
	"$TRAWL" print --live "net://$LIVE/host/host0/s" --secret-file v.key > /dev/null 2> pr-$mode.err
	st=$?
	case $mode in
	nochallenge) vwhy="it asked no proof" ;;
	noproof) vwhy="its proof is missing" ;;
	wrongproof) vwhy="its proof is wrong" ;;
	esac
	is "$st $(grep -c "live relay did not prove it holds the secret of v.key: $vwhy" pr-$mode.err)" "1 1" \
		"$mode: a viewer refuses it, exit 1: $(cat pr-$mode.err)"
	until_ok 10 more_closed $mode "$n0"
	is "$(grep -c '^live got 0x1$' $mode.log)" 0 "$mode: and sends it no CONNECT"
	stop_fake
done

# ---- 2. the relay's requests within the trace root (a relay taken at its
# word: without a key, the unauthenticated mode)
replies() { [ "$(grep -c '^ctl-reply' "$1.log")" -ge 7 ]; }	# all 7 answered
fake nochallenge open1 || bail "the fake relay did not start"
agent rootless --relay "$DATA" || bail "the agent did not start"
until_ok 10 replies open1
is "$(grep '^ctl-reply [15] ' open1.log | tr '\n' ' ')$(nfiles root)" "ctl-reply 1 1 ctl-reply 5 1 0" \
	"an agent without --root: the relay's creates naming an output path or another relay fail, nothing created"
said rootless.log "refused its request: output $TRASH/root/evil: the relay may not name output paths on this node (it has no trace root"
ok $? "and its log says why"
stop_agent rootless
stop_fake
mkdir -p other
fake nochallenge open2 || bail "the fake relay did not start"
agent rooted --relay "$DATA" --root "$TRASH/other" || bail "the agent did not start"
until_ok 10 replies open2
is "$(grep '^ctl-reply [15] ' open2.log | tr '\n' ' ')$(grep -c '^evil' open2.log) $(nfiles root other)" \
	"ctl-reply 1 1 ctl-reply 5 1 0 0" \
	"--root other: an output outside it is refused, nothing created, no connection to the relay it names"
said rooted.log "output $TRASH/root/evil: not beneath this node's trace root $TRASH/other"
ok $? "and its log says why"
stop_agent rooted
stop_fake

# a real relay: its cluster verbs beneath the root are done, others refused
rm -f r.fifo
mkfifo r.fifo
"$TRAWL" relay -f -o "$TRASH/rout" --data 127.0.0.1:0 --live 127.0.0.1:0 --control "$TRASH/ctl.sock" \
	--ready-fd 3 3> r.fifo 2> relay.log &
RP=$!
l=$(wait_ready r.fifo) || bail "the relay did not start"
# shellcheck disable=SC2086
set -- $l
RDATA=$2
CL() { "$TRAWL" cluster --control "$TRASH/ctl.sock" "$@"; }
agent real --relay "$RDATA" --root "$TRASH/root" || bail "the agent did not start"
up() { CL nodes 2> /dev/null | grep -q '^host0  *up '; }
until_ok 10 up
ok $? "an agent with --root joins a relay"
CL create inside "output=$TRASH/root/inside" > in.out 2>&1
is "$? $(grep -c '^host0  *ok ' in.out)" "0 1" "cluster create with an output beneath the root: done"
CL create outside "output=$TRASH/other/x" > outside.out 2>&1
is "$? $(grep -c "not beneath this node's trace root $TRASH/root" outside.out)" "1 1" \
	"an output outside the root: refused, the node says why"
CL create elsewhere relay=127.0.0.1:9 > rel.out 2>&1
is "$? $(grep -c 'the relay may stream sessions to itself only' rel.out)" "1 1" \
	"a session streamed to another relay: refused"
CL create ../up > dots.out 2>&1
st=$?
CL create '*' > star.out 2>&1
is "$st $? $(grep -c 'bad session name' dots.out star.out | tr '\n' ' ')" "1 1 dots.out:1 star.out:1 " \
	"session names the relay refuses ('../up', '*') are refused by the agent too"

# ---- 3. trawl cluster nodes shows a session's state at once (no wait for a ping)
export TRAWL_AGENT_SOCKET="$TRASH/real.sock"
"$TRAWL" create quick -o "$TRASH/root/quick" > /dev/null && "$TRAWL" enable quick 'x:*' > /dev/null
prompt=""
for want in active stopped active; do
	if [ $want = active ]; then "$TRAWL" start quick > /dev/null 2>&1; else "$TRAWL" stop quick > /dev/null 2>&1; fi
	prompt="$prompt$(CL nodes | grep -o 'quick:[a-z]*') "
done
is "$prompt" "quick:recording quick:stopped quick:recording " \
	"cluster nodes right after each start and stop shows the session's new state"
"$TRAWL" stop quick > /dev/null 2>&1
# local session names the relay refuses
bad=""
for n in . .. -rf '*' 'a b'; do
	"$TRAWL" create -o "$TRASH/root/n" -- "$n" > /dev/null 2> name.err
	bad="$bad$?$(grep -c 'bad session name' name.err) "
done
is "$bad" "21 21 21 21 21 " "trawl create refuses the names '.', '..', '-rf', '*', 'a b' (exit 2, the reason)"
"$TRAWL" create ok.name_-1 -o "$TRASH/root/okn" > /dev/null
ok $? "and takes one of [A-Za-z0-9._-]"
unset TRAWL_AGENT_SOCKET
stop_agent real

# ---- 4. strings from peers, escaped: a node's, in trawl cluster
python3 "$TRAWL_SRC/tests/e2e/fake-node.py" "$RDATA" evilnode > node.out 2> node.err &
NP=$!
until_ok 10 said node.out joined
ok $? "a node that sends terminal escapes joins"
sesn() { CL nodes 2> /dev/null | grep -q '^evilnode .*all nodes ok'; }
until_ok 10 sesn
ok $? "trawl cluster nodes lists its sessions"
CL nodes > nodes.out 2>&1
LC_ALL=C grep -q "$(printf '[\001-\011\013-\037\177-\377]')" nodes.out
ok $((! $?)) "trawl cluster nodes prints no control character of its sessions: $(grep evilnode nodes.out | cut -c80-)"
grep -qF 's\x1b[2J\x1b[H\x1b[32mall nodes ok\x1b[0m\x1b]0;pwned\x07\x0d\xc2\x9b1m:active' nodes.out
ok $? "it shows them escaped (\\xNN)"
CL stop s --nodes evilnode > answer.out 2>&1
LC_ALL=C grep -q "$(printf '[\001-\011\013-\037\177-\377]')" answer.out
ok $((! $?)) "a node's answer is printed with no control character either"
is "$(grep -c '^    done\\x1b\[2J' answer.out) $(grep -c '^    line two\\x1b\[1A$' answer.out)" "1 1" \
	"its lines stay lines, each escaped"
CL nodes --json > nodes.json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print([n["sessions"] for n in d["nodes"] if n["name"]=="evilnode"][0].startswith("s\x1b[2J\x1b[H"))' nodes.json > json.out
is "$(cat json.out)" True "the JSON output carries the strings as sent (JSON escapes them its own way)"
kill "$NP"
wait "$NP" 2> /dev/null
NP=""
kill "$RP"
wait "$RP" 2> /dev/null
RP=""

# a relay's refusal in the agent's log
fake refuse refuse || bail "the fake relay did not start"
agent esc --relay "$DATA" || bail "the agent did not start"
until_ok 10 said refuse.log "^refused 1"
until_ok 10 said esc.log "go away"
LC_ALL=C grep -q "$(printf '[\001-\011\013-\037\177-\377]')" esc.log
ok $((! $?)) "the agent logs a relay's refusal without its control characters"
said esc.log 'relay .*: \\x1b\[2J\\x1b\[Hgo away\\x07; joining again'
ok $? "escaped: $(grep 'go away' esc.log | head -1)"
stop_agent esc
stop_fake

# ---- 5. a FIFO as the secret file hangs nothing
mkfifo fifo.key
chmod 600 fifo.key
timeout 20 "$TRAWL" relay -f -o "$TRASH/fout" --data 127.0.0.1:0 --live 127.0.0.1:0 --secret-file fifo.key 2> f-relay.err
is "$? $(grep -c 'fifo.key: not a regular file (a FIFO)' f-relay.err)" "1 1" "the relay refuses a FIFO as its secret at once: $(cat f-relay.err)"
timeout 20 "$TRAWL" simulate --relay 127.0.0.1:9 --session s --events 10 --hosts 1 --secret-file fifo.key > /dev/null 2> f-sim.err
is "$? $(grep -c 'not a regular file (a FIFO)' f-sim.err)" "1 1" "so does a producer: $(cat f-sim.err)"
fake nochallenge fifo-relay || bail "the fake relay did not start"
timeout 20 "$TRAWL" print --live "net://$LIVE/host/h/s" --secret-file fifo.key > /dev/null 2> f-view.err
is "$? $(grep -c 'not a regular file (a FIFO)' f-view.err)" "1 1" "and a viewer: $(cat f-view.err)"
agent fifo --relay "$DATA" --secret-file fifo.key || bail "the agent did not start"
until_ok 10 said fifo.log "secret file .*fifo.key: not a regular file (a FIFO)"
ok $? "the agent says the FIFO is not a regular file: $(grep 'a FIFO' fifo.log | head -1)"
TRAWL_AGENT_SOCKET="$TRASH/fifo.sock" timeout 20 "$TRAWL" list > /dev/null
ok $? "and its loop still answers its clients"
stop_agent fifo
stop_fake
finish
