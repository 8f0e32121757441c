#!/bin/sh
# The view's sync table and `trawl sync` print offsets and drifts with one
# sign convention, stated in the panel (issue 27, item 11): the host's clock
# minus the reference's at its first event, the host clock's rate against
# the reference's; and the view's hosts are in the order of their names,
# not of their first events.
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v python3 > /dev/null || skip_all "no python3 to read the page"
plan 4

"$TRAWL" simulate -q -o s --hosts 3 --events 30000 --sync --seed 5 > /dev/null 2>&1 ||
	{ echo "Bail out! simulate failed"; exit 1; }
"$TRAWL" sync s > sync.out 2> sync.err || { echo "Bail out! sync: $(cat sync.err)"; exit 1; }
# "host offset drift" as trawl sync prints them
awk '/^host / { h = $2 } /^  drift / { d[h] = $2 } /^  offset / { o[h] = $2 }
     END { for (h in o) printf "%s %d %.3f\n", h, o[h], d[h] }' sync.out | sort > sync.txt
[ "$(lines sync.txt)" -eq 3 ] || { echo "Bail out! sync printed $(lines sync.txt) hosts"; exit 1; }
"$TRAWL" view -o v.html s > /dev/null 2> view.err || { echo "Bail out! view: $(cat view.err)"; exit 1; }
PYTHONPATH="$TRAWL_SRC/tests/e2e" python3 - v.html > view.txt <<'PY'
import sys, viewpage
ix, _ = viewpage.load(sys.argv[1])
for h in ix['hosts']:
    s = h.get('sync')
    if s:
        print('%s %d %.3f' % (h['name'], s['offset'], s['drift_ppm']))
PY
sort view.txt > view.sorted
cmp_files view.sorted sync.txt "the view's offsets and drifts are trawl sync's, signs and all"
nz=$(awk '$2 != 0 && $3 != 0.000' sync.txt | wc -l | tr -d ' ')
ok $([ "$nz" -ge 1 ]; echo $?) "some host has a non-zero offset and drift ($nz): the signs are checked"
grep -q "offset: the host's clock minus the reference's, at the host's first event; drift: the host clock's rate against the reference's" v.html
ok $? "the panel states the convention"

# the hosts in the order of their names; the first events come in another order
"$TRAWL" print s 2> /dev/null | awk '{ h = $3; if (!(h in seen)) { seen[h] = 1; printf "%s ", h } }' > first.txt
PYTHONPATH="$TRAWL_SRC/tests/e2e" python3 -c '
import sys, viewpage
ix, _ = viewpage.load(sys.argv[1])
print(" ".join(h["name"] for h in ix["hosts"]))' v.html > hosts.txt
is "$(cat hosts.txt)|$(tr ' ' '\n' < first.txt | grep . | sort | tr '\n' ' ' | sed 's/ $//')" \
	"$(cat hosts.txt)|$(cat hosts.txt)" "the view's hosts are sorted: $(cat hosts.txt) (first events: $(cat first.txt))"
finish
