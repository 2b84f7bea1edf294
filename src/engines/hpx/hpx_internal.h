/* Private pieces of the HPX parser engine: the line splitter, Python-
 * compatible number parsing, and the power terminal state. */
#ifndef ERGON_HPX_INTERNAL_H
#define ERGON_HPX_INTERNAL_H

#include "ergon/error.h"
#include "ergon/hpx.h"
#include "ergon/utf8.h"
#include "ergon/wire.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* --- line splitter ---------------------------------------------------------
 * Bytes in, complete lines out. A line that fits in one chunk is handed out
 * in place (no copy); only a line straddling chunks is assembled in a fixed
 * buffer of line_max bytes. A longer line is dropped, counted, and the
 * splitter resynchronises at the next '\n'. */
typedef int (*hpx_line_fn)(void *ctx, const char *line, size_t len, uint64_t lineno);

struct hpx_lines {
	char *buf;
	size_t cap; /* line_max */
	size_t len;
	bool dropping;
	uint64_t lineno; /* number of the line being assembled, from 1 */
	uint64_t dropped;
	uint64_t first_dropped_lineno;
};

int hpx_lines_init(struct hpx_lines *l, size_t line_max, struct ergon_err *err);
void hpx_lines_cleanup(struct hpx_lines *l);
/* hpx_lines_feed (lines_feed.h, inline): calls fn for every complete line;
 * stops at fn's first nonzero return and returns it. */
/* Hands out a final unterminated line, if any. */
int hpx_lines_finish(struct hpx_lines *l, hpx_line_fn fn, void *ctx);

/* Python str.strip(): the ASCII whitespace it strips (space, \t \n \v \f
 * \r, \x1c-\x1f) and the Unicode spaces encoded in UTF-8 (U+0085, U+00A0,
 * U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000). Adjusts
 * *s and *n. */
void hpx_strip(const char **s, size_t *n);

/* Python int(s) for str s: optional sign, decimal digits (any Unicode Nd
 * digit, as Python) with single '_' between digits, surrounding whitespace.
 * Returns true and the value (as the nearest double; *out_i64 when it fits)
 * on success. */
bool hpx_py_int(const char *s, size_t n, double *out, int64_t *out_i64, bool *fits_i64);
/* Python float(s) restricted to finite numbers: [sign] digits with '_'
 * separators, optional fraction, optional exponent. inf, nan and overflow
 * to infinity are refused (stricter, see docs/PROTOCOL.md). */
bool hpx_py_float(const char *s, size_t n, double *out);


/* --- power terminal ------------------------------------------------------- */
enum { HPX_PT_NKEYS = 23 };

struct hpx_terminal_state {
	bool in_record;
	bool complete;
	bool seen_start;
	int err_code; /* first immediate error (malformed line, duplicate, ...) */
	char err_msg[256];
	uint64_t start_lineno;
	bool present[HPX_PT_NKEYS];
	char values[HPX_PT_NKEYS][ERGON_HPX_TEXT_MAX];
	unsigned n_unknown;
	char unknown[4][64];
};

/* True when the line (stripped) belongs to the terminal record and was
 * consumed. */
bool hpx_terminal_line(struct hpx_terminal_state *t, const char *line, size_t n, uint64_t lineno);
int hpx_terminal_result(const struct hpx_terminal_state *t, struct ergon_hpx_terminal *out,
			struct ergon_err *err);

#endif
