/* Uncertainty budgets (ergon/budget.h) and the run's figures' budgets
 * (figures_budget.c) against hand-worked values, each in a comment. */
#include "ergon/budget.h"
#include "ergon/figures.h"
#include "ergon/gated.h"
#include "ergon/instrument.h"
#include "test_support.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define NEAR(a, b) assert_true(fabs((double)(a) - (double)(b)) <= 1e-12 * (1 + fabs((double)(b))))

static const struct ergon_budget_term *term(const struct ergon_budget *b, const char *name)
{
	for (size_t i = 0; i < b->n; i++)
		if (strcmp(b->term[i].name, name) == 0)
			return &b->term[i];
	fail_msg("no term %s", name);
	return NULL;
}

static void quadrature_of_independent_terms(void **state)
{
	(void)state;
	/* A rectangular bound of sqrt(3) is u = 1; a standard error of 4 is
	 * u = 4; u_c = sqrt(1 + 16) = sqrt(17); U = 2 sqrt(17). */
	struct ergon_budget b;
	ergon_budget_init(&b, 100.0, "J");
	ergon_budget_add(&b, "gain", sqrt(3.0), ERGON_DIST_RECT, 0, "datasheet");
	ergon_budget_add(&b, "spread", 4.0, ERGON_DIST_STAT, 0, "data");
	ergon_budget_close(&b);
	NEAR(b.term[0].u, 1.0);
	NEAR(b.u_c, sqrt(17.0));
	NEAR(b.U, 2.0 * sqrt(17.0));
	assert_true(b.complete);
	assert_int_equal(b.dominant, 1);
	NEAR(ergon_budget_rel_pct(&b), 2.0 * sqrt(17.0));
}

static void correlated_terms_add_linearly(void **state)
{
	(void)state;
	/* Group 1: u = 1 and u = 2 add to 3; an independent u = 4:
	 * u_c = sqrt(9 + 16) = 5, U = 10. Without the group: sqrt(21). */
	struct ergon_budget b;
	ergon_budget_init(&b, 50.0, "W");
	ergon_budget_add(&b, "drift a", sqrt(3.0), ERGON_DIST_RECT, 1, "same temperature");
	ergon_budget_add(&b, "drift b", 2.0 * sqrt(3.0), ERGON_DIST_RECT, 1, "same temperature");
	ergon_budget_add(&b, "noise", 4.0, ERGON_DIST_NORMAL, 0, "sigma");
	ergon_budget_close(&b);
	NEAR(b.u_c, 5.0);
	NEAR(b.U, 10.0);
	NEAR(ergon_budget_rel_pct(&b), 20.0);
	b.term[1].group = 0;
	ergon_budget_close(&b);
	NEAR(b.u_c, sqrt(21.0));
}

static void unknown_term_makes_it_incomplete(void **state)
{
	(void)state;
	/* The known part is u = 1 (U_known = 2), but U is not stated and the
	 * unknown term is named as the dominant one: it could be anything. */
	struct ergon_budget b;
	ergon_budget_init(&b, 10.0, "J");
	ergon_budget_add(&b, "gain", sqrt(3.0), ERGON_DIST_RECT, 0, "x");
	ergon_budget_add_unknown(&b, "shunt tolerance", "nobody states it");
	ergon_budget_add(&b, "spread", NAN, ERGON_DIST_STAT, 0, "one window");
	ergon_budget_close(&b);
	assert_false(b.complete);
	assert_true(isnan(b.U));
	NEAR(b.U_known, 2.0);
	assert_int_equal(b.dominant, 1);
	assert_false(b.term[2].known);
	assert_int_equal(ergon_budget_gate(&b, 50.0), 2);
	assert_true(isnan(ergon_budget_rel_pct(&b)));
}

static void scale_and_gate_both_sides(void **state)
{
	(void)state;
	/* 10 J with u = 1 over 10 inferences: 1 J, u = 0.1, U = 0.2: 20 %. */
	struct ergon_budget b;
	ergon_budget_init(&b, 10.0, "J");
	ergon_budget_add(&b, "gain", sqrt(3.0), ERGON_DIST_RECT, 0, "x");
	ergon_budget_close(&b);
	ergon_budget_scale(&b, 0.1, "J");
	NEAR(b.value, 1.0);
	NEAR(b.term[0].u, 0.1);
	NEAR(b.U, 0.2);
	assert_int_equal(ergon_budget_gate(&b, 20.5), 0);
	assert_int_equal(ergon_budget_gate(&b, 19.5), 1);
	assert_int_equal(ergon_budget_gate(&b, 0), 0); /* no gate */
	b.value = 0;
	assert_int_equal(ergon_budget_gate(&b, 20.5), 3);
}

static void too_many_terms_is_incomplete(void **state)
{
	(void)state;
	struct ergon_budget b;
	ergon_budget_init(&b, 1.0, "J");
	for (int i = 0; i < ERGON_BUDGET_MAX_TERMS + 1; i++)
		ergon_budget_add(&b, "t", 0.0, ERGON_DIST_RECT, 0, "x");
	ergon_budget_close(&b);
	assert_int_equal(b.n, ERGON_BUDGET_MAX_TERMS);
	assert_true(b.overflow);
	assert_false(b.complete);
}

/* A power-level model: gain 1 %, offset 0.01 W, reading step 0.01 W,
 * timestamps within 1 ms, host clock 100 ppm. */
static void um_init(struct ergon_run_um *um)
{
	memset(um, 0, sizeof(*um));
	um->n_pterms = 2;
	snprintf(um->pterm[0].name, sizeof(um->pterm[0].name), "gain");
	um->pterm[0].kind = ERGON_PTERM_GAIN_PCT;
	ergon_rated_set(&um->pterm[0].x, 1.0, "test");
	snprintf(um->pterm[1].name, sizeof(um->pterm[1].name), "offset");
	um->pterm[1].kind = ERGON_PTERM_OFFSET_W;
	ergon_rated_set(&um->pterm[1].x, 0.01, "test");
	um->offset_constant = 1;
	ergon_rated_set(&um->resolution_w, 0.01, "test");
	ergon_rated_set(&um->resolution_j, 1e-3, "test");
	ergon_rated_set(&um->host_ppm, 100.0, "test");
	ergon_rated_unknown(&um->inst_ppm, "not stated");
	um->timing_quantum_s = 1e-3;
	um->latency_quantum_s = 1e-6;
}

static void phase_energy_budget_by_hand(void **state)
{
	(void)state;
	/* t = 0, 1, 3 s; p = 2, 4, 4 W: E = 11 J, integral |p| = 11 J, span 3.
	 * gain   limit 1 % x 11 = 0.11 J
	 * offset limit 0.01 W x 3 s = 0.03 J
	 * resolution limit 0.01/2 x 3 = 0.015 J
	 * timestamps: dE/dt0 = -(2+4)/2 = -3, dE/dt1 = (2-4)/2 = -1,
	 *   dE/dt2 = (4+4)/2 = 4: limit 1 ms x sqrt(9+1+16) = 1e-3 sqrt(26)
	 * timebase limit 100 ppm x 11 = 1.1e-3 J
	 * every term rectangular: u_c^2 = sum(limit^2) / 3. */
	double t[] = {0, 1, 3}, p[] = {2, 4, 4};
	struct ergon_energy e;
	assert_int_equal(ergon_energy_trapezoid(t, p, 3, 0, 0, 0, &e, NULL), 0);
	struct ergon_run_um um;
	um_init(&um);
	struct ergon_budget b;
	ergon_budget_phase_energy(&e, 0, &um, &b);
	NEAR(b.value, 11.0);
	NEAR(term(&b, "gain")->limit, 0.11);
	NEAR(term(&b, "offset")->limit, 0.03);
	NEAR(term(&b, "resolution")->limit, 0.015);
	NEAR(term(&b, "timestamps")->limit, 1e-3 * sqrt(26.0));
	NEAR(term(&b, "timebase")->limit, 1.1e-3);
	double uc2 = (0.11 * 0.11 + 0.03 * 0.03 + 0.015 * 0.015 + 26e-6 + 1.1e-3 * 1.1e-3) / 3.0;
	NEAR(b.u_c, sqrt(uc2));
	NEAR(b.U, 2.0 * sqrt(uc2));
	assert_true(b.complete);
	assert_string_equal(b.term[b.dominant].name, "gain");

	/* Mean power 11/3 W: gain 0.11/3, offset 0.01, resolution 0.005;
	 * timestamps through E/T: (dE/dt0 + P)/T = (-3 + 11/3)/3,
	 * interior -1/3, (dE/dt2 - P)/T = (4 - 11/3)/3; the timebase cancels. */
	ergon_budget_phase_power(&e, 0, &um, &b);
	NEAR(b.value, 11.0 / 3.0);
	NEAR(term(&b, "gain")->limit, 0.11 / 3.0);
	NEAR(term(&b, "offset")->limit, 0.01);
	NEAR(term(&b, "resolution")->limit, 0.005);
	double a = (-3.0 + 11.0 / 3.0) / 3.0, z = (4.0 - 11.0 / 3.0) / 3.0;
	NEAR(term(&b, "timestamps")->limit, 1e-3 * sqrt(a * a + 1.0 / 9.0 + z * z));
	NEAR(term(&b, "timebase")->limit, 0.0);
	assert_true(b.complete);
}

static void accumulator_budget_needs_its_clock(void **state)
{
	(void)state;
	/* Accumulator 10 -> 14 J over 4 s: gain 1 % x 4 = 0.04, offset 0.04,
	 * resolution one step 1e-3; the accumulator's own clock is not
	 * stated: the budget is incomplete and says so. */
	double t[] = {0, 2, 4}, e_j[] = {10, 12, 14};
	struct ergon_energy e;
	assert_int_equal(ergon_energy_accumulator(t, e_j, 3, 0, 0, &e, NULL), 0);
	struct ergon_run_um um;
	um_init(&um);
	struct ergon_budget b;
	ergon_budget_phase_energy(&e, 1, &um, &b);
	NEAR(term(&b, "gain")->limit, 0.04);
	NEAR(term(&b, "offset")->limit, 0.04);
	NEAR(term(&b, "resolution")->limit, 1e-3);
	assert_false(term(&b, "timebase")->known);
	assert_false(b.complete);
	ergon_rated_set(&um.inst_ppm, 5000, "0.5 %% oscillator");
	ergon_budget_phase_energy(&e, 1, &um, &b);
	NEAR(term(&b, "timebase")->limit, 0.02);
	assert_true(b.complete);
}

static void energy_per_op_budget_by_hand(void **state)
{
	(void)state;
	/* Idle 1 W flat over 2 s (t = 0, 1, 2), load 3 W flat over 2 s;
	 * saturated, mean latency 10 ms over 100 operations in 2 s.
	 * E_op total = 3 x 0.01 = 0.03 J; above idle (3 - 1) x 0.01 = 0.02 J.
	 * above idle:
	 *   gain   1 % x |3 - 1| x 0.01 = 2e-4 (one gain in both phases)
	 *   offset cancels (one offset, one range): 0
	 *   resolution 0.005 W x 0.01 s each phase = 5e-5, 5e-5
	 *   timestamps: a flat phase's dP/dt_i are all 0: 0
	 *   latency quantization |2| x 1e-6 / sqrt(100) = 2e-7
	 *   timebase 100 ppm x 0.02 = 2e-6
	 *   spread: 3 windows with per-op energies 0.019, 0.020, 0.021:
	 *     s = 0.001, SE = 0.001/sqrt(3)
	 * total: gain 1 % x 3 x 0.01 = 3e-4, offset 0.01 x 0.01 = 1e-4. */
	double ti[] = {0, 1, 2}, pi[] = {1, 1, 1}, tl[] = {3, 4, 5}, pl[] = {3, 3, 3};
	struct ergon_energy idle, load;
	assert_int_equal(ergon_energy_trapezoid(ti, pi, 3, 0, 0, 0, &idle, NULL), 0);
	assert_int_equal(ergon_energy_trapezoid(tl, pl, 3, 0, 0, 0, &load, NULL), 0);
	struct ergon_eop_input in = {
	    .achieved_ops_per_s = 50, .latency_mean_s = 0.01, .load_power_w = 3, .idle_power_w = 1};
	struct ergon_eop eop;
	assert_int_equal(ergon_energy_per_op(&in, &eop, NULL), 0);
	double x[] = {0.019, 0.020, 0.021};
	double se = ergon_window_spread(x, 3);
	NEAR(se, 0.001 / sqrt(3.0));
	struct ergon_eop_budget_input bi = {.eop = &eop,
					    .load = &load,
					    .idle = &idle,
					    .n_ops = 100,
					    .latency_mean_s = 0.01,
					    .load_duration_s = 2,
					    .spread_se_total_j = se,
					    .spread_se_above_j = se,
					    .spread_windows = 3,
					    .repeat_se_j = NAN};
	struct ergon_run_um um;
	um_init(&um);
	struct ergon_budget b;
	ergon_budget_eop(&bi, &um, 1, &b);
	NEAR(b.value, 0.02);
	NEAR(term(&b, "gain")->limit, 2e-4);
	NEAR(term(&b, "offset")->limit, 0.0);
	NEAR(term(&b, "resolution (load)")->limit, 5e-5);
	NEAR(term(&b, "resolution (idle)")->limit, 5e-5);
	NEAR(term(&b, "timestamps")->limit, 0.0);
	NEAR(term(&b, "latency quantization")->limit, 2e-7);
	NEAR(term(&b, "timebase")->limit, 2e-6);
	NEAR(term(&b, "spread over windows")->u, 0.001 / sqrt(3.0));
	double uc2 = (4e-8 + 2 * 2.5e-9 + 4e-14 + 4e-12) / 3.0 + 1e-6 / 3.0;
	NEAR(b.u_c, sqrt(uc2));
	assert_true(b.complete);
	assert_string_equal(b.term[b.dominant].name, "spread over windows");
	ergon_budget_eop(&bi, &um, 0, &b);
	NEAR(b.value, 0.03);
	NEAR(term(&b, "gain")->limit, 3e-4);
	NEAR(term(&b, "offset")->limit, 1e-4);
	/* One window: the spread cannot be estimated, the budget is
	 * incomplete. */
	bi.spread_se_total_j = NAN;
	bi.spread_windows = 1;
	ergon_budget_eop(&bi, &um, 0, &b);
	assert_false(b.complete);
	assert_string_equal(b.term[b.dominant].name, "spread over windows");
	/* Repeats (issue 31) add their own term. */
	bi.spread_se_total_j = se;
	bi.repeat_se_j = 3e-4;
	bi.repeats = 5;
	ergon_budget_eop(&bi, &um, 0, &b);
	NEAR(term(&b, "spread over repetitions")->u, 3e-4);
}

/* The gated plan's estimate (ergon_gated_plan_budget) on the bench
 * meter's declared rating (docs/UNCERTAINTY.md's table: 1.8 mA range 0.2 %
 * / 2 uA, 18 mA range 0.2 % / 10 uA, voltage 0.2 % / 1 mV, 50 ppm), worked
 * by hand as fractions of the figure, rectangular (u = a / sqrt(3)), k = 2. */
static double rect_u2(double a)
{
	return a * a / 3.0;
}

static void gated_plan_budget_by_hand(void **state)
{
	(void)state;
	struct ergon_rating r;
	assert_int_equal(ergon_rating_for_model("VBENCH", NAN, &r), 0);
	/* 1 mA in the 1.8 mA range on 1.8 V, a 2 s window, 1 ms edges, no
	 * per-sample quantization: offsets 2 uA / 1 mA = 0.2 %, 1 mV / 1.8 V;
	 * edges sqrt(2) x 1 ms / 2 s. */
	struct ergon_gated_plan p = {.current_a = 1e-3,
				     .voltage_v = 1.8,
				     .window_s = 2.0,
				     .edge_s = 1e-3,
				     .samples_per_packet = 0,
				     .energy_lsb_j = NAN};
	struct ergon_budget b;
	ergon_gated_plan_budget(&r, &p, &b);
	double u2 = rect_u2(0.002) + rect_u2(2e-6 / 1e-3) + rect_u2(0.002) + rect_u2(1e-3 / 1.8) +
		    rect_u2(50e-6) + rect_u2(sqrt(2.0) * 1e-3 / 2.0);
	assert_true(b.complete);
	NEAR(b.U, 2.0 * sqrt(u2));
	/* No expected current, no window: the gains (the smallest range's),
	 * the voltage's and the timebase only, a lower bound. */
	p.current_a = NAN;
	p.window_s = NAN;
	ergon_gated_plan_budget(&r, &p, &b);
	u2 = rect_u2(0.002) + rect_u2(0.002) + rect_u2(1e-3 / 1.8) + rect_u2(50e-6);
	assert_true(b.complete);
	assert_int_equal(b.n, 4);
	NEAR(b.U, 2.0 * sqrt(u2));
	/* No rating: incomplete, the gate fails. */
	ergon_gated_plan_budget(NULL, &p, &b);
	assert_false(b.complete);
	assert_int_equal(ergon_budget_gate(&b, 50.0), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(quadrature_of_independent_terms),
	    cmocka_unit_test(correlated_terms_add_linearly),
	    cmocka_unit_test(unknown_term_makes_it_incomplete),
	    cmocka_unit_test(scale_and_gate_both_sides),
	    cmocka_unit_test(too_many_terms_is_incomplete),
	    cmocka_unit_test(phase_energy_budget_by_hand),
	    cmocka_unit_test(accumulator_budget_needs_its_clock),
	    cmocka_unit_test(energy_per_op_budget_by_hand),
	    cmocka_unit_test(gated_plan_budget_by_hand),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
