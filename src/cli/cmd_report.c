/* ergon report: one self-contained HTML file for one or more artifacts. */
#include "cli.h"
#include "cli_opts.h"
#include "cli_reliab.h"
#include "ergon/fileio.h"
#include "ergon/report_html.h"

#include <stdio.h>
#include <string.h>

static int run(int argc, char **argv)
{
	struct ergon_html_input in[ERGON_HTML_INPUTS_MAX];
	struct ergon_html_options o = {0};
	const char *out = NULL;
	unsigned flags = 0;
	size_t n = 0;
	memset(in, 0, sizeof in);
	int force = 0, json = 0, force_jls = 0;
	struct cli_parser p;
	cli_init(&p, "report", argc, argv);
	int clean = 0;
	while (cli_next(&p)) {
		const char *v = NULL;
		if (cli_str(&p, "--out", &out)) {
		} else if (cli_str(&p, "--jls", &v)) {
			if (v && n == 0)
				cli_error(&p, "--jls %s: give it after the summary it belongs to",
					  v);
			else if (v)
				in[n - 1].jls_path = v;
		} else if (cli_flag(&p, "--force-jls", &force_jls)) {
		} else if (cli_str(&p, "--pubkey", &o.pubkey_path)) {
		} else if (cli_flag(&p, "--clean", &clean)) {
		} else if (cli_flag(&p, "--force", &force)) {
		} else if (cli_flag(&p, "--json", &json)) {
		} else if (cli_positional(&p, &v)) {
			if (n == ERGON_HTML_INPUTS_MAX)
				cli_error(&p, "at most %d artifacts", ERGON_HTML_INPUTS_MAX);
			else
				in[n++].path = v;
		} else {
			cli_unknown(&p);
		}
	}
	if (p.rc || cli_require(&p, "ARTIFACT", in[0].path) || cli_require(&p, "--out", out))
		return p.rc;
	if (force)
		flags |= ERGON_WRITE_FORCE;
	for (size_t i = 0; i < n; i++)
		in[i].force_jls = force_jls;
	ergon_cli_stale_report("report", out, clean);
	struct ergon_err err = {0};
	if (ergon_report_html_write(in, n, &o, out, flags, &err) != 0)
		return ergon_cli_fail("report", &err);
	if (json) {
		json_t *a = json_array();
		for (size_t i = 0; a && i < n; i++)
			json_array_append_new(a, json_pack("{s:s, s:s?}", "path", in[i].path, "jls",
							   in[i].jls_path));
		return cli_json_doc("report", json_pack("{s:s, s:o}", "wrote", out, "artifacts", a));
	}
	printf("wrote %s (%zu artifact%s)\n", out, n, n > 1 ? "s" : "");
	return ERGON_EXIT_OK;
}

const struct ergon_cli_command ergon_cli_cmd_report = {
    .name = "report",
    .summary = "render artifacts as one self-contained HTML file with plots",
    .help = "Usage: ergon report ARTIFACT [--jls REC.jls] [ARTIFACT ...] --out report.html\n"
	    "                    [--pubkey PUB] [--force] [--force-jls] [--clean] [--json]\n\n"
	    "One HTML file with everything inline (no network, no other files): for a run\n"
	    "report the power over time with its idle and load phases, window edges and\n"
	    "throttle onset, throughput per window with temperature, the latency histogram\n"
	    "and CDF with p50/p90/p95/p99, every figure with its ±; for a profile or analyze\n"
	    "summary the power figures, checks, per-window table, per-layer table, one bar\n"
	    "chart per counter group and the top layers, and with --jls (after the summary\n"
	    "it belongs to) the current trace around the gate with the windows shaded and\n"
	    "the current distribution with median/p95/p99. Long series are drawn as a\n"
	    "min/max envelope. Every artifact also gets its issues, provenance, instrument\n"
	    "identity, conditions, report_id and digest/figures/signature status (--pubkey\n"
	    "checks signatures). A truncated or changed artifact is rendered from what it\n"
	    "holds, marked; an unknown schema is refused (exit 2); an existing --out is\n"
	    "refused without --force (exit 3).\n\n"
	    "A recording given with --jls must be the one the summary was made from: its\n"
	    "size and SHA-256 are compared with the summary's provenance.recording (written\n"
	    "by ergon analyze). Another recording is refused (exit 1), and so is any when\n"
	    "the summary records no digest (an older summary: analyze the recording again);\n"
	    "--force-jls draws it anyway, with a banner saying it is not shown to belong.\n\n"
	    "Examples:\n"
	    "  ergon report run/report.json --out run.html\n"
	    "  ergon report an/summary.json --jls capture.jls --out power.html\n",
    .run = run,
    .exits = {[0] = "the HTML file was written",
	      [1] = CLI_EXIT_NONE,
	      [2] = "usage, or an artifact of an unknown schema",
	      [3] = "an artifact cannot be read, or --out cannot be written (or exists)",
	      [4] = CLI_EXIT_NONE},
};
