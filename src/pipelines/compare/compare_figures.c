/* ergon compare: one figure of n artifacts against the first (difference,
 * ratio, %, combined ±, verdict, regression), shared by every kind
 * (compare.c, compare_kernels.c; docs/COMPARE.md "Figures"). */
#include "pipelines/compare/compare_internal.h"
#include "pipelines/common/common.h"

#include <math.h>

static const char *verdict_of(double d, double cu, int have_u)
{
	if (d == 0)
		return "equal";
	if (!have_u)
		return d > 0 ? "higher (no ± stated)" : "lower (no ± stated)";
	if (fabs(d) <= cu)
		return "not distinguishable";
	return d > 0 ? "higher" : "lower";
}

json_t *cmp_versus(const char *name, int better, int headline, const double *v, const double *u,
		   const int *hv, const int *hu, size_t n, double threshold_pct, json_t *regressed)
{
	json_t *vs = json_array();
	for (size_t i = 1; i < n; i++) {
		if (!hv[0] || !hv[i]) {
			json_array_append_new(
			    vs, json_pack("{s:n, s:n, s:n, s:n, s:s}", "diff", "ratio", "pct",
					  "combined_u", "verdict",
					  "not available (a figure is withheld or absent)"));
			continue;
		}
		double diff = v[i] - v[0];
		double ratio = v[0] != 0 ? v[i] / v[0] : NAN;
		double pct = v[0] != 0 ? 100.0 * diff / fabs(v[0]) : NAN;
		int have_u = hu[0] && hu[i];
		double cu = have_u ? u[0] + u[i] : NAN;
		const char *verdict = verdict_of(diff, cu, have_u);
		int distinguishable = diff != 0 && (!have_u || fabs(diff) > cu);
		/* Worse by more than the threshold, and not lost in the ±. */
		int worse = better != 0 && distinguishable && isfinite(pct) &&
			    -better * pct > threshold_pct;
		if (worse && headline && !isnan(threshold_pct))
			json_array_append_new(regressed,
					      json_pack("{s:s, s:i, s:f}", "figure", name,
							"artifact", (int)i, "pct", pct));
		json_array_append_new(vs, json_pack("{s:o, s:o, s:o, s:o, s:s}", "diff",
						    ergon_jnum(diff), "ratio", ergon_jnum(ratio),
						    "pct", ergon_jnum(pct), "combined_u",
						    ergon_jnum(cu), "verdict", verdict));
	}
	return vs;
}
