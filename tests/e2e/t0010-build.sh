#!/bin/sh
# The build's promises: `make install` lays out binary, library, headers,
# pkg-config file and man pages; the shared library exports trawl_* symbols
# only; a program builds against the installed library through pkg-config and
# writes and reads a trace with it; every subcommand has a man page.
. "$TRAWL_SRC/tests/e2e/lib.sh"
plan 16
dest="$TRASH/root"
make -s -C "$TRAWL_SRC" ${TRAWL_MAKE_ARGS:-O="$TRAWL_BUILD"} PREFIX=/opt/trawl DESTDIR="$dest" install >install.log 2>&1
ok $? "make install into DESTDIR"
for f in bin/trawl lib/libtrawl.a lib/libtrawl.so.0 include/trawl/ctf.h lib/pkgconfig/trawl.pc share/man/man1/trawl.1; do
	[ -e "$dest/opt/trawl/$f" ] || echo "missing $f"
done > missing.txt
is "$(cat missing.txt)" "" "installed files in place"

nm -D --defined-only "$TRAWL_BUILD/libtrawl.so.0" | awk '$2 ~ /^[TDBRVW]$/ {sub(/@.*/, "", $3); print $3}' | sort > exported.txt
grep -v '^trawl_' exported.txt > foreign.txt
is "$(cat foreign.txt)" "" "shared library exports only trawl_* symbols"
n=$(wc -l < exported.txt)
[ "$n" -ge 20 ]
ok $? "shared library exports the API ($n symbols)"
# the version script lists the ABI one by one: a trawl_ function that is
# not listed stays hidden, and nothing listed may be missing
sed -n 's/^[[:space:]]*\(trawl_[A-Za-z0-9_]*\);$/\1/p' "$TRAWL_SRC/lib/libtrawl.map" | sort > listed.txt
is "$(comm -3 exported.txt listed.txt | tr -d '\t' | tr '\n' ' ')" "" \
	"the shared library exports exactly what lib/libtrawl.map lists ($(wc -l < listed.txt))"
# internal names cannot clash with a program linking libtrawl.a: every
# global symbol the archives define is trawl_ or tr_ (hidden ones too)
for a in libtrawl.a libtrawl-kern.a; do
	nm -g --defined-only "$TRAWL_BUILD/$a" | awk 'NF == 3 && $2 ~ /^[TDBRVWC]$/ { print $3 }'
done | grep -v -e '^trawl_' -e '^tr_' -e '^__odr_asan\.' | sort -u > unprefixed.txt
# (AddressSanitizer adds __odr_asan.NAME beside each global of a SAN build:
# the compiler's, not ours)
is "$(head -20 unprefixed.txt | tr '\n' ' ')" "" \
	"libtrawl.a and libtrawl-kern.a define no global symbol without the trawl_ or tr_ prefix"

# every subcommand in `trawl --help` has a man page
"$TRAWL" --help > help.txt 2>&1
cmds=$(awk '/^   [a-z]+ +[a-z]/ {print $1}' help.txt | grep -v '^help$' | sort -u)
[ -n "$cmds" ]
ok $? "trawl --help lists the subcommands ($(echo $cmds))"
for c in $cmds; do [ -f "$TRAWL_SRC/docs/man/trawl-$c.1" ] || echo "trawl-$c.1"; done > noman.txt
is "$(cat noman.txt)" "" "each subcommand has a man page"

# a program against the installed library, through pkg-config
cat > prog.c <<'C'
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <trawl/ctf.h>
#include <trawl/pipe.h>
/* a sink summing p:e.v and checking p:e.w, both bound by name */
struct sum { const struct trawl_field *v, *w; unsigned long long n, sum, wok; };
static int start(void *self, struct trawl_reader *r)
{
	struct sum *s = self;
	char err[256];
	s->v = trawl_field_bind(r, "p:e.v", TRAWL_FIELD_INT, 0, err, sizeof(err));
	s->w = trawl_field_bind(r, "p:e.w", TRAWL_FIELD_STRING, 0, err, sizeof(err));
	if (!s->v || !s->w)
		fprintf(stderr, "bind: %s\n", err);
	return s->v && s->w ? 0 : -EINVAL;
}
static int events(void *self, const struct trawl_event *ev, size_t n)
{
	struct sum *s = self;
	for (size_t i = 0; i < n; i++) {
		s->n++;
		s->sum += trawl_field_value(s->v, &ev[i])->u;
		const union trawl_ctf_value *w = trawl_field_value(s->w, &ev[i]);
		s->wok += w->s.len == 2 && !memcmp(w->s.p, "ok", 2);
	}
	return 0;
}
static const struct trawl_sink_ops ops = { sizeof(ops), "sum", start, events, NULL };
int main(int argc, char **argv)
{
	struct trawl_ctf_writer_opts o = { .sz = sizeof(o), .path = argv[1], .hostname = "pc", .domain = "ust" };
	struct trawl_ctf_writer *w = trawl_ctf_writer_new(&o);
	if (!w) return 1;
	struct trawl_ctf_type *s = trawl_ctf_type_struct(w);
	trawl_ctf_struct_add(w, s, "v", trawl_ctf_type_int(w, 32, false, 10));
	trawl_ctf_struct_add(w, s, "w", trawl_ctf_type_string(w));
	struct trawl_ctf_stream_class *sc = trawl_ctf_writer_stream_class(w, TRAWL_CTF_HEADER_LARGE, NULL);
	struct trawl_ctf_event_class *ec = trawl_ctf_writer_event_class(w, sc, "p:e", 13, s);
	struct trawl_ctf_wstream *st = trawl_ctf_writer_stream(w, sc, "chan", 0);
	for (unsigned i = 0; i < 1000; i++) {
		unsigned char b[16];
		memcpy(b, &i, 4);
		memcpy(b + 4, "ok", 3);
		if (trawl_ctf_wstream_event(st, ec, 1000 + i, b, 7)) return 2;
	}
	if (trawl_ctf_writer_close(w)) return 3;
	trawl_ctf_writer_free(w);
	char err[256];
	const char *p[] = { argv[1] };
	struct trawl_reader *r = trawl_reader_new(p, 1, NULL, err, sizeof(err));
	if (!r) { fprintf(stderr, "%s\n", err); return 4; }
	struct sum sum = { 0 };
	struct trawl_sink k = { &ops, &sum };
	if (trawl_pipe_run(r, &k, 1, NULL)) return 5;
	trawl_reader_free(r);
	printf("%llu %llu %llu\n", sum.n, sum.sum, sum.wok);
	return 0;
}
C
PKG_CONFIG_PATH="$dest/opt/trawl/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$dest" \
	cc ${TRAWL_SAN:+-fsanitize=$TRAWL_SAN} -o prog prog.c $(PKG_CONFIG_PATH="$dest/opt/trawl/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$dest" pkg-config --cflags --libs trawl) >cc.log 2>&1
ok $? "a program builds against the installed libtrawl via pkg-config"
out=$(LD_LIBRARY_PATH="$dest/opt/trawl/lib" ./prog "$TRASH/t" 2>&1)
is "$out" "1000 499500 1000" \
	"it writes 1000 events and reads them back through a sink binding two fields by name (the shared library)"
is "$(babeltrace2 "$TRASH/t" 2>/dev/null | wc -l)" "1000" "babeltrace2 reads the trace the program wrote"

# an out-of-tree build from another directory, with the Makefile named by -f
mkdir -p elsewhere
# (under SAN=..., inherited from make check, the Makefile adds -<san> to O)
(cd elsewhere && make -s -f "$TRAWL_SRC/Makefile" O="$TRASH/oot" -j2 bin >"$TRASH/oot.log" 2>&1)
ok $? "out-of-tree build with O= from another directory"
v=$("$TRASH"/oot*/trawl --version 2>&1)
case "$v" in "trawl "[0-9]*) r=0 ;; *) r=1 ;; esac
ok $r "the out-of-tree binary runs ($v)"
[ -z "$(ls -A elsewhere)" ] || echo "# wrote into the current directory: $(ls -A elsewhere)"

# tests and fuzz targets link what they test: none includes a .c file
inc=$(cd "$TRAWL_SRC" && grep -rlE '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<][^">]*\.c[">]' \
	tests/unit tests/fuzz bench examples 2>/dev/null)
is "$inc" "" "no test, fuzz target, bench or example includes a .c file"

# every page of docs/ the README names is there
missing=$(cd "$TRAWL_SRC" && grep -oE 'docs/[A-Za-z0-9_./-]+\.md' README.md | sort -u |
	while read -r f; do [ -f "$f" ] || echo "$f"; done)
is "$missing" "" "every docs/ page the README names exists"
# a man page's .BR/.BI alternates fonts with no space between its
# arguments: prose after "name (1))." on the same line runs together
runon=$(cd "$TRAWL_SRC" && grep -nE '^\.B[RI] [^" ]+ \([0-9]\)[^ ]* [A-Za-z]' docs/man/*.1)
is "$runon" "" "no man page runs prose into a .BR reference"
finish
