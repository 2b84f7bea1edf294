/* Fuzz ergon compare on hostile artifacts: the input is a JSON array of
 * artifacts (any values); every kind check, identity comparison, figure
 * row, per-layer diff, the text and layer_diff.csv must hold up. */
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "ergon/compare.h"

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
	json_t *res = NULL;
	(void)ergon_compare(a, labels, n, &o, &res, NULL);
	if (res) {
		char *text = NULL, *csv = NULL;
		size_t len = 0;
		(void)ergon_compare_text(res, &text, NULL);
		(void)ergon_compare_layer_csv(res, &csv, &len, NULL);
		(void)ergon_compare_regressed(res);
		free(text);
		free(csv);
		json_decref(res);
	}
	json_decref(j);
	return 0;
}
