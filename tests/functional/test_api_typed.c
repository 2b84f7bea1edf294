/* The library's typed results (docs/API.md), each against values worked
 * out independently of the code under test:
 *
 * - ergon_run with the caller's own workload (cfg.workload) in simulated
 *   time: the scenario of test_run_synthetic_clock's work_s_exact (the
 *   synthetic instrument, idle 0.5 W, load 3 W, no noise, work_s 1/128 s;
 *   inline sampler at 128 Hz; idle 1 s, 2 windows of 1 s), whose figures
 *   are worked out by hand there: 256 invocations of 1/128 s, first 127
 *   and tail 128 ops/s (+100/127 %), idle 0.5 W, load 3 W, energy per
 *   operation 0.01953125 J above idle and 0.0234375 J in all. The
 *   workload is a function of this file; the report names it
 *   caller:counter, and it was invoked 256 times.
 * - ergon_kernels_summary_read of the section ergon_kernels_summarize
 *   makes of samples whose statistics are done by hand (below).
 * - ergon_analyze_run on fixtures/jls/shared_basic.jls: the gated window
 *   as the reference JLS library computed it (shared_basic.expected.json).
 * - ergon_profile_run on the virtual bench with the power stage: the
 *   bench's inference is 1 ms at 5 mA on a 1.8 V rail (docs/internals/
 *   sim.md), the auto window 5000 ms: 5000 inferences of 9 uJ; the stated
 *   uncertainty is two 0.1 ms statistics periods at the peak power over
 *   the count, 2 x 1e-4 s x 9 mW / 5000 = 3.6e-10 J.
 * - ergon_hpx_parse_run on fixtures/hpx/basic.hpx.txt: every layer's id,
 *   op, counters and cycles against the reference parser's output
 *   (basic.median.expected.json), the total and the top layers worked out
 *   here from those reference cycles, the log's size from stat(2) and its
 *   SHA-256 from sha256sum(1); a log cut inside a row (test_parse_truncated's
 *   "mid" case: medians by hand 200 / 20 and 50 / 5 cycles / instructions),
 *   through ergon_hpx_parse_run and through ergon_hpx_capture_run from a
 *   file: incomplete, degraded, pmu.incomplete at the file's size, inside a
 *   line, and the capture ended at the end of its source.
 * - ergon_record_run from the PPK2 protocol simulator (test_ppk2_cli's
 *   waveform: 1 mA, 10 mA for samples [50000, 250000), range 2, quantised
 *   by hand to 231 and 2310 ADC steps) with a counter gap of 40 samples
 *   at 280000 (the PPK2's counter counts modulo 64), for 3 s at 100 kSPS:
 *   300000 samples, 40 of them lost, 3 s, the mean current over the
 *   299960 finite samples worked out by hand, synthetic (a pty is not a
 *   USB PPK2), degraded.
 * - ergon_validate_run on the virtual bench over a folder of two models:
 *   ad01_int8.tflite (a fixture model the interpreter runs) and cut.tflite
 *   (its first 100 bytes: no model), in file name order: ad01_int8's
 *   profile, correctness and integrity pass and its summary is synthetic;
 *   cut's profile is an error naming the file, its two other checks
 *   skipped because the profile did not complete: 2 models, 6 tests, 1
 *   error, 2 skipped (docs/VALIDATE.md). */
#include "ergon/analyze.h"
#include "ergon/artifact.h"
#include "ergon/config.h"
#include "ergon/hpx_capture.h"
#include "ergon/hpx_report.h"
#include "ergon/issues.h"
#include "ergon/kernels.h"
#include "ergon/kernels_run.h"
#include "ergon/profile.h"
#include "ergon/record.h"
#include "ergon/validate.h"
#include "ergon/verdict.h"
#include "ergon/report.h"
#include "sim_clock.h"
#include "test_support.h"
#include "ts_ppk2_sim.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static unsigned long invocations;

static int count_invoke(struct ergon_workload *wl, struct ergon_err *err)
{
	(void)wl;
	(void)err;
	invocations++;
	return 0;
}

static const struct ergon_workload_driver counter_driver = {
    .name = "counter",
    .longname = "counts its invocations (tests/functional/test_api_typed.c)",
    .invoke = count_invoke,
};

static void run_typed(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *out = ts_strf("%s/caller.json", dir);
	const char *ikv[] = {"work_s=0.0078125", "idle_w=0.5", "load_w=3",
			     "noise_w=0",	 "drop=0",     NULL};
	struct ergon_workload wl = {.driver = &counter_driver, .description = "a counter"};
	struct ergon_run_config cfg = {
	    .device = "dut",
	    .instrument_spec = "synthetic",
	    .instrument_opts = {.kv = ikv},
	    .workload = &wl,
	    .session = {.idle_s = 1.0,
			.windows = 2,
			.window_s = 1.0,
			.sampler = ERGON_SAMPLER_INLINE,
			.sample_hz = 128,
			.failure_policy = ERGON_ON_FAILURE_CONTINUE},
	    .throttle_threshold = 0.15,
	    .throttle_windows = 2,
	    .ambient_c = NAN,
	    .out_path = out,
	};
	struct ts_sim_clock sim = {0};
	ts_sim_clock_install(&sim);
	struct ergon_run_result res;
	json_t *rep = NULL;
	struct ergon_err err = {0};
	invocations = 0;
	int rc = ergon_run(&cfg, &res, &rep, &err);
	ts_sim_clock_remove();
	if (rc)
		fail_msg("ergon_run: %s", err.msg);
	const struct ergon_run_headline *f = &res.figures;
	assert_int_equal(invocations, 256);
	assert_int_equal(f->operations, 256);
	assert_int_equal(f->operations_failed, 0);
	assert_false(f->withheld);
	TS_ASSERT_EXACT(f->latency_min_s, 1.0 / 128);
	TS_ASSERT_EXACT(f->latency_mean_s, 1.0 / 128);
	TS_ASSERT_EXACT(f->latency_max_s, 1.0 / 128);
	TS_ASSERT_EXACT(f->latency_p50_s, 1.0 / 128);
	TS_ASSERT_EXACT(f->latency_p90_s, 1.0 / 128);
	TS_ASSERT_EXACT(f->latency_p95_s, 1.0 / 128);
	TS_ASSERT_EXACT(f->latency_p99_s, 1.0 / 128);
	TS_ASSERT_EXACT(f->first_ops_per_s, 127.0);
	TS_ASSERT_EXACT(f->tail_ops_per_s, 128.0);
	TS_ASSERT_EXACT(f->change_pct, 100.0 / 127);
	assert_false(f->throttled);
	assert_true(isnan(f->onset_t_s));
	TS_ASSERT_EXACT(f->idle_mean_power_w, 0.5);
	TS_ASSERT_EXACT(f->load_mean_power_w, 3.0);
	TS_ASSERT_EXACT(f->energy_per_op_total_j, 0.0234375);
	TS_ASSERT_EXACT(f->energy_per_op_j, 0.01953125);
	assert_true(f->energy_per_op_u_j > 0);
	assert_int_equal(res.provenance, ERGON_PROV_SYNTHETIC);
	assert_int_equal(strncmp(res.report_id, "sha256:", 7), 0);
	/* The same report as the document written. */
	assert_string_equal(res.report_id, json_string_value(json_object_get(rep, "report_id")));
	assert_string_equal(ergon_integrity_name(res.integrity),
			    json_string_value(json_object_get(rep, "integrity")));
	const json_t *w = json_object_get(rep, "workload");
	assert_string_equal(json_string_value(json_object_get(w, "spec")), "caller:counter");
	assert_string_equal(json_string_value(json_object_get(w, "description")), "a counter");
	json_decref(rep);
	/* The report verifies, and a document loaded back reads the same. */
	char *verr = NULL;
	rc = ts_run_ergon(NULL, &verr, "verify", out, NULL);
	if (rc != 0)
		fail_msg("verify: exit %d: %s", rc, verr);
	free(verr);
	json_t *loaded = NULL;
	assert_int_equal(ergon_artifact_load(out, 64u << 20, &loaded, &err), 0);
	struct ergon_run_result again;
	ergon_run_result_read(loaded, &again);
	assert_memory_equal(&again.figures, &res.figures, sizeof res.figures);
	json_decref(loaded);
	free(out);
	ts_tmpdir_remove(dir);
	free(dir);
}

/* Case c1: ref counts 10, 20, 30 (min 10, median 20, mean 20; n = 3 < 6:
 * the median's interval is [min, max] = [10, 30], covering 1 - 2 x 1/8 =
 * 75 %), mve 5, 5, 10 (min 5, median 5, mean 20/3; speedup 20 / (20/3) =
 * 3). Case c2: ref 4; mve fails correctness (not timed, no speedup). The
 * geometric mean of mve's speedups: one case, 3. */
static void kernels_typed(void **state)
{
	(void)state;
	struct ergon_kernels_data *d = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_kernels_data_new(&d, &err), 0);
	const double ref[] = {10, 20, 30}, mve[] = {5, 5, 10};
	for (int i = 0; i < 3; i++)
		assert_int_equal(ergon_kernels_add(d, "c1", "ref", 1, ref[i], &err), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(ergon_kernels_add(d, "c1", "mve", 1, mve[i], &err), 0);
	assert_int_equal(ergon_kernels_add(d, "c2", "ref", 1, 4, &err), 0);
	assert_int_equal(ergon_kernels_add(d, "c2", "mve", 0, NAN, &err), 0);
	json_t *sec = NULL;
	assert_int_equal(ergon_kernels_summarize(d, NULL, "ns", &sec, &err), 0);
	struct ergon_kernels_summary s;
	if (ergon_kernels_summary_read(sec, &s, &err) != 0)
		fail_msg("read: %s", err.msg);
	assert_string_equal(s.baseline, "ref");
	assert_string_equal(s.unit, "ns");
	assert_int_equal(s.n_cases, 2);
	const struct ergon_kernel_case_result *c1 = &s.cases[0], *c2 = &s.cases[1];
	assert_string_equal(c1->name, "c1");
	assert_int_equal(c1->n_impls, 2);
	const struct ergon_kernel_impl_result *r = &c1->impls[0], *m = &c1->impls[1];
	assert_string_equal(r->impl, "ref");
	assert_true(r->correct && r->timed);
	assert_int_equal(r->n, 3);
	TS_ASSERT_EXACT(r->min, 10);
	TS_ASSERT_EXACT(r->median, 20);
	TS_ASSERT_EXACT(r->mean, 20);
	TS_ASSERT_EXACT(r->ci_lo, 10);
	TS_ASSERT_EXACT(r->ci_hi, 30);
	TS_ASSERT_EXACT(r->ci_coverage, 0.75);
	assert_false(r->has_speedup);
	assert_string_equal(m->impl, "mve");
	TS_ASSERT_EXACT(m->min, 5);
	TS_ASSERT_EXACT(m->median, 5);
	TS_ASSERT_EXACT(m->mean, 20.0 / 3);
	assert_true(m->has_speedup);
	TS_ASSERT_EXACT(m->baseline_mean, 20);
	TS_ASSERT_EXACT(m->speedup, 3);
	assert_string_equal(c2->name, "c2");
	assert_false(c2->impls[1].correct);
	assert_false(c2->impls[1].timed);
	assert_false(c2->impls[1].has_speedup);
	assert_true(isnan(c2->impls[1].mean));
	assert_int_equal(s.n_geomean, 1);
	assert_string_equal(s.geomean[0].impl, "mve");
	assert_int_equal(s.geomean[0].cases, 1);
	TS_ASSERT_EXACT(s.geomean[0].speedup, 3);
	assert_int_equal(c1->impls[0].repetitions, 0);
	assert_true(isnan(c1->impls[0].repeat_mean));
	assert_true(isnan(c1->impls[0].repeat_sd));
	assert_false(c1->impls[0].mean_disagrees); /* 20 lies within [10, 30] */
	assert_string_equal(c1->impls[0].why, "");
	assert_string_not_equal(c2->impls[1].why, "");
	assert_int_equal(s.n_failures, 1);
	/* The terminal table `ergon kernels` prints, from these figures. */
	char *tab = NULL;
	assert_int_equal(ergon_kernels_summary_table(&s, &tab, &err), 0);
	static const char *const lines[] = {
	    /* regr: "no" for all, 3 samples < the 6 the regression rule
	     * needs (docs/METHOD.md, "Valid for regression"). */
	    "c1                                 ref    pass    no           3           10.0           "
	    "20.0           20.0\n",
	    "c1                                 mve    pass    no           3            5.0            "
	    "5.0            6.7           20.0    3.000x\n",
	    "c2                                 mve    FAIL    no           -  (",
	    "counts in ns; speedup = ref mean / candidate mean (> 1: faster)\n",
	    "geometric mean of mve speedups over 1 cases: 3.000x (",
	    "1 implementation(s) failed correctness and were not timed\n"};
	for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
		if (strstr(tab, lines[i]) == NULL)
			fail_msg("no '%s' in the table:\n%s", lines[i], tab);
	free(tab);
	json_decref(sec);
	ergon_kernels_summary_cleanup(&s);
	ergon_kernels_summary_cleanup(&s); /* a second cleanup is harmless */
	/* Repetitions: ref's counts 10, 20 | 30, 12 | 22, 31 in repetitions
	 * 1 | 2 | 3 have the medians 15, 21 and 26.5, whose mean is 62.5 / 3. */
	struct ergon_kernels_data *dr = NULL;
	assert_int_equal(ergon_kernels_data_new(&dr, &err), 0);
	const double rc3[] = {10, 20, 30, 12, 22, 31};
	for (unsigned i = 0; i < 6; i++)
		assert_int_equal(ergon_kernels_add_rep(dr, "c", "ref", 1, rc3[i], i / 2 + 1, &err),
				 0);
	json_t *rsec = NULL;
	assert_int_equal(ergon_kernels_summarize(dr, NULL, NULL, &rsec, &err), 0);
	struct ergon_kernels_summary rs;
	assert_int_equal(ergon_kernels_summary_read(rsec, &rs, &err), 0);
	assert_int_equal(rs.cases[0].impls[0].repetitions, 3);
	assert_true(fabs(rs.cases[0].impls[0].repeat_mean - 62.5 / 3) <= 1e-12);
	TS_ASSERT_EXACT(rs.cases[0].impls[0].median, 21); /* of all six: (20 + 22) / 2 */
	/* The medians' sd: mean 125/6, squared deviations (35/6)^2 + (1/6)^2 +
	 * (34/6)^2 = 2382/36 over 2 degrees of freedom; the 95 % interval of
	 * their mean is t(0.975, 2) = 4.302652729749464 standard errors wide
	 * on each side. */
	const struct ergon_kernel_impl_result *ri = &rs.cases[0].impls[0];
	double sd = sqrt(2382.0 / 72.0), half = 4.302652729749464 * sd / sqrt(3.0);
	assert_true(fabs(ri->repeat_sd - sd) <= 1e-12 * sd);
	if (!(fabs((ri->repeat_ci_hi - ri->repeat_ci_lo) / 2 - half) <= 1e-6 * half))
		fail_msg("interval half-width %.12g, by hand %.12g",
			 (ri->repeat_ci_hi - ri->repeat_ci_lo) / 2, half);
	char *rtab = NULL;
	assert_int_equal(ergon_kernels_summary_table(&rs, &rtab, &err), 0);
	char *rline = ts_strf("c [ref]: median over 3 repetitions %.1f ± %.1f (95 %% interval of "
			      "their mean %.1f, sd %.1f)",
			      62.5 / 3, half, 62.5 / 3, sd);
	if (strstr(rtab, rline) == NULL)
		fail_msg("no '%s' in\n%s", rline, rtab);
	free(rline);
	free(rtab);
	ergon_kernels_summary_cleanup(&rs);
	json_decref(rsec);
	ergon_kernels_data_free(dr);
	/* Nine counts of 1 and one of 1000: median 1, its interval [1, 1] (the
	 * 2nd to 9th order statistics), mean 100.9 outside it; quartiles 1
	 * and 1, so 1000 is above the upper fence: one slow outlier. */
	struct ergon_kernels_data *dd = NULL;
	assert_int_equal(ergon_kernels_data_new(&dd, &err), 0);
	for (int i = 0; i < 10; i++)
		assert_int_equal(ergon_kernels_add(dd, "d", "ref", 1, i == 9 ? 1000 : 1, &err), 0);
	json_t *dsec = NULL;
	assert_int_equal(ergon_kernels_summarize(dd, NULL, NULL, &dsec, &err), 0);
	struct ergon_kernels_summary ds;
	assert_int_equal(ergon_kernels_summary_read(dsec, &ds, &err), 0);
	const struct ergon_kernel_impl_result *di = &ds.cases[0].impls[0];
	assert_true(di->mean_disagrees);
	assert_int_equal(di->outliers_high, 1);
	assert_int_equal(di->outliers_low, 0);
	assert_true(fabs(di->mean - 100.9) <= 1e-12 * 100.9);
	TS_ASSERT_EXACT(di->median, 1);
	char *dtab = NULL;
	assert_int_equal(ergon_kernels_summary_table(&ds, &dtab, &err), 0);
	assert_non_null(strstr(dtab, "d [ref]: the mean 100.9 lies outside the median's interval "
				     "[1.0, 1.0]; 1 slow and 0 fast outliers (Tukey's fences): "
				     "trust the median (1.0)\n"));
	free(dtab);
	ergon_kernels_summary_cleanup(&ds);
	json_decref(dsec);
	ergon_kernels_data_free(dd);
	/* Not a section, and a name longer than any collection takes. */
	assert_int_equal(ergon_kernels_summary_read(NULL, &s, &err), ERGON_EPARSE);
	ergon_err_clear(&err); /* the first error's message is kept */
	char longname[ERGON_KERNELS_NAME_MAX + 2];
	memset(longname, 'x', sizeof longname - 1);
	longname[sizeof longname - 1] = '\0';
	json_t *bad = json_pack("{s:s, s:[{s:s}]}", "baseline", "ref", "cases", "case", longname);
	assert_int_equal(ergon_kernels_summary_read(bad, &s, &err), ERGON_EPARSE);
	assert_non_null(strstr(err.msg, "cases[0].case is longer than"));
	ergon_kernels_summary_cleanup(&s);
	json_decref(bad);
	ergon_kernels_data_free(d);
}

static void analyze_typed(void **state)
{
	(void)state;
	const char *shared = getenv("ERGON_SHARED_DIR");
	assert_non_null(shared);
	char *jls = ts_strf("%s/fixtures/jls/shared_basic.jls", shared);
	char *exp = ts_strf("%s/fixtures/jls/shared_basic.expected.json", shared);
	char *dir = ts_tmpdir();
	struct ergon_analyze_options o = {.jls_path = jls, .out_dir = dir, .force = 1};
	struct ergon_power_summary p;
	struct ergon_err err = {0};
	if (ergon_analyze_run(&o, 0, NULL, &p, NULL, &err) != 0)
		fail_msg("analyze: %s", err.msg);
	json_error_t je;
	json_t *ref = json_load_file(exp, 0, &je);
	assert_non_null(ref);
	const json_t *w = json_array_get(json_object_get(ref, "gate_windows"), 0);
	assert_true(p.present);
	assert_int_equal(p.gated_window_count, 1);
	assert_int_equal(json_array_size(json_object_get(ref, "gate_windows")), 1);
	static const char *const pairs[][2] = {{"duration_s", "gated_duration_s"},
					       {"energy_j", "energy_j"},
					       {"charge_c", "charge_c"},
					       {"mean_current_a", "avg_current_a"},
					       {"mean_power_w", "avg_power_w"}};
	const double got[] = {p.gated_duration_s, p.energy_j, p.charge_c, p.avg_current_a,
			      p.avg_power_w};
	for (size_t i = 0; i < 5; i++) {
		double want = json_number_value(json_object_get(w, pairs[i][0]));
		if (!(fabs(got[i] - want) <= 1e-9 * fabs(want)))
			fail_msg("%s: %.17g, the reference library says %.17g", pairs[i][1], got[i],
				 want);
	}
	/* A recording without firmware facts knows no inference count. */
	assert_true(p.per_inference_omitted);
	assert_true(isnan(p.energy_per_inference_j));
	assert_int_equal(p.inference_count, 0);
	json_decref(ref);
	ts_tmpdir_remove(dir);
	free(dir);
	free(jls);
	free(exp);
}

static void profile_typed(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	struct ergon_config cfg;
	struct ergon_err err = {0};
	assert_int_equal(ergon_config_init(&cfg), 0);
	char *kv = ts_strf("output.dir=%s", dir);
	assert_int_equal(ergon_config_set(&cfg, "target.board=sim", ERGON_CFG_CLI, &err), 0);
	assert_int_equal(ergon_config_set(&cfg, "power.enabled=true", ERGON_CFG_CLI, &err), 0);
	assert_int_equal(ergon_config_set(&cfg, kv, ERGON_CFG_CLI, &err), 0);
	free(kv);
	if (ergon_config_resolve(&cfg, &err) != 0)
		fail_msg("resolve: %s", err.msg);
	struct ergon_profile_opts o = {.cfg = &cfg, .out_dir = dir};
	struct ergon_profile_result res;
	json_t *summary = NULL;
	if (ergon_profile_run(&o, &res, &summary, &err) != 0)
		fail_msg("profile: %s", err.msg);
	assert_int_equal(res.pmu_status, ERGON_PROFILE_STAGE_OK);
	assert_int_equal(res.power_status, ERGON_PROFILE_STAGE_OK);
	assert_true(res.valid);
	assert_int_equal(res.verdict.kind, ERGON_VERDICT_VALID);
	assert_int_equal(res.provenance, ERGON_PROV_SYNTHETIC);
	assert_true(res.layers > 0);
	assert_int_equal(res.layers, json_array_size(json_object_get(
					 json_object_get(summary, "profile"), "layers")));
	const struct ergon_power_summary *p = &res.power;
	assert_true(p->present);
	assert_false(p->per_inference_omitted);
	assert_int_equal(p->inference_count, 5000);
	if (!(fabs(p->energy_per_inference_u_j - 3.6e-10) <= 1e-9 * 3.6e-10))
		fail_msg("uncertainty %.17g, by hand 3.6e-10", p->energy_per_inference_u_j);
	if (!(fabs(p->energy_per_inference_j - 9e-6) <= p->energy_per_inference_u_j))
		fail_msg("energy per inference %.17g, by hand 9e-6 +- 3.6e-10",
			 p->energy_per_inference_j);
	assert_string_equal(res.report_id,
			    json_string_value(json_object_get(summary, "report_id")));
	json_decref(summary);
	ergon_config_cleanup(&cfg);
	ts_tmpdir_remove(dir);
	free(dir);
}


/* The reference layer with this id, or NULL. */
static const json_t *ref_layer(const json_t *layers, int64_t id)
{
	size_t i;
	const json_t *L;
	json_array_foreach(layers, i, L)
	{
		if (json_integer_value(json_object_get(L, "id")) == id)
			return L;
	}
	return NULL;
}

static void hpx_parse_typed(void **state)
{
	(void)state;
	const char *shared = getenv("ERGON_SHARED_DIR");
	assert_non_null(shared);
	char *log = ts_strf("%s/fixtures/hpx/basic.hpx.txt", shared);
	char *exp = ts_strf("%s/fixtures/hpx/basic.median.expected.json", shared);
	char *dir = ts_tmpdir();
	struct ergon_hpx_report_opts o = {.out_dir = dir,
					  .log_path = log,
					  .recording = "measured",
					  .aggregation = ERGON_HPX_AGG_MEDIAN};
	struct ergon_hpx_run_result res;
	json_t *summary = NULL;
	struct ergon_err err = {0};
	if (ergon_hpx_parse_run(log, &o, &res, &summary, &err) != 0)
		fail_msg("parse: %s", err.msg);
	json_error_t je;
	json_t *ref = json_load_file(exp, 0, &je);
	assert_non_null(ref);
	const json_t *rl = json_object_get(json_object_get(ref, "result"), "layers");
	assert_int_equal(res.layers.n, json_array_size(rl));
	assert_int_equal(res.layers.n, 5);
	double total = 0;
	for (size_t i = 0; i < res.layers.n; i++) {
		const struct ergon_pmu_layer *L = &res.layers.layers[i];
		assert_int_equal(L->id.kind, ERGON_PMU_INT);
		const json_t *R = ref_layer(rl, L->id.i);
		assert_non_null(R);
		assert_int_equal(L->op.kind, ERGON_PMU_TEXT);
		assert_string_equal(L->op.text, json_string_value(json_object_get(R, "op")));
		assert_true(L->has_cycles);
		TS_ASSERT_EXACT(L->cycles, json_number_value(json_object_get(R, "cycles")));
		assert_int_equal(L->overflow, json_is_true(json_object_get(R, "overflow")));
		const json_t *rc = json_object_get(R, "counters");
		assert_int_equal(L->ncounters, json_object_size(rc));
		for (size_t k = 0; k < L->ncounters; k++) {
			const json_t *v = json_object_get(rc, L->counters[k].name);
			if (v == NULL)
				fail_msg("layer %lld: counter %s not in the reference",
					 (long long)L->id.i, L->counters[k].name);
			TS_ASSERT_EXACT(L->counters[k].value, json_number_value(v));
		}
		total += json_number_value(json_object_get(R, "cycles"));
	}
	/* The top layers: the reference's cycles sorted here, most first. */
	TS_ASSERT_EXACT(res.total_cycles, total);
	assert_int_equal(res.n_top, 5);
	double prev = INFINITY;
	for (size_t t = 0; t < res.n_top; t++) {
		const struct ergon_hpx_top_layer *T = &res.top[t];
		const json_t *R = ref_layer(rl, T->id.i);
		assert_non_null(R);
		double c = json_number_value(json_object_get(R, "cycles"));
		TS_ASSERT_EXACT(T->cycles, c);
		assert_true(c <= prev);
		prev = c;
		for (size_t i = 0; i < json_array_size(rl); i++)
			if (json_number_value(json_object_get(json_array_get(rl, i), "cycles")) > c)
				assert_true(t > 0); /* only the first has none above it */
		if (!(fabs(T->pct - 100.0 * c / total) <= 1e-9))
			fail_msg("top %zu: %.17g %%, by hand %.17g", t, T->pct, 100.0 * c / total);
	}
	assert_true(res.complete);
	assert_int_equal(res.overflow_detected,
			 json_is_true(json_object_get(json_object_get(ref, "result"),
						      "overflow_detected")));
	assert_int_equal(res.aggregation, ERGON_HPX_AGG_MEDIAN);
	assert_int_equal(res.provenance, ERGON_PROV_REPLAYED);
	assert_int_equal(res.recording, ERGON_PROV_MEASURED);
	assert_int_equal(res.verdict.kind, ERGON_VERDICT_VALID);
	assert_int_equal(res.capture_end, ERGON_HPX_END_NONE);
	assert_string_equal(res.log_path, log);
	struct stat st;
	assert_int_equal(stat(log, &st), 0);
	assert_int_equal(res.log_bytes, (unsigned long long)st.st_size);
	char *cmd = ts_strf("sha256sum '%s'", log);
	FILE *ps = popen(cmd, "r");
	assert_non_null(ps);
	char want_sha[65] = "";
	assert_int_equal(fscanf(ps, "%64s", want_sha), 1);
	pclose(ps);
	free(cmd);
	assert_string_equal(res.log_sha256, want_sha);
	char *spath = ts_strf("%s/summary.json", dir);
	assert_string_equal(res.summary_path, spath);
	/* The same document as written, and a loaded one reads the same. */
	assert_string_equal(res.report_id,
			    json_string_value(json_object_get(summary, "report_id")));
	json_t *loaded = NULL;
	assert_int_equal(ergon_artifact_load(spath, 64u << 20, &loaded, &err), 0);
	struct ergon_hpx_run_result again;
	assert_int_equal(ergon_hpx_run_result_read(loaded, &again, &err), 0);
	assert_string_equal(again.report_id, res.report_id);
	assert_int_equal(again.layers.n, res.layers.n);
	TS_ASSERT_EXACT(again.total_cycles, res.total_cycles);
	assert_string_equal(again.summary_path, ""); /* not known to a reader */
	ergon_hpx_run_result_cleanup(&again);
	ergon_hpx_run_result_cleanup(&again); /* a second cleanup is harmless */
	json_decref(loaded);
	free(spath);
	json_decref(summary);
	json_decref(ref);
	ergon_hpx_run_result_cleanup(&res);
	/* A summary of something else is refused, named. */
	json_t *other = json_pack("{s:s}", "kind", "ergon.report");
	ergon_err_clear(&err);
	assert_int_equal(ergon_hpx_run_result_read(other, &again, &err), ERGON_EPARSE);
	assert_non_null(strstr(err.msg, "no \"profile\""));
	ergon_hpx_run_result_cleanup(&again);
	json_decref(other);
	ts_tmpdir_remove(dir);
	free(dir);
	free(exp);
	free(log);
}

/* test_parse_truncated's "mid" log: iterations 0 and 1 complete, the cut
 * inside a row of iteration 2 (dropped). */
static const char cut_log[] =
    "--- HPX_START ---\n--- HPX_PRESET cpu_0 ---\n--- HPX_ITER 0 ---\n"
    "\"Layer\",\"Op\",\"ARM_PMU_CPU_CYCLES\",\"ARM_PMU_INST_RETIRED\",\"overflow\"\n"
    "0,CONV_2D,100,10,0\n1,ADD,40,4,0\n--- HPX_ITER 1 ---\n"
    "\"Layer\",\"Op\",\"ARM_PMU_CPU_CYCLES\",\"ARM_PMU_INST_RETIRED\",\"overflow\"\n"
    "0,CONV_2D,300,30,0\n1,ADD,60,6,0\n--- HPX_ITER 2 ---\n"
    "\"Layer\",\"Op\",\"ARM_PMU_CPU_CYCLES\",\"ARM_PMU_INST_RETIRED\",\"overflow\"\n"
    "0,CONV_2D,500,50,0\n1,AD";

static void check_cut(const struct ergon_hpx_run_result *r)
{
	assert_false(r->complete);
	assert_int_equal(r->verdict.kind, ERGON_VERDICT_DEGRADED);
	assert_int_equal(r->validity, ERGON_INTEGRITY_DEGRADED);
	assert_int_equal(r->layers.n, 2);
	/* Medians by hand: (100 + 300) / 2, (10 + 30) / 2; (40 + 60) / 2, (4 + 6) / 2. */
	const double want[2][2] = {{200, 20}, {50, 5}};
	for (size_t i = 0; i < 2; i++) {
		const struct ergon_pmu_layer *L = &r->layers.layers[i];
		assert_int_equal(L->ncounters, 2);
		assert_string_equal(L->counters[0].name, "ARM_PMU_CPU_CYCLES");
		TS_ASSERT_EXACT(L->counters[0].value, want[i][0]);
		assert_string_equal(L->counters[1].name, "ARM_PMU_INST_RETIRED");
		TS_ASSERT_EXACT(L->counters[1].value, want[i][1]);
		TS_ASSERT_EXACT(L->cycles, want[i][0]);
	}
	TS_ASSERT_EXACT(r->total_cycles, 250);
	assert_int_equal(r->n_top, 2);
	assert_string_equal(r->top[0].op.text, "CONV_2D");
	TS_ASSERT_EXACT(r->top[0].pct, 80);
	TS_ASSERT_EXACT(r->top[1].pct, 20);
	const struct ergon_issue_entry *inc = NULL;
	for (size_t i = 0; i < r->issues.n; i++)
		if (strcmp(r->issues.items[i].code, "pmu.incomplete") == 0)
			inc = &r->issues.items[i];
	assert_non_null(inc);
	assert_int_equal(inc->severity, ERGON_SEV_WARNING);
	const struct ergon_issue_field *bytes = ergon_issue_entry_field(inc, "bytes");
	const struct ergon_issue_field *mid = ergon_issue_entry_field(inc, "cut_mid_line");
	assert_non_null(bytes);
	assert_int_equal(bytes->kind, ERGON_IF_INT);
	assert_int_equal(bytes->i, (int64_t)(sizeof cut_log - 1));
	assert_non_null(mid);
	assert_int_equal(mid->kind, ERGON_IF_BOOL);
	assert_int_equal(mid->i, 1);
	assert_null(ergon_issue_entry_field(inc, "no_such_field"));
}

static void hpx_cut_typed(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *log = ts_strf("%s/mid.hpx", dir);
	assert_int_equal(ts_write_file(log, cut_log, sizeof cut_log - 1), 0);
	char *out1 = ts_strf("%s/parsed", dir), *out2 = ts_strf("%s/captured", dir);
	struct ergon_hpx_report_opts o = {
	    .out_dir = out1, .log_path = log, .aggregation = ERGON_HPX_AGG_MEDIAN};
	struct ergon_hpx_run_result res;
	struct ergon_err err = {0};
	if (ergon_hpx_parse_run(log, &o, &res, NULL, &err) != 0)
		fail_msg("parse: %s", err.msg);
	check_cut(&res);
	assert_int_equal(res.recording, 0); /* unknown: not stated */
	assert_int_equal(res.capture_end, ERGON_HPX_END_NONE);
	ergon_hpx_run_result_cleanup(&res);
	/* The same bytes captured from a file: the source ends first. */
	char *spec = ts_strf("file:%s", log), *clog = ts_strf("%s/capture.log", dir);
	struct ergon_hpx_capture_opts co = {
	    .transport = spec, .log_path = clog, .timeout_s = 60, .heartbeat_s = 60};
	o.out_dir = out2;
	o.log_path = clog;
	if (ergon_hpx_capture_run(&co, &o, &res, NULL, &err) != 0)
		fail_msg("capture: %s", err.msg);
	check_cut(&res);
	assert_int_equal(res.capture_end, ERGON_HPX_END_OF_SOURCE);
	assert_int_equal(res.capture_bytes, sizeof cut_log - 1);
	assert_true(res.capture_elapsed_s >= 0);
	assert_int_equal(res.log_bytes, sizeof cut_log - 1);
	ergon_hpx_run_result_cleanup(&res);
	free(spec);
	free(clog);
	free(out1);
	free(out2);
	free(log);
	ts_tmpdir_remove(dir);
	free(dir);
}

/* test_ppk2_cli's simulated waveform and its quantisation by hand: 1 mA
 * on 10.15 ohm = 230.97 steps of 4 x 1.8 V / 163840 -> 231; 10 mA ->
 * 2310. */
#define PPK2_STEP_V (4.0 * 1.8 / 163840.0)
#define PPK2_I1 (231 * PPK2_STEP_V / 10.15)
#define PPK2_I2 (2310 * PPK2_STEP_V / 10.15)

static double ppk2_current(uint64_t k, void *ctx)
{
	(void)ctx;
	return k >= 50000 && k < 250000 ? 0.010 : 0.001;
}

static int ppk2_range(uint64_t k, void *ctx)
{
	(void)k;
	(void)ctx;
	return 2;
}

static void record_typed(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	struct ts_ppk2_sim_cfg c = {.current_a = ppk2_current,
				    .range = ppk2_range,
				    .samples = 300000,
				    .n_gaps = 1,
				    .gap_at = {280000},
				    .gap_len = {40}};
	const char *port = NULL;
	struct ts_ppk2_sim *sim = ts_ppk2_sim_start(&c, &port);
	assert_non_null(sim);
	char *spec = ts_strf("ppk2:%s", port);
	char *jls = ts_strf("%s/r.jls", dir);
	const char *kv[] = {"vdd_mv=3000", NULL};
	struct ergon_record_options o = {
	    .instrument_spec = spec, .instrument_opts = {.kv = kv}, .out_path = jls, .duration_s = 3};
	struct ergon_record_result res;
	struct ergon_err err = {0};
	if (ergon_record_run(&o, &res, &err) != 0)
		fail_msg("record: %s", err.msg);
	if (res.stop != ERGON_RECORD_DURATION)
		fail_msg("stopped: %d %s", res.stop, res.stop_reason);
	assert_true(res.complete);
	assert_int_equal(res.samples_kept, 300000);
	assert_int_equal(res.dropped, 40);
	TS_ASSERT_EXACT(res.elapsed_s, 3.0);
	TS_ASSERT_EXACT(res.sample_rate_hz, 100000.0);
	/* Finite samples: 200000 at 10 mA, 99960 at 1 mA (40 lost in the gap). */
	double want_a = (200000 * PPK2_I2 + 99960 * PPK2_I1) / 299960;
	if (!(fabs(res.mean_current_a - want_a) <= 1e-6 * want_a))
		fail_msg("mean current %.9g A, by hand %.9g A", res.mean_current_a, want_a);
	assert_string_equal(res.out_path, jls);
	assert_int_equal(res.provenance, ERGON_PROV_SYNTHETIC);
	assert_int_equal(res.instrument.provenance, ERGON_PROV_SYNTHETIC);
	assert_string_equal(res.instrument.vendor, "Nordic Semiconductor");
	assert_string_equal(res.instrument.clock, "instrument");
	assert_true(ergon_issue_list_has(&res.issue_list, "instrument.samples_dropped"));
	assert_true(ergon_issue_list_has(&res.issue_list, "instrument.unvalidated_driver"));
	struct ergon_verdict v;
	ergon_verdict_record(&res, &v);
	assert_int_equal(v.kind, ERGON_VERDICT_DEGRADED);
	/* The file holds what the result says (stat(2) for its size). */
	struct stat st;
	assert_int_equal(stat(jls, &st), 0);
	assert_int_equal(res.bytes, (uint64_t)st.st_size);
	ergon_record_result_cleanup(&res);
	ergon_record_result_cleanup(&res); /* a second cleanup is harmless */
	ts_ppk2_sim_stop(sim);
	free(spec);
	free(jls);
	ts_tmpdir_remove(dir);
	free(dir);
}

static void validate_typed(void **state)
{
	(void)state;
	const char *shared = getenv("ERGON_SHARED_DIR");
	assert_non_null(shared);
	char *dir = ts_tmpdir();
	char *models = ts_strf("%s/models", dir), *out = ts_strf("%s/out", dir);
	char *junit = ts_strf("%s/junit.xml", dir);
	char *src = ts_strf("%s/fixtures/models/ad01_int8.tflite", shared);
	char *good = ts_strf("%s/ad01_int8.tflite", models), *cut = ts_strf("%s/cut.tflite", models);
	assert_int_equal(mkdir(models, 0755), 0);
	size_t len = 0;
	char *bytes = ts_read_file(src, &len);
	assert_non_null(bytes);
	assert_true(len > 100);
	assert_int_equal(ts_write_file(good, bytes, len), 0);
	assert_int_equal(ts_write_file(cut, bytes, 100), 0);
	free(bytes);
	struct ergon_validate_opts o = {
	    .board = "sim", .models_dir = models, .out_dir = out, .junit_path = junit};
	struct ergon_validate_result res;
	struct ergon_err err = {0};
	if (ergon_validate_run(&o, &res, &err) != 0)
		fail_msg("validate: %s", err.msg);
	assert_int_equal(res.models, 2);
	assert_int_equal(res.tests, 6);
	assert_int_equal(res.failures, 0);
	assert_int_equal(res.errors, 1);
	assert_int_equal(res.skipped, 2);
	assert_false(res.interrupted);
	assert_non_null(res.per_model);
	const struct ergon_validate_model *a = &res.per_model[0], *c = &res.per_model[1];
	assert_string_equal(a->name, "ad01_int8");
	assert_int_equal(a->provenance, ERGON_PROV_SYNTHETIC);
	assert_int_equal(a->n_checks, 3);
	static const char *const names[] = {"profile", "correctness", "integrity"};
	for (size_t k = 0; k < 3; k++) {
		assert_string_equal(a->checks[k].name, names[k]);
		if (a->checks[k].outcome != ERGON_VALIDATE_PASS)
			fail_msg("ad01_int8 %s: %d %s", names[k], a->checks[k].outcome,
				 a->checks[k].message);
		assert_true(a->checks[k].time_s >= 0);
	}
	assert_string_equal(c->name, "cut");
	assert_int_equal(c->provenance, 0); /* no summary */
	assert_int_equal(c->n_checks, 3);
	assert_string_equal(c->checks[0].name, "profile");
	assert_int_equal(c->checks[0].outcome, ERGON_VALIDATE_ERROR);
	assert_non_null(strstr(c->checks[0].message, "cut.tflite"));
	for (size_t k = 1; k < 3; k++) {
		assert_string_equal(c->checks[k].name, names[k]);
		assert_int_equal(c->checks[k].outcome, ERGON_VALIDATE_SKIPPED);
		assert_string_equal(c->checks[k].message, "not checked: the profile did not complete");
	}
	/* The XML says the same. */
	char *xml = ts_read_file(junit, NULL);
	assert_non_null(xml);
	assert_non_null(strstr(xml, "tests=\"6\" failures=\"0\" errors=\"1\" skipped=\"2\""));
	free(xml);
	ergon_validate_result_cleanup(&res);
	ergon_validate_result_cleanup(&res); /* a second cleanup is harmless */
	assert_null(res.per_model);
	assert_int_equal(res.tests, 6); /* the counts stay */
	free(good);
	free(cut);
	free(src);
	free(junit);
	free(out);
	free(models);
	ts_tmpdir_remove(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(run_typed),
	    cmocka_unit_test(kernels_typed),
	    cmocka_unit_test(analyze_typed),
	    cmocka_unit_test(profile_typed),
	    cmocka_unit_test(hpx_parse_typed),
	    cmocka_unit_test(hpx_cut_typed),
	    cmocka_unit_test(record_typed),
	    cmocka_unit_test(validate_typed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
