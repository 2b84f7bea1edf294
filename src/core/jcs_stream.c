/* RFC 8785 canonical JSON streamed from the bytes of a JSON text into
 * SHA-256, in bounded memory: see include/ergon/jcs.h and
 * docs/internals/verify.md.
 *
 * The text is read through a fixed window (pread, or a caller's buffer).
 * Arrays keep their order, so they stream straight through. An object is
 * read twice: a first pass collects its keys and where each value starts
 * and ends (values are skipped, not parsed), the keys are sorted by their
 * UTF-16 code units, and then each value is canonicalized in key order by
 * seeking back to it. Skipping a large container once remembers where it
 * ends, so the nested objects of a report (series -> invocations) do not
 * rescan the big arrays. Memory: the keys of the objects on the current
 * path, the window and the output buffer — never the document. */
#include "ergon/dynbuf.h"
#include "ergon/fileio.h"
#include "ergon/jcs.h"
#include "ergon/sha256.h"
#include "jcs_internal.h"
#include "jcs_pow5.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#if defined(__SSE2__) && !defined(ERGON_NO_SIMD)
#include <emmintrin.h>
#endif
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The read window. A fuzz build makes it tiny (cmake/ErgonFuzz.cmake), so
 * that every input crosses window edges at every offset. */
#ifndef ERGON_JCS_RD_WINDOW
#define ERGON_JCS_RD_WINDOW ((size_t)256 << 10)
#endif
#define RD_WINDOW ((size_t)(ERGON_JCS_RD_WINDOW))
#define OUT_BUF ((size_t)64 << 10)
/* Bounds on what one document may ask of us; above them the document is
 * refused with ERGON_ETOOBIG naming the limit (an ergon artifact is far
 * below each). */
#define NUM_MAX 1024		      /* characters of one number */
#define STR_MAX ((size_t)16 << 20)    /* decoded bytes of one string */
#define KEYS_MAX ((size_t)16 << 20)   /* key bytes of the objects on the path */
#define MEMBERS_MAX ((size_t)1 << 20) /* members of one object */
#define DEPTH_MAX 512
/* Containers at least this long are remembered when skipped. */
#define JUMP_MIN ((uint64_t)64 << 10)
#define JUMP_SLOTS 8192

struct member {
	size_t key_off, key_len; /* in the key arena */
	const char *key;	 /* set once the arena stops growing */
	uint64_t vpos, vend;	 /* the value's first byte and one past its last */
};

struct jump {
	uint64_t start, end;
};

struct js {
	/* input */
	int fd;
	const char *name;
	uint64_t size;
	const unsigned char *buf;
	unsigned char *own; /* the window (fd mode) */
	uint64_t boff;
	size_t blen;
	uint64_t pos;
	/* output */
	unsigned char out[OUT_BUF];
	size_t on;
	uint64_t out_total;
	struct ergon_sha256 sha; /* of the canonical text */
	int mute;
	struct ergon_dynbuf *keep; /* a copy of the canonical text, or NULL */
	/* options and state */
	unsigned flags;
	int build, pack;
	struct ergon_jcs_stream_result *res;
	size_t keys_used;
	struct jump *jumps;
	size_t n_jumps;
	struct ergon_dynbuf str; /* decoded string scratch */
	int rc;
	struct ergon_err *err;
};

/* --- errors ------------------------------------------------------------- */

/* Line and column of byte `at` (1-based), counted on demand: only an
 * error needs them. */
static void line_col(struct js *s, uint64_t at, unsigned long *line, unsigned long *col)
{
	unsigned long l = 1, c = 1;
	unsigned char tmp[4096];
	uint64_t p = 0;
	while (p < at) {
		size_t want = at - p < sizeof(tmp) ? (size_t)(at - p) : sizeof(tmp);
		const unsigned char *b;
		if (s->fd < 0) {
			b = s->buf + p;
		} else {
			ssize_t n = pread(s->fd, tmp, want, (off_t)p);
			if (n <= 0)
				break;
			want = (size_t)n;
			b = tmp;
		}
		for (size_t i = 0; i < want; i++) {
			if (b[i] == '\n') {
				l++;
				c = 1;
			} else {
				c++;
			}
		}
		p += want;
	}
	*line = l;
	*col = c;
}

/* The first error wins; it names the input, the line, the column and the
 * byte offset. */
__attribute__((format(printf, 4, 5))) static int fail(struct js *s, int code, uint64_t at,
						      const char *fmt, ...)
{
	if (s->rc)
		return s->rc;
	char what[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	unsigned long line, col;
	line_col(s, at, &line, &col);
	if (code == ERGON_EPARSE)
		s->rc = ergon_err_set(s->err, code,
				      "%s:%lu:%lu (byte %llu): %s; the file is not a valid ergon "
				      "artifact (was it truncated or edited?)",
				      s->name, line, col, (unsigned long long)at, what);
	else
		s->rc = ergon_err_set(s->err, code, "%s:%lu:%lu (byte %llu): %s", s->name, line,
				      col, (unsigned long long)at, what);
	return s->rc;
}

static int oom(struct js *s, const char *what)
{
	return fail(s, ERGON_ENOMEM, s->pos,
		    "out of memory while %s (the artifact itself may be fine: free memory and "
		    "retry)",
		    what);
}

/* --- input window ------------------------------------------------------- */

static int refill(struct js *s)
{
	if (s->pos >= s->size || s->fd < 0)
		return -1;
	size_t want = RD_WINDOW;
	if (s->size - s->pos < want)
		want = (size_t)(s->size - s->pos);
	size_t got = 0;
	while (got < want) {
		ssize_t n = pread(s->fd, s->own + got, want - got, (off_t)(s->pos + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n < 0)
				fail(s, ERGON_EIO, s->pos, "read failed: %s", strerror(errno));
			else
				fail(s, ERGON_EIO, s->pos, "the file shrank while being read");
			return -1;
		}
		got += (size_t)n;
	}
	s->buf = s->own;
	s->boff = s->pos;
	s->blen = got;
	return s->buf[0];
}

/* The byte at pos, or -1 at the end (or after a read error). */
static inline int peek(struct js *s)
{
	uint64_t off = s->pos - s->boff;
	if (s->pos >= s->boff && off < s->blen)
		return s->buf[off];
	return refill(s);
}

static inline void skip_ws(struct js *s)
{
	for (;;) {
		int c = peek(s);
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
			s->pos++;
		else
			return;
	}
}

/* --- output ------------------------------------------------------------- */

static void sha_add(struct js *s, const void *p, size_t n)
{
	(void)ergon_sha256_update(&s->sha, p, n, NULL); /* started in run() */
}

static void flush_out(struct js *s)
{
	if (s->on == 0)
		return;
	sha_add(s, s->out, s->on);
	if (s->keep)
		ergon_dynbuf_add(s->keep, s->out, s->on);
	s->out_total += s->on;
	s->on = 0;
}

static inline void emit(struct js *s, const void *p, size_t n)
{
	if (s->mute || n == 0)
		return;
	if (s->on + n > OUT_BUF) {
		flush_out(s);
		if (n > OUT_BUF) {
			sha_add(s, p, n);
			if (s->keep)
				ergon_dynbuf_add(s->keep, p, n);
			s->out_total += n;
			return;
		}
	}
	memcpy(s->out + s->on, p, n);
	s->on += n;
}

static inline void emit1(struct js *s, char c)
{
	if (s->mute)
		return;
	if (s->on == OUT_BUF)
		flush_out(s);
	s->out[s->on++] = (unsigned char)c;
}

/* A decoded (valid UTF-8) string with RFC 8785's minimal escaping. */
static void emit_string(struct js *s, const unsigned char *p, size_t n)
{
	if (p == NULL)
		p = (const unsigned char *)""; /* an empty string never allocated */
	static const char hex[] = "0123456789abcdef";
	emit1(s, '"');
	size_t run = 0; /* bytes written raw since the last escape */
	for (size_t i = 0; i < n; i++) {
		unsigned char c = p[i];
		if (c >= 0x20 && c != '"' && c != '\\') {
			run++;
			continue;
		}
		emit(s, p + i - run, run);
		run = 0;
		switch (c) {
		case '"':
			emit(s, "\\\"", 2);
			break;
		case '\\':
			emit(s, "\\\\", 2);
			break;
		case '\b':
			emit(s, "\\b", 2);
			break;
		case '\f':
			emit(s, "\\f", 2);
			break;
		case '\n':
			emit(s, "\\n", 2);
			break;
		case '\r':
			emit(s, "\\r", 2);
			break;
		case '\t':
			emit(s, "\\t", 2);
			break;
		default: {
			char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 0xF]};
			emit(s, u, 6);
		}
		}
	}
	emit(s, p + n - run, run);
	emit1(s, '"');
}

/* --- strings ------------------------------------------------------------ */

static int hex4(struct js *s, unsigned *out)
{
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		int c = peek(s);
		unsigned d;
		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			return fail(s, ERGON_EPARSE, s->pos, "invalid \\u escape");
		v = v << 4 | d;
		s->pos++;
	}
	*out = v;
	return 0;
}

static void put_utf8(struct ergon_dynbuf *b, unsigned cp)
{
	unsigned char u[4];
	size_t n;
	if (cp < 0x80) {
		u[0] = (unsigned char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (unsigned char)(0xC0 | cp >> 6);
		u[1] = (unsigned char)(0x80 | (cp & 0x3F));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (unsigned char)(0xE0 | cp >> 12);
		u[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
		u[2] = (unsigned char)(0x80 | (cp & 0x3F));
		n = 3;
	} else {
		u[0] = (unsigned char)(0xF0 | cp >> 18);
		u[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
		u[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
		u[3] = (unsigned char)(0x80 | (cp & 0x3F));
		n = 4;
	}
	ergon_dynbuf_add(b, u, n);
}

/* Decode the string at pos (at its opening quote) into b: escapes
 * resolved, UTF-8 checked strictly (no overlong forms, no surrogates,
 * nothing above U+10FFFF), control characters refused, as jansson does. */
static int read_string(struct js *s, struct ergon_dynbuf *b)
{
	uint64_t start = s->pos;
	s->pos++; /* the quote */
	for (;;) {
		/* Plain bytes straight from the window. */
		uint64_t off = s->pos - s->boff;
		if (s->pos >= s->boff && off < s->blen) {
			const unsigned char *p = s->buf + off, *e = s->buf + s->blen, *q = p;
			while (q < e && *q >= 0x20 && *q < 0x80 && *q != '"' && *q != '\\')
				q++;
			if (q > p) {
				ergon_dynbuf_add(b, p, (size_t)(q - p));
				s->pos += (uint64_t)(q - p);
			}
		}
		if (b->len > STR_MAX)
			return fail(s, ERGON_ETOOBIG, start, "string longer than %zu bytes",
				    STR_MAX);
		int c = peek(s);
		if (c < 0)
			return fail(s, ERGON_EPARSE, s->pos,
				    "unexpected end of file in a string (opened at byte %llu)",
				    (unsigned long long)start);
		if (c == '"') {
			s->pos++;
			break;
		}
		if (c < 0x20)
			return fail(s, ERGON_EPARSE, s->pos,
				    "control character 0x%02x in a string (must be escaped)", c);
		if (c == '\\') {
			s->pos++;
			int e = peek(s);
			s->pos++;
			char r = 0;
			switch (e) {
			case '"':
				r = '"';
				break;
			case '\\':
				r = '\\';
				break;
			case '/':
				r = '/';
				break;
			case 'b':
				r = '\b';
				break;
			case 'f':
				r = '\f';
				break;
			case 'n':
				r = '\n';
				break;
			case 'r':
				r = '\r';
				break;
			case 't':
				r = '\t';
				break;
			case 'u': {
				unsigned cp, lo;
				uint64_t at = s->pos - 2;
				if (hex4(s, &cp))
					return s->rc;
				if (cp >= 0xDC00 && cp <= 0xDFFF)
					return fail(s, ERGON_EPARSE, at,
						    "invalid Unicode escape (lone low surrogate)");
				if (cp >= 0xD800 && cp <= 0xDBFF) {
					if (peek(s) != '\\')
						return fail(
						    s, ERGON_EPARSE, at,
						    "invalid Unicode escape (high surrogate "
						    "without its low half)");
					s->pos++;
					if (peek(s) != 'u')
						return fail(
						    s, ERGON_EPARSE, at,
						    "invalid Unicode escape (high surrogate "
						    "without its low half)");
					s->pos++;
					if (hex4(s, &lo))
						return s->rc;
					if (lo < 0xDC00 || lo > 0xDFFF)
						return fail(
						    s, ERGON_EPARSE, at,
						    "invalid Unicode escape (high surrogate "
						    "without its low half)");
					cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
				}
				put_utf8(b, cp);
				continue;
			}
			default:
				return fail(s, ERGON_EPARSE, s->pos - 2,
					    "invalid escape in a string");
			}
			ergon_dynbuf_add(b, &r, 1);
			continue;
		}
		/* A plain byte that peek() just read into a new window (the fast
		 * path above stopped at the old window's end): the next turn
		 * takes it from there. */
		if (c < 0x80)
			continue;
		/* A multi-byte UTF-8 sequence. */
		unsigned char u[4];
		u[0] = (unsigned char)c;
		size_t need;
		unsigned cp;
		if (c >= 0xC2 && c <= 0xDF) {
			need = 1;
			cp = (unsigned)c & 0x1F;
		} else if (c >= 0xE0 && c <= 0xEF) {
			need = 2;
			cp = (unsigned)c & 0x0F;
		} else if (c >= 0xF0 && c <= 0xF4) {
			need = 3;
			cp = (unsigned)c & 0x07;
		} else {
			return fail(s, ERGON_EPARSE, s->pos, "invalid UTF-8 byte 0x%02x", c);
		}
		uint64_t at = s->pos;
		s->pos++;
		for (size_t j = 1; j <= need; j++) {
			int d = peek(s);
			if (d < 0 || (d & 0xC0) != 0x80)
				return fail(s, ERGON_EPARSE, at, "invalid UTF-8 sequence");
			u[j] = (unsigned char)d;
			cp = cp << 6 | ((unsigned)d & 0x3F);
			s->pos++;
		}
		if ((need == 2 && cp < 0x800) || (need == 3 && cp < 0x10000) || cp > 0x10FFFF ||
		    (cp >= 0xD800 && cp <= 0xDFFF))
			return fail(s, ERGON_EPARSE, at, "invalid UTF-8 sequence");
		ergon_dynbuf_add(b, u, need + 1);
	}
	if (ergon_dynbuf_error(b))
		return oom(s, "reading a string");
	return 0;
}

/* --- numbers ------------------------------------------------------------ */

__extension__ typedef unsigned __int128 u128;

/* Exact powers of ten that a double holds (Clinger's fast path). */
static const double exact_pow10[23] = {1e0,  1e1,  1e2,	 1e3,  1e4,  1e5,  1e6,	 1e7,
				       1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
				       1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* w x 10^q as the nearest double (w != 0, at most 19 digits), or -1 when
 * this method cannot decide (the caller then uses strtod). Clinger's exact
 * fast path, then Eisel-Lemire (D. Lemire, "Number parsing at a gigabyte
 * per second", Software: Practice and Experience 51(8), 2021). */
static int decimal_to_double(uint64_t w, int64_t q, double *out)
{
	if (q >= -22 && q <= 22 && w <= (1ull << 53)) {
		double d = (double)w;
		*out = q < 0 ? d / exact_pow10[-q] : d * exact_pow10[q];
		return 0;
	}
	if (q < JCS_POW10_MIN) {
		*out = 0;
		return 0;
	}
	if (q > JCS_POW10_MAX) {
		*out = INFINITY;
		return 0;
	}
	int lz = __builtin_clzll(w);
	w <<= lz;
	const uint64_t *pw = jcs_pow5_128[q - JCS_POW10_MIN];
	u128 first = (u128)w * pw[1];
	uint64_t hi = (uint64_t)(first >> 64), lo = (uint64_t)first;
	const uint64_t mask = UINT64_MAX >> 55; /* 52 mantissa bits + 3 */
	if ((hi & mask) == mask) {
		u128 second = (u128)w * pw[0];
		uint64_t shi = (uint64_t)(second >> 64);
		lo += shi;
		if (shi > lo)
			hi++;
	}
	if (lo == UINT64_MAX && (q < -27 || q > 55))
		return -1; /* the rare case the 128-bit product cannot decide */
	int upper = (int)(hi >> 63);
	int shift = upper + 64 - 52 - 3;
	uint64_t m = hi >> shift;
	/* floor(log2(10^q)) + 63, from Lemire's paper. */
	int32_t p2 = (int32_t)((((152170 + 65536) * q) >> 16) + 63) + upper - lz + 1023;
	if (p2 <= 0) {
		/* Subnormal. */
		if (-p2 + 1 >= 64) {
			*out = 0;
			return 0;
		}
		m >>= -p2 + 1;
		m += m & 1;
		m >>= 1;
		p2 = m < (1ull << 52) ? 0 : 1;
	} else {
		/* Round half to even where the product is exact. */
		if (lo <= 1 && q >= -4 && q <= 23 && (m & 3) == 1 && (m << shift) == hi)
			m &= ~1ull;
		m += m & 1;
		m >>= 1;
		if (m >= (2ull << 52)) {
			m = 1ull << 52;
			p2++;
		}
		m &= ~(1ull << 52);
		if (p2 >= 0x7FF) {
			*out = INFINITY;
			return 0;
		}
	}
	uint64_t bits = m | (uint64_t)p2 << 52;
	memcpy(out, &bits, sizeof(*out));
	return 0;
}

/* Scan a number token in p[0..avail): RFC 8259's grammar, with the first
 * 19 significant digits in *w and the decimal exponent of w in *dexp.
 * Returns the token length, 0 when p does not start a valid number (*why
 * says what is wrong), or avail + 1 when the token may run past avail. */
struct numscan {
	uint64_t w;
	int64_t dexp;
	int digits, neg, many, frac, expo;
};

/* Eight ASCII digits at p (little-endian SWAR, after D. Lemire's
 * fast_float): 1 with their value in *v, 0 when any of them is not a
 * digit. */
static inline int eight_digits(const unsigned char *p, uint32_t *v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint64_t x;
	memcpy(&x, p, 8);
	if (((x & 0xF0F0F0F0F0F0F0F0ull) |
	     (((x + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) >> 4)) != 0x3333333333333333ull)
		return 0;
	x -= 0x3030303030303030ull;
	x = x * 10 + (x >> 8);
	x = (((x & 0x000000FF000000FFull) * (100 + (1000000ull << 32))) +
	     (((x >> 16) & 0x000000FF000000FFull) * (1 + (10000ull << 32)))) >>
	    32;
	*v = (uint32_t)x;
	return 1;
#else
	(void)p;
	(void)v;
	return 0;
#endif
}

static size_t scan_number(const unsigned char *p, size_t avail, struct numscan *ns,
			  const char **why)
{
	size_t i = 0;
	*ns = (struct numscan){0};
#define AT(k) ((k) < avail ? p[k] : -1)
#define DIGIT(c) ((c) >= '0' && (c) <= '9')
	int c = AT(i);
	if (c == '-') {
		ns->neg = 1;
		c = AT(i + 1), i++;
	}
	if (c == '0') {
		c = AT(i + 1), i++;
		if (DIGIT(c)) {
			*why = "invalid number (leading zero)";
			return 0;
		}
	} else if (c >= '1' && c <= '9') {
		while (DIGIT(c)) {
			if (ns->digits < 19)
				ns->w = ns->w * 10 + (uint64_t)(c - '0');
			else
				ns->many = 1;
			ns->digits++;
			c = AT(i + 1), i++;
		}
		if (ns->digits > 19)
			ns->dexp += ns->digits - 19;
	} else {
		*why = "invalid token";
		return c < 0 && i >= avail ? avail + 1 : 0;
	}
	if (c == '.') {
		ns->frac = 1;
		c = AT(i + 1), i++;
		if (!DIGIT(c)) {
			*why = "invalid number (no digit after '.')";
			return i >= avail ? avail + 1 : 0;
		}
		while (DIGIT(c)) {
			uint32_t eight;
			/* Eight significant digits at once while they fit in the
			 * 19 kept (the usual measured value). */
			if ((ns->w != 0 || c != '0') && ns->digits <= 11 && i + 8 < avail &&
			    eight_digits(p + i, &eight)) {
				ns->w = ns->w * 100000000u + eight;
				ns->digits += 8;
				ns->dexp -= 8;
				i += 8;
				c = p[i];
				continue;
			}
			if (ns->w == 0 && c == '0') {
				ns->dexp--; /* leading zeros of a fraction carry no digit */
			} else if (ns->digits < 19) {
				ns->w = ns->w * 10 + (uint64_t)(c - '0');
				ns->digits++;
				ns->dexp--;
			} else {
				ns->many = 1;
			}
			c = AT(i + 1), i++;
		}
	}
	if (c == 'e' || c == 'E') {
		ns->expo = 1;
		c = AT(i + 1), i++;
		int eneg = 0;
		if (c == '+' || c == '-') {
			eneg = c == '-';
			c = AT(i + 1), i++;
		}
		if (!DIGIT(c)) {
			*why = "invalid number (no exponent digits)";
			return i >= avail ? avail + 1 : 0;
		}
		int64_t e = 0;
		while (DIGIT(c)) {
			if (e < 100000)
				e = e * 10 + (c - '0');
			c = AT(i + 1), i++;
		}
		ns->dexp += eneg ? -e : e;
	}
	/* The token ends at the window's end: it may go on. */
	if (i >= avail)
		return avail + 1;
	return i;
#undef AT
#undef DIGIT
}

/* The number at pos: checked against RFC 8259's grammar, read as the
 * nearest double (and as an integer when it is written as one, as jansson
 * does), and written out in ECMAScript form. */
static int read_number(struct js *s, double *d, int *is_int, long long *iv)
{
	uint64_t start = s->pos;
	unsigned char tok[NUM_MAX + 2];
	const unsigned char *p;
	size_t avail;
	if (peek(s) < 0)
		return fail(s, ERGON_EPARSE, start, "unexpected end of file");
	uint64_t off = s->pos - s->boff;
	p = s->buf + off;
	avail = s->blen - (size_t)off;
	struct numscan ns;
	const char *why = "invalid number";
	size_t len = scan_number(p, avail, &ns, &why);
	if (len == avail + 1) {
		/* Across the window's edge, or at the end of the text: gather
		 * the token (bounded) and scan it again with a delimiter after
		 * it, so that "-" or "1e" at the very end is refused. */
		size_t n = 0;
		while (n <= NUM_MAX) {
			int c = peek(s);
			if (c < 0 || !(c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' ||
				       (c >= '0' && c <= '9')))
				break;
			tok[n++] = (unsigned char)c;
			s->pos++;
		}
		s->pos = start;
		if (n > NUM_MAX)
			return fail(s, ERGON_ETOOBIG, start, "number longer than %d characters",
				    NUM_MAX);
		tok[n] = ' '; /* a delimiter, so the scan knows where it ends */
		p = tok;
		avail = n + 1;
		len = scan_number(p, avail, &ns, &why);
	}
	if (len == 0)
		return fail(s, ERGON_EPARSE, start, "%s", why);
	if (len > NUM_MAX)
		return fail(s, ERGON_ETOOBIG, start, "number longer than %d characters", NUM_MAX);
	*is_int = !ns.frac && !ns.expo;
	if (*is_int) {
		/* As jansson: an integer must fit in 64 bits. */
		uint64_t lim = ns.neg ? (1ull << 63) : (1ull << 63) - 1;
		if (ns.digits > 19 || ns.w > lim)
			return fail(s, ERGON_EPARSE, start, "too big integer");
		*iv = ns.neg ? (long long)(0 - ns.w) : (long long)ns.w;
		if (ns.neg && ns.w == (1ull << 63))
			*iv = LLONG_MIN;
		*d = (double)*iv;
	} else if (ns.w == 0) {
		*d = ns.neg ? -0.0 : 0.0;
	} else if (ns.many || decimal_to_double(ns.w, ns.dexp, d) != 0) {
		char z[NUM_MAX + 1];
		memcpy(z, p, len);
		z[len] = '\0';
		*d = strtod(z, NULL);
	} else if (ns.neg) {
		*d = -*d;
	}
	s->pos = start + len;
	if (!isfinite(*d))
		return fail(s, ERGON_EPARSE, start, "real number overflow");
	if (!s->mute) {
		/* Formatted in place in the output buffer. */
		if (s->on + ERGON_JCS_FORMAT_WIDE > OUT_BUF)
			flush_out(s);
		int n = ergon_jcs_format_wide(*d, (char *)s->out + s->on);
		s->on += (size_t)n;
	}
	return 0;
}

/* --- skipping ----------------------------------------------------------- */

static uint64_t jump_hash(uint64_t start)
{
	return (start * 0x9E3779B97F4A7C15ull) >> 51; /* 13 bits: JUMP_SLOTS */
}

static uint64_t jump_find(const struct js *s, uint64_t start)
{
	if (s->jumps == NULL)
		return 0;
	for (uint64_t h = jump_hash(start);; h = (h + 1) & (JUMP_SLOTS - 1)) {
		if (s->jumps[h].end == 0)
			return 0;
		if (s->jumps[h].start == start)
			return s->jumps[h].end;
	}
}

static void jump_add(struct js *s, uint64_t start, uint64_t end)
{
	if (s->jumps == NULL || s->n_jumps >= JUMP_SLOTS / 2)
		return;
	uint64_t h = jump_hash(start);
	while (s->jumps[h].end != 0) {
		if (s->jumps[h].start == start)
			return;
		h = (h + 1) & (JUMP_SLOTS - 1);
	}
	s->jumps[h] = (struct jump){start, end};
	s->n_jumps++;
}

/* Step over the string at pos without decoding it (the canonical pass
 * checks it). */
static int skip_string(struct js *s)
{
	uint64_t start = s->pos;
	s->pos++;
	for (;;) {
		uint64_t off = s->pos - s->boff;
		if (s->pos >= s->boff && off < s->blen) {
			const unsigned char *p = s->buf + off, *e = s->buf + s->blen, *q = p;
			while (q < e && *q != '"' && *q != '\\')
				q++;
			s->pos += (uint64_t)(q - p);
		}
		int c = peek(s);
		if (c < 0)
			return fail(s, ERGON_EPARSE, s->pos,
				    "unexpected end of file in a string (opened at byte %llu)",
				    (unsigned long long)start);
		s->pos++;
		if (c == '"')
			return 0;
		if (c == '\\') {
			if (peek(s) < 0)
				return fail(
				    s, ERGON_EPARSE, s->pos,
				    "unexpected end of file in a string (opened at byte %llu)",
				    (unsigned long long)start);
			s->pos++;
		}
	}
}

/* The bytes a skip has to look at inside a container. */
static const unsigned char skip_stop[256] = {['"'] = 1, ['{'] = 1, ['['] = 1, ['}'] = 1, [']'] = 1};

/* The first byte in [q, e) that skip_stop marks, or e: sixteen bytes at a
 * time with SSE2 (x86-64's baseline; '[' and '{', ']' and '}' differ only
 * in bit 5), then byte by byte. */
static inline const unsigned char *skip_run(const unsigned char *q, const unsigned char *e)
{
#if defined(__SSE2__) && !defined(ERGON_NO_SIMD)
	const __m128i quote = _mm_set1_epi8('"'), open = _mm_set1_epi8('{'),
		      close = _mm_set1_epi8('}'), bit5 = _mm_set1_epi8(0x20);
	while (e - q >= 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)q);
		__m128i f = _mm_or_si128(v, bit5);
		__m128i m =
		    _mm_or_si128(_mm_cmpeq_epi8(v, quote),
				 _mm_or_si128(_mm_cmpeq_epi8(f, open), _mm_cmpeq_epi8(f, close)));
		unsigned mask = (unsigned)_mm_movemask_epi8(m);
		if (mask)
			return q + __builtin_ctz(mask);
		q += 16;
	}
#endif
	while (q < e && !skip_stop[*q])
		q++;
	return q;
}

/* Step over the value at pos: find where it ends. Brackets are counted,
 * not matched; the canonical pass that reads the value later checks it and
 * that it ends exactly here. */
static int skip_value(struct js *s, int depth)
{
	int c = peek(s);
	if (c == '"')
		return skip_string(s);
	if (c != '{' && c != '[') {
		/* A scalar: up to the next delimiter. */
		uint64_t start = s->pos;
		for (;;) {
			c = peek(s);
			if (c < 0 || c == ',' || c == '}' || c == ']' || c == ' ' || c == '\n' ||
			    c == '\r' || c == '\t')
				break;
			s->pos++;
		}
		if (s->pos == start)
			return fail(s, ERGON_EPARSE, start,
				    c < 0 ? "unexpected end of file" : "expected a value");
		return 0;
	}
	uint64_t open_at[DEPTH_MAX + 1];
	int level = 0;
	for (;;) {
		c = peek(s);
		if (c < 0)
			return fail(s, ERGON_EPARSE, s->pos,
				    "unexpected end of file (the value opened at byte %llu is not "
				    "closed)",
				    (unsigned long long)open_at[0]);
		if (c == '"') {
			if (skip_string(s))
				return s->rc;
			continue;
		}
		if (c == '{' || c == '[') {
			uint64_t end = jump_find(s, s->pos);
			if (end) {
				if (level == 0) {
					s->pos = end;
					return 0;
				}
				s->pos = end;
				continue;
			}
			if (depth + level >= DEPTH_MAX)
				return fail(s, ERGON_ETOOBIG, s->pos,
					    "JSON nesting deeper than %d levels", DEPTH_MAX);
			open_at[level++] = s->pos++;
			continue;
		}
		if (c == '}' || c == ']') {
			s->pos++;
			level--;
			if (s->pos - open_at[level] >= JUMP_MIN)
				jump_add(s, open_at[level], s->pos);
			if (level == 0)
				return 0;
			continue;
		}
		/* Scalars and punctuation: run through the window. */
		uint64_t off = s->pos - s->boff;
		const unsigned char *p = s->buf + off, *q = skip_run(p, s->buf + s->blen);
		s->pos += (uint64_t)(q - p);
	}
}

/* --- canonical pass ----------------------------------------------------- */

static int canon_value(struct js *s, int depth, json_t **out);

static int expect_literal(struct js *s, const char *lit, size_t n)
{
	uint64_t start = s->pos;
	for (size_t i = 0; i < n; i++) {
		if (peek(s) != (unsigned char)lit[i])
			return fail(s, ERGON_EPARSE, start, "invalid token");
		s->pos++;
	}
	emit(s, lit, n);
	return 0;
}

/* Compare two UTF-8 strings by their UTF-16 code units (RFC 8785 3.2.3):
 * bytewise order is code point order, which differs from UTF-16 order only
 * where a supplementary character (4-byte UTF-8, a surrogate pair
 * 0xD800-0xDBFF in UTF-16) meets a character U+E000..U+FFFF (lead byte
 * 0xEE or 0xEF): UTF-16 puts the pair first. */
static int key_cmp(const void *x, const void *y)
{
	const struct member *a = x, *b = y;
	size_t n = a->key_len < b->key_len ? a->key_len : b->key_len;
	const unsigned char *p = (const unsigned char *)a->key, *q = (const unsigned char *)b->key;
	for (size_t i = 0; i < n; i++) {
		if (p[i] == q[i])
			continue;
		unsigned pa = p[i], qb = q[i];
		/* Only lead bytes can differ first inside equal prefixes of
		 * whole characters when one side is 4-byte and the other
		 * 0xEE/0xEF; map them to UTF-16 order. */
		if (pa >= 0xF0 && (qb == 0xEE || qb == 0xEF))
			return -1;
		if (qb >= 0xF0 && (pa == 0xEE || pa == 0xEF))
			return 1;
		return pa < qb ? -1 : 1;
	}
	return a->key_len < b->key_len ? -1 : (a->key_len > b->key_len);
}

static int canon_object(struct js *s, int depth, int top, json_t **out)
{
	uint64_t start = s->pos;
	struct member *m = NULL;
	size_t n = 0, cap = 0;
	struct ergon_dynbuf keys;
	ergon_dynbuf_init(&keys, KEYS_MAX - s->keys_used);
	json_t *obj = NULL;
	int rc = 0;
	s->pos++;
	skip_ws(s);
	if (peek(s) == '}') {
		s->pos++;
	} else {
		for (;;) {
			skip_ws(s);
			if (peek(s) != '"') {
				rc = fail(s, ERGON_EPARSE, s->pos,
					  "string or '}' expected (an object member's key)");
				goto out;
			}
			if (n == cap) {
				size_t nc = cap ? cap * 2 : 16;
				struct member *g =
				    nc <= MEMBERS_MAX ? realloc(m, nc * sizeof(*m)) : NULL;
				if (g == NULL) {
					rc = nc > MEMBERS_MAX
						 ? fail(s, ERGON_ETOOBIG, start,
							"object with more than %zu members",
							MEMBERS_MAX)
						 : oom(s, "reading an object");
					goto out;
				}
				m = g;
				cap = nc;
			}
			uint64_t kat = s->pos;
			m[n].key_off = keys.len;
			if ((rc = read_string(s, &keys)))
				goto out;
			m[n].key_len = keys.len - m[n].key_off;
			if (ergon_dynbuf_error(&keys)) {
				rc = ergon_dynbuf_error(&keys) == ERGON_ENOMEM
					 ? oom(s, "reading object keys")
					 : fail(s, ERGON_ETOOBIG, kat,
						"object keys longer than %zu bytes in all",
						KEYS_MAX);
				goto out;
			}
			if (m[n].key_len && memchr(keys.p + m[n].key_off, '\0', m[n].key_len)) {
				rc = fail(s, ERGON_EPARSE, kat,
					  "NUL byte in object key not supported");
				goto out;
			}
			skip_ws(s);
			if (peek(s) != ':') {
				rc = fail(s, ERGON_EPARSE, s->pos, "':' expected");
				goto out;
			}
			s->pos++;
			skip_ws(s);
			m[n].vpos = s->pos;
			if ((rc = skip_value(s, depth + 1)))
				goto out;
			m[n].vend = s->pos;
			n++;
			skip_ws(s);
			int c = peek(s);
			s->pos++;
			if (c == '}')
				break;
			if (c != ',') {
				rc = fail(s, ERGON_EPARSE, s->pos - 1, "',' or '}' expected");
				goto out;
			}
		}
	}
	uint64_t end = s->pos;
	const char *kb = keys.p ? keys.p : "";
	for (size_t i = 0; i < n; i++)
		m[i].key = kb + m[i].key_off;
	if (n > 1)
		qsort(m, n, sizeof(*m), key_cmp);
	for (size_t i = 1; i < n; i++)
		if (m[i].key_len == m[i - 1].key_len &&
		    memcmp(m[i].key, m[i - 1].key, m[i].key_len) == 0) {
			rc = fail(s, ERGON_EPARSE, start, "duplicate object key \"%.100s\"",
				  m[i].key);
			goto out;
		}
	s->keys_used += keys.len;
	if (s->build) {
		obj = json_object();
		if (obj == NULL) {
			rc = oom(s, "building the report");
			goto out_keys;
		}
	}
	emit1(s, '{');
	int first = 1;
	for (size_t i = 0; i < n; i++) {
		/* report_id and the signature (which signs report_id) are
		 * outside the digest, as in ergon_artifact_digest. */
		int omit = top && (s->flags & ERGON_JCS_OMIT_REPORT_ID) && m[i].key_len == 9 &&
			   (memcmp(m[i].key, "report_id", 9) == 0 ||
			    memcmp(m[i].key, "signature", 9) == 0);
		int series = top && m[i].key_len == 6 && memcmp(m[i].key, "series", 6) == 0;
		int mute0 = s->mute;
		if (omit) {
			s->mute = 1;
		} else {
			if (!first)
				emit1(s, ',');
			first = 0;
			emit_string(s, (const unsigned char *)m[i].key, m[i].key_len);
			emit1(s, ':');
		}
		int pack0 = s->pack;
		if (series && (s->flags & ERGON_JCS_PACK_SERIES))
			s->pack = 1;
		s->pos = m[i].vpos;
		json_t *v = NULL;
		rc = canon_value(s, depth + 1, s->build ? &v : NULL);
		s->pack = pack0;
		s->mute = mute0;
		if (rc == 0) {
			if (s->pos != m[i].vend)
				rc = fail(s, ERGON_EPARSE, s->pos, "',' or '}' expected");
		}
		if (rc) {
			json_decref(v);
			goto out_keys;
		}
		if (obj && json_object_setn_new(obj, m[i].key, m[i].key_len, v) != 0) {
			rc = oom(s, "building the report");
			goto out_keys;
		}
	}
	emit1(s, '}');
	s->pos = end;
out_keys:
	s->keys_used -= keys.len;
out:
	ergon_dynbuf_free(&keys);
	free(m);
	if (rc) {
		json_decref(obj);
		return rc;
	}
	if (out)
		*out = obj;
	else
		json_decref(obj);
	return 0;
}

/* Keep a fully numeric series array as doubles (null -> NaN) behind an
 * empty placeholder array in the tree; a spilled one keeps only where it
 * is in the file. */
static int pack_add(struct js *s, const struct ergon_jcs_packed *pk)
{
	struct ergon_jcs_stream_result *r = s->res;
	if (r->n_packed == r->cap_packed) {
		size_t nc = r->cap_packed ? r->cap_packed * 2 : 16;
		struct ergon_jcs_packed *g = realloc(r->packed, nc * sizeof(*g));
		if (g == NULL)
			return oom(s, "keeping a series");
		r->packed = g;
		r->cap_packed = nc;
	}
	r->packed[r->n_packed++] = *pk;
	return 0;
}

/* A packed candidate turned out to hold something else: its numbers so
 * far become JSON values. */
static int unpack(struct js *s, json_t *arr, const double *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (json_array_append_new(arr, isnan(v[i]) ? json_null() : json_real(v[i])))
			return oom(s, "building the report");
	return 0;
}

static int canon_array(struct js *s, int depth, json_t **out)
{
	json_t *arr = NULL;
	double *v = NULL;
	size_t n = 0, cap = 0;
	int packing = s->pack && out != NULL;
	/* Spilled: past the threshold (file input only) the values are not
	 * kept; the figures read them again from the file. A non-number
	 * found later is recorded, not unpacked. */
	int spilled = 0, bad = 0;
	size_t bad_index = 0, spill_at = (s->flags & ERGON_JCS_SPILL_ALL) ? 0 : ERGON_JCS_SPILL_MIN;
	uint64_t start = s->pos;
	int rc = 0;
	if (out) {
		arr = json_array();
		if (arr == NULL)
			return oom(s, "building the report");
	}
	s->pos++;
	emit1(s, '[');
	skip_ws(s);
	if (peek(s) == ']') {
		s->pos++;
	} else {
		for (size_t i = 0;; i++) {
			if (i)
				emit1(s, ',');
			skip_ws(s);
			int c = peek(s);
			int num = c == '-' || (c >= '0' && c <= '9') || c == 'n';
			if (packing && num) {
				double d = NAN;
				int is_int;
				long long iv;
				if (c == 'n')
					rc = expect_literal(s, "null", 4);
				else
					rc = read_number(s, &d, &is_int, &iv);
				if (rc)
					goto out;
				if (!spilled && n >= spill_at && s->fd >= 0) {
					spilled = 1;
					free(v);
					v = NULL;
				}
				if (!spilled) {
					if (n == cap) {
						size_t nc = cap ? cap * 2 : 256;
						double *g = realloc(v, nc * sizeof(*v));
						if (g == NULL) {
							rc = oom(s, "keeping a series");
							goto out;
						}
						v = g;
						cap = nc;
					}
					v[n] = d;
				}
				n++;
			} else if (packing && spilled) {
				if (!bad) {
					bad = 1;
					bad_index = i;
				}
				if ((rc = canon_value(s, depth + 1, NULL)))
					goto out;
				n++;
			} else {
				if (packing) {
					packing = 0;
					if ((rc = unpack(s, arr, v, n)))
						goto out;
				}
				json_t *x = NULL;
				if ((rc = canon_value(s, depth + 1, out ? &x : NULL)))
					goto out;
				if (arr && json_array_append_new(arr, x)) {
					rc = oom(s, "building the report");
					goto out;
				}
			}
			skip_ws(s);
			c = peek(s);
			if (c == ']') {
				s->pos++;
				break;
			}
			if (c != ',') {
				rc = fail(s, ERGON_EPARSE, s->pos, "',' or ']' expected");
				goto out;
			}
			s->pos++;
		}
	}
	emit1(s, ']');
	if (packing) {
		struct ergon_jcs_packed pk = {.placeholder = arr,
					      .v = v,
					      .n = n,
					      .spilled = spilled,
					      .file_pos = start,
					      .bad = bad,
					      .bad_index = bad_index};
		if ((rc = pack_add(s, &pk)))
			goto out;
		v = NULL;
	}
out:
	free(v);
	if (rc) {
		json_decref(arr);
		return rc;
	}
	if (out)
		*out = arr;
	return 0;
}

static int canon_value(struct js *s, int depth, json_t **out)
{
	if (depth > DEPTH_MAX)
		return fail(s, ERGON_ETOOBIG, s->pos, "JSON nesting deeper than %d levels",
			    DEPTH_MAX);
	skip_ws(s);
	int c = peek(s);
	if (s->rc)
		return s->rc;
	switch (c) {
	case '{':
		return canon_object(s, depth, 0, out);
	case '[':
		return canon_array(s, depth, out);
	case '"': {
		s->str.len = 0;
		int rc = read_string(s, &s->str);
		if (rc)
			return rc;
		emit_string(s, (const unsigned char *)s->str.p, s->str.len);
		if (out) {
			*out = json_stringn_nocheck(s->str.p ? s->str.p : "", s->str.len);
			if (*out == NULL)
				return oom(s, "building the report");
		}
		return 0;
	}
	case 't':
		if (expect_literal(s, "true", 4))
			return s->rc;
		if (out)
			*out = json_true();
		return 0;
	case 'f':
		if (expect_literal(s, "false", 5))
			return s->rc;
		if (out)
			*out = json_false();
		return 0;
	case 'n':
		if (expect_literal(s, "null", 4))
			return s->rc;
		if (out)
			*out = json_null();
		return 0;
	case -1:
		return fail(s, ERGON_EPARSE, s->pos, "unexpected end of file");
	default:
		if (c == '-' || (c >= '0' && c <= '9')) {
			double d;
			int is_int;
			long long iv;
			int rc = read_number(s, &d, &is_int, &iv);
			if (rc)
				return rc;
			if (out) {
				*out = is_int ? json_integer((json_int_t)iv) : json_real(d);
				if (*out == NULL)
					return oom(s, "building the report");
			}
			return 0;
		}
		return fail(s, ERGON_EPARSE, s->pos, "invalid token");
	}
}

/* --- entry points ------------------------------------------------------- */

static int run(struct js *s, struct ergon_jcs_stream_result *res)
{
	int rc = 0;
	s->res = res;
	s->build = (s->flags & ERGON_JCS_BUILD_TREE) != 0;
	ergon_dynbuf_init(&s->str, STR_MAX + 8);
	s->jumps = calloc(JUMP_SLOTS, sizeof(*s->jumps)); /* NULL: just slower */
	(void)ergon_sha256_init(&s->sha, NULL);		  /* allocates nothing, cannot fail */
	skip_ws(s);
	int c = peek(s);
	json_t *tree = NULL;
	if (s->rc) {
		rc = s->rc;
	} else if (c != '{' && (s->flags & ERGON_JCS_OMIT_REPORT_ID)) {
		rc = fail(s, ERGON_EPARSE, s->pos,
			  c < 0 ? "empty file" : "top level is not a JSON object");
	} else {
		if (c == '{')
			rc = canon_object(s, 0, 1, s->build ? &tree : NULL);
		else
			rc = canon_value(s, 0, s->build ? &tree : NULL);
		if (rc == 0) {
			skip_ws(s);
			if (peek(s) >= 0 || s->rc)
				rc = s->rc ? s->rc
					   : fail(s, ERGON_EPARSE, s->pos, "end of file expected");
		}
	}
	flush_out(s);
	char hex[65];
	int hrc = ergon_sha256_final_hex(&s->sha, hex, NULL);
	if (rc == 0 && hrc)
		rc = fail(s, hrc, s->pos, "the digest of the canonical text failed");
	if (rc == 0) {
		snprintf(res->digest, sizeof(res->digest), "sha256:%s", hex);
		res->tree = tree;
		res->bytes_in = s->size;
		res->bytes_out = s->out_total;
		if (s->keep) {
			if (ergon_dynbuf_error(s->keep))
				rc = fail(s, ergon_dynbuf_error(s->keep), 0, "canonical text: %s",
					  ergon_strerror(ergon_dynbuf_error(s->keep)));
			else
				res->canon = ergon_dynbuf_take(s->keep, &res->canon_len);
		}
	} else {
		json_decref(tree);
	}
	ergon_dynbuf_free(&s->str);
	free(s->jumps);
	if (rc)
		ergon_jcs_stream_result_free(res);
	return rc;
}

int ergon_jcs_stream_mem(const void *data, size_t len, const char *name, unsigned flags,
			 struct ergon_jcs_stream_result *res, struct ergon_err *err)
{
	memset(res, 0, sizeof(*res));
	struct js *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "%s: out of memory", name);
	struct ergon_dynbuf keep;
	ergon_dynbuf_init(&keep, (size_t)1 << 30);
	*s = (struct js){.fd = -1,
			 .name = name,
			 .size = len,
			 .buf = data,
			 .blen = len,
			 .flags = flags,
			 .keep = (flags & ERGON_JCS_KEEP_CANON) ? &keep : NULL,
			 .err = err};
	int rc = run(s, res);
	ergon_dynbuf_free(&keep);
	free(s);
	return rc;
}

int ergon_jcs_stream_file(const char *path, size_t max_len, unsigned flags,
			  struct ergon_jcs_stream_result *res, struct ergon_err *err)
{
	memset(res, 0, sizeof(*res));
	int fd;
	/* A regular file only (it is read by offset), and a FIFO never blocks
	 * the open. */
	int orc = ergon_open_input(path, NULL, 0, &fd, err);
	if (orc)
		return orc;
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int e = errno;
		close(fd);
		return ergon_err_errno(err, e, "%s: cannot read", path);
	}
	if ((uint64_t)st.st_size > max_len) {
		close(fd);
		return ergon_err_set(err, ERGON_ETOOBIG,
				     "%s: %lld bytes, above the %zu-byte limit for an artifact",
				     path, (long long)st.st_size, max_len);
	}
	struct js *s = calloc(1, sizeof(*s));
	unsigned char *win = malloc(RD_WINDOW);
	if (s == NULL || win == NULL) {
		free(s);
		free(win);
		close(fd);
		return ergon_err_set(err, ERGON_ENOMEM, "%s: out of memory", path);
	}
	*s = (struct js){.fd = fd,
			 .name = path,
			 .size = (uint64_t)st.st_size,
			 .own = win,
			 .flags = flags,
			 .err = err};
	int rc = run(s, res);
	free(win);
	free(s);
	int keep_fd = 0;
	for (size_t i = 0; rc == 0 && i < res->n_packed; i++)
		keep_fd |= res->packed[i].spilled;
	if (keep_fd) {
		/* The spilled series are read again from the file. */
		res->fd = fd;
		res->has_fd = 1;
	} else {
		close(fd);
	}
	return rc;
}

void ergon_jcs_stream_result_free(struct ergon_jcs_stream_result *res)
{
	if (res == NULL)
		return;
	json_decref(res->tree);
	for (size_t i = 0; i < res->n_packed; i++)
		if (!res->packed[i].taken)
			free(res->packed[i].v);
	free(res->packed);
	free(res->canon);
	if (res->has_fd)
		close(res->fd);
	memset(res, 0, sizeof(*res));
}

struct ergon_jcs_packed *ergon_jcs_packed_find(struct ergon_jcs_stream_result *res,
					       const json_t *placeholder)
{
	if (res == NULL || placeholder == NULL)
		return NULL;
	for (size_t i = 0; i < res->n_packed; i++)
		if (res->packed[i].placeholder == placeholder)
			return &res->packed[i];
	return NULL;
}

/* --- cursors over spilled series ---------------------------------------- */

struct ergon_jcs_cursor {
	struct js s;
	size_t left, index;
	struct ergon_err err;
};

int ergon_jcs_cursor_open(const struct ergon_jcs_stream_result *res,
			  const struct ergon_jcs_packed *pk, struct ergon_jcs_cursor **out,
			  struct ergon_err *err)
{
	*out = NULL;
	if (!res->has_fd || !pk->spilled)
		return ergon_err_set(err, ERGON_EUSAGE, "series cursor: the array is not spilled");
	struct ergon_jcs_cursor *c = calloc(1, sizeof(*c));
	unsigned char *win = malloc(RD_WINDOW);
	if (c == NULL || win == NULL) {
		free(c);
		free(win);
		return ergon_err_set(err, ERGON_ENOMEM, "out of memory opening a series cursor");
	}
	struct stat st;
	uint64_t size = fstat(res->fd, &st) == 0 ? (uint64_t)st.st_size : 0;
	c->s = (struct js){.fd = res->fd,
			   .name = "series",
			   .size = size,
			   .own = win,
			   .pos = pk->file_pos + 1,
			   .mute = 1,
			   .err = &c->err};
	c->left = pk->n;
	*out = c;
	return 0;
}

int ergon_jcs_cursor_next(struct ergon_jcs_cursor *c, double *v, struct ergon_err *err)
{
	if (c->left == 0)
		return 0;
	struct js *s = &c->s;
	skip_ws(s);
	if (c->index > 0) {
		if (peek(s) != ',')
			return ergon_err_set(err, ERGON_EIO,
					     "series at byte %llu changed since it was read",
					     (unsigned long long)s->pos);
		s->pos++;
		skip_ws(s);
	}
	int rc;
	if (peek(s) == 'n') {
		rc = expect_literal(s, "null", 4);
		*v = NAN;
	} else {
		int is_int;
		long long iv;
		rc = read_number(s, v, &is_int, &iv);
	}
	if (rc)
		return ergon_err_set(err, rc, "%s (re-reading a series: did the file change?)",
				     c->err.msg);
	c->index++;
	c->left--;
	return 1;
}

void ergon_jcs_cursor_free(struct ergon_jcs_cursor *c)
{
	if (c == NULL)
		return;
	free(c->s.own);
	free(c);
}
