/* `ergon parse` and `ergon capture` end to end through the CLI, on the
 * shared fixtures. Expected numbers are the reference parser's (fixture
 * expected JSON) and sums of them done by hand in the comments. */
#include "test_support.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *load(const char *path)
{
	json_error_t je;
	json_t *j = json_load_file(path, 0, &je);
	if (!j)
		print_error("%s: %s\n", path, je.text);
	assert_non_null(j);
	return j;
}

static void parse_writes_summary_and_csv(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *out_dir = ts_strf("%s/out", dir);
	char *log = ts_fixture("hpx/basic.hpx.txt");
	char *out = NULL, *err = NULL;
	int rc = ts_run_ergon(&out, &err, "parse", log, "--out", out_dir, NULL);
	if (rc)
		print_error("%s\n", err);
	assert_int_equal(rc, 0);
	/* basic, median cycles per layer (reference): 856558, 318902, 1283555,
	 * 116409, 6134; total 2581558; top layer 2 at 1283555 / 2581558 =
	 * 49.72 %. */
	assert_non_null(strstr(out, "total cycles 2581558"));
	char *sp = ts_strf("%s/summary.json", out_dir);
	json_t *s = load(sp);
	json_t *prof = json_object_get(s, "profile");
	assert_string_equal(json_string_value(json_object_get(s, "schema")), "ergon.report");
	json_t *prov = json_object_get(s, "provenance");
	assert_string_equal(json_string_value(json_object_get(prov, "kind")), "replayed");
	json_t *rec = json_object_get(prov, "recording");
	assert_string_equal(json_string_value(json_object_get(rec, "provenance")), "unknown");
	/* sha256 of basic.hpx.txt as recorded by the fixture's own metadata */
	assert_string_equal(json_string_value(json_object_get(rec, "sha256")),
			    "dbbdeeb135a89e5c2a4537bf85ee61162e57eb6a94ffb98d5bcb87da26f5622a");
	assert_true(json_number_value(json_object_get(prof, "total_cycles")) == 2581558.0);
	json_t *top0 = json_array_get(json_object_get(prof, "top_layers"), 0);
	assert_int_equal(json_integer_value(json_object_get(top0, "id")), 2);
	assert_true(fabs(json_number_value(json_object_get(top0, "pct")) - 49.720) < 0.001);
	assert_int_equal(json_array_size(json_object_get(prof, "top_layers")), 5);
	json_t *mem = json_object_get(prof, "memory");
	assert_int_equal(json_integer_value(json_object_get(mem, "model_size")), 53412);
	assert_int_equal(json_integer_value(json_object_get(mem, "arena_size")), 262144);
	assert_int_equal(json_integer_value(json_object_get(mem, "allocated_arena")), 65536);
	assert_string_equal(json_string_value(json_object_get(prof, "validity")), "valid");
	assert_false(json_is_true(json_object_get(prof, "overflow_detected")));
	/* The report_id is what `ergon digest` computes from the file. */
	char *dout = NULL;
	assert_int_equal(ts_run_ergon(&dout, NULL, "digest", sp, NULL), 0);
	dout[strcspn(dout, "\n")] = '\0';
	assert_string_equal(dout, json_string_value(json_object_get(s, "report_id")));
	free(dout);
	/* CSV: header and layer 0 (median of 857840, 855471, 856558 = 856558;
	 * INST 530149, 529491, 532963 -> 530149). */
	char *cp = ts_strf("%s/profile_results.csv", out_dir);
	char *csv = ts_read_file(cp, NULL);
	assert_non_null(csv);
	assert_non_null(strstr(csv, "index,op,ARM_PMU_CPU_CYCLES,ARM_PMU_INST_RETIRED,"
				    "ARM_PMU_STALL_FRONTEND,ARM_PMU_STALL_BACKEND,overflow\n"));
	assert_non_null(strstr(csv, "\n0,CONV_2D,856558,530149,"));
	char *gp = ts_strf("%s/profile_results_cpu.csv", out_dir);
	char *gcsv = ts_read_file(gp, NULL);
	assert_non_null(gcsv);
	/* A second run does not overwrite without --force. */
	char *err2 = NULL;
	assert_int_equal(ts_run_ergon(NULL, &err2, "parse", log, "--out", out_dir, NULL), 3);
	assert_non_null(strstr(err2, "--force"));
	assert_int_equal(ts_run_ergon(NULL, NULL, "parse", log, "--out", out_dir, "--force",
				      "--aggregation", "mean", NULL),
			 0);
	free(err2);
	free(gcsv);
	free(gp);
	free(csv);
	free(cp);
	json_decref(s);
	free(sp);
	free(out);
	free(err);
	free(log);
	free(out_dir);
	ts_tmpdir_remove(dir);
	free(dir);
}

static void parse_flags_the_wrap_fallback_and_usage_errors(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *log = ts_fixture("hpx/wrap.hpx.txt");
	char *out = NULL;
	assert_int_equal(ts_run_ergon(&out, NULL, "parse", log, "--out", dir, "--force", NULL), 0);
	assert_non_null(strstr(out, "pmu.wrap_fallback"));
	assert_non_null(strstr(out, "validity degraded"));
	free(out);
	char *err = NULL;
	assert_int_equal(ts_run_ergon(NULL, &err, "parse", log, "--aggregation", "mode", NULL), 2);
	assert_non_null(strstr(err, "median, mean or trimmed"));
	free(err);
	err = NULL;
	assert_int_equal(ts_run_ergon(NULL, &err, "parse", "/nonexistent.log", NULL), 3);
	assert_non_null(strstr(err, "/nonexistent.log"));
	free(err);
	free(log);
	ts_tmpdir_remove(dir);
	free(dir);
}

static void empty_log_is_invalid_but_written(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *log = ts_strf("%s/empty.log", dir);
	assert_int_equal(ts_write_file(log, "", 0), 0);
	char *out_dir = ts_strf("%s/o", dir);
	assert_int_equal(ts_run_ergon(NULL, NULL, "parse", log, "--out", out_dir, NULL), 1);
	char *sp = ts_strf("%s/summary.json", out_dir);
	json_t *s = load(sp);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(s, "profile"), "validity")),
	    "invalid");
	assert_string_equal(json_string_value(json_object_get(
				json_array_get(json_object_get(s, "issues"), 0), "code")),
			    "pmu.missing");
	json_decref(s);
	free(sp);
	free(out_dir);
	free(log);
	ts_tmpdir_remove(dir);
	free(dir);
}

static void capture_from_file_keeps_the_raw_log(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *fx = ts_fixture("hpx/multi_preset.hpx.txt");
	char *spec = ts_strf("file:%s", fx);
	char *out = NULL;
	assert_int_equal(
	    ts_run_ergon(&out, NULL, "capture", "--transport", spec, "--out", dir, "--force", NULL),
	    0);
	char *lp = ts_strf("%s/capture.log", dir);
	size_t a = 0, b = 0;
	char *got = ts_read_file(lp, &a);
	char *want = ts_read_file(fx, &b);
	assert_int_equal(a, b); /* multi_preset ends with the END line */
	assert_memory_equal(got, want, a);
	char *sp = ts_strf("%s/summary.json", dir);
	json_t *s = load(sp);
	json_t *cap = json_object_get(json_object_get(s, "profile"), "capture");
	assert_string_equal(json_string_value(json_object_get(cap, "end")), "sentinel");
	/* groups cpu and mve -> two group CSVs */
	char *g = ts_strf("%s/profile_results_mve.csv", dir);
	char *gc = ts_read_file(g, NULL);
	assert_non_null(gc);
	free(gc);
	free(g);
	json_decref(s);
	free(sp);
	free(got);
	free(want);
	free(lp);
	free(out);
	free(spec);
	free(fx);
	ts_tmpdir_remove(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(parse_writes_summary_and_csv),
	    cmocka_unit_test(parse_flags_the_wrap_fallback_and_usage_errors),
	    cmocka_unit_test(empty_log_is_invalid_but_written),
	    cmocka_unit_test(capture_from_file_keeps_the_raw_log),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
