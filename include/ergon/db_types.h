/* The types `ergon db` shares with its backends (src/drivers/db/): a
 * header of types only, so the drivers need not include ergon/db.h (the
 * pipeline's API; docs/internals/layers.md). */
#ifndef ERGON_DB_TYPES_H
#define ERGON_DB_TYPES_H

/* The longest database target (an SQLite path or a postgresql:// URL),
 * with its terminating NUL. */
#define ERGON_DB_TARGET_MAX 1024

/* Row callback for queries: ncols columns, names and values as text (a
 * value is NULL for SQL NULL). Return nonzero to stop. */
typedef int (*ergon_db_row_fn)(void *ctx, int ncols, const char *const *names,
			       const char *const *values);

#endif
