/* Private to ergon compare (compare_figures.c: one figure against the
 * baseline; compare.c: the kinds with figures at fixed
 * paths; compare_kernels.c: kernels artifacts, whose figures are matched
 * by case and implementation name). */
#ifndef ERGON_COMPARE_INTERNAL_H
#define ERGON_COMPARE_INTERNAL_H

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

/* versus[] of one figure: for artifacts 1..n-1 against artifact 0 the
 * difference, ratio, percentage, combined ± (u[0] + u[i], where both
 * state one) and the verdict; v/u with hv/hu saying which are present.
 * better: -1 lower is better, +1 higher, 0 none; a headline figure worse
 * by more than threshold_pct (and distinguishable) is appended to
 * regressed as {figure: name, artifact, pct}. New reference. */
json_t *cmp_versus(const char *name, int better, int headline, const double *v, const double *u,
		   const int *hv, const int *hu, size_t n, double threshold_pct, json_t *regressed);

/* Kernels artifacts (ergon.kernels). */
int cmp_is_kernels(const json_t *a);
extern const struct ident_field cmp_kernels_ident[];
#define CMP_KERNELS_IDENT_N 22
/* The figure rows (one per case and implementation timed in the baseline
 * and in another artifact: the median with the half-width of its interval
 * as ±), and result.only_in (what is missing from some artifact). */
json_t *cmp_kernels_rows(const json_t *const *a, const char *const *labels, size_t n,
			 double threshold_pct, json_t *regressed, json_t *result);

#endif
