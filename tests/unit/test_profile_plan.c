/* The profile pipeline's pure parts: firmware lookup in FIRMWARE_DIR, the
 * plan of a resolved configuration, and the sim scenario each stage runs. */
#include "ergon/config.h"
#include "ergon/profile.h"
#include "test_support.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void touch(const char *dir, const char *name)
{
	char *p = ts_strf("%s/%s", dir, name);
	assert_int_equal(ts_write_file(p, "x", 1), 0);
	free(p);
}

static void firmware_lookup(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	struct ergon_profile_firmware fw;
	struct ergon_err err = {0};
	/* Not a firmware: wrong ending, hidden file. */
	touch(dir, "profile_notes.txt");
	touch(dir, ".profile.elf");
	assert_int_equal(ergon_profile_firmware_find(dir, 0, &fw, &err), ERGON_ENOENT);
	assert_non_null(strstr(err.msg, "no profile firmware"));
	assert_non_null(strstr(err.msg, dir));
	/* Two candidates: the lexically smallest wins, whatever readdir says. */
	touch(dir, "b_profile.elf");
	touch(dir, "a_profile.axf");
	ergon_err_clear(&err);
	assert_int_equal(ergon_profile_firmware_find(dir, 0, &fw, &err), 0);
	char *want = ts_strf("%s/a_profile.axf", dir);
	assert_string_equal(fw.profile, want);
	free(want);
	assert_string_equal(fw.power, "");
	/* The power build is required only when asked. */
	ergon_err_clear(&err);
	assert_int_equal(ergon_profile_firmware_find(dir, 1, &fw, &err), ERGON_ENOENT);
	assert_non_null(strstr(err.msg, "power.firmware: shared"));
	touch(dir, "app_power.hex");
	ergon_err_clear(&err);
	assert_int_equal(ergon_profile_firmware_find(dir, 1, &fw, &err), 0);
	want = ts_strf("%s/app_power.hex", dir);
	assert_string_equal(fw.power, want);
	free(want);
	ergon_err_clear(&err);
	char *missing = ts_strf("%s/nope", dir);
	assert_true(ergon_profile_firmware_find(missing, 0, &fw, &err) < 0);
	assert_non_null(strstr(err.msg, missing));
	free(missing);
	ts_tmpdir_remove(dir);
	free(dir);
}

static void plan_of_sim_power(void **state)
{
	(void)state;
	struct ergon_config cfg;
	struct ergon_err err = {0};
	assert_int_equal(ergon_config_init(&cfg), 0);
	assert_int_equal(ergon_config_set(&cfg, "target.board=sim", ERGON_CFG_CLI, &err), 0);
	assert_int_equal(ergon_config_set(&cfg, "power.enabled=true", ERGON_CFG_CLI, &err), 0);
	assert_int_equal(ergon_config_resolve(&cfg, &err), 0);
	json_t *plan = NULL;
	assert_int_equal(ergon_profile_plan(&cfg, &plan, &err), 0);
	assert_string_equal(json_string_value(json_object_get(plan, "lifecycle")), "sim");
	/* Every counter pass fits the M55's four chained counters. */
	json_t *passes = json_object_get(json_object_get(plan, "counters"), "passes");
	assert_true(json_array_size(passes) >= 1);
	size_t i;
	json_t *p;
	json_array_foreach(passes, i, p)
	{
		assert_true(json_array_size(json_object_get(p, "events")) <= 4);
	}
	json_t *w = json_object_get(plan, "window");
	/* Power on, auto: max(1000, 5000) by rule. */
	assert_int_equal(json_integer_value(json_object_get(w, "target_ms")), 5000);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(w, "target_ms_from"), "origin")),
	    "rule");
	json_t *pw = json_object_get(plan, "power");
	/* Sim wiring state 4 / go 5 > 0, gated external: lock-step by rule. */
	assert_true(json_is_true(json_object_get(pw, "lockstep")));
	assert_true(json_is_null(json_object_get(pw, "duration_s")));
	json_decref(plan);
	ergon_config_cleanup(&cfg);
}

static void sim_stage_scenarios(void **state)
{
	(void)state;
	/* A profile scenario runs in the PMU stage, the power stage keeps its
	 * baseline; a power scenario the other way round. */
	assert_string_equal(ergon_profile_sim_stage_scenario("stalled_counter", 0, 0),
			    "stalled_counter");
	assert_string_equal(ergon_profile_sim_stage_scenario("stalled_counter", 1, 0),
			    "baseline_power");
	assert_string_equal(ergon_profile_sim_stage_scenario("gate_glitches", 0, 0),
			    "baseline_profile");
	assert_string_equal(ergon_profile_sim_stage_scenario("gate_glitches", 1, 0),
			    "gate_glitches");
	assert_string_equal(ergon_profile_sim_stage_scenario(NULL, 1, 1), "baseline_ina228");
	assert_int_equal(ergon_profile_sim_flow("no_such"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(firmware_lookup),
	    cmocka_unit_test(plan_of_sim_power),
	    cmocka_unit_test(sim_stage_scenarios),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
