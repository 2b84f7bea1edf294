/* The median of a counter over many iterations (aggregate.c selects it
 * through a band drawn from a sample once there are 384 values or more,
 * and in place otherwise). The expected medians are computed here, by
 * sorting the values the stream was written from (qsort) and taking the
 * middle one or the mean of the two middle ones, for counts on both sides
 * of the threshold, odd and even, and for value sets that stress the band:
 * many ties, two far clusters (the band holds few values), a sorted run
 * (the sample is then far from random), values around zero (0 and -0
 * compare equal: a band holding zero gives way to the in-place selection),
 * negatives and fractions (exact binary fractions, so that the text the
 * parser reads is the double written). Each stream goes through the parser
 * without early aggregation, with it inline, and in the worker. */
#include "ergon/hpx.h"
#include "test_support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NCOUNTERS 6

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median_of(const double *v, size_t n)
{
	double *s = malloc(n * sizeof(double));
	assert_non_null(s);
	memcpy(s, v, n * sizeof(double));
	qsort(s, n, sizeof(double), cmp_double);
	double m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2.0;
	free(s);
	return m;
}

/* Counter c of iteration it (n iterations), from a fixed LCG. */
static double value(int c, size_t it, size_t n, unsigned *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	unsigned r = (*seed >> 8) & 0xffff;
	switch (c) {
	case 0: /* noise around a mean: never zero, so no row is frozen */
		return 100000.0 + (double)(r % 2000);
	case 1: /* few distinct values: long runs of ties */
		return 500.0 + (double)(r % 3);
	case 2: /* two far clusters */
		return r % 2 ? 1.0e9 + (double)(r % 100) : 7.0 + (double)(r % 50);
	case 3: /* sorted */
		return (double)it * 3.0;
	case 4: /* around zero, and exact negative halves and quarters */
		return ((double)(int)(r % 41) - 20.0) / 4.0;
	default: /* mostly zero: the band holds zero */
		return r % 5 == 0 ? (double)(r % 7) : 0.0;
	}
	(void)n;
}

static char *stream(size_t n, double (*vals)[NCOUNTERS], size_t *len)
{
	size_t cap = 256 + n * 256, off = 0;
	char *s = malloc(cap);
	assert_non_null(s);
	off += (size_t)snprintf(s + off, cap - off, "--- HPX_START ---\n--- HPX_PRESET m ---\n");
	unsigned seed = (unsigned)n;
	for (size_t it = 0; it < n; it++) {
		off +=
		    (size_t)snprintf(s + off, cap - off,
				     "--- HPX_ITER %zu ---\n\"Layer\",\"Op\",\"C0\",\"C1\",\"C2\","
				     "\"C3\",\"C4\",\"C5\",\"overflow\"\n0,OP",
				     it);
		for (int c = 0; c < NCOUNTERS; c++) {
			vals[it][c] = value(c, it, n, &seed);
			off += (size_t)snprintf(s + off, cap - off, ",%.17g", vals[it][c]);
		}
		off += (size_t)snprintf(s + off, cap - off, ",0\n");
		assert_true(off < cap);
	}
	off += (size_t)snprintf(s + off, cap - off, "--- HPX_END ---\n");
	*len = off;
	return s;
}

static void medians_match_a_sort(void **state)
{
	(void)state;
	const size_t counts[] = {383, 384, 385, 1000, 1001, 1530, 4097};
	for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++) {
		size_t n = counts[ci], len = 0;
		double(*vals)[NCOUNTERS] = malloc(n * sizeof(*vals));
		assert_non_null(vals);
		char *s = stream(n, vals, &len);
		double want[NCOUNTERS];
		double *col = malloc(n * sizeof(double));
		assert_non_null(col);
		for (int c = 0; c < NCOUNTERS; c++) {
			for (size_t it = 0; it < n; it++)
				col[it] = vals[it][c];
			want[c] = median_of(col, n);
		}
		for (int mode = 0; mode < 3; mode++) {
			struct ergon_hpx_parser *p = NULL;
			struct ergon_err err = {0};
			assert_int_equal(ergon_hpx_parser_new(NULL, &p, &err), 0);
			if (mode)
				assert_int_equal(ergon_hpx_parser_aggregate_early(
						     p, ERGON_HPX_AGG_MEDIAN, mode == 2, &err),
						 0);
			assert_int_equal(ergon_hpx_parser_feed(p, s, len, &err), ERGON_HPX_DONE);
			assert_int_equal(ergon_hpx_parser_finish(p, &err), ERGON_HPX_DONE);
			struct ergon_pmu_result *r = NULL;
			assert_int_equal(
			    ergon_hpx_parser_result(p, ERGON_HPX_AGG_MEDIAN, 0, &r, &err), 0);
			assert_int_equal(r->npresets, 1);
			const struct ergon_pmu_layer *L = &r->presets[0].layers.layers[0];
			assert_int_equal(L->ncounters, NCOUNTERS);
			for (int c = 0; c < NCOUNTERS; c++) {
				if (L->counters[c].value != want[c])
					fail_msg(
					    "n=%zu mode=%d counter C%d: median %.17g, want %.17g",
					    n, mode, c, L->counters[c].value, want[c]);
				/* The same sign too: +0 is not -0. */
				assert_int_equal(signbit(L->counters[c].value) != 0,
						 signbit(want[c]) != 0);
			}
			ergon_pmu_result_free(r);
			ergon_hpx_parser_free(p);
		}
		free(col);
		free(s);
		free(vals);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(medians_match_a_sort),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
