/* SPDX-License-Identifier: MIT */
/*
 * lib/pipe/run.c - the pipeline's loop: the reader's merged events, a
 * batch at a time (trawl_reader_read()), to every sink in order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pipe/pipe-internal.h"

#define RUN_BATCH 1024u

int trawl_pipe_run(struct trawl_reader *r, const struct trawl_sink *sinks, size_t nsinks,
		   const struct trawl_run_opts *o)
{
	struct trawl_run_opts ro = { .sz = sizeof(ro) };
	struct trawl_event *ev = malloc(RUN_BATCH * sizeof(*ev));
	uint64_t done = 0;
	size_t started = 0;
	int ret = 0, corrupt = 0;

	if (o)
		memcpy(&ro, o, o->sz < sizeof(ro) ? o->sz : sizeof(ro));
	if (!ev)
		return -ENOMEM;
	for (; started < nsinks; started++) {
		const struct trawl_sink *k = &sinks[started];
		if (k->ops->start && (ret = k->ops->start(k->self, r)) < 0)
			goto finish;
	}
	while (!(ro.stop && *ro.stop)) {
		unsigned max = RUN_BATCH;
		if (ro.limit) {
			if (done >= ro.limit)
				break;
			if (ro.limit - done < max)
				max = (unsigned)(ro.limit - done);
		}
		int n = trawl_reader_read(r, ev, max);
		if (n == 0)
			break;
		if (n < 0) {
			if (n == -ENOMEM) {
				ret = n;
				break;
			}
			corrupt = 1;
			if (ro.error)
				ro.error(ro.arg, trawl_reader_error(r));
			continue;
		}
		done += (uint64_t)n;
		for (size_t i = 0; i < nsinks; i++) {
			const struct trawl_sink *k = &sinks[i];
			if ((ret = k->ops->events(k->self, ev, (size_t)n)) < 0)
				goto finish;
		}
	}
finish:
	for (size_t i = 0; i < started; i++) {
		const struct trawl_sink *k = &sinks[i];
		int rc = k->ops->finish ? k->ops->finish(k->self, r) : 0;
		if (rc < 0 && ret >= 0)
			ret = rc;
	}
	free(ev);
	return ret < 0 ? ret : corrupt;
}
