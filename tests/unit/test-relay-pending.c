/* SPDX-License-Identifier: MIT */
/*
 * test-relay-pending - the cap of connections of a kind that have proved
 * nothing yet (lib/relay/relay.c tr_relay_pending_cap, docs/relay.md
 * "Limits against hostile peers"), as its comment says: --max-pending, and
 * at most a quarter of the kind's limit (that no lower than 8), and never
 * more than a quarter of the descriptor pool, at least 1.
 * Checks: the defaults (256, a quarter of 1000 producers: 250; of 100
 * viewers: 25); a kind's limit of 20 gives 8, not 5 (the floor); a pool
 * of 12 gives 3, not 8 (before, the floor of 8 won: 16 pending of both
 * kinds in a pool of 12); a pool of 40 keeps the floor (10 > 8); a pool
 * of 2 gives 1; --max-pending 4 is 4 (before, the floor lifted it to 8:
 * "at most max_pending", trawl/relay.h); both kinds together never hold
 * more than the pool.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "relay/relay-internal.h"

static char trash[64];

static struct trawl_relay *relay(int pool, int producers, int viewers, int pending)
{
	struct trawl_relay_opts o = {
		.sz = sizeof(o), .output = trash, .fd_pool_size = pool,
		.max_producers = producers, .max_viewers = viewers, .max_pending = pending,
	};
	return tr_relay_state_new(&o);
}

static void cap(int pool, int producers, int viewers, int pending, int want_p, int want_v,
		const char *what)
{
	struct trawl_relay *r = relay(pool, producers, viewers, pending);
	if (!ok(r != NULL, "%s: a relay's state", what))
		return;
	int p = tr_relay_pending_cap(r, RC_PRODUCER), v = tr_relay_pending_cap(r, RC_VIEWER);
	ok(p == want_p && v == want_v, "%s: %d pending producers, %d viewers (want %d, %d)", what,
	   p, v, want_p, want_v);
	ok(pool == 0 || p + v <= pool, "%s: together within the pool", what);
	trawl_relay_free(r);
}

int main(void)
{
	snprintf(trash, sizeof(trash), "/tmp/trawl-test-pending-XXXXXX");
	if (!mkdtemp(trash)) {
		perror("mkdtemp");
		return 1;
	}
	cap(100000, 0, 0, 0, 250, 25, "the defaults, a large pool");
	cap(100000, 20, 20, 0, 8, 8, "limits of 20: the floor of 8");
	cap(100000, 0, 0, 4, 4, 4, "--max-pending 4: 4 (before, lifted to 8)");
	cap(100000, 20, 20, 6, 6, 6, "--max-pending 6, limits of 20: 6");
	cap(12, 0, 0, 0, 3, 3, "a pool of 12: a quarter of it each");
	cap(40, 20, 20, 0, 8, 8, "a pool of 40, limits of 20: the floor fits");
	cap(2, 0, 0, 0, 1, 1, "a pool of 2: one each");
	rmdir(trash);
	return done_testing();
}
