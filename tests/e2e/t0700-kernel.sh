#!/bin/sh
# Kernel recording on real kernel events (`trawl record`, a private tracefs
# instance): workloads whose behaviour is known exactly, built here from a
# small C program.
#  - sleep: a process that sleeps N times shows N sched_switch out of its
#    tid with prev_state 1 (sleeping), each followed by its sched_wakeup;
#  - pingpong: two processes bounce a byte over two pipes N times: exactly
#    N one-byte writes and reads per side on the right fds, in causal order
#    (write a, read a, write b, read b, ...);
#  - fsync: one write of SIZE bytes and an fsync: entry/exit with the fd and
#    byte counts, in order; block requests issued and completed during the
#    fsync when the file lives on a block device over a disk with a
#    request queue (else skipped, naming the filesystem and its source);
#  - ust: a user-space event emitted between two system calls of a thread
#    (an in-process trawl session, so record runs with --no-ust) lands
#    between their kernel events in the merged trace, with both sides on
#    the mono clock and, where the clocksource is the TSC, on the TSC;
#  - babeltrace2 reads every kernel trace and prints what `trawl print` does.
. "$TRAWL_SRC/tests/e2e/lib.sh"
[ "$(id -u)" = 0 ] || skip_all "needs root (tracefs instances)"
# kernel events name tasks by their pids in the initial pid namespace: from
# another one, the pids this test knows are not theirs
[ "$(stat -L -c %i /proc/self/ns/pid 2>/dev/null)" = 4026531836 ] ||
	skip_all "runs in a pid namespace other than the initial one: kernel events name tasks by pids it does not see"
command -v cc >/dev/null 2>&1 || skip_all "needs a C compiler for the workload program"
NORM="$TRAWL_SRC/tests/e2e/normalize.sh"
NORM_PY="$TRAWL_SRC/tests/e2e/normalize.py"

cat > kwork.c <<'EOF'
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef WITH_UST
#define TRAWL_TRACEPOINT_DEFINE
#include <trawl/tracepoint.h>
TRAWL_TRACEPOINT_EVENT(kwork, mark, TRAWL_LOGLEVEL_INFO,
	TRAWL_ARGS(int32_t i), TRAWL_FIELDS(TRAWL_FIELD_INT(int32_t, i, i)))
static void spin_us(long us)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000000L + b.tv_nsec - a.tv_nsec < us * 1000);
}
#endif

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	int n = atoi(argv[2]);
	if (!strcmp(argv[1], "sleep")) {
		printf("tid=%ld\n", (long)syscall(SYS_gettid));
		fflush(stdout);
		for (int i = 0; i < n; i++) {
			struct timespec ts = { 0, 2000000 };
			nanosleep(&ts, NULL);
		}
		return 0;
	}
	if (!strcmp(argv[1], "pingpong")) {
		int a[2], b[2];
		char c = 'x';
		if (pipe(a) || pipe(b))
			return 1;
		printf("a0=%d a1=%d b0=%d b1=%d parent=%d\n", a[0], a[1], b[0], b[1], (int)getpid());
		fflush(stdout);
		pid_t p = fork();
		if (p == 0) {
			for (int i = 0; i < n; i++)
				if (read(a[0], &c, 1) != 1 || write(b[1], &c, 1) != 1)
					_exit(1);
			_exit(0);
		}
		printf("child=%d\n", (int)p);
		fflush(stdout);
		for (int i = 0; i < n; i++)
			if (write(a[1], &c, 1) != 1 || read(b[0], &c, 1) != 1)
				return 1;
		int st;
		waitpid(p, &st, 0);
		return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
	}
	if (!strcmp(argv[1], "fsync") && argc > 3) {
		size_t size = (size_t)atol(argv[3]);
		char *buf = malloc(size);
		if (!buf)
			return 1;
		memset(buf, 'k', size);
		int fd = open(argv[2], O_CREAT | O_WRONLY | O_TRUNC, 0644);
		printf("fd=%d tid=%ld\n", fd, (long)syscall(SYS_gettid));
		fflush(stdout);
		if (fd < 0 || write(fd, buf, size) != (ssize_t)size || fsync(fd) || close(fd))
			return 1;
		free(buf);
		return 0;
	}
#ifdef WITH_UST
	if (!strcmp(argv[1], "ust") && argc > 4) {
		struct trawl_ust_session_opts o;
		char err[256];
		memset(&o, 0, sizeof(o));
		o.sz = sizeof(o);
		o.output = argv[3];
		o.hostname = argv[4];
		/* the kernel trace's clock, named by the test (argv[5]) */
		o.clock = argc > 5 && !strcmp(argv[5], "tsc") ? TRAWL_UST_CLOCK_TSC :
			  TRAWL_UST_CLOCK_MONOTONIC;
		struct trawl_ust_session *s = trawl_ust_session_new(&o, err, sizeof(err));
		if (!s || trawl_ust_session_start(s) < 0)
			return 1;
		printf("tid=%ld\n", (long)syscall(SYS_gettid));
		fflush(stdout);
		for (int i = 0; i < n; i++) {
			syscall(SYS_getppid);
			spin_us(2);
			trawl_tracepoint(kwork, mark, i);
			spin_us(2);
			syscall(SYS_getuid);
		}
		int r = trawl_ust_session_stop(s);
		trawl_ust_session_free(s);
		return r < 0;
	}
#endif
	return 2;
}
EOF
SANF=""
[ -n "${TRAWL_SAN:-}" ] && SANF="-fsanitize=$TRAWL_SAN"
cc -O1 -o kwork kwork.c > cc.log 2>&1 &&
	cc -O1 $SANF -DWITH_UST -I"$TRAWL_SRC/include" -o kwork-ust kwork.c \
		"$TRAWL_BUILD/libtrawl.a" -lpthread -lm >> cc.log 2>&1 ||
	{ echo "Bail out! cannot build the workload program"; cat cc.log; exit 1; }

# Can this machine record kernel events at all?
if ! "$TRAWL" record -o probe --no-statedump -k sched:sched_switch -- true > probe.log 2>&1; then
	if grep -qE '^trawl record: .*(tracefs|instance|Permission|not permitted)' probe.log; then
		skip_all "cannot record kernel events here: $(grep -m1 '^trawl record:' probe.log)"
	fi
fi

# ev FILE: "NAME TID k=v k=v ..." per event, from trawl print's text
ev() {
	sed -E 's/^\[[^]]*\] \([^)]*\) [^ ]+ //; s/: \{ cpu_id = [0-9]+ \}, \{ tid = ([0-9-]+) \}, \{ / \1 /; s/ \}$//; s/, / /g; s/ = /=/g' "$1"
}

# from_exec TID: ev's lines from TID's exec on, the command's own events:
# before its exec, the child trawl forked waits for tracing to start (a
# read on a pipe: a sleep) or has done so before tracing was on, as the
# scheduler had it
from_exec() { awk -v t="$1" '$1 == "sched_process_exec" && index($0, " tid=" t " ") { x = 1 } x'; }

plan 30

# ---- sleep: N sleeps
N=5
"$TRAWL" record -o s1 --host h -k sched --only-command -- ./kwork sleep $N > sleep.out 2> sleep.err
ok $? "record sleep: exit 0"
TID=$(sed -n 's/^tid=//p' sleep.out)
"$TRAWL" print s1 > sleep.txt
ok $? "trawl print reads the sleep trace"
ev sleep.txt | from_exec "$TID" > sleep.ev
# S: switched out sleeping, W: woken; from its exec, from the first S on:
# S W S W ...
seq=$(awk -v t="$TID" '
	$1 == "sched_switch" && index($0, " prev_tid=" t " ") && index($0, " prev_state=1 ") { printf "S" }
	$1 == "sched_wakeup" && index($0, " tid=" t " ") { printf "W" }' sleep.ev | sed 's/^W*//')
is "$seq" "SWSWSWSWSW" "sleep: $N switches out with prev_state 1 for tid $TID, each followed by its wakeup"
is "$(awk -v t="$TID" '$1 == "sched_process_exit" && index($0, " tid=" t " ")' sleep.ev | wc -l)" 1 \
	"sleep: one sched_process_exit of the tid"
# LTTng's prio of a SCHED_OTHER task is 20 + its nice, inherited from here
PRIO=$(lttng_prio)
is "$(awk '$1 == "sched_switch" && / prev_tid='"$TID"' / && / prev_state=1 /' sleep.ev | grep -c 'prev_comm="kwork" .*prev_prio='"$PRIO"' ')" \
	"$N" "sleep: prev_comm is kwork and prev_prio $PRIO (LTTng's prio, nice $(nice)) in every sleeping switch out"
grep -q 'trawl record: .* 0 lost' sleep.err
ok $? "sleep: the summary reports no loss"

# ---- pingpong: N round trips over two pipes
N=20
"$TRAWL" record -o p1 --host h -k sched,syscalls --only-command --no-statedump -- ./kwork pingpong $N > pp.out 2> pp.err
ok $? "record pingpong: exit 0"
eval "$(sed -n 's/ /;/g; s/^a0/a0/p' pp.out | head -1)"
CHILD=$(sed -n 's/^child=//p' pp.out)
"$TRAWL" print p1 > pp.txt
ev pp.txt | from_exec "$parent" > pp.ev
cnt() { awk -v n="$1" -v t="$2" -v f="$3" '$1 == n && $2 == t && index($0, f)' pp.ev | wc -l; }
is "$(cnt syscall_entry_write "$parent" " fd=$a1 ")" "$N" "pingpong: $N writes on fd $a1 by the parent"
is "$(cnt syscall_entry_read "$CHILD" " fd=$a0 ")" "$N" "pingpong: $N reads on fd $a0 by the child"
is "$(cnt syscall_entry_write "$CHILD" " fd=$b1 ")" "$N" "pingpong: $N writes on fd $b1 by the child"
is "$(cnt syscall_entry_read "$parent" " fd=$b0 ")" "$N" "pingpong: $N reads on fd $b0 by the parent"
is "$(awk -v p="$parent" -v a="$a1" '$1 == "syscall_entry_write" && $2 == p && index($0, " fd=" a " ") && $0 ~ / count=1$/' pp.ev | wc -l)" \
	"$N" "pingpong: every write carries count 1"
# causal order, one token per step: WA RA WB RB, N times
seq=$(awk -v p="$parent" -v c="$CHILD" -v a0="$a0" -v a1="$a1" -v b0="$b0" -v b1="$b1" '
	$1 == "syscall_entry_write" && $2 == p && index($0, " fd=" a1 " ") { printf "WA " }
	$1 == "syscall_entry_write" && $2 == c && index($0, " fd=" b1 " ") { printf "WB " }
	$1 == "syscall_entry_read" { fd[$2] = $0 }
	$1 == "syscall_exit_read" && $0 ~ / ret=1( |$)/ && $2 == c && index(fd[c], " fd=" a0 " ") { printf "RA " }
	$1 == "syscall_exit_read" && $0 ~ / ret=1( |$)/ && $2 == p && index(fd[p], " fd=" b0 " ") { printf "RB " }' pp.ev)
want=$(i=0; while [ $i -lt $N ]; do printf 'WA RA WB RB '; i=$((i + 1)); done)
is "$seq" "$want" "pingpong: write a, read a, write b, read b, $N times, in time order"
# parent_pid and child_pid: LTTng's process ids after the thread ids (a
# process forked by its main thread: both equal the thread ids)
is "$(awk -v c="$CHILD" -v p="$parent" '$1 == "sched_process_fork" && $0 ~ (" child_tid=" c " ") &&
	$0 ~ (" child_pid=" c "( |$)") && index($0, " parent_tid=" p " parent_pid=" p " ")' pp.ev | wc -l)" 1 \
	"pingpong: the fork of the child, with LTTng's child_tid, and parent_pid, child_pid"

# ---- fsync: one write, one fsync
SIZE=65536
# rq_backed SYSFS-BLOCK-DIR...: one of them, or a device it is built on
# (partition, device mapper, md: slaves/), is a disk with a request queue
# (blk-mq: mq/), the disks block_rq_* events are about; bio-based devices
# (zram, brd, pmem) issue no request
rq_backed() {
	for _s in "$@"; do
		_s=$(readlink -f "$_s")
		[ -f "$_s/partition" ] && _s=${_s%/*}
		[ -d "$_s/mq" ] && return 0
		[ -n "$(ls "$_s/slaves" 2>/dev/null)" ] && rq_backed "$_s"/slaves/* && return 0
	done
	return 1
}
# NOBLK: why no block request is to expect from an fsync here (empty: expect them)
if ! command -v findmnt >/dev/null 2>&1; then
	FS=$(stat -f -c %T .) NOBLK="findmnt missing: cannot tell whether $(stat -f -c %T .) is on a block device"
else
	FS=$(findmnt -n -o FSTYPE -T .)
	SRC=$(findmnt -n -o SOURCE -T . | sed 's/\[.*\]$//')	# btrfs: /dev/sda1[/subvol]
	NOBLK=""
	if [ ! -b "$SRC" ]; then
		NOBLK="$FS on '$SRC' is not on a block device: no block request to expect"
	else
		MM=$(stat -L -c '%t %T' "$SRC")
		MM=$(printf '%d:%d' "0x${MM% *}" "0x${MM#* }")
		rq_backed "/sys/dev/block/$MM" ||
			NOBLK="$FS on $SRC ($MM): no disk with a request queue under it (bio-based): no block request to expect"
	fi
	FS="$FS on $SRC"
fi
"$TRAWL" record -o f1 --host h -k syscalls,block -b 16384 --no-statedump -- ./kwork fsync data.bin $SIZE > fs.out 2> fs.err
ok $? "record fsync: exit 0"
FD=$(sed -n 's/^fd=\([0-9]*\) .*/\1/p' fs.out)
FTID=$(sed -n 's/.*tid=//p' fs.out)
"$TRAWL" print f1 > fs.txt
ev fs.txt > fs.ev
seq=$(awk -v t="$FTID" -v fd="$FD" -v sz="$SIZE" '
	$2 != t { next }
	$1 == "syscall_entry_write" && index($0, " fd=" fd " ") && $0 ~ (" count=" sz "$") { printf "we " }
	$1 == "syscall_exit_write" && $0 ~ (" ret=" sz "$") { printf "wx " }
	$1 == "syscall_entry_fsync" && $0 ~ (" fd=" fd "$") { printf "fe " }
	$1 == "syscall_exit_fsync" && $0 ~ / ret=0$/ { printf "fx " }' fs.ev)
is "$seq" "we wx fe fx " "fsync: write(fd $FD, $SIZE bytes) returns $SIZE, then fsync(fd $FD) returns 0"
if [ -n "$NOBLK" ]; then
	skip "fsync: $NOBLK"
	skip "fsync: $NOBLK"
else
	# inside the fsync: it returns once its data is on the device (other
	# tests' requests, before or after, do not count)
	infsync() { awk -v t="$FTID" -v e=" $1: " '
		/ syscall_entry_fsync: / && index($0, "{ tid = " t " }") { w = 1; next }
		/ syscall_exit_fsync: / && index($0, "{ tid = " t " }") { w = 0 }
		w && index($0, e) { n++ }
		END { print n + 0 }' fs.txt; }
	n=$(infsync block_rq_issue)
	[ "$n" -ge 1 ]; ok $? "fsync on $FS: block requests issued during the fsync ($n)"
	n=$(infsync block_rq_complete)
	[ "$n" -ge 1 ]; ok $? "fsync on $FS: block requests completed during the fsync ($n)"
fi

# ---- user-space event between two system calls, merged
# The recorder and the in-process session are given one clock by the test,
# not left to each to choose from the clocksource when it starts (a
# clocksource the kernel changes in between, as its watchdog does on a
# loaded VM, would give them two). mono: one kernel timekeeper on both
# sides, so the order must hold exactly; tsc: one counter, each side
# declaring the frequency and offset it measured, where the TSC is the
# clocksource before and after the recording. On failure: each side's
# clock declaration and the events around each mark.
N=10
# (TRAWL_CLOCKSOURCE: the clocksource as trawl is told to see it, make adverse notsc)
cs() { [ -n "${TRAWL_CLOCKSOURCE:-}" ] && echo "$TRAWL_CLOCKSOURCE" || cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null; }
clocks=mono
[ "$(cs)" = tsc ] && case "$(uname -m)" in x86_64|i?86) clocks="mono tsc" ;; esac
for clk in mono tsc; do
	case " $clocks " in
	*" $clk "*) ;;
	*) skip "user-space event between two system calls, clock tsc: the clocksource is $(cs), not the TSC"
	   skip "trawl print merges the kernel and user-space traces, clock tsc: the clocksource is $(cs), not the TSC"
	   skip "each kwork:mark between its getppid exit and getuid entry, clock tsc: the clocksource is $(cs), not the TSC"
	   continue ;;
	esac
	cs0=$(cs)
	"$TRAWL" record -o u1-$clk --host h -k syscalls --clock $clk --only-command --no-statedump --no-ust \
		-- ./kwork-ust ust $N u1-$clk/h/ust h $clk > ust-$clk.out 2> ust-$clk.err
	ok $? "record a traced program, clock $clk: exit 0"
	if [ "$clk" = tsc ] && [ "$(cs)" != "$cs0" ]; then
		skip "clock tsc: the clocksource changed from $cs0 to $(cs) during the recording"
		skip "the same: each kwork:mark between its getppid exit and getuid entry"
		continue
	fi
	UTID=$(sed -n 's/^tid=//p' ust-$clk.out)
	"$TRAWL" print u1-$clk > ust-$clk.txt
	ok $? "clock $clk: trawl print merges the kernel and user-space traces"
	seq=$(awk -v t="$UTID" '
		/ syscall_exit_getppid: / && index($0, "{ tid = " t " }") { printf "P" }
		/ kwork:mark: / { printf "M" }
		/ syscall_entry_getuid: / && index($0, "{ tid = " t " }") { printf "U" }' ust-$clk.txt | sed 's/^U*//')
	want=$(i=0; while [ $i -lt $N ]; do printf 'PMU'; i=$((i + 1)); done)
	is "$seq" "$want" "clock $clk: each kwork:mark lies between its getppid exit and getuid entry ($N times)"
	if [ "$seq" != "$want" ]; then
		for t in kernel ust; do
			echo "# $t clock: $(sed -n '/^clock {/,/^};/p' u1-$clk/h/$t/metadata | grep -E 'freq|offset' | tr -d '\t\n')"
		done
		grep -E -B2 -A2 ' kwork:mark: ' ust-$clk.txt | grep -E "kwork:mark|tid = $UTID }" | sed 's/^/# /' | head -40
	fi
done
# ---- babeltrace2 reads every kernel trace as trawl does
if command -v babeltrace2 >/dev/null 2>&1 && command -v python3 >/dev/null 2>&1; then
	. "$TRAWL_SRC/tests/e2e/oracle.sh"
	oracle sleep s1/h/kernel
	oracle pingpong p1/h/kernel
else
	for i in 1 2 3 4 5 6; do skip "babeltrace2 or python3 missing"; done
fi
finish
