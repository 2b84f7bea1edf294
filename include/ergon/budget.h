/* Uncertainty budgets (docs/UNCERTAINTY.md): the GUM's way of saying how
 * far a figure can be from the truth. Every energy, charge, mean power and
 * energy-per-operation figure carries one: named terms, each a standard
 * uncertainty with its bound, its distribution and where the bound comes
 * from (a datasheet table, the data itself, the kernel); combined in
 * quadrature where the terms are independent and linearly where they are
 * correlated (same group), then expanded with the coverage factor k = 2.
 *
 * A term nobody can bound is "unknown", never zero: the budget is then
 * incomplete and states no expanded uncertainty, only the part the known
 * terms make (a lower bound). Engines fill budgets; JSON is made at the
 * artifact edge (pipelines). Pure functions: nothing here opens or prints.
 */
#ifndef ERGON_BUDGET_H
#define ERGON_BUDGET_H

#include "ergon/error.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ERGON_BUDGET_MAX_TERMS 16
/* The coverage factor of every expanded uncertainty ergon states: about
 * 95 % for a normal distribution (GUM 6.2.2, 6.3.3). */
#define ERGON_BUDGET_K 2.0

/* How a term's stated value becomes a standard uncertainty. */
enum ergon_budget_dist {
	/* A bound +-a with every value inside equally likely (a datasheet
	 * maximum, a rounding, a timestamp inside its tick): u = a / sqrt(3)
	 * (GUM 4.3.7). */
	ERGON_DIST_RECT = 1,
	/* A standard uncertainty computed from the data (Type A: a standard
	 * error over windows, inferences or repetitions): u = a. */
	ERGON_DIST_STAT = 2,
	/* A standard uncertainty stated as such (a normal distribution's
	 * sigma): u = a. */
	ERGON_DIST_NORMAL = 3,
};

struct ergon_budget_term {
	char name[48];	  /* "gain", "quantization", "timebase", "spread over windows", ... */
	int known;	  /* 0: nobody can bound it; limit and u are NaN */
	int dist;	  /* enum ergon_budget_dist */
	int group;	  /* 0: independent; > 0: fully correlated with the terms of the
			   * same group (they add linearly before the quadrature) */
	double limit;	  /* the stated bound or standard error, in the figure's unit */
	double divisor;	  /* sqrt(3) for RECT, 1 otherwise */
	double u;	  /* standard uncertainty = limit / divisor, the figure's unit */
	char source[360]; /* where the bound comes from (document and section, or the data) */
};

struct ergon_budget {
	double value; /* the figure the budget is for */
	char unit[8]; /* its unit: "J", "W", "C", "A" */
	size_t n;
	struct ergon_budget_term term[ERGON_BUDGET_MAX_TERMS];
	int overflow; /* more terms were offered than fit: the budget is incomplete */
	/* ergon_budget_close fills these. */
	double u_c;	/* combined standard uncertainty of the known terms */
	double k;	/* coverage factor (ERGON_BUDGET_K) */
	double U;	/* expanded uncertainty k x u_c; NaN when incomplete */
	double U_known; /* k x u_c even when incomplete: a lower bound of U */
	int complete;	/* every term known (and none dropped) */
	int dominant;	/* index of the largest known term, or of the first unknown
			 * term when incomplete; -1 when there are no terms */
};

/* An empty budget for value in unit. */
ERGON_API void ergon_budget_init(struct ergon_budget *b, double value, const char *unit);

/* Add a term: limit in the figure's unit (its sign is dropped), dist an
 * enum ergon_budget_dist, group 0 or a correlation group, source a printf
 * format. A non-finite limit makes the term unknown (say why in source). */
ERGON_API void ergon_budget_add(struct ergon_budget *b, const char *name, double limit, int dist,
				int group, const char *source_fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* Add a term nobody can bound: the budget becomes incomplete. */
ERGON_API void ergon_budget_add_unknown(struct ergon_budget *b, const char *name,
					const char *why_fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Add a term whose standard uncertainty was already worked out (u, with
 * the bound and divisor it came from): for aggregated terms such as
 * timestamps in quadrature over many samples. */
ERGON_API void ergon_budget_add_u(struct ergon_budget *b, const char *name, double limit,
				  double divisor, int dist, int group, const char *source_fmt, ...)
    __attribute__((format(printf, 7, 8)));

/* Combine: the terms of each correlation group add linearly, the groups
 * and the independent terms in quadrature (GUM 5.1.2, 5.2.2 with r = 1);
 * U = k u_c when complete. Call after the last add, and again after a
 * change. */
ERGON_API void ergon_budget_close(struct ergon_budget *b);

/* The same budget for value x factor in unit (energy per inference =
 * energy / count, mean power = energy / span): every limit and u is scaled
 * by |factor|; the result is closed. */
ERGON_API void ergon_budget_scale(struct ergon_budget *b, double factor, const char *unit);

/* Relative expanded uncertainty in percent, |U / value| x 100; NaN when
 * incomplete or the value is 0 or not finite. */
ERGON_API double ergon_budget_rel_pct(const struct ergon_budget *b);

/* The gate (--max-uncertainty-pct P): 0 when the figure meets it, 1 when
 * its relative expanded uncertainty exceeds max_pct, 2 when the budget is
 * incomplete (an unknown term fails the gate), 3 when the value is 0 or not
 * finite (no relative uncertainty). max_pct <= 0 or NaN: no gate, 0. */
ERGON_API int ergon_budget_gate(const struct ergon_budget *b, double max_pct);

/* "rectangular", "statistical", "normal". */
ERGON_API const char *ergon_budget_dist_name(int dist);
/* The enum for a name above; 0 when unknown. */
ERGON_API int ergon_budget_dist_parse(const char *name);

#ifdef __cplusplus
}
#endif
#endif
