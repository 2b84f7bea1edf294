/* The Jetson method, in simulated time: the real hwmon driver on a fake
 * Orin NX tree (one ina3221, VDD_IN at 5000 mV), the real session engine
 * with the inline sampler, and the real report builder, all on a simulated
 * clock (ergon/clock.h) that this test advances. The tree's VDD_IN current
 * is rewritten whenever simulated time moves, from a script that is a pure
 * function of time, so every sample ergon takes and every figure it
 * computes is fixed and worked out by hand below. No wall clock, no
 * threads, no bands.
 *
 * Both cases: settle 0, idle 1 s, 3 windows of 1 s. Idle: 1000 mA (5 W).
 * Times are dyadic (k / 2^n s), so every sum below is exact in binary.
 *
 * Saturated (--release-hz 0), sampler 128 Hz, each invocation takes
 * 1/128 s of simulated time, VDD_IN is 2000 mA (10 W) from t = 1 s (the
 * load phase's start) on:
 *   idle samples at m/128, m = 0..127, all 5 W        -> idle 5 W
 *   384 invocations back to back (128 per window); after each the inline
 *   sampler is due (exactly one period later), so load samples sit at
 *   1 + j/128, j = 1..384, all 10 W                  -> load 10 W
 *   E/op = load W x mean latency = 10 x 1/128 = 0.078125 J,
 *   above idle (10 - 5) x 1/128 = 0.0390625 J.
 *
 * Periodic (--release-hz 32), sampler 1024 Hz, each invocation takes
 * 1/2048 s; independently of the invocations the board draws 10 W while
 * (t - 1 s) mod 1/32 s lies in [2/1024, 12/1024) s (10 ms-ish bursts),
 * 5 W otherwise:
 *   idle samples at m/1024, m = 0..1023, all 5 W      -> idle 5 W
 *   96 releases at 1 + k/32; each invocation ends half a sample period
 *   after its release, where the sampler takes the reading that was due
 *   at the release (1/2048 s late, 5 W), then the 1/1024 s grid resumes.
 *   Load samples: 1 + 1/2048 first, 4 - 1/1024 last (the phase ends at
 *   4 s, where the wait stops before sampling): span 6141/2048 s.
 *   Trapezoid: 5 W x span, plus for each burst 10 samples at 10 W between
 *   5 W neighbours: 5 W x (9 + 2 x 1/2) / 1024 s = 50/1024 J, 96 of them:
 *   energy = (5 x 6141 + 96 x 100) / 2048 = 40305/2048 J,
 *   load mean power = 40305/6141 W.
 *   Duty cycle 32/2048 < 1: the periodic formula, mean power / achieved
 *   release rate (96 operations / 3 s = 32 /s):
 *   total = 40305 / (6141 x 32) J, above idle = (40305 - 5 x 6141) /
 *   (6141 x 32) = 300/6141 J = 0.048852 J. The script's own burst energy
 *   is 5 W x 10/1024 s = 0.048828 J: the samples span 1.5/1024 s less
 *   than the 3 s phase, so ergon's mean power, and with it the figure, is
 *   3/6141 (0.05 %) higher; that is the sampling, computed, not a band.
 *   A formula that did not fold the idle gaps in (mean active power x
 *   latency) would give 40305/6141 / 2048 = 3.2 mJ, not 205 mJ.
 */
#include "ergon/artifact.h"
#include "ergon/clock.h"
#include "ergon/instrument.h"
#include "ergon/report.h"
#include "ergon/session.h"
#include "fake_sysfs.h"
#include "sim_clock.h"
#include "test_support.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CURR_FILE "sys/class/hwmon/hwmon0/curr1_input"

struct sim {
	const char *root;
	int periodic;
	/* The trimmed case: 3000 mA (15 W) in each load window's first and
	 * last quarter (window phase < 1/4 or > 3/4), mid_ma between. */
	int edges;
	long long mid_ma;
	long long ma; /* what the tree holds now */
	struct ts_sim_clock clk;
};

/* The script: VDD_IN current in mA at simulated time t. */
static long long script_ma(const struct sim *s, double t)
{
	if (t < 1.0)
		return 1000;
	if (s->edges) {
		double ph = fmod(t - 1.0, 1.0); /* exact: t is dyadic */
		return ph < 0.25 || ph > 0.75 ? 3000 : s->mid_ma;
	}
	if (!s->periodic)
		return 2000;
	double ph = fmod((t - 1.0) * 1024.0, 32.0); /* exact: t is dyadic */
	return ph >= 2.0 && ph < 12.0 ? 2000 : 1000;
}

/* Every move of simulated time: the tree holds the script's level. */
static void sim_update(void *ctx, double before_s)
{
	(void)before_s;
	struct sim *s = ctx;
	long long ma = script_ma(s, s->clk.t_s);
	if (ma != s->ma) {
		assert_int_equal(fs_set(s->root, CURR_FILE, ma), 0);
		s->ma = ma;
	}
}

/* Moves the last window's start to 0.25 s before its end (0 leaves the
 * edges as the session recorded them): a window shorter than 2 trim_s. */
static int shorten_last_window;

/* One run on the simulated clock; trim (the trimmed case: edges script,
 * --trim-s 0.25) with invocations of lat_s and mid_ma in the windows'
 * middle halves. */
static json_t *run_sim(int periodic, const char *const *kv, int trim, double lat_trim_s,
		       long long mid_ma, struct ergon_session_result *res)
{
	char *root = ts_tmpdir();
	assert_int_equal(fs_orin_nx(root, 0), 0);
	struct sim s = {
	    .root = root, .periodic = periodic, .ma = 1000, .edges = trim, .mid_ma = mid_ma};
	s.clk = (struct ts_sim_clock){.on_advance = sim_update, .ctx = &s};
	ts_sim_clock_install(&s.clk);
	struct ergon_instrument_options io = {.sysfs_root = root, .kv = kv};
	struct ergon_instrument *inst = NULL;
	struct ergon_err err = {0};
	if (ergon_instrument_open("hwmon:VDD_IN", &io, &inst, &err))
		fail_msg("hwmon:VDD_IN: %s", err.msg);
	double lat_s = trim ? lat_trim_s : periodic ? 1.0 / 2048 : 1.0 / 128;
	struct ergon_workload wl = {.driver = &ts_sim_workload, .priv = &lat_s};
	strcpy(wl.description, "simulated fixed-latency work");
	struct ergon_run_config cfg = {
	    .device = "orin-nx-fake",
	    .instrument_spec = "hwmon:VDD_IN",
	    .workload_spec = "sim:",
	    .session = {.idle_s = 1.0,
			.windows = 3,
			.window_s = 1.0,
			.release_hz = periodic ? 32.0 : 0.0,
			.sampler = ERGON_SAMPLER_INLINE,
			.sample_hz = periodic ? 1024.0 : 128.0,
			.failure_policy = ERGON_ON_FAILURE_CONTINUE},
	    .throttle_threshold = 0.15,
	    .throttle_windows = 2,
	    .ambient_c = NAN,
	    .trim = trim,
	    .trim_s = 0.25,
	};
	if (ergon_session_run(&cfg.session, inst, &wl, res, &err))
		fail_msg("session: %s", err.msg);
	if (shorten_last_window) {
		size_t n = res->windows_completed;
		res->window_edges_s[n - 1] = res->window_edges_s[n] - 0.25;
	}
	json_t *rep = NULL;
	if (ergon_report_build(&cfg, inst, &wl, res, &rep, &err))
		fail_msg("report: %s", err.msg);
	ts_sim_clock_remove();
	ergon_instrument_close(inst);
	ts_tmpdir_remove(root);
	free(root);
	return rep;
}

static json_t *run_case_kv(int periodic, const char *const *kv, struct ergon_session_result *res)
{
	return run_sim(periodic, kv, 0, 0, 0, res);
}

static json_t *run_case(int periodic, struct ergon_session_result *res)
{
	return run_case_kv(periodic, NULL, res);
}

/* What both cases share: the identity, and the idle phase at 5 W. */
static void check_common(const json_t *rep, const struct ergon_session_result *res)
{
	const json_t *inst = json_object_get(rep, "instrument");
	assert_string_equal(json_string_value(json_object_get(inst, "driver")), "hwmon");
	assert_string_equal(json_string_value(json_object_get(inst, "model")), "ina3221");
	assert_string_equal(json_string_value(json_object_get(inst, "total_rail")), "VDD_IN");
	assert_int_equal(res->status, ERGON_SESSION_COMPLETE);
	assert_int_equal(res->windows_completed, 3);
	assert_int_equal(res->samples_rejected, 0);
	assert_int_equal(res->sampler_late, 0);
	assert_int_equal(res->sampler_missed, 0);
	TS_ASSERT_EXACT(res->idle_end_s, 1.0);
	TS_ASSERT_EXACT(res->load_start_s, 1.0);
	TS_ASSERT_EXACT(res->load_end_s, 4.0);
	const json_t *fig = json_object_get(rep, "figures");
	TS_ASSERT_EXACT(ts_json_num(fig, "idle", "mean_power_w"), 5.0);
}

static void saturated(void **state)
{
	(void)state;
	struct ergon_session_result res;
	json_t *rep = run_case(0, &res);
	check_common(rep, &res);
	/* 128 idle samples, 384 load samples, 384 invocations (above). */
	assert_int_equal(res.n_samples, 128 + 384);
	assert_int_equal(res.n_inv, 384);
	TS_ASSERT_EXACT(res.sample_t_s[127], 127.0 / 128);
	TS_ASSERT_EXACT(res.sample_t_s[128], 1.0 + 1.0 / 128);
	TS_ASSERT_EXACT(res.sample_t_s[res.n_samples - 1], 4.0);
	for (size_t i = 0; i < res.n_inv; i++)
		TS_ASSERT_EXACT(res.inv_latency_s[i], 1.0 / 128);
	const json_t *fig = json_object_get(rep, "figures");
	TS_ASSERT_EXACT(ts_json_num(fig, "load", "mean_power_w"), 10.0);
	const json_t *eop = json_object_get(fig, "energy_per_op");
	assert_true(json_is_object(eop));
	assert_string_equal(json_string_value(json_object_get(eop, "formula")), "saturated");
	TS_ASSERT_EXACT(ts_json_num(eop, "total_j", NULL), 0.078125);
	TS_ASSERT_EXACT(ts_json_num(eop, "above_idle_j", NULL), 0.0390625);
	json_decref(rep);
	ergon_session_result_cleanup(&res);
}

static const struct ergon_budget_term *bterm(const json_t *b, const char *name, double *limit)
{
	size_t i;
	const json_t *t;
	json_array_foreach(json_object_get(b, "terms"), i, t)
	{
		if (strcmp(json_string_value(json_object_get(t, "name")), name) == 0) {
			*limit = json_number_value(json_object_get(t, "limit"));
			return NULL;
		}
	}
	fail_msg("no term %s", name);
	return NULL;
}

/* The budget of the saturated case's energy per operation above idle, by
 * hand. The INA3221's rating (TI SBOS576B section 1): current gain 0.25 %,
 * offset 80 uV over the 5 mOhm shunt = 16 mA, at the rail's 5 V = 0.08 W;
 * the user states what ergon does not hold: bus voltage gain 0.2 % and
 * offset 8 mV (a gain of 8 mV / 5 V = 0.16 %), the shunt's tolerance 1 %
 * and 50 ppm/C over 20 C (0.1 %). The reading step: 8 mA (40 uV / 5 mOhm,
 * coarser than the ABI's 1 mA) x 5 V + 2 A (the largest current the rail
 * read) x 8 mV = 0.056 W. The simulated clock is exact (0 ppm).
 *   every gain g: g x (10 W - 5 W) x 1/128 s (one gain in load and idle)
 *   offset: cancels (one range, one offset in load and idle): 0
 *   resolution: 0.056/2 W x 1/128 s, in load and in idle
 *   timestamps: flat phases, 0; timebase 0; spread: 3 equal windows, 0
 *   latency quantization: 5 W x the clock's tick / sqrt(384)
 * every term rectangular: U = 2 sqrt(sum limit^2 / 3). */
static void ina3221_budget_by_hand(void **state)
{
	(void)state;
	static const char *const kv[] = {
	    "rating.v_gain_pct=0.2",	    "rating.v_offset_v=0.008",
	    "rating.shunt_tolerance_pct=1", "rating.shunt_tempco_ppm_per_c=50",
	    "rating.shunt_temp_span_c=20",  NULL};
	struct ergon_session_result res;
	json_t *rep = run_case_kv(0, kv, &res);
	check_common(rep, &res);
	const json_t *b = json_object_get(
	    json_object_get(json_object_get(rep, "figures"), "energy_per_op"), "above_idle_budget");
	assert_true(json_is_object(b));
	double L = 1.0 / 128, d = 5.0 * L, l;
	struct {
		const char *name;
		double want;
	} t[] = {{"current gain", 0.0025 * d},
		 {"voltage gain", 0.002 * d},
		 {"voltage offset", 0.0016 * d},
		 {"shunt tolerance", 0.01 * d},
		 {"shunt tempco", 0.001 * d},
		 {"current offset", 0.0},
		 {"resolution (load)", 0.028 * L},
		 {"resolution (idle)", 0.028 * L},
		 {"timestamps", 0.0},
		 {"timebase", 0.0},
		 {"spread over windows", 0.0}};
	double s2 = 0;
	for (size_t k = 0; k < sizeof t / sizeof t[0]; k++) {
		bterm(b, t[k].name, &l);
		if (fabs(l - t[k].want) > 1e-15)
			fail_msg("%s: %.17g, by hand %.17g", t[k].name, l, t[k].want);
		s2 += t[k].want * t[k].want / 3.0;
	}
	bterm(b, "latency quantization", &l);
	double q = 5.0 * res.clock_res_s / sqrt(384.0);
	if (fabs(l - q) > 1e-18)
		fail_msg("latency quantization %.17g, by hand %.17g", l, q);
	s2 += q * q / 3.0;
	assert_true(json_is_true(json_object_get(b, "complete")));
	double U = json_number_value(json_object_get(b, "U"));
	if (fabs(U - 2.0 * sqrt(s2)) > 1e-15)
		fail_msg("U %.17g, by hand %.17g", U, 2.0 * sqrt(s2));
	assert_string_equal(json_string_value(json_object_get(b, "dominant")), "shunt tolerance");
	json_decref(rep);
	ergon_session_result_cleanup(&res);
	/* Without the stated figures the INA3221's bus channel is unknown. */
	rep = run_case(0, &res);
	b = json_object_get(json_object_get(json_object_get(rep, "figures"), "energy_per_op"),
			    "above_idle_budget");
	assert_false(json_is_true(json_object_get(b, "complete")));
	assert_string_equal(json_string_value(json_object_get(b, "dominant")), "voltage gain");
	json_decref(rep);
	ergon_session_result_cleanup(&res);
}

static void periodic_32hz(void **state)
{
	(void)state;
	struct ergon_session_result res;
	json_t *rep = run_case(1, &res);
	check_common(rep, &res);
	/* 1024 idle samples; in the load phase the grid 1 + j/1024,
	 * j = 0..3071, with each release's grid point replaced by the one
	 * taken half a period later: 3072 samples. */
	assert_int_equal(res.n_samples, 1024 + 3072);
	assert_int_equal(res.n_inv, 96);
	TS_ASSERT_EXACT(res.sample_t_s[1024], 1.0 + 1.0 / 2048);
	TS_ASSERT_EXACT(res.sample_t_s[res.n_samples - 1], 4.0 - 1.0 / 1024);
	assert_int_equal(res.release_overruns, 0);
	for (size_t k = 0; k < res.n_inv; k++) {
		TS_ASSERT_EXACT(res.inv_start_s[k], 1.0 + (double)k / 32);
		TS_ASSERT_EXACT(res.inv_latency_s[k], 1.0 / 2048);
	}
	/* Every sample holds the script's level at its time: 96 x 10 high. */
	size_t high = 0;
	struct sim probe = {.periodic = 1};
	for (size_t i = 0; i < res.n_samples; i++) {
		double want = script_ma(&probe, res.sample_t_s[i]) == 2000 ? 10.0 : 5.0;
		TS_ASSERT_EXACT(res.sample_power_w[i], want);
		high += want == 10.0;
	}
	assert_int_equal(high, 96 * 10);
	const json_t *fig = json_object_get(rep, "figures");
	TS_ASSERT_EXACT(ts_json_num(fig, "load", "mean_power_w"), 40305.0 / 6141);
	const json_t *eop = json_object_get(fig, "energy_per_op");
	assert_true(json_is_object(eop));
	assert_string_equal(json_string_value(json_object_get(eop, "formula")), "periodic");
	TS_ASSERT_EXACT(ts_json_num(eop, "total_j", NULL), 40305.0 / (6141.0 * 32));
	TS_ASSERT_EXACT(ts_json_num(eop, "above_idle_j", NULL), 300.0 / 6141);
	json_decref(rep);
	ergon_session_result_cleanup(&res);
}

/* --trim-s 0.25 (the Jetson method's duty-cycle figures), saturated, 128 Hz
 * sampler, invocations of 1/128 s back to back from t = 1 s, windows
 * [1, 2), [2, 3), [3, 4). VDD_IN 3000 mA (15 W) in each window's first and
 * last quarter, 2000 mA (10 W) in [w + 1/4, w + 3/4] (both ends
 * included). Kept: [1.25, 1.75], [2.25, 2.75], [3.25, 3.75], 1.5 s.
 *   Samples in a kept part: 1 + j/128 for j = 32..96 (and +128, +256),
 *   65 each, all at 10 W: load power 10 W exactly.
 *   Operations wholly inside: starts 1 + k/128 >= 1.25 and ends
 *   1 + (k + 1)/128 <= 1.75, k = 32..95: 64 per window, 192 in all;
 *   rate 192 / 1.5 s = 128 /s; mean latency 1/128 s.
 *   Saturated: E/op = 10 W x 1/128 s = 0.078125 J, above idle
 *   (10 - 5) / 128 = 0.0390625 J; duty cycle 1.
 * Untrimmed, the 15 W edges are in the load's mean, so its E/op is
 * larger: the trimming is what changes the figure. */
static void trimmed_duty_cycle(void **state)
{
	(void)state;
	struct ergon_session_result res;
	json_t *rep = run_sim(0, NULL, 1, 1.0 / 128, 2000, &res);
	check_common(rep, &res);
	TS_ASSERT_EXACT(ts_json_num(rep, "plan", "trim_s"), 0.25);
	const json_t *edges = json_object_get(json_object_get(rep, "series"), "window_edges_s");
	assert_int_equal(json_array_size(edges), 4);
	for (size_t w = 0; w < 4; w++)
		TS_ASSERT_EXACT(json_number_value(json_array_get(edges, w)), 1.0 + (double)w);
	const json_t *fig = json_object_get(rep, "figures");
	const json_t *dc = json_object_get(fig, "duty_cycle");
	if (!json_is_object(dc) || json_object_get(dc, "withheld"))
		fail_msg("duty_cycle: %s", json_dumps(dc, 0));
	TS_ASSERT_EXACT(ts_json_num(dc, "trim_s", NULL), 0.25);
	TS_ASSERT_EXACT(ts_json_num(dc, "kept_s", NULL), 1.5);
	assert_int_equal(json_integer_value(json_object_get(dc, "kept_intervals")), 3);
	assert_true(json_is_integer(json_object_get(dc, "windows_without_kept_part")));
	assert_int_equal(json_integer_value(json_object_get(dc, "windows_without_kept_part")), 0);
	assert_int_equal(json_integer_value(json_object_get(dc, "samples")), 3 * 65);
	TS_ASSERT_EXACT(ts_json_num(dc, "load_power_w", NULL), 10.0);
	TS_ASSERT_EXACT(ts_json_num(dc, "idle_power_w", NULL), 5.0);
	assert_int_equal(json_integer_value(json_object_get(dc, "operations")), 192);
	TS_ASSERT_EXACT(ts_json_num(dc, "achieved_ops_per_s", NULL), 128.0);
	TS_ASSERT_EXACT(ts_json_num(dc, "latency_mean_s", NULL), 1.0 / 128);
	TS_ASSERT_EXACT(ts_json_num(dc, "duty_cycle", NULL), 1.0);
	assert_string_equal(json_string_value(json_object_get(dc, "formula")), "saturated");
	TS_ASSERT_EXACT(ts_json_num(dc, "total_j", NULL), 0.078125);
	TS_ASSERT_EXACT(ts_json_num(dc, "above_idle_j", NULL), 0.0390625);
	assert_true(ts_json_num(fig, "energy_per_op", "total_j") > 0.078125 * 1.1);
	json_decref(rep);
	ergon_session_result_cleanup(&res);
}

/* A window shorter than 2 trim_s keeps nothing and is counted, not
 * dropped silently: edges 1, 2, 3.75, 4 with trim 0.25 keep
 * [1.25, 1.75] and [2.25, 3.5] (0.5 + 1.25 = 1.75 s, 2 kept intervals);
 * the 0.25 s window [3.75, 4] keeps nothing: windows_without_kept_part 1
 * of 3 windows. */
static void trimmed_short_window_counted(void **state)
{
	(void)state;
	struct ergon_session_result res;
	shorten_last_window = 1;
	json_t *rep = run_sim(0, NULL, 1, 1.0 / 128, 2000, &res);
	shorten_last_window = 0;
	const json_t *dc = json_object_get(json_object_get(rep, "figures"), "duty_cycle");
	if (!json_is_object(dc) || json_object_get(dc, "withheld"))
		fail_msg("duty_cycle: %s", json_dumps(dc, 0));
	assert_int_equal(json_integer_value(json_object_get(dc, "windows")), 3);
	assert_int_equal(json_integer_value(json_object_get(dc, "kept_intervals")), 2);
	TS_ASSERT_EXACT(ts_json_num(dc, "kept_s", NULL), 1.75);
	assert_true(json_is_integer(json_object_get(dc, "windows_without_kept_part")));
	assert_int_equal(json_integer_value(json_object_get(dc, "windows_without_kept_part")), 1);
	json_decref(rep);
	ergon_session_result_cleanup(&res);
}

/* The figures of a repeated report assembled as ergon run assembles it
 * (the first's shared members, each repetition's own under
 * repetitions[]) from single runs; the caller frees both. */
static json_t *repeated_figures_of(const json_t *const *singles, size_t n, json_t **issues)
{
	json_t *r = json_deep_copy(singles[0]);
	json_object_del(r, "figures");
	json_t *reps = json_array();
	static const char *const own[] = {"measurement_time", "status",	 "stop_reason",
					  "session",	      "sampler", "uncertainty_model",
					  "series",	      NULL};
	for (size_t i = 0; i < n; i++) {
		json_t *o = json_pack("{s:I}", "index", (json_int_t)(i + 1));
		for (size_t k = 0; own[k]; k++)
			json_object_set(o, own[k], json_object_get(singles[i], own[k]));
		json_array_append_new(reps, o);
	}
	json_object_set_new(r, "repetitions", reps);
	json_object_set_new(r, "repeat", json_pack("{s:I, s:I}", "planned", (json_int_t)n,
						   "completed", (json_int_t)n));
	json_t *fig = NULL;
	struct ergon_err err = {0};
	if (ergon_report_compute_figures(r, &fig, issues, &err) != 0)
		fail_msg("%s", err.msg);
	json_decref(r);
	return fig;
}

/* --trim-s with two repetitions: the one above (10 W, 1/128 s) and one at
 * 2400 mA (12 W) with invocations of 1/64 s (k = 16..47 wholly inside a
 * kept part: 32 per window, 96 in all, 64 /s). The method averages the
 * inputs over the repetitions and applies the formula once:
 *   mean load 11 W, mean idle 5 W, mean latency (1/128 + 1/64) / 2 =
 *   3/256 s, mean rate 96 /s; saturated: 11 x 3/256 = 33/256 J =
 *   0.12890625 J, above idle 6 x 3/256 = 18/256 J = 0.0703125 J,
 * where the mean of the two repetitions' results would be (10/128 +
 * 12/64) / 2 = 0.1328125 J. The repeated report is assembled here as
 * ergon run assembles it (the first's shared members, each repetition's
 * own under repetitions[]). */
static void trimmed_average_over_repeats(void **state)
{
	(void)state;
	struct ergon_session_result r1, r2;
	json_t *a = run_sim(0, NULL, 1, 1.0 / 128, 2000, &r1);
	json_t *b = run_sim(0, NULL, 1, 1.0 / 64, 2400, &r2);
	TS_ASSERT_EXACT(ts_json_num(json_object_get(b, "figures"), "duty_cycle", "load_power_w"),
			12.0);
	TS_ASSERT_EXACT(
	    ts_json_num(json_object_get(b, "figures"), "duty_cycle", "achieved_ops_per_s"), 64.0);
	const json_t *singles[2] = {a, b};
	json_t *issues = NULL;
	json_t *fig = repeated_figures_of(singles, 2, &issues);
	const json_t *dc = json_object_get(json_object_get(fig, "repeat"), "duty_cycle");
	if (!json_is_object(dc) || json_object_get(dc, "withheld"))
		fail_msg("repeat.duty_cycle: %s", json_dumps(dc, 0));
	assert_int_equal(json_integer_value(json_object_get(dc, "n")), 2);
	TS_ASSERT_EXACT(ts_json_num(dc, "load_power_w", NULL), 11.0);
	TS_ASSERT_EXACT(ts_json_num(dc, "idle_power_w", NULL), 5.0);
	TS_ASSERT_EXACT(ts_json_num(dc, "latency_mean_s", NULL), 3.0 / 256);
	TS_ASSERT_EXACT(ts_json_num(dc, "achieved_ops_per_s", NULL), 96.0);
	assert_string_equal(json_string_value(json_object_get(dc, "formula")), "saturated");
	TS_ASSERT_EXACT(ts_json_num(dc, "total_j", NULL), 33.0 / 256);
	TS_ASSERT_EXACT(ts_json_num(dc, "above_idle_j", NULL), 18.0 / 256);
	/* Each repetition keeps its own trimmed figures. */
	TS_ASSERT_EXACT(ts_json_num(json_array_get(json_object_get(fig, "repetitions"), 1),
				    "duty_cycle", "total_j"),
			12.0 / 64);
	/* No window of either repetition is shorter than 2 trim_s. */
	assert_true(json_is_integer(json_object_get(dc, "windows_without_kept_part")));
	assert_int_equal(json_integer_value(json_object_get(dc, "windows_without_kept_part")), 0);
	json_decref(fig);
	json_decref(issues);
	json_decref(a);
	json_decref(b);
	ergon_session_result_cleanup(&r1);
	ergon_session_result_cleanup(&r2);
}

/* figures.repeat.duty_cycle counts the windows that kept nothing over
 * all the repetitions, as figures.duty_cycle counts one run's: both
 * repetitions with their last window cut to 0.25 s (edges 1, 2, 3.75, 4,
 * trim 0.25: 1 of 3 windows keeps nothing, trimmed_short_window_counted)
 * give 1 + 1 = 2 (their mean would be 1). When a repetition withholds
 * its block the average is withheld and the sum still stated: the first
 * repetition's edges set to 1, 1.3, 1.801, 4 make window 1 (0.3 s)
 * keep nothing and window 2 keep [1.55, 1.551], 1 ms, under one 1/128 s
 * sample period: withheld with 1 window without a kept part; with the
 * second's 1, the sum is 2. */
static void trimmed_repeat_counts_short_windows(void **state)
{
	(void)state;
	struct ergon_session_result r1, r2;
	shorten_last_window = 1;
	json_t *a = run_sim(0, NULL, 1, 1.0 / 128, 2000, &r1);
	json_t *b = run_sim(0, NULL, 1, 1.0 / 64, 2400, &r2);
	shorten_last_window = 0;
	const json_t *singles[2] = {a, b};
	json_t *issues = NULL;
	json_t *fig = repeated_figures_of(singles, 2, &issues);
	const json_t *dc = json_object_get(json_object_get(fig, "repeat"), "duty_cycle");
	if (!json_is_object(dc) || json_object_get(dc, "withheld"))
		fail_msg("repeat.duty_cycle: %s", json_dumps(dc, 0));
	for (size_t i = 0; i < 2; i++) {
		const json_t *di =
		    json_object_get(json_array_get(json_object_get(fig, "repetitions"), i), "duty_cycle");
		assert_int_equal(json_integer_value(json_object_get(di, "windows_without_kept_part")),
				 1);
	}
	assert_true(json_is_integer(json_object_get(dc, "windows_without_kept_part")));
	assert_int_equal(json_integer_value(json_object_get(dc, "windows_without_kept_part")), 2);
	json_decref(fig);
	json_decref(issues);
	/* The withheld case. */
	json_t *edges = json_object_get(json_object_get(a, "series"), "window_edges_s");
	TS_ASSERT_EXACT(json_number_value(json_array_get(edges, 0)), 1.0);
	TS_ASSERT_EXACT(json_number_value(json_array_get(edges, 3)), 4.0);
	json_array_set_new(edges, 1, json_real(1.3));
	json_array_set_new(edges, 2, json_real(1.801));
	fig = repeated_figures_of(singles, 2, &issues);
	const json_t *d1 =
	    json_object_get(json_array_get(json_object_get(fig, "repetitions"), 0), "duty_cycle");
	assert_non_null(strstr(json_string_value(json_object_get(d1, "withheld")),
			       "fewer than 2 samples"));
	assert_int_equal(json_integer_value(json_object_get(d1, "windows_without_kept_part")), 1);
	dc = json_object_get(json_object_get(fig, "repeat"), "duty_cycle");
	assert_non_null(json_object_get(dc, "withheld"));
	assert_true(json_is_integer(json_object_get(dc, "windows_without_kept_part")));
	assert_int_equal(json_integer_value(json_object_get(dc, "windows_without_kept_part")), 2);
	json_decref(fig);
	json_decref(issues);
	json_decref(a);
	json_decref(b);
	ergon_session_result_cleanup(&r1);
	ergon_session_result_cleanup(&r2);
}

/* The seam is narrow: a threaded sampler cannot run on a clock that only
 * the measuring thread advances, and the session says so. */
static void threaded_refused_on_simulated_clock(void **state)
{
	(void)state;
	struct ts_sim_clock clk = {.t_s = 0.0};
	ts_sim_clock_install(&clk);
	struct ergon_session_config sc = {.idle_s = 1,
					  .windows = 1,
					  .window_s = 1,
					  .sampler = ERGON_SAMPLER_THREADED,
					  .sample_hz = 10};
	struct ergon_instrument_driver idrv = {.name = "none"};
	struct ergon_instrument inst = {.driver = &idrv};
	double lat = 0.001;
	struct ergon_workload wl = {.driver = &ts_sim_workload, .priv = &lat};
	struct ergon_session_result res;
	struct ergon_err err = {0};
	assert_int_equal(ergon_session_run(&sc, &inst, &wl, &res, &err), ERGON_EUSAGE);
	assert_non_null(strstr(err.msg, "only the inline sampler runs on it"));
	ts_sim_clock_remove();
	assert_int_equal(ergon_clock_simulated(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(saturated),
	    cmocka_unit_test(ina3221_budget_by_hand),
	    cmocka_unit_test(periodic_32hz),
	    cmocka_unit_test(trimmed_duty_cycle),
	    cmocka_unit_test(trimmed_short_window_counted),
	    cmocka_unit_test(trimmed_average_over_repeats),
	    cmocka_unit_test(trimmed_repeat_counts_short_windows),
	    cmocka_unit_test(threaded_refused_on_simulated_clock),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
