/* The samples CSV reader of `ergon kernels report` (format in
 * include/ergon/kernels.h). Errors name the file, the line and the byte
 * column of the cell, the column's name, and the fix. */
#include "ergon/kernels.h"
#include "ergon/parse.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

enum col { C_CASE, C_IMPL, C_CORRECT, C_COUNT, C_START, C_END, C_BITS, C_OVERHEAD, C_REP, C_N };
static const char *const COLS[C_N] = {"case", "impl",	      "correct",  "count",     "start",
				      "end",  "counter_bits", "overhead", "repetition"};
#define MAX_FIELDS 64

struct cell {
	const char *p;
	size_t len;
	size_t col; /* 1-based byte column of the cell's first byte */
};

static void trim(struct cell *c)
{
	while (c->len > 0 && (c->p[0] == ' ' || c->p[0] == '\t')) {
		c->p++;
		c->len--;
		c->col++;
	}
	while (c->len > 0 && (c->p[c->len - 1] == ' ' || c->p[c->len - 1] == '\t'))
		c->len--;
}

/* Split one line (without its newline) into at most MAX_FIELDS cells. */
static int split(const char *p, size_t len, struct cell *cells, size_t *n, const char *name,
		 size_t line, struct ergon_err *err)
{
	size_t k = 0, start = 0;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && p[i] == '"')
			return ergon_err_set(err, ERGON_EPARSE,
					     "%s:%zu:%zu: quoted cells are not supported: "
					     "write names without quotes or commas",
					     name, line, i + 1);
		if (i == len || p[i] == ',') {
			if (k == MAX_FIELDS)
				return ergon_err_set(err, ERGON_ETOOBIG,
						     "%s:%zu: more than %d columns", name, line,
						     MAX_FIELDS);
			cells[k] = (struct cell){p + start, i - start, start + 1};
			trim(&cells[k]);
			k++;
			start = i + 1;
		}
	}
	*n = k;
	return 0;
}

static int cell_is(const struct cell *c, const char *s)
{
	return c->len == strlen(s) && memcmp(c->p, s, c->len) == 0;
}

static int parse_u64(const struct cell *c, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	if (c->len == 0 || c->len > 20)
		return -1;
	for (size_t i = 0; i < c->len; i++) {
		if (c->p[i] < '0' || c->p[i] > '9')
			return -1;
		unsigned dgt = (unsigned)(c->p[i] - '0');
		if (v > (UINT64_MAX - dgt) / 10)
			return -1;
		v = v * 10 + dgt;
	}
	if (v > max)
		return -1;
	*out = v;
	return 0;
}

#define CELLERR(code, c, colname, fmt, ...)                                             \
	ergon_err_set(err, code, "%s:%zu:%zu: %s: " fmt, name, line, (c)->col, colname, \
		      ##__VA_ARGS__)

static int row(struct ergon_kernels_data *d, const int *idx, const struct cell *cells,
	       const char *name, size_t line, size_t *overhead_rows, struct ergon_err *err)
{
	char case_name[ERGON_KERNELS_NAME_MAX + 1], impl[ERGON_KERNELS_NAME_MAX + 1];
	const struct cell *cc = &cells[idx[C_CASE]], *ci = &cells[idx[C_IMPL]];
	const struct cell *ck = &cells[idx[C_CORRECT]];
	if (cc->len == 0 || cc->len > ERGON_KERNELS_NAME_MAX)
		return CELLERR(ERGON_EPARSE, cc, "case", "a name of 1 to %d bytes is needed",
			       ERGON_KERNELS_NAME_MAX);
	if (ci->len == 0 || ci->len > ERGON_KERNELS_NAME_MAX)
		return CELLERR(ERGON_EPARSE, ci, "impl", "a name of 1 to %d bytes is needed",
			       ERGON_KERNELS_NAME_MAX);
	memcpy(case_name, cc->p, cc->len);
	case_name[cc->len] = '\0';
	memcpy(impl, ci->p, ci->len);
	impl[ci->len] = '\0';
	if (memchr(case_name, '\0', cc->len) || memchr(impl, '\0', ci->len))
		return CELLERR(ERGON_EPARSE, cc, "case", "a NUL byte in a name");
	int correct;
	if (cell_is(ck, "pass") || cell_is(ck, "true") || cell_is(ck, "1"))
		correct = 1;
	else if (cell_is(ck, "fail") || cell_is(ck, "false") || cell_is(ck, "0"))
		correct = 0;
	else if (ck->len == 0)
		return CELLERR(ERGON_EPARSE, ck, "correct",
			       "empty: the correctness verdict is required on every row "
			       "(pass or fail)");
	else
		return CELLERR(ERGON_EPARSE, ck, "correct", "'%.*s' is not pass or fail",
			       (int)(ck->len > 32 ? 32 : ck->len), ck->p);

	double count = NAN;
	const struct cell *at = NULL; /* the cell the count came from */
	if (idx[C_COUNT] >= 0 && cells[idx[C_COUNT]].len > 0) {
		at = &cells[idx[C_COUNT]];
		if (ergon_parse_double_n(at->p, at->len, &count) != 0 || !isfinite(count))
			return CELLERR(ERGON_EPARSE, at, "count", "'%.*s' is not a finite number",
				       (int)(at->len > 32 ? 32 : at->len), at->p);
		if (count <= 0)
			return CELLERR(ERGON_EPARSE, at, "count",
				       "%g is not > 0: a counter that did not advance is "
				       "unsupported or broken, never a zero-cost iteration; "
				       "drop the row or fix the harness",
				       count);
	} else if (idx[C_START] >= 0 &&
		   (cells[idx[C_START]].len > 0 || cells[idx[C_END]].len > 0)) {
		unsigned bits = 32;
		if (idx[C_BITS] >= 0 && cells[idx[C_BITS]].len > 0) {
			uint64_t b;
			if (parse_u64(&cells[idx[C_BITS]], 64, &b) != 0 || b == 0)
				return CELLERR(ERGON_EPARSE, &cells[idx[C_BITS]], "counter_bits",
					       "not an integer in 1..64");
			bits = (unsigned)b;
		}
		uint64_t mask = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
		uint64_t s, e;
		if (parse_u64(&cells[idx[C_START]], mask, &s) != 0)
			return CELLERR(ERGON_EPARSE, &cells[idx[C_START]], "start",
				       "not an unsigned integer below 2^%u (counter_bits)", bits);
		if (parse_u64(&cells[idx[C_END]], mask, &e) != 0)
			return CELLERR(ERGON_EPARSE, &cells[idx[C_END]], "end",
				       "not an unsigned integer below 2^%u (counter_bits)", bits);
		/* Modular difference: a counter that wrapped once between the
		 * two reads still gives the elapsed count. */
		uint64_t delta = (e - s) & mask;
		at = &cells[idx[C_END]];
		if (delta == 0)
			return CELLERR(ERGON_EPARSE, at, "end",
				       "equal to start: the counter did not advance (unsupported "
				       "counter, or more than one wrap); never a zero count");
		count = (double)delta;
	}
	if (!isnan(count) && idx[C_OVERHEAD] >= 0 && cells[idx[C_OVERHEAD]].len > 0) {
		const struct cell *co = &cells[idx[C_OVERHEAD]];
		double ov;
		if (ergon_parse_double_n(co->p, co->len, &ov) != 0 || !isfinite(ov) || ov < 0)
			return CELLERR(ERGON_EPARSE, co, "overhead",
				       "'%.*s' is not a finite number >= 0",
				       (int)(co->len > 32 ? 32 : co->len), co->p);
		if (ov >= count)
			return CELLERR(ERGON_EPARSE, co, "overhead",
				       "%g is not below the count %g: the timing read costs as "
				       "much as the kernel; time more iterations per sample",
				       ov, count);
		count -= ov;
		(*overhead_rows)++;
	}
	unsigned rep = 0;
	if (idx[C_REP] >= 0) {
		const struct cell *cr = &cells[idx[C_REP]];
		uint64_t r;
		if (parse_u64(cr, ERGON_KERNELS_MAX_REPEAT, &r) != 0 || r == 0)
			return CELLERR(ERGON_EPARSE, cr, "repetition",
				       "'%.*s' is not an integer in 1..%d (the repetition of the "
				       "whole measurement this sample belongs to)",
				       (int)(cr->len > 32 ? 32 : cr->len), cr->p,
				       ERGON_KERNELS_MAX_REPEAT);
		rep = (unsigned)r;
	}
	int rc = ergon_kernels_add_rep(d, case_name, impl, correct, count, rep, err);
	if (rc != 0 && err != NULL) {
		/* Put the place in front of the engine's message. */
		char msg[ERGON_ERR_MSG_MAX];
		memcpy(msg, err->msg, sizeof msg);
		err->code = 0;
		ergon_err_set(err, rc, "%s:%zu: %s", name, line, msg);
	}
	return rc;
}

int ergon_kernels_csv_parse(const char *text, size_t len, const char *name,
			    struct ergon_kernels_data **out, size_t *overhead_rows,
			    struct ergon_err *err)
{
	struct ergon_kernels_data *d = NULL;
	struct cell cells[MAX_FIELDS];
	int idx[C_N] = {0};
	size_t n_cols = 0, line = 0, pos = 0, rows = 0;
	int have_header = 0, rc;
	*out = NULL;
	*overhead_rows = 0;
	if (len > ERGON_KERNELS_CSV_MAX)
		return ergon_err_set(err, ERGON_ETOOBIG, "%s: %zu bytes (at most %u)", name, len,
				     ERGON_KERNELS_CSV_MAX);
	rc = ergon_kernels_data_new(&d, err);
	if (rc != 0)
		return rc;
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len;
		size_t l = end - pos;
		const char *p = text + pos;
		pos = end + 1;
		line++;
		if (l > 0 && p[l - 1] == '\r')
			l--;
		size_t k = 0;
		while (k < l && (p[k] == ' ' || p[k] == '\t'))
			k++;
		if (k == l || p[k] == '#')
			continue;
		size_t n = 0;
		rc = split(p, l, cells, &n, name, line, err);
		if (rc != 0)
			goto cleanup;
		if (!have_header) {
			for (int c = 0; c < C_N; c++)
				idx[c] = -1;
			for (size_t f = 0; f < n; f++)
				for (int c = 0; c < C_N; c++)
					if (cell_is(&cells[f], COLS[c])) {
						if (idx[c] >= 0) {
							rc = ergon_err_set(
							    err, ERGON_EPARSE,
							    "%s:%zu:%zu: column '%s' appears "
							    "twice",
							    name, line, cells[f].col, COLS[c]);
							goto cleanup;
						}
						idx[c] = (int)f;
					}
			const char *missing = NULL, *why = "";
			if (idx[C_CASE] < 0)
				missing = "case";
			else if (idx[C_IMPL] < 0)
				missing = "impl";
			else if (idx[C_CORRECT] < 0) {
				missing = "correct";
				why = " (the correctness verdict is required: a case that failed "
				      "correctness is reported and never timed)";
			} else if (idx[C_COUNT] < 0 && idx[C_START] < 0 && idx[C_END] < 0) {
				missing = "count";
				why = " (or start and end)";
			} else if ((idx[C_START] < 0) != (idx[C_END] < 0)) {
				missing = idx[C_START] < 0 ? "start" : "end";
				why = " (start and end come together)";
			}
			if (missing != NULL) {
				rc = ergon_err_set(err, ERGON_EPARSE,
						   "%s:%zu: missing column '%s'%s; the header "
						   "needs case,impl,correct,count",
						   name, line, missing, why);
				goto cleanup;
			}
			n_cols = n;
			have_header = 1;
			continue;
		}
		if (n != n_cols) {
			rc = ergon_err_set(err, ERGON_EPARSE,
					   "%s:%zu: %zu cells, the header has %zu columns", name,
					   line, n, n_cols);
			goto cleanup;
		}
		rc = row(d, idx, cells, name, line, overhead_rows, err);
		if (rc != 0)
			goto cleanup;
		rows++;
	}
	if (!have_header) {
		rc = ergon_err_set(err, ERGON_EPARSE,
				   "%s: empty: the header needs case,impl,correct,count", name);
		goto cleanup;
	}
	if (rows == 0) {
		rc = ergon_err_set(err, ERGON_EPARSE, "%s: a header and no sample rows", name);
		goto cleanup;
	}
	*out = d;
	d = NULL;
cleanup:
	ergon_kernels_data_free(d);
	return rc;
}
