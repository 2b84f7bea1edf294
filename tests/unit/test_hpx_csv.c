/* ergon_hpx_layers_csv's numbers against printf, the oracle: every counter
 * cell is the first of "%.15g", "%.16g", "%.17g" that strtod reads back as
 * the same double (integers below 10^15 as "%lld"), for integers, halves
 * and quarters on both sides of the fast paths' edges (10^13, 10^15), -0,
 * values that need 16 and 17 digits, tiny and huge ones, and random bits;
 * and the header, the text cells' quoting and the overflow column. */
#include "ergon/hpx_report.h"
#include "test_support.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void oracle(double v, char *out, size_t cap)
{
	if (v > -1e15 && v < 1e15 && v == (double)(long long)v && !(v == 0.0 && signbit(v))) {
		snprintf(out, cap, "%lld", (long long)v);
		return;
	}
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(out, cap, "%.*g", prec, v);
		if (strtod(out, NULL) == v)
			return;
	}
}

static uint64_t rng = 0x13198A2E03707344ull;
static uint64_t next(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return rng;
}

#define NV 4096

static void test_numbers(void **state)
{
	(void)state;
	static double v[NV];
	size_t n = 0;
	const double fixed[] = {0.0,	  -0.0,	       0.25,	  0.5,	     0.75,	-0.25,
				-0.5,	  17794.5,     75070.25,  105773.75, 1e13 - 0.25, 1e13,
				1e13 + 0.25, 1e13 + 0.5, 1e15 - 1, 1e15,      1e15 + 2,	 1e16,
				0.1,	  0.2,	       1.0 / 3.0, 0.125,     2.375,	1e-5,
				5e-324,	  DBL_MIN,     DBL_MAX,	  -DBL_MAX,  4.35,	0.30000000000000004,
				123456.789, 9007199254740993.0};
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
		v[n++] = fixed[i];
	for (int e = 0; e <= 16 && n + 34 < NV; e++)
		for (int q = -8; q <= 8; q++) {
			v[n++] = pow(10.0, e) + q * 0.25;
			v[n++] = -(pow(10.0, e) - 1.0 + q * 0.25);
		}
	while (n < NV) {
		uint64_t r = next();
		if (r % 3 == 0) {
			uint64_t bits = next();
			double d;
			memcpy(&d, &bits, sizeof d);
			v[n++] = isfinite(d) ? d : 1.5;
		} else {
			v[n++] = (double)(next() % 100000000000ull) / (double)(1u << (r % 5));
		}
	}
	/* One layer per value, its one counter the value. */
	json_t *layers = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(layers, json_pack("{s:I, s:s, s:{s:f}, s:b}", "id",
							(json_int_t)i, "op", "ADD", "counters",
							"C", v[i], "overflow", (int)(i % 5 == 0)));
	char *csv = NULL;
	size_t len = 0;
	assert_int_equal(ergon_hpx_layers_csv(layers, &csv, &len, NULL), 0);
	assert_int_equal(strlen(csv), len);
	const char *line = csv;
	const char *nl = strchr(line, '\n');
	assert_non_null(nl);
	assert_int_equal(nl - line, (long)strlen("index,op,C,overflow"));
	assert_memory_equal(line, "index,op,C,overflow", strlen("index,op,C,overflow"));
	line = nl + 1;
	for (size_t i = 0; i < n; i++) {
		char want[128], num[64];
		oracle(v[i], num, sizeof num);
		snprintf(want, sizeof want, "%zu,ADD,%s,%d", i, num, i % 5 == 0);
		nl = strchr(line, '\n');
		assert_non_null(nl);
		if ((size_t)(nl - line) != strlen(want) || memcmp(line, want, strlen(want)) != 0)
			fail_msg("value %.17g (row %zu): csv has \"%.*s\", printf says \"%s\"", v[i],
				 i, (int)(nl - line), line, want);
		line = nl + 1;
	}
	assert_int_equal(*line, '\0');
	free(csv);
	json_decref(layers);
}

static void test_cells(void **state)
{
	(void)state;
	json_t *layers = json_loads(
	    "[{\"id\": 0, \"op\": \"A,B\", \"counters\": {\"X\": 1, \"Y\": -2}, \"overflow\": true},"
	    " {\"id\": 1, \"op\": \"say \\\"hi\\\"\", \"counters\": {\"Y\": 2.5, \"Z\": 7},"
	    " \"overflow\": false}]",
	    0, NULL);
	assert_non_null(layers);
	char *csv = NULL;
	size_t len = 0;
	assert_int_equal(ergon_hpx_layers_csv(layers, &csv, &len, NULL), 0);
	assert_string_equal(csv, "index,op,X,Y,Z,overflow\n"
				 "0,\"A,B\",1,-2,,1\n"
				 "1,\"say \"\"hi\"\"\",,2.5,7,0\n");
	free(csv);
	json_decref(layers);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_numbers),
	    cmocka_unit_test(test_cells),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
