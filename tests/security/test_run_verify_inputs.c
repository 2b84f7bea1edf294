/* ergon verify on input it did not produce: truncated, malformed, edited
 * and structurally wrong reports. Each error names the byte or the field. */
#include "ergon/artifact.h"
#include "test_support.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static char *dir, *report;

static int setup(void **state)
{
	(void)state;
	dir = ts_tmpdir();
	report = ts_strf("%s/r.json", dir);
	return ts_make_short_report(report);
}

static int teardown(void **state)
{
	(void)state;
	ts_tmpdir_remove(dir);
	free(dir);
	free(report);
	return 0;
}

/* Write text to dir/name and run verify on it; stderr returned. */
static int verify_text(const char *text, size_t len, char **errout)
{
	char *p = ts_strf("%s/t.json", dir);
	assert_int_equal(ts_write_file(p, text, len), 0);
	int rc = ts_run_ergon(NULL, errout, "verify", p, NULL);
	free(p);
	return rc;
}

/* Load the good report, let f edit it, reseal (so only the field check can
 * catch it), verify; return the exit code and stderr. */
static int verify_edited(void (*f)(json_t *), char **errout)
{
	json_t *r = NULL;
	struct ergon_err e = {0};
	assert_int_equal(ergon_artifact_load(report, 1 << 28, &r, &e), 0);
	f(r);
	assert_int_equal(ergon_artifact_seal(r, &e), 0);
	char *text = json_dumps(r, JSON_REAL_PRECISION(17));
	json_decref(r);
	int rc = verify_text(text, strlen(text), errout);
	free(text);
	return rc;
}

static void truncated_names_the_byte(void **state)
{
	(void)state;
	size_t len;
	char *text = ts_read_file(report, &len);
	char *err = NULL;
	/* Cut just after a separator past the middle: the document is
	 * complete up to the cut, so the first byte that is wrong is the
	 * missing one at offset cut, and the message must name exactly it. */
	size_t cut = len / 2;
	while (cut < len && text[cut] != ',')
		cut++;
	assert_true(cut < len);
	cut++;
	assert_int_equal(verify_text(text, cut, &err), 3);
	char *want = ts_strf("(byte %zu)", cut);
	if (strstr(err, want) == NULL)
		fail_msg("truncated at byte %zu, message: %s", cut, err);
	free(want);
	free(err);
	/* Not an object. */
	assert_int_equal(verify_text("[1,2]", 5, &err), 3);
	assert_non_null(strstr(err, "not a JSON object"));
	free(err);
	/* Duplicate key. */
	const char *dup = "{\"schema\": \"ergon.report\", \"schema\": \"x\"}";
	assert_int_equal(verify_text(dup, strlen(dup), &err), 3);
	assert_non_null(strstr(err, "duplicate"));
	free(err);
	free(text);
}

static void string_in_series(json_t *r)
{
	json_t *p =
	    json_object_get(json_object_get(json_object_get(r, "series"), "samples"), "power_w");
	json_array_set_new(p, 3, json_string("1.0"));
}

static void no_series(json_t *r)
{
	json_object_del(r, "series");
}

static void bad_failed_index(json_t *r)
{
	json_t *inv = json_object_get(json_object_get(r, "series"), "invocations");
	json_object_set_new(inv, "failed_index", json_pack("[i]", 99999999));
}

static void backwards_time(json_t *r)
{
	json_t *t =
	    json_object_get(json_object_get(json_object_get(r, "series"), "samples"), "t_s");
	json_array_set_new(t, 5, json_real(-1.0));
}

static void extra_figure(json_t *r)
{
	json_object_set_new(json_object_get(r, "figures"), "energy_per_op_best_case",
			    json_real(0.001));
}

static void wrong_schema(json_t *r)
{
	json_object_set_new(r, "schema_version", json_integer(2));
}

static void integrity_changed(json_t *r)
{
	const char *now = json_string_value(json_object_get(r, "integrity"));
	json_object_set_new(r, "integrity",
			    json_string(strcmp(now, "valid") == 0 ? "degraded" : "valid"));
}

static void fields_named(void **state)
{
	(void)state;
	struct {
		void (*f)(json_t *);
		const char *want;
	} cases[] = {
	    {string_in_series, "series.samples.power_w[3]"},
	    {no_series, "series.samples.t_s"},
	    {bad_failed_index, "series.invocations.failed_index[0]"},
	    {backwards_time, "series.samples"},
	    {extra_figure, "figures.energy_per_op_best_case"},
	    {wrong_schema, "field schema"},
	    {integrity_changed, "field integrity"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *err = NULL;
		int rc = verify_edited(cases[i].f, &err);
		if (rc != 1 || strstr(err, cases[i].want) == NULL)
			fail_msg("case %zu: exit %d, wanted 1 naming %s: %s", i, rc, cases[i].want,
				 err);
		free(err);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(truncated_names_the_byte),
	    cmocka_unit_test(fields_named),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
