/* ergon_json_text (src/core/json_text.c) against jansson's own
 * json_dumps(v, JSON_INDENT(1) | JSON_REAL_PRECISION(17)), the oracle: the
 * same bytes for reals on both sides of the fast path's edges (multiples of
 * 1/4 below 10^15, -0.0, exponents both ways), integers at their limits,
 * every escape, UTF-8 of every length, NUL in strings and keys, empty and
 * nested containers, the RFC 8785 fixture documents, a large random tree
 * and a sealed ergon report; and a refusal (never other bytes) for a
 * string that is not UTF-8. */
#include "ergon/artifact.h"
#include "test_support.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void same_as_jansson(const json_t *v)
{
	char *want = json_dumps(v, JSON_INDENT(1) | JSON_REAL_PRECISION(17));
	assert_non_null(want);
	char *got = NULL;
	size_t len = 0;
	assert_int_equal(ergon_json_text(v, &got, &len, NULL), 0);
	if (strcmp(want, got) != 0)
		fail_msg("ergon_json_text differs from json_dumps:\n--- jansson\n%.2000s\n--- "
			 "ergon\n%.2000s",
			 want, got);
	assert_int_equal(len, strlen(want));
	free(want);
	free(got);
}

static void test_reals(void **state)
{
	(void)state;
	const double v[] = {0.0,
			    -0.0,
			    0.25,
			    0.5,
			    0.75,
			    -0.25,
			    1.0,
			    17794.5,
			    75070.25,
			    -105773.75,
			    999999999999999.75, /* the largest in the fast path */
			    1e15,		/* the first past it */
			    1e15 + 0.5,
			    4503599627370495.5,
			    9007199254740992.0,
			    1e16,
			    1e17,
			    1e21,
			    123456789012345680000.0,
			    0.1,
			    0.2,
			    1.0 / 3.0,
			    0.125, /* a multiple of 1/8, not of 1/4 */
			    2.375,
			    1e-5,
			    0.0001,
			    0.00001234,
			    1.5e300,
			    -2.5e-300,
			    5e-324,
			    DBL_MIN,
			    DBL_MAX,
			    -DBL_MAX,
			    333333333.3333333,
			    4.35,
			    0.30000000000000004};
	json_t *a = json_array();
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		json_t *one = json_array();
		json_array_append_new(one, json_real(v[i]));
		same_as_jansson(one);
		json_decref(one);
		json_array_append_new(a, json_real(v[i]));
	}
	same_as_jansson(a);
	/* Every multiple of 1/4 around the fast path's integer digits. */
	for (int e = 0; e <= 16; e++) {
		double base = pow(10.0, e);
		for (int q = -8; q <= 8; q++) {
			json_t *one = json_array();
			json_array_append_new(one, json_real(base + q * 0.25));
			json_array_append_new(one, json_real(-(base + q * 0.25)));
			json_array_append_new(one, json_real(base - 1.0 + q * 0.25));
			same_as_jansson(one);
			json_decref(one);
		}
	}
	json_decref(a);
}

static void test_integers(void **state)
{
	(void)state;
	const json_int_t v[] = {0, 1, -1, 9, 10, -10, 123456789, INT64_MAX, INT64_MIN,
				INT64_MIN + 1, (json_int_t)1 << 53};
	json_t *a = json_array();
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
		json_array_append_new(a, json_integer(v[i]));
	json_array_append_new(a, json_true());
	json_array_append_new(a, json_false());
	json_array_append_new(a, json_null());
	same_as_jansson(a);
	json_decref(a);
}

static void test_strings(void **state)
{
	(void)state;
	json_t *o = json_object();
	char ctl[64];
	size_t n = 0;
	for (int c = 1; c < 0x20; c++)
		ctl[n++] = (char)c;
	ctl[n++] = 0x7f;
	json_object_set_new(o, "controls", json_stringn(ctl, n));
	json_object_set_new(o, "quote \" and \\ and /", json_string("a\"b\\c/d"));
	json_object_set_new(o, "utf-8", json_string("\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xed\x9f\xbf"));
	json_object_set_new(o, "nul", json_stringn("a\0b", 3));
	json_object_setn_new(o, "key\0with nul", 12, json_string(""));
	json_object_set_new(o, "", json_string("empty key"));
	same_as_jansson(o);
	json_decref(o);
}

static void test_containers(void **state)
{
	(void)state;
	json_t *v = json_loads("{\"empty object\": {}, \"empty array\": [], \"mixed\": [{}, [], [[]], "
			       "{\"k\": [1, 2.5, {\"a\": null}]}], \"deep\": {\"b\": {\"c\": {}}}}",
			       0, NULL);
	assert_non_null(v);
	same_as_jansson(v);
	/* Deeper than the indent string is long. */
	json_t *root = json_array(), *cur = root;
	for (int i = 0; i < 150; i++) {
		json_t *next = i % 2 ? json_array() : json_object();
		if (json_is_array(cur))
			json_array_append_new(cur, next);
		else
			json_object_set_new(cur, "k", next);
		cur = next;
	}
	same_as_jansson(root);
	json_decref(root);
	json_decref(v);
}

static uint64_t rng = 0x243F6A8885A308D3ull;
static uint64_t next(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return rng;
}

static json_t *random_value(int depth)
{
	switch (depth > 4 ? next() % 4 : next() % 7) {
	case 0:
		return json_integer((json_int_t)(next() >> (next() % 64)));
	case 1: {
		/* Reals a report holds (counts, halves, quarters) and any bits. */
		uint64_t r = next();
		if (r % 3 == 0) {
			double d;
			uint64_t bits = next();
			memcpy(&d, &bits, sizeof d);
			return isfinite(d) ? json_real(d) : json_real(0.5);
		}
		return json_real((double)(next() % 100000000) / (double)(1u << (r % 4)));
	}
	case 2: {
		char s[16];
		size_t n = next() % sizeof s;
		for (size_t i = 0; i < n; i++)
			s[i] = (char)(next() % 0x7f + 1);
		return json_stringn(s, n);
	}
	case 3:
		return next() % 2 ? json_true() : json_null();
	case 4:
	case 5: {
		json_t *o = json_object();
		size_t n = next() % 6;
		for (size_t i = 0; i < n; i++) {
			char k[24];
			snprintf(k, sizeof k, "k%llu", (unsigned long long)(next() % 1000));
			json_object_set_new(o, k, random_value(depth + 1));
		}
		return o;
	}
	default: {
		json_t *a = json_array();
		size_t n = next() % 6;
		for (size_t i = 0; i < n; i++)
			json_array_append_new(a, random_value(depth + 1));
		return a;
	}
	}
}

static void test_random_trees(void **state)
{
	(void)state;
	for (int t = 0; t < 300; t++) {
		json_t *a = json_array();
		for (int i = 0; i < 8; i++)
			json_array_append_new(a, random_value(0));
		same_as_jansson(a);
		json_decref(a);
	}
}

/* The RFC 8785 fixture documents (inputs and canonical forms), as jansson
 * reads them. */
static void test_fixture_documents(void **state)
{
	(void)state;
	char *path = ts_fixture("jcs/objects.json");
	json_error_t je;
	json_t *cases = json_load_file(path, 0, &je);
	if (cases == NULL)
		fail_msg("%s:%d: %s", path, je.line, je.text);
	same_as_jansson(cases);
	size_t i, checked = 0;
	json_t *c;
	json_array_foreach(cases, i, c)
	{
		const char *keys[] = {"input", "canonical"};
		for (int k = 0; k < 2; k++) {
			const char *text = json_string_value(json_object_get(c, keys[k]));
			if (text == NULL)
				continue;
			json_t *doc = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
			if (doc && (json_is_object(doc) || json_is_array(doc))) {
				same_as_jansson(doc);
				checked++;
			}
			json_decref(doc);
		}
	}
	assert_true(checked >= 2);
	json_decref(cases);
	free(path);
}

/* A sealed report as ergon writes one: the bytes of ergon_artifact_serialize
 * are jansson's, and one newline. */
static void test_sealed_report(void **state)
{
	(void)state;
	json_t *art = ergon_artifact_new("ergon.report", 1, ERGON_PROV_SYNTHETIC);
	json_t *layers = json_array();
	for (int l = 0; l < 50; l++)
		json_array_append_new(
		    layers, json_pack("{s:i, s:s, s:{s:f, s:f}, s:b}", "id", l, "op", "CONV_2D",
				      "counters", "ARM_PMU_CPU_CYCLES", 17794.5 + l,
				      "ARM_PMU_INST_RETIRED", 0.1 * l, "overflow", l % 7 == 0));
	json_object_set_new(art, "layers", layers);
	char *text = NULL;
	size_t len = 0;
	assert_int_equal(ergon_artifact_serialize(art, "test.json", &text, &len, NULL), 0);
	char *want = json_dumps(art, JSON_INDENT(1) | JSON_REAL_PRECISION(17));
	assert_non_null(want);
	assert_int_equal(len, strlen(want) + 1);
	assert_memory_equal(text, want, strlen(want));
	assert_int_equal(text[len - 1], '\n');
	free(want);
	free(text);
	json_decref(art);
}

static void test_refusals(void **state)
{
	(void)state;
	char *out = (char *)1;
	size_t len = 7;
	/* Not UTF-8 (an overlong '/', a lone continuation byte, a surrogate):
	 * jansson writes nothing for them, nor does ergon_json_text. */
	const char *bad[] = {"\xc0\xaf", "\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		json_t *a = json_array();
		json_array_append_new(a, json_stringn_nocheck(bad[i], strlen(bad[i])));
		assert_null(json_dumps(a, JSON_INDENT(1) | JSON_REAL_PRECISION(17)));
		assert_int_not_equal(ergon_json_text(a, &out, &len, NULL), 0);
		assert_null(out);
		assert_int_equal(len, 0);
		json_decref(a);
	}
	json_t *s = json_string("not a container");
	assert_int_not_equal(ergon_json_text(s, &out, &len, NULL), 0);
	json_decref(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_reals),	    cmocka_unit_test(test_integers),
	    cmocka_unit_test(test_strings),	    cmocka_unit_test(test_containers),
	    cmocka_unit_test(test_random_trees),    cmocka_unit_test(test_fixture_documents),
	    cmocka_unit_test(test_sealed_report),   cmocka_unit_test(test_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
