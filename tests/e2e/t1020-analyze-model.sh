#!/bin/sh
# Every analysis's output, text and --json, on simulated sessions stays
# byte-identical to what it was before the analyses read the one kernel
# model (lib/kstate; docs/analyses.md): two seeded sessions (one with
# --shapes' corner cases, three hosts), every analysis, each report form
# (--stats, --json, --freq, --by host, --interval, --log --json, --top),
# in UTC. tests/data/analyze-model/sums holds the SHA-256 of each output
# as the analyses' own bookkeeping gave it (the commit before the model);
# GEN=1 writes it anew (only where an output is meant to change, said in
# the commit).
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v sha256sum > /dev/null 2>&1 || skip_all "needs sha256sum"
SUMS="$TRAWL_SRC/tests/data/analyze-model/sums"
[ -n "${GEN:-}" ] || [ -f "$SUMS" ] || skip_all "no $SUMS"
FORMS="stats json freq by-host interval log-json top"
ANALYSES="cputop schedlat iolatency irq syscalls"
plan $((2 + 2 * 5 * 7 + 1))

"$TRAWL" simulate -q -o s1 -e 40k -s 3 > sim.log 2>&1
ok $? "a simulated session (40k events, seed 3)"
"$TRAWL" simulate -q -o s2 --shapes -e 20k -n 3 -s 7 >> sim.log 2>&1
ok $? "a simulated session with every format corner case (20k events, 3 hosts, seed 7)"

opts() {
	case $1 in
	stats) echo --stats ;; json) echo --json ;; freq) echo --freq ;; by-host) echo --by host ;;
	interval) echo --interval 0.2 ;; log-json) echo --log --json ;; top) echo --top 5 ;;
	esac
}
mkdir out
: > got.sums
for s in s1 s2; do
	for a in $ANALYSES; do
		for f in $FORMS; do
			# shellcheck disable=SC2046
			"$TRAWL" analyze "$a" --clock-gmt $(opts "$f") "$s" > "out/$s-$a-$f" 2> "out/$s-$a-$f.err"
			rc=$?
			echo "$(sha256sum < "out/$s-$a-$f" | cut -d' ' -f1)  $s-$a-$f" >> got.sums
			if [ -n "${GEN:-}" ]; then
				ok $rc "$s: analyze $a $(opts "$f") (written)"
				continue
			fi
			want=$(awk -v n="$s-$a-$f" '$2 == n { print $1 }' "$SUMS")
			got=$(awk -v n="$s-$a-$f" '$2 == n { print $1 }' got.sums)
			[ $rc = 0 ] && [ -s "out/$s-$a-$f" ] && [ "$got" = "$want" ]
			ok $? "$s: analyze $a $(opts "$f"): exit 0, the same output as before the model"
		done
	done
done
if [ -n "${GEN:-}" ]; then
	cp got.sums "$SUMS"
	ok $? "written $SUMS"
else
	is "$(wc -l < got.sums | tr -d ' ')" "$(wc -l < "$SUMS" | tr -d ' ')" "every output the sums name was made"
fi
finish
