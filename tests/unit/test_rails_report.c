/* Several rails at once: the session keeps time increasing within each
 * rail (not across rails), the report splits the interleaved stream into
 * one series per rail, every rail gets its own figures, the headline is the
 * total input rail's and never a sum, and verify recomputes every per-rail
 * figure. Expected values are worked out by hand below. */
#include "ergon/artifact.h"
#include "ergon/issues.h"
#include "ergon/report.h"
#include "ergon/session.h"
#include "test_support.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NEAR(a, b) assert_true(fabs((double)(a) - (double)(b)) < 1e-9 * (1 + fabs((double)(b))))

static const struct ergon_instrument_driver fake_drv = {.name = "fake", .longname = "fake"};
static const struct ergon_workload_driver fake_wl_drv = {.name = "fake", .longname = "fake"};

/* Three rails, sampled in turn (rail c 0.1 c s after rail 0), interleaved
 * in time order as the sampler stores them. Idle [0, 1.2], load [1.5, 3.6].
 *   rail 0 (VDD_IN):   idle t 0, 0.5, 1.0 at 1 W      -> 1 W over 1.0 s
 *                      load t 1.5, 2.0, 2.5, 3.5 at 3 W -> 3 W over 2.0 s, 6 J
 *   rail 1 (VDD_CPU):  idle t 0.1, 0.6, 1.1 at 0.5 W  -> 0.5 W over 1.0 s
 *                      load t 1.6, 2.1, 2.6, 3.6 at 2 W -> 2 W over 2.0 s, 4 J
 *   rail 2 (VDD_SOC):  idle t 0.2, 0.7, 1.2 at 0.25 W -> 0.25 W over 1.0 s
 *                      load t 1.7, 2.2, 3.2 at 0.75 W -> 0.75 W over 1.5 s, 1.125 J
 * Six invocations of 0.1 s, saturated: E/op = load W x 0.1 s, above idle
 * (load - idle) W x 0.1 s:
 *   rail 0: total 0.3 J, above idle 0.2 J
 *   rail 1: total 0.2 J, above idle 0.15 J
 *   rail 2: total 0.075 J, above idle 0.05 J
 * A sum of rails would give idle 1.75 W, above idle 0.4 J: never seen. */
static double st[] = {0,   0.1, 0.2, 0.5, 0.6, 0.7, 1.0, 1.1, 1.2, 1.5,
		      1.6, 1.7, 2.0, 2.1, 2.2, 2.5, 2.6, 3.2, 3.5, 3.6};
static double sp[] = {1, 0.5,  0.25, 1, 0.5,  0.25, 1, 0.5,  0.25, 3,
		      2, 0.75, 3,    2, 0.75, 3,    2, 0.75, 3,	   2};
static uint16_t sc[] = {0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1};
static double ist[] = {1.5, 1.7, 1.9, 2.1, 2.5, 2.9};
static double il[] = {0.1, 0.1, 0.1, 0.1, 0.1, 0.1};
static double edges[] = {1.5, 2.5, 3.6};

static json_t *build(int total_rail, size_t max_embedded)
{
	struct ergon_instrument inst = {.driver = &fake_drv};
	inst.identity.accuracy_pct = 1.0;
	inst.identity.resolution_w = 0.01;
	inst.identity.provenance = ERGON_PROV_MEASURED;
	inst.identity.n_rails = 3;
	inst.identity.total_rail = total_rail;
	strcpy(inst.identity.rails[0], total_rail == 0 ? "VDD_IN" : "VDD_GPU_SOC");
	strcpy(inst.identity.rails[1], "VDD_CPU");
	strcpy(inst.identity.rails[2], "VDD_SOC");
	strcpy(inst.identity.clock, "host_monotonic");
	strcpy(inst.identity.integrates, "none");
	struct ergon_workload wl = {.driver = &fake_wl_drv};
	strcpy(wl.description, "fake");
	struct ergon_session_result res = {
	    .status = ERGON_SESSION_COMPLETE,
	    .idle_start_s = 0,
	    .idle_end_s = 1.2,
	    .load_start_s = 1.5,
	    .load_end_s = 3.6,
	    .window_edges_s = edges,
	    .windows_completed = 2,
	    .sample_t_s = st,
	    .sample_power_w = sp,
	    .sample_channel = sc,
	    .n_samples = sizeof(st) / sizeof(st[0]),
	    .n_channels = 3,
	    .inv_start_s = ist,
	    .inv_latency_s = il,
	    .n_inv = 6,
	};
	struct ergon_run_config cfg = {.device = "orin",
				       .workload_spec = "fake:",
				       .session = {.idle_s = 1.2,
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
		fail_msg("build: %s", err.msg);
	assert_int_equal(ergon_artifact_seal(rep, &err), 0);
	return rep;
}

static double at(const json_t *o, const char *a, const char *b)
{
	const json_t *x = json_object_get(json_object_get(o, a), b);
	if (!json_is_number(x))
		fail_msg("%s.%s: not a number", a, b);
	return json_number_value(x);
}

static const json_t *rail(const json_t *r, size_t i)
{
	return json_array_get(json_object_get(json_object_get(r, "figures"), "rails"), i);
}

static void split_per_rail(void **state)
{
	(void)state;
	json_t *r = build(0, 0);
	const json_t *sr = json_object_get(json_object_get(r, "series"), "rails");
	assert_int_equal(json_array_size(sr), 3);
	/* The single-rail column is not written for several rails. */
	assert_null(json_object_get(json_object_get(r, "series"), "samples"));
	const size_t want_n[3] = {7, 7, 6};
	const double want_t0[3] = {0, 0.1, 0.2}, want_tl[3] = {3.5, 3.6, 3.2};
	for (size_t c = 0; c < 3; c++) {
		const json_t *s = json_object_get(json_array_get(sr, c), "samples");
		const json_t *t = json_object_get(s, "t_s");
		assert_int_equal(json_array_size(t), want_n[c]);
		NEAR(json_number_value(json_array_get(t, 0)), want_t0[c]);
		NEAR(json_number_value(json_array_get(t, want_n[c] - 1)), want_tl[c]);
		assert_int_equal(
		    json_integer_value(json_object_get(json_array_get(sr, c), "channel")),
		    (json_int_t)c);
	}
	assert_true(json_is_true(json_object_get(json_array_get(sr, 0), "total_input")));
	assert_true(json_is_false(json_object_get(json_array_get(sr, 1), "total_input")));
	json_decref(r);
}

static void per_rail_figures_by_hand(void **state)
{
	(void)state;
	json_t *r = build(0, 0);
	const double idle_w[3] = {1, 0.5, 0.25}, load_w[3] = {3, 2, 0.75};
	const double load_j[3] = {6, 4, 1.125}, load_span[3] = {2.0, 2.0, 1.5};
	const double total_j[3] = {0.3, 0.2, 0.075}, above_j[3] = {0.2, 0.15, 0.05};
	const char *names[3] = {"VDD_IN", "VDD_CPU", "VDD_SOC"};
	for (size_t c = 0; c < 3; c++) {
		const json_t *f = rail(r, c);
		assert_string_equal(json_string_value(json_object_get(f, "name")), names[c]);
		assert_int_equal(json_is_true(json_object_get(f, "total_input")), c == 0);
		NEAR(at(f, "idle", "mean_power_w"), idle_w[c]);
		NEAR(at(f, "idle", "duration_s"), 1.0);
		NEAR(at(f, "load", "mean_power_w"), load_w[c]);
		NEAR(at(f, "load", "energy_j"), load_j[c]);
		NEAR(at(f, "load", "duration_s"), load_span[c]);
		NEAR(at(f, "energy_per_op", "total_j"), total_j[c]);
		NEAR(at(f, "energy_per_op", "above_idle_j"), above_j[c]);
	}
	/* The headline is VDD_IN's, not a sum (1.75 W idle, 0.4 J above idle). */
	const json_t *fig = json_object_get(r, "figures");
	assert_string_equal(json_string_value(json_object_get(fig, "headline_rail")), "VDD_IN");
	NEAR(at(fig, "idle", "mean_power_w"), 1.0);
	NEAR(at(fig, "load", "mean_power_w"), 3.0);
	NEAR(at(fig, "energy_per_op", "above_idle_j"), 0.2);
	assert_false(ergon_issue_has(json_object_get(r, "issues"), "run.no_total_rail"));
	struct ergon_err err = {0};
	assert_int_equal(ergon_report_verify(r, &err), 0);
	json_decref(r);
}

static void no_total_rail_withholds_headline(void **state)
{
	(void)state;
	json_t *r = build(-1, 0);
	const json_t *fig = json_object_get(r, "figures");
	assert_true(json_is_null(json_object_get(fig, "headline_rail")));
	assert_true(json_is_null(json_object_get(fig, "energy_per_op")));
	assert_null(json_object_get(fig, "idle"));
	assert_null(json_object_get(fig, "load"));
	assert_true(ergon_issue_has(json_object_get(r, "issues"), "run.no_total_rail"));
	assert_string_equal(json_string_value(json_object_get(r, "integrity")), "degraded");
	/* Per-rail figures are all still there. */
	NEAR(at(rail(r, 0), "energy_per_op", "above_idle_j"), 0.2);
	NEAR(at(rail(r, 2), "energy_per_op", "above_idle_j"), 0.05);
	struct ergon_err err = {0};
	assert_int_equal(ergon_report_verify(r, &err), 0);
	/* energy-model has no total rail to export: refused, rails named. */
	json_t *model = NULL;
	const char *act[] = {"inference"};
	assert_int_equal(ergon_energy_model_build(r, act, 1, 0, &model, &err), ERGON_EREFUSED);
	assert_non_null(strstr(err.msg, "VDD_GPU_SOC, VDD_CPU, VDD_SOC"));
	assert_null(model);
	json_decref(r);
}

static void energy_model_names_total_rail(void **state)
{
	(void)state;
	json_t *r = build(0, 0);
	json_t *model = NULL;
	struct ergon_err err = {0};
	const char *act[] = {"inference"};
	assert_int_equal(ergon_energy_model_build(r, act, 1, 0, &model, &err), 0);
	NEAR(json_number_value(json_object_get(json_object_get(model, "values"), "inference")),
	     0.2);
	assert_non_null(strstr(json_string_value(json_object_get(model, "source")),
			       "rail VDD_IN (the module's total input)"));
	json_decref(model);
	json_decref(r);
}

/* Edit one digit of a per-rail figure (resealed): verify names it. */
static void verify_catches_per_rail_edit(void **state)
{
	(void)state;
	const char *fields[] = {"above_idle_j", "mean_power_w", "energy_j"};
	for (size_t f = 0; f < 3; f++) {
		json_t *r = build(0, 0);
		json_t *fr = (json_t *)rail(r, 1);
		json_t *blk = json_object_get(fr, f == 0 ? "energy_per_op" : "load");
		double v = json_number_value(json_object_get(blk, fields[f]));
		/* 0.15 -> 0.16, 2 -> 3, 4 -> 5: the first significant digit. */
		double mag = pow(10, floor(log10(fabs(v))));
		json_object_set_new(blk, fields[f], json_real(v + mag));
		struct ergon_err err = {0};
		assert_int_equal(ergon_artifact_seal(r, &err), 0);
		assert_int_equal(ergon_report_verify(r, &err), ERGON_EVERIFY);
		char want[96];
		snprintf(want, sizeof(want), "figures.rails[1].%s.%s",
			 f == 0 ? "energy_per_op" : "load", fields[f]);
		if (strstr(err.msg, want) == NULL)
			fail_msg("wanted %s named: %s", want, err.msg);
		json_decref(r);
	}
	/* A per-rail series value edited: the figures no longer follow. */
	json_t *r = build(0, 0);
	json_t *p = json_object_get(
	    json_object_get(
		json_array_get(json_object_get(json_object_get(r, "series"), "rails"), 2),
		"samples"),
	    "power_w");
	json_array_set_new(p, 4, json_real(0.85));
	struct ergon_err err = {0};
	assert_int_equal(ergon_artifact_seal(r, &err), 0);
	assert_int_equal(ergon_report_verify(r, &err), ERGON_EVERIFY);
	assert_non_null(strstr(err.msg, "figures.rails[2]"));
	json_decref(r);
}

/* Moving the total-input flag to another rail must not verify. */
static void total_flag_must_match_identity(void **state)
{
	(void)state;
	json_t *r = build(0, 0);
	json_t *sr = json_object_get(json_object_get(r, "series"), "rails");
	json_object_set_new(json_array_get(sr, 0), "total_input", json_false());
	json_object_set_new(json_array_get(sr, 1), "total_input", json_true());
	struct ergon_err err = {0};
	assert_int_equal(ergon_artifact_seal(r, &err), 0);
	assert_int_equal(ergon_report_verify(r, &err), ERGON_EVERIFY);
	assert_non_null(strstr(err.msg, "series.rails[0].total_input"));
	json_decref(r);
}

/* Per-rail decimation: a limit of 3 samples decimates every rail by its
 * own factor (7 -> k 3, 6 -> k 2) and keeps exact integrals per rail. */
static void per_rail_decimation(void **state)
{
	(void)state;
	json_t *r = build(0, 3);
	const json_t *sr = json_object_get(json_object_get(r, "series"), "rails");
	const json_int_t want_k[3] = {3, 3, 2};
	for (size_t c = 0; c < 3; c++) {
		const json_t *ex = json_object_get(json_array_get(sr, c), "exact");
		assert_true(json_is_object(ex));
		assert_int_equal(json_integer_value(json_object_get(ex, "decimation_factor")),
				 want_k[c]);
	}
	/* The figures still come from all samples. */
	NEAR(at(rail(r, 1), "load", "energy_j"), 4.0);
	NEAR(at(rail(r, 2), "energy_per_op", "above_idle_j"), 0.05);
	assert_true(ergon_issue_has(json_object_get(r, "issues"), "run.samples_decimated"));
	struct ergon_err err = {0};
	assert_int_equal(ergon_report_verify(r, &err), 0);
	json_decref(r);
}

/* --- the session keeps time increasing per rail ------------------------ */

/* Three rails read at one instant (the same timestamp for all, as a
 * driver reading them together may stamp them); every 5th read rail 1
 * repeats its last timestamp and a sample on channel 7 (no such rail)
 * comes along: both are refused, the rest kept. */
struct mr {
	long reads, bad;
	double last_t1;
};

static int mr_read(struct ergon_instrument *inst, struct ergon_sample *buf, size_t cap, size_t *n,
		   struct ergon_err *err)
{
	(void)err;
	struct mr *m = inst->priv;
	*n = 0;
	if (cap < 4)
		return 0;
	m->reads++;
	double t = ergon_now_s();
	for (int c = 0; c < 3; c++)
		buf[c] = (struct ergon_sample){
		    .t_s = t, .power_w = 1.0 + c, .fields = ERGON_F_POWER, .channel = (uint16_t)c};
	*n = 3;
	if (m->reads % 5 == 0 && m->last_t1 > 0) {
		buf[1].t_s = m->last_t1;
		buf[3] = (struct ergon_sample){
		    .t_s = t, .power_w = 9, .fields = ERGON_F_POWER, .channel = 7};
		*n = 4;
		m->bad += 2;
	}
	m->last_t1 = buf[1].t_s;
	return 0;
}

static const struct ergon_instrument_driver mr_driver = {
    .name = "mr", .longname = "mr", .read = mr_read};

static int nop_invoke(struct ergon_workload *wl, struct ergon_err *err)
{
	(void)wl;
	(void)err;
	return 0;
}

static const struct ergon_workload_driver nop_driver = {
    .name = "nop", .longname = "nop", .invoke = nop_invoke};

static void session_time_per_rail(void **state)
{
	(void)state;
	struct mr m = {0};
	struct ergon_instrument inst = {.driver = &mr_driver, .priv = &m};
	inst.identity.n_rails = 3;
	struct ergon_workload wl = {.driver = &nop_driver};
	struct ergon_session_config cfg = {.idle_s = 0.03,
					   .windows = 1,
					   .window_s = 0.03,
					   .sampler = ERGON_SAMPLER_INLINE,
					   .sample_hz = 2000,
					   .failure_policy = ERGON_ON_FAILURE_CONTINUE};
	struct ergon_session_result res;
	struct ergon_err err = {0};
	assert_int_equal(ergon_session_run(&cfg, &inst, &wl, &res, &err), 0);
	assert_int_equal(res.n_channels, 3);
	assert_true(m.reads > 10);
	/* Every read gives 3 good samples; the bad ones are refused. */
	assert_int_equal(res.samples_rejected, (size_t)m.bad);
	assert_int_equal(res.n_samples, (size_t)(3 * m.reads - m.bad / 2));
	double last[3] = {-1, -1, -1};
	size_t per[3] = {0};
	for (size_t i = 0; i < res.n_samples; i++) {
		unsigned c = res.sample_channel[i];
		assert_true(c < 3);
		assert_true(res.sample_t_s[i] > last[c]);
		last[c] = res.sample_t_s[i];
		NEAR(res.sample_power_w[i], 1.0 + c);
		per[c]++;
	}
	assert_int_equal(per[0], (size_t)m.reads);
	assert_int_equal(per[1], (size_t)(m.reads - m.bad / 2));
	assert_int_equal(per[2], (size_t)m.reads);
	ergon_session_result_cleanup(&res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(split_per_rail),
	    cmocka_unit_test(per_rail_figures_by_hand),
	    cmocka_unit_test(no_total_rail_withholds_headline),
	    cmocka_unit_test(energy_model_names_total_rail),
	    cmocka_unit_test(verify_catches_per_rail_edit),
	    cmocka_unit_test(total_flag_must_match_identity),
	    cmocka_unit_test(per_rail_decimation),
	    cmocka_unit_test(session_time_per_rail),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
