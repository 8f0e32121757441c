#!/bin/sh
# No output path destroys what was there (lib/util/outfile.h): export,
# view, agg --svg and the stored sync result write a device or a FIFO in
# place (a device stays a device), "-" to standard output, refuse a
# symbolic link (its target untouched), and replace a regular file only
# once complete, leaving no temporary. A full device says "No space left
# on device", and info, sync and state fail (exit 1, a message) when
# their standard output cannot be written. The devices are nodes made
# here with mknod (null 1,3 and full 1,7), never the system's: without
# the privilege to make them, those cases are skipped.
. "$TRAWL_SRC/tests/e2e/lib.sh"

plan 37

"$TRAWL" simulate -o s --hosts 2 --events 3000 --seed 3 --sync -q > /dev/null 2>&1 &&
	"$TRAWL" sync s > /dev/null 2>&1
ok $? "a 2-host session, synchronized"
"$TRAWL" export s -o ref.pftrace 2> /dev/null && [ -s ref.pftrace ]
ok $? "the reference export, into a new file"

devs=0
mknod null c 1 3 2> /dev/null && mknod full c 1 7 2> /dev/null && : > null 2> /dev/null &&
	devs=1
kind() { stat -c '%F %t,%T' "$1"; }
temps() { ls -A | grep -c '^\.' ; }

# ---- a device: written in place, still the same device after
if [ "$devs" = 1 ]; then
	"$TRAWL" export s -o null 2> dn.err
	is "$? $(kind null)" "0 character special file 1,3" "export -o NULL-DEVICE: exit 0, still the device"
	"$TRAWL" export s -o full 2> df.err
	is "$? $(kind full)" "1 character special file 1,7" "export -o FULL-DEVICE: exit 1, still the device"
	grep -qx "trawl export: full: No space left on device" df.err
	ok $? "... says No space left on device ($(tail -1 df.err))"
	"$TRAWL" export -f chrome-json s -o full 2> dfj.err
	is "$? $(grep -cx 'trawl export: full: No space left on device' dfj.err)" "1 1" \
		"export -f chrome-json -o FULL-DEVICE: exit 1, No space left on device"
	"$TRAWL" view s -o null > /dev/null 2> vn.err
	is "$? $(kind null)" "0 character special file 1,3" "view -o NULL-DEVICE: exit 0, still the device"
	"$TRAWL" view s -o full > /dev/null 2> vf.err
	is "$? $(kind full)" "1 character special file 1,7" "view -o FULL-DEVICE: exit 1, still the device"
	grep -q "No space left on device" vf.err
	ok $? "... says No space left on device ($(tail -1 vf.err))"
	"$TRAWL" agg -q 'heatmap(lat(syscall_entry_write, syscall_exit_write))' --svg null s \
		> /dev/null 2> an.err
	is "$? $(kind null)" "0 character special file 1,3" "agg --svg NULL-DEVICE: exit 0, still the device"
	# standard output that cannot be written: a failure, said
	at=$("$TRAWL" info s 2> /dev/null | sed -n 's/.*first .*(\([0-9]*\) ns).*/\1/p' | head -1)
	for c in "info s" "sync s" "sync --json s" "state s --at $at --host host0"; do
		# shellcheck disable=SC2086
		"$TRAWL" $c > full 2> so.err
		rc=$?
		is "$rc $(grep -c 'standard output: No space left on device' so.err)" "1 1" \
			"$c > FULL-DEVICE: exit 1, says No space left on device"
	done
	is "$(kind full) $(temps)" "character special file 1,7 0" "the devices stay devices, no temporary"
else
	for i in 1 2 3 4 5 6 7 8 9 10 11 12 13; do skip "mknod is not permitted here"; done
fi

# ---- a FIFO with a reader gets every byte
mkfifo fifo
timeout 30 cat fifo > fifo.got &	# bounded: a writer that never opens it
reader=$!
"$TRAWL" export s -o fifo 2> ff.err
rc=$?
wait "$reader"
is "$rc $(stat -c %F fifo)" "0 fifo" "export -o FIFO: exit 0, still a FIFO"
cmp -s fifo.got ref.pftrace
ok $? "... its reader got the same bytes as the file's ($(wc -c < fifo.got) bytes)"

# ---- "-": standard output
"$TRAWL" export s -o - > std.pftrace 2> std.err
ok $? "export -o -: exit 0"
cmp -s std.pftrace ref.pftrace
ok $? "... the same bytes on standard output"
grep -q "trawl export: standard output: .* records" std.err
ok $? "... its note names standard output"
"$TRAWL" view s -o - > std.html 2> vstd.err && grep -q "</html>" std.html &&
	! grep -q "^trawl view:" std.html
ok $? "view -o -: the page alone on standard output"

# ---- a symbolic link: refused, its target untouched
echo precious > victim
ln -s victim link
ln -s nowhere dangling
for c in "export s -o" "view s -o" \
	"agg -q heatmap(lat(syscall_entry_write,syscall_exit_write)) s --svg"; do
	# shellcheck disable=SC2086
	"$TRAWL" $c link > /dev/null 2> l.err
	rc=$?
	is "$rc $(cat victim) $(grep -c 'link: is a symbolic link (not followed' l.err)" \
		"1 precious 1" "${c%% *} to a symlink: exit 1, refused and said, its target untouched"
done
"$TRAWL" export s -o dangling 2> /dev/null
is "$? $(ls nowhere 2> /dev/null)" "1 " "export to a dangling symlink: nothing created where it points"
is "$(stat -c %F link)" "symbolic link" "the link is still a link"
mv s/sync.txt sync.orig
ln -s ../victim s/sync.txt
"$TRAWL" sync s > /dev/null 2> ls.err
is "$? $(cat victim)" "1 precious" "sync: SESSION/sync.txt a symlink: exit 1, its target untouched"
grep -q "sync.txt: is a symbolic link (not followed" ls.err
ok $? "... says so ($(tail -1 ls.err))"
rm s/sync.txt
mv sync.orig s/sync.txt

# ---- a regular file: replaced once complete (a new inode), its mode kept
echo old > out.pftrace
chmod 640 out.pftrace
ino=$(stat -c %i out.pftrace)
"$TRAWL" export s -o out.pftrace 2> /dev/null
is "$? $(stat -c %a out.pftrace)" "0 640" "export over a regular file: exit 0, its mode kept"
cmp -s out.pftrace ref.pftrace && [ "$(stat -c %i out.pftrace)" != "$ino" ]
ok $? "... replaced by a rename with the new bytes"
"$TRAWL" export --max-events 10 s -o out.pftrace 2> /dev/null
is "$? $(cmp -s out.pftrace ref.pftrace && echo same)" "1 same" \
	"a failed export (perfetto past its --max-events: refused): the old file stays as it was"
sha=$(sha256sum < s/sync.txt)
"$TRAWL" sync s > /dev/null 2>&1
ok $? "sync over its own sync.txt (a regular file)"
is "$(sha256sum < s/sync.txt)" "$sha" "... the same result, rewritten"
"$TRAWL" sync --apply -o fixed s > /dev/null 2> ap.err
ok $? "sync --apply: exit 0 ($(tail -1 ap.err))"
is "$(ls fixed/host0/kernel/metadata fixed/host1/ust/metadata | wc -l)" 2 "... its metadata written"
is "$(temps)" 0 "no temporary left anywhere here"
# (trawl state's checkpoint file, PATH/.trawl-state-HOST.ckpt, is no
# temporary: it is kept on purpose, docs/state.md)
is "$(find s fixed -name '.*' ! -name '.trawl-state-*.ckpt' | wc -l)" 0 "... nor in the session or the copy"

finish
