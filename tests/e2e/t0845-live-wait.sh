#!/bin/sh
# Live viewers (issue 27, item 13): a session not there yet is waited for
# (a note says so; --wait bounds it; --wait 0 fails at once); a bad live
# URL is a usage error (exit 2); a viewer without a credential on an
# authenticated relay, and one pointed at the data port, are told which of
# the two it is; --from-now starts at the session's next packet.
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v cc > /dev/null 2>&1 || skip_all "needs a C compiler for the live producer"
plan 14

pids=""
cleanup() { for p in $pids; do kill "$p" 2> /dev/null; done; }
trap cleanup EXIT
export HOME="$TRASH/home" XDG_CONFIG_HOME="$TRASH/home"	# no [relay] secret-file of this machine's
unset TRAWL_SECRET_FILE
mkdir -p home

# relay ready-file: its data and live addresses once ready
relay_up() {
	until_ok 30 grep -Eq '^ready 127\.0\.0\.1:[1-9][0-9]* 127\.0\.0\.1:[1-9][0-9]*$' "$1" ||
		{ echo "Bail out! a relay is not ready"; exit 1; }
}
"$TRAWL" relay -o OUT --data 127.0.0.1:0 --live 127.0.0.1:0 --foreground --ready-fd 3 \
	3> ready.txt 2> relay.err &
pids="$pids $!"
relay_up ready.txt
DATA=$(sed -n 's/^ready \([^ ]*\) \([^ ]*\)$/\1/p' ready.txt)
LIVE=$(sed -n 's/^ready \([^ ]*\) \([^ ]*\)$/\2/p' ready.txt)
san=${TRAWL_SAN:+-fsanitize=$TRAWL_SAN}
${CC:-cc} -std=gnu11 -O2 -Wall -Wextra -Werror $san -I"$TRAWL_SRC/include" -o live-producer \
	"$TRAWL_SRC/tests/e2e/live-producer.c" "$TRAWL_BUILD/libtrawl.a" -lpthread -lm -lz > lp-cc.log 2>&1
[ -x live-producer ] || { sed 's/^/# /' lp-cc.log | head; echo "Bail out! no live producer"; exit 1; }

# ---- a viewer before its session: it waits, then follows it to its end
timeout 120 "$TRAWL" print --live "net://$LIVE/session/late" > late.txt 2> late.err &
V=$!
pids="$pids $V"
waiting() { grep -q "^trawl print: net://$LIVE/session/late: the relay has no such session yet: waiting for it (Ctrl-C to stop, --wait S to give up after S seconds)$" late.err; }
until_ok 30 waiting
ok $? "print --live of a session not there yet: waits, and says so ($(head -1 late.err))"
# the session stays until the viewer has attached (the relay says so)
printf 'stream 0\nev 0 1000000 12\nflush 0 2000000\nwait late-go\nclose\n' > late.script
./live-producer "$DATA" late nodeA ust < late.script > pl.out 2> pl.err &
pids="$pids $!"
until_ok 30 grep -q "viewer .*: attached to nodeA/late$" relay.err
touch late-go
until_ok 60 gone "$V"
wait "$V"
is "$?|$(lines late.txt)|$(lines late.err)" "0|12|1" \
	"... the session comes: its 12 events, exit 0 at its end, the note alone on stderr"

# ---- --wait bounds it, --wait 0 does not wait
t0=$(date +%s%N)
"$TRAWL" print --live "net://$LIVE/session/none" --wait 0.5 > /dev/null 2> w.err
rc=$? t1=$(date +%s%N)
is "$rc|$(sed -n 2p w.err)" \
	"1|trawl print: net://$LIVE/session/none: no such live session at $LIVE (0 listed), after waiting $(sed -n 's/.*after waiting \([0-9.]*\) s.*/\1/p' w.err) s (--wait)" \
	"--wait 0.5: exit 1, after the note, the session named and the wait"
ok $([ $(( (t1 - t0) / 1000000 )) -ge 500 ]; echo $?) "... having waited at least 0.5 s ($(( (t1 - t0) / 1000000 )) ms)"
"$TRAWL" print --live "net://$LIVE/session/none" --wait 0 > /dev/null 2> w0.err
is "$?|$(cat w0.err)" "1|trawl print: net://$LIVE/session/none: no such live session at $LIVE (0 listed)" \
	"--wait 0: exit 1 at once, no note"
"$TRAWL" print --live "net://$LIVE/session/none" --wait soon > /dev/null 2> wbad.err
is "$?|$(sed -n 1p wbad.err)" "2|trawl print: --wait: 'soon' is not a number of seconds" "--wait soon: a usage error"

# ---- bad URLs: usage errors, in every viewer
bad=0
for c in print "agg count(x)" "analyze cputop"; do
	for u in nett://x/y "net://127.0.0.1" "net://127.0.0.1/host/h"; do
		# shellcheck disable=SC2086
		"$TRAWL" $c --live "$u" > /dev/null 2> url.err
		r=$?
		[ "$r" -eq 2 ] && grep -q "^trawl ${c%% *}: --live: " url.err && grep -q "^Try 'trawl ${c%% *} --help'" url.err ||
			{ bad=$((bad + 1)); echo "# $c --live $u: exit $r: $(tr '\n' '|' < url.err)"; }
	done
done
is "$bad" 0 "a bad live URL is a usage error (exit 2, '--live: ...') in print, agg and analyze"

# ---- which refusal: the data port, or a relay that wants a credential
"$TRAWL" print --live "net://$DATA/session/late" --wait 0 > /dev/null 2> data.err
is "$?|$(cat data.err)" \
	"1|trawl print: 127.0.0.1 port ${DATA##*:} is not a live port: it closed the connection at the viewer's first request (a relay's data port? its live port is 5344 unless --live says otherwise)" \
	"a viewer at the data port: told it is not a live port"
"$TRAWL" secret new cl.key 2> /dev/null
"$TRAWL" relay -o OUT2 --data 127.0.0.1:0 --live 127.0.0.1:0 --secret-file cl.key --foreground \
	--ready-fd 3 3> ready2.txt 2> relay2.err &
pids="$pids $!"
relay_up ready2.txt
LIVE2=$(sed -n 's/^ready \([^ ]*\) \([^ ]*\)$/\2/p' ready2.txt)
DATA2=$(sed -n 's/^ready \([^ ]*\) \([^ ]*\)$/\1/p' ready2.txt)
"$TRAWL" print --live "net://$LIVE2/session/x" --wait 0 > /dev/null 2> auth.err
is "$?|$(cat auth.err)" \
	"1|trawl print: live relay 127.0.0.1 port ${LIVE2##*:} requires a credential: it closed the connection of a viewer without one (give the viewer key or the cluster secret: --secret-file, docs/auth.md)" \
	"a viewer without a credential at an authenticated relay: told it needs one"
"$TRAWL" print --live "net://$DATA2/session/x" --wait 0 --secret-file cl.key > /dev/null 2> data2.err
grep -q "port ${DATA2##*:} is not a live port" data2.err
ok $? "with a credential at the data port: not a live port either ($(cat data2.err))"
"$TRAWL" print --live "net://$LIVE2/session/x" --wait 0 --secret-file cl.key > /dev/null 2> ok2.err
is "$?|$(cat ok2.err)" "1|trawl print: net://$LIVE2/session/x: no such live session at $LIVE2 (0 listed)" \
	"with the credential: through, to the listing"

# ---- --from-now: the packets there at attach are not replayed
printf 'stream 0\nev 0 1000000 10\nflush 0 2000000\ntouch fn1\nwait fn-go\nev 0 3000000 5\nflush 0 4000000\nclose\n' > fn.script
./live-producer "$DATA" fn nodeA ust < fn.script > pf.out 2> pf.err &
pids="$pids $!"
until_ok 30 test -e fn1 || { echo "Bail out! the producer did not flush"; exit 1; }
timeout 120 "$TRAWL" agg --live "net://$LIVE/session/fn" --from-now 'count(tick)' > fn-agg.txt 2> fn-agg.err &
VA=$!
pids="$pids $VA"
until_ok 30 grep -q "viewer .*: attached to nodeA/fn$" relay.err
ok $? "agg --live --from-now attached (the relay says so)"
touch fn-go
until_ok 60 gone "$VA"
wait "$VA"
is "$?|$(awk 'NR == 3 { print $1 }' fn-agg.txt)" "0|5" \
	"agg --from-now counts the 5 events after it attached, not the 10 before"
"$TRAWL" agg 'count(tick)' OUT/fn > fn-all.txt 2> /dev/null
is "$(awk 'NR == 3 { print $1 }' fn-all.txt)" 15 "(the session has 15: the 10 were there)"
finish
