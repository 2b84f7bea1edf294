/* The shared number parser (ergon_parse_double, ergon_parse_double_n):
 * a value that underflows is refused with the reason, never read as the 0
 * or the denormal that strtod makes of it; an exact zero written with a
 * large exponent is 0. The bounds are IEEE 754 binary64's: DBL_MIN =
 * 2^-1022 = 2.2250738585072014e-308 is the smallest normal double, the
 * denormals run down to 2^-1074 = 4.9406564584124654e-324. */
#include "ergon/parse.h"
#include "test_support.h"

#include <float.h>
#include <math.h>
#include <string.h>

static void underflow_is_refused(void **state)
{
	(void)state;
	/* 1e-400: below even the smallest denormal (strtod gives 0);
	 * 1e-310 and 4.9406564584124654e-324: denormals; 2.2e-308: a hair
	 * under DBL_MIN, so a denormal too. */
	static const char *const under[] = {
	    "1e-400",	"-1e-400",     "1e-310", "-1e-310", "4.9406564584124654e-324",
	    "2.2e-308", "0.00001e-304"};
	for (size_t i = 0; i < sizeof under / sizeof under[0]; i++) {
		double v = 12345.0;
		assert_int_equal(ergon_parse_double_n(under[i], strlen(under[i]), &v),
				 ERGON_ERANGE);
		assert_true(v == 12345.0); /* not written */
		struct ergon_err err = {0};
		assert_int_equal(ergon_parse_double(under[i], "--trim-s", &v, &err), ERGON_ERANGE);
		assert_true(v == 12345.0);
		assert_non_null(strstr(err.msg, "--trim-s: '"));
		assert_non_null(strstr(err.msg, under[i]));
		assert_non_null(strstr(err.msg, "' underflows: its magnitude is under "
						"2.2250738585072014e-308 (DBL_MIN"));
	}
}

static void zero_and_smallest_normal_are_taken(void **state)
{
	(void)state;
	struct ergon_err err = {0};
	double v = 1.0;
	/* An exact zero is 0 whatever its exponent says. */
	assert_int_equal(ergon_parse_double("0e-500", "x", &v, &err), 0);
	assert_true(v == 0.0);
	v = 1.0;
	assert_int_equal(ergon_parse_double("0.0", "x", &v, &err), 0);
	assert_true(v == 0.0);
	/* DBL_MIN itself (2^-1022) and 1e-307 are normal. */
	assert_int_equal(ergon_parse_double("2.2250738585072014e-308", "x", &v, &err), 0);
	assert_true(v == ldexp(1.0, -1022));
	assert_int_equal(ergon_parse_double("1e-307", "x", &v, &err), 0);
	assert_true(v > 0.0 && v == 1e-307);
	assert_int_equal(ergon_parse_double(" 0.25 ", "x", &v, &err), 0);
	assert_true(v == 0.25);
}

static void overflow_and_text_stay_not_finite(void **state)
{
	(void)state;
	struct ergon_err err = {0};
	double v = 1.0;
	/* Overflow is +-Inf: refused as not finite (EPARSE), as before. */
	assert_int_equal(ergon_parse_double("1e400", "--window-s", &v, &err), ERGON_EPARSE);
	assert_non_null(strstr(err.msg, "--window-s: '1e400' is not a finite number"));
	double inf = 0.0;
	assert_int_equal(ergon_parse_double_n("1e400", 5, &inf), 0);
	assert_true(isinf(inf) && inf > 0);
	assert_int_equal(ergon_parse_double("abc", "x", &v, &err), ERGON_EPARSE);
	assert_int_equal(ergon_parse_double_n("1e-400x", 7, &v), ERGON_EPARSE);
	assert_true(v == 1.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(underflow_is_refused),
	    cmocka_unit_test(zero_and_smallest_normal_are_taken),
	    cmocka_unit_test(overflow_and_text_stay_not_finite),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
