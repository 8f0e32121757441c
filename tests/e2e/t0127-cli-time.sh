#!/bin/sh
# Every command that takes a time takes every form (issue 27, item 10):
# +S[.n] (and +N ms/us/ns) after the first event in print, analyze, agg,
# view, export and state, the same events as the absolute form; agg, view
# and export take --begin/--end; --clock-gmt and --gmt are one option
# everywhere.
. "$TRAWL_SRC/tests/e2e/lib.sh"
plan 16

"$TRAWL" simulate -q -o s --hosts 2 --cpus 2 --events 20000 --seed 5 > /dev/null 2>&1 ||
	{ echo "Bail out! simulate failed"; exit 1; }
first=$("$TRAWL" info s 2> /dev/null | sed -n 's/^ *\([0-9]*\) \.\. [0-9]* ns$/\1/p')
[ -n "$first" ] || { echo "Bail out! no first event time from info"; exit 1; }
b=$((first + 200000000)) e=$((first + 450000000))	# +0.2 s .. +0.45 s

"$TRAWL" print -b "${b}ns" -E "${e}ns" s > abs.txt 2> /dev/null
"$TRAWL" print -b +0.2 -E +0.45 s > rel.txt 2> rel.err
n=$(lines abs.txt)
[ "$n" -gt 100 ] && cmp -s abs.txt rel.txt
ok $? "print -b +0.2 -E +0.45: the events of the absolute range ($n, $(cat rel.err))"
"$TRAWL" print -b +200ms -E +450000us s > units.txt 2> /dev/null
cmp_files units.txt abs.txt "print -b +200ms -E +450000us: the same"
"$TRAWL" print -b +0 -n 1 s > zero.txt 2> /dev/null
"$TRAWL" print -n 1 s > one.txt 2> /dev/null
cmp_files zero.txt one.txt "print -b +0: from the first event"

"$TRAWL" analyze syscalls --begin "${b}ns" --end "${e}ns" s > an-abs.txt 2> /dev/null
"$TRAWL" analyze syscalls --begin +0.2 --end +0.45 s > an-rel.txt 2> an-rel.err
rc=$?
[ "$rc" -eq 0 ] && [ -s an-rel.txt ] && cmp -s an-abs.txt an-rel.txt
ok $? "analyze --begin +0.2 --end +0.45: the report of the absolute range (exit $rc, $(head -c 200 an-rel.err))"

want=$(grep -c ' sched_switch: ' abs.txt)
"$TRAWL" agg -b +0.2 -E +0.45 'count(sched_switch)' s > agg.txt 2> agg.err
is "$?|$(awk 'NR == 3 { print $1 }' agg.txt)" "0|$want" "agg -b +0.2 -E +0.45: the count print gives ($want)"
"$TRAWL" agg --begin "${b}ns" --end "${e}ns" 'count(sched_switch)' s > agg2.txt 2> /dev/null
cmp_files agg2.txt agg.txt "agg --begin/--end in ns: the same table"

"$TRAWL" view -b +0.2 -E +0.45 -o v.html s > view.out 2> view.err
is "$?|$(sed -n 's/^trawl view: v.html: \([0-9]*\) events.*/\1/p' view.out)" "0|$n" \
	"view -b +0.2 -E +0.45: the page holds the range's events ($n)"
"$TRAWL" export -f chrome-json -b +0.2 -E +0.45 -o x.json s > /dev/null 2> x.err
is "$?|$(sed -n 's/^trawl export: x.json: [0-9]* records from \([0-9]*\) events.*/\1/p' x.err)" "0|$n" \
	"export -b +0.2 -E +0.45: the range's events ($n)"

# +S after the first event of the hosts read (host0's here)
first0=$("$TRAWL" info -H host0 s 2> /dev/null | sed -n 's/^ *\([0-9]*\) \.\. [0-9]* ns$/\1/p')
"$TRAWL" state --host host0 --at +0.3 --json s > st-rel.json 2> /dev/null
"$TRAWL" state --host host0 --at "$((first0 + 300000000))ns" --json s > st-abs.json 2> /dev/null
[ -s st-rel.json ] && cmp -s st-rel.json st-abs.json
ok $? "state --at +0.3: the state of the absolute time"

for bad in + +1. +1x +-1 ++1; do
	"$TRAWL" print -b "$bad" s > /dev/null 2> bad.err
	r=$?
	[ "$r" -eq 2 ] && grep -q "^trawl print: --begin: '$bad' is not a time$" bad.err || break
done
is "$r|$(sed -n 1p bad.err)" "2|trawl print: --begin: '++1' is not a time" "malformed +S forms: usage errors (+, +1., +1x, +-1, ++1)"

# --clock-gmt and --gmt: one option, in every command that takes a time
"$TRAWL" print --clock-gmt -n 5 s > g1.txt 2> /dev/null
"$TRAWL" print --gmt -n 5 s > g2.txt 2> /dev/null
cmp_files g2.txt g1.txt "print --gmt is --clock-gmt"
"$TRAWL" info --gmt s > i2.txt 2> /dev/null && "$TRAWL" info --clock-gmt s > i1.txt 2> /dev/null
cmp_files i2.txt i1.txt "info --gmt is --clock-gmt"
"$TRAWL" analyze syscalls --gmt --begin +0.2 s > a2.txt 2> /dev/null &&
	"$TRAWL" analyze syscalls --clock-gmt --begin +0.2 s > a1.txt 2> /dev/null
cmp_files a2.txt a1.txt "analyze --gmt is --clock-gmt"
"$TRAWL" state --host host0 --at +0.3 --clock-gmt s > s1.txt 2> /dev/null &&
	"$TRAWL" state --host host0 --at +0.3 --gmt s > s2.txt 2> /dev/null
[ -s s1.txt ] && cmp -s s1.txt s2.txt
ok $? "state --clock-gmt is --gmt"
ok_all=0
for c in "agg count(sched_switch)" "view -o g.html" "export -o g.pftrace"; do
	# shellcheck disable=SC2086
	"$TRAWL" $c --gmt -b "$(TZ=UTC date -d @$((first / 1000000000 + 1)) '+%Y-%m-%d %H:%M:%S')" s \
		> /dev/null 2> gmt.err || { ok_all=1; echo "# $c: $(cat gmt.err)"; }
done
ok $ok_all "agg, view, export take --gmt with a date"
"$TRAWL" agg --clock-gmt -E 00:00:00 'count(sched_switch)' s > /dev/null 2> late.err
is "$?" 0 "agg --clock-gmt with a time of day: exit 0"
finish
