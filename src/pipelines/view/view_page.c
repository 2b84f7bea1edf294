/* The page of `ergon view`: the data as JSON inside the document, the
 * script and style embedded at build time (view.js, view.css). */
#include "../common/common.h"
#include "view_internal.h"

#include <stdlib.h>
#include <string.h>

/* The largest page we make (a recording's bins are bounded by max_bins). */
#define PAGE_MAX ((size_t)1 << 30)

int view_page(json_t *data, const struct ergon_view_options *o, char **html, size_t *len,
	      struct ergon_err *err)
{
	if (o->serve_token != NULL)
		json_object_set_new(data, "serve", json_pack("{s:s}", "token", o->serve_token));
	char *js = json_dumps(data, JSON_COMPACT | JSON_ESCAPE_SLASH | JSON_REAL_PRECISION(17));
	if (js == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "view: out of memory");
	struct ergon_dynbuf b;
	ergon_dynbuf_init(&b, PAGE_MAX);
	const char *title = json_string_value(
	    json_object_get(json_array_get(json_object_get(data, "recordings"), 0), "name"));
	ergon_dynbuf_adds(&b,
			  "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
			  "<meta name=\"viewport\" content=\"width=device-width, "
			  "initial-scale=1\">\n"
			  "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
			  "'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'");
	/* Served, the page asks its own server for tiles; a file asks nobody. */
	if (o->serve_token != NULL)
		ergon_dynbuf_adds(&b, "; connect-src 'self'");
	ergon_dynbuf_adds(&b, "\">\n<title>ergon view: ");
	ergon_html_escape(&b, title ? title : "recording");
	ergon_dynbuf_adds(&b, "</title>\n<style>\n");
	ergon_dynbuf_adds(&b, (const char *)ergon_view_css);
	ergon_dynbuf_adds(
	    &b, "</style>\n</head>\n<body>\n"
		"<header><h1>ergon view</h1><div id=\"recordings\"></div>"
		"<div id=\"toolbar\"><button id=\"btn-fit\" type=\"button\">Fit</button> "
		"<button id=\"btn-zoom-sel\" type=\"button\">Zoom to selection</button> "
		"<button id=\"btn-clear-sel\" type=\"button\">Clear selection</button> "
		"<span id=\"hint\">wheel or pinch: zoom &middot; drag: pan &middot; "
		"Shift+drag, or drag on the time axis: select &middot; drag a cursor "
		"(A, B) to move it &middot; double-click: fit</span></div></header>\n"
		"<noscript><p>This page draws with JavaScript; enable it to see the "
		"recording.</p></noscript>\n"
		"<main id=\"plot-wrap\"><canvas id=\"plot\"></canvas></main>\n"
		"<section id=\"selection-stats\" data-state=\"none\" aria-live=\"polite\">"
		"<p>No selection: Shift+drag over the plot, or drag on the time axis."
		"</p></section>\n<section id=\"notes\"></section>\n"
		"<script type=\"application/json\" id=\"ergon-view-data\">");
	/* '<' only ever appears inside JSON strings: as \u003c it can never
	 * close the script element or open a comment in it. */
	for (const char *p = js; *p; p++) {
		const char *lt = strchr(p, '<');
		if (lt == NULL) {
			ergon_dynbuf_adds(&b, p);
			break;
		}
		ergon_dynbuf_add(&b, p, (size_t)(lt - p));
		ergon_dynbuf_adds(&b, "\\u003c");
		p = lt;
	}
	free(js);
	ergon_dynbuf_adds(&b, "</script>\n<script>\n");
	ergon_dynbuf_adds(&b, (const char *)ergon_view_js);
	ergon_dynbuf_adds(&b, "</script>\n</body>\n</html>\n");
	int rc = ergon_dynbuf_error(&b);
	if (rc) {
		ergon_dynbuf_free(&b);
		return ergon_err_set(err, rc, "view: the page does not fit in memory");
	}
	*html = ergon_dynbuf_take(&b, len);
	return 0;
}
