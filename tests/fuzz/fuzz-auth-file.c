/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the credential file parser (lib/net/auth.h, tr_auth_parse)
 * on arbitrary bytes, as `trawl relay --secret-file` and every producer and
 * viewer read it. The input is copied to a buffer of its exact size, not
 * NUL-terminated (ASan sees overreads). Invariants (abort otherwise):
 *  - a refusal is -EINVAL with a message, and leaves no key behind;
 *  - a credential is of a known kind; a node's host is a plain relay name;
 *  - formatted again (tr_auth_format) and parsed, it is the same credential.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/auth.h"
#include "net/relay-proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool zero(const void *p, size_t n)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	struct auth_cred c, again;
	char err[256] = "";
	int r = tr_auth_parse(buf, size, &c, err, sizeof(err));
	if (r < 0) {
		if (r != -EINVAL || !err[0] || !zero(c.key, sizeof(c.key)))
			abort();
		free(buf);
		return 0;
	}
	if (r != 0 || tr_auth_kind_name(c.kind)[0] == '?')
		abort();
	if (c.kind == AUTH_NODE ? !tr_relay_name_ok(c.host) || strlen(c.host) > AUTH_HOST_MAX
				: c.host[0] != 0)
		abort();
	char line[256];
	int n = tr_auth_format(&c, line, sizeof(line));
	if (n <= 0 || tr_auth_parse(line, (size_t)n, &again, err, sizeof(err)) != 0 ||
	    again.kind != c.kind || strcmp(again.host, c.host) != 0 ||
	    memcmp(again.key, c.key, sizeof(c.key)) != 0)
		abort();
	free(buf);
	return 0;
}
