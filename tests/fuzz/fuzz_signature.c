/* Fuzz the signature inputs ergon reads from others: a public key file
 * (ergon_public_key_parse) and, when the input is a JSON object, its
 * signature member checked against a fixed key (the seed corpus holds a
 * genuine signature by it, so mutations reach the crypto). Nothing may
 * crash or read out of bounds. */
#include "ergon/signature.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A fixed valid public key (made by ergon keygen for this target). */
static const char fixed_pub[] = "ergon-public-key ed25519 ed25519:a305c638b114d4c92c5564882385d03c "
				"wU+Kuk33u0PRm3hkOCMMStV4HUSC5N3Svsnirw4jGVY=\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ergon_public_key k;
	if (size <= ERGON_KEY_FILE_MAX)
		(void)ergon_public_key_parse((const char *)data, size, "fuzz", &k, NULL);
	if (ergon_public_key_parse(fixed_pub, sizeof fixed_pub - 1, "fixed", &k, NULL) != 0)
		abort();
	json_error_t je;
	json_t *j = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &je);
	if (json_is_object(j))
		(void)ergon_artifact_check_signature(j, &k, NULL);
	json_decref(j);
	return 0;
}
