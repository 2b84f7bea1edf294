/* Fuzz the artifact path that `ergon verify` takes on untrusted input:
 * JSON parsing (jansson) then RFC 8785 canonicalization and the digest. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ergon/jcs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_error_t je;
	json_t *j = json_loadb((const char *)data, size,
			       JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL | JSON_DECODE_ANY, &je);
	if (j == NULL)
		return 0;
	char *out = NULL;
	size_t len = 0;
	if (ergon_jcs_canonicalize(j, &out, &len, NULL) == 0) {
		/* Canonical output canonicalizes to itself. (jansson cannot read
		 * integers beyond 2^63 that ECMAScript prints in full, so a
		 * re-parse failure is not a finding.) */
		json_t *k = json_loadb(out, len, JSON_ALLOW_NUL | JSON_DECODE_ANY, &je);
		if (k == NULL) {
			free(out);
			json_decref(j);
			return 0;
		}
		char *out2 = NULL;
		size_t len2 = 0;
		if (ergon_jcs_canonicalize(k, &out2, &len2, NULL) != 0 || len2 != len ||
		    memcmp(out, out2, len) != 0)
			abort();
		free(out2);
		json_decref(k);
	}
	free(out);
	if (json_is_object(j)) {
		char id[72];
		(void)ergon_report_digest(j, id, NULL);
	}
	json_decref(j);
	return 0;
}
