/* SPDX-License-Identifier: MIT */
/*
 * cli/config.h - the settings files and the environment: the parser is the
 * library's (lib/util/config.c, API in lib/util/config.h); the commands
 * that include "config.h" get it from here.
 */
#ifndef TRAWL_CLI_CONFIG_H
#define TRAWL_CLI_CONFIG_H
#include "util/config.h"
#endif
