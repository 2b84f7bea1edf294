/* The SQLite backend of `ergon db` (libsqlite3): one file, no server.
 *
 * Prepared statements are cached by SQL text pointer (the pipeline passes
 * string literals), so ingesting many artifacts prepares each insert once.
 * A writer waits up to 30 s for another writer (busy timeout) instead of
 * failing at once; BEGIN IMMEDIATE takes the write lock at the start of an
 * artifact's transaction so two ingests never deadlock on an upgrade.
 */
#include "db_backend.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SQLITE_CACHE_MAX 32
#define SQLITE_COLS_MAX 64

struct sqlite_h {
	sqlite3 *db;
	char path[ERGON_DB_TARGET_MAX];
	const char *cache_sql[SQLITE_CACHE_MAX];
	sqlite3_stmt *cache_stmt[SQLITE_CACHE_MAX];
	int ncache;
};

static int sq_fail(struct sqlite_h *s, int rc, struct ergon_err *err, const char *what)
{
	int code = ERGON_EIO;
	const char *fix = "";
	if (rc == SQLITE_NOTADB || rc == SQLITE_CORRUPT) {
		code = ERGON_EPARSE;
		fix = ": the file is not an ergon (SQLite) database or is damaged; point --db at "
		      "an ergon database or a new path";
	} else if (rc == SQLITE_FULL) {
		fix = ": the disk is full; free space and ingest again (nothing of this artifact "
		      "was stored)";
	} else if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) {
		code = ERGON_ETIMEDOUT;
		fix = ": another process holds the database for over 30 s";
	} else if (rc == SQLITE_READONLY || rc == SQLITE_PERM || rc == SQLITE_CANTOPEN) {
		code = ERGON_EACCES;
		fix = ": check the path and its permissions";
	}
	return ergon_err_set(err, code, "%s: %s: %s%s", s->path, what,
			     s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc), fix);
}

static int sq_open(const char *target, void **h, struct ergon_err *err)
{
	struct sqlite_h *s = calloc(1, sizeof *s);
	if (!s)
		return ergon_err_set(err, ERGON_ENOMEM, "db: out of memory");
	if (strlen(target) >= sizeof s->path) {
		free(s);
		return ergon_err_set(err, ERGON_ETOOBIG, "--db: path longer than %d bytes",
				     ERGON_DB_TARGET_MAX - 1);
	}
	memcpy(s->path, target, strlen(target) + 1);
	/* One thread uses a handle (the library shares none): no per-call
	 * mutex, which a 10,000-row trend would take for every column. */
	int rc = sqlite3_open_v2(
	    target, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		int r = sq_fail(s, rc, err, "cannot open");
		sqlite3_close(s->db);
		free(s);
		return r;
	}
	sqlite3_busy_timeout(s->db, 30000);
	/* WAL lets readers run while one process ingests; NORMAL sync is
	 * durable at every commit in WAL mode except on power loss. */
	char *emsg = NULL;
	rc = sqlite3_exec(s->db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", NULL, NULL,
			  &emsg);
	sqlite3_free(emsg);
	if (rc != SQLITE_OK) {
		int r = sq_fail(s, rc, err, "cannot read the database");
		sqlite3_close(s->db);
		free(s);
		return r;
	}
	*h = s;
	return 0;
}

static void sq_close(void *h)
{
	struct sqlite_h *s = h;
	if (!s)
		return;
	for (int i = 0; i < s->ncache; i++)
		sqlite3_finalize(s->cache_stmt[i]);
	sqlite3_close(s->db);
	free(s);
}

static int sq_exec(void *h, const char *sql, struct ergon_err *err)
{
	struct sqlite_h *s = h;
	char *emsg = NULL;
	int rc = sqlite3_exec(s->db, sql, NULL, NULL, &emsg);
	sqlite3_free(emsg);
	if (rc != SQLITE_OK)
		return sq_fail(s, rc, err, "SQL failed");
	return 0;
}

static int sq_prepare(struct sqlite_h *s, const char *sql, sqlite3_stmt **st, int *cached,
		      struct ergon_err *err)
{
	for (int i = 0; i < s->ncache; i++)
		if (s->cache_sql[i] == sql) {
			*st = s->cache_stmt[i];
			*cached = 1;
			return 0;
		}
	int rc = sqlite3_prepare_v2(s->db, sql, -1, st, NULL);
	if (rc != SQLITE_OK)
		return sq_fail(s, rc, err, "SQL failed");
	*cached = 0;
	if (s->ncache < SQLITE_CACHE_MAX) {
		s->cache_sql[s->ncache] = sql;
		s->cache_stmt[s->ncache++] = *st;
		*cached = 1;
	}
	return 0;
}

/* SQLite prints REAL columns with 15 digits, which loses bits; this is the
 * shortest %.Ng (N = 15..17) that reads back to the same double, as
 * PostgreSQL prints float8, so both backends answer with the same text. */
static const char *shortest(double v, char buf[32])
{
	/* 17 significant digits always read back: no check needed there
	 * (a trend prints two doubles per row, so this is per-row work). */
	for (int p = 15; p <= 16; p++) {
		snprintf(buf, 32, "%.*g", p, v);
		if (strtod(buf, NULL) == v)
			return buf;
	}
	snprintf(buf, 32, "%.17g", v);
	return buf;
}

static int sq_query(void *h, const char *sql, int nparams, const char *const *params,
		    ergon_db_row_fn fn, void *ctx, struct ergon_err *err)
{
	struct sqlite_h *s = h;
	sqlite3_stmt *st = NULL;
	int cached = 0;
	int rc = sq_prepare(s, sql, &st, &cached, err);
	if (rc)
		return rc;
	for (int i = 0; i < nparams; i++) {
		char name[16];
		snprintf(name, sizeof name, "$%d", i + 1);
		int idx = sqlite3_bind_parameter_index(st, name);
		if (idx == 0)
			continue;
		if (params[i])
			sqlite3_bind_text(st, idx, params[i], -1, SQLITE_TRANSIENT);
		else
			sqlite3_bind_null(st, idx);
	}
	int ret = 0;
	for (;;) {
		rc = sqlite3_step(st);
		if (rc == SQLITE_DONE)
			break;
		if (rc != SQLITE_ROW) {
			ret = sq_fail(s, rc, err, "SQL failed");
			break;
		}
		if (!fn)
			continue;
		int n = sqlite3_column_count(st);
		if (n > SQLITE_COLS_MAX)
			n = SQLITE_COLS_MAX;
		const char *names[SQLITE_COLS_MAX], *vals[SQLITE_COLS_MAX];
		char fbuf[SQLITE_COLS_MAX][32];
		for (int c = 0; c < n; c++) {
			names[c] = sqlite3_column_name(st, c);
			if (sqlite3_column_type(st, c) == SQLITE_FLOAT)
				vals[c] = shortest(sqlite3_column_double(st, c), fbuf[c]);
			else
				vals[c] = (const char *)sqlite3_column_text(st, c);
		}
		if (fn(ctx, n, names, vals))
			break;
	}
	if (cached) {
		sqlite3_reset(st);
		sqlite3_clear_bindings(st);
	} else {
		sqlite3_finalize(st);
	}
	return ret;
}

static int sq_begin(void *h, struct ergon_err *err)
{
	return sq_exec(h, "BEGIN IMMEDIATE", err);
}

static int found_row(void *ctx, int n, const char *const *names, const char *const *vals)
{
	(void)n;
	(void)names;
	(void)vals;
	*(int *)ctx = 1;
	return 1;
}

static int sq_has_table(void *h, const char *table, struct ergon_err *err)
{
	int found = 0;
	const char *p[1] = {table};
	int rc = sq_query(h, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = $1", 1, p,
			  found_row, &found, err);
	return rc ? rc : found;
}

const struct ergon_db_backend ergon_db_backend_sqlite = {
    .name = "sqlite",
    .open = sq_open,
    .close = sq_close,
    .exec = sq_exec,
    .query = sq_query,
    .begin = sq_begin,
    .has_table = sq_has_table,
};
