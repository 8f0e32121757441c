/* SPDX-License-Identifier: MIT */
/* tests/lttng/sync_fixture_tp.c - instantiates the app_sync provider. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "sync_fixture_tp.h"
