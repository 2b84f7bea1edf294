/* ergon_changepoints (PELT on an uncertainty-weighted mean-shift cost):
 *   - a 60-point history with a 10 % shift planted after point 29 (values
 *     1.00 then 1.10, seeded normal noise of sd 1 %, each point stating
 *     that 1 %) is split at exactly point 30, with segment means near 1.00
 *     and 1.10, for each of 1000 seeds, with no other shift in at least
 *     98 %;
 *   - the same history without the shift is one segment in at least 98 %
 *     of 1000 seeds (the penalty is set for at most 1 % by Bonferroni; the
 *     scatter estimated from 60 points adds a little) — the count is
 *     printed and asserted;
 *   - a shift inside the points' own stated uncertainty (each point
 *     states 20 %) is not a finding: the weights follow the points;
 *   - by hand: the penalty's threshold (a step just above and just below
 *     sqrt(beta / 2)), two shifts, and 1 1 1 1 5 5 5 5 with no noise has no scatter estimate
 *     (all successive differences but one are 0) and states none: one
 *     segment (nothing to measure a shift against); the same with stated
 *     uncertainties 0.1 splits at 4 with means 1 and 5;
 *   - a non-finite point is refused, named. */
#include "ergon/changepoint.h"
#include "test_support.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* xorshift64 and Box-Muller: deterministic normal noise per seed. */
static uint64_t rng;
static double uni(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
}
static double normal(void)
{
	return sqrt(-2.0 * log(uni())) * cos(6.283185307179586 * uni());
}

static void history(uint64_t seed, double shift, double *x, double *s, double stated)
{
	rng = seed * 0x9E3779B97F4A7C15ull + 1;
	for (int i = 0; i < 60; i++) {
		x[i] = (i < 30 ? 1.0 : 1.0 + shift) + 0.01 * normal();
		s[i] = stated;
	}
}

static void planted_shift_found_at_its_place(void **state)
{
	(void)state;
	double x[60], s[60];
	size_t found = 0, exact = 0, null_fp = 0;
	for (uint64_t seed = 1; seed <= 1000; seed++) {
		struct ergon_cp_result r;
		struct ergon_err err = {0};
		history(seed, 0.10, x, s, 0.01);
		assert_int_equal(ergon_changepoints(x, s, 60, 0, &r, &err), 0);
		/* Found: a segment starts at point 30, and the levels on either
		 * side are 1.00 and 1.10 (each within 1 sd of one point). */
		int here = 0;
		for (size_t k = 1; k < r.n_seg; k++)
			here |= r.seg[k].start == 30 && fabs(r.seg[k - 1].mean - 1.0) < 0.01 &&
				fabs(r.seg[k].mean - 1.1) < 0.01;
		found += (size_t)here;
		exact += (size_t)(here && r.n_seg == 2);
		if (!here || r.n_seg != 2)
			print_message("seed %llu: %zu segments, the first ends at %zu\n",
				      (unsigned long long)seed, r.n_seg, r.seg[0].end);
		free(r.seg);
		history(seed, 0.0, x, s, 0.01);
		assert_int_equal(ergon_changepoints(x, s, 60, 0, &r, &err), 0);
		null_fp += r.n_seg != 1;
		free(r.seg);
	}
	print_message("10 %% shift at point 30 found in %zu of 1000 histories, the only shift "
		      "found in %zu; a shift found in %zu of 1000 histories without one (alpha "
		      "%.2g)\n",
		      found, exact, null_fp, ERGON_CP_ALPHA);
	/* The shift is 10 sd of a point: always found, at its place. A
	 * spurious extra shift is what the level allows, alpha = 1 % of the
	 * histories (Bonferroni makes it at most that): 2 % is the bound
	 * asserted, with the estimated scatter's own error. */
	assert_int_equal(found, 1000);
	assert_true(exact >= 980);
	assert_true(null_fp <= 20);
	/* The seed the database test uses (history 1): the figures by hand of
	 * the noise are not needed, only the place and the two levels. */
	struct ergon_cp_result r;
	struct ergon_err err = {0};
	history(1, 0.10, x, s, 0.01);
	assert_int_equal(ergon_changepoints(x, s, 60, 0, &r, &err), 0);
	assert_int_equal(r.n_seg, 2);
	assert_int_equal(r.seg[0].start, 0);
	assert_int_equal(r.seg[0].end, 30);
	assert_int_equal(r.seg[1].end, 60);
	/* Bonferroni over 59 places at 1 %: z(1 - 0.01 / 118)^2. */
	assert_true(fabs(r.penalty - 14.142276) <
		    1e-5); /* Python: NormalDist().inv_cdf(1 - 0.01/118) ** 2 */
	free(r.seg);
}

static void within_the_points_own_uncertainty(void **state)
{
	(void)state;
	double x[60], s[60];
	size_t found = 0;
	for (uint64_t seed = 1; seed <= 100; seed++) {
		struct ergon_cp_result r;
		struct ergon_err err = {0};
		history(seed, 0.10, x, s, 0.20);
		assert_int_equal(ergon_changepoints(x, s, 60, 0, &r, &err), 0);
		found += r.n_seg != 1;
		free(r.seg);
	}
	assert_int_equal(found, 0);
}

static void by_hand(void **state)
{
	(void)state;
	const double x[8] = {1, 1, 1, 1, 5, 5, 5, 5};
	double s[8];
	struct ergon_cp_result r;
	struct ergon_err err = {0};
	assert_int_equal(ergon_changepoints(x, NULL, 8, 0, &r, &err), 0);
	assert_int_equal(r.n_seg, 1);
	assert_true(r.sigma_data == 0);
	free(r.seg);
	for (int i = 0; i < 8; i++)
		s[i] = 0.1;
	assert_int_equal(ergon_changepoints(x, s, 8, 0, &r, &err), 0);
	assert_int_equal(r.n_seg, 2);
	assert_int_equal(r.seg[1].start, 4);
	assert_true(r.seg[0].mean == 1 && r.seg[1].mean == 5);
	/* Four points of sd 0.1: se 0.1 / 2. */
	assert_true(fabs(r.seg[0].se - 0.05) < 1e-15);
	free(r.seg);
	/* One point, two points: too short for two segments. */
	assert_int_equal(ergon_changepoints(x, s, 1, 0, &r, &err), 0);
	assert_int_equal(r.n_seg, 1);
	free(r.seg);
	assert_int_equal(ergon_changepoints(x + 3, s, 2, 0, &r, &err), 0);
	assert_int_equal(r.n_seg, 1);
	free(r.seg);
	/* The penalty by hand: 0 0 0 0 d d d d, each point stating sd 1 (the
	 * successive differences' median is 0, so the stated 1 is the
	 * weight). One segment costs sum (x - d/2)^2 = 2 d^2; two cost 0 plus
	 * beta = chi2(1) quantile at 1 - 0.01/7 = 10.168542753725568 (Python:
	 * NormalDist().inv_cdf(1 - 0.01/14) ** 2), so the shift is a finding
	 * for d > sqrt(beta / 2) = 2.2548: at d = 2.3 (2 d^2 = 10.58), not at
	 * d = 2.2 (9.68). Each half's mean is d or 0, its se 1/sqrt 4. */
	for (int i = 0; i < 8; i++)
		s[i] = 1;
	double step[8] = {0, 0, 0, 0, 2.3, 2.3, 2.3, 2.3};
	assert_int_equal(ergon_changepoints(step, s, 8, 0, &r, &err), 0);
	assert_true(fabs(r.penalty - 10.168542753725568) < 1e-9);
	assert_int_equal(r.n_seg, 2);
	assert_int_equal(r.seg[1].start, 4);
	assert_true(fabs(r.seg[0].mean) < 1e-12 && fabs(r.seg[1].mean - 2.3) < 1e-12);
	assert_true(fabs(r.seg[1].se - 0.5) < 1e-15);
	free(r.seg);
	for (int i = 4; i < 8; i++)
		step[i] = 2.2;
	assert_int_equal(ergon_changepoints(step, s, 8, 0, &r, &err), 0);
	assert_int_equal(r.n_seg, 1);
	assert_true(fabs(r.seg[0].mean - 1.1) < 1e-12);
	free(r.seg);
	/* Two shifts by hand: 0 0 0 5 5 5 0 0 0 stating 0.1: three segments
	 * of three, each of cost 0; any fewer costs at least 3 x 25 x 100. */
	const double up_down[9] = {0, 0, 0, 5, 5, 5, 0, 0, 0};
	double s9[9];
	for (int i = 0; i < 9; i++)
		s9[i] = 0.1;
	assert_int_equal(ergon_changepoints(up_down, s9, 9, 0, &r, &err), 0);
	assert_int_equal(r.n_seg, 3);
	assert_int_equal(r.seg[1].start, 3);
	assert_int_equal(r.seg[2].start, 6);
	assert_true(fabs(r.seg[1].mean - 5) < 1e-12 && fabs(r.seg[2].mean) < 1e-12);
	free(r.seg);
	/* Values a double cannot square are refused, named. */
	const double huge[3] = {1, 1e200, 2};
	assert_int_equal(ergon_changepoints(huge, NULL, 3, 0, &r, &err), ERGON_EUSAGE);
	assert_non_null(strstr(err.msg, "point 1"));
	const double bad[3] = {1, NAN, 2};
	assert_int_equal(ergon_changepoints(bad, NULL, 3, 0, &r, &err), ERGON_EUSAGE);
	assert_non_null(strstr(err.msg, "point 1"));
	assert_int_equal(ergon_changepoints(x, NULL, 8, 1.5, &r, &err), ERGON_EUSAGE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(planted_shift_found_at_its_place),
	    cmocka_unit_test(within_the_points_own_uncertainty),
	    cmocka_unit_test(by_hand),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
