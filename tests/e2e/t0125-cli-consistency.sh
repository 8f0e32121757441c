#!/bin/sh
# One behaviour across commands (issue 27, item 15): trawl(1) lists every
# command `trawl --help` lists; `simulate -q` prints nothing; counts of one
# read "1 host", "1 stream"; a small --max-size is not "0 MiB"; an unknown
# analysis gets one line of what to do (a hint, no second "Try" line); a
# bare `trawl` is a usage error.
. "$TRAWL_SRC/tests/e2e/lib.sh"
plan 11

"$TRAWL" --help > help.out
sed -n 's/^   \([a-z-]*\) .*/\1/p' help.out | grep -vx help | sort > cmds.help
env MANPATH="$TRASH/no-man" "$TRAWL" help trawl > trawl.txt 2>&1
# the COMMANDS section: each command with its page, "See trawl-CMD(1)"
sed -n '/^COMMANDS/,/^OPTIONS/p' trawl.txt | grep -o 'trawl-[a-z-]*(1)' |
	sed 's/^trawl-//; s/(1)$//' | sort -u > cmds.page
is "$(wc -l < cmds.page | tr -d ' ')|$(comm -3 cmds.help cmds.page | tr -d '\t' | tr '\n' ' ')" \
	"$(wc -l < cmds.help | tr -d ' ')|" "trawl help trawl lists each of the $(wc -l < cmds.help | tr -d ' ') commands of trawl --help"

# the same without man (trawl's own plain rendering)
env PATH="$TRASH/no-bin" MANPATH="$TRASH/no-man" "$TRAWL" help trawl > plain.txt 2>&1
sed -n '/^COMMANDS/,/^OPTIONS/p' plain.txt | grep -o 'trawl-[a-z-]*(1)' |
	sed 's/^trawl-//; s/(1)$//' | sort -u > cmds.plain
is "$(comm -3 cmds.help cmds.plain | tr -d '\t' | tr '\n' ' ')|$(grep -c '%' plain.txt)" "|0" \
	"trawl help trawl without man: every command too, no roff escapes left"

"$TRAWL" > bare.out 2> bare.err
is "$?|$(lines bare.out)|$(sed -n 1p bare.err)" "2|0|usage: trawl [--help | --version] <command> [<args>]" \
	"trawl alone: exit 2, its usage on stderr"

"$TRAWL" simulate -q -o one --hosts 1 --cpus 1 --events 1000 > simq.out 2> simq.err
is "$?|$(lines simq.out)|$(lines simq.err)" "0|0|0" "simulate -q: exit 0, nothing on stdout or stderr"
"$TRAWL" simulate -o one2 --hosts 1 --cpus 1 --events 1000 > sim.out 2> /dev/null
grep -q '^trawl simulate: 1000 events (.*), 1 host x 1 CPU, ' sim.out
ok $? "simulate: '1 host x 1 CPU' ($(cat sim.out))"

"$TRAWL" info one > info.out 2> /dev/null
grep -q '^total: 1 host, 2 traces, 2 streams, 1000 events, 0 discarded, ' info.out
ok $? "info: '1 host' in the total ($(grep '^total' info.out))"
"$TRAWL" info -e 'sched_*' one/host0/kernel > info1.out 2> /dev/null ||
	"$TRAWL" info one/host0/kernel > info1.out 2> /dev/null
grep -q '^total: 1 host, 1 trace, 1 stream, ' info1.out
ok $? "info of one trace: '1 trace, 1 stream' ($(grep '^total' info1.out))"

"$TRAWL" view --max-size 1000 -o v.html one > /dev/null 2> view.err
rc=$?
is "$rc|$(sed -n 1p view.err)" \
	"1|trawl view: v.html: the page would be $(sed -n 's/.*would be \([0-9.]* [KMG]iB\), .*/\1/p' view.err), above --max-size 1000 bytes (a browser holds it whole in memory)" \
	"view --max-size 1000: the limit in bytes, not '0 MiB'"
grep -q 'would be 0 MiB\|above 0 MiB' view.err
is $? 1 "view: no '0 MiB'"

"$TRAWL" analyze cputopp one > /dev/null 2> an.err
is "$?|$(cat an.err | tr '\n' '|')" \
	"2|trawl analyze: no analysis 'cputopp'|hint: did you mean 'cputop'? (trawl analyze --help lists them)|" \
	"analyze cputopp: exit 2, the error and one hint naming cputop"
"$TRAWL" analyze foo one > /dev/null 2> foo.err
is "$?|$(grep -c '^Try ' foo.err)|$(grep -c '^hint: ' foo.err)" "2|0|1" \
	"analyze foo: exit 2, a hint and no 'Try' line besides"
finish
