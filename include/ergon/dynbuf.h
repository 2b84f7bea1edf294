/* A growable byte buffer with a maximum (curl's dynbuf): every text ergon
 * builds in memory (canonical JSON, CSV views, tables) goes through one.
 * Appends after a failure are no-ops; the first failure is kept and
 * reported by ergon_dynbuf_error(), so callers check once at the end.
 */
#ifndef ERGON_DYNBUF_H
#define ERGON_DYNBUF_H

#include <stddef.h>

#include "ergon/error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ergon_dynbuf {
	char *p;    /* NUL-terminated once anything was added */
	size_t len; /* bytes, without the NUL */
	size_t cap;
	size_t max; /* growth limit in bytes (ERGON_ETOOBIG beyond) */
	int err;    /* 0, ERGON_ENOMEM or ERGON_ETOOBIG */
};

/* Start empty with a growth limit of max bytes. */
ERGON_API void ergon_dynbuf_init(struct ergon_dynbuf *b, size_t max);
ERGON_API void ergon_dynbuf_add(struct ergon_dynbuf *b, const void *data, size_t n);
ERGON_API void ergon_dynbuf_adds(struct ergon_dynbuf *b, const char *s);
ERGON_API void ergon_dynbuf_addf(struct ergon_dynbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* 0, or the first failure (ERGON_ENOMEM, ERGON_ETOOBIG). */
ERGON_API int ergon_dynbuf_error(const struct ergon_dynbuf *b);
/* Hand the text to the caller (who frees it; "" when empty), or NULL after a
 * failure; the buffer is reset either way. */
ERGON_API char *ergon_dynbuf_take(struct ergon_dynbuf *b, size_t *len);
/* Release the memory; the buffer can be reused after ergon_dynbuf_init. */
ERGON_API void ergon_dynbuf_free(struct ergon_dynbuf *b);

#ifdef __cplusplus
}
#endif
#endif
