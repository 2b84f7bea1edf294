/* ergon view: recordings as one page to explore (docs/internals/view.md).
 *
 * The page is self-contained: current, voltage, power and the digital
 * lines of one or two JLS recordings on a shared time axis, drawn from a
 * min/max/mean pyramid built over the finest bins embedded; zoom, pan, two
 * cursors and a selection whose statistics (Δt, mean/min/max current and
 * power, charge, energy) are computed from those bins and shown in
 * #selection-stats (also as data- attributes). A summary's gate windows,
 * ignored pulses and layer markers are drawn over its recording.
 * ergon_view_serve_start serves the page on 127.0.0.1 with tiles read
 * from the recording's own levels on demand (docs/internals/view.md).
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
	/* A served page's token (set by ergon_view_serve_start); NULL. */
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

/* Entries one tile request returns at most (GET /api/tile count=). */
#define ERGON_VIEW_TILE_MAX 8192u

struct ergon_view_server;

/* Serve the page of n recordings on 127.0.0.1: port 0 takes a free port
 * the system picks. Every request must carry the run's random token
 * (?token=, 128 bits, in ergon_view_server_url); the page asks
 * GET /api/tile for finer levels and GET /api/stats for a selection's
 * exact figures (docs/internals/view.md). Requests are answered one at a
 * time by one thread, at most 64 connections open. Caller stops and frees
 * with ergon_view_server_stop. ERGON_ENOTSUP when ergon was built without
 * libmicrohttpd; ERGON_EIO when the port cannot be bound. */
ERGON_API int ergon_view_serve_start(const struct ergon_view_input *in, size_t n,
				     const struct ergon_view_options *o, uint16_t port,
				     struct ergon_view_server **out, struct ergon_err *err);
/* "http://127.0.0.1:PORT/?token=TOKEN", valid until ergon_view_server_stop. */
ERGON_API const char *ergon_view_server_url(const struct ergon_view_server *s);
/* Requests answered so far. */
ERGON_API uint64_t ergon_view_server_requests(const struct ergon_view_server *s);
/* Stop the daemon (open connections are closed) and free; NULL is a no-op. */
ERGON_API void ergon_view_server_stop(struct ergon_view_server *s);

#ifdef __cplusplus
}
#endif
#endif
