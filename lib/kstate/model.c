/* SPDX-License-Identifier: MIT */
/*
 * lib/kstate/model.c - a model per host for a consumer that keeps no
 * history of it (kstate.h, struct tr_kmodel): trawl agg's keys, the
 * view's scheduling rows, the exports' names and CPUs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kstate/kstate.h"

void tr_kmodel_init(struct tr_kmodel *m, unsigned feed)
{
	memset(m, 0, sizeof(*m));
	m->feed = feed;
}

int tr_kmodel_start(struct tr_kmodel *m, struct trawl_reader *r)
{
	tr_kin_finish(&m->kin);		/* the classes of the reader before */
	return tr_kin_start(&m->kin, r);
}

void tr_kmodel_release(struct tr_kmodel *m)
{
	for (size_t i = 0; i < m->nhost; i++)
		tr_tables_release(&m->host[i]);
	free(m->host);
	tr_kin_free(&m->kin);
	tr_state_strtab_release(&m->str);
	m->host = NULL;
	m->nhost = 0;
}

struct tables *tr_kmodel_host(struct tr_kmodel *m, uint32_t n)
{
	if (n >= m->nhost) {
		size_t cap = m->nhost * 2 > (size_t)n + 1 ? m->nhost * 2 : (size_t)n + 1;
		struct tables *t = realloc(m->host, cap * sizeof(*t));
		if (!t)
			return NULL;
		for (size_t i = m->nhost; i < cap; i++)
			tr_tables_init(&t[i]);
		m->host = t;
		m->nhost = cap;
	}
	return &m->host[n];
}

int tr_kmodel_take(struct tr_kmodel *m, uint32_t n, const struct trawl_event *ev,
		   struct chg out[2])
{
	const struct tr_kin_class *ci = tr_kin_class(&m->kin, &m->str, ev->cls);
	struct tables *t;
	int k, rc = 0;

	if (!ci)
		return -ENOMEM;
	if (!(ci->fam & m->feed))
		return 0;
	if (!(t = tr_kmodel_host(m, n)))
		return -ENOMEM;
	if ((k = tr_kin_changes(&m->kin, &m->str, t, ev, ci, out)) <= 0)
		return k;
	if (k == 2 && !(m->feed & TR_KIN_F_FD)) {
		k = 1;
	}
	for (int i = 2 - k; i < 2 && !rc; i++)
		rc = tr_state_apply(t, &out[i], 0);
	return rc ? rc : k;
}
