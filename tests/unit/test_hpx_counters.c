/* PMU catalog and pass planning. Expected values come from the CMSIS
 * pmu_armv8.h event list and the Cortex-M55 counter layout (8 x 16-bit
 * counters chained in pairs = 4 x 32-bit per pass, cycles from CCNTR). */
#include "ergon/pmu.h"
#include "test_support.h"

#include <stdlib.h>
#include <string.h>

static void catalog_holds_the_issue_examples(void **state)
{
	(void)state;
	size_t n;
	ergon_pmu_events(&n);
	assert_true(n >= 70);
	assert_int_equal(ergon_pmu_event_find("ARM_PMU_CPU_CYCLES")->id, 0x0011);
	assert_int_equal(ergon_pmu_event_find("ARM_PMU_MVE_INST_RETIRED")->id, 0x0200);
	assert_int_equal(ergon_pmu_event_find("mve_stall")->id, 0x02CC);
	assert_int_equal(ergon_pmu_event_find("DTCM_ACCESS")->id, 0x4008);
	assert_string_equal(ergon_pmu_event_find("DTCM_ACCESS")->group, "memory");
	assert_null(ergon_pmu_event_find("ARM_PMU_NOPE"));
}

static void mve_all_needs_nine_passes(void **state)
{
	(void)state;
	/* 34 MVE events in the Armv8.1-M list (0x0200..0x02D4) / 4 per pass = 9. */
	const char *items[] = {"mve:all"};
	struct ergon_pmu_plan p;
	struct ergon_err err = {0};
	assert_int_equal(ergon_pmu_plan(items, 1, &p, &err), 0);
	assert_int_equal(p.npasses, 9);
	assert_string_equal(p.passes[0].name, "mve_0");
	assert_string_equal(p.passes[8].name, "mve_8");
	assert_int_equal(p.passes[8].nevents, 2); /* 34 = 8 x 4 + 2 */
	assert_false(p.cycles);
	ergon_pmu_plan_cleanup(&p);
}

static void curated_sets(void **state)
{
	(void)state;
	/* cpu = cycles (no slot) + 3 events -> 1 pass; memory 4 -> 1; mve 4 -> 1. */
	const char *items[] = {"cpu", "memory", "mve", "ARM_PMU_INST_RETIRED"};
	struct ergon_pmu_plan p;
	struct ergon_err err = {0};
	assert_int_equal(ergon_pmu_plan(items, 4, &p, &err), 0);
	assert_true(p.cycles);
	assert_int_equal(p.npasses, 3);
	assert_string_equal(p.passes[0].name, "cpu_0");
	assert_int_equal(p.passes[0].nevents, 3);
	assert_string_equal(p.passes[1].name, "memory_0");
	assert_string_equal(p.passes[2].events[3]->name, "ARM_PMU_MVE_STALL");
	ergon_pmu_plan_cleanup(&p);
}

static void unknown_name_suggests_nearest(void **state)
{
	(void)state;
	const char *items[] = {"MVE_STAL"};
	struct ergon_pmu_plan p;
	struct ergon_err err = {0};
	assert_int_equal(ergon_pmu_plan(items, 1, &p, &err), ERGON_EUSAGE);
	assert_non_null(strstr(err.msg, "'MVE_STAL'"));
	assert_non_null(strstr(err.msg, "nearest: ARM_PMU_MVE_STALL,"));
	const char *chain[] = {"CHAIN"};
	ergon_err_clear(&err);
	assert_int_equal(ergon_pmu_plan(chain, 1, &p, &err), ERGON_EUSAGE);
}

static void cli_plan_and_list(void **state)
{
	(void)state;
	char *out = NULL;
	assert_int_equal(ts_run_ergon(&out, NULL, "counters", "plan", "mve:all", NULL), 0);
	assert_non_null(strstr(out, "9 pass(es)"));
	free(out);
	out = NULL;
	assert_int_equal(ts_run_ergon(&out, NULL, "counters", "list", NULL), 0);
	assert_non_null(strstr(out, "0x4008  ARM_PMU_DTCM_ACCESS"));
	free(out);
	char *errout = NULL;
	assert_int_equal(
	    ts_run_ergon(NULL, &errout, "counters", "plan", "cpu,L1D_CACHE_REFIL", NULL), 2);
	assert_non_null(strstr(errout, "ARM_PMU_L1D_CACHE_REFILL"));
	free(errout);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(catalog_holds_the_issue_examples),
	    cmocka_unit_test(mve_all_needs_nine_passes),
	    cmocka_unit_test(curated_sets),
	    cmocka_unit_test(unknown_name_suggests_nearest),
	    cmocka_unit_test(cli_plan_and_list),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
