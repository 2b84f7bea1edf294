/* `ergon record`: a streaming instrument to a JLS v2 file, bounded by a
 * duration, the fall of a gate line, or the caller's stop flag (Ctrl-C).
 *
 * Samples are placed by their instrument timestamps at the identity's
 * sample rate: a sample that arrives after a gap (a counter gap the driver
 * reported) leaves the missing samples as NaN current/voltage/power, never
 * interpolated; digital lines hold their last value across the gap so that
 * a gap does not fake a gate edge (the NaN samples carry no energy). What
 * was recorded is kept whatever stops the recording: a disconnect keeps
 * everything before it (marked incomplete in the file's closing note), a
 * full disk keeps what fits as a valid JLS file.
 */
#ifndef ERGON_RECORD_H
#define ERGON_RECORD_H

#include "ergon/error.h"
#include "ergon/instrument.h"
#include "ergon/issue_list.h"
#include "ergon/jls_writer.h"
#include "ergon/reserve.h"

#include <jansson.h>
#include <signal.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ergon_record_progress {
	double elapsed_s;      /* recorded time (samples / rate) */
	uint64_t samples;      /* samples written (gaps included) */
	uint64_t dropped;      /* samples lost (NaN in the file) */
	double mean_current_a; /* over the finite samples so far */
};

struct ergon_record_options {
	const char *instrument_spec;
	struct ergon_instrument_options instrument_opts;
	const char *out_path;
	int force;
	double duration_s;		  /* > 0: stop after this much recorded time */
	int until_gate_falls;		  /* stop when sync_input_index falls after rising */
	unsigned sync_input_index;	  /* digital line of the gate (D0/INPUT0 = 0) */
	volatile sig_atomic_t *stop_flag; /* raised by the caller (SIGINT); may be NULL */
	/* About 4 times a second; may be NULL. */
	void (*progress)(void *ctx, const struct ergon_record_progress *p);
	void *progress_ctx;
	ergon_jls_pwrite_fn pwrite_fn; /* NULL = pwrite (tests inject faults) */
};

enum ergon_record_stop {
	ERGON_RECORD_DURATION = 1,   /* the duration was reached */
	ERGON_RECORD_GATE_FELL = 2,  /* --until-gate-falls */
	ERGON_RECORD_STOPPED = 3,    /* the stop flag (Ctrl-C) */
	ERGON_RECORD_INSTRUMENT = 4, /* the instrument failed or went away */
	ERGON_RECORD_WRITE = 5,	     /* the file could not take more (disk full) */
};

struct ergon_record_result {
	int stop;	       /* enum ergon_record_stop; 0 if nothing was recorded */
	int complete;	       /* 1 unless the instrument or the disk cut it short */
	uint64_t samples;      /* written, gaps included */
	uint64_t samples_kept; /* in complete chunks on disk */
	uint64_t dropped;      /* lost samples (NaN) */
	uint64_t out_of_order; /* samples whose timestamp went backwards: not written */
	uint64_t bytes;
	double elapsed_s;
	double mean_current_a;
	char stop_reason[ERGON_ERR_MSG_MAX];
	/* Writes that failed and succeeded once the space reserved before the
	 * recording was released (and the errno of the last). */
	uint64_t write_retries;
	int write_errno;
	/* The same identity and issues as JSON, as the file's closing note
	 * holds them, for a caller that writes them out (ergon record
	 * --json); NULL when the instrument did not open. */
	json_t *identity;
	json_t *issues;
	/* Typed: the recording's path (as given), what recorded it and what
	 * its figures are: the instrument's identity as it opened (vendor,
	 * model, serial, sample_rate_hz, rails, rating, ...; zero when it did
	 * not open) and its provenance (enum ergon_provenance: measured for a
	 * real instrument, synthetic for a simulator; 0 when it did not
	 * open), the sample rate the file is written at, and what the
	 * instrument reported (the issues above, typed). */
	char out_path[ERGON_OUT_PATH_MAX];
	int provenance;
	double sample_rate_hz;
	struct ergon_instrument_identity instrument;
	struct ergon_issue_list issue_list;
};

/* Record. Returns 0 when a file was written and closed, whatever stopped
 * the recording (res->stop and res->complete say what; the file's closing
 * note says it too); a negative ERGON_E* when nothing could be recorded
 * (bad spec, existing file without force, not a streaming instrument, no
 * sample before the stop: ERGON_EINTR or ERGON_EDEVICE, no file) or when
 * the disk filled (ERGON_EIO; the file is valid up to what fit). An
 * instrument that sends nothing for 2 s has stalled: the recording stops,
 * incomplete.
 * *res is filled either way (its figures say what is in the file); free
 * what it holds with ergon_record_result_cleanup. */
ERGON_API int ergon_record_run(const struct ergon_record_options *o,
			       struct ergon_record_result *res, struct ergon_err *err);
/* Free what a result holds (the JSON identity and issues, the typed issue
 * list); its figures stay. A second cleanup is harmless. */
ERGON_API void ergon_record_result_cleanup(struct ergon_record_result *res);

#ifdef __cplusplus
}
#endif
#endif
