/* The reference parser's documented behaviour (shared fixtures README,
 * "Semantics observed"), one small stream per rule; every expected value is
 * worked out by hand in the comment next to it. */
#include "ergon/hpx.h"
#include "ergon/hpx_report.h"
#include "ergon/issues.h"
#include "test_support.h"

#include <jansson.h>
#include <math.h>
#include <string.h>

#define HDR2 "\"Layer\",\"Op\",\"ARM_PMU_CPU_CYCLES\",\"ARM_PMU_INST_RETIRED\",\"overflow\"\n"

static json_t *parse_agg(const char *s, int agg)
{
	struct ergon_hpx_parser *p = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_hpx_parser_new(NULL, &p, &err), 0);
	assert_true(ergon_hpx_parser_feed(p, s, strlen(s), &err) >= 0);
	assert_true(ergon_hpx_parser_finish(p, &err) >= 0);
	json_t *r = NULL;
	assert_int_equal(ergon_hpx_parser_to_json(p, agg, ERGON_HPX_JSON_ITERATIONS, &r, &err), 0);
	ergon_hpx_parser_free(p);
	return r;
}

static json_t *parse(const char *s)
{
	return parse_agg(s, ERGON_HPX_AGG_MEDIAN);
}

static json_t *layer(const json_t *r, size_t i)
{
	return json_array_get(json_object_get(r, "layers"), i);
}

static double ctr(const json_t *r, size_t i, const char *name)
{
	json_t *v = json_object_get(json_object_get(layer(r, i), "counters"), name);
	assert_non_null(v);
	return json_number_value(v);
}

static void glitched_iter_marker_joins_previous_iteration(void **state)
{
	(void)state;
	/* "\xff--- HPX_ITER 1 ---" is not a marker: it is a 1-field CSV row
	 * (parse error); the header line after it has 5 fields and becomes a row
	 * of iteration 0 (its counters are non-numeric: 2 more parse errors);
	 * the next data row joins iteration 0 too. Iteration 0 then has 3 rows;
	 * layer 0 keeps only the first row: cycles 100. */
	json_t *r = parse("--- HPX_START ---\n--- HPX_ITER 0 ---\n" HDR2 "0,CONV_2D,100,10,0\n"
			  "\xff--- HPX_ITER 1 ---\n" HDR2 "0,CONV_2D,300,30,0\n--- HPX_END ---\n");
	json_t *its = json_object_get(json_object_get(json_object_get(r, "presets"), "_default"),
				      "iterations");
	assert_int_equal(json_array_size(its), 1);
	assert_int_equal(json_array_size(json_array_get(its, 0)), 3);
	assert_true(ctr(r, 0, "ARM_PMU_CPU_CYCLES") == 100.0);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(r, "ergon"), "parse_errors")), 3);
	json_decref(r);
}

static void lost_header_first_row_becomes_header(void **state)
{
	(void)state;
	/* Iteration 1 lost its header: its first data row is the header, so the
	 * preset's final header is "0","CONV_2D","300","30","0" and the counters
	 * are named "300" and "30" (and "0" is a counter name too). Layer count
	 * comes from iteration 0 (1 row). */
	json_t *r = parse("--- HPX_START ---\n--- HPX_ITER 0 ---\n" HDR2 "0,CONV_2D,100,10,0\n"
			  "--- HPX_ITER 1 ---\n0,CONV_2D,300,30,0\n--- HPX_END ---\n");
	json_t *hdr =
	    json_object_get(json_object_get(json_object_get(r, "presets"), "_default"), "header");
	assert_string_equal(json_string_value(json_array_get(hdr, 2)), "300");
	assert_int_equal(json_array_size(json_object_get(r, "layers")), 1);
	json_decref(r);
}

static void python_number_leniency(void **state)
{
	(void)state;
	/* " 42 " -> 42, "+7" -> 7, "1_000" -> 1000, "1e3" -> 1000.0, "1.5";
	 * Op "123" is the integer 123, Layer " 3 " is 3; overflow "yes" is
	 * set. Quoted "A,B" stays one field. One iteration: median = value. */
	json_t *r = parse("--- HPX_START ---\n--- HPX_ITER 0 ---\n"
			  "\"Layer\",\"Op\",\"a\",\"b\",\"c\",\"d\",\"e\",\"overflow\"\n"
			  " 3 ,123, 42 ,+7,1_000,1e3,1.5,yes\n"
			  "4,\"A,B\",1,2,3,4,5,0\n"
			  /* Arabic-Indic 4 2 = 42; NBSP around 7; Devanagari 1 5 = 15 */
			  "5,C,\xd9\xa4\xd9\xa2,\xc2\xa0" "7\xc2\xa0,\xe0\xa5\xa7\xe0\xa5\xab,1,1,0\n"
			  "--- HPX_END ---\n");
	assert_int_equal(json_integer_value(json_object_get(layer(r, 0), "id")), 3);
	assert_int_equal(json_integer_value(json_object_get(layer(r, 0), "op")), 123);
	assert_true(ctr(r, 0, "a") == 42.0);
	assert_true(ctr(r, 0, "b") == 7.0);
	assert_true(ctr(r, 0, "c") == 1000.0);
	assert_true(ctr(r, 0, "d") == 1000.0);
	assert_true(ctr(r, 0, "e") == 1.5);
	assert_true(json_is_true(json_object_get(layer(r, 0), "overflow")));
	assert_true(json_is_true(json_object_get(r, "overflow_detected")));
	assert_string_equal(json_string_value(json_object_get(layer(r, 1), "op")), "A,B");
	assert_false(json_is_true(json_object_get(layer(r, 1), "overflow")));
	assert_true(ctr(r, 2, "a") == 42.0);
	assert_true(ctr(r, 2, "b") == 7.0);
	assert_true(ctr(r, 2, "c") == 15.0);
	json_decref(r);
}

static void frozen_rows_and_trimmed(void **state)
{
	(void)state;
	/* Layer 0: iterations (0,-0) frozen, (100,10), (200,20), (400,40):
	 * frozen row dropped -> cycles median(100,200,400) = 200.
	 * Layer 1: frozen in every iteration -> kept, result 0.0.
	 * trimmed, layer 0: {100,200,400} -> drop 100 and 400 -> 200. trimmed
	 * with n < 3 is the mean: layer 2 has 2 samples 10, 30 -> 20 (row 2 is
	 * missing from iterations 0 and 1). */
	const char *s = "--- HPX_START ---\n"
			"--- HPX_ITER 0 ---\n" HDR2 "0,A,0,-0,0\n1,B,0,0,0\n"
			"--- HPX_ITER 1 ---\n" HDR2 "0,A,100,10,0\n1,B,0,0,0\n"
			"--- HPX_ITER 2 ---\n" HDR2 "0,A,200,20,0\n1,B,0,0,0\n"
			"--- HPX_ITER 3 ---\n" HDR2 "0,A,400,40,0\n1,B,0,0,0\n"
			"--- HPX_END ---\n";
	json_t *r = parse(s);
	assert_true(ctr(r, 0, "ARM_PMU_CPU_CYCLES") == 200.0);
	assert_true(ctr(r, 1, "ARM_PMU_CPU_CYCLES") == 0.0);
	json_t *is = json_object_get(json_object_get(r, "ergon"), "issues");
	assert_true(ergon_issue_has(is, "pmu.frozen_rows"));
	json_decref(r);
	r = parse_agg(s, ERGON_HPX_AGG_TRIMMED);
	assert_true(ctr(r, 0, "ARM_PMU_CPU_CYCLES") == 200.0);
	json_decref(r);
	r = parse_agg("--- HPX_START ---\n--- HPX_ITER 0 ---\n" HDR2 "0,A,10,1,0\n"
		      "--- HPX_ITER 1 ---\n" HDR2 "0,A,30,3,0\n--- HPX_END ---\n",
		      ERGON_HPX_AGG_TRIMMED);
	assert_true(ctr(r, 0, "ARM_PMU_CPU_CYCLES") == 20.0);
	json_decref(r);
}

static void groups_and_merge(void **state)
{
	(void)state;
	/* mve_10 -> group mve; MVE_0 and basic_cpu are their own groups; _x is
	 * merged into layers but not grouped. The first preset (mve_10) wins
	 * the clash on ARM_PMU_CPU_CYCLES: 100, not 999. */
	const char *s = "--- HPX_START ---\n"
			"--- HPX_PRESET mve_10 ---\n--- HPX_ITER 0 ---\n" HDR2 "0,A,100,10,0\n"
			"--- HPX_PRESET MVE_0 ---\n--- HPX_ITER 0 ---\n"
			"\"Layer\",\"Op\",\"ARM_PMU_CPU_CYCLES\",\"X\",\"overflow\"\n0,A,999,5,0\n"
			"--- HPX_PRESET basic_cpu ---\n--- HPX_ITER 0 ---\n" HDR2 "0,A,1,1,0\n"
			"--- HPX_PRESET _x ---\n--- HPX_ITER 0 ---\n"
			"\"Layer\",\"Op\",\"Y\",\"overflow\"\n0,A,7,1\n"
			"--- HPX_END ---\n";
	json_t *r = parse(s);
	json_t *g = json_object_get(r, "groups");
	assert_int_equal(json_object_size(g), 3);
	assert_non_null(json_object_get(g, "mve"));
	assert_non_null(json_object_get(g, "MVE_0"));
	assert_non_null(json_object_get(g, "basic_cpu"));
	assert_true(ctr(r, 0, "ARM_PMU_CPU_CYCLES") == 100.0);
	assert_true(ctr(r, 0, "X") == 5.0);
	assert_true(ctr(r, 0, "Y") == 7.0);
	/* _x had overflow 1: the merged layer is marked */
	assert_true(json_is_true(json_object_get(layer(r, 0), "overflow")));
	json_decref(r);
}

static void metadata_rules(void **state)
{
	(void)state;
	/* Key lower-cased, last wins; "abc" stays a string; HPX_X= (empty) is
	 * not metadata; clean_infer_count falls back to the heartbeat iters;
	 * PRESETS trailing comma gives a "" entry; psram appears with
	 * HPX_PSRAM_CLOCK_HZ and missing fields are 0. */
	json_t *r = parse("--- HPX_START ---\nHPX_MODEL_SIZE=1\nHPX_MODEL_SIZE=abc\n"
			  "HPX_ARENA_SIZE= 77\nHPX_NUM_INPUTS=\n"
			  "HPX_HEARTBEAT phase=clean_window_begin iters=12 est_ms=5\n"
			  "HPX_PRESETS=cpu_0,\nHPX_PSRAM_CLOCK_HZ=48000000\n--- HPX_END ---\n");
	json_t *m = json_object_get(r, "meta");
	assert_string_equal(json_string_value(json_object_get(m, "model_size")), "abc");
	assert_int_equal(json_integer_value(json_object_get(m, "arena_size")), 77);
	assert_true(json_is_null(json_object_get(m, "num_inputs")));
	assert_int_equal(json_integer_value(json_object_get(m, "clean_infer_count")), 12);
	json_t *pr = json_object_get(m, "presets");
	assert_int_equal(json_array_size(pr), 2);
	assert_string_equal(json_string_value(json_array_get(pr, 1)), "");
	json_t *ps = json_object_get(m, "psram");
	assert_int_equal(json_integer_value(json_object_get(ps, "clock_hz")), 48000000);
	assert_int_equal(json_integer_value(json_object_get(ps, "size_bytes")), 0);
	json_decref(r);
}

static void pmu_and_terminal_in_one_stream(void **state)
{
	(void)state;
	/* A terminal record after END: the PMU result is complete and the
	 * record parses from the same parser. */
	const char *s = "--- HPX_START ---\n--- HPX_ITER 0 ---\n" HDR2 "0,A,5,6,0\n"
			"--- HPX_END ---\n--- HPX_POWER_TERMINAL_START ---\n"
			"HPX_POWER_TERMINAL_VERSION=1\nHPX_POWER_STATUS=error\n"
			"HPX_POWER_REQUESTED_COUNT=10\nHPX_POWER_COMPLETED_COUNT=3\n"
			"HPX_POWER_ELAPSED_US=900\nHPX_POWER_FINAL_PHASE=infer\n"
			"HPX_POWER_ERROR_CODE=7\nHPX_POWER_GATE_ASSERTED=1\n"
			"HPX_POWER_GATE_LOWERED=0\n--- HPX_POWER_TERMINAL_END ---\n";
	struct ergon_hpx_parser *p = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_hpx_parser_new(NULL, &p, &err), 0);
	assert_int_equal(ergon_hpx_parser_feed(p, s, strlen(s), &err), ERGON_HPX_DONE);
	ergon_hpx_parser_finish(p, &err);
	struct ergon_hpx_terminal t;
	assert_int_equal(ergon_hpx_parser_terminal(p, &t, &err), 0);
	assert_string_equal(t.status, "error");
	assert_int_equal(t.error_code, 7);
	assert_false(t.gate_lowered);
	assert_false(t.has_measurement);
	json_t *tj = ergon_hpx_terminal_to_json(&t);
	assert_true(json_is_null(json_object_get(tj, "measurement")));
	json_decref(tj);
	ergon_hpx_parser_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(glitched_iter_marker_joins_previous_iteration),
	    cmocka_unit_test(lost_header_first_row_becomes_header),
	    cmocka_unit_test(python_number_leniency),
	    cmocka_unit_test(frozen_rows_and_trimmed),
	    cmocka_unit_test(groups_and_merge),
	    cmocka_unit_test(metadata_rules),
	    cmocka_unit_test(pmu_and_terminal_in_one_stream),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
