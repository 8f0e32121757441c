#!/bin/sh
# tests/browser/install.sh SRC BUILD: playwright-core, as locked, beside a
# copy of the browser scripts in BUILD/browser (the source tree stays
# clean); npm ci runs again only when the lock changed. Used by the browser
# test (t1110), bench/view.sh and the demo. Exit 1 with the reason (the
# last line of npm's log) on stderr when it cannot.
set -u
SRC=$1 B=$2/browser
mkdir -p "$B" || exit 1
if ! cmp -s "$SRC/tests/browser/package-lock.json" "$B/package-lock.json" ||
   [ ! -d "$B/node_modules/playwright-core" ]; then
	cp "$SRC/tests/browser/package.json" "$SRC/tests/browser/package-lock.json" "$B/" || exit 1
	if ! (cd "$B" && npm ci --no-audit --no-fund --loglevel=error > npm.log 2>&1); then
		echo "npm ci failed: $(tail -1 "$B/npm.log")" >&2
		rm -f "$B/package-lock.json"	# tried again next time
		exit 1
	fi
fi
cp "$SRC"/tests/browser/*.mjs "$B/"
