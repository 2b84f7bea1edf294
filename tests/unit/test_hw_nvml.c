/* nvml instrument against the stub libnvidia-ml.so.1 (built by the test
 * suite, tests/support/nvml_stub/, path in $ERGON_NVML_STUB): energy
 * counter deltas, the fallback to averaged power, library absent, init
 * failure, unsupported calls, a counter going backwards, throttle evidence.
 * The stub's energy answers 1000000 + 250 (k - 1) mJ on its k-th call
 * (the first call is the probe in open), so every expected energy below
 * is a multiple of 0.25 J worked out by hand. */
#include "ergon/instrument.h"
#include "ergon/issues.h"
#include "test_support.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static int reset_env(void **state)
{
	(void)state;
	static const char *const vars[] = {
	    "STUB_NVML_INIT", "STUB_NVML_ENERGY",  "STUB_NVML_POWER",	"STUB_NVML_NAME",
	    "STUB_NVML_ARCH", "STUB_NVML_BACK_AT", "STUB_NVML_FAIL_AT", "STUB_NVML_REASONS"};
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
	const char *stub = getenv("ERGON_NVML_STUB");
	assert_non_null(stub);
	setenv("ERGON_NVML_LIB", stub, 1);
	return 0;
}

static struct ergon_instrument *open_ok(const char *spec)
{
	struct ergon_instrument *inst = NULL;
	struct ergon_err err = {0};
	if (ergon_instrument_open(spec, NULL, &inst, &err))
		fail_msg("open %s: %s", spec, err.msg);
	assert_int_equal(ergon_instrument_start(inst, &err), 0);
	return inst;
}

static void read1(struct ergon_instrument *inst, struct ergon_sample *s)
{
	struct ergon_err err = {0};
	size_t n = 0;
	if (ergon_instrument_read(inst, s, 4, &n, &err))
		fail_msg("read: %s", err.msg);
	assert_int_equal(n, 1);
}

static void energy_counter_deltas(void **state)
{
	(void)state;
	struct ergon_instrument *inst = open_ok("nvml");
	const struct ergon_instrument_identity *id = &inst->identity;
	assert_string_equal(id->vendor, "NVIDIA");
	assert_string_equal(id->model, "NVIDIA H200");
	assert_string_equal(id->serial, "1650923012345");
	assert_string_equal(id->integrates, "energy");
	assert_float_equal(id->resolution_j, 1e-3, 1e-15);
	assert_float_equal(id->averaging_period_s, 0.0, 0.0);
	assert_string_equal(id->rails[0], "gpu0");
	assert_non_null(strstr(id->notes, "nvmlDeviceGetCurrentClocksEventReasons"));
	/* The report tells its reader how far the driver has been checked. */
	assert_non_null(strstr(id->notes, "validated against a stub libnvidia-ml only"));
	/* nvidia-smi's documented +-5 W, no percentage. */
	assert_float_equal(id->floor_w, 5.0, 0.0);
	assert_float_equal(id->accuracy_pct, 0.0, 0.0);
	struct ergon_sample s[4];
	read1(inst, s); /* call 2: 1000250 mJ, the start */
	assert_true(s[0].fields & ERGON_F_ENERGY);
	assert_false(s[0].fields & ERGON_F_POWER);
	assert_float_equal(s[0].energy_j, 0.0, 1e-12);
	assert_true(s[0].fields & ERGON_F_TEMP);
	assert_float_equal(s[0].temp_c, 55.0, 1e-12);
	read1(inst, s); /* call 3: 1000500 mJ */
	assert_float_equal(s[0].energy_j, 0.25, 1e-12);
	read1(inst, s); /* call 4: 1000750 mJ */
	assert_float_equal(s[0].energy_j, 0.5, 1e-12);
	struct ergon_err err = {0};
	assert_int_equal(ergon_instrument_stop(inst, &err), 0);
	/* The energy counter is not averaged: no averaged_power issue. */
	assert_int_equal(json_array_size(inst->issues), 0);
	json_t *st = ergon_instrument_stats(inst);
	json_t *r = json_array_get(json_object_get(st, "rails"), 0);
	assert_string_equal(json_string_value(json_object_get(r, "mode")), "energy");
	assert_int_equal(json_integer_value(json_object_get(r, "reads")), 3);
	assert_int_equal(json_integer_value(json_object_get(r, "distinct_updates")), 3);
	json_decref(st);
	ergon_instrument_close(inst);
}

static void counter_backwards_reported(void **state)
{
	(void)state;
	setenv("STUB_NVML_BACK_AT", "4", 1);
	struct ergon_instrument *inst = open_ok("nvml:0");
	struct ergon_sample s[4];
	read1(inst, s); /* 1000250 */
	read1(inst, s); /* 1000500: 0.25 J */
	read1(inst, s); /* 1000750 - 5000 = 995750: backwards */
	assert_false(s[0].fields & ERGON_F_ENERGY);
	assert_float_equal(s[0].energy_j, 0.25, 1e-12);
	assert_true(ergon_issue_has(inst->issues, "instrument.counter_backwards"));
	read1(inst, s); /* 1001000 - 5000 = 996000: +0.25 J from the new base */
	assert_true(s[0].fields & ERGON_F_ENERGY);
	assert_float_equal(s[0].energy_j, 0.5, 1e-12);
	ergon_instrument_close(inst);
}

static void fallback_to_averaged_power(void **state)
{
	(void)state;
	setenv("STUB_NVML_ENERGY", "unsupported", 1);
	struct ergon_instrument *inst = open_ok("nvml");
	const struct ergon_instrument_identity *id = &inst->identity;
	assert_string_equal(id->integrates, "none");
	/* Hopper (architecture 9) averages nvmlDeviceGetPowerUsage over 1 s. */
	assert_float_equal(id->averaging_period_s, 1.0, 0.0);
	assert_float_equal(id->resolution_w, 1e-3, 1e-15);
	assert_non_null(strstr(id->notes, "1 s average"));
	assert_non_null(strstr(id->notes, "Not Supported"));
	assert_non_null(strstr(id->notes, "validated against a stub libnvidia-ml only"));
	assert_float_equal(id->floor_w, 5.0, 0.0);
	struct ergon_sample s[4];
	read1(inst, s);
	assert_true(s[0].fields & ERGON_F_POWER);
	assert_false(s[0].fields & ERGON_F_ENERGY);
	assert_float_equal(s[0].power_w, 150.0, 1e-12);
	read1(inst, s);
	json_t *l = json_array();
	/* 5 averaging periods of 1 s is the shortest trusted window. */
	assert_int_equal(ergon_instrument_check_window(inst, 2.0, l), 1);
	assert_int_equal(ergon_instrument_check_window(inst, 6.0, l), 0);
	assert_int_equal(json_array_size(l), 1);
	assert_true(ergon_issue_has(l, "instrument.averaged_power"));
	json_decref(l);
	struct ergon_err err = {0};
	assert_int_equal(ergon_instrument_stop(inst, &err), 0);
	/* Two back-to-back reads span far less than 5 s. */
	assert_true(ergon_issue_has(inst->issues, "instrument.averaged_power"));
	ergon_instrument_close(inst);
}

static void ga100_power_is_instantaneous(void **state)
{
	(void)state;
	setenv("STUB_NVML_ENERGY", "unsupported", 1);
	setenv("STUB_NVML_ARCH", "7", 1);
	setenv("STUB_NVML_NAME", "NVIDIA A100-SXM4-80GB", 1);
	struct ergon_instrument *inst = open_ok("nvml");
	assert_float_equal(inst->identity.averaging_period_s, 0.0, 0.0);
	assert_non_null(strstr(inst->identity.notes, "instantaneous"));
	ergon_instrument_close(inst);
	/* An Ampere workstation board whose name merely contains "A30". */
	setenv("STUB_NVML_NAME", "NVIDIA RTX A3000 Laptop GPU", 1);
	inst = open_ok("nvml");
	assert_float_equal(inst->identity.averaging_period_s, 1.0, 0.0);
	ergon_instrument_close(inst);
	/* Turing (6) is instantaneous. */
	setenv("STUB_NVML_ARCH", "6", 1);
	setenv("STUB_NVML_NAME", "Tesla T4", 1);
	inst = open_ok("nvml");
	assert_float_equal(inst->identity.averaging_period_s, 0.0, 0.0);
	ergon_instrument_close(inst);
}

static void old_driver_without_energy_symbol(void **state)
{
	(void)state;
	setenv("ERGON_NVML_LIB", getenv("ERGON_NVML_STUB_OLD"), 1);
	struct ergon_instrument *inst = open_ok("nvml");
	assert_string_equal(inst->identity.integrates, "none");
	assert_non_null(strstr(inst->identity.notes, "no nvmlDeviceGetTotalEnergyConsumption"));
	assert_non_null(strstr(inst->identity.notes, "nvmlDeviceGetCurrentClocksThrottleReasons"));
	/* No architecture symbol: unknown, treated as averaged (the safe side). */
	assert_float_equal(inst->identity.averaging_period_s, 1.0, 0.0);
	struct ergon_sample s[4];
	read1(inst, s);
	assert_float_equal(s[0].power_w, 150.0, 1e-12);
	ergon_instrument_close(inst);
}

static void library_absent(void **state)
{
	(void)state;
	setenv("ERGON_NVML_LIB", "/nonexistent/libnvidia-ml.so.1", 1);
	struct ergon_instrument *inst = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_instrument_open("nvml", NULL, &inst, &err), ERGON_ENOENT);
	assert_non_null(strstr(err.msg, "/nonexistent/libnvidia-ml.so.1"));
	assert_non_null(strstr(err.msg, "Install the NVIDIA driver"));
	assert_non_null(strstr(err.msg, "ERGON_NVML_LIB"));
}

static void init_failure(void **state)
{
	(void)state;
	setenv("STUB_NVML_INIT", "fail", 1);
	struct ergon_instrument *inst = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_instrument_open("nvml", NULL, &inst, &err), ERGON_EDEVICE);
	assert_non_null(strstr(err.msg, "nvmlInit_v2"));
	assert_non_null(strstr(err.msg, "Driver Not Loaded"));
	assert_non_null(strstr(err.msg, "nvidia-smi"));
}

static void nothing_supported(void **state)
{
	(void)state;
	setenv("STUB_NVML_ENERGY", "unsupported", 1);
	setenv("STUB_NVML_POWER", "unsupported", 1);
	struct ergon_instrument *inst = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_instrument_open("nvml", NULL, &inst, &err), ERGON_ENOTSUP);
	assert_non_null(strstr(err.msg, "nvmlDeviceGetPowerUsage failed: Not Supported"));
	assert_non_null(strstr(err.msg, "nvmlDeviceGetTotalEnergyConsumption"));
}

static void gpu_lost_mid_run(void **state)
{
	(void)state;
	setenv("STUB_NVML_FAIL_AT", "3", 1);
	struct ergon_instrument *inst = open_ok("nvml");
	struct ergon_sample s[4];
	read1(inst, s);
	struct ergon_err err = {0};
	size_t n = 9;
	assert_int_equal(ergon_instrument_read(inst, s, 4, &n, &err), ERGON_EDEVICE);
	assert_int_equal(n, 0);
	assert_non_null(strstr(err.msg, "GPU is lost"));
	assert_non_null(strstr(err.msg, "nvmlDeviceGetTotalEnergyConsumption"));
	ergon_instrument_close(inst);
}

static void throttle_evidence(void **state)
{
	(void)state;
	/* SW power cap (0x4) and SW thermal slowdown (0x20). */
	setenv("STUB_NVML_REASONS", "0x24", 1);
	struct ergon_instrument *inst = open_ok("nvml");
	struct ergon_sample s[4];
	read1(inst, s);
	json_t *st = ergon_instrument_stats(inst);
	json_t *ev = json_object_get(st, "evidence");
	assert_int_equal(json_integer_value(json_object_get(ev, "reasons_seen")), 0x24);
	assert_int_equal(json_integer_value(json_object_get(ev, "polls_power_cap")), 1);
	assert_int_equal(json_integer_value(json_object_get(ev, "polls_thermal")), 1);
	assert_int_equal(json_integer_value(json_object_get(ev, "polls_hw_slowdown")), 0);
	assert_float_equal(json_real_value(json_object_get(ev, "temp_max_c")), 55.0, 1e-12);
	json_decref(st);
	ergon_instrument_close(inst);
}

static void bad_index(void **state)
{
	(void)state;
	struct ergon_instrument *inst = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_instrument_open("nvml:3", NULL, &inst, &err), ERGON_ENOENT);
	assert_non_null(strstr(err.msg, "has 1 NVIDIA GPU"));
	err = (struct ergon_err){0};
	assert_int_equal(ergon_instrument_open("nvml:x", NULL, &inst, &err), ERGON_EUSAGE);
	assert_non_null(strstr(err.msg, "GPU index"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup(energy_counter_deltas, reset_env),
	    cmocka_unit_test_setup(counter_backwards_reported, reset_env),
	    cmocka_unit_test_setup(fallback_to_averaged_power, reset_env),
	    cmocka_unit_test_setup(ga100_power_is_instantaneous, reset_env),
	    cmocka_unit_test_setup(old_driver_without_energy_symbol, reset_env),
	    cmocka_unit_test_setup(library_absent, reset_env),
	    cmocka_unit_test_setup(init_failure, reset_env),
	    cmocka_unit_test_setup(nothing_supported, reset_env),
	    cmocka_unit_test_setup(gpu_lost_mid_run, reset_env),
	    cmocka_unit_test_setup(throttle_evidence, reset_env),
	    cmocka_unit_test_setup(bad_index, reset_env),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
