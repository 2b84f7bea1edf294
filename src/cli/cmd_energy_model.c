/* ergon energy-model: export measurement-harness/energy-model/v1 from a verified report. The
 * file name maps to the symbol ergon_cli_cmd_energy_model; the command is
 * dispatched by .name, "energy-model". */
#include "cli.h"
#include "cli_opts.h"
#include "cli_reliab.h"
#include "ergon/artifact.h"
#include "ergon/fileio.h"
#include "ergon/report.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ACTIONS 32

static int run(int argc, char **argv)
{
	const char *actions[MAX_ACTIONS];
	size_t na = 0;
	const char *in = NULL, *out = NULL;
	int allow = 0;
	unsigned flags = 0; /* a missing folder is refused, never created */
	int allow_syn = 0, allow_rep = 0, force = 0, json = 0;
	struct cli_parser p;
	cli_init(&p, "energy-model", argc, argv);
	int clean = 0;
	while (cli_next(&p)) {
		const char *act = NULL;
		if (cli_str(&p, "--action", &act)) {
			if (na >= MAX_ACTIONS)
				cli_error(&p, "too many --action (at most %d)", MAX_ACTIONS);
			else if (act)
				actions[na++] = act;
		} else if (cli_str(&p, "--out", &out)) {
		} else if (cli_flag(&p, "--allow-synthetic", &allow_syn)) {
		} else if (cli_flag(&p, "--allow-replayed", &allow_rep)) {
		} else if (cli_flag(&p, "--clean", &clean)) {
		} else if (cli_flag(&p, "--force", &force)) {
		} else if (cli_flag(&p, "--json", &json)) {
		} else if (cli_positional(&p, &in)) {
		} else {
			cli_unknown(&p);
		}
	}
	if (p.rc || cli_require(&p, "REPORT.json", in) ||
	    cli_require(&p, "--action", na ? actions[0] : NULL))
		return p.rc;
	if (allow_syn)
		allow |= ERGON_MODEL_ALLOW_SYNTHETIC;
	if (allow_rep)
		allow |= ERGON_MODEL_ALLOW_REPLAYED;
	if (force)
		flags |= ERGON_WRITE_FORCE;
	ergon_cli_stale_report("energy-model", out, clean);
	struct ergon_err err = {0};
	json_t *r = NULL, *model = NULL;
	char *text = NULL;
	int rc = ergon_artifact_load(in, (size_t)4 << 30, &r, &err);
	if (rc == 0 && out)
		rc = ergon_file_check_writable(out, flags, &err);
	if (rc == 0)
		rc = ergon_energy_model_build(r, actions, na, allow, &model, &err);
	if (rc == 0) {
		text = json_dumps(model, JSON_INDENT(1) | JSON_REAL_PRECISION(17));
		if (text == NULL)
			rc = ergon_err_set(&err, ERGON_ENOMEM, "cannot serialise the model");
	}
	if (rc == 0) {
		if (out) {
			size_t len = strlen(text);
			rc = ergon_file_write_atomic(out, text, len, flags, &err);
			if (rc == 0)
				cli_note("energy-model", "wrote %s", out);
		}
		/* Without --out, or with --json: the model is the document. */
		if (rc == 0 && (out == NULL || json) &&
		    (printf("%s\n", text) < 0 || fflush(stdout) != 0))
			rc = ergon_err_set(&err, ERGON_EIO, "cannot write the model to stdout");
	}
	free(text);
	json_decref(model);
	json_decref(r);
	if (rc)
		return ergon_cli_fail("energy-model", &err);
	return ERGON_EXIT_OK;
}

const struct ergon_cli_command ergon_cli_cmd_energy_model = {
    .name = "energy-model",
    .summary = "export the energy model (J per operation above idle) from a report",
    .help = "Usage: ergon energy-model REPORT.json --action NAME [--action NAME...]\n"
	    "                          [--allow-synthetic] [--allow-replayed]\n"
	    "                          [--out FILE [--force] [--clean]] [--json]\n\n"
	    "Verifies the report, then writes measurement-harness/energy-model/v1, the\n"
	    "name the measurement harness's consumers read (files ergon wrote before as\n"
	    "energy-model/v1 still read in report and db): schema, basis (above_idle),\n"
	    "values per action (J per operation), source (one sentence to carry verbatim),\n"
	    "uncertainty_j_per_operation and the report_id it came from. Every --action\n"
	    "names the one operation the report measured (aliases share its value).\n"
	    "A synthetic report is refused (exit 1) unless --allow-synthetic is given;\n"
	    "its source sentence then says \"synthetic — not measured\". A replayed report\n"
	    "(ergon run --instrument replay:FILE) is refused unless --allow-replayed is\n"
	    "given, even when the recording was measured: its power was not recorded\n"
	    "while the workload ran; it is then labelled \"" ERGON_REPLAYED_LABEL "\".\n\n"
	    "Examples:\n"
	    "  ergon energy-model run/report.json --action inference --out model.json\n"
	    "  ergon energy-model demo-run/report.json --action inference --allow-synthetic\n",
    .run = run,
    .exits = {[0] = "the energy model was written",
	      [1] = "refused: the report does not verify, or is synthetic or replayed without "
	      "--allow-synthetic / --allow-replayed",
	      [3] = "the report cannot be read, or --out cannot be written",
	      [4] = CLI_EXIT_NONE},
};
