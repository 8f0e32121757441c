#!/bin/sh
# One voice (issue 21): every command's errors read "trawl CMD: WHAT: WHY"
# once, then maybe "hint: ...", a usage error is that line and "Try 'trawl
# CMD --help'." (exit 2); a path that is not a trace says what it is, a bad
# metadata file is named once; `trawl help CMD` shows CMD's manual page from
# the build tree (no installed page can answer); -q is quiet, the internals
# only show with -v; the exit statuses are documented in trawl(1).
. "$TRAWL_SRC/tests/e2e/lib.sh"

# every command, as `trawl --help` lists them
"$TRAWL" --help > help.out
cmds=$(sed -n 's/^   \([a-z-]*\) .*/\1/p' help.out)
ncmds=$(echo "$cmds" | wc -w)
[ "$ncmds" -ge 20 ] || { echo "Bail out! trawl --help lists $ncmds commands"; exit 1; }
plan $((3 * ncmds - 1 + 25))

# no agent, no configuration of this machine's: the session commands fail
# the same way everywhere (their usage errors come before any request)
export TRAWL_AGENT_SOCKET="$TRASH/no-agent.sock" HOME="$TRASH/home" XDG_CONFIG_HOME="$TRASH/home"
mkdir -p home

# usage CMD ARGS...: "rc|WHO|second line|lines" of a usage error, WHO the
# first line up to its first ": " ("trawl CMD"); the first line in usage.err
usage() {
	_c=$1; shift
	"$TRAWL" "$_c" "$@" > /dev/null 2> usage.err
	_rc=$? _l1=$(sed -n 1p usage.err)
	echo "$_rc|${_l1%%: *}|$(sed -n 2p usage.err)|$(lines usage.err)"
}

# ---- a bad option: one line in the format, the Try line, exit 2
for c in $cmds; do
	is "$(usage "$c" --no-such-opt):$(head -1 usage.err)" \
		"2|trawl $c|Try 'trawl $c --help'.|2:trawl $c: unrecognized option '--no-such-opt'" \
		"$c --no-such-opt: one line, the Try line, exit 2"
done

# ---- a missing argument (or value): the same form
for c in $cmds; do
	case $c in
	simulate|relay) args=-o ;;		# a value missing
	agent) args=--socket ;;
	list|help) args="a b" ;;		# nothing is required: an extra argument
	*) args= ;;				# the required arguments missing
	esac
	# shellcheck disable=SC2086
	is "$(usage "$c" $args)" \
		"2|trawl $c|Try 'trawl $c --help'.|2" "$c ${args:-(no argument)}: one line, the Try line, exit 2 ($(head -1 usage.err))"
done
is "$(usage print --limit)" "2|trawl print|Try 'trawl print --help'.|2" "print --limit (no value): the same"
is "$(head -1 usage.err)" "trawl print: option '--limit' requires a value" "... naming the option"
is "$(usage print -Z x)" "2|trawl print|Try 'trawl print --help'.|2" "print -Z: the same"
is "$(head -1 usage.err)" "trawl print: unrecognized option '-Z'" "... naming the short option"
"$TRAWL" --no-such-opt > /dev/null 2> top.err
is "$?|$(cat top.err)" "2|trawl: unrecognized option '--no-such-opt'
Try 'trawl --help'." "trawl --no-such-opt: the same form, without a command"
"$TRAWL" prnt > /dev/null 2> prnt.err
is "$?|$(cat prnt.err)" "2|trawl: 'prnt' is not a trawl command
hint: did you mean 'trawl print'? (the commands: 'trawl --help')" "a misspelled command: the closest one as a hint"

# ---- paths that are not traces: what they are, the path once
echo "some notes" > notes.txt
"$TRAWL" simulate -o sess --hosts 1 --events 100 > /dev/null 2>&1
mkdir -p bad trunc
echo "garbage" > bad/metadata
head -c 300 sess/host0/kernel/metadata > trunc/metadata
for c in print info sync; do
	"$TRAWL" "$c" notes.txt > /dev/null 2> notes-$c.err
	rc=$?
	[ "$rc" -eq 1 ] && [ "$(grep -c . notes-$c.err)" -eq 2 ] &&
		grep -q "^trawl $c: notes.txt: not a trace: a text file, not a directory$" notes-$c.err &&
		grep -q '^hint: give .*directory' notes-$c.err
	ok $? "$c of a text file: what it is and what was wanted, exit $rc ($(tr '\n' '|' < notes-$c.err))"
done
"$TRAWL" print sess/host0/kernel/metadata > /dev/null 2> meta.err
grep -q "^trawl print: sess/host0/kernel/metadata: not a trace: a CTF metadata file" meta.err &&
	grep -q "^hint: give the trace directory that holds it: 'sess/host0/kernel'" meta.err
ok $? "print of a metadata file: its directory as the hint ($(tr '\n' '|' < meta.err))"
"$TRAWL" print bad > /dev/null 2> bad.err
is "$?|$(grep -o 'bad/metadata' bad.err | wc -l)|$(lines bad.err)" "1|1|1" \
	"a bad metadata file: exit 1, its path once, one line ($(cat bad.err))"
grep -q "^trawl print: bad/metadata: not CTF 1.8 metadata" bad.err
ok $? "... in the format"
"$TRAWL" info trunc > /dev/null 2> trunc.err
is "$?|$(grep -o 'trunc/metadata' trunc.err | wc -l)|$(lines trunc.err)" "1|1|1" \
	"a truncated metadata file: exit 1, its path once, one line ($(cat trunc.err))"
grep -q "^trawl info: trunc/metadata: line [0-9]*: " trunc.err
ok $? "... with the line where it ends"

# ---- help: the manual page from the build tree, installed or not
for c in $cmds; do
	[ "$c" = help ] && continue
	env MANPATH="$TRASH/no-man" "$TRAWL" help "$c" > page-$c.txt 2> page-$c.err
	rc=$?
	[ "$rc" -eq 0 ] && grep -q '^NAME' page-$c.txt && grep -q '^SYNOPSIS' page-$c.txt &&
		grep -q "^ *trawl-$c  *-  *[a-z]" page-$c.txt && [ ! -s page-$c.err ]
	ok $? "trawl help $c: its page's NAME and SYNOPSIS ($(grep -A1 '^NAME' page-$c.txt | tail -1 | sed 's/^ *//'))"
done
# without man at all: a plain rendering of its own
env PATH="$TRASH/no-bin" MANPATH="$TRASH/no-man" "$TRAWL" help stop > plain.txt 2>&1
grep -q '^NAME' plain.txt && grep -q '^ *trawl-stop - stop recording a session' plain.txt &&
	grep -q '^SYNOPSIS' plain.txt && grep -q '^ *trawl stop NAME' plain.txt
ok $? "without man: the page as plain text ($(sed -n 4p plain.txt | sed 's/^ *//'))"
grep -q "'trawl help <command>' shows a command's manual page" help.out
ok $? "trawl --help says how to read a command's manual page"
env MANPATH="$TRASH/no-man" "$TRAWL" help trawl > trawl.txt 2>&1
sed -n '/^EXIT STATUS/,/^[A-Z]/p' trawl.txt > exit.txt
grep -q '^ *0 *Success' exit.txt && grep -q '^ *1 *Failure' exit.txt && grep -q '^ *2 *Usage error' exit.txt &&
	grep -q '127' exit.txt
ok $? "trawl help trawl: the exit statuses 0, 1, 2 (and record's 127)"

# ---- quiet is quiet; the internals only with -v
"$TRAWL" info sess > /dev/null 2> info.err
grep -q '^trawl info: decoded 100 events' info.err
ok $? "info: the decode rate on stderr"
"$TRAWL" info -q sess > /dev/null 2> infoq.err
is "$?|$(cat infoq.err)" "0|" "info -q: nothing on stderr"
"$TRAWL" simulate -q --progress -o simq --hosts 1 --events 100000 > simq.out 2> simq.err
is "$?|$(cat simq.err)" "0|" "simulate -q --progress: no progress, nothing on stderr"
"$TRAWL" record -q --no-kernel -o rq -- true > rq.out 2> rq.err
is "$?|$(cat rq.err)" "0|" "record -q -- true: exit 0, nothing on stderr"
"$TRAWL" record --no-kernel -o rd -- true > /dev/null 2> rd.err
rc=$?
[ "$rc" -eq 0 ] && grep -q "^trawl record: user space of 'true' into rd/" rd.err &&
	! grep -q 'listening on\|drain loop\|SCHED_FIFO\|trawl agent:' rd.err
ok $? "record without -v: where the trace goes, no internals ($(tr '\n' '|' < rd.err))"
"$TRAWL" record -v --no-kernel -o rv -- true > /dev/null 2> rv.err
grep -q '^trawl agent: listening on /tmp/trawl-record-.*/agent.sock$' rv.err &&
	grep -q '^trawl agent: drain loop at ' rv.err
ok $? "record -v: the internals ($(grep -c . rv.err) lines)"
"$TRAWL" record -q --no-kernel -o rx -- "$TRASH/no-such-command" > /dev/null 2> rx.err
is "$?|$(cat rx.err)" "127|trawl record: cannot run '$TRASH/no-such-command': No such file or directory" \
	"record -- a missing command: exit 127, one line in the format"
# tcpcap -q: the summary on stdout, nothing on stderr (where eBPF capture works)
if "$TRAWL" tcpcap -o tc --host a -d 0.05 > tc.out 2> tc.err; then
	"$TRAWL" tcpcap -q -o tq --host a -d 0.05 > tq.out 2> tq.err
	rc=$?
	[ "$rc" -eq 0 ] && [ ! -s tq.err ] && grep -q '^trawl tcpcap: [0-9]* segments' tq.out &&
		grep -q '^trawl tcpcap: recording TCP segments' tc.err
	ok $? "tcpcap -q: nothing on stderr (without: $(head -1 tc.err))"
else
	skip "tcpcap cannot capture here: $(head -1 tc.err)"
fi

finish
