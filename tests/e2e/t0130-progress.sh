#!/bin/sh
# Progress on long commands (cli/progress.c): info, print (to a file),
# sync, sync --apply, simulate and record --duration draw one line on
# stderr when it is a terminal - done of total, a percentage, a rate -
# redrawn with \r, ending at 100%, cleared at the end; nothing when stderr
# is a file; --progress forces the line into a file (ended by a newline),
# --no-progress suppresses it on a terminal; stdout is byte for byte the
# same either way. The commands run under a pseudo-terminal (python3's pty
# module); TRAWL_PROGRESS_INTERVAL_MS=0 redraws at every clock read, so
# that even a short run draws its first and its last line.
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v python3 > /dev/null || skip_all "python3 is not installed (runs commands under a pty)"
plan 43

# onpty OUT ERR CMD...: CMD with stdin on /dev/null, stderr on a new
# pseudo-terminal (its bytes into ERR), stdout into OUT, or on the same
# terminal when OUT is "-"; the command's exit status
cat > onpty.py <<'EOF'
import os, pty, subprocess, sys
out, err, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
m, s = pty.openpty()
o = s if out == "-" else open(out, "wb")
p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=o, stderr=s)
os.close(s)
buf = b""
while True:
    try:
        d = os.read(m, 65536)
    except OSError:		# EIO: every end of the terminal closed
        break
    if not d:
        break
    buf += d
open(err, "wb").write(buf)
sys.exit(p.wait())
EOF
onpty() { python3 onpty.py "$@"; }

# runs WHO FILE: the progress lines of WHO ("trawl info") in FILE, one
# summary line per run of redrawn lines: "LINES LAST END", END being
# "clear" (the line erased: \r ESC[K) or "newline"
cat > runs.py <<'EOF'
import re, sys
who, data = sys.argv[1], open(sys.argv[2], "rb").read().decode("utf-8", "replace")
data = data.replace("\r\n", "\n")	# the terminal's output processing
line = re.compile(re.escape(who) + r": .*\d+%.*/s")
runs, cur = [], None
for tok in data.split("\r"):
    first, nl, rest = tok.partition("\n")
    text = first.replace("\x1b[K", "")
    if line.match(text):
        if cur is None:
            cur = [0, "", "open"]
            runs.append(cur)
        cur[0] += 1
        cur[1] = text
        if nl:
            cur[2], cur = "newline", None
    elif cur is not None:
        cur[2] = "clear" if tok.startswith("\x1b[K") else "other"
        cur = None
for n, last, end in runs:
    print(n, end, last)
EOF
runs() { python3 runs.py "$@"; }
# runs_ok WHO FILE [END]: one run or more, each of 2+ lines, ending at 100%
# and ended as END says (default: clear)
runs_ok() {
	runs "$1" "$2" > "$2.runs"
	[ -s "$2.runs" ] && awk -v end="${3:-clear}" \
		'$1 < 2 || $2 != end || $0 !~ / 100% / { bad = 1 } END { exit bad }' "$2.runs"
}

export TRAWL_PROGRESS_INTERVAL_MS=0
"$TRAWL" simulate -o s --hosts 2 --events 300k > /dev/null 2>&1
ok $? "a session of 300k events to read"
"$TRAWL" simulate -o ss --hosts 2 --events 100k --sync > /dev/null 2>&1
ok $? "a session with sync messages"

# ---- info
for t in 1 2; do
	onpty info$t.out info$t.err "$TRAWL" info --threads $t s
	ok $? "info --threads $t under a terminal exits 0"
	runs_ok "trawl info" info$t.err
	ok $? "info --threads $t: a progress line with a percentage and a rate, redrawn after a CR, ending at 100%, then cleared ($(head -1 info$t.err.runs))"
done
"$TRAWL" info --threads 1 s > info-file.out 2> info-file.err
ok $? "info with stderr to a file exits 0"
! grep -q "$(printf '\r')" info-file.err && ! grep -q '%' info-file.err
ok $? "stderr a file: no progress line"
cmp_files info1.out info-file.out "info's stdout is the same with and without the progress line"
onpty info-np.out info-np.err "$TRAWL" info --no-progress s
ok $? "info --no-progress under a terminal exits 0"
[ -z "$(runs "trawl info" info-np.err)" ] && grep -q 'decoded' info-np.err
ok $? "--no-progress: no progress line on the terminal (the summary still comes)"
cmp_files info-np.out info-file.out "and the same stdout"
"$TRAWL" info --progress s > info-forced.out 2> info-forced.err
ok $? "info --progress with stderr to a file exits 0"
runs_ok "trawl info" info-forced.err newline
ok $? "--progress: the line goes into the file, ending at 100% and a newline ($(head -1 info-forced.err.runs))"
cmp_files info-forced.out info-file.out "and the same stdout"
TRAWL_PROGRESS_INTERVAL_MS= "$TRAWL" info --progress s > /dev/null 2> info-dflt.err
runs "trawl info" info-dflt.err | grep -q '^[0-9]* newline .* 100% '
ok $? "--progress at the default interval: the last line at least, at 100%"

# ---- print
onpty print.out print.err "$TRAWL" print s
ok $? "print to a file, stderr a terminal, exits 0"
runs_ok "trawl print" print.err
ok $? "print: a progress line ending at 100%, cleared ($(head -1 print.err.runs))"
"$TRAWL" print --no-progress s > print-np.out 2> /dev/null
cmp_files print.out print-np.out "print's stdout is byte for byte the same with and without progress"
is "$(wc -l < print.out | tr -d ' ')" 300000 "every event printed"
"$TRAWL" print --threads 1 -f json s > print-j.out 2> /dev/null
onpty print-j2.out print-j2.err "$TRAWL" print --threads 1 -f json s
runs_ok "trawl print" print-j2.err && cmp -s print-j.out print-j2.out
ok $? "print --threads 1 -f json: progress, and the same output"
onpty - print-tty.err "$TRAWL" print -n 2000 s
ok $? "print to the terminal itself exits 0"
[ -z "$(runs "trawl print" print-tty.err)" ] && [ "$(grep -c 'sched_switch\|syscall\|app:' print-tty.err)" -gt 0 ]
ok $? "events printed on the terminal: no progress line among them"
onpty print-lim.out print-lim.err "$TRAWL" print -n 1000 s
is "$(wc -l < print-lim.out | tr -d ' ')" 1000 "print -n 1000 to a file: 1000 events"
[ -n "$(runs "trawl print" print-lim.err)" ] && ! grep -q '%' print-lim.out
ok $? "its progress on stderr, none in the output"

# ---- sync and sync --apply
onpty sync.out sync.err "$TRAWL" sync --no-store ss
ok $? "sync under a terminal exits 0"
runs_ok "trawl sync" sync.err
ok $? "sync: the pass over the session shows progress, ending at 100% ($(head -1 sync.err.runs))"
"$TRAWL" sync --no-store ss > sync-file.out 2> sync-file.err
cmp_files sync.out sync-file.out "sync's stdout is the same with and without progress"
! grep -q '%' sync-file.err
ok $? "sync with stderr to a file: no progress line"
onpty apply.out apply.err "$TRAWL" sync --no-store --apply -o fixed ss
ok $? "sync --apply under a terminal exits 0"
runs_ok "trawl sync" apply.err
ok $? "sync --apply: every progress run ends at 100%, cleared"
is "$(wc -l < apply.err.runs | tr -d ' ')" 2 "two runs: the pass over the session, then the copy"
tot=$(find ss/host0/kernel ss/host0/ust ss/host1/kernel ss/host1/ust -type f -printf '%s\n' | awk '{ s += $1 } END { print s }')
want=$(awk -v b="$tot" 'BEGIN { u = "B KiB MiB GiB"; split(u, n, " "); i = 1; while (b >= 1024 && i < 4) { b /= 1024; i++ }
	printf (b < 10 ? "%.2f %s" : b < 100 ? "%.1f %s" : "%.0f %s"), b, n[i] }')
tail -1 apply.err.runs | grep -q " of $want "
ok $? "the copy's total is the bytes of the session's traces ($want; $(tail -1 apply.err.runs))"
"$TRAWL" info fixed > /dev/null 2>&1
ok $? "the corrected copy reads"
"$TRAWL" sync --no-store --apply -o fixed2 ss > apply2.out 2> /dev/null
cmp_files apply.out apply2.out "sync --apply's stdout is the same with and without progress"

# ---- simulate (its old --progress is the same line now)
onpty sim.out sim.err "$TRAWL" simulate -o sim1 --events 200k
ok $? "simulate under a terminal exits 0"
runs_ok "trawl simulate" sim.err
ok $? "simulate: events written of all, a rate, ending at 100% ($(head -1 sim.err.runs))"
onpty sim-np.out sim-np.err "$TRAWL" simulate -o sim2 --events 200k --no-progress
[ -z "$(runs "trawl simulate" sim-np.err)" ] && ! grep -q '%' sim-np.err
ok $? "simulate --no-progress: no line"
"$TRAWL" simulate -o sim3 --events 200k --progress > /dev/null 2> sim-forced.err
runs_ok "trawl simulate" sim-forced.err newline
ok $? "simulate --progress into a file: ending at 100% and a newline"
diff -r sim1 sim2 > /dev/null && diff -r sim1 sim3 > /dev/null
ok $? "the same traces with and without progress"

# ---- record --duration (root and tracefs)
if [ "$(id -u)" != 0 ] || [ -z "$(tracefs_dir)" ]; then
	for i in 1 2 3; do skip "record: needs root and tracefs"; done
	finish
fi
onpty rec.out rec.err "$TRAWL" record --duration 0.3 -o rec
ok $? "record --duration 0.3 under a terminal exits 0"
runs_ok "trawl record" rec.err
ok $? "record: the time recorded of the duration, ending at 100%, cleared ($(head -1 rec.err.runs))"
grep -q ' of 0.3 s ' rec.err.runs && grep -q 'kernel events' rec.err
ok $? "the duration is the total; the summary follows"
finish
