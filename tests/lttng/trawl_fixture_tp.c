/* SPDX-License-Identifier: MIT */
/* tests/lttng/trawl_fixture_tp.c - instantiates the tracepoint provider. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "trawl_fixture_tp.h"
