/* Nearest-name suggestions (include/ergon/suggest.h); the edit distance
 * itself is tested in unit/test_config.c. By hand: a dropped or doubled
 * letter is 1 edit. */
#include "ergon/suggest.h"
#include "test_support.h"

#include <stdlib.h>
#include <string.h>

static void nearest_is_a_plausible_typo_only(void **state)
{
	(void)state;
	static const char *const names[] = {"synthetic", "replay", "hwmon", "rapl", "nvml", NULL};
	assert_int_equal(ergon_edit_distance("synthtic", "synthetic"), 1);
	assert_string_equal(ergon_suggest_nearest_list("synthtic", names), "synthetic");
	assert_string_equal(ergon_suggest_nearest_list("rapll", names), "rapl");
	/* "gate_nevr_falls" (15 bytes) is 1 edit from gate_never_falls: within
	 * a third of its length. */
	static const char *const sc[] = {"gate_never_falls", "gate_glitches", NULL};
	assert_string_equal(ergon_suggest_nearest_list("gate_nevr_falls", sc), "gate_never_falls");
	/* Far from everything: no suggestion rather than a random name. */
	assert_null(ergon_suggest_nearest_list("oscilloscope", names));
	/* Limit: at least 2 edits for short names ("nvm" -> "nvml" is 1). */
	assert_string_equal(ergon_suggest_nearest_list("nvm", names), "nvml");
	/* NULL and empty candidates are skipped. */
	const char *holes[] = {NULL, "", "replay"};
	assert_string_equal(ergon_suggest_nearest("replya", holes, 3), "replay");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(nearest_is_a_plausible_typo_only),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
