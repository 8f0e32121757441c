#!/bin/sh
# No surprise left behind (issue 21): a failed `trawl record` does not block
# its own retry; a `trawl sync` that corrects nothing says so, stores nothing
# and print/info claim no correction; kernel presets for the families users
# expect (timer, power, ...), listed with their tracepoints, and a "did you
# mean" for an unknown one; --ready-fd of tcpcap and probe: what is sent
# right after the ready line is recorded.
. "$TRAWL_SRC/tests/e2e/lib.sh"

plan 34

TD=$(tracefs_dir)
KERNEL=no
if [ "$(id -u)" = 0 ] && [ -n "$TD" ] && [ -d "$TD/events" ]; then KERNEL=yes; fi
# without root, the same paths are taken by the user-space side alone
KOPT=
[ $KERNEL = yes ] || KOPT=--no-kernel
REC="--host h -q $KOPT"

# ---- item 5: a failed record does not block its retry
"$TRAWL" record -o R $REC -- /nonexistent/cmd > r1.out 2> r1.err
is $? 127 "record of a command that does not exist exits 127"
[ ! -e R ]
ok $? "... and leaves nothing behind (R did not exist before: it is gone)"
"$TRAWL" record -o R $REC -- /nonexistent/cmd > r2.out 2> r2.err
is "$?:$(grep -c 'exists' r2.err)" "127:0" "the same command again fails the same way, not with 'exists (use --force)'"
"$TRAWL" record -o R $REC -- true > r3.out 2> r3.err
r=$?
if [ $KERNEL = yes ]; then d=R/h/kernel; else d=R/h/ust; fi
[ $r -eq 0 ] && [ -f $d/metadata ]
ok $? "the retry with a command that exists records ($d/metadata)"
mkdir -p P/h
"$TRAWL" record -o P $REC -- /nonexistent/cmd > r4.out 2> r4.err
[ $? -eq 127 ] && [ -d P/h ] && [ -z "$(ls P/h)" ]
ok $? "a directory that existed before is kept (P/h, empty)"
"$TRAWL" record -o F --host h $KOPT -- sh -c 'exit 3' > r5.out 2> r5.err
r=$?
"$TRAWL" record -o F $REC -- true > r6.out 2> r6.err
r6=$?
[ $r -eq 3 ] && [ -f F/h/${d#R/h/}/metadata ] && [ $r6 -ne 0 ]
ok $? "a command that ran and failed (exit 3) keeps its trace, so the same record again is refused"
grep -q "^hint: .*--force" r5.err
ok $? "... and its record said how to record again (hint: --force)"
if [ $KERNEL = yes ]; then
	"$TRAWL" record -o K0 --host h -q -k nosuchpreset -- true > r7.out 2> r7.err
	[ $? -ne 0 ] && [ ! -e K0 ]
	ok $? "a bad -k event leaves nothing behind"
	# a port nobody listens on: one we bound and closed
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	"$TRAWL" record -o K1 --host h -q --relay 127.0.0.1:$port -- true > r8.out 2> r8.err
	[ $? -ne 0 ] && [ ! -e K1 ]
	ok $? "a relay that cannot be reached leaves nothing behind ($(head -1 r8.err))"
else
	skip "needs root and tracefs (kernel events)"
	skip "needs root and tracefs (kernel events)"
fi

# an agent that does not start (it refuses the rule it is given)
"$TRAWL" record -o A0 $REC -u 'x:*@nosuchlevel' -- true > r9.out 2> r9.err
[ $? -ne 0 ] && grep -q 'agent did not start' r9.err && [ ! -e A0 ]
ok $? "a user-space agent that does not start leaves nothing behind"

# ---- item 6: a sync that corrects nothing says so and stores nothing
"$TRAWL" sync R > s1.out 2> s1.err
is $? 0 "sync of a one-host session exits 0"
grep -q "no clock corrected: one host only" s1.err
ok $? "... says that no clock was corrected, and why ($(head -1 s1.err))"
[ ! -e R/sync.txt ]
ok $? "... and stores no sync.txt"
"$TRAWL" info R > i1.out 2> i1.err
"$TRAWL" print R > p1.out 2> p1.err
! grep -q 'clocks corrected' i1.err p1.err
ok $? "info and print then claim no correction"
# a result stored by an earlier trawl for this one host (as sync wrote it)
cat > R/sync.txt <<EOT
# trawl sync 1
groups 1
host h t0 0 y0 0 slope 1152921504606846976 quality reference reference h group 0 hops 0 path h first 0 last 0 bound_start 0 bound_mid 0 bound_end 0 bound_max 0
EOT
"$TRAWL" info R > i2.out 2> i2.err
! grep -q 'clocks corrected' i2.err && grep -q 'sync.txt: no clock corrected' i2.err
ok $? "info reads an earlier no-correction sync.txt truthfully ($(head -1 i2.err))"
"$TRAWL" sync R > s2.out 2> s2.err
[ ! -e R/sync.txt ] && grep -q "removed R/sync.txt" s2.err
ok $? "a sync that corrects nothing removes the earlier result, and says so"

# ---- item 7: kernel presets, their list, "did you mean"
if [ $KERNEL = yes ]; then
	"$TRAWL" record --list-kernel > list.out 2> list.err
	is $? 0 "record --list-kernel exits 0"
	bad=0 n=0
	for ev in $(awk '{ for (i = 2; i <= NF; i++) if ($i ~ /:/) print $i }' list.out); do
		n=$((n + 1))
		[ -f "$TD/events/${ev%%:*}/${ev#*:}/format" ] || { bad=$((bad + 1)); echo "# not in tracefs: $ev"; }
	done
	[ $n -gt 0 ] && [ $bad -eq 0 ]
	ok $? "every tracepoint it lists exists in this kernel's tracefs ($n)"
	for p in timer power workqueue signal kmem; do
		want=$(awk -v p=$p '$1 == p { print ($2 == "(none") ? "none" : "some" }' list.out)
		have=none
		[ -n "$(awk -v p=$p '$1 == p' list.out)" ] || want=missing
		[ -d "$TD/events/$p" ] && ls "$TD/events/$p" | grep -qv '^enable$\|^filter$' && have=some
		# a preset lists some events when its subsystem has some it names
		case "$want:$have" in some:some|none:none|none:some) r=0;; *) r=1;; esac
		ok $r "--list-kernel lists preset $p ($want; tracefs has $have)"
	done
	for p in timer power; do
		if ! [ -d "$TD/events/$p" ] || ! ls "$TD/events/$p" | grep -qv '^enable$\|^filter$'; then
			skip "-k $p: this kernel has none of its tracepoints"
			skip "-k $p: this kernel has none of its tracepoints"
			continue
		fi
		# a command that sleeps: timers fire, CPUs go idle (not while
		# other jobs keep every CPU busy); it also holds a CPU latency
		# request (opening /dev/cpu_dma_latency adds one, closing removes
		# it: power:pm_qos_add_request and _remove_request), a power event
		# however busy the CPUs are
		"$TRAWL" record -o K$p --host h -k $p -- sh -c \
			'sleep 0.2; { [ -c /dev/cpu_dma_latency ] && exec 3> /dev/cpu_dma_latency; } 2> /dev/null; sleep 0.2' \
			> k$p.out 2> k$p.err
		is $? 0 "record -k $p exits 0 (it is a preset now)"
		"$TRAWL" print K$p > k$p.txt 2> /dev/null
		got=$(awk '{ for (i = 1; i <= NF; i++) if ($i ~ /:$/ && $i !~ /^\[/) { print $i; break } }' k$p.txt |
			sed 's/:$//' | grep -v '^lttng_statedump' | sort -u | tr '\n' ' ')
		# each name as trawl writes it (timer_hrtimer_start, power_cpu_idle,
		# tick_stop) ends with a tracepoint the preset lists
		awk -v p=$p '$1 == p { for (i = 2; i <= NF; i++) { sub(/^[^:]*:/, "", $i); print $i } }' \
			list.out > k$p.listed
		other=
		for e in $got; do
			awk -v e="$e" '{ n = length($0) } n <= length(e) && substr(e, length(e) - n + 1) == $0 { f = 1 }
				END { exit !f }' k$p.listed || other="$other $e"
		done
		case "$got" in
		"") skip "-k $p: no event of the family happened while recording (nothing to check)";;
		*) is "$other" "" "-k $p records events of its tracepoints only ($got)";;
		esac
	done
	"$TRAWL" record -o Kx --host h -k timr -- true > dym.out 2> dym.err
	r=$?
	[ $r -ne 0 ] && grep -q "^hint: did you mean 'timer'" dym.err && [ ! -e Kx ]
	ok $? "an unknown preset gets a did-you-mean ($(tail -1 dym.err))"
	presets=$(sed -n 's/^\([a-z_0-9]*\) .*/\1/p' list.out)
	sys=$(ls "$TD/events" | while read -r s; do
		[ -d "$TD/events/$s" ] && ! echo "$presets" | grep -qx "$s" &&
			[ "$(ls "$TD/events/$s" | grep -cv '^enable$\|^filter$')" -gt 0 ] && echo "$s"
	done | head -1)
	if [ -n "$sys" ]; then
		"$TRAWL" record -o Ky --host h -k "$sys" -- true > sub.out 2> sub.err
		[ $? -ne 0 ] && grep -q "^hint: '$sys:\*' selects every event of the $sys subsystem" sub.err
		ok $? "a subsystem's name gets how to select all its events ($(tail -1 sub.err))"
	else
		skip "every subsystem of this kernel is a preset"
	fi
	"$TRAWL" record -o Kz --host h -k sched:sched_swich -- true > ev.out 2> ev.err
	[ $? -ne 0 ] && grep -q "^hint: did you mean 'sched:sched_switch'" ev.err
	ok $? "a misspelled tracepoint gets a did-you-mean ($(tail -1 ev.err))"
else
	for i in $(seq 14); do skip "needs root and tracefs (kernel events)"; done
fi

# ---- item 9: --ready-fd
mkfifo probe.ready
"$TRAWL" probe -o Q --host q --listen 127.0.0.1:0 --duration 30 --ready-fd 3 3> probe.ready \
	> probe.out 2> probe.err &
PQ=$!
line=$(wait_ready probe.ready)
case "$line" in "ready 127.0.0.1:"[1-9]*) r=0;; *) r=1;; esac
ok $r "probe --ready-fd: '$line' once listening (the port it took)"
kill -INT $PQ 2> /dev/null
wait $PQ
"$TRAWL" tcpcap --ready-fd 99 -o T > bad.out 2> bad.err
is $? 2 "tcpcap --ready-fd of a descriptor that is not open: usage error"

if [ "$(id -u)" != 0 ] || ! command -v python3 > /dev/null 2>&1; then
	skip "tcpcap needs root and python3"
	skip "tcpcap needs root and python3"
	skip "tcpcap needs root and python3"
	finish
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkfifo tcp.ready
"$TRAWL" tcpcap -o C --host c --port $port --duration 120 --ready-fd 3 3> tcp.ready \
	> tcp.out 2> tcp.err &
PT=$!
line=$(wait_ready tcp.ready)
r=$?
if [ $r -ne 0 ] && grep -q 'without eBPF support\|cannot load the eBPF\|cannot attach\|cannot open the eBPF' tcp.err; then
	skip "$(grep -m1 'tcpcap' tcp.err)"
	skip "no eBPF here"
	skip "no eBPF here"
	finish
fi
ok $r "tcpcap --ready-fd: '$line' once attached"
# right after the ready line: a connection and 5 messages of 100 bytes, each echoed
python3 -c 'import socket, sys
p = int(sys.argv[1])
s = socket.socket(); s.bind(("127.0.0.1", p)); s.listen(1)
c = socket.create_connection(("127.0.0.1", p)); a, _ = s.accept()
for i in range(5):
    c.sendall(b"x" * 100)
    d = b""
    while len(d) < 100: d += a.recv(100 - len(d))
    a.sendall(d)
    d = b""
    while len(d) < 100: d += c.recv(100 - len(d))
c.close(); a.close()' $port
kill -INT $PT
wait $PT
"$TRAWL" print C > tcp.txt 2> /dev/null
syn=$(grep -c "tcp_send: .* dport = $port, .*flags = 0x2, len = 0 }" tcp.txt)
data=$(grep -c "tcp_send: .* dport = $port, .* len = 100 }" tcp.txt)
is "$syn:$data" "1:5" "the connection's SYN and its 5 messages, sent right after the ready line, are recorded"
finish
