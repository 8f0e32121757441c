#!/bin/sh
# One rule for damaged traces (trawl(1), READING DAMAGED TRACES; issues 27
# and 28): every reading command (print, info, analyze x5, agg, state,
# view, export, sync) over the same bad inputs:
#   lossy      a session whose streams lost events (simulate --shapes):
#              exit 0, one warning per lossy stream naming it and the
#              events lost, which are the stream's events_discarded
#              (trawl info --json, an independent count)
#   truncated  a stream cut in the middle of a packet: exit 1, the file,
#              the packet's offset and "to the end of the file"
#   garbled    4 KiB of random bytes over one packet of a kernel stream and
#              one of the sync stream: exit 1, the file, the packet's
#              offset, 4096 bytes skipped, read on at the next packet; and
#              `print` shows every event but those of the two packets (the
#              same as the trace with the two packets cut out)
#   metadata   an empty metadata file under the session: exit 1, the file
#              named, the trace skipped
#   host glob, event name that match nothing: exit != 0 and a message
# Each command runs under timeout: none may hang.
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v python3 >/dev/null 2>&1 || skip_all "python3 is needed to damage files"
command -v timeout >/dev/null 2>&1 || skip_all "timeout (coreutils) is needed"

"$TRAWL" simulate -o orig --hosts 2 --cpus 2 --events 40000 --seed 5 --shapes --sync \
	--packet-size 4096 -q > sim.log 2>&1 || { plan 1; ok 1 "trawl simulate"; sed 's/^/#   /' sim.log; finish; }
KS=host0/kernel/channel0_0
SS=host0/ust/sync_0
[ -f "orig/$KS" ] && [ -f "orig/$SS" ] || { plan 1; ok 1 "the session has $KS and $SS"; finish; }

# offsets FILE: the packets' offsets from FILE's index, one a line
offsets() {
	python3 - "$(dirname "$1")/index/$(basename "$1").idx" <<'PY'
import struct, sys
raw = open(sys.argv[1], 'rb').read()
esz = struct.unpack('>I', raw[12:16])[0]
for off in range(16, len(raw) - esz + 1, esz):
	print(struct.unpack('>Q', raw[off:off + 8])[0])
PY
}
offsets "orig/$KS" > k.off
offsets "orig/$SS" > s.off
nk=$(lines k.off) ns=$(lines s.off)
if [ "$nk" -lt 5 ] || [ "$ns" -lt 3 ]; then
	plan 1; ok 1 "enough packets to damage one inside ($nk, $ns)"; finish
fi
KOFF=$(sed -n 3p k.off) KNEXT=$(sed -n 4p k.off)
SOFF=$(sed -n 2p s.off) SNEXT=$(sed -n 3p s.off)

# the commands, one a line: NAME ARGS... (the trace path is appended)
cat > cmds <<'EOF'
print print --no-delta
info info
cputop analyze cputop
schedlat analyze schedlat
iolatency analyze iolatency
irq analyze irq
syscalls analyze syscalls
agg agg count(sched_switch)
state state --host host0 --at LASTns
view view -o OUT.html
export export -o OUT.json
sync sync --no-store
EOF
ncmd=$(lines cmds)
plan $((ncmd * 4 + 25))

# run NAME INPUT ARGS...: runs trawl ARGS INPUT, stdout and stderr in
# NAME.INPUT.out/.err; prints its exit status.
run() {
	name=$1 input=$2
	shift 2
	args=$(echo "$*" | sed "s|OUT|$name.$input|; s|LAST|$LAST|")
	# shellcheck disable=SC2086
	timeout 60 "$TRAWL" $args "$input" > "$name.$input.out" 2> "$name.$input.err"
	echo $?
}

# --- the damaged copies
cp -r orig trunc
python3 - "trunc/$KS" "$KOFF" <<'PY'
import sys
p, off = sys.argv[1], int(sys.argv[2])
d = open(p, 'rb').read()
open(p, 'wb').write(d[:off + 1000])
PY
cp -r orig garbled
python3 - garbled "$KS" "$KOFF" "$SS" "$SOFF" <<'PY'
import random, sys
root = sys.argv[1]
rnd = random.Random(27)
for path, off in ((sys.argv[2], int(sys.argv[3])), (sys.argv[4], int(sys.argv[5]))):
	p = root + '/' + path
	d = bytearray(open(p, 'rb').read())
	d[off:off + 4096] = bytes(rnd.randrange(256) for _ in range(4096))
	open(p, 'wb').write(bytes(d))
PY
# the expectation of garbled: the two packets cut out (and their index
# entries with the index: the files have no index then, a valid trace)
cp -r orig cut
python3 - cut "$KS" "$KOFF" "$KNEXT" "$SS" "$SOFF" "$SNEXT" <<'PY'
import os, sys
root = sys.argv[1]
a = sys.argv[2:]
for path, off, nxt in ((a[0], int(a[1]), int(a[2])), (a[3], int(a[4]), int(a[5]))):
	p = root + '/' + path
	d = open(p, 'rb').read()
	open(p, 'wb').write(d[:off] + d[nxt:])
	os.remove(os.path.join(os.path.dirname(p), 'index', os.path.basename(p) + '.idx'))
PY
cp -r orig meta
: > meta/host1/ust/metadata

# --- lossy: exit 0, a warning per lossy stream with its events_discarded
"$TRAWL" info --json --no-sync orig > info.json 2> info.err
# state at host0's last event: the whole trace read (losses after the time
# asked are not counted)
LAST=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(max(t["last_ts"] for t in d["traces"] if t.get("host", t.get("hostname")) == "host0"))' info.json)
python3 - info.json > want.loss <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for t in d['traces']:
	for s in t['streams']:
		if s['discarded']:
			print('%s %d' % (s['path'] if 'path' in s else s['file'], s['discarded']))
PY
[ "$(lines want.loss)" -gt 0 ]
ok $? "the lossy session has streams with discarded events ($(lines want.loss))"
while read -r name args; do
	rc=$(run "$name" orig $args)
	sed -n 's/^trawl [a-z]*: warning: \(orig\/[^:]*\): \([0-9]*\) events\{0,1\} lost (discarded by the tracer) in [0-9]* time ranges\{0,1\}: .* UTC (.*/\1 \2/p' \
		"$name.orig.err" | sort > "$name.loss"
	# info's json names streams by file: compare file names and counts
	sed 's|^.*/||' "$name.loss" | sort > "$name.loss.f"
	# state reads host0 only (--host host0)
	pat=/; [ "$name" = state ] && pat=/host0/
	grep "$pat" want.loss | sed 's|^.*/||' | sort > want.loss.f
	[ "$rc" -eq 0 ] && cmp -s "$name.loss.f" want.loss.f
	ok $? "lossy: $name exits 0 ($rc) and warns once per lossy stream with its events_discarded ($(lines "$name.loss") of $(lines want.loss.f))"
done < cmds

# --- the JSON outputs carry the losses (and the skips): a "losses" object
# whose totals are those of the warnings, as a member (info, state, sync)
# or as the last line (analyze, agg)
total=$(awk '{ s += $2 } END { print s + 0 }' want.loss)
host0=$(awk '/\/host0\// { s += $2 } END { print s + 0 }' want.loss)
jl() {	# jl FILE MEMBER|LAST: the losses' events and skipped bytes
	python3 - "$1" "$2" <<'PY'
import json, sys
lines = [l for l in open(sys.argv[1]) if l.strip()]
d = json.loads(lines[-1]) if sys.argv[2] == 'last' else json.loads(''.join(lines))
l = d['losses']
print(l['events'], l['skipped_bytes'], sum(s['events'] for s in l['streams']))
PY
}
for c in "info --json --no-sync:member:$total" "state --json --host host0 --at ${LAST}ns:member:$host0" \
	 "sync --json --no-store:member:$total" "analyze cputop --json:last:$total" \
	 "agg --json count(sched_switch):last:$total"; do
	args=${c%%:*} rest=${c#*:} where=${rest%%:*} want=${rest#*:}
	# shellcheck disable=SC2086
	"$TRAWL" $args orig > json.out 2> json.err
	is "$(jl json.out "$where" 2>&1)" "$want 0 $want" "lossy: $args: the losses object counts $want events, 0 bytes skipped"
done
# shellcheck disable=SC2086
"$TRAWL" info --json --no-sync garbled > json.out 2> json.err
python3 - json.out "$KS" "$KOFF" <<'PY'
import json, sys
l = json.load(open(sys.argv[1]))['losses']
s = [x for x in l['streams'] if x['path'].endswith(sys.argv[2])][0]
assert l['skipped_bytes'] == 8192 and l['skipped_regions'] == 2, l
assert s['skips'][0]['offset'] == int(sys.argv[3]) and s['skips'][0]['bytes'] == 4096, s
PY
ok $? "garbled: info --json's losses name both regions, the kernel one at byte $KOFF, 4096 bytes"

# --- truncated: exit 1, the file, the packet's offset, to the end of the file
while read -r name args; do
	rc=$(run "$name" trunc $args)
	grep -q "^trawl [a-z]*: trunc/$KS: byte $KOFF: .*: 1000 bytes skipped, to the end of the file\$" "$name.trunc.err" &&
		grep -q "^trawl [a-z]*: 1 corrupt region skipped (1000 bytes): the results are those of the rest\$" "$name.trunc.err"
	m=$?
	[ "$rc" -eq 1 ] && [ "$m" -eq 0 ]
	ok $? "truncated: $name exits 1 ($rc), names $KS, byte $KOFF and the 1000 bytes to the end of the file"
	[ "$rc" -ne 1 ] || [ "$m" -ne 0 ] && sed 's/^/#   /' "$name.trunc.err" | head -5
done < cmds

# --- garbled: exit 1, each garbled packet that the command reads named
while read -r name args; do
	rc=$(run "$name" garbled $args)
	k=$(grep -c "^trawl [a-z]*: garbled/$KS: byte $KOFF: .*: 4096 bytes skipped, read on at byte $KNEXT\$" "$name.garbled.err")
	s=$(grep -c "^trawl [a-z]*: garbled/$SS: byte $SOFF: .*: 4096 bytes skipped, read on at byte $SNEXT\$" "$name.garbled.err")
	all=$(grep -c "bytes skipped" "$name.garbled.err")
	[ "$rc" -eq 1 ] && [ $((k + s)) -ge 1 ] && [ "$all" -eq $((k + s)) ]
	ok $? "garbled: $name exits 1 ($rc) and names the garbled packets it read (kernel $k, sync $s, $all in all)"
	[ "$rc" -ne 1 ] && sed 's/^/#   /' "$name.garbled.err" | head -5
done < cmds
# print reads every stream: both packets, and every other event
grep -q "garbled/$KS: byte $KOFF" print.garbled.err && grep -q "garbled/$SS: byte $SOFF" print.garbled.err
ok $? "garbled: print names both packets"
"$TRAWL" print --no-delta --no-sync cut > cut.txt 2> cut.err
"$TRAWL" print --no-delta --no-sync garbled > garbled.txt 2> garbled.err
[ "$(lines cut.txt)" -gt 0 ] && [ "$(lines cut.txt)" -lt "$(lines print.orig.out)" ]
ok $? "the cut session lost events ($(lines print.orig.out) -> $(lines cut.txt))"
cmp_files garbled.txt cut.txt "garbled: print shows every event but those of the two packets"
grep -c "^trawl print: 2 corrupt regions skipped (8192 bytes)" garbled.err > n.sum
is "$(cat n.sum)" 1 "garbled: one summary line, 2 regions of 4096 bytes"

# --- empty metadata under the session: exit 1, the file named, the rest read
while read -r name args; do
	rc=$(run "$name" meta $args)
	grep -q "^trawl [a-z]*: meta/host1/ust/metadata: empty metadata file; the trace is skipped\$" "$name.meta.err"
	m=$?
	[ "$rc" -eq 1 ] && [ "$m" -eq 0 ]
	ok $? "empty metadata: $name exits 1 ($rc) and names the file, the trace skipped"
	[ "$m" -ne 0 ] && sed 's/^/#   /' "$name.meta.err" | head -3
done < cmds
# print still prints the other traces
grep -q "hostname = \"host0\"" print.meta.out || grep -q "host0" print.meta.out
ok $? "empty metadata: print prints the other traces ($(lines print.meta.out) lines)"
[ "$(lines print.meta.out)" -gt 0 ] && [ "$(lines print.meta.out)" -lt "$(lines print.orig.out)" ]
ok $? "empty metadata: fewer lines than the whole session ($(lines print.meta.out) < $(lines print.orig.out))"

# --- a host glob that matches nothing (the commands that take one)
for c in "print -H nosuch" "info -H nosuch" "analyze cputop --host nosuch" \
	 "agg -H nosuch count(sched_switch)" "state --host nosuch --at +1" \
	 "export -H nosuch -o nohost.json"; do
	# shellcheck disable=SC2086
	timeout 60 "$TRAWL" $c orig > nohost.out 2> nohost.err
	rc=$?
	[ "$rc" -ne 0 ] && [ "$rc" -lt 124 ] && grep -q "nosuch" nohost.err
	ok $? "host glob matching nothing: $c: exit $rc (not 0), a message naming it"
done
# view and sync have no host filter
skip "view has no --host"
skip "sync has no --host"
# --- an event name that matches nothing
timeout 60 "$TRAWL" print -e nosuch orig > noev.out 2> noev.err
rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -lt 124 ] && grep -q "nosuch" noev.err && [ "$(lines noev.out)" -eq 0 ]
ok $? "event name matching nothing: print -e nosuch: exit $rc (not 0), a message naming it, nothing printed"
timeout 60 "$TRAWL" print -e sched_switch -e nosuch orig > noev2.out 2> noev2.err
rc=$?
[ "$rc" -ne 0 ] && grep -q "nosuch" noev2.err
ok $? "an event glob that matches nothing beside one that does: exit $rc (not 0)"
timeout 60 "$TRAWL" agg 'count(nosuch)' orig > noev3.out 2> noev3.err
rc=$?
[ "$rc" -eq 2 ] && grep -q "no event matches 'nosuch'" noev3.err && [ "$(lines noev3.out)" -eq 0 ]
ok $? "agg's statement of an event matching nothing: count(nosuch): exit $rc (2, a statement that can never match), a message naming it, nothing printed"
skip "info, analyze, state, view, export and sync have no event filter"
finish
