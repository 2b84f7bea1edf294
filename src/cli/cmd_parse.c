/* ergon parse: an HPX log (file or stdin) to summary.json + CSVs. */
#include "cli.h"
#include "cli_opts.h"
#include "cli_reliab.h"
#include "ergon/fileio.h"
#include "ergon/hpx.h"
#include "ergon/hpx_report.h"
#include "ergon/issues.h"
#include "ergon/verdict.h"
#include "hpx_cli.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A log without its END line: say which input ends where, and what the
 * outputs hold (the issue itself is in them, and in the warnings above). */
static void print_truncated(const char *log, const char *out_dir,
			    const struct ergon_hpx_run_result *r)
{
	if (cli_json_on())
		return; /* the document holds the issue */
	for (size_t i = 0; i < r->issues.n; i++) {
		const struct ergon_issue_entry *is = &r->issues.items[i];
		if (strcmp(is->code, "pmu.incomplete") != 0)
			continue;
		const struct ergon_issue_field *bytes = ergon_issue_entry_field(is, "bytes");
		const struct ergon_issue_field *mid = ergon_issue_entry_field(is, "cut_mid_line");
		fprintf(stderr,
			"ergon parse: %s is truncated: it ends at byte %lld%s without "
			"'--- HPX_END ---'; %s/summary.json keeps every complete iteration "
			"before that point, marked incomplete (pmu.incomplete, validity %s). "
			"If the capture was still running, parse the finished log again.\n",
			strcmp(log, "-") == 0 ? "standard input" : log,
			bytes && bytes->kind == ERGON_IF_INT ? (long long)bytes->i : 0LL,
			mid && mid->kind == ERGON_IF_BOOL && mid->i ? ", inside a line" : "",
			out_dir, ergon_integrity_name(r->validity));
		return;
	}
}

static int run(int argc, char **argv)
{
	const char *log = NULL, *out_dir = "results", *recording = "unknown";
	int agg = ERGON_HPX_AGG_MEDIAN;
	unsigned flags = 0;
	const char *agg_name = NULL;
	int force = 0, as_json = 0;
	struct cli_parser cp;
	cli_init(&cp, "parse", argc, argv);
	int clean = 0;
	while (cli_next(&cp)) {
		if (cli_choice(&cp, "--aggregation", ergon_cli_hpx_aggregations, &agg_name)) {
		} else if (cli_outdir(&cp, "--out", &out_dir)) {
		} else if (cli_choice(&cp, "--recording", ergon_cli_hpx_recordings, &recording)) {
		} else if (cli_flag(&cp, "--clean", &clean)) {
		} else if (cli_flag(&cp, "--force", &force)) {
		} else if (cli_flag(&cp, "--json", &as_json)) {
		} else if (cli_positional(&cp, &log)) {
		} else {
			cli_unknown(&cp);
		}
	}
	if (cp.rc || cli_require(&cp, "LOG (a file, or - for stdin)", log))
		return cp.rc;
	if (agg_name)
		agg = ergon_hpx_aggregation_parse(agg_name);
	if (force)
		flags |= ERGON_WRITE_FORCE;
	ergon_cli_stale_report_dir("parse", out_dir, clean);
	struct ergon_err err = {0};
	json_t *summary = NULL;
	struct ergon_hpx_report_opts o = {.out_dir = out_dir,
					  .log_path = log,
					  .recording = recording,
					  .aggregation = agg,
					  .write_flags = flags};
	struct ergon_hpx_run_result res;
	if (ergon_hpx_parse_run(log, &o, &res, as_json ? &summary : NULL, &err) != 0) {
		ergon_hpx_run_result_cleanup(&res);
		return ergon_cli_fail("parse", &err);
	}
	if (as_json) {
		cli_print_json(summary);
	} else {
		ergon_cli_hpx_print_top(stdout, &res);
		printf("wrote %s/summary.json and %s/profile_results.csv\n", out_dir, out_dir);
	}
	print_truncated(log, out_dir, &res);
	int exit_code = ergon_cli_verdict_exit("parse", &res.verdict, res.summary_path);
	ergon_hpx_run_result_cleanup(&res);
	json_decref(summary);
	return exit_code;
}

const struct ergon_cli_command ergon_cli_cmd_parse = {
    .name = "parse",
    .summary = "parse an HPX PMU log into summary.json and per-layer CSVs",
    .help = "Usage: ergon parse LOG [--aggregation median|mean|trimmed] [--out DIR]\n"
	    "                   [--recording measured|synthetic|unknown] [--force] [--clean] "
	    "[--json]\n\n"
	    "Parses an HPX firmware log (a file, or - for stdin) and writes, into DIR\n"
	    "(default ./results): summary.json (the ergon.report envelope with the\n"
	    "`profile` body), profile_results.csv (one row per layer: index, op, every\n"
	    "counter, overflow) and profile_results_<group>.csv per counter group.\n"
	    "Counters are aggregated across iterations after rejecting uint32 wraps\n"
	    "(>= 2^31) and frozen all-zero rows; median is the default.\n\n"
	    "While it parses, the samples of up to two presets wait in an unlinked\n"
	    "file in DIR (about 10 bytes per counter value; gone when it ends), so\n"
	    "memory does not grow with the iterations.\n\n"
	    "Provenance is `replayed` with the log named; --recording says what the\n"
	    "log itself is (real hardware: measured), default unknown.\n"
	    "--json prints summary.json on stdout instead of the table.\n"
	    "Existing outputs are kept unless --force.\n\n"
	    "Examples:\n  ergon parse capture.log --out run1\n"
	    "  ergon parse - --aggregation trimmed < capture.log\n",
    .run = run,
    .exits = {[0] = "the log reached HPX_END and its profile was written",
	      [1] = "no usable profile (pmu.missing; the outputs are still written)",
	      [4] = "the log ends before HPX_END: the complete iterations are written, what followed "
	      "is missing (pmu.incomplete)"},
};
