/* SPDX-License-Identifier: MIT */
/*
 * lib/util/http.h - the least of HTTP/1.x a loopback server needs: the
 * request line of a GET or HEAD (`trawl view --serve`).
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

#endif
