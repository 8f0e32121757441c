#!/bin/sh
# Kernel recording: how the recorder takes the ring buffer's pages
# (docs/kernel.md, "Buffers and the reader"), seen in its own trace.
#  - a program built here (gwork) makes exactly N getppid calls; recorded
#    system-wide with the read, splice and getppid syscall tracepoints, the
#    trace holds its N entries and N exits, nothing lost;
#  - the recorder's reader takes the pages with read(2), one sub-buffer a
#    call: the trace shows read calls of a thread of the recorder (its
#    threads are in the state dump) from the recorder's own trace_pipe_raw
#    files (its fds in the state dump) that returned data, each exactly one
#    of the instance's sub-buffers, which are 64 KiB on kernels that can
#    size them (buffer_subbuf_size_kb, 6.8 and later; 4 KiB pages before),
#    as many as the summary's pages; and no splice call of the recorder
#    (until 2026-12-04 the full pages were spliced: more system time);
#  - babeltrace2 reads the trace as trawl print does.
. "$TRAWL_SRC/tests/e2e/lib.sh"
[ "$(id -u)" = 0 ] || skip_all "needs root (tracefs instances)"
[ "$(stat -L -c %i /proc/self/ns/pid 2>/dev/null)" = 4026531836 ] ||
	skip_all "runs in a pid namespace other than the initial one: kernel events name tasks by pids it does not see"
if ! "$TRAWL" record -o probe --no-statedump -k sched:sched_switch -- true > probe.log 2>&1; then
	if grep -qE '^trawl record: .*(tracefs|instance|Permission|not permitted)' probe.log; then
		skip_all "cannot record kernel events here: $(grep -m1 '^trawl record:' probe.log)"
	fi
fi
TF=$(tracefs_dir)
[ -e "$TF/events/syscalls/sys_enter_splice/format" ] || skip_all "no syscalls:sys_enter_splice tracepoint"
command -v cc >/dev/null 2>&1 || skip_all "needs a C compiler for the workload program"
REC=""
trap '[ -n "$REC" ] && kill "$REC" 2>/dev/null' EXIT INT TERM

cat > gwork.c <<'EOF'
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
/* the recorder has written a sub-buffer (SUB bytes) of a stream file in DIR */
static int written(const char *dir, long sub)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int yes = 0;
	while (d && !yes && (e = readdir(d))) {
		char p[4096];
		struct stat st;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		yes = !strncmp(e->d_name, "channel", 7) && !stat(p, &st) && st.st_size >= sub;
	}
	if (d)
		closedir(d);
	return yes;
}
/* gwork N [DIR SUB]: exactly N getppid calls; then, with DIR, waits (at
 * most 20 s) until the recorder has taken pages while tracing is on (a
 * stream file of DIR holds a sub-buffer); then exit_group */
int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 0;
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
	for (int i = 0; argc > 3 && i < 2000 && !written(argv[2], atol(argv[3])); i++) {
		struct timespec t = { 0, 10000000 };
		nanosleep(&t, NULL);
	}
	syscall(SYS_exit_group, 0);
	return 0;
}
EOF
cc -O1 -o gwork gwork.c > cc.log 2>&1 ||
	{ echo "Bail out! cannot build the workload program"; cat cc.log; exit 1; }

plan 9

# The sub-buffer size the recorder asks for: 64 KiB where the kernel can
# size them, else the kernel's page. Where the file is there but a write
# is refused (seen on a 6.18 kernel: EPERM), the recorder keeps the size
# it has: what a scratch instance of this test's takes is the size.
SUB=$(getconf PAGESIZE)
if [ -e "$TF/buffer_subbuf_size_kb" ]; then
	I="$TF/instances/trawl-t0730-$$"
	if mkdir "$I" 2> /dev/null; then
		echo 64 > "$I/buffer_subbuf_size_kb" 2> /dev/null
		SUB=$(($(cat "$I/buffer_subbuf_size_kb") * 1024))
		rmdir "$I"
	fi
fi
# 200000 calls: 400000 events, about 10 MB of ring buffer, some 150 full
# sub-buffers of 64 KiB on the CPU gwork runs on
N=200000
EV=syscalls:sys_enter_read,syscalls:sys_exit_read,syscalls:sys_enter_splice,syscalls:sys_exit_splice,syscalls:sys_enter_getppid,syscalls:sys_exit_getppid

# grec NAME [ENV=VALUE]: records gwork N system-wide into NAME (NAME.err:
# the summary); REC_PID: the recorder's pid; NAME.txt: trawl print. The
# buffer, 64 MiB per CPU, holds the whole workload (13 MB at most): gwork
# makes its events in a tenth of a second, faster than a reader that slept
# its idle period (50 ms) on a loaded machine drains a 4 MiB buffer
# (gwork may end before the reader's first wake: it then waits until the
# reader has written a sub-buffer, so that reads that took data while
# tracing was on are in the trace)
grec() {
	_name=$1; shift
	env "$@" "$TRAWL" record -o "$_name" --host h -v -b 65536 -k "$EV" -- \
		./gwork $N "$_name/h/kernel" "$SUB" 2> "$_name.err" &
	REC=$!
	wait "$REC"; _rc=$?
	REC_PID=$REC REC=""
	"$TRAWL" print "$_name" > "$_name.txt" 2> "$_name.print.err"
	return $_rc
}

# gwork's pid: the command's, the only process named gwork in the dump
# or the exec event; taken from its getppid entries' thread (one thread)
gwork_tid() {	# FILE
	awk '/ syscall_entry_getppid: /' "$1" | sed -n 's/.*{ tid = \([0-9]*\) }.*/\1/p' |
		sort | uniq -c | sort -rn | awk 'NR == 1 { print $2 }'
}
count() {	# FILE EVENT TID
	grep -c " $2: .*{ tid = $3 }" "$1"
}
# the recorder's threads (state dump: pid = the recorder), one per line
rec_tids() {	# FILE PID
	sed -n "s/.* lttng_statedump_process_state: .*{ tid = [0-9]* }, { tid = \([0-9]*\), pid = $2, .*/\1/p" "$1" |
		sort -u
}
# the recorder's fds on its instance's trace_pipe_raw files
rec_fds() {	# FILE PID
	sed -n "s/.* lttng_statedump_file_descriptor: .*{ pid = $2, fd = \([0-9]*\), .*filename = \".*\/instances\/trawl-$2\/per_cpu\/cpu[0-9]*\/trace_pipe_raw\" }.*/\1/p" "$1" |
		sort -u
}

grec rd
ok $? "record -- ./gwork $N: exit 0"
lost=$(sed -n 's/^trawl record: [0-9]* kernel events, \([0-9]*\) lost.*/\1/p' rd.err)
is "${lost:-none}" 0 "nothing lost"
G=$(gwork_tid rd.txt)
is "$(count rd.txt syscall_entry_getppid "${G:-x}") $(count rd.txt syscall_exit_getppid "${G:-x}")" \
	"$N $N" "gwork's $N getppid entries and $N exits, all in the trace"
rec_tids rd.txt "$REC_PID" > rd.tids
rec_fds rd.txt "$REC_PID" > rd.fds
[ -s rd.tids ] && [ -s rd.fds ]
ok $? "the state dump shows the recorder $REC_PID: $(wc -l < rd.tids) threads, $(wc -l < rd.fds) trace_pipe_raw fds"
# each read (and splice) entry of the recorder on one of its trace_pipe_raw
# fds, and the exit that follows it on its thread: "CALL FD RET"
awk -v tids="$(tr '\n' ' ' < rd.tids)" -v fds="$(tr '\n' ' ' < rd.fds)" '
	BEGIN {
		n = split(tids, t, " "); for (i = 1; i <= n; i++) rec[t[i]] = 1
		n = split(fds, f, " "); for (i = 1; i <= n; i++) pipe[f[i]] = 1
	}
	/ syscall_e(ntry|xit)_(read|splice): / {
		tid = $0; sub(/.*\{ tid = /, "", tid); sub(/ }.*/, "", tid)
		if (!(tid in rec)) next
		call = $0; sub(/.* syscall_e[a-z]*_/, "", call); sub(/:.*/, "", call)
		if ($0 ~ / syscall_entry_/) {
			fd = $0; sub(/.*(fd|fd_in) = /, "", fd); sub(/,.*/, "", fd)
			if (fd in pipe) pend[tid] = call " " fd
			else delete pend[tid]
		} else if (tid in pend) {
			r = $0; sub(/.*ret = /, "", r); sub(/ }.*/, "", r)
			print pend[tid], r; delete pend[tid]
		}
	}' rd.txt > rd.calls
nd=$(awk '$1 == "read" && $3 > 0' rd.calls | wc -l)
[ "$nd" -gt 0 ]
ok $? "the recorder read pages of its trace_pipe_raw fds: $nd of its $(awk '$1 == "read"' rd.calls | wc -l) reads of them returned data"
bad=$(awk -v s="$SUB" '$1 == "read" && $3 > 0 && $3 != s' rd.calls | wc -l)
is "$bad" 0 "every read that returned data returned one sub-buffer ($SUB bytes)"
is "$(awk '$1 == "splice"' rd.calls | wc -l)" 0 "the recorder spliced none of them"
pages=$(sed -n 's/^trawl record:   cpu [0-9]*: [0-9]* events, [0-9]* lost, \([0-9]*\) pages$/\1/p' rd.err |
	awk '{ s += $1 } END { print s + 0 }')
[ "$pages" -ge "$nd" ] && [ "$pages" -le $((N * 2 * 64 / SUB + 64)) ]
ok $? "the summary's pages ($pages): at least the reads traced ($nd; the last ones come after tracing stopped), at most $((N * 2 * 64 / SUB + 64)) of $SUB bytes"

# ---- babeltrace2 reads the trace (the getppid and read events)
if command -v babeltrace2 >/dev/null 2>&1 && command -v python3 >/dev/null 2>&1; then
	babeltrace2 rd/h/kernel 2> rd.bt.err | grep -c ' syscall_e[a-z]*_getppid: ' > rd.bt.n
	is "$(cat rd.bt.n)" "$(grep -c ' syscall_e[a-z]*_getppid: ' rd.txt)" \
		"babeltrace2 reads as many getppid events in the trace as trawl print"
else
	skip "babeltrace2 or python3 missing"
fi
finish
