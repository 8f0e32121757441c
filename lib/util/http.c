/* SPDX-License-Identifier: MIT */
/*
 * lib/util/http.c - an HTTP/1.x request line (see http.h).
 */
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "util/http.h"

static const char *find(const char *b, size_t n, const char *pat, size_t m)
{
	for (size_t i = 0; i + m <= n; i++)
		if (!memcmp(b + i, pat, m))
			return b + i;
	return NULL;
}

int tr_http_request(const char *buf, size_t len, char *path, size_t cap)
{
	const char *end = find(buf, len, "\r\n\r\n", 4), *p, *sp, *eol;
	int method;

	if (!end && !find(buf, len, "\n\n", 2))
		return -EAGAIN;
	eol = memchr(buf, '\n', len);
	if (!eol)
		return -EINVAL;
	if (eol - buf >= 4 && !memcmp(buf, "GET ", 4)) {
		method = TR_HTTP_GET;
		p = buf + 4;
	} else if (eol - buf >= 5 && !memcmp(buf, "HEAD ", 5)) {
		method = TR_HTTP_HEAD;
		p = buf + 5;
	} else {
		return memchr(buf, ' ', (size_t)(eol - buf)) ? -ENOTSUP : -EINVAL;
	}
	sp = memchr(p, ' ', (size_t)(eol - p));
	if (!sp || sp == p || *p != '/' || (size_t)(eol - sp) < 9 || memcmp(sp + 1, "HTTP/1.", 7))
		return -EINVAL;
	size_t n = (size_t)(sp - p);
	const char *q = memchr(p, '?', n);

	if (q)
		n = (size_t)(q - p);
	if (n >= cap)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)p[i] <= ' ' || (unsigned char)p[i] >= 0x7f)
			return -EINVAL;
	memcpy(path, p, n);
	path[n] = 0;
	return method;
}

int tr_http_header(const char *buf, size_t len, const char *name, char *val, size_t cap)
{
	const char *end = find(buf, len, "\r\n\r\n", 4), *p = memchr(buf, '\n', len);
	size_t nl = strlen(name);

	if (!end)
		end = find(buf, len, "\n\n", 2);
	if (!end || !p || !cap)
		return -ENOENT;
	/* each line after the request line, up to the empty one */
	for (p++; p < end; ) {
		const char *eol = memchr(p, '\n', (size_t)(end + 1 - p));

		if (!eol)
			eol = end;
		if ((size_t)(eol - p) > nl && p[nl] == ':' && !strncasecmp(p, name, nl)) {
			const char *v = p + nl + 1, *e = eol;

			while (v < e && (*v == ' ' || *v == '\t'))
				v++;
			while (e > v && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
				e--;
			if ((size_t)(e - v) >= cap)
				return -E2BIG;
			memcpy(val, v, (size_t)(e - v));
			val[e - v] = 0;
			return (int)(e - v);
		}
		p = eol + 1;
	}
	return -ENOENT;
}
