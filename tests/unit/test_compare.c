/* ergon_compare on hand-made run reports: the verdicts follow from the
 * numbers written here. A difference is called only when it exceeds both
 * the sum of both ± and the run-to-run spread (Welch's t test on the
 * repetitions, worked out by hand below); a difference inside either is
 * "not distinguishable" and never a regression; with fewer than 3
 * repetitions on a side no verdict is given. And the classes of identity
 * differences. */
#include "ergon/compare.h"
#include "pipelines/common/common.h"
#include "test_support.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A run report with load power p ± u W and the given sample rate. */
static json_t *report(double p, double u, double hz, const char *workload)
{
	json_t *r =
	    json_pack("{s:s, s:i, s:{s:s}, s:{s:s, s:f, s:f}, s:{s:s, s:f}, s:{s:s}, "
		      "s:{s:{s:f, s:f}}}",
		      "schema", "ergon.report", "schema_version", 1, "provenance", "kind",
		      "measured", "instrument", "model", "X1", "accuracy_pct", 0.5, "resolution_w",
		      0.001, "sampler", "kind", "threaded", "target_hz", hz, "workload", "spec",
		      workload, "figures", "load", "mean_power_w", p, "mean_power_u_w", u);
	assert_non_null(r);
	return r;
}

/* A repeated run report: load power values[0..n) each ± u W. */
static json_t *repeated(const double *values, size_t n, double u)
{
	json_t *r = report(0, 0, 1000, "w");
	json_t *vals = json_array(), *us = json_array();
	for (size_t i = 0; i < n; i++) {
		json_array_append_new(vals, json_real(values[i]));
		json_array_append_new(us, json_real(u));
	}
	json_t *fig = json_pack("{s:[], s:{s:{s:{s:{s:o, s:o}}}}}", "repetitions", "repeat",
				"figures", "load", "mean_power_w", "values", vals, "u", us);
	json_object_set_new(r, "figures", fig);
	json_object_set_new(r, "schema_version", json_integer(2));
	return r;
}

static const json_t *row(const json_t *res, const char *name)
{
	size_t i;
	json_t *x;
	json_array_foreach(json_object_get(res, "figures"), i,
			   x) if (strcmp(json_string_value(json_object_get(x, "name")), name) ==
				  0) return x;
	fail_msg("no figure %s", name);
	return NULL;
}

static const char *verdict(const json_t *res, const char *name)
{
	return json_string_value(json_object_get(
	    json_array_get(json_object_get(row(res, name), "versus"), 0), "verdict"));
}

static json_t *cmp(const json_t *a, const json_t *b, double threshold, int want_rc)
{
	const json_t *arts[2] = {a, b};
	const char *labels[2] = {"a", "b"};
	struct ergon_compare_options o = {.threshold_pct = threshold};
	json_t *res = NULL;
	struct ergon_err e = {0};
	assert_int_equal(ergon_compare(arts, labels, 2, &o, &res, &e), want_rc);
	return res;
}

static const json_t *versus(const json_t *res, const char *name)
{
	return json_array_get(json_object_get(row(res, name), "versus"), 0);
}

/* One run on each side: whatever the numbers, the run-to-run spread is
 * unknown and no verdict (and no regression verdict) is given. */
static void single_runs_get_no_verdict(void **state)
{
	(void)state;
	json_t *a = report(1.00, 0.02, 1000, "w"), *b = report(1.50, 0.02, 1000, "w");
	json_t *res = cmp(a, b, 2, 0);
	const char *v = verdict(res, "load mean power");
	assert_non_null(strstr(v, "no verdict: run-to-run spread unknown (1 and 1 repetitions"));
	assert_true(
	    json_is_true(json_object_get(versus(res, "load mean power"), "spread_unknown")));
	assert_int_equal(json_integer_value(json_object_get(res, "spread_unknown")), 1);
	assert_false(ergon_compare_regressed(res));
	assert_non_null(
	    strstr(json_string_value(ergon_jpath(res, "regression.verdict")), "spread unknown"));
	/* The difference is still shown: 0.5 W, 50 %. */
	assert_true(fabs(json_number_value(json_object_get(versus(res, "load mean power"), "pct")) -
			 50.0) < 1e-9);
	json_decref(res);
	/* Two repetitions are not enough either. */
	const double two[] = {1.0, 1.1};
	json_t *c = repeated(two, 2, 0.02), *d = repeated(two, 2, 0.02);
	res = cmp(c, d, NAN, 0);
	assert_non_null(strstr(verdict(res, "load mean power"), "spread unknown (2 and 2"));
	json_decref(res);
	json_decref(a);
	json_decref(b);
	json_decref(c);
	json_decref(d);
}

static void both_the_instrument_and_the_spread(void **state)
{
	(void)state;
	/* A: 1.00 1.01 0.99 1.00 1.00 (mean 1, sd sqrt(0.0002 / 4)); B the
	 * same + 0.03. Welch: se = sqrt(2 x 0.00005 / 5) = 0.004472, t =
	 * 6.7, far beyond the spread, but 0.03 W < 0.02 + 0.02 W: within the
	 * instruments' ±, so not distinguishable and not a regression even at
	 * 3 % against a 2 % threshold. */
	const double va[] = {1.00, 1.01, 0.99, 1.00, 1.00};
	const double vb[] = {1.03, 1.04, 1.02, 1.03, 1.03};
	json_t *a = repeated(va, 5, 0.02), *b = repeated(vb, 5, 0.02);
	json_t *res = cmp(a, b, 2, 0);
	assert_string_equal(verdict(res, "load mean power"),
			    "not distinguishable (within the instruments' ±)");
	const json_t *v = versus(res, "load mean power");
	assert_true(fabs(json_number_value(json_object_get(v, "combined_u")) - 0.04) < 1e-15);
	assert_true(fabs(json_number_value(ergon_jpath(v, "welch.t")) - 0.03 / sqrt(0.00002)) <
		    1e-6);
	assert_true(json_is_true(ergon_jpath(v, "welch.significant")));
	assert_false(ergon_compare_regressed(res));
	json_decref(res);
	json_decref(b);
	/* + 0.05: beyond both, higher, a regression (5 % > 2 %). */
	const double vc[] = {1.05, 1.06, 1.04, 1.05, 1.05};
	b = repeated(vc, 5, 0.02);
	res = cmp(a, b, 2, 0);
	assert_string_equal(verdict(res, "load mean power"), "higher");
	assert_true(ergon_compare_regressed(res));
	json_decref(res);
	json_decref(b);
	/* Lower power is an improvement, never a regression. */
	const double vd[] = {0.90, 0.91, 0.89, 0.90, 0.90};
	b = repeated(vd, 5, 0.02);
	res = cmp(a, b, 2, 0);
	assert_string_equal(verdict(res, "load mean power"), "lower");
	assert_false(ergon_compare_regressed(res));
	json_decref(res);
	json_decref(b);
	json_decref(a);
	/* A: 1.0 1.2 0.8 1.1 0.9, B: each + 0.1. The 0.1 W exceeds the ±
	 * (0.04 W), but each side's sd is sqrt(0.1 / 4) = 0.158, se =
	 * sqrt(2 x 0.025 / 5) = 0.1, t = 1.0 with df = (2 x 0.005)^2 /
	 * (2 x 0.005^2 / 4) = 8: p = 0.347 (t(0.975, 8) = 2.306): within the
	 * run-to-run spread. */
	const double ve[] = {1.0, 1.2, 0.8, 1.1, 0.9};
	const double vf[] = {1.1, 1.3, 0.9, 1.2, 1.0};
	a = repeated(ve, 5, 0.02);
	b = repeated(vf, 5, 0.02);
	res = cmp(a, b, 2, 0);
	assert_string_equal(verdict(res, "load mean power"),
			    "not distinguishable (within the run-to-run spread)");
	v = versus(res, "load mean power");
	assert_true(fabs(json_number_value(ergon_jpath(v, "welch.t")) - 1.0) < 1e-9);
	assert_true(fabs(json_number_value(ergon_jpath(v, "welch.df")) - 8.0) < 1e-9);
	assert_true(fabs(json_number_value(ergon_jpath(v, "welch.p")) - 0.347) < 0.0005);
	assert_false(ergon_compare_regressed(res));
	assert_int_equal(json_integer_value(json_object_get(res, "spread_unknown")), 0);
	json_decref(res);
	json_decref(a);
	json_decref(b);
}

static void identity_classes(void **state)
{
	(void)state;
	json_t *a = report(1, 0.01, 1000, "w1"), *b = report(1, 0.01, 1000, "w2");
	const json_t *arts[2] = {a, b};
	const char *labels[2] = {"a", "b"};
	struct ergon_compare_options o = {.threshold_pct = NAN};
	json_t *res = NULL;
	struct ergon_err e = {0};
	/* Another workload is the subject: comparable. */
	assert_int_equal(ergon_compare(arts, labels, 2, &o, &res, &e), 0);
	assert_true(
	    json_is_true(json_object_get(json_object_get(res, "comparability"), "comparable")));
	json_decref(res);
	/* Another instrument model breaks comparability: refused, listed. */
	json_object_set_new(json_object_get(b, "instrument"), "model", json_string("Y2"));
	assert_int_equal(ergon_compare(arts, labels, 2, &o, &res, &e), ERGON_EREFUSED);
	assert_non_null(res);
	const json_t *diffs = json_object_get(json_object_get(res, "comparability"), "differences");
	int saw_model = 0, saw_workload = 0;
	size_t i;
	json_t *x;
	json_array_foreach(diffs, i, x)
	{
		const char *f = json_string_value(json_object_get(x, "field"));
		const char *c = json_string_value(json_object_get(x, "class"));
		if (strcmp(f, "instrument.model") == 0 && strcmp(c, "breaks") == 0)
			saw_model = 1;
		if (strcmp(f, "workload.spec") == 0 && strcmp(c, "subject") == 0)
			saw_workload = 1;
	}
	assert_true(saw_model && saw_workload);
	assert_null(json_object_get(res, "figures"));
	json_decref(res);
	/* Forced: compared, and marked forced. */
	o.force_incomparable = 1;
	assert_int_equal(ergon_compare(arts, labels, 2, &o, &res, &e), 0);
	assert_true(json_is_true(json_object_get(json_object_get(res, "comparability"), "forced")));
	json_decref(res);
	json_decref(a);
	json_decref(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(single_runs_get_no_verdict),
	    cmocka_unit_test(both_the_instrument_and_the_spread),
	    cmocka_unit_test(identity_classes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
