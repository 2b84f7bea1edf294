/* ergon analyze: gated-window power analysis of a recording. */
#include "cli.h"
#include "cli_sign.h"
#include "ergon/analyze.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int parse_num(const char *opt, const char *s, double lo, double hi, double *out)
{
	char *end = NULL;
	double v = strtod(s, &end);
	if (*s == 0 || *end != 0 || !(v >= lo && v <= hi))
		return ergon_cli_usage("analyze", "%s '%s': expected a number in [%g, %g]", opt, s,
				       lo, hi);
	*out = v;
	return 0;
}

static int run(int argc, char **argv)
{
	struct ergon_analyze_options o;
	const char *sign_key = NULL;
	memset(&o, 0, sizeof(o));
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		int takes = 1;
		double d = 0;
		if (strcmp(a, "--force") == 0) {
			o.force = 1;
			takes = 0;
		} else if (v == NULL) {
			return ergon_cli_usage("analyze", "%s needs a value", a);
		} else if (strcmp(a, "--jls") == 0) {
			o.jls_path = v;
		} else if (strcmp(a, "--stats") == 0) {
			o.stats_path = v;
		} else if (strcmp(a, "--raw") == 0) {
			o.raw_path = v;
		} else if (strcmp(a, "--markers") == 0) {
			o.markers_path = v;
		} else if (strcmp(a, "--facts") == 0) {
			o.facts_path = v;
		} else if (strcmp(a, "--out") == 0) {
			o.out_dir = v;
		} else if (strcmp(a, "--sign") == 0) {
			sign_key = v;
		} else if (strcmp(a, "--recording-provenance") == 0) {
			if (strcmp(v, "measured") != 0 && strcmp(v, "synthetic") != 0)
				return ergon_cli_usage(
				    "analyze", "--recording-provenance: measured or synthetic");
			o.recording_provenance = v;
		} else if (strcmp(a, "--sync-input-index") == 0) {
			if (parse_num(a, v, 0, 31, &d))
				return ERGON_EXIT_USAGE;
			if (d != (double)(unsigned)d)
				return ergon_cli_usage("analyze", "%s: an integer 0..31", a);
			o.sync_input_index = (unsigned)d;
		} else if (strcmp(a, "--stats-rate-hz") == 0) {
			if (parse_num(a, v, 1, 1e6, &o.stats_rate_hz))
				return ERGON_EXIT_USAGE;
		} else if (strcmp(a, "--min-window-s") == 0) {
			if (parse_num(a, v, 1e-6, 1e6, &o.min_window_s))
				return ERGON_EXIT_USAGE;
		} else {
			return ergon_cli_usage("analyze", "unknown option '%s'", a);
		}
		i += takes;
	}
	struct ergon_err err = {0};
	struct ergon_secret_key skey = {0};
	char *table = NULL;
	int rc = ergon_cli_sign_load("analyze", sign_key, &skey);
	if (rc)
		return rc;
	rc = ergon_analyze_run(&o, isatty(STDOUT_FILENO), &table, NULL, &err);
	if (rc) {
		ergon_secret_key_wipe(&skey);
		return ergon_cli_fail("analyze", &err);
	}
	fputs(table, stdout);
	free(table);
	printf("wrote %s/summary.json and %s/detailed/power_summary.csv\n", o.out_dir, o.out_dir);
	char spath[4096];
	snprintf(spath, sizeof spath, "%s/summary.json", o.out_dir ? o.out_dir : ".");
	return ergon_cli_sign_written("analyze", sign_key, spath, &skey);
}

const struct ergon_cli_command ergon_cli_cmd_analyze = {
    .name = "analyze",
    .summary = "gated-window power analysis of a recording (JLS, statistics or raw CSV)",
    .help = "Usage: ergon analyze (--jls FILE.jls | --stats FILE.csv | --raw FILE.csv)\n"
	    "                     [--facts FACTS.json] [--markers GATE.csv]\n"
	    "                     [--sync-input-index N] [--stats-rate-hz HZ]\n"
	    "                     [--min-window-s S] [--recording-provenance measured|synthetic]\n"
	    "                     --out DIR [--force] [--sign KEY]\n\n"
	    "Finds the gate windows (digital input N, INPUT0 by default, or the start_s,end_s\n"
	    "lines of --markers), ignores gates shorter than --min-window-s (1 s) as glitches,\n"
	    "and reports per-window and whole-capture energy, charge, mean/median/p95/p99\n"
	    "current and power. With --facts (clean inference count, reference inference\n"
	    "time, power terminal record; docs/POWER_CHECKS.md) it checks the window and\n"
	    "publishes energy per inference only when the checks pass.\n\n"
	    "Writes DIR/summary.json (power section) and DIR/detailed/power_summary.csv and\n"
	    "prints the Power table. An invalid measurement is still written (integrity says\n"
	    "so); the exit code is non-zero only for usage (2) and I/O (3) errors.\n\n"
	    "CSV forms: --stats columns t_start_s,t_end_s,i_avg_a[,i_std_a,i_min_a,i_max_a,\n"
	    "v_avg_v,...,p_avg_w,...,charge_c,energy_j,sample_id,digital]; --raw columns\n"
	    "t_s,current_a,voltage_v[,power_w,digital], uniformly sampled.\n\n"
	    "Examples:\n"
	    "  ergon analyze --jls capture.jls --facts facts.json --out run1\n"
	    "  ergon analyze --stats packets.csv --sync-input-index 1 --out run2\n",
    .run = run,
};
