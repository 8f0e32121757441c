/* SPDX-License-Identifier: MIT */
/*
 * lib/util/escape.h - strings that came from a peer (a node's name, an
 * agent's answer, a relay's refusal, a session name), made safe to print:
 * every byte that is not printable ASCII (controls, DEL, and every byte of
 * 0x80 and above, where C1 controls such as the 8-bit CSI live) becomes
 * \xNN, and a backslash becomes \\, so a peer cannot move the cursor,
 * recolour or clear a terminal, nor fake a line of output.
 */
#ifndef TRAWL_UTIL_ESCAPE_H
#define TRAWL_UTIL_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>

#include "internal.h"

/* in escaped into out (outlen > 0: always NUL-terminated; cut at a whole
 * escape when out is too small): the length it would need, as snprintf.
 * keep_nl: newlines and tabs stay (multi-line text, one line per line). */
TRAWL_HIDDEN size_t tr_escape(char *out, size_t outlen, const char *in, bool keep_nl);

/* The same, malloc'd; NULL on ENOMEM (in NULL: an empty string). */
TRAWL_HIDDEN char *tr_escape_dup(const char *in, bool keep_nl);

/* Escapes s in place, cut to its size (buffers of a fixed size). */
TRAWL_HIDDEN void tr_escape_ctl(char *s, size_t size);

#endif
