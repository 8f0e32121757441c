# bench/machine.sh - sourced by the benchmark scripts: bench_machine prints
# the machine a figure comes from (CPU model, family and model number, CPUs,
# clocksource, load), one line, so that every result names its CPU.
bench_machine() {
	awk -F': *' '/^model name/ && !m { m = $2 } /^cpu family/ && !f { f = $2 }
		/^model[ \t]*:/ && !n { n = $2 }
		END { printf "machine: %s (family %s, model %s), ", m, f, n }' /proc/cpuinfo
	printf '%s CPUs, clocksource %s, load average %s\n' "$(nproc)" \
		"$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2> /dev/null || echo ?)" \
		"$(cut -d' ' -f1-3 /proc/loadavg)"
}
