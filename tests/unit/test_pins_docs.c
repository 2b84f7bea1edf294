/* Issue 30: every numeric threshold that docs/METHOD.md and
 * docs/POWER_CHECKS.md state is read from the doc itself and checked
 * against the code, so that a threshold changed on one side only fails
 * here. Each pin finds the doc's own sentence (a pattern in which `#`
 * stands for a number; whitespace and line breaks collapse to one space),
 * takes the numbers from it, and then either
 *  - drives the public function that applies the threshold just below and
 *    just above the doc's value (behaviour; preferred), or
 *  - compares the doc's value with the named constant the code uses
 *    (ERGON_* in include/ergon/, where the threshold is applied deep in a
 *    parser or pipeline), with the behaviour pinned elsewhere (named).
 * A sentence that is reworded so that the pattern no longer matches fails
 * with the pattern: update the pin with the doc. Expected values are the
 * doc's numbers and arithmetic on them, never a value read back from the
 * code under test. The behaviour tests of the same thresholds with
 * hand-worked values: unit/test_pins (issue 30's survivors),
 * unit/test_power_checks, functional/test_reliab_implausible. */
#include "ergon/budget.h"
#include "ergon/changepoint.h"
#include "ergon/figures.h"
#include "ergon/gated.h"
#include "ergon/issue_list.h"
#include "ergon/kernels.h"
#include "ergon/layer_energy.h"
#include "ergon/plausible.h"
#include "ergon/power_csv.h"
#include "ergon/report.h"
#include "ergon/sim.h"
#include "ergon/stats.h"
#include "test_support.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static char *method_md, *power_md;

static int setup(void **state)
{
	(void)state;
	method_md = ts_doc_load("METHOD.md");
	power_md = ts_doc_load("POWER_CHECKS.md");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(method_md);
	free(power_md);
	return 0;
}

static double pnum(const char *pat)
{
	double v;
	ts_doc_nums(power_md, "POWER_CHECKS.md", pat, &v, 1);
	return v;
}

static double mnum(const char *pat)
{
	double v;
	ts_doc_nums(method_md, "METHOD.md", pat, &v, 1);
	return v;
}

#define EQ(doc, code)                                                                      \
	do {                                                                               \
		double d_ = (double)(doc), c_ = (double)(code);                            \
		if (!(fabs(d_ - c_) <= 1e-12 * fabs(d_)))                                  \
			fail_msg("the doc says %.17g, the code (%s) %.17g", d_, #code, c_); \
	} while (0)

/* ---------------------------------------------------------------- */
/* POWER_CHECKS.md, external runs */

/* power.window_observer_mismatch: |gate - elapsed| > a % x elapsed + b x
 * packet period. elapsed 10 s, packets of 10 ms: tolerance a/100 x 10 +
 * b x 0.01; a gate a thousandth of the tolerance inside agrees, outside
 * does not. */
static void observer_tolerance(void **state)
{
	(void)state;
	double v[2];
	ts_doc_nums(power_md, "POWER_CHECKS.md",
		 "`abs(gate_s - elapsed_s) > # % x elapsed_s + # x packet period`", v, 2);
	double tol = v[0] / 100 * 10.0 + v[1] * 0.01;
	double allow = -1;
	assert_true(ergon_power_observer_agrees(10.0 + 0.999 * tol, 10.0, 0.01, &allow));
	EQ(v[1] * 0.01, allow);
	assert_false(ergon_power_observer_agrees(10.0 + 1.001 * tol, 10.0, 0.01, NULL));
	assert_true(ergon_power_observer_agrees(10.0 - 0.999 * tol, 10.0, 0.01, NULL));
	assert_false(ergon_power_observer_agrees(10.0 - 1.001 * tol, 10.0, 0.01, NULL));
	/* "Why 2 packets" and "Why 1 %" say the same numbers. */
	EQ(pnum("Why # packets in the observer allowance"), v[1]);
	EQ(pnum("Why # %: two independent"), v[0]);
}

static struct ergon_power_facts facts_counted(uint64_t elapsed_us)
{
	struct ergon_power_facts f = {0};
	f.have_clean_count = 1;
	f.clean_infer_count = 100;
	f.clean_infer_avg_us = 100000; /* 10 s expected */
	f.terminal.status = ERGON_TERMINAL_OK;
	f.terminal.have_elapsed = elapsed_us > 0;
	f.terminal.elapsed_us = elapsed_us;
	f.terminal.requested_count = f.terminal.completed_count = 100;
	strcpy(f.terminal.final_phase, "complete");
	return f;
}

static struct ergon_power_gate_view gate_view(double gate_s)
{
	return (struct ergon_power_gate_view){.window_count = 1,
					      .gate_s = gate_s,
					      .integral_s = gate_s,
					      .shortest_integral_s = gate_s,
					      .stats_period_s = 0.01,
					      .min_window_s = 1.0};
}

/* Evaluate a gate of ratio r against 10 s expected; the firmware clock
 * says the same as the gate when confirmed. Returns the issue list. */
static struct ergon_issue_list evaluate(double r, int confirmed, int probe_kind,
					struct ergon_power_verdict *v)
{
	double gate = 10.0 * r;
	struct ergon_power_facts f = facts_counted(confirmed ? (uint64_t)llround(gate * 1e6) : 0);
	if (!confirmed)
		f.terminal.status = ERGON_TERMINAL_NONE;
	f.probe_kind = probe_kind;
	struct ergon_power_gate_view gv = gate_view(gate);
	struct ergon_issue_list l = {0};
	assert_int_equal(ergon_power_evaluate(&f, &gv, &l, v), 0);
	return l;
}

/* power.gated_window_reference_drift: ratio off by more than a % but at
 * most b %; beyond b, power.gate_duration_mismatch (the gate stands). */
static void reference_drift_band(void **state)
{
	(void)state;
	double v[2];
	ts_doc_nums(power_md, "POWER_CHECKS.md",
		 "`ratio = gate_s / (count x clean_infer_avg_us)` off by more than # % but at most "
		 "# %",
		 v, 2);
	double lo = v[0] / 100, hi = v[1] / 100;
	struct {
		double r;
		int drift, mismatch;
	} c[] = {{1 + 0.99 * lo, 0, 0},	 {1 + 1.01 * lo, 1, 0},	 {1 + 0.999 * hi, 1, 0},
		 {1 + 1.001 * hi, 0, 1}, {1 - 1.01 * lo, 1, 0},	 {1 - 1.001 * hi, 0, 1}};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		struct ergon_power_verdict vd;
		struct ergon_issue_list l = evaluate(c[i].r, 1, ERGON_PROBE_INFER, &vd);
		assert_true(vd.observer_ok);
		if (ergon_issue_list_has(&l, "power.gated_window_reference_drift") != c[i].drift ||
		    ergon_issue_list_has(&l, "power.gate_duration_mismatch") != c[i].mismatch)
			fail_msg("ratio %.6f: drift %d mismatch %d, want %d %d", c[i].r,
				 ergon_issue_list_has(&l, "power.gated_window_reference_drift"),
				 ergon_issue_list_has(&l, "power.gate_duration_mismatch"),
				 c[i].drift, c[i].mismatch);
		assert_false(vd.suspect);
		ergon_issue_list_cleanup(&l);
	}
	/* The messages say the same band. */
	EQ(hi, 0.15);
}

/* No firmware window: |gate - expected| > max(a packets, half an inference
 * if count > 1, b % of expected (c % for a busy_loop probe)). */
static void reference_tolerance_without_firmware_window(void **state)
{
	(void)state;
	double v[3];
	ts_doc_nums(power_md, "POWER_CHECKS.md",
		 "`abs(gate_s - expected_s) > max(# packets, half an inference if count > 1, # % "
		 "of expected (# % for a busy_loop probe))`",
		 v, 3);
	/* 10 s expected, 10 ms packets, one inference: the percentage rules. */
	EQ(v[1] / 100 * 10, ergon_power_reference_tolerance_s(10, 1, 1e7, 0.01, ERGON_PROBE_INFER));
	EQ(v[2] / 100 * 10,
	   ergon_power_reference_tolerance_s(10, 1, 1e7, 0.01, ERGON_PROBE_BUSY_LOOP));
	/* 0.05 s expected of 50 ms inferences: the packets rule (count 1). */
	EQ(v[0] * 0.01, ergon_power_reference_tolerance_s(0.05, 1, 5e4, 0.01, ERGON_PROBE_INFER));
	/* Two inferences of 1 s, 0.2 s expected (inconsistent on purpose): half
	 * an inference rules. */
	EQ(0.5, ergon_power_reference_tolerance_s(0.2, 2, 1e6, 0.01, ERGON_PROBE_INFER));
	/* Through the verdict: just inside and just outside, both probes. */
	double pct[] = {v[1], v[2]};
	int kind[] = {ERGON_PROBE_INFER, ERGON_PROBE_BUSY_LOOP};
	for (int k = 0; k < 2; k++) {
		for (int side = 0; side < 2; side++) {
			struct ergon_power_verdict vd;
			double r = 1 + pct[k] / 100 * (side ? 1.001 : 0.999);
			struct ergon_issue_list l = evaluate(r, 0, kind[k], &vd);
			assert_int_equal(ergon_issue_list_has(&l, "power.gate_duration_mismatch"),
					 side);
			assert_int_equal(vd.suspect, side);
			ergon_issue_list_cleanup(&l);
		}
	}
}

/* power.gate_below_minimum at the default floor, and the glitch floor. */
static void gate_minimum_and_glitch_floor(void **state)
{
	(void)state;
	double floor_s = pnum("a window's packet-integral duration < # s");
	EQ(floor_s, pnum("shorter than the floor (# s) were ignored"));
	EQ(floor_s, ERGON_GATE_MIN_WINDOW_S);
	EQ(pnum("(start_s, duration_s of the first #)"), ERGON_GATED_GLITCH_KEEP);
	for (int side = 0; side < 2; side++) {
		struct ergon_power_facts f = facts_counted(0);
		struct ergon_power_gate_view gv = gate_view(10);
		gv.min_window_s = ERGON_GATE_MIN_WINDOW_S;
		gv.shortest_integral_s = floor_s * (side ? 0.999 : 1.0);
		struct ergon_power_verdict vd;
		struct ergon_issue_list l = {0};
		assert_int_equal(ergon_power_evaluate(&f, &gv, &l, &vd), 0);
		assert_int_equal(ergon_issue_list_has(&l, "power.gate_below_minimum"), side);
		ergon_issue_list_cleanup(&l);
	}
}

/* power.packets_dropped and power.distribution_truncated: constants of
 * the CSV reader and the engine (behaviour: unit/test_power_csv,
 * unit/test_power_gated_engine). */
static void reader_limits(void **state)
{
	(void)state;
	double v[2];
	ts_doc_nums(power_md, "POWER_CHECKS.md",
		 "a row's id exceeds the previous row's by more than # x its span x # MHz", v, 2);
	EQ(v[0], ERGON_CSV_ID_JUMP);
	EQ(v[1] * 1e6, ERGON_CSV_SAMPLE_ID_HZ);
	EQ(pnum("reached its cap of # Mi packets") * 1024 * 1024, ERGON_GATED_DIST_MAX);
	EQ(pnum("a line longer than # bytes (the message names"), ERGON_POWER_CSV_LINE_MAX);
	EQ(pnum("a line longer than # bytes is cut there"), ERGON_POWER_CSV_LINE_MAX);
	EQ(pnum("refused with its place (`file:LINE:#`)"), ERGON_POWER_CSV_LINE_MAX + 1);
	EQ(pnum("a raw `power_w` that is not `current_a x voltage_v` within # %") / 100,
	   ERGON_CSV_POWER_REL);
	EQ(pnum("a raw sample's `power_w` is its `current_a x voltage_v` within # %") / 100,
	   ERGON_CSV_POWER_REL);
	double js[6];
	ts_doc_nums(power_md, "POWER_CHECKS.md",
		 "(Joulescope JS220 full scale, # A and # V, with # % headroom: # A, # V, # W)", js,
		 6);
	EQ(js[0], ERGON_CSV_FULL_SCALE_A);
	EQ(js[1], ERGON_CSV_FULL_SCALE_V);
	EQ(1 + js[2] / 100, ERGON_CSV_HEADROOM);
	EQ(js[3], js[0] * (1 + js[2] / 100));
	EQ(js[4], js[1] * (1 + js[2] / 100));
	/* 12.5 x 18.75 = 234.375, printed to a tenth. */
	assert_true(fabs(js[5] - js[3] * js[4]) <= 0.05);
	double sr[2];
	ts_doc_nums(power_md, "POWER_CHECKS.md", "contradicts a packet's span (beyond # % + # us)", sr,
		 2);
	EQ(sr[0] / 100, ERGON_STATS_RATE_REL);
	EQ(sr[1] * 1e-6, ERGON_STATS_RATE_ABS_S);
	EQ(pnum("the rate samples are reduced to packets at (default #)"),
	   ERGON_GATED_RAW_RATE_DEFAULT_HZ);
}

/* "Sign and time checks": the thresholds of include/ergon/plausible.h
 * (behaviour on both sides: functional/test_reliab_implausible,
 * negative_offset_floor, reverse_samples, time_holes). */
static void sign_and_time_checks(void **state)
{
	(void)state;
	double neg = pnum("its mean current in the load's direction is below -# mA (section");
	EQ(neg, pnum("i.e. its mean current in the load's direction is below -# mA"));
	EQ(neg * 1e-3, ERGON_NEGATIVE_MEAN_A);
	EQ(pnum("negative power at more than # mA"), ERGON_REVERSE_CURRENT_A * 1e3);
	EQ(pnum("its current is beyond # mA in magnitude"), ERGON_REVERSE_CURRENT_A * 1e3);
	EQ(pnum("more than # samples (raw) or packets (statistics) of one window"),
	   ERGON_REVERSE_COUNT_MAX);
	EQ(pnum("more than # in one window is refused"), ERGON_REVERSE_COUNT_MAX);
	double v[2];
	ts_doc_nums(power_md, "POWER_CHECKS.md", "# samples pass, # are refused", v, 2);
	EQ(v[0], ERGON_REVERSE_COUNT_MAX);
	EQ(v[1], ERGON_REVERSE_COUNT_MAX + 1);
	EQ(pnum("statistics packets leave more than # % of a gate window's edge-to-edge") / 100,
	   ERGON_TIME_GAP_FRACTION);
	EQ(pnum("must stay within # % of the window's edge-to-edge duration") / 100,
	   ERGON_TIME_GAP_FRACTION);
	/* The worked hole: 0.020 s of a 2 s window is within the fraction,
	 * 0.021 s is not. */
	ts_doc_nums(power_md, "POWER_CHECKS.md", "A hole of # s in a # s window", v, 2);
	assert_true(v[0] / v[1] <= ERGON_TIME_GAP_FRACTION);
	ts_doc_nums(power_md, "POWER_CHECKS.md", "passes, # s (", v, 1);
	assert_true(v[0] / 2.0 > ERGON_TIME_GAP_FRACTION);
}

/* The accumulator cross-check's tolerance: a x (|E_acc| + |E_other|) +
 * max(res(E_max), b x |E_max|) + the printed terms + gaps + c J, through
 * ergon_accum_xcheck_tolerance_j on a hand-set state. */
static void accumulator_tolerance(void **state)
{
	(void)state;
	double a = pnum("tol = # x (|E_acc| + |E_other|)");
	double b = pnum("+ max(res(E_max), # x |E_max|)");
	double c = pnum("+ # J (+ the covariance allowance");
	struct ergon_accum_xcheck x;
	memset(&x, 0, sizeof x);
	x.acc_j = 2.0;
	x.acc_max_abs = 3.0;
	x.acc_res_j = 0;
	/* Resolution below b x E_max: the relative term rules. */
	double want = a * (2.0 + 1.5) + b * 3.0 + c;
	double got = ergon_accum_xcheck_tolerance_j(&x, -1.5);
	assert_true(fabs(got - want) <= 1e-9 * want);
	/* A coarse printed total: its resolution rules. */
	x.acc_res_j = 1e-3;
	want = a * (2.0 + 1.5) + 1e-3 + c;
	got = ergon_accum_xcheck_tolerance_j(&x, 1.5);
	assert_true(fabs(got - want) <= 1e-9 * want);
	/* Nothing at all: the absolute floor alone. */
	memset(&x, 0, sizeof x);
	EQ(c, ergon_accum_xcheck_tolerance_j(&x, 0));
}

/* ---------------------------------------------------------------- */
/* POWER_CHECKS.md, internal runs */

static struct ergon_power_facts internal_facts(uint64_t elapsed_us, double env_s)
{
	struct ergon_power_facts f = facts_counted(elapsed_us);
	f.internal = 1;
	f.host_envelope_s = env_s;
	f.terminal.have_energy = 1;
	f.terminal.energy_nj = 1e6;
	f.terminal.have_charge = 1;
	f.terminal.charge_nc = 1e5;
	strcpy(f.terminal.source, "ina228");
	return f;
}

/* power.window_clock_mismatch: |elapsed - count x avg| > a % of the latter. */
static void internal_window_clock_mismatch(void **state)
{
	(void)state;
	double a = pnum("`abs(elapsed - count x clean_infer_avg_us) > # %`") / 100;
	/* count x avg = 10 s. */
	double el[] = {10 * (1 + 0.999 * a), 10 * (1 + 1.001 * a), 10 * (1 - 0.999 * a),
		       10 * (1 - 1.001 * a)};
	for (int i = 0; i < 4; i++) {
		struct ergon_power_facts f = internal_facts((uint64_t)llround(el[i] * 1e6), 0);
		struct ergon_issue_list l = {0};
		struct ergon_power_ceiling ce;
		int fail = 0;
		ergon_power_check_internal(&f, &l, &fail, &ce);
		assert_int_equal(ergon_issue_list_has(&l, "power.window_clock_mismatch"), i % 2);
		ergon_issue_list_cleanup(&l);
	}
}

/* power.window_clock_exceeds_host_time: elapsed > envelope + slack, slack
 * = max(a s, b % of the envelope). */
static void internal_host_envelope_slack(void **state)
{
	(void)state;
	double v[2];
	ts_doc_nums(power_md, "POWER_CHECKS.md", "`slack_s = max(# s, # % of the envelope)`", v, 2);
	/* 10 s envelope: the absolute term; 100 s: the relative one. */
	double env[] = {10.0, 100.0};
	for (int k = 0; k < 2; k++) {
		double slack = fmax(v[0], v[1] / 100 * env[k]);
		for (int side = 0; side < 2; side++) {
			double el = env[k] + slack + (side ? 0.001 : -0.001);
			/* count x avg = el, so no mismatch */
			struct ergon_power_facts f = internal_facts((uint64_t)llround(el * 1e6), env[k]);
			f.clean_infer_avg_us = el * 1e4;
			struct ergon_issue_list l = {0};
			struct ergon_power_ceiling ce;
			int fail = 0;
			ergon_power_check_internal(&f, &l, &fail, &ce);
			EQ(slack, ce.slack_s);
			assert_int_equal(
			    ergon_issue_list_has(&l, "power.window_clock_exceeds_host_time"), side);
			assert_false(ergon_issue_list_has(&l, "power.window_clock_mismatch"));
			ergon_issue_list_cleanup(&l);
		}
	}
}

/* ---------------------------------------------------------------- */
/* POWER_CHECKS.md, clean-window checks */

static void clean_window_floors(void **state)
{
	(void)state;
	double d = pnum("or below 1/# of the warm reference (partial)");
	/* ref 800 cycles: a delta under 800/d is partial, at it is not. */
	uint64_t ref = 800, fl = (uint64_t)(800 / d);
	uint64_t ok[] = {fl, fl, fl}, part[] = {fl - 1, fl, fl};
	struct ergon_issue_list l = {0};
	assert_int_equal(ergon_clean_window_check(ok, 3, 3, ref, &l), 0);
	assert_int_equal(l.n, 0);
	assert_int_equal(ergon_clean_window_check(part, 3, 3, ref, &l), 1);
	assert_true(ergon_issue_list_has(&l, "profile.clean_window_stalled"));
	/* understatement_lower_bound: a partial counts p/total. */
	double p = pnum("a partial #/total)");
	int found = 0;
	for (size_t i = 0; i < l.items[0].nfields; i++)
		if (strcmp(l.items[0].fields[i].key, "understatement_lower_bound") == 0) {
			EQ(p / 3, l.items[0].fields[i].d);
			found = 1;
		}
	assert_true(found);
	ergon_issue_list_cleanup(&l);
	/* A reference under d cycles: the floor is zero, the check inoperative. */
	uint64_t one[] = {5};
	assert_int_equal(ergon_clean_window_check(one, 1, 1, (uint64_t)d - 1, &l), 1);
	assert_true(ergon_issue_list_has(&l, "profile.clean_window_check_inoperative"));
	ergon_issue_list_cleanup(&l);
	assert_int_equal(ergon_clean_window_check(one, 1, 1, (uint64_t)d, &l), 0);
	ergon_issue_list_cleanup(&l);
	/* profile.clean_window_clock_rate_low: probe < h x clock x probe us. At
	 * 100 MHz for 100 us, 10,000 cycles expected. */
	double h = pnum("rate-probe cycles < # x core clock x probe µs");
	uint64_t line = (uint64_t)(h * 10000);
	assert_int_equal(ergon_clean_window_rate_check(100e6, 100, line, &l), 0);
	assert_int_equal(ergon_clean_window_rate_check(100e6, 100, line - 1, &l), 1);
	ergon_issue_list_cleanup(&l);
}

/* ---------------------------------------------------------------- */
/* METHOD.md */

/* Throttle: defaults, the strict inequality, and the temperature rise. */
static void throttle_thresholds(void **state)
{
	(void)state;
	double v[2];
	ts_doc_nums(method_md, "METHOD.md", "With the defaults (threshold #, K = #)", v, 2);
	EQ(v[0], ERGON_THROTTLE_THRESHOLD_DEFAULT);
	EQ(v[1], ERGON_THROTTLE_WINDOWS_DEFAULT);
	EQ(mnum("by more than **# °C**"), ERGON_THROTTLE_TEMP_RISE_C);
	/* (1 - threshold) x first: 100 -> a hair above and below the line, for
	 * K windows (the onset window counted). */
	double line = (1 - v[0]) * 100;
	size_t K = (size_t)v[1];
	double above[8] = {100}, below[8] = {100};
	for (size_t i = 1; i <= K; i++) {
		above[i] = line * 1.001;
		below[i] = line * 0.999;
	}
	struct ergon_throttle t;
	struct ergon_err err = {0};
	assert_int_equal(ergon_throttle_onset(above, K + 1, v[0], K, &t, &err), 0);
	assert_false(t.throttled);
	assert_int_equal(ergon_throttle_onset(below, K + 1, v[0], K, &t, &err), 0);
	assert_true(t.throttled);
	assert_int_equal(t.onset_window, 1);
	/* One window fewer than K below: no onset. */
	below[K] = line * 1.001;
	assert_int_equal(ergon_throttle_onset(below, K + 1, v[0], K, &t, &err), 0);
	assert_false(t.throttled);
}

/* The sampler gap's 10 periods: unit/test_pins drives it (at the doc's
 * number); here the doc's sentence is found. */
static void sampler_gap_periods(void **state)
{
	(void)state;
	double n = mnum("a gap above # periods raises `run.sampler_gap`");
	EQ(n, ERGON_SAMPLER_GAP_PERIODS);
	/* The replay's hole rule says it uses the same number. */
	EQ(n, ERGON_REPLAY_HOLE_PERIODS);
}

/* Energy per layer: the period search, the resolution floor, the median's
 * interval. */
static void layer_thresholds(void **state)
{
	(void)state;
	EQ(mnum("(within # % of the period, at least two samples)") / 100,
	   ERGON_LAYERS_PERIOD_TOL);
	EQ(mnum("A segment whose median span is under **# samples**"), ERGON_LAYERS_MIN_SAMPLES);
	EQ(mnum("at # samples the placement alone can move a layer"), ERGON_LAYERS_MIN_SAMPLES);
	double v[2];
	ts_doc_nums(method_md, "METHOD.md", "(the order statistics `n/2 ± # √n`, all of them under # "
					 "inferences)",
		 v, 2);
	EQ(v[0], ERGON_LAYERS_CI_Z);
	EQ(v[1], ERGON_LAYERS_CI_MIN_N);
}

/* The virtual bench: the marker's cost and the operator currents. */
static void virtual_bench_model(void **state)
{
	(void)state;
	EQ(mnum("a toggle is modelled as # ns of core time"), ERGON_SIM_MARKER_NS);
	double v[4];
	ts_doc_nums(method_md, "METHOD.md",
		 "CONV_2D # mA, DEPTHWISE_CONV_2D # mA, FULLY_CONNECTED # mA, every other kind # "
		 "mA (`ergon_sim_op_current_a`)",
		 v, 4);
	EQ(v[0] * 1e-3, ergon_sim_op_current_a("CONV_2D"));
	EQ(v[1] * 1e-3, ergon_sim_op_current_a("DEPTHWISE_CONV_2D"));
	EQ(v[2] * 1e-3, ergon_sim_op_current_a("FULLY_CONNECTED"));
	EQ(v[3] * 1e-3, ergon_sim_op_current_a("AVERAGE_POOL_2D"));
	EQ(v[3] * 1e-3, ergon_sim_op_current_a("RESHAPE"));
}

/* Uncertainty and statistics: k, Tukey's fences, the median's interval,
 * Welch's alpha, the repetitions needed. */
static void statistics_thresholds(void **state)
{
	(void)state;
	EQ(mnum("correlated ones linearly, expanded with k = #"), ERGON_BUDGET_K);
	/* Tukey: q1 - k IQR, q3 + k IQR. 1..8 and a ninth value above 8:
	 * nearest-rank q1 = x(ceil(9/4)) = x(3) = 3, q3 = x(ceil(27/4)) = x(7)
	 * = 7, IQR 4; with k from the doc the high fence is 7 + 4k. */
	double k = mnum("a latency below `q1 − # IQR`");
	EQ(k, mnum("or above `q3 + # IQR` is an outlier"));
	EQ(k, ERGON_TUKEY_K);
	double s[9] = {1, 2, 3, 4, 5, 6, 7, 8, 0};
	s[8] = 7 + 4 * k; /* on the fence: not an outlier */
	struct ergon_outliers o;
	ergon_outliers_tukey_sorted(s, 9, &o);
	EQ(7 + 4 * k, o.hi_fence);
	EQ(3 - 4 * k, o.lo_fence);
	assert_int_equal(o.n_high, 0);
	s[8] = nextafter(7 + 4 * k, INFINITY);
	ergon_outliers_tukey_sorted(s, 9, &o);
	assert_int_equal(o.n_high, 1);
	/* The median's interval: coverage 1 - 2 P(B <= k - 1); below n = N no
	 * rank reaches the level. */
	double level = mnum("k the largest rank whose coverage is at least # %") / 100;
	EQ(level, ERGON_STATS_LEVEL);
	double n6 = mnum("below n = # no rank reaches 95 %");
	size_t kk;
	double cov;
	ergon_median_ci_ranks((size_t)n6 - 1, &kk, &cov);
	assert_int_equal(kk, 1);
	assert_true(cov < level);
	ergon_median_ci_ranks((size_t)n6, &kk, &cov);
	assert_true(kk >= 1 && cov >= level);
	double c[4];
	ts_doc_nums(method_md, "METHOD.md", "(n = #: # %, n = #: # %)", c, 4);
	for (int i = 0; i < 4; i += 2) {
		/* k = 1: 1 - 2 x 2^-n. */
		EQ(c[i + 1] / 100, 1 - 2 * ldexp(1, -(int)c[i]));
		ergon_median_ci_ranks((size_t)c[i], &kk, &cov);
		EQ(c[i + 1] / 100, cov);
	}
	/* Welch at alpha = 1 - level (compare passes 1 - ERGON_STATS_LEVEL). */
	EQ(mnum("two-sided, significant at α = #"), 1 - ERGON_STATS_LEVEL);
	EQ(mnum("With fewer than # repetitions on either side the spread is unknown"),
	   ERGON_STATS_MIN_REPEATS);
	/* Change points: alpha, the shortest segment, the MAD's constant. */
	EQ(mnum("α = # by default (`--alpha`)"), ERGON_CP_ALPHA);
	EQ(mnum("Segments hold at least # points"), ERGON_CP_MIN_SEGMENT);
	double mad = mnum("σ_d = # · median |x_{i+1} − x_i| / √2");
	assert_true(fabs(mad - 1 / ergon_normal_quantile(0.75)) < 5e-5);
}

/* The change-point scatter through the engine: the history 0, 1, 0, 1,
 * ... (every successive difference 1) has sigma_d = c x 1 / sqrt 2, c the
 * doc's constant, and as one segment of 10 points of weight 1 / sigma_d^2
 * a standard error of sigma_d / sqrt 10. */
static void changepoint_scatter(void **state)
{
	(void)state;
	double c = mnum("σ_d = # · median |x_{i+1} − x_i| / √2");
	double x[10];
	for (int i = 0; i < 10; i++)
		x[i] = i % 2;
	struct ergon_cp_result r;
	struct ergon_err err = {0};
	assert_int_equal(ergon_changepoints(x, NULL, 10, 0, &r, &err), 0);
	EQ(ERGON_CP_ALPHA, r.alpha);
	assert_int_equal(r.n_seg, 1);
	double sd = c / sqrt(2.0);
	EQ(sd, r.sigma_data);
	assert_true(fabs(r.seg[0].se - sd / sqrt(10.0)) < 1e-12);
	free(r.seg);
}

/* Kernels: the shapes' limits, the host's timing overhead, the defaults. */
static void kernels_limits(void **state)
{
	(void)state;
	EQ(mnum("`--board host`: after `--warmup` untimed iterations (default #;"),
	   ERGON_KERNELS_WARMUP_DEFAULT);
	EQ(mnum("`--iterations N` (default #) timed iterations"), ERGON_KERNELS_ITERATIONS_DEFAULT);
	EQ(mnum("(the least of # back-to-back reads) and subtracted"),
	   ERGON_KERNELS_OVERHEAD_READS);
	EQ(mnum("(a dimension outside 1..#,"), ERGON_KERNELS_DIM_MAX);
	EQ(mnum("a tensor over # Mi elements)") * 1024 * 1024, ERGON_KERNELS_ELEMS_MAX);
	/* valid_for_regression's rule. */
	EQ(mnum("with at least # samples (the least n"), ERGON_KERNELS_VALID_MIN_N);
	EQ(mnum("is at most # % of the median (a narrower"), ERGON_KERNELS_VALID_CI_PCT);
}

/* A power of ten written with superscript digits ("10¹⁵⁰") right after
 * `lead` in METHOD.md: its exponent. */
static int superscript_exponent(const char *lead)
{
	const char *p = strstr(method_md, lead);
	if (p == NULL)
		fail_msg("docs/METHOD.md no longer states \"%s\"", lead);
	p += strlen(lead);
	static const char *const sup[10] = {"⁰", "¹", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸", "⁹"};
	int e = 0, nd = 0;
	for (;;) {
		int d = -1;
		for (int k = 0; k < 10; k++)
			if (strncmp(p, sup[k], strlen(sup[k])) == 0) {
				d = k;
				p += strlen(sup[k]);
				break;
			}
		if (d < 0)
			break;
		e = 10 * e + d;
		nd++;
	}
	if (nd == 0)
		fail_msg("docs/METHOD.md: no exponent after \"%s\"", lead);
	return e;
}

/* Change points: values or uncertainties beyond 10^E in magnitude are
 * refused, at it accepted. */
static void changepoint_magnitude_bound(void **state)
{
	(void)state;
	int e = superscript_exponent("values or uncertainties beyond 10");
	double lim = pow(10.0, e);
	EQ(lim, ERGON_CP_MAX_ABS);
	double x[4] = {0, 0, 0, lim}, s[4] = {1, 1, 1, 1};
	struct ergon_cp_result r;
	struct ergon_err err = {0};
	assert_int_equal(ergon_changepoints(x, s, 4, 0, &r, &err), 0);
	free(r.seg);
	x[3] = nextafter(lim, INFINITY);
	assert_int_equal(ergon_changepoints(x, s, 4, 0, &r, &err), ERGON_EUSAGE);
	x[3] = 0;
	s[2] = nextafter(lim, INFINITY);
	err = (struct ergon_err){0};
	assert_int_equal(ergon_changepoints(x, s, 4, 0, &r, &err), ERGON_EUSAGE);
	assert_non_null(strstr(err.msg, "uncertainty"));
	/* And values other than 0 below 10^-E: refused, at it accepted, 0
	 * always accepted (a subnormal's standard error read 0: found by
	 * fuzz_changepoint). */
	e = superscript_exponent("values other than 0 below 10⁻");
	double low = pow(10.0, -e);
	EQ(low, ERGON_CP_MIN_ABS);
	double y[4] = {0, 0, low, -low}, t[4] = {1, 1, 1, 1};
	assert_int_equal(ergon_changepoints(y, t, 4, 0, &r, &err), 0);
	free(r.seg);
	y[2] = nextafter(low, 0);
	err = (struct ergon_err){0};
	assert_int_equal(ergon_changepoints(y, t, 4, 0, &r, &err), ERGON_EUSAGE);
	assert_non_null(strstr(err.msg, "point 2"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(observer_tolerance),
	    cmocka_unit_test(reference_drift_band),
	    cmocka_unit_test(reference_tolerance_without_firmware_window),
	    cmocka_unit_test(gate_minimum_and_glitch_floor),
	    cmocka_unit_test(reader_limits),
	    cmocka_unit_test(sign_and_time_checks),
	    cmocka_unit_test(accumulator_tolerance),
	    cmocka_unit_test(internal_window_clock_mismatch),
	    cmocka_unit_test(internal_host_envelope_slack),
	    cmocka_unit_test(clean_window_floors),
	    cmocka_unit_test(throttle_thresholds),
	    cmocka_unit_test(sampler_gap_periods),
	    cmocka_unit_test(layer_thresholds),
	    cmocka_unit_test(virtual_bench_model),
	    cmocka_unit_test(statistics_thresholds),
	    cmocka_unit_test(changepoint_scatter),
	    cmocka_unit_test(kernels_limits),
	    cmocka_unit_test(changepoint_magnitude_bound),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
