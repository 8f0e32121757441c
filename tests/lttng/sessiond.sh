# tests/lttng/sessiond.sh - sourced by the fixtures record.sh and
# record-sync.sh (after turn.sh, with skip() and $BUILD defined): starts an
# lttng-sessiond (--no-kernel) only if none answers, and at exit destroys
# the sessions listed in $SESSIONS and stops that daemon only, by its pid.
OWN_SESSIOND=""
SESSIONS=""
cleanup() {
	for s in $SESSIONS; do
		lttng destroy "$s" >/dev/null 2>&1
	done
	if [ -n "$OWN_SESSIOND" ]; then
		kill "$OWN_SESSIOND" 2>/dev/null
		i=0
		while [ $i -lt 50 ] && kill -0 "$OWN_SESSIOND" 2>/dev/null; do
			sleep 0.1; i=$((i + 1))
		done
	fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

if ! lttng list >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ]; then
		pidfile=/var/run/lttng/lttng-sessiond.pid
	else
		pidfile=${LTTNG_HOME:-$HOME}/.lttng/lttng-sessiond.pid
	fi
	lttng-sessiond --daemonize --no-kernel >/dev/null 2>"$BUILD/sessiond.log" ||
		skip "cannot start lttng-sessiond: $(head -1 "$BUILD/sessiond.log")"
	OWN_SESSIOND=$(cat "$pidfile" 2>/dev/null)
	[ -n "$OWN_SESSIOND" ] || skip "lttng-sessiond started but wrote no pid file ($pidfile)"
	lttng list >/dev/null 2>&1 || skip "lttng-sessiond does not answer"
fi
