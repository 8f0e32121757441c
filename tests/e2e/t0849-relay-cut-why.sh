#!/bin/sh
# A producer that the relay cuts off says the relay's sentence, not the
# errno's words alone (issue 28, item 8): trawl simulate --relay to a relay
# whose files may not grow past 300 kB (prlimit --fsize: as a full disk)
# names the relay, the stream cut and why; with a local copy (-o), its
# warning says the same and the local trace is whole. On loopback.
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v prlimit > /dev/null 2>&1 || skip_all "no prlimit (util-linux)"
plan 5

: > empty.conf
export TRAWL_CONFIG="$TRASH/empty.conf"
unset TRAWL_SECRET_FILE
PID=""
cleanup() { [ -n "$PID" ] && kill "$PID" 2> /dev/null; }
trap cleanup EXIT
mkfifo r.fifo
prlimit --fsize=300000 "$TRAWL" relay -f -o OUT --data 127.0.0.1:0 --live 127.0.0.1:0 \
	--ready-fd 3 3> r.fifo 2> relay.log &
PID=$!
l=$(wait_ready r.fifo) || { cat relay.log; echo "Bail out! the relay did not start"; exit 1; }
# shellcheck disable=SC2086
set -- $l
DATA=$2

"$TRAWL" simulate --relay "$DATA" --session s --hosts 1 -e 400000 -q > sim.out 2> sim.err
rc=$?
grep -Eqx "trawl simulate: relay $DATA cut the trace off: s/host0/kernel/channel0_[0-9]+: File too large \(the stream ends at its last whole packet\)" sim.err
is "$rc|$?|$(lines sim.err)" "1|0|1" \
	"streamed only: exit 1, the relay's sentence on one line ($(cat sim.err))"

"$TRAWL" simulate --relay "$DATA" --session t -o LOC --hosts 1 -e 400000 -q > loc.out 2> loc.err
rc=$?
n=0
for d in kernel ust; do
	grep -Eqx "trawl simulate: warning: LOC/host0/$d: the relay was lost \(t/host0/$d/channel0_[0-9]+: File too large \(the stream ends at its last whole packet\)\): only the local copy is complete" loc.err ||
		n=$((n + 1))
done
is "$rc|$n" "0|0" "with a local copy: exit 0, each trace's warning says the relay's reason ($(tr '\n' '|' < loc.err))"
"$TRAWL" info LOC > info.out 2> info.err
ok $? "the local copy reads"
is "$(sed -n 's/^total: .*, \([0-9]*\) events, \([0-9]*\) discarded,.*/\1 \2/p' info.out)" "400000 0" \
	"... with all 400000 events, none discarded"
kill "$PID"
until_ok 10 gone "$PID" || kill -9 "$PID" 2> /dev/null
wait "$PID" 2> /dev/null

# ---- over a disk quota: the errno's words and the relay's figures
mkfifo q.fifo
"$TRAWL" relay -f -o OUTQ --data 127.0.0.1:0 --live 127.0.0.1:0 --max-session-size 300K \
	--ready-fd 3 3> q.fifo 2> relayq.log &
PID=$!
l=$(wait_ready q.fifo) || { cat relayq.log; echo "Bail out! the relay did not start"; exit 1; }
# shellcheck disable=SC2086
set -- $l
"$TRAWL" simulate --relay "$2" --session big --hosts 1 -e 400000 -q > q.out 2> q.err
rc=$?
grep -Eqx "trawl simulate: relay $2 cut the trace off \(Disk quota exceeded\): host host0 of session big: a message of [0-9]+ bytes would take it past its disk quota \([0-9]+ of 307200 bytes used; --max-session-size, per host\)" q.err
is "$rc|$?|$(lines q.err)" "1|0|1" "over its quota: the errno's words and the relay's sentence ($(cat q.err))"
finish
