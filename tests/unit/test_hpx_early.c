/* Early aggregation (ergon_hpx_parser_aggregate_early): each preset is
 * aggregated when it ends and its samples are released. The result must be
 * the one the parser makes at the end, for every shared reference stream and
 * aggregation, and for the streams where a preset's end is not a plain next
 * marker: a preset seen again (it replaces the first), a legacy stream
 * without markers, a stream cut before END (the open iteration is dropped),
 * a preset with no iteration, differing layer counts and an overflow flag.
 * The oracle is the same parser without early aggregation, whose values the
 * fixture tests check against heliaPROFILER's; this test checks that the
 * early path changes nothing, inline and in the worker thread. It also checks
 * the misuse answers (ERGON_EUSAGE, never a wrong result). */
#include "ergon/hpx.h"
#include "ergon/hpx_report.h"
#include "test_support.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* mode 0: at the end; 1: early inline; 2: early in the worker. Chunks of
 * `chunk` bytes (0: one feed). */
static json_t *parse_mode(const char *data, size_t len, int agg, int mode, size_t chunk)
{
	struct ergon_hpx_parser *p = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_hpx_parser_new(NULL, &p, &err), 0);
	if (mode)
		assert_int_equal(ergon_hpx_parser_aggregate_early(p, agg, mode == 2, &err), 0);
	for (size_t off = 0; off < len;) {
		size_t n = chunk && len - off > chunk ? chunk : len - off;
		assert_true(ergon_hpx_parser_feed(p, data + off, n, &err) >= 0);
		off += n;
	}
	assert_true(ergon_hpx_parser_finish(p, &err) >= 0);
	json_t *res = NULL;
	assert_int_equal(ergon_hpx_parser_to_json(p, agg, 0, &res, &err), 0);
	ergon_hpx_parser_free(p);
	return res;
}

static void check_same(const char *name, const char *data, size_t len)
{
	const int aggs[] = {ERGON_HPX_AGG_MEDIAN, ERGON_HPX_AGG_MEAN, ERGON_HPX_AGG_TRIMMED};
	for (size_t a = 0; a < 3; a++) {
		json_t *late = parse_mode(data, len, aggs[a], 0, 0);
		for (int mode = 1; mode <= 2; mode++) {
			json_t *early = parse_mode(data, len, aggs[a], mode, 7);
			if (!json_equal(late, early)) {
				char *l = json_dumps(late, JSON_SORT_KEYS);
				char *e = json_dumps(early, JSON_SORT_KEYS);
				print_error(
				    "%s agg %d mode %d:\nat the end: %.2000s\nearly: %.2000s\n",
				    name, aggs[a], mode, l, e);
				free(l);
				free(e);
				fail();
			}
			json_decref(early);
		}
		json_decref(late);
	}
}

static void test_fixtures(void **state)
{
	(void)state;
	const char *const cases[] = {"basic", "legacy", "multi_preset", "wrap", "power_ok"};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *rel = ts_strf("hpx/%s.hpx.txt", cases[i]);
		char *path = ts_fixture(rel);
		size_t len = 0;
		char *data = ts_read_file(path, &len);
		if (!data)
			print_error("cannot read %s\n", path);
		assert_non_null(data);
		check_same(cases[i], data, len);
		free(data);
		free(path);
		free(rel);
	}
}

#define HDR "\"Layer\",\"Op\",\"ARM_PMU_CPU_CYCLES\",\"ARM_PMU_INST_RETIRED\",\"overflow\"\n"

static void test_edge_streams(void **state)
{
	(void)state;
	struct {
		const char *name, *text;
	} cases[] = {
	    {"preset seen again",
	     "--- HPX_START ---\nHPX_PRESETS=cpu_0,mem_0\n--- HPX_PRESET cpu_0 ---\n"
	     "--- HPX_ITER 0 ---\n" HDR "0,CONV,10,20,0\n1,ADD,30,40,0\n"
	     "--- HPX_PRESET mem_0 ---\n--- HPX_ITER 0 ---\n" HDR "0,CONV,5,6,0\n1,ADD,7,8,0\n"
	     "--- HPX_PRESET cpu_0 ---\n--- HPX_ITER 0 ---\n" HDR "0,CONV,11,21,0\n1,ADD,31,41,0\n"
	     "--- HPX_ITER 1 ---\n" HDR "0,CONV,13,23,0\n1,ADD,33,43,1\n--- HPX_END ---\n"},
	    {"legacy", "--- HPX_START ---\n--- HPX_ITER 0 ---\n" HDR "0,CONV,10,20,0\n"
		       "--- HPX_ITER 1 ---\n" HDR "0,CONV,12,22,0\n--- HPX_ITER 2 ---\n" HDR
		       "0,CONV,14,4294967290,0\n--- HPX_END ---\n"},
	    {"cut before END",
	     "--- HPX_START ---\n--- HPX_PRESET cpu_0 ---\n--- HPX_ITER 0 ---\n" HDR
	     "0,CONV,10,20,0\n--- HPX_PRESET cpu_1 ---\n--- HPX_ITER 0 ---\n" HDR
	     "0,CONV,1,2,0\n--- HPX_ITER 1 ---\n" HDR "0,CONV,3,4"},
	    {"empty preset and layer counts",
	     "--- HPX_START ---\n--- HPX_PRESET a_0 ---\n--- HPX_PRESET b_0 ---\n"
	     "--- HPX_ITER 0 ---\n" HDR "0,CONV,1,2,0\n1,ADD,3,4,0\n--- HPX_ITER 1 ---\n" HDR
	     "0,CONV,5,6,0\n--- HPX_ITER 2 ---\n" HDR "0,CONV,0,0,0\n1,ADD,0,0,0\n"
	     "--- HPX_PRESET b_1 ---\n--- HPX_ITER 0 ---\n" HDR "0,CONV,9,x,0\n--- HPX_END ---\n"
	     "--- HPX_PRESET c_0 ---\n--- HPX_ITER 0 ---\n" HDR "0,CONV,1,1,0\n"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_same(cases[i].name, cases[i].text, strlen(cases[i].text));
}

/* Many presets (more than the parser's first array of presets holds, so the
 * array moves while the worker aggregates) of many iterations. */
static void test_many_presets(void **state)
{
	(void)state;
	size_t cap = 1 << 20, n = 0;
	char *s = malloc(cap);
	assert_non_null(s);
	n += (size_t)snprintf(s + n, cap - n, "--- HPX_START ---\n");
	for (int pr = 0; pr < 40; pr++) {
		n += (size_t)snprintf(s + n, cap - n, "--- HPX_PRESET g%d_%d ---\n", pr % 3, pr);
		for (int it = 0; it < 9; it++) {
			n += (size_t)snprintf(s + n, cap - n, "--- HPX_ITER %d ---\n" HDR, it);
			for (int l = 0; l < 12; l++)
				n += (size_t)snprintf(s + n, cap - n, "%d,OP%d,%d,%d,0\n", l, l % 4,
						      1000 + (l * 37 + it * 11 + pr) % 97,
						      50 + (l * it + pr) % 13);
		}
	}
	n += (size_t)snprintf(s + n, cap - n, "--- HPX_END ---\n");
	assert_true(n < cap);
	check_same("40 presets", s, n);
	free(s);
}

static void test_misuse(void **state)
{
	(void)state;
	const char *text = "--- HPX_START ---\n--- HPX_ITER 0 ---\n" HDR "0,CONV,10,20,0\n"
			   "--- HPX_END ---\n";
	struct ergon_err err = {0};
	struct ergon_hpx_parser *p = NULL;
	/* an unknown method */
	assert_int_equal(ergon_hpx_parser_new(NULL, &p, &err), 0);
	assert_int_equal(ergon_hpx_parser_aggregate_early(p, 9, false, &err), ERGON_EUSAGE);
	ergon_hpx_parser_free(p);
	/* after the first feed (an ergon_err keeps its first message: a fresh one) */
	memset(&err, 0, sizeof(err));
	assert_int_equal(ergon_hpx_parser_new(NULL, &p, &err), 0);
	assert_true(ergon_hpx_parser_feed(p, text, 5, &err) >= 0);
	assert_int_equal(ergon_hpx_parser_aggregate_early(p, ERGON_HPX_AGG_MEDIAN, false, &err),
			 ERGON_EUSAGE);
	assert_non_null(strstr(err.msg, "before the first feed"));
	ergon_hpx_parser_free(p);
	/* another method, iterations, a second result */
	assert_int_equal(ergon_hpx_parser_new(NULL, &p, &err), 0);
	assert_int_equal(ergon_hpx_parser_aggregate_early(p, ERGON_HPX_AGG_MEDIAN, true, &err), 0);
	assert_true(ergon_hpx_parser_feed(p, text, strlen(text), &err) >= 0);
	assert_int_equal(ergon_hpx_parser_finish(p, &err), ERGON_HPX_DONE);
	struct ergon_pmu_result *r = NULL;
	memset(&err, 0, sizeof(err));
	assert_int_equal(ergon_hpx_parser_result(p, ERGON_HPX_AGG_MEAN, 0, &r, &err), ERGON_EUSAGE);
	assert_null(r);
	assert_non_null(strstr(err.msg, "median"));
	assert_int_equal(
	    ergon_hpx_parser_result(p, ERGON_HPX_AGG_MEDIAN, ERGON_HPX_JSON_ITERATIONS, &r, &err),
	    ERGON_EUSAGE);
	assert_int_equal(ergon_hpx_parser_result(p, ERGON_HPX_AGG_MEDIAN, 0, &r, &err), 0);
	assert_non_null(r);
	assert_int_equal(r->layers.n, 1);
	assert_int_equal(r->layers.layers[0].ncounters, 2);
	/* one iteration: the median of {10} is 10 */
	assert_true(r->layers.layers[0].counters[0].value == 10.0);
	struct ergon_pmu_result *r2 = NULL;
	memset(&err, 0, sizeof(err));
	assert_int_equal(ergon_hpx_parser_result(p, ERGON_HPX_AGG_MEDIAN, 0, &r2, &err),
			 ERGON_EUSAGE);
	assert_null(r2);
	assert_non_null(strstr(err.msg, "already taken"));
	/* the result outlives the parser */
	ergon_hpx_parser_free(p);
	assert_true(r->layers.layers[0].counters[1].value == 20.0);
	ergon_pmu_result_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fixtures),
	    cmocka_unit_test(test_edge_streams),
	    cmocka_unit_test(test_many_presets),
	    cmocka_unit_test(test_misuse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
