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

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "ergon/error.h"

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

#ifdef __cplusplus
}
#endif
#endif
