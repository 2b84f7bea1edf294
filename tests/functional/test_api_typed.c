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
 *   the count, 2 x 1e-4 s x 9 mW / 5000 = 3.6e-10 J. */
#include "ergon/analyze.h"
#include "ergon/artifact.h"
#include "ergon/config.h"
#include "ergon/issues.h"
#include "ergon/kernels.h"
#include "ergon/kernels_run.h"
#include "ergon/profile.h"
#include "ergon/report.h"
#include "sim_clock.h"
#include "test_support.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
	ergon_kernels_summary_cleanup(&rs);
	json_decref(rsec);
	ergon_kernels_data_free(dr);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(run_typed),
	    cmocka_unit_test(kernels_typed),
	    cmocka_unit_test(analyze_typed),
	    cmocka_unit_test(profile_typed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
