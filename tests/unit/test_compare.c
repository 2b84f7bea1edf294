/* ergon_compare on hand-made run reports: the verdicts follow from the
 * numbers written here (difference against the sum of both ±), a
 * difference inside the combined ± is "not distinguishable" and never a
 * regression, and the classes of identity differences. */
#include "ergon/compare.h"
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

static void within_combined_u_is_not_distinguishable(void **state)
{
	(void)state;
	/* 1.03 - 1.00 = 0.03 W < 0.02 + 0.02 W: not distinguishable, so not
	 * a regression even though it is 3 % against a 2 % threshold. */
	json_t *a = report(1.00, 0.02, 1000, "w"), *b = report(1.03, 0.02, 1000, "w");
	const json_t *arts[2] = {a, b};
	const char *labels[2] = {"a", "b"};
	struct ergon_compare_options o = {.threshold_pct = 2};
	json_t *res = NULL;
	struct ergon_err e = {0};
	assert_int_equal(ergon_compare(arts, labels, 2, &o, &res, &e), 0);
	assert_string_equal(verdict(res, "load mean power"), "not distinguishable");
	const json_t *v = json_array_get(json_object_get(row(res, "load mean power"), "versus"), 0);
	assert_true(fabs(json_number_value(json_object_get(v, "combined_u")) - 0.04) < 1e-15);
	assert_true(fabs(json_number_value(json_object_get(v, "pct")) - 3.0) < 1e-9);
	assert_false(ergon_compare_regressed(res));
	json_decref(res);
	/* 1.05 - 1.00 = 0.05 W > 0.04 W: distinguishable, higher, regression. */
	json_decref(b);
	b = report(1.05, 0.02, 1000, "w");
	arts[1] = b;
	assert_int_equal(ergon_compare(arts, labels, 2, &o, &res, &e), 0);
	assert_string_equal(verdict(res, "load mean power"), "higher");
	assert_true(ergon_compare_regressed(res));
	json_decref(res);
	/* Lower power is an improvement, never a regression. */
	json_decref(b);
	b = report(0.90, 0.02, 1000, "w");
	arts[1] = b;
	assert_int_equal(ergon_compare(arts, labels, 2, &o, &res, &e), 0);
	assert_string_equal(verdict(res, "load mean power"), "lower");
	assert_false(ergon_compare_regressed(res));
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
	    cmocka_unit_test(within_combined_u_is_not_distinguishable),
	    cmocka_unit_test(identity_classes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
