#!/bin/sh
# trawl state offline with its checkpoint file (a simulated host, 2 CPUs):
#  - the first run reads the traces and writes PATH/.trawl-state-HOST.ckpt
#    (--stats says "made, written to"); the next one reads it instead
#    ("read from") and prints the same, byte for byte, at several times,
#    with and without an entity's history (--tid, --cpu: the window before
#    the time, read again);
#  - --checkpoints none writes no file and prints the same; --checkpoints
#    FILE writes FILE;
#  - a corrupt file (a byte of its header flipped): a warning saying it is
#    ignored, the same output, the file made again (the next run reads it);
#  - the trace changed (a stream truncated): a note that the file is of
#    other traces, the output that of the changed trace (as without a
#    file), the file made again for it;
#  - another --window: made again (a note).
. "$TRAWL_SRC/tests/e2e/lib.sh"
plan 16

TZ=UTC
export TZ
"$TRAWL" simulate -q -o sim -n 1 -c 2 -e 600000 > sim.log 2>&1
ok $? "a simulated host"
CK=sim/.trawl-state-host0.ckpt
AT="--at +0.1 --at +0.9 --at +1.7"
TID=$("$TRAWL" state sim --at +0.9 --checkpoints none --json |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["threads"][5]["tid"])')

"$TRAWL" state sim $AT --stats > first.out 2> first.err
is "$?:$(grep -c 'made, written to sim/.trawl-state-host0.ckpt' first.err):$(test -s $CK && echo file)" \
	"0:1:file" "the first run writes the checkpoint file beside the trace"
"$TRAWL" state sim $AT --stats > second.out 2> second.err
is "$?:$(grep -c 'read from sim/.trawl-state-host0.ckpt' second.err)" "0:1" \
	"the second reads it instead of the traces"
cmp_files second.out first.out "the same state at three times"
"$TRAWL" state sim $AT --checkpoints none > none.out 2> none.err
is "$?:$(wc -c < none.err)" "0:0" "--checkpoints none: no message"
cmp_files none.out first.out "--checkpoints none: the same state"

"$TRAWL" state sim --at +1.2 --tid "$TID" -n 0 --checkpoints none > tid-none.out 2>&1
"$TRAWL" state sim --at +1.2 --tid "$TID" -n 0 > tid-file.out 2>&1
is "$(grep -c '^    \[' tid-file.out)" "$(grep -c '^    \[' tid-none.out)" \
	"a thread's history from the file: as many changes as without ($(grep -c '^    \[' tid-none.out))"
"$TRAWL" state sim --at +1.2 --cpu 1 -n 5 > cpu-file.out 2>&1
"$TRAWL" state sim --at +1.2 --cpu 1 -n 5 --checkpoints none > cpu-none.out 2>&1
cmp_files tid-file.out tid-none.out "and the same thread, history and all" &&
cmp_files cpu-file.out cpu-none.out "the same CPU and newest changes"

"$TRAWL" state sim --at +0.5 --checkpoints other.ckpt > other.out 2>&1
is "$?:$(test -s other.ckpt && echo file)" "0:file" "--checkpoints FILE: written there"

# corrupt: a byte of its header flipped (those of its checkpoints:
# test-state, each checked when it is used)
python3 - "$CK" <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read()); b[100] ^= 0x20
open(sys.argv[1], "wb").write(b)
PY
"$TRAWL" state sim $AT --stats > corrupt.out 2> corrupt.err
is "$?:$(grep -c 'corrupt.*ignored, reading the traces again' corrupt.err):$(grep -c 'made, written to' corrupt.err)" \
	"0:1:1" "a corrupt file: a warning, ignored, made again"
cmp_files corrupt.out first.out "a corrupt file: the same state"
"$TRAWL" state sim --at +0.3 --stats > again.out 2> again.err
is "$?:$(grep -c 'read from' again.err):$(grep -c warning again.err)" "0:1:0" \
	"the file made again is read by the next run"

# the trace changed: a stream truncated by its last packet
S=$(ls sim/host0/kernel/channel* | head -1)
SZ=$(stat -c %s "$S")
truncate -s $((SZ - 262144)) "$S"
"$TRAWL" state sim $AT --checkpoints none > trunc-none.out 2>&1
"$TRAWL" state sim $AT --stats > trunc.out 2> trunc.err
is "$?:$(grep -c 'made of other traces than these.*reading the traces again' trunc.err):$(grep -c 'made, written to' trunc.err)" \
	"0:1:1" "the trace truncated: a note, the file made again"
grep -v '^trawl state: ' trunc.out > trunc.state
grep -v '^trawl state: ' trunc-none.out > trunc-none.state
cmp_files trunc.state trunc-none.state "the truncated trace's state, as without a file"

"$TRAWL" state sim --at +0.5 --window 5 --stats > win.out 2> win.err
is "$?:$(grep -c 'window of 10 s, not 5 s' win.err)" "0:1" "another --window: made again, said"
finish
