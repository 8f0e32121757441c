#!/bin/sh
# tests/e2e/normalize.sh [--no-delta] [FILE] - puts babeltrace2-style text
# output in a canonical order so two muxers' outputs can be compared.
#
# Two correct muxers may emit events that have the same timestamp in a
# different order. Within each run of consecutive lines with the identical
# leading "[timestamp]", the lines are sorted (byte order); nothing is ever
# moved across a timestamp change, so the global order is still checked.
# The "(+delta)" column depends only on timestamps, so it is the same either
# way; --no-delta removes it anyway (for comparing against output printed
# without it).
set -u
nodelta=0
if [ "${1:-}" = "--no-delta" ]; then nodelta=1; shift; fi
LC_ALL=C exec awk -v nodelta="$nodelta" '
function flush(   i, j, x) {
	if (n == 0)
		return
	if (n < 64) {
		for (i = 2; i <= n; i++) {
			x = g[i]
			for (j = i - 1; j >= 1 && g[j] > x; j--)
				g[j + 1] = g[j]
			g[j + 1] = x
		}
		for (i = 1; i <= n; i++)
			print g[i]
	} else {
		fflush()
		for (i = 1; i <= n; i++)
			print g[i] | "LC_ALL=C sort"
		close("LC_ALL=C sort")
	}
	n = 0
}
{
	if (nodelta)
		sub(/^\[[^]]*\] \(\+[^)]*\) /, substr($0, 1, index($0, "]")) " ")
	if (substr($0, 1, 1) == "[")
		key = substr($0, 1, index($0, "]"))
	else
		key = "\001" NR		# not an event line: a group of its own
	if (key != cur) {
		flush()
		cur = key
	}
	g[++n] = $0
}
END { flush() }
' "$@"
