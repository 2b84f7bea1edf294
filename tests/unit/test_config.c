/* The profile configuration: defaults (checked against issue 7's list),
 * the YAML loader's errors with file:line:column, --set overrides, the
 * board registry and every rule. Expected values come from issue 7's text
 * and from hand arithmetic in the comments. */
#include "ergon/config.h"
#include "ergon/issues.h"
#include "test_support.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static struct ergon_config cfg;
static struct ergon_err err;

static int setup(void **state)
{
	(void)state;
	memset(&err, 0, sizeof(err));
	return ergon_config_init(&cfg);
}

static int teardown(void **state)
{
	(void)state;
	ergon_config_cleanup(&cfg);
	return 0;
}

static int load(const char *yaml)
{
	return ergon_config_load_yaml(&cfg, "t.yml", yaml, strlen(yaml), &err);
}

static int origin_of(const char *key)
{
	int i = ergon_config_key_index(key);
	assert_true(i >= 0);
	return cfg.origin[i];
}

static const char *value_of(const char *key)
{
	static char buf[1100];
	int i = ergon_config_key_index(key);
	assert_true(i >= 0);
	ergon_config_value_text(&cfg, (size_t)i, buf, sizeof(buf));
	return buf;
}

static void expect_msg(const char *needle)
{
	if (strstr(err.msg, needle) == NULL)
		fail_msg("message lacks '%s': %s", needle, err.msg);
}

/* ---- defaults ---------------------------------------------------------- */

static void defaults_match_issue(void **state)
{
	(void)state;
	/* Issue 7, "Sections and defaults". */
	assert_string_equal(cfg.target.board, "apollo510_evb");
	assert_int_equal(cfg.target.heartbeat.every_n_ops, 8);
	assert_int_equal(cfg.target.heartbeat.every_ms, 2000);
	assert_true(cfg.target.heartbeat.host_timeout_s == 30.0);
	assert_true(isnan(cfg.target.heartbeat.overall_timeout_s));
	assert_string_equal(cfg.profiling.pmu_counters_cpu, "default");
	assert_int_equal(cfg.profiling.per_layer, 1);
	assert_int_equal(cfg.profiling.iterations, 100);
	assert_int_equal(cfg.profiling.warmup, 5);
	assert_int_equal(cfg.profiling.window_mode, ERGON_WINDOW_AUTO);
	assert_int_equal(cfg.profiling.window_target_ms, 1000);
	assert_int_equal(cfg.profiling.window_min, 10);
	assert_int_equal(cfg.profiling.window_max, 500000);
	assert_int_equal(cfg.profiling.clean_window_probe, ERGON_CFG_PROBE_INFER);
	assert_int_equal(cfg.profiling.clean_window_trace, 0);
	assert_int_equal(cfg.profiling.aggregation, ERGON_AGG_MEDIAN);
	assert_int_equal(cfg.profiling.extreme_mode, 0);
	assert_int_equal(cfg.profiling.force_shared_sram, 0);
	assert_int_equal(cfg.power.enabled, 0);
	assert_int_equal(cfg.power.mode, ERGON_POWER_EXTERNAL);
	assert_int_equal(cfg.power.firmware, ERGON_FIRMWARE_DEDICATED);
	assert_true(isnan(cfg.power.duration_s));
	assert_true(cfg.power.io_voltage == 1.8);
	assert_int_equal(cfg.power.state_gpio_pin, 0);
	assert_int_equal(cfg.power.go_gpio_pin, 0);
	assert_int_equal(cfg.power.sync_input_index, 0);
	assert_int_equal(cfg.power.state_input_index, 1);
	assert_int_equal(cfg.power.go_output_index, 0);
	assert_int_equal(cfg.power.marker_input_index, 1);
	assert_int_equal(cfg.power.lockstep, -1);
	assert_int_equal(cfg.power.stats_rate_hz, 1000);
	assert_int_equal(cfg.power.reset_strategy, ERGON_RESET_AUTO);
	assert_true(isnan(cfg.power.ina228.shunt_ohms));
	assert_true(cfg.power.ina228.max_current_a == 0.5);
	assert_int_equal(cfg.power.ina228.i2c_iom, 1);
	assert_int_equal(cfg.power.ina228.i2c_address, 0x40);
	assert_int_equal(cfg.power.ina228.i2c_speed_hz, 400000);
	assert_int_equal(cfg.power.ina228.conversion_time_us, 540);
	assert_int_equal(cfg.power.ina228.averaging_count, 16);
	assert_string_equal(cfg.output.dir, "results");
	assert_int_equal(cfg.output.format, ERGON_FORMAT_CSV);
	assert_int_equal(cfg.output.detailed, 0);
	for (size_t i = 0; i < ergon_config_key_count(); i++)
		assert_int_equal(cfg.origin[i], ERGON_CFG_DEFAULT);
	assert_string_equal(value_of("power.ina228.i2c_address"), "0x40");
	assert_string_equal(value_of("power.lockstep"), "auto");
}

/* ---- the YAML loader --------------------------------------------------- */

static void yaml_values_origins_and_places(void **state)
{
	(void)state;
	assert_int_equal(load("target:\n"
			      "  board: apollo4p_evb\n"
			      "  heartbeat:\n"
			      "    every_ms: 500\n"
			      "profiling:\n"
			      "  iterations: 250\n"
			      "  aggregation: trimmed\n"
			      "power:\n"
			      "  enabled: true\n"
			      "  duration_s: 12.5\n"
			      "  ina228:\n"
			      "    i2c_address: 0x45\n"
			      "  serial: 'JS220-001'\n"
			      "output:\n"),
			 0);
	assert_string_equal(cfg.target.board, "apollo4p_evb");
	assert_int_equal(cfg.target.heartbeat.every_ms, 500);
	assert_int_equal(cfg.profiling.iterations, 250);
	assert_int_equal(cfg.profiling.aggregation, ERGON_AGG_TRIMMED);
	assert_true(cfg.power.duration_s == 12.5);
	assert_int_equal(cfg.power.ina228.i2c_address, 0x45);
	assert_string_equal(cfg.power.serial, "JS220-001");
	assert_int_equal(origin_of("profiling.iterations"), ERGON_CFG_FILE);
	assert_int_equal(origin_of("profiling.warmup"), ERGON_CFG_DEFAULT);
	/* "  iterations: 250" is line 6; the value starts at column 15. */
	int i = ergon_config_key_index("profiling.iterations");
	assert_string_equal(cfg.where[i], "t.yml:6:15");
}

static void yaml_empty_document_is_defaults(void **state)
{
	(void)state;
	assert_int_equal(load(""), 0);
	assert_int_equal(load("# only a comment\n"), 0);
	assert_int_equal(cfg.profiling.iterations, 100);
}

static void yaml_syntax_error_has_place(void **state)
{
	(void)state;
	/* The unclosed flow mapping starting on line 2 runs to the end. */
	assert_int_equal(load("profiling:\n  iterations: {a: 1\n"), ERGON_EPARSE);
	expect_msg("t.yml:3:1: YAML syntax error");
}

static void yaml_unknown_key_suggests_nearest(void **state)
{
	(void)state;
	assert_int_equal(load("profiling:\n  iteratons: 5\n"), ERGON_ECONFIG);
	/* The key sits at line 2, column 3. */
	expect_msg("t.yml:2:3: unknown key 'profiling.iteratons' (did you mean 'iterations'?)");
	expect_msg("valid keys under profiling: pmu_counters, per_layer, iterations");
	ergon_err_clear(&err);
	assert_int_equal(load("profilling:\n  iterations: 5\n"), ERGON_ECONFIG);
	expect_msg("t.yml:1:1: unknown key 'profilling' (did you mean 'profiling'?)");
	ergon_err_clear(&err);
	/* A key of another section is pointed to its section. */
	assert_int_equal(load("power:\n  iterations: 5\n"), ERGON_ECONFIG);
	expect_msg("(it belongs under profiling)");
	ergon_err_clear(&err);
	assert_int_equal(load("power:\n  ina228:\n    shunt_ohm: 0.01\n"), ERGON_ECONFIG);
	expect_msg("t.yml:3:5: unknown key 'power.ina228.shunt_ohm' (did you mean 'shunt_ohms'?)");
	ergon_err_clear(&err);
	/* Nothing close: no suggestion, but the list. */
	assert_int_equal(load("output:\n  zzzzzzzz: 1\n"), ERGON_ECONFIG);
	assert_null(strstr(err.msg, "did you mean"));
	expect_msg("dir, format, detailed");
	ergon_err_clear(&err);
	/* Dotted keys are not nesting. */
	assert_int_equal(load("power.enabled: true\n"), ERGON_ECONFIG);
	expect_msg("unknown key 'power.enabled'");
}

static void yaml_type_errors(void **state)
{
	(void)state;
	assert_int_equal(load("power:\n  enabled: maybe\n"), ERGON_ECONFIG);
	expect_msg("t.yml:2:12: power.enabled: 'maybe' is not a boolean");
	ergon_err_clear(&err);
	assert_int_equal(load("profiling:\n  iterations: \"100\"\n"), ERGON_ECONFIG);
	expect_msg(
	    "profiling.iterations: '100' is not an unsigned integer; write digits without quotes");
	ergon_err_clear(&err);
	assert_int_equal(load("profiling:\n  iterations: -3\n"), ERGON_ECONFIG);
	expect_msg("not an unsigned integer");
	ergon_err_clear(&err);
	assert_int_equal(load("profiling:\n  iterations: 0\n"), ERGON_ECONFIG);
	expect_msg("profiling.iterations: 0 is out of range; use a value in [1, 10000000]");
	ergon_err_clear(&err);
	assert_int_equal(load("profiling:\n  aggregation: medain\n"), ERGON_ECONFIG);
	expect_msg(
	    "'medain' is not valid (did you mean 'median'?); use one of median, mean, trimmed");
	ergon_err_clear(&err);
	assert_int_equal(load("power:\n  io_voltage: 1.8V\n"), ERGON_ECONFIG);
	expect_msg("power.io_voltage: '1.8V' is not a number");
	ergon_err_clear(&err);
	assert_int_equal(load("power:\n  io_voltage: .nan\n"), ERGON_ECONFIG);
	ergon_err_clear(&err);
	assert_int_equal(load("power:\n  io_voltage: 12\n"), ERGON_ECONFIG);
	expect_msg("out of range; use a value in [1, 5]");
	ergon_err_clear(&err);
	/* 1e-400 underflows (strtod gives 0, under DBL_MIN =
	 * 2.2250738585072014e-308) and 1e-310 is a denormal: refused with the
	 * key's range, though 0 is in [0, 100]; an exact 0e-500 is 0. */
	assert_int_equal(load("power:\n  ina228:\n    shunt_tolerance_pct: 1e-400\n"),
			 ERGON_ECONFIG);
	expect_msg("power.ina228.shunt_tolerance_pct: 1e-400 underflows (a magnitude under "
		   "2.2250738585072014e-308");
	expect_msg("use a value in [0, 100]");
	ergon_err_clear(&err);
	assert_int_equal(load("power:\n  ina228:\n    shunt_tolerance_pct: 1e-310\n"),
			 ERGON_ECONFIG);
	expect_msg("shunt_tolerance_pct: 1e-310 underflows");
	ergon_err_clear(&err);
	assert_int_equal(load("power:\n  ina228:\n    shunt_tolerance_pct: 0e-500\n"), 0);
	assert_true(cfg.power.ina228.shunt_tolerance_pct == 0.0);
	ergon_err_clear(&err);
	/* 0x4A is the Click's address; 0x50 is outside INA228's 0x40..0x4F. */
	assert_int_equal(load("power:\n  ina228:\n    i2c_address: 0x50\n"), ERGON_ECONFIG);
	expect_msg("[0x40, 0x4F]");
	ergon_err_clear(&err);
	assert_int_equal(load("power:\n  ina228:\n    conversion_time_us: 500\n"), ERGON_ECONFIG);
	expect_msg("use one of 50, 84, 150, 280, 540, 1052, 2074, 4120");
	ergon_err_clear(&err);
	assert_int_equal(load("power:\n  driver: joulscope\n"), ERGON_ECONFIG);
	expect_msg("(did you mean 'joulescope'?)");
	ergon_err_clear(&err);
	assert_int_equal(load("profiling:\n  iterations: [1, 2]\n"), ERGON_ECONFIG);
	expect_msg("t.yml:2:15: profiling.iterations: expected a single value, found a list");
	ergon_err_clear(&err);
	assert_int_equal(load("power: 5\n"), ERGON_ECONFIG);
	expect_msg("t.yml:1:8: power: expected a mapping");
	ergon_err_clear(&err);
	assert_int_equal(load("- a\n- b\n"), ERGON_ECONFIG);
	expect_msg("the document (sections target, profiling, power, output): expected a mapping");
	ergon_err_clear(&err);
	assert_int_equal(load("power:\n  duration_s: \"null\"\n"), ERGON_ECONFIG);
	expect_msg("is not a number");
}

static void yaml_duplicates_and_documents(void **state)
{
	(void)state;
	assert_int_equal(load("profiling:\n  warmup: 1\n  warmup: 2\n"), ERGON_ECONFIG);
	expect_msg("t.yml:3:3: profiling.warmup is set a second time (first at line 2, column 3)");
	ergon_err_clear(&err);
	assert_int_equal(load("profiling:\n  warmup: 1\n---\nprofiling:\n  warmup: 2\n"),
			 ERGON_ECONFIG);
	expect_msg("a second YAML document");
}

static void yaml_failure_changes_nothing(void **state)
{
	(void)state;
	/* iterations is valid, the next key is not: the whole file is refused
	 * and iterations keeps its default. */
	assert_int_equal(load("profiling:\n  iterations: 7\n  bogus: 1\n"), ERGON_ECONFIG);
	assert_int_equal(cfg.profiling.iterations, 100);
	assert_int_equal(origin_of("profiling.iterations"), ERGON_CFG_DEFAULT);
}

static void yaml_file_errors(void **state)
{
	(void)state;
	assert_int_equal(ergon_config_load_file(&cfg, "/nonexistent/ergon.yml", &err),
			 ERGON_ENOENT);
	expect_msg("/nonexistent/ergon.yml");
	ergon_err_clear(&err);
	char *big = malloc(ERGON_CFG_FILE_MAX + 2);
	memset(big, '#', ERGON_CFG_FILE_MAX + 1);
	big[ERGON_CFG_FILE_MAX + 1] = '\0';
	assert_int_equal(ergon_config_load_yaml(&cfg, "big.yml", big, ERGON_CFG_FILE_MAX + 1, &err),
			 ERGON_ETOOBIG);
	free(big);
}

/* ---- the command line -------------------------------------------------- */

static void cli_wins_over_file(void **state)
{
	(void)state;
	assert_int_equal(load("profiling:\n  iterations: 250\n"), 0);
	assert_int_equal(ergon_config_set(&cfg, "profiling.iterations=300", ERGON_CFG_CLI, &err),
			 0);
	assert_int_equal(cfg.profiling.iterations, 300);
	assert_int_equal(origin_of("profiling.iterations"), ERGON_CFG_CLI);
	/* Null unsets a nullable key from the command line. */
	assert_int_equal(ergon_config_set(&cfg, "power.duration_s=null", ERGON_CFG_CLI, &err), 0);
	assert_true(isnan(cfg.power.duration_s));
	assert_int_equal(ergon_config_set(&cfg, "profiling.iteratons=3", ERGON_CFG_CLI, &err),
			 ERGON_ECONFIG);
	expect_msg("--set profiling.iteratons=3: unknown key 'profiling.iteratons' (did you mean "
		   "'profiling.iterations'?)");
	ergon_err_clear(&err);
	assert_int_equal(ergon_config_set(&cfg, "profiling.iterations", ERGON_CFG_CLI, &err),
			 ERGON_EUSAGE);
	expect_msg("expected KEY=VALUE");
	ergon_err_clear(&err);
	assert_int_equal(ergon_config_set(&cfg, "power.enabled=1", ERGON_CFG_CLI, &err),
			 ERGON_ECONFIG);
	expect_msg("--set power.enabled=1: power.enabled: '1' is not a boolean");
}

/* ---- boards ------------------------------------------------------------ */

static void board_registry_matches_issue(void **state)
{
	(void)state;
	/* Issue 7's table: sync/state/go. */
	static const struct {
		const char *name;
		uint32_t s, st, g;
		int apollo5;
	} want[] = {
	    {"apollo3p_evb", 26, 24, 25, 0},  {"apollo4p_evb", 22, 23, 24, 0},
	    {"apollo4l_evb", 61, 23, 24, 0},  {"apollo4p_blue_kbr_evb", 22, 23, 24, 0},
	    {"apollo510_evb", 29, 36, 14, 1}, {"apollo510b_evb", 29, 36, 14, 1},
	    {"apollo5b_evb", 10, 0, 0, 1},
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct ergon_board *b = ergon_board_find(want[i].name);
		assert_non_null(b);
		assert_int_equal(b->sync_gpio_pin, want[i].s);
		assert_int_equal(b->state_gpio_pin, want[i].st);
		assert_int_equal(b->go_gpio_pin, want[i].g);
		assert_int_equal(b->apollo5_family, want[i].apollo5);
		assert_int_equal(b->wiring_registered, 1);
	}
	const struct ergon_board *b = ergon_board_find("apollo330mP_evb");
	assert_non_null(b);
	assert_int_equal(b->wiring_registered, 0);
	assert_non_null(ergon_board_find("sim"));
	assert_non_null(ergon_board_find("qemu-an547"));
	assert_null(ergon_board_find("apollo9"));
}

static void board_fills_unset_values(void **state)
{
	(void)state;
	assert_int_equal(load("target:\n  board: apollo4l_evb\npower:\n  go_gpio_pin: 7\n"), 0);
	assert_int_equal(ergon_config_resolve(&cfg, &err), 0);
	assert_int_equal(cfg.power.sync_gpio_pin, 61);
	assert_int_equal(origin_of("power.sync_gpio_pin"), ERGON_CFG_BOARD);
	assert_int_equal(cfg.power.state_gpio_pin, 23);
	/* The file's go pin wins over the board's 24. */
	assert_int_equal(cfg.power.go_gpio_pin, 7);
	assert_int_equal(origin_of("power.go_gpio_pin"), ERGON_CFG_FILE);
	assert_int_equal(cfg.target.lifecycle, ERGON_LIFECYCLE_JLINK);
	assert_int_equal(origin_of("target.lifecycle"), ERGON_CFG_BOARD);
	/* Not Apollo5: the reset strategy stays auto. */
	assert_int_equal(cfg.power.reset_strategy, ERGON_RESET_AUTO);
}

static void unknown_board_lists_boards(void **state)
{
	(void)state;
	assert_int_equal(ergon_config_set(&cfg, "target.board=apollo51O_evb", ERGON_CFG_CLI, &err),
			 0);
	assert_int_equal(ergon_config_resolve(&cfg, &err), ERGON_ECONFIG);
	expect_msg("--set target.board=apollo51O_evb: target.board: unknown board 'apollo51O_evb' "
		   "(did you mean 'apollo510_evb'?)");
	expect_msg("apollo3p_evb, apollo4p_evb");
	expect_msg("sim, qemu-an547");
}

static void sim_board_defaults(void **state)
{
	(void)state;
	assert_int_equal(ergon_config_set(&cfg, "target.board=sim", ERGON_CFG_CLI, &err), 0);
	assert_int_equal(ergon_config_resolve(&cfg, &err), 0);
	assert_int_equal(cfg.target.lifecycle, ERGON_LIFECYCLE_SIM);
	assert_string_equal(cfg.power.driver, "sim");
	assert_int_equal(origin_of("power.driver"), ERGON_CFG_BOARD);
}

static void apollo5_reset_default(void **state)
{
	(void)state;
	assert_int_equal(ergon_config_resolve(&cfg, &err), 0);
	/* Default board apollo510_evb is Apollo5-family. */
	assert_int_equal(cfg.power.reset_strategy, ERGON_RESET_DEBUG_SWPOI);
	assert_int_equal(origin_of("power.reset_strategy"), ERGON_CFG_BOARD);
	assert_string_equal(value_of("power.reset_strategy"), "debug_reset+swpoi_reset");
}

static void apollo5_reset_explicit_wins(void **state)
{
	(void)state;
	assert_int_equal(load("power:\n  reset_strategy: power_cycle\n"), 0);
	assert_int_equal(ergon_config_resolve(&cfg, &err), 0);
	assert_int_equal(cfg.power.reset_strategy, ERGON_RESET_POWER_CYCLE);
	assert_int_equal(origin_of("power.reset_strategy"), ERGON_CFG_FILE);
}

static void apollo330_needs_pins(void **state)
{
	(void)state;
	assert_int_equal(load("target:\n  board: apollo330mP_evb\npower:\n  enabled: true\n"), 0);
	assert_int_equal(ergon_config_resolve(&cfg, &err), ERGON_ECONFIG);
	expect_msg("board apollo330mP_evb has no registered wiring");
	expect_msg("J8 header pins are sync 5, state 6, go 7");
}

static void apollo330_with_pins(void **state)
{
	(void)state;
	assert_int_equal(load("target:\n  board: apollo330mP_evb\npower:\n  enabled: true\n"
			      "  sync_gpio_pin: 5\n  state_gpio_pin: 6\n  go_gpio_pin: 7\n"),
			 0);
	assert_int_equal(ergon_config_resolve(&cfg, &err), 0);
	assert_int_equal(cfg.power.lockstep, 1);
	assert_int_equal(cfg.power.reset_strategy, ERGON_RESET_DEBUG_SWPOI);
}

/* ---- lock-step ---------------------------------------------------------- */

static void lockstep_auto_on_gated_external(void **state)
{
	(void)state;
	/* apollo510_evb: state 36, go 14, sync 29; external by default. */
	assert_int_equal(ergon_config_set(&cfg, "power.enabled=true", ERGON_CFG_CLI, &err), 0);
	assert_int_equal(ergon_config_resolve(&cfg, &err), 0);
	assert_int_equal(cfg.power.lockstep, 1);
	assert_int_equal(origin_of("power.lockstep"), ERGON_CFG_RULE);
}

static void lockstep_auto_off_internal(void **state)
{
	(void)state;
	assert_int_equal(load("power:\n  enabled: true\n  mode: internal\n  ina228:\n"
			      "    board: adafruit-ina228\n"),
			 0);
	assert_int_equal(ergon_config_resolve(&cfg, &err), 0);
	assert_int_equal(cfg.power.lockstep, 0);
	int i = ergon_config_key_index("power.lockstep");
	assert_non_null(strstr(cfg.note[i], "internal mode never enables it"));
}

static void lockstep_auto_off_without_power_or_pins(void **state)
{
	(void)state;
	assert_int_equal(ergon_config_resolve(&cfg, &err), 0);
	assert_int_equal(cfg.power.lockstep, 0); /* power not enabled */
	ergon_config_cleanup(&cfg);
	ergon_config_init(&cfg);
	/* apollo5b_evb: 10/0/0, gated but no handshake pins. */
	assert_int_equal(load("target:\n  board: apollo5b_evb\npower:\n  enabled: true\n"), 0);
	assert_int_equal(ergon_config_resolve(&cfg, &err), 0);
	assert_int_equal(cfg.power.lockstep, 0);
}

static void lockstep_explicit_wins(void **state)
{
	(void)state;
	assert_int_equal(load("power:\n  enabled: true\n  lockstep: false\n"), 0);
	assert_int_equal(ergon_config_resolve(&cfg, &err), 0);
	assert_int_equal(cfg.power.lockstep, 0);
	assert_int_equal(origin_of("power.lockstep"), ERGON_CFG_FILE);
	ergon_config_cleanup(&cfg);
	ergon_config_init(&cfg);
	/* Explicit true in internal mode (where auto would say false). */
	assert_int_equal(load("power:\n  enabled: true\n  mode: internal\n  lockstep: true\n"
			      "  ina228:\n    shunt_ohms: 0.1\n"),
			 0);
	assert_int_equal(ergon_config_resolve(&cfg, &err), 0);
	assert_int_equal(cfg.power.lockstep, 1);
}

static void lockstep_true_without_pins_is_error(void **state)
{
	(void)state;
	assert_int_equal(load("target:\n  board: apollo5b_evb\npower:\n  lockstep: true\n"), 0);
	assert_int_equal(ergon_config_resolve(&cfg, &err), ERGON_ECONFIG);
	expect_msg("t.yml:4:13: power.lockstep: true requires power.state_gpio_pin > 0 and "
		   "power.go_gpio_pin > 0 (now 0 from board apollo5b_evb and 0 from board "
		   "apollo5b_evb)");
}

/* ---- windows ------------------------------------------------------------ */

static void power_auto_window_at_least_5000(void **state)
{
	(void)state;
	assert_int_equal(ergon_config_set(&cfg, "power.enabled=true", ERGON_CFG_CLI, &err), 0);
	assert_int_equal(ergon_config_resolve(&cfg, &err), 0);
	/* max(1000, 5000) = 5000 */
	assert_int_equal(cfg.profiling.window_target_ms, 5000);
	assert_int_equal(origin_of("profiling.window_target_ms"), ERGON_CFG_RULE);
	ergon_config_cleanup(&cfg);
	ergon_config_init(&cfg);
	assert_int_equal(load("profiling:\n  window_target_ms: 8000\npower:\n  enabled: true\n"),
			 0);
	assert_int_equal(ergon_config_resolve(&cfg, &err), 0);
	/* max(8000, 5000) = 8000, as written. */
	assert_int_equal(cfg.profiling.window_target_ms, 8000);
	assert_int_equal(origin_of("profiling.window_target_ms"), ERGON_CFG_FILE);
}

static void no_power_window_untouched(void **state)
{
	(void)state;
	assert_int_equal(ergon_config_resolve(&cfg, &err), 0);
	assert_int_equal(cfg.profiling.window_target_ms, 1000);
	assert_int_equal(json_array_size(cfg.issues), 0);
}

static void fixed_window_kept_and_warned(void **state)
{
	(void)state;
	assert_int_equal(load("profiling:\n  window_mode: fixed\n  window_target_ms: 1000\n"
			      "power:\n  enabled: true\n"),
			 0);
	assert_int_equal(ergon_config_resolve(&cfg, &err), 0);
	assert_int_equal(cfg.profiling.window_target_ms, 1000);
	/* Fixed runs exactly `iterations`: its length is not decidable from
	 * the configuration (the power stage checks iterations x the PMU
	 * stage's inference time), so no warning here. */
	assert_false(ergon_issue_has(cfg.issues, "config.fixed_window_short"));
	ergon_config_cleanup(&cfg);
	ergon_config_init(&cfg);
	/* 1001 ms is above the ~1 s bound: no warning. */
	assert_int_equal(load("profiling:\n  window_mode: fixed\n  window_target_ms: 1001\n"
			      "power:\n  enabled: true\n"),
			 0);
	assert_int_equal(ergon_config_resolve(&cfg, &err), 0);
	assert_int_equal(cfg.profiling.window_target_ms, 1001);
	assert_false(ergon_issue_has(cfg.issues, "config.fixed_window_short"));
}

static void window_min_above_max(void **state)
{
	(void)state;
	assert_int_equal(load("profiling:\n  window_min: 600\n  window_max: 500\n"), 0);
	assert_int_equal(ergon_config_resolve(&cfg, &err), ERGON_ECONFIG);
	expect_msg("profiling.window_min 600 is above profiling.window_max 500");
}

static void extreme_and_shared_sram_is_error(void **state)
{
	(void)state;
	assert_int_equal(load("profiling:\n  extreme_mode: true\n  force_shared_sram: true\n"), 0);
	assert_int_equal(ergon_config_resolve(&cfg, &err), ERGON_ECONFIG);
	expect_msg("t.yml:2:17: profiling.extreme_mode: true cannot be combined with "
		   "profiling.force_shared_sram: true (t.yml:3:22)");
}

/* ---- INA228 presets ------------------------------------------------------ */

static void click_preset_fills_address_and_needs_shunt(void **state)
{
	(void)state;
	assert_int_equal(load("power:\n  enabled: true\n  driver: ina228\n  ina228:\n"
			      "    board: mikroe-power-monitor-click\n"),
			 0);
	assert_int_equal(ergon_config_resolve(&cfg, &err), ERGON_ECONFIG);
	expect_msg("mikroe-power-monitor-click needs power.ina228.shunt_ohms");
	expect_msg("carries no shunt resistor");
	ergon_config_cleanup(&cfg);
	ergon_config_init(&cfg);
	assert_int_equal(load("power:\n  enabled: true\n  driver: ina228\n  ina228:\n"
			      "    board: mikroe-power-monitor-click\n    shunt_ohms: 0.05\n"),
			 0);
	assert_int_equal(ergon_config_resolve(&cfg, &err), 0);
	assert_int_equal(cfg.power.ina228.i2c_address, 0x4A);
	assert_int_equal(origin_of("power.ina228.i2c_address"), ERGON_CFG_PRESET);
	assert_true(cfg.power.ina228.shunt_ohms == 0.05);
	assert_false(ergon_issue_has(cfg.issues, "config.ina228_address_mismatch"));
}

static void click_explicit_address_wins_with_warning(void **state)
{
	(void)state;
	assert_int_equal(load("power:\n  ina228:\n    board: mikroe-power-monitor-click\n"
			      "    i2c_address: 0x40\n"),
			 0);
	assert_int_equal(ergon_config_resolve(&cfg, &err), 0);
	assert_int_equal(cfg.power.ina228.i2c_address, 0x40);
	assert_int_equal(origin_of("power.ina228.i2c_address"), ERGON_CFG_FILE);
	assert_true(ergon_issue_has(cfg.issues, "config.ina228_address_mismatch"));
	json_t *iss = json_array_get(cfg.issues, 0);
	assert_non_null(strstr(json_string_value(json_object_get(iss, "message")), "set 0x4A"));
}

static void adafruit_preset(void **state)
{
	(void)state;
	assert_int_equal(load("power:\n  enabled: true\n  driver: ina228\n  ina228:\n"
			      "    board: adafruit-ina228\n"),
			 0);
	assert_int_equal(ergon_config_resolve(&cfg, &err), 0);
	assert_int_equal(cfg.power.ina228.i2c_address, 0x40);
	assert_int_equal(origin_of("power.ina228.i2c_address"), ERGON_CFG_PRESET);
	/* The Adafruit breakout's 15 mOhm shunt. */
	assert_true(cfg.power.ina228.shunt_ohms == 0.015);
	assert_int_equal(origin_of("power.ina228.shunt_ohms"), ERGON_CFG_PRESET);
	ergon_config_cleanup(&cfg);
	ergon_config_init(&cfg);
	assert_int_equal(
	    load("power:\n  ina228:\n    board: adafruit-ina228\n    shunt_ohms: 0.01\n"
		 "    i2c_address: 0x41\n"),
	    0);
	assert_int_equal(ergon_config_resolve(&cfg, &err), 0);
	assert_true(cfg.power.ina228.shunt_ohms == 0.01);
	assert_int_equal(cfg.power.ina228.i2c_address, 0x41);
	assert_int_equal(origin_of("power.ina228.shunt_ohms"), ERGON_CFG_FILE);
}

static void ina228_without_shunt_is_error(void **state)
{
	(void)state;
	assert_int_equal(load("power:\n  enabled: true\n  driver: ina228\n"), 0);
	assert_int_equal(ergon_config_resolve(&cfg, &err), ERGON_ECONFIG);
	expect_msg("power.ina228.shunt_ohms is not set and has no default on purpose");
	ergon_config_cleanup(&cfg);
	ergon_config_init(&cfg);
	/* Not used (joulescope driver, external mode): no shunt needed. */
	assert_int_equal(load("power:\n  enabled: true\n"), 0);
	assert_int_equal(ergon_config_resolve(&cfg, &err), 0);
}

static void unknown_preset_suggests(void **state)
{
	(void)state;
	assert_int_equal(load("power:\n  ina228:\n    board: adafruit-ina28\n"), ERGON_ECONFIG);
	expect_msg("(did you mean 'adafruit-ina228'?)");
}

/* ---- duration ------------------------------------------------------------ */

static void duration_auto_and_explicit(void **state)
{
	(void)state;
	double d = 0;
	int origin = 0;
	/* 10 s runtime: 2 s settle + 10 + max(2, 0.25 * 10 = 2.5) = 14.5 s. */
	assert_int_equal(ergon_config_power_duration_s(&cfg, 10.0, &d, &origin, &err), 0);
	assert_true(fabs(d - 14.5) < 1e-12);
	assert_int_equal(origin, ERGON_CFG_RULE);
	/* 4 s runtime: 2 + 4 + max(2, 1) = 8 s. */
	assert_int_equal(ergon_config_power_duration_s(&cfg, 4.0, &d, &origin, &err), 0);
	assert_true(fabs(d - 8.0) < 1e-12);
	assert_int_equal(ergon_config_power_duration_s(&cfg, -1.0, &d, &origin, &err),
			 ERGON_ERANGE);
	ergon_err_clear(&err);
	assert_int_equal(ergon_config_power_duration_s(&cfg, NAN, &d, &origin, &err), ERGON_ERANGE);
	ergon_err_clear(&err);
	assert_int_equal(ergon_config_set(&cfg, "power.duration_s=30", ERGON_CFG_CLI, &err), 0);
	assert_int_equal(ergon_config_power_duration_s(&cfg, 10.0, &d, &origin, &err), 0);
	assert_true(d == 30.0);
	assert_int_equal(origin, ERGON_CFG_CLI);
}

/* ---- helpers --------------------------------------------------------------- */

static void edit_distance_values(void **state)
{
	(void)state;
	/* The textbook example: kitten -> sitting is 3 edits. */
	assert_int_equal(ergon_edit_distance("kitten", "sitting"), 3);
	assert_int_equal(ergon_edit_distance("", "abc"), 3);
	assert_int_equal(ergon_edit_distance("same", "same"), 0);
	assert_int_equal(ergon_edit_distance("medain", "median"), 2);
}

static void json_carries_origin(void **state)
{
	(void)state;
	assert_int_equal(load("profiling:\n  iterations: 42\n"), 0);
	assert_int_equal(ergon_config_resolve(&cfg, &err), 0);
	json_t *j = ergon_config_to_json(&cfg);
	assert_non_null(j);
	json_t *it = json_object_get(j, "profiling.iterations");
	assert_int_equal(json_integer_value(json_object_get(it, "value")), 42);
	assert_string_equal(json_string_value(json_object_get(it, "origin")), "config file");
	assert_string_equal(json_string_value(json_object_get(it, "where")), "t.yml:2:15");
	assert_true(json_is_null(json_object_get(json_object_get(j, "power.duration_s"), "value")));
	assert_int_equal(json_object_size(j), ergon_config_key_count());
	json_decref(j);
}

static void format_lists_every_key(void **state)
{
	(void)state;
	assert_int_equal(load("profiling:\n  iterations: 42\n"), 0);
	char *t = ergon_config_format(&cfg);
	assert_non_null(t);
	/* Before resolve: header + one line per key, no board line. */
	size_t lines = 0;
	for (const char *p = t; *p; p++)
		lines += *p == '\n';
	assert_int_equal(lines, ergon_config_key_count() + 1);
	assert_null(strstr(t, "board       :"));
	free(t);
	assert_int_equal(ergon_config_resolve(&cfg, &err), 0);
	t = ergon_config_format(&cfg);
	assert_non_null(t);
	assert_non_null(strstr(t, "board       : apollo510_evb (Apollo510)\n"));
	const char *line = strstr(t, "\nprofiling.iterations ");
	assert_non_null(line);
	const char *end = strchr(line + 1, '\n');
	assert_non_null(end);
	char one[256];
	snprintf(one, sizeof(one), "%.*s", (int)(end - line - 1), line + 1);
	/* key, value, origin, place in that order. */
	const char *v = strstr(one, " 42 ");
	const char *o = strstr(one, "config file");
	const char *w = strstr(one, "t.yml:2:15");
	assert_true(v && o && w && v < o && o < w);
	/* The values line up under "value", also past the longest key
	 * (profiling.clean_window_attach_wait_ms, 37 bytes: its default 1000
	 * once ran into the key). */
	const char *hdr = strstr(t, "\nkey ");
	assert_non_null(hdr);
	size_t col = (size_t)(strstr(hdr, "value") - (hdr + 1));
	const char *aw = strstr(t, "\nprofiling.clean_window_attach_wait_ms ");
	assert_non_null(aw);
	assert_memory_equal(aw + 1 + col, "1000 ", 5);
	assert_int_equal(aw[col], ' ');
	free(t);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
	    T(defaults_match_issue),
	    T(yaml_values_origins_and_places),
	    T(yaml_empty_document_is_defaults),
	    T(yaml_syntax_error_has_place),
	    T(yaml_unknown_key_suggests_nearest),
	    T(yaml_type_errors),
	    T(yaml_duplicates_and_documents),
	    T(yaml_failure_changes_nothing),
	    T(yaml_file_errors),
	    T(cli_wins_over_file),
	    T(board_registry_matches_issue),
	    T(board_fills_unset_values),
	    T(unknown_board_lists_boards),
	    T(sim_board_defaults),
	    T(apollo5_reset_default),
	    T(apollo5_reset_explicit_wins),
	    T(apollo330_needs_pins),
	    T(apollo330_with_pins),
	    T(lockstep_auto_on_gated_external),
	    T(lockstep_auto_off_internal),
	    T(lockstep_auto_off_without_power_or_pins),
	    T(lockstep_explicit_wins),
	    T(lockstep_true_without_pins_is_error),
	    T(power_auto_window_at_least_5000),
	    T(no_power_window_untouched),
	    T(fixed_window_kept_and_warned),
	    T(window_min_above_max),
	    T(extreme_and_shared_sram_is_error),
	    T(click_preset_fills_address_and_needs_shunt),
	    T(click_explicit_address_wins_with_warning),
	    T(adafruit_preset),
	    T(ina228_without_shunt_is_error),
	    T(unknown_preset_suggests),
	    T(duration_auto_and_explicit),
	    T(edit_distance_values),
	    T(json_carries_origin),
	    T(format_lists_every_key),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
