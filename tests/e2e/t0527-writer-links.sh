#!/bin/sh
# The trace writer follows no link below the trace root (docs/ust.md,
# docs/kernel.md, "Files"): a symbolic link planted where a directory, a
# stream, an index or the metadata goes, a FIFO, or a hard link of another
# file is refused with a message naming the path and why; what the link
# points to stays untouched. simulate -o, an agent session and its
# snapshots, record -o (root).
. "$TRAWL_SRC/tests/e2e/lib.sh"
APP="$TRAWL_BUILD/examples/ust-counter"
[ -x "$APP" ] || { echo "Bail out! $APP is not built"; exit 1; }
plan 28

: > empty.conf
export TRAWL_CONFIG="$TRASH/empty.conf"
export TRAWL_AGENT_SOCKET="$TRASH/agent.sock"
AGENT_PID=""
cleanup() { [ -n "$AGENT_PID" ] && kill "$AGENT_PID" 2>/dev/null; }
trap cleanup EXIT

echo precious > victim
mkdir elsewhere
LINKF="a symbolic link where the trace writer writes a file: refused (links are not followed)"
LINKD="a symbolic link where the trace writer makes a directory: refused (links are not followed)"
intact() { [ "$(cat victim)" = precious ] && [ -z "$(ls -A elsewhere)" ]; }
# sim CASE: simulate into D-CASE (prepared by the caller), 1 host, 1 CPU
sim() { "$TRAWL" simulate -o "D-$1" --hosts 1 --cpus 1 --events 1000 --force --no-progress \
	> "sim-$1.out" 2> "sim-$1.err"; }

# 1. simulate -o: a stream file, the metadata, an index file, index/, the
# host and domain directories
mkdir -p D-stream/host0/kernel && ln -s "$TRASH/victim" D-stream/host0/kernel/channel0_0
sim stream
is "$?:$(cat sim-stream.err)" "1:trawl simulate: D-stream/host0/kernel/channel0_0: $LINKF" \
	"a link at a stream file: refused, named, exit 1"
intact; ok $? "... its target untouched"

mkdir -p D-meta/host0/kernel && ln -s "$TRASH/victim" D-meta/host0/kernel/metadata
sim meta
is "$?:$(cat sim-meta.err)" "1:trawl simulate: D-meta/host0/kernel/metadata: $LINKF" \
	"a link at the metadata: refused"
intact; ok $? "... its target untouched"

mkdir -p D-idx/host0/kernel/index && ln -s "$TRASH/victim" D-idx/host0/kernel/index/channel0_0.idx
sim idx
is "$?:$(cat sim-idx.err)" "1:trawl simulate: D-idx/host0/kernel/index/channel0_0.idx: $LINKF" \
	"a link at an index file: refused"
intact; ok $? "... its target untouched"

mkdir -p D-idxdir/host0/kernel && ln -s "$TRASH/elsewhere" D-idxdir/host0/kernel/index
sim idxdir
is "$?:$(cat sim-idxdir.err)" "1:trawl simulate: D-idxdir/host0/kernel/index: $LINKD" \
	"a link at index/: refused"
intact; ok $? "... nothing written where it points"

mkdir -p D-host && ln -s "$TRASH/elsewhere" D-host/host0
sim host
is "$?:$(cat sim-host.err)" "1:trawl simulate: D-host/host0: $LINKD" \
	"a link at the host directory: refused"
intact; ok $? "... nothing written where it points"

mkdir -p D-dom/host0 && ln -s "$TRASH/elsewhere" D-dom/host0/ust
sim dom
grep -qxF "trawl simulate: D-dom/host0/ust: $LINKD" sim-dom.err
is "$?:$(cat sim-dom.out | wc -l | tr -d ' ')" "0:0" "a link at a domain directory: refused"
intact; ok $? "... nothing written where it points"

mkdir -p D-fifo/host0/kernel && mkfifo D-fifo/host0/kernel/channel0_0
timeout 20 "$TRAWL" simulate -o D-fifo --hosts 1 --cpus 1 --events 1000 --force --no-progress \
	> sim-fifo.out 2> sim-fifo.err
is "$?:$(cat sim-fifo.err)" "1:trawl simulate: D-fifo/host0/kernel/channel0_0: not a regular file: refused" \
	"a FIFO at a stream file: refused at once (no hang)"

mkdir -p D-hard/host0/kernel && ln victim D-hard/host0/kernel/channel0_0
sim hard
is "$?:$(cat sim-hard.err)" \
	"1:trawl simulate: D-hard/host0/kernel/channel0_0: has another hard link: refused (it would be truncated there too)" \
	"a hard link of another file at a stream file: refused"
intact; ok $? "... the other file untouched"

# a plain run still writes (and replaces an earlier trace's regular files)
mkdir -p D-ok && sim ok && sim ok && "$TRAWL" info D-ok > /dev/null 2>&1
ok $? "without links, simulate -o writes (twice, with --force), and the trace reads"

# 2. an agent session whose host directory is a link
"$TRAWL" agent --host h --pidfile agent.pid > agent.out 2>&1 ||
	{ echo "Bail out! the agent does not start"; cat agent.out; exit 1; }
AGENT_PID=$(cat agent.pid)
mkdir S && ln -s "$TRASH/elsewhere" S/h
"$TRAWL" create s -o S > /dev/null && "$TRAWL" enable s 'counter:*' > /dev/null
"$TRAWL" start s > start.out 2> start.err
is "$?:$(cat start.err)" "1:trawl start: $TRASH/S/h: $LINKD" \
	"an agent session: a link at its host directory: the start is refused, named"
intact; ok $? "... nothing written where it points"
rm S/h
"$TRAWL" start s > /dev/null && "$APP" -n 10 > /dev/null && "$TRAWL" stop s > /dev/null &&
	[ "$("$TRAWL" print S | grep -c counter:tick)" = 10 ]
ok $? "... once the link is gone it records"

# 2b. a snapshot: a link at its host directory, below -o DIR
"$TRAWL" create z --snapshot -o Z --clock monotonic > /dev/null &&
	"$TRAWL" enable z 'counter:*' > /dev/null && "$TRAWL" start z > /dev/null &&
	"$APP" -n 10 > /dev/null
ok $? "a snapshot session recorded"
mkdir -p SN && ln -s "$TRASH/elsewhere" SN/h
"$TRAWL" snapshot record z -o "$TRASH/SN" > snap.out 2> snap.err
is "$?:$(cat snap.err)" "1:trawl snapshot: snapshot of z into $TRASH/SN: $TRASH/SN/h: $LINKD" \
	"snapshot -o DIR: a link at its host directory: refused, named"
intact; ok $? "... nothing written where it points"
"$TRAWL" snapshot record z -o "$TRASH/SN2" > /dev/null && "$TRAWL" stop z > /dev/null &&
	[ "$("$TRAWL" print SN2 | grep -c counter:tick)" = 10 ]
ok $? "... into a directory without links, the snapshot is written"

# 3. trawl record -o (kernel events, root)
if [ "$(id -u)" != 0 ]; then
	n=0; while [ $n -lt 5 ]; do skip "needs root (kernel events)"; n=$((n + 1)); done
	finish
fi
mkdir -p R/h/kernel && ln -s "$TRASH/victim" R/h/kernel/channel0_0
"$TRAWL" record -o R --host h --force -d 0.2 > rec.out 2> rec.err
st=$?
if [ $st -ne 0 ] && ! grep -q "channel0_0" rec.err; then
	why=$(head -1 rec.err)
	n=0; while [ $n -lt 5 ]; do skip "cannot record kernel events here: $why"; n=$((n + 1)); done
	finish
fi
is "$st:$(cat rec.err)" "1:trawl record: R/h/kernel/channel0_0: $LINKF" \
	"record -o: a link at a stream file: refused, named"
intact; ok $? "... its target untouched"
rm -rf R2; mkdir -p R2/h && ln -s "$TRASH/elsewhere" R2/h/kernel
"$TRAWL" record -o R2 --host h --force -d 0.2 > rec2.out 2> rec2.err
is "$?:$(cat rec2.err)" "1:trawl record: R2/h/kernel: $LINKD" "record -o: a link at kernel/: refused"
intact; ok $? "... nothing written where it points"
"$TRAWL" record -o R3 --host h -d 0.2 > /dev/null 2>&1 && "$TRAWL" info R3 > /dev/null 2>&1
ok $? "record -o without links records"
finish
