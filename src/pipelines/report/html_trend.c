/* ergon report: the section of an ergon.trend artifact (`ergon db trend
 * --html`): one figure over the stored runs, oldest first. Counted points
 * (measured, not invalid) and the others are two separate series in two
 * colours, so a synthetic or replayed point is never drawn as part of the
 * measured line; the table lists every point with its provenance. */
#include "pipelines/report/report_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void text_td(struct ergon_dynbuf *b, const char *s)
{
	ergon_dynbuf_adds(b, "<td class=\"text\">");
	ergon_html_escape(b, s ? s : "—");
	ergon_dynbuf_adds(b, "</td>");
}

void hd_trend_section(struct ergon_dynbuf *b, const struct html_doc *d)
{
	const json_t *t = json_object_get(d->a, "trend");
	const json_t *pts = json_object_get(t, "points");
	const char *fig = json_string_value(json_object_get(t, "figure"));
	const char *unit = json_string_value(json_object_get(t, "unit"));
	size_t n = json_array_size(pts);
	double *x = calloc(n ? 2 * n : 1, sizeof *x);
	double *y = calloc(n ? 2 * n : 1, sizeof *y);
	if (!x || !y) {
		free(x);
		free(y);
		ergon_dynbuf_adds(b, "<p class=\"bad\">out of memory: the trend is not drawn</p>");
		return;
	}
	/* Counted points fill x[0..nc), the others x[n..n+no). */
	size_t nc = 0, no = 0;
	double lo = INFINITY, hi = -INFINITY;
	for (size_t i = 0; i < n; i++) {
		const json_t *p = json_array_get(pts, i);
		const json_t *v = json_object_get(p, "value");
		if (!json_is_number(v))
			continue;
		double val = json_number_value(v);
		lo = fmin(lo, val);
		hi = fmax(hi, val);
		if (json_is_true(json_object_get(p, "counted"))) {
			x[nc] = (double)i;
			y[nc++] = val;
		} else {
			x[n + no] = (double)i;
			y[n + no++] = val;
		}
	}
	ergon_dynbuf_addf(b, "<h3>Trend</h3><p><b>%zu</b> point(s) of <code>", n);
	ergon_html_escape(b, fig);
	ergon_dynbuf_adds(b, "</code> on device <code>");
	ergon_html_escape(b, json_string_value(json_object_get(t, "device")));
	ergon_dynbuf_adds(b, "</code>");
	if (json_string_value(json_object_get(t, "board"))) {
		ergon_dynbuf_adds(b, ", board <code>");
		ergon_html_escape(b, json_string_value(json_object_get(t, "board")));
		ergon_dynbuf_adds(b, "</code>");
	}
	ergon_dynbuf_addf(b,
			  ": %zu measured (counted), %zu synthetic, replayed or invalid (shown "
			  "apart, never counted).</p>\n",
			  nc, n - nc);
	if (nc + no > 0) {
		struct hp_plot pl;
		char id[64];
		hd_id(id, sizeof id, d, "trend");
		hp_begin(&pl, id, -0.5, (double)n - 0.5, fmin(lo, 0), hi);
		if (nc)
			hp_line(&pl, x, y, nc, "s0", "measured (counted)");
		if (no)
			hp_line(&pl, x + n, y + n, no, "s3",
				"synthetic, replayed or invalid (not counted)");
		char ylabel[96];
		snprintf(ylabel, sizeof ylabel, "%s%s%s%s", fig ? fig : "value",
			 unit && unit[0] ? " (" : "", unit ? unit : "", unit && unit[0] ? ")" : "");
		hp_end(&pl, b, "The figure over the stored runs", "run (oldest first)", ylabel,
		       "Each point is one stored run. Points that are not measurements are "
		       "a separate series: never joined to the measured line.");
	}
	free(x);
	free(y);
	ergon_dynbuf_adds(b, "<table class=\"figures\"><caption>points</caption><tr><th>#</th>"
			     "<th>time</th><th>report_id</th><th>provenance</th><th>counted</th>"
			     "<th>value</th><th>±</th></tr>\n");
	for (size_t i = 0; i < n; i++) {
		const json_t *p = json_array_get(pts, i);
		char path[64];
		ergon_dynbuf_addf(b, "<tr data-counted=\"%s\"><td>%zu</td>",
				  json_is_true(json_object_get(p, "counted")) ? "yes" : "no", i);
		text_td(b, json_string_value(json_object_get(p, "time")));
		text_td(b, json_string_value(json_object_get(p, "report_id")));
		text_td(b, json_string_value(json_object_get(p, "provenance")));
		text_td(b, json_is_true(json_object_get(p, "counted")) ? "yes" : "no");
		snprintf(path, sizeof path, "trend.points[%zu].value", i);
		hd_figure_cell(b, path, json_object_get(p, "value"), unit ? unit : "");
		snprintf(path, sizeof path, "trend.points[%zu].u", i);
		hd_figure_cell(b, path, json_object_get(p, "u"), unit ? unit : "");
		ergon_dynbuf_adds(b, "</tr>\n");
	}
	ergon_dynbuf_adds(b, "</table>\n");
}
