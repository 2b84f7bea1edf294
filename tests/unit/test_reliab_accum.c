/* The accumulator cross-check's sums and tolerance (accum_check.c) against
 * hand-computed values, the engine-level check with a near miss, and the
 * terminal table with an absurd value. */
#include "ergon/analyze.h"
#include "ergon/gated.h"
#include "ergon/issue_list.h"
#include "ergon/plausible.h"
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

/* The negative-energy rule (ergon/plausible.h) by hand. */
static void negative_energy_rule_by_hand(void **state)
{
	(void)state;
	/* With power: 1 W over 10 ms is 10 mJ; backwards by more than that
	 * (plus the slack) is impossible, by less it is rounding. */
	assert_int_equal(ergon_energy_step_negative(-0.011, NAN, 0.01, 1.0, 0.5, 1e-6, 1e-6), 1);
	assert_int_equal(ergon_energy_step_negative(-0.009, NAN, 0.01, 1.0, 0.5, 1e-6, 1e-6), 0);
	/* A source (negative power) may run its energy backwards. */
	assert_int_equal(ergon_energy_step_negative(-1.0, -0.5, 0.01, -1.0, -0.5, 1e-6, 1e-6), 0);
	/* Without power or voltage: current and charge both forward. */
	assert_int_equal(ergon_energy_step_negative(-2e-6, 1e-4, 0.01, NAN, 0.01, 1e-6, 1e-6), 1);
	/* ... backwards within the slack: rounding. */
	assert_int_equal(ergon_energy_step_negative(-5e-7, 1e-4, 0.01, NAN, 0.01, 1e-6, 1e-6), 0);
	/* ... the charge does not advance (a reversed current): no claim. */
	assert_int_equal(ergon_energy_step_negative(-2e-6, -1e-4, 0.01, NAN, 0.01, 1e-6, 1e-6), 0);
	assert_int_equal(ergon_energy_step_negative(-2e-6, 1e-4, 0.01, NAN, -0.01, 1e-6, 1e-6), 0);
	/* Non-finite steps are counted as NaN elsewhere, not judged here. */
	assert_int_equal(ergon_energy_step_negative(NAN, 1e-4, 0.01, 1.0, 0.01, 1e-6, 1e-6), 0);
}

/* The engine applies it to every packet stream (a live bridge's too): 300
 * packets of 10 ms at 1 W (0.5 A), the accumulator lowered by drop_j from
 * the 121st packet on, whose step is then 0.01 J - drop_j. */
static void engine_counts_negative_energy(int with_power, double drop_j, uint64_t want,
					  int want_flagged)
{
	struct ergon_gated_config cfg = {0};
	struct ergon_gated *g = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_gated_new(&cfg, &g, &err), 0);
	struct ergon_stats_packet pk[300];
	for (int k = 0; k < 300; k++) {
		pk[k] = packet(k * 0.01, (k + 1) * 0.01, (k + 1) * 0.01 - (k >= 120 ? drop_j : 0));
		if (!with_power) /* current and charge only */
			pk[k].fields &= ~(unsigned)(ERGON_PKT_VOLTAGE | ERGON_PKT_POWER);
	}
	assert_int_equal(ergon_gated_push_packets(g, pk, 300, &err), 0);
	const struct ergon_gated_result *res = NULL;
	assert_int_equal(ergon_gated_finish(g, &res, &err), 0);
	if (res->energy_backwards != want)
		fail_msg("with_power %d, drop %g J: %llu packets counted, want %llu", with_power,
			 drop_j, (unsigned long long)res->energy_backwards,
			 (unsigned long long)want);
	struct ergon_issue_list issues = {0};
	int bad = ergon_accum_check(res, &issues);
	assert_int_equal(bad, want_flagged);
	if (want) {
		assert_int_equal(res->energy_backwards_first, 121);
		assert_true(fabs(res->energy_backwards_j - (drop_j - 0.01)) < 1e-12);
		assert_string_equal(issues.items[0].code, "power.accumulator_inconsistent");
		assert_non_null(strstr(issues.items[0].message, "statistics packet 121"));
	}
	ergon_issue_list_cleanup(&issues);
	ergon_gated_free(g);
}

static void engine_negative_energy(void **state)
{
	(void)state;
	/* -15 mJ while the packet's own energy is +10 mJ at 1 W: impossible,
	 * and named first. */
	engine_counts_negative_energy(1, 0.025, 1, 1);
	/* -5 mJ: within the packet's own energy, which the rule allows; the
	 * cross-check against the integral of p_avg_w still flags the drop. */
	engine_counts_negative_energy(1, 0.015, 0, 1);
	/* No power or voltage, so no cross-check: 0.5 A and +5 mC of charge,
	 * -5 mJ of energy is caught by the rule alone ... */
	engine_counts_negative_energy(0, 0.015, 1, 1);
	/* ... while a drop that leaves the step forward (+5 mJ) is nothing
	 * either check can see. */
	engine_counts_negative_energy(0, 0.005, 0, 0);
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
	    cmocka_unit_test(negative_energy_rule_by_hand),
	    cmocka_unit_test(engine_negative_energy),
	    cmocka_unit_test(table_never_prints_a_huge_number_in_full),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
