/* ergon energy-model: export energy-model/v1 from a verified report. The
 * file name maps to the symbol ergon_cli_cmd_energy_model; the command is
 * dispatched by .name, "energy-model". */
#include "cli.h"
#include "cli_args.h"
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
	unsigned flags = ERGON_WRITE_MKDIR;
	for (int i = 1; i < argc; i++) {
		const char *v = NULL;
		int m;
		if ((m = cli_opt(argc, argv, &i, "--action", &v)) != 0) {
			if (m < 0)
				return ergon_cli_usage("energy-model", "--action needs a NAME");
			if (na >= MAX_ACTIONS)
				return ergon_cli_usage("energy-model", "too many --action");
			actions[na++] = v;
		} else if ((m = cli_opt(argc, argv, &i, "--out", &v)) != 0) {
			if (m < 0)
				return ergon_cli_usage("energy-model", "--out needs a FILE");
			out = v;
		} else if (strcmp(argv[i], "--allow-synthetic") == 0) {
			allow |= ERGON_MODEL_ALLOW_SYNTHETIC;
		} else if (strcmp(argv[i], "--allow-replayed") == 0) {
			allow |= ERGON_MODEL_ALLOW_REPLAYED;
		} else if (strcmp(argv[i], "--force") == 0) {
			flags |= ERGON_WRITE_FORCE;
		} else if (argv[i][0] == '-') {
			return ergon_cli_usage("energy-model", "unknown option '%s'", argv[i]);
		} else if (in == NULL) {
			in = argv[i];
		} else {
			return ergon_cli_usage("energy-model", "one REPORT.json only");
		}
	}
	if (in == NULL || na == 0)
		return ergon_cli_usage("energy-model", "expected REPORT.json and --action NAME");
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
				fprintf(stderr, "ergon energy-model: wrote %s\n", out);
		} else {
			printf("%s\n", text);
		}
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
    .summary = "export energy-model/v1 (J per operation above idle) from a report",
    .help = "Usage: ergon energy-model REPORT.json --action NAME [--action NAME...]\n"
	    "                          [--allow-synthetic] [--allow-replayed]\n"
	    "                          [--out FILE [--force]]\n\n"
	    "Verifies the report, then writes energy-model/v1: schema, basis (above_idle),\n"
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
};
