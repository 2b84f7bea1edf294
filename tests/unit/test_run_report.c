/* The report: figures from a hand-built session result (values computed by
 * hand below), verify on the sealed report, named first differing field,
 * decimation with exact integrals. */
#include "ergon/artifact.h"
#include "ergon/issues.h"
#include "ergon/report.h"
#include "test_support.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NEAR(a, b) assert_true(fabs((double)(a) - (double)(b)) < 1e-9 * (1 + fabs((double)(b))))

static const struct ergon_instrument_driver fake_drv = {.name = "fake", .longname = "fake"};
static const struct ergon_workload_driver fake_wl_drv = {.name = "fake", .longname = "fake"};

/* Idle: t = 0, 0.5, 1.0 at 1 W. Load [1.5, 3.5]: t = 1.5, 2.0, 2.5, 3.5 at
 * 3 W. Windows [1.5, 2.5) and [2.5, 3.5]. Invocations of 0.1 s starting
 * 1.5, 1.7, 1.9, 2.1 (window 0: 4 ops) and 2.5, 2.9 (window 1: 2 ops). */
static double st[] = {0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.5};
static double sp[] = {1, 1, 1, 3, 3, 3, 3};
static double stemp[] = {40, 40, 40, 50, 55, 60, 70};
static double ist[] = {1.5, 1.7, 1.9, 2.1, 2.5, 2.9};
static double il[] = {0.1, 0.1, 0.1, 0.1, 0.1, 0.1};
static double edges[] = {1.5, 2.5, 3.5};

static json_t *build(size_t max_embedded, int with_temp)
{
	struct ergon_instrument inst = {.driver = &fake_drv};
	inst.identity.accuracy_pct = 1.0;
	inst.identity.resolution_w = 0.01;
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
	    .sample_t_s = st,
	    .sample_power_w = sp,
	    .sample_temp_c = stemp,
	    .n_samples = 7,
	    .has_temp = with_temp,
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
						   .sample_hz = 2},
				       .throttle_threshold = 0.15,
				       .throttle_windows = 1,
				       .ambient_c = NAN,
				       .max_embedded_samples = max_embedded};
	json_t *rep = NULL;
	struct ergon_err err = {0};
	int rc = ergon_report_build(&cfg, &inst, &wl, &res, &rep, &err);
	if (rc)
		fprintf(stderr, "build: %s\n", err.msg);
	assert_int_equal(rc, 0);
	assert_int_equal(ergon_artifact_seal(rep, &err), 0);
	return rep;
}

static double fig(const json_t *r, const char *a, const char *b)
{
	return json_number_value(
	    json_object_get(json_object_get(json_object_get(r, "figures"), a), b));
}

static void figures_by_hand(void **state)
{
	(void)state;
	json_t *r = build(0, 1);
	/* Idle: 1 W over 1 s = 1 J; u = 1% * 1 J + 0.01 W * 1 s = 0.02 J. */
	NEAR(fig(r, "idle", "energy_j"), 1.0);
	NEAR(fig(r, "idle", "mean_power_w"), 1.0);
	NEAR(fig(r, "idle", "energy_u_j"), 0.02);
	/* Load: 3 W over 2 s = 6 J; u = 0.06 + 0.02 = 0.08 J -> 0.04 W. */
	NEAR(fig(r, "load", "energy_j"), 6.0);
	NEAR(fig(r, "load", "mean_power_u_w"), 0.04);
	NEAR(fig(r, "load", "peak_power_w"), 3.0);
	/* Saturated: (3 - 1) W x 0.1 s = 0.2 J above idle, 0.3 J total;
	 * u = (0.04 + 0.02) W x 0.1 s = 0.006 J (clock quantum 0 here). */
	NEAR(fig(r, "energy_per_op", "above_idle_j"), 0.2);
	NEAR(fig(r, "energy_per_op", "total_j"), 0.3);
	NEAR(fig(r, "energy_per_op", "above_idle_u_j"), 0.006);
	NEAR(fig(r, "latency", "p50_s"), 0.1);
	NEAR(fig(r, "operations", "count"), 6);
	/* Throughput 4/s then 2/s: below 0.85 x 4 with K = 1 -> onset window
	 * 1 at 1.0 s into the load; tail 2/s, change -50 %. */
	const json_t *tp = json_object_get(json_object_get(r, "figures"), "throughput");
	assert_true(json_is_true(json_object_get(tp, "throttled")));
	NEAR(json_number_value(json_object_get(tp, "onset_t_s")), 1.0);
	NEAR(json_number_value(json_object_get(tp, "change_pct")), -50.0);
	/* A temperature series exists: it is named as evidence. */
	assert_non_null(strstr(json_string_value(json_object_get(tp, "verdict")), "temperature"));
	assert_true(ergon_issue_has(json_object_get(r, "issues"), "run.throttled"));
	/* THROTTLED is a finding (info), not a fault: nothing else is wrong
	 * with this run, so it stays valid. */
	assert_string_equal(json_string_value(json_object_get(
				json_array_get(json_object_get(r, "issues"), 0), "severity")),
			    "info");
	assert_string_equal(json_string_value(json_object_get(r, "integrity")), "valid");
	struct ergon_err err = {0};
	assert_int_equal(ergon_report_verify(r, &err), 0);
	json_decref(r);
}

static void no_temperature_no_evidence(void **state)
{
	(void)state;
	json_t *r = build(0, 0);
	const json_t *tp = json_object_get(json_object_get(r, "figures"), "throughput");
	assert_true(json_is_true(json_object_get(tp, "throttled")));
	assert_null(strstr(json_string_value(json_object_get(tp, "verdict")), "temperature"));
	assert_true(json_is_null(json_object_get(tp, "temperature_evidence")));
	json_decref(r);
}

static void verify_names_first_differing_field(void **state)
{
	(void)state;
	json_t *r = build(0, 1);
	struct ergon_err err = {0};
	/* Edited without resealing: the digest catches it. */
	json_object_set_new(json_object_get(json_object_get(r, "figures"), "load"), "energy_j",
			    json_real(6.5));
	assert_int_equal(ergon_report_verify(r, &err), ERGON_EVERIFY);
	assert_non_null(strstr(err.msg, "report_id"));
	/* Resealed: the recomputation catches it and names the field. */
	ergon_err_clear(&err);
	assert_int_equal(ergon_artifact_seal(r, &err), 0);
	assert_int_equal(ergon_report_verify(r, &err), ERGON_EVERIFY);
	assert_non_null(strstr(err.msg, "figures.load.energy_j"));
	json_decref(r);
	/* A series value edited (and resealed): the figures no longer follow. */
	r = build(0, 1);
	json_t *p =
	    json_object_get(json_object_get(json_object_get(r, "series"), "samples"), "power_w");
	json_array_set_new(p, 4, json_real(4.0));
	ergon_err_clear(&err);
	assert_int_equal(ergon_artifact_seal(r, &err), 0);
	assert_int_equal(ergon_report_verify(r, &err), ERGON_EVERIFY);
	assert_non_null(strstr(err.msg, "figures.load"));
	json_decref(r);
}

static void decimated_report_keeps_exact_integrals(void **state)
{
	(void)state;
	/* 7 samples, at most 4 embedded: k = ceil(7/4) = 2, samples 0, 2, 4, 6
	 * kept; the energies still come from all 7 (exact block). */
	json_t *r = build(4, 1);
	const json_t *t =
	    json_object_get(json_object_get(json_object_get(r, "series"), "samples"), "t_s");
	assert_int_equal(json_array_size(t), 4);
	NEAR(fig(r, "load", "energy_j"), 6.0);
	NEAR(fig(r, "idle", "energy_j"), 1.0);
	assert_true(ergon_issue_has(json_object_get(r, "issues"), "run.samples_decimated"));
	struct ergon_err err = {0};
	assert_int_equal(ergon_report_verify(r, &err), 0);
	/* The exact block edited so it disagrees with the kept samples. */
	json_t *ex =
	    json_object_get(json_object_get(json_object_get(r, "series"), "exact"), "load");
	json_object_set_new(ex, "energy_j", json_real(3.0));
	assert_int_equal(ergon_artifact_seal(r, &err), 0);
	assert_int_equal(ergon_report_verify(r, &err), ERGON_EVERIFY);
	assert_non_null(strstr(err.msg, "series.exact.load"));
	json_decref(r);
}

static void energy_model_refuses_synthetic(void **state)
{
	(void)state;
	json_t *r = build(0, 1);
	const char *actions[] = {"inference"};
	json_t *m = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_energy_model_build(r, actions, 1, 0, &m, &err), ERGON_EREFUSED);
	assert_non_null(strstr(err.msg, "--allow-synthetic"));
	ergon_err_clear(&err);
	assert_int_equal(ergon_energy_model_build(r, actions, 1, 1, &m, &err), 0);
	assert_string_equal(json_string_value(json_object_get(m, "schema")), "measurement-harness/energy-model/v1");
	assert_string_equal(json_string_value(json_object_get(m, "basis")), "above_idle");
	NEAR(json_number_value(json_object_get(json_object_get(m, "values"), "inference")), 0.2);
	NEAR(json_number_value(json_object_get(m, "uncertainty_j_per_operation")), 0.006);
	const char *src = json_string_value(json_object_get(m, "source"));
	assert_non_null(strstr(src, "synthetic — not measured"));
	assert_non_null(strstr(src, json_string_value(json_object_get(r, "report_id"))));
	assert_string_equal(json_string_value(json_object_get(m, "report_id")),
			    json_string_value(json_object_get(r, "report_id")));
	json_decref(m);
	json_decref(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(figures_by_hand),
	    cmocka_unit_test(no_temperature_no_evidence),
	    cmocka_unit_test(verify_names_first_differing_field),
	    cmocka_unit_test(decimated_report_keeps_exact_integrals),
	    cmocka_unit_test(energy_model_refuses_synthetic),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
