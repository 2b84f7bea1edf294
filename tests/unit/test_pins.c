/* Issue 30, case 10: thresholds and formulas of docs/METHOD.md and
 * docs/POWER_CHECKS.md pinned on both sides, the survivors of the
 * reviewer's mutation sampling (a test that passes whichever side a
 * threshold's equality falls on does not pin it). Every expected value is
 * worked out here by hand or from the definition, never from the code:
 *  - the energy-per-operation formula at a duty cycle of exactly 1;
 *  - run.sampler_gap's 10 periods; the 3 C temperature evidence at 3.0;
 *    run.power_below_idle at equal power; the rated uncertainty's |p|;
 *  - the INA228's fine range at exactly 40.96 mV;
 *  - TFLite's QuantizeMultiplier rounding (0.3 -> 1288490189, shift -1).
 * (analyze's default 1 s glitch floor: functional/test_reliab_implausible,
 * default_glitch_floor.) */
#include "../../target/src/tfl_internal.h"
#include "ergon/artifact.h"
#include "ergon/changepoint.h"
#include "ergon/ert_hal.h"
#include "ergon/ert_ina228_math.h"
#include "ergon/figures.h"
#include "ergon/gated.h"
#include "ergon/issue_list.h"
#include "ergon/issues.h"
#include "ergon/report.h"
#include "ergon/stats.h"
#include "test_support.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NEAR(a, b) assert_true(fabs((double)(a) - (double)(b)) < 1e-9 * (1 + fabs((double)(b))))

/* METHOD.md: periodic with D = mean latency x R < 1 is the periodic
 * formula; D >= 1 is saturated in fact. D = 0.25 s x 4 Hz = 1 exactly
 * (both are exact in binary): saturated, E = P x latency = 3 x 0.25. One
 * ulp below 0.25 s: periodic, E = P / r = 3 / 4. */
static void duty_cycle_exactly_one(void **state)
{
	(void)state;
	struct ergon_eop e;
	struct ergon_eop_input in = {.periodic = 1,
				     .release_hz = 4,
				     .achieved_ops_per_s = 4,
				     .latency_mean_s = 0.25,
				     .latency_quantum_s = 0,
				     .load_power_w = 3,
				     .idle_power_w = 1};
	assert_int_equal(ergon_energy_per_op(&in, &e, NULL), 0);
	assert_true(e.duty_cycle == 1.0);
	assert_int_equal(e.formula, ERGON_EOP_SATURATED);
	NEAR(e.total_j, 0.75);
	NEAR(e.above_idle_j, 0.5);
	in.latency_mean_s = nextafter(0.25, 0);
	assert_int_equal(ergon_energy_per_op(&in, &e, NULL), 0);
	assert_true(e.duty_cycle < 1.0);
	assert_int_equal(e.formula, ERGON_EOP_PERIODIC);
	NEAR(e.total_j, 0.75);
	NEAR(e.above_idle_j, 0.5);
	/* The two formulas agree here (P / r = P x latency when D = 1), so
	 * the reason is what tells them apart. */
	assert_non_null(strstr(e.reason, "duty cycle 1.000 < 1"));
}

/* A sustained report built from a hand-made series (the same one as
 * test_run_report's, with what each case changes). Idle [0, 1], load
 * [1.5, 3.5], windows [1.5, 2.5) and [2.5, 3.5]: invocations end at 1.6,
 * 1.8, 2.0, 2.2 (window 0) and 2.6, 3.0 (window 1): 4 then 2 operations,
 * throttled at window 1 with K = 1. */
struct series {
	double t[8], p[8], temp[8];
	size_t n;
	int with_temp;
	double accuracy_pct, sample_hz;
};

static double edges[] = {1.5, 2.5, 3.5};
static double ist[] = {1.5, 1.7, 1.9, 2.1, 2.5, 2.9};
static double il[] = {0.1, 0.1, 0.1, 0.1, 0.1, 0.1};
static const struct ergon_instrument_driver fake_drv = {.name = "fake", .longname = "fake"};
static const struct ergon_workload_driver fake_wl_drv = {.name = "fake", .longname = "fake"};

static json_t *build(struct series *s)
{
	struct ergon_instrument inst = {.driver = &fake_drv};
	inst.identity.accuracy_pct = s->accuracy_pct;
	inst.identity.provenance = ERGON_PROV_SYNTHETIC;
	inst.identity.n_rails = 1;
	strcpy(inst.identity.clock, "host_monotonic");
	strcpy(inst.identity.integrates, "none");
	struct ergon_workload wl = {.driver = &fake_wl_drv};
	strcpy(wl.description, "fake");
	struct ergon_session_result res = {
	    .status = ERGON_SESSION_COMPLETE,
	    .idle_start_s = 0,
	    .idle_end_s = 1.0,
	    .load_start_s = 1.5,
	    .load_end_s = 3.5,
	    .window_edges_s = edges,
	    .windows_completed = 2,
	    .sample_t_s = s->t,
	    .sample_power_w = s->p,
	    .sample_temp_c = s->with_temp ? s->temp : NULL,
	    .n_samples = s->n,
	    .has_temp = s->with_temp,
	    .inv_start_s = ist,
	    .inv_latency_s = il,
	    .n_inv = 6,
	};
	struct ergon_run_config cfg = {.device = "bench",
				       .workload_spec = "fake:",
				       .session = {.idle_s = 1,
						   .windows = 2,
						   .window_s = 1,
						   .sampler = ERGON_SAMPLER_THREADED,
						   .sample_hz = s->sample_hz},
				       .throttle_threshold = 0.15,
				       .throttle_windows = 1,
				       .ambient_c = NAN};
	json_t *rep = NULL;
	struct ergon_err err = {0};
	if (ergon_report_build(&cfg, &inst, &wl, &res, &rep, &err))
		fail_msg("build: %s", err.msg);
	assert_int_equal(ergon_artifact_seal(rep, &err), 0);
	if (ergon_report_verify(rep, &err))
		fail_msg("verify: %s", err.msg);
	return rep;
}

/* Idle 1 W at 0, 0.5, 1.0; load 3 W at 1.5, 2.0, 2.5, 3.5. */
static struct series base(void)
{
	return (struct series){.t = {0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.5},
			       .p = {1, 1, 1, 3, 3, 3, 3},
			       .n = 7,
			       .accuracy_pct = 1,
			       .sample_hz = 2};
}

static int has(const json_t *r, const char *code)
{
	return ergon_issue_has(json_object_get(r, "issues"), code);
}

/* A number METHOD.md states, read from the doc (ts_doc_nums): the pins
 * below run at the doc's value, so a threshold changed on one side only
 * fails here. */
static double method_num(const char *pat)
{
	char *doc = ts_doc_load("METHOD.md");
	double v = 0;
	ts_doc_nums(doc, "METHOD.md", pat, &v, 1);
	free(doc);
	return v;
}

/* METHOD.md: "a gap above N periods raises run.sampler_gap" (N = 10). At
 * N / 0.625 Hz (16 Hz for 10) the line is 0.625 s. Samples 0, 0.5, 1.0
 * (idle), 1.5, X, 2.5, 3.0, 3.5 (load): with X = 2.125 the largest gap is
 * exactly 0.625 s, not above, no issue; with X = 2.125 + 1/64 it is
 * 0.640625 s, raised. Every time is exact in binary (for N = 10). */
static void sampler_gap_ten_periods(void **state)
{
	(void)state;
	double n = method_num("a gap above # periods raises `run.sampler_gap`");
	double xs[] = {2.125, 2.125 + 1.0 / 64};
	for (int k = 0; k < 2; k++) {
		struct series s = {.t = {0, 0.5, 1.0, 1.5, xs[k], 2.5, 3.0, 3.5},
				   .p = {1, 1, 1, 3, 3, 3, 3, 3},
				   .n = 8,
				   .accuracy_pct = 1,
				   .sample_hz = n / 0.625};
		json_t *r = build(&s);
		if (k == 0)
			assert_false(has(r, "run.sampler_gap"));
		else
			assert_true(has(r, "run.sampler_gap"));
		json_decref(r);
	}
}

/* METHOD.md: temperature is evidence only when the last window's mean
 * exceeds the first's by more than T = 3 C (read from the doc). Window 0
 * holds samples 1.5, 2.0, 2.5 (both edges included), window 1 holds 2.5
 * and 3.5: temperatures 50, 50, 50 and 50, X give 50 -> (50 + X) / 2. X =
 * 50 + 2T = 56: exactly +3 C, not evidence; X = 56.25: +3.125 C,
 * evidence. */
static void temperature_evidence_at_three(void **state)
{
	(void)state;
	double rise = method_num("by more than **# °C**");
	assert_true(rise == 3.0); /* the verdict's words below say 3 C */
	double last[] = {50 + 2 * rise, 50 + 2 * rise + 0.25};
	for (int k = 0; k < 2; k++) {
		struct series s = base();
		s.with_temp = 1;
		double temps[] = {40, 40, 40, 50, 50, 50, last[k]};
		memcpy(s.temp, temps, sizeof temps);
		json_t *r = build(&s);
		const json_t *tp = json_object_get(json_object_get(r, "figures"), "throughput");
		const char *v = json_string_value(json_object_get(tp, "verdict"));
		assert_true(json_is_true(json_object_get(tp, "throttled")));
		if (k == 0) {
			assert_true(json_is_null(json_object_get(tp, "temperature_evidence")));
			assert_non_null(strstr(v, "50.0 -> 53.0 C"));
			assert_non_null(strstr(v, "did not rise by more than 3 C"));
		} else {
			assert_true(json_is_object(json_object_get(tp, "temperature_evidence")));
			NEAR(json_number_value(json_object_get(
				 json_object_get(tp, "temperature_evidence"), "last_window_c")),
			     53.125);
		}
		json_decref(r);
	}
}

/* run.power_below_idle: "load power is not above the idle floor". Load at
 * 1 W, equal to idle: raised; at 1 + 1/64 W: not. */
static void power_below_idle_at_equal_power(void **state)
{
	(void)state;
	double load[] = {1.0, 1.0 + 1.0 / 64};
	for (int k = 0; k < 2; k++) {
		struct series s = base();
		for (size_t i = 3; i < 7; i++)
			s.p[i] = load[k];
		json_t *r = build(&s);
		if (k == 0)
			assert_true(has(r, "run.power_below_idle"));
		else
			assert_false(has(r, "run.power_below_idle"));
		json_decref(r);
	}
}

/* METHOD.md: u_rated = a x integral |p| dt + r_w x span; a gain error
 * scales every reading, negative ones too. Load samples 3, -3, 3, -3 W at
 * 1.5, 2.0, 2.5, 3.5 with a = 1 %, r_w = 0 and no timing term (the clock
 * resolution is 0 here): integral |p| = 3 x 2 = 6 J (each trapezoid of
 * |p| is 3 W high), so u = 0.06 J, where the signed integral (0 J) would
 * give 0. */
static void rated_uncertainty_uses_abs_power(void **state)
{
	(void)state;
	struct series s = base();
	s.p[3] = 3;
	s.p[4] = -3;
	s.p[5] = 3;
	s.p[6] = -3;
	json_t *r = build(&s);
	const json_t *load = json_object_get(json_object_get(r, "figures"), "load");
	NEAR(json_number_value(json_object_get(load, "energy_u_j")), 0.06);
	json_decref(r);
}

/* ert_ina228_plan: the fine range (+-40.96 mV, ADCRANGE = 1) whenever the
 * largest shunt voltage fits it, so exactly 40.96 mV is fine: shunt
 * 0.04096 ohm at 1 A is the very double ERT_INA228_RANGE1_FS_V. SHUNT_CAL
 * by the datasheet's equation 3 (x4 in the fine range): 13107.2e6 x
 * 0.04096 x 4 x (1 / 2^19) = 4096. A hair more current is the coarse
 * range, SHUNT_CAL 13107.2e6 x 0.04096 x (1.0001 / 2^19) = 1024.1 -> 1024. */
static void ina228_fine_range_at_40_96_mV(void **state)
{
	(void)state;
	struct ert_ina228_plan p;
	assert_int_equal(ert_ina228_plan(0.04096, 1.0, &p), ERT_OK);
	assert_true(p.burden_v == 0.04096);
	assert_int_equal(p.adcrange, 1);
	assert_int_equal(p.shunt_cal, 4096);
	assert_int_equal(ert_ina228_plan(0.04096, 1.0001, &p), ERT_OK);
	assert_int_equal(p.adcrange, 0);
	assert_int_equal(p.shunt_cal, 1024);
}

/* TFLite's QuantizeMultiplier (tensorflow/lite/kernels/internal/
 * quantization_util.cc): m = q x 2^(shift - 31) with q = round(frac x
 * 2^31), frac in [0.5, 1) from frexp. 0.3 = 0.6 x 2^-1; 0.6 x 2^31 =
 * 1288490188.8 -> q = 1288490189 (truncation gives ...188), shift -1.
 * 1 - 2^-33 = frac x 2^0 with frac x 2^31 = 2^31 - 0.25, which rounds to
 * 2^31: then q = 2^30 and shift + 1 = 1 (TFLite's "if q == 1 << 31"). */
static void quantize_multiplier_rounds(void **state)
{
	(void)state;
	int32_t q, s;
	tfl_quantize_multiplier(0.3, &q, &s);
	assert_int_equal(q, 1288490189);
	assert_int_equal(s, -1);
	tfl_quantize_multiplier(1.0 - 0x1p-33, &q, &s);
	assert_int_equal(q, 1073741824);
	assert_int_equal(s, 1);
	/* 0.1 = 0.8 x 2^-3: 1717986918.4 rounds down to 1717986918. */
	tfl_quantize_multiplier(0.1, &q, &s);
	assert_int_equal(q, 1717986918);
	assert_int_equal(s, -3);
}

/* The survivors of scripts/mutate.sh's first run (issue 30), each pinned
 * on both sides with values worked out here. */

/* METHOD.md: "A phase with fewer than 2 samples has no energy". One idle
 * sample (at 0; the idle phase is [0, 1]): run.too_few_samples; two (0
 * and 1.0): none (mutant idle_one_sample). */
static void too_few_idle_samples(void **state)
{
	(void)state;
	for (int k = 0; k < 2; k++) {
		struct series s = k ? (struct series){.t = {0, 1.0, 1.5, 2.0, 2.5, 3.5},
						      .p = {1, 1, 3, 3, 3, 3},
						      .n = 6,
						      .accuracy_pct = 1,
						      .sample_hz = 2}
				    : (struct series){.t = {0, 1.5, 2.0, 2.5, 3.5},
						      .p = {1, 3, 3, 3, 3},
						      .n = 5,
						      .accuracy_pct = 1,
						      .sample_hz = 2};
		json_t *r = build(&s);
		assert_int_equal(has(r, "run.too_few_samples"), !k);
		json_decref(r);
	}
}

/* Welch at alpha = 0.05 (1 - ERGON_STATS_LEVEL, what compare passes):
 * a = -1, 0, 1 and b = d - 1, d, d + 1 (both sd 1, n 3): se = sqrt(2/3),
 * df = (2/3)^2 / (2 x (1/3)^2 / 2) = 4. t = 2.5 lies between the NIST
 * table's t(0.95, 4) = 2.132 and t(0.975, 4) = 2.776, so the two-sided p
 * is between 0.05 and 0.10: not significant at 0.05 (mutant
 * welch_alpha_doubled calls it). t = 2.9: significant. */
static void welch_between_five_and_ten_percent(void **state)
{
	(void)state;
	double ts[] = {2.5, 2.9};
	for (int k = 0; k < 2; k++) {
		double d = ts[k] * sqrt(2.0 / 3.0);
		double a[] = {-1, 0, 1}, b[] = {d - 1, d, d + 1};
		struct ergon_summary sa, sb;
		struct ergon_welch w;
		struct ergon_err err = {0};
		assert_int_equal(ergon_summary_of(a, 3, &sa, &err), 0);
		assert_int_equal(ergon_summary_of(b, 3, &sb, &err), 0);
		assert_int_equal(ergon_welch_test(&sa, &sb, 1.0 - ERGON_STATS_LEVEL, &w, &err), 0);
		NEAR(w.df, 4);
		NEAR(w.t, ts[k]);
		assert_int_equal(w.significant, k);
		if (k == 0)
			assert_true(w.p > 0.05 && w.p < 0.10);
	}
}

/* The median's interval (Conover 3.2): k the largest rank with 2 P(B <=
 * k - 1) <= 0.05, B ~ Binomial(n, 1/2). n = 8: P(B <= 0) = 1/256, P(B <=
 * 1) = 9/256, 2 x 9/256 = 0.0703 > 0.05, so k = 1, coverage 1 - 2/256.
 * n = 9: 2 x P(B <= 1) = 2 x 10/512 = 0.039, 2 x P(B <= 2) = 2 x 46/512 =
 * 0.18: k = 2, coverage 1 - 20/512 (mutant median_ci_90pct gives k = 2
 * for n = 8). */
static void median_interval_ranks(void **state)
{
	(void)state;
	size_t k;
	double cov;
	ergon_median_ci_ranks(8, &k, &cov);
	assert_int_equal(k, 1);
	NEAR(cov, 1 - 2.0 / 256);
	ergon_median_ci_ranks(9, &k, &cov);
	assert_int_equal(k, 2);
	NEAR(cov, 1 - 20.0 / 512);
}

/* Change points: a segment holds at least 2 points. Nine zeros and a 100,
 * each stating sd 1: the 100 alone would cost nothing as its own segment;
 * with segments of 2 the best split is [0, 8) and [8, 10) (cost 0 + 2 x
 * 50^2 = 5000 + the penalty, against 9000 for one segment: mean 10, 9 x
 * 100 + 90^2), so the last segment starts at point 8 (mutant
 * changepoint_min_segment_1 splits at 9). */
static void changepoint_segments_of_two(void **state)
{
	(void)state;
	double x[10] = {0}, sd[10];
	x[9] = 100;
	for (int i = 0; i < 10; i++)
		sd[i] = 1;
	struct ergon_cp_result r;
	struct ergon_err err = {0};
	assert_int_equal(ergon_changepoints(x, sd, 10, 0, &r, &err), 0);
	assert_int_equal(r.n_seg, 2);
	assert_int_equal(r.seg[1].start, 8);
	assert_int_equal(r.seg[1].end, 10);
	NEAR(r.seg[1].mean, 50);
	free(r.seg);
}

/* POWER_CHECKS.md: "more than one qualifying gate window while the facts
 * do not say that many were driven". Two windows and no gate_windows:
 * power.multiple_gate_windows, withheld; the facts saying 2: none (mutant
 * multiple_windows_from_3). */
static void two_gate_windows(void **state)
{
	(void)state;
	for (int k = 0; k < 2; k++) {
		struct ergon_power_facts f = {.have_clean_count = 1, .clean_infer_count = 10};
		f.gate_windows_driven = k ? 2 : 0;
		struct ergon_power_gate_view gv = {.window_count = 2,
						   .gate_s = 4,
						   .integral_s = 4,
						   .shortest_integral_s = 2,
						   .stats_period_s = 0.01,
						   .min_window_s = 1};
		struct ergon_issue_list l = {0};
		struct ergon_power_verdict v;
		assert_int_equal(ergon_power_evaluate(&f, &gv, &l, &v), 0);
		assert_int_equal(ergon_issue_list_has(&l, "power.multiple_gate_windows"), !k);
		assert_int_equal(v.omit_per_inference, !k);
		ergon_issue_list_cleanup(&l);
	}
}

/* POWER_CHECKS.md, internal runs: energy and charge exactly 0 is
 * power.zero_energy_and_charge; a record with zero energy and no charge
 * figure at all is the same dead sense path (mutant
 * zero_energy_needs_charge). 1 nJ with no charge: not this issue. */
static void zero_energy_without_charge(void **state)
{
	(void)state;
	double e[] = {0, 1};
	for (int k = 0; k < 2; k++) {
		struct ergon_power_facts f = {.internal = 1};
		f.terminal.status = ERGON_TERMINAL_OK;
		f.terminal.have_energy = 1;
		f.terminal.energy_nj = e[k];
		strcpy(f.terminal.final_phase, "complete");
		struct ergon_issue_list l = {0};
		struct ergon_power_ceiling ce;
		int fail = 0;
		ergon_power_check_internal(&f, &l, &fail, &ce);
		assert_int_equal(ergon_issue_list_has(&l, "power.zero_energy_and_charge"), !k);
		assert_int_equal(fail, !k);
		ergon_issue_list_cleanup(&l);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(duty_cycle_exactly_one),
	    cmocka_unit_test(sampler_gap_ten_periods),
	    cmocka_unit_test(temperature_evidence_at_three),
	    cmocka_unit_test(power_below_idle_at_equal_power),
	    cmocka_unit_test(rated_uncertainty_uses_abs_power),
	    cmocka_unit_test(ina228_fine_range_at_40_96_mV),
	    cmocka_unit_test(quantize_multiplier_rounds),
	    cmocka_unit_test(too_few_idle_samples),
	    cmocka_unit_test(welch_between_five_and_ten_percent),
	    cmocka_unit_test(median_interval_ranks),
	    cmocka_unit_test(changepoint_segments_of_two),
	    cmocka_unit_test(two_gate_windows),
	    cmocka_unit_test(zero_energy_without_charge),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
