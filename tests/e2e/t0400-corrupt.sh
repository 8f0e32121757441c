#!/bin/sh
# Corrupt input: `trawl print` on a damaged copy of a simulated session must
# exit non-zero (but not crash: exit < 128, and not hang: timeout 20 s),
# name the damaged file and a byte offset inside the damaged packet on
# stderr, and still print every event of the packets before the damage and
# of every other stream. Damage, one at a time, to packet K of one stream:
# truncation mid-packet, an overwritten magic, a packet_size beyond EOF, a
# content_size beyond packet_size, a content_size ending in the middle of an
# event, garbage inserted before the packet, the packet overwritten with
# 0xff (but its magic); and
# a truncated or garbled metadata file.
#
# The expected output is the print of the same session with the damaged
# stream cut cleanly before packet K (a valid trace; babeltrace2 checks that
# it is). The damaged print must contain every expected line, in order;
# lines beyond them may only be events of packet K that precede the damage,
# so they must all appear in the undamaged print.
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v python3 >/dev/null 2>&1 || skip_all "python3 is needed to damage files"
command -v timeout >/dev/null 2>&1 || skip_all "timeout (coreutils) is needed"

"$TRAWL" simulate -o orig --hosts 2 --cpus 2 --events 20000 --seed 42 --packet-size 4096 \
	> sim.log 2>&1 || { plan 1; ok 1 "trawl simulate"; sed 's/^/#   /' sim.log; finish; }
STREAM=host0/kernel/channel0_0
[ -f "orig/$STREAM" ] || STREAM=$(cd orig && find . -path '*kernel*' -name '*_0' -type f | sed 's|^\./||' | head -1)
IDX=$(dirname "$STREAM")/index/$(basename "$STREAM").idx
K=2

# packets FILE IDX: "offset packet_size_bytes content_size_bytes" per packet,
# from the index (big-endian, 16-byte header, 72-byte entries).
packets() {
	python3 - "$1" "$2" <<'PY'
import struct, sys, os
data, idx = sys.argv[1], sys.argv[2]
raw = open(idx, 'rb').read()
magic, major, minor, esz = struct.unpack('>IIII', raw[:16])
assert magic == 0xC1F1DCC1, 'bad index magic'
size = os.path.getsize(data)
for off in range(16, len(raw) - esz + 1, esz):
	o, psz, csz = struct.unpack('>QQQ', raw[off:off + 24])
	print(o, psz // 8, csz // 8)
PY
}

# damage KIND DIR: damages DIR/$STREAM packet $K (or the metadata) in place.
damage() {
	python3 - "$1" "$2/$STREAM" "$2/$(dirname "$STREAM")/metadata" "$K" packets.txt <<'PY'
import os, random, struct, sys
kind, path, meta, k = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
pk = [tuple(map(int, l.split())) for l in open(sys.argv[5])]
off, psz, csz = pk[k]
data = bytearray(open(path, 'rb').read())
rnd = random.Random(1)
if kind == 'truncate':
	data = data[:off + csz // 2]
elif kind == 'magic':
	data[off:off + 4] = b'\xde\xad\xbe\xef'
elif kind == 'size':
	# packet_size is stored right after content_size (both in bits, LE)
	pat = struct.pack('<QQ', csz * 8, psz * 8)
	at = data.find(pat, off, off + 256)
	assert at >= 0, 'packet context sizes not found'
	data[at + 8:at + 16] = struct.pack('<Q', len(data) * 8 * 4)
elif kind in ('content', 'midevent'):
	pat = struct.pack('<QQ', csz * 8, psz * 8)
	at = data.find(pat, off, off + 256)
	assert at >= 0, 'packet context sizes not found'
	# content_size beyond packet_size, or ending 3 bits into the middle
	# of the packet's events (no event ends on a bit that is not a byte)
	bits = psz * 8 + 64 if kind == 'content' else (csz // 2) * 8 + 3
	data[at:at + 8] = struct.pack('<Q', bits)
elif kind == 'garbage':
	data[off:off] = bytes(rnd.randrange(256) for _ in range(1000))
elif kind == 'ff':
	data[off + 4:off + psz] = b'\xff' * (psz - 4)
elif kind == 'meta-truncate':
	m = open(meta, 'rb').read()
	open(meta, 'wb').write(m[:len(m) // 2])
	sys.exit(0)
elif kind == 'meta-garble':
	m = bytearray(open(meta, 'rb').read())
	mid = len(m) // 2
	m[mid:mid + 40] = b'}}} ;; @@ typealias struct { := ;;; }} ?'
	open(meta, 'wb').write(bytes(m))
	sys.exit(0)
else:
	sys.exit('unknown damage ' + kind)
open(path, 'wb').write(bytes(data))
PY
}

# subseq EXPECTED DAMAGED UNDAMAGED: EXPECTED is a subsequence of DAMAGED,
# and every other DAMAGED line is in UNDAMAGED. Prints what is wrong.
subseq() {
	python3 - "$1" "$2" "$3" <<'PY'
import sys
exp = open(sys.argv[1], 'rb').read().splitlines()
dmg = open(sys.argv[2], 'rb').read().splitlines()
und = set(open(sys.argv[3], 'rb').read().splitlines())
i = 0
extra = []
for line in dmg:
	if i < len(exp) and line == exp[i]:
		i += 1
	else:
		extra.append(line)
if i < len(exp):
	print('missing expected line %d of %d: %s' % (i + 1, len(exp), exp[i][:200].decode(errors='replace')))
	sys.exit(1)
bad = [l for l in extra if l not in und]
if bad:
	print('%d printed lines are not in the undamaged trace, e.g.: %s' % (len(bad), bad[0][:200].decode(errors='replace')))
	sys.exit(1)
print('%d expected lines present, %d extra lines from the damaged packet' % (len(exp), len(extra)))
PY
}

packets "orig/$STREAM" "orig/$IDX" > packets.txt
np=$(wc -l < packets.txt)
if [ "$np" -le $((K + 1)) ]; then
	plan 1; ok 1 "$STREAM has more than $((K + 1)) packets (it has $np)"; finish
fi
set -- $(sed -n "$((K + 1))p" packets.txt)
OFF=$1 PSZ=$2
plan 29

"$TRAWL" print --no-delta --clock-seconds orig > orig.txt 2> orig.err
ok $? "the undamaged session prints cleanly"

# The session with the stream cut cleanly before packet K: the expectation.
cp -r orig cut
truncate -s "$OFF" "cut/$STREAM"
"$TRAWL" print --no-delta --clock-seconds cut > cut.txt 2> cut.err
ok $? "the session cut at a packet boundary prints cleanly"
if command -v babeltrace2 >/dev/null 2>&1; then
	babeltrace2 --no-delta --clock-seconds cut > cut.bt 2>/dev/null
	sh "$TRAWL_SRC/tests/e2e/normalize.sh" < cut.txt > cut.n
	sh "$TRAWL_SRC/tests/e2e/normalize.sh" < cut.bt > cut.btn
	cmp_files cut.n cut.btn "the cut session is valid: babeltrace2 prints the same"
else
	skip "babeltrace2 is not installed"
fi
[ "$(wc -l < cut.txt)" -lt "$(wc -l < orig.txt)" ] && [ "$(wc -l < cut.txt)" -gt 0 ]
ok $? "cutting the stream removed events ($(wc -l < orig.txt) -> $(wc -l < cut.txt))"

# check KIND: damage a fresh copy and check what trawl print does with it.
check() {
	kind=$1
	rm -rf "d-$kind"
	cp -r orig "d-$kind"
	damage "$kind" "d-$kind"
	timeout 20 "$TRAWL" print --no-delta --clock-seconds "d-$kind" > "$kind.txt" 2> "$kind.err"
	rc=$?
	[ "$rc" -ne 0 ] && [ "$rc" -lt 124 ] && ! grep -q 'Sanitizer\|runtime error' "$kind.err"
	ok $? "$kind: trawl print fails cleanly (exit $rc: not 0, no crash, no timeout, no sanitizer report)"
	echo "#   $(grep -v '^ *$' "$kind.err" | head -1)"
	case $kind in
	meta-*)
		grep -q "metadata" "$kind.err"
		ok $? "$kind: the error names the metadata file"
		return ;;
	esac
	file=$(basename "$STREAM")
	at=$(sed -n "s/.*$file.*byte \([0-9][0-9]*\).*/\1/p" "$kind.err" | head -1)
	[ -n "$at" ] && [ "$at" -ge "$OFF" ] && [ "$at" -le $((OFF + PSZ + 1000)) ]
	ok $? "$kind: the error names $file and a byte offset in packet $K [$OFF, $((OFF + PSZ))): ${at:-none}"
	out=$(subseq cut.txt "$kind.txt" orig.txt)
	ok $? "$kind: every event before the damage and of the other streams is printed"
	echo "#   $out"
}

for kind in truncate magic size content midevent garbage ff; do
	check "$kind"
done
check meta-truncate
check meta-garble
finish
