/* Fuzz the artifact path that `ergon verify` takes on untrusted input:
 * JSON parsing (jansson) then RFC 8785 canonicalization and the digest;
 * and the text an artifact is written as (ergon_json_text) against
 * jansson's json_dumps, which it must equal byte for byte. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ergon/artifact.h"
#include "ergon/jcs.h"

/* Levels of containers in v (1 for an empty array). */
static size_t depth_of(const json_t *v)
{
	size_t d = 0, i;
	const char *k;
	json_t *x;
	if (json_is_array(v)) {
		json_array_foreach(v, i, x)
		{
			size_t e = depth_of(x);
			d = e > d ? e : d;
		}
		return d + 1;
	}
	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, k, x)
		{
			size_t e = depth_of(x);
			d = e > d ? e : d;
		}
		return d + 1;
	}
	return 0;
}

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
	if (json_is_object(j) || json_is_array(j)) {
		char *text = NULL;
		size_t tlen = 0;
		char *want = json_dumps(j, JSON_INDENT(1) | JSON_REAL_PRECISION(17));
		if (ergon_json_text(j, &text, &tlen, NULL) == 0) {
			/* Where ergon_json_text writes, jansson writes the same. */
			if (want == NULL || strlen(want) != tlen || memcmp(want, text, tlen) != 0)
				abort();
		} else if (want != NULL && depth_of(j) <= 256) {
			/* It refuses only what jansson refuses, or deeper nesting. */
			abort();
		}
		free(want);
		free(text);
	}
	if (json_is_object(j)) {
		char id[72];
		(void)ergon_report_digest(j, id, NULL);
	}
	json_decref(j);
	return 0;
}
