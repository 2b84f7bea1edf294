/* Bounded text buffer and integer formatting for a runtime without stdio. */
#include "ergon/ert_fmt.h"

void ert_buf_init(struct ert_buf *b, char *data, size_t cap)
{
	b->data = data;
	b->cap = cap;
	ert_buf_reset(b);
}

void ert_buf_reset(struct ert_buf *b)
{
	b->len = 0;
	b->overflow = 0;
	if (b->cap > 0)
		b->data[0] = '\0';
}

void ert_buf_char(struct ert_buf *b, char c)
{
	/* Keep one byte for the terminating NUL. */
	if (b->len + 1 >= b->cap) {
		b->overflow = 1;
		return;
	}
	b->data[b->len++] = c;
	b->data[b->len] = '\0';
}

void ert_buf_str(struct ert_buf *b, const char *s)
{
	if (s == NULL)
		s = "(null)";
	while (*s != '\0')
		ert_buf_char(b, *s++);
}

void ert_buf_u64(struct ert_buf *b, uint64_t v)
{
	char digits[20]; /* 2^64-1 has 20 decimal digits */
	size_t n = 0;
	do {
		digits[n++] = (char)('0' + (char)(v % 10u));
		v /= 10u;
	} while (v != 0 && n < sizeof digits);
	while (n > 0)
		ert_buf_char(b, digits[--n]);
}

void ert_buf_i64(struct ert_buf *b, int64_t v)
{
	if (v < 0) {
		ert_buf_char(b, '-');
		/* Negate in unsigned arithmetic so INT64_MIN does not overflow. */
		ert_buf_u64(b, (uint64_t)0 - (uint64_t)v);
		return;
	}
	ert_buf_u64(b, (uint64_t)v);
}

const char *ert_buf_cstr(struct ert_buf *b)
{
	if (b->cap == 0)
		return "";
	b->data[b->len < b->cap ? b->len : b->cap - 1] = '\0';
	return b->data;
}
