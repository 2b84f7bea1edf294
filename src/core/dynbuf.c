/* Growable byte buffer with a maximum (see include/ergon/dynbuf.h). */
#include "ergon/dynbuf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ergon_dynbuf_init(struct ergon_dynbuf *b, size_t max)
{
	memset(b, 0, sizeof(*b));
	b->max = max;
}

/* Make room for n more bytes plus the NUL. */
static int grow(struct ergon_dynbuf *b, size_t n)
{
	if (b->err)
		return b->err;
	if (n > b->max || b->len > b->max - n) {
		b->err = ERGON_ETOOBIG;
		return b->err;
	}
	size_t need = b->len + n + 1;
	if (need <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	if (cap > b->max + 1)
		cap = b->max + 1;
	char *p = realloc(b->p, cap);
	if (p == NULL) {
		b->err = ERGON_ENOMEM;
		return b->err;
	}
	b->p = p;
	b->cap = cap;
	return 0;
}

void ergon_dynbuf_add(struct ergon_dynbuf *b, const void *data, size_t n)
{
	if (grow(b, n))
		return;
	if (n)
		memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void ergon_dynbuf_adds(struct ergon_dynbuf *b, const char *s)
{
	ergon_dynbuf_add(b, s, strlen(s));
}

void ergon_dynbuf_addf(struct ergon_dynbuf *b, const char *fmt, ...)
{
	if (b->err)
		return;
	va_list ap;
	va_start(ap, fmt);
	int w = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (w < 0) {
		b->err = ERGON_ENOMEM;
		return;
	}
	if (grow(b, (size_t)w))
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)w + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)w;
}

int ergon_dynbuf_error(const struct ergon_dynbuf *b)
{
	return b->err;
}

char *ergon_dynbuf_take(struct ergon_dynbuf *b, size_t *len)
{
	char *p = NULL;
	size_t max = b->max;
	if (b->err == 0) {
		p = b->p ? b->p : calloc(1, 1);
		if (len)
			*len = b->p ? b->len : 0;
		b->p = NULL;
	}
	ergon_dynbuf_free(b);
	ergon_dynbuf_init(b, max);
	return p;
}

void ergon_dynbuf_free(struct ergon_dynbuf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
	b->err = 0;
}
