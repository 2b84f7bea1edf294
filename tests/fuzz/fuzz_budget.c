/* Fuzz the budget readers that meet untrusted JSON: a summary's budgets
 * recomputed by `ergon verify` (ergon_artifact_check_budgets) and an
 * instrument rating read back from a recording's note or an artifact
 * (ergon_rating_from_json); a rating read is written and read again and
 * must come back the same. */
#include "ergon/rating.h"
#include "ergon/report.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_error_t je;
	json_t *j = json_loadb((const char *)data, size, JSON_DECODE_ANY, &je);
	if (j == NULL)
		return 0;
	struct ergon_err err = {0};
	size_t n = 0;
	(void)ergon_artifact_check_budgets(j, &n, &err);
	struct ergon_rating r;
	const json_t *rj =
	    json_is_object(json_object_get(j, "rating")) ? json_object_get(j, "rating") : j;
	memset(&err, 0, sizeof(err));
	if (ergon_rating_from_json(rj, "fuzz", &r, &err) == 0) {
		json_t *back = ergon_rating_to_json(&r);
		struct ergon_rating r2;
		struct ergon_err e2 = {0};
		if (back == NULL || ergon_rating_from_json(back, "fuzz", &r2, &e2) != 0)
			abort();
		json_t *again = ergon_rating_to_json(&r2);
		if (again == NULL || !json_equal(back, again))
			abort();
		json_decref(again);
		json_decref(back);
	}
	json_decref(j);
	return 0;
}
