/* Statistics of repeated measurements (docs/METHOD.md, "Repeats and
 * run-to-run spread"): Student's t distribution, the summary of n values
 * (mean, sample standard deviation, the t interval of the mean, the median
 * with its distribution-free interval), Welch's two-sample t test, Tukey's
 * outlier fences and the normal quantile. Pure functions on arrays: they
 * open nothing and print nothing. Every formula and its source is in
 * docs/METHOD.md; tests/unit/test_stats.c checks them against published
 * tables and closed forms.
 */
#ifndef ERGON_STATS_H
#define ERGON_STATS_H

#include "ergon/error.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The confidence level of every interval ergon states. */
#define ERGON_STATS_LEVEL 0.95
/* The fewest values whose spread ergon uses for a verdict (compare,
 * validate): below this the run-to-run spread is unknown. */
#define ERGON_STATS_MIN_REPEATS 3

/* Nearest-rank percentile of sorted values; pct in (0, 100]. */
ERGON_API double ergon_percentile_nearest_rank(const double *sorted, size_t n, double pct);
/* Its 1-based rank among n values, ceil(pct/100 n) (0 when n is 0 or pct
 * is out of range). */
ERGON_API size_t ergon_percentile_rank(size_t n, double pct);

/* The regularized incomplete beta function I_x(a, b) for a, b > 0 and
 * x in [0, 1] (continued fraction, DLMF 8.17.22); NaN outside. */
ERGON_API double ergon_beta_inc(double a, double b, double x);

/* Student's t distribution with df > 0 degrees of freedom (df need not
 * be an integer: Welch's df is not). ergon_t_cdf: P(T <= t).
 * ergon_t_sf: P(T > t), accurate in the far tail. ergon_t_quantile: the t
 * with P(T <= t) = p, p in (0, 1); NaN for p or df out of range. */
ERGON_API double ergon_t_cdf(double t, double df);
ERGON_API double ergon_t_sf(double t, double df);
ERGON_API double ergon_t_quantile(double p, double df);

/* The standard normal quantile: z with Phi(z) = p, p in (0, 1). */
ERGON_API double ergon_normal_quantile(double p);

/* The ranks of the distribution-free interval of the median of n values
 * (Conover, Practical Nonparametric Statistics, 3rd ed., 3.2): with B ~
 * Binomial(n, 1/2), the order statistics x_(k) and x_(n-k+1) (1-based)
 * bracket the population median with probability 1 - 2 P(B <= k-1); k is
 * the largest rank with 2 P(B <= k-1) <= 0.05. Below n = 6 no rank
 * reaches 95 %: k = 1 ([min, max]) and *coverage says how much it covers
 * (n = 5: 93.75 %). Exact sums up to n = 1000, the normal approximation
 * above (k = floor(n/2 - 0.98 sqrt(n))). n >= 1. */
ERGON_API void ergon_median_ci_ranks(size_t n, size_t *k, double *coverage);

/* The summary of n values. */
struct ergon_summary {
	size_t n;
	double mean;
	double sd;	     /* sample standard deviation (n - 1); NaN for n < 2 */
	double sem;	     /* sd / sqrt(n) */
	double df;	     /* n - 1 */
	double t;	     /* t quantile at (1 + level) / 2 with df; NaN for n < 2 */
	double ci_lo, ci_hi; /* mean -+ t sem; NaN for n < 2 */
	double min, max;
	double median; /* the middle value, or the mean of the two middle ones */
	double median_lo, median_hi, median_coverage; /* ergon_median_ci_ranks */
};

/* Summarize v[0..n) (n >= 1, every value finite; ERGON_EUSAGE naming the
 * index otherwise). The values are not modified. level: ERGON_STATS_LEVEL. */
ERGON_API int ergon_summary_of(const double *v, size_t n, struct ergon_summary *out,
			       struct ergon_err *err);

/* Welch's two-sample t test of the means of a and b (Welch 1947), the
 * variances not assumed equal; the degrees of freedom by Welch and
 * Satterthwaite: df = (va + vb)^2 / (va^2 / (na - 1) + vb^2 / (nb - 1)),
 * va = sa^2 / na. Needs na, nb >= 2. */
struct ergon_welch {
	double diff;	 /* mean_b - mean_a */
	double se;	 /* sqrt(va + vb) */
	double df;	 /* Welch-Satterthwaite; NaN when se is 0 */
	double t;	 /* diff / se; +-inf when se is 0 and diff is not */
	double p;	 /* two-sided p value */
	double t_crit;	 /* the two-sided critical t at alpha with df */
	int significant; /* p < alpha */
};
ERGON_API int ergon_welch_test(const struct ergon_summary *a, const struct ergon_summary *b,
			       double alpha, struct ergon_welch *out, struct ergon_err *err);

/* Tukey's fences (Tukey, Exploratory Data Analysis, 1977, 2C): a value
 * below q1 - 1.5 iqr or above q3 + 1.5 iqr is an outlier. The quartiles
 * are nearest-rank percentiles (the value at rank ceil(p n) of the sorted
 * values), as every percentile ergon states. */
#define ERGON_TUKEY_K 1.5
struct ergon_outliers {
	double q1, q3, iqr, lo_fence, hi_fence;
	size_t n_low, n_high;
};
/* The quartiles and fences of sorted[0..n) (ascending, n >= 1) and the
 * count of values outside them. */
ERGON_API void ergon_outliers_tukey_sorted(const double *sorted, size_t n,
					   struct ergon_outliers *out);

#ifdef __cplusplus
}
#endif
#endif
