/* SPDX-License-Identifier: MIT */
/*
 * lib/util/outfile.h - the one way an output file is written (export,
 * view, agg --svg, sync --apply, the stored sync result), so that no
 * output path destroys what was there:
 *
 *   - a character or block device, a FIFO (or socket), or "-" when the
 *     caller allows it (standard output), is a stream: written in place,
 *     no temporary, no rename (-o /dev/null stays a device);
 *   - a symbolic link is refused, never followed (its target is left as
 *     it was), and so is a directory;
 *   - anything else (a regular file or nothing) is written into a new
 *     temporary of the target's directory, created with O_EXCL under a
 *     random name, and renamed over the target at commit, once complete
 *     and on disk; the rename is refused when the target has become
 *     anything but a regular file meanwhile. A replaced file keeps its
 *     permission bits.
 *
 * Messages name the target and say what is wrong ("PATH: is a symbolic
 * link (not followed)"); the write error is the real one (ENOSPC says "No
 * space left on device", not "Input/output error").
 */
#ifndef TRAWL_UTIL_OUTFILE_H
#define TRAWL_UTIL_OUTFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "internal.h"

enum {
	TR_OUTFILE_DASH = 1 << 0,	/* "-" is standard output */
};

/* Caller storage (it must not move between open and release: the stdio
 * stream points at it). */
struct tr_outfile {
	int fd;			/* written to; -1 once closed */
	FILE *f;		/* tr_outfile_stdio(): a stream over fd, or NULL */
	int werr;		/* the first write error through f: -errno, or 0 */
	uint64_t bytes;		/* written through f */
	bool stream;		/* a device, FIFO or standard output: written in place */
	bool is_stdout;		/* "-" (fd is a duplicate of standard output) */
	bool existed;		/* a regular file was at path (replaced at commit) */
	bool committed;
	char *path;		/* the target, as given */
	char *tmp;		/* the temporary (regular targets only), or NULL */
};

/*
 * Opens path for writing, as above (mode: of a new file, before the umask;
 * flags: TR_OUTFILE_*). 0, or -errno with the message in err (then
 * nothing was created and o needs no release, though it may have one).
 */
TRAWL_HIDDEN int tr_outfile_open(struct tr_outfile *o, const char *path, unsigned flags,
				 mode_t mode, char *err, size_t errlen);
/* A stdio stream over o->fd that keeps the real errno of a failed write in
 * o->werr and counts o->bytes (closed by commit or release, never by the
 * caller); NULL on ENOMEM. */
TRAWL_HIDDEN FILE *tr_outfile_stdio(struct tr_outfile *o);
/* ret, or the real write error when ret is the -EIO of a failed fwrite on
 * o's stream. */
TRAWL_HIDDEN int tr_outfile_why(const struct tr_outfile *o, int ret);
/*
 * Completes the file: flushes the stream, and for a regular target syncs
 * the temporary and renames it over the target (refused when the target
 * is now a link, a directory, a device...). 0, or -errno with the message
 * in err (then the target is as it was and the temporary is gone). Release
 * o after it either way.
 */
TRAWL_HIDDEN int tr_outfile_commit(struct tr_outfile *o, char *err, size_t errlen);
/* Closes what is open; an uncommitted temporary is removed (the target is
 * left as it was). Accepts a zeroed or already released o. */
TRAWL_HIDDEN void tr_outfile_release(struct tr_outfile *o);
/* The whole of a small file (a pidfile, a metadata text) in one call:
 * open, write len bytes of buf, commit, release. 0 or -errno, the message
 * in err. */
TRAWL_HIDDEN int tr_outfile_write(const char *path, unsigned flags, mode_t mode,
				  const void *buf, size_t len, char *err, size_t errlen);
/* What a file of mode m is, for a message: "a symbolic link", "a
 * directory", "a FIFO", ... */
TRAWL_HIDDEN const char *tr_file_kind(mode_t m);

#endif
