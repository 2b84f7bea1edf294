/* The database backend interface of `ergon db` (private).
 *
 * A backend runs SQL text written once for both engines: placeholders are
 * $1..$n and every parameter and value travels as text (NULL: SQL NULL),
 * so the schema and every query in src/pipelines/db/ are the same for
 * SQLite and PostgreSQL. A new backend is one file and one line in
 * ergon_db_backend_for().
 */
#ifndef ERGON_DB_BACKEND_H
#define ERGON_DB_BACKEND_H

#include "ergon/db_types.h"
#include "ergon/error.h"

#include <stddef.h>

struct ergon_db_backend {
	const char *name;
	/* Open target (a path or URL); *h is the backend's, freed by close. */
	int (*open)(const char *target, void **h, struct ergon_err *err);
	void (*close)(void *h);
	/* Run one or more statements without parameters or results. */
	int (*exec)(void *h, const char *sql, struct ergon_err *err);
	/* Run one statement with text parameters; fn (may be NULL) gets each row. */
	int (*query)(void *h, const char *sql, int nparams, const char *const *params,
		     ergon_db_row_fn fn, void *ctx, struct ergon_err *err);
	/* Insert nrows rows into table (cols: its column list, "a, b, c", ncols
	 * names; the same literal for every call of a table, backends cache by
	 * it): vals is row-major, nrows * ncols text values (NULL: SQL NULL).
	 * One call stores every row or fails; a row that breaks a constraint
	 * of the schema (a key stored twice) fails it with ERGON_EREFUSED, so
	 * the caller can roll back to its savepoint and refuse that artifact
	 * alone. */
	int (*insert)(void *h, const char *table, const char *cols, int ncols, size_t nrows,
		      const char *const *vals, struct ergon_err *err);
	/* Start a write transaction (SQLite takes the write lock at once). */
	int (*begin)(void *h, struct ergon_err *err);
	/* 1 when a table of that name exists, 0 when not. */
	int (*has_table)(void *h, const char *table, struct ergon_err *err);
	/* SQL run after begin() before a schema migration (NULL: none needed). */
	const char *schema_lock;
};

extern const struct ergon_db_backend ergon_db_backend_sqlite;
extern const struct ergon_db_backend ergon_db_backend_postgresql;

/* The backend for a target: postgresql:// or postgres:// URLs go to
 * PostgreSQL, anything else is an SQLite path. */
const struct ergon_db_backend *ergon_db_backend_for(const char *target);

#endif
