/* A bounded text buffer with its own integer and string formatting: the
 * runtime has no stdio. Appends past the capacity set `overflow` and are
 * dropped (never written past the end). */
#ifndef ERT_FMT_H
#define ERT_FMT_H

#include <stddef.h>
#include <stdint.h>

struct ert_buf {
	char *data;
	size_t cap; /* bytes in data, including room for a NUL */
	size_t len;
	int overflow;
};

void ert_buf_init(struct ert_buf *b, char *data, size_t cap);
void ert_buf_reset(struct ert_buf *b);
void ert_buf_char(struct ert_buf *b, char c);
void ert_buf_str(struct ert_buf *b, const char *s);
void ert_buf_u64(struct ert_buf *b, uint64_t v);
void ert_buf_i64(struct ert_buf *b, int64_t v);
/* NUL-terminated view of the buffer (always terminated). */
const char *ert_buf_cstr(struct ert_buf *b);

#endif
