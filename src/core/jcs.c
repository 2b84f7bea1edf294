/* RFC 8785 canonical JSON: see include/ergon/jcs.h and docs/internals/jcs.md. */
#include "ergon/jcs.h"

#include "ergon/dynbuf.h"

#include <math.h>
#include <sodium.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Digits and exponent of v printed with p significant digits; returns 1
 * when that text reads back as exactly v. */
static int try_precision(double v, int p, char buf[40])
{
	snprintf(buf, 40, "%.*e", p - 1, v);
	return strtod(buf, NULL) == v;
}

/* The shortest decimal digits that round-trip to v (v > 0, finite), and
 * the decimal exponent n such that v = 0.d1d2...dk x 10^n.
 *
 * printf rounds correctly, so the p-digit form it prints is the closest
 * p-digit decimal, which is the candidate ECMAScript asks for. A p-digit
 * correctly rounded form round-trips for every p above the shortest one,
 * so the property is monotonic in p. Measured values mostly need 16 or 17
 * digits: test 16, then 15, and only then search 1..15 (two conversions
 * for most numbers instead of five). Integers below 2^53 are exact. */
static void shortest_digits(double v, char digits[20], int *k_out, int *n_out)
{
	char buf[40], best[40];
	int k = 0, exp10;
	if (v < 9007199254740992.0 && v == (double)(uint64_t)v) {
		/* An integer: its decimal digits are exact and shortest. */
		uint64_t u = (uint64_t)v;
		char tmp[24];
		int len = 0;
		while (u) {
			tmp[len++] = (char)('0' + (u % 10));
			u /= 10;
		}
		for (int i = 0; i < len; i++)
			digits[i] = tmp[len - 1 - i];
		k = len;
		exp10 = len - 1;
	} else {
		int p;
		if (!try_precision(v, 16, buf)) {
			p = 17;
			try_precision(v, 17, best);
		} else if (!try_precision(v, 15, best)) {
			p = 16;
			memcpy(best, buf, sizeof(best));
		} else {
			/* 15 works: the shortest is in [1, 15]. */
			int lo = 1, hi = 15;
			while (lo < hi) {
				int mid = (lo + hi) / 2;
				if (try_precision(v, mid, buf))
					hi = mid;
				else
					lo = mid + 1;
			}
			p = lo;
			try_precision(v, p, best);
		}
		(void)p;
		/* best is d[.ddd]e[+-]XX */
		const char *q = best;
		for (; *q != 'e'; q++) {
			if (*q >= '0' && *q <= '9')
				digits[k++] = *q;
		}
		exp10 = (int)strtol(q + 1, NULL, 10); /* bounded: printf wrote it */
	}
	while (k > 1 && digits[k - 1] == '0')
		k--;
	digits[k] = '\0';
	*k_out = k;
	*n_out = exp10 + 1;
}

int ergon_jcs_format_number(double v, char out[ERGON_JCS_NUMBER_MAX])
{
	if (!isfinite(v))
		return ERGON_ERANGE;
	if (v == 0.0) {
		out[0] = '0';
		out[1] = '\0';
		return 1;
	}
	char digits[20];
	int k, n;
	size_t o = 0;
	if (v < 0) {
		out[o++] = '-';
		v = -v;
	}
	shortest_digits(v, digits, &k, &n);
	if (k <= n && n <= 21) {
		/* Integer: digits then n-k zeros. */
		memcpy(out + o, digits, (size_t)k);
		o += (size_t)k;
		for (int i = 0; i < n - k; i++)
			out[o++] = '0';
	} else if (0 < n && n <= 21) {
		memcpy(out + o, digits, (size_t)n);
		o += (size_t)n;
		out[o++] = '.';
		memcpy(out + o, digits + n, (size_t)(k - n));
		o += (size_t)(k - n);
	} else if (-6 < n && n <= 0) {
		out[o++] = '0';
		out[o++] = '.';
		for (int i = 0; i < -n; i++)
			out[o++] = '0';
		memcpy(out + o, digits, (size_t)k);
		o += (size_t)k;
	} else {
		out[o++] = digits[0];
		if (k > 1) {
			out[o++] = '.';
			memcpy(out + o, digits + 1, (size_t)(k - 1));
			o += (size_t)(k - 1);
		}
		int e = n - 1;
		o += (size_t)snprintf(out + o, ERGON_JCS_NUMBER_MAX - o, "e%c%d", e < 0 ? '-' : '+',
				      e < 0 ? -e : e);
	}
	out[o] = '\0';
	return (int)o;
}

/* Canonical text is built in a dynbuf; 1 GiB is far above any report. */
#define JCS_MAX_BYTES ((size_t)1 << 30)

/* --- UTF-8 helpers ------------------------------------------------------ */

/* Decode one code point at s[*i] (len bytes); -1 on invalid UTF-8. */
static long utf8_next(const unsigned char *s, size_t len, size_t *i)
{
	unsigned char c = s[*i];
	long cp;
	size_t need;
	if (c < 0x80) {
		(*i)++;
		return c;
	} else if ((c & 0xE0) == 0xC0) {
		cp = c & 0x1F;
		need = 1;
	} else if ((c & 0xF0) == 0xE0) {
		cp = c & 0x0F;
		need = 2;
	} else if ((c & 0xF8) == 0xF0) {
		cp = c & 0x07;
		need = 3;
	} else {
		return -1;
	}
	for (size_t j = 1; j <= need; j++) {
		if (*i + j >= len || (s[*i + j] & 0xC0) != 0x80)
			return -1;
		cp = (cp << 6) | (s[*i + j] & 0x3F);
	}
	*i += need + 1;
	return cp;
}

/* Compare two UTF-8 strings by their UTF-16 code units (RFC 8785 3.2.3). */
static int utf16_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
	size_t i = 0, j = 0;
	unsigned pa = 0, pb = 0; /* pending low surrogates */
	for (;;) {
		unsigned ua, ub;
		int enda = (pa == 0 && i >= alen), endb = (pb == 0 && j >= blen);
		if (enda || endb)
			return enda && endb ? 0 : (enda ? -1 : 1);
		if (pa) {
			ua = pa;
			pa = 0;
		} else {
			long cp = utf8_next((const unsigned char *)a, alen, &i);
			if (cp < 0)
				cp = 0xFFFD;
			if (cp >= 0x10000) {
				ua = (unsigned)(0xD800 + ((cp - 0x10000) >> 10));
				pa = (unsigned)(0xDC00 + ((cp - 0x10000) & 0x3FF));
			} else {
				ua = (unsigned)cp;
			}
		}
		if (pb) {
			ub = pb;
			pb = 0;
		} else {
			long cp = utf8_next((const unsigned char *)b, blen, &j);
			if (cp < 0)
				cp = 0xFFFD;
			if (cp >= 0x10000) {
				ub = (unsigned)(0xD800 + ((cp - 0x10000) >> 10));
				pb = (unsigned)(0xDC00 + ((cp - 0x10000) & 0x3FF));
			} else {
				ub = (unsigned)cp;
			}
		}
		if (ua != ub)
			return ua < ub ? -1 : 1;
	}
}

static int put_string(struct ergon_dynbuf *b, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	ergon_dynbuf_add(b, "\"", 1);
	size_t i = 0;
	while (i < len) {
		unsigned char c = (unsigned char)s[i];
		const char *esc = NULL;
		switch (c) {
		case '"':
			esc = "\\\"";
			break;
		case '\\':
			esc = "\\\\";
			break;
		case '\b':
			esc = "\\b";
			break;
		case '\f':
			esc = "\\f";
			break;
		case '\n':
			esc = "\\n";
			break;
		case '\r':
			esc = "\\r";
			break;
		case '\t':
			esc = "\\t";
			break;
		default:
			break;
		}
		if (esc == NULL && c >= 0x20) {
			/* Everything else is written raw, after checking it is UTF-8. */
			size_t at = i;
			if (utf8_next((const unsigned char *)s, len, &i) < 0)
				return ERGON_EPARSE;
			ergon_dynbuf_add(b, s + at, i - at);
			continue;
		}
		if (esc != NULL) {
			ergon_dynbuf_add(b, esc, strlen(esc));
		} else {
			char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 0xF]};
			ergon_dynbuf_add(b, u, 6);
		}
		i++;
	}
	ergon_dynbuf_add(b, "\"", 1);
	return 0;
}

struct member {
	const char *key;
	size_t key_len;
	json_t *value;
};

static int member_cmp(const void *x, const void *y)
{
	const struct member *a = x, *b = y;
	return utf16_cmp(a->key, a->key_len, b->key, b->key_len);
}

#define JCS_MAX_DEPTH 512

static int put_value(struct ergon_dynbuf *b, const json_t *v, int depth, struct ergon_err *err)
{
	if (depth > JCS_MAX_DEPTH)
		return ergon_err_set(err, ERGON_ETOOBIG, "JSON nesting deeper than %d levels",
				     JCS_MAX_DEPTH);
	switch (json_typeof(v)) {
	case JSON_NULL:
		ergon_dynbuf_add(b, "null", 4);
		return 0;
	case JSON_TRUE:
		ergon_dynbuf_add(b, "true", 4);
		return 0;
	case JSON_FALSE:
		ergon_dynbuf_add(b, "false", 5);
		return 0;
	case JSON_INTEGER:
	case JSON_REAL: {
		char num[ERGON_JCS_NUMBER_MAX];
		double d = json_number_value(v);
		int n = ergon_jcs_format_number(d, num);
		if (n < 0)
			return ergon_err_set(err, ERGON_ERANGE,
					     "JSON number is not finite (JCS has no NaN/Infinity)");
		ergon_dynbuf_add(b, num, (size_t)n);
		return 0;
	}
	case JSON_STRING: {
		/* Write the raw value: string escaping only, the bytes stay. */
		const char *s = json_string_value(v);
		size_t len = json_string_length(v);
		if (put_string(b, s, len) != 0)
			return ergon_err_set(err, ERGON_EPARSE, "JSON string is not valid UTF-8");
		return 0;
	}
	case JSON_ARRAY: {
		ergon_dynbuf_add(b, "[", 1);
		for (size_t i = 0; i < json_array_size(v); i++) {
			if (i)
				ergon_dynbuf_add(b, ",", 1);
			int rc = put_value(b, json_array_get(v, i), depth + 1, err);
			if (rc)
				return rc;
		}
		ergon_dynbuf_add(b, "]", 1);
		return 0;
	}
	case JSON_OBJECT: {
		size_t n = json_object_size(v);
		struct member *m = n ? calloc(n, sizeof(*m)) : NULL;
		if (n && m == NULL)
			return ergon_err_set(err, ERGON_ENOMEM, "out of memory canonicalizing JSON");
		size_t i = 0;
		const char *key;
		size_t key_len;
		json_t *val;
		void *tmp;
		json_object_keylen_foreach_safe((json_t *)v, tmp, key, key_len, val)
		{
			m[i].key = key;
			m[i].key_len = key_len;
			m[i].value = val;
			i++;
		}
		if (n > 1)
			qsort(m, n, sizeof(*m), member_cmp);
		ergon_dynbuf_add(b, "{", 1);
		int rc = 0;
		for (i = 0; i < n && rc == 0; i++) {
			if (i)
				ergon_dynbuf_add(b, ",", 1);
			rc = put_string(b, m[i].key, m[i].key_len);
			if (rc) {
				rc = ergon_err_set(err, ERGON_EPARSE, "JSON key is not valid UTF-8");
				break;
			}
			ergon_dynbuf_add(b, ":", 1);
			rc = put_value(b, m[i].value, depth + 1, err);
		}
		ergon_dynbuf_add(b, "}", 1);
		free(m);
		return rc;
	}
	}
	return ergon_err_set(err, ERGON_EPARSE, "unknown JSON value type");
}

int ergon_jcs_canonicalize(const json_t *value, char **out, size_t *out_len,
			   struct ergon_err *err)
{
	struct ergon_dynbuf b;
	ergon_dynbuf_init(&b, JCS_MAX_BYTES);
	*out = NULL;
	*out_len = 0;
	int rc = put_value(&b, value, 0, err);
	if (rc == 0 && ergon_dynbuf_error(&b))
		rc = ergon_err_set(err, ergon_dynbuf_error(&b),
				   "canonical JSON: %s (limit %zu bytes)",
				   ergon_strerror(ergon_dynbuf_error(&b)), (size_t)JCS_MAX_BYTES);
	if (rc != 0) {
		ergon_dynbuf_free(&b);
		return rc;
	}
	*out = ergon_dynbuf_take(&b, out_len);
	if (*out == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "out of memory");
	return 0;
}

void ergon_sha256_hex(const void *data, size_t len, char hex[65])
{
	unsigned char h[crypto_hash_sha256_BYTES];
	crypto_hash_sha256(h, data, len);
	sodium_bin2hex(hex, 65, h, sizeof(h));
}

int ergon_report_digest(const json_t *obj, char id[72], struct ergon_err *err)
{
	if (!json_is_object(obj))
		return ergon_err_set(err, ERGON_EPARSE, "report is not a JSON object");
	/* A shallow copy shares the members; removing report_id from the copy
	 * leaves the caller's object untouched. */
	json_t *copy = json_copy((json_t *)obj);
	if (copy == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "out of memory");
	json_object_del(copy, "report_id");
	char *canon = NULL;
	size_t len = 0;
	int rc = ergon_jcs_canonicalize(copy, &canon, &len, err);
	json_decref(copy);
	if (rc)
		return rc;
	char hex[65];
	ergon_sha256_hex(canon, len, hex);
	free(canon);
	snprintf(id, 72, "sha256:%s", hex);
	return 0;
}
