/* ergon report: the section of an ergon.compare artifact (inputs,
 * comparability, the figure table with the verdicts, the layer diff). */
#include "pipelines/report/report_internal.h"
#include "pipelines/common/common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Layer rows shown; the full diff is layer_diff.csv. */
#define LAYER_ROWS_MAX 400

static void text_cell(struct ergon_dynbuf *b, const json_t *v)
{
	ergon_dynbuf_adds(b, "<td>");
	if (json_is_string(v)) {
		ergon_html_escape(b, json_string_value(v));
	} else if (v == NULL || json_is_null(v)) {
		ergon_dynbuf_adds(b, "—");
	} else {
		char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
		ergon_html_escape(b, s ? s : "null");
		free(s);
	}
	ergon_dynbuf_adds(b, "</td>");
}

static void inputs_table(struct ergon_dynbuf *b, const json_t *inputs)
{
	ergon_dynbuf_adds(b, "<table class=\"kv\"><caption>artifacts (A is the baseline)</caption>"
			     "<tr><th></th><th>artifact</th><th>provenance</th><th>report_id</th>"
			     "<th>signed by</th></tr>\n");
	size_t i;
	json_t *x;
	json_array_foreach(inputs, i, x)
	{
		ergon_dynbuf_addf(b, "<tr><th>%c</th>", (int)('A' + i));
		text_cell(b, json_object_get(x, "label"));
		text_cell(b, json_object_get(x, "provenance"));
		text_cell(b, json_object_get(x, "report_id"));
		text_cell(b, json_object_get(x, "signer"));
		ergon_dynbuf_adds(b, "</tr>\n");
	}
	ergon_dynbuf_adds(b, "</table>\n");
}

static void differences_table(struct ergon_dynbuf *b, const json_t *cmp, size_t n)
{
	const json_t *diffs = json_object_get(cmp, "differences");
	int comparable = json_is_true(json_object_get(cmp, "comparable"));
	int forced = json_is_true(json_object_get(cmp, "forced"));
	ergon_dynbuf_addf(b, "<div class=\"banner %s\">%s</div>\n", comparable ? "ok" : "bad",
			  comparable ? "Comparable: no identity field that matters differs."
			  : forced   ? "NOT comparable — compared anyway (--force-incomparable)."
				     : "NOT comparable: refused, no figures compared.");
	if (json_array_size(diffs) == 0)
		return;
	ergon_dynbuf_adds(b, "<table class=\"kv\"><caption>identity fields that differ</caption>"
			     "<tr><th>field</th><th>class</th>");
	for (size_t j = 0; j < n; j++)
		ergon_dynbuf_addf(b, "<th>%c</th>", (int)('A' + j));
	ergon_dynbuf_adds(b, "</tr>\n");
	size_t i;
	json_t *x;
	json_array_foreach(diffs, i, x)
	{
		const char *cls = json_string_value(json_object_get(x, "class"));
		ergon_dynbuf_addf(b, "<tr class=\"%s\">",
				  cls && strcmp(cls, "breaks") == 0 ? "sev-error" : "");
		text_cell(b, json_object_get(x, "field"));
		text_cell(b, json_object_get(x, "class"));
		for (size_t j = 0; j < n; j++)
			text_cell(b, json_array_get(json_object_get(x, "values"), j));
		ergon_dynbuf_adds(b, "</tr>\n");
	}
	ergon_dynbuf_adds(b, "</table>\n");
}

static void figures_table(struct ergon_dynbuf *b, const json_t *figs, size_t n)
{
	ergon_dynbuf_adds(b, "<div class=\"scroll\"><table class=\"wide\"><caption>figures "
			     "(* counts for the regression verdict; ± combined linearly)</caption>"
			     "<tr><th>figure</th>");
	for (size_t j = 0; j < n; j++)
		ergon_dynbuf_addf(b, "<th>%c</th><th>±</th>", (int)('A' + j));
	for (size_t j = 1; j < n; j++)
		ergon_dynbuf_addf(b, "<th>%c−A</th><th>%%</th><th>verdict</th>", (int)('A' + j));
	ergon_dynbuf_adds(b, "</tr>\n");
	size_t i;
	json_t *f;
	json_array_foreach(figs, i, f)
	{
		const char *unit = json_string_value(json_object_get(f, "unit"));
		char path[160];
		ergon_dynbuf_adds(b, "<tr><td>");
		if (json_is_true(json_object_get(f, "headline")))
			ergon_dynbuf_adds(b, "* ");
		ergon_html_escape(b, json_string_value(json_object_get(f, "name")));
		ergon_dynbuf_adds(b, "</td>");
		for (size_t j = 0; j < n; j++) {
			const json_t *v = json_array_get(json_object_get(f, "values"), j);
			snprintf(path, sizeof path, "figures[%zu].values[%zu].value", i, j);
			hd_figure_cell(b, path, json_object_get(v, "value"), unit ? unit : "");
			snprintf(path, sizeof path, "figures[%zu].values[%zu].u", i, j);
			hd_figure_cell(b, path, json_object_get(v, "u"), unit ? unit : "");
		}
		for (size_t j = 1; j < n; j++) {
			const json_t *v = json_array_get(json_object_get(f, "versus"), j - 1);
			snprintf(path, sizeof path, "figures[%zu].versus[%zu].diff", i, j - 1);
			hd_figure_cell(b, path, json_object_get(v, "diff"), unit ? unit : "");
			snprintf(path, sizeof path, "figures[%zu].versus[%zu].pct", i, j - 1);
			hd_figure_cell(b, path, json_object_get(v, "pct"), "%");
			text_cell(b, json_object_get(v, "verdict"));
		}
		ergon_dynbuf_adds(b, "</tr>\n");
	}
	ergon_dynbuf_adds(b, "</table></div>\n");
}

static void layers_table(struct ergon_dynbuf *b, const json_t *layers, size_t n)
{
	size_t rows = json_array_size(layers);
	if (rows == 0)
		return;
	ergon_dynbuf_adds(b, "<div class=\"scroll\"><table class=\"wide\"><caption>per-layer "
			     "diff (layer_diff.csv)</caption><tr><th>layer</th><th>op</th>"
			     "<th>counter</th>");
	for (size_t j = 0; j < n; j++)
		ergon_dynbuf_addf(b, "<th>%c</th>", (int)('A' + j));
	for (size_t j = 1; j < n; j++)
		ergon_dynbuf_addf(b, "<th>%c−A</th><th>%c/A</th>", (int)('A' + j), (int)('A' + j));
	ergon_dynbuf_adds(b, "</tr>\n");
	for (size_t i = 0; i < rows && i < LAYER_ROWS_MAX; i++) {
		const json_t *r = json_array_get(layers, i);
		char path[160];
		ergon_dynbuf_addf(b, "<tr><td>%lld</td>",
				  (long long)json_integer_value(json_object_get(r, "layer")));
		text_cell(b, json_object_get(r, "op"));
		text_cell(b, json_object_get(r, "counter"));
		for (size_t j = 0; j < n; j++) {
			snprintf(path, sizeof path, "layers[%zu].values[%zu]", i, j);
			hd_figure_cell(b, path, json_array_get(json_object_get(r, "values"), j),
				       "");
		}
		for (size_t j = 1; j < n; j++) {
			snprintf(path, sizeof path, "layers[%zu].diff[%zu]", i, j - 1);
			hd_figure_cell(b, path, json_array_get(json_object_get(r, "diff"), j - 1),
				       "");
			snprintf(path, sizeof path, "layers[%zu].ratio[%zu]", i, j - 1);
			hd_figure_cell(b, path, json_array_get(json_object_get(r, "ratio"), j - 1),
				       "");
		}
		ergon_dynbuf_adds(b, "</tr>\n");
	}
	ergon_dynbuf_adds(b, "</table></div>\n");
	if (rows > LAYER_ROWS_MAX)
		ergon_dynbuf_addf(b,
				  "<p class=\"caption\">First %d of %zu rows; layer_diff.csv has "
				  "them all.</p>\n",
				  LAYER_ROWS_MAX, rows);
}

void hd_compare_section(struct ergon_dynbuf *b, const struct html_doc *d)
{
	const json_t *a = d->a;
	const json_t *inputs = json_object_get(a, "inputs");
	size_t n = json_array_size(inputs);
	ergon_dynbuf_adds(b, "<h3>Comparison</h3>\n");
	inputs_table(b, inputs);
	differences_table(b, json_object_get(a, "comparability"), n);
	const char *verdict = json_string_value(ergon_jpath(a, "regression.verdict"));
	if (verdict) {
		int reg = strcmp(verdict, "regression") == 0;
		ergon_dynbuf_addf(
		    b, "<div class=\"banner %s\">Regression verdict: ", reg ? "bad" : "ok");
		ergon_html_escape(b, verdict);
		ergon_dynbuf_adds(b, "</div>\n");
	}
	if (json_is_array(json_object_get(a, "figures")))
		figures_table(b, json_object_get(a, "figures"), n);
	layers_table(b, json_object_get(a, "layers"), n);
	const json_t *only = json_object_get(a, "only_in");
	if (json_array_size(only) == 0)
		return;
	ergon_dynbuf_adds(b, "<table class=\"kv\"><caption>not in every artifact (not "
			     "compared)</caption><tr><th>case</th><th>impl</th><th>only in</th>"
			     "</tr>\n");
	size_t i;
	json_t *x;
	json_array_foreach(only, i, x)
	{
		ergon_dynbuf_adds(b, "<tr>");
		text_cell(b, json_object_get(x, "case"));
		text_cell(b, json_object_get(x, "impl"));
		text_cell(b, json_object_get(x, "in"));
		ergon_dynbuf_adds(b, "</tr>\n");
	}
	ergon_dynbuf_adds(b, "</table>\n");
}
