#!/bin/sh
# export -f chrome-json past --max-events (issue 27, item 12) does what its
# help says: writes the first N records, a complete file, and says the
# rest is left out (exit 0); perfetto past a --max-events given writes
# nothing (exit 1). A small --limit stands for the default million.
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v python3 > /dev/null || skip_all "no python3 to read the JSON"
plan 7

"$TRAWL" simulate -q -o s --hosts 2 --cpus 2 --events 20000 --seed 4 > /dev/null 2>&1 ||
	{ echo "Bail out! simulate failed"; exit 1; }
"$TRAWL" export -f chrome-json --max-events 0 -o all.json s > /dev/null 2> all.err
all=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["traceEvents"]))' all.json)
[ "$all" -gt 500 ] || { echo "Bail out! only $all records in the whole export"; exit 1; }

"$TRAWL" export -f chrome-json --max-events 300 -o cut.json s > /dev/null 2> cut.err
rc=$?
n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["traceEvents"]))' cut.json 2>&1)
is "$rc|$n" "0|300" "chrome-json --max-events 300 of $all: exit 0, a valid file of 300 records"
grep -q "^trawl export: warning: cut.json: 300 records, the limit: the events after the first [0-9]* read are left out$" cut.err
ok $? "a warning says the rest is left out ($(sed -n 1p cut.err))"
grep -q "^trawl export: cut.json: 300 records from [0-9]* events," cut.err
ok $? "the summary counts the 300 records written"
# the first 300 records of the whole export, as they were
python3 - all.json cut.json <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["traceEvents"]
c = json.load(open(sys.argv[2]))["traceEvents"]
sys.exit(0 if c == a[:len(c)] else 1)
PY
ok $? "they are the whole export's first 300 records"
"$TRAWL" export -f chrome-json --max-events 2 -o tiny.json s > /dev/null 2> tiny.err
is "$?|$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["traceEvents"]))' tiny.json 2>&1)" \
	"0|2" "--max-events 2 (fewer than the hosts' names): a file of 2"
"$TRAWL" export -f chrome-json -o def.json s > /dev/null 2> def.err
is "$?|$(grep -c warning def.err)" "0|0" "under the default limit: exit 0, no warning"
"$TRAWL" export -f perfetto --max-events 300 -o p.pftrace s > /dev/null 2> p.err
is "$?|$([ -e p.pftrace ] && echo file)|$(sed -n 1p p.err)" \
	"1||trawl export: p.pftrace: more than 300 records, not written" \
	"perfetto past --max-events: exit 1, no file"
finish
