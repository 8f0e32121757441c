#!/bin/sh
# Syscall arguments keep their C type's sign (docs/kernel.md, "Names"): the
# metadata declares each argument of syscall_entry_<name> signed or not as
# the kernel's syscalls:sys_enter_<name> format types it, and the value is
# that type's (lttng-modules' way): a workload calls openat(AT_FDCWD, ...)
# (int dfd = -100), close(-1) (unsigned int fd = 4294967295), lseek(fd, -5,
# SEEK_END) (off_t offset = -5) and mmap(..., -1, 0) (fd = -1, an int in
# LTTng's traces); trawl print shows those values with raw_syscalls (-k
# syscalls), with the per-syscall tracepoints, and without file names;
# babeltrace2 reads the same values.
. "$TRAWL_SRC/tests/e2e/lib.sh"
[ "$(id -u)" = 0 ] || skip_all "needs root (tracefs instances)"
command -v cc >/dev/null 2>&1 || skip_all "needs a C compiler for the workload program"
[ -d "$(tracefs_dir)/events/syscalls" ] 2>/dev/null ||
	[ -d /sys/kernel/tracing/events/syscalls ] ||
	skip_all "this kernel has no syscall tracepoints (CONFIG_FTRACE_SYSCALLS)"

cat > wk.c <<'EOF'
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(void)
{
	int fd = (int)syscall(SYS_openat, AT_FDCWD, "wk.c", O_RDONLY);
	syscall(SYS_close, -1);
	syscall(SYS_lseek, fd, -5L, SEEK_END);
	void *m = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return fd < 0 || m == MAP_FAILED;
}
EOF
cc -O0 -o wk wk.c || { echo "Bail out! the workload does not build"; exit 1; }
plan 16

# rec NAME EVENTS [OPTIONS]: the workload recorded into NAME
rec() {
	n=$1 ev=$2; shift 2
	"$TRAWL" record -o "$n" --host h -k "$ev" --only-command --no-ust "$@" -- ./wk \
		> "$n.out" 2> "$n.err"
}
check() {
	n=$1 what=$2
	# --only-command: every syscall recorded is the workload's (one thread)
	pid=$(grep -m1 'syscall_entry_' "$n.txt" | sed -n 's/.*{ tid = \([0-9]*\) }.*/\1/p')
	grep "tid = $pid }" "$n.txt" > "$n.mine"
	grep -q 'syscall_entry_openat: .*{ dfd = -100, filename = \(\"wk.c\"\|0x[0-9a-f]*\)' "$n.mine"
	ok $? "$what: openat's int dfd = -100 (AT_FDCWD)"
	grep -q 'syscall_entry_close: .*{ fd = 4294967295 }' "$n.mine"
	ok $? "$what: close(-1)'s unsigned int fd = 4294967295"
	grep -q 'syscall_entry_lseek: .*{ fd = [0-9]*, offset = -5, whence = 2 }' "$n.mine"
	ok $? "$what: lseek's off_t offset = -5"
	grep -q 'syscall_entry_mmap: .*, fd = -1, off = 0 }' "$n.mine"
	ok $? "$what: mmap's fd = -1 (an int, as lttng-modules declares it)"
}

rec raw syscalls
ok $? "record -k syscalls"
"$TRAWL" print raw > raw.txt 2>/dev/null
check raw "raw_syscalls"
grep -A6 'name = "syscall_entry_openat";' raw/h/kernel/metadata | grep -q 'signed = true; } _dfd;' &&
	grep -A8 'name = "syscall_entry_read";' raw/h/kernel/metadata | grep -q 'signed = false; } _count;'
ok $? "the metadata: openat's dfd signed, read's size_t count unsigned"
if command -v babeltrace2 > /dev/null 2>&1; then
	babeltrace2 raw 2>/dev/null | grep -c 'syscall_entry_openat: .*dfd = -100' > bt.n
	[ "$(cat bt.n)" -ge 1 ]
	ok $? "babeltrace2 reads dfd = -100 too"
else
	skip "babeltrace2 is not installed (the oracle)"
fi

rec tp syscalls:sys_enter_openat,syscalls:sys_enter_close,syscalls:sys_enter_lseek,syscalls:sys_enter_mmap,sched:sched_process_exec
ok $? "record -k syscalls:sys_enter_*"
"$TRAWL" print tp > tp.txt 2>/dev/null
check tp "per-syscall tracepoints"

rec nf syscalls --no-file-names
"$TRAWL" print nf > nf.txt 2>/dev/null
check nf "without file names"
finish
