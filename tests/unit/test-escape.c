/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test-escape.c - peers' strings made safe to print
 * (lib/util/escape.h, issue 28 item 5): every control character, DEL and
 * byte of 0x80 and above as \xNN, a backslash doubled, newlines and tabs
 * kept only when asked; the length needed as snprintf's; a buffer too
 * small cut at a whole escape, never in the middle of one; in place.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "util/escape.h"

int main(void)
{
	char b[128];
	size_t n = tr_escape(b, sizeof(b), "plain host-1.ok_", false);
	is_str(b, "plain host-1.ok_", "printable ASCII is unchanged");
	is_int(n, 16, "its length");
	n = tr_escape(b, sizeof(b), "\x1b[2Jok\a\r\x7f\xc2\x9b", false);
	is_str(b, "\\x1b[2Jok\\x07\\x0d\\x7f\\xc2\\x9b",
	       "ESC, BEL, CR, DEL and the UTF-8 of an 8-bit CSI become \\xNN");
	is_int(n, strlen(b), "the length is the escaped one");
	tr_escape(b, sizeof(b), "a\\b", false);
	is_str(b, "a\\\\b", "a backslash is doubled (an escape cannot be faked)");
	tr_escape(b, sizeof(b), "one\n\ttwo\n", false);
	is_str(b, "one\\x0a\\x09two\\x0a", "newlines and tabs escaped on one line");
	tr_escape(b, sizeof(b), "one\n\ttwo\n", true);
	is_str(b, "one\n\ttwo\n", "kept with keep_nl (text of several lines)");

	/* a small buffer: cut at a whole escape; the length needed returned */
	char s[7];
	n = tr_escape(s, sizeof(s), "ab\x1b" "cd", false);
	is_str(s, "ab\\x1b", "7 bytes: 'ab', the whole \\x1b and the NUL; 'c' no more");
	is_int(n, 8, "and the length it would need");
	n = tr_escape(s, 5, "ab\x1b" "cd", false);
	is_str(s, "ab", "4 bytes of room: the escape that does not fit is left out whole");
	n = tr_escape(NULL, 0, "\x01", false);
	is_int(n, 4, "no buffer: only the length");
	tr_escape(b, sizeof(b), NULL, false);
	is_str(b, "", "NULL: empty");

	char *d = tr_escape_dup("x\x1by", false);
	is_str(d, "x\\x1by", "tr_escape_dup");
	free(d);
	char in[16] = "go\x1b[Haway";
	tr_escape_ctl(in, sizeof(in));
	is_str(in, "go\\x1b[Haway", "in place, within its buffer");
	char tiny[6] = "\x1b\x1b\x1b";
	tr_escape_ctl(tiny, sizeof(tiny));
	is_str(tiny, "\\x1b", "in place, cut at a whole escape");
	return done_testing();
}
