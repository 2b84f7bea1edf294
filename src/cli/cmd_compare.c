/* ergon compare: comparability first, then the figures, per-layer diff and
 * a regression verdict for CI. */
#include "cli.h"
#include "cli_opts.h"
#include "cli_reliab.h"
#include "ergon/artifact.h"
#include "ergon/compare.h"
#include "ergon/fileio.h"
#include "ergon/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Exit code for a refused comparison (incomparable, different kinds). */
#define EXIT_INCOMPARABLE 4

static int write_outputs(const char *dir, json_t *res, unsigned flags, struct ergon_err *err)
{
	char path[4096];
	int rc = ergon_mkdir_p(dir, err);
	if (rc)
		return rc;
	snprintf(path, sizeof path, "%s/compare.json", dir);
	if ((rc = ergon_artifact_write(res, path, flags, err)) != 0)
		return rc;
	if (!json_is_array(json_object_get(res, "layers")))
		return 0;
	char *csv = NULL;
	size_t len = 0;
	if ((rc = ergon_compare_layer_csv(res, &csv, &len, err)) != 0)
		return rc;
	snprintf(path, sizeof path, "%s/layer_diff.csv", dir);
	rc = ergon_file_write_atomic(path, csv, len, flags, err);
	free(csv);
	return rc;
}

static int run(int argc, char **argv)
{
	const char *paths[ERGON_COMPARE_MAX];
	const char *out = NULL;
	size_t n = 0;
	int as_json = 0, force = 0;
	unsigned flags = 0;
	struct ergon_compare_options o = {.threshold_pct = NAN};
	struct cli_parser p;
	cli_init(&p, "compare", argc, argv);
	int clean = 0;
	while (cli_next(&p)) {
		const char *path = NULL;
		if (cli_outdir(&p, "--out", &out)) {
		} else if (cli_num(&p, "--threshold", CLI_GE, 0, 1e6, &o.threshold_pct)) {
		} else if (cli_flag(&p, "--json", &as_json)) {
		} else if (cli_flag(&p, "--force-incomparable", &o.force_incomparable)) {
		} else if (cli_flag(&p, "--clean", &clean)) {
		} else if (cli_flag(&p, "--force", &force)) {
		} else if (cli_positional(&p, &path)) {
			if (n == ERGON_COMPARE_MAX)
				cli_error(&p, "at most %d artifacts", ERGON_COMPARE_MAX);
			else
				paths[n++] = path;
		} else {
			cli_unknown(&p);
		}
	}
	if (p.rc)
		return p.rc;
	if (n < 2)
		return cli_error(&p, "expected at least two artifacts: A B [C ...]");
	if (force)
		flags |= ERGON_WRITE_FORCE;
	ergon_cli_stale_report_dir("compare", out, clean);
	struct ergon_err err = {0};
	json_t *a[ERGON_COMPARE_MAX] = {0}, *res = NULL;
	int code = ERGON_EXIT_OK, rc = 0;
	for (size_t i = 0; i < n; i++) {
		if ((rc = ergon_artifact_load(paths[i], (size_t)4 << 30, &a[i], &err)) != 0) {
			code = ergon_cli_fail("compare", &err);
			goto out;
		}
		/* A changed artifact is not compared: its figures are not its own.
		 * What verify refuses (a resealed forged figure, a signature made
		 * for another report) compare refuses too. */
		if ((rc = ergon_artifact_verify(a[i], &err)) != 0) {
			if (rc != ERGON_EVERIFY) {
				code = ergon_cli_fail("compare", &err);
				goto out;
			}
			char msg[sizeof err.msg + 64];
			snprintf(msg, sizeof msg, "%s: fails verification: %s; not compared", paths[i],
				 err.msg);
			code = cli_report_error("compare", EXIT_INCOMPARABLE, ergon_strerror_name(rc),
						msg, 0);
			goto out;
		}
	}
	rc = ergon_compare((const json_t *const *)a, paths, n, &o, &res, &err);
	if (rc && res == NULL) {
		code = cli_report_error("compare",
					rc == ERGON_EREFUSED ? EXIT_INCOMPARABLE : ergon_exit_code(rc),
					ergon_strerror_name(rc), err.msg, 0);
		goto out;
	}
	if (as_json) {
		cli_print_json(res);
	} else {
		char *text = NULL;
		struct ergon_err te = {0};
		if (ergon_compare_text(res, &text, &te) == 0)
			fputs(text, stdout);
		free(text);
	}
	if (out) {
		struct ergon_err we = {0};
		if (write_outputs(out, res, flags, &we) != 0) {
			code = ergon_cli_fail("compare", &we);
			goto out;
		}
	}
	if (rc) {
		code = cli_report_error("compare", EXIT_INCOMPARABLE, ergon_strerror_name(rc),
					err.msg, 0);
	} else if (ergon_compare_regressed(res)) {
		code = ERGON_EXIT_MEASUREMENT;
		/* The text says it; with --json the exit status gets its line. */
		if (as_json)
			cli_report_error("compare", code, "EREGRESSION",
					 "a headline figure regressed beyond --threshold (the "
					 "document's verdicts say which)",
					 0);
	} else if (json_integer_value(json_object_get(res, "spread_unknown")) > 0) {
		/* No verdict on some figure: as not comparable (docs/COMPARE.md). */
		code = EXIT_INCOMPARABLE;
		if (as_json)
			cli_report_error("compare", code, "ESPREAD",
					 "a figure has no verdict: the run-to-run spread is unknown "
					 "(fewer than 3 repetitions on a side; ergon run --repeat 3)",
					 0);
	}
out:
	for (size_t i = 0; i < n; i++)
		json_decref(a[i]);
	json_decref(res);
	return code;
}

const struct ergon_cli_command ergon_cli_cmd_compare = {
    .name = "compare",
    .summary = "compare artifacts: comparability first, then figures with their ±",
    .help = "Usage: ergon compare A B [C ...] [--threshold PCT] [--json] [--out DIR [--force]]\n"
	    "                     [--force-incomparable] [--clean]\n\n"
	    "Checks first that the artifacts (all run reports, all profile summaries or all\n"
	    "analyze summaries) are comparable: instrument identity (model, rated accuracy,\n"
	    "resolution), sampler and rate, provenance, conditions, board/device, aggregation,\n"
	    "window configuration. Every field that differs is listed, classed as breaks\n"
	    "(refuses unless --force-incomparable), subject (what is compared, e.g. the\n"
	    "workload or the firmware build) or note. Then for each figure: every value (the\n"
	    "mean of the repetitions of a --repeat run), and versus A the difference, ratio\n"
	    "and verdict: higher/lower only when the difference exceeds both the instruments'\n"
	    "combined ± (the sum of both) and the run-to-run spread (Welch's t test on the\n"
	    "repetitions, two-sided, 5 %), not distinguishable otherwise. With fewer than 3\n"
	    "repetitions on a side the spread is unknown and the figure gets no verdict\n"
	    "(exit 4): measure with ergon run --repeat 3 or more. --threshold PCT: a\n"
	    "headline figure (marked *) worse than A by more than PCT %, and\n"
	    "distinguishable, is a regression.\n\n"
	    "--out DIR writes DIR/compare.json (an ergon.compare artifact) and, for profiles,\n"
	    "DIR/layer_diff.csv (layer_id,op,counter,a,b,diff_b,ratio_b,...).\n\n"
	    "Every input is verified first, as ergon verify does (a sustained report's\n"
	    "figures from its series, another artifact's digest, a signature's report_id).\n"
	    "docs/COMPARE.md.\n\n"
	    "Examples:\n"
	    "  ergon run ... --repeat 5 --out base.json; ergon run ... --repeat 5 --out new.json\n"
	    "  ergon compare base.json new.json --threshold 2\n"
	    "  ergon compare v1/summary.json v2/summary.json --out diff\n",
    .run = run,
    .exits = {[0] = "comparable, and no regression",
	      [1] = "a regression (with --threshold)",
	      [3] = "an artifact cannot be read, or --out cannot be written",
	      [4] = "refused: not comparable, artifacts of different kinds, an artifact that fails "
	      "verification (a changed digest, a resealed figure, a signature made for another "
	      "report), or a figure without a verdict because the run-to-run spread is unknown "
	      "(docs/COMPARE.md)"},
};
