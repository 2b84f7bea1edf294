/* Private to ergon compare (compare_figures.c: one figure against the
 * baseline; compare.c: the kinds with figures at fixed
 * paths; compare_kernels.c: kernels artifacts, whose figures are matched
 * by case and implementation name). */
#ifndef ERGON_COMPARE_INTERNAL_H
#define ERGON_COMPARE_INTERNAL_H

#include "ergon/stats.h"

#include <jansson.h>
#include <stddef.h>

/* How a difference in an identity field counts. */
enum field_class {
	F_BREAKS = 1,  /* the artifacts are not comparable */
	F_SUBJECT = 2, /* what is being compared (expected to differ): listed */
	F_NOTE = 3,    /* listed, does not matter for the figures */
};

struct ident_field {
	const char *path;
	int cls;
	double tol; /* numbers within tol count as equal (0: exact to 1e-9 relative) */
};

/* One artifact's figure: its value, or its values over repetitions, and
 * the instrument's ± (NaN: none stated). */
struct cmp_sample {
	int have;		 /* a value exists */
	size_t n;		 /* values: repetitions holding it (1 for a single run) */
	double mean;		 /* the value, or the mean of the values */
	double u;		 /* the instrument's ± of mean (the mean of the values' ±) */
	struct ergon_summary st; /* of the values, when have */
};

/* The sample of m values v with their ± u (u may be NULL: none stated);
 * non-finite values are left out (withheld in that repetition). */
void cmp_sample_of(const double *v, const double *u, size_t m, struct cmp_sample *out);

/* versus[] of one figure: for artifacts 1..n-1 against artifact 0 the
 * difference of the means, ratio, percentage, the instruments' combined
 * ± (u[0] + u[i]), Welch's test over the repetitions and the verdict
 * (docs/COMPARE.md). better: -1 lower is better, +1 higher, 0 none; a
 * headline figure worse by more than threshold_pct (and distinguishable)
 * is appended to regressed as {figure: name, artifact, pct}. Every
 * comparison whose spread is unknown (fewer than ERGON_STATS_MIN_REPEATS
 * values on a side) adds 1 to *spread_unknown. New reference. */
json_t *cmp_versus(const char *name, int better, int headline, const struct cmp_sample *s, size_t n,
		   double threshold_pct, json_t *regressed, size_t *spread_unknown);

/* values[i] of a figure row: {value, u, n[, sd, ci_lo, ci_hi]}. */
json_t *cmp_value_json(const struct cmp_sample *s);

/* Kernels artifacts (ergon.kernels). */
int cmp_is_kernels(const json_t *a);
extern const struct ident_field cmp_kernels_ident[];
#define CMP_KERNELS_IDENT_N 22
/* The figure rows (one per case and implementation timed in the baseline
 * and in another artifact: the median with the half-width of its interval
 * as ±), and result.only_in (what is missing from some artifact). */
json_t *cmp_kernels_rows(const json_t *const *a, const char *const *labels, size_t n,
			 double threshold_pct, json_t *regressed, json_t *result,
			 size_t *spread_unknown);

#endif
