/* The line splitter's loop (hpx_lines_feed), inline: its one caller
 * (parser.c) passes its line function as a constant, so the compiler calls
 * it directly, or inlines it, instead of through a pointer for every line.
 * Included by parser.c only. */
#ifndef ERGON_HPX_LINES_FEED_H
#define ERGON_HPX_LINES_FEED_H

#include "hpx_internal.h"

#include <string.h>

static inline void hpx_drop_line(struct hpx_lines *l)
{
	if (!l->dropped)
		l->first_dropped_lineno = l->lineno;
	l->dropped++;
}

/* The next '\n' at or after p (before end), or NULL. Short lines are the
 * rule, so instead of a memchr call per line a 64-byte window is scanned
 * once (SSE2: one bit per byte) and its newlines handed out one by one;
 * the last bytes of a chunk (under 64) go to memchr. */
struct nl_scan {
	const char *base; /* the scanned window [base, base + 64); NULL: none */
	uint64_t mask;	  /* its newlines */
};

#if defined(__SSE2__) && !defined(ERGON_NO_SIMD)
#include <emmintrin.h>

static inline const char *nl_next(struct nl_scan *w, const char *p, const char *end)
{
	for (;;) {
		if (w->base && p < w->base + 64) {
			uint64_t m = w->mask & (UINT64_MAX << (unsigned)(p - w->base));
			if (m)
				return w->base + __builtin_ctzll(m);
			p = w->base + 64;
		}
		if (end - p < 64)
			return p < end ? memchr(p, '\n', (size_t)(end - p)) : NULL;
		const __m128i nl = _mm_set1_epi8('\n');
		uint64_t m = 0;
		for (unsigned k = 0; k < 4; k++) {
			__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * k));
			m |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, nl))
			     << (16 * k);
		}
		w->base = p;
		w->mask = m;
	}
}
#else
static inline const char *nl_next(struct nl_scan *w, const char *p, const char *end)
{
	(void)w;
	return memchr(p, '\n', (size_t)(end - p));
}
#endif

static inline int hpx_lines_feed(struct hpx_lines *l, const char *data, size_t len, hpx_line_fn fn,
				 void *ctx)
{
	const char *p = data;
	const char *end = data + len;
	struct nl_scan w = {NULL, 0};
	while (p < end) {
		const char *nl = nl_next(&w, p, end);
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
			hpx_drop_line(l);
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

#endif
