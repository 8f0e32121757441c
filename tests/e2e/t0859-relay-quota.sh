#!/bin/sh
# Disk quotas per host of a session, and the disk's reserve (issue 28 item
# 7), on loopback.
#
# Checks: a host of a session over --max-session-size is refused with the
# real figures (the message that would go over, what it used, the limit),
# and another host of the same session is served after it. On a file system
# of 24 MiB (a tmpfs in a mount namespace of the relay's own: root only), a
# session that would fill it is refused once 6 MiB are left
# (--disk-reserve), its producer told "No space left on device", its
# streams whole; another session is then served with every event.
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v python3 > /dev/null 2>&1 || skip_all "no python3 (the raw producer)"
plan 7

: > empty.conf
export TRAWL_CONFIG="$TRASH/empty.conf"
unset TRAWL_SECRET_FILE
PID=""
cleanup() { [ -n "$PID" ] && kill "$PID" 2> /dev/null; }
trap cleanup EXIT
bail() { echo "Bail out! $*"; exit 1; }
# start NAME CMD...: runs CMD (a relay writing its ready line on fd 3)
start() {
	_nm=$1
	shift
	rm -f "$_nm.fifo"
	mkfifo "$_nm.fifo" || return 1
	"$@" 3> "$_nm.fifo" 2> "$_nm.log" &
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
whole() {	# whole DIR: every stream file as long as its index says
	for _f in "$1"/index/*.idx; do
		_s=$(basename "$_f" .idx)
		_want=$(python3 -c '
import struct, sys
b = open(sys.argv[1], "rb").read()
el, end = struct.unpack(">I", b[12:16])[0], 0
for off in range(16, len(b) - el + 1, el):
    o, sz = struct.unpack(">QQ", b[off:off + 16])
    end = o + sz // 8
print(end if (len(b) - 16) % el == 0 else -1)' "$_f")
		[ "$(stat -c %s "$1/$_s")" = "$_want" ] || return 1
	done
}

# ---- per host
start quo "$TRAWL" relay -f -o OUT --data 127.0.0.1:0 --live 127.0.0.1:0 --ready-fd 3 \
	--max-session-size 300K || bail "the relay did not start"
"$TRAWL" simulate --relay "$DATA" --session q --hosts 1 -e 400000 -q > big.out 2> big.err
grep -q 'Disk quota exceeded' big.err
ok $? "host0 of session q goes over its quota: its producer says so ($(cat big.err))"
line=$(grep -m1 'host host0 of session q: a message of' quo.log)
set -- $(echo "$line" | sed -n 's/.*a message of \([0-9]*\) bytes would take it past its disk quota (\([0-9]*\) of \([0-9]*\) bytes used.*/\1 \2 \3/p')
[ "$#" -eq 3 ] && [ "$3" = 307200 ] && [ "$2" -le "$3" ] && [ $(($1 + $2)) -gt "$3" ]
ok $? "the reason has the real figures: the message, what was used, the limit ($*: $(echo "$line" | cut -c1-200))"
python3 "$TRAWL_SRC/tests/e2e/hostile-peer.py" produce "$DATA" q other ust 2 > other.out 2>&1
is "$(tr '\n' '|' < other.out)" "welcome 0 |ack 0|" "another host of the same session is served after it"
stop

# ---- the disk's reserve
if [ "$(id -u)" != 0 ] || ! command -v unshare > /dev/null 2>&1 ||
	! command -v nsenter > /dev/null 2>&1 ||
	! unshare -m sh -c 'mount -t tmpfs -o size=1m tmpfs "$1"' sh "$TRASH" 2> /dev/null; then
	for i in 1 2 3 4; do skip "no tmpfs of the relay's own (root and unshare -m)"; done
	finish
fi
mkdir fs
start res unshare -m sh -c 'mount -t tmpfs -o size=24m tmpfs "$1" && shift && exec "$@"' sh \
	"$TRASH/fs" "$TRAWL" relay -f -o "$TRASH/fs/out" --data 127.0.0.1:0 --live 127.0.0.1:0 \
	--ready-fd 3 --disk-reserve 6M || bail "the relay in its namespace did not start"
FS=/proc/$PID/root$TRASH/fs/out
"$TRAWL" simulate --relay "$DATA" --session full --hosts 1 -e 600000 -q > full.out 2> full.err
grep -q 'No space left on device' full.err
ok $? "a session that would fill the disk is refused in time ($(cat full.err))"
grep -q 'session full: the disk is nearly full .*--disk-reserve' res.log
ok $? "the relay says why ($(grep -m1 'nearly full' res.log | cut -c1-160))"
n=0
for t in "$FS"/full/*/*/; do whole "$t" || n=$((n + 1)); done
is "$n" 0 "its streams end at whole packets"
"$TRAWL" simulate --relay "$DATA" --session small --hosts 1 -e 20000 -q > small.out 2> small.err
rc=$?
# read in the relay's mount namespace (a path through /proc/PID/root is
# resolved back to this one's)
ev=$(nsenter -m -t "$PID" "$TRAWL" info "$TRASH/fs/out/small" 2> /dev/null |
	sed -n 's/^total: .* \([0-9]*\) events, .*/\1/p')
is "$rc:$ev" "0:20000" "another session is then served, every event stored ($(cat small.err))"
stop
finish
