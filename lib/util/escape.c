/* SPDX-License-Identifier: MIT */
/*
 * lib/util/escape.c - peers' strings made safe to print (escape.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/escape.h"

/* One byte as printed, in e: its length. */
static size_t esc1(unsigned char c, bool keep_nl, char e[5])
{
	if ((c >= 0x20 && c < 0x7f && c != '\\') || (keep_nl && (c == '\n' || c == '\t'))) {
		e[0] = (char)c;
		return 1;
	}
	if (c == '\\') {
		e[0] = e[1] = '\\';
		return 2;
	}
	snprintf(e, 5, "\\x%02x", c);
	return 4;
}

size_t tr_escape(char *out, size_t outlen, const char *in, bool keep_nl)
{
	size_t n = 0;
	bool fits = outlen > 0;
	for (const unsigned char *p = (const unsigned char *)(in ? in : ""); *p; p++) {
		char e[5];
		size_t k = esc1(*p, keep_nl, e);
		if (fits && n + k < outlen)
			memcpy(out + n, e, k);
		else if (fits) {
			out[n] = 0;
			fits = false;
		}
		n += k;
	}
	if (fits)
		out[n] = 0;
	return n;
}

char *tr_escape_dup(const char *in, bool keep_nl)
{
	size_t n = tr_escape(NULL, 0, in, keep_nl);
	char *s = malloc(n + 1);
	if (s)
		tr_escape(s, n + 1, in, keep_nl);
	return s;
}

void tr_escape_ctl(char *s, size_t size)
{
	if (!size)
		return;
	char *copy = strndup(s, size - 1);
	if (!copy) {
		/* no room to escape into: the controls are cut instead */
		for (char *p = s; *p; p++)
			if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
				*p = '?';
		return;
	}
	tr_escape(s, size, copy, false);
	free(copy);
}
