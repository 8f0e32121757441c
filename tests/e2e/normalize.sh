#!/bin/sh
# tests/e2e/normalize.sh [--no-delta] [FILE] - puts babeltrace2-style text
# output in a canonical order so two muxers' outputs can be compared.
#
# Two correct muxers may emit events that have the same timestamp in a
# different order. Within each run of consecutive lines with the identical
# leading "[timestamp]", the lines are sorted (byte order, string values
# left out of the key, stable); nothing is ever
# moved across a timestamp change, so the global order is still checked.
# The "(+delta)" column is positional: both tools print the same sequence of
# deltas down a run whatever the order of its events, so the lines are sorted
# without it and the run's deltas are put back in their original order.
# --no-delta removes it (for comparing against output printed without it).
# Where time goes back, trawl prints a negative delta, "(-0.000000003)", and
# babeltrace2 2.0 the unsigned 64-bit difference, "(+18446744073.709551613)"
# (an oracle defect): a "+" delta of 2^63 ns or more, which no two times of
# one trace are apart going forward, is mapped to the negative form, so
# that only deltas where time goes back are rewritten.
set -u
nodelta=0
if [ "${1:-}" = "--no-delta" ]; then nodelta=1; shift; fi
tmp=$(mktemp) || exit 1
LC_ALL=C awk -v nodelta="$nodelta" -v tmp="$tmp" '
function flush(   i, j, x, y, p) {
	if (n == 0)
		return
	if (!nodelta && n > 1) {
		# take the "(+delta) " out of each line; put them back in order below
		for (i = 1; i <= n; i++) {
			d[i] = ""
			if (match(g[i], /^\[[^]]*\] \([-+][^)]*\) /)) {
				p = index(g[i], "] ")
				d[i] = substr(g[i], p + 2, RLENGTH - p - 1)
				g[i] = substr(g[i], 1, p + 1) substr(g[i], RLENGTH + 1)
			}
		}
	}
	# sort key: the line without its string values, so that a tool that
	# prints a wrong string (see normalize.py) still sorts the same; equal
	# keys keep their order (stable)
	for (i = 1; i <= n; i++) {
		k[i] = g[i]
		gsub(/"[^"]*"/, "\"\"", k[i])
	}
	if (n < 64) {
		for (i = 2; i <= n; i++) {
			x = g[i]
			y = k[i]
			for (j = i - 1; j >= 1 && k[j] > y; j--) {
				g[j + 1] = g[j]
				k[j + 1] = k[j]
			}
			g[j + 1] = x
			k[j + 1] = y
		}
	} else {
		fflush()
		for (i = 1; i <= n; i++)
			printf "%s\t%09d\t%s\n", k[i], i, g[i] | ("LC_ALL=C sort > " tmp)
		close("LC_ALL=C sort > " tmp)
		i = 0
		while ((getline x < tmp) > 0) {
			sub(/^[^\t]*\t[0-9]*\t/, "", x)
			g[++i] = x
		}
		close(tmp)
	}
	for (i = 1; i <= n; i++) {
		if (!nodelta && n > 1 && d[i] != "") {
			p = index(g[i], "] ")
			print substr(g[i], 1, p + 1) d[i] substr(g[i], p + 2)
		} else {
			print g[i]
		}
	}
	n = 0
}
function unwrap(   p, q, d, dot, sec, ns) {
	# "(+S.N)" with S.N >= 9223372036.854775808 s: 2^64 ns - S.N, negative
	if (!match($0, /^\[[^]]*\] \(\+[0-9]+\.[0-9]+\) /))
		return
	p = index($0, "] (+")
	q = index($0, ") ")
	d = substr($0, p + 4, q - p - 4)
	dot = index(d, ".")
	sec = substr(d, 1, dot - 1) + 0
	ns = substr(d, dot + 1) + 0
	if (length(d) - dot != 9 || sec < 9223372036 || (sec == 9223372036 && ns < 854775808))
		return
	sec = 18446744073 - sec
	ns = 709551616 - ns
	if (ns < 0) {
		ns += 1000000000
		sec--
	}
	$0 = substr($0, 1, p + 1) "(-" sprintf("%.0f.%09d", sec, ns) substr($0, q)
}
{
	unwrap()
	if (nodelta)
		sub(/^\[[^]]*\] \([-+][^)]*\) /, substr($0, 1, index($0, "]")) " ")
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
rc=$?
rm -f "$tmp"
exit $rc
