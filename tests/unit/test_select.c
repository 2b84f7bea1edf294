/* ergon_select_kth (src/core/select.c) against a sorted copy (qsort, the
 * oracle): every rank of arrays of every length up to 200 and of longer
 * ones, with random values, many ties, sorted, reversed, constant and
 * organ-pipe orders (the shapes that hurt a naive quickselect), and the
 * partition property a later, lower rank relies on. */
#include "ergon/select.h"
#include "test_support.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return rng;
}

static void fill(double *v, size_t n, int shape)
{
	for (size_t i = 0; i < n; i++) {
		switch (shape) {
		case 0:
			v[i] = (double)(next() >> 11) * 0x1.0p-53;
			break; /* random */
		case 1:
			v[i] = (double)(next() % 5);
			break; /* ties */
		case 2:
			v[i] = (double)i;
			break; /* sorted */
		case 3:
			v[i] = (double)(n - i);
			break; /* reversed */
		case 4:
			v[i] = 2.5;
			break; /* constant */
		default:
			v[i] = (double)(i < n / 2 ? i : n - i);
			break; /* organ pipe */
		}
	}
}

static void check(size_t n, int shape)
{
	double *v = malloc(n * sizeof(double)), *w = malloc(n * sizeof(double)),
	       *sorted = malloc(n * sizeof(double));
	assert_non_null(v);
	assert_non_null(w);
	assert_non_null(sorted);
	fill(v, n, shape);
	memcpy(sorted, v, n * sizeof(double));
	qsort(sorted, n, sizeof(double), cmp);
	size_t step = n > 400 ? n / 97 : 1;
	for (size_t k = 1; k <= n; k += step) {
		memcpy(w, v, n * sizeof(double));
		double got = ergon_select_kth(w, n, k);
		assert_true(got == sorted[k - 1]);
		/* Partitioned around rank k. */
		for (size_t i = 0; i < k - 1; i++)
			assert_true(w[i] <= got);
		for (size_t i = k; i < n; i++)
			assert_true(w[i] >= got);
		/* A lower rank within the part below k. */
		size_t j = 1 + (k - 1) / 3;
		assert_true(ergon_select_kth(w, k, j) == sorted[j - 1]);
	}
	free(v);
	free(w);
	free(sorted);
}

static void every_rank_small(void **state)
{
	(void)state;
	for (size_t n = 1; n <= 200; n++)
		for (int shape = 0; shape < 6; shape++)
			check(n, shape);
}

static void long_arrays(void **state)
{
	(void)state;
	for (int shape = 0; shape < 6; shape++) {
		check(10007, shape);
		check(100000, shape);
	}
}

static void nearest_rank_by_hand(void **state)
{
	(void)state;
	/* 1..100 shuffled: the nearest-rank p50 / p95 / p99 are 50, 95, 99. */
	double v[100];
	for (int i = 0; i < 100; i++)
		v[i] = (double)((i * 37) % 100 + 1);
	assert_true(ergon_select_kth(v, 100, 99) == 99.0);
	assert_true(ergon_select_kth(v, 99, 95) == 95.0);
	assert_true(ergon_select_kth(v, 95, 50) == 50.0);
	double one[1] = {-3.5};
	assert_true(ergon_select_kth(one, 1, 1) == -3.5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(every_rank_small),
	    cmocka_unit_test(long_arrays),
	    cmocka_unit_test(nearest_rank_by_hand),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
