/* Fuzz the streaming canonicalizer (src/core/jcs_stream.c) against the
 * tree path (jansson's parser + ergon_jcs_canonicalize), which is the
 * independent oracle here:
 *  - it accepts a text exactly when jansson does (apart from its stated
 *    limits, ERGON_ETOOBIG, and jansson's swallowing of a NUL byte after
 *    a number, which the stream refuses);
 *  - then its canonical text is byte for byte the tree path's, its digest
 *    is SHA-256 of that text, and the tree it builds equals jansson's;
 *  - with the top-level report_id (and signature) left out, the digest is
 *    ergon_artifact_digest's;
 *  - a packed tree (series arrays as doubles) holds the same numbers. */
#include "ergon/artifact.h"
#include "ergon/jcs.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void check_packed(const json_t *want, const json_t *got, struct ergon_jcs_stream_result *res)
{
	struct ergon_jcs_packed *pk = ergon_jcs_packed_find(res, got);
	if (pk) {
		if (!json_is_array(want) || json_array_size(want) != pk->n)
			abort();
		for (size_t i = 0; i < pk->n; i++) {
			const json_t *x = json_array_get(want, i);
			if (json_is_null(x) ? !isnan(pk->v[i]) : json_number_value(x) != pk->v[i])
				abort();
		}
		return;
	}
	if (json_is_object(want)) {
		const char *k;
		json_t *v;
		if (!json_is_object(got) || json_object_size(got) != json_object_size(want))
			abort();
		json_object_foreach((json_t *)want, k, v)
		    check_packed(v, json_object_get(got, k), res);
	} else if (json_is_array(want)) {
		if (!json_is_array(got) || json_array_size(got) != json_array_size(want))
			abort();
		for (size_t i = 0; i < json_array_size(want); i++) {
			const json_t *a = json_array_get(want, i), *b = json_array_get(got, i);
			/* An array that stopped being packed keeps reals. */
			if (json_is_number(a) && json_is_number(b)) {
				if (json_number_value(a) != json_number_value(b))
					abort();
			} else {
				check_packed(a, b, res);
			}
		}
	} else if (!json_equal((json_t *)want, (json_t *)got)) {
		abort();
	}
}

/* The same text read from a file (the read window: 61 bytes in a fuzz
 * build, cmake/ErgonFuzz.cmake, so every input crosses window edges at
 * every offset) must give what the in-memory read gives: the same code,
 * and the same canonical text (a file's is digested, not kept: its length
 * and digest) and tree. */
static void file_agrees(const uint8_t *data, size_t size, int mem_rc,
			const struct ergon_jcs_stream_result *mem)
{
	static char path[64];
	if (path[0] == '\0')
		snprintf(path, sizeof(path), "/tmp/fuzz_jcs_stream.%ld.json", (long)getpid());
	FILE *f = fopen(path, "wb");
	if (f == NULL || fwrite(data, 1, size, f) != size)
		abort();
	fclose(f);
	struct ergon_jcs_stream_result r;
	int rc = ergon_jcs_stream_file(path, (size_t)1 << 30, ERGON_JCS_BUILD_TREE, &r, NULL);
	if (rc != mem_rc)
		abort();
	if (rc == 0) {
		if (r.bytes_out != mem->canon_len || strcmp(r.digest, mem->digest) != 0 ||
		    !json_equal(r.tree, mem->tree))
			abort();
		ergon_jcs_stream_result_free(&r);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_error_t je;
	json_t *j = json_loadb((const char *)data, size,
			       JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL | JSON_DECODE_ANY, &je);
	struct ergon_jcs_stream_result res;
	int rc = ergon_jcs_stream_mem(data, size, "fuzz",
				      ERGON_JCS_BUILD_TREE | ERGON_JCS_KEEP_CANON, &res, NULL);
	file_agrees(data, size, rc, &res);
	if (rc == ERGON_ETOOBIG) {
		json_decref(j);
		return 0;
	}
	/* jansson swallows a NUL byte right after a number ("[1\0]" loads
	 * as [1]); the stream refuses every NUL outside a string, as RFC 8259
	 * does. That one difference is not a finding. */
	if (j != NULL && rc == ERGON_EPARSE && memchr(data, 0, size) != NULL) {
		json_decref(j);
		return 0;
	}
	if ((j == NULL) != (rc != 0))
		abort();
	if (j == NULL)
		return 0;
	char *canon = NULL;
	size_t len = 0;
	if (ergon_jcs_canonicalize(j, &canon, &len, NULL) != 0) {
		/* The tree path refuses it (too deep for it): nothing to compare. */
		ergon_jcs_stream_result_free(&res);
		json_decref(j);
		return 0;
	}
	if (res.canon_len != len || memcmp(res.canon, canon, len) != 0)
		abort();
	char hex[65];
	ergon_sha256_hex(canon, len, hex);
	if (strncmp(res.digest, "sha256:", 7) != 0 || strcmp(res.digest + 7, hex) != 0)
		abort();
	if (!json_equal(j, res.tree))
		abort();
	ergon_jcs_stream_result_free(&res);
	free(canon);
	if (json_is_object(j)) {
		char id[72];
		/* ERGON_JCS_OMIT_REPORT_ID also leaves out a top-level
		 * "signature", as ergon_artifact_digest does (report_id cannot
		 * cover the signature that signs it); ergon_report_digest keeps
		 * it, so it is not the reference here. */
		if (ergon_artifact_digest(j, id, NULL) == 0) {
			if (ergon_jcs_stream_mem(data, size, "fuzz",
						 ERGON_JCS_OMIT_REPORT_ID | ERGON_JCS_BUILD_TREE |
						     ERGON_JCS_PACK_SERIES,
						 &res, NULL) != 0)
				abort();
			if (strcmp(res.digest, id) != 0)
				abort();
			check_packed(j, res.tree, &res);
			ergon_jcs_stream_result_free(&res);
		}
	}
	json_decref(j);
	return 0;
}
