/* ergon view: recordings as one page to explore (docs/internals/view.md).
 *
 * The page is self-contained: current, voltage, power and the digital
 * lines of one or two JLS recordings on a shared time axis, drawn from a
 * min/max/mean pyramid built over the finest bins embedded; zoom, pan, two
 * cursors and a selection whose statistics (Δt, mean/min/max current and
 * power, charge, energy) are computed from those bins and shown in
 * #selection-stats (also as data- attributes). A summary's gate windows,
 * ignored pulses and layer markers are drawn over its recording.
 * Serving the page on loopback with tiles read from the recording on
 * demand (ergon view --serve) is not written yet: serve_token is its hook.
 */
#ifndef ERGON_VIEW_H
#define ERGON_VIEW_H

#include "ergon/error.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ERGON_VIEW_RECORDINGS_MAX 2u
/* Bins embedded per recording unless asked otherwise: the finest decimal
 * bin size (1, 10, 100, ... samples) that keeps a recording at or under
 * this many bins. */
#define ERGON_VIEW_MAX_BINS_DEFAULT 100000u

struct ergon_view_input {
	const char *jls_path;	  /* the recording */
	const char *summary_path; /* its summary.json (analyze/profile), or NULL */
	/* The summary must record this recording's size and SHA-256
	 * (provenance.recording) or the page is refused (ERGON_EREFUSED);
	 * with force_jls it is drawn, the page saying it is not shown to
	 * belong. */
	int force_jls;
};

struct ergon_view_options {
	uint64_t max_bins; /* 0 = ERGON_VIEW_MAX_BINS_DEFAULT; a multiple of 10 */
	/* A served page's token (not written yet: ergon view --serve); NULL. */
	const char *serve_token;
};

/* The page for n (1..ERGON_VIEW_RECORDINGS_MAX) recordings. *html is
 * malloc'd (caller frees). Errors name the file and what is wrong. */
ERGON_API int ergon_view_html(const struct ergon_view_input *in, size_t n,
			      const struct ergon_view_options *o, char **html, size_t *len,
			      struct ergon_err *err);
/* Render and write atomically to out (ERGON_WRITE_* flags; an existing file
 * is refused without ERGON_WRITE_FORCE, checked before reading anything). */
ERGON_API int ergon_view_write(const struct ergon_view_input *in, size_t n,
			       const struct ergon_view_options *o, const char *out, unsigned flags,
			       struct ergon_err *err);

#ifdef __cplusplus
}
#endif
#endif
