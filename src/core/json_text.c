/* An artifact's text: what json_dumps(v, JSON_INDENT(1) |
 * JSON_REAL_PRECISION(17)) writes, byte for byte, without jansson's
 * callback per token, the hashtable its loop check fills for every object
 * and array, or printf for the numbers a report is made of. See
 * ergon_json_text in artifact.h.
 *
 * jansson's format, as its dump.c writes it (and as tests/unit/test_json_text
 * and fuzz_artifact hold this file to): an object or array with members
 * puts each on its own line, indented one space per level, the closing
 * bracket on a line of its own at its opener's level; an empty one is {}
 * or []; a member is "key": value; members are in the object's order.
 * Strings: \" \\ \b \f \n \r \t, other bytes below 0x20 as \u00XX (upper
 * case hex), everything else raw (valid UTF-8 only). Integers in decimal.
 * Reals as "%.17g", then ".0" appended when that has neither '.' nor 'e',
 * and the exponent's '+' and leading zeros dropped. */
#include "ergon/artifact.h"

#include "ergon/dynbuf.h"
#include "ergon/utf8.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* 1 GiB, as the canonical form's limit: far above any report. */
#define TEXT_MAX_BYTES ((size_t)1 << 30)
/* Deeper than any artifact; jansson's loop check has no depth limit, so a
 * deeper value is left to it (ergon_json_text fails, the caller falls
 * back). */
#define TEXT_MAX_DEPTH 256

/* A JSON string; -1 when s is not valid UTF-8 (jansson does not write
 * those either). */
static int put_string(struct ergon_dynbuf *b, const char *s, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *u = (const unsigned char *)s;
	ergon_dynbuf_add(b, "\"", 1);
	size_t i = 0, raw = 0;
	while (i < len) {
		unsigned c = u[i];
		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			i++;
			continue;
		}
		if (c >= 0x80) {
			size_t k = ergon_utf8_len(s + i, len - i);
			if (k == 0)
				return -1;
			i += k;
			continue;
		}
		ergon_dynbuf_add(b, s + raw, i - raw);
		char esc[6] = {'\\', 0, 0, 0, 0, 0};
		size_t el = 2;
		switch (c) {
		case '"':
			esc[1] = '"';
			break;
		case '\\':
			esc[1] = '\\';
			break;
		case '\b':
			esc[1] = 'b';
			break;
		case '\f':
			esc[1] = 'f';
			break;
		case '\n':
			esc[1] = 'n';
			break;
		case '\r':
			esc[1] = 'r';
			break;
		case '\t':
			esc[1] = 't';
			break;
		default:
			esc[1] = 'u';
			esc[2] = '0';
			esc[3] = '0';
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 0xF];
			el = 6;
			break;
		}
		ergon_dynbuf_add(b, esc, el);
		raw = ++i;
	}
	ergon_dynbuf_add(b, s + raw, len - raw);
	ergon_dynbuf_add(b, "\"", 1);
	return 0;
}

/* The decimal digits of v at the end of buf[24]; returns where they start. */
static char *u64_digits(uint64_t v, char *end)
{
	char *p = end;
	do {
		*--p = (char)('0' + v % 10u);
		v /= 10u;
	} while (v);
	return p;
}

static void put_integer(struct ergon_dynbuf *b, json_int_t v)
{
	char buf[24];
	char *end = buf + sizeof buf;
	uint64_t m = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	char *p = u64_digits(m, end);
	if (v < 0)
		*--p = '-';
	ergon_dynbuf_add(b, p, (size_t)(end - p));
}

/* A real as jansson writes it. A multiple of 1/4 below 10^15 in magnitude
 * has an exact decimal form of at most 15 + 2 significant digits, which is
 * what "%.17g" prints (no exponent: its decimal exponent is below 17 and at
 * least -1), so it is written from its digits; anything else goes through
 * "%.17g" and jansson's two fixes. */
static void put_real(struct ergon_dynbuf *b, double v)
{
	double a = fabs(v);
	if (a < 1e15) {
		double q = a * 4.0; /* exact: a power of two */
		if (q == floor(q)) {
			static const char *const frac[4] = {".0", ".25", ".5", ".75"};
			uint64_t qi = (uint64_t)q;
			char buf[32];
			char *end = buf + 24;
			char *p = u64_digits(qi >> 2, end);
			if (signbit(v))
				*--p = '-'; /* -0.0 too: "%.17g" prints "-0" */
			size_t fl = strlen(frac[qi & 3]);
			memcpy(end, frac[qi & 3], fl);
			ergon_dynbuf_add(b, p, (size_t)(end - p) + fl);
			return;
		}
	}
	char buf[40];
	int n = snprintf(buf, sizeof buf - 3, "%.17g", v);
	if (n < 0 || (size_t)n >= sizeof buf - 3) {
		ergon_dynbuf_add(b, "0.0", 3); /* not reached: %.17g fits */
		return;
	}
	size_t len = (size_t)n;
	char *e = strchr(buf, 'e');
	if (e == NULL && strchr(buf, '.') == NULL) {
		memcpy(buf + len, ".0", 3);
		len += 2;
	}
	if (e != NULL) {
		/* "1e+20" -> "1e20", "1e-05" -> "1e-5" */
		char *start = e + 1, *from = e + 2;
		if (*start == '-')
			start++;
		while (*from == '0')
			from++;
		if (from != start) {
			memmove(start, from, len - (size_t)(from - buf) + 1);
			len -= (size_t)(from - start);
		}
	}
	ergon_dynbuf_add(b, buf, len);
}

/* A new line and depth spaces. */
static void put_indent(struct ergon_dynbuf *b, int depth)
{
	static const char sp[65] = "\n                                                                ";
	size_t n = (size_t)depth;
	ergon_dynbuf_add(b, sp, n < 64 ? n + 1 : 65);
	for (n = n < 64 ? 0 : n - 64; n > 0;) {
		size_t k = n < 64 ? n : 64;
		ergon_dynbuf_add(b, sp + 1, k);
		n -= k;
	}
}

static int put_value(struct ergon_dynbuf *b, const json_t *v, int depth)
{
	if (depth > TEXT_MAX_DEPTH)
		return -1;
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
		put_integer(b, json_integer_value(v));
		return 0;
	case JSON_REAL:
		put_real(b, json_real_value(v));
		return 0;
	case JSON_STRING:
		return put_string(b, json_string_value(v), json_string_length(v));
	case JSON_ARRAY: {
		size_t n = json_array_size(v);
		ergon_dynbuf_add(b, "[", 1);
		for (size_t i = 0; i < n; i++) {
			if (i)
				ergon_dynbuf_add(b, ",", 1);
			put_indent(b, depth + 1);
			if (put_value(b, json_array_get(v, i), depth + 1))
				return -1;
		}
		if (n)
			put_indent(b, depth);
		ergon_dynbuf_add(b, "]", 1);
		return 0;
	}
	case JSON_OBJECT: {
		const char *key;
		size_t key_len, i = 0;
		json_t *val;
		ergon_dynbuf_add(b, "{", 1);
		json_object_keylen_foreach((json_t *)v, key, key_len, val)
		{
			if (i++)
				ergon_dynbuf_add(b, ",", 1);
			put_indent(b, depth + 1);
			if (put_string(b, key, key_len))
				return -1;
			ergon_dynbuf_add(b, ": ", 2);
			if (put_value(b, val, depth + 1))
				return -1;
		}
		if (i)
			put_indent(b, depth);
		ergon_dynbuf_add(b, "}", 1);
		return 0;
	}
	}
	return -1;
}

int ergon_json_text(const json_t *v, char **out, size_t *len, struct ergon_err *err)
{
	*out = NULL;
	*len = 0;
	if (!json_is_object(v) && !json_is_array(v))
		return ergon_err_set(err, ERGON_EUSAGE, "json text: not an object or array");
	struct ergon_dynbuf b;
	ergon_dynbuf_init(&b, TEXT_MAX_BYTES);
	if (put_value(&b, v, 0)) {
		ergon_dynbuf_free(&b);
		return ergon_err_set(err, ERGON_EPARSE,
				     "json text: a string is not UTF-8 or the value nests "
				     "deeper than %d levels",
				     TEXT_MAX_DEPTH);
	}
	if (ergon_dynbuf_error(&b)) {
		int code = ergon_dynbuf_error(&b);
		ergon_dynbuf_free(&b);
		return ergon_err_set(err, code, "json text: %s", ergon_strerror(code));
	}
	*out = ergon_dynbuf_take(&b, len);
	if (*out == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "json text: out of memory");
	return 0;
}
