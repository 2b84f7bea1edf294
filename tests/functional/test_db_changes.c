/* `ergon db changes` on a 60-point history stored the way a lab stores
 * one (issue 31, "Done when"): 60 `ergon run` reports (in-process on the
 * simulated clock: synthetic idle 0.6 W, seeded noise, every invocation
 * 1/128 s), ingested with `ergon db ingest`, then `ergon db changes
 * energy_per_op.above_idle_j --all --json`:
 *
 *   - device "shift": load 3.00 W for runs 0..29, 3.24 W from run 30 on,
 *     so the energy per operation above idle moves from 2.40 x 1/128 to
 *     2.64 x 1/128 J, +10 % (by hand), at run 30: one shift, found at
 *     point 30, from about 18.75 mJ to about 20.63 mJ, with the report_ids
 *     of runs 29 and 30 on either side;
 *   - device "flat": the same 60 runs at 3.00 W: no shift.
 *
 * The files are named in the reverse order of the runs, so the directory's
 * ingest order is the reverse of the measurement order: the history must
 * follow measurement_time. The points are synthetic (never counted),
 * hence --all; without it the history is empty of counted points and no
 * shift is reported. */
#include "ergon/report.h"
#include "sim_clock.h"
#include "test_support.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static struct ts_sim_clock sim;

static char *run_one(const char *dir, const char *device, int i, double load_w)
{
	char seed_kv[32], load_kv[32];
	snprintf(seed_kv, sizeof seed_kv, "seed=%d", 100 + i);
	snprintf(load_kv, sizeof load_kv, "load_w=%.17g", load_w);
	const char *ikv[] = {seed_kv, load_kv, "idle_w=0.6", "work_s=0.0078125", "drop=0", NULL};
	const char *wkv[] = {NULL};
	/* Named backwards: a directory's ingest order is the reverse of the
	 * order of measurement, which the history must follow. */
	char *out = ts_strf("%s/%s-%02d.json", dir, device, 59 - i);
	struct ergon_run_config cfg = {
	    .device = device,
	    .instrument_spec = "synthetic",
	    .instrument_opts = {.kv = ikv},
	    .workload_spec = "builtin:spin,iters=1",
	    .workload_opts = {.kv = wkv},
	    .session = {.idle_s = 0.25,
			.windows = 2,
			.window_s = 0.25,
			.sampler = ERGON_SAMPLER_INLINE,
			.sample_hz = 128,
			.failure_policy = ERGON_ON_FAILURE_CONTINUE},
	    .throttle_threshold = 0.15,
	    .throttle_windows = 2,
	    .ambient_c = NAN,
	    .out_path = out,
	};
	sim = (struct ts_sim_clock){0};
	ts_sim_clock_install(&sim);
	json_t *rep = NULL;
	struct ergon_err err = {0};
	int rc = ergon_run(&cfg, NULL, &rep, &err);
	ts_sim_clock_remove();
	if (rc)
		fail_msg("ergon_run %s: %s", out, err.msg);
	char *rid = strdup(json_string_value(json_object_get(rep, "report_id")));
	json_decref(rep);
	free(out);
	return rid;
}

static json_t *changes(const char *db, const char *device, int all)
{
	char *out = NULL, *errs = NULL;
	int rc =
	    ts_run_ergon(&out, &errs, "db", "--db", db, "changes", "energy_per_op.above_idle_j",
			 "--device", device, "--json", all ? "--all" : NULL, NULL);
	if (rc != 0)
		fail_msg("db changes: exit %d: %s", rc, errs);
	json_error_t je;
	json_t *j = json_loads(out, 0, &je);
	if (j == NULL)
		fail_msg("db changes: not JSON: %.300s", out);
	free(out);
	free(errs);
	return j;
}

static void shift_found_none_without(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *runs = ts_strf("%s/runs", dir), *db = ts_strf("%s/r.db", dir);
	assert_int_equal(mkdir(runs, 0700), 0);
	char *rid[60];
	for (int i = 0; i < 60; i++) {
		rid[i] = run_one(runs, "shift", i, i < 30 ? 3.00 : 3.24);
		free(run_one(runs, "flat", i, 3.00));
	}
	char *errs = NULL;
	int rc = ts_run_ergon(NULL, &errs, "db", "--db", db, "ingest", runs, NULL);
	if (rc != 0)
		fail_msg("ingest: exit %d: %s", rc, errs);
	free(errs);

	json_t *c = changes(db, "shift", 1);
	assert_int_equal(json_integer_value(json_object_get(c, "points")), 60);
	const json_t *sh = json_object_get(c, "shifts");
	assert_int_equal(json_array_size(sh), 1);
	const json_t *s0 = json_array_get(sh, 0);
	assert_int_equal(json_integer_value(json_object_get(s0, "at")), 30);
	double from = json_number_value(json_object_get(s0, "from"));
	double to = json_number_value(json_object_get(s0, "to"));
	/* 2.40 x 1/128 = 18.75 mJ and 2.64 x 1/128 = 20.625 mJ, up to the
	 * noise (0.02 W uniform per reading averages to well under 1 %). */
	assert_true(fabs(from - 2.40 / 128) < 0.01 * 2.40 / 128);
	assert_true(fabs(to - 2.64 / 128) < 0.01 * 2.64 / 128);
	assert_true(fabs(json_number_value(json_object_get(s0, "change_pct")) - 10.0) < 1.0);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(s0, "before"), "report_id")),
	    rid[29]);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(s0, "after"), "report_id")), rid[30]);
	/* Their times are when they were measured (ergon read the clocks),
	 * in the order of the runs though ingested the other way round. */
	const char *tb = json_string_value(json_object_get(json_object_get(s0, "before"), "time"));
	const char *ta = json_string_value(json_object_get(json_object_get(s0, "after"), "time"));
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(s0, "before"), "time_source")),
	    "measured");
	assert_true(strcmp(tb, ta) < 0);
	assert_null(json_object_get(c, "time_note"));
	print_message("shift found at point %lld: %.6g -> %.6g J (%+.2f %%), penalty %.4g, "
		      "history scatter %.3g J\n",
		      (long long)json_integer_value(json_object_get(s0, "at")), from, to,
		      json_number_value(json_object_get(s0, "change_pct")),
		      json_number_value(json_object_get(c, "penalty")),
		      json_number_value(json_object_get(c, "sigma_data")));
	json_decref(c);

	c = changes(db, "flat", 1);
	assert_int_equal(json_integer_value(json_object_get(c, "points")), 60);
	assert_int_equal(json_array_size(json_object_get(c, "shifts")), 0);
	assert_int_equal(json_array_size(json_object_get(c, "segments")), 1);
	json_decref(c);

	/* Counted points only (the default): none of these synthetic ones. */
	c = changes(db, "shift", 0);
	assert_int_equal(json_integer_value(json_object_get(c, "points")), 0);
	assert_int_equal(json_array_size(json_object_get(c, "shifts")), 0);
	json_decref(c);

	/* The text says where and between which reports. */
	char *out = NULL;
	rc = ts_run_ergon(&out, NULL, "db", "--db", db, "changes", "energy_per_op.above_idle_j",
			  "--device", "shift", "--all", NULL);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "1 shift(s):"));
	assert_non_null(strstr(out, "at point 30,"));
	assert_non_null(strstr(out, rid[29]));
	assert_non_null(strstr(out, rid[30]));
	free(out);
	/* Usage: no --device, an unknown figure (named with the nearest). */
	rc = ts_run_ergon(NULL, &errs, "db", "--db", db, "changes", "energy_per_op.above_idle_j",
			  NULL);
	assert_int_equal(rc, 2);
	free(errs);
	rc = ts_run_ergon(NULL, &errs, "db", "--db", db, "changes", "energy_per_op.above_idle",
			  "--device", "shift", NULL);
	assert_int_equal(rc, 2);
	assert_non_null(strstr(errs, "nearest"));
	free(errs);

	for (int i = 0; i < 60; i++)
		free(rid[i]);
	free(runs);
	free(db);
	ts_tmpdir_remove(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(shift_found_none_without),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
