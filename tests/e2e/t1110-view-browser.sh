#!/bin/sh
# trawl view in a real browser: Debian's chromium, headless, driven by
# playwright-core (tests/browser/view-test.mjs, its checks listed there):
# rows per host, a CPU's span and a thread's state where the trace has
# them (the page's model and its pixels), levels of detail at every zoom,
# keys and wheel changing the range, arrows back in time on raw clocks
# and none synchronized, a click showing an event's fields, search, no
# console error and no request beyond the page. Once on the page written to
# a file, once on the page served by --serve. Screenshots stay in the trash
# directory (artifacts, not committed).
. "$TRAWL_SRC/tests/e2e/lib.sh"

CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
[ -x "$CHROMIUM" ] || skip_all "no $CHROMIUM (scripts/install-deps.sh installs it)"
command -v node > /dev/null 2>&1 || skip_all "no node (scripts/install-deps.sh installs nodejs)"
command -v npm > /dev/null 2>&1 || skip_all "no npm (scripts/install-deps.sh installs it)"

# playwright-core, as locked, beside a copy of the test scripts in the build
# directory (the source tree stays clean); installed again when the lock changes
B="$TRAWL_BUILD/browser"
sh "$TRAWL_SRC/tests/browser/install.sh" "$TRAWL_SRC" "$TRAWL_BUILD" 2> npm.err ||
	skip_all "no registry? $(cat npm.err)"
plan 2

"$TRAWL" simulate -o s --hosts 3 --events 60000 --sync --seed 5 -q > /dev/null
"$TRAWL" sync s > /dev/null 2>&1
"$TRAWL" view s -o v.html > /dev/null 2>&1
mkdir -p shots
CHROMIUM="$CHROMIUM" timeout 300 node "$B/view-test.mjs" "$TRAWL" "$PWD/s" "file://$PWD/v.html" "$PWD/shots" file > file.tap 2>&1
st=$?
sed 's/^/    /' file.tap
ok $st "the page from a file, in chromium: $(grep -c '^ok' file.tap) checks passed, $(grep -c '^not ok' file.tap) failed"

"$TRAWL" view --serve s > serve.out 2> serve.err &
pid=$!
until_ok 60 grep -q '^trawl view: serving http://127.0.0.1:[0-9]*/' serve.out
url=$(sed -n 's|^trawl view: serving \(http://127.0.0.1:[0-9]*/\).*|\1|p' serve.out)
CHROMIUM="$CHROMIUM" timeout 300 node "$B/view-test.mjs" "$TRAWL" "$PWD/s" "$url" "$PWD/shots" served > served.tap 2>&1
st=$?
sed 's/^/    /' served.tap
ok $st "the page served on loopback ($url), its tiles fetched: $(grep -c '^ok' served.tap) checks passed, $(grep -c '^not ok' served.tap) failed"
kill "$pid"; wait "$pid"
finish
