/* Bad input for the HPX parser, one case per item of the issue's list. Every
 * expected value is computed by hand from the stream built in the test. */
#include "ergon/hpx.h"
#include "ergon/hpx_report.h"
#include "ergon/issues.h"
#include "test_support.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A minimal valid stream: 1 preset, 2 counters, layers/iterations given. */
#define HDR "\"Layer\",\"Op\",\"ARM_PMU_CPU_CYCLES\",\"ARM_PMU_INST_RETIRED\",\"overflow\"\n"

static json_t *parse_with(const char *data, size_t len, const struct ergon_hpx_limits *lim,
			  int *rc_out, struct ergon_err *err)
{
	struct ergon_hpx_parser *p = NULL;
	assert_int_equal(ergon_hpx_parser_new(lim, &p, err), 0);
	int rc = ergon_hpx_parser_feed(p, data, len, err);
	if (rc >= 0)
		rc = ergon_hpx_parser_finish(p, err);
	json_t *res = NULL;
	if (rc >= 0)
		assert_int_equal(ergon_hpx_parser_to_json(p, ERGON_HPX_AGG_MEDIAN, 0, &res, err),
				 0);
	ergon_hpx_parser_free(p);
	if (rc_out)
		*rc_out = rc;
	return res;
}

static json_t *parse(const char *s)
{
	struct ergon_err err = {0};
	int rc = 0;
	json_t *r = parse_with(s, strlen(s), NULL, &rc, &err);
	assert_non_null(r);
	return r;
}

static const json_t *issue(const json_t *res, const char *code)
{
	size_t i;
	json_t *is;
	json_array_foreach(json_object_get(json_object_get(res, "ergon"), "issues"), i, is)
	{
		if (strcmp(json_string_value(json_object_get(is, "code")), code) == 0)
			return is;
	}
	return NULL;
}

static double counter(const json_t *res, size_t layer, const char *name)
{
	json_t *L = json_array_get(json_object_get(res, "layers"), layer);
	json_t *v = json_object_get(json_object_get(L, "counters"), name);
	assert_non_null(v);
	return json_number_value(v);
}

static void empty_stream(void **state)
{
	(void)state;
	json_t *r = parse("");
	assert_int_equal(json_array_size(json_object_get(r, "layers")), 0);
	assert_non_null(issue(r, "pmu.missing"));
	assert_int_equal(
	    ergon_issues_integrity(json_object_get(json_object_get(r, "ergon"), "issues")),
	    ERGON_INTEGRITY_INVALID);
	json_decref(r);
}

static void no_start(void **state)
{
	(void)state;
	/* Rows and markers before START are ignored by the protocol. */
	json_t *r = parse("--- HPX_ITER 0 ---\n" HDR "0,CONV_2D,10,20,0\n--- HPX_END ---\n");
	assert_int_equal(json_array_size(json_object_get(r, "layers")), 0);
	const json_t *is = issue(r, "pmu.missing");
	assert_non_null(is);
	assert_non_null(strstr(json_string_value(json_object_get(is, "message")), "HPX_START"));
	json_decref(r);
}

static void no_end_keeps_complete_iterations(void **state)
{
	(void)state;
	/* Iterations 0 and 1 complete, iteration 2 cut off: the open one is
	 * dropped, median of layer 0 cycles = (100 + 300) / 2 = 200. */
	json_t *r = parse("--- HPX_START ---\n--- HPX_PRESET cpu_0 ---\n"
			  "--- HPX_ITER 0 ---\n" HDR "0,CONV_2D,100,10,0\n"
			  "--- HPX_ITER 1 ---\n" HDR "0,CONV_2D,300,30,0\n"
			  "--- HPX_ITER 2 ---\n" HDR "0,CONV_2D,999");
	assert_true(fabs(counter(r, 0, "ARM_PMU_CPU_CYCLES") - 200.0) < 1e-9);
	assert_true(fabs(counter(r, 0, "ARM_PMU_INST_RETIRED") - 20.0) < 1e-9);
	assert_non_null(issue(r, "pmu.incomplete"));
	assert_false(json_is_true(json_object_get(json_object_get(r, "ergon"), "complete")));
	json_decref(r);
}

static void garbage_between_lines(void **state)
{
	(void)state;
	/* Binary noise lines (no commas: 1 field, header has 5) inside the
	 * iterations are dropped as parse errors; noise outside iterations is
	 * ignored. Values: median(100, 300) = 200. Lines: noise at 4 and 8. */
	static const char s[] = "\xff\xfe garbage before start\n"
				"--- HPX_START ---\n"
				"--- HPX_ITER 0 ---\n" HDR "\x01\x02\xff noise\n"
				"0,CONV_2D,100,10,0\n"
				"--- HPX_ITER 1 ---\n" HDR "\x7f\xc3\x28\n"
				"0,CONV_2D,300,30,0\n"
				"--- HPX_END ---\n";
	json_t *r = parse(s);
	assert_true(fabs(counter(r, 0, "ARM_PMU_CPU_CYCLES") - 200.0) < 1e-9);
	const json_t *is = issue(r, "pmu.parse_error");
	assert_non_null(is);
	const json_t *ctx = json_object_get(is, "context");
	assert_int_equal(json_integer_value(json_object_get(ctx, "count")), 2);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(ctx, "lines"), 0)), 5);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(ctx, "lines"), 1)), 9);
	json_decref(r);
}

static void megabyte_line_is_dropped(void **state)
{
	(void)state;
	const char *head = "--- HPX_START ---\n--- HPX_ITER 0 ---\n" HDR;
	const char *tail = "\n0,CONV_2D,100,10,0\n--- HPX_END ---\n";
	size_t big = (size_t)1 << 20;
	size_t len = strlen(head) + big + strlen(tail);
	char *s = malloc(len + 1);
	assert_non_null(s);
	strcpy(s, head);
	memset(s + strlen(head), 'A', big);
	strcpy(s + strlen(head) + big, tail);
	struct ergon_err err = {0};
	int rc = 0;
	json_t *r = parse_with(s, len, NULL, &rc, &err);
	assert_int_equal(rc, ERGON_HPX_DONE);
	/* The 1 MB line is line 4; the row after it still parses. */
	assert_true(fabs(counter(r, 0, "ARM_PMU_CPU_CYCLES") - 100.0) < 1e-9);
	const json_t *is = issue(r, "pmu.line_too_long");
	assert_non_null(is);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(is, "context"), "first_line")), 4);
	json_decref(r);
	free(s);
}

static void wrong_field_counts(void **state)
{
	(void)state;
	/* Too few (line 4), too many (line 5), trailing comma (line 6). */
	json_t *r = parse("--- HPX_START ---\n--- HPX_ITER 0 ---\n" HDR "0,CONV_2D,100,0\n"
			  "0,CONV_2D,100,10,0,7\n0,CONV_2D,100,10,0,\n1,ADD,5,6,0\n"
			  "--- HPX_END ---\n");
	assert_int_equal(json_array_size(json_object_get(r, "layers")), 1);
	assert_true(fabs(counter(r, 0, "ARM_PMU_CPU_CYCLES") - 5.0) < 1e-9);
	const json_t *ctx = json_object_get(issue(r, "pmu.parse_error"), "context");
	assert_int_equal(json_integer_value(json_object_get(ctx, "count")), 3);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(ctx, "lines"), 0)), 4);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(ctx, "lines"), 2)), 6);
	json_decref(r);
}

static void non_numeric_and_negative_cells(void **state)
{
	(void)state;
	/* "abc" and "0x1F" are refused (left out), "-5" is kept like the
	 * reference does (negatives are not wraps). cycles: iter0 abc, iter1
	 * 300, iter2 0x1F -> median of {300} = 300. inst: 10, -5, 40 -> median
	 * 10. */
	json_t *r = parse("--- HPX_START ---\n"
			  "--- HPX_ITER 0 ---\n" HDR "0,CONV_2D,abc,10,0\n"
			  "--- HPX_ITER 1 ---\n" HDR "0,CONV_2D,300,-5,0\n"
			  "--- HPX_ITER 2 ---\n" HDR "0,CONV_2D,0x1F,40,0\n"
			  "--- HPX_END ---\n");
	assert_true(fabs(counter(r, 0, "ARM_PMU_CPU_CYCLES") - 300.0) < 1e-9);
	assert_true(fabs(counter(r, 0, "ARM_PMU_INST_RETIRED") - 10.0) < 1e-9);
	const json_t *ctx = NULL;
	size_t i;
	json_t *is;
	json_array_foreach(json_object_get(json_object_get(r, "ergon"), "issues"), i, is)
	{
		const json_t *c = json_object_get(is, "context");
		const char *kind = json_string_value(json_object_get(c, "kind"));
		if (kind && strcmp(kind, "non_numeric") == 0)
			ctx = c;
	}
	assert_non_null(ctx);
	assert_int_equal(json_integer_value(json_object_get(ctx, "count")), 2);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(ctx, "lines"), 0)), 4);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(ctx, "lines"), 1)), 10);
	/* "-5" sits on line 7 (START 1, ITER 2, header 3, row 4, ITER 5,
	 * header 6, row 7): kept in the median above, but flagged. */
	const json_t *neg = issue(r, "pmu.negative_counter");
	assert_non_null(neg);
	assert_string_equal(json_string_value(json_object_get(neg, "severity")), "warning");
	const json_t *nctx = json_object_get(neg, "context");
	assert_int_equal(json_integer_value(json_object_get(nctx, "count")), 1);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(nctx, "lines"), 0)), 7);
	json_decref(r);
	/* Near miss: a zero cell is not negative. */
	r = parse("--- HPX_START ---\n"
		  "--- HPX_ITER 0 ---\n" HDR "0,CONV_2D,300,0,0\n"
		  "--- HPX_END ---\n");
	assert_null(issue(r, "pmu.negative_counter"));
	json_decref(r);
}

static void duplicate_iter_numbers(void **state)
{
	(void)state;
	/* ITER 0 twice: both are aggregated (reference), ergon warns with the
	 * line of the repeat (line 5). mean-free check: median(100, 300). */
	json_t *r = parse("--- HPX_START ---\n"
			  "--- HPX_ITER 0 ---\n" HDR "0,CONV_2D,100,10,0\n"
			  "--- HPX_ITER 0 ---\n" HDR "0,CONV_2D,300,30,0\n"
			  "--- HPX_END ---\n");
	assert_true(fabs(counter(r, 0, "ARM_PMU_CPU_CYCLES") - 200.0) < 1e-9);
	const json_t *is = issue(r, "pmu.iter_order");
	assert_non_null(is);
	assert_int_equal(json_integer_value(json_array_get(
			     json_object_get(json_object_get(is, "context"), "lines"), 0)),
			 5);
	json_decref(r);
}

static void preset_twice(void **state)
{
	(void)state;
	/* cpu_0 again at line 6 replaces its data (keeps its first position). */
	json_t *r = parse("--- HPX_START ---\n--- HPX_PRESET cpu_0 ---\n"
			  "--- HPX_ITER 0 ---\n" HDR "0,CONV_2D,100,10,0\n"
			  "--- HPX_PRESET cpu_0 ---\n"
			  "--- HPX_ITER 0 ---\n" HDR "0,CONV_2D,700,70,0\n"
			  "--- HPX_END ---\n");
	assert_true(fabs(counter(r, 0, "ARM_PMU_CPU_CYCLES") - 700.0) < 1e-9);
	assert_int_equal(json_object_size(json_object_get(r, "presets")), 1);
	const json_t *is = issue(r, "pmu.duplicate_preset");
	assert_non_null(is);
	assert_int_equal(json_integer_value(json_array_get(
			     json_object_get(json_object_get(is, "context"), "lines"), 0)),
			 6);
	json_decref(r);
}

static char *many_layers(size_t layers, size_t iters, size_t *len)
{
	size_t cap = 64 + iters * (strlen(HDR) + 32 + layers * 48);
	char *s = malloc(cap);
	size_t o = 0;
	o += (size_t)snprintf(s + o, cap - o, "--- HPX_START ---\n");
	for (size_t it = 0; it < iters; it++) {
		o += (size_t)snprintf(s + o, cap - o, "--- HPX_ITER %zu ---\n" HDR, it);
		for (size_t l = 0; l < layers; l++)
			o += (size_t)snprintf(s + o, cap - o, "%zu,OP,%zu,%zu,0\n", l,
					      1000 + l + it, l);
	}
	o += (size_t)snprintf(s + o, cap - o, "--- HPX_END ---\n");
	*len = o;
	return s;
}

static void ten_thousand_layers(void **state)
{
	(void)state;
	size_t len = 0;
	char *s = many_layers(10000, 3, &len);
	struct ergon_err err = {0};
	int rc = 0;
	json_t *r = parse_with(s, len, NULL, &rc, &err);
	assert_non_null(r);
	assert_int_equal(json_array_size(json_object_get(r, "layers")), 10000);
	/* layer 9999 cycles: 1000+9999+{0,1,2} -> median 11000 */
	assert_true(fabs(counter(r, 9999, "ARM_PMU_CPU_CYCLES") - 11000.0) < 1e-9);
	json_decref(r);
	/* With a cap of 5000 layers the parse stops with a precise error. */
	struct ergon_hpx_limits lim = {.max_layers = 5000};
	ergon_err_clear(&err);
	r = parse_with(s, len, &lim, &rc, &err);
	assert_null(r);
	assert_int_equal(rc, ERGON_ETOOBIG);
	assert_non_null(strstr(err.msg, "5000 layers"));
	assert_non_null(strstr(err.msg, "line "));
	free(s);
}

static void text_and_header_caps(void **state)
{
	(void)state;
	/* 200 rows with distinct 50-byte op names = 200 x 51 = 10200 bytes of
	 * text, over a 4096-byte cap: refused with the cap named. */
	size_t cap = 200 * 96 + 256;
	char *s = malloc(cap);
	size_t o = (size_t)snprintf(s, cap, "--- HPX_START ---\n--- HPX_ITER 0 ---\n" HDR);
	for (int l = 0; l < 200; l++)
		o += (size_t)snprintf(s + o, cap - o, "%d,OP_%046d,1,2,0\n", l, l);
	struct ergon_hpx_limits lim = {.max_text_bytes = 4096};
	struct ergon_err err = {0};
	int rc = 0;
	json_t *r = parse_with(s, o, &lim, &rc, &err);
	assert_null(r);
	assert_int_equal(rc, ERGON_ETOOBIG);
	assert_non_null(strstr(err.msg, "4096 bytes of Layer/Op text"));
	free(s);
	/* 300 iterations, each with a different header: more than 256 distinct
	 * headers in one preset is refused. */
	cap = 300 * 160 + 64;
	s = malloc(cap);
	o = (size_t)snprintf(s, cap, "--- HPX_START ---\n");
	for (int it = 0; it < 300; it++)
		o += (size_t)snprintf(s + o, cap - o,
				      "--- HPX_ITER %d ---\n\"Layer\",\"Op\",\"C%d\",\"overflow\"\n"
				      "0,A,1,0\n",
				      it, it);
	ergon_err_clear(&err);
	r = parse_with(s, o, NULL, &rc, &err);
	assert_null(r);
	assert_int_equal(rc, ERGON_ETOOBIG);
	assert_non_null(strstr(err.msg, "256 distinct CSV headers"));
	free(s);
}

static void terminal_text_not_utf8(void **state)
{
	(void)state;
	/* Found by fuzz_hpx: a final phase that is not UTF-8 made
	 * ergon_hpx_terminal_to_json return NULL. The bytes 9d 92 are replaced
	 * by U+FFFD each (ef bf bd), as Python's decode(errors='replace'). */
	const char *rec = "--- HPX_POWER_TERMINAL_START ---\n"
			  "HPX_POWER_TERMINAL_VERSION=1\nHPX_POWER_STATUS=ok\n"
			  "HPX_POWER_REQUESTED_COUNT=5\nHPX_POWER_COMPLETED_COUNT=5\n"
			  "HPX_POWER_ELAPSED_US=100\nHPX_POWER_FINAL_PHASE=\x9d\x92mplete\n"
			  "HPX_POWER_ERROR_CODE=0\nHPX_POWER_GATE_ASSERTED=1\n"
			  "HPX_POWER_GATE_LOWERED=1\n--- HPX_POWER_TERMINAL_END ---\n";
	struct ergon_hpx_terminal t;
	struct ergon_err err = {0};
	assert_int_equal(ergon_hpx_terminal_parse(rec, strlen(rec), &t, &err), 0);
	json_t *j = ergon_hpx_terminal_to_json(&t);
	assert_non_null(j);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(j, "terminal"), "final_phase")),
	    "\xef\xbf\xbd\xef\xbf\xbdmplete");
	json_decref(j);
}

static void terminal_bad_records(void **state)
{
	(void)state;
	struct {
		const char *text;
		int rc;
		const char *needle;
	} cases[] = {
	    {"noise\n", ERGON_ENOENT, "no --- HPX_POWER_TERMINAL_START"},
	    {"--- HPX_POWER_TERMINAL_START ---\nHPX_POWER_STATUS=ok\n", ERGON_EPARSE, "incomplete"},
	    {"--- HPX_POWER_TERMINAL_START ---\nHPX_POWER_STATUS=ok\nHPX_POWER_STATUS=ok\n"
	     "--- HPX_POWER_TERMINAL_END ---\n",
	     ERGON_EPARSE, "line 3: duplicate power terminal field HPX_POWER_STATUS"},
	    {"--- HPX_POWER_TERMINAL_START ---\nnot a field\n--- HPX_POWER_TERMINAL_END ---\n",
	     ERGON_EPARSE, "line 2: malformed power terminal line"},
	    {"--- HPX_POWER_TERMINAL_END ---\n", ERGON_EPARSE, "before the start marker"},
	    {"--- HPX_POWER_TERMINAL_START ---\nHPX_POWER_STATUS=ok\n"
	     "--- HPX_POWER_TERMINAL_END ---\n",
	     ERGON_EPARSE, "missing fields: HPX_POWER_TERMINAL_VERSION"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ergon_hpx_terminal t;
		struct ergon_err err = {0};
		int rc = ergon_hpx_terminal_parse(cases[i].text, strlen(cases[i].text), &t, &err);
		if (rc != cases[i].rc || !strstr(err.msg, cases[i].needle))
			print_error("case %zu: rc %d msg %s\n", i, rc, err.msg);
		assert_int_equal(rc, cases[i].rc);
		assert_non_null(strstr(err.msg, cases[i].needle));
	}
	/* status ok with a nonzero error code is refused. */
	const char *rec = "--- HPX_POWER_TERMINAL_START ---\n"
			  "HPX_POWER_TERMINAL_VERSION=1\nHPX_POWER_STATUS=ok\n"
			  "HPX_POWER_REQUESTED_COUNT=5\nHPX_POWER_COMPLETED_COUNT=5\n"
			  "HPX_POWER_ELAPSED_US=100\nHPX_POWER_FINAL_PHASE=complete\n"
			  "HPX_POWER_ERROR_CODE=3\nHPX_POWER_GATE_ASSERTED=1\n"
			  "HPX_POWER_GATE_LOWERED=1\n--- HPX_POWER_TERMINAL_END ---\n";
	struct ergon_hpx_terminal t;
	struct ergon_err err = {0};
	assert_int_equal(ergon_hpx_terminal_parse(rec, strlen(rec), &t, &err), ERGON_EPARSE);
	assert_non_null(strstr(err.msg, "error code 0"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(empty_stream),
	    cmocka_unit_test(no_start),
	    cmocka_unit_test(no_end_keeps_complete_iterations),
	    cmocka_unit_test(garbage_between_lines),
	    cmocka_unit_test(megabyte_line_is_dropped),
	    cmocka_unit_test(wrong_field_counts),
	    cmocka_unit_test(non_numeric_and_negative_cells),
	    cmocka_unit_test(duplicate_iter_numbers),
	    cmocka_unit_test(preset_twice),
	    cmocka_unit_test(ten_thousand_layers),
	    cmocka_unit_test(text_and_header_caps),
	    cmocka_unit_test(terminal_text_not_utf8),
	    cmocka_unit_test(terminal_bad_records),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
