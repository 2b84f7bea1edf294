/* ergon kernels report | run: the kernel measurement method
 * (docs/METHOD.md, "Kernels"). */
#include "cli.h"
#include "cli_args.h"
#include "ergon/fileio.h"
#include "ergon/kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int report(int argc, char **argv)
{
	const char *path = NULL, *out = NULL, *baseline = "ref", *unit = "counts";
	unsigned flags = ERGON_WRITE_MKDIR;
	for (int i = 2; i < argc; i++) {
		const char *v = NULL;
		int r;
		if ((r = cli_opt(argc, argv, &i, "--out", &v)) != 0) {
			if (r < 0)
				return ergon_cli_usage("kernels", "--out needs a folder");
			out = v;
		} else if ((r = cli_opt(argc, argv, &i, "--baseline", &v)) != 0) {
			if (r < 0 || v[0] == '\0')
				return ergon_cli_usage("kernels", "--baseline needs an impl name");
			baseline = v;
		} else if ((r = cli_opt(argc, argv, &i, "--unit", &v)) != 0) {
			if (r < 0 || v[0] == '\0')
				return ergon_cli_usage("kernels",
						       "--unit needs a name (cycles, icount, ns)");
			unit = v;
		} else if (strcmp(argv[i], "--force") == 0) {
			flags |= ERGON_WRITE_FORCE;
		} else if (argv[i][0] == '-' && argv[i][1] != '\0') {
			return ergon_cli_usage("kernels", "unknown option %s for 'kernels report'",
					       argv[i]);
		} else if (path == NULL) {
			path = argv[i];
		} else {
			return ergon_cli_usage("kernels", "one samples file only ('%s' is extra)",
					       argv[i]);
		}
	}
	if (path == NULL)
		return ergon_cli_usage("kernels", "kernels report needs SAMPLES.csv");
	struct ergon_err err = {0};
	json_t *art = NULL;
	char *table = NULL;
	if (ergon_kernels_report(path, baseline, unit, &art, &err) != 0)
		return ergon_cli_fail("kernels", &err);
	int rc;
	if (out != NULL)
		rc = ergon_kernels_write(art, out, flags, &table, &err);
	else
		rc = ergon_kernels_table_render(json_object_get(art, "kernels"), &table, &err);
	json_decref(art);
	if (rc != 0)
		return ergon_cli_fail("kernels", &err);
	fputs(table, stdout);
	if (out != NULL)
		printf("wrote %s/kernels.json and %s/kernels.csv\n", out, out);
	free(table);
	return ERGON_EXIT_OK;
}

static int run(int argc, char **argv)
{
	if (argc < 2)
		return ergon_cli_usage("kernels", "kernels needs a subcommand: report or run");
	if (strcmp(argv[1], "report") == 0)
		return report(argc, argv);
	return ergon_cli_usage("kernels", "unknown subcommand '%s' (report)", argv[1]);
}

const struct ergon_cli_command ergon_cli_cmd_kernels = {
    .name = "kernels",
    .summary = "kernel statistics: correctness first, distributions, speedups",
    .help = "usage: ergon kernels report SAMPLES.csv [--out DIR] [--baseline IMPL]\n"
	    "                              [--unit NAME] [--force]\n"
	    "\n"
	    "report: statistics of samples measured elsewhere (a real board,\n"
	    "another harness). SAMPLES.csv has a header row with the columns\n"
	    "case,impl,correct,count (or start,end[,counter_bits] for raw reads of a\n"
	    "free-running counter; one wrap is handled) and optionally overhead (the\n"
	    "timing-read cost, subtracted). correct (pass|fail) is required on every\n"
	    "row: a case whose output differed from the reference is reported and\n"
	    "never timed. Per case: min/median/mean; speedup = baseline mean /\n"
	    "candidate mean (> 1: faster) with both counts; the geometric mean of the\n"
	    "speedups over the cases, which is not a model latency.\n"
	    "  --out DIR        write DIR/kernels.json (ergon.kernels, digested) and\n"
	    "                   DIR/kernels.csv\n"
	    "  --baseline IMPL  the implementation ratios are taken against (ref)\n"
	    "  --unit NAME      what the counts are (cycles, icount, ns; default counts)\n"
	    "\n"
	    "example: ergon kernels report board_samples.csv --unit cycles --out k/\n",
    .run = run,
};
