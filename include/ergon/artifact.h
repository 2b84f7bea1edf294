/* The artifact envelope shared by everything ergon writes.
 *
 * {
 *   "schema": "ergon.report", "schema_version": 1,
 *   "tool": {"name": "ergon", "version": "0.1.0"},
 *   "provenance": {"kind": "measured" | "synthetic" | "replayed", ...},
 *   "instrument": {...}, "conditions": {...}, "issues": [...],
 *   ...body...,
 *   "report_id": "sha256:<hex of the JCS form without report_id>",
 *   "signature": {...}   (optional, signature.h; not covered by report_id)
 * }
 */
#ifndef ERGON_ARTIFACT_H
#define ERGON_ARTIFACT_H

#include "ergon/error.h"

#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif

enum ergon_provenance {
	ERGON_PROV_NONE = 0,
	ERGON_PROV_MEASURED = 1,  /* a real instrument on a real rail */
	ERGON_PROV_SYNTHETIC = 2, /* synthetic instrument, virtual bench, synthetic replays */
	ERGON_PROV_REPLAYED = 3,  /* analysis of a recording (names its own provenance) */
};

ERGON_API const char *ergon_provenance_name(int kind);
/* Parse "measured" / "synthetic" / "replayed"; 0 if unknown. */
ERGON_API int ergon_provenance_parse(const char *s);

/* A new envelope with schema, schema_version, tool, provenance.kind,
 * an empty issues array and conditions of this host. Caller owns it. */
ERGON_API json_t *ergon_artifact_new(const char *schema, int schema_version, int provenance_kind);

/* Host conditions: host name, kernel, CPU model, cpufreq governor. */
ERGON_API json_t *ergon_conditions_collect(void);

/* "sha256:<hex>" of the JCS form of the artifact without its members
 * report_id and signature (a signature signs report_id, so it cannot be
 * part of it). */
ERGON_API int ergon_artifact_digest(const json_t *artifact, char id[72], struct ergon_err *err);

/* Compute and set report_id. */
ERGON_API int ergon_artifact_seal(json_t *artifact, struct ergon_err *err);

/* The text json_dumps(v, JSON_INDENT(1) | JSON_REAL_PRECISION(17)) writes
 * for an object or array, byte for byte (src/core/json_text.c says what
 * that is), at several times its speed. *out (caller frees) holds *len
 * bytes and a NUL. Fails (and writes nothing) where jansson's own check
 * must decide: a string or key that is not valid UTF-8, nesting deeper
 * than 256 levels, a root that is neither an object nor an array. */
ERGON_API int ergon_json_text(const json_t *v, char **out, size_t *len, struct ergon_err *err);

/* Seal and serialise (indented, numbers that round-trip, one final
 * newline). *text (caller frees) holds *len bytes and a NUL; path only
 * names the output in messages. */
ERGON_API int ergon_artifact_serialize(json_t *artifact, const char *path, char **text, size_t *len,
				       struct ergon_err *err);

/* Seal, serialise (indented, numbers that round-trip) and write atomically.
 * flags: ERGON_WRITE_* from fileio.h. */
ERGON_API int ergon_artifact_write(json_t *artifact, const char *path, unsigned flags,
				   struct ergon_err *err);

/* Parse an artifact file (duplicate keys rejected; at most max_len bytes).
 * Errors name the file, line, column and byte offset. Caller owns *out. */
ERGON_API int ergon_artifact_load(const char *path, size_t max_len, json_t **out,
				  struct ergon_err *err);
/* The same for bytes already in memory (data[0..len), which ergon_db
 * ingest stores as they were verified); name labels the errors. */
ERGON_API int ergon_artifact_parse(const char *name, const char *data, size_t len, json_t **out,
				   struct ergon_err *err);

/* Check report_id against the recomputed digest; ERGON_EVERIFY on mismatch. */
ERGON_API int ergon_artifact_check_digest(const json_t *artifact, struct ergon_err *err);

#ifdef __cplusplus
}
#endif
#endif
