/* SPDX-License-Identifier: MIT */
/*
 * cli/config.h - trawl's settings, in order of precedence (later wins):
 *   1. /etc/trawl/trawl.conf            (system-wide)
 *   2. $XDG_CONFIG_HOME/trawl/trawl.conf, else ~/.config/trawl/trawl.conf
 *   3. the environment: TRAWL_<SECTION>_<KEY> (upper case, '-' -> '_')
 *   4. the command line (each command applies its options last)
 * TRAWL_CONFIG=FILE reads FILE instead of files 1 and 2 (tests use it).
 *
 * File format (docs/config.md): INI-like lines, '#' comments,
 * "[section]" headers, "key = value"; a key may repeat, giving a list
 * (e.g. "peer = host1 10.0.0.2:7077" in [probe]). A later file's list
 * replaces an earlier one's; an environment value replaces the list with
 * one value. Unknown sections and keys are kept (commands check theirs).
 */
#ifndef TRAWL_CLI_CONFIG_H
#define TRAWL_CLI_CONFIG_H

#include <stddef.h>

struct trawl_conf;

/* Loads the files and the environment. NULL on error, message in err
 * (a syntax error names the file and line). A missing file is no error. */
struct trawl_conf *conf_load(char *err, size_t errlen);
void conf_free(struct trawl_conf *c);

/* The last value of section.key, or NULL. */
const char *conf_get(const struct trawl_conf *c, const char *section, const char *key);
/* Every value of section.key (a list), in order; returns the count and
 * sets *vals to an array owned by c (valid until conf_free). */
size_t conf_get_all(const struct trawl_conf *c, const char *section, const char *key,
		    const char *const **vals);
/* Where section.key's value came from ("/etc/trawl/trawl.conf:12",
 * "environment TRAWL_PROBE_RATE", ...), or NULL if unset. */
const char *conf_origin(const struct trawl_conf *c, const char *section, const char *key);

#endif
