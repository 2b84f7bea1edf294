/* Multi-rail reports ergon did not write: each hostile edit of the rail
 * structure (resealed, so the digest does not catch it first) is refused by
 * verify with the place named. The base is a real three-rail report from a
 * fake Orin NX tree (tests/fuzz/corpus/fuzz_run_report/rails_decimated.json,
 * VDD_IN the total input, every rail decimated with its exact block). */
#include "ergon/artifact.h"
#include "ergon/report.h"
#include "test_support.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static json_t *base(void)
{
	const char *src = getenv("ERGON_SOURCE_DIR");
	assert_non_null(src);
	char *path = ts_strf("%s/tests/fuzz/corpus/fuzz_run_report/rails_decimated.json", src);
	json_t *r = NULL;
	struct ergon_err e = {0};
	assert_int_equal(ergon_artifact_load(path, 1 << 24, &r, &e), 0);
	free(path);
	return r;
}

static json_t *rails(json_t *r)
{
	return json_object_get(json_object_get(r, "series"), "rails");
}

static void one_rail_left(json_t *r)
{
	json_array_remove(rails(r), 2);
	json_array_remove(rails(r), 1);
}

static void nine_rails(json_t *r)
{
	json_t *a = rails(r);
	for (int i = 0; i < 6; i++)
		json_array_append_new(a, json_deep_copy(json_array_get(a, 1)));
}

static void duplicate_name(json_t *r)
{
	json_object_set_new(json_array_get(rails(r), 2), "name", json_string("VDD_CPU_GPU_CV"));
}

static void ghost_total(json_t *r)
{
	json_object_set_new(json_object_get(r, "instrument"), "total_rail",
			    json_string("VDD_GHOST"));
	json_object_set_new(json_array_get(rails(r), 0), "total_input", json_false());
}

static void total_is_number(json_t *r)
{
	json_object_set_new(json_object_get(r, "instrument"), "total_rail", json_integer(0));
}

static void flag_moved(json_t *r)
{
	json_object_set_new(json_array_get(rails(r), 2), "total_input", json_true());
}

static void name_not_string(json_t *r)
{
	json_object_set_new(json_array_get(rails(r), 0), "name", json_integer(7));
}

static void samples_gone(json_t *r)
{
	json_object_del(json_array_get(rails(r), 1), "samples");
}

static void column_short(json_t *r)
{
	json_t *p =
	    json_object_get(json_object_get(json_array_get(rails(r), 2), "samples"), "power_w");
	json_array_remove(p, 0);
}

static void exact_edited(json_t *r)
{
	json_t *load =
	    json_object_get(json_object_get(json_array_get(rails(r), 1), "exact"), "load");
	json_object_set_new(load, "energy_j",
			    json_real(10 * json_number_value(json_object_get(load, "energy_j"))));
}

static void hostile_rail_edits_named(void **state)
{
	(void)state;
	struct {
		void (*f)(json_t *);
		const char *want;
	} cases[] = {
	    {one_rail_left, "series.rails: 1 rails"},
	    {nine_rails, "series.rails: 9 rails"},
	    {duplicate_name, "series.rails[2].name: rail VDD_CPU_GPU_CV appears twice"},
	    {ghost_total, "instrument.total_rail: names VDD_GHOST"},
	    {total_is_number, "field instrument.total_rail"},
	    {flag_moved, "series.rails[2].total_input"},
	    {name_not_string, "series.rails[0]: needs a name"},
	    {samples_gone, "series.rails[1].samples.t_s"},
	    {column_short, "series.rails[2].samples: the columns differ"},
	    {exact_edited, "rails[1]"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *r = base();
		struct ergon_err e = {0};
		assert_int_equal(ergon_report_verify(r, &e), 0); /* the base verifies */
		cases[i].f(r);
		assert_int_equal(ergon_artifact_seal(r, &e), 0);
		int rc = ergon_report_verify(r, &e);
		if (rc != ERGON_EVERIFY || strstr(e.msg, cases[i].want) == NULL)
			fail_msg("case %zu: rc %d, wanted EVERIFY naming '%s': %s", i, rc,
				 cases[i].want, e.msg);
		json_decref(r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(hostile_rail_edits_named),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
