/* `ergon profile --board sim` end to end through the CLI.
 *
 * Truth of the virtual bench, computed from its configured model
 * (sim/src/board.c): one inference = 48000 + 24000 + 24000 = 96000 cycles
 * at 96 MHz = 1 ms, drawing 5 mA from a 1.8 V rail:
 *     5e-3 A x 1.8 V x 1e-3 s = 9e-6 J per inference.
 * summary.json must state an uncertainty and hold the energy per inference
 * within it of 9 uJ.
 *
 * Each fault scenario yields exactly its documented codes: the table is
 * docs/internals/sim.md's "Codes through `ergon profile`", read at run
 * time and required to list the same scenarios as the doc's scenario list,
 * (the scenario firmware runs lock-step whenever the configuration has it,
 * so profile.ready_not_observed comes only from ready_wire_open); and the
 * clean-window codes for the profile-flow
 * scenarios whose firmware counts stalled/partial iterations.
 */
#include "ergon/issues.h"
#include "ergon/sim.h"
#include "test_support.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static json_t *load_summary(const char *dir)
{
	char *p = ts_strf("%s/summary.json", dir);
	json_error_t je;
	json_t *j = json_load_file(p, 0, &je);
	if (j == NULL)
		fail_msg("%s: %s", p, je.text);
	free(p);
	return j;
}

/* The first issue with this code, or NULL. */
static const json_t *find_issue(const json_t *issues, const char *code)
{
	size_t i;
	json_t *v;
	json_array_foreach(issues, i, v)
	{
		if (strcmp(json_string_value(json_object_get(v, "code")), code) == 0)
			return v;
	}
	return NULL;
}

static int has_code(const json_t *issues, const char *code)
{
	return find_issue(issues, code) != NULL;
}

static void power_matches_truth(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *out = ts_strf("%s/run", dir);
	char *so = NULL, *se = NULL;
	int rc = ts_run_ergon(&so, &se, "profile", "--board", "sim", "--power", "--out", out, NULL);
	if (rc != 0)
		fail_msg("exit %d\n%s\n%s", rc, so, se);
	/* The terminal shows the per-layer table and the Power table. */
	assert_non_null(strstr(so, "CONV_2D"));
	assert_non_null(strstr(so, "Energy/inference"));
	json_t *s = load_summary(out);
	assert_string_equal(json_string_value(json_object_get(s, "schema")), "ergon.profile");
	assert_int_equal(json_integer_value(json_object_get(s, "schema_version")), 1);
	assert_true(json_is_true(json_object_get(s, "valid")));
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(s, "provenance"), "kind")),
	    "synthetic");
	json_t *p = json_object_get(s, "power");
	assert_string_equal(json_string_value(json_object_get(p, "measurement_scope")),
			    "gpio_gated_clean_window");
	double epi = json_number_value(json_object_get(p, "energy_per_inference_j"));
	double u = json_number_value(json_object_get(p, "energy_per_inference_uncertainty_j"));
	const double truth_j = 5e-3 * 1.8 * (96000.0 / 96e6);
	assert_true(u > 0 && u < 0.05 * truth_j);
	if (!(fabs(epi - truth_j) <= u))
		fail_msg("energy per inference %.9g J, truth %.9g J, uncertainty %.3g J", epi,
			 truth_j, u);
	assert_string_equal(json_string_value(json_object_get(p, "power_firmware")), "dedicated");
	/* Lock-step was on by rule (sim wiring 3/4/5) and READY was seen. */
	json_t *sync = json_object_get(p, "sync");
	assert_true(json_is_true(json_object_get(sync, "lockstep")));
	assert_true(json_is_true(json_object_get(sync, "ready_observed")));
	/* Profile: the sim's three layers, cycles from its table. */
	json_t *layers = json_object_get(json_object_get(s, "profile"), "layers");
	assert_int_equal(json_array_size(layers), 3);
	assert_true(json_number_value(json_object_get(json_array_get(layers, 0), "cycles")) ==
		    48000.0);
	/* Raw logs kept; CSV written. */
	struct stat st;
	char *f = ts_strf("%s/pmu/capture.log", out);
	assert_int_equal(stat(f, &st), 0);
	free(f);
	f = ts_strf("%s/power/capture.log", out);
	assert_int_equal(stat(f, &st), 0);
	free(f);
	f = ts_strf("%s/profile_results.csv", out);
	char *csv = ts_read_file(f, NULL);
	assert_non_null(csv);
	assert_non_null(strstr(csv, "CONV_2D"));
	free(csv);
	free(f);
	/* The artifact's digest verifies. */
	f = ts_strf("%s/summary.json", out);
	free(so);
	free(se);
	assert_int_equal(ts_run_ergon(&so, &se, "digest", f, NULL), 0);
	assert_non_null(strstr(so, json_string_value(json_object_get(s, "report_id"))));
	free(f);
	json_decref(s);
	free(so);
	free(se);
	ts_tmpdir_remove(dir);
	free(dir);
	free(out);
}

static void internal_ina228_on_device_summary(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *out = ts_strf("%s/run", dir);
	char *so = NULL, *se = NULL;
	int rc = ts_run_ergon(&so, &se, "profile", "--board", "sim", "--sim-scenario",
			      "baseline_ina228", "--out", out, NULL);
	if (rc != 0)
		fail_msg("exit %d\n%s\n%s", rc, so, se);
	json_t *s = load_summary(out);
	json_t *p = json_object_get(s, "power");
	assert_string_equal(json_string_value(json_object_get(p, "measurement_scope")),
			    "on_device_gated_inference");
	json_t *ods = json_object_get(p, "on_device_summary");
	assert_string_equal(json_string_value(json_object_get(ods, "measurement_scope")),
			    "on_device_gated_inference");
	assert_string_equal(json_string_value(json_object_get(ods, "source")), "ina228");
	/* The auto window (power on: max(1000, 5000) ms) of 1 ms inferences
	 * runs 5000 of them. Truth as above. Stated uncertainty: one ENERGY
	 * LSB, 16 x 3.2 x (0.02 A / 2^19) = 1.953125e-6 J, plus one conversion
	 * cycle (defaults 540 us x 16 averages, 3 conversions: 25.92 ms) at
	 * the mean 5 mA x 1.8 V = 9 mW: 2.3328e-4 J; together 2.35233125e-4 J
	 * over 5000 = 4.7046625e-8 J. */
	assert_int_equal(json_integer_value(json_object_get(p, "inference_count")), 5000);
	double u = json_number_value(json_object_get(p, "energy_per_inference_uncertainty_j"));
	if (!(fabs(u - 4.7046625e-8) < 1e-14))
		fail_msg("uncertainty %.12g J, expected 4.7046625e-8 J", u);
	double epi = json_number_value(json_object_get(p, "energy_per_inference_j"));
	assert_true(fabs(epi - 9e-6) <= u);
	/* window_clock_ceiling on every internal run, all five fields. The
	 * window (5000 x 1 ms = 5 s on the window clock) lies inside the host
	 * envelope, which holds the 5 warmup inferences besides and at most
	 * the record's bytes (under 1000 at 10 us each) plus 10 ms of I2C and
	 * the rate probe; slack = max(0.25 s, 2 % of ~5 s) = 0.25 s. */
	json_t *c = json_object_get(p, "window_clock_ceiling");
	assert_int_equal(json_integer_value(json_object_get(c, "elapsed_us")), 5000000);
	assert_true(json_real_value(json_object_get(c, "elapsed_s")) == 5.0);
	double env = json_real_value(json_object_get(c, "host_envelope_s"));
	if (!(env >= 5.005 && env <= 5.005 + 0.010 + 0.010))
		fail_msg("host envelope %.9g s, expected 5.005 .. 5.025 s", env);
	assert_true(json_real_value(json_object_get(c, "slack_s")) == 0.25);
	assert_true(fabs(json_real_value(json_object_get(c, "ratio")) - 5.0 / env) < 1e-12);
	assert_true(json_is_null(json_object_get(c, "reason")));
	json_t *he = json_object_get(json_object_get(json_object_get(s, "stages"), "power"),
				     "host_envelope");
	assert_string_equal(json_string_value(json_object_get(he, "clock")), "virtual_bench");
	/* The calibration id is the configuration's string (default
	 * "UNCALIBRATED-parasitic-path"), verbatim through the firmware's
	 * record into the artifact, and printed with the result. */
	assert_string_equal(json_string_value(json_object_get(ods, "calibration_id")),
			    "UNCALIBRATED-parasitic-path");
	assert_string_equal(
	    json_string_value(json_object_get(
		json_object_get(json_object_get(p, "terminal"), "measurement"), "calibration_id")),
	    "UNCALIBRATED-parasitic-path");
	assert_non_null(strstr(so, "calibration: UNCALIBRATED-parasitic-path\n"));
	/* Internal mode never auto-enables lock-step. */
	assert_true(json_is_false(json_object_get(json_object_get(p, "sync"), "lockstep")));
	json_decref(s);
	free(so);
	free(se);
	/* A configured id, spaces and all. */
	char *out2 = ts_strf("%s/run2", dir);
	rc = ts_run_ergon(
	    &so, &se, "profile", "--board", "sim", "--sim-scenario", "baseline_ina228", "--set",
	    "power.ina228.calibration_id=shunt 0.5R cal 2026-11 #3", "--out", out2, NULL);
	if (rc != 0)
		fail_msg("exit %d\n%s\n%s", rc, so, se);
	s = load_summary(out2);
	assert_string_equal(json_string_value(json_object_get(
				json_object_get(json_object_get(s, "power"), "on_device_summary"),
				"calibration_id")),
			    "shunt 0.5R cal 2026-11 #3");
	assert_non_null(strstr(so, "calibration: shunt 0.5R cal 2026-11 #3\n"));
	json_decref(s);
	free(so);
	free(se);
	free(out2);
	ts_tmpdir_remove(dir);
	free(dir);
	free(out);
}

#define SCEN_MAX 64
#define SCEN_CODES_MAX 8

struct scen {
	char name[64];
	int exit_code;
	size_t ncodes;
	char codes[SCEN_CODES_MAX][64]; /* exactly these */
};

/* The cells of a Markdown table row "| a | b | c |", trimmed, into cell[]
 * (at most max, each < 512 bytes); returns the count, 0 for a non-row. */
static size_t row_cells(const char *line, size_t len, char cell[][512], size_t max)
{
	if (len == 0 || line[0] != '|')
		return 0;
	size_t n = 0, i = 1;
	while (i < len && n < max) {
		size_t j = i;
		while (j < len && line[j] != '|')
			j++;
		if (j >= len)
			break;
		size_t s0 = i, e0 = j;
		while (s0 < e0 && line[s0] == ' ')
			s0++;
		while (e0 > s0 && line[e0 - 1] == ' ')
			e0--;
		assert_true(e0 - s0 < 512);
		memcpy(cell[n], line + s0, e0 - s0);
		cell[n][e0 - s0] = '\0';
		n++;
		i = j + 1;
	}
	return n;
}

/* docs/internals/sim.md (*path: its path; both malloc'd, the caller
 * frees them). */
static char *read_sim_md(char **path, size_t *len)
{
	const char *src = getenv("ERGON_SOURCE_DIR");
	assert_non_null(src);
	*path = ts_strf("%s/docs/internals/sim.md", src);
	char *doc = ts_read_file(*path, len);
	if (doc == NULL)
		fail_msg("%s: cannot read the documented scenario tables", *path);
	return doc;
}

/* docs/internals/sim.md's two scenario tables: the scenario list (first
 * column of "| name | fault | ...") and the `ergon profile` codes table
 * between the profile-codes markers, which is this test's table. Fails
 * unless both list the same scenarios. */
static size_t load_scenarios(struct scen *out)
{
	char *path = NULL;
	size_t len = 0;
	char *doc = read_sim_md(&path, &len);
	char listed[SCEN_MAX][64];
	size_t nlisted = 0, n = 0;
	int in_list = 0, in_codes = 0;
	char cell[4][512];
	for (char *line = doc; line < doc + len;) {
		char *nl = memchr(line, '\n', (size_t)(doc + len - line));
		size_t ll = nl ? (size_t)(nl - line) : (size_t)(doc + len - line);
		size_t nc = row_cells(line, ll, cell, 4);
		if (strncmp(line, "<!-- profile-codes:begin -->", 28) == 0)
			in_codes = 1;
		else if (strncmp(line, "<!-- profile-codes:end -->", 26) == 0)
			in_codes = 0;
		else if (nc >= 2 && strcmp(cell[0], "name") == 0 && strcmp(cell[1], "fault") == 0)
			in_list = 1;
		else if (nc == 0)
			in_list = 0;
		else if (cell[0][0] == '-' || strcmp(cell[0], "scenario") == 0)
			; /* separator or header */
		else if (in_list) {
			assert_true(nlisted < SCEN_MAX && strlen(cell[0]) < 64);
			snprintf(listed[nlisted++], sizeof listed[0], "%.63s", cell[0]);
		} else if (in_codes) {
			if (nc != 3)
				fail_msg("%s: profile-codes row '%.*s' needs 3 cells", path,
					 (int)ll, line);
			assert_true(n < SCEN_MAX && strlen(cell[0]) < 64);
			struct scen *c = &out[n++];
			memset(c, 0, sizeof *c);
			snprintf(c->name, sizeof c->name, "%.63s", cell[0]);
			/* 0 valid, 1 invalid, 4 degraded (README's exit codes). */
			assert_true(strcmp(cell[1], "0") == 0 || strcmp(cell[1], "1") == 0 ||
				    strcmp(cell[1], "4") == 0);
			c->exit_code = cell[1][0] - '0';
			if (strcmp(cell[2], "none") != 0) {
				for (char *tok = strtok(cell[2], ", "); tok != NULL;
				     tok = strtok(NULL, ", ")) {
					assert_true(c->ncodes < SCEN_CODES_MAX && strlen(tok) < 64);
					snprintf(c->codes[c->ncodes++], sizeof c->codes[0], "%s",
						 tok);
				}
			}
		}
		line = nl ? nl + 1 : doc + len;
	}
	if (nlisted == 0 || n == 0)
		fail_msg("%s: scenario list (%zu rows) or profile-codes table (%zu rows) not found",
			 path, nlisted, n);
	/* One table: the same scenarios, in the same order. */
	if (nlisted != n)
		fail_msg("%s: %zu scenarios listed but %zu in the profile-codes table", path,
			 nlisted, n);
	for (size_t i = 0; i < n; i++)
		if (strcmp(listed[i], out[i].name) != 0)
			fail_msg("%s: scenario %zu is %s in the list but %s in the profile-codes "
				 "table",
				 path, i + 1, listed[i], out[i].name);
	free(doc);
	free(path);
	return n;
}

static void every_scenario_yields_its_codes(void **state)
{
	(void)state;
	static struct scen scenarios[SCEN_MAX];
	size_t nscen = load_scenarios(scenarios);
	char *dir = ts_tmpdir();
	for (size_t i = 0; i < nscen; i++) {
		const struct scen *c = &scenarios[i];
		char *out = ts_strf("%s/%s", dir, c->name);
		char *so = NULL, *se = NULL;
		int rc = ts_run_ergon(&so, &se, "profile", "--board", "sim", "--sim-scenario",
				      c->name, "--out", out, NULL);
		if (rc != c->exit_code)
			fail_msg("%s: exit %d, expected %d\n%s\n%s", c->name, rc, c->exit_code, so,
				 se);
		json_t *s = load_summary(out);
		json_t *issues = json_object_get(s, "issues");
		size_t n = c->ncodes;
		for (size_t k = 0; k < n; k++)
			if (!has_code(issues, c->codes[k]))
				fail_msg("%s: %s missing: %s", c->name, c->codes[k],
					 json_dumps(issues, JSON_COMPACT));
		if (json_array_size(issues) != n)
			fail_msg("%s: %zu issues, expected %zu: %s", c->name,
				 json_array_size(issues), n, json_dumps(issues, JSON_COMPACT));
		assert_string_equal(json_string_value(json_object_get(
					json_object_get(json_object_get(s, "provenance"), "target"),
					"sim_scenario")),
				    c->name);
		json_decref(s);
		free(so);
		free(se);
		free(out);
	}
	ts_tmpdir_remove(dir);
	free(dir);
}

/* docs/internals/sim.md's "Codes no scenario triggers" table (between the
 * no-scenario markers): code (or DOMAIN.*), reason, why. */
#define NOSCEN_MAX 128
struct noscen {
	char code[64];
	char reason[16];
	int used;
};

static size_t load_noscenario(struct noscen *out)
{
	static const char *const reasons[] = {"recording", "host", "config", "link", "gap"};
	char *path = NULL;
	size_t len = 0, n = 0;
	char *doc = read_sim_md(&path, &len);
	int in = 0;
	char cell[4][512];
	for (char *line = doc; line < doc + len;) {
		char *nl = memchr(line, '\n', (size_t)(doc + len - line));
		size_t ll = nl ? (size_t)(nl - line) : (size_t)(doc + len - line);
		size_t nc = row_cells(line, ll, cell, 4);
		if (strncmp(line, "<!-- no-scenario:begin -->", 26) == 0)
			in = 1;
		else if (strncmp(line, "<!-- no-scenario:end -->", 24) == 0)
			in = 0;
		else if (in && nc > 0 && cell[0][0] != '-' && strcmp(cell[0], "code") != 0) {
			if (nc != 3 || !cell[2][0])
				fail_msg("%s: no-scenario row '%.*s' needs code, reason, why", path,
					 (int)ll, line);
			int known = 0;
			for (size_t k = 0; k < sizeof reasons / sizeof reasons[0]; k++)
				known |= strcmp(cell[1], reasons[k]) == 0;
			if (!known)
				fail_msg("%s: %s: reason '%s' is not recording, host, config, link "
					 "or gap",
					 path, cell[0], cell[1]);
			assert_true(n < NOSCEN_MAX && strlen(cell[0]) < 64);
			snprintf(out[n].code, sizeof out[n].code, "%.63s", cell[0]);
			snprintf(out[n].reason, sizeof out[n].reason, "%.15s", cell[1]);
			out[n].used = 0;
			n++;
		}
		line = nl ? nl + 1 : doc + len;
	}
	if (n == 0)
		fail_msg("%s: the no-scenario table was not found", path);
	free(doc);
	free(path);
	return n;
}

/* The entry of the no-scenario table that covers code (exact, or its
 * DOMAIN.*), or NULL. */
static struct noscen *noscen_find(struct noscen *t, size_t n, const char *code)
{
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(t[i].code);
		if (strcmp(t[i].code, code) == 0 ||
		    (l > 2 && strcmp(t[i].code + l - 2, ".*") == 0 &&
		     strncmp(t[i].code, code, l - 1) == 0))
			return &t[i];
	}
	return NULL;
}

/* The docs' scenario tables are one table with the registry and the
 * bench: every scenario the bench has is a row of the profile-codes table
 * (which every_scenario_yields_its_codes runs), and every registered code
 * (docs/ISSUES.md is generated from the same registry) is yielded by some
 * row or listed, with its reason, among the codes no scenario triggers -
 * never both. */
static void every_code_has_a_scenario_or_a_reason(void **state)
{
	(void)state;
	static struct scen scenarios[SCEN_MAX];
	static struct noscen none[NOSCEN_MAX];
	size_t nscen = load_scenarios(scenarios);
	size_t nnone = load_noscenario(none);
	for (const char *const *sn = ergon_sim_scenarios(); *sn != NULL; sn++) {
		int found = 0;
		for (size_t i = 0; i < nscen; i++)
			found |= strcmp(scenarios[i].name, *sn) == 0;
		if (!found)
			fail_msg("sim scenario %s has no row in docs/internals/sim.md", *sn);
	}
	size_t covered = 0, gaps = 0;
	int sev = 0;
	const char *meaning = NULL;
	for (size_t i = 0;; i++) {
		const char *code = ergon_issue_code_at(i, &sev, &meaning);
		if (code == NULL)
			break;
		int by_scenario = 0;
		for (size_t k = 0; k < nscen; k++)
			for (size_t c = 0; c < scenarios[k].ncodes; c++)
				by_scenario |= strcmp(scenarios[k].codes[c], code) == 0;
		struct noscen *ns = noscen_find(none, nnone, code);
		if (by_scenario && ns != NULL)
			fail_msg(
			    "%s is yielded by a scenario but listed as %s (%s) among the codes "
			    "no scenario triggers",
			    code, ns->code, ns->reason);
		if (!by_scenario && ns == NULL)
			fail_msg(
			    "%s (docs/ISSUES.md) has neither a scenario in docs/internals/sim.md "
			    "nor a row among the codes no scenario triggers",
			    code);
		if (ns != NULL) {
			ns->used = 1;
			if (strcmp(ns->reason, "gap") == 0)
				gaps++;
		}
		if (by_scenario)
			covered++;
	}
	for (size_t i = 0; i < nnone; i++)
		if (!none[i].used)
			fail_msg("no-scenario row %s names no registered code", none[i].code);
	print_message("codes yielded by scenarios: %zu; open gaps: %zu\n", covered, gaps);
}

static const json_t *issue_ctx(const json_t *issues, const char *code)
{
	const json_t *v = find_issue(issues, code);
	if (v == NULL)
		fail_msg("%s missing: %s", code, json_dumps(issues, JSON_COMPACT));
	return json_object_get(v, "context");
}

static json_int_t ctx_int(const json_t *c, const char *key)
{
	const json_t *v = json_object_get(c, key);
	if (!json_is_integer(v))
		fail_msg("context %s is not an integer", key);
	return json_integer_value(v);
}

/* The profile boot's clean-window checks are ergon analyze's: the default
 * auto window (5000 inferences with the power stage on). slow_counter:
 * every 2nd inference counts 1/16 of its 96000 cycles, under the 1/8
 * floor of the warm reference 96000: 2500 partial of 5000, affected 0.5,
 * understatement >= 0.875 x 2500 / 5000 = 0.4375. stalled_counter: all
 * 5000 stalled (understatement 1.0) and the reference itself 0 cycles:
 * partial_check_inoperative and profile.clean_window_check_inoperative.
 * The power section carries device_clean_*: reference 96000, rate probe
 * 1000 us x 96 MHz = 96000 cycles (0 for the stalled reference). */
static void clean_window_checks_as_analyze(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	const char *names[2] = {"slow_counter", "stalled_counter"};
	for (int k = 0; k < 2; k++) {
		char *out = ts_strf("%s/%s", dir, names[k]);
		char *so = NULL, *se = NULL;
		int rc = ts_run_ergon(&so, &se, "profile", "--board", "sim", "--sim-scenario",
				      names[k], "--power", "--out", out, NULL);
		if (rc != 0)
			fail_msg("%s: exit %d\n%s\n%s", names[k], rc, so, se);
		json_t *s = load_summary(out);
		const json_t *is = json_object_get(s, "issues");
		const json_t *c = issue_ctx(is, "profile.clean_window_stalled");
		const json_t *p = json_object_get(s, "power");
		assert_int_equal(ctx_int(c, "total_iters"), 5000);
		assert_int_equal(
		    json_integer_value(json_object_get(p, "device_clean_dwt_rate_cyc")), 96000);
		assert_int_equal(json_integer_value(json_object_get(p, "device_clean_dwt_rate_us")),
				 1000);
		if (k == 0) {
			assert_int_equal(ctx_int(c, "stalled_iters"), 0);
			assert_int_equal(ctx_int(c, "partial_iters"), 2500);
			assert_true(json_real_value(json_object_get(c, "affected_fraction")) ==
				    0.5);
			assert_true(json_real_value(json_object_get(
					c, "understatement_lower_bound")) == 0.4375);
			assert_int_equal(ctx_int(c, "ref_cycles"), 96000);
			assert_null(json_object_get(c, "partial_check_inoperative"));
			assert_false(has_code(is, "profile.clean_window_check_inoperative"));
			assert_int_equal(
			    json_integer_value(json_object_get(p, "device_clean_ref_cycles")),
			    96000);
		} else {
			assert_int_equal(ctx_int(c, "stalled_iters"), 5000);
			assert_int_equal(ctx_int(c, "partial_iters"), 0);
			assert_true(json_real_value(json_object_get(c, "affected_fraction")) ==
				    1.0);
			assert_true(json_real_value(
					json_object_get(c, "understatement_lower_bound")) == 1.0);
			assert_int_equal(ctx_int(c, "ref_cycles"), 0);
			assert_true(json_is_true(json_object_get(c, "partial_check_inoperative")));
			const json_t *ci = issue_ctx(is, "profile.clean_window_check_inoperative");
			assert_int_equal(ctx_int(ci, "ref_cycles"), 0);
			assert_int_equal(
			    json_integer_value(json_object_get(p, "device_clean_ref_cycles")), 0);
		}
		json_decref(s);
		free(so);
		free(se);
		free(out);
	}
	ts_tmpdir_remove(dir);
	free(dir);
}

/* READY never observed: power.sync.ready_observed false with the wiring
 * hint; an explicit lock-step false turns the check off. */
static void ready_never_observed(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *out = ts_strf("%s/a", dir), *out2 = ts_strf("%s/b", dir);
	char *so = NULL, *se = NULL;
	ts_run_ergon(&so, &se, "profile", "--board", "sim", "--sim-scenario", "ready_wire_open",
		     "--out", out, NULL);
	json_t *s = load_summary(out);
	json_t *sync = json_object_get(json_object_get(s, "power"), "sync");
	assert_true(json_is_false(json_object_get(sync, "ready_observed")));
	const char *hint = json_string_value(json_object_get(sync, "hint"));
	assert_non_null(hint);
	assert_non_null(strstr(hint, "target pin 4"));
	json_decref(s);
	free(so);
	free(se);
	int rc =
	    ts_run_ergon(&so, &se, "profile", "--board", "sim", "--sim-scenario", "gate_glitches",
			 "--set", "power.lockstep=false", "--out", out2, NULL);
	assert_int_equal(rc, 0);
	s = load_summary(out2);
	/* Only the glitches' own info code remains. */
	assert_int_equal(json_array_size(json_object_get(s, "issues")), 1);
	assert_string_equal(json_string_value(json_object_get(
				json_array_get(json_object_get(s, "issues"), 0), "code")),
			    "power.short_gate_pulses_ignored");
	assert_true(json_is_null(json_object_get(
	    json_object_get(json_object_get(s, "power"), "sync"), "ready_observed")));
	json_decref(s);
	free(so);
	free(se);
	ts_tmpdir_remove(dir);
	free(dir);
	free(out);
	free(out2);
}

/* Shared firmware: recorded as transport contamination. */
static void shared_firmware_recorded(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *out = ts_strf("%s/a", dir);
	char *so = NULL, *se = NULL;
	int rc = ts_run_ergon(&so, &se, "profile", "--board", "sim", "--power", "--set",
			      "power.firmware=shared", "--out", out, NULL);
	/* Exit 4: the bench runs the profile build in the power stage, whose
	 * trace on the wire stretches the gate ~20 % past count x the
	 * reference, outside the no-firmware-window band: the per-inference
	 * figures are withheld (functional/test_bench_memory_probe has the
	 * figures by hand). */
	assert_int_equal(rc, 4);
	json_t *s = load_summary(out);
	assert_true(has_code(json_object_get(s, "issues"), "profile.firmware_shared"));
	json_t *fw = json_object_get(json_object_get(s, "power"), "firmware");
	assert_true(json_is_true(json_object_get(fw, "transport_contamination")));
	/* The method's field name, as its scripts read it. */
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(s, "power"), "power_firmware")),
	    "shared");
	/* The shared build is the profile build: it never raises READY
	 * (target/src/profile.c has no handshake), so the bench's wired state
	 * and go pins do not turn lock-step on, and nothing says READY was
	 * missed: the wire is not at fault (ready_wire_open shows the issue
	 * where it is). */
	assert_false(has_code(json_object_get(s, "issues"), "profile.ready_not_observed"));
	json_t *sync = json_object_get(json_object_get(s, "power"), "sync");
	assert_true(json_is_false(json_object_get(sync, "lockstep")));
	assert_true(json_is_null(json_object_get(sync, "ready_observed")));
	const char *why = json_string_value(json_object_get(
	    json_object_get(json_object_get(json_object_get(s, "plan"), "power"), "lockstep_from"),
	    "note"));
	assert_non_null(why);
	assert_non_null(strstr(why, "no READY/GO handshake"));
	json_decref(s);
	free(so);
	free(se);
	/* Forced, lock-step would wait for a READY that never comes: refused
	 * before anything runs, naming both keys and the fix. */
	char *out2 = ts_strf("%s/b", dir);
	rc = ts_run_ergon(&so, &se, "profile", "--board", "sim", "--power", "--set",
			  "power.firmware=shared", "--set", "power.lockstep=true", "--out", out2,
			  NULL);
	assert_int_equal(rc, 2);
	assert_non_null(strstr(se, "power.lockstep: true with power.firmware: shared"));
	assert_non_null(strstr(se, "set power.lockstep: false"));
	struct stat st;
	assert_int_not_equal(stat(out2, &st), 0);
	free(so);
	free(se);
	free(out2);
	ts_tmpdir_remove(dir);
	free(dir);
	free(out);
}

/* detailed/ when asked: plan, power CSV. */
static void detailed_outputs(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *out = ts_strf("%s/a", dir);
	char *so = NULL, *se = NULL;
	int rc = ts_run_ergon(&so, &se, "profile", "--board", "sim", "--power", "--set",
			      "output.detailed=true", "--out", out, NULL);
	assert_int_equal(rc, 0);
	char *f = ts_strf("%s/detailed/power_summary.csv", out);
	char *csv = ts_read_file(f, NULL);
	assert_non_null(csv);
	assert_true(strncmp(csv, "scope,", 6) == 0);
	char *cell = ts_csv_cell(csv, "whole_capture_window", "energy_source");
	assert_non_null(cell);
	assert_string_equal(cell, "instrument_accumulator");
	free(cell);
	/* Every window's row holds the summary's figures, to the last digit
	 * (%.17g round-trips a double). */
	char *sp = ts_strf("%s/summary.json", out);
	json_t *sum = json_load_file(sp, 0, NULL);
	assert_non_null(sum);
	const json_t *wins = json_object_get(json_object_get(sum, "power"), "windows");
	assert_true(json_array_size(wins) >= 1);
	for (size_t w = 0; w < json_array_size(wins); w++) {
		char scope[32];
		snprintf(scope, sizeof scope, "window_%zu", w + 1);
		const char *keys[] = {"energy_j", "packets", "duration_s", "avg_current_a"};
		for (size_t k = 0; k < 4; k++) {
			cell = ts_csv_cell(csv, scope, keys[k]);
			assert_non_null(cell);
			assert_true(strtod(cell, NULL) ==
				    json_number_value(json_object_get(json_array_get(wins, w), keys[k])));
			free(cell);
		}
	}
	json_decref(sum);
	free(sp);
	free(csv);
	free(f);
	f = ts_strf("%s/detailed/plan.json", out);
	char *plan = ts_read_file(f, NULL);
	assert_non_null(plan);
	/* Power on, auto window: the target becomes max(1000, 5000) ms. */
	assert_non_null(strstr(plan, "\"target_ms\": 5000"));
	free(plan);
	free(f);
	free(so);
	free(se);
	ts_tmpdir_remove(dir);
	free(dir);
	free(out);
}

/* power.duration_s: auto-tuned from the PMU stage, explicit always wins.
 * Auto on the bench, by hand: window target max(1000, 5000) ms = 5.0 s,
 * plus warmup 5 x CLEAN_INFER_AVG_US 1000 us = 5.005 s estimated runtime;
 * margin max(25 % x 5.005, 2.0) = 2.0 s; boot settle 2.0 s:
 * 2.0 + 5.005 + 2.0 = 9.005 s. */
static void duration_auto_and_explicit(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *out = ts_strf("%s/a", dir), *out2 = ts_strf("%s/b", dir);
	char *so = NULL, *se = NULL;
	assert_int_equal(
	    ts_run_ergon(&so, &se, "profile", "--board", "sim", "--power", "--out", out, NULL), 0);
	json_t *s = load_summary(out);
	json_t *pp = json_object_get(json_object_get(s, "plan"), "power");
	assert_true(fabs(json_number_value(json_object_get(pp, "duration_s")) - 9.005) < 1e-9);
	assert_string_equal(json_string_value(json_object_get(pp, "duration_origin")), "rule");
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(pp, "duration_from"), "origin")),
	    "rule");
	json_decref(s);
	free(so);
	free(se);
	assert_int_equal(ts_run_ergon(&so, &se, "profile", "--board", "sim", "--power", "--set",
				      "power.duration_s=7", "--out", out2, NULL),
			 0);
	s = load_summary(out2);
	pp = json_object_get(json_object_get(s, "plan"), "power");
	assert_true(json_number_value(json_object_get(pp, "duration_s")) == 7.0);
	assert_string_equal(json_string_value(json_object_get(pp, "duration_origin")),
			    "command line");
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(pp, "duration_from"), "origin")),
	    "command line");
	json_decref(s);
	free(so);
	free(se);
	/* Fixed window: its length is iterations x CLEAN_INFER_AVG_US, not
	 * window_target_ms. 2000 x 1000 us = 2.0 s + warmup 5 x 1000 us =
	 * 2.005 s; margin max(25 % x 2.005, 2.0) = 2.0 s; settle 2.0 s:
	 * 2.0 + 2.005 + 2.0 = 6.005 s (the target's 5 s would give 9.005). */
	char *out3 = ts_strf("%s/c", dir);
	assert_int_equal(ts_run_ergon(&so, &se, "profile", "--board", "sim", "--power", "--set",
				      "profiling.window_mode=fixed", "--set",
				      "profiling.iterations=2000", "--out", out3, NULL),
			 0);
	s = load_summary(out3);
	pp = json_object_get(json_object_get(s, "plan"), "power");
	assert_true(fabs(json_number_value(json_object_get(pp, "duration_s")) - 6.005) < 1e-9);
	assert_false(has_code(json_object_get(s, "issues"), "config.fixed_window_short"));
	json_decref(s);
	free(out3);
	free(so);
	free(se);
	ts_tmpdir_remove(dir);
	free(dir);
	free(out);
	free(out2);
}

/* The resolved configuration reaches the virtual firmware. */
static json_t *run_summary(const char *dir, const char *name, int want_rc, ...)
{
	const char *argv[32];
	size_t n = 0;
	argv[n++] = "profile";
	argv[n++] = "--board";
	argv[n++] = "sim";
	va_list ap;
	va_start(ap, want_rc);
	const char *a;
	while ((a = va_arg(ap, const char *)) != NULL && n < 28)
		argv[n++] = a;
	va_end(ap);
	char *out = ts_strf("%s/%s", dir, name);
	argv[n++] = "--out";
	argv[n++] = out;
	argv[n] = NULL;
	char *so = NULL, *se = NULL;
	int rc = ts_run_ergon_argv(&so, &se, argv);
	if (rc != want_rc)
		fail_msg("%s: exit %d, expected %d\n%s\n%s", name, rc, want_rc, so, se);
	json_t *s = load_summary(out);
	free(so);
	free(se);
	free(out);
	return s;
}

static void config_reaches_firmware(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	/* Fixed window of 1234: the firmware runs exactly 1234 (it ran 20
	 * before; 1.234 s clears the method's 1 s floor). */
	json_t *s =
	    run_summary(dir, "fixed1234", 0, "--power", "--set", "profiling.iterations=1234",
			"--set", "profiling.window_mode=fixed", NULL);
	json_t *p = json_object_get(s, "power");
	assert_int_equal(json_integer_value(json_object_get(p, "inference_count")), 1234);
	json_t *t = json_object_get(json_object_get(p, "terminal_record"), "terminal");
	assert_int_equal(json_integer_value(json_object_get(t, "requested_count")), 1234);
	json_decref(s);

	/* Internal, 0.1 Ohm at 0.3 A, fixed 7: CURRENT_LSB = 0.3 / 2^19 =
	 * 5.7220458984375e-7 A (SHUNT_CAL 13107.2e6 x that x 0.1 = 750 exactly,
	 * 0.1 x 0.3 = 30 mV: the +-40.96 mV range); ENERGY LSB = 51.2 x
	 * CURRENT_LSB = 2.9296875e-5 J. The window's 7 x 9 uJ = 63 uJ is
	 * 2.15 LSB: the chip reports 2 LSB = 58593.75 nJ. With the sim's old
	 * built-in 0.5 Ohm / 20 mA (LSB 1.953125 uJ) it would read 32 LSB =
	 * 62500 nJ. */
	s = run_summary(dir, "ina", 0, "--sim-scenario", "baseline_ina228", "--set",
			"power.ina228.shunt_ohms=0.1", "--set", "power.ina228.max_current_a=0.3",
			"--set", "profiling.iterations=7", "--set", "profiling.window_mode=fixed",
			NULL);
	p = json_object_get(s, "power");
	json_t *ods = json_object_get(p, "on_device_summary");
	double nj = json_number_value(json_object_get(ods, "energy_nj"));
	if (!(fabs(nj - 58593.75) <= 1.0))
		fail_msg("energy %.3f nJ, expected 58593.75", nj);
	json_decref(s);

	/* A Click board left at 0x40: its INA228 answers at 0x4A, the firmware
	 * gets a NACK at ina228_init, the run is invalid with the hint. */
	s = run_summary(dir, "click", 1, "--sim-scenario", "baseline_ina228", "--set",
			"power.ina228.board=mikroe-power-monitor-click", "--set",
			"power.ina228.i2c_address=0x40", "--set", "power.ina228.shunt_ohms=0.5",
			NULL);
	assert_true(json_is_false(json_object_get(s, "valid")));
	p = json_object_get(s, "power");
	t = json_object_get(json_object_get(p, "terminal_record"), "terminal");
	assert_string_equal(json_string_value(json_object_get(t, "final_phase")), "ina228_init");
	json_t *issues = json_object_get(s, "issues");
	assert_true(has_code(issues, "config.ina228_address_mismatch"));
	assert_true(has_code(issues, "profile.ina228_init_failed"));
	size_t i;
	json_t *v;
	int hinted = 0;
	json_array_foreach(issues, i, v)
	{
		if (strcmp(json_string_value(json_object_get(v, "code")),
			   "profile.ina228_init_failed") == 0)
			hinted = strstr(json_string_value(json_object_get(v, "message")),
					"set power.ina228.i2c_address: 0x4A") != NULL;
	}
	assert_true(hinted);
	json_decref(s);
	/* ... and at 0x4A it comes up. */
	s = run_summary(dir, "click4a", 0, "--sim-scenario", "baseline_ina228", "--set",
			"power.ina228.board=mikroe-power-monitor-click", "--set",
			"power.ina228.shunt_ohms=0.5", NULL);
	assert_true(json_is_true(json_object_get(s, "valid")));
	json_decref(s);

	/* Pins from the configuration: state 6 / go 9 instead of the board's
	 * 4 / 5. The firmware raises READY on 6, where the host watches. */
	s = run_summary(dir, "pins", 0, "--power", "--set", "power.state_gpio_pin=6", "--set",
			"power.go_gpio_pin=9", NULL);
	json_t *sync = json_object_get(json_object_get(s, "power"), "sync");
	assert_true(json_is_true(json_object_get(sync, "ready_observed")));
	json_decref(s);

	/* Every power record names its source: external on the meter flow. */
	s = run_summary(dir, "ext", 0, "--power", NULL);
	t = json_object_get(json_object_get(json_object_get(s, "power"), "terminal_record"),
			    "terminal");
	assert_string_equal(json_string_value(json_object_get(t, "measurement_source")),
			    "external");
	json_decref(s);
	/* Reversed sense: the firmware clamped the negative CHARGE and says so
	 * (DIAG_ALRT 0: no overflow); the host gives the reversed-wiring hint. */
	s = run_summary(dir, "rev", 1, "--sim-scenario", "ina228_reversed_sense", NULL);
	json_t *m = json_object_get(json_object_get(json_object_get(s, "power"), "terminal_record"),
				    "measurement");
	assert_true(json_is_true(json_object_get(m, "charge_clamped")));
	assert_int_equal(json_integer_value(json_object_get(m, "ina228_diag")), 0);
	json_decref(s);
	ts_tmpdir_remove(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(power_matches_truth),
	    cmocka_unit_test(internal_ina228_on_device_summary),
	    cmocka_unit_test(every_scenario_yields_its_codes),
	    cmocka_unit_test(every_code_has_a_scenario_or_a_reason),
	    cmocka_unit_test(clean_window_checks_as_analyze),
	    cmocka_unit_test(ready_never_observed),
	    cmocka_unit_test(shared_firmware_recorded),
	    cmocka_unit_test(detailed_outputs),
	    cmocka_unit_test(duration_auto_and_explicit),
	    cmocka_unit_test(config_reaches_firmware),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
