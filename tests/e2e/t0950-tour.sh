#!/bin/sh
# The README's tour, run end to end as a newcomer would: every command of
# its sh block, in order, read from README.md itself (edit the tour and this
# test runs the new text), and the two C programs it shows (my-program.c,
# the instrumented program the tour records; reader.c, the reading program)
# extracted and built with the commands the README gives.
#
# How a line of the tour is mapped to this machine (nothing else changes):
#  - it runs in this test's trash directory, which looks like the source
#    tree to it: build -> the build directory, include -> include/;
#    `build/trawl` is $TRAWL; `make` is make of this build (O=, SAN= as
#    make check gave them); `cc` gets the sanitizer flags of a SAN build;
#  - /tmp/X and /srv/X are tmp/X and srv/X here;
#  - `build/trawl agent` gets --pidfile (the agent detaches once it
#    listens: its return is the ready signal); the agent's socket is a
#    private one (TRAWL_AGENT_SOCKET);
#  - `trawl probe` lines ("# on NODE") run at once in the background, each
#    in a network namespace of its own whose address is the one the other
#    lines give NODE (--peer NODE=ADDR:PORT), on a bridge (as
#    t0620-sync-netns does); `--duration S` is $DUR s. Without namespaces:
#    on loopback, each node's address 127.0.0.K with --listen there. The
#    probes have no ready signal: the first sends of one may reach a peer
#    not yet listening (counted as failed; the rest suffice);
#  - `trawl relay` gets --data and --live on 127.0.0.1 port 0 and
#    --pidfile; it detaches once listening and prints where: those
#    addresses replace `collector` in the lines after it;
#  - `record --relay` ("# on every node") runs once per node of the probe
#    lines (--host NODE added), in the background; `./server` is a script
#    that runs ./my-program, then waits until this test releases it;
#  - the live viewers (`--live`, `-i lttng-live`) start in the background
#    once every node's session is listed at the relay; once each shows the
#    tracepoints of every node it reads, the servers are released, and the
#    viewers end by themselves when the nodes' records end.
# Checks are on values, not wording: exit statuses, event counts that agree
# between info, print, babeltrace2, the live viewers and the reading
# program, the hosts, sync's offsets within their bounds, JSON that parses.
. "$TRAWL_SRC/tests/e2e/lib.sh"

README="$TRAWL_SRC/README.md"
[ "$(id -u)" -eq 0 ] || skip_all "the tour records kernel events: needs root"
[ -n "$(tracefs_dir)" ] || skip_all "the tour records kernel events: no tracefs mounted"
command -v babeltrace2 > /dev/null 2>&1 || skip_all "babeltrace2 is not installed (the tour uses it)"
command -v "${CC:-cc}" > /dev/null 2>&1 || skip_all "no C compiler (the tour builds programs)"
command -v python3 > /dev/null 2>&1 || skip_all "no python3 (to parse the JSON output)"

DUR=2			# the probes' --duration
: > empty.conf
export TRAWL_CONFIG="$TRASH/empty.conf" TRAWL_AGENT_SOCKET="$TRASH/agent.sock" TRAWL
P=trawl-tour-$$
pids=""		# this shell's children still running
# reap PID: waits for a child of ours; its exit status
reap() {
	wait "$1"
	_rc=$?
	pids=$(for _q in $pids; do [ "$_q" = "$1" ] || echo "$_q"; done)
	return $_rc
}
# daemon PIDFILE: the pid of the tour's detached daemon (agent, relay), if
# it still runs as trawl
daemon() {
	_d=$(cat "$1" 2> /dev/null)
	[ -n "$_d" ] && grep -q trawl "/proc/$_d/cmdline" 2> /dev/null && echo "$_d"
}
cleanup() {
	for p in $pids; do kill "$p" 2> /dev/null; done
	for f in agent.pid relay.pid; do d=$(daemon "$f") && kill "$d"; done
	for n in $NODES; do ip netns del "$P-$n" 2> /dev/null; done
	ip netns del "$P-br" 2> /dev/null
}
NODES=""
trap cleanup EXIT
trap 'cleanup; exit 1' INT TERM HUP
bail() { echo "Bail out! $*"; exit 1; }

# ---- the README's text: the tour (its sh block), its two C programs, and
# what the README says the reading program prints
awk '/^## A short tour/ { t = 1; next } t && /^## / { exit } t' "$README" > tour.md
awk '/^```sh$/ { f = 1; next } f && /^```$/ { exit } f' tour.md > tour.sh
awk '/^```c$/ { f = 1; b = ""; next } f && /^```$/ { f = 0; print b > ("block" ++n ".c"); next }
     f { b = b $0 "\n" }' tour.md
for b in block*.c; do
	grep -q '<trawl/tracepoint.h>' "$b" && mv "$b" my-program.c
	grep -q '<trawl/pipe.h>' "$b" 2> /dev/null && mv "$b" reader.c
done
[ -s tour.sh ] && [ -s my-program.c ] && [ -s reader.c ] ||
	bail "README.md: no tour (## A short tour, a sh block, a C program with trawl/tracepoint.h, one with trawl/pipe.h)"
# the commands: the sh block's lines, less comments and blank lines
sed -e 's/^[[:space:]]*#.*//' tour.sh | grep -v '^[[:space:]]*$' > tour.cmds
ncmds=$(wc -l < tour.cmds)
echo "# the tour: $ncmds commands"
# the reading program: its build command (a comment of it), and the two
# commands the prose before it says print the same number
rd_cc=$(sed -n 's#.*/\* *\(cc .*\) *\*/.*#\1#p' reader.c | head -1)
rd_name=$(printf '%s\n' "$rd_cc" | sed -n 's/.* -o \([^ ]*\).*/\1/p')
awk '/^```/ { f = !f; next } !f' tour.md | tr '\n' ' ' | grep -o '`[^`]*`' | tr -d '`' > prose.cmds
rd_run=$(grep "^\\./$rd_name " prose.cmds | tail -1)
rd_grep=$(grep '^trawl print .*grep -c' prose.cmds | tail -1)

# ---- the trash directory as the source tree
ln -s "$TRAWL_BUILD" build
ln -s "$TRAWL_SRC/include" include
mkdir -p tmp srv
san=${TRAWL_SAN:+-fsanitize=$TRAWL_SAN}
# server: the tour's long-running program on every node
cat > server << 'EOF'
#!/bin/sh
./my-program || exit 1
i=0
until [ -e server.stop ] || [ $i -ge 3000 ]; do sleep 0.05; i=$((i + 1)); done
EOF
chmod +x server

# ---- the nodes of the probe lines: "NAME ADDR" (--host NAME; ADDR from
# the --peer NAME=ADDR:PORT of the other lines)
grep 'trawl probe' tour.cmds | sed -n 's/.*--host \([^ ]*\).*/\1/p' > nodes.txt
grep 'trawl probe' tour.cmds | grep -o -- '--peer [^ ]*' | sed 's/--peer \([^=]*\)=\(.*\):[0-9]*$/\1 \2/' |
	sort -u > peers.txt
NODES=$(echo $(cat nodes.txt))
[ -n "$NODES" ] || NODES="node1 node2"
addr_of() { awk -v n="$1" '$1 == n { print $2; exit }' peers.txt; }
NETNS=no
if [ -s nodes.txt ]; then
	if command -v ip > /dev/null 2>&1 && ip netns add "$P-br" 2> netns.err; then
		NETNS=yes
		ip -n "$P-br" link add br0 type bridge && ip -n "$P-br" link set br0 up || NETNS=no
		k=0
		for n in $NODES; do
			[ $NETNS = yes ] || break
			a=$(addr_of "$n")
			[ -n "$a" ] || bail "the tour gives $n no address (--peer $n=ADDR:PORT)"
			k=$((k + 1))
			ip netns add "$P-$n" &&
				ip link add eth0 netns "$P-$n" type veth peer name "p$k" netns "$P-br" &&
				ip -n "$P-br" link set "p$k" master br0 && ip -n "$P-br" link set "p$k" up &&
				ip -n "$P-$n" addr add "$a/32" dev eth0 && ip -n "$P-$n" link set eth0 up &&
				ip -n "$P-$n" link set lo up && ip -n "$P-$n" route add default dev eth0 || NETNS=no
		done 2>> netns.err
	fi
	if [ $NETNS = yes ]; then
		echo "# the nodes: network namespaces on a bridge: $(for n in $NODES; do printf '%s=%s ' "$n" "$(addr_of "$n")"; done)"
	else
		echo "# no network namespaces here ($(head -1 netns.err 2> /dev/null)): the nodes' probes on loopback"
	fi
fi
# loop_addr NODE: its loopback address when there are no namespaces
loop_addr() { echo "127.0.0.$(( $(grep -n -x "$1" nodes.txt | cut -d: -f1) + 1 ))"; }

DATA="" LIVE=""
# map LINE: the tour's command as it runs here
map() {
	printf '%s\n' "$1" | sed -e 's/[[:space:]][[:space:]]*#.*//' \
		-e 's#build/trawl#"$TRAWL"#g' -e 's#\([ =]\)/tmp/#\1tmp/#g' -e 's#\([ =]\)/srv/#\1srv/#g' \
		-e "s#--duration [0-9.]*#--duration $DUR#" \
		-e "s#--relay collector#--relay $DATA#" -e "s#net://collector#net://$LIVE#g" \
		-e "s#^cc #${CC:-cc} $san #"
}

# ---- the checks of a command's output; $i: its number, out.$i err.$i its output
total() { sed -n 's/^total: .* \([0-9][0-9]*\) events,.*/\1/p' "$1"; }
hosts() { sed -n 's/^host \([^ ]*\)$/\1/p' "$1" | sort | tr '\n' ' '; }
evline='^\[[0-9][0-9]:[0-9][0-9]:[0-9][0-9]\.[0-9]\{9\}\] ([+?][0-9.?]*) [^ ]* [^ ]*: '
# tp_count FILE: the lines of the README program's tracepoint (hello:greeting)
tp=$(sed -n 's/^TRAWL_TRACEPOINT_EVENT(\([a-z_0-9]*\), *\([a-z_0-9]*\),.*/\1:\2/p' my-program.c | head -1)
tp_count() { grep -c " $tp: " "$1"; }
check() {	# check I LINE: what its output must be
	case "$2" in
	make*)
		[ -x build/trawl ] && [ -f build/libtrawl.a ] && [ -f build/libtrawl.so ]
		ok $? "make: build/trawl, build/libtrawl.a and .so are there" ;;
	cc*my-program*)
		[ -x my-program ]
		ok $? "the README's instrumented program builds (my-program.c: $tp)" ;;
	*"trawl record -o"*)
		s=$(printf '%s\n' "$2" | sed -n 's/.* -o \([^ ]*\).*/\1/p' | sed 's#^/tmp/#tmp/#')
		S=$s
		h=$(ls "$S")
		[ -d "$S/$h/kernel" ] && [ -d "$S/$h/ust" ]
		ok $? "record: $S/$h/kernel and $S/$h/ust" ;;
	*"trawl info"*)
		"$TRAWL" print "$S" > s.print 2> s.print.err
		babeltrace2 "$S" > s.bt 2> s.bt.err
		t=$(total "out.$1")
		is "$t $(wc -l < s.print) $(wc -l < s.bt)" "$t $t $t" \
			"info's total ($t events) = trawl print's lines = babeltrace2's lines"
		is "$(hosts "out.$1")" "$(ls "$S") " "info lists the session's host"
		n=$(tp_count s.print)
		[ "$n" -gt 0 ] && [ "$n" = "$(tp_count s.bt)" ] &&
			[ "$n" = "$(sed -n "s/^ *\([0-9]*\)  $tp\$/\1/p" "out.$1")" ]
		ok $? "my-program's $n $tp events: in info, trawl print and babeltrace2"
		[ "$(grep -c -v ' [a-z_0-9]*:[a-z_0-9]*: ' s.print)" -gt 0 ]
		ok $? "kernel and user space in one timeline" ;;
	*"| head"*)
		what=$(printf '%s' "$2" | sed 's/ *|.*//')
		case "$2" in
		*"-f json"*)
			python3 -c 'import json, sys
n = 0
for l in sys.stdin:
    e = json.loads(l); n += 1
    assert e["host"] and e["event"] and e["ts"] > 0
print(n)' < "out.$1" > json.n 2> json.err
			is "$(cat json.n)" 10 "$what: 10 lines, each a JSON object of an event (ts, host, event)"
			"$TRAWL" print -f json "$R" 2> /dev/null | python3 -c 'import json, sys
n = 0
for l in sys.stdin:
    json.loads(l); n += 1
print(n)' > json.n 2> json.err
			is "$(cat json.n)" "$(wc -l < web.print)" "all of it: as many JSON objects as events, each parses" ;;
		*)
			is "$(wc -l < "out.$1") $(grep -c "$evline" "out.$1")" "10 10" "$what: 10 lines, each an event" ;;
		esac ;;
	*"trawl agent"*)
		[ -s agent.pid ] && kill -0 "$(cat agent.pid)" && [ -S agent.sock ]
		ok $? "the agent runs and listens" ;;
	*"trawl create"*)
		;;
	*"trawl start"*"trawl stop"*)
		w=$(sed -n 's/.*trawl create [^ ]* -o \([^ ]*\).*/\1/p' tour.cmds | sed 's#^/tmp/#tmp/#' | head -1)
		"$TRAWL" print "$w" > web.agent 2> /dev/null
		is "$(tp_count web.agent) $(wc -l < web.agent)" "$(tp_count s.print) $(tp_count s.print)" \
			"the agent's session holds my-program's $tp events, and only them" ;;
	*"trawl sync"*"--apply"*)
		o=$(printf '%s\n' "$2" | sed -n 's/.* -o \([^ ]*\).*/\1/p' | sed 's#^/tmp/#tmp/#')
		babeltrace2 "$o" > fixed.bt 2> fixed.bt.err
		is "$(wc -l < fixed.bt)" "$(wc -l < c.print)" "babeltrace2 reads the corrected copy: every event" ;;
	*"trawl sync"*)
		C=$(printf '%s\n' "$2" | sed -n 's/.*trawl sync \([^ ]*\).*/\1/p' | sed 's#^/tmp/#tmp/#')
		for n in $NODES; do grep -q "$n" "out.$1" || echo "$n"; done > sync.missing
		is "$(cat sync.missing)" "" "sync names every node ($NODES)"
		# per node: |offset| (node - reference at mid-trace; the truth is 0:
		# one machine, one clock) within bound_max, which is below 50 ms
		awk '$1 == "host" { for (i = 3; i < NF; i += 2) v[$i] = $(i + 1)
			off = v["t0"] - v["y0"]; if (off < 0) off = -off; b = v["bound_max"]
			printf "# %s: quality %s, offset %.0f ns, bound %s ns\n", $2, v["quality"], off, b > "/dev/stderr"
			if ($2 != v["reference"] && (b == "-" || off > b || b > 50000000 || v["quality"] != "accurate")) bad++; n++ }
			END { print n + 0, bad + 0 }' "$C/sync.txt" > sync.check 2> sync.detail
		cat sync.detail
		is "$(cat sync.check)" "$(echo $NODES | wc -w) 0" \
			"sync.txt: every node accurate, its offset (0: one clock) within its bound (< 50 ms)" ;;
	*"trawl print --live"*|*lttng-live*)
		;;	# below, once the viewers are done
	*"trawl print"*)
		p=$(printf '%s\n' "$2" | sed -n 's/.*trawl print \([^ ]*\).*/\1/p' | sed 's#^/tmp/#tmp/#')
		cp "out.$1" c.print
		"$TRAWL" info "$p" > c.info 2> /dev/null
		is "$(wc -l < "out.$1")" "$(total c.info)" "trawl print $p: every event (info's total)"
		for n in $NODES; do grep -q " $n trawl_sync:probe_recv: " "out.$1" || echo "$n"; done > c.missing
		is "$(cat c.missing)" "" "every node received probes ($NODES)" ;;
	*"trawl simulate"*)
		o=$(printf '%s\n' "$2" | sed -n 's/.* -o \([^ ]*\).*/\1/p' | sed 's#^/tmp/#tmp/#')
		nh=$(printf '%s\n' "$2" | sed -n 's/.*--hosts \([0-9]*\).*/\1/p')
		ne=$(printf '%s\n' "$2" | sed -n 's/.*--events \([0-9]*\).*/\1/p')
		"$TRAWL" info "$o" > sim.info 2> /dev/null
		[ "$(hosts sim.info | wc -w)" = "$nh" ] && [ "$(total sim.info)" -ge "$ne" ]
		ok $? "simulate: $nh hosts, $ne events at least (and the sync messages: $(total sim.info))" ;;
	*"trawl help "*)
		c=$(printf '%s\n' "$2" | sed -n 's/.*trawl help \([a-z-]*\).*/\1/p')
		# its usage or its manual page: every option of `trawl CMD --help`
		# (letters and digits only: a page rendered by man may hyphenate,
		# break lines, or print other hyphens)
		opts=$("$TRAWL" "$c" --help 2>&1 | grep -o -- '--[a-z][a-z-]*' | sed 's/^--//' | sort -u)
		tr -cd 'a-z0-9' < "out.$1" > help.flat
		miss=$(for o in $opts; do grep -q "$(printf '%s' "$o" | tr -cd 'a-z0-9')" help.flat || echo "$o"; done)
		grep -q "$c" "out.$1" && [ -n "$opts" ] && [ -z "$miss" ]
		ok $? "trawl help $c shows its page: every option of trawl $c --help${miss:+ (missing: $(echo $miss))}" ;;
	esac
}

# ---- the background groups: probes, and the relay's nodes with their viewers
probes="" records=""
settle_probes() {
	[ -n "$probes" ] || return 0
	for p in $probes; do
		reap "$p"
		ok $? "probe (pid $p) exits 0"
	done
	probes=""
}
# listed NODE SESSION: the relay lists the session of NODE
listed() { timeout 10 babeltrace2 -i lttng-live "net://$LIVE" 2> /dev/null | grep -q "/host/$1/$2 ("; }
# shows FILE NODE...: FILE holds the tracepoints of every NODE
shows() { _f=$1; shift; for _h; do grep -q " $_h $tp: " "$_f" || return 1; done; }
# A relay serves a session to one viewer at a time (as lttng-relayd): each
# viewer of the tour shows the tracepoints of every node it reads, then is
# interrupted (Ctrl-C), and the next one attaches; the last one ends by
# itself once the nodes' records end.
viewer="" nv=0
# recording: a record --relay of the tour still runs
recording() { for _p in $records; do kill -0 "$_p" 2> /dev/null && return 0; done; return 1; }
viewer_shows() {	# the current viewer shows every node it reads
	eval "_ns=\$nodes_$viewer"
	until_ok 120 eval 'shows "live.$viewer" $_ns || ! recording'
	shows "live.$viewer" $_ns
	ok $? "viewer $viewer shows the tracepoints of every node it reads ($_ns) while they record"
}
interrupt_viewer() {
	[ -n "$viewer" ] || return 0
	viewer_shows
	eval "_p=\$pid_$viewer"
	kill -INT "$_p"
	until_ok 30 gone "$_p"
	ok $? "viewer $viewer ends at Ctrl-C (SIGINT)"
	kill "$_p" 2> /dev/null
	reap "$_p"
	viewer=""
}
settle_relay() {
	[ -n "$records" ] || return 0
	[ -n "$viewer" ] && viewer_shows
	touch server.stop
	for p in $records; do reap "$p"; ok $? "record --relay (pid $p) exits 0"; done
	records=""
	session_dir=$(ls -d srv/*/"$session" 2> /dev/null | head -1)
	[ -n "$session_dir" ] || session_dir=srv/traces/$session
	R=$session_dir
	"$TRAWL" print "$session_dir" > web.print 2> /dev/null
	[ -n "$viewer" ] || return 0
	eval "_p=\$pid_$viewer _line=\$line_$viewer _ns=\$nodes_$viewer"
	until_ok 120 gone "$_p"
	r=$?
	kill "$_p" 2> /dev/null
	reap "$_p"
	w=$?
	[ $r -eq 0 ] && [ $w -eq 0 ]
	ok $? "viewer $viewer ends by itself once the nodes' records end, exit 0"
	case "$_line" in
	*lttng-live*)
		h=$(printf '%s\n' "$_line" | sed -n 's#.*/host/\([^/]*\)/.*#\1#p')
		babeltrace2 "$session_dir/$h" > bt.node 2> /dev/null
		is "$(wc -l < "live.$viewer")" "$(wc -l < bt.node)" \
			"babeltrace2 -i lttng-live: every event of $h (as babeltrace2 of the relay's files)" ;;
	*)
		is "$(wc -l < "live.$viewer")" "$(wc -l < web.print)" \
			"print --live: every event of the session (as trawl print of the relay's files)" ;;
	esac
	for h in $_ns; do grep -q " $h " "live.$viewer" || echo "$h"; done > "live.$viewer.missing"
	is "$(echo $(cat "live.$viewer.missing"))" "" "viewer $viewer: events of every node ($_ns)"
	viewer=""
}

# ran RC: line $i ran with status RC (its stderr shown when not 0)
ran() {
	ok "$1" "$(printf '%s' "$line" | sed 's/[[:space:]][[:space:]]*#.*//')"
	[ "$1" -eq 0 ] || sed 's/^/#   stderr: /' "err.$i" | head -5
}

# ---- the tour
i=0 session=""
exec 3< tour.cmds
while IFS= read -r line <&3; do
	i=$((i + 1))
	cmd=$(map "$line")
	case "$line" in *"trawl probe"*) ;; *) settle_probes ;; esac
	case "$line" in *"record --relay"*|*--live*|*lttng-live*) ;; *) settle_relay ;; esac
	echo "# \$ $line"
	case "$line" in
	make|make\ *)
		make -s -C "$TRAWL_SRC" ${TRAWL_MAKE_ARGS:-O="$TRAWL_BUILD"} > "out.$i" 2> "err.$i" < /dev/null
		ran $? ;;
	*"trawl agent"*)
		sh -c "$cmd --pidfile agent.pid" > "out.$i" 2> "err.$i" < /dev/null
		ran $? ;;
	*"trawl probe"*)
		n=$(printf '%s\n' "$line" | sed -n 's/.*--host \([^ ]*\).*/\1/p')
		if [ $NETNS = yes ]; then
			ip netns exec "$P-$n" sh -c "$cmd" > "out.$i" 2> "err.$i" < /dev/null &
		else
			for m in $NODES; do	# every node's address on loopback
				cmd=$(printf '%s\n' "$cmd" | sed "s#=$(addr_of "$m"):#=$(loop_addr "$m"):#g")
			done
			port=$(printf '%s\n' "$cmd" | sed -n 's/.*--peer [^ ]*:\([0-9]*\).*/\1/p' | head -1)
			sh -c "$cmd --listen $(loop_addr "$n"):${port:-7077}" > "out.$i" 2> "err.$i" < /dev/null &
		fi
		probes="$probes $!"
		pids="$pids $!" ;;
	*"trawl relay"*)
		sh -c "$cmd --data 127.0.0.1:0 --live 127.0.0.1:0 --pidfile relay.pid" > "out.$i" 2> "err.$i" < /dev/null
		rc=$?
		# where it listens: the addresses it prints after "data" and "live"
		# (its --ready-fd is not written when it detaches)
		DATA=$(sed -n 's/.*data[^0-9]*\(127\.0\.0\.1:[1-9][0-9]*\).*/\1/p' "out.$i" | head -1)
		LIVE=$(sed -n 's/.*live[^0-9]*\(127\.0\.0\.1:[1-9][0-9]*\).*/\1/p' "out.$i" | head -1)
		[ $rc -eq 0 ] && [ -n "$DATA" ] && [ -n "$LIVE" ] && kill -0 "$(cat relay.pid)"
		ok $? "$(printf '%s' "$line" | sed 's/[[:space:]][[:space:]]*#.*//') (it listens: data on $DATA, live on $LIVE)" ;;
	*"record --relay"*)
		session=$(printf '%s\n' "$line" | sed -n 's/.*--session \([^ ]*\).*/\1/p')
		for n in $NODES; do
			c=$(printf '%s\n' "$cmd" | sed "s# -- # --host $n -- #")
			sh -c "$c" > "out.$i.$n" 2> "err.$i.$n" < /dev/null &
			records="$records $!"
			pids="$pids $!"
		done ;;
	*--live*|*lttng-live*)
		if [ "$nv" -eq 0 ]; then
			for n in $NODES; do
				until_ok 60 eval 'listed "$n" "$session" || ! recording'
				listed "$n" "$session"
				ok $? "the relay lists $n's session $session"
			done
		fi
		interrupt_viewer
		nv=$((nv + 1))
		case "$line" in
		*/host/*) eval "nodes_$nv=\$(printf '%s\n' \"\$line\" | sed -n 's#.*/host/\([^/]*\)/.*#\1#p')" ;;
		*) eval "nodes_$nv=\$NODES" ;;
		esac
		sh -c "exec $cmd" > "live.$nv" 2> "err.$i" < /dev/null &
		eval "pid_$nv=$! line_$nv=\$line"
		pids="$pids $!"
		viewer=$nv ;;
	*)
		sh -c "$cmd" > "out.$i" 2> "err.$i" < /dev/null
		ran $? ;;
	esac
	check "$i" "$line"
done
settle_probes
settle_relay
# the daemons the tour started stop at SIGTERM
for f in agent.pid relay.pid; do
	d=$(daemon "$f") || continue
	kill -TERM "$d"
	until_ok 30 gone "$d"
	ok $? "the tour's $(basename "$f" .pid) (pid $d) stops at SIGTERM"
done
is "$i" "$ncmds" "every command of the tour ran ($ncmds)"

# ---- the reading program: built as its comment says, it counts what the
# README says trawl print | grep -c counts, in the session the tour
# recorded and in the relay's (not 0 in either)
if [ -n "$rd_cc" ] && [ -n "$rd_run" ] && [ -n "$rd_grep" ]; then
	cp reader.c "$(printf '%s\n' "$rd_cc" | grep -o '[^ ]*\.c' | head -1)"
	echo "# \$ $rd_cc"
	sh -c "$(map "$rd_cc")" > reader-cc.out 2>&1
	ok $? "the README's reading program builds: $rd_cc"
	sed 's/^/#   /' reader-cc.out | head -10
	got=$(sh -c "$(map "$rd_run")" 2> reader.err)
	want=$(sh -c "$(map "build/$rd_grep")" 2> /dev/null)
	[ "$got" = "$want" ] && [ "$got" -gt 0 ] 2> /dev/null
	ok $? "$rd_run prints $got, what $rd_grep does ($want), not 0"
	got=$(sh -c "$(map "$rd_run" | awk -v r="$R" '{ $NF = r; print }')" 2> reader.err)
	want=$(sh -c "$(map "build/$rd_grep" | sed "s#print [^ ]*#print $R#")" 2> /dev/null)
	[ "$got" = "$want" ] && [ "$got" -gt 0 ] 2> /dev/null
	ok $? "on the relay's session $R: $got, as trawl print | grep -c ($want), not 0"
else
	bail "README.md: the reading program says neither how to build it (/* cc ... */) nor what it prints (\`./PROGRAM ...\` = \`trawl print ... | grep -c ...\`)"
fi

plan "$_n"
finish
