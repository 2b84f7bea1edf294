/* Fuzz ergon compare on hostile artifacts: the input is a JSON array of
 * artifacts (any values); every kind check, identity comparison, figure
 * row, per-layer diff, the text and layer_diff.csv must hold up.
 * Properties: a refusal without a result says why (a message); the
 * comparison is a pure function of its inputs (a second one is the same
 * JSON with the same verdict); layer_diff.csv is as long as it says. */
#include "ergon/compare.h"
#include "fuzz_props.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_error_t je;
	json_t *j = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &je);
	size_t n = json_array_size(j);
	if (n < 2 || n > ERGON_COMPARE_MAX) {
		json_decref(j);
		return 0;
	}
	const json_t *a[ERGON_COMPARE_MAX];
	const char *labels[ERGON_COMPARE_MAX];
	for (size_t i = 0; i < n; i++) {
		a[i] = json_array_get(j, i);
		labels[i] = "x";
		if (!json_is_object(a[i])) {
			json_decref(j);
			return 0;
		}
	}
	struct ergon_compare_options o = {.threshold_pct = size % 2 ? 2.0 : NAN,
					  .force_incomparable = (int)(size % 3 == 0)};
	json_t *res = NULL, *again = NULL;
	struct ergon_err err = {0}, e2 = {0};
	int rc = ergon_compare(a, labels, n, &o, &res, &err);
	FUZZ_REQUIRE(res != NULL || (rc != 0 && err.msg[0] != '\0'));
	int rc2 = ergon_compare(a, labels, n, &o, &again, &e2);
	FUZZ_REQUIRE(rc2 == rc && (res == NULL) == (again == NULL));
	if (res)
		FUZZ_REQUIRE(json_equal(res, again) &&
			     ergon_compare_regressed(res) == ergon_compare_regressed(again));
	json_decref(again);
	if (res) {
		char *text = NULL, *csv = NULL;
		size_t len = 0;
		(void)ergon_compare_text(res, &text, NULL);
		if (ergon_compare_layer_csv(res, &csv, &len, NULL) == 0)
			FUZZ_REQUIRE(csv != NULL && strlen(csv) == len);
		free(text);
		free(csv);
		json_decref(res);
	}
	json_decref(j);
	return 0;
}
