/* SPDX-License-Identifier: MIT */
/*
 * tests/lttng/sync_fixture_tp.h - LTTng-UST tracepoint provider of the
 * clock synchronization fixture (sync_fixture.c): the send and the receive
 * of one application message, with the key that links them.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER app_sync

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./sync_fixture_tp.h"

#if !defined(SYNC_FIXTURE_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define SYNC_FIXTURE_TP_H

#include <lttng/tracepoint.h>
#include <stdint.h>

/* Emitted immediately before a message is written to the socket. */
LTTNG_UST_TRACEPOINT_EVENT(app_sync, msg_send,
	LTTNG_UST_TP_ARGS(uint64_t, msg_id, const char *, peer),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint64_t, msg_id, msg_id)
		lttng_ust_field_string(peer, peer)
	)
)

/* Emitted immediately after a whole message was read from the socket. */
LTTNG_UST_TRACEPOINT_EVENT(app_sync, msg_recv,
	LTTNG_UST_TP_ARGS(uint64_t, msg_id),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint64_t, msg_id, msg_id)
	)
)

#endif /* SYNC_FIXTURE_TP_H */

#include <lttng/tracepoint-event.h>
