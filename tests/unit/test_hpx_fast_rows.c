/* The row fast path reads counters eight bytes at a time where the line has
 * them and byte by byte near its end. Every counter value below is checked
 * against libc's strtod of the same digits (an independent reader), for
 * numbers of 1 to 20 digits, with leading zeros, at every distance from the
 * end of the line (so each one is read by words, by bytes, and by both), and
 * next to text cells holding bytes the word scan must not mistake for digits
 * or separators (0xFA-0xFF, ':', '/', spaces). One iteration with the mean:
 * the aggregated value is the cell's value. Also: lines shorter than a
 * word, special bytes in a line's last text cell, Layer/Op text shared
 * with the previous iteration only where it is the same, and the line
 * splitter on lines of every length in chunks of every size. And rows that
 * repeat the previous iteration's Layer and Op (row_repeat reads only
 * their counters): each variant of a row, read after a row that it repeats
 * or nearly repeats, against the same variant read as the first row of a
 * stream (where nothing is repeated), cell by cell. */
#include "ergon/hpx.h"
#include "test_support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const numbers[] = {"0",
				      "7",
				      "42",
				      "100",
				      "12345678",
				      "123456789",
				      "99999999",
				      "100000000",
				      "4294967295",
				      "000000000042",
				      "123456789012345678",
				      "999999999999999999",
				      "1000000000000000000",
				      "00000000000000000042",
				      "18446744073709551615",
				      "0000000"};

static const char *const ops[] = {"CONV_2D",
				  "A",
				  "DEPTHWISE_CONV_2D:0000000000017",
				  "x\xfa\xfb/:",
				  "op with spaces",
				  "\xff\xff\xff\xff\xff\xff\xff\xff\xff"};

/* The mean result of a whole stream s (started and ended), with flags. */
static struct ergon_pmu_result *parse_stream(const char *s, unsigned flags)
{
	struct ergon_hpx_parser *p = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_hpx_parser_new(NULL, &p, &err), 0);
	assert_int_equal(ergon_hpx_parser_feed(p, s, strlen(s), &err), ERGON_HPX_DONE);
	assert_int_equal(ergon_hpx_parser_finish(p, &err), ERGON_HPX_DONE);
	struct ergon_pmu_result *r = NULL;
	assert_int_equal(ergon_hpx_parser_result(p, ERGON_HPX_AGG_MEAN, flags, &r, &err), 0);
	ergon_hpx_parser_free(p);
	return r;
}

/* Parse one iteration of one row "0,<op>,<a>,<b>,<pad>" and return the two
 * counters (mean of one sample = the sample). pad is a text column of
 * `padlen` 'z' bytes after the counters, so that b sits at every distance
 * from the end of the line. */
static void parse_row(const char *op, const char *a, const char *b, size_t padlen, double *va,
		      double *vb)
{
	char pad[32];
	memset(pad, 'z', padlen);
	pad[padlen] = '\0';
	char *s = ts_strf("--- HPX_START ---\n--- HPX_ITER 0 ---\n"
			  "\"Layer\",\"Op\",\"C_A\",\"C_B\",\"overflow\"%s\n"
			  "0,%s,%s,%s,0%s%s\n--- HPX_END ---\n",
			  padlen ? ",\"name\"" : "", op, a, b, padlen ? "," : "", pad);
	struct ergon_pmu_result *r = parse_stream(s, 0);
	assert_int_equal(r->layers.n, 1);
	assert_int_equal(r->parse_errors, 0);
	const struct ergon_pmu_layer *L = &r->layers.layers[0];
	*va = *vb = NAN;
	for (size_t k = 0; k < L->ncounters; k++) {
		if (strcmp(L->counters[k].name, "C_A") == 0)
			*va = L->counters[k].value;
		else if (strcmp(L->counters[k].name, "C_B") == 0)
			*vb = L->counters[k].value;
	}
	ergon_pmu_result_free(r);
	free(s);
}

static void test_numbers_everywhere(void **state)
{
	(void)state;
	size_t nn = sizeof(numbers) / sizeof(numbers[0]);
	size_t no = sizeof(ops) / sizeof(ops[0]);
	for (size_t i = 0; i < nn; i++) {
		for (size_t j = 0; j < nn; j++) {
			for (size_t padlen = 0; padlen <= 9; padlen++) {
				const char *op = ops[(i + j + padlen) % no];
				double va, vb;
				parse_row(op, numbers[i], numbers[j], padlen, &va, &vb);
				double wa = strtod(numbers[i], NULL), wb = strtod(numbers[j], NULL);
				if (va != wa || vb != wb) {
					print_error("row 0,%s,%s,%s pad %zu: got %.17g %.17g, want "
						    "%.17g %.17g\n",
						    op, numbers[i], numbers[j], padlen, va, vb, wa,
						    wb);
					fail();
				}
			}
		}
	}
}

/* A non-digit right after digits ends the number only where it is a comma:
 * anything else makes the cell a refused (parse error) cell, on both paths. */
static long parse_errors_of(const char *row)
{
	char *s = ts_strf("--- HPX_START ---\n--- HPX_ITER 0 ---\n"
			  "\"Layer\",\"Op\",\"C_A\",\"C_B\",\"overflow\",\"name\",\"C_C\"\n"
			  "%s\n--- HPX_END ---\n",
			  row);
	struct ergon_hpx_parser *p = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_hpx_parser_new(NULL, &p, &err), 0);
	assert_int_equal(ergon_hpx_parser_feed(p, s, strlen(s), &err), ERGON_HPX_DONE);
	assert_int_equal(ergon_hpx_parser_finish(p, &err), ERGON_HPX_DONE);
	struct ergon_hpx_stats st;
	ergon_hpx_parser_stats(p, &st);
	ergon_hpx_parser_free(p);
	free(s);
	return (long)st.parse_errors;
}

/* A non-digit right after digits ends the number only where it is a comma:
 * anything else makes the cell a refused (parse error) cell. Each bad cell
 * is tried first in the row (read by words: the rest of the row is plain)
 * and last (read by bytes). */
static void test_bad_cells(void **state)
{
	(void)state;
	const char *const bad[] = {"12a",  "1234567\xfa", "123456789:1", "1.5e", "12 3", "+-1",
				   "12:4", "1;",	  "9999/",	 "1?2",	 "7@",	 "1\xff"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *first = ts_strf("0,CONV_2D,%s,12345678,0,zzzzzzzz,1", bad[i]);
		char *last = ts_strf("0,CONV_2D,1,12345678,0,zzzzzzzz,%s", bad[i]);
		long ef = parse_errors_of(first), el = parse_errors_of(last);
		if (ef != 1 || el != 1) {
			print_error("cell '%s': %ld parse errors first, %ld last; want 1 and 1\n",
				    bad[i], ef, el);
			fail();
		}
		free(first);
		free(last);
	}
	/* The same rows with good cells: no error (the helper can tell). */
	assert_int_equal(parse_errors_of("0,CONV_2D,12,12345678,0,zzzzzzzz,1"), 0);
}

/* Parse `text` (HPX_START, one preset, END added) and keep every
 * iteration's rows. */
static struct ergon_pmu_result *parse_iters(const char *text)
{
	char *s = ts_strf("--- HPX_START ---\n%s--- HPX_END ---\n", text);
	struct ergon_pmu_result *r = parse_stream(s, ERGON_HPX_JSON_ITERATIONS);
	free(s);
	return r;
}

static double counter_of(const struct ergon_pmu_layer *L, const char *name)
{
	for (size_t k = 0; k < L->ncounters; k++)
		if (strcmp(L->counters[k].name, name) == 0)
			return L->counters[k].value;
	return NAN;
}

/* Lines shorter than a word (read byte by byte), of exactly one word, and
 * longer, with the counter or a text cell last: every value against
 * strtod, every text cell as written. */
static void test_short_rows(void **state)
{
	(void)state;
	static const char *const texts[] = {"A", "AB", "ADD", "SOFTMAX", "CONV_2D_X"};
	size_t nn = sizeof(numbers) / sizeof(numbers[0]);
	size_t nt = sizeof(texts) / sizeof(texts[0]);
	for (size_t i = 0; i < nn; i++) {
		const char *op = texts[i % nt];
		/* a counter alone; Layer then a counter; a counter then Op */
		char *t = ts_strf("--- HPX_ITER 0 ---\n\"C_A\"\n%s\n"
				  "--- HPX_ITER 1 ---\n\"Layer\",\"C_A\"\n7,%s\n"
				  "--- HPX_ITER 2 ---\n\"C_A\",\"Op\"\n%s,%s\n",
				  numbers[i], numbers[i], numbers[i], op);
		struct ergon_pmu_result *r = parse_iters(t);
		double want = strtod(numbers[i], NULL);
		assert_int_equal(r->npresets, 1);
		assert_int_equal(r->presets[0].niterations, 3);
		assert_int_equal(r->parse_errors, 0);
		for (size_t it = 0; it < 3; it++) {
			const struct ergon_pmu_table *tb = &r->presets[0].iterations[it];
			assert_int_equal(tb->n, 1);
			double got = counter_of(&tb->layers[0], "C_A");
			if (got != want) {
				print_error("iteration %zu, number %s: got %.17g\n", it, numbers[i],
					    got);
				fail();
			}
		}
		const struct ergon_pmu_value *o = &r->presets[0].iterations[2].layers[0].op;
		assert_int_equal(o->kind, ERGON_PMU_TEXT);
		assert_string_equal(o->text, op);
		ergon_pmu_result_free(r);
		free(t);
	}
}

/* A text cell last whose final bytes (under a word) hold a quote, CR or
 * NUL: the row leaves the fast path and is read as Python's csv module
 * reads it (a quote inside an unquoted field is kept; CR or NUL outside
 * quotes refuses the row). */
static void test_special_text_tail(void **state)
{
	(void)state;
	struct ergon_pmu_result *r =
	    parse_iters("--- HPX_ITER 0 ---\n\"C_A\",\"Op\"\n12345678,A\"B\n");
	assert_int_equal(r->parse_errors, 0);
	assert_string_equal(r->presets[0].iterations[0].layers[0].op.text, "A\"B");
	assert_true(counter_of(&r->presets[0].iterations[0].layers[0], "C_A") == 12345678.0);
	ergon_pmu_result_free(r);
	const char rows[][24] = {"12345678,A\rB", "12345678,AB\rC"};
	for (size_t i = 0; i < 2; i++) {
		char *t = ts_strf("--- HPX_ITER 0 ---\n\"C_A\",\"Op\"\n%s\n1,OK\n", rows[i]);
		r = parse_iters(t);
		assert_int_equal(r->parse_errors, 1);
		assert_int_equal(r->presets[0].iterations[0].n, 1);
		assert_string_equal(r->presets[0].iterations[0].layers[0].op.text, "OK");
		ergon_pmu_result_free(r);
		free(t);
	}
	/* A NUL in the tail (the text is built by hand: ts_strf stops at it). */
	static const char nul[] = "--- HPX_START ---\n--- HPX_ITER 0 ---\n\"C_A\",\"Op\"\n"
				  "12345678,A\0B\n1,OK\n--- HPX_END ---\n";
	struct ergon_hpx_parser *p = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_hpx_parser_new(NULL, &p, &err), 0);
	assert_int_equal(ergon_hpx_parser_feed(p, nul, sizeof(nul) - 1, &err), ERGON_HPX_DONE);
	struct ergon_hpx_stats st;
	ergon_hpx_parser_stats(p, &st);
	assert_int_equal(st.parse_errors, 1);
	ergon_hpx_parser_free(p);
}

/* Layer/Op text equal to the previous iteration's same row is shared with
 * it; every near miss (one byte changed at each position, one byte shorter
 * or longer, of 1 to 40 bytes) must be stored as its own text. Each
 * iteration's cells are read back as written. */
static void test_text_shared_or_not(void **state)
{
	(void)state;
	char base[48], var[48];
	for (size_t n = 1; n <= 40; n++) {
		for (size_t k = 0; k < n; k++)
			base[k] = (char)('a' + (k * 7 + n) % 26);
		base[n] = '\0';
		/* variants: same, byte j changed (j < n), shorter, longer */
		for (size_t v = 0; v < n + 3; v++) {
			memcpy(var, base, n + 1);
			if (v < n) {
				var[v] = var[v] == 'Z' ? 'Y' : 'Z';
			} else if (v == n) {
				var[n - 1] = '\0';
				if (n == 1)
					memcpy(var, "Q", 2);
			} else if (v == n + 1) {
				var[n] = 'x';
				var[n + 1] = '\0';
			}
			char *t = ts_strf("--- HPX_ITER 0 ---\n\"Layer\",\"Op\",\"C_A\"\n"
					  "%s,%s,1\n0,%s,2\n--- HPX_ITER 1 ---\n"
					  "\"Layer\",\"Op\",\"C_A\"\n%s,%s,3\n0,%s,4\n",
					  base, base, var, var, var, base);
			struct ergon_pmu_result *r = parse_iters(t);
			const char *want[2][2] = {{base, var}, {var, base}};
			for (size_t it = 0; it < 2; it++) {
				const struct ergon_pmu_table *tb = &r->presets[0].iterations[it];
				assert_int_equal(tb->n, 2);
				for (size_t row = 0; row < 2; row++) {
					const struct ergon_pmu_value *o = &tb->layers[row].op;
					assert_int_equal(o->kind, ERGON_PMU_TEXT);
					if (strcmp(o->text, want[it][row]) != 0) {
						print_error("n %zu variant %zu: iteration %zu row "
							    "%zu op '%s', want '%s'\n",
							    n, v, it, row, o->text, want[it][row]);
						fail();
					}
				}
				/* the Layer cell of row 0: text (or a number) as written */
				const struct ergon_pmu_value *id = &tb->layers[0].id;
				const char *wid = it == 0 ? base : var;
				if (id->kind == ERGON_PMU_TEXT)
					assert_string_equal(id->text, wid);
			}
			ergon_pmu_result_free(r);
			free(t);
		}
	}
}


static bool same_value(const struct ergon_pmu_value *a, const struct ergon_pmu_value *b)
{
	if (a->kind != b->kind || a->i != b->i || a->len != b->len)
		return false;
	if (!(a->d == b->d || (isnan(a->d) && isnan(b->d))))
		return false;
	return (a->text == NULL) == (b->text == NULL) &&
	       (a->text == NULL || memcmp(a->text, b->text, a->len) == 0);
}

/* Row `line` as the second iteration's row 0, after `first` as the first
 * iteration's, against `line` alone: the same Layer, Op, counters,
 * overflow and parse errors. */
static void repeat_case(const char *header, const char *first, const char *line)
{
	char *two = ts_strf("--- HPX_ITER 0 ---\n%s\n%s\n--- HPX_ITER 1 ---\n%s\n%s\n", header,
			    first, header, line);
	char *one = ts_strf("--- HPX_ITER 0 ---\n%s\n%s\n", header, line);
	char *base = ts_strf("--- HPX_ITER 0 ---\n%s\n%s\n", header, first);
	struct ergon_pmu_result *r2 = parse_iters(two), *r1 = parse_iters(one),
				*r0 = parse_iters(base);
	const struct ergon_pmu_table *a = &r2->presets[0].iterations[1];
	const struct ergon_pmu_table *b = &r1->presets[0].iterations[0];
	bool ok = a->n == b->n && r2->parse_errors == r1->parse_errors + r0->parse_errors;
	for (size_t i = 0; ok && i < a->n; i++) {
		const struct ergon_pmu_layer *x = &a->layers[i], *y = &b->layers[i];
		ok = same_value(&x->id, &y->id) && same_value(&x->op, &y->op) &&
		     x->overflow == y->overflow && x->ncounters == y->ncounters;
		for (size_t k = 0; ok && k < x->ncounters; k++)
			ok = strcmp(x->counters[k].name, y->counters[k].name) == 0 &&
			     (x->counters[k].value == y->counters[k].value ||
			      (isnan(x->counters[k].value) && isnan(y->counters[k].value)));
	}
	if (!ok) {
		print_error("after \"%s\", row \"%s\" reads otherwise than alone\n", first, line);
		fail();
	}
	ergon_pmu_result_free(r2);
	ergon_pmu_result_free(r1);
	ergon_pmu_result_free(r0);
	free(two);
	free(one);
	free(base);
}

static void test_repeated_rows(void **state)
{
	(void)state;
	const char *hdr = "\"Layer\",\"Op\",\"C_A\",\"C_B\",\"overflow\"";
	const char *hdr_no_ovf = "\"Layer\",\"Op\",\"C_A\",\"C_B\"";
	const char *hdr_tag = "\"Layer\",\"tag\",\"C_A\",\"C_B\",\"overflow\"";
	/* Variants of the row "3,<op>,17713,75140,0" after it. */
	static const char *const tails[] = {
	    "17713,75140,0", "1,2,0", "0,0,0", "17713,75140,1", "17713,75140, 0", "17713,75140,0 ",
	    "17713,75140,00", "17713,75140,", "17713,75140,0x", "17713,75140,0,5", "17713,75140",
	    "17713,,0", ",75140,0", "17713, 75140,0", "17713,-5,0", "17713,+5,0", "17713,5.0,0",
	    "17713,5e3,0", "17713,\"5\",0", "17713,75140,\"0\"", "17713,7\r5,0",
	    "123456789012345678,1,0", "999999999999999999,1,0", "1000000000000000000,1,0",
	    "00000000000000000042,1,0", "12345678,123456789,0", "1,18446744073709551615,0",
	    "17713,75140,0,", "17713,75140,2", "0000000,0000000,0"};
	static const char *const ops_[] = {"A",
					   "ADD",
					   "CONV",
					   "CONV_2D",
					   "SOFTMAX_",
					   "FULLY_CONNECTED",
					   "DEPTHWISE_CONV_2D",
					   "DEPTHWISE_CONV_2D_LONGER",
					   "DEPTHWISE_CONV_2D_LONGER_STILL",
					   "AN_OP_NAME_LONGER_THAN_THE_PREFIX_CACHE_HOLDS"};
	for (size_t o = 0; o < sizeof ops_ / sizeof ops_[0]; o++) {
		char first[160], line[200];
		snprintf(first, sizeof first, "3,%s,17713,75140,0", ops_[o]);
		for (size_t t = 0; t < sizeof tails / sizeof tails[0]; t++) {
			snprintf(line, sizeof line, "3,%s,%s", ops_[o], tails[t]);
			repeat_case(hdr, first, line);
			repeat_case(hdr_tag, first, line);
		}
		/* Near misses of the prefix: Layer or Op one byte off, padded,
		 * quoted, longer, shorter. */
		const char *fmts[] = {"4,%s,1,2,0",   "3,%sX,1,2,0", "3,X%s,1,2,0", " 3,%s,1,2,0",
				      "3 ,%s,1,2,0",  "3,%s ,1,2,0", "3,\"%s\",1,2,0", "33,%s,1,2,0",
				      "3,%s,1,2,0\r", ",%s,1,2,0"};
		for (size_t f = 0; f < sizeof fmts / sizeof fmts[0]; f++) {
			snprintf(line, sizeof line, fmts[f], ops_[o]);
			repeat_case(hdr, first, line);
			/* and the other way round: the odd row first */
			repeat_case(hdr, line, first);
		}
		/* Without an overflow column. */
		snprintf(first, sizeof first, "3,%s,17713,75140", ops_[o]);
		const char *nov[] = {"17713,75140", "1,2", "1,2,", "1,2,0", "1", "1,2 "};
		for (size_t t = 0; t < sizeof nov / sizeof nov[0]; t++) {
			snprintf(line, sizeof line, "3,%s,%s", ops_[o], nov[t]);
			repeat_case(hdr_no_ovf, first, line);
		}
	}
	/* A first row that needed stripping, or was quoted, is not repeated
	 * from its bytes. */
	repeat_case(hdr, "3,\"A,B\",1,2,0", "3,A,B,1,2,0");
	repeat_case(hdr, "3,A,1,2,0", "3,\"A\",1,2,0");
}

/* Lines of every length from 1 to ~150 bytes (so that newlines fall at
 * every place of the splitter's 64-byte windows), blank and CRLF lines
 * among them, fed whole and in chunks of 1 to 4096 bytes: every row is
 * read as written and the line count is the number of newlines. */
static void test_line_splits(void **state)
{
	(void)state;
	size_t cap = 64 << 10, n = 0;
	char *s = malloc(cap);
	char op[160];
	assert_non_null(s);
	n += (size_t)snprintf(s + n, cap - n,
			      "--- HPX_START ---\n--- HPX_ITER 0 ---\n\"Layer\",\"Op\",\"C_A\"\n");
	for (size_t r = 0; r < 141; r++) {
		memset(op, 'a' + (int)(r % 26), r);
		op[r] = '\0';
		n += (size_t)snprintf(s + n, cap - n, "%zu,%s,%zu%s", r, r ? op : "", r * 7,
				      r % 3 == 0 ? "\r\n" : "\n");
		if (r % 5 == 0)
			n += (size_t)snprintf(s + n, cap - n, "\n");
	}
	n += (size_t)snprintf(s + n, cap - n, "--- HPX_END ---\n");
	assert_true(n < cap);
	uint64_t newlines = 0;
	for (size_t i = 0; i < n; i++)
		newlines += s[i] == '\n';
	const size_t chunks[] = {0, 1, 3, 63, 64, 65, 127, 4096};
	for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
		struct ergon_hpx_parser *p = NULL;
		struct ergon_err err = {0};
		assert_int_equal(ergon_hpx_parser_new(NULL, &p, &err), 0);
		for (size_t off = 0; off < n;) {
			size_t k = chunks[c] && n - off > chunks[c] ? chunks[c] : n - off;
			assert_true(ergon_hpx_parser_feed(p, s + off, k, &err) >= 0);
			off += k;
		}
		assert_int_equal(ergon_hpx_parser_finish(p, &err), ERGON_HPX_DONE);
		struct ergon_hpx_stats st;
		ergon_hpx_parser_stats(p, &st);
		assert_int_equal(st.lines, newlines);
		struct ergon_pmu_result *r = NULL;
		assert_int_equal(ergon_hpx_parser_result(p, ERGON_HPX_AGG_MEAN,
							 ERGON_HPX_JSON_ITERATIONS, &r, &err),
				 0);
		assert_int_equal(r->parse_errors, 0);
		const struct ergon_pmu_table *tb = &r->presets[0].iterations[0];
		assert_int_equal(tb->n, 141);
		for (size_t row = 0; row < 141; row++) {
			memset(op, 'a' + (int)(row % 26), row);
			op[row] = '\0';
			const struct ergon_pmu_layer *L = &tb->layers[row];
			if (row && (L->op.kind != ERGON_PMU_TEXT || strcmp(L->op.text, op) != 0)) {
				print_error("chunk %zu row %zu: op '%s'\n", chunks[c], row,
					    L->op.kind == ERGON_PMU_TEXT ? L->op.text : "?");
				fail();
			}
			assert_true(counter_of(L, "C_A") == (double)(row * 7));
		}
		ergon_pmu_result_free(r);
		ergon_hpx_parser_free(p);
	}
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_numbers_everywhere), cmocka_unit_test(test_bad_cells),
	    cmocka_unit_test(test_short_rows),	       cmocka_unit_test(test_special_text_tail),
	    cmocka_unit_test(test_text_shared_or_not), cmocka_unit_test(test_line_splits),
	    cmocka_unit_test(test_repeated_rows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
