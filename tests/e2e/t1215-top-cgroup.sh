#!/bin/sh
# trawl top grouped by cgroup (--group=cgroup, the full screen's c), on a
# real kernel recording: the recorder and its workload run in a cgroup of
# the test's own (made in the cgroup v2 hierarchy, wherever it is mounted;
# removed at the end); the workload's processes are forks of the recorder
# made after the state dump (their cgroup: their parent's):
#  - a row of each interval is named after the test's cgroup, and its CPU
#    time is that of the processes whose rows (per process) carry it,
#    which are the recorder ("trawl", "exe" before its command's exec) and
#    the shell loop ("sh"), the loop busy (a quarter of an interval or
#    more) in two intervals or more;
#  - every interval's rows grouped by cgroup add up to its rows per process
#    (the CPU time and the threads: nothing lost or counted twice);
#  - each cgroup named is one of the machine's (a directory of the
#    hierarchy), or "-" (a thread the model has no cgroup for);
#  - the JSON rows per process carry their cgroup;
#  - --group=nosuch is a usage error (exit 2).
. "$TRAWL_SRC/tests/e2e/lib.sh"
[ "$(id -u)" = 0 ] || skip_all "needs root (kernel recording, a cgroup)"
[ -n "$(tracefs_dir)" ] || skip_all "no tracefs"
command -v python3 > /dev/null 2>&1 || skip_all "needs python3"
CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
[ -n "$CG2" ] || skip_all "no cgroup v2 hierarchy mounted"
NAME="trawl-t1215-$$"
mkdir "$CG2/$NAME" 2> /dev/null || skip_all "cannot make a cgroup in $CG2"
trap 'rmdir "$CG2/$NAME" 2> /dev/null' EXIT
# a process may be moved there (a delegated hierarchy may refuse it)
sh -c 'echo $$ > "$1/cgroup.procs"' sh "$CG2/$NAME" 2> /dev/null ||
	skip_all "cannot move a process into $CG2/$NAME"
plan 6

# the recorder in the cgroup (the shell moves itself there, then execs
# it); the loop spins 2-3 s by /proc/uptime (read: a builtin, no fork), so
# that its intervals do not depend on the machine's speed
sh -c 'echo $$ > "$1/cgroup.procs" && exec "$2" record -q -o rec -k sched,syscalls -- \
	sh -c "read -r u _ < /proc/uptime; end=\$((\${u%.*} + 3));
		while read -r u _ < /proc/uptime && [ \${u%.*} -lt \$end ]; do :; done"' \
	sh "$CG2/$NAME" "$TRAWL" > rec.out 2> rec.err
ok $? "recorded a shell loop from a cgroup of its own (exit $?)"
"$TRAWL" top -b --json -d 0.25 --group=cgroup rec > cg.json 2> cg.err &&
	"$TRAWL" top -b --json -d 0.25 rec > pr.json 2> pr.err &&
	"$TRAWL" top -b --json -d 0.25 --group rec > nm.json 2> nm.err
python3 - "/$NAME" "$CG2" > check.txt << 'EOF2'
import json, os, sys
want, root = sys.argv[1], sys.argv[2]
def rows(f):
    by = {}
    for l in open(f):
        o = json.loads(l)
        if o["type"] == "row":
            by.setdefault(o["interval"], []).append(o)
    return by
cg, pr, nm = rows("cg.json"), rows("pr.json"), rows("nm.json")
# 1: the test's cgroup's row against the rows per process that carry it
hit = match = busy = 0
comms = set()
for k, rs in cg.items():
    mine = [r for r in rs if r["name"] == want]
    procs = [r for r in pr.get(k, []) if r.get("cgroup") == want]
    comms |= {r["comm"] for r in procs}
    if mine:
        hit += 1
        match += abs(mine[0]["sum_ns"] - sum(r["sum_ns"] for r in procs)) <= len(procs)
        busy += sum(r["sum_ns"] for r in procs if r["comm"] == "sh") > 0.25 * 250e6
print("named", hit, match, busy, ",".join(sorted(comms)))
# 2: totals per interval
same = sum(1 for k in pr if abs(sum(r["sum_ns"] for r in pr[k]) - sum(r["sum_ns"] for r in cg.get(k, []))) <= len(pr[k])
           and sum(r["threads"] for r in pr[k]) == sum(r["threads"] for r in cg.get(k, [])))
print("totals", same, len(pr))
# 3: real cgroups
names = {r["name"] for rs in cg.values() for r in rs}
bad = [n for n in names if n != "-" and not (n == want or os.path.isdir(root + n))]
print("bad", len(bad), " ".join(sorted(names))[:200])
# 4: the per-process rows' cgroups
withcg = sum(1 for rs in pr.values() for r in rs if r.get("cgroup") == want)
print("carry", withcg, sum(1 for rs in pr.values() for r in rs if "cgroup" in r))
EOF2
read -r _ hit match busy comms < check.txt
[ "$hit" -ge 3 ] && [ "$match" = "$hit" ] && [ "$busy" -ge 2 ] &&
	echo ",$comms," | grep -q ',sh,' && [ -z "$(echo "$comms" | tr ',' '\n' | grep -vx 'sh\|trawl\|exe')" ]
ok $? "the test's cgroup /$NAME has a row in $hit intervals, the CPU time of its processes' rows in $match ($comms; the loop busy in $busy)"
set -- $(sed -n 2p check.txt)
[ "$2" -ge 1 ] && [ "$2" = "$3" ]
ok $? "grouped by cgroup, each interval adds up to its rows per process ($2 of $3)"
set -- $(sed -n 3p check.txt)
is "$2" 0 "each cgroup named is one of the machine's, or - (${*#* * })"
set -- $(sed -n 4p check.txt)
[ "$2" -ge 1 ] && [ "$3" -ge "$2" ]
ok $? "the JSON rows per process carry their cgroup ($2 rows in /$NAME, $3 with the field)"
"$TRAWL" top -b --group=nosuch rec > /dev/null 2> bad.err
is "$?" 2 "--group=nosuch: a usage error ($(head -1 bad.err))"
