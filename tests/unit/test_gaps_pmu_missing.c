/* A port that declares its PMU or cycle counter missing (HPX_PMU=missing,
 * HPX_CYCLE_COUNTER=missing, wire.h): the host reports it with a registered
 * code and never shows those counters as zeros. Each rule has a stream that
 * triggers it and one that just misses it; counts are worked out by hand
 * from the stream text in the comment next to them. */
#include "ergon/hpx.h"
#include "ergon/hpx_report.h"
#include "ergon/issues.h"
#include "ergon/wire.h"
#include "test_support.h"

#include <jansson.h>
#include <string.h>

/* Two layers, two iterations; window_us, cycles and one PMU event column.
 * A port without a cycle counter or PMU that still printed the columns
 * would print zeros there: exactly what must not reach the results. */
#define HDR                                                                               \
	"\"Layer\",\"Op\",\"window_us\",\"ARM_PMU_CPU_CYCLES\",\"ARM_PMU_INST_RETIRED\"," \
	"\"overflow\"\n"
#define ROWS(n) "--- HPX_ITER " n " ---\n" HDR "0,CONV_2D,500,0,0,0\n1,SOFTMAX,250,0,0,0\n"
#define HDR_PLAIN "\"Layer\",\"Op\",\"window_us\",\"overflow\"\n"
#define ROWS_PLAIN(n) "--- HPX_ITER " n " ---\n" HDR_PLAIN "0,CONV_2D,500,0\n1,SOFTMAX,250,0\n"

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

static json_t *issues_of(const json_t *r)
{
	return json_object_get(json_object_get(r, "ergon"), "issues");
}

static const json_t *find(const json_t *issues, const char *code)
{
	size_t i;
	json_t *it;
	json_array_foreach(issues, i, it)
	{
		if (strcmp(json_string_value(json_object_get(it, "code")), code) == 0)
			return it;
	}
	return NULL;
}

static json_t *counters(const json_t *r, size_t layer)
{
	return json_object_get(json_array_get(json_object_get(r, "layers"), layer), "counters");
}

static void cycle_counter_missing_drops_the_column(void **state)
{
	(void)state;
	json_t *r = parse("--- HPX_START ---\nHPX_" HPX_KEY_CYCLE_COUNTER "=" HPX_VAL_MISSING
			  "\nHPX_" HPX_KEY_PMU "=" HPX_VAL_PRESENT "\n" ROWS("0")
			      ROWS("1") "--- HPX_END ---\n");
	const json_t *it = find(issues_of(r), "pmu.cycle_counter_missing");
	assert_non_null(it);
	/* Line 2 of the stream; one cycle cell per merged layer: 2. */
	json_t *ctx = json_object_get(it, "context");
	assert_int_equal(json_integer_value(json_object_get(ctx, "line")), 2);
	assert_int_equal(json_integer_value(json_object_get(ctx, "cycle_cells_dropped")), 2);
	assert_null(find(issues_of(r), "pmu.unit_missing"));
	for (size_t l = 0; l < 2; l++) {
		json_t *L = json_array_get(json_object_get(r, "layers"), l);
		assert_true(json_is_null(json_object_get(L, "cycles")));
		assert_null(json_object_get(counters(r, l), HPX_COUNTER_CYCLES));
		/* The PMU is present: its event column stays. */
		assert_non_null(json_object_get(counters(r, l), "ARM_PMU_INST_RETIRED"));
	}
	/* The per-iteration copies are cleaned too. */
	json_t *its = json_object_get(json_object_get(json_object_get(r, "presets"), "_default"),
				      "iterations");
	json_t *row = json_array_get(json_array_get(its, 1), 0);
	assert_null(json_object_get(json_object_get(row, "counters"), HPX_COUNTER_CYCLES));
	assert_true(json_is_null(json_object_get(row, "cycles")));

	/* The profile body: total_cycles null (not 0), no top layers, a reason. */
	json_t *body = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_hpx_profile_body(r, ERGON_HPX_AGG_MEDIAN, &body, &err), 0);
	assert_true(json_is_null(json_object_get(body, "total_cycles")));
	assert_int_equal(json_array_size(json_object_get(body, "top_layers")), 0);
	assert_non_null(
	    strstr(json_string_value(json_object_get(body, "total_cycles_absent_reason")),
		   "pmu.cycle_counter_missing"));
	assert_string_equal(json_string_value(json_object_get(body, "validity")), "degraded");
	json_decref(body);
	json_decref(r);
}

static void cycle_counter_present_keeps_the_column(void **state)
{
	(void)state;
	/* Near miss: the same stream with the counter declared present. The
	 * zeros are then the port's measured values (the frozen-row rule
	 * applies as usual), and no capability code is raised. */
	json_t *r = parse("--- HPX_START ---\nHPX_" HPX_KEY_CYCLE_COUNTER "=" HPX_VAL_PRESENT
			  "\n" ROWS("0") "--- HPX_END ---\n");
	assert_null(find(issues_of(r), "pmu.cycle_counter_missing"));
	assert_null(find(issues_of(r), "pmu.unit_missing"));
	assert_non_null(json_object_get(counters(r, 0), HPX_COUNTER_CYCLES));
	json_decref(r);
}

static void pmu_missing_with_event_cells_is_reported(void **state)
{
	(void)state;
	json_t *r = parse("--- HPX_START ---\nHPX_" HPX_KEY_PMU "=" HPX_VAL_MISSING
			  "\n" ROWS("0") "--- HPX_END ---\n");
	const json_t *it = find(issues_of(r), "pmu.unit_missing");
	assert_non_null(it);
	/* One INST_RETIRED cell per merged layer: 2; cycles are not the PMU's. */
	json_t *ctx = json_object_get(it, "context");
	assert_int_equal(json_integer_value(json_object_get(ctx, "event_cells_dropped")), 2);
	assert_int_equal(json_integer_value(json_object_get(ctx, "line")), 2);
	assert_null(json_object_get(counters(r, 0), "ARM_PMU_INST_RETIRED"));
	assert_non_null(json_object_get(counters(r, 0), HPX_COUNTER_CYCLES));
	assert_non_null(json_object_get(counters(r, 0), "window_us"));
	assert_null(find(issues_of(r), "pmu.cycle_counter_missing"));
	json_decref(r);
}

static void pmu_missing_with_counter_passes_is_reported(void **state)
{
	(void)state;
	/* A named counter pass the port cannot have counted, even with no
	 * event column printed: reported, 0 cells dropped. */
	json_t *r = parse("--- HPX_START ---\nHPX_" HPX_KEY_PMU "=" HPX_VAL_MISSING
			  "\n--- HPX_PRESET cpu ---\n" ROWS_PLAIN("0") "--- HPX_END ---\n");
	const json_t *it = find(issues_of(r), "pmu.unit_missing");
	assert_non_null(it);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(it, "context"),
							    "event_cells_dropped")),
			 0);
	json_decref(r);
}

static void pmu_missing_without_events_is_only_recorded(void **state)
{
	(void)state;
	/* Near miss: no counter pass and no event column (the runtime's own
	 * stream without a PMU): nothing was lost, so no code; the declaration
	 * is kept in ergon.capabilities. */
	json_t *r = parse("--- HPX_START ---\nHPX_" HPX_KEY_PMU "=" HPX_VAL_MISSING
			  "\n" ROWS_PLAIN("0") "--- HPX_END ---\n");
	assert_int_equal(json_array_size(issues_of(r)), 0);
	json_t *caps = json_object_get(json_object_get(r, "ergon"), "capabilities");
	assert_string_equal(json_string_value(json_object_get(caps, "pmu")), HPX_VAL_MISSING);
	assert_true(json_is_null(json_object_get(caps, "cycle_counter")));
	json_decref(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(cycle_counter_missing_drops_the_column),
	    cmocka_unit_test(cycle_counter_present_keeps_the_column),
	    cmocka_unit_test(pmu_missing_with_event_cells_is_reported),
	    cmocka_unit_test(pmu_missing_with_counter_passes_is_reported),
	    cmocka_unit_test(pmu_missing_without_events_is_only_recorded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
