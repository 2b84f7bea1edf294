/* ergon report: one self-contained HTML file for any artifact ergon writes
 * (docs/internals/report_html.md). Plots are inline SVG drawn here; the
 * page loads nothing (a Content-Security-Policy of default-src 'none'
 * says so to the browser), and a small inline script checks the page
 * against itself and writes its findings into #ergon-selfcheck.
 */
#ifndef ERGON_REPORT_HTML_H
#define ERGON_REPORT_HTML_H

#include "ergon/error.h"

#include <jansson.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Artifacts larger than this are not read. */
#define ERGON_HTML_ARTIFACT_MAX ((size_t)1 << 31)
#define ERGON_HTML_INPUTS_MAX 32

struct ergon_html_input {
	const char *path;     /* the artifact */
	const char *jls_path; /* its recording (profile/analyze), or NULL */
	/* The artifact itself (borrowed), or NULL to read path; when given,
	 * path is only the name the page shows for it. */
	const json_t *artifact;
	/* Draw jls_path even when it is not shown to be the summary's
	 * recording (its size and SHA-256); the page says so. */
	int force_jls;
};

struct ergon_html_options {
	const char *pubkey_path; /* check signatures with this key, or NULL */
};

/* Render n artifacts into one HTML document. A truncated artifact is
 * rendered from the part that parses (marked); a tampered one is rendered
 * and marked; an artifact of an unknown schema refuses the whole report
 * (ERGON_EUSAGE naming it). A recording (jls_path) that is not shown to be
 * the one its summary was made from (size and SHA-256 against the
 * summary's provenance.recording; a summary that records none shows
 * nothing) refuses the report (ERGON_EREFUSED), unless force_jls: then it
 * is drawn under a banner saying so. *html is malloc'd (caller frees). */
ERGON_API int ergon_report_html(const struct ergon_html_input *in, size_t n,
				const struct ergon_html_options *o, char **html, size_t *len,
				struct ergon_err *err);

/* Render and write atomically to out (ERGON_WRITE_* flags; an existing
 * file is refused without ERGON_WRITE_FORCE, checked before rendering). */
ERGON_API int ergon_report_html_write(const struct ergon_html_input *in, size_t n,
				      const struct ergon_html_options *o, const char *out,
				      unsigned flags, struct ergon_err *err);

#ifdef __cplusplus
}
#endif
#endif
