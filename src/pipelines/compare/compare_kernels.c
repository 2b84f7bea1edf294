/* ergon compare of ergon.kernels artifacts (docs/COMPARE.md, "Kernels"):
 * cases are matched by name and implementation, never by position; the
 * figure is the median count with the half-width of its distribution-free
 * interval (ergon_kernels_median_ci) as its ±, so "not distinguishable"
 * means what it means for run reports: the difference is within the
 * combined ± of both sides. */
#include "ergon/compare.h"
#include "ergon/kernels.h"
#include "pipelines/common/common.h"
#include "pipelines/compare/compare_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int cmp_is_kernels(const json_t *a)
{
	const char *s = json_string_value(json_object_get(a, "schema"));
	return s && strcmp(s, ERGON_KERNELS_SCHEMA) == 0 &&
	       json_is_array(ergon_jpath(a, "kernels.cases"));
}

/* What must agree for two kernel timings to be compared: what was
 * measured with what clock, on which machine; the build and the cases'
 * source are what one compares (two builds, two kernels versions). */
const struct ident_field cmp_kernels_ident[CMP_KERNELS_IDENT_N] = {
    {"provenance.kind", F_BREAKS, 0},
    {"provenance.board", F_BREAKS, 0},
    {"kernels.unit", F_BREAKS, 0},
    {"timing.clock", F_BREAKS, 0},
    {"timing.overhead_subtracted", F_BREAKS, 0},
    {"provenance.samples_provenance", F_BREAKS, 0},
    {"conditions.cpu_model", F_BREAKS, 0},
    {"conditions.cpu_count", F_BREAKS, 0},
    {"conditions.governor", F_BREAKS, 0},
    {"build.compiler", F_SUBJECT, 0},
    {"build.flags", F_SUBJECT, 0},
    {"build.kernels", F_SUBJECT, 0},
    {"source.path", F_SUBJECT, 0},
    {"provenance.source.path", F_SUBJECT, 0},
    {"provenance.source.sha256", F_SUBJECT, 0},
    {"kernels.overhead_subtracted_rows", F_NOTE, 0},
    {"kernels.baseline", F_NOTE, 0},
    {"timing.iterations", F_NOTE, 0},
    {"timing.warmup", F_NOTE, 0},
    {"conditions.host", F_NOTE, 0},
    {"conditions.kernel", F_NOTE, 0},
    {"tool.version", F_NOTE, 0},
};

/* The entry of impl in case name of artifact a, or NULL. */
static const json_t *find_impl(const json_t *a, const char *name, const char *impl)
{
	size_t i, k;
	const json_t *c, *m;
	json_array_foreach(ergon_jpath(a, "kernels.cases"), i, c)
	{
		if (!json_is_string(json_object_get(c, "case")) ||
		    strcmp(json_string_value(json_object_get(c, "case")), name) != 0)
			continue;
		json_array_foreach(json_object_get(c, "impls"), k, m)
		{
			const char *s = json_string_value(json_object_get(m, "impl"));
			if (s && strcmp(s, impl) == 0)
				return m;
		}
	}
	return NULL;
}

/* Every (case, impl) of every artifact, in order of first appearance, as
 * [case, impl] pairs. */
static json_t *all_keys(const json_t *const *a, size_t n)
{
	json_t *keys = json_array(), *seen = json_object();
	for (size_t i = 0; i < n; i++) {
		size_t c, k;
		const json_t *cs, *m;
		json_array_foreach(ergon_jpath(a[i], "kernels.cases"), c, cs)
		{
			const char *name = json_string_value(json_object_get(cs, "case"));
			json_array_foreach(json_object_get(cs, "impls"), k, m)
			{
				const char *impl = json_string_value(json_object_get(m, "impl"));
				if (name == NULL || impl == NULL)
					continue;
				char key[2 * ERGON_KERNELS_NAME_MAX + 8];
				snprintf(key, sizeof key, "%s\x1f%s", name, impl);
				if (json_object_get(seen, key))
					continue;
				json_object_set_new(seen, key, json_true());
				json_array_append_new(keys, json_pack("[s,s]", name, impl));
			}
		}
	}
	json_decref(seen);
	return keys;
}

/* The coverage of the ± shown: with repetitions the least of theirs,
 * else the median interval's. New reference. */
static json_t *coverage_of(const json_t *m, const json_t *ci)
{
	const json_t *cov = json_object_get(json_object_get(m, "repeat"), "coverage");
	if (json_array_size(cov) > 0) {
		double least = 1;
		size_t i;
		const json_t *x;
		json_array_foreach(cov, i, x) if (json_number_value(x) < least) least =
		    json_number_value(x);
		return json_real(least);
	}
	const json_t *c = json_object_get(ci, "coverage");
	return c ? json_deep_copy(c) : json_null();
}

/* One side of a kernels row: with repetitions (kernels run --repeat),
 * each repetition's median with the half-width of its interval; else the
 * one median. */
static void kernels_sample(const json_t *m, double v, double u, struct cmp_sample *out)
{
	const json_t *rep = json_object_get(m, "repeat");
	const json_t *meds = json_object_get(rep, "medians");
	const json_t *us = json_object_get(rep, "u");
	size_t k = json_array_size(meds);
	if (isfinite(v) && k >= 1 && k <= ERGON_KERNELS_MAX_REPEAT) {
		double a[ERGON_KERNELS_MAX_REPEAT], b[ERGON_KERNELS_MAX_REPEAT];
		for (size_t i = 0; i < k; i++) {
			const json_t *x = json_array_get(meds, i), *y = json_array_get(us, i);
			a[i] = json_is_number(x) ? json_number_value(x) : NAN;
			b[i] = json_is_number(y) ? json_number_value(y) : NAN;
		}
		cmp_sample_of(a, b, k, out);
		return;
	}
	cmp_sample_of(&v, &u, 1, out);
}

/* Whether one side may be called a regression: the artifact's own
 * valid_for_regression, or, in an artifact written before it existed, the
 * rule (ergon_kernels_regression_valid) applied to what it states. */
static int side_valid(const json_t *m)
{
	const json_t *v = json_object_get(m, "valid_for_regression");
	if (json_is_boolean(v))
		return json_is_true(v);
	const json_t *ci = json_object_get(m, "median_ci");
	const json_t *n = json_object_get(m, "n");
	const json_t *md = json_object_get(m, "median");
	const json_t *lo = json_object_get(ci, "lo"), *hi = json_object_get(ci, "hi");
	double nn = json_is_number(n) ? json_number_value(n) : 0;
	return ergon_kernels_regression_valid(
	    json_is_true(json_object_get(m, "correct")), json_is_true(json_object_get(m, "timed")),
	    nn >= 1 && nn <= ERGON_KERNELS_MAX_SAMPLES ? (size_t)nn : 0,
	    json_is_number(md) ? json_number_value(md) : NAN,
	    json_is_number(lo) ? json_number_value(lo) : NAN,
	    json_is_number(hi) ? json_number_value(hi) : NAN, NULL, 0);
}

json_t *cmp_kernels_rows(const json_t *const *a, const char *const *labels, size_t n,
			 double threshold_pct, json_t *regressed, json_t *result,
			 size_t *spread_unknown)
{
	json_t *rows = json_array(), *only = json_array();
	json_t *keys = all_keys(a, n);
	const char *unit = json_string_value(ergon_jpath(a[0], "kernels.unit"));
	size_t q;
	json_t *key;
	json_array_foreach(keys, q, key)
	{
		const char *name = json_string_value(json_array_get(key, 0));
		const char *impl = json_string_value(json_array_get(key, 1));
		const json_t *m[ERGON_COMPARE_MAX];
		double v[ERGON_COMPARE_MAX], u[ERGON_COMPARE_MAX];
		int hv[ERGON_COMPARE_MAX], hu[ERGON_COMPARE_MAX];
		struct cmp_sample smp[ERGON_COMPARE_MAX];
		size_t present = 0;
		json_t *in = json_array(), *vals = json_array();
		for (size_t i = 0; i < n; i++) {
			m[i] = find_impl(a[i], name, impl);
			if (m[i] != NULL) {
				present++;
				json_array_append_new(in, json_string(labels[i]));
			}
			const json_t *md = json_object_get(m[i], "median");
			const json_t *ci = json_object_get(m[i], "median_ci");
			double lo = json_number_value(json_object_get(ci, "lo"));
			double hi = json_number_value(json_object_get(ci, "hi"));
			hv[i] = json_is_true(json_object_get(m[i], "timed")) && json_is_number(md);
			v[i] = hv[i] ? json_number_value(md) : NAN;
			/* The interval is asymmetric: its wider side is the ±. */
			hu[i] = hv[i] && json_is_number(json_object_get(ci, "lo")) &&
				json_is_number(json_object_get(ci, "hi"));
			u[i] = hu[i] ? fmax(v[i] - lo, hi - v[i]) : NAN;
			const char *why = m[i] == NULL ? "absent"
					  : !json_is_true(json_object_get(m[i], "correct"))
					      ? "not timed: the output differs from the reference"
					  : !hv[i] ? "not timed"
						   : NULL;
			kernels_sample(m[i], hv[i] ? v[i] : NAN, hu[i] ? u[i] : NAN, &smp[i]);
			json_array_append_new(
			    vals, json_pack("{s:o, s:o, s:I, s:o, s:o, s:s?}", "value",
					    ergon_jnum(smp[i].have ? smp[i].mean : NAN), "u",
					    ergon_jnum(smp[i].u), "repetitions",
					    (json_int_t)smp[i].n, "n",
					    json_deep_copy(json_object_get(m[i], "n")
							       ? json_object_get(m[i], "n")
							       : json_null()),
					    "coverage", coverage_of(m[i], ci), "why", why));
		}
		if (present < n)
			json_array_append_new(only, json_pack("{s:s, s:s, s:O}", "case", name,
							      "impl", impl, "in", in));
		/* A row needs the baseline and at least one other side. */
		if (m[0] == NULL || present < 2) {
			json_decref(in);
			json_decref(vals);
			continue;
		}
		char fig[2 * ERGON_KERNELS_NAME_MAX + 32];
		snprintf(fig, sizeof fig, "%s [%s] median", name, impl);
		/* A regression is called only where both sides are valid for
		 * regression (docs/METHOD.md, "Kernels"); the verdict stays. */
		json_t *found = json_array();
		json_t *vs = cmp_versus(fig, -1, 1, smp, n, threshold_pct, found, spread_unknown);
		size_t f;
		json_t *r;
		json_array_foreach(found, f, r)
		{
			json_int_t i = json_integer_value(json_object_get(r, "artifact"));
			if (i >= 1 && (size_t)i < n && side_valid(m[0]) && side_valid(m[i]))
				json_array_append(regressed, r);
		}
		json_decref(found);
		for (size_t i = 1; i < n; i++) {
			json_t *o = json_array_get(vs, i - 1);
			int both = m[i] != NULL && side_valid(m[0]) && side_valid(m[i]);
			json_object_set_new(o, "valid_for_regression", json_boolean(both));
			if (!both && m[i] != NULL)
				json_object_set_new(
				    o, "regression_note",
				    json_string("not assessed as a regression: not valid for "
						"regression on both sides (kernels.cases[].impls[]."
						"regression_reason)"));
		}
		json_array_append_new(rows,
				      json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:b, s:o, s:o}",
						"name", fig, "case", name, "impl", impl, "path",
						"kernels.cases[].impls[].median", "unit",
						unit ? unit : "counts", "better", "lower",
						"headline", 1, "values", vals, "versus", vs));
		json_decref(in);
	}
	json_decref(keys);
	json_object_set_new(result, "only_in", only);
	json_object_set_new(
	    result, "uncertainty",
	    json_string("± of a median: the wider side of its distribution-free "
			"interval (order statistics, >= 95 % coverage from 6 samples "
			"on; the coverage is given per value)"));
	return rows;
}
