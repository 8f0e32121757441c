#!/bin/sh
# trawl save NAME FILE destroys nothing (lib/util/outfile.h, issue 28.2):
# it opened FILE with O_TRUNC through any symbolic link and, when the
# agent refused, unlinked FILE, whatever it was (a device node, a file
# of the user's). Now: a regular FILE is replaced once the description
# is whole and left as it was after a refusal, a device is written in
# place and stays, a symbolic link is refused with its target untouched.
# The agent's and the relay's --pidfile (written as root, often in a
# directory others write) refuse a symbolic link too: fopen(..., "w")
# truncated its target. The device is a node made here with mknod
# (skipped without the right).
. "$TRAWL_SRC/tests/e2e/lib.sh"

plan 15

export TRAWL_AGENT_SOCKET="$TRASH/agent.sock"
AGENT_PID=""
cleanup() { [ -n "$AGENT_PID" ] && kill "$AGENT_PID" 2> /dev/null; }
trap cleanup EXIT

"$TRAWL" agent --pidfile agent.pid > agent.out 2>&1
ok $? "the agent starts"
AGENT_PID=$(cat agent.pid)
"$TRAWL" create s1 -o s1 > /dev/null
ok $? "a session s1"

"$TRAWL" save s1 s1.session > save.out 2> save.err
is "$? $(grep -c '^session = s1$' s1.session)" "0 1" "save into a new file: its description"
echo "the user's own file" > mine
"$TRAWL" save nosuch mine > /dev/null 2> nosuch.err
is "$? $(cat mine)" "1 the user's own file" "a refused save leaves an existing file as it was"
"$TRAWL" save s1 mine > /dev/null 2>&1
is "$? $(grep -c '^session = s1$' mine)" "0 1" "a save replaces it once whole"

echo precious > victim
ln -s victim link
"$TRAWL" save s1 link > /dev/null 2> link.err
is "$? $(cat victim)" "1 precious" "save to a symlink: exit 1, its target untouched"
grep -q "link: is a symbolic link (not followed" link.err
ok $? "... says so ($(cat link.err))"

if mknod null c 1 3 2> /dev/null && : > null 2> /dev/null; then
	"$TRAWL" save s1 null > /dev/null 2>&1
	is "$? $(stat -c '%F %t,%T' null)" "0 character special file 1,3" "save to a device: still the device"
	"$TRAWL" save nosuch null > /dev/null 2>&1
	is "$? $(stat -c '%F %t,%T' null 2>&1)" "1 character special file 1,3" \
		"a refused save to a device: the device is not unlinked"
else
	skip "mknod is not permitted here"
	skip "mknod is not permitted here"
fi
is "$(ls -A | grep -c '^\.')" 0 "no temporary left"

# (were they to start, the pid they wrote through the link is theirs to stop)
stop_started() { [ "$1" = 0 ] && kill "$(cat victim)" 2> /dev/null; echo precious > victim; }
TRAWL_AGENT_SOCKET="$TRASH/a2.sock" "$TRAWL" agent --pidfile link > /dev/null 2> apid.err
rc=$?
is "$rc $(cat victim)" "1 precious" "agent --pidfile SYMLINK: exit 1, its target untouched"
stop_started "$rc"
grep -q "cannot write the pid: link: is a symbolic link (not followed" apid.err
ok $? "... says so ($(cat apid.err))"
"$TRAWL" relay --pidfile link -o rout --data 127.0.0.1:0 --live 127.0.0.1:0 > /dev/null 2> rpid.err
rc=$?
is "$rc $(cat victim)" "1 precious" "relay --pidfile SYMLINK: exit 1, its target untouched"
stop_started "$rc"
grep -q "cannot write the pid: link: is a symbolic link (not followed" rpid.err
ok $? "... says so ($(cat rpid.err))"

kill "$AGENT_PID"
until_ok 10 gone "$AGENT_PID"
ok $? "the agent stopped"
AGENT_PID=""

finish
