/* Fuzz the kernels samples CSV reader and everything behind it: the
 * statistics, the speedups, the CSV view and the terminal table.
 * Properties: a refusal says why (a message); the statistics are a pure
 * function of the samples (a second summary is the same JSON); the CSV
 * view is as long as it says and holds no NUL. */
#include "ergon/kernels_run.h"
#include "fuzz_props.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ergon_kernels_data *d = NULL;
	struct ergon_err err = {0};
	size_t ov = 0;
	if (ergon_kernels_csv_parse((const char *)data, size, "fuzz.csv", &d, &ov, &err) != 0) {
		FUZZ_REQUIRE(err.msg[0] != '\0');
		return 0;
	}
	json_t *sec = NULL;
	if (ergon_kernels_summarize(d, "ref", NULL, &sec, &err) == 0) {
		json_t *again = NULL;
		struct ergon_err e2 = {0};
		FUZZ_REQUIRE(ergon_kernels_summarize(d, "ref", NULL, &again, &e2) == 0);
		FUZZ_REQUIRE(json_equal(sec, again));
		json_decref(again);
		char *out = NULL;
		size_t len = 0;
		if (ergon_kernels_csv_render(sec, &out, &len, &err) == 0) {
			FUZZ_REQUIRE(out != NULL && strlen(out) == len);
			free(out);
		}
		if (ergon_kernels_table_render(sec, &out, &err) == 0)
			free(out);
		json_decref(sec);
	} else {
		FUZZ_REQUIRE(err.msg[0] != '\0');
	}
	ergon_kernels_data_free(d);
	return 0;
}
