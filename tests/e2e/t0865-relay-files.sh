#!/bin/sh
# The relay's own files and settings against hostile input (issue 28, items
# 3, 4, 9, 11, 12), on loopback.
#
# Checks: an invalid [relay] max-conns is a usage error that says the value
# given (it was read after the settings were freed); a FIFO given as the
# configuration file is refused at once, not waited on. The secret file: a
# FIFO, one owned by another user, one in a directory anyone may write are
# refused with the reason. Traces are stored 0640 in 0750 directories, of
# the --group given. A symbolic link planted at the session or at the host
# level of the output is refused with the reason, and nothing is written
# through it. A producer that leaves before its metadata leaves no
# directory; none exists while it is connected, and its metadata makes one.
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v python3 > /dev/null 2>&1 || skip_all "no python3 (the raw producer)"
plan 18

: > empty.conf
export TRAWL_CONFIG="$TRASH/empty.conf"
unset TRAWL_SECRET_FILE

# ---- item 11: the value of an invalid max-conns, said before it is freed
bad=abcdefghijklmnopqrstuvwxyz0123456789
printf '[relay]\nmax-conns = %s\n' "$bad" > maxc.conf
TRAWL_CONFIG=maxc.conf "$TRAWL" relay -f -o OUT-maxc > maxc.out 2> maxc.err
is "$?" 2 "an invalid [relay] max-conns is a usage error (exit 2)"
grep -q "^trawl relay: max-conns: '$bad' is not a number from 1 to 1000000\$" maxc.err
ok $? "the message says the value as given ($(head -1 maxc.err | od -An -c | tr -s ' ' | head -c 200))"

# ---- item 12: a FIFO as the configuration file
mkfifo conf.fifo
TRAWL_CONFIG=conf.fifo timeout 20 "$TRAWL" relay -f -o OUT-fifo > fifo.out 2> fifo.err
is "$?" 1 "a FIFO as the configuration file: the relay refuses to start (exit 1, not a hang)"
grep -q "^trawl relay: conf.fifo: not a regular file (a FIFO)" fifo.err
ok $? "and says why ($(cat fifo.err))"

# ---- item 4: the secret file's place
"$TRAWL" secret new cl.key > /dev/null 2>&1 || { echo "Bail out! trawl secret new"; exit 1; }
mkfifo sec.fifo
timeout 20 "$TRAWL" relay -f -o OUT-s1 --data 127.0.0.1:0 --live 127.0.0.1:0 --secret-file sec.fifo \
	> s1.out 2> s1.err
is "$?" 1 "a FIFO as the secret file: refused at once ($(cat s1.err))"
if [ "$(id -u)" = 0 ] && id nobody > /dev/null 2>&1; then
	cp cl.key other.key && chown nobody other.key
	"$TRAWL" relay -f -o OUT-s2 --data 127.0.0.1:0 --live 127.0.0.1:0 --secret-file other.key \
		> s2.out 2> s2.err
	is "$? $(grep -c 'owned by another user' s2.err)" "1 1" "a secret file owned by another user: refused ($(head -1 s2.err))"
else
	skip "not root: no file of another user's to try"
fi
mkdir -m 1777 pub && cp -p cl.key pub/cl.key
"$TRAWL" relay -f -o OUT-s3 --data 127.0.0.1:0 --live 127.0.0.1:0 --secret-file pub/cl.key \
	> s3.out 2> s3.err
is "$? $(grep -c 'in a directory anyone may write (pub)' s3.err)" "1 1" "a secret file in a world-writable directory: refused ($(head -1 s3.err))"
[ ! -e OUT-s1 ] && [ ! -e OUT-s3 ]
ok $? "and nothing was made"

# ---- a relay for the rest
PID=""
trap '[ -n "$PID" ] && kill "$PID" 2> /dev/null; touch "$TRASH/end" 2> /dev/null' EXIT
grp=$(id -gn nobody 2> /dev/null || echo nogroup)
getent group "$grp" > /dev/null 2>&1 || grp=$(id -gn)
mkfifo r.fifo
"$TRAWL" relay -f -o OUT --data 127.0.0.1:0 --live 127.0.0.1:0 --group "$grp" --ready-fd 3 \
	3> r.fifo 2> r.log &
PID=$!
l=$(wait_ready r.fifo) || { echo "Bail out! the relay did not start: $(cat r.log)"; exit 1; }
# shellcheck disable=SC2086
set -- $l
DATA=$2
"$TRAWL" simulate --relay "$DATA" --session ok --hosts 1 -e 2000 -q > ok.out 2> ok.err
modes=$(cd OUT && find ok -printf '%y %m %g\n' | sort | uniq -c | awk '{ print $2, $3, $4 }' | tr '\n' ,)
is "$modes" "d 750 $grp,f 640 $grp," "traces 0640 in 0750 directories, of the --group $grp ($(find OUT/ok | wc -l) entries)"

# ---- item 3: symbolic links planted in the output
mkdir elsewhere elsewhere2
ln -s "$TRASH/elsewhere" OUT/evil
"$TRAWL" simulate --relay "$DATA" --session evil --hosts 1 -e 2000 -q > evil.out 2> evil.err
[ $? -ne 0 ] && grep -q 'evil: a symbolic link or not a directory: refused' evil.err
ok $? "a link at the session level: the producer is refused with the reason ($(head -1 evil.err))"
is "$(ls -A elsewhere | wc -l)" 0 "and nothing is written through it"
mkdir -p OUT/evil2
ln -s "$TRASH/elsewhere2" OUT/evil2/host0
"$TRAWL" simulate --relay "$DATA" --session evil2 --hosts 1 -e 2000 -q > evil2.out 2> evil2.err
[ $? -ne 0 ] && grep -q 'evil2/host0: a symbolic link or not a directory: refused' evil2.err
ok $? "a link at the host level: refused with the reason ($(head -1 evil2.err))"
is "$(ls -A elsewhere2 | wc -l)" 0 "and nothing is written through it"
grep -q 'symbolic link' r.log
ok $? "the relay logs the refusal ($(grep -m1 'symbolic link' r.log | cut -c1-140))"

# ---- item 9: no directory before the metadata
rm -f end
python3 "$TRAWL_SRC/tests/e2e/hostile-peer.py" produce "$DATA" early h9 ust 0 "$TRASH/end" > early.out 2>&1 &
ep=$!
until_ok 20 has_lines early.out 1
is "$(cat early.out)" "welcome 0 " "a producer said HELLO and was welcomed"
[ ! -e OUT/early ]
ok $? "while it is connected without metadata, no directory exists (OUT/early)"
kill -9 "$ep" 2> /dev/null
wait "$ep" 2> /dev/null
until_ok 20 grep -q 'early/h9/ust: the producer left before CLOSE' r.log
[ ! -e OUT/early ]
ok $? "it left before any metadata (killed): nothing stays on the disk"
"$TRAWL" simulate --relay "$DATA" --session early --hosts 1 -e 2000 -q > late.out 2> late.err
[ $? -eq 0 ] && [ -s OUT/early/host0/kernel/metadata ]
ok $? "the name is free, and a producer with metadata makes its trace ($(cat late.err))"
kill "$PID"
wait "$PID" 2> /dev/null
PID=""
finish
