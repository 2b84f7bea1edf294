/* ergon kernels report | run: the kernel measurement method
 * (docs/METHOD.md, "Kernels"). */
#include "cli.h"
#include "cli_args.h"
#include "ergon/fileio.h"
#include "ergon/kernels_run.h"
#include "ergon/parse.h"

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
		rc = ergon_kernels_write(art, out, flags, NULL, 0, &table, &err);
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

static int parse_suites(const char *v, int *mask)
{
	*mask = 0;
	const char *p = v;
	while (*p != '\0') {
		const char *e = strchr(p, ',');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		if (l == 4 && memcmp(p, "conv", 4) == 0)
			*mask |= ERGON_KERNELS_CONV;
		else if (l == 6 && memcmp(p, "dwconv", 6) == 0)
			*mask |= ERGON_KERNELS_DWCONV;
		else if (l == 2 && memcmp(p, "fc", 2) == 0)
			*mask |= ERGON_KERNELS_FC;
		else
			return ergon_cli_usage("kernels", "--suite %.*s: conv, dwconv or fc",
					       (int)l, p);
		p += l;
		if (*p == ',')
			p++;
	}
	if (*mask == 0)
		return ergon_cli_usage("kernels", "--suite needs conv, dwconv and/or fc");
	return 0;
}

/* A count option's value: min..1000000. */
static int count_opt(int r, const char *flag, const char *v, long min, long *out)
{
	struct ergon_err err = {0};
	if (r < 0)
		return ergon_cli_usage("kernels", "%s needs a number", flag);
	if (ergon_parse_long(v, flag, min, 1000000, out, &err) != 0)
		return ergon_cli_usage("kernels", "%s", err.msg);
	return 0;
}

static int run_cmd(int argc, char **argv)
{
	struct ergon_kernels_run_options o = {.board = NULL, .iterations = 100, .warmup = 5};
	const char *out = NULL;
	unsigned flags = ERGON_WRITE_MKDIR;
	struct ergon_err err = {0};
	for (int i = 2; i < argc; i++) {
		const char *v = NULL;
		int r;
		if ((r = cli_opt(argc, argv, &i, "--out", &v)) != 0) {
			if (r < 0)
				return ergon_cli_usage("kernels", "--out needs a folder");
			out = v;
		} else if ((r = cli_opt(argc, argv, &i, "--board", &v)) != 0) {
			if (r < 0)
				return ergon_cli_usage("kernels", "--board needs host");
			o.board = v;
		} else if ((r = cli_opt(argc, argv, &i, "--suite", &v)) != 0) {
			if (r < 0)
				return ergon_cli_usage("kernels", "--suite needs conv,dwconv,fc");
			if (parse_suites(v, &o.suites) != 0)
				return ERGON_EXIT_USAGE;
		} else if ((r = cli_opt(argc, argv, &i, "--shapes", &v)) != 0) {
			if (r < 0)
				return ergon_cli_usage("kernels", "--shapes needs a file");
			o.shapes_path = v;
		} else if ((r = cli_opt(argc, argv, &i, "--from-model", &v)) != 0) {
			if (r < 0)
				return ergon_cli_usage("kernels",
						       "--from-model needs MODEL.tflite");
			o.model_path = v;
		} else if ((r = cli_opt(argc, argv, &i, "--impl", &v)) != 0) {
			if (r < 0)
				return ergon_cli_usage("kernels", "--impl needs ref");
			o.impls = v;
		} else if ((r = cli_opt(argc, argv, &i, "--iterations", &v)) != 0) {
			if (count_opt(r, "--iterations", v, 1, &o.iterations) != 0)
				return ERGON_EXIT_USAGE;
		} else if ((r = cli_opt(argc, argv, &i, "--warmup", &v)) != 0) {
			if (count_opt(r, "--warmup", v, 0, &o.warmup) != 0)
				return ERGON_EXIT_USAGE;
		} else if (strcmp(argv[i], "--force") == 0) {
			flags |= ERGON_WRITE_FORCE;
		} else {
			return ergon_cli_usage("kernels", "unknown option %s for 'kernels run'",
					       argv[i]);
		}
	}
	if (o.board == NULL)
		return ergon_cli_usage("kernels", "kernels run needs --board host");
	if (out == NULL)
		return ergon_cli_usage("kernels", "kernels run needs --out DIR");
	if ((o.shapes_path == NULL) == (o.model_path == NULL))
		return ergon_cli_usage("kernels",
				       "kernels run needs one of --shapes FILE or --from-model "
				       "MODEL.tflite");
	/* Refuse an unwritable or existing output before measuring anything. */
	char path[4096];
	snprintf(path, sizeof path, "%s/kernels.json", out);
	if (ergon_mkdir_p(out, &err) != 0 || ergon_file_check_writable(path, flags, &err) != 0)
		return ergon_cli_fail("kernels", &err);
	json_t *art = NULL;
	char *samples = NULL, *table = NULL;
	size_t slen = 0;
	if (ergon_kernels_run(&o, &art, &samples, &slen, &err) != 0)
		return ergon_cli_fail("kernels", &err);
	int rc = ergon_kernels_write(art, out, flags, samples, slen, &table, &err);
	const json_t *refused = json_object_get(art, "refused");
	for (size_t k = 0; k < json_array_size(refused); k++) {
		const json_t *x = json_array_get(refused, k);
		const json_t *line = json_object_get(x, "line");
		if (line != NULL)
			fprintf(stderr, "ergon kernels: %s:%lld: %s refused: %s\n",
				o.shapes_path ? o.shapes_path : o.model_path,
				(long long)json_integer_value(line),
				json_string_value(json_object_get(x, "case")),
				json_string_value(json_object_get(x, "why")));
		else
			fprintf(stderr, "ergon kernels: %s refused: %s\n",
				json_string_value(json_object_get(x, "case")),
				json_string_value(json_object_get(x, "why")));
	}
	json_decref(art);
	free(samples);
	if (rc != 0)
		return ergon_cli_fail("kernels", &err);
	fputs(table, stdout);
	printf("wrote %s/kernels.json, %s/kernels.csv and %s/samples.csv\n", out, out, out);
	free(table);
	return ERGON_EXIT_OK;
}

static int run(int argc, char **argv)
{
	if (argc < 2)
		return ergon_cli_usage("kernels", "kernels needs a subcommand: report or run");
	if (strcmp(argv[1], "report") == 0)
		return report(argc, argv);
	if (strcmp(argv[1], "run") == 0)
		return run_cmd(argc, argv);
	return ergon_cli_usage("kernels", "unknown subcommand '%s' (report or run)", argv[1]);
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
