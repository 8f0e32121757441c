#!/bin/sh
# No question answered that was not understood (issue 27, item 5): an event,
# field, key, host or CPU that nothing in the traces matches is a usage
# error (exit 2) that names it and the nearest there is, in agg, print,
# info and analyze; before, each gave an empty answer and exit 0.
. "$TRAWL_SRC/tests/e2e/lib.sh"
plan 17

"$TRAWL" simulate -q -o s --hosts 2 --cpus 2 --events 4000 --seed 3 > /dev/null 2>&1 ||
	{ echo "Bail out! simulate failed"; exit 1; }

# run WHAT CMD ARGS...: "rc|stdout lines|stderr", the stderr lines joined by '|'
run() {
	"$TRAWL" "$@" > out.txt 2> err.txt
	echo "$?|$(lines out.txt)|$(tr '\n' '|' < err.txt)"
}

is "$(run agg 'count(nosuch_event)' s)" \
	"2|0|trawl agg: count(nosuch_event): no event matches 'nosuch_event'|" \
	"agg count(nosuch_event): exit 2, no event matches"
is "$(run agg 'count(sched_swich) by comm' s)" \
	"2|0|trawl agg: count(sched_swich) by comm: no event matches 'sched_swich' (did you mean 'sched_switch'?)|" \
	"agg count(sched_swich): the near name"
is "$(run agg 'sum(sched_switch.prev_comm)' s)" \
	"2|0|trawl agg: sum(sched_switch.prev_comm): sched_switch.prev_comm is a string: sum() takes numbers (its values as a key: count(sched_switch) by prev_comm)|" \
	"agg sum() of a string: exit 2, what to do instead"
is "$(run agg 'sum(sched_switch.prev_pri)' s)" \
	"2|0|trawl agg: sum(sched_switch.prev_pri): event sched_switch has no field 'prev_pri' (did you mean 'prev_prio'?)|" \
	"agg sum() of a field no event has: exit 2, the near field"
is "$(run agg 'count(sched_switch) by nosuchkey' s)" \
	"2|0|trawl agg: count(sched_switch) by nosuchkey: no key 'nosuchkey': not one of host, cpu, tid, pid, comm, cgroup, event, and no event matching 'sched_switch' has such a field|" \
	"agg by nosuchkey: exit 2, the keys there are"
is "$(run agg 'count(sched_switch) by next_com' s)" \
	"2|0|trawl agg: count(sched_switch) by next_com: no key 'next_com': not one of host, cpu, tid, pid, comm, cgroup, event, and no event matching 'sched_switch' has such a field (did you mean 'next_comm'?)|" \
	"agg by next_com: the near field"
is "$(run agg -H nosuch 'count(sched_switch)' s)" \
	"2|0|trawl agg: --host 'nosuch': no host matches it (the hosts: host0, host1)|" \
	"agg -H nosuch: exit 2, the hosts there are"
is "$(run agg -H hots1 'count(sched_switch)' s)" \
	"2|0|trawl agg: --host 'hots1': no host matches it (the hosts: host0, host1)|hint: did you mean 'host1'?|" \
	"agg -H hots1: the near host"
# what matches still runs: the count equals print's
n=$("$TRAWL" print -H 'host*' -e sched_switch s 2> /dev/null | wc -l | tr -d ' ')
"$TRAWL" agg -H 'host*' 'count(sched_switch)' s > ok.txt 2> ok.err
is "$?|$(awk 'NR == 3 { print $1 }' ok.txt)" "0|$n" "agg of what matches: exit 0, the count print gives ($n)"

is "$(run print -e nosuch s)" "2|0|trawl print: --event 'nosuch': no event matches it|" \
	"print -e nosuch: exit 2"
is "$(run print -e syscall_entry_wirte s)" \
	"2|0|trawl print: --event 'syscall_entry_wirte': no event matches it|hint: did you mean 'syscall_entry_write'?|" \
	"print -e with a typo: the near event"
is "$(run print -H nosuch s)" "2|0|trawl print: --host 'nosuch': no host matches it (the hosts: host0, host1)|" \
	"print -H nosuch: exit 2"
is "$(run print -H host0 -H nosuch s)" "2|0|trawl print: --host 'nosuch': no host matches it (the hosts: host0, host1)|" \
	"print: each --host must match something"
is "$(run info -H nosuch s)" "2|0|trawl info: --host 'nosuch': no host matches it (the hosts: host0, host1)|" \
	"info -H nosuch: exit 2, not '0 hosts'"

is "$(run analyze cputop --host nosuch s)" \
	"2|0|trawl analyze: --host 'nosuch': no host matches it (the hosts: host0, host1)|" \
	"analyze cputop --host nosuch: exit 2"
ncpu=$("$TRAWL" info s 2> /dev/null | awk '$1 ~ /^channel/ { print $2 }' | sort -n | tail -1)
is "$(run analyze cputop --cpu 99 s)" \
	"2|0|trawl analyze: --cpu 99: no stream is of that CPU (the highest: $ncpu)|" \
	"analyze --cpu 99: exit 2, the highest CPU there is ($ncpu)"
"$TRAWL" analyze cputop --cpu "$ncpu" s > cpu.txt 2> cpu.err
is "$?|$(lines cpu.err)" "0|0" "analyze --cpu $ncpu (one there is): exit 0, nothing on stderr"
finish
