/* The target's drop report (issue 18): in RTT drop mode ert_rtt_write
 * writes `HPX_HEARTBEAT rtt_dropped bytes=N` at the next line start, and
 * the parser raises pmu.target_dropped with the sum and the lines. The
 * expected values are counted by hand from the streams below. */
#include "ergon/hpx.h"
#include "ergon/hpx_report.h"
#include "test_support.h"

#include <jansson.h>
#include <string.h>

#define HDR "\"Layer\",\"Op\",\"ARM_PMU_CPU_CYCLES\",\"overflow\"\n"

static json_t *parse(const char *s)
{
	struct ergon_hpx_parser *p = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_hpx_parser_new(NULL, &p, &err), 0);
	assert_true(ergon_hpx_parser_feed(p, s, strlen(s), &err) >= 0);
	assert_true(ergon_hpx_parser_finish(p, &err) >= 0);
	json_t *r = NULL;
	assert_int_equal(
	    ergon_hpx_parser_to_json(p, ERGON_HPX_AGG_MEDIAN, ERGON_HPX_JSON_ITERATIONS, &r, &err),
	    0);
	ergon_hpx_parser_free(p);
	return r;
}

static const json_t *issue(const json_t *r, const char *code)
{
	size_t i;
	json_t *it;
	json_array_foreach(json_object_get(json_object_get(r, "ergon"), "issues"), i, it)
	{
		if (strcmp(json_string_value(json_object_get(it, "code")), code) == 0)
			return it;
	}
	return NULL;
}

static void drop_reports_are_summed_with_their_lines(void **state)
{
	(void)state;
	/* Line 1 START, 2 ITER 0, 3 header, 4 row, 5 the first report (37),
	 * 6 ITER 1, 7 header, 8 the second report (5), 9 row, 10 END:
	 * 42 bytes in 2 reports, at lines 5 and 8. */
	json_t *r = parse("--- HPX_START ---\n--- HPX_ITER 0 ---\n" HDR "0,CONV_2D,100,0\n"
			  "HPX_HEARTBEAT rtt_dropped bytes=37\n--- HPX_ITER 1 ---\n" HDR
			  "HPX_HEARTBEAT rtt_dropped bytes=5\n0,CONV_2D,120,0\n--- HPX_END ---\n");
	const json_t *it = issue(r, "pmu.target_dropped");
	assert_non_null(it);
	assert_string_equal(json_string_value(json_object_get(it, "severity")), "warning");
	const json_t *ctx = json_object_get(it, "context");
	assert_int_equal(json_integer_value(json_object_get(ctx, "dropped_bytes")), 42);
	const json_t *lines = json_object_get(ctx, "lines");
	assert_int_equal(json_array_size(lines), 2);
	assert_int_equal(json_integer_value(json_array_get(lines, 0)), 5);
	assert_int_equal(json_integer_value(json_array_get(lines, 1)), 8);
	assert_non_null(
	    strstr(json_string_value(json_object_get(it, "message")), "dropped 42 bytes"));
	/* The report is a heartbeat, not a row: both iterations keep theirs. */
	assert_int_equal(json_array_size(json_object_get(r, "layers")), 1);
	assert_int_equal(
	    json_array_size(json_object_get(
		json_object_get(json_object_get(r, "presets"), "_default"), "iterations")),
	    2);
	json_decref(r);
}

static void a_garbled_count_is_still_reported(void **state)
{
	(void)state;
	/* "bytes=x" is not a number: the report is noted with 0 bytes, never
	 * ignored. */
	json_t *r =
	    parse("--- HPX_START ---\nHPX_HEARTBEAT rtt_dropped bytes=x\n--- HPX_END ---\n");
	const json_t *it = issue(r, "pmu.target_dropped");
	assert_non_null(it);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(it, "context"), "dropped_bytes")),
	    0);
	json_decref(r);
}

static void other_heartbeats_are_not_drops(void **state)
{
	(void)state;
	/* "rtt_droppedX" is another phase; "infer iters=2" an ordinary one. */
	json_t *r = parse("--- HPX_START ---\nHPX_HEARTBEAT rtt_droppedX bytes=3\n"
			  "HPX_HEARTBEAT infer iters=2\n--- HPX_END ---\n");
	assert_null(issue(r, "pmu.target_dropped"));
	json_decref(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(drop_reports_are_summed_with_their_lines),
	    cmocka_unit_test(a_garbled_count_is_still_reported),
	    cmocka_unit_test(other_heartbeats_are_not_drops),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
