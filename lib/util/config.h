/* SPDX-License-Identifier: MIT */
/*
 * lib/util/config.h - trawl's settings (the user's configuration files and
 * the environment), for the trawl program, in order of precedence (later wins):
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
#ifndef TRAWL_UTIL_CONFIG_H
#define TRAWL_UTIL_CONFIG_H

#include <stddef.h>

#include "internal.h"

struct trawl_conf;

/* Loads the files and the environment. NULL on error, message in err
 * (a syntax error names the file and line). A missing file is no error. */
TRAWL_HIDDEN struct trawl_conf *tr_conf_load(char *err, size_t errlen);
TRAWL_HIDDEN void tr_conf_free(struct trawl_conf *c);

/* The last value of section.key, or NULL. */
TRAWL_HIDDEN const char *tr_conf_get(const struct trawl_conf *c, const char *section, const char *key);
/* Every value of section.key (a list), in order; returns the count and
 * sets *vals to an array owned by c (valid until tr_conf_free). */
TRAWL_HIDDEN size_t tr_conf_get_all(const struct trawl_conf *c, const char *section,
				 const char *key, const char *const **vals);
/* Where section.key's value came from ("/etc/trawl/trawl.conf:12",
 * "environment TRAWL_PROBE_RATE", ...), or NULL if unset. */
TRAWL_HIDDEN const char *tr_conf_origin(const struct trawl_conf *c, const char *section, const char *key);

/* ---- for the unit test and the fuzz target */

/* The system-wide file ("/etc/trawl/trawl.conf"; the unit test moves it). */
TRAWL_HIDDEN extern const char *tr_conf_sys_path;
/* Empty settings; NULL on ENOMEM. Free with tr_conf_free(). */
TRAWL_HIDDEN struct trawl_conf *tr_conf_new(void);
/*
 * Parses one file's text (len bytes, not necessarily NUL-terminated) named
 * `name` into c, as source number gen: a key's first value from this
 * source replaces earlier sources' list. Returns 0, -EINVAL (message
 * "NAME:LINE: ...") or -ENOMEM.
 */
TRAWL_HIDDEN int tr_conf_parse(struct trawl_conf *c, const char *text, size_t len,
			       const char *name, unsigned gen, char *err, size_t errlen);
/* The section and key of the files' i-th entry: true, or false past the
 * last. */
TRAWL_HIDDEN bool tr_conf_key_at(const struct trawl_conf *c, size_t i, const char **section,
				 const char **key);

#endif
