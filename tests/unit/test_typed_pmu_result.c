/* The typed results a library user gets without JSON: struct
 * ergon_pmu_result from the HPX engine (values worked out by hand from the
 * stream below), and the typed issue list with its JSON form. */
#include "ergon/hpx.h"
#include "ergon/hpx_report.h"
#include "ergon/issue_list.h"
#include "ergon/issues.h"
#include "test_support.h"

#include <string.h>

/* Two presets (cpu_0, cpu_1: one group "cpu"), two iterations each, two
 * layers. cpu_0 counts cycles and instructions, cpu_1 cycles and stalls.
 * Medians of two samples are their means. */
static const char stream[] =
    "--- HPX_START ---\n"
    "HPX_VERSION=1\n"
    "HPX_MODEL_SIZE=1024\n"
    "HPX_PRESETS=cpu_0,cpu_1\n"
    "--- HPX_PRESET cpu_0 ---\n"
    "--- HPX_ITER 0 ---\n"
    "\"Layer\",\"Op\",\"ARM_PMU_CPU_CYCLES\",\"ARM_PMU_INST_RETIRED\",\"overflow\"\n"
    "0,CONV_2D,100,40,0\n"
    "1,ADD,10,4,0\n"
    "--- HPX_ITER 1 ---\n"
    "\"Layer\",\"Op\",\"ARM_PMU_CPU_CYCLES\",\"ARM_PMU_INST_RETIRED\",\"overflow\"\n"
    "0,CONV_2D,110,42,0\n"
    "1,ADD,20,6,1\n"
    "--- HPX_PRESET cpu_1 ---\n"
    "--- HPX_ITER 0 ---\n"
    "\"Layer\",\"Op\",\"ARM_PMU_CPU_CYCLES\",\"ARM_PMU_STALL\",\"overflow\"\n"
    "0,CONV_2D,300,7,0\n"
    "1,ADD,30,1,0\n"
    "--- HPX_ITER 1 ---\n"
    "\"Layer\",\"Op\",\"ARM_PMU_CPU_CYCLES\",\"ARM_PMU_STALL\",\"overflow\"\n"
    "0,CONV_2D,500,9,0\n"
    "1,ADD,50,3,0\n"
    "--- HPX_END ---\n";

static double counter(const struct ergon_pmu_layer *L, const char *name)
{
	for (size_t k = 0; k < L->ncounters; k++)
		if (strcmp(L->counters[k].name, name) == 0)
			return L->counters[k].value;
	return -1;
}

static void pmu_result_from_c(void **state)
{
	(void)state;
	struct ergon_err err = {0};
	struct ergon_hpx_parser *p = NULL;
	assert_int_equal(ergon_hpx_parser_new(NULL, &p, &err), 0);
	assert_int_equal(ergon_hpx_parser_feed(p, stream, strlen(stream), &err), ERGON_HPX_DONE);
	assert_int_equal(ergon_hpx_parser_finish(p, &err), ERGON_HPX_DONE);
	struct ergon_pmu_result *r = NULL;
	assert_int_equal(
	    ergon_hpx_parser_result(p, ERGON_HPX_AGG_MEDIAN, ERGON_HPX_JSON_ITERATIONS, &r, &err),
	    0);
	/* The result outlives the parser. */
	ergon_hpx_parser_free(p);
	assert_true(r->complete);
	assert_int_equal(r->npresets, 2);
	assert_string_equal(r->presets[0].name, "cpu_0");
	assert_int_equal(r->presets[0].ncolumns, 5);
	assert_string_equal(r->presets[0].columns[2], "ARM_PMU_CPU_CYCLES");
	const struct ergon_pmu_layer *a = &r->presets[0].layers.layers[0];
	assert_int_equal(a->id.kind, ERGON_PMU_INT);
	assert_int_equal(a->id.i, 0);
	assert_int_equal(a->op.kind, ERGON_PMU_TEXT);
	assert_string_equal(a->op.text, "CONV_2D");
	assert_true(a->has_cycles);
	assert_true(a->cycles == 105.0);			 /* (100 + 110) / 2 */
	assert_true(counter(a, "ARM_PMU_INST_RETIRED") == 41.0); /* (40 + 42) / 2 */
	assert_true(r->presets[0].layers.layers[1].overflow);	 /* iteration 1 said 1 */
	assert_int_equal(r->presets[0].niterations, 2);
	assert_true(r->presets[0].iterations[1].layers[1].cycles == 20.0);
	/* Merged by position: cpu_0's cycles win, cpu_1 adds its stall. */
	assert_int_equal(r->layers.n, 2);
	const struct ergon_pmu_layer *m = &r->layers.layers[0];
	assert_int_equal(m->ncounters, 3);
	assert_true(m->cycles == 105.0);
	assert_true(counter(m, "ARM_PMU_STALL") == 8.0); /* (7 + 9) / 2 */
	assert_int_equal(r->ngroups, 1);
	assert_string_equal(r->groups[0].name, "cpu");
	assert_true(r->overflow_detected);
	assert_string_equal(r->meta[0].key, "model_size");
	assert_int_equal(r->meta[0].value.kind, ERGON_PMU_INT);
	assert_int_equal(r->meta[0].value.i, 1024);
	assert_int_equal(r->npreset_list, 2);
	assert_string_equal(r->preset_list[1].text, "cpu_1");
	assert_true(ergon_issue_list_has(&r->issues, "pmu.counter_overflow"));
	assert_false(ergon_issue_list_has(&r->issues, "pmu.missing"));
	/* The JSON the pipelines make from it carries the same figures. */
	json_t *j = NULL;
	assert_int_equal(ergon_pmu_result_to_json(r, &j, &err), 0);
	json_t *l0 = json_array_get(json_object_get(j, "layers"), 0);
	assert_true(json_real_value(json_object_get(l0, "cycles")) == 105.0);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(j, "ergon"), "layer_count")), 2);
	json_decref(j);
	ergon_pmu_result_free(r);
	ergon_pmu_result_free(NULL);
}

static void issue_list_json(void **state)
{
	(void)state;
	struct ergon_issue_list l = {0};
	int64_t lines[] = {3, 9};
	struct ergon_issue_field f[] = {ERGON_ISSUE_INT("count", 2),
					ERGON_ISSUE_INTS("lines", lines, 2),
					ERGON_ISSUE_BOOL("open", 1), ERGON_ISSUE_NULL("unknown"),
					ERGON_ISSUE_REAL("ratio", 0.5)};
	assert_int_equal(ergon_issue_list_add(&l, "pmu.parse_error", f, 5, "%d rows", 2), 0);
	/* Text that is not UTF-8 cannot be a JSON string: the context is
	 * empty rather than the issue lost. */
	struct ergon_issue_field bad[] = {ERGON_ISSUE_TEXT("preset", "\xff")};
	assert_int_equal(ergon_issue_list_add(&l, "pmu.restart", bad, 1, "restart"), 0);
	assert_int_equal(ergon_issue_list_add(&l, "pmu.counter_overflow", NULL, 0, "ovf"), 0);
	/* An unregistered code is refused. */
	assert_int_equal(ergon_issue_list_add(&l, "pmu.no_such_code", NULL, 0, "x"), ERGON_EUSAGE);
	assert_int_equal(l.n, 3);
	json_t *a = json_array();
	assert_int_equal(ergon_issue_list_to_json(&l, a), 0);
	ergon_issue_list_cleanup(&l);
	assert_int_equal(json_array_size(a), 3);
	json_t *i0 = json_array_get(a, 0);
	assert_string_equal(json_string_value(json_object_get(i0, "severity")), "warning");
	assert_string_equal(json_string_value(json_object_get(i0, "message")), "2 rows");
	json_t *c0 = json_object_get(i0, "context");
	assert_int_equal(json_integer_value(json_object_get(c0, "count")), 2);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(c0, "lines"), 1)), 9);
	assert_true(json_is_true(json_object_get(c0, "open")));
	assert_true(json_is_null(json_object_get(c0, "unknown")));
	assert_true(json_real_value(json_object_get(c0, "ratio")) == 0.5);
	assert_int_equal(json_object_size(json_object_get(json_array_get(a, 1), "context")), 0);
	assert_int_equal(json_object_size(json_object_get(json_array_get(a, 2), "context")), 0);
	json_decref(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(pmu_result_from_c),
	    cmocka_unit_test(issue_list_json),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
