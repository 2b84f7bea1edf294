/* Inline SVG plots and min/max decimation for ergon report (report_internal.h). */
#include "pipelines/report/report_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Margins of the drawing area inside the SVG (px). */
#define ML 78.0
#define MR 70.0
#define MT 14.0
#define MB 34.0
#define PW ((double)HP_W - ML - MR)
#define PH ((double)HP_H - MT - MB)

int hp_decim_init(struct hp_decim *d, double x0, double x1, size_t buckets)
{
	memset(d, 0, sizeof *d);
	d->x0 = x0;
	d->x1 = x1 > x0 ? x1 : x0 + 1;
	d->buckets = buckets;
	d->scale = (double)buckets / (d->x1 - d->x0);
	d->mn = malloc(buckets * sizeof(double));
	d->mx = malloc(buckets * sizeof(double));
	d->sum = calloc(buckets, sizeof(double));
	d->cnt = calloc(buckets, sizeof(size_t));
	d->rx = malloc(HP_MAX_RAW * sizeof(double));
	d->ry = malloc(HP_MAX_RAW * sizeof(double));
	if (!d->mn || !d->mx || !d->sum || !d->cnt || !d->rx || !d->ry) {
		hp_decim_free(d);
		return -1;
	}
	return 0;
}

void hp_decim_add(struct hp_decim *d, double x, double y)
{
	if (!isfinite(x) || !isfinite(y) || x < d->x0 || x > d->x1)
		return;
	if (d->nraw < HP_MAX_RAW) {
		d->rx[d->nraw] = x;
		d->ry[d->nraw] = y;
		d->nraw++;
	}
	size_t k = (size_t)((x - d->x0) * d->scale);
	if (k >= d->buckets)
		k = d->buckets - 1;
	if (d->cnt[k] == 0 || y < d->mn[k])
		d->mn[k] = y;
	if (d->cnt[k] == 0 || y > d->mx[k])
		d->mx[k] = y;
	d->sum[k] += y;
	d->cnt[k]++;
	d->total++;
}

void hp_decim_free(struct hp_decim *d)
{
	free(d->mn);
	free(d->mx);
	free(d->sum);
	free(d->cnt);
	free(d->rx);
	free(d->ry);
	memset(d, 0, sizeof *d);
}

void hp_range(const double *v, size_t n, double *lo, double *hi)
{
	*lo = NAN;
	*hi = NAN;
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(v[i]))
			continue;
		if (isnan(*lo) || v[i] < *lo)
			*lo = v[i];
		if (isnan(*hi) || v[i] > *hi)
			*hi = v[i];
	}
}

void hp_begin(struct hp_plot *p, const char *id, double x0, double x1, double y0, double y1)
{
	memset(p, 0, sizeof *p);
	ergon_dynbuf_init(&p->body, (size_t)64 << 20);
	ergon_dynbuf_init(&p->legend, (size_t)1 << 20);
	ergon_dynbuf_init(&p->axes, (size_t)1 << 20);
	ergon_dynbuf_init(&p->xcat, (size_t)1 << 20);
	p->id = id;
	if (!isfinite(x0) || !isfinite(x1)) {
		x0 = 0;
		x1 = 1;
	}
	if (!isfinite(y0) || !isfinite(y1)) {
		y0 = 0;
		y1 = 1;
	}
	if (x1 <= x0)
		x1 = x0 + (x0 != 0 ? fabs(x0) * 0.01 : 1);
	if (y1 <= y0) {
		double pad = y0 != 0 ? fabs(y0) * 0.05 : 1;
		y0 -= pad;
		y1 += pad;
	} else {
		double pad = (y1 - y0) * 0.06;
		y1 += pad;
		y0 = y0 >= 0 && y0 - pad < 0 ? 0 : y0 - pad;
	}
	p->x0 = x0;
	p->x1 = x1;
	p->y0 = y0;
	p->y1 = y1;
}

static double px(const struct hp_plot *p, double x)
{
	if (p->logx)
		return ML + (log10(x) - log10(p->x0)) / (log10(p->x1) - log10(p->x0)) * PW;
	return ML + (x - p->x0) / (p->x1 - p->x0) * PW;
}

int hp_logx(struct hp_plot *p)
{
	if (!(p->x0 > 0) || !(p->x1 > p->x0))
		return -1;
	p->logx = 1;
	return 0;
}

static double py_in(double y, double y0, double y1)
{
	double v = MT + PH - (y - y0) / (y1 - y0) * PH;
	/* Clamp far outliers so a point never lands kilometres off the page. */
	return v < -PH ? -PH : v > 2 * PH ? 2 * PH : v;
}

static double py(const struct hp_plot *p, double y)
{
	return py_in(y, p->y0, p->y1);
}

static void legend(struct hp_plot *p, const char *cls, const char *label)
{
	if (label == NULL)
		return;
	ergon_dynbuf_addf(&p->legend, "<li><span class=\"sw %s\"></span>", cls);
	ergon_html_escape(&p->legend, label);
	ergon_dynbuf_adds(&p->legend, "</li>");
	p->legend_n++;
}

static void series_open(struct hp_plot *p, const char *tag, const char *cls, const char *label,
			size_t n)
{
	ergon_dynbuf_addf(&p->body, "<%s class=\"series %s\" data-n=\"%zu\" data-label=\"", tag,
			  cls, n);
	ergon_html_escape(&p->body, label ? label : "");
	ergon_dynbuf_adds(&p->body, "\" ");
	p->series++;
	p->points += n;
}

static size_t finite_pairs(const double *x, const double *y, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (isfinite(x[i]) && isfinite(y[i]))
			k++;
	return k;
}

static void line_in(struct hp_plot *p, const double *x, const double *y, size_t n, double y0,
		    double y1, const char *cls, const char *label, int steps)
{
	size_t k = finite_pairs(x, y, n);
	size_t drawn = steps && k > 0 ? 2 * k - 1 : k;
	series_open(p, "polyline", cls, label, drawn);
	ergon_dynbuf_adds(&p->body, "points=\"");
	double prev_y = NAN;
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(x[i]) || !isfinite(y[i]))
			continue;
		if (steps && !isnan(prev_y))
			ergon_dynbuf_addf(&p->body, "%.1f,%.1f ", px(p, x[i]),
					  py_in(prev_y, y0, y1));
		ergon_dynbuf_addf(&p->body, "%.1f,%.1f ", px(p, x[i]), py_in(y[i], y0, y1));
		prev_y = y[i];
	}
	ergon_dynbuf_adds(&p->body, "\"/>\n");
	legend(p, cls, label);
}

void hp_line(struct hp_plot *p, const double *x, const double *y, size_t n, const char *cls,
	     const char *label)
{
	line_in(p, x, y, n, p->y0, p->y1, cls, label, 0);
}

void hp_steps(struct hp_plot *p, const double *x, const double *y, size_t n, const char *cls,
	      const char *label)
{
	line_in(p, x, y, n, p->y0, p->y1, cls, label, 1);
}

size_t hp_decimated(struct hp_plot *p, const struct hp_decim *d, const char *cls, const char *label)
{
	if (d->total <= HP_MAX_RAW) {
		hp_line(p, d->rx, d->ry, d->nraw, cls, label);
		return 1;
	}
	size_t k = 0;
	for (size_t i = 0; i < d->buckets; i++)
		k += d->cnt[i] > 0;
	double w = (d->x1 - d->x0) / (double)d->buckets;
	char band[64], bl[200];
	snprintf(band, sizeof band, "band %s", cls);
	snprintf(bl, sizeof bl, "%s: min/max of every %.3g-wide bucket", label ? label : "", w);
	series_open(p, "polygon", band, bl, 2 * k);
	ergon_dynbuf_adds(&p->body, "points=\"");
	for (size_t i = 0; i < d->buckets; i++)
		if (d->cnt[i])
			ergon_dynbuf_addf(&p->body, "%.1f,%.1f ",
					  px(p, d->x0 + ((double)i + 0.5) * w), py(p, d->mx[i]));
	for (size_t i = d->buckets; i-- > 0;)
		if (d->cnt[i])
			ergon_dynbuf_addf(&p->body, "%.1f,%.1f ",
					  px(p, d->x0 + ((double)i + 0.5) * w), py(p, d->mn[i]));
	ergon_dynbuf_adds(&p->body, "\"/>\n");
	legend(p, band, bl);
	snprintf(bl, sizeof bl, "%s: bucket mean", label ? label : "");
	series_open(p, "polyline", cls, bl, k);
	ergon_dynbuf_adds(&p->body, "points=\"");
	for (size_t i = 0; i < d->buckets; i++)
		if (d->cnt[i])
			ergon_dynbuf_addf(&p->body, "%.1f,%.1f ",
					  px(p, d->x0 + ((double)i + 0.5) * w),
					  py(p, d->sum[i] / (double)d->cnt[i]));
	ergon_dynbuf_adds(&p->body, "\"/>\n");
	legend(p, cls, bl);
	return 2;
}

void hp_bars(struct hp_plot *p, const double *x, const double *w, const double *y, size_t n,
	     const char *cls, const char *label)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += isfinite(x[i]) && isfinite(w[i]) && isfinite(y[i]);
	char c[64];
	snprintf(c, sizeof c, "bars %s", cls);
	series_open(p, "path", c, label, k);
	ergon_dynbuf_adds(&p->body, "d=\"");
	double base = py(p, p->y0 > 0 ? p->y0 : 0);
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(x[i]) || !isfinite(w[i]) || !isfinite(y[i]))
			continue;
		double a = px(p, x[i]), b = px(p, x[i] + w[i]), top = py(p, y[i]);
		double gap = (b - a) > 4 ? 1.0 : 0.0;
		ergon_dynbuf_addf(&p->body, "M%.1f %.1fH%.1fV%.1fH%.1fZ", a + gap, base, b - gap,
				  top, a + gap);
	}
	ergon_dynbuf_adds(&p->body, "\"/>\n");
	legend(p, c, label);
}

/* Pixels a label takes at the marklabel font (10.5 px): at most 7 px a
 * character (DejaVu Sans' widest digits and letters are 0.64 em), so an
 * estimate that never falls short. */
#define LABEL_CHAR_PX 7.0
#define LABEL_ROW_PX 13.0

static double label_px(const char *label)
{
	size_t chars = 0;
	for (const unsigned char *c = (const unsigned char *)label; *c; c++)
		chars += (*c & 0xC0) != 0x80; /* count UTF-8 characters */
	return (double)chars * LABEL_CHAR_PX;
}

/* The first row (from the top) where [x0, x1] touches no label placed
 * before, recorded; -1 when there is none. */
static int place_label(struct hp_plot *p, double x0, double x1)
{
	for (int r = 0; r < HP_LABEL_ROWS && p->nlabels < HP_LABELS_MAX; r++) {
		int free_ = 1;
		for (size_t i = 0; i < p->nlabels && free_; i++)
			if (p->lab_row[i] == r && x0 < p->lab_x1[i] + 2 && p->lab_x0[i] < x1 + 2)
				free_ = 0;
		if (free_) {
			p->lab_x0[p->nlabels] = x0;
			p->lab_x1[p->nlabels] = x1;
			p->lab_row[p->nlabels] = r;
			p->nlabels++;
			return r;
		}
	}
	return -1;
}

/* A mark's label beside the line at pixel a: right of it, or left when it
 * would run past the plot's right edge; in the first row whose labels it
 * does not touch. */
static void mark_label(struct hp_plot *p, double a, const char *cls, const char *label)
{
	double w = label_px(label);
	int right = a + 4 + w <= ML + PW;
	double x0 = right ? a + 4 : a - 4 - w, x1 = x0 + w;
	int row = place_label(p, x0, x1);
	if (row < 0) {
		ergon_dynbuf_addf(&p->body,
				  "<text class=\"marklabel %s\" data-hidden=\"1\" "
				  "display=\"none\">",
				  cls);
		ergon_html_escape(&p->body, label);
		ergon_dynbuf_adds(&p->body, "</text>\n");
		return;
	}
	double y = MT + 11 + row * LABEL_ROW_PX;
	ergon_dynbuf_addf(&p->body,
			  "<text class=\"marklabel %s\" x=\"%.1f\" y=\"%.1f\" "
			  "text-anchor=\"%s\" data-row=\"%d\">",
			  cls, right ? x0 : x1, y, right ? "start" : "end", row);
	ergon_html_escape(&p->body, label);
	ergon_dynbuf_adds(&p->body, "</text>\n");
}

void hp_errbars(struct hp_plot *p, const double *x, const double *lo, const double *hi, size_t n,
		const char *cls, const char *label)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += isfinite(x[i]) && isfinite(lo[i]) && isfinite(hi[i]);
	if (k == 0)
		return;
	/* Not a series of its own (the page's self-check counts series and
	 * their points): marks on one, one "M" per bar, the caps drawn with
	 * relative moves. */
	char c[64];
	snprintf(c, sizeof c, "errbar %s", cls);
	ergon_dynbuf_addf(&p->body, "<path class=\"%s\" data-n=\"%zu\" data-label=\"", c, k);
	ergon_html_escape(&p->body, label ? label : "");
	ergon_dynbuf_adds(&p->body, "\" d=\"");
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(x[i]) || !isfinite(lo[i]) || !isfinite(hi[i]))
			continue;
		double a = px(p, x[i]), t = py(p, hi[i]), b = py(p, lo[i]);
		ergon_dynbuf_addf(&p->body, "M%.1f %.1fV%.1fm-3 0h6m-6 %.1fh6", a, b, t, b - t);
	}
	ergon_dynbuf_adds(&p->body, "\"/>\n");
	legend(p, c, label);
}

void hp_span(struct hp_plot *p, double xa, double xb, const char *cls, const char *label)
{
	if (!isfinite(xa) || !isfinite(xb))
		return;
	double a = px(p, fmax(xa, p->x0)), b = px(p, fmin(xb, p->x1));
	if (b <= a)
		return;
	ergon_dynbuf_addf(&p->body,
			  "<rect class=\"span %s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
			  "height=\"%.1f\"><title>",
			  cls, a, MT, b - a, PH);
	ergon_html_escape(&p->body, label);
	ergon_dynbuf_adds(&p->body, "</title></rect>\n");
	/* The span's label inside it, at its left, in a free row (else only
	 * the hover title). */
	double w = label ? label_px(label) : 0;
	int row = label && w <= b - a - 4 ? place_label(p, a + 4, a + 4 + w) : -1;
	if (row >= 0) {
		ergon_dynbuf_addf(&p->body,
				  "<text class=\"spanlabel\" x=\"%.1f\" y=\"%.1f\" "
				  "data-row=\"%d\">",
				  a + 4, MT + 11 + row * LABEL_ROW_PX, row);
		ergon_html_escape(&p->body, label);
		ergon_dynbuf_adds(&p->body, "</text>\n");
	}
}

void hp_vline(struct hp_plot *p, double x, const char *cls, const char *label)
{
	if (!isfinite(x) || x < p->x0 || x > p->x1)
		return;
	double a = px(p, x);
	ergon_dynbuf_addf(&p->body,
			  "<line class=\"mark %s\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" "
			  "y2=\"%.1f\"><title>",
			  cls, a, a, MT, MT + PH);
	ergon_html_escape(&p->body, label);
	ergon_dynbuf_adds(&p->body, "</title></line>\n");
	if (label)
		mark_label(p, a, cls, label);
}

/* 1, 2 or 5 times a power of ten, about n steps over the span. */
static double nice_step(double span, int n)
{
	double raw = span / n;
	double mag = pow(10, floor(log10(raw)));
	double f = raw / mag;
	return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

/* Ticks of a log10 x axis: 1, 2 and 5 times each power of ten in the
 * range (only the powers of ten when it spans more than three decades). */
static void log_ticks(struct ergon_dynbuf *b, double v0, double v1)
{
	static const double mult[] = {1, 2, 5};
	double l0 = log10(v0), l1 = log10(v1);
	int all = l1 - l0 <= 3;
	for (int e = (int)floor(l0); e <= (int)ceil(l1); e++) {
		for (size_t m = 0; m < (all ? 3u : 1u); m++) {
			double v = mult[m] * pow(10, e);
			if (v < v0 * (1 - 1e-9) || v > v1 * (1 + 1e-9))
				continue;
			double x = ML + (log10(v) - l0) / (l1 - l0) * PW;
			ergon_dynbuf_addf(
			    b,
			    "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" "
			    "y2=\"%.1f\"/><text class=\"tick\" x=\"%.1f\" y=\"%.1f\" "
			    "text-anchor=\"middle\">%.4g</text>\n",
			    x, x, MT, MT + PH, x, MT + PH + 16, v);
		}
	}
}

static void axis_ticks(struct ergon_dynbuf *b, double v0, double v1, int vertical, double pos,
		       int right)
{
	double step = nice_step(v1 - v0, vertical ? 5 : 8);
	if (!(step > 0) || !isfinite(step))
		return;
	for (double t = ceil(v0 / step) * step; t <= v1 + step * 1e-9; t += step) {
		double v = fabs(t) < step * 1e-9 ? 0 : t;
		if (vertical) {
			double y = MT + PH - (v - v0) / (v1 - v0) * PH;
			if (!right)
				ergon_dynbuf_addf(b,
						  "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" "
						  "y1=\"%.1f\" y2=\"%.1f\"/>",
						  ML, ML + PW, y, y);
			ergon_dynbuf_addf(b,
					  "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" "
					  "text-anchor=\"%s\">%.4g</text>\n",
					  right ? pos + 6 : pos - 6, y + 4, right ? "start" : "end",
					  v);
		} else {
			double x = ML + (v - v0) / (v1 - v0) * PW;
			ergon_dynbuf_addf(
			    b,
			    "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" "
			    "y2=\"%.1f\"/><text class=\"tick\" x=\"%.1f\" y=\"%.1f\" "
			    "text-anchor=\"middle\">%.4g</text>\n",
			    x, x, MT, MT + PH, x, MT + PH + 16, v);
		}
	}
}

void hp_line_right(struct hp_plot *p, const double *x, const double *y, size_t n, double y0,
		   double y1, const char *cls, const char *label, const char *unit)
{
	if (!(y1 > y0)) {
		y0 -= 1;
		y1 += 1;
	}
	line_in(p, x, y, n, y0, y1, cls, label, 0);
	axis_ticks(&p->axes, y0, y1, 1, ML + PW, 1);
	ergon_dynbuf_addf(&p->axes,
			  "<text class=\"axislabel %s\" x=\"%.1f\" y=\"%.1f\" "
			  "transform=\"rotate(90 %.1f %.1f)\" text-anchor=\"middle\">",
			  cls, (double)HP_W - 12, MT + PH / 2, (double)HP_W - 12, MT + PH / 2);
	ergon_html_escape(&p->axes, unit);
	ergon_dynbuf_adds(&p->axes, "</text>\n");
}

void hp_end(struct hp_plot *p, struct ergon_dynbuf *out, const char *title, const char *xlabel,
	    const char *ylabel, const char *caption)
{
	ergon_dynbuf_addf(out, "<figure class=\"plotbox\" id=\"%s\"><figcaption class=\"title\">",
			  p->id);
	ergon_html_escape(out, title);
	ergon_dynbuf_addf(out,
			  "</figcaption>\n<svg class=\"plot\" viewBox=\"0 0 %d %d\" "
			  "data-series=\"%zu\" data-points=\"%zu\" data-xscale=\"%s\" role=\"img\" "
			  "aria-label=\"",
			  HP_W, HP_H + (int)ceil(p->xcat_h), p->series, p->points,
			  p->logx ? "log" : "linear");
	ergon_html_escape(out, title);
	ergon_dynbuf_addf(out,
			  "\">\n<defs><clipPath id=\"%s-clip\"><rect x=\"%.1f\" y=\"%.1f\" "
			  "width=\"%.1f\" height=\"%.1f\"/></clipPath></defs>\n",
			  p->id, ML, MT - 2, PW, PH + 4);
	axis_ticks(out, p->y0, p->y1, 1, ML, 0);
	if (p->xcat.len)
		ergon_dynbuf_add(out, p->xcat.p, p->xcat.len);
	else if (p->logx)
		log_ticks(out, p->x0, p->x1);
	else
		axis_ticks(out, p->x0, p->x1, 0, 0, 0);
	ergon_dynbuf_addf(out,
			  "<rect class=\"frame\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
			  "height=\"%.1f\"/>\n<g clip-path=\"url(#%s-clip)\">\n",
			  ML, MT, PW, PH, p->id);
	if (p->body.len)
		ergon_dynbuf_add(out, p->body.p, p->body.len);
	ergon_dynbuf_adds(out, "</g>\n");
	if (p->axes.len)
		ergon_dynbuf_add(out, p->axes.p, p->axes.len);
	ergon_dynbuf_addf(out,
			  "<text class=\"axislabel\" x=\"%.1f\" y=\"%.1f\" "
			  "text-anchor=\"middle\">",
			  ML + PW / 2, (double)HP_H - 2 + ceil(p->xcat_h));
	ergon_html_escape(out, xlabel);
	ergon_dynbuf_addf(out,
			  "</text><text class=\"axislabel\" x=\"14\" y=\"%.1f\" "
			  "transform=\"rotate(-90 14 %.1f)\" text-anchor=\"middle\">",
			  MT + PH / 2, MT + PH / 2);
	ergon_html_escape(out, ylabel);
	ergon_dynbuf_adds(out, "</text>\n</svg>\n");
	if (p->legend_n) {
		ergon_dynbuf_adds(out, "<ul class=\"legend\">");
		ergon_dynbuf_add(out, p->legend.p, p->legend.len);
		ergon_dynbuf_adds(out, "</ul>\n");
	}
	if (caption) {
		ergon_dynbuf_adds(out, "<p class=\"caption\">");
		ergon_html_escape(out, caption);
		ergon_dynbuf_adds(out, "</p>\n");
	}
	ergon_dynbuf_adds(out, "</figure>\n");
	hp_discard(p);
}

void hp_discard(struct hp_plot *p)
{
	ergon_dynbuf_free(&p->body);
	ergon_dynbuf_free(&p->legend);
	ergon_dynbuf_free(&p->axes);
	ergon_dynbuf_free(&p->xcat);
}

/* The names are slanted 40 degrees: two of them k categories apart are
 * k x (a category's width) x sin(40 deg) apart across their baselines,
 * which must hold one line of the tick font (11 px; Chromium's box of a
 * name is 13.2 px high: tests/functional/test_report_layer_chart.sh). */
#define XCAT_LINE_PX 14.0
#define SIN_40_DEG 0.6427876096865394

size_t hp_xcat_step(const struct hp_plot *p, size_t n)
{
	double cat = n > 0 ? fabs(px(p, 1.0) - px(p, 0.0)) : PW;
	if (!(cat > 0))
		return n > 0 ? n : 1;
	double k = ceil(XCAT_LINE_PX / (cat * SIN_40_DEG) - 1e-9);
	return k <= 1 ? 1 : k >= (double)(n > 0 ? n : 1) ? (n > 0 ? n : 1) : (size_t)k;
}

const char *hp_ordinal_suffix(size_t k)
{
	if (k % 100 >= 11 && k % 100 <= 13)
		return "th";
	return k % 10 == 1 ? "st" : k % 10 == 2 ? "nd" : k % 10 == 3 ? "rd" : "th";
}

void hp_xcategories(struct hp_plot *p, const char *const *names, size_t n)
{
	double longest = 0;
	for (size_t i = 0; i < n; i++) {
		double x = px(p, (double)i);
		if (x < ML - 1 || x > ML + PW + 1)
			continue;
		ergon_dynbuf_addf(&p->xcat,
				  "<text class=\"tick xcat\" x=\"%.1f\" y=\"%.1f\" "
				  "text-anchor=\"end\" transform=\"rotate(-40 %.1f %.1f)\">",
				  x, MT + PH + 14, x, MT + PH + 14);
		ergon_html_escape(&p->xcat, names[i] ? names[i] : "");
		ergon_dynbuf_adds(&p->xcat, "</text>\n");
		double w = names[i] ? label_px(names[i]) * 0.95 : 0;
		if (w > longest)
			longest = w;
	}
	/* sin(40 deg) of the longest name, at most 160 px. */
	p->xcat_h = fmin(longest * 0.643, 160);
}
