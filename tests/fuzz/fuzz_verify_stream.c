/* Fuzz verify's streamed figure recomputation against the tree path: for
 * any JSON jansson loads, ergon_report_compute_figures on the tree, the
 * streamed reader's packed series held in memory, and every series spilled
 * to the file (re-read by cursors, percentiles by radix selection) must
 * succeed or fail together with the same code, and give equal figures. */
#include "ergon/jcs.h"
#include "ergon/report.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[64];

static int streamed(const uint8_t *data, size_t size, int spill, json_t **fig)
{
	struct ergon_jcs_stream_result res;
	unsigned flags = ERGON_JCS_BUILD_TREE | ERGON_JCS_PACK_SERIES;
	int rc;
	*fig = NULL;
	if (spill) {
		FILE *f = fopen(path, "wb");
		if (f == NULL || fwrite(data, 1, size, f) != size)
			abort();
		fclose(f);
		rc = ergon_jcs_stream_file(path, (size_t)1 << 30, flags | ERGON_JCS_SPILL_ALL, &res,
					   NULL);
	} else {
		rc = ergon_jcs_stream_mem(data, size, "fuzz", flags, &res, NULL);
	}
	if (rc)
		return 1000 + rc; /* the text itself was refused */
	json_t *issues = NULL;
	struct ergon_err err = {0};
	rc = json_is_object(res.tree)
		 ? ergon_report_compute_figures_packed(res.tree, &res, fig, &issues, &err)
		 : -999;
	json_decref(issues);
	ergon_jcs_stream_result_free(&res);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (path[0] == '\0')
		snprintf(path, sizeof(path), "/tmp/fuzz_verify_stream.%ld.json", (long)getpid());
	json_error_t je;
	json_t *j = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &je);
	if (j == NULL || !json_is_object(j)) {
		json_decref(j);
		return 0;
	}
	json_t *want = NULL, *issues = NULL;
	struct ergon_err err = {0};
	int rc = ergon_report_compute_figures(j, &want, &issues, &err);
	json_decref(issues);
	json_decref(j);
	for (int spill = 0; spill < 2; spill++) {
		json_t *got = NULL;
		int rs = streamed(data, size, spill, &got);
		if (rs > 900) {
			/* The stream refused the text (a limit, or jansson's NUL
			 * quirk): nothing to compare. */
			json_decref(got);
			continue;
		}
		if (rs != rc)
			abort();
		if (rc == 0 && !json_equal(want, got))
			abort();
		json_decref(got);
	}
	json_decref(want);
	return 0;
}
