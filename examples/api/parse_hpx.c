/* Parse an HPX log with libergon (docs/API.md, example 1).
 *
 *   parse_hpx LOG [median|mean|trimmed [OUTDIR]]
 *
 * Feeds the log to the incremental HPX parser in 64 KiB chunks (any split
 * works: the parser keeps a partial line), asks for the PMU result with
 * the chosen per-layer aggregation and prints it, typed: one line per
 * layer of the merged profile with its cycles, then the stream's own
 * account (complete or cut, issues). No JSON anywhere.
 *
 * With OUTDIR it does what `ergon parse` does instead: ergon_hpx_parse_run
 * writes OUTDIR/summary.json and the CSVs, and the same lines are printed
 * from the typed struct ergon_hpx_run_result read back from what was
 * written, with its verdict. */
#include <ergon/ergon.h>
#include <stdio.h>
#include <string.h>

static void print_value(const struct ergon_pmu_value *v)
{
	if (v->kind == ERGON_PMU_INT)
		printf("%lld", (long long)v->i);
	else if (v->kind == ERGON_PMU_TEXT)
		printf("%s", v->text);
	else
		printf("-");
}

static void print_layers(const struct ergon_pmu_table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct ergon_pmu_layer *l = &t->layers[i];
		printf("layer ");
		print_value(&l->id);
		printf(" ");
		print_value(&l->op);
		if (l->has_cycles)
			printf(" cycles=%.17g", l->cycles);
		printf(" counters=%zu%s\n", l->ncounters, l->overflow ? " overflow" : "");
	}
}

static void print_issues(const struct ergon_issue_list *l)
{
	printf("issues %zu\n", l->n);
	for (size_t i = 0; i < l->n; i++)
		printf("  %s: %s\n", l->items[i].code, l->items[i].message);
}

/* The whole `ergon parse`: summary.json and the CSVs in out_dir. */
static int parse_to(const char *log, int agg, const char *out_dir)
{
	struct ergon_err err = {0};
	struct ergon_hpx_report_opts o = {
	    .out_dir = out_dir, .log_path = log, .aggregation = agg, .write_flags = ERGON_WRITE_FORCE};
	struct ergon_hpx_run_result r;
	if (ergon_hpx_parse_run(log, &o, &r, NULL, &err) != 0) {
		fprintf(stderr, "parse_hpx: %s: %s\n", log, err.msg);
		ergon_hpx_run_result_cleanup(&r);
		return 1;
	}
	printf("aggregation %s\n", ergon_hpx_aggregation_name(r.aggregation));
	print_layers(&r.layers);
	printf("complete %s\n", r.complete ? "yes" : "no");
	print_issues(&r.issues);
	printf("wrote %s (%s), verdict %s\n", r.summary_path, r.report_id,
	       r.verdict.kind == ERGON_VERDICT_VALID ? "valid" : r.verdict.why);
	ergon_hpx_run_result_cleanup(&r);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: parse_hpx LOG [median|mean|trimmed [OUTDIR]]\n");
		return 2;
	}
	int agg = ergon_hpx_aggregation_parse(argc == 3 ? argv[2] : "median");
	if (agg == 0) {
		fprintf(stderr, "parse_hpx: unknown aggregation %s\n", argv[2]);
		return 2;
	}
	if (argc == 4)
		return parse_to(argv[1], agg, argv[3]);
	FILE *f = fopen(argv[1], "rb");
	if (f == NULL) {
		perror(argv[1]);
		return 3;
	}
	struct ergon_err err = {0};
	struct ergon_hpx_parser *p = NULL;
	struct ergon_pmu_result *res = NULL;
	int rc = ergon_hpx_parser_new(NULL, &p, &err);
	static char buf[65536];
	size_t n;
	while (rc >= 0 && (n = fread(buf, 1, sizeof buf, f)) > 0)
		rc = ergon_hpx_parser_feed(p, buf, n, &err);
	fclose(f);
	if (rc >= 0)
		rc = ergon_hpx_parser_finish(p, &err);
	if (rc >= 0)
		rc = ergon_hpx_parser_result(p, agg, 0, &res, &err);
	if (rc < 0) {
		fprintf(stderr, "parse_hpx: %s: %s\n", argv[1], err.msg);
		ergon_hpx_parser_free(p);
		return 1;
	}
	printf("aggregation %s\n", ergon_hpx_aggregation_name(res->aggregation));
	printf("presets %zu\n", res->npresets);
	print_layers(&res->layers);
	printf("complete %s\n", res->complete ? "yes" : "no");
	print_issues(&res->issues);
	ergon_pmu_result_free(res);
	ergon_hpx_parser_free(p);
	return 0;
}
