#!/bin/sh
# trawl analyze --begin/--end take every <time> form trawl print takes (one
# parser, cli/time.c), on a simulated session, in a time zone that is not
# UTC (TZ=XYZ-5:30, a POSIX rule: no zone files needed):
#  - the range applies: the report's begin and end are the first and last
#    events trawl print shows in that range (the oracle);
#  - seconds with a fraction, bare ns, 'Nns', a local date, a local time of
#    day (on the first event's day), and with --clock-gmt a UTC date and a
#    UTC time of day give byte-identical reports;
#  - the report's times are local, or UTC with --clock-gmt, as trawl print
#    shows the same event;
#  - errors: a bad time, a time of day without trace files, --end before
#    --begin are usage errors (exit 2).
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v python3 > /dev/null 2>&1 || skip_all "needs python3"
TZ=XYZ-5:30
export TZ
plan 15

"$TRAWL" simulate -q -o sim -n 2 -e 20000 > sim.log 2>&1
ok $? "a simulated session"
F=$("$TRAWL" analyze syscalls --json sim | python3 -c 'import json,sys; print(json.load(sys.stdin)["begin"])')
# a range inside the trace, with fractions down to the ns
B=$((F + 300000123))
E=$((F + 600000456))
BS=$((B / 1000000000)) BF=$(printf %09d $((B % 1000000000)))
ES=$((E / 1000000000)) EF=$(printf %09d $((E % 1000000000)))

# the oracle: the first and last events trawl print shows in the range
"$TRAWL" print -f json --begin "${B}ns" --end "${E}ns" sim > range.json
WANT=$(python3 -c '
import json
ts = [json.loads(l)["ts"] for l in open("range.json")]
print(ts[0], ts[-1], len(ts))')
set -- $WANT x x
P_FIRST=$1 P_LAST=$2
"$TRAWL" analyze syscalls --json --begin "${B}ns" --end "${E}ns" sim > ref.json
GOT=$(python3 -c '
import json
d = json.load(open("ref.json"))
print(d["begin"], d["end"], sum(r["count"] for r in d["rows"]))')
set -- $GOT x x x
test "$1 $2" = "$P_FIRST $P_LAST" && [ "$3" != x ] && [ "$3" -gt 0 ] && [ "$P_FIRST" -ge "$B" ] && [ "$P_LAST" -le "$E" ]
ok $? "--begin/--end Nns: the report spans the range's first and last events as trawl print shows them ($GOT / $WANT)"
"$TRAWL" analyze syscalls --json sim > all.json
python3 -c '
import json, sys
a, r = json.load(open("all.json")), json.load(open("ref.json"))
sys.exit(not sum(x["count"] for x in r["rows"]) < sum(x["count"] for x in a["rows"]))'
ok $? "the range leaves out the syscalls outside it"

# same FORM ARGS...: the report is the reference's, byte for byte
same() {
	_what=$1
	shift
	"$TRAWL" analyze syscalls --json "$@" sim > form.json 2> form.err &&
		test -s form.json && cmp -s form.json ref.json
	ok $? "$_what: the same report ($(head -c 200 form.err))"
}
same "seconds with a fraction" --begin "$BS.$BF" --end "$ES.$EF"
same "bare ns (13 digits or more)" --begin "$B" --end "$E"
LB=$(date -d "@$BS" '+%Y-%m-%d %H:%M:%S').$BF
LE=$(date -d "@$ES" '+%Y-%m-%d %H:%M:%S').$EF
same "a local date ($LB)" --begin "$LB" --end "$LE"
same "a local time of day ($(date -d "@$BS" +%T).$BF)" \
	--begin "$(date -d "@$BS" +%T).$BF" --end "$(date -d "@$ES" +%T).$EF"
UB=$(date -u -d "@$BS" '+%Y-%m-%d %H:%M:%S').$BF
UE=$(date -u -d "@$ES" '+%Y-%m-%d %H:%M:%S').$EF
same "--clock-gmt, a UTC date ($UB)" --clock-gmt --begin "$UB" --end "$UE"
same "--clock-gmt, a UTC time of day" --clock-gmt \
	--begin "$(date -u -d "@$BS" +%T).$BF" --end "$(date -u -d "@$ES" +%T).$EF"
# without --clock-gmt, the UTC date is read as local time: 5:30 before the
# trace (UTC+5:30), so the report begins at the trace's first event
OFF=$("$TRAWL" analyze syscalls --json --begin "$UB" sim | python3 -c 'import json,sys; print(json.load(sys.stdin)["begin"])')
test "$OFF" = "$F"
ok $? "dates are local time without --clock-gmt (the UTC date begins at the first event: $OFF / $F)"

# the report's times: local, or UTC with --clock-gmt, as trawl print's
first_time() { "$TRAWL" print "$@" --begin "${B}ns" -n 1 sim | sed -n 's/^\[\([^]]*\)\].*/\1/p'; }
head_time() { "$TRAWL" analyze syscalls "$@" --begin "${B}ns" --end "${E}ns" sim |
	sed -n '1s/^syscalls: \[\([^,]*\),.*/\1/p'; }
L=$(first_time) H=$(head_time)
test -n "$L" && test "$H" = "$L"
ok $? "the report's begin in local time, as trawl print's ($H / $L)"
L=$(first_time --clock-gmt) H=$(head_time --clock-gmt)
test -n "$L" && test "$H" = "$L" && test "$H" != "$(first_time)"
ok $? "--clock-gmt: the report's begin in UTC, as trawl print --clock-gmt's ($H / $L)"

# usage errors
"$TRAWL" analyze syscalls --begin 12:xx sim > /dev/null 2> bad.err
test $? = 2 && grep -q "^trawl analyze: --begin: '12:xx' is not a time" bad.err
ok $? "a bad time: exit 2, named ($(head -1 bad.err))"
"$TRAWL" analyze syscalls --begin 10:00:00 --live net://127.0.0.1:9/session/none > /dev/null 2> rel.err
test $? = 2 && grep -q "time of day needs trace files" rel.err
ok $? "a time of day without trace files: exit 2 ($(head -1 rel.err))"
"$TRAWL" analyze syscalls --begin "$E" --end "$B" sim > /dev/null 2> rev.err
test $? = 2 && grep -q "end is before --begin" rev.err
ok $? "--end before --begin: exit 2 ($(head -1 rev.err))"
finish
