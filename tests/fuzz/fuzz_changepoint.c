/* Fuzz the change-point engine (ergon_changepoints, src/engines/
 * changepoint.c), which `ergon db changes` feeds with a database's values
 * and uncertainties (any number an artifact held). Input: one flag byte,
 * then the points. Flag bit 0: each point also states an uncertainty;
 * bit 1: the points are small steps (each byte / 16, many ties and level
 * shifts) rather than raw 8-byte doubles (NaN, infinities, huge values).
 * Properties, checked independently of the engine's own arithmetic:
 *  - a refusal only for a non-finite or too large value or uncertainty, or
 *    a value other than 0 below 1e-150 in magnitude;
 *  - otherwise the segments are contiguous, cover every point in order,
 *    each of at least 2 points when there is more than one;
 *  - each segment's mean is finite and between its points' least and
 *    greatest value (it is a weighted mean); its se finite and positive,
 *    or NaN only for a history with no scale (one segment);
 *  - the penalty is finite and positive. */
#include "ergon/changepoint.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_POINTS 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	int stated = data[0] & 1, steps = data[0] & 2;
	data++;
	size--;
	size_t per = steps ? (stated ? 2 : 1) : (stated ? 16 : 8);
	size_t n = size / per;
	if (n == 0 || n > MAX_POINTS)
		return 0;
	double *x = malloc(n * sizeof *x), *s = malloc(n * sizeof *s);
	if (!x || !s)
		abort();
	int refusable = 0;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *p = data + i * per;
		if (steps) {
			x[i] = (double)(int8_t)p[0] / 16.0;
			s[i] = stated ? (double)p[1] / 64.0 : NAN;
		} else {
			memcpy(&x[i], p, 8);
			if (stated)
				memcpy(&s[i], p + 8, 8);
			else
				s[i] = NAN;
		}
		refusable |= !isfinite(x[i]) || fabs(x[i]) > 1e150 ||
			     (x[i] != 0 && fabs(x[i]) < 1e-150) ||
			     (stated && isfinite(s[i]) && s[i] > 1e150);
	}
	struct ergon_cp_result r;
	struct ergon_err err = {0};
	int rc = ergon_changepoints(x, stated ? s : NULL, n, 0, &r, &err);
	if (rc != 0) {
		if (!refusable || rc != ERGON_EUSAGE || err.msg[0] == '\0')
			abort();
	} else {
		if (refusable || r.n_seg < 1 || r.seg == NULL || !(r.penalty > 0) ||
		    !isfinite(r.penalty))
			abort();
		size_t at = 0;
		for (size_t k = 0; k < r.n_seg; k++) {
			const struct ergon_cp_segment *g = &r.seg[k];
			if (g->start != at || g->end <= g->start || g->end > n)
				abort();
			if (r.n_seg > 1 && g->end - g->start < ERGON_CP_MIN_SEGMENT)
				abort();
			double lo = INFINITY, hi = -INFINITY;
			for (size_t i = g->start; i < g->end; i++) {
				lo = fmin(lo, x[i]);
				hi = fmax(hi, x[i]);
			}
			/* A weighted mean lies within its points, up to rounding. */
			double tol = 1e-9 * fmax(fabs(lo), fabs(hi)) + 1e-300;
			if (!isfinite(g->mean) || g->mean < lo - tol || g->mean > hi + tol)
				abort();
			/* No scale at all (no scatter, nothing stated): one
			 * segment and no se; otherwise a finite positive se. */
			if (isnan(g->se) ? r.n_seg != 1 || r.sigma_data > 0
					 : !isfinite(g->se) || !(g->se > 0))
				abort();
			at = g->end;
		}
		if (at != n)
			abort();
		free(r.seg);
	}
	free(x);
	free(s);
	return 0;
}
