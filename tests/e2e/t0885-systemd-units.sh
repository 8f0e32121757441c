#!/bin/sh
# The systemd units of the agent and the relay (dist/systemd,
# docs/cluster.md): `make install` puts them under
# PREFIX/lib/systemd/system with ExecStart pointing at PREFIX/bin/trawl,
# and every option of their ExecStart lines is one the command takes (the
# line is run with an unknown option appended: the error must name that
# one, so that everything before it parsed). Nothing is started.
. "$TRAWL_SRC/tests/e2e/lib.sh"
plan 7
dest="$TRASH/root"
make -s -C "$TRAWL_SRC" ${TRAWL_MAKE_ARGS:-O="$TRAWL_BUILD"} PREFIX=/opt/trawl DESTDIR="$dest" install > install.log 2>&1
ok $? "make install into DESTDIR"
units="$dest/opt/trawl/lib/systemd/system"
is "$(ls "$units" 2> /dev/null | tr '\n' ' ')" "trawl-agent.service trawl-relay.service " \
	"both units installed under PREFIX/lib/systemd/system"
for u in agent relay; do
	line=$(sed -n 's/^ExecStart=//p' "$units/trawl-$u.service")
	set -- $line
	is "$1 $2" "/opt/trawl/bin/trawl $u" "trawl-$u.service runs PREFIX/bin/trawl $u"
	shift
	: > empty.conf
	TRAWL_CONFIG="$TRASH/empty.conf" "$TRAWL" "$@" --zzz-check > "$u.out" 2> "$u.err"
	st=$?
	is "$st $(head -1 "$u.err")" "2 trawl $u: unrecognized option '--zzz-check'" \
		"... every option of its ExecStart is one trawl $u takes"
done
grep -q '^WantedBy=multi-user.target' "$units/trawl-agent.service" &&
	grep -q '^WantedBy=multi-user.target' "$units/trawl-relay.service"
ok $? "both are wanted by multi-user.target"
finish
