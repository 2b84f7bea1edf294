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
#include "ergon/ert_hal.h"
#include "ergon/ert_ina228_math.h"
#include "ergon/figures.h"
#include "ergon/issues.h"
#include "ergon/report.h"
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
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
