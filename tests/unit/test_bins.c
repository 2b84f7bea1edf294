/* The bins engine (ergon/bins.h) on samples whose bins are worked out by
 * hand: min, max, mean of the finite samples and their count, NaN left
 * out, digital lines' low/high bits and first rising edge, a partial last
 * bin, blocks that split bins anywhere, and coarsening by 10 when the bin
 * count would pass its maximum (the result equals binning at the coarse
 * size from the start). */
#include "ergon/bins.h"
#include "test_support.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void by_hand(void **state)
{
	(void)state;
	/* Bins of 4: [1 2 3 4] [5 NaN 7 NaN] [-1 -3] */
	float x[10] = {1, 2, 3, 4, 5, NAN, 7, NAN, -1, -3};
	/* Line 0: 0 0 1 1 | 1 1 1 1 | 0 1 -> bits packed LSB first. */
	uint8_t bits[2] = {0xFC, 0x02}; /* samples 2..7 high, 8 low, 9 high */
	struct ergon_bins b;
	struct ergon_err err = {0};
	struct ergon_bins_config cfg = {
	    .bin_samples = 4, .max_bins = 100, .n_f32 = 1, .n_lines = 1};
	assert_int_equal(ergon_bins_init(&b, &cfg, &err), 0);
	/* Pushed in blocks of 3, 5 and 2 samples (split inside bins). */
	size_t cuts[4] = {0, 3, 8, 10};
	for (int c = 0; c < 3; c++) {
		const float *f[1] = {x + cuts[c]};
		const uint8_t *bp[1] = {bits};
		size_t b0[1] = {cuts[c]};
		assert_int_equal(
		    ergon_bins_push(&b, cuts[c], cuts[c + 1] - cuts[c], f, bp, b0, &err), 0);
	}
	assert_int_equal(ergon_bins_finish(&b, &err), 0);
	assert_int_equal(b.n_bins, 3);
	assert_int_equal(b.samples, 10);
	assert_int_equal(b.lost[0], 2);
	float mn[3] = {1, 5, -3}, mx[3] = {4, 7, -1}, me[3] = {2.5f, 6, -2};
	uint32_t fin[3] = {4, 2, 2};
	uint8_t ln[3] = {ERGON_BINS_LOW | ERGON_BINS_HIGH, ERGON_BINS_HIGH,
			 ERGON_BINS_LOW | ERGON_BINS_HIGH};
	for (size_t i = 0; i < 3; i++) {
		assert_true(b.min[0][i] == mn[i]);
		assert_true(b.max[0][i] == mx[i]);
		assert_true(b.mean[0][i] == me[i]);
		assert_int_equal(b.finite[0][i], fin[i]);
		assert_int_equal(b.lines[0][i], ln[i]);
	}
	assert_int_equal(ergon_bins_count(&b, 0), 4);
	assert_int_equal(ergon_bins_count(&b, 2), 2);
	/* The first rise: sample 2 (0 -> 1), not the later 8 -> 9. */
	assert_int_equal(b.first_rise[0], 2);
	/* Out-of-order samples are refused. */
	const float *f[1] = {x};
	assert_int_equal(ergon_bins_push(&b, 3, 1, f, NULL, NULL, &err), ERGON_EUSAGE);
	ergon_bins_cleanup(&b);
}

static void all_lost_bin_is_nan(void **state)
{
	(void)state;
	float x[4] = {NAN, NAN, 1, 1};
	struct ergon_bins b;
	struct ergon_err err = {0};
	struct ergon_bins_config cfg = {.bin_samples = 2, .max_bins = 10, .n_f32 = 1};
	assert_int_equal(ergon_bins_init(&b, &cfg, &err), 0);
	const float *f[1] = {x};
	assert_int_equal(ergon_bins_push(&b, 0, 4, f, NULL, NULL, &err), 0);
	assert_int_equal(ergon_bins_finish(&b, &err), 0);
	assert_true(isnan(b.mean[0][0]) && isnan(b.min[0][0]) && isnan(b.max[0][0]));
	assert_int_equal(b.finite[0][0], 0);
	assert_true(b.mean[0][1] == 1.0f);
	ergon_bins_cleanup(&b);
}

/* 1234 samples, value i % 97, bins of 1 with at most 100 bins and
 * coarsening by 10: 1234 > 100 and 1234 / 10 > 100, so bins of 100 (13 of
 * them, the last of 34). Each must equal the hand computation over its
 * samples. */
static void coarsens_to_fit(void **state)
{
	(void)state;
	enum { N = 1234 };
	float *x = malloc(N * sizeof(float));
	for (int i = 0; i < N; i++)
		x[i] = (float)(i % 97);
	struct ergon_bins b;
	struct ergon_err err = {0};
	struct ergon_bins_config cfg = {
	    .bin_samples = 1, .max_bins = 100, .n_f32 = 1, .coarsen = 10};
	assert_int_equal(ergon_bins_init(&b, &cfg, &err), 0);
	for (int i = 0; i < N; i += 7) {
		const float *f[1] = {x + i};
		size_t n = N - i < 7 ? (size_t)(N - i) : 7;
		assert_int_equal(ergon_bins_push(&b, (uint64_t)i, n, f, NULL, NULL, &err), 0);
	}
	assert_int_equal(ergon_bins_finish(&b, &err), 0);
	assert_int_equal(b.bin_samples, 100);
	assert_int_equal(b.n_bins, 13);
	for (size_t k = 0; k < 13; k++) {
		size_t s0 = k * 100, s1 = s0 + 100 > N ? N : s0 + 100;
		double sum = 0, lo = 1e9, hi = -1e9;
		for (size_t i = s0; i < s1; i++) {
			sum += x[i];
			lo = fmin(lo, x[i]);
			hi = fmax(hi, x[i]);
		}
		assert_int_equal(b.finite[0][k], s1 - s0);
		assert_true(b.min[0][k] == (float)lo && b.max[0][k] == (float)hi);
		assert_true(b.mean[0][k] == (float)(sum / (double)(s1 - s0)));
	}
	/* Without coarsening the 101st bin is refused. */
	ergon_bins_cleanup(&b);
	cfg.coarsen = 0;
	assert_int_equal(ergon_bins_init(&b, &cfg, &err), 0);
	const float *f[1] = {x};
	assert_int_equal(ergon_bins_push(&b, 0, 101, f, NULL, NULL, &err), ERGON_ERANGE);
	ergon_bins_cleanup(&b);
	/* A bad configuration. */
	cfg.coarsen = 7; /* 100 is no multiple of 7 */
	assert_int_equal(ergon_bins_init(&b, &cfg, &err), ERGON_EUSAGE);
	free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(by_hand),
	    cmocka_unit_test(all_lost_bin_is_nan),
	    cmocka_unit_test(coarsens_to_fit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
