# tests/lttng/turn.sh - sourced by whatever starts or uses root's one
# lttng-sessiond (the fixtures record.sh and record-sync.sh, t0830): they
# take turns. A session beside another would trace the other's application
# too (every session sees every registered application), and each stops
# the daemon it started when it is done. flock(1) is util-linux's; without
# it, no turns. Holds the lock on descriptor 9 until the shell exits.
if command -v flock > /dev/null 2>&1; then
	exec 9> /tmp/trawl-lttng-sessiond.lock
	if ! flock -w 600 9; then
		echo "another recording held the lttng-sessiond lock for 10 minutes" >&2
		exit 1
	fi
fi
