# bench/machine.sh - sourced by the benchmark scripts: bench_machine prints
# the machine a figure comes from (CPU model, family and model number, CPUs,
# clocksource, load), one line, so that every result names its CPU; and
# the helpers they share (cpu_s, median, bench_scrape).
bench_machine() {
	awk -F': *' '/^model name/ && !m { m = $2 } /^cpu family/ && !f { f = $2 }
		/^model[ \t]*:/ && !n { n = $2 }
		END { printf "machine: %s (family %s, model %s), ", m, f, n }' /proc/cpuinfo
	printf '%s CPUs, clocksource %s, load average %s\n' "$(nproc)" \
		"$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2> /dev/null || echo ?)" \
		"$(cut -d' ' -f1-3 /proc/loadavg)"
}

# cpu_s PID: the process's CPU seconds, all its threads (utime + stime)
cpu_s() {
	awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); print ($12 + $13) / hz }' "/proc/$1/stat"
}

# median: of the numbers on stdin, one a line
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

# bench_scrape ADDR NODES N OUT [FAMILY]: once http://ADDR/metrics has
# NODES samples of FAMILY (default trawl_relay_node_received_bytes_total:
# a line per node; at most 60 s), N scrapes 0.2 s apart: "time_total
# size" lines into OUT (curl's), the last exposition in scrape.txt
bench_scrape() {
	_n=0
	while [ $_n -lt 600 ]; do
		_h=$(curl -s "http://$1/metrics" |
			grep -c "^${5:-trawl_relay_node_received_bytes_total}{")
		[ "$_h" -ge "$2" ] && break
		_n=$((_n + 1)); sleep 0.1
	done
	: > "$4"
	for _i in $(seq 1 "$3"); do
		curl -s -o scrape.txt -w '%{time_total} %{size_download}\n' "http://$1/metrics" >> "$4"
		sleep 0.2
	done
}
