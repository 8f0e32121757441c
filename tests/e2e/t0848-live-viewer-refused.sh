#!/bin/sh
# A viewer the relay refuses as it connects (over --max-viewers) is told
# why (issue 28, item 8: it got "connection closed (TRAWL_CHALLENGE)"):
# without a secret, with the relay's reason; on a relay with a secret, a
# viewer holding the credential is told the relay is busy (a newcomer has
# proven nothing: no figures). On loopback.
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v cc > /dev/null 2>&1 || skip_all "needs a C compiler for the live producer"
plan 5

pids=""
cleanup() { for p in $pids; do kill "$p" 2> /dev/null; done; }
trap cleanup EXIT
export HOME="$TRASH/home" XDG_CONFIG_HOME="$TRASH/home"
unset TRAWL_SECRET_FILE
mkdir -p home
san=${TRAWL_SAN:+-fsanitize=$TRAWL_SAN}
${CC:-cc} -std=gnu11 -O2 -Wall -Wextra -Werror $san -I"$TRAWL_SRC/include" -o live-producer \
	"$TRAWL_SRC/tests/e2e/live-producer.c" "$TRAWL_BUILD/libtrawl.a" -lpthread -lm -lz > lp-cc.log 2>&1
[ -x live-producer ] || { sed 's/^/# /' lp-cc.log | head; echo "Bail out! no live producer"; exit 1; }

# relay NAME [args]: a relay of one viewer; sets DATA, LIVE
relay() {
	_rn=$1
	shift
	"$TRAWL" relay -o "OUT-$_rn" --data 127.0.0.1:0 --live 127.0.0.1:0 --max-viewers 1 \
		--foreground --ready-fd 3 "$@" 3> "$_rn.ready" 2> "$_rn.err" &
	pids="$pids $!"
	until_ok 30 grep -Eq '^ready 127\.0\.0\.1:[1-9][0-9]* 127\.0\.0\.1:[1-9][0-9]*$' "$_rn.ready" ||
		{ echo "Bail out! the relay $_rn is not ready"; cat "$_rn.err"; exit 1; }
	DATA=$(sed -n 's/^ready \([^ ]*\) \([^ ]*\)$/\1/p' "$_rn.ready")
	LIVE=$(sed -n 's/^ready \([^ ]*\) \([^ ]*\)$/\2/p' "$_rn.ready")
}
# hold NAME: a session of NAME's relay, a first viewer attached to it (the
# one slot taken) until NAME-go exists
hold() {
	printf 'stream 0\nev 0 1000000 3\nflush 0 2000000\nwait %s-go\nclose\n' "$1" > "$1.script"
	./live-producer "$DATA" s nodeA ust < "$1.script" > "$1-p.out" 2> "$1-p.err" &
	pids="$pids $!"
	timeout 120 "$TRAWL" print --live "net://$LIVE/session/s" > "$1-v1.out" 2> "$1-v1.err" &
	V1=$!
	pids="$pids $V1"
	until_ok 30 grep -q "viewer .*: attached to nodeA/s$" "$1.err" ||
		{ echo "Bail out! the first viewer did not attach"; exit 1; }
}

# ---- no secret: the relay's reason
relay open
hold open
"$TRAWL" print --live "net://$LIVE/session/s" --wait 0 > v2.out 2> v2.err
is "$?|$(cat v2.err)" \
	"1|trawl print: live relay refused the viewer: the relay serves 1 viewers already (--max-viewers)" \
	"a viewer over --max-viewers: exit 1, told why"
grep -q "viewer 127.0.0.1:[0-9]* refused: the relay serves 1 viewers already (--max-viewers)" open.err
ok $? "the relay logs the refusal"
touch open-go
until_ok 60 gone "$V1"
wait "$V1"
is "$?|$(lines open-v1.out)" "0|3" "the first viewer is served to the session's end (its 3 events)"

# ---- with a secret: the credential's viewer is told the relay is busy
"$TRAWL" secret new cl.key 2> /dev/null
export TRAWL_SECRET_FILE="$TRASH/cl.key"
relay sec --secret-file cl.key
hold sec
"$TRAWL" print --live "net://$LIVE/session/s" --wait 0 > v3.out 2> v3.err
is "$?|$(cat v3.err)" "1|trawl print: live relay refused the viewer: the relay is busy; try again later" \
	"with a secret: the viewer with the credential is told the relay is busy"
unset TRAWL_SECRET_FILE
"$TRAWL" print --live "net://$LIVE/session/s" --wait 0 > v4.out 2> v4.err
is "$?|$(cat v4.err)" "1|trawl print: live relay refused the viewer: the relay is busy; try again later" \
	"... and one without a credential, too (not 'connection closed')"
touch sec-go
finish
