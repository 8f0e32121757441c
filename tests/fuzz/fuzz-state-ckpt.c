/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the state system's checkpoint file (lib/state/ckpt.c,
 * tr_state_ck_parse), as `trawl state PATH --at T` reads
 * PATH/.trawl-state-HOST.ckpt, on arbitrary bytes, its header's checksum
 * not checked and each checkpoint's made right before it is restored (so
 * that the structure behind them is reached; the real reader checks both),
 * into a state with the 10 s window the seeds were made with. Invariants
 * (abort otherwise):
 *  - a refusal is -EBADMSG, -ESTALE or -ENOMEM, with a message;
 *  - taken, every checkpoint of every host restores or is refused as
 *    -EBADMSG (never out of bounds: ASan), and a restored one names only
 *    strings the file has;
 *  - written again (tr_state_ck_format) and read with its checksum, it is
 *    taken, with the same hosts and checkpoints, each restoring as before.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "state/state-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct trawl_state *fresh(void)
{
	struct trawl_state_opts o = { .sz = sizeof(o), .window_ns = 10000000000LL };
	struct trawl_state *s = trawl_state_new(&o);
	if (!s)
		abort();
	return s;
}

/* each checkpoint's restore: 0 or -EBADMSG, into r (NULL: not kept) */
static void restores(const struct trawl_state *s, int *r, size_t max)
{
	size_t k = 0;

	for (size_t i = 0; i < s->nhosts; i++)
		for (size_t j = 0; j < s->hosts[i].nck; j++, k++) {
			struct tables t;
			int rc = tr_state_ck_restore(s, &s->hosts[i], j, &t);
			if (rc && rc != -EBADMSG && rc != -ENOMEM)
				abort();
			if (k < max)
				r[k] = rc;
			tr_tables_release(&t);
		}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = malloc(size ? size : 1);
	struct trawl_state *s = fresh(), *s2 = NULL;
	char err[1024] = "";
	int r1[64], r2[64];
	uint8_t *out = NULL;
	size_t len;

	if (!buf)
		abort();
	memcpy(buf, data, size);
	int rc = tr_state_ck_parse(s, buf, size, NULL, false, false, err, sizeof(err));
	if (rc) {
		if ((rc != -EBADMSG && rc != -ESTALE && rc != -ENOMEM) || !err[0])
			abort();
		goto out;
	}
	size_t n = 0;
	for (size_t i = 0; i < s->nhosts; i++)
		for (size_t k = 0; k < s->hosts[i].nck; k++, n++)
			s->hosts[i].ck[k].sum = tr_state_ck_sum(s->ckbuf + s->hosts[i].ck[k].off,
								s->hosts[i].ck[k].len);
	restores(s, r1, 64);
	if (tr_state_ck_format(s, "", &out, &len))
		goto out;	/* (ENOMEM) */
	s2 = fresh();
	rc = tr_state_ck_parse(s2, out, len, "", true, false, err, sizeof(err));
	if (rc == -ENOMEM)
		goto out;
	if (rc || s2->nhosts != s->nhosts)
		abort();
	for (size_t i = 0; i < s->nhosts; i++)
		if (strcmp(s2->hosts[i].name, s->hosts[i].name) || s2->hosts[i].nck != s->hosts[i].nck)
			abort();
	restores(s2, r2, 64);
	for (size_t k = 0; k < n && k < 64; k++)
		if (r1[k] != r2[k] && r1[k] != -ENOMEM && r2[k] != -ENOMEM)
			abort();
out:
	free(out);
	trawl_state_free(s2);
	trawl_state_free(s);
	free(buf);
	return 0;
}
