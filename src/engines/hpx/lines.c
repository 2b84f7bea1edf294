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

static void drop_line(struct hpx_lines *l)
{
	if (!l->dropped)
		l->first_dropped_lineno = l->lineno;
	l->dropped++;
}

int hpx_lines_feed(struct hpx_lines *l, const char *data, size_t len, hpx_line_fn fn, void *ctx)
{
	const char *p = data;
	const char *end = data + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t seg = nl ? (size_t)(nl - p) : (size_t)(end - p);
		if (l->dropping) {
			/* Inside an overlong line: skip to its newline. */
			if (!nl)
				return 0;
			l->dropping = false;
			l->lineno++;
			p = nl + 1;
			continue;
		}
		if (l->len + seg > l->cap) {
			drop_line(l);
			l->len = 0;
			if (!nl) {
				l->dropping = true;
				return 0;
			}
			l->lineno++;
			p = nl + 1;
			continue;
		}
		if (!nl) {
			memcpy(l->buf + l->len, p, seg);
			l->len += seg;
			return 0;
		}
		int rc;
		if (l->len == 0) {
			/* The common case: the whole line is in this chunk. */
			rc = fn(ctx, p, seg, l->lineno);
		} else {
			memcpy(l->buf + l->len, p, seg);
			rc = fn(ctx, l->buf, l->len + seg, l->lineno);
			l->len = 0;
		}
		l->lineno++;
		p = nl + 1;
		if (rc)
			return rc;
	}
	return 0;
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

void hpx_strip(const char **s, size_t *n)
{
	const char *a = *s;
	size_t len = *n;
	while (len && is_py_space((unsigned char)a[0])) {
		a++;
		len--;
	}
	while (len && is_py_space((unsigned char)a[len - 1]))
		len--;
	*s = a;
	*n = len;
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

bool hpx_py_int(const char *s, size_t n, double *out, int64_t *out_i64, bool *fits_i64)
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

bool hpx_py_float(const char *s, size_t n, double *out)
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
