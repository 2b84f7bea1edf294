/* Private: inline SVG plots for ergon report (docs/internals/report_html.md).
 *
 * A plot collects its series into its own buffer and is emitted as one
 * <svg class="plot"> element whose data-series / data-points attributes
 * say how many series and points it holds, so that a browser test can
 * check them against the artifact. Long series go through a min/max
 * decimator first: every bucket keeps its minimum, maximum and mean, so a
 * spike survives decimation.
 */
#ifndef ERGON_HTML_PLOT_H
#define ERGON_HTML_PLOT_H

#include "ergon/dynbuf.h"

#include <stddef.h>

/* Plots are drawn at this size (CSS scales them to the page width). */
#define HP_W 960
#define HP_H 300
/* Above this many points a series is decimated to HP_BUCKETS buckets. */
#define HP_MAX_RAW 2400
#define HP_BUCKETS 1200
/* Text ends up in attributes and element bodies: HTML-escape it. */
void hp_escape(struct ergon_dynbuf *b, const char *s);

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
};

/* Start a plot with data ranges (y0 == y1 is widened). */
void hp_begin(struct hp_plot *p, const char *id, double x0, double x1, double y0, double y1);
/* A polyline of n points (NaNs skipped); cls is a CSS class (s0..s5). */
void hp_line(struct hp_plot *p, const double *x, const double *y, size_t n, const char *cls,
	     const char *label);
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
/* A shaded x span and a vertical mark, each with a label. */
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

#endif
