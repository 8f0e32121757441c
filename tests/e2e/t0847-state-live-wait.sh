#!/bin/sh
# trawl state --live waits for its session as print, agg and analyze do
# (issue 27, item 13): a session not there yet is waited for with a note,
# --wait bounds it, --wait 0 fails at once; --wait and --from-now go with
# --live only, a bad live URL is a usage error (exit 2); --from-now starts
# at the session's next packet. On loopback.
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v cc > /dev/null 2>&1 || skip_all "needs a C compiler for the live producer"
plan 10

pids=""
cleanup() { for p in $pids; do kill "$p" 2> /dev/null; done; }
trap cleanup EXIT
export HOME="$TRASH/home" XDG_CONFIG_HOME="$TRASH/home"
unset TRAWL_SECRET_FILE
mkdir -p home

"$TRAWL" relay -o OUT --data 127.0.0.1:0 --live 127.0.0.1:0 --foreground --ready-fd 3 \
	3> ready.txt 2> relay.err &
pids="$pids $!"
until_ok 30 grep -Eq '^ready 127\.0\.0\.1:[1-9][0-9]* 127\.0\.0\.1:[1-9][0-9]*$' ready.txt ||
	{ echo "Bail out! the relay is not ready"; exit 1; }
DATA=$(sed -n 's/^ready \([^ ]*\) \([^ ]*\)$/\1/p' ready.txt)
LIVE=$(sed -n 's/^ready \([^ ]*\) \([^ ]*\)$/\2/p' ready.txt)
san=${TRAWL_SAN:+-fsanitize=$TRAWL_SAN}
${CC:-cc} -std=gnu11 -O2 -Wall -Wextra -Werror $san -I"$TRAWL_SRC/include" -o live-producer \
	"$TRAWL_SRC/tests/e2e/live-producer.c" "$TRAWL_BUILD/libtrawl.a" -lpthread -lm -lz > lp-cc.log 2>&1
[ -x live-producer ] || { sed 's/^/# /' lp-cc.log | head; echo "Bail out! no live producer"; exit 1; }

# ---- before its session: it waits and says so, then follows the session
timeout 120 "$TRAWL" state --live "net://$LIVE/session/late" --stats > late.txt 2> late.err &
V=$!
pids="$pids $V"
waiting() { grep -q "^trawl state: net://$LIVE/session/late: the relay has no such session yet: waiting for it (Ctrl-C to stop, --wait S to give up after S seconds)$" late.err; }
until_ok 30 waiting
ok $? "state --live of a session not there yet: waits, and says so ($(head -1 late.err))"
printf 'class syscall_entry_getpid\nstream 0\nev 0 1000000 12 syscall_entry_getpid\nflush 0 2000000\nwait late-go\nclose\n' > late.script
./live-producer "$DATA" late nodeA ust < late.script > pl.out 2> pl.err &
pids="$pids $!"
until_ok 30 grep -q "viewer .*: attached to nodeA/late$" relay.err
ok $? "... the session comes: the viewer attaches to it (the relay says so)"
touch late-go
until_ok 60 gone "$V"
wait "$V"
is "$?|$(sed -n 's/^state: \([0-9]*\) events.*/\1/p' late.err)|$(grep -c '^trawl state: following' late.err)" \
	"0|12|1" "... followed to the session's end: its 12 events, exit 0"

# ---- --wait bounds it, --wait 0 does not wait
t0=$(date +%s%N)
"$TRAWL" state --live "net://$LIVE/session/none" --wait 0.5 > /dev/null 2> w.err
rc=$? t1=$(date +%s%N)
is "$rc|$(sed -n 1p w.err)|$(sed -n 2p w.err)" \
	"1|trawl state: net://$LIVE/session/none: the relay has no such session yet: waiting for it (up to 0.5 s, --wait)|trawl state: net://$LIVE/session/none: no such live session at $LIVE (0 listed), after waiting $(sed -n 's/.*after waiting \([0-9.]*\) s.*/\1/p' w.err) s (--wait)" \
	"--wait 0.5: exit 1 after the note, the session named once, and the wait"
ok $([ $(( (t1 - t0) / 1000000 )) -ge 500 ]; echo $?) "... having waited at least 0.5 s ($(( (t1 - t0) / 1000000 )) ms)"
"$TRAWL" state --live "net://$LIVE/session/none" --wait 0 > /dev/null 2> w0.err
is "$?|$(cat w0.err)" "1|trawl state: net://$LIVE/session/none: no such live session at $LIVE (0 listed)" \
	"--wait 0: exit 1 at once, no note"

# ---- usage errors
"$TRAWL" state --live "net://$LIVE/session/none" --wait soon > /dev/null 2> wbad.err
is "$?|$(sed -n 1p wbad.err)" "2|trawl state: --wait: 'soon' is not a number of seconds" \
	"--wait soon: a usage error"
bad=0
for a in "--wait 1" --from-now; do
	# shellcheck disable=SC2086
	"$TRAWL" state s --at 0 $a > /dev/null 2> alone.err
	r=$?
	[ "$r" -eq 2 ] && grep -q "^trawl state: ${a%% *} goes with --live$" alone.err ||
		{ bad=$((bad + 1)); echo "# state $a without --live: exit $r: $(tr '\n' '|' < alone.err)"; }
done
is "$bad" 0 "--wait and --from-now without --live: usage errors naming the option"
bad=0
for u in nett://x/y "net://127.0.0.1" "net://127.0.0.1/host/h"; do
	"$TRAWL" state --live "$u" > /dev/null 2> url.err
	r=$?
	[ "$r" -eq 2 ] && grep -q "^trawl state: --live: " url.err && grep -q "^Try 'trawl state --help'" url.err ||
		{ bad=$((bad + 1)); echo "# state --live $u: exit $r: $(tr '\n' '|' < url.err)"; }
done
is "$bad" 0 "a bad live URL is a usage error (exit 2, '--live: ...')"

# ---- --from-now: the packets there at attach are not replayed
printf 'class syscall_entry_getpid\nstream 0\nev 0 1000000 10 syscall_entry_getpid\nflush 0 2000000\ntouch fn1\nwait fn-go\nev 0 3000000 5 syscall_entry_getpid\nflush 0 4000000\nclose\n' > fn.script
./live-producer "$DATA" fn nodeA ust < fn.script > pf.out 2> pf.err &
pids="$pids $!"
until_ok 30 test -e fn1 || { echo "Bail out! the producer did not flush"; exit 1; }
timeout 120 "$TRAWL" state --live "net://$LIVE/session/fn" --from-now --stats > fn.txt 2> fn.err &
VF=$!
pids="$pids $VF"
until_ok 30 grep -q "viewer .*: attached to nodeA/fn$" relay.err
touch fn-go
until_ok 60 gone "$VF"
wait "$VF"
is "$?|$(sed -n 's/^state: \([0-9]*\) events.*/\1/p' fn.err)" "0|5" \
	"state --from-now reads the 5 events after it attached, not the 10 before ($(tr '\n' '|' < fn.err))"
finish
