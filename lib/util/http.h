/* SPDX-License-Identifier: MIT */
/*
 * lib/util/http.h - the least of HTTP/1.x a loopback server needs: the
 * request line of a GET or HEAD, and a header's value (`trawl view
 * --serve`, the metrics endpoint of lib/net/httpd.c).
 */
#ifndef TRAWL_UTIL_HTTP_H
#define TRAWL_UTIL_HTTP_H

#include <stddef.h>

#include "internal.h"

enum { TR_HTTP_GET = 1, TR_HTTP_HEAD = 2 };

/*
 * Parses the request in buf[0 .. len) (not NUL-terminated). Returns
 * TR_HTTP_GET or TR_HTTP_HEAD with the path (from its '/', without the
 * query, NUL-terminated) in path[cap]; -EAGAIN while the header has not
 * ended (no empty line yet); -EINVAL for a malformed request line, a path
 * not starting with '/' or longer than cap - 1, or bytes outside printable
 * ASCII in it; -ENOTSUP for another method.
 */
TRAWL_HIDDEN int tr_http_request(const char *buf, size_t len, char *path, size_t cap);

/*
 * The value of the header name (case-insensitive) of the request in
 * buf[0 .. len), its leading and trailing blanks cut, NUL-terminated in
 * val[cap]: its length, -ENOENT (no such header, or the header has not
 * ended), -E2BIG (longer than cap - 1). The first such header counts.
 */
TRAWL_HIDDEN int tr_http_header(const char *buf, size_t len, const char *name, char *val,
				size_t cap);

#endif
