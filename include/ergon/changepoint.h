/* Shifts in a figure's history (ergon db changes; docs/METHOD.md,
 * "Changes over time"): PELT (Killick, Fearnhead and Eckley, JASA 107,
 * 2012) on a mean-shift cost weighted by each point's own uncertainty,
 * with a penalty that makes a shift a finding at a stated level. A pure
 * function on arrays: it opens nothing and prints nothing.
 *
 * The points x[0..n) are in time order; s[i] is point i's own standard
 * uncertainty (NaN or <= 0: none stated). Each point is weighted by
 * 1 / sigma_i^2 with sigma_i = max(s[i], sigma_d), where sigma_d is the
 * scatter of the history itself, estimated robustly from successive
 * differences (1.4826 median |x[i+1] - x[i]| / sqrt 2: a shift moves one
 * difference, not the median): a point is never trusted beyond what the
 * history shows it deserves, nor less than its own uncertainty says. The
 * cost of a segment is sum w_i (x_i - m)^2 with m its weighted mean (in
 * chi-square units when the weights are right), and a shift costs the
 * penalty beta = the chi-square(1) quantile at 1 - alpha / (n - 1): a
 * single shift placed anywhere in a history without one exceeds it with
 * probability at most alpha (Bonferroni over the n - 1 places).
 */
#ifndef ERGON_CHANGEPOINT_H
#define ERGON_CHANGEPOINT_H

#include "ergon/error.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The default level: a history without a shift shows one at most 1 % of
 * the time. */
#define ERGON_CP_ALPHA 0.01
/* The fewest points of a segment: one point alone is an outlier, not a
 * level. */
#define ERGON_CP_MIN_SEGMENT 2
/* Values and uncertainties beyond this in magnitude are refused (a square
 * beyond it leaves a double's range). */
#define ERGON_CP_MAX_ABS 1e150
/* Values other than 0 below this in magnitude are refused: their
 * segment's standard error (the scatter over up to 10^100 weights) would
 * fall below a double's range and read 0. */
#define ERGON_CP_MIN_ABS 1e-150
/* The most points one history may hold. */
#define ERGON_CP_MAX_POINTS 1000000

struct ergon_cp_segment {
	size_t start, end; /* points [start, end) */
	double mean;	   /* weighted mean of its points */
	double se;	   /* its standard error, 1 / sqrt(sum w); NaN: no scale known */
};

struct ergon_cp_result {
	size_t n_seg;
	struct ergon_cp_segment *seg; /* n_seg segments in order; caller frees */
	double sigma_data;	      /* the history's own scatter (sigma_d) */
	double penalty;		      /* beta */
	double alpha;
};

/* The segments of x[0..n) (n >= 1; every x finite: ERGON_EUSAGE naming
 * the point otherwise). alpha in (0, 1): ERGON_CP_ALPHA when 0. A history
 * too short to hold two segments, or one that does not scatter at all
 * around a single level, is one segment. *out->seg is malloc'd (caller
 * frees). */
ERGON_API int ergon_changepoints(const double *x, const double *s, size_t n, double alpha,
				 struct ergon_cp_result *out, struct ergon_err *err);

#ifdef __cplusplus
}
#endif
#endif
