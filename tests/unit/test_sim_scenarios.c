/* The virtual bench's fault scenarios: each asserts the raw facts the
 * target reports (terminal record, stream lines, GPIO edges, Joulescope
 * INPUT0) against values computed by hand from the model's constants:
 *
 *   core 96 MHz; one inference = 48000 + 24000 + 24000 = 96000 cycles
 *   = 500 + 250 + 250 us = 1 ms at 5 mA; idle 1 mA; rail 1.8 V
 *   windows: fixed 20 inferences = 20 ms -> 5 mA x 1.8 V x 20 ms = 180 uJ
 *   rate probe: 1000 us of delay_us = 96000 cycles at the nominal rate
 *   INA228 plan 0.5 ohm / 20 mA: CURRENT_LSB 3.814697265625e-8 A,
 *   energy LSB 1.953125 uJ, SHUNT_CAL 1000; bus 1.8 V = 9216 counts.
 *
 * Each scenario also goes through the host (ergon_sim_host_issues: the
 * capture pipeline, the HPX parser, the firmware facts, the gated engine)
 * and the test asserts the exact set of issue codes the host reports. The
 * reference inference time is the baseline profile boot's 1000 us.
 */
#include "ergon/analyze.h"
#include "ergon/issues.h"
#include "ergon/sim.h"
#include "ergon/sim_host.h"
#include "ergon/wire.h"
#include "test_support.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static struct ergon_sim_result run(const char *name)
{
	struct ergon_sim_result r;
	struct ergon_err err = {0};
	int rc = ergon_sim_run(name, &r, &err);
	if (rc != 0)
		fail_msg("%s: %s", name, err.msg);
	return r;
}

/* True when `line` is a whole line of `text`. */
static int has_line(const char *text, const char *line)
{
	size_t n = strlen(line);
	for (const char *p = text; (p = strstr(p, line)) != NULL; p++)
		if ((p == text || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0'))
			return 1;
	return 0;
}

/* The host's issue codes for a run must be exactly `want` (NULL-ended),
 * in any order. *detail_out (may be NULL) keeps the host's detail. */
static void host_codes(const struct ergon_sim_result *r, json_t **detail_out, ...)
{
	json_t *issues = NULL, *detail = NULL;
	struct ergon_err err = {0};
	if (ergon_sim_host_issues(r, 1000.0, &issues, &detail, &err) != 0)
		fail_msg("%s: host analysis failed: %s", r->scenario, err.msg);
	char *got = json_dumps(issues, JSON_COMPACT);
	va_list ap;
	va_start(ap, detail_out);
	size_t n_want = 0;
	for (const char *c = va_arg(ap, const char *); c != NULL; c = va_arg(ap, const char *)) {
		n_want++;
		if (!ergon_issue_has(issues, c))
			fail_msg("%s: host did not report %s; it reported %s", r->scenario, c, got);
	}
	va_end(ap);
	if (json_array_size(issues) != n_want)
		fail_msg("%s: host reported %zu issues, expected %zu: %s", r->scenario,
			 json_array_size(issues), n_want, got);
	free(got);
	json_decref(issues);
	if (detail_out != NULL)
		*detail_out = detail;
	else
		json_decref(detail);
}

static double js_gate_high_s(const struct ergon_sim_result *r)
{
	double s = 0.0;
	for (size_t i = 0; i < r->n_js; i++)
		s += r->js[i].in0 * r->js_period_s;
	return s;
}

static void unknown_scenario_names_the_choices(void **state)
{
	(void)state;
	struct ergon_sim_result r;
	struct ergon_err err = {0};
	assert_int_equal(ergon_sim_run("no_such", &r, &err), ERGON_EUSAGE);
	assert_non_null(strstr(err.msg, "no_such"));
	assert_non_null(strstr(err.msg, "baseline_power"));
}

static void baseline_profile(void **state)
{
	(void)state;
	struct ergon_sim_result r = run("baseline_profile");
	assert_int_equal(r.status, ERT_OK);
	const char *s = r.stream;
	assert_true(has_line(s, "--- HPX_START ---"));
	assert_true(has_line(s, "HPX_VERSION=1"));
	assert_true(has_line(s, "HPX_PMU=missing"));
	assert_true(has_line(s, "HPX_CYCLE_COUNTER=present"));
	assert_true(has_line(s, "--- HPX_ITER 2 ---"));
	assert_true(
	    has_line(s, "\"Layer\",\"Op\",\"window_us\",\"ARM_PMU_CPU_CYCLES\",\"overflow\""));
	assert_true(has_line(s, "0,CONV_2D,500,48000,0"));
	assert_true(has_line(s, "1,DEPTHWISE_CONV_2D,250,24000,0"));
	assert_true(has_line(s, "2,FULLY_CONNECTED,250,24000,0"));
	assert_true(has_line(s, "HPX_HEARTBEAT infer iters=2"));
	assert_true(has_line(s, "HPX_CLEAN_INFER_COUNT=20"));
	assert_true(has_line(s, "HPX_CLEAN_ELAPSED_US=20000"));
	assert_true(has_line(s, "HPX_CLEAN_INFER_AVG_US=1000"));
	assert_true(has_line(s, "HPX_CLEAN_REF_CYCLES=96000"));
	/* 20 x 96000 cycles. */
	assert_true(has_line(s, "HPX_CLEAN_INFER_TOTAL_CYCLES=1920000"));
	assert_true(has_line(s, "HPX_CLEAN_INFER_AVG_CYCLES=96000"));
	assert_true(has_line(s, "HPX_SYSTEM_CLOCK_HZ=96000000"));
	assert_true(has_line(s, "HPX_CLEAN_STALLED_ITERS=0"));
	assert_true(has_line(s, "HPX_CLEAN_PARTIAL_ITERS=0"));
	assert_true(has_line(s, "HPX_CLEAN_DWT_RATE_CYC=96000"));
	assert_true(has_line(s, "HPX_PROFILED_INFER_COUNT=3"));
	assert_true(has_line(s, "--- HPX_END ---"));
	/* 2 warmup + 3 profiled + 3 warm reference + 20 in the window. */
	assert_int_equal(r.inferences, 28);
	assert_int_equal(r.stream_len, r.bytes_sent);
	json_t *prof = NULL;
	host_codes(&r, &prof, NULL);
	/* The host's median per layer: 48000 cycles for the convolution. */
	json_t *l0 = json_array_get(json_object_get(prof, "layers"), 0);
	assert_string_equal(json_string_value(json_object_get(l0, "op")), "CONV_2D");
	assert_true(json_number_value(json_object_get(l0, "cycles")) == 48000.0);
	json_decref(prof);
	ergon_sim_result_cleanup(&r);
}

static void baseline_power_lockstep(void **state)
{
	(void)state;
	struct ergon_sim_result r = run("baseline_power");
	const struct ert_power_terminal *t = &r.terminal;
	assert_int_equal(r.status, ERT_OK);
	assert_int_equal(t->magic, ERT_POWER_TERMINAL_MAGIC);
	assert_int_equal(t->requested_count, 20);
	assert_int_equal(t->completed_count, 20);
	assert_int_equal(t->elapsed_us, 20000);
	assert_int_equal(t->gate_asserted, 1);
	assert_int_equal(t->gate_lowered, 1);
	assert_int_equal(t->final_phase, ERT_PHASE_DONE);
	/* READY (state pin 4) once, gate (pin 3) once. */
	assert_int_equal(ergon_sim_rising_edges(&r, 4), 1);
	assert_int_equal(ergon_sim_rising_edges(&r, 3), 1);
	/* The gate rose no earlier than GO (2 ms after READY). */
	assert_true(r.edges[1].pin == 3 && r.edges[1].t_ns >= r.edges[0].t_ns + 2000000u);
	/* The meter saw one gate pulse of 20 ms holding 180 uJ. */
	assert_int_equal(ergon_sim_js_in0_rising(&r), 1);
	assert_true(fabs(js_gate_high_s(&r) - 0.020) < 1e-9);
	assert_true(fabs(r.true_window_energy_j - 180e-6) < 1e-12);
	/* The terminal record is the only output, and it comes after the
	 * gate fell. */
	assert_int_equal(r.stream_len, t->text_len);
	assert_true(has_line(r.stream, "--- HPX_POWER_TERMINAL_START ---"));
	assert_true(has_line(r.stream, "HPX_POWER_STATUS=ok"));
	assert_true(has_line(r.stream, "HPX_POWER_ELAPSED_US=20000"));
	/* An external meter's figures are not part of the record; its
	 * source is. */
	assert_true(has_line(r.stream, "HPX_POWER_MEASUREMENT_SOURCE=external"));
	assert_null(strstr(r.stream, "ENERGY_NJ"));
	assert_true(has_line(r.stream, "--- HPX_POWER_TERMINAL_END ---"));
	json_t *sec = NULL;
	host_codes(&r, &sec, NULL);
	/* One window; energy per inference 180 uJ / 20 = 9 uJ (the window is
	 * seen at 100 us packet granularity: within 0.5 %). */
	assert_int_equal(json_integer_value(json_object_get(sec, "gated_window_count")), 1);
	double epi = json_number_value(json_object_get(sec, "energy_per_inference_j"));
	assert_true(fabs(epi - 9e-6) < 0.005 * 9e-6);
	assert_true(json_is_false(json_object_get(sec, "per_inference_metrics_omitted")));
	json_decref(sec);
	ergon_sim_result_cleanup(&r);
}

static void baseline_ina228(void **state)
{
	(void)state;
	struct ergon_sim_result r = run("baseline_ina228");
	const struct ert_power_terminal *t = &r.terminal;
	assert_int_equal(r.status, ERT_OK);
	/* RSTACC lands at the end of its I2C write, right before the gate;
	 * ENERGY is sampled after a 7-byte transfer (175 us at 400 kHz) at
	 * idle: 180 uJ + 1 mA x 1.8 V x 175 us = 180.315 uJ
	 * = 92.32 LSB -> 92 x 1.953125 uJ = 179687.5 nJ -> 179688. */
	assert_int_equal(t->energy_nj, 179688);
	/* CHARGE is read 175 us later: 100 uC + 1 mA x 350 us = 100.35 uC
	 * = 2630.6 LSB -> 2630 x 38.14697265625 nC = 100326.54 -> 100327. */
	assert_int_equal(t->charge_nc, 100327);
	assert_int_equal(t->bus_voltage_uv, 1800000);
	assert_int_equal(t->measurement_overflow, 0);
	assert_int_equal(t->charge_clamped, 0);
	assert_int_equal(t->measurement_duration_us, 20000);
	assert_int_equal(t->measurement_count, 20);
	assert_true(has_line(r.stream, "HPX_POWER_ENERGY_NJ=179688"));
	assert_true(has_line(r.stream, "HPX_POWER_MEASUREMENT_SOURCE=ina228"));
	/* The scenarios' own calibration id, a string, verbatim. */
	assert_string_equal(t->calibration_id, "sim-bench");
	assert_true(has_line(r.stream, "HPX_POWER_CALIBRATION_ID=sim-bench"));
	json_t *sec = NULL;
	host_codes(&r, &sec, NULL);
	/* window_clock_ceiling, all five fields: the window (20 ms) lies
	 * inside the host envelope, which holds at least the 2 warmup
	 * inferences besides and at most every streamed byte (10 us each)
	 * plus 10 ms of I2C and probes on top; slack = max(0.25 s, 2 %). */
	json_t *c = json_object_get(sec, "window_clock_ceiling");
	assert_int_equal(json_integer_value(json_object_get(c, "elapsed_us")), 20000);
	assert_true(json_real_value(json_object_get(c, "elapsed_s")) == 0.02);
	double env = json_real_value(json_object_get(c, "host_envelope_s"));
	assert_true(env == r.host_envelope_s);
	assert_true(env >= 0.022 && env <= 0.022 + (double)r.stream_len * 10e-6 + 0.010);
	assert_true(json_real_value(json_object_get(c, "slack_s")) == 0.25);
	assert_true(fabs(json_real_value(json_object_get(c, "ratio")) - 0.02 / env) < 1e-15);
	assert_true(json_is_null(json_object_get(c, "reason")));
	json_decref(sec);
	ergon_sim_result_cleanup(&r);
}

/* power.stats_rate_hz shapes the simulated Joulescope's packets (issue
 * 29): at 1 kHz each packet sums 1000 of its 1 MHz samples over 1 ms; the
 * same run at the scenarios' own 10 kHz sums 100 over 100 us. The physics
 * is the same: packet k at 1 kHz ends where packet 10k + 9 at 10 kHz ends,
 * with the same accumulated charge and energy, and INPUT0's high time is
 * the gate's 20 ms at both rates. A rate the meter cannot give (1,000,000
 * / rate not whole, or above 10 kHz) is refused with the rates it gives. */
static void stats_rate_shapes_the_packets(void **state)
{
	(void)state;
	struct ergon_sim_options o;
	struct ergon_sim_result r10, r1;
	struct ergon_err err = {0};
	ergon_sim_options_default(&o);
	assert_true(o.js_stats_rate_hz == 10000.0);
	assert_int_equal(ergon_sim_run_opts("baseline_power", &o, &r10, &err), 0);
	o.js_stats_rate_hz = 1000;
	assert_int_equal(ergon_sim_run_opts("baseline_power", &o, &r1, &err), 0);
	assert_true(r10.js_period_s == 1e-4);
	assert_true(r1.js_period_s == 1e-3);
	assert_int_equal(r10.stats[1].sample_id - r10.stats[0].sample_id, 100);
	assert_int_equal(r1.stats[1].sample_id - r1.stats[0].sample_id, 1000);
	assert_true(r1.n_js >= 10 && r1.n_js * 10 <= r10.n_js && r10.n_js < r1.n_js * 10 + 10);
	for (size_t k = 0; k < r1.n_js; k++) {
		const struct ergon_stats_packet *a = &r1.stats[k], *b = &r10.stats[10 * k + 9];
		if (fabs(a->t_end_s - b->t_end_s) > 1e-12 ||
		    fabs(a->t_end_s - a->t_start_s - 1e-3) > 1e-12 ||
		    fabs(a->energy_j - b->energy_j) > 1e-12 * fabs(b->energy_j) + 1e-18 ||
		    fabs(a->charge_c - b->charge_c) > 1e-12 * fabs(b->charge_c) + 1e-18)
			fail_msg("1 kHz packet %zu does not end as 10 kHz packet %zu: t %.9f/%.9f, "
				 "E %.12g/%.12g",
				 k, 10 * k + 9, a->t_end_s, b->t_end_s, a->energy_j, b->energy_j);
	}
	assert_true(fabs(js_gate_high_s(&r1) - 0.020) < 1e-9);
	assert_true(fabs(js_gate_high_s(&r10) - 0.020) < 1e-9);
	assert_true(r1.true_window_energy_j == r10.true_window_energy_j);
	ergon_sim_result_cleanup(&r10);
	ergon_sim_result_cleanup(&r1);
	/* Refused, with the rates it gives. */
	const double bad[] = {3000, 20000, 0.5, 333.3};
	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
		o.js_stats_rate_hz = bad[k];
		err = (struct ergon_err){0};
		assert_int_equal(ergon_sim_run_opts("baseline_power", &o, &r1, &err),
				 ERGON_ECONFIG);
		assert_non_null(strstr(err.msg, "power.stats_rate_hz"));
		assert_non_null(strstr(err.msg, "N = 100..1,000,000"));
		assert_non_null(strstr(err.msg, "10000, 8000, 6250, 5000, 4000, 3125, 2500"));
	}
	assert_int_equal(ergon_sim_check_stats_rate(1e6 / 3000.0, "test", &err), 0);
}

/* The configured calibration id reaches the record verbatim, bounded to
 * 63 characters, a control character as '?' (the record is one line per
 * key); none configured: no CALIBRATION_ID line at all. */
static void calibration_id_reaches_the_record(void **state)
{
	(void)state;
	struct ergon_sim_options o;
	struct ergon_sim_result r;
	struct ergon_err err = {0};
	ergon_sim_options_default(&o);
	o.calibration_id = "UNCALIBRATED-parasitic-path";
	assert_int_equal(ergon_sim_run_opts("baseline_ina228", &o, &r, &err), 0);
	assert_string_equal(r.terminal.calibration_id, "UNCALIBRATED-parasitic-path");
	assert_true(has_line(r.stream, "HPX_POWER_CALIBRATION_ID=UNCALIBRATED-parasitic-path"));
	ergon_sim_result_cleanup(&r);
	o.calibration_id = "a\tb";
	assert_int_equal(ergon_sim_run_opts("baseline_ina228", &o, &r, &err), 0);
	assert_true(has_line(r.stream, "HPX_POWER_CALIBRATION_ID=a?b"));
	ergon_sim_result_cleanup(&r);
	char longid[71];
	memset(longid, 'x', 70);
	longid[70] = '\0';
	o.calibration_id = longid;
	assert_int_equal(ergon_sim_run_opts("baseline_ina228", &o, &r, &err), 0);
	assert_int_equal(strlen(r.terminal.calibration_id), 63);
	ergon_sim_result_cleanup(&r);
	o.calibration_id = NULL;
	assert_int_equal(ergon_sim_run_opts("baseline_ina228", &o, &r, &err), 0);
	assert_null(strstr(r.stream, "CALIBRATION_ID"));
	assert_int_equal(r.status, ERT_OK);
	host_codes(&r, NULL, NULL);
	ergon_sim_result_cleanup(&r);
}

/* Internal mode, window clock 20x true time: the fixed 20-inference window
 * (20 ms true) reads 400000 us (+-20 for the truncated reads), longer than
 * the whole host envelope (< 0.15 s, see baseline_ina228) + 0.25 s slack:
 * power.window_clock_exceeds_host_time; and 0.4 s vs the reference
 * 20 x 1000 us = 0.02 s is off by more than 25 %: power.window_clock_mismatch. */
static void window_clock_fast(void **state)
{
	(void)state;
	struct ergon_sim_result r = run("window_clock_fast");
	assert_int_equal(r.status, ERT_OK);
	assert_int_equal(r.terminal.completed_count, 20);
	assert_true(r.terminal.elapsed_us >= 399980 && r.terminal.elapsed_us <= 400020);
	assert_true(r.host_envelope_s < 0.15);
	json_t *sec = NULL;
	host_codes(&r, &sec, "power.window_clock_exceeds_host_time", "power.window_clock_mismatch",
		   NULL);
	json_t *c = json_object_get(sec, "window_clock_ceiling");
	assert_true(json_real_value(json_object_get(c, "host_envelope_s")) == r.host_envelope_s);
	assert_true(json_real_value(json_object_get(c, "ratio")) > 0.4 / 0.15);
	json_decref(sec);
	ergon_sim_result_cleanup(&r);
}

/* Internal mode, window clock at 0.6x true time: 20 ms true reads 12000 us
 * (+-1), 40 % short of the reference 20 x 1000 us (> 25 %):
 * power.window_clock_mismatch only (shorter than the envelope). */
static void window_clock_slow(void **state)
{
	(void)state;
	struct ergon_sim_result r = run("window_clock_slow");
	assert_int_equal(r.status, ERT_OK);
	assert_true(r.terminal.elapsed_us >= 11999 && r.terminal.elapsed_us <= 12001);
	host_codes(&r, NULL, "power.window_clock_mismatch", NULL);
	ergon_sim_result_cleanup(&r);
}

/* Host: profile.clean_window_stalled, and
 * profile.clean_window_check_inoperative because the warm reference
 * stalled too (0 cycles: the partial floor is zero). */
static void stalled_counter(void **state)
{
	(void)state;
	struct ergon_sim_result r = run("stalled_counter");
	assert_int_equal(r.status, ERT_OK);
	assert_true(has_line(r.stream, "HPX_CLEAN_STALLED_ITERS=20"));
	assert_true(has_line(r.stream, "HPX_CLEAN_PARTIAL_ITERS=0"));
	assert_true(has_line(r.stream, "0,CONV_2D,500,0,0"));
	assert_true(has_line(r.stream, "HPX_CLEAN_REF_CYCLES=0"));
	host_codes(&r, NULL, "profile.clean_window_stalled",
		   "profile.clean_window_check_inoperative", NULL);
	ergon_sim_result_cleanup(&r);
}

/* Host: profile.clean_window_stalled (10 of 20 partial). */
static void slow_counter(void **state)
{
	(void)state;
	struct ergon_sim_result r = run("slow_counter");
	assert_int_equal(r.status, ERT_OK);
	/* Inferences 0..27; odd ones count 96000/16 = 6000 < 96000/8. The
	 * warm reference (inferences 5, 6, 7) keeps the full 96000. Window
	 * inferences 8..27 hold 10 odd ones. */
	assert_true(has_line(r.stream, "HPX_CLEAN_REF_CYCLES=96000"));
	assert_true(has_line(r.stream, "HPX_CLEAN_PARTIAL_ITERS=10"));
	assert_true(has_line(r.stream, "HPX_CLEAN_STALLED_ITERS=0"));
	json_t *issues = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_sim_host_issues(&r, 1000.0, &issues, NULL, &err), 0);
	assert_int_equal(json_array_size(issues), 1);
	json_t *ctx = json_object_get(json_array_get(issues, 0), "context");
	assert_string_equal(json_string_value(json_object_get(json_array_get(issues, 0), "code")),
			    "profile.clean_window_stalled");
	assert_int_equal(json_integer_value(json_object_get(ctx, "partial_iters")), 10);
	assert_int_equal(json_integer_value(json_object_get(ctx, "total_iters")), 20);
	json_decref(issues);
	ergon_sim_result_cleanup(&r);
}

/* Host: profile.clean_window_clock_rate_low; only the probe sees it. */
static void uniform_slowdown(void **state)
{
	(void)state;
	struct ergon_sim_result r = run("uniform_slowdown");
	assert_int_equal(r.status, ERT_OK);
	/* Quarter speed: 1000 us of delay_us holds 24000 cycles, not 96000
	 * (under half: the host flags it); every inference still counts its
	 * 96000 and takes 4 ms. */
	assert_true(has_line(r.stream, "HPX_CLEAN_DWT_RATE_CYC=24000"));
	assert_true(has_line(r.stream, "HPX_CLEAN_REF_CYCLES=96000"));
	assert_true(has_line(r.stream, "HPX_CLEAN_STALLED_ITERS=0"));
	assert_true(has_line(r.stream, "HPX_CLEAN_PARTIAL_ITERS=0"));
	assert_true(has_line(r.stream, "HPX_CLEAN_ELAPSED_US=80000"));
	host_codes(&r, NULL, "profile.clean_window_clock_rate_low", NULL);
	ergon_sim_result_cleanup(&r);
}

/* External mode: the meter owns the figures, so a stopped window clock is
 * a warning (the run is degraded) and energy per inference stands. The
 * firmware's record says ok with elapsed 0. */
static void frozen_window_clock(void **state)
{
	(void)state;
	struct ergon_sim_result r = run("frozen_window_clock");
	assert_int_equal(r.status, ERT_OK);
	assert_int_equal(r.terminal.elapsed_us, 0);
	assert_int_equal(r.terminal.completed_count, 20);
	assert_int_equal(r.terminal.gate_lowered, 1);
	assert_true(has_line(r.stream, "HPX_POWER_STATUS=ok"));
	assert_true(has_line(r.stream, "HPX_POWER_ELAPSED_US=0"));
	/* The meter still saw the true 20 ms gate. */
	assert_true(fabs(js_gate_high_s(&r) - 0.020) < 1e-9);
	json_t *sec = NULL;
	host_codes(&r, &sec, "power.window_clock_frozen", NULL);
	/* As baseline_power: 180 uJ over 20 inferences = 9 uJ each. */
	double epi = json_number_value(json_object_get(sec, "energy_per_inference_j"));
	assert_true(fabs(epi - 9e-6) < 0.005 * 9e-6);
	assert_true(json_is_false(json_object_get(sec, "per_inference_metrics_omitted")));
	json_decref(sec);
	ergon_sim_result_cleanup(&r);
}

/* Host: power.window_observer_mismatch (the firmware's window clock and
 * the meter's gate disagree). */
static void hfrc_drift(void **state)
{
	(void)state;
	struct ergon_sim_result r = run("hfrc_drift");
	assert_int_equal(r.status, ERT_OK);
	/* The window clock runs 5 % fast: 20 ms true reads 21000 us (+-1
	 * for the truncation of each read); 1 ms off is beyond the host's
	 * allowance (1 % + 2 packets = 0.41 ms). */
	assert_true(r.terminal.elapsed_us >= 20999 && r.terminal.elapsed_us <= 21001);
	assert_true(fabs(js_gate_high_s(&r) - 0.020) < 1e-9);
	host_codes(&r, NULL, "power.window_observer_mismatch", NULL);
	ergon_sim_result_cleanup(&r);
}

/* The core runs at 0.92 x its nominal 96 MHz in the power boot (an HFRC
 * that drifts between boots) while the window clock is true: the 20
 * inferences take 20 x 1 ms / 0.92 = 21.739 ms, the firmware's window
 * clock and the meter's gate agree on it (the observer holds), and against
 * the profile boot's reference 20 x 1000 us the gate runs 1/0.92 - 1 =
 * +8.70 % (within 15 %): power.gated_window_reference_drift (info) and the
 * energy per inference stands at 5 mA x 1.8 V x 1 ms / 0.92 = 9.7826 uJ. */
static void core_clock_drift(void **state)
{
	(void)state;
	struct ergon_sim_result r = run("core_clock_drift");
	assert_int_equal(r.status, ERT_OK);
	assert_true(r.terminal.elapsed_us >= 21738 && r.terminal.elapsed_us <= 21740);
	json_t *sec = NULL;
	host_codes(&r, &sec, "power.gated_window_reference_drift", NULL);
	assert_true(
	    json_is_true(json_object_get(json_object_get(sec, "observer_check"), "agrees")));
	double drift = json_number_value(json_object_get(sec, "gated_window_reference_drift"));
	if (!(fabs(drift - (1.0 / 0.92 - 1.0)) < 0.005))
		fail_msg("drift %.6f, expected %.6f", drift, 1.0 / 0.92 - 1.0);
	double epi = json_number_value(json_object_get(sec, "energy_per_inference_j"));
	assert_true(fabs(epi - 9e-6 / 0.92) < 0.01 * 9e-6);
	json_decref(sec);
	ergon_sim_result_cleanup(&r);
}

/* The core runs 2000 x its nominal 96 MHz: one inference of 96000 cycles
 * takes 96000 / 192 GHz = 0.5 us, under the window clock's 1 us. The
 * fixed window of 20 takes 20 x 0.5 = 10 us, and the firmware's integer
 * average 10 / 20 reports 0 us per inference: an inference that reports
 * zero time. The profile flow's own host checks see nothing wrong (the
 * rate probe counts more cycles, not fewer); `ergon profile` runs the
 * power stage for it (ergon_sim_scenario_power_checked), where it is
 * power.device_timing_corrupt (functional/test_profile_sim). */
static void zero_time_inference(void **state)
{
	(void)state;
	assert_int_equal(ergon_sim_scenario_power_checked("zero_time_inference"), 1);
	assert_int_equal(ergon_sim_scenario_power_checked("baseline_profile"), 0);
	assert_int_equal(ergon_sim_scenario_power_checked("no_such_scenario"), 0);
	struct ergon_sim_result r = run("zero_time_inference");
	assert_int_equal(r.status, ERT_OK);
	assert_int_equal(r.flow, ERGON_SIM_FLOW_PROFILE);
	assert_true(has_line(r.stream, "HPX_CLEAN_INFER_COUNT=20"));
	assert_true(has_line(r.stream, "HPX_CLEAN_ELAPSED_US=10"));
	assert_true(has_line(r.stream, "HPX_CLEAN_INFER_AVG_US=0"));
	host_codes(&r, NULL, NULL);
	ergon_sim_result_cleanup(&r);
}

/* A port without a cycle counter (no DWT CYCCNT): the firmware says
 * HPX_CYCLE_COUNTER=missing, per-layer cycles are 0 and the clean window
 * has no cycle reference (no HPX_CLEAN_REF_CYCLES). */
static void no_cycle_counter(void **state)
{
	(void)state;
	struct ergon_sim_result r = run("no_cycle_counter");
	assert_int_equal(r.status, ERT_OK);
	assert_true(has_line(r.stream, "HPX_CYCLE_COUNTER=missing"));
	assert_null(strstr(r.stream, "HPX_CLEAN_REF_CYCLES="));
	host_codes(&r, NULL, "pmu.cycle_counter_missing", NULL);
	ergon_sim_result_cleanup(&r);
}

/* The record is lost and the window clock runs at half rate. In the
 * scenario's own fixed window of 20 the true gate is still 20 x 1 ms =
 * 20 ms, equal to the host's 20 x 1000 us: only the record's loss shows
 * (through `ergon profile`'s auto window the gate doubles, and the ratio
 * check fires: functional/test_profile_sim). The firmware's window clock
 * said 20 ms / 2 = 10000 us in its (lost) RAM record. */
static void lost_record_slow_window_clock(void **state)
{
	(void)state;
	struct ergon_sim_result r = run("lost_record_slow_window_clock");
	assert_int_equal(r.status, ERT_OK);
	assert_true(r.terminal.elapsed_us >= 9999 && r.terminal.elapsed_us <= 10001);
	host_codes(&r, NULL, "capture.incomplete", "power.terminal_missing", NULL);
	ergon_sim_result_cleanup(&r);
}

/* The meter loses 9 of every 10 packets while the gate is fully high: the
 * 20 ms gate still has both edges, but its 200 packets shrink to 20 plus
 * the 2 edge packets, 2.2 ms of integral < the scenarios' 5 ms floor:
 * power.gate_below_minimum; the accumulators counted every lost packet, so
 * they disagree with the kept packets' power: power.accumulator_inconsistent.
 * Per-inference figures withheld. */
static void packets_lost_in_window(void **state)
{
	(void)state;
	struct ergon_sim_result r = run("packets_lost_in_window");
	assert_int_equal(r.status, ERT_OK);
	json_t *sec = NULL;
	/* The lost packets also leave 89 % of the gate window uncovered:
	 * power.time_gap (issue 30). */
	host_codes(&r, &sec, "power.gate_below_minimum", "power.accumulator_inconsistent",
		   "power.time_gap", NULL);
	assert_true(json_is_true(json_object_get(sec, "per_inference_metrics_omitted")));
	json_decref(sec);
	ergon_sim_result_cleanup(&r);
}

/* Host: power.terminal_incomplete, power.observation_degraded (no closed
 * gate window). */
static void gate_never_falls(void **state)
{
	(void)state;
	struct ergon_sim_result r = run("gate_never_falls");
	assert_int_equal(r.status, ERT_E_GATE_STUCK);
	assert_int_equal(r.terminal.final_phase, ERT_PHASE_GATE_LOW);
	assert_int_equal(r.terminal.gate_asserted, 1);
	assert_int_equal(r.terminal.gate_lowered, 0);
	/* INPUT0 is still high in the meter's last packet. */
	assert_true(r.n_js > 0 && r.js[r.n_js - 1].in0 == 1.0);
	assert_true(has_line(r.stream, "HPX_POWER_GATE_LOWERED=0"));
	assert_true(has_line(r.stream, "HPX_POWER_STATUS=" HPX_STATUS_ERROR));
	host_codes(&r, NULL, "power.terminal_incomplete", "power.observation_degraded", NULL);
	ergon_sim_result_cleanup(&r);
}

/* Host: power.short_gate_pulses_ignored (info) only; the two glitches are
 * ignored as short pulses and the one real window is measured. The glitches
 * start at 1.000 and 1.500 ms (sim/src/board.c) and last 20 us, inside the
 * 10 kHz packets [1.0, 1.1) and [1.5, 1.6) ms: the packet-fed engine sees
 * each as one whole packet, 100 us long, starting at the packet's start.
 * (baseline_power is the near miss: no glitch, no code.) */
static void gate_glitches(void **state)
{
	(void)state;
	struct ergon_sim_result r = run("gate_glitches");
	assert_int_equal(r.status, ERT_OK);
	/* Two 20 us glitches plus the real gate: three pulses at the meter,
	 * one edge driven by the target. */
	assert_int_equal(ergon_sim_js_in0_rising(&r), 3);
	assert_int_equal(ergon_sim_rising_edges(&r, 3), 1);
	assert_true(fabs(js_gate_high_s(&r) - 0.020040) < 1e-9);
	json_t *sec = NULL;
	host_codes(&r, &sec, "power.short_gate_pulses_ignored", NULL);
	assert_int_equal(json_integer_value(json_object_get(sec, "gated_window_count")), 1);
	assert_int_equal(json_integer_value(json_object_get(sec, "short_gate_pulses_ignored")), 2);
	json_t *gl = NULL;
	size_t k;
	json_t *it;
	json_array_foreach(json_object_get(sec, "issues"), k, it)
	{
		if (strcmp(json_string_value(json_object_get(it, "code")),
			   "power.short_gate_pulses_ignored") == 0)
			gl = json_object_get(it, "context");
	}
	assert_non_null(gl);
	assert_string_equal(json_string_value(json_object_get(
				json_array_get(json_object_get(sec, "issues"), 0), "severity")),
			    "info");
	assert_int_equal(json_integer_value(json_object_get(gl, "count")), 2);
	json_t *pulses = json_object_get(gl, "pulses");
	assert_int_equal(json_array_size(pulses), 2);
	static const double start_s[2] = {0.0010, 0.0015};
	for (size_t i = 0; i < 2; i++) {
		json_t *pu = json_array_get(pulses, i);
		assert_true(fabs(json_real_value(json_object_get(pu, "start_s")) - start_s[i]) <
			    1e-9);
		assert_true(fabs(json_real_value(json_object_get(pu, "duration_s")) - 100e-6) <
			    1e-9);
	}
	/* Ignored pulses do not degrade the measurement. */
	assert_string_equal(json_string_value(json_object_get(sec, "integrity")), "valid");
	assert_false(json_is_true(json_object_get(sec, "per_inference_metrics_omitted")));
	json_decref(sec);
	ergon_sim_result_cleanup(&r);
}

/* Host: power.terminal_incomplete, power.observation_degraded. */
static void go_never_arrives(void **state)
{
	(void)state;
	struct ergon_sim_result r = run("go_never_arrives");
	assert_int_equal(r.status, ERT_E_TIMEOUT);
	assert_int_equal(r.terminal.final_phase, ERT_PHASE_SYNC_GO);
	assert_int_equal(r.terminal.gate_asserted, 0);
	assert_int_equal(r.terminal.completed_count, 0);
	/* READY once, then the fault blinks |ERT_E_TIMEOUT| = 2 times. */
	assert_int_equal(ergon_sim_rising_edges(&r, 4), 3);
	assert_int_equal(ergon_sim_rising_edges(&r, 3), 0);
	assert_int_equal(ergon_sim_js_in0_rising(&r), 0);
	assert_true(has_line(r.stream, "HPX_POWER_ERROR_CODE=2"));
	/* A failure is status error (the host accepts ok/error only), never
	 * the first draft's failed/incomplete. */
	assert_true(has_line(r.stream, "HPX_POWER_STATUS=" HPX_STATUS_ERROR));
	assert_false(has_line(r.stream, "HPX_POWER_STATUS=" HPX_STATUS_FAILED));
	assert_false(has_line(r.stream, "HPX_POWER_STATUS=" HPX_STATUS_INCOMPLETE));
	assert_true(has_line(r.stream, "HPX_POWER_FINAL_PHASE=sync_go"));
	host_codes(&r, NULL, "power.terminal_incomplete", "power.observation_degraded", NULL);
	ergon_sim_result_cleanup(&r);
}

/* Host: capture.incomplete (no end sentinel) and power.terminal_missing
 * (the record never came, so the observer check did not run). The ratio
 * check is then authoritative: the host's configured fixed window of 20
 * inferences x the profile boot's 1000 us = 20 ms, against a 20 ms gate,
 * tolerance max(2 packets = 0.2 ms, half an inference = 0.5 ms, 10 % =
 * 2 ms) = 2 ms: it passes, so the per-inference figure stands:
 * 5 mA x 1.8 V x 20 ms / 20 = 9 uJ. The record is still in RAM for a
 * probe. */
static void lost_terminal_record(void **state)
{
	(void)state;
	struct ergon_sim_result r = run("lost_terminal_record");
	assert_int_equal(r.status, ERT_OK);
	assert_int_equal(r.stream_len, 0);
	assert_true(r.bytes_sent > 0 && r.bytes_sent == r.terminal.text_len);
	assert_int_equal(r.terminal.magic, ERT_POWER_TERMINAL_MAGIC);
	assert_non_null(strstr(r.terminal.text, "HPX_POWER_STATUS=ok\n"));
	json_t *sec = NULL;
	host_codes(&r, &sec, "capture.incomplete", "power.terminal_missing", NULL);
	json_t *tm = NULL;
	size_t k;
	json_t *it;
	json_array_foreach(json_object_get(sec, "issues"), k, it)
	{
		if (strcmp(json_string_value(json_object_get(it, "code")),
			   "power.terminal_missing") == 0)
			tm = json_object_get(it, "context");
	}
	assert_non_null(tm);
	assert_string_equal(json_string_value(json_object_get(tm, "observer_check")), "not_run");
	assert_string_equal(json_string_value(json_object_get(tm, "ratio_check")), "authoritative");
	assert_int_equal(json_integer_value(json_object_get(tm, "clean_infer_count")), 20);
	assert_false(json_is_true(json_object_get(sec, "gated_window_duration_suspect")));
	assert_false(json_is_true(json_object_get(sec, "per_inference_metrics_omitted")));
	assert_true(fabs(json_number_value(json_object_get(sec, "gated_window_duration_ratio")) -
			 1.0) < 0.1);
	assert_true(fabs(json_number_value(json_object_get(sec, "energy_per_inference_j")) - 9e-6) <
		    0.1e-6);
	assert_string_equal(json_string_value(json_object_get(sec, "integrity")), "degraded");
	json_decref(sec);
	ergon_sim_result_cleanup(&r);
}

static void ina228_bringup_failures(void **state)
{
	(void)state;
	/* The record's ERROR_CODE is the method's per-phase code: in
	 * ina228_init 10 = SHUNT_CAL write failed, 11 = read back differs;
	 * the ID mismatch stays |ERT_E_INA228_ID| = 7. */
	static const struct {
		const char *name;
		int status;
		int record_code;
	} cases[] = {
	    /* Host: power.terminal_incomplete and, the INA228 being the
	     * measurement of record, power.ina228_failed for each. */
	    {"ina228_wrong_id", ERT_E_INA228_ID, 7},
	    {"ina228_shunt_cal_zero", ERT_E_SHUNT_CAL_READBACK, 11},
	    {"ina228_shunt_cal_nack", ERT_E_SHUNT_CAL_WRITE, 10},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct ergon_sim_result r = run(cases[i].name);
		assert_int_equal(r.status, cases[i].status);
		assert_int_equal(r.terminal.final_phase, ERT_PHASE_INA228_INIT);
		assert_int_equal(r.terminal.gate_asserted, 0);
		/* Nothing ran, and no measured-looking zeros were printed. */
		assert_int_equal(r.inferences, 0);
		assert_null(strstr(r.stream, "ENERGY_NJ"));
		char *want = ts_strf("HPX_POWER_ERROR_CODE=%d", cases[i].record_code);
		assert_true(has_line(r.stream, want));
		free(want);
		host_codes(&r, NULL, "power.terminal_incomplete", "power.ina228_failed", NULL);
		ergon_sim_result_cleanup(&r);
	}
	/* The host names (phase, code) as one failure: 10 and 11 are
	 * SHUNT_CAL's in ina228_init and the window clock's / the workload's
	 * anywhere else. */
	assert_string_equal(ergon_power_error_name("ina228_init", 10), "shunt_cal_write");
	assert_string_equal(ergon_power_error_name("ina228_init", 11), "shunt_cal_readback");
	assert_string_equal(ergon_power_error_name("ina228_init", 7), "ina228_id");
	assert_string_equal(ergon_power_error_name("window", 10), "window_clock");
	assert_string_equal(ergon_power_error_name("window", 11), "workload");
	assert_string_equal(ergon_power_error_name("ina228_read", 3), "i2c");
	assert_string_equal(ergon_power_error_name("complete", 0), "ok");
	assert_string_equal(ergon_power_error_name("window", 99), "unknown");
	assert_string_equal(ergon_power_error_name("window", -4), "unknown");
	/* The readback and the write failure are distinct codes. */
	assert_string_equal(ert_status_name(ERT_E_SHUNT_CAL_READBACK), "shunt_cal_readback");
	assert_string_equal(ert_status_name(ERT_E_SHUNT_CAL_WRITE), "shunt_cal_write");
}

/* The arming write (CONFIG with RSTACC, right before the gate) and the
 * read after the window fail on the bus: error 3 (|ERT_E_I2C|) in phases
 * ina228_arm and ina228_read. Arm: no gate, no inference of the window
 * (warmup 2 and the 3 warm-reference runs, target/src/window.c). Read: the 20-inference window ran
 * and the gate fell, but no figure was read, so none is printed. Host: power.terminal_incomplete
 * and power.ina228_failed (an error: the run is failed, issue 30) for both. */
static void ina228_arm_and_read_failures(void **state)
{
	(void)state;
	struct ergon_sim_result r = run("ina228_arm_fails");
	assert_int_equal(r.status, ERT_E_I2C);
	assert_int_equal(r.terminal.final_phase, ERT_PHASE_INA228_ARM);
	assert_int_equal(r.terminal.gate_asserted, 0);
	assert_int_equal(r.terminal.completed_count, 0);
	assert_int_equal(r.inferences, 2 + 3);
	assert_true(has_line(r.stream, "HPX_POWER_FINAL_PHASE=ina228_arm"));
	assert_true(has_line(r.stream, "HPX_POWER_ERROR_CODE=3"));
	assert_null(strstr(r.stream, "ENERGY_NJ"));
	host_codes(&r, NULL, "power.terminal_incomplete", "power.ina228_failed", NULL);
	ergon_sim_result_cleanup(&r);
	r = run("ina228_read_fails");
	assert_int_equal(r.status, ERT_E_I2C);
	assert_int_equal(r.terminal.final_phase, ERT_PHASE_INA228_READ);
	assert_int_equal(r.terminal.gate_asserted, 1);
	assert_int_equal(r.terminal.gate_lowered, 1);
	assert_int_equal(r.terminal.completed_count, 20);
	assert_true(has_line(r.stream, "HPX_POWER_FINAL_PHASE=ina228_read"));
	assert_true(has_line(r.stream, "HPX_POWER_ERROR_CODE=3"));
	assert_null(strstr(r.stream, "ENERGY_NJ"));
	host_codes(&r, NULL, "power.terminal_incomplete", "power.ina228_failed", NULL);
	ergon_sim_result_cleanup(&r);
}

/* Host: power.zero_charge (energy without charge: IN+/IN- reversed). */
static void ina228_reversed_sense(void **state)
{
	(void)state;
	struct ergon_sim_result r = run("ina228_reversed_sense");
	assert_int_equal(r.status, ERT_OK);
	/* Power is a magnitude, so ENERGY is as in the baseline; CHARGE is
	 * negative and clamped to 0, not wrapped to ~2^40 LSB. */
	assert_int_equal(r.terminal.energy_nj, 179688);
	assert_int_equal(r.terminal.charge_nc, 0);
	assert_int_equal(r.terminal.charge_clamped, 1);
	assert_true(has_line(r.stream, "HPX_POWER_CHARGE_NC=0"));
	host_codes(&r, NULL, "power.zero_charge", NULL);
	ergon_sim_result_cleanup(&r);
}

/* Host: power.accumulator_overflow. */
static void ina228_accumulator_overflow(void **state)
{
	(void)state;
	struct ergon_sim_result r = run("ina228_accumulator_overflow");
	assert_int_equal(r.status, ERT_OK);
	assert_int_equal(r.terminal.measurement_overflow, 1);
	/* DIAG_ALRT.ENERGYOF is bit 11. */
	assert_true((r.terminal.ina228_diag & 0x0800u) != 0);
	/* 50 LSB below 2^40 + 92.32 LSB wraps to 42 LSB = 82031.25 nJ. */
	assert_int_equal(r.terminal.energy_nj, 82031);
	assert_true(has_line(r.stream, "HPX_POWER_MEASUREMENT_OVERFLOW=1"));
	host_codes(&r, NULL, "power.accumulator_overflow", NULL);
	ergon_sim_result_cleanup(&r);
}

/* Host: pmu.layer_count_mismatch. Bytes 400..436 fall inside iteration
 * 0's CSV rows (the stream's first 460 bytes end in "2,FULLY_CON"), so
 * that iteration loses a row. */
static void transport_bytes_dropped(void **state)
{
	(void)state;
	struct ergon_sim_result r = run("transport_bytes_dropped");
	/* The target cannot see silent loss: it completes. */
	assert_int_equal(r.status, ERT_OK);
	assert_int_equal(r.stream_len + 37, r.bytes_sent);
	host_codes(&r, NULL, "pmu.layer_count_mismatch", NULL);
	ergon_sim_result_cleanup(&r);
}

static void transport_write_fails(void **state)
{
	(void)state;
	struct ergon_sim_result r = run("transport_write_fails");
	/* The profile flow stops at the first failed write instead of
	 * hanging or running on blind: no inference ran after it. */
	assert_int_equal(r.status, ERT_E_TRANSPORT);
	assert_true(r.bytes_sent <= 300);
	assert_null(strstr(r.stream, HPX_TOK_END));
	assert_int_equal(r.inferences, 0);
	/* Host: the capture ended without END; no profile data at all. */
	host_codes(&r, NULL, "capture.incomplete", "pmu.missing", "pmu.incomplete", NULL);
	ergon_sim_result_cleanup(&r);
}

/* Two PMU passes, one per preset (host: no issue). The PMU model counts
 * INST_RETIRED at 1/2, MEM_ACCESS at 1/4 and L1D_CACHE at 1/8 of the
 * cycles: the 48000-cycle convolution gives 24000, 12000 and 6000. */
static void pmu_presets(void **state)
{
	(void)state;
	struct ergon_sim_result r = run("pmu_presets");
	assert_int_equal(r.status, ERT_OK);
	const char *s = r.stream;
	assert_true(has_line(s, "HPX_NUM_PRESETS=2"));
	assert_true(has_line(s, "HPX_PRESETS=cpu,mem"));
	assert_true(has_line(s, "HPX_PMU=present"));
	assert_true(has_line(s, "--- HPX_PRESET cpu ---"));
	assert_true(has_line(s, "--- HPX_PRESET mem ---"));
	assert_true(has_line(s, "\"Layer\",\"Op\",\"window_us\",\"ARM_PMU_CPU_CYCLES\","
				"\"ARM_PMU_INST_RETIRED\",\"ARM_PMU_MEM_ACCESS\",\"overflow\""));
	assert_true(has_line(s, "0,CONV_2D,500,48000,24000,12000,0"));
	assert_true(has_line(s, "1,DEPTHWISE_CONV_2D,250,24000,12000,6000,0"));
	assert_true(has_line(s, "0,CONV_2D,500,48000,6000,0"));
	/* 2 x (2 warmup + 3 profiled) + 3 warm reference + 20 clean. */
	assert_int_equal(r.inferences, 33);
	json_t *prof = NULL;
	host_codes(&r, &prof, NULL);
	json_t *l0 = json_array_get(json_object_get(prof, "layers"), 0);
	json_t *c = json_object_get(l0, "counters");
	assert_true(json_number_value(json_object_get(c, "ARM_PMU_INST_RETIRED")) == 24000.0);
	assert_true(json_number_value(json_object_get(c, "ARM_PMU_L1D_CACHE")) == 6000.0);
	json_decref(prof);
	ergon_sim_result_cleanup(&r);
}

/* Counters start 1000 below 2^32: every layer overflows, the rows say
 * so and the counts wrap (24000 - 1000 = 23000). Host:
 * pmu.counter_overflow. */
static void pmu_counter_overflow(void **state)
{
	(void)state;
	struct ergon_sim_result r = run("pmu_counter_overflow");
	assert_int_equal(r.status, ERT_OK);
	assert_true(has_line(r.stream, "0,CONV_2D,500,48000,23000,11000,1"));
	assert_true(has_line(r.stream, "0,CONV_2D,500,48000,5000,1"));
	host_codes(&r, NULL, "pmu.counter_overflow", NULL);
	ergon_sim_result_cleanup(&r);
}

static void every_scenario_is_deterministic(void **state)
{
	(void)state;
	for (const char *const *n = ergon_sim_scenarios(); *n != NULL; n++) {
		struct ergon_sim_result a = run(*n), b = run(*n);
		assert_int_equal(a.stream_len, b.stream_len);
		assert_memory_equal(a.stream, b.stream, a.stream_len);
		assert_int_equal(a.n_js, b.n_js);
		ergon_sim_result_cleanup(&a);
		ergon_sim_result_cleanup(&b);
	}
}

/* A port without a PMU whose firmware was built with the two counter
 * presets: the metadata says HPX_PMU=missing and NUM_PRESETS=2, the first
 * pass opens (its marker) and the runtime refuses to count events it
 * cannot (ert_layers_set_pass: ERT_E_UNSUPPORTED) before any row. Host:
 * pmu.unit_missing (a counter pass on a port without a PMU), no rows
 * (pmu.missing), no HPX_END (capture.incomplete, pmu.incomplete). */
static void pmu_unit_missing(void **state)
{
	(void)state;
	struct ergon_sim_result r = run("pmu_unit_missing");
	assert_int_equal(r.status, ERT_E_UNSUPPORTED);
	assert_true(has_line(r.stream, "HPX_PMU=missing"));
	assert_true(has_line(r.stream, "HPX_NUM_PRESETS=2"));
	assert_true(has_line(r.stream, "--- HPX_PRESET cpu ---"));
	assert_null(strstr(r.stream, "\"Layer\""));
	assert_null(strstr(r.stream, HPX_TOK_END));
	/* The refusal comes when the pass is set, before its warmup. */
	assert_int_equal(r.inferences, 0);
	host_codes(&r, NULL, "pmu.unit_missing", "pmu.missing", "pmu.incomplete",
		   "capture.incomplete", NULL);
	ergon_sim_result_cleanup(&r);
}

static size_t count_lines(const char *text, const char *line)
{
	size_t n = 0, len = strlen(line);
	for (const char *p = text; (p = strstr(p, line)) != NULL; p += len)
		if ((p == text || p[-1] == '\n') && (p[len] == '\n' || p[len] == '\0'))
			n++;
	return n;
}

/* The board resets before the write that would pass byte 1000 and its
 * second boot runs the whole flow again: the stream is the first boot's
 * first bytes (a prefix of baseline_profile's own stream, at most 1000
 * bytes, cut between two writes) followed by baseline_profile's stream
 * byte for byte. Host: pmu.restart at the second HPX_START. */
static void target_restart(void **state)
{
	(void)state;
	struct ergon_sim_result base = run("baseline_profile");
	struct ergon_sim_result r = run("target_restart");
	assert_int_equal(r.status, ERT_OK);
	assert_int_equal(count_lines(r.stream, "--- HPX_START ---"), 2);
	assert_true(r.stream_len > base.stream_len);
	size_t first = r.stream_len - base.stream_len;
	assert_true(first <= 1000);
	assert_true(first > 0 && r.stream[first - 1] == '\n');
	assert_memory_equal(r.stream, base.stream, first);
	assert_memory_equal(r.stream + first, base.stream, base.stream_len);
	assert_int_equal(r.bytes_sent, r.stream_len);
	/* The second boot ran baseline_profile's 28 inferences
	 * (2 warmup + 3 profiled + 3 warm reference + 20 clean). */
	assert_true(r.inferences > 28);
	/* The second boot's first line, HPX_READY, lands in the first boot's
	 * open CSV block: the parser drops it as a 1-field row
	 * (pmu.parse_error); its iterations count from 0 again
	 * (pmu.iter_order). */
	host_codes(&r, NULL, "pmu.restart", "pmu.parse_error", "pmu.iter_order", NULL);
	ergon_sim_result_cleanup(&r);
	ergon_sim_result_cleanup(&base);
}

/* RTT in drop mode, a 256-byte up buffer (255 usable) drained every 1 ms.
 * The boot's metadata is written at once: HPX_READY (10 bytes with its
 * newline), "--- HPX_START ---" 18, HPX_VERSION=1 14, HPX_MODEL_SIZE=1234
 * 20, HPX_ARENA_SIZE=4096 20, HPX_ALLOCATED_ARENA=2048 25,
 * HPX_NUM_PRESETS=0 18, HPX_ITERATIONS=3 17, HPX_WARMUP=2 13,
 * HPX_POWER_SYNC=0 17, HPX_SYSTEM_CLOCK_HZ=96000000 29,
 * HPX_CYCLE_COUNTER=present 26, HPX_PMU=missing 16 = 243 bytes fit; the
 * clock note (45) and "HPX_HEARTBEAT init" (19) do not: 64 bytes dropped,
 * reported at the next line start once the probe has drained the ring. */
static void rtt_drop_mode(void **state)
{
	(void)state;
	struct ergon_sim_result r = run("rtt_drop_mode");
	assert_int_equal(r.status, ERT_OK);
	assert_true(has_line(r.stream, "HPX_PMU=missing"));
	assert_true(has_line(r.stream, "HPX_HEARTBEAT rtt_dropped bytes=64"));
	assert_null(strstr(r.stream, "HPX_CLOCK_NOTE="));
	assert_false(has_line(r.stream, "HPX_HEARTBEAT init"));
	/* A second drop: the clean window's result lines come in one burst
	 * after the window, more than the ring holds. Lost whole, in order:
	 * HPX_CLEAN_INFER_AVG_CYCLES=96000 (33 bytes), _STALLED_ITERS=0 26,
	 * _PARTIAL_ITERS=0 26, _DWT_RATE_US=1000 27, _DWT_RATE_CYC=96000 29,
	 * _ATTACH_WAIT_US=0 27, HPX_DRAIN_TIMED_OUT=0 22,
	 * HPX_PROFILED_INFER_COUNT=3 27, _TOTAL_US=3000 33, _AVG_US=1000 31,
	 * "HPX_HEARTBEAT flushing" 23 = 304 bytes. HPX_END (16) then fits but
	 * the pending report (35) plus it do not, and ert_rtt writes the line
	 * alone (test_ert_rtt: "the count waits"): the stream ends with that
	 * drop unreported. Only the ring's `dropped` counter, which rtt:gdb
	 * reads and this file-fed host does not, still has it (a known gap,
	 * stated in docs/internals/sim.md). */
	static const char *const lost[] = {"HPX_CLEAN_INFER_AVG_CYCLES=96000",
					   "HPX_CLEAN_STALLED_ITERS=0",
					   "HPX_CLEAN_PARTIAL_ITERS=0",
					   "HPX_CLEAN_DWT_RATE_US=1000",
					   "HPX_CLEAN_DWT_RATE_CYC=96000",
					   "HPX_CLEAN_ATTACH_WAIT_US=0",
					   "HPX_DRAIN_TIMED_OUT=0",
					   "HPX_PROFILED_INFER_COUNT=3",
					   "HPX_PROFILED_INFER_TOTAL_US=3000",
					   "HPX_PROFILED_INFER_AVG_US=1000",
					   "HPX_HEARTBEAT flushing"};
	for (size_t k = 0; k < sizeof lost / sizeof lost[0]; k++)
		if (has_line(r.stream, lost[k]))
			fail_msg("rtt_drop_mode: %s arrived", lost[k]);
	assert_true(has_line(r.stream, "HPX_CLEAN_INFER_AVG_US=1000"));
	assert_true(has_line(r.stream, HPX_TOK_END));
	assert_int_equal(count_lines(r.stream, "HPX_HEARTBEAT rtt_dropped bytes=64"), 1);
	/* The host got what the flow wrote, less 64 + 304 bytes, plus the
	 * one report line. */
	size_t report = strlen("HPX_HEARTBEAT rtt_dropped bytes=64\n");
	assert_int_equal(r.stream_len, r.bytes_sent - 64 - 304 + report);
	json_t *issues = NULL, *detail = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_sim_host_issues(&r, 1000.0, &issues, &detail, &err), 0);
	assert_int_equal(json_array_size(issues), 1);
	json_t *td = json_array_get(issues, 0);
	assert_string_equal(json_string_value(json_object_get(td, "code")), "pmu.target_dropped");
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(td, "context"), "dropped_bytes")),
	    64);
	json_decref(issues);
	json_decref(detail);
	ergon_sim_result_cleanup(&r);
}

/* The idle loop draws 6 mA, more than an inference's 5 mA: the gate's 20
 * inferences still hold 5 mA x 1.8 V x 20 ms = 180 uJ, but the gated mean
 * current (5 mA) is below the whole capture's (idle 6 mA before and after
 * the window). Host: power.gated_current_not_above_whole (info). */
static void idle_above_inference(void **state)
{
	(void)state;
	struct ergon_sim_result r = run("idle_above_inference");
	assert_int_equal(r.status, ERT_OK);
	assert_int_equal(r.terminal.completed_count, 20);
	assert_true(fabs(r.true_window_energy_j - 180e-6) < 1e-12);
	/* The last packet (the idle tail after the record) and one fully
	 * inside the gate. */
	assert_true(fabs(r.js[r.n_js - 1].current_a - 0.006) < 1e-12);
	int seen_gate = 0;
	for (size_t k = 0; k < r.n_js; k++)
		if (r.js[k].in0 >= 1.0) {
			assert_true(fabs(r.js[k].current_a - 0.005) < 1e-12);
			seen_gate = 1;
			break;
		}
	assert_true(seen_gate);
	host_codes(&r, NULL, "power.gated_current_not_above_whole", NULL);
	ergon_sim_result_cleanup(&r);
}

/* An external run whose firmware also reads its on-board INA228, preloaded
 * 50 LSB below 2^40: the record says source ina228, overflow 1 (ENERGYOF,
 * DIAG bit 11) and the wrapped 42 LSB = 82031 nJ of
 * ina228_accumulator_overflow; the meter on the gate owns the figures
 * (180 uJ in a 20 ms gate). Host: power.accumulator_overflow_bystander. */
static void ina228_bystander_overflow(void **state)
{
	(void)state;
	struct ergon_sim_result r = run("ina228_bystander_overflow");
	assert_int_equal(r.status, ERT_OK);
	assert_int_equal(r.flow, ERGON_SIM_FLOW_POWER_EXTERNAL);
	assert_int_equal(ergon_sim_scenario_ina228_bystander("ina228_bystander_overflow"), 1);
	assert_int_equal(ergon_sim_scenario_ina228_bystander("baseline_power"), 0);
	assert_int_equal(ergon_sim_scenario_ina228_bystander("no_such_scenario"), 0);
	assert_int_equal(r.terminal.source, ERT_SOURCE_INA228);
	assert_int_equal(r.terminal.measurement_overflow, 1);
	assert_true((r.terminal.ina228_diag & 0x0800u) != 0);
	assert_int_equal(r.terminal.energy_nj, 82031);
	assert_true(has_line(r.stream, "HPX_POWER_MEASUREMENT_SOURCE=ina228"));
	assert_true(fabs(js_gate_high_s(&r) - 0.020) < 1e-9);
	assert_true(fabs(r.true_window_energy_j - 180e-6) < 1e-12);
	host_codes(&r, NULL, "power.accumulator_overflow_bystander", NULL);
	ergon_sim_result_cleanup(&r);
}

/* IN+/IN- not connected: the chip sees no shunt voltage, so ENERGY and
 * CHARGE stay exactly 0 while VBUS reads the rail's 1.8 V (9216 counts of
 * 195.3125 uV). Host: power.zero_energy_and_charge (error). */
static void ina228_sense_open(void **state)
{
	(void)state;
	struct ergon_sim_result r = run("ina228_sense_open");
	assert_int_equal(r.status, ERT_OK);
	assert_int_equal(r.terminal.completed_count, 20);
	assert_int_equal(r.terminal.energy_nj, 0);
	assert_int_equal(r.terminal.charge_nc, 0);
	assert_int_equal(r.terminal.charge_clamped, 0);
	assert_int_equal(r.terminal.bus_voltage_uv, 1800000);
	host_codes(&r, NULL, "power.zero_energy_and_charge", NULL);
	ergon_sim_result_cleanup(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(unknown_scenario_names_the_choices),
	    cmocka_unit_test(baseline_profile),
	    cmocka_unit_test(baseline_power_lockstep),
	    cmocka_unit_test(baseline_ina228),
	    cmocka_unit_test(stalled_counter),
	    cmocka_unit_test(slow_counter),
	    cmocka_unit_test(uniform_slowdown),
	    cmocka_unit_test(frozen_window_clock),
	    cmocka_unit_test(hfrc_drift),
	    cmocka_unit_test(window_clock_fast),
	    cmocka_unit_test(core_clock_drift),
	    cmocka_unit_test(zero_time_inference),
	    cmocka_unit_test(no_cycle_counter),
	    cmocka_unit_test(lost_record_slow_window_clock),
	    cmocka_unit_test(packets_lost_in_window),
	    cmocka_unit_test(calibration_id_reaches_the_record),
	    cmocka_unit_test(stats_rate_shapes_the_packets),
	    cmocka_unit_test(window_clock_slow),
	    cmocka_unit_test(gate_never_falls),
	    cmocka_unit_test(gate_glitches),
	    cmocka_unit_test(go_never_arrives),
	    cmocka_unit_test(lost_terminal_record),
	    cmocka_unit_test(ina228_bringup_failures),
	    cmocka_unit_test(ina228_arm_and_read_failures),
	    cmocka_unit_test(ina228_reversed_sense),
	    cmocka_unit_test(ina228_accumulator_overflow),
	    cmocka_unit_test(transport_bytes_dropped),
	    cmocka_unit_test(transport_write_fails),
	    cmocka_unit_test(pmu_presets),
	    cmocka_unit_test(pmu_counter_overflow),
	    cmocka_unit_test(pmu_unit_missing),
	    cmocka_unit_test(target_restart),
	    cmocka_unit_test(rtt_drop_mode),
	    cmocka_unit_test(idle_above_inference),
	    cmocka_unit_test(ina228_bystander_overflow),
	    cmocka_unit_test(ina228_sense_open),
	    cmocka_unit_test(every_scenario_is_deterministic),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
