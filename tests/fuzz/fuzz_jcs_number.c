/* Fuzz the shortest round-trip double formatter (ergon_jcs_format_number,
 * Ryu in src/core/jcs.c). The input's first 8 bytes are the double's bits.
 * Properties, each checked with the C library as the independent oracle:
 *  - strtod(format(x)) == x bit for bit (-0 prints "0", which reads +0);
 *  - no shorter rendering %.{1..k-1}e round-trips (k = digits printed);
 *  - when the correctly rounded k-digit form (%.{k-1}e) round-trips, the
 *    digits are exactly its digits (ECMAScript: the closest of the
 *    shortest);
 *  - the layout is ECMAScript Number::toString's: plain digits for
 *    exponents -7 < n <= 21, d.ddde+-x otherwise, no leading or trailing
 *    zeros in the digits, a lower-case e with an explicit sign. */
#include "ergon/jcs.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Digits (no sign, dot, leading zeros) and the decimal exponent n with
 * x = 0.d1d2... x 10^n, read back from the formatter's text. */
static int parse_layout(const char *s, char digits[32], int *k, int *n)
{
	const char *p = s;
	int nd = 0, int_digits = 0, lead_zeros = 0, seen_nonzero = 0, frac = 0;
	if (*p == '-')
		p++;
	for (; *p && *p != 'e'; p++) {
		if (*p == '.') {
			if (frac)
				return -1;
			frac = 1;
			continue;
		}
		if (*p < '0' || *p > '9')
			return -1;
		if (!seen_nonzero && *p == '0') {
			if (frac)
				lead_zeros++;
			continue;
		}
		seen_nonzero = 1;
		if (nd >= 31)
			return -1;
		digits[nd++] = *p;
		if (!frac)
			int_digits++;
	}
	digits[nd] = '\0';
	int e = 0;
	if (*p == 'e') {
		if (p[1] != '+' && p[1] != '-')
			return -1;
		e = (int)strtol(p + 1, NULL, 10);
		if (int_digits != 1)
			return -1; /* exponent form is d.ddd */
		*n = e + 1;
	} else {
		*n = int_digits ? int_digits : -lead_zeros;
	}
	/* Integers carry their zeros: strip them for the digit count. */
	while (nd > 1 && digits[nd - 1] == '0')
		digits[--nd] = '\0';
	*k = nd;
	return *p == 'e' ? 1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 8)
		return 0;
	uint64_t bits;
	memcpy(&bits, data, 8);
	double x;
	memcpy(&x, &bits, sizeof(x));
	char out[ERGON_JCS_NUMBER_MAX];
	int len = ergon_jcs_format_number(x, out);
	if (!isfinite(x)) {
		if (len != ERGON_ERANGE)
			abort();
		return 0;
	}
	if (len <= 0 || (size_t)len != strlen(out))
		abort();
	if (x == 0) {
		if (strcmp(out, "0") != 0)
			abort();
		return 0;
	}
	/* Round trip, bit for bit. */
	double back = strtod(out, NULL);
	if (memcmp(&back, &x, sizeof(x)) != 0)
		abort();
	if ((x < 0) != (out[0] == '-'))
		abort();
	char digits[32];
	int k = 0, n = 0;
	int expo = parse_layout(out, digits, &k, &n);
	if (expo < 0 || k < 1 || k > 17 || digits[0] == '0')
		abort();
	/* ECMAScript layout: exponent form exactly when n <= -6 or n > 21. */
	if (expo != (n <= -6 || n > 21))
		abort();
	/* Fixed notation never ends a fraction in 0. */
	if (!expo && strchr(out, '.') && out[len - 1] == '0')
		abort();
	/* Shortest: no %.{p}e with fewer digits reads back as x. */
	char buf[64];
	for (int p = 1; p < k; p++) {
		snprintf(buf, sizeof(buf), "%.*e", p - 1, x);
		if (strtod(buf, NULL) == x)
			abort();
	}
	/* Closest: the correctly rounded k-digit form, if it round-trips, is
	 * the one printed. */
	snprintf(buf, sizeof(buf), "%.*e", k - 1, x);
	if (strtod(buf, NULL) == x) {
		char want[32];
		int w = 0;
		for (const char *q = buf; *q && *q != 'e'; q++)
			if (*q >= '0' && *q <= '9')
				want[w++] = *q;
		while (w > 1 && want[w - 1] == '0')
			w--;
		want[w] = '\0';
		if (strcmp(want, digits) != 0)
			abort();
		int e10 = (int)strtol(strchr(buf, 'e') + 1, NULL, 10);
		if (e10 + 1 != n)
			abort();
	}
	return 0;
}
