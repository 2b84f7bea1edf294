/* The row fast path reads counters eight bytes at a time where the line has
 * them and byte by byte near its end. Every counter value below is checked
 * against libc's strtod of the same digits (an independent reader), for
 * numbers of 1 to 20 digits, with leading zeros, at every distance from the
 * end of the line (so each one is read by words, by bytes, and by both), and
 * next to text cells holding bytes the word scan must not mistake for digits
 * or separators (0xFA-0xFF, ':', '/', spaces). One iteration with the mean:
 * the aggregated value is the cell's value. */
#include "ergon/hpx.h"
#include "test_support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const numbers[] = {"0",
				      "7",
				      "42",
				      "100",
				      "12345678",
				      "123456789",
				      "99999999",
				      "100000000",
				      "4294967295",
				      "000000000042",
				      "123456789012345678",
				      "999999999999999999",
				      "1000000000000000000",
				      "00000000000000000042",
				      "18446744073709551615",
				      "0000000"};

static const char *const ops[] = {"CONV_2D",
				  "A",
				  "DEPTHWISE_CONV_2D:0000000000017",
				  "x\xfa\xfb/:",
				  "op with spaces",
				  "\xff\xff\xff\xff\xff\xff\xff\xff\xff"};

/* Parse one iteration of one row "0,<op>,<a>,<b>,<pad>" and return the two
 * counters (mean of one sample = the sample). pad is a text column of
 * `padlen` 'z' bytes after the counters, so that b sits at every distance
 * from the end of the line. */
static void parse_row(const char *op, const char *a, const char *b, size_t padlen, double *va,
		      double *vb)
{
	char pad[32];
	memset(pad, 'z', padlen);
	pad[padlen] = '\0';
	char *s = ts_strf("--- HPX_START ---\n--- HPX_ITER 0 ---\n"
			  "\"Layer\",\"Op\",\"C_A\",\"C_B\",\"overflow\"%s\n"
			  "0,%s,%s,%s,0%s%s\n--- HPX_END ---\n",
			  padlen ? ",\"name\"" : "", op, a, b, padlen ? "," : "", pad);
	struct ergon_hpx_parser *p = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_hpx_parser_new(NULL, &p, &err), 0);
	assert_int_equal(ergon_hpx_parser_feed(p, s, strlen(s), &err), ERGON_HPX_DONE);
	assert_int_equal(ergon_hpx_parser_finish(p, &err), ERGON_HPX_DONE);
	struct ergon_pmu_result *r = NULL;
	assert_int_equal(ergon_hpx_parser_result(p, ERGON_HPX_AGG_MEAN, 0, &r, &err), 0);
	assert_int_equal(r->layers.n, 1);
	assert_int_equal(r->parse_errors, 0);
	const struct ergon_pmu_layer *L = &r->layers.layers[0];
	*va = *vb = NAN;
	for (size_t k = 0; k < L->ncounters; k++) {
		if (strcmp(L->counters[k].name, "C_A") == 0)
			*va = L->counters[k].value;
		else if (strcmp(L->counters[k].name, "C_B") == 0)
			*vb = L->counters[k].value;
	}
	ergon_pmu_result_free(r);
	ergon_hpx_parser_free(p);
	free(s);
}

static void test_numbers_everywhere(void **state)
{
	(void)state;
	size_t nn = sizeof(numbers) / sizeof(numbers[0]);
	size_t no = sizeof(ops) / sizeof(ops[0]);
	for (size_t i = 0; i < nn; i++) {
		for (size_t j = 0; j < nn; j++) {
			for (size_t padlen = 0; padlen <= 9; padlen++) {
				const char *op = ops[(i + j + padlen) % no];
				double va, vb;
				parse_row(op, numbers[i], numbers[j], padlen, &va, &vb);
				double wa = strtod(numbers[i], NULL), wb = strtod(numbers[j], NULL);
				if (va != wa || vb != wb) {
					print_error("row 0,%s,%s,%s pad %zu: got %.17g %.17g, want "
						    "%.17g %.17g\n",
						    op, numbers[i], numbers[j], padlen, va, vb, wa,
						    wb);
					fail();
				}
			}
		}
	}
}

/* A non-digit right after digits ends the number only where it is a comma:
 * anything else makes the cell a refused (parse error) cell, on both paths. */
static long parse_errors_of(const char *row)
{
	char *s = ts_strf("--- HPX_START ---\n--- HPX_ITER 0 ---\n"
			  "\"Layer\",\"Op\",\"C_A\",\"C_B\",\"overflow\",\"name\",\"C_C\"\n"
			  "%s\n--- HPX_END ---\n",
			  row);
	struct ergon_hpx_parser *p = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_hpx_parser_new(NULL, &p, &err), 0);
	assert_int_equal(ergon_hpx_parser_feed(p, s, strlen(s), &err), ERGON_HPX_DONE);
	assert_int_equal(ergon_hpx_parser_finish(p, &err), ERGON_HPX_DONE);
	struct ergon_hpx_stats st;
	ergon_hpx_parser_stats(p, &st);
	ergon_hpx_parser_free(p);
	free(s);
	return (long)st.parse_errors;
}

/* A non-digit right after digits ends the number only where it is a comma:
 * anything else makes the cell a refused (parse error) cell. Each bad cell
 * is tried first in the row (read by words: the rest of the row is plain)
 * and last (read by bytes). */
static void test_bad_cells(void **state)
{
	(void)state;
	const char *const bad[] = {"12a",  "1234567\xfa", "123456789:1", "1.5e", "12 3", "+-1",
				   "12:4", "1;",	  "9999/",	 "1?2",	 "7@",	 "1\xff"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *first = ts_strf("0,CONV_2D,%s,12345678,0,zzzzzzzz,1", bad[i]);
		char *last = ts_strf("0,CONV_2D,1,12345678,0,zzzzzzzz,%s", bad[i]);
		long ef = parse_errors_of(first), el = parse_errors_of(last);
		if (ef != 1 || el != 1) {
			print_error("cell '%s': %ld parse errors first, %ld last; want 1 and 1\n",
				    bad[i], ef, el);
			fail();
		}
		free(first);
		free(last);
	}
	/* The same rows with good cells: no error (the helper can tell). */
	assert_int_equal(parse_errors_of("0,CONV_2D,12,12345678,0,zzzzzzzz,1"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_numbers_everywhere),
	    cmocka_unit_test(test_bad_cells),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
