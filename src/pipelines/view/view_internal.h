/* The private header of `ergon view` (docs/internals/view.md). */
#ifndef ERGON_PIPELINES_VIEW_INTERNAL_H
#define ERGON_PIPELINES_VIEW_INTERNAL_H

#include "ergon/bins.h"
#include "ergon/dynbuf.h"
#include "ergon/jls.h"
#include "ergon/view.h"

#include <jansson.h>

/* The page's script and style (view.js, view.css), embedded at build time
 * (cmake/ErgonEmbed.cmake), NUL-terminated. */
extern const unsigned char ergon_view_js[];
extern const unsigned char ergon_view_css[];

/* The signals every recording's bins hold, in this order. */
enum { VIEW_CURRENT, VIEW_VOLTAGE, VIEW_POWER, VIEW_F32 };

/* Base64 of n bytes, appended to a JSON object under key. 0 or
 * ERGON_ENOMEM. */
int view_b64_set(json_t *obj, const char *key, const void *data, size_t n, struct ergon_err *err);

/* The data of one recording for the page (a JSON object, new reference in
 * *out): identity, the bins of the finest level, the lines, the summary's
 * overlays. */
int view_recording(const struct ergon_view_input *in, const struct ergon_view_options *o,
		   json_t **out, struct ergon_err *err);

/* Fills *b with a recording's bins, at most max_bins of them, for the n
 * lines named (their order): b is the caller's to ergon_bins_cleanup. */
typedef int (*view_fill_fn)(void *ctx, struct ergon_jls_reader *r, const char *const *lines,
			    size_t n_lines, uint64_t max_bins, struct ergon_bins *b,
			    struct ergon_err *err);
/* The fill of view_recording: every sample streamed once (ctx unused). */
int view_stream_fill(void *ctx, struct ergon_jls_reader *r, const char *const *lines,
		     size_t n_lines, uint64_t max_bins, struct ergon_bins *b,
		     struct ergon_err *err);
/* view_recording with the bins made by fill (view_recording streams every
 * sample; the server reads them from the recording's summary levels). */
int view_recording_with(const struct ergon_view_input *in, const struct ergon_view_options *o,
			view_fill_fn fill, void *fill_ctx, json_t **out, struct ergon_err *err);

/* The page around the data object (view_page.c). */
int view_page(json_t *data, const struct ergon_view_options *o, char **html, size_t *len,
	      struct ergon_err *err);

/* --- serving (view_serve.c: the requests; view_http.c: the HTTP daemon) */

/* Query parameters a request may carry; more is a bad request. */
#define VIEW_ARGS_MAX 16u

struct view_arg {
	const char *key;
	const char *value; /* NULL for a key without '=' */
};

/* An answer: status, content type, body (malloc'd when owned, else the
 * served state's), and the Allow header of a 405. */
struct view_reply {
	unsigned status;
	const char *type;
	char *body;
	size_t len;
	int owned;
	const char *allow;
};

/* The recordings being served, their level indexes, the page and the
 * token, independent of the HTTP library (the fuzzer drives it). */
struct view_served;

/* Open the recordings, index their levels, make the page (token embedded).
 * token: 32 lowercase hex digits. *out is the caller's (view_served_free). */
int view_served_open(const struct ergon_view_input *in, size_t n,
		     const struct ergon_view_options *o, const char *token,
		     struct view_served **out, struct ergon_err *err);
void view_served_free(struct view_served *s);
/* Answer one request: method, path (no query), its parameters. Never
 * fails: every outcome is a reply (500 only when memory runs out). */
void view_served_handle(struct view_served *s, const char *method, const char *path,
			const struct view_arg *args, size_t n_args, struct view_reply *r);
void view_reply_free(struct view_reply *r);

#endif
