/* Shifts in a figure's history: PELT on an uncertainty-weighted
 * mean-shift cost (include/ergon/changepoint.h, docs/METHOD.md). */
#include "ergon/changepoint.h"

#include "ergon/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* 1.4826 x median |x[i+1] - x[i]| / sqrt 2: the standard deviation of
 * independent normal points from their successive differences, robust to
 * a level shift (it moves one difference) and to a few outliers
 * (the noise scale of e.g. Fryzlewicz, Ann. Statist. 42(6), 2014; the MAD's 1.4826 makes it
 * consistent for the normal). NaN when there are fewer than 2 points or
 * no memory. */
static double sigma_of_differences(const double *x, size_t n)
{
	if (n < 2)
		return NAN;
	double *d = malloc((n - 1) * sizeof *d);
	if (d == NULL)
		return NAN;
	for (size_t i = 0; i + 1 < n; i++)
		d[i] = fabs(x[i + 1] - x[i]);
	qsort(d, n - 1, sizeof *d, cmp_d);
	size_t m = n - 1;
	double med = (m % 2) ? d[m / 2] : (d[m / 2 - 1] + d[m / 2]) / 2.0;
	free(d);
	return 1.4826 * med / sqrt(2.0);
}

/* Prefix sums of w, w x, w x^2: the cost of points [a, b) is
 * Sxx - Sx^2 / Sw over them. */
struct sums {
	double *w, *wx, *wxx;
};

static double cost(const struct sums *p, size_t a, size_t b)
{
	double sw = p->w[b] - p->w[a], sx = p->wx[b] - p->wx[a], sxx = p->wxx[b] - p->wxx[a];
	if (!(sw > 0))
		return 0.0;
	double c = sxx - sx * sx / sw;
	return c > 0 ? c : 0.0;
}

int ergon_changepoints(const double *x, const double *s, size_t n, double alpha,
		       struct ergon_cp_result *out, struct ergon_err *err)
{
	*out = (struct ergon_cp_result){0};
	if (n == 0 || n > ERGON_CP_MAX_POINTS)
		return ergon_err_set(err, ERGON_EUSAGE, "changes: %zu points; 1 to %d are taken", n,
				     ERGON_CP_MAX_POINTS);
	if (alpha == 0)
		alpha = ERGON_CP_ALPHA;
	if (!(alpha > 0 && alpha < 1))
		return ergon_err_set(err, ERGON_EUSAGE, "changes: alpha %g not in (0, 1)", alpha);
	/* Beyond 1e150 a square is out of a double's range: no figure ergon
	 * measures comes near it. */
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(x[i]) || fabs(x[i]) > ERGON_CP_MAX_ABS ||
		    (x[i] != 0 && fabs(x[i]) < ERGON_CP_MIN_ABS))
			return ergon_err_set(err, ERGON_EUSAGE,
					     "changes: point %zu is %g; a finite number of at "
					     "most 1e150 in magnitude, and 0 or at least 1e-150, "
					     "is needed",
					     i, x[i]);
		if (s && isfinite(s[i]) && s[i] > ERGON_CP_MAX_ABS)
			return ergon_err_set(err, ERGON_EUSAGE,
					     "changes: point %zu states an uncertainty of %g; at "
					     "most 1e150 is taken",
					     i, s[i]);
	}
	out->alpha = alpha;
	double sd = sigma_of_differences(x, n);
	out->sigma_data = sd;
	/* beta: the chi-square(1) quantile at 1 - alpha / (n - 1), i.e. the
	 * square of the normal quantile at 1 - alpha / (2 (n - 1)). */
	double z = ergon_normal_quantile(1.0 - alpha / (2.0 * (double)(n > 1 ? n - 1 : 1)));
	out->penalty = z * z;
	struct sums p = {calloc(n + 1, sizeof(double)), calloc(n + 1, sizeof(double)),
			 calloc(n + 1, sizeof(double))};
	double *F = malloc((n + 1) * sizeof *F);
	size_t *last = malloc((n + 1) * sizeof *last), *R = malloc((n + 1) * sizeof *R);
	double *wt = malloc(n * sizeof *wt);
	int rc = 0;
	if (!p.w || !p.wx || !p.wxx || !F || !last || !R || !wt) {
		rc = ergon_err_set(err, ERGON_ENOMEM, "changes: out of memory");
		goto out;
	}
	/* The sums are of the points less their plain mean c0, in units of
	 * their greatest distance from it, S: the cost is a difference of
	 * sums, which keeps its digits only when the values are small next to
	 * their spread, and nothing overflows (|x'| <= 1, and a point's
	 * uncertainty is taken as 1e-100 S to 1e100 S). The cost, a sum of
	 * squared standardised distances, is the same in any unit. */
	double c0 = 0, S = 0;
	for (size_t i = 0; i < n; i++)
		c0 += (x[i] - c0) / (double)(i + 1);
	for (size_t i = 0; i < n; i++)
		S = fmax(S, fabs(x[i] - c0));
	if (!(S > 0) || !isfinite(S))
		S = 1;
	/* The weights: no point is trusted beyond the history's own
	 * scatter, nor less than its stated uncertainty. With no scatter at
	 * all and nothing stated, every point weighs the same. */
	for (size_t i = 0; i < n; i++) {
		double sg = s && isfinite(s[i]) && s[i] > 0 ? s[i] : 0.0;
		if (isfinite(sd) && sd > sg)
			sg = sd;
		double w = sg > 0 ? 1.0 / pow(fmin(fmax(sg / S, 1e-100), 1e100), 2) : 1.0;
		wt[i] = w;
		p.w[i + 1] = p.w[i] + w;
		double xc = (x[i] - c0) / S;
		p.wx[i + 1] = p.wx[i] + w * xc;
		p.wxx[i + 1] = p.wxx[i] + w * xc * xc;
	}
	int no_scale = !(isfinite(sd) && sd > 0);
	for (size_t i = 0; no_scale && s && i < n; i++)
		if (isfinite(s[i]) && s[i] > 0)
			no_scale = 0;
	/* PELT: F[t] = min over the kept tau of F[tau] + C(tau, t) + beta;
	 * a tau that cannot be the last change of any later optimum (F[tau]
	 * + C(tau, t) > F[t]) is pruned (Killick et al. 2012, theorem 3.1,
	 * K = 0 for this cost). Segments hold at least
	 * ERGON_CP_MIN_SEGMENT points. */
	const size_t minseg = ERGON_CP_MIN_SEGMENT;
	size_t nr = 0;
	F[0] = -out->penalty;
	last[0] = 0;
	for (size_t t = 1; t <= n; t++) {
		if (t >= minseg)
			R[nr++] = t - minseg; /* the newest candidate becomes usable */
		double best = INFINITY;
		size_t arg = 0;
		for (size_t k = 0; k < nr; k++) {
			size_t tau = R[k];
			if (tau != 0 && tau < minseg)
				continue;
			double f = F[tau] + cost(&p, tau, t) + out->penalty;
			if (f < best) {
				best = f;
				arg = tau;
			}
		}
		if (!isfinite(best)) {
			/* t < minseg: one segment from 0 so far. */
			best = cost(&p, 0, t);
			arg = 0;
		}
		F[t] = best;
		last[t] = arg;
		size_t kept = 0;
		for (size_t k = 0; k < nr; k++) {
			size_t tau = R[k];
			if (F[tau] + cost(&p, tau, t) <= F[t])
				R[kept++] = tau;
		}
		nr = kept;
	}
	/* A history without any scale has no findings: one segment. */
	size_t nseg = 0;
	if (!no_scale)
		for (size_t t = n; t > 0; t = last[t])
			nseg++;
	else
		nseg = 1;
	out->seg = calloc(nseg, sizeof *out->seg);
	if (out->seg == NULL) {
		rc = ergon_err_set(err, ERGON_ENOMEM, "changes: out of memory");
		goto out;
	}
	out->n_seg = nseg;
	size_t k = nseg, t = n;
	while (k > 0) {
		size_t a = no_scale ? 0 : last[t];
		struct ergon_cp_segment *g = &out->seg[--k];
		g->start = a;
		g->end = t;
		/* The weighted mean of the points themselves (weights relative
		 * to the segment's greatest: no overflow, and it lies within
		 * the segment's values up to rounding), and its standard error
		 * 1 / sqrt(sum w) back in the values' unit; none without a
		 * scale. */
		double wmax = 0, sw = 0, swn = 0, swx = 0;
		for (size_t i = a; i < t; i++)
			wmax = fmax(wmax, wt[i]);
		for (size_t i = a; i < t; i++) {
			sw += wt[i];
			swn += wt[i] / wmax;
			swx += wt[i] / wmax * x[i];
		}
		g->mean = swx / swn;
		g->se = no_scale ? NAN : S / sqrt(sw);
		t = a;
	}
out:
	free(p.w);
	free(p.wx);
	free(p.wxx);
	free(F);
	free(last);
	free(R);
	free(wt);
	return rc;
}
