/* ergon report: the section of an ergon.trend artifact (`ergon db trend
 * --html`): one figure over measurement time, each point with its interval. Counted points
 * (measured, not invalid) and the others are two separate series in two
 * colours, so a synthetic or replayed point is never drawn as part of the
 * measured line; the table lists every point with its provenance. */
#include "pipelines/report/report_internal.h"

#include "ergon/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void text_td(struct ergon_dynbuf *b, const char *s)
{
	ergon_dynbuf_adds(b, "<td class=\"text\">");
	ergon_html_escape(b, s ? s : "—");
	ergon_dynbuf_adds(b, "</td>");
}

/* Seconds since the epoch of "YYYY-MM-DDTHH:MM:SS[.f...]Z" (UTC); NaN for
 * anything else. */
static double utc_seconds(const char *s)
{
	struct tm tm = {0};
	int frac_at = 0;
	if (s == NULL || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon,
				&tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &frac_at) != 6 ||
	    frac_at != 19)
		return NAN;
	double frac = 0;
	const char *f = s + 19;
	if (*f == '.') {
		double scale = 0.1;
		for (f++; *f >= '0' && *f <= '9'; f++, scale /= 10)
			frac += (*f - '0') * scale;
	}
	if (strcmp(f, "Z") != 0 || tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 ||
	    tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60)
		return NAN;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	time_t t = timegm(&tm);
	return t == (time_t)-1 ? NAN : (double)t + frac;
}

/* A point's interval: its stated ±, plus, for a repeated run's mean, the
 * half-width of the mean's 95 % interval (t(0.975, n - 1) x sem): what
 * energy-model exports for a repeated run (docs/METHOD.md). */
static double half_width(const json_t *p)
{
	const json_t *u = json_object_get(p, "u"), *sem = json_object_get(p, "sem");
	const json_t *reps = json_object_get(p, "repetitions");
	double h = json_is_number(u) ? json_number_value(u) : 0;
	if (json_is_number(sem) && json_is_integer(reps) && json_integer_value(reps) >= 2)
		h += ergon_t_quantile(0.975, (double)(json_integer_value(reps) - 1)) *
		     json_number_value(sem);
	return json_is_number(u) || json_is_number(sem) ? h : NAN;
}

void hd_trend_section(struct ergon_dynbuf *b, const struct html_doc *d)
{
	const json_t *t = json_object_get(d->a, "trend");
	const json_t *pts = json_object_get(t, "points");
	const char *fig = json_string_value(json_object_get(t, "figure"));
	const char *unit = json_string_value(json_object_get(t, "unit"));
	size_t n = json_array_size(pts);
	/* x, y, lo, hi: counted points at [0, nc), the others at [n, n + no). */
	double *x = calloc(n ? 2 * n : 1, sizeof *x);
	double *y = calloc(n ? 2 * n : 1, sizeof *y);
	double *lo = calloc(n ? 2 * n : 1, sizeof *lo);
	double *hi = calloc(n ? 2 * n : 1, sizeof *hi);
	if (!x || !y || !lo || !hi) {
		free(x);
		free(y);
		free(lo);
		free(hi);
		ergon_dynbuf_adds(b, "<p class=\"bad\">out of memory: the trend is not drawn</p>");
		return;
	}
	/* The x axis is the measurement time, from the first point's; a point
	 * without a readable time is listed in the table and not drawn. */
	double t0 = NAN, tmax = NAN;
	size_t untimed = 0, ingested = 0;
	for (size_t i = 0; i < n; i++) {
		const json_t *p = json_array_get(pts, i);
		double ts = utc_seconds(json_string_value(json_object_get(p, "time")));
		const char *src = json_string_value(json_object_get(p, "time_source"));
		ingested += src && strcmp(src, "ingested") == 0;
		if (isnan(ts))
			continue;
		if (isnan(t0) || ts < t0)
			t0 = ts;
		if (isnan(tmax) || ts > tmax)
			tmax = ts;
	}
	double span = isnan(t0) ? 0 : tmax - t0, scale = 1;
	const char *tu = "s";
	if (span > 3 * 86400.0) {
		scale = 86400;
		tu = "days";
	} else if (span > 3 * 3600.0) {
		scale = 3600;
		tu = "hours";
	} else if (span > 180) {
		scale = 60;
		tu = "minutes";
	}
	size_t nc = 0, no = 0;
	double ylo = INFINITY, yhi = -INFINITY;
	for (size_t i = 0; i < n; i++) {
		const json_t *p = json_array_get(pts, i);
		const json_t *v = json_object_get(p, "value");
		double ts = utc_seconds(json_string_value(json_object_get(p, "time")));
		if (!json_is_number(v))
			continue;
		if (isnan(ts)) {
			untimed++;
			continue;
		}
		double val = json_number_value(v), h = half_width(p);
		size_t k = json_is_true(json_object_get(p, "counted")) ? nc++ : n + no++;
		x[k] = (ts - t0) / scale;
		y[k] = val;
		lo[k] = isfinite(h) ? val - h : NAN;
		hi[k] = isfinite(h) ? val + h : NAN;
		ylo = fmin(ylo, isfinite(h) ? val - h : val);
		yhi = fmax(yhi, isfinite(h) ? val + h : val);
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
	size_t counted = 0;
	for (size_t i = 0; i < n; i++)
		counted += json_is_true(json_object_get(json_array_get(pts, i), "counted"));
	ergon_dynbuf_addf(b,
			  ": %zu measured (counted), %zu synthetic, replayed or invalid (shown "
			  "apart, never counted).",
			  counted, n - counted);
	if (ingested)
		ergon_dynbuf_addf(b,
				  " <span class=\"bad\">%zu point(s) carry the time they were "
				  "ingested, not when they were measured (their artifacts did not "
				  "say): their place on the time axis is their ingest time.</span>",
				  ingested);
	if (untimed)
		ergon_dynbuf_addf(b, " %zu point(s) have no readable time and are not drawn.",
				  untimed);
	ergon_dynbuf_adds(b, "</p>\n");
	if (nc + no > 0) {
		struct hp_plot pl;
		char id[64], xlabel[128], t0s[32];
		hd_id(id, sizeof id, d, "trend");
		double xr = span / scale;
		hp_begin(&pl, id, xr > 0 ? -0.02 * xr : -1, xr > 0 ? 1.02 * xr : 1, fmin(ylo, 0),
			 yhi);
		if (nc) {
			hp_errbars(&pl, x, lo, hi, nc, "s0", "interval (stated ±; repeated: + t·sem)");
			hp_line(&pl, x, y, nc, "s0", "measured (counted)");
		}
		if (no) {
			hp_errbars(&pl, x + n, lo + n, hi + n, no, "s3",
				   "interval of the points not counted");
			hp_line(&pl, x + n, y + n, no, "s3",
				"synthetic, replayed or invalid (not counted)");
		}
		char ylabel[96];
		snprintf(ylabel, sizeof ylabel, "%s%s%s%s", fig ? fig : "value",
			 unit && unit[0] ? " (" : "", unit ? unit : "", unit && unit[0] ? ")" : "");
		time_t tt = (time_t)t0;
		struct tm tm;
		if (gmtime_r(&tt, &tm) == NULL || strftime(t0s, sizeof t0s, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
			snprintf(t0s, sizeof t0s, "?");
		snprintf(xlabel, sizeof xlabel, "measurement time (%s since %s)", tu, t0s);
		hp_end(&pl, b, "The figure over measurement time", xlabel, ylabel,
		       "Each point is one stored run at the time it was measured, with its "
		       "interval: the stated ± (for a repeated run's mean, plus the half-width "
		       "of its 95 % interval, t·sem). Points that are not measurements are a "
		       "separate series: never joined to the measured line.");
	}
	free(lo);
	free(hi);
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
