/* When a measurement ran (docs/REPORT_FORMAT.md, "measurement_time"): its
 * start and end on the wall clock (UTC, CLOCK_REALTIME) and on the
 * measuring clock (CLOCK_MONOTONIC, or the simulated clock a test
 * installed: ergon/clock.h), and what the kernel says about the wall
 * clock's synchronisation (adjtimex(2) read-only: STA_UNSYNC, maxerror).
 * Every artifact that measures carries one; the database orders and
 * filters results by it.
 */
#ifndef ERGON_MTIME_H
#define ERGON_MTIME_H

#include "ergon/error.h"

#include <jansson.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ergon_mtime {
	int started, ended;
	double mono_start_s, mono_end_s;  /* ergon_clock_now_s() */
	int64_t utc_start_ns, utc_end_ns; /* CLOCK_REALTIME, ns since the epoch */
	int simulated;			  /* a simulated measuring clock was installed */
	int sync;			  /* 1 synchronised, 0 not (STA_UNSYNC), -1 unknown */
	double maxerror_s;		  /* the kernel's maximum error of the wall clock; NaN */
};

/* Mark the start (the end): both clocks are read now, the start also
 * reads the synchronisation state. */
ERGON_API void ergon_mtime_start(struct ergon_mtime *m);
ERGON_API void ergon_mtime_end(struct ergon_mtime *m);

/* The "measurement_time" object: start_utc, end_utc (ISO 8601 with
 * microseconds and Z), start_monotonic_s, end_monotonic_s, utc_source,
 * monotonic_source, utc_synchronized (true, false or null), utc_maxerror_s
 * (or null) and a note when the wall clock is not known to be
 * synchronised. An end not marked is null. New reference (NULL: out of
 * memory). */
ERGON_API json_t *ergon_mtime_json(const struct ergon_mtime *m);

/* The object for an artifact whose measurement time is not known to
 * ergon (samples or a recording made elsewhere): the times null, and why
 * in the note. start_utc, when not NULL, is a time the input itself
 * states (e.g. a recording's capture start), kept with its source. */
ERGON_API json_t *ergon_mtime_unknown_json(const char *why, const char *start_utc,
					   const char *start_source);

/* "YYYY-MM-DDTHH:MM:SS.uuuuuuZ" (27 characters and a NUL) of ns since the
 * epoch, UTC. The same text the database stores, so that its order is the
 * order of time. */
ERGON_API void ergon_utc_format(int64_t ns, char out[32]);

/* Now on CLOCK_REALTIME, ns since the epoch. */
ERGON_API int64_t ergon_utc_now_ns(void);

#ifdef __cplusplus
}
#endif
#endif
