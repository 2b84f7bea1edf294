/* HPX line splitter and Python-compatible scalar parsing. */
#include "hpx_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int hpx_lines_init(struct hpx_lines *l, size_t line_max, struct ergon_err *err)
{
	memset(l, 0, sizeof(*l));
	l->buf = malloc(line_max);
	if (!l->buf)
		return ergon_err_set(err, ERGON_ENOMEM,
				     "hpx: cannot allocate a %zu-byte line buffer", line_max);
	l->cap = line_max;
	l->lineno = 1;
	return 0;
}

void hpx_lines_cleanup(struct hpx_lines *l)
{
	free(l->buf);
	l->buf = NULL;
}

int hpx_lines_finish(struct hpx_lines *l, hpx_line_fn fn, void *ctx)
{
	if (l->dropping) {
		l->dropping = false;
		return 0;
	}
	if (l->len == 0)
		return 0;
	size_t n = l->len;
	l->len = 0;
	int rc = fn(ctx, l->buf, n, l->lineno);
	l->lineno++;
	return rc;
}

static bool is_py_space(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
}

/* Length of a Unicode whitespace character (U+0085, U+00A0, U+1680,
 * U+2000..U+200A, U+2028, U+2029, U+202F, U+205F, U+3000) starting at s,
 * or 0. */
static size_t uni_space_at(const unsigned char *s, size_t n)
{
	if (n >= 2 && s[0] == 0xC2 && (s[1] == 0x85 || s[1] == 0xA0))
		return 2;
	if (n >= 3 && s[0] == 0xE1 && s[1] == 0x9A && s[2] == 0x80)
		return 3;
	if (n >= 3 && s[0] == 0xE2 && s[1] == 0x80 &&
	    (s[2] <= 0x8A || s[2] == 0xA8 || s[2] == 0xA9 || s[2] == 0xAF))
		return 3;
	if (n >= 3 && s[0] == 0xE2 && s[1] == 0x81 && s[2] == 0x9F)
		return 3;
	if (n >= 3 && s[0] == 0xE3 && s[1] == 0x80 && s[2] == 0x80)
		return 3;
	return 0;
}

/* Same, for a character ending at s[n-1]. */
static size_t uni_space_before(const unsigned char *s, size_t n)
{
	if (n >= 2 && uni_space_at(s + n - 2, 2) == 2)
		return 2;
	if (n >= 3 && uni_space_at(s + n - 3, 3) == 3)
		return 3;
	return 0;
}

void hpx_strip(const char **s, size_t *n)
{
	const unsigned char *a = (const unsigned char *)*s;
	size_t len = *n;
	for (;;) {
		size_t k = 0;
		if (len && is_py_space(a[0]))
			k = 1;
		else if (len && a[0] >= 0x80)
			k = uni_space_at(a, len);
		if (!k)
			break;
		a += k;
		len -= k;
	}
	for (;;) {
		size_t k = 0;
		if (len && is_py_space(a[len - 1]))
			k = 1;
		else if (len && a[len - 1] >= 0x80)
			k = uni_space_before(a, len);
		if (!k)
			break;
		len -= k;
	}
	*s = (const char *)a;
	*n = len;
}

/* Python's int() and float() accept any Unicode decimal digit (category
 * Nd) and Unicode whitespace around the number; they are mapped to ASCII
 * first (CPython's _PyUnicode_TransformDecimalAndSpaceToASCII). The zero of
 * every Nd run of ten in Unicode 14 (Python 3.11): */
static const uint32_t nd_zero[] = {
    0x0660,  0x06F0,  0x07C0,  0x0966,	0x09E6,	 0x0A66,  0x0AE6,  0x0B66,  0x0BE6,  0x0C66,
    0x0CE6,  0x0D66,  0x0DE6,  0x0E50,	0x0ED0,	 0x0F20,  0x1040,  0x1090,  0x17E0,  0x1810,
    0x1946,  0x19D0,  0x1A80,  0x1A90,	0x1B50,	 0x1BB0,  0x1C40,  0x1C50,  0xA620,  0xA8D0,
    0xA900,  0xA9D0,  0xA9F0,  0xAA50,	0xABF0,	 0xFF10,  0x104A0, 0x10D30, 0x11066, 0x110F0,
    0x11136, 0x111D0, 0x112F0, 0x11450, 0x114D0, 0x11650, 0x116C0, 0x11730, 0x118E0, 0x11950,
    0x11C50, 0x11D50, 0x11DA0, 0x16A60, 0x16AC0, 0x16B50, 0x1D7CE, 0x1D7D8, 0x1D7E2, 0x1D7EC,
    0x1D7F6, 0x1E140, 0x1E2F0, 0x1E950, 0x1FBF0,
};

static bool is_uni_space(uint32_t cp)
{
	return cp == 0x85 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) ||
	       cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

/* Decode one UTF-8 sequence at s (n bytes left); 0 when invalid. */
static size_t utf8_next(const unsigned char *s, size_t n, uint32_t *cp)
{
	unsigned char c = s[0];
	size_t len = c < 0x80		      ? 1
		     : c >= 0xc2 && c <= 0xdf ? 2
		     : c >= 0xe0 && c <= 0xef ? 3
		     : c >= 0xf0 && c <= 0xf4 ? 4
					      : 0;
	if (len == 0 || len > n)
		return 0;
	uint32_t v = len == 1 ? c : len == 2 ? (c & 0x1fu) : len == 3 ? (c & 0x0fu) : (c & 0x07u);
	for (size_t k = 1; k < len; k++) {
		if ((s[k] & 0xc0) != 0x80)
			return 0;
		v = (v << 6) | (s[k] & 0x3fu);
	}
	if ((len == 3 && v < 0x800) || (len == 4 && (v < 0x10000 || v > 0x10FFFF)) ||
	    (v >= 0xD800 && v <= 0xDFFF))
		return 0;
	*cp = v;
	return len;
}

/* Map a cell with non-ASCII bytes to ASCII (digits and spaces); false when
 * some character is neither ASCII, a decimal digit nor whitespace. */
static bool to_ascii(const char *s, size_t n, char *out, size_t cap, size_t *outn)
{
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		uint32_t cp = 0;
		size_t len = utf8_next((const unsigned char *)s + i, n - i, &cp);
		if (len == 0 || o + 1 >= cap)
			return false;
		i += len;
		if (cp < 0x80) {
			out[o++] = (char)cp;
			continue;
		}
		if (is_uni_space(cp)) {
			out[o++] = ' ';
			continue;
		}
		bool digit = false;
		for (size_t k = 0; k < sizeof(nd_zero) / sizeof(nd_zero[0]); k++) {
			if (cp >= nd_zero[k] && cp < nd_zero[k] + 10) {
				out[o++] = (char)('0' + (cp - nd_zero[k]));
				digit = true;
				break;
			}
		}
		if (!digit)
			return false;
	}
	*outn = o;
	return true;
}

static bool has_high(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] >= 0x80)
			return true;
	return false;
}

/* Copies the digits of s[0..n) without '_' separators into out (NUL
 * terminated), checking that every '_' sits between two digits. Returns the
 * number of digits, or 0 when the run is malformed. */
static size_t copy_digits(const char *s, size_t n, char *out, size_t out_cap, size_t *used)
{
	size_t i = 0, k = 0;
	while (i < n) {
		char c = s[i];
		if (c >= '0' && c <= '9') {
			if (k + 1 >= out_cap)
				return 0;
			out[k++] = c;
			i++;
		} else if (c == '_' && k > 0 && i + 1 < n && s[i + 1] >= '0' && s[i + 1] <= '9' &&
			   s[i - 1] != '_') {
			i++;
		} else {
			break;
		}
	}
	out[k] = '\0';
	*used = i;
	return k;
}

static bool py_int_ascii(const char *s, size_t n, double *out, int64_t *out_i64, bool *fits_i64)
{
	hpx_strip(&s, &n);
	if (n == 0)
		return false;
	bool neg = false;
	size_t i = 0;
	if (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-';
		i = 1;
	}
	if (i >= n || s[i] < '0' || s[i] > '9')
		return false;
	/* Fast path: up to 18 plain digits fit an int64 exactly. */
	uint64_t v = 0;
	size_t j = i;
	bool plain = true;
	for (; j < n; j++) {
		char c = s[j];
		if (c >= '0' && c <= '9') {
			if (j - i >= 18) {
				plain = false;
				break;
			}
			v = v * 10u + (uint64_t)(c - '0');
		} else {
			plain = false;
			break;
		}
	}
	if (plain) {
		int64_t iv = neg ? -(int64_t)v : (int64_t)v;
		if (out_i64)
			*out_i64 = iv;
		if (fits_i64)
			*fits_i64 = true;
		*out = (double)iv;
		return true;
	}
	char digits[512];
	size_t used = 0;
	size_t nd = copy_digits(s + i, n - i, digits + 1, sizeof(digits) - 1, &used);
	if (nd == 0 || i + used != n)
		return false;
	digits[0] = neg ? '-' : '+';
	errno = 0;
	double d = strtod(digits, NULL);
	/* strtod rounds correctly, as Python's float(int) does; beyond DBL_MAX
	 * Python raises OverflowError in float(), so such a cell is refused. */
	if (errno == ERANGE || !isfinite(d))
		return false;
	*out = d;
	if (fits_i64) {
		*fits_i64 = false;
		char *e = NULL;
		errno = 0;
		long long ll = strtoll(digits, &e, 10);
		if (errno == 0 && e && *e == '\0') {
			*fits_i64 = true;
			if (out_i64)
				*out_i64 = (int64_t)ll;
		}
	}
	return true;
}

static bool py_float_ascii(const char *s, size_t n, double *out)
{
	hpx_strip(&s, &n);
	if (n == 0)
		return false;
	char buf[600];
	size_t k = 0, i = 0;
	if (s[0] == '+' || s[0] == '-') {
		buf[k++] = s[0];
		i = 1;
	}
	size_t used = 0;
	size_t nint = copy_digits(s + i, n - i, buf + k, sizeof(buf) - k - 8, &used);
	k += nint;
	i += used;
	size_t nfrac = 0;
	if (i < n && s[i] == '.') {
		buf[k++] = '.';
		i++;
		nfrac = copy_digits(s + i, n - i, buf + k, sizeof(buf) - k - 8, &used);
		if (nfrac == 0 && used != 0)
			return false;
		k += nfrac;
		i += used;
	}
	if (nint == 0 && nfrac == 0)
		return false;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		buf[k++] = 'e';
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			buf[k++] = s[i++];
		size_t nexp = copy_digits(s + i, n - i, buf + k, sizeof(buf) - k - 2, &used);
		if (nexp == 0)
			return false;
		k += nexp;
		i += used;
	}
	if (i != n)
		return false;
	buf[k] = '\0';
	errno = 0;
	double d = strtod(buf, NULL);
	if (!isfinite(d))
		return false;
	*out = d;
	return true;
}

bool hpx_py_int(const char *s, size_t n, double *out, int64_t *out_i64, bool *fits_i64)
{
	if (!has_high(s, n))
		return py_int_ascii(s, n, out, out_i64, fits_i64);
	char buf[512];
	size_t m = 0;
	return to_ascii(s, n, buf, sizeof(buf), &m) && py_int_ascii(buf, m, out, out_i64, fits_i64);
}

bool hpx_py_float(const char *s, size_t n, double *out)
{
	if (!has_high(s, n))
		return py_float_ascii(s, n, out);
	char buf[512];
	size_t m = 0;
	return to_ascii(s, n, buf, sizeof(buf), &m) && py_float_ascii(buf, m, out);
}
