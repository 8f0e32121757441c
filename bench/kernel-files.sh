#!/bin/sh
# bench/kernel-files.sh - what the file names of openat & co. cost a kernel
# recording (docs/kernel.md, "File names"): an open-heavy workload (one
# thread opening and closing NFILES existing files of a directory, LOOPS
# times over) run without tracing, under `trawl record -k syscalls
# --no-file-names` (ftrace's pointers) and under `trawl record -k syscalls`
# (the eBPF program copies every path), interleaved, RUNS times each.
# Every recorder records system-wide, started alone before the workload and
# stopped with SIGINT, as bench/kernel.sh does. Printed, medians (min-max):
#   workload s     the workload's own time for its opens and closes
#   per open       that / the opens (ns)
#   recorder CPU   user + system time of trawl record (/usr/bin/time)
#   named          trawl's summary: paths written as strings / pointers
#
#   TRAWL_BUILD=build sh bench/kernel-files.sh   (env: RUNS=5 LOOPS=2000
#                                                 NFILES=100 BUF_KB=65536)
# Needs root, tracefs, a C compiler and /usr/bin/time.
set -u
: "${TRAWL_BUILD:?set TRAWL_BUILD to a build directory}"
TRAWL=$TRAWL_BUILD/trawl
RUNS=${RUNS:-5}
LOOPS=${LOOPS:-2000}
NFILES=${NFILES:-100}
BUF_KB=${BUF_KB:-65536}
WORK=${WORK:-$TRAWL_BUILD/bench/kernel-files-work}
[ "$(id -u)" = 0 ] || { echo "bench/kernel-files.sh: needs root"; exit 1; }
[ -x "$TRAWL" ] || { echo "bench/kernel-files.sh: $TRAWL is not built"; exit 1; }
[ -x /usr/bin/time ] || { echo "bench/kernel-files.sh: needs /usr/bin/time"; exit 1; }
mkdir -p "$WORK/files" || exit 1
. "$(dirname "$0")/machine.sh"
bench_machine
cd "$WORK" || exit 1

cat > opens.c <<'EOF'
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	int loops = atoi(argv[2]), n = atoi(argv[3]);
	char name[4096];
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int l = 0; l < loops; l++)
		for (int i = 0; i < n; i++) {
			snprintf(name, sizeof(name), "%s/file-%04d", argv[1], i);
			int fd = open(name, O_RDONLY);
			if (fd < 0)
				return 1;
			close(fd);
		}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.6f\n", (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9);
	return 0;
}
EOF
cc -O2 -o opens opens.c || exit 1
i=0
while [ $i -lt "$NFILES" ]; do : > "files/file-$(printf %04d $i)"; i=$((i + 1)); done

REC=""
cleanup() { [ -n "$REC" ] && kill -INT "$REC" 2>/dev/null; rm -rf "$WORK/out"; }
trap cleanup EXIT INT TERM

run_one() {	# CONFIG -> "workload_s cpu_s named pointers"
	rm -rf "$WORK/out"
	: > rec.log
	opt=""
	case $1 in
	base) ;;
	pointers) opt=--no-file-names;;
	names) ;;
	esac
	if [ "$1" != base ]; then
		/usr/bin/time -f 'CPU %U %S' -o rtime "$TRAWL" record -v -o "$WORK/out" -b "$BUF_KB" \
			-k syscalls $opt > rec.log 2>&1 &
		TP=$!
		j=0
		until grep -q 'Ctrl-C' rec.log 2>/dev/null || [ $j -gt 600 ]; do sleep 0.05; j=$((j + 1)); done
		REC=$(pgrep -P "$TP" | head -1)
	fi
	w=$(./opens "$WORK/files" "$LOOPS" "$NFILES")
	cpu=n/a named=n/a ptrs=n/a
	if [ "$1" != base ]; then
		kill -INT "$REC"; wait "$TP"; REC=""
		cpu=$(awk '/^CPU/ { printf "%.3f", $2 + $3 }' rtime)
		named=$(sed -n 's/.*file names: \([0-9]*\) named, \([0-9]*\) missing.*/\1/p' rec.log)
		ptrs=$(sed -n 's/.*file names: \([0-9]*\) named, \([0-9]*\) missing.*/\2/p' rec.log)
		[ -n "$named" ] || named=0 ptrs=all
	fi
	echo "$w $cpu $named $ptrs"
}

med() {	# the median (min-max) of the numbers on stdin
	sort -g | awk '{ v[NR] = $1 } END { if (!NR) { print "n/a"; exit }
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.3f (%.3f-%.3f)", m, v[1], v[NR] }'
}

echo "bench/kernel-files.sh: $RUNS runs, $LOOPS x $NFILES opens+closes, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
: > raw.txt
r=0
while [ $r -lt "$RUNS" ]; do
	for cfg in base pointers names; do
		echo "$cfg $(run_one $cfg)" >> raw.txt
	done
	r=$((r + 1))
done
opens=$((LOOPS * NFILES))
printf '%-10s %-26s %-12s %-22s %s\n' config "workload s" "per open ns" "recorder CPU s" "named / pointers (last run)"
for cfg in base pointers names; do
	w=$(awk -v c=$cfg '$1 == c { print $2 }' raw.txt | med)
	per=$(awk -v c=$cfg -v n=$opens '$1 == c { print $2 * 1e9 / n }' raw.txt | med | cut -d' ' -f1)
	cpu=$(awk -v c=$cfg '$1 == c && $3 != "n/a" { print $3 }' raw.txt | med)
	last=$(awk -v c=$cfg '$1 == c { l = $4 " / " $5 } END { print l }' raw.txt)
	printf '%-10s %-26s %-12s %-22s %s\n' $cfg "$w" "$per" "$cpu" "$last"
done
echo "paired per run (names / pointers, workload s): $(awk '$1 == "pointers" { p[++i] = $2 } $1 == "names" { n[++j] = $2 } END { for (k = 1; k <= j; k++) printf "%.2f ", n[k] / p[k] }' raw.txt)"
