#!/bin/sh
# A relay that cannot write what a producer sends cuts the trace at its last
# whole packet at once and tells the producer why (issue 28 item 8), on
# loopback.
#
# Checks: a relay whose files may not grow past 300 kB (prlimit --fsize:
# its writes fail, as on a full disk) leaves every stream file as long as
# its index says, readable by trawl print while the relay runs, and the
# producer says "File too large", not "Connection reset by peer"; a session
# over its disk quota: the producer says "Disk quota exceeded", and the
# relay serves the next session.
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v prlimit > /dev/null 2>&1 || skip_all "no prlimit (util-linux)"
plan 8

: > empty.conf
export TRAWL_CONFIG="$TRASH/empty.conf"
unset TRAWL_SECRET_FILE
PID=""
cleanup() { [ -n "$PID" ] && kill "$PID" 2> /dev/null; }
trap cleanup EXIT
bail() { echo "Bail out! $*"; exit 1; }
start() {	# start NAME [prlimit args] -- relay args: sets PID, DATA
	_nm=$1
	shift
	_pl=""
	while [ "$1" != -- ]; do _pl="$_pl $1"; shift; done
	shift
	rm -f "$_nm.fifo"
	mkfifo "$_nm.fifo" || return 1
	# shellcheck disable=SC2086
	prlimit $_pl "$TRAWL" relay -f -o "OUT-$_nm" --data 127.0.0.1:0 --live 127.0.0.1:0 \
		--ready-fd 3 "$@" 3> "$_nm.fifo" 2> "$_nm.log" &
	PID=$!
	_l=$(wait_ready "$_nm.fifo") || { cat "$_nm.log"; return 1; }
	# shellcheck disable=SC2086
	set -- $_l
	DATA=$2
}
stop() {
	kill -TERM "$PID" 2> /dev/null
	until_ok 10 gone "$PID" || kill -9 "$PID" 2> /dev/null
	wait "$PID" 2> /dev/null
	PID=""
}
# whole DIR: every stream file of the trace DIR is as long as its index
# entries say (the last one's offset, in bytes, and size, in bits)
whole() {
	for _f in "$1"/index/*.idx; do
		_s=$(basename "$_f" .idx)
		_want=$(python3 - "$_f" <<'PY'
import struct, sys
b = open(sys.argv[1], 'rb').read()
hl, el = 16, struct.unpack('>I', b[12:16])[0]
end = 0
for off in range(hl, len(b) - el + 1, el):
    o, sz = struct.unpack('>QQ', b[off:off + 16])
    end = o + sz // 8
print(end if (len(b) - hl) % el == 0 else -1)
PY
)
		[ "$(stat -c %s "$1/$_s")" = "$_want" ] || { echo "# $1/$_s: $(stat -c %s "$1/$_s") bytes, index says $_want"; return 1; }
	done
}

# ---- files that may not grow: as a full disk
start fsz --fsize=300000 -- || bail "the relay did not start"
"$TRAWL" simulate --relay "$DATA" --session s --hosts 1 -e 400000 -q > sim.out 2> sim.err
is "$?" 1 "the producer fails (exit 1)"
grep -q 'File too large' sim.err && ! grep -q 'reset by peer\|Broken pipe' sim.err
ok $? "and says the relay's reason ($(cat sim.err))"
grep -q 'File too large (the stream ends at its last whole packet)' fsz.log
ok $? "the relay logs the cut ($(grep -m1 'too large' fsz.log | cut -c1-160))"
n=0
for t in OUT-fsz/s/*/*/; do whole "$t" || n=$((n + 1)); done
is "$n" 0 "every stream file ends at its last whole packet, while the relay runs"
"$TRAWL" print OUT-fsz/s > print.out 2> print.err
ok $? "trawl print reads the session while the relay runs ($(wc -l < print.out) events; $(head -c 200 print.err))"
stop

# ---- a session over its disk quota
start quo -- --max-session-size 300K || bail "the relay did not start"
"$TRAWL" simulate --relay "$DATA" --session big --hosts 1 -e 400000 -q > q.out 2> q.err
grep -q 'Disk quota exceeded' q.err && ! grep -q 'reset by peer\|Broken pipe' q.err
ok $? "over its quota, the producer says why ($(cat q.err))"
"$TRAWL" simulate --relay "$DATA" --session small --hosts 1 -e 2000 -q > s.out 2> s.err
ok $? "the next session is served ($(cat s.err))"
n=0
for t in OUT-quo/big/*/*/; do whole "$t" || n=$((n + 1)); done
is "$n" 0 "the session over its quota ends at whole packets"
stop
finish
