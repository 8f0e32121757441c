#!/bin/sh
# The relay attacked by peers on loopback (issue 20): every limit holds, the
# newcomer over one is refused with a reason, and everyone else is served.
#
# Checks: out of file descriptors (prlimit 48, 60 idle connections), the
# relay neither spins nor floods its log, and SIGTERM still stops it; with
# its pool, and without (--fd-pool-size over the limit: accept4 gets
# EMFILE); six connections declaring 64 MiB packets, before HELLO and after
# it, leave its memory within its caps; a HELLO sent one byte a second and a
# silent viewer are closed after their timeouts, a quiet producer is not;
# producers do not lock viewers out, nor viewers producers; the
# files of a trace that ended are closed although its session goes on.
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v python3 > /dev/null 2>&1 || skip_all "no python3 (the hostile peers)"
command -v prlimit > /dev/null 2>&1 || skip_all "no prlimit (util-linux)"
plan 23

: > empty.conf
export TRAWL_CONFIG="$TRASH/empty.conf"
PEER="$TRAWL_SRC/tests/e2e/hostile-peer.py"
PID="" pids=""
cleanup() {
	for p in $pids; do kill "$p" 2> /dev/null; done
	# a relay deaf to SIGTERM (as before the fix) is killed
	[ -n "$PID" ] && kill -9 "$PID" 2> /dev/null
	touch "$TRASH/end" "$TRASH/end2" "$TRASH/end3" "$TRASH/end4" "$TRASH/end5" 2> /dev/null
}
trap cleanup EXIT
trap 'cleanup; exit 1' INT TERM HUP
bail() { echo "Bail out! $*"; exit 1; }
# dead PID: exited (a zombie of this shell counts: kill -0 would see it)
dead() { [ ! -e "/proc/$1" ] || [ "$(awk '{ print $3 }' "/proc/$1/stat" 2> /dev/null)" = Z ]; }
# start NAME NOFILE ARGS...: a relay in the foreground (NOFILE: its
# descriptor limit through prlimit, or -), its log in NAME.log; sets PID,
# DATA and LIVE
start() {
	_nm=$1 _lim=$2
	shift 2
	rm -f "$_nm.fifo"
	mkfifo "$_nm.fifo" || return 1
	if [ "$_lim" = - ]; then
		"$TRAWL" relay -f -o "OUT-$_nm" --data 127.0.0.1:0 --live 127.0.0.1:0 \
			--ready-fd 3 "$@" 3> "$_nm.fifo" 2> "$_nm.log" &
	else
		prlimit --nofile="$_lim:$_lim" "$TRAWL" relay -f -o "OUT-$_nm" --data 127.0.0.1:0 \
			--live 127.0.0.1:0 --ready-fd 3 "$@" 3> "$_nm.fifo" 2> "$_nm.log" &
	fi
	PID=$!
	_l=$(wait_ready "$_nm.fifo") || { cat "$_nm.log"; return 1; }
	# shellcheck disable=SC2086
	set -- $_l
	DATA=$2 LIVE=$3
}
# stop: SIGTERM, then the relay must be gone within 5 s (0), else killed (1)
stop() {
	kill -TERM "$PID" 2> /dev/null
	until_ok 5 dead "$PID"
	_r=$?
	[ $_r -eq 0 ] || kill -9 "$PID" 2> /dev/null
	wait "$PID" 2> /dev/null
	PID=""
	return $_r
}
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# busy_ns PID: the time its threads ran or waited to run, from schedstat
busy_ns() { cat /proc/"$1"/task/*/schedstat 2> /dev/null | awk '{ n += $1 + $2 } END { printf "%.0f\n", n }'; }
hwm_kb() { awk '/^VmHWM:/ { print $2 }' "/proc/$1/status"; }
nfd() { ls "/proc/$1/fd" | wc -l; }
HZ=$(getconf CLK_TCK)

# ---- 1. out of descriptors: 60 idle connections to a relay limited to 48
# cpu_quiet NAME: over a 3 s window, the relay was busy little. Why these
# margins: a relay that spins (the loop it had: accept4 EMFILE, the spare
# descriptor given up, EAGAIN, again) is on the CPU or waiting for it the
# whole window, ~100 %, however loaded the machine (waiting counts; this
# suite runs at nice 19 beside other work); one that waits in epoll_wait is
# busy a few % (its 250 ms sweep). So < 50 % of the window runnable (from
# schedstat) and < 30 % of it on the CPU (ticks of /proc/PID/stat) leave a
# wide margin both ways.
cpu_quiet() {
	_t0=$(ticks "$PID") _b0=$(busy_ns "$PID")
	sleep 3
	_t1=$(ticks "$PID") _b1=$(busy_ns "$PID")
	CPU=$(( (_t1 - _t0) * 100 / (3 * HZ) ))
	BUSY=$(( (_b1 - _b0) / 30000000 ))
	[ "$CPU" -lt 30 ] && { [ ! -r "/proc/$PID/schedstat" ] || [ "$BUSY" -lt 50 ]; }
}
emfile_case() {	# emfile_case NAME WHAT ARGS...
	_c=$1 _w=$2
	shift 2
	rm -f end
	start "$_c" 48 "$@" || bail "relay $_c did not start"
	python3 "$PEER" idle 60 "$DATA" "$TRASH/end" > "$_c.idle" 2>&1 &
	_idle=$!
	pids="$pids $_idle"
	until_ok 30 has_lines "$_c.idle" 1
	cpu_quiet
	ok $? "$_w: 60 idle connections at 48 descriptors: the relay does not spin (CPU $CPU % of 3 s, runnable $BUSY %; < 30, < 50)"
	_sz=$(wc -c < "$_c.log") _lines=$(grep -c 'refused\|out of file descriptors' "$_c.log")
	[ "$_sz" -lt 65536 ] && [ "$_lines" -le 4 ]
	ok $? "$_w: one log line per episode ($_lines lines about refusals, $_sz bytes of log; <= 4, < 64 KiB)"
	touch end
	until_ok 30 gone "$_idle"
	# the connections closed are freed (their EOF read): a real producer
	until_ok 20 eval 'python3 "$PEER" produce "$DATA" real h ust 2 > "$_c.prod" 2>&1 &&
		grep -q "^ack 0" "$_c.prod"'
	ok $? "$_w: once they are gone, a real producer is served ($(tr '\n' ' ' < "$_c.prod"))"
	stop
	ok $? "$_w: SIGTERM stops the relay within 5 s"
}
emfile_case p1 "its pool (48 less 16)"
emfile_case p2 "--fd-pool-size 1000, over the limit (accept4 EMFILE)" --fd-pool-size 1000

# ---- 2. memory: six connections each declaring a 64 MiB PACKET
# (ThreadSanitizer maps about 4 bytes of shadow per byte of heap touched:
# its relay's growth is 5 times the buffers')
mf=1
case "$TRAWL_BUILD" in *-thread*) mf=5 ;; esac
start mem - --max-total-buffer 100M || bail "relay mem did not start"
h0=$(hwm_kb "$PID")
python3 "$PEER" declare 6 "$DATA" 0 > decl0.out 2>&1
h1=$(hwm_kb "$PID")
# before HELLO, nothing larger than a HELLO (1 KiB) is buffered: what the
# relay holds is its read buffer of 64 KiB per connection; 16 MiB of slack
[ "$h1" -lt $((h0 + 16384 * mf)) ]
ok $? "before HELLO: peak RSS ${h0} -> ${h1} KiB (< +$((16 * mf)) MiB; MiB sent each: $(cat decl0.out))"
python3 "$PEER" declare 6 "$DATA" 1 > decl1.out 2>&1
h2=$(hwm_kb "$PID")
# after HELLO, the buffers of all connections hold at most 100 MiB
# (--max-total-buffer), plus 16 MiB of slack
[ "$h2" -lt $((h0 + (102400 + 16384) * mf)) ]
ok $? "after HELLO: peak RSS ${h0} -> ${h2} KiB (< +$((116 * mf)) MiB: --max-total-buffer 100M; MiB sent each: $(cat decl1.out))"
cut=$(tr ' ' '\n' < decl1.out | awk '$1 < 64' | wc -l)
[ "$cut" -ge 5 ]
ok $? "at least 5 of the 6 were cut off before their 64 MiB ($cut)"
grep -q 'max-total-buffer' mem.log
ok $? "the relay says why ($(grep -m1 'max-total-buffer' mem.log | cut -c1-150))"
stop || bail "relay mem did not stop"

# ---- 3. timeouts: 2 s by option
start tmo - --message-timeout 2 --idle-timeout 2 || bail "relay tmo did not start"
python3 "$PEER" slow "$DATA" 15 > slow.out 2>&1
s=$(sed -n 's/^closed after \([0-9]*\)\..*/\1/p' slow.out)
[ -n "$s" ] && [ "$s" -ge 1 ] && [ "$s" -le 8 ]
ok $? "a HELLO sent one byte a second is closed after --message-timeout 2 ($(cat slow.out))"
python3 "$PEER" quiet-viewer "$LIVE" 15 > qv.out 2>&1
s=$(sed -n 's/^closed after \([0-9]*\)\..*/\1/p' qv.out)
[ -n "$s" ] && [ "$s" -ge 1 ] && [ "$s" -le 8 ]
ok $? "a viewer silent after CONNECT is closed after --idle-timeout 2 ($(cat qv.out))"
# a producer may stay quiet: it records nothing now
python3 "$PEER" produce "$DATA" quiet h ust 1 "$TRASH/end2" > quiet.out 2>&1 &
qp=$!
until_ok 10 has_lines quiet.out 1
# the positive signal that the idle timer ran meanwhile: a viewer silent
# since after the producer's HELLO is closed for it (no sleep decides)
python3 "$PEER" quiet-viewer "$LIVE" 15 > qv2.out 2>&1
touch end2
until_ok 10 gone "$qp"
grep -q '^ack 0' quiet.out && grep -q '^closed after' qv2.out
ok $? "a producer quiet while a silent viewer is closed (--idle-timeout 2) is kept ($(tr '\n' ' ' < quiet.out); viewer: $(cat qv2.out))"
stop || bail "relay tmo did not stop"

# ---- 4. producers and viewers have limits of their own
# (producers that said HELLO and viewers that said CONNECT: connections that
# prove nothing are pending, and the oldest of them gives way to a
# newcomer, t0857)
start lim - --max-producers 20 --max-viewers 5 || bail "relay lim did not start"
p3=""
for i in $(seq 20); do
	python3 "$PEER" produce "$DATA" hold "h$i" ust 0 "$TRASH/end3" > "hold$i.out" 2>&1 &
	p3="$p3 $!"
done
pids="$pids $p3"
until_ok 30 eval 'test "$(cat hold*.out 2> /dev/null | grep -c "^welcome 0")" -eq 20'
until_ok 20 eval 'python3 "$PEER" produce "$DATA" extra h ust 0 > p21.out 2>&1; grep -q "^welcome -" p21.out'
grep -q 'max-producers' p21.out
ok $? "20 producers: the 21st is refused with the reason ($(cut -c1-100 p21.out))"
python3 "$PEER" viewer "$LIVE" > v1.out 2>&1
is "$(cat v1.out)" served "and a viewer is served meanwhile"
touch end3
for p in $p3; do until_ok 30 gone "$p"; done
v4=""
# each holds a slot: one the relay refuses, while it still releases the
# viewers before (a loaded machine), is started again; the relay's answer
# (connected or refused) is the signal
for i in 1 2 3 4 5; do
	n=0
	while :; do
		python3 "$PEER" quiet-viewer "$LIVE" 120 > "qv4-$i.out" 2>&1 &
		qp=$!
		until_ok 20 grep -qE '^(connected|refused)' "qv4-$i.out" ||
			{ kill "$qp"; bail "viewer $i: no answer from the relay in 20 s"; }
		grep -q '^connected' "qv4-$i.out" && break
		wait "$qp"
		n=$((n + 1))
		[ "$n" -lt 50 ] || bail "viewer $i: refused 50 times (the relay releases no slot)"
	done
	v4="$v4 $qp"
done
pids="$pids $v4"
until_ok 30 eval 'python3 "$PEER" viewer "$LIVE" > v6.out 2>&1; grep -q closed v6.out'
ok $? "5 viewers: the 6th is refused ($(grep -m1 'viewer.*refused' lim.log | cut -c1-120))"
until_ok 20 eval 'python3 "$PEER" produce "$DATA" real h ust 1 > p1.out 2>&1; grep -q "^ack 0" p1.out'
ok $? "and a producer is served meanwhile ($(tr '\n' ' ' < p1.out))"
for p in $v4; do kill "$p" 2> /dev/null; done
stop || bail "relay lim did not stop"

# ---- 5. the files of a trace that ended, while its session goes on
start fds - || bail "relay fds did not start"
python3 "$PEER" produce "$DATA" s h kernel 1 "$TRASH/end5" > open.out 2>&1 &
op=$!
pids="$pids $op"
until_ok 10 has_lines open.out 1
until_ok 10 test "$(ls OUT-fds/s/h/kernel/ 2> /dev/null | grep -c stream_)" -ge 1
f0=$(nfd "$PID")
python3 "$PEER" produce "$DATA" s h ust 500 > ended.out 2>&1
f1=$(nfd "$PID")
grep -q '^ack 0' ended.out && [ "$f1" -le $((f0 + 2)) ]
ok $? "a trace of 500 streams that ended holds no descriptor while its session goes on ($f0 -> $f1 open)"
n=$(ls OUT-fds/s/h/ust/ | grep -c stream_)
is "$n" 500 "its 500 stream files stay on the disk"
touch end5
until_ok 10 gone "$op"
grep -q '^ack 0' open.out
ok $? "the session's open trace completes ($(tr '\n' ' ' < open.out))"
stop
ok $? "SIGTERM stops the relay"
finish
