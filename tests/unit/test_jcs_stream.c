/* The streaming canonicalizer (src/core/jcs_stream.c): the reference
 * vectors of ../shared/fixtures/jcs/objects.json streamed, a digest
 * computed by hand, numbers read exactly as the C library's strtod reads
 * them (across the read window's edges too), the series packed as
 * doubles, errors that name the place, and out of memory said as such with
 * every allocation failing in turn. */
#include "ergon/dynbuf.h"
#include "ergon/jcs.h"
#include "test_support.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void reference_objects_streamed(void **state)
{
	(void)state;
	char *path = ts_fixture("jcs/objects.json");
	json_error_t je;
	json_t *cases = json_load_file(path, JSON_ALLOW_NUL, &je);
	assert_non_null(cases);
	size_t i;
	json_t *c;
	json_array_foreach(cases, i, c)
	{
		const json_t *in = json_object_get(c, "input");
		const char *canonical = json_string_value(json_object_get(c, "canonical"));
		const char *sha = json_string_value(json_object_get(c, "sha256"));
		struct ergon_jcs_stream_result r;
		struct ergon_err e = {0};
		assert_int_equal(ergon_jcs_stream_mem(json_string_value(in), json_string_length(in),
						      "case", ERGON_JCS_KEEP_CANON, &r, &e),
				 0);
		assert_string_equal(r.canon, canonical);
		assert_string_equal(r.digest + 7, sha);
		ergon_jcs_stream_result_free(&r);
	}
	json_decref(cases);
	free(path);
}

/* The digest of {"a":"x","b":1} as `printf '{"a":"x","b":1}' | sha256sum`
 * gives it, from a pretty-printed file whose report_id is left out. */
static void file_digest_by_hand(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *p = ts_strf("%s/a.json", dir);
	const char *text =
	    "{\n  \"report_id\": \"sha256:old\",\n  \"b\": 1.0e0,\n  \"a\": \"\\u0078\"\n}\n";
	assert_int_equal(ts_write_file(p, text, strlen(text)), 0);
	struct ergon_jcs_stream_result r;
	struct ergon_err e = {0};
	assert_int_equal(ergon_jcs_stream_file(p, 1 << 20, ERGON_JCS_OMIT_REPORT_ID, &r, &e), 0);
	assert_string_equal(
	    r.digest, "sha256:cdab067e9f3beb32d1252cfd63e492592fecbf591b0d08cadb24bb17f3864246");
	assert_int_equal(r.bytes_out, strlen("{\"a\":\"x\",\"b\":1}"));
	ergon_jcs_stream_result_free(&r);
	ts_tmpdir_remove(dir);
	free(dir);
	free(p);
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* 120,000 numbers of many shapes in one series array of a ~3 MB file
 * (twelve read windows, so tokens cross the window's edge), packed as
 * doubles: each must be bit for bit what strtod reads. */
static void numbers_read_as_strtod_does(void **state)
{
	(void)state;
	enum { N = 120000 };
	struct ergon_dynbuf b;
	ergon_dynbuf_init(&b, (size_t)64 << 20);
	char **tok = calloc(N, sizeof(*tok));
	ergon_dynbuf_adds(&b, "{\"series\": {\"x\": [");
	for (int i = 0; i < N; i++) {
		char t[128];
		uint64_t bits = next();
		double d;
		memcpy(&d, &bits, sizeof(d));
		if (!isfinite(d))
			d = 1.5;
		switch (i % 7) {
		case 0:
			snprintf(t, sizeof(t), "%.17g", d);
			break;
		case 1:
			snprintf(t, sizeof(t), "%.*e", (int)(next() % 20), d);
			break;
		case 2:
			snprintf(t, sizeof(t), "%llu.%llue%d",
				 (unsigned long long)(next() % 100000000000ull),
				 (unsigned long long)(next() % 1000000000000ull),
				 (int)(next() % 630) - 350);
			break;
		case 3:
			snprintf(t, sizeof(t), "%.17g", 10 + (double)(next() % 1000000) * 6e-5);
			break;
		case 4:
			snprintf(t, sizeof(t), "0.%019llu%llu",
				 (unsigned long long)(next() % 10000000000000000000ull),
				 (unsigned long long)(next() % 1000));
			break;
		case 5:
			snprintf(t, sizeof(t), "-%lluE+%d",
				 (unsigned long long)(next() >> (next() % 64)), (int)(next() % 40));
			break;
		default:
			snprintf(t, sizeof(t), "%lld", (long long)(next() >> 1) * (i & 8 ? -1 : 1));
		}
		tok[i] = strdup(t);
		ergon_dynbuf_addf(&b, "%s%s", i ? ",\n " : "", t);
	}
	ergon_dynbuf_adds(&b, "]}}");
	assert_int_equal(ergon_dynbuf_error(&b), 0);
	char *dir = ts_tmpdir();
	char *p = ts_strf("%s/n.json", dir);
	assert_int_equal(ts_write_file(p, b.p, b.len), 0);
	struct ergon_jcs_stream_result r;
	struct ergon_err e = {0};
	int rc = ergon_jcs_stream_file(p, (size_t)1 << 30,
				       ERGON_JCS_BUILD_TREE | ERGON_JCS_PACK_SERIES, &r, &e);
	if (rc)
		fail_msg("%s", e.msg);
	const json_t *x = json_object_get(json_object_get(r.tree, "series"), "x");
	const struct ergon_jcs_packed *pk = ergon_jcs_packed_find(&r, x);
	assert_non_null(pk);
	assert_int_equal(pk->n, N);
	for (int i = 0; i < N; i++) {
		double want = strtod(tok[i], NULL);
		if (memcmp(&want, &pk->v[i], sizeof(want)) != 0)
			fail_msg("%s: read %.17g, strtod says %.17g", tok[i], pk->v[i], want);
		free(tok[i]);
	}
	ergon_jcs_stream_result_free(&r);
	ergon_dynbuf_free(&b);
	free(tok);
	ts_tmpdir_remove(dir);
	free(dir);
	free(p);
}

/* A big array nested two objects deep (the shape of series.invocations):
 * the skip pass remembers where it ends; the digest is the tree path's. */
static void nested_big_array_digest(void **state)
{
	(void)state;
	struct ergon_dynbuf b;
	ergon_dynbuf_init(&b, (size_t)64 << 20);
	ergon_dynbuf_adds(&b, "{\"z\": 1, \"series\": {\"inv\": {\"t\": [");
	for (int i = 0; i < 50000; i++)
		ergon_dynbuf_addf(&b, "%s%.17g", i ? ", " : "", 10 + i * 6e-5);
	ergon_dynbuf_adds(&b, "], \"a\": [\"s\", {\"k\": [1, 2]}]}, \"b\": null}, \"a\": true}");
	struct ergon_jcs_stream_result r;
	struct ergon_err e = {0};
	assert_int_equal(ergon_jcs_stream_mem(b.p, b.len, "mem", ERGON_JCS_OMIT_REPORT_ID, &r, &e),
			 0);
	json_error_t je;
	json_t *j = json_loadb(b.p, b.len, 0, &je);
	assert_non_null(j);
	char id[72];
	assert_int_equal(ergon_report_digest(j, id, NULL), 0);
	assert_string_equal(r.digest, id);
	json_decref(j);
	ergon_jcs_stream_result_free(&r);
	ergon_dynbuf_free(&b);
}

/* Issue 30, case 5: a string that straddles the 256 KiB read window's edge
 * was refused ("invalid UTF-8 byte 0x65") when the byte after the edge was
 * plain ASCII. The reader decodes a string in place where it meets it
 * first: an object's key (its values are skipped, then read again from
 * their start), an array's element. Every offset of the edge inside (and
 * around) each string is tried, as a key {<pad>"<text>":1} and as an
 * element [<pad>"<text>"], the pad putting the edge there; the canonical
 * text is written out by hand (its length and digest are checked). */
#define WINDOW ((size_t)256 << 10)
static void strings_across_the_window_edge(void **state)
{
	(void)state;
	static const struct {
		const char *json, *canon;
	} cases[] = {
	    {"abcdefghijklmnopqrstuvwxyz0123456789", "abcdefghijklmnopqrstuvwxyz0123456789"},
	    {"a\\nb\\u00e9c\\\"d\\/e", "a\\nb\xc3\xa9"
				       "c\\\"d/e"},
	    {"\xc3\xbc\xe2\x82\xac\xf0\x9f\x98\x80x", "\xc3\xbc\xe2\x82\xac\xf0\x9f\x98\x80x"},
	    {"\\ud83d\\ude00z", "\xf0\x9f\x98\x80z"},
	};
	char *dir = ts_tmpdir();
	char *path = ts_strf("%s/edge.json", dir);
	size_t tried = 0;
	for (int as_key = 0; as_key < 2; as_key++)
		for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
			size_t len = strlen(cases[c].json);
			char *want = as_key ? ts_strf("{\"%s\":1}", cases[c].canon)
					    : ts_strf("[\"%s\"]", cases[c].canon);
			char hex[65];
			ergon_sha256_hex(want, strlen(want), hex);
			/* The string's opening quote is at byte 1 + pad (after the
			 * "{" or "[" and the pad); the edge (byte WINDOW, the first
			 * of the second window) falls d bytes after it. */
			for (long d = -2; d <= (long)len + 2; d++) {
				size_t pad = (size_t)((long)WINDOW - 1 - d);
				struct ergon_dynbuf b;
				ergon_dynbuf_init(&b, (size_t)1 << 20);
				ergon_dynbuf_adds(&b, as_key ? "{" : "[");
				for (size_t i = 0; i < pad; i++)
					ergon_dynbuf_adds(&b, " ");
				ergon_dynbuf_addf(&b, as_key ? "\"%s\":1}\n" : "\"%s\"]\n",
						  cases[c].json);
				assert_int_equal(ts_write_file(path, b.p, b.len), 0);
				assert_true((long)(1 + pad) + d == (long)WINDOW);
				struct ergon_jcs_stream_result r;
				struct ergon_err e = {0};
				if (ergon_jcs_stream_file(path, (size_t)1 << 30, 0, &r, &e) != 0)
					fail_msg(
					    "case %zu as %s, edge %ld bytes into the string: %s", c,
					    as_key ? "a key" : "an element", d, e.msg);
				/* A file's canonical text is digested, not kept: its
				 * length and SHA-256 are those of the text by hand. */
				assert_int_equal(r.bytes_out, strlen(want));
				assert_string_equal(r.digest + 7, hex);
				ergon_jcs_stream_result_free(&r);
				ergon_dynbuf_free(&b);
				tried++;
			}
			free(want);
		}
	assert_true(tried > 8 * 10);
	free(path);
	ts_tmpdir_remove(dir);
	free(dir);
}

static void errors_name_the_place(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		int flags, rc;
		const char *want;
	} v[] = {
	    {"{\"a\": [1, 2,\n 3", ERGON_JCS_OMIT_REPORT_ID, ERGON_EPARSE, "t:2:"},
	    {"{\"a\": 1, \"a\": 2}", 0, ERGON_EPARSE, "duplicate object key \"a\""},
	    {"[1, 2]", ERGON_JCS_OMIT_REPORT_ID, ERGON_EPARSE, "not a JSON object"},
	    {"{\"a\": \"\\ud800\"}", 0, ERGON_EPARSE, "surrogate"},
	    {"{\"a\": 012}", 0, ERGON_EPARSE, "leading zero"},
	    {"{\"a\": 1e400}", 0, ERGON_EPARSE, "overflow"},
	    {"{\"a\": 9223372036854775808}", 0, ERGON_EPARSE, "too big integer"},
	    {"{\"a\": \"\xc0\xaf\"}", 0, ERGON_EPARSE, "UTF-8"},
	    {"{\"a\": 1} x", 0, ERGON_EPARSE, "end of file expected"},
	    {"{\"a\" 1}", 0, ERGON_EPARSE, "byte 5"},
	};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct ergon_jcs_stream_result r;
		struct ergon_err e = {0};
		int rc = ergon_jcs_stream_mem(v[i].text, strlen(v[i].text), "t",
					      (unsigned)v[i].flags, &r, &e);
		if (rc != v[i].rc || strstr(e.msg, v[i].want) == NULL)
			fail_msg("case %zu: rc %d, wanted %d naming '%s': %s", i, rc, v[i].rc,
				 v[i].want, e.msg);
	}
	/* The limits: a number of 2,000 digits, nesting of 600. */
	struct ergon_dynbuf b;
	ergon_dynbuf_init(&b, 1 << 20);
	ergon_dynbuf_adds(&b, "{\"a\": 1");
	for (int i = 0; i < 2000; i++)
		ergon_dynbuf_adds(&b, "0");
	ergon_dynbuf_adds(&b, ".5}");
	struct ergon_jcs_stream_result r;
	struct ergon_err e = {0};
	assert_int_equal(ergon_jcs_stream_mem(b.p, b.len, "t", 0, &r, &e), ERGON_ETOOBIG);
	assert_non_null(strstr(e.msg, "1024 characters"));
	ergon_dynbuf_free(&b);
	ergon_dynbuf_init(&b, 1 << 20);
	for (int i = 0; i < 600; i++)
		ergon_dynbuf_adds(&b, "[");
	for (int i = 0; i < 600; i++)
		ergon_dynbuf_adds(&b, "]");
	e = (struct ergon_err){0};
	assert_int_equal(ergon_jcs_stream_mem(b.p, b.len, "t", 0, &r, &e), ERGON_ETOOBIG);
	assert_non_null(strstr(e.msg, "deeper than 512"));
	ergon_dynbuf_free(&b);
}

/* jansson's allocations fail from the n-th on: building the tree then
 * fails with ERGON_ENOMEM, said as out of memory, never as an invalid
 * artifact; once enough succeed the document is read. */
static long alloc_left = -1;
static void *failing_malloc(size_t n)
{
	if (alloc_left == 0)
		return NULL;
	if (alloc_left > 0)
		alloc_left--;
	return malloc(n);
}

static void out_of_memory_said_as_such(void **state)
{
	(void)state;
	const char *text = "{\"schema\": \"x\", \"series\": {\"t\": [1, 2, 3], \"s\": [\"a\", 1]},"
			   " \"figures\": {\"a\": {\"b\": [true, null, 1.5]}}, \"z\": \"long\"}";
	json_set_alloc_funcs(failing_malloc, free);
	int ok = 0;
	for (long n = 0; n < 200 && !ok; n++) {
		alloc_left = n;
		struct ergon_jcs_stream_result r;
		struct ergon_err e = {0};
		int rc = ergon_jcs_stream_mem(text, strlen(text), "r.json",
					      ERGON_JCS_BUILD_TREE | ERGON_JCS_PACK_SERIES, &r, &e);
		if (rc == 0) {
			ok = 1;
			ergon_jcs_stream_result_free(&r);
			continue;
		}
		if (rc != ERGON_ENOMEM || strstr(e.msg, "out of memory") == NULL ||
		    strstr(e.msg, "not a valid") != NULL)
			fail_msg("allocation %ld failing: rc %d: %s", n, rc, e.msg);
	}
	json_set_alloc_funcs(malloc, free);
	alloc_left = -1;
	assert_true(ok);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(reference_objects_streamed),
	    cmocka_unit_test(file_digest_by_hand),
	    cmocka_unit_test(numbers_read_as_strtod_does),
	    cmocka_unit_test(nested_big_array_digest),
	    cmocka_unit_test(strings_across_the_window_edge),
	    cmocka_unit_test(errors_name_the_place),
	    cmocka_unit_test(out_of_memory_said_as_such),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
