/* report/'s private header: what the renderers of `ergon report` share
 * (docs/internals/report_html.md). report_html.c makes the document and
 * loads the artifacts; the section renderers are html_run.c (run reports),
 * html_profile.c (profile and analyze summaries), html_compare.c
 * (comparisons), html_kernels.c (ergon.kernels) and html_trend.c
 * (ergon.trend); the helpers every one of them calls are html_util.c and
 * the inline SVG plots html_plot.c.
 */
#ifndef ERGON_REPORT_INTERNAL_H
#define ERGON_REPORT_INTERNAL_H

#include "ergon/dynbuf.h"
#include "ergon/error.h"
#include "pipelines/common/common.h"

#include <jansson.h>
#include <stddef.h>

/* --- inline SVG plots (html_plot.c) ----------------------------------------
 *
 * A plot collects its series into its own buffer and is emitted as one
 * <svg class="plot"> element whose data-series / data-points attributes
 * say how many series and points it holds, so that a browser test can
 * check them against the artifact. Long series go through a min/max
 * decimator first: every bucket keeps its minimum, maximum and mean, so a
 * spike survives decimation. Text in attributes and element bodies goes
 * through ergon_html_escape (common.h).
 */

/* Plots are drawn at this size (CSS scales them to the page width). */
#define HP_W 960
#define HP_H 300
/* Above this many points a series is decimated to HP_BUCKETS buckets. */
#define HP_MAX_RAW 2400
#define HP_BUCKETS 1200
/* Mark labels a plot places without overlap (more are left to the marks'
 * hover titles); rows of labels below the top edge. */
#define HP_LABELS_MAX 64
#define HP_LABEL_ROWS 8
/* Streaming min/max/mean decimation over a fixed x range [x0, x1]. */
struct hp_decim {
	double x0, x1;
	double scale; /* buckets per unit of x */
	size_t buckets;
	double *mn, *mx, *sum;
	size_t *cnt;
	size_t total; /* points added (inside the range) */
	/* The first HP_MAX_RAW points are kept as they are, so a short series
	 * is drawn exactly. */
	double *rx, *ry;
	size_t nraw;
};
int hp_decim_init(struct hp_decim *d, double x0, double x1, size_t buckets);
void hp_decim_add(struct hp_decim *d, double x, double y);
void hp_decim_free(struct hp_decim *d);

struct hp_plot {
	struct ergon_dynbuf body; /* the series and marks (clipped to the plot area) */
	struct ergon_dynbuf axes; /* a right-hand axis (not clipped) */
	const char *id;
	double x0, x1, y0, y1; /* data ranges */
	size_t series, points;
	int legend_n;
	struct ergon_dynbuf legend;
	int logx; /* x drawn on a log10 scale (hp_logx) */
	/* Category names under the x axis instead of numeric ticks
	 * (hp_xcategories), and the height they add below the plot. */
	struct ergon_dynbuf xcat;
	double xcat_h;
	/* Mark labels placed so far: rows of [x_start, x_end] pixel spans, so
	 * that a new label goes to the first row where it overlaps nothing. */
	size_t nlabels;
	double lab_x0[HP_LABELS_MAX], lab_x1[HP_LABELS_MAX];
	int lab_row[HP_LABELS_MAX];
};

/* Start a plot with data ranges (y0 == y1 is widened). */
void hp_begin(struct hp_plot *p, const char *id, double x0, double x1, double y0, double y1);
/* A polyline of n points (NaNs skipped); cls is a CSS class (s0..s5). */
void hp_line(struct hp_plot *p, const double *x, const double *y, size_t n, const char *cls,
	     const char *label);
/* Draw x on a log10 scale (x0 > 0; after hp_begin, before any series):
 * ticks at 1, 2 and 5 times the powers of ten. 0 when set, -1 when the
 * range is not positive (the axis stays linear). */
int hp_logx(struct hp_plot *p);
/* Name the x positions 0..n-1 (bars of categories, e.g. layers): each
 * name is written under its position, slanted, in place of the numeric
 * ticks; the SVG grows to hold the longest. */
void hp_xcategories(struct hp_plot *p, const char *const *names, size_t n);
/* Name every k-th of the n categories at 0..n-1 so that no two names
 * overlap: the smallest such k (1: every one), from the plot's x range. */
size_t hp_xcat_step(const struct hp_plot *p, size_t n);
/* k's English ordinal suffix ("st", "nd", "rd", "th"), for captions. */
const char *hp_ordinal_suffix(size_t k);
/* Step line (a gate signal, a CDF). */
void hp_steps(struct hp_plot *p, const double *x, const double *y, size_t n, const char *cls,
	      const char *label);
/* A decimated series: the raw points when there are few, else a min/max
 * band plus the mean line (two series). Returns the number of series. */
size_t hp_decimated(struct hp_plot *p, const struct hp_decim *d, const char *cls,
		    const char *label);
/* Bars from x[i] to x[i] + w[i] with height y[i] (one series). */
void hp_bars(struct hp_plot *p, const double *x, const double *w, const double *y, size_t n,
	     const char *cls, const char *label);
/* Vertical interval bars [lo[i], hi[i]] at x[i] (NaNs skipped). */
void hp_errbars(struct hp_plot *p, const double *x, const double *lo, const double *hi, size_t n,
		const char *cls, const char *label);
/* A shaded x span and a vertical mark, each with a label. A mark's label
 * is written horizontally beside it, in the first row (from the top) where
 * it overlaps no label placed before, so labels never overprint; a label
 * with no free row is left to the mark's hover title (data-hidden). */
void hp_span(struct hp_plot *p, double xa, double xb, const char *cls, const char *label);
void hp_vline(struct hp_plot *p, double x, const char *cls, const char *label);
/* A second y axis on the right: a series drawn against [y0, y1]. */
void hp_line_right(struct hp_plot *p, const double *x, const double *y, size_t n, double y0,
		   double y1, const char *cls, const char *label, const char *unit);
/* Emit <figure> with the SVG, title, axis labels and caption into out. */
void hp_end(struct hp_plot *p, struct ergon_dynbuf *out, const char *title, const char *xlabel,
	    const char *ylabel, const char *caption);
/* Free a plot that was begun but not ended. */
void hp_discard(struct hp_plot *p);

/* The smallest and largest finite value of v (NaN, NaN when none). */
void hp_range(const double *v, size_t n, double *lo, double *hi);

/* --- the helpers every renderer shares (html_util.c) ---------------------- */

/* One artifact as the renderers see it. */
struct html_doc {
	const char *path;
	const char *jls_path;
	json_t *a;		      /* the artifact (possibly recovered from a truncated file) */
	int index;		      /* position in the report: ids are "a<index>-..." */
	int truncated;		      /* recovered from the part of the file that parses */
	char note[ERGON_ERR_MSG_MAX]; /* why it is marked, "" when clean */
	/* Why the recording is drawn though not shown to be the summary's
	 * (--force-jls), "" when it was shown to be. */
	char jls_note[ERGON_ERR_MSG_MAX];
};

/* The number at a dotted path (NaN when absent or not a number). */
double hd_num(const json_t *root, const char *path);
/* "%.4g" with an SI prefix for the units ergon uses (J, W, A, V, s, C). */
void hd_fmt(char *out, size_t cap, double v, const char *unit);
/* A field's name for a reader: words for the underscores, the unit
 * suffix dropped (the value carries it), a few abbreviations spelt out,
 * " › " between the parts of a dotted key (energy_per_inference_j ->
 * "energy per inference", capture_start_utc -> "capture start (UTC)"). */
void hd_label(char *out, size_t cap, const char *key);
/* A row header <th> for a field: its label, the field's name in data-key
 * and on hover. */
void hd_key_th(struct ergon_dynbuf *b, const char *key);
/* The unit of a field from its name's suffix (energy_j -> J), or "". */
const char *hd_unit_of(const char *key);
/* A table cell holding a figure: data-path and data-value let the browser
 * test compare it with the artifact. */
void hd_figure_cell(struct ergon_dynbuf *b, const char *path, const json_t *v, const char *unit);
/* A table of the scalar members of obj (at path), one row each, with the
 * ± from the sibling "<name>_u_<unit>" where there is one. */
void hd_scalar_table(struct ergon_dynbuf *b, const json_t *obj, const char *path,
		     const char *title);
/* A key/value table of a nested object, flattened to dotted keys. */
void hd_kv_table(struct ergon_dynbuf *b, const json_t *obj, const char *title);
/* One table per uncertainty budget found under root (at path): every term
 * with its standard uncertainty, bound, distribution and source, then
 * u_c, U (k = 2) and whether the budget is complete (docs/UNCERTAINTY.md).
 * Returns how many it drew. */
size_t hd_budget_tables(struct ergon_dynbuf *b, const json_t *root, const char *path,
			const char *title);
/* The issues array as a table. */
void hd_issues(struct ergon_dynbuf *b, const json_t *issues, const char *title);
/* Vertical marks at the values of root at marks[i][0] (times scale), each
 * labelled marks[i][1] and the value in unit ("p99 24.17 ms"). */
void hd_value_marks(struct hp_plot *pl, const json_t *root, const char *const (*marks)[2], size_t n,
		    const char *unit, double scale);
/* A plot id: "a<index>-<name>" into out. */
void hd_id(char *out, size_t cap, const struct html_doc *d, const char *name);

/* --- the sections (one file each), called by report_html.c ------------- */

void hd_run_section(struct ergon_dynbuf *b, const struct html_doc *d);
int hd_profile_section(struct ergon_dynbuf *b, struct html_doc *d, struct ergon_err *err);
void hd_compare_section(struct ergon_dynbuf *b, const struct html_doc *d);
/* ergon.kernels (html_kernels.c). */
void hd_kernels_section(struct ergon_dynbuf *b, const struct html_doc *d);
/* html_trend.c: ergon.trend (ergon db trend --html). */
void hd_trend_section(struct ergon_dynbuf *b, const struct html_doc *d);

#endif
