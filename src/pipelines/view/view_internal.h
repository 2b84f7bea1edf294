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

/* The page around the data object (view_page.c). */
int view_page(json_t *data, const struct ergon_view_options *o, char **html, size_t *len,
	      struct ergon_err *err);

#endif
