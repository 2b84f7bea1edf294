/* The schema 3 -> 4 migration (trend_points) checked on one backend: the
 * same steps for SQLite (tests/unit/test_db.c) and PostgreSQL
 * (tests/functional/test_db_migrate_pg.c). */
#ifndef TS_DB_MIGRATE_H
#define TS_DB_MIGRATE_H

/* Create a version-3 database at target (empty), store four profile
 * artifacts written into dir, migrate it to the current version and check
 * the trend answers (values, order, counted, board filter) before and after
 * one more ingest. Fails the running cmocka test on any difference. */
void ts_db_v3_to_current(const char *target, const char *dir);
/* A row callback (ergon_db_row_fn) appending "v1|v2|...\n" to a 4096-byte
 * NUL-terminated buffer ctx (NULL values as "NULL"). */
int ts_db_append_row(void *ctx, int n, const char *const *names, const char *const *vals);

#endif
