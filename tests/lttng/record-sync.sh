#!/bin/sh
# tests/lttng/record-sync.sh OUTDIR [COUNT [GAP_US [SHIFT_S]]] - records,
# with LTTng 2.13 (lttng-ust), two traces of two processes posing as two
# nodes that exchange application messages, for the clock synchronization
# tests on other tracers' CTF traces (t0640).
#
# Builds sync_fixture.c (with $CC, default cc, into $FIXTURE_BUILD, default
# OUTDIR/build) as two programs, syncnodeA and syncnodeB (two procnames),
# then records one run in two LTTng sessions at once, each keeping only one
# process's events (enable-event --filter on $ctx.procname), with the vpid,
# vtid and procname contexts, big buffers in blocking mode (lossless).
# syncnodeA sends COUNT (default 300) requests, one every GAP_US (default
# 1000) microseconds, syncnodeB answers each (see sync_fixture.c):
#   OUTDIR/raw/A, OUTDIR/raw/B   the sessions as LTTng wrote them
#   OUTDIR/counts                "A->B N" and "B->A N", from the program
# Then it prepares a trawl session of two nodes from them:
#   OUTDIR/session/nodeA/ust, OUTDIR/session/nodeB/ust
# copies of the per-uid traces whose metadata is rewritten as plain text
# TSDL (LTTng writes it packetized) with env.hostname "nodeA" / "nodeB",
# and with nodeB's clock offset set to nodeA's plus SHIFT_S (default 5)
# seconds. Both processes read the same clock, and both traces now have
# the same clock offset but for the shift, so the truth is known exactly:
# nodeB's clock = nodeA's + SHIFT_S s, drift 0.
#   OUTDIR/truth                 "shift_ns N" (SHIFT_S in ns)
#
# Starts an lttng-sessiond (--no-kernel) only if none answers, and stops
# only that one, by its pid, at exit. Exit status: 0 recorded; 77 when it
# cannot record here (no lttng, no lttng-ust headers, no session daemon,
# no python3), with the reason on stderr; 1 on a failure.
set -u

OUT=${1:?usage: record-sync.sh OUTDIR [COUNT [GAP_US [SHIFT_S]]]}
COUNT=${2:-300}
GAP=${3:-1000}
SHIFT=${4:-5}
HERE=$(cd "$(dirname "$0")" && pwd)
CC=${CC:-cc}
BUILD=${FIXTURE_BUILD:-$OUT/build}

skip() { echo "record-sync.sh: cannot record here: $*" >&2; exit 77; }
fail() { echo "record-sync.sh: $*" >&2; exit 1; }

case "$COUNT$GAP$SHIFT" in *[!0-9-]*) fail "COUNT, GAP_US and SHIFT_S are integers" ;; esac
command -v lttng >/dev/null 2>&1 || skip "lttng (lttng-tools) is not installed"
command -v lttng-sessiond >/dev/null 2>&1 || skip "lttng-sessiond is not installed"
. "$(dirname "$0")/turn.sh"
command -v "$CC" >/dev/null 2>&1 || skip "no C compiler ($CC)"
command -v python3 >/dev/null 2>&1 || skip "python3 is needed to rewrite the metadata"

mkdir -p "$OUT" "$BUILD" || fail "cannot create $OUT"
OUT=$(cd "$OUT" && pwd)
BUILD=$(cd "$BUILD" && pwd)

# Build the instrumented program, under two names (two procnames).
if ! "$CC" -O2 -I"$HERE" -o "$BUILD/syncnodeA" "$HERE/sync_fixture.c" \
	"$HERE/sync_fixture_tp.c" -llttng-ust -ldl -lpthread 2> "$BUILD/cc.log"; then
	if grep -q 'lttng/tracepoint.h' "$BUILD/cc.log"; then
		skip "lttng-ust development files are missing"
	fi
	cat "$BUILD/cc.log" >&2
	fail "cannot build the fixture program"
fi
cp "$BUILD/syncnodeA" "$BUILD/syncnodeB" || fail "cannot copy the fixture program"

. "$(dirname "$0")/sessiond.sh"

# One session per node, each keeping its own process's events only.
rm -rf "${OUT:?}/raw" "${OUT:?}/session"
stamp="$$_$(date +%s%N)"
for n in A B; do
	sess="trawl_sync_${n}_$stamp"
	lttng create "$sess" --output="$OUT/raw/$n" >/dev/null || fail "lttng create failed"
	SESSIONS="$SESSIONS $sess"
	lttng enable-channel -u -s "$sess" --subbuf-size=1M --num-subbuf=4 \
		--blocking-timeout=inf ch >/dev/null || fail "lttng enable-channel failed"
	lttng enable-event -u -s "$sess" -c ch 'app_sync:*' \
		--filter "\$ctx.procname == \"syncnode$n\"" >/dev/null || fail "lttng enable-event failed"
	lttng add-context -u -s "$sess" -c ch -t vpid -t vtid -t procname >/dev/null ||
		fail "lttng add-context failed"
done
for s in $SESSIONS; do
	lttng start "$s" >/dev/null || fail "lttng start failed"
done
LTTNG_UST_ALLOW_BLOCKING=1 LTTNG_UST_REGISTER_TIMEOUT=10000 \
	"$BUILD/syncnodeA" "$COUNT" "$GAP" "$BUILD/syncnodeB" > "$OUT/counts" ||
	fail "the fixture program failed"
for s in $SESSIONS; do
	lttng stop "$s" >/dev/null || fail "lttng stop failed"
	lttng destroy "$s" >/dev/null || fail "lttng destroy failed"
done
SESSIONS=""

# The session: one per-uid trace per node, metadata rewritten.
for n in A B; do
	meta=$(find "$OUT/raw/$n" -name metadata | head -1)
	[ -n "$meta" ] || fail "no trace was written under $OUT/raw/$n (did the program register?)"
	[ "$(find "$OUT/raw/$n" -name metadata | wc -l)" -eq 1 ] ||
		fail "more than one trace under $OUT/raw/$n"
	mkdir -p "$OUT/session/node$n" && cp -r "$(dirname "$meta")" "$OUT/session/node$n/ust" ||
		fail "cannot copy the trace of node $n"
done
python3 - "$OUT/session/nodeA/ust/metadata" "$OUT/session/nodeB/ust/metadata" "$SHIFT" \
	> "$OUT/truth" <<'PYEOF' || fail "cannot rewrite the metadata"
import re, struct, sys

def text(path):
    """The metadata as text: packets (CTF 1.8 metadata packet header, 37
    bytes, either byte order) are unwrapped, text is kept as is."""
    d = open(path, 'rb').read()
    pos, out = 0, []
    if d[:4] not in (b'\x57\x1d\xd1\x75', b'\x75\xd1\x1d\x57'):
        return d.decode()
    bo = '<' if d[:4] == b'\x57\x1d\xd1\x75' else '>'
    while pos < len(d):
        if len(d) - pos < 37 or struct.unpack_from(bo + 'I', d, pos)[0] != 0x75d11d57:
            sys.exit('%s: bad metadata packet at byte %d' % (path, pos))
        content, size = struct.unpack_from(bo + 'II', d, pos + 24)
        if content < 37 * 8 or size < content or pos + size // 8 > len(d):
            sys.exit('%s: bad metadata packet sizes at byte %d' % (path, pos))
        out.append(d[pos + 37:pos + content // 8])
        pos += size // 8
    return b''.join(out).decode()

def one(pattern, s, what, path):
    m = list(re.finditer(pattern, s, re.M))
    if len(m) != 1:
        sys.exit('%s: %d %s, want 1' % (path, len(m), what))
    return m[0]

def clock(s, path):
    c = one(r'^clock \{[^}]*\};', s, 'clock blocks', path)
    f = one(r'^\s*freq = (\d+);', c.group(0), 'freq', path)
    o = re.search(r'^\s*offset = (-?\d+);', c.group(0), re.M)
    os_ = re.search(r'^\s*offset_s = (-?\d+);', c.group(0), re.M)
    return c, int(f.group(1)), int(o.group(1)) if o else 0, int(os_.group(1)) if os_ else 0

def write(path, s):
    open(path, 'w').write(s)

pa, pb, shift = sys.argv[1], sys.argv[2], int(sys.argv[3])
ta, tb = text(pa), text(pb)
ca, fa, oa, osa = clock(ta, pa)
cb, fb, ob, osb = clock(tb, pb)
if fa != fb:
    sys.exit('the two clocks have different frequencies (%d, %d)' % (fa, fb))
# nodeB: nodeA's offset plus the shift (LTTng writes offset only).
body = re.sub(r'^\s*offset(_s)? = -?\d+;\n', '', cb.group(0), flags=re.M)
body = body.replace('\n};', '\n\t/* record-sync.sh: nodeA\'s offset + %d s */\n'
                    '\toffset_s = %d;\n\toffset = %d;\n};' % (shift, osa + shift, oa))
tb = tb[:cb.start()] + body + tb[cb.end():]
for path, t, host in ((pa, ta, 'nodeA'), (pb, tb, 'nodeB')):
    env = one(r'^env \{[^}]*\};', t, 'env blocks', path)
    e = env.group(0)
    one(r'^\s*hostname = "[^"]*";', e, 'hostname', path)
    e = re.sub(r'^(\s*hostname = )"[^"]*";', r'\1"%s";' % host, e, flags=re.M)
    write(path, t[:env.start()] + e + t[env.end():])
print('shift_ns %d' % (shift * 1000000000))
PYEOF
exit 0
