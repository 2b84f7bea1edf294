/* The accumulator cross-check's sums and tolerance (accum_check.c) against
 * hand-computed values, the engine-level check with a near miss, and the
 * terminal table with an absurd value. */
#include "ergon/analyze.h"
#include "ergon/gated.h"
#include "ergon/issue_list.h"
#include "test_support.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static struct ergon_stats_packet packet(double t0, double t1, double e_acc)
{
	struct ergon_stats_packet q;
	memset(&q, 0, sizeof(q));
	q.t_start_s = t0;
	q.t_end_s = t1;
	q.i_avg_a = 0.5;
	q.v_avg_v = 2.0;
	q.p_avg_w = 1.0;
	q.p_std_w = 0.1;
	q.i_std_a = 0.01;
	q.v_std_v = 0.02;
	q.charge_c = 0.5 * t1;
	q.energy_j = e_acc;
	q.fields = ERGON_PKT_VOLTAGE | ERGON_PKT_POWER | ERGON_PKT_ACCUM;
	return q;
}

static void sums_and_tolerance_by_hand(void **state)
{
	(void)state;
	struct ergon_accum_xcheck x;
	memset(&x, 0, sizeof(x));
	/* Two 0.5 s packets at 1 W, the second after a 0.1 s gap: the
	 * accumulator (0.5 J, then 0.6 J more: it covers the gap) reads
	 * 0.5 and 1.1 J. */
	struct ergon_stats_packet a = packet(0.0, 0.5, 0.5), b = packet(0.6, 1.1, 1.1);
	ergon_accum_xcheck_add(&x, &a, 0.5, 0.0, 0.5);
	ergon_accum_xcheck_add(&x, &b, 0.5, 0.1, 0.6);
	assert_int_equal(x.packets, 2);
	assert_true(fabs(x.acc_j - 1.1) < 1e-15);
	assert_true(fabs(x.pdt_j - 1.0) < 1e-15);		    /* 2 x 1 W x 0.5 s */
	assert_true(fabs(x.ivdt_j - 1.0) < 1e-15);		    /* 2 x 0.5 A x 2 V x 0.5 s */
	assert_true(fabs(x.cov_j - 2 * 0.01 * 0.02 * 0.5) < 1e-15); /* sd_i sd_v span */
	/* The gap at the packet's mean + 3 sd: 0.1 s x (1 + 0.3) W = 0.13 J. */
	assert_true(fabs(x.gap_j - 0.13) < 1e-15);
	assert_true(x.acc_max_abs == 1.1);
	/* tol = 1e-6 (|1.1| + |1.0|) + 2e-6 x 1.1 + 0.13 + 1e-12 */
	double want = 1e-6 * 2.1 + 2e-6 * 1.1 + 0.13 + 1e-12;
	assert_true(fabs(ergon_accum_xcheck_tolerance_j(&x, 1.0) - want) < 1e-15);
	/* Printed with 4 decimals (energy_j "1.1000", p_avg_w "1.0000"): the
	 * total's two roundings are within 1e-4 J, each p within 5e-5 W. */
	struct ergon_accum_xcheck y;
	memset(&y, 0, sizeof(y));
	a.energy_res_j = b.energy_res_j = 1e-4;
	a.p_res_w = b.p_res_w = 1e-4;
	ergon_accum_xcheck_add(&y, &a, 0.5, 0.0, 0.5);
	ergon_accum_xcheck_add(&y, &b, 0.5, 0.1, 0.6);
	assert_true(y.acc_res_j == 1e-4);
	assert_true(fabs(y.pres_j - 2 * 0.5 * 0.5e-4) < 1e-18);
	want = 1e-6 * 2.1 + 1e-4 + 0.13 + 1e-12;
	assert_true(fabs(ergon_accum_xcheck_tolerance_j(&y, 1.0) - want) < 1e-15);
}

/* 300 packets of 10 ms at 1 W, gate high 0.5..2.5 s: the window's
 * accumulator moves 2 J. tamper_j added from packet 150 on. */
static int engine_flags(double tamper_j)
{
	struct ergon_gated_config cfg = {0};
	struct ergon_gated *g = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_gated_new(&cfg, &g, &err), 0);
	struct ergon_stats_packet pk[300];
	for (int k = 0; k < 300; k++) {
		pk[k] =
		    packet(k * 0.01, (k + 1) * 0.01, (k + 1) * 0.01 + (k >= 150 ? tamper_j : 0));
		pk[k].fields |= ERGON_PKT_DIGITAL;
		pk[k].digital = k >= 50 && k < 250;
	}
	assert_int_equal(ergon_gated_push_packets(g, pk, 300, &err), 0);
	const struct ergon_gated_result *res = NULL;
	assert_int_equal(ergon_gated_finish(g, &res, &err), 0);
	assert_int_equal(res->window_count, 1);
	struct ergon_issue_list issues = {0};
	int bad = ergon_accum_check(res, &issues);
	assert_int_equal((size_t)bad, issues.n);
	if (bad)
		assert_string_equal(issues.items[0].code, "power.accumulator_inconsistent");
	ergon_issue_list_cleanup(&issues);
	ergon_gated_free(g);
	return bad;
}

static void engine_check_and_near_miss(void **state)
{
	(void)state;
	assert_int_equal(engine_flags(0.0), 0);
	/* The window's tolerance: 1e-6 x (2 + 2) + 2e-6 x 2.5 (largest total
	 * seen in it, 2.5 J) + 1e-12 = 9e-6 J. Half of it passes, twice fails. */
	assert_int_equal(engine_flags(4.5e-6), 0);
	assert_int_equal(engine_flags(1.8e-5), 1);
	assert_int_equal(engine_flags(0.02), 1);
}

static void table_never_prints_a_huge_number_in_full(void **state)
{
	(void)state;
	json_t *p = json_pack("{s:s,s:s,s:f,s:f,s:f,s:f,s:b}", "measurement_scope",
			      "free_form_capture", "integrity", "invalid", "avg_current_a", 0.01,
			      "avg_power_w", 2e305, "peak_current_a", 0.02, "energy_j", 1e306,
			      "per_inference_metrics_omitted", 1);
	char *t = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_power_table_render(p, 0, &t, &err), 0);
	assert_non_null(strstr(t, "1.000e+306 J"));
	assert_non_null(strstr(t, "2.000e+305 W"));
	assert_non_null(strstr(t, "10.000 mA"));
	size_t run = 0, best = 0;
	for (const char *c = t; *c; c++) {
		run = (*c >= '0' && *c <= '9') ? run + 1 : 0;
		best = run > best ? run : best;
	}
	assert_true(best <= 6);
	free(t);
	json_decref(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(sums_and_tolerance_by_hand),
	    cmocka_unit_test(engine_check_and_near_miss),
	    cmocka_unit_test(table_never_prints_a_huge_number_in_full),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
