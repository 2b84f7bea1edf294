/* ergon report: the section of an ergon.kernels artifact. Correctness
 * first (a banner, then the table where a failed case shows why it was
 * not timed), then per case and implementation min/median (with its
 * interval)/mean in the artifact's unit, the speedups with both means
 * beside them, the geometric means with their note, the refused cases,
 * timing and build, and two bar charts: the median per case and the
 * speedup per case. Beside each implementation its regression verdict
 * (regr, valid_for_regression and why); the --pmu-counters counts; where
 * the firmware put code, data and scratch (build.placement). */
#include "pipelines/report/report_internal.h"
#include "pipelines/common/common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Rows shown; kernels.csv has them all. */
#define KERNEL_ROWS_MAX 2000

static void text_td(struct ergon_dynbuf *b, const char *s)
{
	ergon_dynbuf_adds(b, "<td>");
	ergon_html_escape(b, s ? s : "—");
	ergon_dynbuf_adds(b, "</td>");
}

/* A text cell the browser test compares with the artifact: data-text-path
 * names the member; the text is the string, "yes"/"no" for a boolean, the
 * integer in full (an address or a size is never rounded). "—" without a
 * path where the artifact has nothing there. */
static void path_td(struct ergon_dynbuf *b, const char *path, const json_t *v)
{
	char num[32];
	const char *t = NULL;
	if (json_is_string(v))
		t = json_string_value(v);
	else if (json_is_boolean(v))
		t = json_is_true(v) ? "yes" : "no";
	else if (json_is_integer(v)) {
		snprintf(num, sizeof num, "%lld", (long long)json_integer_value(v));
		t = num;
	}
	if (t == NULL) {
		ergon_dynbuf_adds(b, "<td class=\"na\">—</td>");
		return;
	}
	ergon_dynbuf_adds(b, "<td class=\"text\" data-text-path=\"");
	ergon_html_escape(b, path);
	ergon_dynbuf_adds(b, "\">");
	ergon_html_escape(b, t);
	ergon_dynbuf_adds(b, "</td>");
}

/* The speedup entry of impl in case c, or NULL. */
static const json_t *speedup_of(const json_t *c, const char *impl, size_t *idx)
{
	size_t i;
	const json_t *s;
	json_array_foreach(json_object_get(c, "speedups"), i, s)
	{
		const char *m = json_string_value(json_object_get(s, "impl"));
		if (m && impl && strcmp(m, impl) == 0) {
			*idx = i;
			return s;
		}
	}
	return NULL;
}

static void correctness_banner(struct ergon_dynbuf *b, const json_t *sec)
{
	size_t pairs = 0, i, k;
	const json_t *c, *m;
	json_array_foreach(json_object_get(sec, "cases"), i, c) pairs +=
	    json_array_size(json_object_get(c, "impls"));
	size_t failed = json_array_size(json_object_get(sec, "failures"));
	if (failed == 0) {
		ergon_dynbuf_addf(
		    b,
		    "<div class=\"banner ok\">Correctness: all %zu case/implementation "
		    "pairs matched the reference; only those were timed.</div>\n",
		    pairs);
		return;
	}
	ergon_dynbuf_addf(b,
			  "<div class=\"banner bad\">Correctness: %zu of %zu case/implementation "
			  "pairs differ from the reference and were NOT timed:",
			  failed, pairs);
	json_array_foreach(json_object_get(sec, "failures"), k, m)
	{
		ergon_dynbuf_adds(b, " ");
		ergon_html_escape(b, json_string_value(json_object_get(m, "case")));
		ergon_dynbuf_adds(b, " [");
		ergon_html_escape(b, json_string_value(json_object_get(m, "impl")));
		ergon_dynbuf_adds(b, "]");
	}
	ergon_dynbuf_adds(b, "</div>\n");
}

static void cases_table(struct ergon_dynbuf *b, const json_t *sec)
{
	const char *unit = json_string_value(json_object_get(sec, "unit"));
	ergon_dynbuf_adds(b, "<div class=\"scroll\"><table class=\"wide\"><caption>cases (");
	ergon_html_escape(b, unit ? unit : "counts");
	ergon_dynbuf_adds(b, "; speedup = baseline mean / candidate mean, &gt; 1 is faster; "
			     "median interval: distribution-free, its coverage per row)</caption>"
			     "<tr><th>case</th><th>impl</th><th>correct</th><th>n</th><th>min</th>"
			     "<th>median</th><th>interval low</th><th>interval high</th>"
			     "<th>coverage</th><th>mean</th><th>speedup</th><th>baseline mean</th>"
			     "<th>candidate mean</th><th title=\"valid_for_regression: correct, "
			     "timed with n &gt;= 6, the median's interval within 5 % of the "
			     "median\">regr</th><th>regression reason</th></tr>\n");
	size_t i, k, rows = 0, total = 0;
	const json_t *c, *m;
	json_array_foreach(json_object_get(sec, "cases"), i, c)
	{
		json_array_foreach(json_object_get(c, "impls"), k, m)
		{
			if (total++ >= KERNEL_ROWS_MAX)
				continue;
			rows++;
			char path[160];
			const char *impl = json_string_value(json_object_get(m, "impl"));
			int correct = json_is_true(json_object_get(m, "correct"));
			ergon_dynbuf_addf(b, "<tr class=\"%s\">", correct ? "" : "sev-error");
			text_td(b, json_string_value(json_object_get(c, "case")));
			text_td(b, impl);
			if (correct && json_is_true(json_object_get(m, "timed")))
				text_td(b, "pass");
			else if (correct)
				text_td(b, json_string_value(json_object_get(m, "why")));
			else
				text_td(b, "FAIL: output differs from the reference, not timed");
			static const char *const keys[] = {"n", "min", "median"};
			for (size_t q = 0; q < 3; q++) {
				snprintf(path, sizeof path, "kernels.cases[%zu].impls[%zu].%s", i,
					 k, keys[q]);
				hd_figure_cell(b, path, json_object_get(m, keys[q]), "");
			}
			static const char *const ci[] = {"lo", "hi", "coverage"};
			for (size_t q = 0; q < 3; q++) {
				snprintf(path, sizeof path,
					 "kernels.cases[%zu].impls[%zu].median_ci.%s", i, k, ci[q]);
				hd_figure_cell(
				    b, path,
				    json_object_get(json_object_get(m, "median_ci"), ci[q]), "");
			}
			snprintf(path, sizeof path, "kernels.cases[%zu].impls[%zu].mean", i, k);
			hd_figure_cell(b, path, json_object_get(m, "mean"), "");
			size_t si = 0;
			const json_t *sp = speedup_of(c, impl, &si);
			static const char *const sk[] = {"speedup", "baseline_mean",
							 "candidate_mean"};
			for (size_t q = 0; q < 3; q++) {
				snprintf(path, sizeof path, "kernels.cases[%zu].speedups[%zu].%s",
					 i, si, sk[q]);
				hd_figure_cell(b, path, sp ? json_object_get(sp, sk[q]) : NULL, "");
			}
			static const char *const rk[] = {"valid_for_regression",
							 "regression_reason"};
			for (size_t q = 0; q < 2; q++) {
				snprintf(path, sizeof path, "kernels.cases[%zu].impls[%zu].%s", i,
					 k, rk[q]);
				path_td(b, path, json_object_get(m, rk[q]));
			}
			ergon_dynbuf_adds(b, "</tr>\n");
		}
	}
	ergon_dynbuf_adds(b, "</table></div>\n");
	if (rows < total)
		ergon_dynbuf_addf(
		    b,
		    "<p class=\"caption\">First %zu of %zu rows; kernels.csv has them "
		    "all.</p>\n",
		    rows, total);
}

static void geomean_table(struct ergon_dynbuf *b, const json_t *sec)
{
	const json_t *gm = json_object_get(sec, "geomean");
	if (json_array_size(gm) == 0)
		return;
	ergon_dynbuf_adds(b,
			  "<table class=\"kv\"><caption>geometric mean of the speedups"
			  "</caption><tr><th>impl</th><th>cases</th><th>speedup</th><th>note</th>"
			  "</tr>\n");
	size_t j;
	const json_t *g;
	json_array_foreach(gm, j, g)
	{
		char path[96];
		ergon_dynbuf_adds(b, "<tr>");
		text_td(b, json_string_value(json_object_get(g, "impl")));
		snprintf(path, sizeof path, "kernels.geomean[%zu].cases", j);
		hd_figure_cell(b, path, json_object_get(g, "cases"), "");
		snprintf(path, sizeof path, "kernels.geomean[%zu].speedup", j);
		hd_figure_cell(b, path, json_object_get(g, "speedup"), "");
		text_td(b, json_string_value(json_object_get(g, "note")));
		ergon_dynbuf_adds(b, "</tr>\n");
	}
	ergon_dynbuf_adds(b, "</table>\n");
}

static void refused_table(struct ergon_dynbuf *b, const json_t *refused)
{
	if (json_array_size(refused) == 0)
		return;
	ergon_dynbuf_adds(b, "<table class=\"kv\"><caption>refused cases (never run)</caption>"
			     "<tr><th>line</th><th>case</th><th>why</th></tr>\n");
	size_t i;
	const json_t *x;
	json_array_foreach(refused, i, x)
	{
		char line[32] = "—";
		if (json_is_integer(json_object_get(x, "line")))
			snprintf(line, sizeof line, "%lld",
				 (long long)json_integer_value(json_object_get(x, "line")));
		ergon_dynbuf_adds(b, "<tr>");
		text_td(b, line);
		text_td(b, json_string_value(json_object_get(x, "case")));
		text_td(b, json_string_value(json_object_get(x, "why")));
		ergon_dynbuf_adds(b, "</tr>\n");
	}
	ergon_dynbuf_adds(b, "</table>\n");
}

/* The implementation names of the section (array member `member` of
 * every case: "impls" or "speedups"), in order of first appearance. */
static json_t *impl_names(const json_t *sec, const char *member)
{
	json_t *names = json_array();
	size_t i, k, q;
	const json_t *c, *m, *x;
	json_array_foreach(json_object_get(sec, "cases"), i, c)
	{
		json_array_foreach(json_object_get(c, member), k, m)
		{
			const char *s = json_string_value(json_object_get(m, "impl"));
			/* A case without an impl name draws nothing (the
			 * consistency checks name it). */
			int seen = s == NULL;
			if (!seen) {
				json_array_foreach(names, q, x) seen |=
				    strcmp(json_string_value(x), s) == 0;
			}
			if (!seen)
				json_array_append_new(names, json_string(s));
		}
	}
	return names;
}

/* Bars per case, one series per implementation: the median (what ==
 * "median", from impls[]) or the speedup (from speedups[]). */
static void chart(struct ergon_dynbuf *b, const struct html_doc *d, const json_t *sec,
		  const char *what)
{
	int speed = strcmp(what, "speedup") == 0;
	const char *member = speed ? "speedups" : "impls";
	const json_t *cases = json_object_get(sec, "cases");
	size_t nc = json_array_size(cases);
	json_t *names = impl_names(sec, member);
	size_t ni = json_array_size(names);
	double *x = calloc(nc + 1, sizeof(double)), *w = calloc(nc + 1, sizeof(double));
	double *y = calloc(nc + 1, sizeof(double));
	double top = 0;
	size_t drawn = 0;
	for (size_t i = 0; i < nc; i++) {
		size_t k;
		const json_t *m;
		json_array_foreach(json_object_get(json_array_get(cases, i), member), k, m)
		{
			double v = hd_num(m, speed ? "speedup" : "median");
			if (isfinite(v) && v > top)
				top = v;
		}
	}
	if (x == NULL || w == NULL || y == NULL || ni == 0 || nc == 0 || !(top > 0))
		goto out;
	struct hp_plot pl;
	char id[96];
	hd_id(id, sizeof id, d, speed ? "kernels-speedup" : "kernels-median");
	hp_begin(&pl, id, -0.5, (double)nc - 0.5, 0, top * 1.05);
	for (size_t j = 0; j < ni; j++) {
		const char *impl = json_string_value(json_array_get(names, j));
		size_t k_found = 0;
		for (size_t i = 0; i < nc; i++) {
			y[i] = NAN;
			size_t k;
			const json_t *m;
			json_array_foreach(json_object_get(json_array_get(cases, i), member), k, m)
			{
				const char *s = json_string_value(json_object_get(m, "impl"));
				if (s && strcmp(s, impl) == 0)
					y[i] = hd_num(m, speed ? "speedup" : "median");
			}
			x[i] = (double)i - 0.4 + 0.8 * (double)j / (double)ni;
			w[i] = 0.8 / (double)ni;
			k_found += isfinite(y[i]) ? 1u : 0u;
		}
		if (k_found == 0)
			continue; /* never timed: no empty series */
		char cls[8];
		snprintf(cls, sizeof cls, "s%zu", j % 6);
		hp_bars(&pl, x, w, y, nc, cls, impl);
		drawn++;
	}
	char cap[240];
	snprintf(cap, sizeof cap,
		 "Cases 0..%zu left to right, in the table's order; %s. Untimed "
		 "implementations (failed correctness) have no bar.",
		 nc - 1,
		 speed ? "bar height = baseline mean / candidate mean (above 1: the candidate is "
			 "faster)"
		       : "bar height = the median count of one iteration");
	char unit[64];
	snprintf(unit, sizeof unit, "%s",
		 json_string_value(json_object_get(sec, "unit"))
		     ? json_string_value(json_object_get(sec, "unit"))
		     : "counts");
	if (drawn > 0)
		hp_end(&pl, b, speed ? "Speedup per case" : "Median per case", "case",
		       speed ? "speedup (x)" : unit, cap);
	else
		hp_discard(&pl);
out:
	free(x);
	free(w);
	free(y);
	json_decref(names);
}

/* Where the kernel firmware put code, data and scratch (build.placement,
 * read from the ELF by ergon; qemu-an547 only): one row per region. */
static void placement_table(struct ergon_dynbuf *b, const json_t *pl)
{
	if (!json_is_object(pl))
		return;
	ergon_dynbuf_adds(b, "<table class=\"kv\"><caption>placement (");
	ergon_html_escape(b, json_string_value(json_object_get(pl, "tool")));
	ergon_dynbuf_adds(b, ")</caption><tr><th>region</th><th>section</th><th>symbol</th>"
			     "<th>address</th><th>size (bytes)</th><th>memory</th></tr>\n");
	const char *key;
	const json_t *r;
	json_object_foreach((json_t *)pl, key, r)
	{
		if (!json_is_object(r))
			continue;
		char path[160];
		static const char *const cols[] = {"section", "symbol", "addr_hex", "size",
						   "memory"};
		ergon_dynbuf_adds(b, "<tr>");
		text_td(b, key);
		for (size_t q = 0; q < 5; q++) {
			snprintf(path, sizeof path, "build.placement.%s.%s", key, cols[q]);
			path_td(b, path, json_object_get(r, cols[q]));
		}
		ergon_dynbuf_adds(b, "</tr>\n");
	}
	ergon_dynbuf_adds(b, "</table>\n");
}

/* The --pmu-counters counts per case and implementation, or why none. */
static void pmu_table(struct ergon_dynbuf *b, const json_t *sec)
{
	const json_t *ev = json_object_get(sec, "pmu_events");
	if (json_array_size(ev) == 0)
		return;
	const char *status = json_string_value(json_object_get(sec, "pmu_status"));
	ergon_dynbuf_adds(b, "<div class=\"scroll\"><table class=\"wide\"><caption>PMU events "
			     "of one run per pass (");
	ergon_html_escape(b, status ? status : "?");
	ergon_dynbuf_adds(b, ": ");
	ergon_html_escape(b, json_string_value(json_object_get(sec, "pmu_why")));
	ergon_dynbuf_adds(b, ")</caption><tr><th>case</th><th>impl</th>");
	size_t e, i, k;
	const json_t *x, *c, *m;
	json_array_foreach(ev, e, x)
	{
		ergon_dynbuf_adds(b, "<th>");
		ergon_html_escape(b, json_string_value(x));
		ergon_dynbuf_adds(b, "</th>");
	}
	ergon_dynbuf_adds(b, "</tr>\n");
	size_t rows = 0;
	json_array_foreach(json_object_get(sec, "cases"), i, c)
	{
		json_array_foreach(json_object_get(c, "impls"), k, m)
		{
			if (rows++ >= KERNEL_ROWS_MAX)
				continue;
			ergon_dynbuf_adds(b, "<tr>");
			text_td(b, json_string_value(json_object_get(c, "case")));
			text_td(b, json_string_value(json_object_get(m, "impl")));
			const json_t *pmu = json_object_get(m, "pmu");
			json_array_foreach(ev, e, x)
			{
				const char *name = json_string_value(x);
				char path[320];
				snprintf(path, sizeof path, "kernels.cases[%zu].impls[%zu].pmu.%s",
					 i, k, name ? name : "");
				const json_t *v = name ? json_object_get(pmu, name) : NULL;
				if (json_is_number(v))
					hd_figure_cell(b, path, v, "");
				else
					path_td(b, path, v);
			}
			ergon_dynbuf_adds(b, "</tr>\n");
		}
	}
	ergon_dynbuf_adds(b, "</table></div>\n");
}

void hd_kernels_section(struct ergon_dynbuf *b, const struct html_doc *d)
{
	const json_t *sec = json_object_get(d->a, "kernels");
	ergon_dynbuf_adds(b, "<h3>Kernels</h3>\n");
	correctness_banner(b, sec);
	ergon_dynbuf_adds(b, "<p class=\"sub\">baseline ");
	ergon_html_escape(b, json_string_value(json_object_get(sec, "baseline")));
	ergon_dynbuf_adds(b, "; ");
	ergon_html_escape(b, json_string_value(json_object_get(sec, "speedup_definition")));
	if (json_is_string(json_object_get(sec, "overhead_note"))) {
		ergon_dynbuf_adds(b, "; timing-read overhead ");
		ergon_html_escape(b, json_string_value(json_object_get(sec, "overhead_note")));
	}
	ergon_dynbuf_adds(b, "</p>\n");
	cases_table(b, sec);
	pmu_table(b, sec);
	geomean_table(b, sec);
	chart(b, d, sec, "median");
	chart(b, d, sec, "speedup");
	refused_table(b, json_object_get(d->a, "refused"));
	placement_table(b, json_object_get(json_object_get(d->a, "build"), "placement"));
	ergon_dynbuf_adds(b, "<div class=\"grid\">");
	hd_kv_table(b, json_object_get(d->a, "timing"), "timing");
	hd_kv_table(b, json_object_get(d->a, "build"), "build");
	hd_kv_table(b, json_object_get(d->a, "source"), "source");
	ergon_dynbuf_adds(b, "</div>\n");
}
