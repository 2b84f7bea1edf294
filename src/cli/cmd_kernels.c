/* ergon kernels report | run: the kernel measurement method
 * (docs/METHOD.md, "Kernels"). */
#include "cli.h"
#include "cli_opts.h"
#include "cli_reliab.h"
#include "cli_sign.h"
#include "ergon/fileio.h"
#include "ergon/kernels_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The terminal table, from the typed statistics of the artifact's
 * "kernels" section as written. Caller frees *table. */
static int typed_table(const json_t *art, char **table, struct ergon_err *err)
{
	struct ergon_kernels_summary ks;
	int rc = ergon_kernels_summary_read(json_object_get(art, "kernels"), &ks, err);
	if (rc == 0)
		rc = ergon_kernels_summary_table(&ks, table, err);
	ergon_kernels_summary_cleanup(&ks);
	return rc;
}

/* Sign DIR/kernels.json once written (--sign KEY); wipes the key. */
static int sign_written(const char *sign_key, const char *out, struct ergon_secret_key *skey)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/kernels.json", out);
	return ergon_cli_sign_written("kernels", sign_key, path, skey);
}

static int report(struct cli_parser *p)
{
	const char *path = NULL, *out = NULL, *baseline = "ref", *unit = "counts";
	const char *sign_key = NULL;
	unsigned flags = ERGON_WRITE_MKDIR;
	int force = 0, clean = 0, json = 0;
	while (cli_next(p)) {
		if (cli_outdir(p, "--out", &out)) {
		} else if (cli_str(p, "--sign", &sign_key)) {
		} else if (cli_flag(p, "--json", &json)) {
		} else if (cli_str(p, "--baseline", &baseline)) {
		} else if (cli_str(p, "--unit", &unit)) {
		} else if (cli_flag(p, "--clean", &clean)) {
		} else if (cli_flag(p, "--force", &force)) {
		} else if (cli_positional(p, &path)) {
		} else {
			cli_unknown(p);
		}
	}
	if (p->rc || cli_require(p, "SAMPLES.csv", path))
		return p->rc;
	if (baseline[0] == '\0')
		return cli_error(p, "option '--baseline' needs an impl name");
	if (unit[0] == '\0')
		return cli_error(p, "option '--unit' needs a name (cycles, icount, ns)");
	if (sign_key != NULL && out == NULL)
		return cli_error(p,
				 "--sign needs --out DIR: only a written kernels.json is signed");
	if (force)
		flags |= ERGON_WRITE_FORCE;
	ergon_cli_stale_report_dir("kernels", out, clean);
	struct ergon_err err = {0};
	json_t *art = NULL;
	char *table = NULL;
	/* The key first: a bad key fails before anything is read or written. */
	struct ergon_secret_key skey = {0};
	int code = ergon_cli_sign_load("kernels", sign_key, &skey);
	if (code != 0)
		return code;
	if (ergon_kernels_report(path, baseline, unit, &art, &err) != 0) {
		ergon_secret_key_wipe(&skey);
		return ergon_cli_fail("kernels", &err);
	}
	int rc = 0;
	if (out != NULL)
		rc = ergon_kernels_write(art, out, flags, NULL, 0, NULL, &err);
	if (rc == 0 && !json)
		rc = typed_table(art, &table, &err);
	if (rc != 0) {
		json_decref(art);
		ergon_secret_key_wipe(&skey);
		return ergon_cli_fail("kernels", &err);
	}
	if (json)
		/* The document is the artifact (before a --sign signs the file). */
		rc = cli_print_json(art);
	else
		fputs(table, stdout);
	free(table);
	json_decref(art);
	if (out == NULL)
		return rc;
	if (!json)
		printf("wrote %s/kernels.json, %s/kernels.csv and %s/case_summary.csv\n", out,
		       out, out);
	int src = sign_written(sign_key, out, &skey);
	return src ? src : rc;
}

static int parse_suites(struct cli_parser *p, const char *v, int *mask)
{
	*mask = 0;
	const char *s = v;
	while (*s != '\0') {
		const char *e = strchr(s, ',');
		size_t l = e ? (size_t)(e - s) : strlen(s);
		if (l == 4 && memcmp(s, "conv", 4) == 0)
			*mask |= ERGON_KERNELS_CONV;
		else if (l == 6 && memcmp(s, "dwconv", 6) == 0)
			*mask |= ERGON_KERNELS_DWCONV;
		else if (l == 2 && memcmp(s, "fc", 2) == 0)
			*mask |= ERGON_KERNELS_FC;
		else
			return cli_error(p, "--suite '%.*s': must be conv, dwconv or fc", (int)l,
					 s);
		s += l;
		if (*s == ',')
			s++;
	}
	if (*mask == 0)
		return cli_error(p, "--suite '%s': must be conv, dwconv and/or fc", v);
	return 0;
}

/* On a terminal: which case runs (its correctness check, then timing),
 * and from the second case on the time left at the mean pace so far. The
 * first call ends the firmware build's ticker. */
static void case_progress(void *ctx, size_t i, size_t n, const char *case_name)
{
	struct timespec *t0 = ctx;
	char left[24];
	cli_ticker_stop();
	if (i == 0)
		clock_gettime(CLOCK_MONOTONIC, t0);
	int eta = cli_time_left(left, sizeof left, t0, i, n);
	cli_progress_line("ergon kernels: case %zu/%zu %s%s%s", i + 1, n, case_name,
			  eta ? ", ETA " : "", left);
}

static int run_cmd(struct cli_parser *p)
{
	struct ergon_kernels_run_options o = {.board = NULL, .iterations = ERGON_KERNELS_ITERATIONS_DEFAULT,
					     .warmup = ERGON_KERNELS_WARMUP_DEFAULT};
	const char *out = NULL, *suite = NULL, *sign_key = NULL;
	unsigned flags = ERGON_WRITE_MKDIR;
	int force = 0, clean = 0, json = 0;
	struct ergon_err err = {0};
	while (cli_next(p)) {
		if (cli_outdir(p, "--out", &out)) {
		} else if (cli_flag(p, "--json", &json)) {
		} else if (cli_str(p, "--sign", &sign_key)) {
		} else if (cli_str(p, "--board", &o.board)) {
		} else if (cli_str(p, "--suite", &suite)) {
		} else if (cli_str(p, "--shapes", &o.shapes_path)) {
		} else if (cli_str(p, "--from-model", &o.model_path)) {
		} else if (cli_str(p, "--impl", &o.impls)) {
		} else if (cli_str(p, "--pmu-counters", &o.pmu_counters)) {
		} else if (cli_long(p, "--iterations", 1, 1000000, &o.iterations)) {
		} else if (cli_long(p, "--warmup", 0, 1000000, &o.warmup)) {
		} else if (cli_long(p, "--repeat", 1, ERGON_KERNELS_MAX_REPEAT, &o.repeat)) {
		} else if (cli_flag(p, "--clean", &clean)) {
		} else if (cli_flag(p, "--force", &force)) {
		} else if (cli_flag(p, "--no-cache", &o.no_cache)) {
		} else if (cli_quiet(p)) {
		} else {
			cli_unknown(p);
		}
	}
	if (p->rc || cli_require(p, "--board", o.board) || cli_require(p, "--out", out))
		return p->rc;
	if (suite != NULL && parse_suites(p, suite, &o.suites) != 0)
		return p->rc;
	if (force)
		flags |= ERGON_WRITE_FORCE;
	ergon_cli_stale_report_dir("kernels", out, clean);
	if ((o.shapes_path == NULL) == (o.model_path == NULL))
		return cli_error(p, "run needs exactly one of --shapes FILE or --from-model "
				    "MODEL.tflite");
	/* The key before measuring, like run/profile/analyze. */
	struct ergon_secret_key skey = {0};
	int code = ergon_cli_sign_load("kernels", sign_key, &skey);
	if (code != 0)
		return code;
	/* Refuse an unwritable or existing output before measuring anything. */
	char path[4096];
	snprintf(path, sizeof path, "%s/kernels.json", out);
	struct stat ost;
	int out_was_there = stat(out, &ost) == 0;
	if (ergon_mkdir_p(out, &err) != 0 || ergon_file_check_writable(path, flags, &err) != 0) {
		ergon_secret_key_wipe(&skey);
		return ergon_cli_fail("kernels", &err);
	}
	char fw_dir[4096];
	snprintf(fw_dir, sizeof fw_dir, "%s/firmware", out);
	o.work_dir = fw_dir; /* qemu-an547: the case blob, the ELF, the logs */
	json_t *art = NULL;
	char *samples = NULL, *table = NULL;
	size_t slen = 0;
	struct timespec cases_t0 = {0};
	if (cli_progress_ok()) {
		o.progress = case_progress;
		o.progress_ctx = &cases_t0;
		if (strcmp(o.board, "qemu-an547") == 0)
			/* One firmware build and one QEMU run for every case. */
			cli_ticker_start("ergon kernels: qemu-an547: building the firmware and "
					 "running every case");
	}
	int krc = ergon_kernels_run(&o, &art, &samples, &slen, &err);
	cli_ticker_stop();
	if (o.progress != NULL)
		cli_progress_clear();
	if (krc != 0) {
		/* A refusal (a board without kernel firmware, too many PMU
		 * passes) leaves no empty folder behind; what a failed build
		 * or run wrote there (its logs) keeps it, as rmdir leaves a
		 * folder that is not empty. */
		if (!out_was_there) {
			(void)rmdir(fw_dir);
			(void)rmdir(out);
		}
		ergon_secret_key_wipe(&skey);
		return ergon_cli_fail("kernels", &err);
	}
	int rc = ergon_kernels_write(art, out, flags, samples, slen, NULL, &err);
	if (rc == 0 && !json)
		rc = typed_table(art, &table, &err);
	const json_t *refused = json_object_get(art, "refused");
	for (size_t k = 0; !json && k < json_array_size(refused); k++) {
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
	free(samples);
	if (rc != 0) {
		json_decref(art);
		ergon_secret_key_wipe(&skey);
		return ergon_cli_fail("kernels", &err);
	}
	int jrc = 0;
	if (json) {
		/* The document is the artifact (before a --sign signs the file). */
		jrc = cli_print_json(art);
	} else {
		fputs(table, stdout);
		printf("wrote %s/kernels.json, %s/kernels.csv, %s/case_summary.csv and "
		       "%s/samples.csv\n",
		       out, out, out, out);
	}
	json_decref(art);
	free(table);
	int src = sign_written(sign_key, out, &skey);
	return src ? src : jrc;
}

/* The actions, also completed by `ergon __complete actions kernels`. */
static const char *const actions[] = {"report", "run", NULL};

static int run(int argc, char **argv)
{
	struct cli_parser p;
	cli_init_from(&p, "kernels", argc, argv, 2);
	int a = cli_action(&p, actions);
	if (a < 0)
		return p.rc;
	return a == 0 ? report(&p) : run_cmd(&p);
}

const struct ergon_cli_command ergon_cli_cmd_kernels = {
    .actions = actions,
    .name = "kernels",
    .summary = "kernel statistics: correctness first, distributions, speedups",
    .help = "Usage: ergon kernels run --board host|qemu-an547 --out DIR\n"
	    "                         (--shapes FILE | --from-model MODEL.tflite)\n"
	    "                         [--suite conv,dwconv,fc] [--impl ref,mve]\n"
	    "                         [--pmu-counters EV[,EV...]|none]\n"
	    "                         [--iterations N] [--warmup N] [--repeat N] [--force]\n"
	    "                         [--clean] [--sign KEY] [--no-cache] [--quiet] [--json]\n"
	    "       ergon kernels report SAMPLES.csv [--out DIR] [--baseline IMPL]\n"
	    "                            [--unit NAME] [--force] [--clean] [--sign KEY] [--json]\n"
	    "\n"
	    "run: measure the kernels here (docs/METHOD.md, \"Kernels\"): each case is\n"
	    "checked against the reference first (a case whose output differs is\n"
	    "reported and never timed), then timed; per case min/median/mean and the\n"
	    "speedup of each implementation over ref.\n"
	    "\n"
	    "report: statistics of samples measured elsewhere (a real board,\n"
	    "another harness). SAMPLES.csv has a header row with the columns\n"
	    "case,impl,correct,count (or start,end[,counter_bits] for raw reads of a\n"
	    "free-running counter; one wrap is handled) and optionally overhead (the\n"
	    "timing-read cost, subtracted). correct (pass|fail) is required on every\n"
	    "row. Per case: min/median/mean; speedup = baseline mean / candidate mean\n"
	    "(> 1: faster) with both counts; the geometric mean of the speedups over\n"
	    "the cases, which is not a model latency.\n"
	    "\n"
	    "Each case and implementation states valid_for_regression: correct, timed\n"
	    "with n >= 6 and the wider side of the median's interval at most 5 % of\n"
	    "the median (the table's regr column, case_summary.csv); ergon compare\n"
	    "calls a regression only where both sides are valid.\n"
	    "\n"
	    "Options:\n"
	    "  --board NAME       run: where to run: host (wall-clock ns) or qemu-an547\n"
	    "                     (the emulated Cortex-M55 under -icount: checks on the\n"
	    "                     target, counts are emulated instructions, not cycles;\n"
	    "                     firmware, link map and logs in DIR/firmware; the build\n"
	    "                     record has the ELF's and map's SHA-256 and where code,\n"
	    "                     data and scratch were placed)\n"
	    "  --out DIR          run: write kernels.json, kernels.csv, case_summary.csv\n"
	    "                     and samples.csv; report: kernels.json (ergon.kernels,\n"
	    "                     digested), kernels.csv and case_summary.csv\n"
	    "  --shapes FILE      run: the cases, one per line\n"
	    "  --from-model FILE  run: the cases of an int8 TFLite model's layers\n"
	    "  --suite LIST       run: conv, dwconv and/or fc (default: all three)\n"
	    "  --impl LIST        run: implementations to time: ref, mve (Helium;\n"
	    "                     qemu-an547 only) (default ref)\n"
	    "  --pmu-counters LIST  run: PMU events per case and implementation (names or\n"
	    "                     sets of `ergon counters list`, comma-separated; none:\n"
	    "                     no events), planned into passes of 4 counters, one\n"
	    "                     extra run of each case per pass where a PMU counts;\n"
	    "                     where none does (qemu-an547, host) each event is\n"
	    "                     reported unsupported with the reason, never 0\n"
	    "                     (default: the method's five MVE/instruction events on\n"
	    "                     qemu-an547, none on host)\n"
	    "  --iterations N     run: timed iterations per case, 1..1000000 (100)\n"
	    "  --warmup N         run: untimed iterations, 0..1000000 (5)\n"
	    "  --repeat N         run: repeat the whole measurement of every case N times\n"
	    "                     (1..100): each implementation states every repetition's\n"
	    "                     median and their statistics; ergon compare needs 3 or\n"
	    "                     more to judge a difference (samples.csv gains a\n"
	    "                     repetition column)\n"
	    "  --baseline IMPL    report: the implementation ratios are taken against (ref)\n"
	    "  --unit NAME        report: what the counts are (cycles, icount, ns;\n"
	    "                     default counts)\n"
	    "  --sign KEY         sign DIR/kernels.json once written (ergon keygen; check\n"
	    "                     it with ergon verify --pubkey PUB); the key is loaded\n"
	    "                     before anything is measured; needs --out\n"
	    "  --force            replace an existing DIR/kernels.json\n"
	    "  --clean            remove stale .ergon-tmp-* files of killed writes in DIR\n"
	    "  --no-cache         run, qemu-an547: compile every object of the kernel\n"
	    "                     firmware, neither reading nor writing the firmware\n"
	    "                     object cache ($XDG_CACHE_HOME/ergon, else ~/.cache/ergon)\n"
	    "  --quiet            run: no progress line (drawn only when stderr is a\n"
	    "                     terminal: case i/N and its name)\n"
	    "  --json             the ergon.kernels artifact on stdout instead of the table\n"
	    "\n"
	    "Examples:\n"
	    "  ergon kernels run --board host --from-model kws_ref_model.tflite --out k/\n"
	    "  ergon kernels report board_samples.csv --unit cycles --out k/\n",
    .run = run,
    .exits = {[0] = "every case was measured (or reported) and the outputs written",
	      [1] = "refused: a case that failed its correctness check is never timed",
	      [3] = "the board, the build, the samples file or the outputs",
	      [4] = CLI_EXIT_NONE},
};
