/* JCS (RFC 8785) against the reference implementation's vectors in
 * ../shared/fixtures/jcs (numbers.tsv: 3,000 doubles; objects.json: key
 * order, escaping, literals, nesting with their SHA-256), plus the RFC's own
 * Appendix B examples written out here by hand. */
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ergon/jcs.h"
#include "test_support.h"

static double from_bits(uint64_t bits)
{
	double d;
	memcpy(&d, &bits, sizeof(d));
	return d;
}

static void rfc_appendix_b_by_hand(void **state)
{
	(void)state;
	static const struct {
		uint64_t bits;
		const char *text;
	} v[] = {
		{0x0000000000000000ull, "0"},
		{0x8000000000000000ull, "0"},
		{0x0000000000000001ull, "5e-324"},
		{0x7fefffffffffffffull, "1.7976931348623157e+308"},
		{0x4340000000000000ull, "9007199254740992"},
		{0x444b1ae4d6e2ef50ull, "1e+21"},
		{0x3eb0c6f7a0b5ed8dull, "0.000001"},
		{0x41b3de4355555553ull, "333333333.3333332"},
		{0x4430000000000000ull, "295147905179352830000"},
	};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		char out[ERGON_JCS_NUMBER_MAX];
		assert_true(ergon_jcs_format_number(from_bits(v[i].bits), out) > 0);
		assert_string_equal(out, v[i].text);
	}
	char out[ERGON_JCS_NUMBER_MAX];
	assert_int_equal(ergon_jcs_format_number(NAN, out), ERGON_ERANGE);
	assert_int_equal(ergon_jcs_format_number(INFINITY, out), ERGON_ERANGE);
	/* Plain values a report is full of. */
	assert_true(ergon_jcs_format_number(0.5, out) > 0);
	assert_string_equal(out, "0.5");
	assert_true(ergon_jcs_format_number(1e-7, out) > 0);
	assert_string_equal(out, "1e-7");
	assert_true(ergon_jcs_format_number(-42.0, out) > 0);
	assert_string_equal(out, "-42");
}

static void reference_numbers(void **state)
{
	(void)state;
	char *path = ts_fixture("jcs/numbers.tsv");
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	char line[256];
	int rows = 0;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#')
			continue;
		char *tab = strchr(line, '\t');
		assert_non_null(tab);
		*tab = '\0';
		char *want = tab + 1;
		want[strcspn(want, "\r\n")] = '\0';
		uint64_t bits = strtoull(line, NULL, 16);
		char out[ERGON_JCS_NUMBER_MAX];
		assert_true(ergon_jcs_format_number(from_bits(bits), out) > 0);
		if (strcmp(out, want) != 0)
			fail_msg("bits %s: got %s, reference says %s", line, out, want);
		rows++;
	}
	fclose(f);
	free(path);
	assert_int_equal(rows, 3000);
}

static void reference_objects(void **state)
{
	(void)state;
	char *path = ts_fixture("jcs/objects.json");
	json_error_t je;
	json_t *cases = json_load_file(path, JSON_ALLOW_NUL, &je);
	if (cases == NULL)
		fail_msg("%s:%d: %s", path, je.line, je.text);
	assert_true(json_array_size(cases) >= 4);
	size_t i;
	json_t *c;
	json_array_foreach(cases, i, c)
	{
		const char *input = json_string_value(json_object_get(c, "input"));
		const char *canonical = json_string_value(json_object_get(c, "canonical"));
		size_t canonical_len = json_string_length(json_object_get(c, "canonical"));
		const char *sha = json_string_value(json_object_get(c, "sha256"));
		json_t *in = json_loadb(input, json_string_length(json_object_get(c, "input")),
					JSON_ALLOW_NUL | JSON_DECODE_ANY, &je);
		if (in == NULL)
			fail_msg("case %zu: input does not parse: %s", i, je.text);
		char *out = NULL;
		size_t len = 0;
		struct ergon_err err = {0};
		assert_int_equal(ergon_jcs_canonicalize(in, &out, &len, &err), 0);
		if (len != canonical_len || memcmp(out, canonical, len) != 0)
			fail_msg("case %zu:\n got  %s\n want %s", i, out, canonical);
		char hex[65];
		ergon_sha256_hex(out, len, hex);
		assert_string_equal(hex, sha);
		free(out);
		json_decref(in);
	}
	json_decref(cases);
	free(path);
}

static void report_digest_ignores_report_id(void **state)
{
	(void)state;
	json_t *a = json_pack("{s:i, s:s}", "b", 1, "a", "x");
	json_t *b = json_pack("{s:s, s:i, s:s}", "a", "x", "b", 1, "report_id", "sha256:old");
	char ida[72], idb[72];
	assert_int_equal(ergon_report_digest(a, ida, NULL), 0);
	assert_int_equal(ergon_report_digest(b, idb, NULL), 0);
	assert_string_equal(ida, idb);
	/* sha256 of {"a":"x","b":1}, computed with `printf '{"a":"x","b":1}' | sha256sum` */
	assert_string_equal(ida, "sha256:"
				 "cdab067e9f3beb32d1252cfd63e492592fecbf591b0d08cadb24bb17f3864246");
	/* The caller's object keeps its report_id. */
	assert_non_null(json_object_get(b, "report_id"));
	json_decref(a);
	json_decref(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rfc_appendix_b_by_hand),
		cmocka_unit_test(reference_numbers),
		cmocka_unit_test(reference_objects),
		cmocka_unit_test(report_digest_ignores_report_id),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
