/* ergon analyze: gated-window power analysis of a recording. */
#include "cli.h"
#include "cli_opts.h"
#include "cli_reliab.h"
#include "cli_sign.h"
#include "ergon/analyze.h"
#include "ergon/verdict.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const provenances[] = {"measured", "synthetic", NULL};

static int run(int argc, char **argv)
{
	struct ergon_analyze_options o;
	const char *sign_key = NULL;
	memset(&o, 0, sizeof(o));
	struct cli_parser p;
	long idx = 0;
	int as_json = 0;
	cli_init(&p, "analyze", argc, argv);
	int clean = 0;
	const char *rkv[65] = {0};
	size_t nr = 0;
	while (cli_next(&p)) {
		const char *kv = NULL;
		if (cli_flag(&p, "--clean", &clean)) {
		} else if (cli_flag(&p, "--force", &o.force)) {
		} else if (cli_flag(&p, "--json", &as_json)) {
		} else if (cli_str(&p, "--jls", &o.jls_path)) {
		} else if (cli_str(&p, "--stats", &o.stats_path)) {
		} else if (cli_str(&p, "--raw", &o.raw_path)) {
		} else if (cli_str(&p, "--markers", &o.markers_path)) {
		} else if (cli_str(&p, "--facts", &o.facts_path)) {
		} else if (cli_outdir(&p, "--out", &o.out_dir)) {
		} else if (cli_str(&p, "--sign", &sign_key)) {
		} else if (cli_choice(&p, "--recording-provenance", provenances,
				      &o.recording_provenance)) {
		} else if (cli_long(&p, "--sync-input-index", 0, 31, &idx)) {
			o.sync_input_index = (unsigned)idx;
		} else if (cli_long(&p, "--marker-input-index", 0, 31, &idx)) {
			o.marker_input_index = (unsigned)idx;
			o.has_marker_input = 1;
		} else if (cli_str(&p, "--layers", &o.layers_path)) {
		} else if (cli_num(&p, "--stats-rate-hz", CLI_GE, 1, 1e6, &o.stats_rate_hz)) {
		} else if (cli_num(&p, "--min-window-s", CLI_GE, 1e-6, 1e6, &o.min_window_s)) {
		} else if (cli_str(&p, "--meter", &o.meter)) {
		} else if (cli_num(&p, "--shunt-ohms", CLI_GT, 0, 1e9, &o.shunt_ohms)) {
		} else if (cli_str(&p, "--rating", &kv)) {
			if (kv && nr >= 64)
				cli_error(&p, "too many --rating (at most 64)");
			else if (kv)
				rkv[nr++] = kv;
		} else if (cli_num(&p, "--max-uncertainty-pct", CLI_GT, 0, 1e6,
				   &o.max_uncertainty_pct)) {
		} else {
			cli_unknown(&p);
		}
	}
	if (p.rc || cli_require(&p, "--out", o.out_dir))
		return p.rc;
	if (!o.jls_path && !o.stats_path && !o.raw_path)
		return cli_error(&p, "missing the recording: give --jls, --stats or --raw");
	o.rating_kv = rkv;
	ergon_cli_stale_report_dir("analyze", o.out_dir, clean);
	struct ergon_err err = {0};
	struct ergon_secret_key skey = {0};
	char *table = NULL;
	json_t *summary = NULL;
	int rc = ergon_cli_sign_load("analyze", sign_key, &skey);
	if (rc)
		return rc;
	/* The summary decides the verdict; it is printed only with --json. */
	rc = ergon_analyze_run(&o, !as_json && isatty(STDOUT_FILENO) && cli_utf8(), &table, NULL,
			       &summary, &err);
	if (rc) {
		ergon_secret_key_wipe(&skey);
		return ergon_cli_fail("analyze", &err);
	}
	if (as_json)
		cli_print_json(summary);
	else
		fputs(table, stdout);
	free(table);
	if (!as_json)
		printf("wrote %s/summary.json and %s/detailed/power_summary.csv\n", o.out_dir,
		       o.out_dir);
	char spath[4096];
	snprintf(spath, sizeof spath, "%s/summary.json", o.out_dir);
	struct ergon_verdict verdict;
	ergon_verdict_analysis(summary, o.facts_path != NULL, &verdict);
	json_decref(summary);
	int code = ergon_cli_verdict_exit("analyze", &verdict, spath);
	int src = ergon_cli_sign_written("analyze", sign_key, spath, &skey);
	return src && code == ERGON_EXIT_OK ? src : code;
}

const struct ergon_cli_command ergon_cli_cmd_analyze = {
    .name = "analyze",
    .summary = "gated-window power analysis of a recording (JLS, statistics or raw CSV)",
    .help = "Usage: ergon analyze (--jls FILE.jls | --stats FILE.csv | --raw FILE.csv)\n"
	    "                     [--facts FACTS.json] [--markers GATE.csv]\n"
	    "                     [--sync-input-index N] [--stats-rate-hz HZ]\n"
	    "                     [--min-window-s S] [--recording-provenance measured|synthetic]\n"
	    "                     [--meter MODEL] [--shunt-ohms R] [--rating KEY=VALUE ...]\n"
	    "                     [--max-uncertainty-pct P]\n"
	    "                     [--marker-input-index N --layers SUMMARY.json]\n"
	    "                     --out DIR [--force] [--clean] [--json] [--sign KEY]\n\n"
	    "Finds the gate windows (digital input N, INPUT0 by default, or the start_s,end_s\n"
	    "lines of --markers), ignores gates shorter than --min-window-s (1 s) as glitches,\n"
	    "and reports per-window and whole-capture energy, charge, mean/median/p95/p99\n"
	    "current and power. With --facts (clean inference count, reference inference\n"
	    "time, power terminal record; docs/POWER_CHECKS.md) it checks the window and\n"
	    "publishes energy per inference only when the checks pass.\n\n"
	    "Writes DIR/summary.json (power section) and DIR/detailed/power_summary.csv and\n"
	    "prints the Power table (with --json: the summary, on stdout). An invalid\n"
	    "measurement is still written (integrity says so, and the exit code).\n"
	    "--sign KEY (ergon keygen) signs DIR/summary.json once it is written; the key is\n"
	    "loaded first, so a bad key fails before anything is analyzed.\n\n"
	    "Every energy, charge, mean power and energy-per-inference figure carries an\n"
	    "uncertainty budget (power.uncertainty; docs/UNCERTAINTY.md): its terms come\n"
	    "from the instrument's rating, taken from --meter (js110, js220, ina228,\n"
	    "ina3221, vbench; --shunt-ohms R for the INA parts), else from the recording\n"
	    "(ergon record's note, a Joulescope JLS's model, an on-board INA228 record);\n"
	    "--rating KEY=VALUE states a figure (gain_pct, offset_w, i_gain_pct,\n"
	    "i_offset_a, v_gain_pct, v_offset_v, shunt_tolerance_pct,\n"
	    "shunt_tempco_ppm_per_c, shunt_temp_span_c, timebase_ppm). A term nobody\n"
	    "states is unknown: the budget is incomplete. --max-uncertainty-pct P: a\n"
	    "figure above P % (k = 2), or with an incomplete budget, raises\n"
	    "power.uncertainty_above_limit (an error, exit 1); the figure stays.\n\n"
	    "Energy per layer (docs/METHOD.md): --marker-input-index N names the digital\n"
	    "line of the firmware's layer markers (PPK2 D1 = 1) in a JLS recording whose\n"
	    "gate is on --sync-input-index; --layers SUMMARY.json is the summary of the\n"
	    "`ergon profile MODEL --layer-energy` run whose layers were marked (its\n"
	    "profile.layers[]: op names, cycles; the marker plan is made again at the\n"
	    "recording's rate). Adds power.layers[], power.layer_energy and\n"
	    "DIR/detailed/layer_energy.csv; with --facts the layers' sum is checked\n"
	    "against the energy per inference and the cycle-split estimate is shown.\n\n"
	    "CSV forms: --stats columns t_start_s,t_end_s,i_avg_a[,i_std_a,i_min_a,i_max_a,\n"
	    "v_avg_v,...,p_avg_w,...,charge_c,energy_j,sample_id,digital]; --raw columns\n"
	    "t_s,current_a,voltage_v[,power_w,digital], uniformly sampled.\n"
	    "--stats-rate-hz HZ: raw samples are reduced to statistics packets at HZ\n"
	    "(default 1000); a statistics CSV's packets carry their own period, and a rate\n"
	    "that contradicts it is refused (exit 2).\n\n"
	    "Examples:\n"
	    "  ergon analyze --jls capture.jls --facts facts.json --out run1\n"
	    "  ergon analyze --stats packets.csv --sync-input-index 1 --out run2\n"
	    "  ergon analyze --jls marked.jls --marker-input-index 1 \\\n"
	    "      --layers prof/summary.json --facts facts.json --out run3\n",
    .run = run,
    .exits = {[0] = "every figure was published (without --facts no per-inference figure is asked for)",
	      [1] = "a check failed (an error issue, e.g. power.window_observer_mismatch; summary.json "
	      "is written and says so)",
	      [3] = "the recording cannot be read, or the outputs cannot be written",
	      [4] = "no gate window qualified (whole-capture figures only), or --facts asked for "
	      "per-inference figures and a check withheld them"},
};
