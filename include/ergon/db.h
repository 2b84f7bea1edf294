/* ergon db: results over time in SQLite (default) or PostgreSQL.
 *
 * One schema (docs/DB.md), versioned in the table schema_version, written by
 * the same SQL text on both backends. Artifacts are verified (report_id
 * digest) before they are stored, keyed by report_id (ingesting twice
 * changes nothing) and stored in batches, one transaction per batch and a
 * savepoint per artifact, so that a failure leaves either the whole
 * artifact or nothing.
 */
#ifndef ERGON_DB_H
#define ERGON_DB_H

#include "ergon/db_types.h"
#include "ergon/error.h"
#include "ergon/signature.h"

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The schema version this ergon writes and the newest it reads. */
#define ERGON_DB_SCHEMA_VERSION 6
/* The most public keys one ingest trusts (ergon_db_trust_key). */
#define ERGON_DB_KEYS_MAX 8
/* ERGON_DB_TARGET_MAX, the longest database location (path or
 * postgresql:// URL) with its NUL: ergon/db_types.h. */

struct ergon_db;

/* Default database path: $XDG_DATA_HOME/ergon/results.db, else
 * $HOME/.local/share/ergon/results.db. ERGON_ENOENT when neither variable
 * is set. Creates nothing. */
ERGON_API int ergon_db_default_path(char out[ERGON_DB_TARGET_MAX], struct ergon_err *err);

/* Open (and create or migrate up to schema_version) the database at target:
 * a postgresql:// or postgres:// URL, else an SQLite file path (its folder
 * is created). schema_version is ERGON_DB_SCHEMA_VERSION except in tests of
 * migrations. Refuses a file that is not an SQLite database, an SQLite
 * database that is not ergon's, and a schema newer than this ergon reads.
 * *out is the caller's; free with ergon_db_close. */
ERGON_API int ergon_db_open(const char *target, int schema_version, struct ergon_db **out,
			    struct ergon_err *err);
/* Close; NULL is a no-op. */
ERGON_API void ergon_db_close(struct ergon_db *db);
/* Backend name ("sqlite" or "postgresql") and schema version in use. */
ERGON_API const char *ergon_db_backend_name(const struct ergon_db *db);
ERGON_API int ergon_db_schema_version(const struct ergon_db *db);

/* Trust signatures by key (copied) from now on. With at least one trusted
 * key, ingest refuses an artifact that is not signed by one of them (or
 * whose signature does not verify) and stores the signer's key id with
 * signature "verified"; without one, a signature is stored as claimed,
 * "not checked" (docs/DB.md). ERGON_EUSAGE past ERGON_DB_KEYS_MAX. */
ERGON_API int ergon_db_trust_key(struct ergon_db *db, const struct ergon_public_key *key,
				 struct ergon_err *err);

/* What ingesting one artifact did. */
enum ergon_db_ingest_result {
	ERGON_DB_INGESTED = 1,	/* stored */
	ERGON_DB_DUPLICATE = 2, /* already stored under its key: nothing changed */
};

/* Verify and store one artifact file. *result says stored or duplicate;
 * key (may be NULL) receives the key it is stored under. On failure
 * nothing of this artifact is stored and err names the file and the check
 * that failed. */
ERGON_API int ergon_db_ingest_file(struct ergon_db *db, const char *path, int *result, char key[80],
				   struct ergon_err *err);

/* ergon_db_ingest_files stores its artifacts in batches: one transaction
 * per batch of at most ERGON_DB_BATCH_ARTIFACTS artifacts, closed early
 * once the batch's files reach ERGON_DB_BATCH_BYTES (docs/DB.md). */
#define ERGON_DB_BATCH_ARTIFACTS 400
#define ERGON_DB_BATCH_BYTES ((size_t)32 << 20)

/* The outcome of one artifact of ergon_db_ingest_files, final when it is
 * reported: rc 0 and result ERGON_DB_INGESTED (stored; committed) or
 * ERGON_DB_DUPLICATE, key the key it is stored under; or rc an error
 * (ERGON_EVERIFY, ERGON_EREFUSED, ERGON_EPARSE, ERGON_ETOOBIG, ERGON_ENOENT,
 * ERGON_EACCES, ERGON_ERANGE), err saying why, and nothing of it stored.
 * index is the artifact's place in paths. */
typedef void (*ergon_db_ingest_fn)(void *ctx, size_t index, const char *path, int rc, int result,
				   const char *key, const struct ergon_err *err);

/* Verify and store paths[0..n) in batches; fn (may be NULL) receives every
 * artifact's outcome in the order of paths, once its batch is committed.
 * Each artifact is stored whole or not at all: one that fails its checks,
 * or whose rows break a constraint of the schema, is refused alone and the
 * others of its batch are stored. Returns 0, or an error of the database
 * or the machine (a full disk, a lost connection, a file that cannot be
 * read for another reason than its own): then the batch in progress is
 * rolled back, its artifacts are not reported, and err names them. */
ERGON_API int ergon_db_ingest_files(struct ergon_db *db, const char *const *paths, size_t n,
				    ergon_db_ingest_fn fn, void *ctx, struct ergon_err *err);

/* ergon_db_row_fn: the row callback of queries (ergon/db_types.h). */

/* Run one read-only SQL query with text parameters $1..$n (NULL: SQL NULL). */
ERGON_API int ergon_db_query(struct ergon_db *db, const char *sql, int nparams,
			     const char *const *params, ergon_db_row_fn fn, void *ctx,
			     struct ergon_err *err);

/* Runs, newest first, filtered by device (NULL: any) and ingested at or
 * after since (ISO 8601 UTC prefix, NULL: any). */
ERGON_API int ergon_db_list(struct ergon_db *db, const char *device, const char *since,
			    ergon_db_row_fn fn, void *ctx, struct ergon_err *err);

/* The stored artifact JSON of key (a report_id or an unambiguous prefix of
 * one). *json is malloc'd, the caller frees it. ERGON_ENOENT when absent. */
ERGON_API int ergon_db_show(struct ergon_db *db, const char *key, char **json,
			    struct ergon_err *err);

/* One figure over time on device (and board when not NULL), oldest first:
 * columns time, report_id, provenance, counted ("yes" only for measured
 * results with integrity other than invalid), value, u, unit. An unknown
 * figure fails with ERGON_EUSAGE and the nearest stored name in err. */
ERGON_API int ergon_db_trend(struct ergon_db *db, const char *figure, const char *device,
			     const char *board, ergon_db_row_fn fn, void *ctx,
			     struct ergon_err *err);

/* The same trend as a sealed ergon.trend artifact (docs/DB.md): trend
 * {figure, device, board, unit, database, counted, not_counted, points[]
 * {time, report_id, provenance, counted, value, u}}, rendered by `ergon
 * report`. Its provenance is measured only when every point is counted.
 * *out is a new reference (caller decrefs). */
ERGON_API int ergon_db_trend_artifact(struct ergon_db *db, const char *figure, const char *device,
				      const char *board, json_t **out, struct ergon_err *err);

/* ergon db changes: the shifts in one figure's history on a device. */
struct ergon_db_changes_opts {
	const char *figure, *device;
	const char *board; /* NULL: any */
	int all;	   /* analyse every point, not only the counted ones */
	double alpha;	   /* the level of a shift (0: ERGON_CP_ALPHA) */
};

/* The points of the trend (counted ones, or all), in measurement-time
 * order, split where their level shifts (ergon/changepoint.h): *out (new
 * reference) is {figure, device, board, unit, all, points, method, alpha,
 * penalty, sigma_data, segments[] {first, points, from_time, to_time,
 * mean, se}, shifts[] {at, time, from, from_se, to, to_se, change_pct,
 * before {time, report_id, provenance, value}, after {...}}}. An unknown
 * figure fails as ergon_db_trend does. */
ERGON_API int ergon_db_changes(struct ergon_db *db, const struct ergon_db_changes_opts *o,
			       json_t **out, struct ergon_err *err);

#ifdef __cplusplus
}
#endif
#endif
