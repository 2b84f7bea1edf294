/* ergon config: show the effective profile configuration and where each
 * value came from; list the board registry. */
#include "cli.h"
#include "cli_opts.h"
#include "config_print.h"
#include "ergon/config.h"
#include "ergon/model_fw.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SETS 64

static int show(int argc, char **argv)
{
	const char *file = NULL, *board = NULL, *sets[MAX_SETS];
	size_t nsets = 0;
	int as_json = 0;
	struct cli_parser p;
	cli_init_from(&p, "config", argc, argv, 2);
	while (cli_next(&p)) {
		int power = 0;
		const char *set = NULL;
		if (cli_flag(&p, "--json", &as_json)) {
		} else if (cli_flag(&p, "--power", &power)) {
			/* Shorthand that `ergon profile --power` shares. */
			set = "power.enabled=true";
		} else if (cli_str(&p, "--config", &file)) {
		} else if (cli_str(&p, "--board", &board)) {
		} else if (cli_str(&p, "--set", &set)) {
		} else {
			cli_unknown(&p);
		}
		if (set && nsets == MAX_SETS)
			cli_error(&p, "more than %d --set options", MAX_SETS);
		else if (set)
			sets[nsets++] = set;
	}
	if (p.rc)
		return p.rc;
	struct ergon_config cfg;
	struct ergon_err err = {0};
	int rc = ergon_config_init(&cfg);
	if (rc) {
		ergon_err_set(&err, rc, "cannot initialise the configuration");
		goto fail;
	}
	if (file && (rc = ergon_config_load_file(&cfg, file, &err)) != 0)
		goto fail;
	if (board) {
		char set[128];
		if ((size_t)snprintf(set, sizeof(set), "target.board=%s", board) >= sizeof(set)) {
			rc = ergon_err_set(&err, ERGON_EUSAGE, "--board %.40s…: name too long",
					   board);
			goto fail;
		}
		if ((rc = ergon_config_set(&cfg, set, ERGON_CFG_CLI, &err)) != 0)
			goto fail;
	}
	for (size_t i = 0; i < nsets; i++)
		if ((rc = ergon_config_set(&cfg, sets[i], ERGON_CFG_CLI, &err)) != 0)
			goto fail;
	if ((rc = ergon_config_resolve(&cfg, &err)) != 0)
		goto fail;
	if (as_json) {
		json_t *j = ergon_config_to_json(&cfg);
		json_t *o = j ? json_pack("{s:o,s:O}", "config", j, "issues", cfg.issues) : NULL;
		if (o == NULL) {
			rc = ergon_err_set(&err, ERGON_ENOMEM, "out of memory");
			goto fail;
		}
		rc = cli_print_json(o);
		json_decref(o);
		ergon_config_cleanup(&cfg);
		return rc;
	} else {
		ergon_cli_config_print(stdout, &cfg);
	}
	ergon_cli_config_print_issues(stderr, "config", &cfg);
	ergon_config_cleanup(&cfg);
	return ERGON_EXIT_OK;
fail:
	ergon_config_cleanup(&cfg);
	return ergon_cli_fail("config", &err);
}

/* Board i's port in ergon-target ({port, validation, ...}) into *port,
 * or NULL when it has none; a broken descriptor fails. */
static int board_port(const char *name, json_t **port, struct ergon_err *err)
{
	struct ergon_err e = {0};
	int rc = ergon_model_fw_board_check(name, port, &e);
	if (rc == ERGON_EUSAGE) /* no port: the message says how to write one */
		return 0;
	if (rc)
		*err = e;
	return rc;
}

static int boards(int json)
{
	size_t n;
	const struct ergon_board *b = ergon_boards(&n);
	struct ergon_err err = {0};
	json_t *ports = json_array();
	int rc = ports ? 0 : ergon_err_set(&err, ERGON_ENOMEM, "out of memory");
	for (size_t i = 0; i < n && !rc; i++) {
		json_t *p = NULL;
		rc = board_port(b[i].name, &p, &err);
		json_array_append_new(ports, p ? p : json_null());
	}
	if (rc) {
		json_decref(ports);
		return ergon_cli_fail("config", &err);
	}
	if (json) {
		json_t *a = json_array();
		for (size_t i = 0; a && i < n; i++) {
			json_t *pins =
			    b[i].wiring_registered
				? json_pack("{s:I, s:I, s:I}", "sync", (json_int_t)b[i].sync_gpio_pin,
					    "state", (json_int_t)b[i].state_gpio_pin, "go",
					    (json_int_t)b[i].go_gpio_pin)
				: json_null();
			json_array_append_new(
			    a, json_pack("{s:s, s:s, s:o, s:s, s:O}", "board", b[i].name, "soc",
					 b[i].soc, "gpio", pins, "reset_default",
					 b[i].apollo5_family ? "debug_reset+swpoi_reset" : "auto",
					 "port", json_array_get(ports, i)));
		}
		json_decref(ports);
		return cli_json_doc("config", json_pack("{s:o}", "boards", a));
	}
	printf("%-24s %-40s %-14s %-24s %s\n", "board", "soc", "sync/state/go", "reset default",
	       "port (docs/internals/ports.md)");
	for (size_t i = 0; i < n; i++) {
		char pins[32], port[96];
		const json_t *p = json_array_get(ports, i);
		if (b[i].wiring_registered)
			snprintf(pins, sizeof(pins), "%u/%u/%u", b[i].sync_gpio_pin,
				 b[i].state_gpio_pin, b[i].go_gpio_pin);
		else
			snprintf(pins, sizeof(pins), "(must be set)");
		/* The validation status goes with the port everywhere: an
		 * unvalidated one is never shown as if it had run. */
		if (json_is_object(p))
			snprintf(port, sizeof port, "%s (%s)",
				 json_string_value(json_object_get(p, "port")),
				 json_string_value(json_object_get(
				     json_object_get(p, "validation"), "status")));
		else
			snprintf(port, sizeof port, "-");
		printf("%-24s %-40s %-14s %-24s %s\n", b[i].name, b[i].soc, pins,
		       b[i].apollo5_family ? "debug_reset+swpoi_reset" : "auto", port);
	}
	json_decref(ports);
	return ERGON_EXIT_OK;
}

/* The actions, also completed by `ergon __complete actions config`. */
static const char *const actions[] = {"show", "boards", NULL};

static int run(int argc, char **argv)
{
	struct cli_parser p;
	cli_init_from(&p, "config", argc, argv, 2);
	int a = cli_action(&p, actions);
	if (a < 0)
		return p.rc;
	if (a == 0)
		return show(argc, argv);
	int json = 0;
	while (cli_next(&p))
		if (!cli_flag(&p, "--json", &json))
			cli_unknown(&p);
	return p.rc ? p.rc : boards(json);
}

const struct ergon_cli_command ergon_cli_cmd_config = {
    .actions = actions,
    .name = "config",
    .summary = "show the effective profile configuration and where each value came from",
    .help = "Usage: ergon config show [--config FILE.yml] [--board B] [--power] "
	    "[--set KEY=VALUE ...] [--json]\n"
	    "       ergon config boards [--json]\n\n"
	    "show resolves the configuration as `ergon profile` will: defaults, then the\n"
	    "board registry, INA228 presets, the YAML file, then --board/--set (the command\n"
	    "line wins), then the rules (lock-step auto, power window target). It prints\n"
	    "every key, its effective value, its origin (default, board, preset, config\n"
	    "file, command line, rule) and where it was set. Warnings go to stderr.\n"
	    "--power is short for --set power.enabled=true.\n"
	    "Keys and rules: docs/internals/config.md. boards lists the board registry.\n\n"
	    "Examples:\n"
	    "  ergon config show --board apollo510_evb --power\n"
	    "  ergon config show --config ergon.yml --set profiling.iterations=200 --json\n"
	    "  ergon config boards\n",
    .run = run,
    .exits = {[0] = "the configuration resolves (warnings are allowed)",
	      [1] = CLI_EXIT_NONE,
	      [2] = "usage, or a configuration error (the key, file and line)",
	      [3] = "the --config file cannot be read",
	      [4] = CLI_EXIT_NONE},
};
