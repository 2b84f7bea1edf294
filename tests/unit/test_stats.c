/* The repeat statistics (ergon/stats.h) against values computed
 * independently of the code under test:
 *   - Student t quantiles: the closed forms for 1, 2 and 4 degrees of
 *     freedom (Cauchy: tan(pi (p - 1/2)); df 2: (2p - 1) / sqrt(2 p (1 -
 *     p)); df 4: Shaw, "Sampling Student's T distribution", J. Comput.
 *     Finance 9(4), 2006, eq. for n = 4), and the published table of
 *     two-sided 95 % critical values (NIST/SEMATECH e-Handbook of
 *     Statistical Methods, 1.3.6.7.2, three decimals);
 *   - the t CDF: its closed forms for 1, 2 and 3 degrees of freedom
 *     (Abramowitz and Stegun 26.7.3, 26.7.4);
 *   - the incomplete beta: I_x(a, 1) = x^a, I_x(1, b) = 1 - (1 - x)^b,
 *     I_{1/2}(a, a) = 1/2;
 *   - the normal quantile: 1.959963984540054 and 2.5758293035489 (the
 *     values every table prints; Python's statistics.NormalDist agrees);
 *   - Welch's test: the two worked examples of the Wikipedia article
 *     "Welch's t-test" (t = -2.46, df = 25.0, p = 0.021; t = -1.57,
 *     df = 9.90, p = 0.149);
 *   - the median's distribution-free interval: Conover's table (n = 6:
 *     [x(1), x(6)], 96.9 %; n = 10: [x(2), x(9)], 97.85 %);
 *   - Tukey's fences on a sample worked out by hand. */
#include "ergon/stats.h"
#include "test_support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PI 3.14159265358979323846

/* |got - want| within rel of want, or 1e-15 absolute: a probability
 * near 0 from a closed form that subtracts two numbers near 1/2 has no
 * more digits than that. */
static void assert_close(double got, double want, double rel, const char *what)
{
	if (!(fabs(got - want) <= rel * fabs(want) + 1e-15 * (fabs(want) < 1 ? 1 : 0)))
		fail_msg("%s: got %.17g, want %.17g (rel %g)", what, got, want, rel);
}

static void t_quantile_closed_forms(void **state)
{
	(void)state;
	const double ps[] = {0.5000001, 0.6,   0.75,   0.9,  0.95, 0.975,
			     0.99,	0.995, 0.9999, 1e-6, 0.025};
	for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
		double p = ps[i];
		char what[64];
		snprintf(what, sizeof what, "df 1, p %g", p);
		assert_close(ergon_t_quantile(p, 1), tan(PI * (p - 0.5)), 1e-9, what);
		snprintf(what, sizeof what, "df 2, p %g", p);
		assert_close(ergon_t_quantile(p, 2), (2 * p - 1) / sqrt(2 * p * (1 - p)), 1e-9,
			     what);
		/* Shaw's form cancels near p = 1/2 (q - 1 of two numbers near 1);
		 * there the quantile is (p - 1/2) / f(0) to first order, f(0) =
		 * G(5/2) / (sqrt(4 pi) G(2)) = 3/8 for df 4. */
		double a = 4 * p * (1 - p);
		double q = cos(acos(sqrt(a)) / 3) / sqrt(a);
		double t4 =
		    fabs(p - 0.5) < 1e-3 ? (p - 0.5) / 0.375 : (p > 0.5 ? 1 : -1) * 2 * sqrt(q - 1);
		snprintf(what, sizeof what, "df 4, p %g", p);
		assert_close(ergon_t_quantile(p, 4), t4, 1e-9, what);
	}
	assert_true(ergon_t_quantile(0.5, 7) == 0);
	assert_true(isnan(ergon_t_quantile(0, 3)));
	assert_true(isnan(ergon_t_quantile(1, 3)));
	assert_true(isnan(ergon_t_quantile(0.9, 0)));
	assert_true(isnan(ergon_t_quantile(0.9, -1)));
	assert_true(isnan(ergon_t_quantile(NAN, 3)));
}

/* NIST/SEMATECH 1.3.6.7.2, column 0.975 (two-sided 95 %). */
static void t_quantile_table(void **state)
{
	(void)state;
	static const struct {
		double df, t;
	} tab[] = {{1, 12.706}, {2, 4.303},  {3, 3.182},  {4, 2.776},  {5, 2.571},  {6, 2.447},
		   {7, 2.365},	{8, 2.306},  {9, 2.262},  {10, 2.228}, {11, 2.201}, {12, 2.179},
		   {13, 2.160}, {14, 2.145}, {15, 2.131}, {16, 2.120}, {17, 2.110}, {18, 2.101},
		   {19, 2.093}, {20, 2.086}, {25, 2.060}, {30, 2.042}, {40, 2.021}, {50, 2.009},
		   {60, 2.000}, {80, 1.990}, {100, 1.984}};
	for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++) {
		double t = ergon_t_quantile(0.975, tab[i].df);
		if (!(fabs(t - tab[i].t) <= 0.0005))
			fail_msg("df %g: %.6f, the table says %.3f", tab[i].df, t, tab[i].t);
	}
	/* Large df: the normal quantile plus the first Cornish-Fisher term,
	 * t = z + (z^3 + z) / (4 df) + O(df^-2) (Abramowitz and Stegun
	 * 26.7.5). */
	double z = 1.959963984540054, nu = 1e4;
	double g1 = (z * z * z + z) / 4;
	double g2 = (5 * pow(z, 5) + 16 * z * z * z + 3 * z) / 96;
	double g3 = (3 * pow(z, 7) + 19 * pow(z, 5) + 17 * z * z * z - 15 * z) / 384;
	assert_close(ergon_t_quantile(0.975, nu),
		     z + g1 / nu + g2 / (nu * nu) + g3 / (nu * nu * nu), 1e-10, "df 1e4");
}

static void t_cdf_closed_forms(void **state)
{
	(void)state;
	const double ts[] = {-40, -3.5, -1, -0.25, 0, 0.1, 0.5, 1, 2.2, 6, 100};
	for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) {
		double t = ts[i];
		char what[64];
		snprintf(what, sizeof what, "cdf df 1, t %g", t);
		assert_close(ergon_t_cdf(t, 1), 0.5 + atan(t) / PI, 1e-12, what);
		snprintf(what, sizeof what, "cdf df 2, t %g", t);
		assert_close(ergon_t_cdf(t, 2), 0.5 + t / (2 * sqrt(2 + t * t)), 1e-12, what);
		snprintf(what, sizeof what, "cdf df 3, t %g", t);
		double f3 = 0.5 + (atan(t / sqrt(3)) + sqrt(3) * t / (3 + t * t)) / PI;
		assert_close(ergon_t_cdf(t, 3), f3, 1e-12, what);
		snprintf(what, sizeof what, "sf df 3, t %g", t);
		assert_close(ergon_t_sf(t, 3), 1 - f3, 1e-9, what);
	}
	/* The far tail keeps its digits: P(T > 1e6) for df 1 is
	 * atan(1e-6) / pi. */
	assert_close(ergon_t_sf(1e6, 1), atan(1e-6) / PI, 1e-9, "far tail");
	/* Round trip at a non-integer df (Welch's). */
	for (double p = 0.01; p < 1; p += 0.07)
		assert_close(ergon_t_cdf(ergon_t_quantile(p, 7.37), 7.37), p, 1e-12, "round trip");
}

static void beta_inc_identities(void **state)
{
	(void)state;
	const double xs[] = {1e-8, 0.01, 0.3, 0.5, 0.77, 0.999};
	const double as[] = {0.5, 1, 2.5, 7, 40};
	for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++)
		for (size_t j = 0; j < sizeof as / sizeof as[0]; j++) {
			double x = xs[i], a = as[j];
			assert_close(ergon_beta_inc(a, 1, x), pow(x, a), 1e-12, "I_x(a, 1)");
			assert_close(ergon_beta_inc(1, a, x), -expm1(a * log1p(-x)), 1e-12,
				     "I_x(1, b)");
			assert_close(ergon_beta_inc(a, a, 0.5), 0.5, 1e-12, "I_1/2(a, a)");
		}
	assert_true(ergon_beta_inc(2, 3, 0) == 0);
	assert_true(ergon_beta_inc(2, 3, 1) == 1);
	assert_true(isnan(ergon_beta_inc(0, 3, 0.5)));
	assert_true(isnan(ergon_beta_inc(2, 3, 1.5)));
}

static void normal_quantile_values(void **state)
{
	(void)state;
	assert_close(ergon_normal_quantile(0.975), 1.959963984540054, 1e-12, "z 0.975");
	assert_close(ergon_normal_quantile(0.995), 2.5758293035489004, 1e-12, "z 0.995");
	assert_close(ergon_normal_quantile(0.025), -1.959963984540054, 1e-12, "z 0.025");
	assert_true(ergon_normal_quantile(0.5) == 0);
	/* A far tail: 0.5 erfc(z / sqrt 2) at the returned z gives p back. */
	double z = ergon_normal_quantile(1e-12);
	assert_close(0.5 * erfc(-z / sqrt(2)), 1e-12, 1e-9, "z 1e-12");
}

static void welch_published_examples(void **state)
{
	(void)state;
	const double a1[] = {27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1,
			     21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4};
	const double b1[] = {27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0,
			     24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4};
	struct ergon_summary sa, sb;
	struct ergon_welch w;
	struct ergon_err err = {0};
	assert_int_equal(ergon_summary_of(a1, 15, &sa, &err), 0);
	assert_int_equal(ergon_summary_of(b1, 15, &sb, &err), 0);
	/* Compared as b - a: the article reports a - b = -2.46. */
	assert_int_equal(ergon_welch_test(&sb, &sa, 0.05, &w, &err), 0);
	assert_true(fabs(w.t - -2.46) < 0.005);
	assert_true(fabs(w.df - 25.0) < 0.05);
	assert_true(fabs(w.p - 0.021) < 0.0005);
	assert_true(w.significant);
	const double a2[] = {17.2, 20.9, 22.6, 18.1, 21.7, 21.4, 23.5, 24.2, 14.7, 21.8};
	const double b2[] = {21.5, 22.8, 21.0, 23.0, 21.6, 23.6, 22.5, 20.7, 23.4, 21.8,
			     20.7, 21.7, 21.5, 22.5, 23.6, 21.5, 22.5, 23.5, 21.5, 21.8};
	assert_int_equal(ergon_summary_of(a2, 10, &sa, &err), 0);
	assert_int_equal(ergon_summary_of(b2, 20, &sb, &err), 0);
	assert_int_equal(ergon_welch_test(&sb, &sa, 0.05, &w, &err), 0);
	assert_true(fabs(w.t - -1.57) < 0.005);
	assert_true(fabs(w.df - 9.90) < 0.005);
	assert_true(fabs(w.p - 0.149) < 0.0005);
	assert_false(w.significant);
	/* t(0.975, 9.9) lies between the table's t(0.975, 10) and t(0.975, 9). */
	assert_true(w.t_crit > 2.228 && w.t_crit < 2.262);
	/* No spread: a difference is beyond it, none is not. */
	const double c5[] = {3, 3, 3, 3, 3}, d5[] = {3.5, 3.5, 3.5, 3.5, 3.5};
	assert_int_equal(ergon_summary_of(c5, 5, &sa, &err), 0);
	assert_int_equal(ergon_summary_of(d5, 5, &sb, &err), 0);
	assert_int_equal(ergon_welch_test(&sa, &sb, 0.05, &w, &err), 0);
	assert_true(w.significant && w.p == 0 && isinf(w.t));
	assert_int_equal(ergon_welch_test(&sa, &sa, 0.05, &w, &err), 0);
	assert_true(!w.significant && w.p == 1);
	/* One value is not a spread. */
	assert_int_equal(ergon_summary_of(c5, 1, &sa, &err), 0);
	assert_int_equal(ergon_welch_test(&sa, &sb, 0.05, &w, &err), ERGON_EUSAGE);
}

/* Mean 3, deviations -2 -1 0 1 2: sd sqrt(10/4), sem sqrt(10/4)/sqrt 5 =
 * sqrt(1/2), t(0.975, 4) by Shaw's closed form. */
static void summary_by_hand(void **state)
{
	(void)state;
	const double v[] = {5, 1, 3, 4, 2};
	struct ergon_summary s;
	struct ergon_err err = {0};
	assert_int_equal(ergon_summary_of(v, 5, &s, &err), 0);
	assert_true(s.mean == 3 && s.median == 3 && s.min == 1 && s.max == 5);
	assert_close(s.sd, sqrt(2.5), 1e-15, "sd");
	assert_close(s.sem, sqrt(0.5), 1e-15, "sem");
	assert_true(s.df == 4);
	double a = 4 * 0.975 * 0.025, q = cos(acos(sqrt(a)) / 3) / sqrt(a);
	double t4 = 2 * sqrt(q - 1);
	assert_close(s.t, t4, 1e-9, "t");
	assert_close(s.ci_lo, 3 - t4 * sqrt(0.5), 1e-9, "ci lo");
	assert_close(s.ci_hi, 3 + t4 * sqrt(0.5), 1e-9, "ci hi");
	/* n = 5: [min, max] with coverage 1 - 2/32. */
	assert_true(s.median_lo == 1 && s.median_hi == 5 && s.median_coverage == 0.9375);
	/* Even n: the median is the mean of the middle two. */
	const double e[] = {4, 1, 3, 2};
	assert_int_equal(ergon_summary_of(e, 4, &s, &err), 0);
	assert_true(s.median == 2.5);
	/* One value: no spread, no interval. */
	assert_int_equal(ergon_summary_of(v, 1, &s, &err), 0);
	assert_true(s.mean == 5 && isnan(s.sd) && isnan(s.ci_lo));
	/* Refusals name the value. */
	const double bad[] = {1, NAN, 3};
	assert_int_equal(ergon_summary_of(bad, 3, &s, &err), ERGON_EUSAGE);
	assert_non_null(strstr(err.msg, "value 1"));
	assert_int_equal(ergon_summary_of(v, 0, &s, &err), ERGON_EUSAGE);
}

static void median_interval_conover(void **state)
{
	(void)state;
	size_t k;
	double cov;
	ergon_median_ci_ranks(5, &k, &cov);
	assert_true(k == 1 && cov == 0.9375);
	ergon_median_ci_ranks(6, &k, &cov);
	assert_true(k == 1 && cov == 1 - 2.0 / 64);
	ergon_median_ci_ranks(10, &k, &cov);
	assert_true(k == 2 && cov == 1 - 22.0 / 1024);
	ergon_median_ci_ranks(1, &k, &cov);
	assert_true(k == 1);
}

/* 1..10 and 40: nearest-rank quartiles q1 = x(3) = 3, q3 = x(9) = 9
 * (ceil(0.25 x 11) = 3, ceil(0.75 x 11) = 9), iqr 6, fences -6 and 18:
 * one high outlier (40), none low. */
static void tukey_by_hand(void **state)
{
	(void)state;
	const double v[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 40};
	struct ergon_outliers o;
	ergon_outliers_tukey_sorted(v, 11, &o);
	assert_true(o.q1 == 3 && o.q3 == 9 && o.iqr == 6);
	assert_true(o.lo_fence == -6 && o.hi_fence == 18);
	assert_true(o.n_low == 0 && o.n_high == 1);
	const double w[] = {-50, 1, 1, 1, 1};
	ergon_outliers_tukey_sorted(w, 5, &o);
	assert_true(o.n_low == 1 && o.n_high == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(t_quantile_closed_forms), cmocka_unit_test(t_quantile_table),
	    cmocka_unit_test(t_cdf_closed_forms),      cmocka_unit_test(beta_inc_identities),
	    cmocka_unit_test(normal_quantile_values),  cmocka_unit_test(welch_published_examples),
	    cmocka_unit_test(summary_by_hand),	       cmocka_unit_test(median_interval_conover),
	    cmocka_unit_test(tukey_by_hand),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
