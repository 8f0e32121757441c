#!/bin/sh
# The relay's own files and settings against hostile input (issue 28, items
# 3, 4, 9, 11, 12), on loopback.
#
# Checks: an invalid [relay] max-conns is a usage error that says the value
# given (it was read after the settings were freed); a FIFO given as the
# configuration file is refused at once, not waited on.
. "$TRAWL_SRC/tests/e2e/lib.sh"
plan 4

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
finish
