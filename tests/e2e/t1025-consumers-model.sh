#!/bin/sh
# trawl agg, trawl view and trawl export read the one kernel model
# (lib/kstate; docs/state.md "One model, its consumers") for names,
# tgids, cgroups, each CPU's thread and the threads' states; on simulated
# sessions their outputs stay byte-identical to what each gave when it
# followed sched_switch on its own: two seeded sessions (one with
# --shapes' corner cases, three hosts), agg statements keyed by comm, pid,
# cgroup, tid (text and --json), the view's page, the perfetto and
# chrome-json files. tests/data/consumers-model/sums holds the SHA-256 of
# each output as the commit before the model gave it; GEN=1 writes it
# anew (only where an output is meant to change, said in the commit).
# Names after exec, the state dump's, cgroups: test-agg-model,
# test-names-exec, test-export-exec, test-view-exec.
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v sha256sum > /dev/null 2>&1 || skip_all "needs sha256sum"
SUMS="$TRAWL_SRC/tests/data/consumers-model/sums"
[ -n "${GEN:-}" ] || [ -f "$SUMS" ] || skip_all "no $SUMS"
AGGS="5"
plan $((2 + 2 * (2 * AGGS + 3) + 1))

"$TRAWL" simulate -q -o s1 -e 40k -s 3 > sim.log 2>&1
ok $? "a simulated session (40k events, seed 3)"
"$TRAWL" simulate -q -o s2 --shapes -e 20k -n 3 -s 7 >> sim.log 2>&1
ok $? "a simulated session with every format corner case (20k events, 3 hosts, seed 7)"

stmt() {
	case $1 in
	1) echo 'count(app:*) by comm, pid' ;;
	2) echo 'count(sched_*) by host, tid, comm' ;;
	3) echo 'hist(lat(app:request_begin, app:request_end)) by comm top 5' ;;
	4) echo 'count(syscall_entry_*) by cgroup, comm; count(sched_wakeup) by pid' ;;
	5) echo 'sum(syscall_exit_read.ret) by comm, tid top 20' ;;
	esac
}
mkdir out
: > got.sums
# check NAME EXIT: the output's sum against the one before the model
check() {
	echo "$(sha256sum < "out/$1" | cut -d' ' -f1)  $1" >> got.sums
	if [ -n "${GEN:-}" ]; then
		ok "$2" "$1 (written)"
		return
	fi
	want=$(awk -v n="$1" '$2 == n { print $1 }' "$SUMS")
	got=$(awk -v n="$1" '$2 == n { print $1 }' got.sums)
	[ "$2" = 0 ] && [ -s "out/$1" ] && [ "$got" = "$want" ]
	ok $? "$1: exit 0, the same output as before the model"
}
for s in s1 s2; do
	i=1
	while [ $i -le $AGGS ]; do
		"$TRAWL" agg "$(stmt $i)" "$s" > "out/$s-agg$i" 2> "out/$s-agg$i.err"
		check "$s-agg$i" $?
		"$TRAWL" agg --json "$(stmt $i)" "$s" > "out/$s-agg$i-json" 2> "out/$s-agg$i-json.err"
		check "$s-agg$i-json" $?
		i=$((i + 1))
	done
	"$TRAWL" view -q --title t -o "out/$s-view" "$s" 2> "out/$s-view.err"
	check "$s-view" $?
	"$TRAWL" export -q -f perfetto -o "out/$s-perfetto" "$s" 2> "out/$s-perfetto.err"
	check "$s-perfetto" $?
	"$TRAWL" export -q -f chrome-json -o "out/$s-chrome" "$s" 2> "out/$s-chrome.err"
	check "$s-chrome" $?
done
if [ -n "${GEN:-}" ]; then
	cp got.sums "$SUMS"
	ok $? "written $SUMS"
else
	is "$(wc -l < got.sums | tr -d ' ')" "$(wc -l < "$SUMS" | tr -d ' ')" "every output the sums name was made"
fi
finish
