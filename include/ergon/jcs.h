/* RFC 8785 JSON Canonicalization Scheme (JCS) and report digests.
 *
 * ergon's artifacts carry report_id = "sha256:" + hex SHA-256 of the JCS
 * form of the artifact without its report_id member. JCS is written here by
 * hand because it is ours to get exactly right: object members sorted by
 * their UTF-16 code units, ECMAScript Number-to-String for every number
 * (integers included: JSON numbers are IEEE 754 doubles), and the minimal
 * string escaping of RFC 8785 section 3.2.2.2.
 */
#ifndef ERGON_JCS_H
#define ERGON_JCS_H

#include "ergon/error.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Longest ECMAScript serialization of a double, with NUL. */
#define ERGON_JCS_NUMBER_MAX 32

/* Format a finite double as ECMAScript Number::toString does (-0 -> "0").
 * Returns the length written, or ERGON_ERANGE for NaN and infinities. */
ERGON_API int ergon_jcs_format_number(double v, char out[ERGON_JCS_NUMBER_MAX]);

/* Canonicalize a JSON value. *out is malloc'd and NUL-terminated (the caller
 * frees it); *out_len excludes the NUL. Fails with ERGON_ERANGE on a
 * non-finite number and ERGON_EPARSE on a string that is not valid UTF-8. */
ERGON_API int ergon_jcs_canonicalize(const json_t *value, char **out, size_t *out_len,
				     struct ergon_err *err);

/* SHA-256 of bytes, as 64 lowercase hex digits plus NUL. */
ERGON_API void ergon_sha256_hex(const void *data, size_t len, char hex[65]);

/* "sha256:<hex>" of the JCS form of obj without its member `report_id`.
 * obj must be an object; it is not modified. */
ERGON_API int ergon_report_digest(const json_t *obj, char id[72], struct ergon_err *err);

/* --- Streaming canonicalization (src/core/jcs_stream.c) -----------------
 *
 * The JCS form of a JSON text computed from its bytes, straight into
 * SHA-256, in bounded memory (docs/internals/verify.md): the text is read
 * through a fixed window, objects are sorted by seeking back to their
 * members, nothing else is held. Optionally it also builds the jansson tree
 * of the document with the numeric arrays under the top-level "series"
 * kept as plain doubles (ERGON_JCS_PACK_SERIES): 8 bytes a number instead
 * of jansson's ~60, and no second parse for `ergon verify`.
 *
 * It accepts exactly what jansson's json_loadb(JSON_REJECT_DUPLICATES |
 * JSON_ALLOW_NUL) accepts, within its limits: numbers up to 1024
 * characters, strings up to 16 MiB, 1 Mi members per object and 16 MiB of
 * keys along one path, nesting up to 512 (ERGON_ETOOBIG beyond). */

/* Leave the top-level member "report_id" out of the digest (the artifact
 * rule); the top level must then be an object. */
#define ERGON_JCS_OMIT_REPORT_ID 1u /* also leaves out a top-level "signature" */
/* Build res->tree (the whole document as jansson values). */
#define ERGON_JCS_BUILD_TREE 2u
/* With BUILD_TREE: every array under the top-level "series" whose
 * elements are all numbers or null is an empty placeholder array in the
 * tree and its values (null -> NaN) are in res->packed. */
#define ERGON_JCS_PACK_SERIES 4u
/* Keep a copy of the canonical text in res->canon (tests; up to 1 GiB). */
#define ERGON_JCS_KEEP_CANON 8u
/* With PACK_SERIES on a file: spill every packed array, not only those
 * above ERGON_JCS_SPILL_MIN values (tests, and the lowest memory). */
#define ERGON_JCS_SPILL_ALL 16u
/* A packed array of a file with more values than this is spilled: its
 * values are not kept, only where it is; a cursor reads them again. */
#define ERGON_JCS_SPILL_MIN ((size_t)1 << 20)

/* One packed series array: the placeholder in the tree, its n values. */
struct ergon_jcs_packed {
	const json_t *placeholder;
	double *v; /* owned by the result until taken; NULL when spilled */
	size_t n;
	int taken;	   /* a consumer took v (and frees it) */
	int spilled;	   /* v not kept: read it with a cursor */
	uint64_t file_pos; /* byte offset of the array's '[' */
	int bad;	   /* spilled, and element bad_index is not a number */
	size_t bad_index;
};

struct ergon_jcs_stream_result {
	char digest[72];		 /* "sha256:<64 hex>" of the canonical form */
	json_t *tree;			 /* ERGON_JCS_BUILD_TREE */
	struct ergon_jcs_packed *packed; /* ERGON_JCS_PACK_SERIES */
	size_t n_packed, cap_packed;
	char *canon; /* ERGON_JCS_KEEP_CANON, NUL-terminated */
	size_t canon_len;
	uint64_t bytes_in, bytes_out; /* the text read, the canonical form hashed */
	int fd, has_fd;		      /* kept open while a spilled series needs it */
};

/* Canonicalize the JSON file at path (at most max_len bytes) with flags
 * (ERGON_JCS_*). On success *res holds the digest and what flags asked
 * for; the caller releases it with ergon_jcs_stream_result_free. On
 * failure *res is empty and err names the file, line, column and byte:
 * ERGON_EPARSE for text that is not JSON, ERGON_ETOOBIG above a limit,
 * ERGON_ENOMEM when memory ran out (said as such), ERGON_EIO. */
ERGON_API int ergon_jcs_stream_file(const char *path, size_t max_len, unsigned flags,
				    struct ergon_jcs_stream_result *res, struct ergon_err *err);
/* The same over len bytes in memory; name labels messages. */
ERGON_API int ergon_jcs_stream_mem(const void *data, size_t len, const char *name, unsigned flags,
				   struct ergon_jcs_stream_result *res, struct ergon_err *err);
/* Release a result (a zeroed or freed one is a no-op). */
ERGON_API void ergon_jcs_stream_result_free(struct ergon_jcs_stream_result *res);
/* A cursor over a spilled series: ergon_jcs_cursor_next gives its values
 * in order (1), then 0 at the end, or a negative code. The result must
 * outlive the cursor. Caller frees with ergon_jcs_cursor_free. */
struct ergon_jcs_cursor;
ERGON_API int ergon_jcs_cursor_open(const struct ergon_jcs_stream_result *res,
				    const struct ergon_jcs_packed *pk,
				    struct ergon_jcs_cursor **cur, struct ergon_err *err);
ERGON_API int ergon_jcs_cursor_next(struct ergon_jcs_cursor *cur, double *v, struct ergon_err *err);
ERGON_API void ergon_jcs_cursor_free(struct ergon_jcs_cursor *cur);

/* The packed values behind a placeholder array of res->tree, or NULL. A
 * consumer may take v (set taken, then it frees v). */
ERGON_API struct ergon_jcs_packed *ergon_jcs_packed_find(struct ergon_jcs_stream_result *res,
							 const json_t *placeholder);

#ifdef __cplusplus
}
#endif
#endif
