/* The SQLite backend of `ergon db` (libsqlite3): one file, no server.
 *
 * Prepared statements are cached by SQL text pointer (the pipeline passes
 * string literals), and insert() keeps one INSERT per table, so ingesting
 * many artifacts prepares each statement once.
 * A writer waits up to 30 s for another writer (busy timeout) instead of
 * failing at once; BEGIN IMMEDIATE takes the write lock at the start of a
 * batch's transaction so two ingests never deadlock on an upgrade.
 */
#include "db_backend.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SQLITE_CACHE_MAX 32
#define SQLITE_COLS_MAX 64
/* Tables written by insert(): one statement each, prepared once. */
#define SQLITE_INSERTS_MAX 16

struct sqlite_h {
	sqlite3 *db;
	char path[ERGON_DB_TARGET_MAX];
	const char *cache_sql[SQLITE_CACHE_MAX];
	sqlite3_stmt *cache_stmt[SQLITE_CACHE_MAX];
	int ncache;
	const char *ins_table[SQLITE_INSERTS_MAX]; /* the caller's literals: the key */
	const char *ins_cols[SQLITE_INSERTS_MAX];
	sqlite3_stmt *ins_stmt[SQLITE_INSERTS_MAX];
	int nins;
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
	} else if ((rc & 0xff) == SQLITE_CONSTRAINT) {
		/* The rows of one artifact break the schema (a key twice): the
		 * artifact's fault, not the database's. */
		code = ERGON_EREFUSED;
		fix = ": the artifact's rows break a constraint of the schema (a key stored twice)";
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
	/* A new file gets 16 KiB pages (SQLite's default is 4 KiB; an existing
	 * database keeps its own): an ingested report's text and rows take a
	 * quarter of the pages, so a quarter of the WAL writes and checkpoint
	 * copies, each a system call. WAL lets readers run while one process
	 * ingests; NORMAL sync is durable at every commit in WAL mode except
	 * on power loss. A batch of ingest (up to 32 MiB of artifacts) fits the
	 * 64 MiB page cache, so its pages reach the WAL once, at its commit,
	 * not spilled before; an artifact's savepoint keeps its copies of
	 * pages in memory. */
	char *emsg = NULL;
	rc = sqlite3_exec(
	    s->db,
	    "PRAGMA page_size=16384; PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
	    " PRAGMA cache_size=-65536; PRAGMA temp_store=MEMORY;",
	    NULL, NULL, &emsg);
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
	for (int i = 0; i < s->nins; i++)
		sqlite3_finalize(s->ins_stmt[i]);
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

/* The prepared INSERT of a table, made on its first use. */
static int sq_insert_stmt(struct sqlite_h *s, const char *table, const char *cols, int ncols,
			  sqlite3_stmt **st, struct ergon_err *err)
{
	for (int i = 0; i < s->nins; i++)
		if (s->ins_table[i] == table && s->ins_cols[i] == cols) {
			*st = s->ins_stmt[i];
			return 0;
		}
	if (s->nins >= SQLITE_INSERTS_MAX || ncols < 1 || ncols > SQLITE_COLS_MAX)
		return ergon_err_set(err, ERGON_EUSAGE, "%s: insert into %s: too many tables",
				     s->path, table);
	char sql[1024];
	size_t n = (size_t)snprintf(sql, sizeof sql, "INSERT INTO %s (%s) VALUES (", table, cols);
	for (int c = 0; c < ncols && n < sizeof sql; c++)
		n += (size_t)snprintf(sql + n, sizeof sql - n, "%s?%d", c ? ", " : "", c + 1);
	if (n + 2 >= sizeof sql)
		return ergon_err_set(err, ERGON_ETOOBIG, "%s: insert into %s: SQL too long",
				     s->path, table);
	memcpy(sql + n, ")", 2);
	int rc = sqlite3_prepare_v2(s->db, sql, -1, st, NULL);
	if (rc != SQLITE_OK)
		return sq_fail(s, rc, err, "SQL failed");
	s->ins_table[s->nins] = table;
	s->ins_cols[s->nins] = cols;
	s->ins_stmt[s->nins++] = *st;
	return 0;
}

/* One prepared statement stepped once per row: inside the caller's
 * transaction, SQLite's cost is the b-tree work, not the statement. */
static int sq_insert(void *h, const char *table, const char *cols, int ncols, size_t nrows,
		     const char *const *vals, struct ergon_err *err)
{
	struct sqlite_h *s = h;
	sqlite3_stmt *st = NULL;
	int rc = sq_insert_stmt(s, table, cols, ncols, &st, err);
	if (rc)
		return rc;
	for (size_t r = 0; r < nrows; r++) {
		const char *const *row = vals + r * (size_t)ncols;
		for (int c = 0; c < ncols; c++) {
			/* SQLITE_STATIC: the values outlive the step. */
			if (row[c])
				sqlite3_bind_text(st, c + 1, row[c], -1, SQLITE_STATIC);
			else
				sqlite3_bind_null(st, c + 1);
		}
		rc = sqlite3_step(st);
		sqlite3_reset(st);
		if (rc != SQLITE_DONE) {
			sqlite3_clear_bindings(st);
			return sq_fail(s, rc, err, "SQL failed");
		}
	}
	sqlite3_clear_bindings(st);
	return 0;
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
    .insert = sq_insert,
    .begin = sq_begin,
    .has_table = sq_has_table,
};
