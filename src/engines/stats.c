/* Statistics of repeated measurements: see include/ergon/stats.h and
 * docs/METHOD.md ("Repeats and run-to-run spread") for every formula and
 * its source. No Debian library is used here: GSL (libgsl) has the same
 * functions but is GPL-3 and would change the licence of libergon, and
 * what is needed is two textbook algorithms (a continued fraction and a
 * bisection), tested against published tables and closed forms in
 * tests/unit/test_stats.c. */
#include "ergon/stats.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The continued fraction of I_x(a, b) (DLMF 8.17.22), evaluated by the
 * modified Lentz method (Lentz 1976; Thompson and Barnett 1986): the
 * fraction 1 / (1 + d1 / (1 + d2 / (1 + ...))) with
 *   d_{2m+1} = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)),
 *   d_{2m}   = m (b - m) x / ((a + 2m - 1)(a + 2m)).
 * It converges quickly for x < (a + 1) / (a + b + 2). */
static double beta_cf(double a, double b, double x)
{
	const double tiny = 1e-300;
	double c = 1.0;
	double d = 1.0 - (a + b) * x / (a + 1.0); /* 1 + d1 */
	if (fabs(d) < tiny)
		d = tiny;
	d = 1.0 / d;
	double h = d;
	for (int m = 1; m <= 100000; m++) {
		double dm = (double)m, m2 = 2.0 * dm;
		double num = dm * (b - dm) * x / ((a + m2 - 1.0) * (a + m2));
		d = 1.0 + num * d;
		if (fabs(d) < tiny)
			d = tiny;
		c = 1.0 + num / c;
		if (fabs(c) < tiny)
			c = tiny;
		d = 1.0 / d;
		h *= d * c;
		num = -(a + dm) * (a + b + dm) * x / ((a + m2) * (a + m2 + 1.0));
		d = 1.0 + num * d;
		if (fabs(d) < tiny)
			d = tiny;
		c = 1.0 + num / c;
		if (fabs(c) < tiny)
			c = tiny;
		d = 1.0 / d;
		double del = d * c;
		h *= del;
		if (fabs(del - 1.0) < 1e-16)
			break;
	}
	return h;
}

/* I_x(a, b) given x and y = 1 - x, each computed by the caller from
 * its own terms, so that neither loses digits to the other near 0 or 1. */
static double beta_inc2(double a, double b, double x, double y)
{
	if (x <= 0)
		return 0.0;
	if (y <= 0)
		return 1.0;
	/* x^a y^b / B(a, b), in logarithms (B = G(a) G(b) / G(a + b)). */
	double lfront = a * log(x) + b * log(y) - (lgamma(a) + lgamma(b) - lgamma(a + b));
	if (x < (a + 1.0) / (a + b + 2.0))
		return exp(lfront) * beta_cf(a, b, x) / a;
	/* I_x(a, b) = 1 - I_{1-x}(b, a) (DLMF 8.17.4). */
	return 1.0 - exp(lfront) * beta_cf(b, a, y) / b;
}

double ergon_beta_inc(double a, double b, double x)
{
	if (!(a > 0) || !(b > 0) || !(x >= 0) || !(x <= 1) || !isfinite(a) || !isfinite(b))
		return NAN;
	return beta_inc2(a, b, x, 1.0 - x);
}

/* P(T > t) for t >= 0: I_{df / (df + t^2)}(df / 2, 1 / 2) / 2 (DLMF
 * 8.17.1 with the t distribution's relation to the beta, Abramowitz and
 * Stegun 26.7.1 and 26.5.27). Computed from the small argument so that the
 * far tail keeps its digits. */
static double t_upper(double t, double df)
{
	double t2 = t * t;
	if (!isfinite(t2))
		return 0.0;
	/* x = df / (df + t^2) and 1 - x = t^2 / (df + t^2), each directly. */
	return 0.5 * beta_inc2(df / 2.0, 0.5, df / (df + t2), t2 / (df + t2));
}

double ergon_t_sf(double t, double df)
{
	if (isnan(t) || !(df > 0) || !isfinite(df))
		return NAN;
	return t >= 0 ? t_upper(t, df) : 1.0 - t_upper(-t, df);
}

double ergon_t_cdf(double t, double df)
{
	if (isnan(t) || !(df > 0) || !isfinite(df))
		return NAN;
	return t >= 0 ? 1.0 - t_upper(t, df) : t_upper(-t, df);
}

/* The x >= 0 with upper(x) = q (0 < q <= 1/2; upper decreasing from 1/2
 * at x = 0): the bracket doubles until it holds the root, then bisection
 * to the last bit (a root of a monotone function cannot be missed). */
static double invert_upper(double (*upper)(double x, double arg), double arg, double q)
{
	double lo = 0.0, hi = 1.0;
	while (upper(hi, arg) > q) {
		lo = hi;
		hi *= 2.0;
		if (!isfinite(hi))
			return INFINITY;
	}
	for (int i = 0; i < 2100 && hi - lo > 2.0 * DBL_EPSILON * hi; i++) {
		double mid = lo + (hi - lo) / 2.0;
		if (mid <= lo || mid >= hi)
			break;
		if (upper(mid, arg) > q)
			lo = mid;
		else
			hi = mid;
	}
	return lo + (hi - lo) / 2.0;
}

double ergon_t_quantile(double p, double df)
{
	if (!(p > 0) || !(p < 1) || !(df > 0) || !isfinite(df))
		return NAN;
	if (p == 0.5)
		return 0.0;
	double q = p < 0.5 ? p : 1.0 - p;
	double t = invert_upper(t_upper, df, q);
	return p < 0.5 ? -t : t;
}

/* P(Z > z) = erfc(z / sqrt 2) / 2. */
static double normal_upper(double z, double unused)
{
	(void)unused;
	return 0.5 * erfc(z / sqrt(2.0));
}

double ergon_normal_quantile(double p)
{
	if (!(p > 0) || !(p < 1))
		return NAN;
	if (p == 0.5)
		return 0.0;
	double q = p < 0.5 ? p : 1.0 - p;
	double z = invert_upper(normal_upper, 0.0, q);
	return p < 0.5 ? -z : z;
}

void ergon_median_ci_ranks(size_t n, size_t *k_out, double *coverage)
{
	if (n > 1000) {
		double kk = floor((double)n / 2.0 - 0.98 * sqrt((double)n));
		*k_out = kk < 1 ? 1 : (size_t)kk;
		*coverage = 0.95;
		return;
	}
	/* P(B = j) term by term: C(n, j) = C(n, j-1) (n-j+1)/j; 2^-1000 is
	 * still a normal double. */
	double term = ldexp(1.0, -(int)n), cdf = term, tail = term;
	size_t k = 1;
	for (size_t j = 1; j < (n + 1) / 2; j++) {
		term *= (double)(n - j + 1) / (double)j;
		cdf += term;
		if (2.0 * cdf > 0.05)
			break;
		k = j + 1;
		tail = cdf;
	}
	*k_out = k;
	*coverage = 1.0 - 2.0 * tail;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int ergon_summary_of(const double *v, size_t n, struct ergon_summary *out, struct ergon_err *err)
{
	*out = (struct ergon_summary){.n = n};
	if (n == 0)
		return ergon_err_set(err, ERGON_EUSAGE, "statistics of no values");
	for (size_t i = 0; i < n; i++)
		if (!isfinite(v[i]))
			return ergon_err_set(err, ERGON_EUSAGE,
					     "statistics: value %zu is not a finite number", i);
	double *s = malloc(n * sizeof *s);
	if (s == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "statistics: out of memory");
	memcpy(s, v, n * sizeof *s);
	qsort(s, n, sizeof *s, cmp_d);
	/* Compensated (Kahan) sum, then the squares about the mean: the
	 * two-pass form has no cancellation. */
	double sum = 0.0, c = 0.0;
	for (size_t i = 0; i < n; i++) {
		double y = v[i] - c, t = sum + y;
		c = (t - sum) - y;
		sum = t;
	}
	double mean = sum / (double)n;
	out->mean = mean;
	out->min = s[0];
	out->max = s[n - 1];
	out->median = (n % 2) ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2.0;
	size_t k;
	ergon_median_ci_ranks(n, &k, &out->median_coverage);
	out->median_lo = s[k - 1];
	out->median_hi = s[n - k];
	free(s);
	out->df = (double)n - 1.0;
	if (n < 2) {
		out->sd = out->sem = out->t = out->ci_lo = out->ci_hi = NAN;
		return 0;
	}
	double ss = 0.0;
	for (size_t i = 0; i < n; i++)
		ss += (v[i] - mean) * (v[i] - mean);
	out->sd = sqrt(ss / out->df);
	out->sem = out->sd / sqrt((double)n);
	out->t = ergon_t_quantile((1.0 + ERGON_STATS_LEVEL) / 2.0, out->df);
	out->ci_lo = mean - out->t * out->sem;
	out->ci_hi = mean + out->t * out->sem;
	return 0;
}

int ergon_welch_test(const struct ergon_summary *a, const struct ergon_summary *b, double alpha,
		     struct ergon_welch *out, struct ergon_err *err)
{
	*out = (struct ergon_welch){.df = NAN, .t_crit = NAN};
	if (a->n < 2 || b->n < 2)
		return ergon_err_set(
		    err, ERGON_EUSAGE,
		    "Welch's test needs at least 2 values on each side (%zu and %zu)", a->n, b->n);
	if (!(alpha > 0 && alpha < 1))
		return ergon_err_set(err, ERGON_EUSAGE, "Welch's test: alpha %g not in (0, 1)",
				     alpha);
	double va = a->sd * a->sd / (double)a->n, vb = b->sd * b->sd / (double)b->n;
	out->diff = b->mean - a->mean;
	out->se = sqrt(va + vb);
	if (out->se == 0) {
		/* No spread on either side: any difference is beyond it. */
		out->t = out->diff == 0 ? 0.0 : out->diff > 0 ? INFINITY : -INFINITY;
		out->p = out->diff == 0 ? 1.0 : 0.0;
		out->significant = out->diff != 0;
		return 0;
	}
	out->df = (va + vb) * (va + vb) /
		  (va * va / ((double)a->n - 1.0) + vb * vb / ((double)b->n - 1.0));
	out->t = out->diff / out->se;
	out->p = 2.0 * t_upper(fabs(out->t), out->df);
	out->t_crit = ergon_t_quantile(1.0 - alpha / 2.0, out->df);
	out->significant = out->p < alpha;
	return 0;
}

size_t ergon_percentile_rank(size_t n, double pct)
{
	if (n == 0 || !(pct > 0.0) || pct > 100.0)
		return 0;
	/* rank = ceil(pct/100 * n), computed so that an exact product (e.g.
	 * 0.95 * 100 = 95) is not pushed up by binary rounding. */
	double r = pct / 100.0 * (double)n;
	double rank = ceil(r - 1e-9 * r);
	if (rank < 1.0)
		rank = 1.0;
	if (rank > (double)n)
		rank = (double)n;
	return (size_t)rank;
}

double ergon_percentile_nearest_rank(const double *sorted, size_t n, double pct)
{
	size_t rank = ergon_percentile_rank(n, pct);
	return rank ? sorted[rank - 1] : NAN;
}

void ergon_outliers_tukey_sorted(const double *sorted, size_t n, struct ergon_outliers *out)
{
	*out = (struct ergon_outliers){0};
	if (n == 0) {
		out->q1 = out->q3 = out->iqr = out->lo_fence = out->hi_fence = NAN;
		return;
	}
	out->q1 = sorted[ergon_percentile_rank(n, 25) - 1];
	out->q3 = sorted[ergon_percentile_rank(n, 75) - 1];
	out->iqr = out->q3 - out->q1;
	out->lo_fence = out->q1 - ERGON_TUKEY_K * out->iqr;
	out->hi_fence = out->q3 + ERGON_TUKEY_K * out->iqr;
	for (size_t i = 0; i < n && sorted[i] < out->lo_fence; i++)
		out->n_low++;
	for (size_t i = n; i > 0 && sorted[i - 1] > out->hi_fence; i--)
		out->n_high++;
}
