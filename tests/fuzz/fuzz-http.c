/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the HTTP request line parser of `trawl view --serve`
 * (lib/util/http.c) on arbitrary bytes, as the server reads them: a
 * buffer growing as bytes come (every prefix is parsed too). It must
 * never read outside the buffer; a path it returns starts with '/',
 * fits its buffer, holds printable ASCII only and is in the input.
 * The input is copied to a buffer of its exact size (ASan sees overreads).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size ? size : 1), path[64];

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	for (size_t n = 0; n <= size; n += n < 64 ? 1 : 61) {
		int m = tr_http_request(buf, n, path, sizeof(path));

		if (m == TR_HTTP_GET || m == TR_HTTP_HEAD) {
			size_t l = strlen(path);

			if (path[0] != '/' || l >= sizeof(path) || !memmem(buf, n, path, l))
				abort();
			for (size_t i = 0; i < l; i++)
				if ((unsigned char)path[i] <= ' ' || (unsigned char)path[i] >= 0x7f)
					abort();
		} else if (m != -EAGAIN && m != -EINVAL && m != -ENOTSUP) {
			abort();
		}
	}
	free(buf);
	return 0;
}
