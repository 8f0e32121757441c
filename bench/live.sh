#!/bin/sh
# bench/live.sh - live latency: trawl's relay against lttng-relayd 2.13, on
# one machine (127.0.0.1), in one run, interleaved (a slow period of the
# shared machine hits both). The method of the LTTng live anchor
# (the anchors' 04_lttng_live_latency.sh, their RESULTS.md section 4):
#
#   app --(ring buffer)--> agent / consumerd --(live timer, TCP)--> relay
#       --(LTTng live protocol, TCP)--> stdbuf -oL babeltrace2 -i lttng-live
#       --(fifo)--> reader
#
# Both apps emit the same event, anchor:ping { u64 seq; u64 t_ns }, t_ns the
# CLOCK_REALTIME ns taken just before the tracepoint: K events with random
# gaps in [INTERVAL_MS, 2*INTERVAL_MS) (so the phase against the live timer is
# uniform), after WAIT_MS for the viewer to attach. The reader (the anchor's)
# stamps each line as it arrives (CLOCK_REALTIME) and writes "seq latency_ms".
# The same viewer command for both (babeltrace2's default --retry-duration).
#
# For each live timer in LIVE_TIMERS_MS (trawl create --live-timer MS, lttng
# create --live MS*1000), and for both tools' defaults (trawl create --relay
# without --live-timer: 100 ms; lttng create --live without a value: 1 s; the
# headline row), RUNS runs, interleaved. The first WARMUP events after attach
# are excluded (as the anchor does; their maximum is shown apart); figures
# over the pooled runs: median, p90, p99, max (ms), events received/emitted,
# and the ratios trawl/LTTng of the medians and p99.
#
# Then a kernel event's latency (KERNEL=1; 0 skips it; root and tracefs
# with syscalls:sys_enter_lseek needed), RUNS runs: `trawl record -k
# syscalls:sys_enter_lseek --relay --only-command -- kemit K INTERVAL_MS
# WAIT_MS+1000`, whose K lseek(2) calls on /dev/null have as offset the
# CLOCK_REALTIME ns taken just before, with the same random gaps;
# `trawl print --live` attached (the recorder's default live timer,
# 100 ms), its lines stamped by a reader as they arrive. No LTTng row:
# lttng-modules are not on these machines.
#
# Then trawl's cost per node with the defaults (CPU=1; 0 skips it): one
# session, a program that emits one event, then nothing for IDLE_S s, then
# RATE events/s (in bursts every ms) for BUSY_S s, and `trawl print --live`
# attached throughout (its lines counted by a reader, not stored). The CPU
# time of the agent, the relay and the viewer (every thread's, from
# /proc/PID/task/*/schedstat) over the idle window, and over the busy one
# (from the first busy event until the viewer has shown them all), in % of
# one CPU; the program's own CPU apart. And, idle, how often the agent's
# loop thread (its main thread) slept and woke: its voluntary context
# switches per second (a loop turning every 2 ms: 500).
#
#   TRAWL_BUILD=build sh bench/live.sh
#   env: LIVE_TIMERS_MS="1000 100" RUNS=3 K=100 INTERVAL_MS=50 WAIT_MS=2000
#        WARMUP=3 DEFAULTS=1 (0: skip the defaults row) WORK=... KEEP=0
#        CPU=1 IDLE_S=10 BUSY_S=5 RATE=1000000 KERNEL=1
#
# Starts its own lttng-relayd (free ports), lttng-sessiond if none runs,
# trawl relay and trawl agent (private socket), all on 127.0.0.1, and stops
# exactly those (by pid) at exit; destroys only its own sessions. Installs
# nothing (scripts/install-deps.sh has lttng-tools, liblttng-ust-dev,
# babeltrace2). Results: stdout and $TRAWL_BUILD/bench/live-results-<UTC>.md.
set -u
: "${TRAWL_BUILD:?set TRAWL_BUILD to a build directory}"
TRAWL_BUILD=$(cd "$TRAWL_BUILD" && pwd) || exit 1
SRC=$(cd "$(dirname "$0")/.." && pwd)
TRAWL=$TRAWL_BUILD/trawl
LIVE_TIMERS_MS=${LIVE_TIMERS_MS:-"1000 100"}
RUNS=${RUNS:-3}
K=${K:-100}
INTERVAL_MS=${INTERVAL_MS:-50}
WAIT_MS=${WAIT_MS:-2000}
WARMUP=${WARMUP:-3}
DEFAULTS=${DEFAULTS:-1}
CPU=${CPU:-1}
IDLE_S=${IDLE_S:-10}
BUSY_S=${BUSY_S:-5}
RATE=${RATE:-1000000}
KERNEL=${KERNEL:-1}
WORK=${WORK:-$TRAWL_BUILD/bench/live-work}
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT=$TRAWL_BUILD/bench/live-results-$STAMP.md
HOST=$(hostname)
TAG=$$

die() { echo "live: $*" >&2; exit 1; }
log() { echo "live: $*" >&2; }
[ -x "$TRAWL" ] || die "$TRAWL is not built"
[ -f "$TRAWL_BUILD/libtrawl.a" ] || die "$TRAWL_BUILD/libtrawl.a is not built"
for c in lttng lttng-relayd lttng-sessiond babeltrace2 stdbuf gcc ss; do
	command -v "$c" >/dev/null 2>&1 || die "$c is not installed (scripts/install-deps.sh)"
done

rm -rf "$WORK"
mkdir -p "$WORK/src" "$WORK/raw" "$WORK/err" "$TRAWL_BUILD/bench" || die "cannot create $WORK"
SOCKDIR=$(mktemp -d /tmp/trawl-live.XXXXXX) || die "mktemp failed"
SOCK=$SOCKDIR/agent.sock
RAWLOG=$WORK/runs.txt	# one line per run: tool setting run timer_ms received emitted ...
: > "$RAWLOG"

# ------------------------------------------------------------------ sources
S=$WORK/src
cat > "$S/tp.h" <<'EOF'
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER anchor
#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./tp.h"
#if !defined(ANCHOR_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define ANCHOR_TP_H
#include <lttng/tracepoint.h>
LTTNG_UST_TRACEPOINT_EVENT(anchor, ping,
  LTTNG_UST_TP_ARGS(uint64_t, seq, uint64_t, t_ns),
  LTTNG_UST_TP_FIELDS(
    lttng_ust_field_integer(uint64_t, seq, seq)
    lttng_ust_field_integer(uint64_t, t_ns, t_ns)))
#endif
#include <lttng/tracepoint-event.h>
EOF
cat > "$S/tp.c" <<'EOF'
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "tp.h"
EOF
# the anchor's emitter, unchanged
cat > "$S/emit.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include "tp.h"
static uint64_t rt_ns(void){struct timespec t;clock_gettime(CLOCK_REALTIME,&t);return (uint64_t)t.tv_sec*1000000000ull+t.tv_nsec;}
int main(int argc,char**argv){
  int k = argc>1? atoi(argv[1]) : 100; int ms = argc>2? atoi(argv[2]) : 50; int wait_ms = argc>3? atoi(argv[3]) : 2000;
  srand((unsigned)rt_ns());
  usleep((useconds_t)wait_ms*1000);           /* let the viewer attach */
  for (int i=0;i<k;i++){
    uint64_t t = rt_ns();
    lttng_ust_tracepoint(anchor, ping, (uint64_t)i, t);
    /* random gap in [ms, 2*ms) so the emission phase vs the live timer is uniform */
    usleep((useconds_t)ms*1000 + (useconds_t)(rand() % (ms*1000)));
  }
  return 0;
}
EOF
# the same program with trawl's tracepoint (and a note on stderr if the
# event was not enabled when the first one was emitted)
cat > "$S/emit-trawl.c" <<'EOF'
#define TRAWL_TRACEPOINT_DEFINE
#include <trawl/tracepoint.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
TRAWL_TRACEPOINT_EVENT(anchor, ping, TRAWL_LOGLEVEL_INFO,
	TRAWL_ARGS(uint64_t seq, uint64_t t_ns),
	TRAWL_FIELDS(
		TRAWL_FIELD_INT(uint64_t, seq, seq)
		TRAWL_FIELD_INT(uint64_t, t_ns, t_ns)))
static uint64_t rt_ns(void){struct timespec t;clock_gettime(CLOCK_REALTIME,&t);return (uint64_t)t.tv_sec*1000000000ull+t.tv_nsec;}
int main(int argc,char**argv){
  int k = argc>1? atoi(argv[1]) : 100; int ms = argc>2? atoi(argv[2]) : 50; int wait_ms = argc>3? atoi(argv[3]) : 2000;
  srand((unsigned)rt_ns());
  usleep((useconds_t)wait_ms*1000);           /* let the viewer attach */
  if (!trawl_tracepoint_enabled(anchor, ping))
    fprintf(stderr, "emit-trawl: anchor:ping not enabled after %d ms\n", wait_ms);
  for (int i=0;i<k;i++){
    uint64_t t = rt_ns();
    trawl_tracepoint(anchor, ping, (uint64_t)i, t);
    /* random gap in [ms, 2*ms) so the emission phase vs the live timer is uniform */
    usleep((useconds_t)ms*1000 + (useconds_t)(rand() % (ms*1000)));
  }
  return 0;
}
EOF
# the anchor's reader, unchanged
cat > "$S/reader.c" <<'EOF'
/* reads babeltrace2 text lines; for each "seq = S, t_ns = T" prints "S latency_ms" */
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
int main(void){
  char line[4096];
  while (fgets(line, sizeof line, stdin)) {
    struct timespec now; clock_gettime(CLOCK_REALTIME, &now);
    uint64_t n = (uint64_t)now.tv_sec*1000000000ull + now.tv_nsec;
    char *ps = strstr(line, "seq = "), *pt = strstr(line, "t_ns = ");
    if (!ps || !pt) continue;
    unsigned long long s = strtoull(ps+6, 0, 10), t = strtoull(pt+7, 0, 10);
    printf("%llu %.3f\n", s, (double)(int64_t)(n - t)/1e6);
    fflush(stdout);
  }
  return 0;
}
EOF
(cd "$S" && gcc -O2 -I. -o emit emit.c tp.c -llttng-ust -ldl) ||
	die "cannot build the lttng-ust emitter (liblttng-ust-dev: scripts/install-deps.sh)"
(cd "$S" && gcc -O2 -I"$SRC/include" -o emit-trawl emit-trawl.c "$TRAWL_BUILD/libtrawl.a" -lpthread -lm) ||
	die "cannot build the trawl emitter"
(cd "$S" && gcc -O2 -o reader reader.c) || die "cannot build the reader"
# the cost phase's program: one event, then waits for $3 (the idle window
# is the script's), then $1 events/s for $2 s, bursts every ms; writes how
# many it emitted to $4, then waits for $5
cat > "$S/emit-rate.c" <<'EOF'
#define TRAWL_TRACEPOINT_DEFINE
#include <trawl/tracepoint.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
TRAWL_TRACEPOINT_EVENT(anchor, ping, TRAWL_LOGLEVEL_INFO,
	TRAWL_ARGS(uint64_t seq, uint64_t t_ns),
	TRAWL_FIELDS(
		TRAWL_FIELD_INT(uint64_t, seq, seq)
		TRAWL_FIELD_INT(uint64_t, t_ns, t_ns)))
static uint64_t mono_ns(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return (uint64_t)t.tv_sec*1000000000ull+t.tv_nsec;}
int main(int argc,char**argv){
  long rate = atol(argv[1]); int busy_s = atoi(argv[2]);
  const char *busy = argv[3], *emitted = argv[4], *end = argv[5];
  (void)argc;
  for (int i = 0; i < 3000 && !trawl_tracepoint_enabled(anchor, ping); i++) usleep(10000);
  uint64_t seq = 0;
  trawl_tracepoint(anchor, ping, seq++, mono_ns());
  for (int i = 0; i < 60000 && access(busy, F_OK) != 0; i++) usleep(10000);
  uint64_t t0 = mono_ns(), per_ms = (uint64_t)(rate / 1000);
  for (uint64_t ms = 0; ms < (uint64_t)busy_s * 1000; ms++) {
    for (uint64_t k = 0; k < per_ms; k++) trawl_tracepoint(anchor, ping, seq++, 0);
    uint64_t next = t0 + (ms + 1) * 1000000ull, now = mono_ns();
    if (next > now) { struct timespec d = { 0, (long)(next - now) }; nanosleep(&d, NULL); }
  }
  FILE *f = fopen(emitted, "w"); if (f) { fprintf(f, "%llu\n", (unsigned long long)seq); fclose(f); }
  for (int i = 0; i < 60000 && access(end, F_OK) != 0; i++) usleep(10000);
  return 0;
}
EOF
# the cost phase's reader: counts lines, the count in $1 after every read
# (the file rewritten in place)
cat > "$S/count.c" <<'EOF'
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(int argc,char**argv){
  static char b[1 << 16]; unsigned long long n = 0; ssize_t k;
  int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
  (void)argc;
  if (fd < 0) return 1;
  while ((k = read(0, b, sizeof b)) > 0) {
    for (char *p = b; (p = memchr(p, '\n', (size_t)(b + k - p))); p++) n++;
    char t[32]; int l = snprintf(t, sizeof t, "%20llu\n", n);
    if (pwrite(fd, t, (size_t)l, 0) != l) return 1;
  }
  return 0;
}
EOF
# the kernel row's program: K lseek(2) calls, each with the CLOCK_REALTIME
# ns as its offset, and its reader ("syscall_entry_lseek: ... offset = T")
cat > "$S/kemit.c" <<'EOF'
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
static uint64_t rt_ns(void){struct timespec t;clock_gettime(CLOCK_REALTIME,&t);return (uint64_t)t.tv_sec*1000000000ull+t.tv_nsec;}
int main(int argc,char**argv){
  int k = argc>1? atoi(argv[1]) : 100; int ms = argc>2? atoi(argv[2]) : 50; int wait_ms = argc>3? atoi(argv[3]) : 2000;
  int fd = open("/dev/null", O_RDONLY);
  if (fd < 0) return 1;
  srand((unsigned)rt_ns());
  usleep((useconds_t)wait_ms*1000);           /* let the viewer attach */
  for (int i=0;i<k;i++){
    lseek(fd, (off_t)rt_ns(), SEEK_SET);
    usleep((useconds_t)ms*1000 + (useconds_t)(rand() % (ms*1000)));
  }
  return 0;
}
EOF
cat > "$S/kreader.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
int main(void){
  char line[8192]; unsigned long long n = 0;
  while (fgets(line, sizeof line, stdin)) {
    struct timespec now; clock_gettime(CLOCK_REALTIME, &now);
    uint64_t t1 = (uint64_t)now.tv_sec*1000000000ull + now.tv_nsec;
    char *p = strstr(line, "syscall_entry_lseek"), *o = p ? strstr(p, "offset = ") : NULL;
    if (!o) continue;
    unsigned long long t = strtoull(o+9, 0, 10);
    printf("%llu %.3f\n", n++, (double)(int64_t)(t1 - t)/1e6);
    fflush(stdout);
  }
  return 0;
}
EOF
if [ "$KERNEL" = 1 ]; then
	if [ "$(id -u)" != 0 ] || [ ! -d /sys/kernel/tracing/events/syscalls/sys_enter_lseek ]; then
		log "no kernel row: needs root and tracefs with syscalls:sys_enter_lseek"
		KERNEL=0
	else
		(cd "$S" && gcc -O2 -o kemit kemit.c && gcc -O2 -o kreader kreader.c) ||
			die "cannot build the kernel row's program"
	fi
fi
if [ "$CPU" = 1 ]; then
	(cd "$S" && gcc -O2 -I"$SRC/include" -o emit-rate emit-rate.c "$TRAWL_BUILD/libtrawl.a" -lpthread -lm) ||
		die "cannot build the cost phase's program"
	(cd "$S" && gcc -O2 -o count count.c) || die "cannot build the line counter"
fi

# ------------------------------------------------------------------ daemons
RELAYD="" OWN_SESSIOND="" TRELAY="" TAGENT="" BTPID="" RDPID=""
# stop PID: SIGTERM, then up to 5 s, then SIGKILL
stop_pid() {
	[ -n "$1" ] || return 0
	kill "$1" 2>/dev/null || return 0
	for _ in $(seq 50); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
	kill -KILL "$1" 2>/dev/null
}
cleanup() {
	stop_pid "$BTPID"; stop_pid "$RDPID"; stop_pid "${KREC:-}"; stop_pid "${CVIEW:-}"; stop_pid "${CCOUNT:-}"; stop_pid "${CEMIT:-}"
	if [ -n "$TAGENT" ]; then
		for s in $(TRAWL_AGENT_SOCKET=$SOCK timeout 5 "$TRAWL" list 2>/dev/null |
			grep -o "trawllive_${TAG}_[A-Za-z0-9_]*" | sort -u); do
			TRAWL_AGENT_SOCKET=$SOCK timeout 5 "$TRAWL" destroy "$s" >/dev/null 2>&1
		done
	fi
	for s in $(timeout 10 lttng list 2>/dev/null | grep -o "ltlive_${TAG}_[A-Za-z0-9_]*" | sort -u); do
		timeout 10 lttng destroy "$s" >/dev/null 2>&1
	done
	stop_pid "$TAGENT"; stop_pid "$TRELAY"; stop_pid "$RELAYD"; stop_pid "$OWN_SESSIOND"
	rm -rf "$SOCKDIR"
	[ "${KEEP:-0}" = 1 ] || rm -rf "$WORK/trawl-out" "$WORK/lttng-out"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

listening() { [ -n "$(ss -ltnH "sport = :$1" 2>/dev/null)" ]; }
# a port nobody listens on (lttng-relayd cannot take port 0)
free_port() {
	for _ in $(seq 100); do
		p=$(od -An -N2 -tu2 /dev/urandom | awk '{ print 20000 + $1 % 30000 }')
		case " $* " in *" $p "*) continue ;; esac
		listening "$p" || { echo "$p"; return 0; }
	done
	return 1
}

# lttng-sessiond: reuse a running one, else start one and stop it at exit
if timeout 10 lttng list >/dev/null 2>&1; then
	log "reusing the running lttng-sessiond"
else
	if [ "$(id -u)" = 0 ]; then RUNDIR=/var/run/lttng; else RUNDIR=$HOME/.lttng; fi
	timeout 30 lttng-sessiond --daemonize --no-kernel >"$WORK/sessiond.log" 2>&1 ||
		die "lttng-sessiond did not start: $(tail -3 "$WORK/sessiond.log")"
	OWN_SESSIOND=$(cat "$RUNDIR/lttng-sessiond.pid" 2>/dev/null)
	log "started lttng-sessiond, pid $OWN_SESSIOND"
	timeout 10 lttng list >/dev/null 2>&1 || die "lttng-sessiond does not answer"
fi

# lttng-relayd on three free ports (retried if another process took one)
for attempt in 1 2 3 4 5; do
	LC=$(free_port) && LD=$(free_port "$LC") && LL=$(free_port "$LC" "$LD") || die "no free ports"
	lttng-relayd -o "$WORK/lttng-out" -C "tcp://127.0.0.1:$LC" -D "tcp://127.0.0.1:$LD" \
		-L "tcp://127.0.0.1:$LL" > "$WORK/relayd.log" 2>&1 &
	RELAYD=$!
	for _ in $(seq 100); do
		kill -0 "$RELAYD" 2>/dev/null || break
		listening "$LC" && listening "$LD" && listening "$LL" && break
		sleep 0.1
	done
	if kill -0 "$RELAYD" 2>/dev/null && listening "$LC" && listening "$LD" && listening "$LL"; then
		break
	fi
	stop_pid "$RELAYD"; RELAYD=""
	[ "$attempt" = 5 ] && die "lttng-relayd did not start: $(tail -3 "$WORK/relayd.log")"
done
log "started lttng-relayd, pid $RELAYD: control $LC, data $LD, live $LL"

# trawl relay (foreground, its log kept), ports from --ready-fd
"$TRAWL" relay -o "$WORK/trawl-out" --data 127.0.0.1:0 --live 127.0.0.1:0 --foreground \
	--ready-fd 3 3> "$WORK/trelay.ready" 2> "$WORK/trelay.log" &
TRELAY=$!
for _ in $(seq 100); do
	grep -q '^ready' "$WORK/trelay.ready" 2>/dev/null && break
	kill -0 "$TRELAY" 2>/dev/null || break
	sleep 0.1
done
set -- $(grep '^ready' "$WORK/trelay.ready" 2>/dev/null)
[ $# -ge 3 ] || die "trawl relay did not start: $(tail -3 "$WORK/trelay.log")"
TD=${2##*:} TL=${3##*:}
log "started trawl relay, pid $TRELAY: data $2, live $3"

# trawl agent on a private socket, in a session of its own (as a daemon)
setsid "$TRAWL" agent --foreground --socket "$SOCK" --pidfile "$WORK/agent.pid" \
	--ready-fd 3 3> "$WORK/agent.ready" 2> "$WORK/agent.log" &
TAGENT=$!
for _ in $(seq 100); do
	grep -q '^ready' "$WORK/agent.ready" 2>/dev/null && break
	kill -0 "$TAGENT" 2>/dev/null || break
	sleep 0.1
done
grep -q '^ready' "$WORK/agent.ready" 2>/dev/null || die "trawl agent did not start: $(tail -3 "$WORK/agent.log")"
[ -s "$WORK/agent.pid" ] && TAGENT=$(cat "$WORK/agent.pid")
log "started trawl agent, pid $TAGENT, socket $SOCK"
export TRAWL_AGENT_SOCKET="$SOCK"

# ------------------------------------------------------------------ one run
# listed LIVEPORT NAME: the session is listed by the relay (at most 15 s)
listed() {
	for _ in $(seq 60); do
		timeout 5 babeltrace2 -i lttng-live "net://127.0.0.1:$1" 2>/dev/null |
			grep -q "/host/$HOST/$2 " && return 0
		sleep 0.25
	done
	return 1
}

# one_run TOOL SETTING RUN: SETTING is a timer in ms or "default"
one_run() {
	tool=$1 setting=$2 run=$3
	id=${tool}_${setting}_r$run
	raw=$WORK/raw/$id.txt err=$WORK/err/$id
	: > "$raw"
	if [ "$setting" = default ]; then timer=$([ "$tool" = trawl ] && echo 100 || echo 1000); else timer=$setting; fi
	if [ "$tool" = trawl ]; then
		sess=trawllive_${TAG}_$id lport=$TL
		topt=""; [ "$setting" = default ] || topt="--live-timer $setting"
		timeout 10 "$TRAWL" create "$sess" --relay "127.0.0.1:$TD" $topt > "$err.ctl" 2>&1 &&
		timeout 10 "$TRAWL" enable "$sess" 'anchor:ping' >> "$err.ctl" 2>&1 &&
		timeout 10 "$TRAWL" start "$sess" >> "$err.ctl" 2>&1 ||
			log "$id: session setup failed: $(tail -2 "$err.ctl")"
	else
		sess=ltlive_${TAG}_$id lport=$LL
		lopt="--live"; [ "$setting" = default ] || lopt="--live=$((setting * 1000))"
		timeout 20 lttng create "$sess" $lopt -C "tcp://127.0.0.1:$LC" -D "tcp://127.0.0.1:$LD" > "$err.ctl" 2>&1 &&
		timeout 10 lttng enable-event -u -s "$sess" anchor:ping >> "$err.ctl" 2>&1 &&
		timeout 10 lttng start "$sess" >> "$err.ctl" 2>&1 ||
			log "$id: session setup failed: $(tail -2 "$err.ctl")"
	fi
	t_list0=$(date +%s%N)
	lst=1; listed "$lport" "$sess" || { lst=0; log "$id: session not listed by the relay after 15 s"; }
	t_list=$(( ($(date +%s%N) - t_list0) / 1000000 ))
	rm -f "$WORK/fifo"; mkfifo "$WORK/fifo"
	"$S/reader" < "$WORK/fifo" > "$raw" &
	RDPID=$!
	stdbuf -oL babeltrace2 -i lttng-live "net://127.0.0.1:$lport/host/$HOST/$sess" \
		> "$WORK/fifo" 2> "$err.bt2" &
	BTPID=$!
	if [ "$tool" = trawl ]; then
		timeout 120 "$S/emit-trawl" "$K" "$INTERVAL_MS" "$WAIT_MS" 2> "$err.emit"
	else
		timeout 120 "$S/emit" "$K" "$INTERVAL_MS" "$WAIT_MS" 2> "$err.emit"
	fi
	# the last events: at most max(10 s, 3 live timers + 5 s)
	lim=$(( 3 * timer / 100 + 50 )); [ "$lim" -lt 100 ] && lim=100
	for _ in $(seq "$lim"); do
		[ "$(wc -l < "$raw")" -ge "$K" ] && break
		kill -0 "$BTPID" 2>/dev/null || break
		sleep 0.1
	done
	t_stop=$(date +%s%N)
	if [ "$tool" = trawl ]; then
		timeout 20 "$TRAWL" stop "$sess" >> "$err.ctl" 2>&1 || log "$id: trawl stop failed: $(tail -1 "$err.ctl")"
		timeout 20 "$TRAWL" destroy "$sess" >> "$err.ctl" 2>&1 || log "$id: trawl destroy failed: $(tail -1 "$err.ctl")"
	else
		timeout 20 lttng stop "$sess" >> "$err.ctl" 2>&1
		timeout 20 lttng destroy "$sess" >> "$err.ctl" 2>&1 || log "$id: lttng destroy failed: $(tail -1 "$err.ctl")"
	fi
	# the viewer ends by itself once the session is over (at most 10 s)
	bt_end=killed bt_rc=-
	for _ in $(seq 100); do
		kill -0 "$BTPID" 2>/dev/null || { bt_end=exited; break; }
		sleep 0.1
	done
	if [ "$bt_end" = exited ]; then wait "$BTPID"; bt_rc=$?; else stop_pid "$BTPID"; fi
	BTPID=""
	for _ in $(seq 50); do kill -0 "$RDPID" 2>/dev/null || break; sleep 0.1; done
	stop_pid "$RDPID"; RDPID=""
	# on disk at the relay (outside the timings): how many reached it
	if [ "$tool" = trawl ]; then
		d=$WORK/trawl-out/$sess
	else
		d=$(find "$WORK/lttng-out" -maxdepth 2 -type d -name "$sess*" 2>/dev/null | head -1)
	fi
	: > "$raw.emitted"
	[ -n "$d" ] && [ -d "$d" ] && timeout 30 babeltrace2 "$d" 2>/dev/null |
		sed -n 's/.*anchor:ping.*seq = \([0-9]*\), t_ns = \([0-9]*\).*/\1 \2/p' > "$raw.emitted"
	disk=$(wc -l < "$raw.emitted")
	# events the viewer printed only after the session was stopped
	# (arrival = t_ns + latency, t_ns from the trace at the relay)
	late=$(awk -v ts="$t_stop" 'FILENAME == ARGV[1] { t[$1] = $2; next }
		($1 in t) && t[$1] + $2 * 1e6 > ts + 0 { n++ } END { print n + 0 }' "$raw.emitted" "$raw")
	got=$(wc -l < "$raw")
	uniq=$(awk '{ print $1 }' "$raw" | sort -u | wc -l)
	btlines=$(grep -c . "$err.bt2")
	echo "$tool $setting $run $timer $got $K $uniq ${disk:-0} $lst $t_list $bt_end $bt_rc $btlines $late" >> "$RAWLOG"
	log "$id: received $got of $K (distinct $uniq; at the relay on disk ${disk:-0}; $late only after stop)," \
		"listed after ${t_list} ms, viewer $bt_end ($bt_rc), viewer stderr $btlines lines"
	[ "$btlines" -gt 0 ] && sed 's/^/live:   bt2: /' "$err.bt2" | head -5 >&2
	[ -s "$err.emit" ] && sed 's/^/live:   emit: /' "$err.emit" | head -3 >&2
	return 0
}

SETTINGS=$LIVE_TIMERS_MS
[ "$DEFAULTS" = 1 ] && SETTINGS="$SETTINGS default"
T0=$(date +%s)
for r in $(seq "$RUNS"); do
	for st in $SETTINGS; do
		# alternate which tool goes first
		if [ $((r % 2)) = 1 ]; then order="trawl lttng"; else order="lttng trawl"; fi
		for tool in $order; do
			log "run $r/$RUNS, setting $st, $tool ..."
			one_run "$tool" "$st" "$r"
		done
	done
done

# kernel_run RUN: the kernel row's run (tool "kernel", setting "default")
kernel_run() {
	run=$1 id=kernel_default_r$1
	raw=$WORK/raw/$id.txt err=$WORK/err/$id sess=trawllive_${TAG}_$id
	: > "$raw"
	timeout 300 "$TRAWL" record --relay "127.0.0.1:$TD" --session "$sess" -k syscalls:sys_enter_lseek \
		--only-command --no-ust -v -- "$S/kemit" "$K" "$INTERVAL_MS" $((WAIT_MS + 1000)) \
		> "$err.rec" 2>&1 &
	KREC=$!
	t_list0=$(date +%s%N)
	lst=1; listed "$TL" "$sess" || { lst=0; log "$id: session not listed by the relay after 15 s"; }
	t_list=$(( ($(date +%s%N) - t_list0) / 1000000 ))
	rm -f "$WORK/fifo"; mkfifo "$WORK/fifo"
	"$S/kreader" < "$WORK/fifo" > "$raw" &
	RDPID=$!
	"$TRAWL" print --live "net://127.0.0.1:$TL/host/$HOST/$sess" --wait 30 > "$WORK/fifo" 2> "$err.view" &
	BTPID=$!
	wait "$KREC"
	KREC=""
	bt_end=killed bt_rc=-
	for _ in $(seq 100); do
		kill -0 "$BTPID" 2>/dev/null || { bt_end=exited; break; }
		sleep 0.1
	done
	if [ "$bt_end" = exited ]; then wait "$BTPID"; bt_rc=$?; else stop_pid "$BTPID"; fi
	BTPID=""
	for _ in $(seq 50); do kill -0 "$RDPID" 2>/dev/null || break; sleep 0.1; done
	stop_pid "$RDPID"; RDPID=""
	got=$(wc -l < "$raw")
	uniq=$(awk '{ print $1 }' "$raw" | sort -u | wc -l)
	disk=$(timeout 30 "$TRAWL" print "$WORK/trawl-out/$sess" 2>/dev/null | grep -c syscall_entry_lseek)
	vlines=$(grep -vc 'waiting for it' "$err.view")
	echo "kernel default $run 100 $got $K $uniq ${disk:-0} $lst $t_list $bt_end $bt_rc $vlines 0" >> "$RAWLOG"
	log "$id: received $got of $K (distinct $uniq; at the relay on disk ${disk:-0}), listed after ${t_list} ms," \
		"viewer $bt_end ($bt_rc); $(grep -o 'live: .*' "$err.rec" | head -1)"
	[ "$vlines" -gt 0 ] && sed 's/^/live:   view: /' "$err.view" | head -5 >&2
	return 0
}
if [ "$KERNEL" = 1 ]; then
	for r in $(seq "$RUNS"); do
		log "run $r/$RUNS, kernel event, trawl record -k ..."
		kernel_run "$r"
	done
fi
ELAPSED=$(( $(date +%s) - T0 ))

# ------------------------------------------------------------------ cost
# cpu_ns PID: CPU time of every thread of PID so far (ns), 0 if gone
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.0f\n", s + 0 }'; }
now_ns() { date +%s%N; }
# vcs PID: voluntary context switches of PID's main thread so far
vcs() { awk '$1 == "voluntary_ctxt_switches:" { print $2 }' /proc/"$1"/status 2>/dev/null || echo 0; }
# pct NS0 NS1 T0 T1: % of one CPU
pct() { awk -v a="$1" -v b="$2" -v t="$3" -v u="$4" 'BEGIN { if (u > t) printf "%.2f", (b - a) * 100 / (u - t); else print "-" }'; }
COST=""
if [ "$CPU" = 1 ]; then
	C=$WORK/cost; mkdir -p "$C"
	csess=trawllive_${TAG}_cost
	log "cost: idle ${IDLE_S} s, then $RATE events/s for ${BUSY_S} s, trawl print --live attached ..."
	timeout 10 "$TRAWL" create "$csess" --relay "127.0.0.1:$TD" > "$C/ctl" 2>&1 &&
	timeout 10 "$TRAWL" enable "$csess" 'anchor:ping' >> "$C/ctl" 2>&1 &&
	timeout 10 "$TRAWL" start "$csess" >> "$C/ctl" 2>&1 || log "cost: session setup failed: $(tail -2 "$C/ctl")"
	"$S/emit-rate" "$RATE" "$BUSY_S" "$C/busy" "$C/emitted" "$C/end" 2> "$C/emit.err" &
	CEMIT=$!
	rm -f "$C/fifo"; mkfifo "$C/fifo"
	"$S/count" "$C/count" < "$C/fifo" &
	CCOUNT=$!
	"$TRAWL" print --live "net://127.0.0.1:$TL/host/$HOST/$csess" --wait 30 > "$C/fifo" 2> "$C/view.err" &
	CVIEW=$!
	shown() { v=$(tr -d ' ' < "$C/count" 2>/dev/null); [ "${v:-0}" -ge "$1" ]; }
	for _ in $(seq 300); do shown 1 && break; sleep 0.1; done
	shown 1 || log "cost: the viewer did not show the first event in 30 s"
	sleep 1	# the viewer's first round trips done: the idle window begins
	set -- "$(cpu_ns "$TAGENT")" "$(cpu_ns "$TRELAY")" "$(cpu_ns "$CVIEW")" "$(cpu_ns "$CEMIT")" "$(now_ns)"
	a0=$1 r0=$2 v0=$3 e0=$4 t0=$5 w0=$(vcs "$TAGENT")
	sleep "$IDLE_S"
	set -- "$(cpu_ns "$TAGENT")" "$(cpu_ns "$TRELAY")" "$(cpu_ns "$CVIEW")" "$(cpu_ns "$CEMIT")" "$(now_ns)"
	a1=$1 r1=$2 v1=$3 e1=$4 t1=$5 w1=$(vcs "$TAGENT")
	touch "$C/busy"
	for _ in $(seq $((BUSY_S * 10 + 300))); do [ -s "$C/emitted" ] && break; sleep 0.1; done
	nem=$(cat "$C/emitted" 2>/dev/null || echo 0)
	# until the viewer has shown them all (at most 60 s more)
	for _ in $(seq 600); do shown "$nem" && break; sleep 0.1; done
	set -- "$(cpu_ns "$TAGENT")" "$(cpu_ns "$TRELAY")" "$(cpu_ns "$CVIEW")" "$(cpu_ns "$CEMIT")" "$(now_ns)"
	a2=$1 r2=$2 v2=$3 e2=$4 t2=$5
	nshown=$(tr -d ' ' < "$C/count" 2>/dev/null); nshown=${nshown:-0}
	touch "$C/end"
	timeout 20 "$TRAWL" stop "$csess" >> "$C/ctl" 2>&1
	timeout 20 "$TRAWL" destroy "$csess" >> "$C/ctl" 2>&1
	for _ in $(seq 100); do kill -0 "$CVIEW" 2>/dev/null || break; sleep 0.1; done
	stop_pid "$CVIEW"; stop_pid "$CCOUNT"; stop_pid "$CEMIT"; CVIEW="" CCOUNT="" CEMIT=""
	sum() { awk -v a="$1" -v b="$2" -v c="$3" 'BEGIN { printf "%.0f", a + b + c }'; }
	ia=$(pct "$a0" "$a1" "$t0" "$t1") ir=$(pct "$r0" "$r1" "$t0" "$t1") iv=$(pct "$v0" "$v1" "$t0" "$t1")
	it=$(pct "$(sum "$a0" "$r0" "$v0")" "$(sum "$a1" "$r1" "$v1")" "$t0" "$t1") ie=$(pct "$e0" "$e1" "$t0" "$t1")
	ba=$(pct "$a1" "$a2" "$t1" "$t2") br=$(pct "$r1" "$r2" "$t1" "$t2") bv=$(pct "$v1" "$v2" "$t1" "$t2")
	bt=$(pct "$(sum "$a1" "$r1" "$v1")" "$(sum "$a2" "$r2" "$v2")" "$t1" "$t2") be=$(pct "$e1" "$e2" "$t1" "$t2")
	is=$(awk -v t="$t0" -v u="$t1" 'BEGIN { printf "%.1f", (u - t) / 1e9 }')
	bs=$(awk -v t="$t1" -v u="$t2" 'BEGIN { printf "%.1f", (u - t) / 1e9 }')
	COST="| idle, viewer attached ($is s) | $ia | $ir | $iv | **$it** | $ie |
| $RATE events/s for ${BUSY_S} s, until shown ($bs s; $nshown of $nem shown) | $ba | $br | $bv | **$bt** | $be |"
	IWAKE=$(awk -v a="${w0:-0}" -v b="${w1:-0}" -v t="$t0" -v u="$t1" 'BEGIN { if (u > t) printf "%.0f", (b - a) * 1e9 / (u - t); else print "-" }')
	log "cost: CPU idle $it % (agent $ia, relay $ir, viewer $iv; the agent's loop woke $IWAKE times a second); busy $bt % (agent $ba, relay $br, viewer $bv; $nshown of $nem shown)"
fi

# ------------------------------------------------------------------ summary
# stats TOOL SETTING: "n median p90 p99 max firstmax min" over the pooled
# runs, seq >= WARMUP (the anchor's percentile: nearest rank)
stats() {
	cat "$WORK"/raw/"$1_$2"_r*.txt 2>/dev/null | awk -v w="$WARMUP" '
	$1 < w { if ($2 + 0 > fm) fm = $2 + 0; nf++; next }
	{ a[++n] = $2 + 0 }
	END {
		if (n == 0) { print "0 - - - - " (nf ? fm : "-") " -"; exit }
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { x = a[i]; a[i] = a[j]; a[j] = x }
		med = (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
		p90 = a[int(0.9 * n + 0.999)]; p99 = a[int(0.99 * n + 0.999)]
		printf "%d %.1f %.1f %.1f %.1f %s %.1f\n", n, med, p90, p99, a[n], nf ? sprintf("%.1f", fm) : "-", a[1]
	}'
}
# permed TOOL SETTING: each run's median (seq >= WARMUP), in run order
permed() {
	for f in "$WORK"/raw/"$1_$2"_r*.txt; do
		[ -f "$f" ] || continue
		awk -v w="$WARMUP" '$1 >= w { a[++n] = $2 + 0 }
		END {
			if (!n) { printf "- "; exit }
			for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { x = a[i]; a[i] = a[j]; a[j] = x }
			printf "%.1f ", (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
		}' "$f"
	done | sed 's/ $//'
}
# counts TOOL SETTING: "received emitted distinct on_disk viewer_ended_by_itself runs after_stop"
counts() {
	awk -v t="$1" -v s="$2" '$1 == t && $2 == s { g += $5; e += $6; u += $7; d += $8; ex += ($11 == "exited"); n++; l += $14 }
		END { printf "%d %d %d %d %d %d %d\n", g, e, u, d, ex, n, l }' "$RAWLOG"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a != "-" && b != "-" && b + 0 > 0) printf "%.2f", a / b; else print "n/a" }'; }

label() {
	case $1 in
	default) [ "$2" = trawl ] && echo "default (100 ms)" || echo "default (1 s)" ;;
	*) echo "$1 ms" ;;
	esac
}

{
	echo "# trawl live latency against LTTng, $STAMP"
	echo
	echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') x $(nproc)," \
		"$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo);" \
		"$("$TRAWL" --version 2>/dev/null | head -1); $(lttng --version | head -1); $(babeltrace2 --version | head -1)"
	echo "method: emit -> babeltrace2 -i lttng-live (stdbuf -oL, default --retry-duration) -> reader, all on 127.0.0.1;" \
		"K=$K events per run, random gaps in [$INTERVAL_MS, $((2 * INTERVAL_MS))) ms after ${WAIT_MS} ms;" \
		"$RUNS runs per tool and setting, interleaved; the first $WARMUP events of each run excluded (their max shown apart);" \
		"latency = arrival at the reader - CLOCK_REALTIME before the tracepoint; ${ELAPSED} s in all"
	echo
	echo "| live timer | tool | received/emitted | received only after stop | median ms | p90 | p99 | max | min | per-run medians | first $WARMUP events, max |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|"
	for st in $SETTINGS; do
		for tool in trawl lttng; do
			set -- $(stats "$tool" "$st"); n=$1 med=$2 p90=$3 p99=$4 mx=$5 fm=$6 mn=$7
			set -- $(counts "$tool" "$st")
			name=trawl; [ "$tool" = lttng ] && name="LTTng"
			echo "| $(label "$st" "$tool") | $name | $1/$2 | $7 | $med | $p90 | $p99 | $mx | $mn | $(permed "$tool" "$st") | $fm |"
		done
	done
	if [ "$KERNEL" = 1 ]; then
		set -- $(stats kernel default); n=$1 med=$2 p90=$3 p99=$4 mx=$5 fm=$6 mn=$7
		set -- $(counts kernel default)
		echo "| default (100 ms), a kernel event: lseek(2) to \`trawl print --live\` | trawl record -k | $1/$2 | $7 | $med | $p90 | $p99 | $mx | $mn | $(permed kernel default) | $fm |"
	fi
	echo
	echo "| live timer | trawl/LTTng median | trawl/LTTng p99 |"
	echo "|---|---|---|"
	for st in $SETTINGS; do
		set -- $(stats trawl "$st"); tm=$2 tp=$4
		set -- $(stats lttng "$st"); lm=$2 lp=$4
		if [ "$st" = default ]; then
			echo "| **defaults: trawl (--relay, 100 ms) / LTTng (--live, 1 s)** | **$(ratio "$tm" "$lm")** | **$(ratio "$tp" "$lp")** |"
		else
			echo "| $st ms (both) | $(ratio "$tm" "$lm") | $(ratio "$tp" "$lp") |"
		fi
	done
	echo
	bad=$(awk '$5 != $6 || $7 != $5 || $11 != "exited" || $13 > 0 || $9 != 1 || $14 > 0' "$RAWLOG")
	if [ -n "$bad" ]; then
		echo "Runs with missing or duplicated events, events the viewer printed only after the session was stopped" \
			"(their latency then includes the script's wait for the last events: at most max(10 s, 3 live timers + 5 s)" \
			"after the program's last event), a viewer that had to be killed or wrote to stderr, or a session not listed" \
			"(tool setting run timer_ms received emitted distinct on_disk listed list_ms viewer rc stderr_lines after_stop):"
		echo
		printf '%s\n' "$bad" | sed 's/^/    /'
	else
		echo "Every run: all $K events received once each before the session was stopped, the session listed," \
			"the viewer ended by itself without a word on stderr."
	fi
	echo
	if [ -n "$COST" ]; then
		echo "trawl's CPU per node, defaults (agent + relay + viewer \`trawl print --live\`), % of one CPU:"
		echo
		echo "| window | agent | relay | viewer | **CPU: agent + relay + viewer** | the program |"
		echo "|---|---|---|---|---|---|"
		printf '%s\n' "$COST"
		echo
		echo "Idle, the agent's loop thread woke $IWAKE times a second (voluntary context switches)."
		echo
	fi
	echo "commands (S = a fresh session per run):"
	echo
	echo "    lttng-relayd -o DIR -C tcp://127.0.0.1:$LC -D tcp://127.0.0.1:$LD -L tcp://127.0.0.1:$LL &"
	echo "    lttng create S --live[=US] -C tcp://127.0.0.1:$LC -D tcp://127.0.0.1:$LD; lttng enable-event -u -s S anchor:ping; lttng start S"
	echo "    trawl relay -o DIR --data 127.0.0.1:0 --live 127.0.0.1:0 --foreground --ready-fd 3 &"
	echo "    trawl agent --foreground --socket SOCK &   (setsid)"
	echo "    trawl create S --relay 127.0.0.1:$TD [--live-timer MS]; trawl enable S anchor:ping; trawl start S"
	echo "    (wait until babeltrace2 -i lttng-live net://127.0.0.1:PORT lists S)"
	echo "    stdbuf -oL babeltrace2 -i lttng-live net://127.0.0.1:PORT/host/$HOST/S > fifo & reader < fifo &"
	echo "    emit $K $INTERVAL_MS $WAIT_MS   (emit-trawl for trawl, with TRAWL_AGENT_SOCKET=SOCK)"
	echo "    ... stop S; destroy S"
} | tee "$OUT"
echo "live: results in $OUT; per-run log $RAWLOG, raw latencies $WORK/raw, logs $WORK/*.log" >&2
