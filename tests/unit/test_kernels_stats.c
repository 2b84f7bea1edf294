/* The kernel method's statistics against figures worked out by hand on a
 * small sample file, and the samples CSV reader's refusals (each names the
 * place and the column). */
#include "ergon/kernels_run.h"
#include "test_support.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Hand-made samples. By hand:
 *   fc_a   ref 100,110,130     min 100, median 110, mean 340/3
 *          mve 40,50           min 40, median 45, mean 45
 *          speedup (340/3)/45 = 68/27
 *   conv_b ref 1000..1300      min 1000, median 1150, mean 1150
 *          mve 250,260,240,250 min 240, median 250, mean 250
 *          speedup 1150/250 = 4.6
 *   dw_c   ref 500; mve failed correctness: not timed, no speedup
 *   geomean of mve = sqrt(68/27 * 4.6) */
static const char SAMPLES[] = "case,impl,correct,count\n"
			      "fc_a,ref,pass,100\n"
			      "fc_a,ref,pass,110\n"
			      "fc_a,ref,pass,130\n"
			      "fc_a,mve,pass,40\n"
			      "fc_a,mve,pass,50\n"
			      "# a comment line\n"
			      "conv_b,ref,pass,1000\r\n"
			      "conv_b,ref,pass,1200\n"
			      "conv_b,ref,pass,1100\n"
			      "conv_b,ref,pass,1300\n"
			      "conv_b,mve,pass,250\n"
			      "conv_b,mve,pass,260\n"
			      "conv_b,mve,pass,240\n"
			      "conv_b,mve,pass,250\n"
			      "dw_c,ref,pass,500\n"
			      "dw_c,mve,fail,\n";

static json_t *section_of(const char *text, const char *baseline)
{
	struct ergon_kernels_data *d = NULL;
	struct ergon_err err = {0};
	size_t ov = 0;
	json_t *sec = NULL;
	assert_int_equal(ergon_kernels_csv_parse(text, strlen(text), "s.csv", &d, &ov, &err), 0);
	assert_int_equal(ergon_kernels_summarize(d, baseline, "counts", &sec, &err), 0);
	ergon_kernels_data_free(d);
	return sec;
}

static const json_t *get_case(const json_t *sec, const char *name)
{
	const json_t *cs = json_object_get(sec, "cases");
	for (size_t i = 0; i < json_array_size(cs); i++)
		if (strcmp(json_string_value(json_object_get(json_array_get(cs, i), "case")),
			   name) == 0)
			return json_array_get(cs, i);
	fail_msg("no case %s", name);
	return NULL;
}

static const json_t *get_impl(const json_t *c, const char *impl)
{
	const json_t *im = json_object_get(c, "impls");
	for (size_t i = 0; i < json_array_size(im); i++)
		if (strcmp(json_string_value(json_object_get(json_array_get(im, i), "impl")),
			   impl) == 0)
			return json_array_get(im, i);
	fail_msg("no impl %s", impl);
	return NULL;
}

static double num(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	assert_non_null(v);
	return json_number_value(v);
}

static void hand_computed_statistics(void **state)
{
	(void)state;
	json_t *sec = section_of(SAMPLES, "ref");
	const json_t *fc = get_case(sec, "fc_a");
	const json_t *r = get_impl(fc, "ref"), *m = get_impl(fc, "mve");
	assert_int_equal(json_integer_value(json_object_get(r, "n")), 3);
	assert_true(num(r, "min") == 100.0);
	assert_true(num(r, "median") == 110.0);
	assert_true(fabs(num(r, "mean") - 340.0 / 3.0) < 1e-12);
	assert_true(num(m, "median") == 45.0);
	assert_true(num(m, "mean") == 45.0);
	const json_t *s = json_array_get(json_object_get(fc, "speedups"), 0);
	assert_true(fabs(num(s, "speedup") - 68.0 / 27.0) < 1e-12);
	assert_true(fabs(num(s, "baseline_mean") - 340.0 / 3.0) < 1e-12);
	assert_true(num(s, "candidate_mean") == 45.0);

	const json_t *cv = get_case(sec, "conv_b");
	assert_true(num(get_impl(cv, "ref"), "median") == 1150.0);
	assert_true(num(get_impl(cv, "mve"), "min") == 240.0);
	assert_true(num(get_impl(cv, "mve"), "median") == 250.0);
	s = json_array_get(json_object_get(cv, "speedups"), 0);
	assert_true(fabs(num(s, "speedup") - 4.6) < 1e-12);

	/* The failed implementation is reported and not timed. */
	const json_t *dw = get_case(sec, "dw_c");
	const json_t *f = get_impl(dw, "mve");
	assert_true(json_is_false(json_object_get(f, "correct")));
	assert_true(json_is_false(json_object_get(f, "timed")));
	assert_null(json_object_get(f, "mean"));
	assert_int_equal(json_array_size(json_object_get(dw, "speedups")), 0);
	assert_int_equal(json_array_size(json_object_get(sec, "failures")), 1);

	const json_t *g = json_array_get(json_object_get(sec, "geomean"), 0);
	assert_int_equal(json_integer_value(json_object_get(g, "cases")), 2);
	assert_true(fabs(num(g, "speedup") - sqrt(68.0 / 27.0 * 4.6)) < 1e-12);
	assert_non_null(strstr(json_string_value(json_object_get(g, "note")), "not a model"));
	json_decref(sec);
}

/* A failed row anywhere poisons that implementation's case, even when its
 * other rows carry counts: it is never timed. */
static void failure_is_never_timed(void **state)
{
	(void)state;
	json_t *sec = section_of("case,impl,correct,count\nk,ref,pass,10\nk,mve,pass,5\n"
				 "k,mve,fail,4\n",
				 "ref");
	const json_t *m = get_impl(get_case(sec, "k"), "mve");
	assert_true(json_is_false(json_object_get(m, "timed")));
	assert_int_equal(json_array_size(json_object_get(sec, "geomean")), 0);
	json_decref(sec);
}

/* start/end reads of a 32-bit and a 16-bit counter that wrapped: the
 * counts are (end - start) mod 2^bits = 16 and 10; overhead 2 subtracted
 * from the 16. */
static void wraparound_and_overhead(void **state)
{
	(void)state;
	const char *t = "case,impl,correct,start,end,counter_bits,overhead\n"
			"w,ref,pass,4294967290,10,,2\n"
			"w,ref,pass,65530,4,16,\n";
	struct ergon_kernels_data *d = NULL;
	struct ergon_err err = {0};
	size_t ov = 0;
	json_t *sec = NULL;
	assert_int_equal(ergon_kernels_csv_parse(t, strlen(t), "w.csv", &d, &ov, &err), 0);
	assert_int_equal(ov, 1);
	assert_int_equal(ergon_kernels_summarize(d, "ref", NULL, &sec, &err), 0);
	const json_t *r = get_impl(get_case(sec, "w"), "ref");
	assert_true(num(r, "min") == 10.0);
	assert_true(num(r, "mean") == 12.0); /* (14 + 10) / 2 */
	json_decref(sec);
	ergon_kernels_data_free(d);
}

static void refused(const char *text, int code, const char *needle)
{
	struct ergon_kernels_data *d = NULL;
	struct ergon_err err = {0};
	size_t ov = 0;
	int rc = ergon_kernels_csv_parse(text, strlen(text), "bad.csv", &d, &ov, &err);
	if (rc != code || strstr(err.msg, needle) == NULL)
		fail_msg("wanted %d with '%s', got %d: %s", code, needle, rc, err.msg);
	assert_null(d);
}

static void bad_input(void **state)
{
	(void)state;
	refused("case,impl,count\nk,ref,10\n", ERGON_EPARSE,
		"bad.csv:1: missing column 'correct' (the correctness verdict is required");
	refused("case,correct,count\nk,pass,10\n", ERGON_EPARSE, "missing column 'impl'");
	refused("impl,correct,count\nref,pass,10\n", ERGON_EPARSE, "missing column 'case'");
	refused("case,impl,correct\nk,ref,pass\n", ERGON_EPARSE, "missing column 'count'");
	refused("case,impl,correct,start\nk,ref,pass,1\n", ERGON_EPARSE, "missing column 'end'");
	/* A count column does not excuse a lone start (fuzz_kernels_csv: the row
	 * parser read the absent end cell). */
	refused("case,impl,correct,count,start\nk,ref,pass,,5\n", ERGON_EPARSE,
		"missing column 'end' (start and end come together)");
	refused("case,impl,correct,count\nk,ref,pass,10\nk,ref,pass,0\n", ERGON_EPARSE,
		"bad.csv:3:12: count: 0 is not > 0");
	refused("case,impl,correct,count\nk,ref,pass,-3\n", ERGON_EPARSE, "bad.csv:2:12: count");
	refused("case,impl,correct,count\nk,ref,pass,12x\n", ERGON_EPARSE,
		"bad.csv:2:12: count: '12x' is not a finite number");
	refused("case,impl,correct,count\nk,ref,pass,nan\n", ERGON_EPARSE, "bad.csv:2:12: count");
	refused("case,impl,correct,count\nk,ref,,10\n", ERGON_EPARSE,
		"bad.csv:2:7: correct: empty");
	refused("case,impl,correct,count\nk,ref,maybe,10\n", ERGON_EPARSE,
		"bad.csv:2:7: correct: 'maybe' is not pass or fail");
	refused("case,impl,correct,start,end\nk,ref,pass,7,7\n", ERGON_EPARSE,
		"bad.csv:2:14: end: equal to start");
	refused("case,impl,correct,start,end,counter_bits\nk,ref,pass,70000,1,16\n", ERGON_EPARSE,
		"bad.csv:2:12: start: not an unsigned integer below 2^16");
	refused("case,impl,correct,count,overhead\nk,ref,pass,10,10\n", ERGON_EPARSE,
		"bad.csv:2:15: overhead: 10 is not below the count 10");
	refused("case,impl,correct,count\nk,ref,pass\n", ERGON_EPARSE,
		"bad.csv:2: 3 cells, the header has 4");
	refused("case,impl,correct,count\n", ERGON_EPARSE, "no sample rows");
	refused("", ERGON_EPARSE, "bad.csv: empty");
	refused("case,impl,correct,count,count\nk,ref,pass,1,1\n", ERGON_EPARSE,
		"column 'count' appears twice");
	refused("case,impl,correct,count\n\"k\",ref,pass,1\n", ERGON_EPARSE, "quoted cells");
	/* Found by fuzz_kernels_csv: a name that is not UTF-8 cannot become a
	 * JSON string. */
	refused("case,impl,correct,count\nk,m\xff\xff,pass,1\n", ERGON_EPARSE,
		"bad.csv:2: impl is not valid UTF-8");
}

static void baseline_absent(void **state)
{
	(void)state;
	struct ergon_kernels_data *d = NULL;
	struct ergon_err err = {0};
	size_t ov = 0;
	json_t *sec = NULL;
	const char *t = "case,impl,correct,count\nk,mve,pass,3\n";
	assert_int_equal(ergon_kernels_csv_parse(t, strlen(t), "b.csv", &d, &ov, &err), 0);
	assert_int_equal(ergon_kernels_summarize(d, "ref", NULL, &sec, &err), ERGON_EPARSE);
	assert_non_null(strstr(err.msg, "--baseline"));
	assert_null(sec);
	ergon_kernels_data_free(d);
}

/* The CSV view carries the figures of the section, hand values again. */
static void csv_view(void **state)
{
	(void)state;
	json_t *sec = section_of("case,impl,correct,count\nk,ref,pass,9\nk,ref,pass,11\n"
				 "k,mve,pass,5\nk,x,fail,\n",
				 "ref");
	char *csv = NULL;
	size_t len = 0;
	struct ergon_err err = {0};
	assert_int_equal(ergon_kernels_csv_render(sec, &csv, &len, &err), 0);
	assert_string_equal(csv, "case,impl,correct,timed,n,min,median,mean,baseline_mean,speedup\n"
				 "k,ref,pass,yes,2,9,10,10,,\n"
				 "k,mve,pass,yes,1,5,5,5,10,2\n"
				 "k,x,fail,no,,,,,,\n");
	free(csv);
	json_decref(sec);
}

/* The median's interval by hand (Conover, table A3 / the binomial sums):
 * n = 10: P(B <= 1) = 11/1024 = 0.0107, P(B <= 2) = 56/1024 = 0.0547, so
 * k = 2: [x_(2), x_(9)] with coverage 1 - 22/1024. n = 5: no rank reaches
 * 95 %, [min, max] covers 1 - 2/32 = 93.75 %. n = 20: P(B <= 5) =
 * 21700/2^20 = 0.0207, P(B <= 6) = 60460/2^20 = 0.0577: k = 6,
 * [x_(6), x_(15)]. n = 4000 (normal approximation): k = floor(2000 -
 * 0.98 sqrt(4000)) = floor(1938.02) = 1938. */
static void median_interval_by_hand(void **state)
{
	(void)state;
	struct ergon_err err = {0};
	double v[4000], lo, hi, cov;
	/* Shuffled: the function sorts its own copy. */
	for (size_t i = 0; i < 4000; i++)
		v[i] = (double)((i * 7919) % 4000 + 1);
	double ten[10] = {7, 3, 10, 1, 9, 2, 8, 4, 6, 5};
	assert_int_equal(ergon_kernels_median_ci(ten, 10, &lo, &hi, &cov, &err), 0);
	assert_true(lo == 2 && hi == 9);
	assert_true(fabs(cov - (1.0 - 22.0 / 1024.0)) < 1e-15);
	assert_true(ten[0] == 7); /* not modified */
	double five[5] = {50, 10, 40, 20, 30};
	assert_int_equal(ergon_kernels_median_ci(five, 5, &lo, &hi, &cov, &err), 0);
	assert_true(lo == 10 && hi == 50 && fabs(cov - 0.9375) < 1e-15);
	double twenty[20];
	for (size_t i = 0; i < 20; i++)
		twenty[i] = (double)(20 - i);
	assert_int_equal(ergon_kernels_median_ci(twenty, 20, &lo, &hi, &cov, &err), 0);
	assert_true(lo == 6 && hi == 15);
	assert_true(fabs(cov - (1.0 - 2.0 * 21700.0 / 1048576.0)) < 1e-12);
	assert_int_equal(ergon_kernels_median_ci(v, 4000, &lo, &hi, &cov, &err), 0);
	assert_true(lo == 1938 && hi == 4000 - 1938 + 1 && cov == 0.95);
	assert_int_equal(ergon_kernels_median_ci(v, 0, &lo, &hi, &cov, &err), ERGON_EUSAGE);
	/* In the section: the case with 4 mve samples {250, 260, 240, 250}. */
	json_t *sec = section_of(SAMPLES, "ref");
	const json_t *ci = json_object_get(get_impl(get_case(sec, "conv_b"), "mve"), "median_ci");
	assert_true(num(ci, "lo") == 240 && num(ci, "hi") == 260);
	assert_true(fabs(num(ci, "coverage") - 0.875) < 1e-15);
	json_decref(sec);
}

/* The repetition column: three repetitions of k,ref with counts
 *   rep 1: 10 20 30   -> median 20, interval [10, 30] (n = 3: k = 1)
 *   rep 2: 12 22 32   -> median 22
 *   rep 3: 11 24 90   -> median 24
 * so the medians are 20, 22, 24: mean 22, sd 2, t(0.975, 2) = 4.303
 * (NIST table), interval 22 -+ 4.303 x 2 / sqrt 3; the ± of each median
 * is the wider side of its interval: 10, 10, 66. Pooled, the nine counts
 * 10 11 12 20 22 24 30 32 90 have the nearest-rank quartiles x(3) = 12
 * and x(7) = 30 (ceil(9/4), ceil(27/4)), IQR 18, fences -15 and 57: one
 * slow outlier (90), none fast; the mean 251/9 = 27.9 lies inside the
 * pooled median's interval [x(2), x(8)] = [11, 32] (n = 9: k = 2,
 * coverage 1 - 2 x 10/512): they agree. */
static void repetitions_and_outliers(void **state)
{
	(void)state;
	json_t *sec = section_of("case,impl,correct,count,repetition\n"
				 "k,ref,pass,10,1\nk,ref,pass,20,1\nk,ref,pass,30,1\n"
				 "k,ref,pass,12,2\nk,ref,pass,22,2\nk,ref,pass,32,2\n"
				 "k,ref,pass,11,3\nk,ref,pass,24,3\nk,ref,pass,90,3\n",
				 "ref");
	const json_t *m = json_array_get(json_object_get(get_case(sec, "k"), "impls"), 0);
	const json_t *r = json_object_get(m, "repeat");
	assert_int_equal(json_integer_value(json_object_get(r, "n")), 3);
	const json_t *meds = json_object_get(r, "medians"), *u = json_object_get(r, "u");
	assert_true(json_number_value(json_array_get(meds, 0)) == 20 &&
		    json_number_value(json_array_get(meds, 1)) == 22 &&
		    json_number_value(json_array_get(meds, 2)) == 24);
	assert_true(json_number_value(json_array_get(u, 0)) == 10 &&
		    json_number_value(json_array_get(u, 2)) == 66);
	assert_true(json_number_value(json_object_get(r, "mean")) == 22);
	assert_true(fabs(json_number_value(json_object_get(r, "sd")) - 2) < 1e-12);
	double half = (json_number_value(json_object_get(r, "ci_hi")) -
		       json_number_value(json_object_get(r, "ci_lo"))) /
		      2;
	assert_true(fabs(half / (2 / sqrt(3)) - 4.303) < 0.0005);
	const json_t *o = json_object_get(m, "outliers");
	assert_true(json_number_value(json_object_get(o, "q1")) == 12 &&
		    json_number_value(json_object_get(o, "q3")) == 30);
	assert_true(json_number_value(json_object_get(o, "low_fence")) == -15 &&
		    json_number_value(json_object_get(o, "high_fence")) == 57);
	assert_int_equal(json_integer_value(json_object_get(o, "high")), 1);
	assert_int_equal(json_integer_value(json_object_get(o, "low")), 0);
	assert_true(strncmp(json_string_value(json_object_get(m, "mean_vs_median")), "agree", 5) ==
		    0);
	json_decref(sec);
	/* Preemption-like outliers: 1..10 and 500: the mean 555/11 = 50.45
	 * lies above the median's interval [x(2), x(10)] = [2, 10]. */
	sec = section_of("case,impl,correct,count\n"
			 "p,ref,pass,1\np,ref,pass,2\np,ref,pass,3\np,ref,pass,4\n"
			 "p,ref,pass,5\np,ref,pass,6\np,ref,pass,7\np,ref,pass,8\n"
			 "p,ref,pass,9\np,ref,pass,10\np,ref,pass,500\n",
			 "ref");
	m = json_array_get(json_object_get(get_case(sec, "p"), "impls"), 0);
	const char *mvm = json_string_value(json_object_get(m, "mean_vs_median"));
	assert_non_null(strstr(mvm, "disagree: the mean 50.4545 lies above"));
	assert_non_null(strstr(mvm, "trust the median (6)"));
	assert_null(json_object_get(m, "repeat"));
	json_decref(sec);
	/* A bad repetition is refused with its place. */
	refused("case,impl,correct,count,repetition\nk,ref,pass,10,0\n", ERGON_EPARSE,
		"bad.csv:2:15: repetition: '0' is not an integer in 1..100");
	refused("case,impl,correct,count,repetition\nk,ref,pass,10,101\n", ERGON_EPARSE,
		"repetition: '101'");
	refused("case,impl,correct,count,repetition\nk,ref,pass,10,x\n", ERGON_EPARSE,
		"repetition: 'x'");
}

/* valid_for_regression's rule at its edges, by hand: n 6 valid and 5 not;
 * the wider side 5 of a median 100 (5 %) valid, 5.01 not; a median of 0,
 * a failed or untimed case never. */
static void regression_rule_edges(void **state)
{
	(void)state;
	char why[256];
	assert_int_equal(ergon_kernels_regression_valid(1, 1, 6, 100, 95, 105, why, sizeof why), 1);
	assert_true(strncmp(why, "valid: correct, n = 6", 21) == 0);
	assert_int_equal(ergon_kernels_regression_valid(1, 1, 5, 100, 100, 100, why, sizeof why), 0);
	assert_true(strstr(why, "n = 5 < 6") != NULL);
	/* Asymmetric: the wider side decides (lo 99.5 is 0.5 %, hi 5.01 %). */
	assert_int_equal(ergon_kernels_regression_valid(1, 1, 50, 100, 99.5, 105.01, why, sizeof why), 0);
	assert_true(strstr(why, "+/-5.01 %") != NULL);
	assert_int_equal(ergon_kernels_regression_valid(1, 1, 50, 100, 94.99, 100, NULL, 0), 0);
	assert_int_equal(ergon_kernels_regression_valid(1, 1, 50, 0, 0, 0, NULL, 0), 0);
	assert_int_equal(ergon_kernels_regression_valid(0, 0, 0, NAN, NAN, NAN, why, sizeof why), 0);
	assert_true(strncmp(why, "not correct", 11) == 0);
	assert_int_equal(ergon_kernels_regression_valid(1, 0, 0, NAN, NAN, NAN, why, sizeof why), 0);
	assert_true(strncmp(why, "not timed", 9) == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(hand_computed_statistics), cmocka_unit_test(failure_is_never_timed),
	    cmocka_unit_test(wraparound_and_overhead),	cmocka_unit_test(bad_input),
	    cmocka_unit_test(baseline_absent),		cmocka_unit_test(csv_view),
	    cmocka_unit_test(median_interval_by_hand),	cmocka_unit_test(repetitions_and_outliers),
	    cmocka_unit_test(regression_rule_edges),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
