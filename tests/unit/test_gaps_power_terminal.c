/* A dedicated power build whose terminal record never arrived: the host
 * says so (power.terminal_missing) and the ratio check is authoritative
 * (issue 5: "with no firmware window to arbitrate (… a lost terminal …) the
 * ratio check is authoritative as that warning").
 *
 * Numbers by hand: 100 inferences of 50 ms = 5.000 s expected; the
 * tolerance is the largest of 2 packets (2 ms), half an inference (25 ms)
 * and the 10 % cross-boot allowance (0.5 s) = 0.5 s. So a 5.49 s gate
 * passes and a 5.51 s gate fails. */
#include "ergon/gated.h"
#include "ergon/issue_list.h"
#include "ergon/issues.h"
#include "test_support.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static struct ergon_power_gate_view view(double gate_s)
{
	struct ergon_power_gate_view gv;
	memset(&gv, 0, sizeof(gv));
	gv.window_count = 1;
	gv.gate_s = gate_s;
	gv.integral_s = gate_s;
	gv.shortest_integral_s = gate_s;
	gv.gated_avg_current_a = 0.010;
	gv.whole_avg_current_a = 0.005;
	gv.have_whole = 1;
	gv.stats_period_s = 0.001;
	gv.min_window_s = 1.0;
	return gv;
}

/* The power build ran (a record was due) but none arrived; the count is
 * the profile boot's. */
static struct ergon_power_facts lost(void)
{
	struct ergon_power_facts f;
	memset(&f, 0, sizeof(f));
	f.terminal_expected = 1;
	f.have_clean_count = 1;
	f.clean_infer_count = 100;
	f.clean_infer_avg_us = 50000;
	f.probe_kind = ERGON_PROBE_INFER;
	snprintf(f.clean_count_source, sizeof f.clean_count_source, "profile_boot");
	return f;
}

static json_t *eval(const struct ergon_power_facts *f, double gate_s, struct ergon_power_verdict *v)
{
	struct ergon_power_gate_view gv = view(gate_s);
	json_t *issues = json_array();
	struct ergon_issue_list l = {0};
	assert_int_equal(ergon_power_evaluate(f, &gv, &l, v), 0);
	assert_int_equal(ergon_issue_list_to_json(&l, issues), 0);
	ergon_issue_list_cleanup(&l);
	return issues;
}

static void done(json_t *issues, struct ergon_power_verdict *v)
{
	json_decref(issues);
	(void)v; /* the verdict holds nothing to free */
}

static const json_t *find(const json_t *issues, const char *code)
{
	size_t i;
	json_t *it;
	json_array_foreach(issues, i, it)
	{
		if (strcmp(json_string_value(json_object_get(it, "code")), code) == 0)
			return it;
	}
	return NULL;
}

static void lost_record_within_tolerance(void **state)
{
	(void)state;
	struct ergon_power_facts f = lost();
	struct ergon_power_verdict v;
	json_t *is = eval(&f, 5.49, &v);
	assert_int_equal(json_array_size(is), 1);
	const json_t *it = find(is, "power.terminal_missing");
	assert_non_null(it);
	assert_string_equal(json_string_value(json_object_get(it, "severity")), "warning");
	json_t *ctx = json_object_get(it, "context");
	assert_string_equal(json_string_value(json_object_get(ctx, "observer_check")), "not_run");
	assert_string_equal(json_string_value(json_object_get(ctx, "ratio_check")),
			    "authoritative");
	assert_int_equal(json_integer_value(json_object_get(ctx, "clean_infer_count")), 100);
	assert_string_equal(json_string_value(json_object_get(ctx, "clean_count_source")),
			    "profile_boot");
	/* The ratio check ran (5.49 / 5.000) and passed: nothing withheld. */
	assert_false(v.observer_checked);
	assert_true(v.have_expected);
	assert_true(v.ratio > 1.097 && v.ratio < 1.099);
	assert_false(v.suspect);
	assert_false(v.omit_per_inference);
	done(is, &v);
}

static void lost_record_beyond_tolerance(void **state)
{
	(void)state;
	struct ergon_power_facts f = lost();
	struct ergon_power_verdict v;
	json_t *is = eval(&f, 5.51, &v);
	assert_int_equal(json_array_size(is), 2);
	assert_non_null(find(is, "power.terminal_missing"));
	const json_t *gm = find(is, "power.gate_duration_mismatch");
	assert_non_null(gm);
	assert_true(
	    fabs(json_real_value(json_object_get(json_object_get(gm, "context"), "tolerance_s")) -
		 0.5) < 1e-9);
	assert_true(v.suspect);
	assert_true(v.omit_per_inference);
	done(is, &v);
}

static void lost_record_without_a_count(void **state)
{
	(void)state;
	struct ergon_power_facts f = lost();
	f.have_clean_count = 0;
	f.clean_infer_count = 0;
	f.clean_count_source[0] = '\0';
	struct ergon_power_verdict v;
	json_t *is = eval(&f, 5.0, &v);
	assert_int_equal(json_array_size(is), 1);
	json_t *ctx = json_object_get(find(is, "power.terminal_missing"), "context");
	assert_string_equal(json_string_value(json_object_get(ctx, "ratio_check")), "not_run");
	assert_true(json_is_null(json_object_get(ctx, "clean_infer_count")));
	assert_true(v.omit_per_inference);
	done(is, &v);
}

static void near_misses(void **state)
{
	(void)state;
	struct ergon_power_verdict v;
	/* No record was due (shared firmware, or `ergon analyze` without one):
	 * no code, the ratio check still decides. */
	struct ergon_power_facts f = lost();
	f.terminal_expected = 0;
	json_t *is = eval(&f, 5.49, &v);
	assert_int_equal(json_array_size(is), 0);
	done(is, &v);
	/* The record arrived: no code, the observer check runs. */
	f = lost();
	f.terminal.status = ERGON_TERMINAL_OK;
	f.terminal.requested_count = f.terminal.completed_count = 100;
	f.terminal.have_elapsed = 1;
	f.terminal.elapsed_us = 5000000;
	is = eval(&f, 5.0, &v);
	assert_null(find(is, "power.terminal_missing"));
	assert_true(v.observer_checked);
	done(is, &v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(lost_record_within_tolerance),
	    cmocka_unit_test(lost_record_beyond_tolerance),
	    cmocka_unit_test(lost_record_without_a_count),
	    cmocka_unit_test(near_misses),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
