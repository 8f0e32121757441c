#!/bin/sh
# The relay's authentication (issue 20 item 2, docs/auth.md), on loopback.
#
# Checks: trawl secret makes the cluster secret (mode 600, never over a
# file) and derives node and viewer keys (the same twice, different per
# host); a relay refuses to start on a secret others can read, or on a
# node key. With a secret: a producer without a credential, with another
# cluster's secret, with a viewer's key, or with host1's node key claiming
# host0 (squatting host0's directory) is refused with the reason in its
# WELCOME and in the log, and nothing is written; the cluster secret and
# host0's own node key are welcomed; an agent's session (trawl create
# --relay) is refused with the reason at trawl start without the agent's
# --secret-file, and streams with it; a replayed AUTH (a welcomed
# producer's, sent again to a new challenge) is refused; names with '..'
# are refused before any challenge; a producer that never answers its
# challenge is closed after --message-timeout; 300 bad proofs in a row
# cost a few log lines and a real producer is served right after. Viewers:
# the live port closes one without a proof, refuses a node's key and a
# wrong secret with the reason, takes the viewer key and the cluster
# secret; the --live-open port serves one without a proof; trawl print
# --live says a relay's refusal and a node key's uselessness. The startup
# line says loopback only, and a data port on every address without a
# secret gets a warning.
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v python3 > /dev/null 2>&1 || skip_all "no python3 (the raw peers)"
plan 67

: > empty.conf
export TRAWL_CONFIG="$TRASH/empty.conf"
unset TRAWL_SECRET_FILE
PEER="python3 $TRAWL_SRC/tests/e2e/auth-peer.py"
PID="" P2=""
cleanup() { for p in $PID $P2; do kill "$p" 2> /dev/null; done; }
trap cleanup EXIT
trap 'cleanup; exit 1' INT TERM HUP
bail() { echo "Bail out! $*"; exit 1; }
mode() { stat -c %a "$1"; }

# ---- 1. credentials
"$TRAWL" secret new cl.key && "$TRAWL" secret node host0 --secret-file cl.key n0.key &&
	"$TRAWL" secret node host1 --secret-file cl.key n1.key &&
	"$TRAWL" secret viewer --secret-file cl.key v.key && "$TRAWL" secret new other.key
ok $? "trawl secret: a cluster secret, two node keys, the viewer key, another cluster's secret"
is "$(mode cl.key) $(mode n0.key) $(mode v.key)" "600 600 600" "credential files are mode 600"
grep -Eq '^cluster [0-9a-f]{64}$' cl.key && grep -Eq '^node host0 [0-9a-f]{64}$' n0.key &&
	grep -Eq '^viewer [0-9a-f]{64}$' v.key
ok $? "their lines: 'cluster HEX', 'node host0 HEX', 'viewer HEX'"
"$TRAWL" secret node host0 --secret-file cl.key n0b.key
cmp -s n0.key n0b.key && ! cmp -s n0.key n1.key && ! cmp -s cl.key other.key
ok $? "a node key is derived (the same twice), one per host; two secrets differ"
cp cl.key before
"$TRAWL" secret new cl.key 2> exists.err
is "$? $(cmp -s cl.key before && echo same)" "1 same" "trawl secret new never writes over a file: $(cat exists.err)"
"$TRAWL" secret node ../x --secret-file cl.key bad.key 2> /dev/null
is "$? $(ls bad.key 2> /dev/null)" "2 " "no node key for a host name '../x' (usage error, no file)"

# ---- 2. a relay refuses a secret others can read, or a node key
cp cl.key open.key && chmod 644 open.key
"$TRAWL" relay -f -o OUT0 --data 127.0.0.1:0 --live 127.0.0.1:0 --secret-file open.key 2> open.err
is "$? $(grep -c 'chmod 600' open.err)" "1 1" "a relay refuses a secret file others can read: $(cat open.err)"
"$TRAWL" relay -f -o OUT0 --data 127.0.0.1:0 --live 127.0.0.1:0 --secret-file n0.key 2> node.err
is "$? $(grep -c 'needs the cluster' node.err) $(ls -d OUT0 2> /dev/null)" "1 1 " \
	"a relay refuses a node key as its secret, and creates nothing: $(cat node.err)"

# start NAME ARGS...: a relay in the foreground, its log in NAME.log; sets
# PID, DATA, LIVE (and OPEN: the third address of the ready line)
start() {
	_nm=$1
	shift
	rm -f "$_nm.fifo"
	mkfifo "$_nm.fifo" || return 1
	"$TRAWL" relay -f -o "OUT-$_nm" --ready-fd 3 "$@" 3> "$_nm.fifo" 2> "$_nm.log" &
	PID=$!
	_l=$(wait_ready "$_nm.fifo") || { cat "$_nm.log"; return 1; }
	# shellcheck disable=SC2086
	set -- $_l
	DATA=$2 LIVE=$3 OPEN=${4:-}
}
start a --data 127.0.0.1:0 --live 127.0.0.1:0 --live-open 0 --secret-file cl.key \
	--message-timeout 2 || bail "the relay did not start"
OUT=OUT-a
case "$OPEN" in 127.0.0.1:[1-9]*) true ;; *) false ;; esac
ok $? "--live-open 0: a third port on loopback, on the ready line ($DATA $LIVE $OPEN)"
# (the ready line is written before the startup line: wait for it)
startup_a() { head -1 a.log | grep -q "; loopback only, peers authenticate (--secret-file), open live port (read-only, no authentication) on $OPEN\$"; }
until_ok 10 startup_a
ok $? "the startup line says loopback only, authentication, the open port: $(head -1 a.log)"
grep -q warning a.log
ok $((! $?)) "no warning for a relay on loopback with a secret"

# ---- 3. producers
sim() { _k=$1 _s=$2; shift 2; "$TRAWL" simulate --relay "$DATA" --session "$_s" --events 400 "$@" \
	${_k:+--secret-file "$_k"} > "$_s.out" 2> "$_s.err"; }
sim "" none --hosts 1
is "$? $(grep -c 'requires authentication' none.err) $(ls "$OUT" | grep -c none)" "1 1 0" \
	"no credential: refused with the reason, nothing written: $(cat none.err)"
grep -q "refused: a HELLO without a credential" a.log
ok $? "and logged"
sim other.key wrong --hosts 1
is "$? $(grep -c "authentication failed: not this relay's cluster secret" wrong.err) $(ls "$OUT" | grep -c wrong)" \
	"1 1 0" "another cluster's secret: refused with the reason, nothing written: $(cat wrong.err)"
grep -q "refused: authentication failed: not this relay's cluster secret" a.log
ok $? "and logged"
sim cl.key good --hosts 2
is "$? $(ls "$OUT/good" | tr '\n' ' ')" "0 host0 host1 " "the cluster secret writes both hosts"
"$TRAWL" info "$OUT/good" > info.out 2>&1
is "$(awk '$1 == "events" { n += $2 } END { print n }' info.out)" 400 \
	"the session the relay wrote holds the 400 events (its 4 traces' counts)"
sim n0.key mine --hosts 1
is "$? $(ls "$OUT/mine" | tr '\n' ' ')" "0 host0 " "host0's node key writes host0"
sim n0.key both --hosts 2
is "$? $(grep -c 'node key of host host0, not of this host (host1)' both.err)" "1 1" \
	"host0's key for host1: the producer says so before connecting: $(cat both.err)"
$PEER producer "$DATA" n1.key shop host0 ust-extra > squat.out
is "$(head -1 squat.out)" "welcome -13 authentication failed: not host host0's node key from this relay's secret (a wrong secret, or another host's key)" \
	"host1's node key claiming host0 (squatting shop/host0/ust-extra): refused with the reason"
[ ! -e "$OUT/shop" ]
ok $? "and nothing written for it"
$PEER producer "$DATA" n0.key shop host0 ust > own.out
is "$(cat own.out | tr '\n' ' ')$(cat "$OUT/shop/host0/ust/metadata")" "welcome 0  ack 0 /* CTF 1.8 */" \
	"host0's own key writes shop/host0/ust"
$PEER producer "$DATA" v.key shop host0 ust2 > vw.out
is "$(head -1 vw.out)" "welcome -13 a viewer's credential cannot write: give the producer its node's or the cluster's secret" \
	"a viewer's key cannot write"
$PEER producer "$DATA" n0.key shop host0 ust3 cluster > claim.out
is "$(head -1 claim.out)" "welcome -13 authentication failed: not this relay's cluster secret" \
	"a node key claiming to be the cluster secret is refused"
# an agent's sessions (trawl create --relay): the agent's credential
agent() {	# agent NAME ARGS...: an agent in the foreground on NAME.sock
	_nm=$1
	shift
	rm -f "$_nm.fifo"
	mkfifo "$_nm.fifo"
	"$TRAWL" agent -f --socket "$TRASH/$_nm.sock" --host host0 --ready-fd 3 "$@" \
		3> "$_nm.fifo" 2> "$_nm.log" &
	P2=$!
	wait_ready "$_nm.fifo" > /dev/null
}
session() {	# session NAME SOCK: create, enable, start, stop, destroy; the outputs
	TRAWL_AGENT_SOCKET="$TRASH/$2.sock"
	export TRAWL_AGENT_SOCKET
	"$TRAWL" create "$1" --relay "$DATA" > /dev/null && "$TRAWL" enable "$1" 'x:*' > /dev/null &&
		"$TRAWL" start "$1" && "$TRAWL" stop "$1"
	_r=$?
	"$TRAWL" destroy "$1" > /dev/null 2>&1
	unset TRAWL_AGENT_SOCKET
	return $_r
}
agent ag1 || bail "the agent did not start"
session agn ag1 > agn.out 2> agn.err
is "$? $(grep -c "trawl start: relay $DATA refused agn/host0/ust: this relay requires authentication" agn.err)" \
	"1 1" "an agent without a credential: trawl start says the relay's reason: $(cat agn.err)"
kill "$P2"
wait "$P2" 2> /dev/null
agent ag2 --secret-file n0.key || bail "the agent did not start"
session agk ag2 > agk.out 2> agk.err
is "$? $(grep -c "complete at relay" agk.out) $(ls "$OUT/agk")" "0 1 host0" \
	"an agent with host0's node key (--secret-file): its session's trace is complete at the relay"
kill "$P2"
wait "$P2" 2> /dev/null
P2=""
$PEER replay "$DATA" cl.key rp host0 ust > replay.out
is "$(cat replay.out | tr '\n' '|')" "first 0 |replayed -13 authentication failed: not this relay's cluster secret|" \
	"a welcomed producer's AUTH replayed to a new challenge is refused"
$PEER producer "$DATA" cl.key .. host0 ust > trav.out
$PEER producer "$DATA" cl.key s ../.. ust >> trav.out
is "$(cut -c1-12 trav.out | tr '\n' '|')" "welcome -71 |welcome -71 |" \
	"names with '..' are refused (the cluster secret does not make them plain file names)"
[ ! -e "$TRASH/host0" ] && [ ! -e "$TRASH/ust" ] && [ ! -e "$OUT/s" ]
ok $? "and nothing is written, outside the relay's directory or in it"
$PEER silent "$DATA" > silent.out
case "$(cat silent.out)" in "closed after "[1-4].*) true ;; *) false ;; esac
ok $? "a producer that never answers its challenge is closed after --message-timeout 2: $(cat silent.out)"
grep -q "no answer to its challenge after 2000 ms" a.log
ok $? "and logged"

# ---- 4. a flood of bad proofs: refused, a few log lines, the others served
n0=$(wc -l < a.log)
t0=$(date +%s%N)
$PEER flood "$DATA" 300 > flood.out
t1=$(date +%s%N)
is "$(cat flood.out)" "refused 300 of 300" "300 bad proofs in a row: each refused with a reason ($(( (t1 - t0) / 1000000 )) ms)"
n1=$(wc -l < a.log)
[ $((n1 - n0)) -le 3 ]
ok $? "they cost $((n1 - n0)) log lines (one per episode, with a count), not 300"
sim cl.key after --hosts 1
is "$? $(ls "$OUT/after")" "0 host0" "a real producer is served right after"
kill -0 "$PID"
ok $? "the relay is still up"

# ---- 5. viewers
$PEER viewer "$LIVE" - > v-none.out
is "$(cat v-none.out)" "closed" "the live port closes a viewer without a proof"
grep -q "refused: a viewer without a credential" a.log
ok $? "and logs why"
$PEER viewer "$LIVE" v.key > v-ok.out
is "$(cat v-ok.out | tr '\n' '|')" "auth 1 |connected|" "the viewer key is taken, then CONNECT is served"
$PEER viewer "$LIVE" cl.key > v-cl.out
is "$(cat v-cl.out | tr '\n' '|')" "auth 1 |connected|" "the cluster secret reads too"
$PEER viewer "$LIVE" n0.key > v-node.out
is "$(cat v-node.out | tr '\n' '|')" "auth 3 a node's credential cannot read: give the viewer the viewer secret or the cluster's|closed|" \
	"a node's key cannot read (producers cannot read)"
$PEER viewer "$LIVE" other.key viewer > v-wrong.out
is "$(cat v-wrong.out | tr '\n' '|')" "auth 3 authentication failed: not this relay's viewer secret|closed|" \
	"a wrong viewer key is refused with the reason"
$PEER viewer "$OPEN" - > v-open.out
is "$(cat v-open.out)" "connected" "the --live-open port serves a viewer without a proof"
$PEER viewer "$OPEN" v.key > v-open2.out
is "$(cat v-open2.out | tr '\n' '|')" "auth none|connected|" "and tells one that offers a proof it needs none"
"$TRAWL" print --live "net://$LIVE/host/host0/good" --secret-file other.key > /dev/null 2> p-wrong.err
is "$? $(grep -c "live relay refused the viewer: authentication failed" p-wrong.err)" "1 1" \
	"trawl print --live with a wrong secret says the relay's reason: $(cat p-wrong.err)"
"$TRAWL" print --live "net://$LIVE/host/host0/good" --secret-file n0.key > /dev/null 2> p-node.err
is "$? $(grep -c "a node's key, which cannot read" p-node.err)" "1 1" \
	"trawl print --live with a node key says it cannot read: $(cat p-node.err)"
kill "$PID"
wait "$PID" 2> /dev/null
PID=""

# ---- 6. without a secret, on every address: a warning
start b --data 0.0.0.0:0 --live 127.0.0.1:0 || bail "relay b did not start"
warned_b() { grep -q "warning: data port on 0.0.0.0:[0-9]* (every address) without a secret: anyone who reaches it can write" b.log; }
until_ok 10 warned_b
ok $? "a data port on every address without a secret gets a warning: $(grep warning b.log)"
startup_b() { head -1 b.log | grep -q "; live on loopback only, no authentication (--secret-file)$"; }
until_ok 10 startup_b
ok $? "the startup line says only the live port is loopback, and no authentication"
kill "$PID"
wait "$PID" 2> /dev/null
PID=""
start c --data 0 --live 0 || bail "relay c did not start"
case "$DATA $LIVE" in 127.0.0.1:[1-9]*" "127.0.0.1:[1-9]*) true ;; *) false ;; esac
ok $? "bare ports listen on loopback ($DATA $LIVE), the default"
kill "$PID"
wait "$PID" 2> /dev/null
PID=""

# ---- 7. agents joining the cluster (docs/cluster.md) through the challenge
start d --data 127.0.0.1:0 --live 127.0.0.1:0 --secret-file cl.key --control "$TRASH/ctl.sock" ||
	bail "relay d did not start"
CL() { "$TRAWL" cluster --control "$TRASH/ctl.sock" "$@"; }
$PEER join "$DATA" - host0 > j-none.out
is "$(cat j-none.out)" "welcome -13 this relay requires authentication: give the agent its node's key or the cluster's secret (trawl secret; agent --secret-file, TRAWL_SECRET_FILE, [relay] secret-file)" \
	"a JOIN without a credential is refused with the reason"
grep -q "refused: a JOIN without a credential" d.log
ok $? "and logged"
$PEER join "$DATA" other.key host0 > j-wrong.out
is "$(cat j-wrong.out)" "welcome -13 authentication failed: not this relay's cluster secret" \
	"a JOIN with another cluster's secret is refused with the reason"
grep -q "refused: authentication failed: not this relay's cluster secret" d.log
ok $? "and logged"
$PEER join "$DATA" n1.key host0 > j-other.out
is "$(cat j-other.out)" "welcome -13 authentication failed: not host host0's node key from this relay's secret (a wrong secret, or another host's key)" \
	"host1's node key joining as host0 is refused"
$PEER join "$DATA" v.key host0 > j-viewer.out
is "$(cat j-viewer.out)" "welcome -13 a viewer's credential cannot join the cluster: give the agent its node's key or the cluster's secret" \
	"a viewer's key cannot join"
$PEER joinhello "$DATA" n0.key host0 > j-role.out
is "$(cat j-role.out)" "welcome -13 authentication failed: not host host0's node key from this relay's secret (a wrong secret, or another host's key)" \
	"a producer's proof (its role, a HELLO's context) does not serve a JOIN"
CL nodes --json > j-nodes0.json
is "$(grep -c '"name"' j-nodes0.json)" 0 "none of them became a node"
$PEER join "$DATA" cl.key hostx > j-cl.out
is "$(cat j-cl.out)" "welcome 0 " "the cluster secret joins as any host"
# real agents: each keeps trying (with backoff); its log says the relay's reason
jagent() {	# jagent NAME ARGS...: an agent joining relay d, its log in NAME.log
	_nm=$1
	shift
	"$TRAWL" agent -f --socket "$TRASH/$_nm.sock" --host host0 --relay "$DATA" "$@" 2> "$_nm.log" &
	P2=$!
}
stop_agent() { kill "$P2"; wait "$P2" 2> /dev/null; P2=""; }
said() { grep -q "$2" "$1.log"; }
jagent jn
until_ok 10 said jn "relay $DATA: this relay requires authentication: give the agent"
ok $? "an agent without a credential: refused, its log says why: $(grep relay jn.log | head -1)"
stop_agent
jagent jw --secret-file other.key
until_ok 10 said jw "relay $DATA: authentication failed: not this relay's cluster secret"
ok $? "an agent with another cluster's secret: refused, its log says why"
stop_agent
jagent jo --secret-file n1.key
until_ok 10 said jo "relay $DATA: authentication failed: not host host0's node key"
ok $? "an agent named host0 with host1's node key: refused, its log says why"
stop_agent
up0() { CL nodes > j-nodes.txt 2> /dev/null && grep -q '^host0  *up ' j-nodes.txt; }
up0
ok $((! $?)) "none of these agents joined: $(grep -c host0 j-nodes.txt) host0 line(s) in cluster nodes"
jagent jk --secret-file n0.key
until_ok 10 up0
ok $? "an agent with host0's node key joins: trawl cluster nodes lists host0 up"
until_ok 10 said jk "joined relay $DATA as host0"
ok $? "its log says it joined"
CL create jsess --nodes host0 > j-create.out 2>&1 && CL start jsess --nodes host0 > j-start.out 2>&1
is "$? $(grep -c '^host0  *ok ' j-start.out)" "0 1" "cluster create and start through the relay that authenticates: host0 acknowledged"
CL stop jsess --nodes host0 > j-stop.out 2>&1
is "$? $(grep -c '^host0  *ok ' j-stop.out)" "0 1" "... and stop"
# the relay restarted on the same port: the agent proves itself again
kill "$PID"
wait "$PID" 2> /dev/null
port=${DATA##*:}
start d2 --data "127.0.0.1:$port" --live 127.0.0.1:0 --secret-file cl.key --control "$TRASH/ctl.sock" ||
	bail "relay d2 did not start"
until_ok 30 up0
ok $? "the relay restarted on the same port: the agent joined it again, proven"
grep -q "node host0 joined" d2.log && ! grep -q refused d2.log
ok $? "... without a refusal in the new relay's log"
stop_agent
kill "$PID"
wait "$PID" 2> /dev/null
PID=""
finish
