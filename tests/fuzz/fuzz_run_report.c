/* Fuzz `ergon verify`'s figure recomputation on arbitrary JSON: it must
 * refuse with a message or recompute, never crash or loop. */
#include "ergon/report.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_error_t je;
	json_t *j = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &je);
	if (j == NULL)
		return 0;
	json_t *fig = NULL, *issues = NULL;
	struct ergon_err err = {0};
	if (ergon_report_compute_figures(j, &fig, &issues, &err) != 0 && err.msg[0] == '\0')
		abort();
	json_decref(fig);
	json_decref(issues);
	ergon_err_clear(&err);
	(void)ergon_report_verify(j, &err);
	json_decref(j);
	return 0;
}
