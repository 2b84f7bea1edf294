/* ergon parse: an HPX log (file or stdin) to summary.json + CSVs. */
#include "cli.h"
#include "ergon/fileio.h"
#include "ergon/hpx.h"
#include "ergon/hpx_report.h"
#include "ergon/issues.h"
#include "hpx_cli.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int run(int argc, char **argv)
{
	const char *log = NULL, *out_dir = "results", *recording = "unknown";
	int agg = ERGON_HPX_AGG_MEDIAN;
	unsigned flags = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--aggregation") == 0 && i + 1 < argc) {
			agg = ergon_hpx_aggregation_parse(argv[++i]);
			if (!agg)
				return ergon_cli_usage(
				    "parse", "--aggregation %s: use median, mean or trimmed",
				    argv[i]);
		} else if (strcmp(a, "--out") == 0 && i + 1 < argc) {
			out_dir = argv[++i];
		} else if (strcmp(a, "--recording") == 0 && i + 1 < argc) {
			recording = argv[++i];
			if (strcmp(recording, "measured") && strcmp(recording, "synthetic") &&
			    strcmp(recording, "unknown"))
				return ergon_cli_usage("parse",
						       "--recording %s: use measured, synthetic or "
						       "unknown",
						       recording);
		} else if (strcmp(a, "--force") == 0) {
			flags |= ERGON_WRITE_FORCE;
		} else if (a[0] == '-' && a[1] != '\0') {
			return ergon_cli_usage("parse", "unknown option %s", a);
		} else if (!log) {
			log = a;
		} else {
			return ergon_cli_usage("parse", "expected one LOG, got %s too", a);
		}
	}
	if (!log)
		return ergon_cli_usage("parse", "expected a LOG file (or - for stdin)");
	struct ergon_err err = {0};
	json_t *summary = NULL;
	struct ergon_hpx_report_opts o = {.out_dir = out_dir,
					  .log_path = log,
					  .recording = recording,
					  .aggregation = agg,
					  .write_flags = flags};
	if (ergon_hpx_parse_run(log, &o, &summary, &err) != 0)
		return ergon_cli_fail("parse", &err);
	const json_t *profile = json_object_get(summary, "profile");
	ergon_cli_hpx_print_top(stdout, profile);
	printf("wrote %s/summary.json and %s/profile_results.csv\n", out_dir, out_dir);
	int exit_code = ERGON_EXIT_OK;
	if (ergon_issues_integrity(json_object_get(profile, "issues")) == ERGON_INTEGRITY_INVALID)
		exit_code = ERGON_EXIT_MEASUREMENT;
	json_decref(summary);
	return exit_code;
}

const struct ergon_cli_command ergon_cli_cmd_parse = {
    .name = "parse",
    .summary = "parse an HPX PMU log into summary.json and per-layer CSVs",
    .help = "Usage: ergon parse LOG [--aggregation median|mean|trimmed] [--out DIR]\n"
	    "                   [--recording measured|synthetic|unknown] [--force]\n\n"
	    "Parses an HPX firmware log (a file, or - for stdin) and writes, into DIR\n"
	    "(default ./results): summary.json (the ergon.report envelope with the\n"
	    "`profile` body), profile_results.csv (one row per layer: index, op, every\n"
	    "counter, overflow) and profile_results_<group>.csv per counter group.\n"
	    "Counters are aggregated across iterations after rejecting uint32 wraps\n"
	    "(>= 2^31) and frozen all-zero rows; median is the default.\n\n"
	    "Provenance is `replayed` with the log named; --recording says what the\n"
	    "log itself is (real hardware: measured), default unknown.\n"
	    "Existing outputs are kept unless --force. Exit 1 when the log holds no\n"
	    "usable profile (outputs are still written).\n\n"
	    "Examples:\n  ergon parse capture.log --out run1\n"
	    "  ergon parse - --aggregation trimmed < capture.log\n",
    .run = run,
};
