/* Terminal output for HPX profiles (figures come from the library). */
#include "hpx_cli.h"

#include "ergon/issues.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

const char *const ergon_cli_hpx_aggregations[] = {"median", "mean", "trimmed", NULL};
const char *const ergon_cli_hpx_recordings[] = {"measured", "synthetic", "unknown", NULL};

void ergon_cli_hpx_print_top(FILE *f, const struct ergon_hpx_run_result *r)
{
	fprintf(f, "%zu layers, aggregation %s, validity %s\n", r->layers.n,
		/* The --aggregation choices are the enum's members in order. */
		r->aggregation >= ERGON_HPX_AGG_MEDIAN && r->aggregation <= ERGON_HPX_AGG_TRIMMED
		    ? ergon_cli_hpx_aggregations[r->aggregation - ERGON_HPX_AGG_MEDIAN]
		    : "(null)",
		ergon_integrity_name(r->validity));
	if (isnan(r->total_cycles) || r->n_top == 0) {
		fprintf(f, "no cycle counts in this profile\n");
	} else {
		fprintf(f, "Top layers by cycles (total cycles %.0f):\n", r->total_cycles);
		fprintf(f, "  %-6s %-28s %14s %7s\n", "layer", "op", "cycles", "%");
		for (size_t i = 0; i < r->n_top; i++) {
			const struct ergon_hpx_top_layer *L = &r->top[i];
			char id[32];
			if (L->id.kind == ERGON_PMU_INT)
				snprintf(id, sizeof(id), "%" PRId64, L->id.i);
			else
				snprintf(id, sizeof(id), "%.31s",
					 L->id.kind == ERGON_PMU_TEXT ? L->id.text : "?");
			char opb[32];
			if (L->op.kind == ERGON_PMU_TEXT)
				snprintf(opb, sizeof(opb), "%.28s", L->op.text);
			else
				snprintf(opb, sizeof(opb), "%" PRId64,
					 L->op.kind == ERGON_PMU_INT ? L->op.i : (int64_t)0);
			fprintf(f, "  %-6s %-28s %14.0f %6.1f%%\n", id, opb, L->cycles, L->pct);
		}
	}
	for (size_t i = 0; i < r->issues.n; i++) {
		const struct ergon_issue_entry *is = &r->issues.items[i];
		fprintf(f, "%s: %s: %s\n", ergon_severity_name(is->severity), is->code,
			is->message);
	}
}
