/* RFC 8785 canonical JSON: see include/ergon/jcs.h and docs/internals/jcs.md. */
#include "ergon/jcs.h"

#include "ergon/dynbuf.h"
#include "ergon/sha256.h"
#include "jcs_internal.h"
#include "jcs_pow5.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- Shortest round-trip digits (Ryu) ------------------------------------
 *
 * Ulf Adams, "Ryu: fast float-to-string conversion", PLDI 2018. For a
 * finite v > 0 with IEEE fields (mantissa, exponent), v and the two
 * midpoints to its neighbours are scaled by a power of ten held as a
 * 125-bit fixed-point number (src/core/jcs_pow5.h); digits are then removed
 * while the interval between the midpoints still holds the shortened
 * value. Exact: the tables carry enough bits that every truncation below
 * is the truncation of the exact product (the paper's theorem), and the
 * trailing-zero flags decide the cases the truncation alone cannot. The
 * result is the shortest decimal that reads back as v (round half to even,
 * so the interval is closed when the mantissa is even) and, of those, the
 * closest to v — ECMAScript Number::toString's s, k and n. */
__extension__ typedef unsigned __int128 jcs_u128;

static inline uint32_t pow5bits(int32_t e)
{
	/* ceil(log2(5^e)) for 0 <= e <= 3528; 1 for e = 0. */
	return (uint32_t)(((uint32_t)e * 1217359u) >> 19) + 1u;
}

static inline uint32_t log10pow2(int32_t e)
{
	/* floor(log10(2^e)) for 0 <= e <= 1650. */
	return ((uint32_t)e * 78913u) >> 18;
}

static inline uint32_t log10pow5(int32_t e)
{
	/* floor(log10(5^e)) for 0 <= e <= 2620. */
	return ((uint32_t)e * 732923u) >> 20;
}

static inline uint32_t pow5factor(uint64_t v)
{
	uint32_t count = 0;
	while (v % 5 == 0) {
		v /= 5;
		count++;
	}
	return count;
}

static inline int multiple_of_pow5(uint64_t v, uint32_t p)
{
	return pow5factor(v) >= p;
}

static inline int multiple_of_pow2(uint64_t v, uint32_t p)
{
	return (v & ((1ull << p) - 1)) == 0;
}

/* (m * mul) >> j for the 128-bit mul and 64 < j < 192. */
static inline uint64_t mul_shift64(uint64_t m, const uint64_t mul[2], int32_t j)
{
	jcs_u128 b0 = (jcs_u128)m * mul[0];
	jcs_u128 b2 = (jcs_u128)m * mul[1];
	return (uint64_t)(((b0 >> 64) + b2) >> (j - 64));
}

/* Drop the last decimal digit of vr, vp and vm; returns vr's. */
static inline uint8_t drop_digit(uint64_t *vr, uint64_t *vp, uint64_t *vm)
{
	uint8_t last = (uint8_t)(*vr % 10);
	*vr /= 10;
	*vp /= 10;
	*vm /= 10;
	return last;
}

/* Shortest digits of v (finite, > 0) as an integer `output` and the decimal
 * exponent: v ~ output x 10^exp10. */
static void ryu_d2d(double v, uint64_t *output, int32_t *exp10)
{
	uint64_t bits;
	memcpy(&bits, &v, sizeof(bits));
	const uint64_t ieee_m = bits & ((1ull << 52) - 1);
	const uint32_t ieee_e = (uint32_t)((bits >> 52) & 0x7ffu);
	int32_t e2;
	uint64_t m2;
	if (ieee_e == 0) {
		e2 = 1 - 1023 - 52 - 2;
		m2 = ieee_m;
	} else {
		e2 = (int32_t)ieee_e - 1023 - 52 - 2;
		m2 = (1ull << 52) | ieee_m;
	}
	const int accept_bounds = (m2 & 1) == 0;
	/* The interval [mm, mp] of reals that round to v, scaled by 4: mv = 4
	 * m2, mp = mv + 2, mm = mv - 1 - mm_shift (the lower gap is half as
	 * wide at a power of two). */
	const uint64_t mv = 4 * m2;
	const uint32_t mm_shift = ieee_m != 0 || ieee_e <= 1;
	uint64_t vr, vp, vm;
	int32_t e10;
	int vm_tz = 0, vr_tz = 0;
	if (e2 >= 0) {
		const uint32_t q = log10pow2(e2) - (e2 > 3);
		e10 = (int32_t)q;
		const int32_t k = JCS_POW5_INV_BITCOUNT + (int32_t)pow5bits((int32_t)q) - 1;
		const int32_t i = -e2 + (int32_t)q + k;
		vr = mul_shift64(mv, jcs_pow5_inv[q], i);
		vp = mul_shift64(mv + 2, jcs_pow5_inv[q], i);
		vm = mul_shift64(mv - 1 - mm_shift, jcs_pow5_inv[q], i);
		if (q <= 21) {
			/* Only one of mp, mv, mm can be a multiple of 5. */
			if (mv % 5 == 0)
				vr_tz = multiple_of_pow5(mv, q);
			else if (accept_bounds)
				vm_tz = multiple_of_pow5(mv - 1 - mm_shift, q);
			else
				vp -= (uint64_t)multiple_of_pow5(mv + 2, q);
		}
	} else {
		const uint32_t q = log10pow5(-e2) - (-e2 > 1);
		e10 = (int32_t)q + e2;
		const int32_t i = -e2 - (int32_t)q;
		const int32_t k = (int32_t)pow5bits(i) - JCS_POW5_BITCOUNT;
		const int32_t j = (int32_t)q - k;
		vr = mul_shift64(mv, jcs_pow5[i], j);
		vp = mul_shift64(mv + 2, jcs_pow5[i], j);
		vm = mul_shift64(mv - 1 - mm_shift, jcs_pow5[i], j);
		if (q <= 1) {
			/* mv = 4 m2 has at least two trailing zero bits. */
			vr_tz = 1;
			if (accept_bounds)
				vm_tz = mm_shift == 1;
			else
				--vp;
		} else if (q < 63) {
			vr_tz = multiple_of_pow2(mv, q);
		}
	}
	int32_t removed = 0;
	uint8_t last = 0;
	uint64_t out;
	if (vm_tz || vr_tz) {
		/* The rare general case: exact ties and intervals that end on a
		 * shortened value. */
		while (vp / 10 > vm / 10) {
			vm_tz &= vm % 10 == 0;
			vr_tz &= last == 0;
			last = drop_digit(&vr, &vp, &vm);
			removed++;
		}
		if (vm_tz) {
			while (vm % 10 == 0) {
				vr_tz &= last == 0;
				last = drop_digit(&vr, &vp, &vm);
				removed++;
			}
		}
		if (vr_tz && last == 5 && vr % 2 == 0)
			last = 4; /* exactly halfway: round to even */
		out = vr + ((vr == vm && (!accept_bounds || !vm_tz)) || last >= 5);
	} else {
		int round_up = 0;
		if (vp / 100 > vm / 100) {
			round_up = vr % 100 >= 50;
			vr /= 100;
			vp /= 100;
			vm /= 100;
			removed += 2;
		}
		while (vp / 10 > vm / 10) {
			round_up = drop_digit(&vr, &vp, &vm) >= 5;
			removed++;
		}
		out = vr + (vr == vm || round_up);
	}
	*output = out;
	*exp10 = e10 + removed;
}

static const char digit_pairs[201] = "00010203040506070809101112131415161718192021222324"
				     "25262728293031323334353637383940414243444546474849"
				     "50515253545556575859606162636465666768697071727374"
				     "75767778798081828384858687888990919293949596979899";

/* x < 10^8 as exactly eight digits (leading zeros kept): four independent
 * pairs, so the divisions do not form one long chain. */
static inline void put8(char *d, uint32_t x)
{
	uint32_t a = x / 10000, b = x % 10000;
	memcpy(d, digit_pairs + 2 * (a / 100), 2);
	memcpy(d + 2, digit_pairs + 2 * (a % 100), 2);
	memcpy(d + 4, digit_pairs + 2 * (b / 100), 2);
	memcpy(d + 6, digit_pairs + 2 * (b % 100), 2);
}

/* x < 10^9, x > 0, without leading zeros; returns the digit count. */
static inline int put_var(char *d, uint32_t x)
{
	int len = 1;
	for (uint32_t p = 10; len < 9 && x >= p; p *= 10)
		len++;
	int i = len;
	while (x >= 100) {
		uint32_t r = x % 100;
		x /= 100;
		i -= 2;
		memcpy(d + i, digit_pairs + 2 * r, 2);
	}
	if (x >= 10)
		memcpy(d + i - 2, digit_pairs + 2 * x, 2);
	else
		d[i - 1] = (char)('0' + x);
	return len;
}

/* The shortest decimal digits that round-trip to v (v > 0, finite), and
 * the decimal exponent n such that v = 0.d1d2...dk x 10^n. */
static void shortest_digits(double v, char digits[20], int *k_out, int *n_out)
{
	uint64_t out;
	int32_t e10;
	ryu_d2d(v, &out, &e10);
	/* Ryu's output has at most 17 digits (out < 10^17): the top ones (at
	 * most nine) and, when there are more than eight, the last eight. */
	int len;
	if (out >= 100000000ull) {
		len = put_var(digits, (uint32_t)(out / 100000000ull));
		put8(digits + len, (uint32_t)(out % 100000000ull));
		len += 8;
	} else {
		len = put_var(digits, (uint32_t)out);
	}
	/* The integer output can still end in zeros (100 may come out as 100
	 * with exponent 0). */
	int k = len, n = len + e10;
	while (k > 1 && digits[k - 1] == '0')
		k--;
	digits[k] = '\0';
	*k_out = k;
	*n_out = n;
}

int ergon_jcs_format_wide(double v, char *out)
{
	if (!isfinite(v))
		return ERGON_ERANGE;
	if (v == 0.0) {
		out[0] = '0';
		out[1] = '\0';
		return 1;
	}
	/* Copies below have fixed sizes (inlined moves, no library call per
	 * number); they may read past the k digits (digits is large enough)
	 * and write past the text, within the caller's wide buffer. */
	char digits[40];
	int k, n;
	size_t o = 0;
	if (v < 0) {
		out[o++] = '-';
		v = -v;
	}
	shortest_digits(v, digits, &k, &n);
	if (k <= n && n <= 21) {
		/* Integer: digits then n-k zeros. */
		memcpy(out + o, digits, 17);
		for (int i = k; i < n; i++)
			out[o + (size_t)i] = '0';
		o += (size_t)n;
	} else if (0 < n && n <= 21) {
		/* n < k <= 17: n digits, the point, the other k-n. */
		memcpy(out + o, digits, 17);
		memcpy(out + o + (size_t)n + 1, digits + n, 17);
		out[o + (size_t)n] = '.';
		o += (size_t)k + 1;
	} else if (-6 < n && n <= 0) {
		memcpy(out + o, "0.000000", 8);
		memcpy(out + o + 2 + (size_t)-n, digits, 17);
		o += 2 + (size_t)-n + (size_t)k;
	} else {
		out[o] = digits[0];
		out[o + 1] = '.';
		memcpy(out + o + 2, digits + 1, 16);
		o += k > 1 ? (size_t)k + 1 : 1;
		int e = n - 1;
		out[o++] = 'e';
		out[o++] = e < 0 ? '-' : '+';
		if (e < 0)
			e = -e;
		/* |e| <= 324: at most three digits. */
		if (e >= 100)
			out[o++] = (char)('0' + e / 100);
		if (e >= 10)
			out[o++] = (char)('0' + e / 10 % 10);
		out[o++] = (char)('0' + e % 10);
	}
	out[o] = '\0';
	return (int)o;
}

int ergon_jcs_format_number(double v, char out[ERGON_JCS_NUMBER_MAX])
{
	char wide[ERGON_JCS_FORMAT_WIDE];
	int n = ergon_jcs_format_wide(v, wide);
	if (n < 0)
		return n;
	/* The text and its NUL (at most 26 bytes) in one fixed-size move. */
	memcpy(out, wide, ERGON_JCS_NUMBER_MAX);
	return n;
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
	/* Their common ASCII start byte by byte: an ASCII byte is its own code
	 * unit, so the first ASCII pair that differs decides, and a string
	 * that ends there (all ASCII) is the shorter; else decode from there
	 * (a character boundary in both). */
	size_t k = 0, m = alen < blen ? alen : blen;
	while (k < m && a[k] == b[k] && (unsigned char)a[k] < 0x80)
		k++;
	if (k == m && (k == alen || (unsigned char)b[k] < 0x80) &&
	    (k == blen || (unsigned char)a[k] < 0x80))
		return alen == blen ? 0 : (alen < blen ? -1 : 1);
	if (k < m && (unsigned char)a[k] < 0x80 && (unsigned char)b[k] < 0x80)
		return (unsigned char)a[k] < (unsigned char)b[k] ? -1 : 1;
	size_t i = k, j = k;
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
	/* Bytes written raw are added a run at a time, not one by one. */
	size_t i = 0, raw = 0;
	while (i < len) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			i++;
			continue;
		}
		if (c >= 0x80) {
			/* Written raw, after checking it is UTF-8. */
			if (utf8_next((const unsigned char *)s, len, &i) < 0)
				return ERGON_EPARSE;
			continue;
		}
		ergon_dynbuf_add(b, s + raw, i - raw);
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
		if (esc != NULL) {
			ergon_dynbuf_add(b, esc, 2);
		} else {
			char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 0xF]};
			ergon_dynbuf_add(b, u, 6);
		}
		raw = ++i;
	}
	ergon_dynbuf_add(b, s + raw, len - raw);
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
/* Objects of up to this many members are sorted on the stack. */
#define MEMBERS_SMALL 32

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
		/* A report's objects are small: their members sort on the stack,
		 * by insertion (few comparisons, no allocation). */
		struct member small[MEMBERS_SMALL];
		struct member *m = n <= MEMBERS_SMALL ? small : calloc(n, sizeof(*m));
		if (m == NULL)
			return ergon_err_set(err, ERGON_ENOMEM,
					     "out of memory canonicalizing JSON");
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
		if (n > MEMBERS_SMALL) {
			qsort(m, n, sizeof(*m), member_cmp);
		} else {
			for (size_t a = 1; a < n; a++) {
				struct member t = m[a];
				size_t c = a;
				for (; c > 0 && member_cmp(&m[c - 1], &t) > 0; c--)
					m[c] = m[c - 1];
				m[c] = t;
			}
		}
		ergon_dynbuf_add(b, "{", 1);
		int rc = 0;
		for (i = 0; i < n && rc == 0; i++) {
			if (i)
				ergon_dynbuf_add(b, ",", 1);
			rc = put_string(b, m[i].key, m[i].key_len);
			if (rc) {
				rc =
				    ergon_err_set(err, ERGON_EPARSE, "JSON key is not valid UTF-8");
				break;
			}
			ergon_dynbuf_add(b, ":", 1);
			rc = put_value(b, m[i].value, depth + 1, err);
		}
		ergon_dynbuf_add(b, "}", 1);
		if (m != small)
			free(m);
		return rc;
	}
	}
	return ergon_err_set(err, ERGON_EPARSE, "unknown JSON value type");
}

int ergon_jcs_canonicalize(const json_t *value, char **out, size_t *out_len, struct ergon_err *err)
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
	/* ergon_sha256 (sha256.h) cannot fail: its context lives in the
	 * struct. */
	struct ergon_sha256 sha;
	ergon_sha256_init(&sha, NULL);
	ergon_sha256_update(&sha, data, len, NULL);
	ergon_sha256_final_hex(&sha, hex, NULL);
	ergon_sha256_cleanup(&sha);
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
