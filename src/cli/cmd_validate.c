/* ergon validate: profile every model of a folder, check each, write JUnit
 * XML for CI (the pipeline is src/pipelines/validate/validate.c).
 *
 *   ergon validate --board sim|qemu-an547|BOARD --models DIR [--power]
 *                  [--firmware-dir FWDIR]
 *                  [--baseline DIR|DB] [--threshold PCT] [--db PATH|URL]
 *                  --junit-xml out.xml --out DIR [--force]
 */
#include "cli.h"
#include "cli_opts.h"
#include "cli_reliab.h"
#include "ergon/db.h"
#include "ergon/profile.h"
#include "ergon/validate.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* On a terminal, one line redrawn: which model of how many, the check
 * that runs, and from the second model on the time left at the mean pace
 * per model so far (t0: when the first model started). Off a terminal, a
 * plain line per check (a CI log says what ran); nothing with --json. */
static void progress(void *ctx, size_t i, size_t n, const char *model, const char *check)
{
	struct timespec *t0 = ctx;
	char left[24];
	if (i == 0 && strcmp(check, "profile") == 0)
		clock_gettime(CLOCK_MONOTONIC, t0);
	if (!cli_progress_ok()) {
		if (!cli_json_on()) /* --json: stderr holds only JSON lines */
			cli_note("validate", "%s: %s ...", model, check);
		return;
	}
	int eta = cli_time_left(left, sizeof left, t0, i, n);
	cli_progress_line("ergon validate: model %zu/%zu %s: %s%s%s", i + 1, n, model, check,
			  eta ? ", ETA " : "", left);
}

/* The default regression threshold, % (docs/VALIDATE.md). */
#define VALIDATE_THRESHOLD_PCT 3.0

static int run(int argc, char **argv)
{
	const char *board = NULL, *models = NULL, *baseline = NULL, *junit = NULL, *out = NULL;
	const char *target = NULL, *fwdir = NULL;
	int power = 0, force = 0, json = 0, no_cache = 0;
	double threshold = VALIDATE_THRESHOLD_PCT;
	long rtt_port = 0, repeat = 0;
	struct cli_parser p;
	cli_init(&p, "validate", argc, argv);
	while (cli_next(&p)) {
		if (cli_str(&p, "--board", &board)) {
		} else if (cli_outdir(&p, "--models", &models)) {
		} else if (cli_outdir(&p, "--firmware-dir", &fwdir)) {
		} else if (cli_long(&p, "--rtt-port", 1, 65535, &rtt_port)) {
		} else if (cli_flag(&p, "--power", &power)) {
		} else if (cli_str(&p, "--baseline", &baseline)) {
		} else if (cli_num(&p, "--threshold", CLI_GE, 0, 1e6, &threshold)) {
		} else if (cli_str(&p, "--db", &target)) {
		} else if (cli_str(&p, "--junit-xml", &junit)) {
		} else if (cli_outdir(&p, "--out", &out)) {
		} else if (cli_flag(&p, "--force", &force)) {
		} else if (cli_flag(&p, "--json", &json)) {
		} else if (cli_long(&p, "--repeat", 1, ERGON_PROFILE_REPEAT_MAX, &repeat)) {
		} else if (cli_flag(&p, "--no-cache", &no_cache)) {
		} else {
			cli_unknown(&p);
		}
	}
	if (p.rc || cli_require(&p, "--board", board) || cli_require(&p, "--models", models) ||
	    cli_require(&p, "--junit-xml", junit) || cli_require(&p, "--out", out))
		return p.rc;
	struct ergon_err err = {0};
	struct ergon_db *db = NULL;
	if (target && ergon_db_open(target, ERGON_DB_SCHEMA_VERSION, &db, &err))
		return ergon_cli_fail("validate", &err);
	struct timespec models_t0 = {0};
	struct ergon_validate_opts o = {.board = board,
					.models_dir = models,
					.firmware_dir = fwdir,
					.rtt_port = (unsigned)rtt_port,
					.power = power,
					.baseline = baseline,
					.threshold_pct = threshold,
					.out_dir = out,
					.junit_path = junit,
					.db = db,
					.write_flags = force ? 1u : 0u, /* ERGON_WRITE_FORCE */
					.no_cache = no_cache,
					.repeat = repeat > 1 ? (unsigned)repeat : 1u,
					.interrupted = &interrupted,
					.progress = progress,
					.progress_ctx = &models_t0};
	struct ergon_validate_result res;
	struct ergon_cli_signals old_sig;
	ergon_cli_signals_install(on_signal, 0, &old_sig);
	int rc = ergon_validate_run(&o, &res, &err);
	ergon_validate_result_cleanup(&res); /* the counts below stay */
	if (cli_progress_ok())
		cli_progress_clear();
	ergon_cli_signals_restore(&old_sig);
	ergon_db_close(db);
	if (rc)
		return ergon_cli_fail("validate", &err);
	unsigned passed = res.tests - res.failures - res.errors - res.skipped;
	int code = res.failures || res.errors || interrupted ? ERGON_EXIT_MEASUREMENT : ERGON_EXIT_OK;
	if (json) {
		int jrc = cli_json_doc(
		    "validate",
		    json_pack("{s:s, s:i, s:i, s:i, s:i, s:i, s:i, s:b, s:s, s:s}", "board", board,
			      "models", (int)res.models, "tests", (int)res.tests, "passed",
			      (int)passed, "failed", (int)res.failures, "errors", (int)res.errors,
			      "skipped", (int)res.skipped, "interrupted", interrupted != 0, "junit",
			      junit, "out", out));
		if (jrc)
			return jrc;
		if (code) {
			char msg[160];
			snprintf(msg, sizeof msg, "%u failed, %u error(s)%s: %s says which", res.failures,
				 res.errors, interrupted ? ", interrupted" : "", junit);
			return cli_report_error("validate", code, "EMEASURE", msg, 0);
		}
		return ERGON_EXIT_OK;
	}
	printf("validate: %u model(s), %u test(s): %u passed, %u failed, %u error(s), %u "
	       "skipped%s\n",
	       res.models, res.tests, passed, res.failures, res.errors, res.skipped,
	       interrupted ? " (interrupted)" : "");
	printf("junit: %s\n", junit);
	return code;
}

const struct ergon_cli_command ergon_cli_cmd_validate = {
    .name = "validate",
    .summary = "profile a folder of models on a board and write JUnit XML for CI",
    .help = "Usage: ergon validate --board sim|qemu-an547|BOARD --models DIR --junit-xml FILE\n"
	    "                      --out DIR [--firmware-dir FWDIR [--rtt-port PORT]] [--power]\n"
	    "                      [--baseline DIR|DB] [--threshold PCT] [--db PATH|URL]\n"
	    "                      [--force] [--json] [--no-cache] [--repeat N]\n\n"
	    "Profiles every DIR/*.tflite on the board into OUT/MODEL/: on qemu-an547\n"
	    "ergon builds the firmware with the model (ergon profile MODEL.tflite); on sim\n"
	    "the virtual bench runs the model in-process (synthetic: simulated board and\n"
	    "instruments, said so in the XML and the summaries); any other board runs your\n"
	    "firmware FWDIR/MODEL/ (profile and power builds, as ergon profile FWDIR/MODEL\n"
	    "finds them; it must run MODEL on input pattern xs1 and report its output as\n"
	    "ergon's an547 model firmware does) through the board's probe lifecycle.\n"
	    "Each model is checked: profile (it ran), correctness (the target's output\n"
	    "against the host interpreter, bit-exact), integrity (summary valid), and with\n"
	    "--baseline, regression (ergon compare's rules: comparability first, then a\n"
	    "headline figure worse by more than --threshold PCT, default 3, fails). The\n"
	    "baseline is an earlier --out folder (BASE/MODEL/summary.json) or a database\n"
	    "(the newest profile of the same model file on the same board). With --db every\n"
	    "summary.json is ingested (a check of its own). On qemu-an547 the firmware's\n"
	    "objects come from the firmware object cache when built before\n"
	    "($XDG_CACHE_HOME/ergon, else ~/.cache/ergon; docs/internals/fw_cache.md);\n"
	    "--no-cache compiles every object and neither reads nor writes the cache.\n"
	    "--repeat N (1..100) profiles each model N times, each repetition the whole\n"
	    "profile (the PMU stage and, with --power, the power stage), into one\n"
	    "summary.json with every repetition and each figure's mean, sd and 95 %\n"
	    "interval (repeat.figures); the regression check needs 3 or more on both\n"
	    "sides (ergon compare's Welch test), else it fails with \"no verdict\".\n\n"
	    "FILE gets JUnit XML: one <testsuite> per model, one <testcase> per check; a\n"
	    "profile that cannot run is an <error> and its checks are <skipped> with the\n"
	    "reason (docs/VALIDATE.md).\n\n"
	    "Examples:\n"
	    "  ergon validate --board qemu-an547 --models models/ --junit-xml out.xml --out v1\n"
	    "  ergon validate --board sim --power --models models/ --junit-xml s.xml --out s1\n"
	    "  ergon validate --board apollo510_evb --firmware-dir fw/ --models models/ \\\n"
	    "      --junit-xml b.xml --out b1\n"
	    "  ergon validate --board qemu-an547 --models models/ --baseline v1 \\\n"
	    "      --junit-xml out2.xml --out v2\n",
    .run = run,
    .exits = {[0] = "every check passed",
	      [1] = "a check failed or errored (the JUnit XML says which)",
	      [3] = "the models folder, the outputs or the database",
	      [4] = CLI_EXIT_NONE},
};
