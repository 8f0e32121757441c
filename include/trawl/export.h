/* SPDX-License-Identifier: MIT */
/*
 * trawl/export.h - writing a session for other viewers: Perfetto's
 * protobuf trace format ("perfetto", for ui.perfetto.dev and
 * trace_processor) and the Trace Event JSON of chrome://tracing
 * ("chrome-json"). An export is a sink of a reader's pipeline
 * (trawl/pipe.h): every event of the merged, clock-corrected timeline
 * goes through it once; what it makes of each kind of event, and why, is
 * docs/export.md.
 *
 *	struct trawl_export_opts o = { .sz = sizeof(o), .format = "perfetto",
 *				       .path = "trace.pftrace", .points = pts };
 *	struct trawl_export *x = trawl_export_new(&o, err, sizeof(err));
 *	struct trawl_sink s = trawl_export_sink(x);
 *	trawl_pipe_run(reader, &s, 1, NULL);
 *	trawl_export_free(x);
 *
 * Conventions as in trawl/pipe.h: int returns are 0 or -errno, pointer
 * returns NULL with errno set, messages in (err, errlen); _free accepts
 * NULL.
 */
#ifndef TRAWL_EXPORT_H
#define TRAWL_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <trawl/pipe.h>
#include <trawl/sync.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/*
 * The export formats, one row each: the i-th format's name (and a line of
 * help in *help if not NULL), NULL past the last.
 */
const char *trawl_export_format_name(size_t i, const char **help);

/* chrome-json's default limit of events (chrome://tracing fails beyond). */
#define TRAWL_EXPORT_CHROME_MAX_EVENTS 1000000u

struct trawl_export_opts {
	size_t sz;			/* sizeof(struct trawl_export_opts) */
	const char *format;		/* a trawl_export_format_name(); NULL: "perfetto" */
	/*
	 * The file written. A regular file (or none) is written as a new
	 * temporary beside it (random name, created exclusively), renamed over
	 * PATH when the run ends (trawl_export_sink()'s finish()) without a
	 * failure of this sink, removed otherwise: PATH is never half written.
	 * A device, a FIFO or "-" (standard output) is written in place, as a
	 * stream; a symbolic link or a directory is refused. (A run stopped
	 * early, by its limit or another sink, gives the events up to there.)
	 */
	const char *path;
	/*
	 * The messages between hosts that become flows (from
	 * trawl_sync_points_read() over the same traces, with the same
	 * matches): each message's send and receive events, found by host and
	 * time, are tied by one flow. Times in points are raw; fixes (the
	 * reader's clock corrections, trawl_reader_opts.fixes) map them to
	 * the reader's. The export reads both during trawl_export_new() only.
	 * NULL: no flows.
	 */
	const struct trawl_sync_points *points;
	const struct trawl_reader_clock_fix *fixes;
	size_t nfixes;
	/* The user matches the points were found with (their send and receive
	 * events are messages too); they must outlive the export. */
	const struct trawl_sync_match *matches;
	size_t nmatches;
	/*
	 * Events written at most (0: the format's default: none for
	 * perfetto, TRAWL_EXPORT_CHROME_MAX_EVENTS for chrome-json; UINT64_MAX:
	 * no limit). One more ends the run with -EFBIG: chrome-json keeps the
	 * first max_events records (trawl_export_stats().truncated), perfetto
	 * removes the file.
	 */
	uint64_t max_events;
	/*
	 * Also write each user-space record's context and fields (the json
	 * format's "context" and "fields"): Perfetto's debug annotation
	 * "args" (as JSON), chrome-json's "args". Larger files.
	 */
	bool fields;
};

/* What an export wrote (trawl_export_stats()). */
struct trawl_export_stats {
	uint64_t events;		/* events read */
	uint64_t written;		/* records written (see docs/export.md) */
	uint64_t hosts;			/* machines */
	uint64_t sched_switch, wakeups;	/* scheduler events */
	uint64_t slices;		/* begin/end pairs matched */
	uint64_t unmatched;		/* begins never ended, ends never begun */
	uint64_t instants;		/* other user-space events */
	uint64_t flows;			/* messages tied (both ends seen) */
	uint64_t skipped;		/* kernel events of no family above, and
					 * scheduler events of CPU 65536 or more */
	uint64_t bytes;			/* of the file */
	/* max_events was reached and the format keeps the first max_events
	 * records (chrome-json): the file is complete with those, the run
	 * ended there (the sink's events() returned -EFBIG) */
	bool truncated;
};

/*
 * An export of every event of a run into o->path. NULL + errno (EINVAL: an
 * unknown format or no path; ENOMEM; ELOOP: PATH is a symbolic link;
 * EISDIR; the errno of opening PATH or creating its temporary),
 * message in err. Free it after the run.
 */
struct trawl_export;
struct trawl_export *trawl_export_new(const struct trawl_export_opts *o, char *err,
				      size_t errlen);
/*
 * The sink. Its events() returns -EFBIG past max_events, another -errno on
 * a write error or out of memory; its finish() completes the file (also
 * with the first max_events records of a format that keeps them), or
 * removes it after such a failure. The message of a failure:
 * trawl_export_error().
 */
struct trawl_sink trawl_export_sink(struct trawl_export *x);
const struct trawl_export_stats *trawl_export_stats(const struct trawl_export *x);
/* The message of the sink's first failure, "" if none. */
const char *trawl_export_error(const struct trawl_export *x);
void trawl_export_free(struct trawl_export *x);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
