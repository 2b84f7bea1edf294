/* Review fixes on the run report: an instrument without rated accuracy is
 * flagged (instrument.unrated_accuracy), a documented absolute floor
 * (NVML's +-5 W) enters every energy ±, a replayed report never exports as
 * measured, and the throttle verdict names temperature only when it rose
 * by more than ERGON_THROTTLE_TEMP_RISE_C and the device's own throttle
 * record (NVML clock-event reasons, through the stub library) only when
 * present. Series and values are worked out by hand in the comments. */
#include "ergon/artifact.h"
#include "ergon/instrument.h"
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
 * 3 W. Windows [1.5, 2.5) and [2.5, 3.5]: 4 ops then 2 ops, so with K = 1
 * the run throttles at window 1. */
static double st[] = {0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.5};
static double sp[] = {1, 1, 1, 3, 3, 3, 3};
/* The window means include both edges: window 0 holds samples 1.5, 2.0
 * and 2.5, window 1 holds 2.5 and 3.5.
 * Rising: (50 + 55 + 60) / 3 = 55 -> (60 + 70) / 2 = 65 C, +10 C.
 * Flat: (50 + 51 + 52) / 3 = 51 -> (52 + 53) / 2 = 52.5 C, +1.5 C (< 3 C). */
static double temp_rising[] = {40, 40, 40, 50, 55, 60, 70};
static double temp_flat[] = {50, 50, 50, 50, 51, 52, 53};
static double ist[] = {1.5, 1.7, 1.9, 2.1, 2.5, 2.9};
static double il[] = {0.1, 0.1, 0.1, 0.1, 0.1, 0.1};
static double edges[] = {1.5, 2.5, 3.5};

static json_t *build_with(struct ergon_instrument *inst, double *temp)
{
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
	    .sample_temp_c = temp,
	    .n_samples = 7,
	    .has_temp = temp != NULL,
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
				       .ambient_c = NAN};
	json_t *rep = NULL;
	struct ergon_err err = {0};
	int rc = ergon_report_build(&cfg, inst, &wl, &res, &rep, &err);
	if (rc)
		fail_msg("build: %s", err.msg);
	assert_int_equal(ergon_artifact_seal(rep, &err), 0);
	if (ergon_report_verify(rep, &err))
		fail_msg("verify: %s", err.msg);
	return rep;
}

static json_t *build_fake(double acc, double res_w, double floor_w, int prov)
{
	struct ergon_instrument inst = {.driver = &fake_drv};
	inst.identity.accuracy_pct = acc;
	inst.identity.resolution_w = res_w;
	inst.identity.floor_w = floor_w;
	inst.identity.provenance = prov;
	inst.identity.n_rails = 1;
	strcpy(inst.identity.clock, "host_monotonic");
	strcpy(inst.identity.integrates, "none");
	return build_with(&inst, temp_rising);
}

static double fig(const json_t *r, const char *a, const char *b)
{
	return json_number_value(
	    json_object_get(json_object_get(json_object_get(r, "figures"), a), b));
}

static const char *verdict(const json_t *r)
{
	return json_string_value(json_object_get(
	    json_object_get(json_object_get(r, "figures"), "throughput"), "verdict"));
}

/* accuracy_pct 0 and no floor: the ± is resolution only (idle 0.01 W x
 * 1 s = 0.01 J), so the report says so and is degraded. */
static void unrated_accuracy_is_flagged(void **state)
{
	(void)state;
	json_t *r = build_fake(0.0, 0.01, 0.0, ERGON_PROV_SYNTHETIC);
	NEAR(fig(r, "idle", "energy_u_j"), 0.01);
	assert_true(ergon_issue_has(json_object_get(r, "issues"), "instrument.unrated_accuracy"));
	assert_string_equal(json_string_value(json_object_get(r, "integrity")), "degraded");
	const char *act[] = {"inference"};
	json_t *m = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_energy_model_build(r, act, 1, ERGON_MODEL_ALLOW_SYNTHETIC, &m, &err),
			 0);
	assert_true(json_is_false(json_object_get(m, "accuracy_rated")));
	assert_non_null(strstr(json_string_value(json_object_get(m, "source")), "± unrated"));
	json_decref(m);
	json_decref(r);
	/* Rated (1 %): no such issue, the model says rated. */
	r = build_fake(1.0, 0.01, 0.0, ERGON_PROV_SYNTHETIC);
	assert_false(ergon_issue_has(json_object_get(r, "issues"), "instrument.unrated_accuracy"));
	assert_int_equal(ergon_energy_model_build(r, act, 1, ERGON_MODEL_ALLOW_SYNTHETIC, &m, &err),
			 0);
	assert_true(json_is_true(json_object_get(m, "accuracy_rated")));
	json_decref(m);
	json_decref(r);
}

/* A documented absolute floor of 5 W (NVML) with 1 mW resolution and no
 * percentage: idle u = 0.001 W x 1 s + 5 W x 1 s = 5.001 J; load u =
 * 0.001 x 2 + 5 x 2 = 10.002 J, i.e. 5.001 W over 2 s. Not unrated. */
static void absolute_floor_enters_every_energy(void **state)
{
	(void)state;
	json_t *r = build_fake(0.0, 0.001, 5.0, ERGON_PROV_MEASURED);
	NEAR(fig(r, "idle", "energy_u_j"), 5.001);
	NEAR(fig(r, "load", "energy_u_j"), 10.002);
	NEAR(fig(r, "load", "mean_power_u_w"), 5.001);
	/* Saturated: u = (5.001 + 5.001) W x 0.1 s = 1.0002 J (clock quantum 0). */
	NEAR(fig(r, "energy_per_op", "above_idle_u_j"), 1.0002);
	assert_false(ergon_issue_has(json_object_get(r, "issues"), "instrument.unrated_accuracy"));
	json_decref(r);
}

/* A replayed report (power recorded at another time) is refused without
 * ERGON_MODEL_ALLOW_REPLAYED, whatever else is allowed, and is never
 * labelled measured. */
static void replayed_never_exports_as_measured(void **state)
{
	(void)state;
	json_t *r = build_fake(1.0, 0.01, 0.0, ERGON_PROV_REPLAYED);
	const char *act[] = {"inference"};
	json_t *m = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_energy_model_build(r, act, 1, 0, &m, &err), ERGON_EREFUSED);
	assert_non_null(strstr(err.msg, "--allow-replayed"));
	ergon_err_clear(&err);
	assert_int_equal(ergon_energy_model_build(r, act, 1, ERGON_MODEL_ALLOW_SYNTHETIC, &m, &err),
			 ERGON_EREFUSED);
	ergon_err_clear(&err);
	assert_int_equal(ergon_energy_model_build(r, act, 1, ERGON_MODEL_ALLOW_REPLAYED, &m, &err),
			 0);
	assert_string_equal(json_string_value(json_object_get(m, "provenance")), "replayed");
	const char *src = json_string_value(json_object_get(m, "source"));
	assert_true(strncmp(src, ERGON_REPLAYED_LABEL ":", strlen(ERGON_REPLAYED_LABEL ":")) == 0);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(r, "provenance"), "note")),
	    ERGON_REPLAYED_LABEL);
	json_decref(m);
	json_decref(r);
}

/* Temperature +10 C > 3 C: named as evidence. +1.5 C: the verdict says it
 * did not rise and temperature_evidence is null; still "regressed". */
static void temperature_evidence_only_when_it_rose(void **state)
{
	(void)state;
	json_t *r = build_fake(1.0, 0.01, 0.0, ERGON_PROV_SYNTHETIC);
	assert_non_null(strstr(verdict(r), "throughput regressed"));
	assert_non_null(strstr(verdict(r), "55.0 -> 65.0 C"));
	assert_non_null(strstr(verdict(r), "evidence of a thermal limit"));
	assert_null(strstr(verdict(r), "not evidence"));
	const json_t *tp = json_object_get(json_object_get(r, "figures"), "throughput");
	NEAR(json_number_value(
		 json_object_get(json_object_get(tp, "temperature_evidence"), "last_window_c")),
	     65.0);
	json_decref(r);

	struct ergon_instrument inst = {.driver = &fake_drv};
	inst.identity.accuracy_pct = 1.0;
	inst.identity.provenance = ERGON_PROV_SYNTHETIC;
	inst.identity.n_rails = 1;
	strcpy(inst.identity.clock, "host_monotonic");
	strcpy(inst.identity.integrates, "none");
	r = build_with(&inst, temp_flat);
	assert_non_null(strstr(verdict(r), "throughput regressed"));
	assert_non_null(strstr(verdict(r), "51.0 -> 52.5 C"));
	assert_non_null(strstr(verdict(r), "did not rise by more than 3 C"));
	tp = json_object_get(json_object_get(r, "figures"), "throughput");
	assert_true(json_is_null(json_object_get(tp, "temperature_evidence")));
	assert_null(json_object_get(tp, "device_evidence"));
	assert_null(strstr(verdict(r), "device"));
	json_decref(r);
}

static struct ergon_instrument *open_stub(const char *reasons)
{
	const char *stub = getenv("ERGON_NVML_STUB");
	assert_non_null(stub);
	setenv("ERGON_NVML_LIB", stub, 1);
	unsetenv("STUB_NVML_ENERGY");
	unsetenv("STUB_NVML_POWER");
	if (reasons)
		setenv("STUB_NVML_REASONS", reasons, 1);
	else
		unsetenv("STUB_NVML_REASONS");
	struct ergon_instrument *inst = NULL;
	struct ergon_err err = {0};
	if (ergon_instrument_open("nvml", NULL, &inst, &err))
		fail_msg("open nvml (stub): %s", err.msg);
	assert_int_equal(ergon_instrument_start(inst, &err), 0);
	struct ergon_sample s[4];
	size_t n = 0;
	if (ergon_instrument_read(inst, s, 4, &n, &err))
		fail_msg("read: %s", err.msg);
	return inst;
}

/* The stub answers SW thermal slowdown (0x20) on every poll: one read,
 * one poll, thermal in 1 of 1. With the flat temperature series the
 * verdict names the device's slowdown and says the temperature did not
 * rise. */
static void nvml_thermal_reasons_reach_the_verdict(void **state)
{
	(void)state;
	struct ergon_instrument *inst = open_stub("0x20");
	json_t *r = build_with(inst, temp_flat);
	ergon_instrument_close(inst);
	const json_t *tp = json_object_get(json_object_get(r, "figures"), "throughput");
	const json_t *dev = json_object_get(tp, "device_evidence");
	assert_true(json_is_object(dev));
	assert_int_equal(json_integer_value(json_object_get(dev, "polls")), 1);
	assert_int_equal(json_integer_value(json_object_get(dev, "polls_thermal")), 1);
	assert_int_equal(json_integer_value(json_object_get(dev, "polls_power_cap")), 0);
	assert_int_equal(json_integer_value(json_object_get(dev, "reasons_seen")), 0x20);
	assert_non_null(strstr(verdict(r), "throughput regressed"));
	assert_non_null(strstr(verdict(r), "did not rise"));
	assert_non_null(strstr(verdict(r), "device reported clock slowdown (of 1 polls: thermal "
					   "in 1, power cap in 0, hardware slowdown in 0)"));
	/* NVML carries its +-5 W floor: rated, not flagged. */
	assert_false(ergon_issue_has(json_object_get(r, "issues"), "instrument.unrated_accuracy"));
	json_decref(r);

	/* No reasons: no device evidence, nothing named. */
	inst = open_stub(NULL);
	r = build_with(inst, temp_rising);
	ergon_instrument_close(inst);
	tp = json_object_get(json_object_get(r, "figures"), "throughput");
	assert_null(json_object_get(tp, "device_evidence"));
	assert_null(strstr(verdict(r), "device"));
	assert_non_null(strstr(verdict(r), "evidence of a thermal limit"));
	json_decref(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(unrated_accuracy_is_flagged),
	    cmocka_unit_test(absolute_floor_enters_every_energy),
	    cmocka_unit_test(replayed_never_exports_as_measured),
	    cmocka_unit_test(temperature_evidence_only_when_it_rose),
	    cmocka_unit_test(nvml_thermal_reasons_reach_the_verdict),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
