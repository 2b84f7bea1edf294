/* Several rails at once: `hwmon:RAIL,RAIL,RAIL` on fake Jetson trees whose
 * rails each have their own idle and load level and their own switch
 * time. The measurement runs in simulated time (ergon/clock.h), as in
 * test_hw_jetson_method.c: the real hwmon driver, the real session engine
 * with the inline sampler and the real report builder, on a clock that
 * this test advances; each rail's current file is rewritten whenever
 * simulated time moves, from a script that is a pure function of time. So
 * every sample and every figure is fixed and worked out by hand below; no
 * wall clock, no threads, no bands. The report is then written and the
 * CLI judges it (`ergon verify`, `ergon energy-model`); the CLI's own
 * summary lines are checked on a run over a tree whose rails never change,
 * where no figure depends on timing.
 *
 * Both boards: settle 0, idle 1 s, 2 windows of 1 s (load phase [1, 3] s).
 * Times are dyadic, every level is mV x mA / 1e6 W.
 *
 * Orin NX (VDD_IN is the total input), periodic (--release-hz 32),
 * sampler 1024 Hz, each invocation 1/2048 s of simulated time. Idle
 * samples at m/1024, m = 0..1023. Load samples (as in
 * test_hw_jetson_method): the 1/1024 s grid from 1 + 1/2048 to
 * 3 - 1/1024 s, span 4093/2048 s, 64 releases at 1 + k/32.
 *   VDD_IN 5 W -> 10 W and VDD_SOC 1.25 W -> 2.25 W from t = 1 s: every
 *   load sample at the load level, load mean = the load level exactly.
 *   VDD_CPU_GPU_CV 1.5 W idle, 4.5 W while (t - 1 s) mod 1/32 s lies in
 *   [2/1024, 12/1024) s: per burst 10 grid samples high between low
 *   neighbours, the trapezoid adds (4.5 - 1.5) x 10/1024 J per burst:
 *   energy = (1.5 x 4093 + 3 x 1280) / 2048 J, mean = 9979.5/4093 W.
 *   Periodic formula, rate 64 / 2 s = 32 /s: total = mean / 32,
 *   above idle = (mean - idle) / 32 (VDD_CPU_GPU_CV: 120/4093 J).
 *   No figure equals a sum of rails (idle 7.75 W, ...).
 * AGX Orin (no total input rail), saturated, sampler 128 Hz, each
 * invocation 1/128 s: load samples at 1 + j/128, j = 1..256 (span
 * 255/128 s), 256 invocations.
 *   VDD_GPU_SOC 15.2 W -> 34.2 W from t = 1 s: load mean 34.2 W.
 *   VDD_CPU_CV 7.6 W -> 17.1 W from 2 + 1/256 s (samples j <= 128 idle):
 *   trapezoid 127 P_i + (P_i + P_l)/2 + 127 P_l intervals of 1/128 s over
 *   255/128 s: mean (P_i + P_l) / 2 = 12.35 W.
 *   VIN_SYS_5V0 3 W -> 3.5 W from 1.5 + 1/256 s (j <= 64 idle):
 *   (63.5 P_i + 191.5 P_l) / 255 = (127 x 3 + 383 x 3.5) / 510 W.
 *   Saturated formula: total = mean / 128, above idle = (mean - idle) /
 *   128. The headline is withheld with run.no_total_rail, every rail
 *   keeps its own figures, and energy-model refuses. */
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct board {
	int (*make)(const char *root, int idx);
	const char *spec;
	const char *labels[3];
	long mv[3], idle_ma[3], load_ma[3];
	int total;    /* index of the total input rail, -1 none */
	int periodic; /* 32 Hz releases (else saturated) */
	/* Each rail's load mean power in W, from the header's hand sums. */
	double load_mean_w[3];
};

static const struct board orin_nx = {fs_orin_nx,
				     "hwmon:VDD_IN,VDD_CPU_GPU_CV,VDD_SOC",
				     {"VDD_IN", "VDD_CPU_GPU_CV", "VDD_SOC"},
				     {5000, 5000, 5000},
				     {1000, 300, 250}, /* 5 W, 1.5 W, 1.25 W */
				     {2000, 900, 450}, /* 10 W, 4.5 W, 2.25 W */
				     0,
				     1,
				     {10.0, 9979.5 / 4093, 2.25}};
static const struct board agx_orin = {fs_agx_orin,
				      "hwmon:VDD_GPU_SOC,VDD_CPU_CV,VIN_SYS_5V0",
				      {"VDD_GPU_SOC", "VDD_CPU_CV", "VIN_SYS_5V0"},
				      {19000, 19000, 5000},
				      {800, 400, 600},	/* 15.2 W, 7.6 W, 3 W */
				      {1800, 900, 700}, /* 34.2 W, 17.1 W, 3.5 W */
				      -1,
				      0,
				      {34.2, (7.6 + 17.1) / 2, (127 * 3.0 + 383 * 3.5) / 510}};

struct sim {
	const char *root;
	const struct board *b;
	long ma[3]; /* what the tree holds now */
	struct ts_sim_clock clk;
};

/* The script: rail c's current in mA at simulated time t. */
static long script_ma(const struct board *b, int c, double t)
{
	int high;
	if (b->periodic && c == 1) {
		double ph = fmod((t - 1.0) * 1024.0, 32.0); /* exact: t is dyadic */
		high = t >= 1.0 && ph >= 2.0 && ph < 12.0;
	} else {
		static const double agx_switch_s[3] = {1.0, 2.0 + 1.0 / 256, 1.5 + 1.0 / 256};
		high = t >= (b->periodic ? 1.0 : agx_switch_s[c]);
	}
	return high ? b->load_ma[c] : b->idle_ma[c];
}

/* Every move of simulated time: the tree holds the script's levels. */
static void sim_update(void *ctx, double before_s)
{
	(void)before_s;
	struct sim *s = ctx;
	for (int c = 0; c < 3; c++) {
		long ma = script_ma(s->b, c, s->clk.t_s);
		if (ma == s->ma[c])
			continue;
		char rel[64];
		snprintf(rel, sizeof(rel), "sys/class/hwmon/hwmon0/curr%d_input", c + 1);
		assert_int_equal(fs_set(s->root, rel, ma), 0);
		s->ma[c] = ma;
	}
}

/* Measure board b in simulated time and write the report to out. */
static json_t *run_sim(const struct board *b, const char *root, const char *out)
{
	assert_int_equal(b->make(root, 0), 0);
	struct sim s = {.root = root, .b = b};
	for (int c = 0; c < 3; c++)
		s.ma[c] = b->idle_ma[c]; /* as the fake tree was made */
	s.clk = (struct ts_sim_clock){.on_advance = sim_update, .ctx = &s};
	ts_sim_clock_install(&s.clk);
	struct ergon_instrument_options io = {.sysfs_root = root};
	struct ergon_instrument *inst = NULL;
	struct ergon_err err = {0};
	if (ergon_instrument_open(b->spec, &io, &inst, &err))
		fail_msg("%s: %s", b->spec, err.msg);
	double lat_s = b->periodic ? 1.0 / 2048 : 1.0 / 128;
	struct ergon_workload wl = {.driver = &ts_sim_workload, .priv = &lat_s};
	snprintf(wl.description, sizeof(wl.description), "simulated fixed-latency work");
	struct ergon_run_config cfg = {
	    .device = "jetson-fake",
	    .instrument_spec = b->spec,
	    .workload_spec = "sim:",
	    .session = {.idle_s = 1.0,
			.windows = 2,
			.window_s = 1.0,
			.release_hz = b->periodic ? 32.0 : 0.0,
			.sampler = ERGON_SAMPLER_INLINE,
			.sample_hz = b->periodic ? 1024.0 : 128.0,
			.failure_policy = ERGON_ON_FAILURE_CONTINUE},
	    .throttle_threshold = 0.15,
	    .throttle_windows = 2,
	    .ambient_c = NAN,
	};
	struct ergon_session_result res;
	if (ergon_session_run(&cfg.session, inst, &wl, &res, &err))
		fail_msg("session: %s", err.msg);
	ts_sim_clock_remove();
	assert_int_equal(res.status, ERGON_SESSION_COMPLETE);
	assert_int_equal(res.n_channels, 3);
	assert_int_equal(res.samples_rejected, 0);
	assert_int_equal(res.n_inv, b->periodic ? 64 : 256);
	/* Per rail: 1024 + 2048 samples (periodic) or 128 + 256 (saturated),
	 * each at its script's level at its time. */
	size_t per_rail[3] = {0};
	for (size_t i = 0; i < res.n_samples; i++) {
		int c = res.sample_channel[i];
		assert_true(c >= 0 && c < 3);
		per_rail[c]++;
		double want = (double)b->mv[c] * (double)script_ma(b, c, res.sample_t_s[i]) * 1e-6;
		TS_ASSERT_EXACT(res.sample_power_w[i], want);
	}
	for (int c = 0; c < 3; c++)
		assert_int_equal(per_rail[c], b->periodic ? 1024 + 2048 : 128 + 256);
	json_t *rep = NULL;
	if (ergon_report_build(&cfg, inst, &wl, &res, &rep, &err))
		fail_msg("report: %s", err.msg);
	ergon_session_result_cleanup(&res);
	ergon_instrument_close(inst);
	if (ergon_artifact_write(rep, out, 0, &err))
		fail_msg("%s: %s", out, err.msg);
	return rep;
}

/* Fail if any number under v is within 1e-6 relative of want. */
static void assert_absent(const json_t *v, double want, const char *what)
{
	if (json_is_number(v)) {
		if (fabs(json_number_value(v) - want) <= 1e-6 * fabs(want))
			fail_msg("a figure equals the sum of rails' %s (%.9g)", what, want);
		return;
	}
	const char *k;
	const json_t *x;
	size_t i;
	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, k, x) assert_absent(x, want, what);
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, x) assert_absent(x, want, what);
	}
}

/* Every rail's figures against the hand values; sums[] gets the sums of
 * the hand idle means, load means, above-idle and total E/op (what a
 * summing bug would report) for the no-sum check. */
static void check_rails(const json_t *rep, const struct board *b, double sums[4])
{
	const json_t *fig = json_object_get(rep, "figures");
	const json_t *rails = json_object_get(fig, "rails");
	assert_int_equal(json_array_size(rails), 3);
	double per_op_s = b->periodic ? 1.0 / 32 : 1.0 / 128; /* 1/rate or mean latency */
	memset(sums, 0, 4 * sizeof(double));
	for (int c = 0; c < 3; c++) {
		const json_t *r = json_array_get(rails, (size_t)c);
		assert_string_equal(json_string_value(json_object_get(r, "name")), b->labels[c]);
		assert_int_equal(json_is_true(json_object_get(r, "total_input")), c == b->total);
		double idle_w = (double)b->mv[c] * (double)b->idle_ma[c] * 1e-6;
		double load_w = b->load_mean_w[c];
		TS_ASSERT_EXACT(ts_json_num(json_object_get(r, "idle"), "mean_power_w", NULL),
				idle_w);
		TS_ASSERT_EXACT(ts_json_num(json_object_get(r, "load"), "mean_power_w", NULL),
				load_w);
		const json_t *eop = json_object_get(r, "energy_per_op");
		assert_true(json_is_object(eop));
		assert_string_equal(json_string_value(json_object_get(eop, "formula")),
				    b->periodic ? "periodic" : "saturated");
		TS_ASSERT_EXACT(ts_json_num(eop, "total_j", NULL), load_w * per_op_s);
		TS_ASSERT_EXACT(ts_json_num(eop, "above_idle_j", NULL),
				(load_w - idle_w) * per_op_s);
		sums[0] += idle_w;
		sums[1] += load_w;
		sums[2] += (load_w - idle_w) * per_op_s;
		sums[3] += load_w * per_op_s;
	}
}

static void orin_nx_three_rails(void **state)
{
	(void)state;
	char *root = ts_tmpdir();
	char *out = ts_strf("%s/report.json", root);
	json_t *rep = run_sim(&orin_nx, root, out);
	double sums[4];
	check_rails(rep, &orin_nx, sums);
	/* The burst rail's above-idle figure, as the header has it. */
	const json_t *fig = json_object_get(rep, "figures");
	const json_t *cpu = json_array_get(json_object_get(fig, "rails"), 1);
	TS_ASSERT_EXACT(ts_json_num(json_object_get(cpu, "energy_per_op"), "above_idle_j", NULL),
			120.0 / 4093);
	/* VDD_IN is the headline: its figures, word for word. */
	assert_string_equal(json_string_value(json_object_get(fig, "headline_rail")), "VDD_IN");
	const json_t *vin = json_array_get(json_object_get(fig, "rails"), 0);
	assert_true(json_equal(json_object_get(fig, "energy_per_op"),
			       json_object_get(vin, "energy_per_op")));
	assert_true(json_equal(json_object_get(fig, "load"), json_object_get(vin, "load")));
	TS_ASSERT_EXACT(ts_json_num(fig, "idle", "mean_power_w"), 5.0);
	TS_ASSERT_EXACT(ts_json_num(fig, "load", "mean_power_w"), 10.0);
	/* No sum of rails anywhere in the figures (7.75 W idle, ...). */
	TS_ASSERT_EXACT(sums[0], 7.75);
	const char *what[4] = {"idle W", "load W", "above-idle J", "total J"};
	for (int k = 0; k < 4; k++)
		assert_absent(fig, sums[k], what[k]);
	/* ergon verify recomputes every per-rail figure. */
	char *err = NULL;
	int rc = ts_run_ergon(NULL, &err, "verify", out, NULL);
	if (rc != 0)
		fail_msg("verify: exit %d: %s", rc, err);
	free(err);
	/* energy-model exports VDD_IN's figure and names it; a fake tree is
	 * synthetic, and the export says so. */
	char *model = NULL;
	rc = ts_run_ergon(&model, NULL, "energy-model", out, "--action", "inference",
			  "--allow-synthetic", NULL);
	assert_int_equal(rc, 0);
	json_error_t je;
	json_t *m = json_loads(model, 0, &je);
	assert_non_null(m);
	TS_ASSERT_EXACT(ts_json_num(json_object_get(m, "values"), "inference", NULL), 5.0 / 32);
	const char *source = json_string_value(json_object_get(m, "source"));
	assert_non_null(source);
	assert_non_null(strstr(source, "rail VDD_IN (the module's total input)"));
	assert_non_null(strstr(source, "not measured"));
	json_decref(m);
	free(model);
	json_decref(rep);
	free(out);
	ts_tmpdir_remove(root);
	free(root);
}

static void agx_orin_no_total_rail(void **state)
{
	(void)state;
	char *root = ts_tmpdir();
	char *out = ts_strf("%s/report.json", root);
	json_t *rep = run_sim(&agx_orin, root, out);
	double sums[4];
	check_rails(rep, &agx_orin, sums);
	const json_t *fig = json_object_get(rep, "figures");
	assert_true(json_is_null(json_object_get(fig, "headline_rail")));
	assert_true(json_is_null(json_object_get(fig, "energy_per_op")));
	assert_null(json_object_get(fig, "idle"));
	assert_null(json_object_get(fig, "load"));
	const char *what[4] = {"idle W", "load W", "above-idle J", "total J"};
	for (int k = 0; k < 4; k++)
		assert_absent(fig, sums[k], what[k]);
	/* The issue says why, naming the rails. */
	const json_t *issues = json_object_get(rep, "issues");
	size_t i;
	const json_t *x;
	int found = 0;
	json_array_foreach(issues, i, x)
	{
		if (strcmp(json_string_value(json_object_get(x, "code")), "run.no_total_rail"))
			continue;
		found = 1;
		assert_non_null(strstr(json_string_value(json_object_get(x, "message")),
				       "VDD_GPU_SOC, VDD_CPU_CV, VIN_SYS_5V0"));
	}
	assert_true(found);
	assert_string_equal(json_string_value(json_object_get(rep, "integrity")), "degraded");
	char *err = NULL;
	int rc = ts_run_ergon(NULL, &err, "verify", out, NULL);
	if (rc != 0)
		fail_msg("verify: exit %d: %s", rc, err);
	free(err);
	err = NULL;
	rc = ts_run_ergon(NULL, &err, "energy-model", out, "--action", "inference",
			  "--allow-synthetic", NULL);
	assert_int_equal(rc, 1);
	assert_non_null(strstr(err, "none is the module's total input"));
	free(err);
	json_decref(rep);
	free(out);
	ts_tmpdir_remove(root);
	free(root);
}

/* `ergon run --instrument hwmon:A,B,C` through the CLI, on a tree whose
 * rails hold their idle levels throughout: every sample of a rail is the
 * same level, so idle and load mean power are that level whatever the
 * scheduler does, and the summary prints one line per rail with them. The
 * exit code is not judged here (a loaded host may leave a sampler gap,
 * run.sampler_gap, and degrade the run); the report must exist. */
static void cli_summary(const struct board *b, const char *const *want)
{
	char *root = ts_tmpdir();
	assert_int_equal(b->make(root, 0), 0);
	char *out = ts_strf("%s/report.json", root);
	char *so = NULL, *se = NULL;
	const char *argv[] = {"run",
			      "--device",
			      "jetson-fake",
			      "--instrument",
			      b->spec,
			      "--sysfs-root",
			      root,
			      "--workload",
			      "builtin:spin,iters=1000",
			      "--settle-s",
			      "0",
			      "--idle-s",
			      "0.3",
			      "--windows",
			      "1",
			      "--window-s",
			      "0.3",
			      "--out",
			      out,
			      NULL};
	int rc = ts_run_ergon_argv(&so, &se, argv);
	size_t len = 0;
	char *text = ts_read_file(out, &len);
	if (text == NULL)
		fail_msg("ergon run wrote no report (exit %d): %s", rc, se);
	free(text);
	for (size_t k = 0; want[k]; k++)
		if (strstr(so, want[k]) == NULL)
			fail_msg("summary lacks \"%s\":\n%s", want[k], so);
	free(so);
	free(se);
	free(out);
	ts_tmpdir_remove(root);
	free(root);
}

static void cli_summary_lines(void **state)
{
	(void)state;
	static const char *const nx[] = {
	    "rail        : VDD_IN read",
	    "(total input); idle 5.000 W, load 5.000 W",
	    "rail        : VDD_CPU_GPU_CV read",
	    "; idle 1.500 W, load 1.500 W",
	    "rail        : VDD_SOC read",
	    "; idle 1.250 W, load 1.250 W",
	    "headline    : rail VDD_IN, the module's total input (rails are never summed)",
	    "idle        : 5.000 W",
	    NULL};
	cli_summary(&orin_nx, nx);
	static const char *const agx[] = {"rail        : VDD_GPU_SOC read",
					  "; idle 15.200 W, load 15.200 W",
					  "rail        : VIN_SYS_5V0 read",
					  "; idle 3.000 W, load 3.000 W",
					  "headline    : WITHHELD",
					  "run.no_total_rail",
					  NULL};
	cli_summary(&agx_orin, agx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(orin_nx_three_rails),
	    cmocka_unit_test(agx_orin_no_total_rail),
	    cmocka_unit_test(cli_summary_lines),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
