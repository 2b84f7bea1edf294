/* ergon compare: one figure of n artifacts against the first (difference,
 * ratio, %, the instruments' combined ±, the run-to-run test, verdict,
 * regression), shared by every kind (compare.c, compare_kernels.c;
 * docs/COMPARE.md "Figures").
 *
 * The rule: a difference is called only when it exceeds both the
 * instruments' combined ± and the repeat-to-repeat spread. The spread is
 * judged by Welch's two-sample t test (two-sided, alpha 5 %) on the
 * repetitions of each side; with fewer than ERGON_STATS_MIN_REPEATS on
 * either side the spread is unknown and no verdict is given. */
#include "ergon/stats.h"
#include "pipelines/compare/compare_internal.h"
#include "pipelines/common/common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

void cmp_sample_of(const double *v, const double *u, size_t m, struct cmp_sample *out)
{
	*out = (struct cmp_sample){.mean = NAN, .u = NAN};
	double *x = malloc((m ? m : 1) * sizeof *x);
	if (x == NULL)
		return;
	double usum = 0;
	int all_u = 1;
	size_t k = 0;
	for (size_t i = 0; i < m; i++) {
		if (!isfinite(v[i]))
			continue;
		x[k++] = v[i];
		if (u && isfinite(u[i]))
			usum += u[i];
		else
			all_u = 0;
	}
	struct ergon_err err = {0};
	if (k > 0 && ergon_summary_of(x, k, &out->st, &err) == 0) {
		out->have = 1;
		out->n = k;
		out->mean = out->st.mean;
		/* The instrument's ± of a mean of repetitions: the mean of their
		 * ± (a rated gain error is the same in every repetition, so it
		 * does not average down). */
		out->u = all_u ? usum / (double)k : NAN;
	}
	free(x);
}

static json_t *no_verdict(const char *verdict)
{
	return json_pack("{s:n, s:n, s:n, s:n, s:s}", "diff", "ratio", "pct", "combined_u",
			 "verdict", verdict);
}

json_t *cmp_versus(const char *name, int better, int headline, const struct cmp_sample *s, size_t n,
		   double threshold_pct, json_t *regressed, size_t *spread_unknown)
{
	json_t *vs = json_array();
	for (size_t i = 1; i < n; i++) {
		if (!s[0].have || !s[i].have) {
			json_array_append_new(
			    vs, no_verdict("not available (a figure is withheld or absent)"));
			continue;
		}
		double diff = s[i].mean - s[0].mean;
		double ratio = s[0].mean != 0 ? s[i].mean / s[0].mean : NAN;
		double pct = s[0].mean != 0 ? 100.0 * diff / fabs(s[0].mean) : NAN;
		int have_u = isfinite(s[0].u) && isfinite(s[i].u);
		double cu = have_u ? s[0].u + s[i].u : NAN;
		json_t *o =
		    json_pack("{s:o, s:o, s:o, s:o, s:[I, I]}", "diff", ergon_jnum(diff), "ratio",
			      ergon_jnum(ratio), "pct", ergon_jnum(pct), "combined_u",
			      ergon_jnum(cu), "n", (json_int_t)s[0].n, (json_int_t)s[i].n);
		if (s[0].n < ERGON_STATS_MIN_REPEATS || s[i].n < ERGON_STATS_MIN_REPEATS) {
			char why[200];
			snprintf(why, sizeof why,
				 "no verdict: run-to-run spread unknown (%zu and %zu repetitions; "
				 "%d or more on each side, e.g. --repeat %d)",
				 s[0].n, s[i].n, ERGON_STATS_MIN_REPEATS, ERGON_STATS_MIN_REPEATS);
			json_object_set_new(o, "verdict", json_string(why));
			json_object_set_new(o, "spread_unknown", json_true());
			json_array_append_new(vs, o);
			if (spread_unknown)
				(*spread_unknown)++;
			continue;
		}
		struct ergon_welch w;
		struct ergon_err err = {0};
		ergon_welch_test(&s[0].st, &s[i].st, 1.0 - ERGON_STATS_LEVEL, &w, &err);
		json_object_set_new(o, "welch",
				    json_pack("{s:o, s:o, s:o, s:o, s:f, s:b}", "t",
					      ergon_jnum(w.t), "df", ergon_jnum(w.df), "p",
					      ergon_jnum(w.p), "t_crit", ergon_jnum(w.t_crit),
					      "alpha", 1.0 - ERGON_STATS_LEVEL, "significant",
					      w.significant));
		int beyond_u = !have_u || fabs(diff) > cu;
		int distinguishable = diff != 0 && beyond_u && w.significant;
		const char *verdict;
		char buf[160];
		if (diff == 0)
			verdict = "equal";
		else if (distinguishable) {
			snprintf(buf, sizeof buf, "%s%s", diff > 0 ? "higher" : "lower",
				 have_u ? ""
					: " (no instrument ± stated: the spread alone decides)");
			verdict = buf;
		} else if (!beyond_u && !w.significant)
			verdict = "not distinguishable (within the instruments' ± and the "
				  "run-to-run spread)";
		else if (!beyond_u)
			verdict = "not distinguishable (within the instruments' ±)";
		else
			verdict = "not distinguishable (within the run-to-run spread)";
		json_object_set_new(o, "verdict", json_string(verdict));
		/* Worse by more than the threshold, and distinguishable. */
		int worse = better != 0 && distinguishable && isfinite(pct) &&
			    -better * pct > threshold_pct;
		if (worse && headline && !isnan(threshold_pct))
			json_array_append_new(regressed,
					      json_pack("{s:s, s:i, s:f}", "figure", name,
							"artifact", (int)i, "pct", pct));
		json_array_append_new(vs, o);
	}
	return vs;
}

json_t *cmp_value_json(const struct cmp_sample *s)
{
	json_t *o = json_pack("{s:o, s:o, s:I}", "value", ergon_jnum(s->have ? s->mean : NAN), "u",
			      ergon_jnum(s->u), "n", (json_int_t)s->n);
	if (s->have && s->n >= 2) {
		json_object_set_new(o, "sd", ergon_jnum(s->st.sd));
		json_object_set_new(o, "ci_lo", ergon_jnum(s->st.ci_lo));
		json_object_set_new(o, "ci_hi", ergon_jnum(s->st.ci_hi));
	}
	return o;
}
