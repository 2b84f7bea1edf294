/* db/: `ergon db`: artifacts kept in SQLite or PostgreSQL.
 *
 * `ergon db`: opening, creating and migrating the schema; the queries.
 *
 * The schema is plain SQL accepted by both SQLite and PostgreSQL (TEXT,
 * INTEGER, DOUBLE PRECISION, composite primary keys, views); docs/DB.md
 * documents it. Version N of the schema is the DDL of version 1 followed by
 * the migrations 1->2 ... (N-1)->N, so a new database and a migrated old
 * one are the same by construction, and tests/unit/test_db.c checks it.
 */
#include "db_internal.h"
#include "ergon/config.h"
#include "ergon/fileio.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

/* Version 1: runs, figures, issues and the artifacts themselves. */
static const char schema_v1[] =
    "CREATE TABLE schema_version (version INTEGER NOT NULL, tool_version TEXT NOT NULL,"
    " migrated_at TEXT NOT NULL);"
    "CREATE TABLE runs (report_id TEXT PRIMARY KEY, schema TEXT NOT NULL,"
    " schema_version INTEGER NOT NULL, kind TEXT, device TEXT, board TEXT,"
    " firmware_sha TEXT, firmware_image TEXT, instrument TEXT, instrument_serial TEXT,"
    " provenance TEXT NOT NULL, integrity TEXT, time TEXT NOT NULL, time_source TEXT NOT NULL,"
    " ingested_at TEXT NOT NULL, tool_version TEXT, source_report_id TEXT);"
    "CREATE TABLE figures (report_id TEXT NOT NULL REFERENCES runs(report_id),"
    " name TEXT NOT NULL, value DOUBLE PRECISION, unit TEXT NOT NULL, u DOUBLE PRECISION,"
    " PRIMARY KEY (report_id, name));"
    "CREATE TABLE issues (report_id TEXT NOT NULL REFERENCES runs(report_id),"
    " seq INTEGER NOT NULL, code TEXT NOT NULL, severity TEXT, message TEXT,"
    " PRIMARY KEY (report_id, seq));"
    "CREATE TABLE artifacts (report_id TEXT PRIMARY KEY REFERENCES runs(report_id),"
    " json TEXT NOT NULL);"
    "CREATE INDEX runs_device_time ON runs (device, time);"
    "CREATE INDEX figures_name ON figures (name, report_id);"
    "CREATE INDEX runs_source ON runs (source_report_id);"
    "INSERT INTO schema_version (version, tool_version, migrated_at) VALUES (1, '" ERGON_VERSION
    "', 'created');";

/* 1 -> 2: windows and per-layer counters, and the views. */
static const char migrate_v2[] =
    "CREATE TABLE windows (report_id TEXT NOT NULL REFERENCES runs(report_id),"
    " idx INTEGER NOT NULL, t_start_s DOUBLE PRECISION, duration_s DOUBLE PRECISION,"
    " operations DOUBLE PRECISION, energy_j DOUBLE PRECISION, mean_power_w DOUBLE PRECISION,"
    " PRIMARY KEY (report_id, idx));"
    "CREATE TABLE layers (report_id TEXT NOT NULL REFERENCES runs(report_id),"
    " idx INTEGER NOT NULL, layer_id INTEGER, op TEXT, counter TEXT NOT NULL,"
    " value DOUBLE PRECISION, PRIMARY KEY (report_id, idx, counter));"
    "CREATE VIEW measured_figures AS SELECT r.time, r.device, r.board, r.report_id,"
    " f.name, f.value, f.u, f.unit FROM runs r JOIN figures f ON f.report_id = r.report_id"
    " WHERE r.provenance = 'measured' AND COALESCE(r.integrity, '') <> 'invalid';"
    "CREATE VIEW run_overview AS SELECT r.report_id, r.time, r.device, r.board, r.schema,"
    " r.kind, r.provenance, r.integrity, (SELECT COUNT(*) FROM issues i"
    " WHERE i.report_id = r.report_id) AS issues, (SELECT COUNT(*) FROM figures f"
    " WHERE f.report_id = r.report_id) AS figures FROM runs r;"
    "UPDATE schema_version SET version = 2, tool_version = '" ERGON_VERSION "';";

/* 2 -> 3: who signed a run and whether ingest checked it (docs/DB.md; runs
 * stored before version 3 keep NULL in both: nobody looked), and the cases
 * of ergon.kernels artifacts. */
static const char migrate_v3[] =
    "ALTER TABLE runs ADD COLUMN signer_key_id TEXT;"
    "ALTER TABLE runs ADD COLUMN signature TEXT;"
    "CREATE TABLE kernel_cases (report_id TEXT NOT NULL REFERENCES runs(report_id),"
    " case_name TEXT NOT NULL, impl TEXT NOT NULL, correct INTEGER, timed INTEGER,"
    " n INTEGER, min DOUBLE PRECISION, median DOUBLE PRECISION, mean DOUBLE PRECISION,"
    " unit TEXT, PRIMARY KEY (report_id, case_name, impl));"
    "UPDATE schema_version SET version = 3, tool_version = '" ERGON_VERSION "';";

/* 3 -> 4: trend_points (db_internal.h), filled from the stored runs. In
 * SQLite the table is WITHOUT ROWID: its rows live in the primary key's
 * b-tree, so one figure's points on one device are adjacent pages and
 * nothing is stored twice (PostgreSQL keeps a heap and the key's index). */
#define MIGRATE_V4(table_suffix)                                                                   \
	"CREATE TABLE trend_points (name TEXT NOT NULL, device TEXT NOT NULL, time TEXT NOT NULL," \
	" report_id TEXT NOT NULL REFERENCES runs(report_id), board TEXT, provenance TEXT NOT"     \
	" NULL, integrity TEXT, value DOUBLE PRECISION, u DOUBLE PRECISION, unit TEXT NOT NULL,"   \
	" PRIMARY KEY (name, device, time, report_id))" table_suffix ";" ERGON_DB_TREND_FILL_V4    \
	";UPDATE schema_version SET version = 4, tool_version = '" ERGON_VERSION "';"
static const char migrate_v4[] = MIGRATE_V4("");
static const char migrate_v4_sqlite[] = MIGRATE_V4(" WITHOUT ROWID");

/* 4 -> 5: figures_name indexes the name alone (issue 36). On (name,
 * report_id), every ingested figure went to a random place among those of
 * its name (report_ids are digests), so a batch of 100 reports rewrote
 * most of the index's pages once a database held a few thousand: the
 * larger part of what an ingest wrote. On (name), an entry's second key
 * is the row's place in the table, which only grows: new entries go at
 * the end of their name's run. Lookups by name use it as before. */
static const char migrate_v5[] =
    "DROP INDEX figures_name;"
    "CREATE INDEX figures_name ON figures (name);"
    "UPDATE schema_version SET version = 5, tool_version = '" ERGON_VERSION "';";

/* 5 -> 6 (issue 31): when a run ended (runs.time_end; its start is
 * runs.time), a repeated run's mean with the standard error over its
 * repetitions and their number (figures.sem, figures.repetitions), and
 * the same with where the time came from on every trend point. Rows stored
 * before keep their time and its source: "ingested" marks an ingest time,
 * not a measurement time (their artifacts said no more). */
static const char migrate_v6[] =
    "ALTER TABLE runs ADD COLUMN time_end TEXT;"
    "ALTER TABLE figures ADD COLUMN sem DOUBLE PRECISION;"
    "ALTER TABLE figures ADD COLUMN repetitions INTEGER;"
    "ALTER TABLE trend_points ADD COLUMN time_source TEXT;"
    "ALTER TABLE trend_points ADD COLUMN sem DOUBLE PRECISION;"
    "ALTER TABLE trend_points ADD COLUMN repetitions INTEGER;"
    "UPDATE trend_points SET time_source = (SELECT r.time_source FROM runs r"
    " WHERE r.report_id = trend_points.report_id);"
    "UPDATE schema_version SET version = 6, tool_version = '" ERGON_VERSION "';";

static const char *const migrations[ERGON_DB_SCHEMA_VERSION + 1] = {
    NULL, schema_v1, migrate_v2, migrate_v3, migrate_v4, migrate_v5, migrate_v6};

/* The DDL of step v on this database's backend. */
static const char *migration_sql(const struct ergon_db *db, int v)
{
	if (v == 4 && db->be == &ergon_db_backend_sqlite)
		return migrate_v4_sqlite;
	return migrations[v];
}

void ergon_db_now_utc(char out[32])
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	struct tm tm;
	gmtime_r(&tv.tv_sec, &tm);
	char base[24];
	strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, 32, "%s.%06ldZ", base, (long)tv.tv_usec);
}

int ergon_db_default_path(char out[ERGON_DB_TARGET_MAX], struct ergon_err *err)
{
	const char *xdg = getenv("XDG_DATA_HOME");
	const char *home = getenv("HOME");
	int n;
	/* XDG Base Directory: a relative XDG_DATA_HOME is invalid and ignored. */
	if (xdg && xdg[0] == '/')
		n = snprintf(out, ERGON_DB_TARGET_MAX, "%s/ergon/results.db", xdg);
	else if (home && home[0])
		n = snprintf(out, ERGON_DB_TARGET_MAX, "%s/.local/share/ergon/results.db", home);
	else
		return ergon_err_set(err, ERGON_ENOENT,
				     "db: neither XDG_DATA_HOME nor HOME is set; give --db PATH");
	if (n < 0 || n >= ERGON_DB_TARGET_MAX)
		return ergon_err_set(err, ERGON_ETOOBIG, "db: default path longer than %d bytes",
				     ERGON_DB_TARGET_MAX - 1);
	return 0;
}

static int first_int(void *ctx, int n, const char *const *names, const char *const *vals)
{
	(void)names;
	int *v = ctx;
	*v = INT_MIN + 1;
	if (n >= 1 && vals[0]) {
		char *end = NULL;
		errno = 0;
		long x = strtol(vals[0], &end, 10);
		if (errno == 0 && end && *end == '\0' && x >= 0 && x < INT_MAX)
			*v = (int)x;
	}
	return 1;
}

static int collect_names(void *ctx, int n, const char *const *names, const char *const *vals)
{
	(void)names;
	char *buf = ctx;
	size_t len = strlen(buf);
	if (n >= 1 && vals[0] && len + strlen(vals[0]) + 3 < 200)
		snprintf(buf + len, 200 - len, "%s%s", len ? ", " : "", vals[0]);
	return 0;
}

/* Make the schema of the open database version want: create it in an empty
 * database, migrate an older one, refuse a newer or a foreign one. */
static int schema_prepare(struct ergon_db *db, int want, struct ergon_err *err)
{
	int has = db->be->has_table(db->h, "schema_version", err);
	if (has < 0)
		return has;
	int have = 0;
	if (has) {
		int rc = db->be->query(db->h, "SELECT MAX(version) FROM schema_version", 0, NULL,
				       first_int, &have, err);
		if (rc)
			return rc;
		if (have <= 0)
			return ergon_err_set(err, ERGON_EPARSE,
					     "%s: table schema_version holds no valid version; the "
					     "database is damaged or not ergon's: use another --db",
					     db->target);
	} else if (db->be == &ergon_db_backend_sqlite) {
		char names[200] = "";
		int rc = db->be->query(db->h,
				       "SELECT name FROM sqlite_master WHERE type = 'table' "
				       "ORDER BY name LIMIT 5",
				       0, NULL, collect_names, names, err);
		if (rc)
			return rc;
		if (names[0])
			return ergon_err_set(err, ERGON_EREFUSED,
					     "%s: an SQLite database that is not ergon's (no "
					     "schema_version table; it has tables %s): point --db "
					     "at an ergon database or a new path",
					     db->target, names);
	}
	/* PostgreSQL: no pre-check for foreign tables here; another ingest may
	 * be creating the schema right now. The migration re-reads the version
	 * under the schema lock, and a foreign table named runs makes its
	 * CREATE TABLE fail with the server's "already exists". */
	if (have > ERGON_DB_SCHEMA_VERSION)
		return ergon_err_set(err, ERGON_EREFUSED,
				     "%s: schema version %d was written by a newer ergon; this "
				     "ergon (%s) reads schema versions up to %d: upgrade ergon or "
				     "use another --db",
				     db->target, have, ERGON_VERSION, ERGON_DB_SCHEMA_VERSION);
	if (have >= want) {
		db->version = have;
		return 0;
	}
	/* Every step in its own transaction: an interrupted migration leaves
	 * the previous version intact. Another process may migrate at the
	 * same time; the version is read again under the write lock. */
	for (int v = have + 1; v <= want; v++) {
		int rc = db->be->begin(db->h, err);
		if (rc)
			return rc;
		int now = 0;
		if (db->be->schema_lock)
			rc = db->be->exec(db->h, db->be->schema_lock, err);
		has = rc ? rc : db->be->has_table(db->h, "schema_version", err);
		if (has < 0) {
			rc = has;
		} else if (has) {
			rc = db->be->query(db->h, "SELECT MAX(version) FROM schema_version", 0,
					   NULL, first_int, &now, err);
		}
		if (rc == 0 && now < v)
			rc = db->be->exec(db->h, migration_sql(db, v), err);
		if (rc) {
			struct ergon_err ignore = {0};
			db->be->exec(db->h, "ROLLBACK", &ignore);
			return rc;
		}
		rc = db->be->exec(db->h, "COMMIT", err);
		if (rc)
			return rc;
	}
	db->version = want;
	return 0;
}

int ergon_db_open(const char *target, int schema_version, struct ergon_db **out,
		  struct ergon_err *err)
{
	*out = NULL;
	if (schema_version < 1 || schema_version > ERGON_DB_SCHEMA_VERSION)
		return ergon_err_set(err, ERGON_EUSAGE, "db: schema version %d not in 1..%d",
				     schema_version, ERGON_DB_SCHEMA_VERSION);
	size_t len = strlen(target);
	if (len == 0 || len >= ERGON_DB_TARGET_MAX)
		return ergon_err_set(err, ERGON_EUSAGE,
				     "--db: expected a path or postgresql:// URL of 1..%d bytes",
				     ERGON_DB_TARGET_MAX - 1);
	struct ergon_db *db = calloc(1, sizeof *db);
	if (!db)
		return ergon_err_set(err, ERGON_ENOMEM, "db: out of memory");
	memcpy(db->target, target, len + 1);
	db->be = ergon_db_backend_for(target);
	int rc = 0;
	if (db->be == &ergon_db_backend_sqlite) {
		/* Create the folder of a new database file (the default one lives
		 * in a data directory that may not exist yet). */
		char dir[ERGON_DB_TARGET_MAX];
		memcpy(dir, target, len + 1);
		char *slash = strrchr(dir, '/');
		if (slash && slash != dir) {
			*slash = '\0';
			rc = ergon_mkdir_p(dir, err);
		}
	}
	if (rc == 0)
		rc = db->be->open(target, &db->h, err);
	/* Messages name the database; a URL may hold a password. */
	if (db->be == &ergon_db_backend_postgresql)
		snprintf(db->target, sizeof db->target, "the PostgreSQL database");
	if (rc == 0)
		rc = schema_prepare(db, schema_version, err);
	if (rc) {
		ergon_db_close(db);
		return rc;
	}
	*out = db;
	return 0;
}

void ergon_db_close(struct ergon_db *db)
{
	if (!db)
		return;
	if (db->h)
		db->be->close(db->h);
	free(db);
}

int ergon_db_trust_key(struct ergon_db *db, const struct ergon_public_key *key,
		       struct ergon_err *err)
{
	if (db->nkeys >= ERGON_DB_KEYS_MAX)
		return ergon_err_set(err, ERGON_EUSAGE,
				     "db: more than %d public keys; keep one per signing machine",
				     ERGON_DB_KEYS_MAX);
	db->keys[db->nkeys++] = *key;
	return 0;
}

const char *ergon_db_backend_name(const struct ergon_db *db)
{
	return db->be->name;
}

int ergon_db_schema_version(const struct ergon_db *db)
{
	return db->version;
}

int ergon_db_query(struct ergon_db *db, const char *sql, int nparams, const char *const *params,
		   ergon_db_row_fn fn, void *ctx, struct ergon_err *err)
{
	return db->be->query(db->h, sql, nparams, params, fn, ctx, err);
}

int ergon_db_list(struct ergon_db *db, const char *device, const char *since, ergon_db_row_fn fn,
		  void *ctx, struct ergon_err *err)
{
	const char *p[2] = {device, since};
	return db->be->query(
	    db->h,
	    "SELECT time, report_id, schema, kind, device, board, provenance,"
	    " integrity FROM runs WHERE (CAST($1 AS TEXT) IS NULL OR device = $1)"
	    " AND (CAST($2 AS TEXT) IS NULL OR time >= $2) ORDER BY time DESC, report_id",
	    2, p, fn, ctx, err);
}

struct show_ctx {
	char *json;
	char key[80];
	int n;
};

static int show_row(void *ctx, int n, const char *const *names, const char *const *vals)
{
	(void)names;
	struct show_ctx *s = ctx;
	s->n++;
	if (n < 2 || !vals[0] || !vals[1] || s->n > 1)
		return s->n > 1;
	snprintf(s->key, sizeof s->key, "%s", vals[0]);
	s->json = strdup(vals[1]);
	return 0;
}

int ergon_db_show(struct ergon_db *db, const char *key, char **json, struct ergon_err *err)
{
	*json = NULL;
	char pat[96];
	if (strlen(key) < 4 || strlen(key) > 80 || strpbrk(key, "%_"))
		return ergon_err_set(err, ERGON_EUSAGE,
				     "show: '%s' is not a report_id or a prefix of one (at least "
				     "4 characters, e.g. sha256:1a2b)",
				     key);
	snprintf(pat, sizeof pat, "%s%%", key);
	const char *p[1] = {pat};
	struct show_ctx s = {0};
	int rc = db->be->query(db->h,
			       "SELECT report_id, json FROM artifacts WHERE report_id LIKE $1"
			       " ORDER BY report_id LIMIT 2",
			       1, p, show_row, &s, err);
	if (rc) {
		free(s.json);
		return rc;
	}
	if (s.n == 0)
		return ergon_err_set(
		    err, ERGON_ENOENT,
		    "show: no artifact with report_id %s in %s (see `ergon db list`)", key,
		    db->target);
	if (s.n > 1) {
		free(s.json);
		return ergon_err_set(err, ERGON_EUSAGE,
				     "show: %s matches several report_ids; give more characters",
				     key);
	}
	if (!s.json)
		return ergon_err_set(err, ERGON_ENOMEM, "show: out of memory");
	*json = s.json;
	return 0;
}

struct nearest_ctx {
	const char *want;
	unsigned best;
	char hit[256];
};

static int nearest_row(void *ctx, int n, const char *const *names, const char *const *vals)
{
	(void)names;
	struct nearest_ctx *c = ctx;
	if (n < 1 || !vals[0])
		return 0;
	unsigned d = ergon_edit_distance(c->want, vals[0]);
	if (d < c->best) {
		c->best = d;
		snprintf(c->hit, sizeof c->hit, "%s", vals[0]);
	}
	return 0;
}

int ergon_db_trend(struct ergon_db *db, const char *figure, const char *device, const char *board,
		   ergon_db_row_fn fn, void *ctx, struct ergon_err *err)
{
	const char *p[3] = {figure, device, board};
	int found = 0;
	int rc = db->be->query(db->h, "SELECT 1 FROM figures WHERE name = $1 LIMIT 1", 1, p,
			       first_int, &found, err);
	if (rc)
		return rc;
	if (!found) {
		struct nearest_ctx c = {.want = figure, .best = 1000};
		rc = db->be->query(db->h, "SELECT DISTINCT name FROM figures", 0, NULL, nearest_row,
				   &c, err);
		if (rc)
			return rc;
		if (c.hit[0])
			return ergon_err_set(err, ERGON_EUSAGE,
					     "trend: no figure named '%s' in %s; nearest: '%s' "
					     "(all names: SELECT DISTINCT name FROM figures)",
					     figure, db->target, c.hit);
		return ergon_err_set(err, ERGON_EUSAGE,
				     "trend: no figure named '%s': %s holds no figures yet "
				     "(`ergon db ingest` some artifacts first)",
				     figure, db->target);
	}
	/* counted: only measured results that are not invalid count as
	 * measurements; synthetic and replayed points are shown, marked.
	 * Schema 4 reads one range of trend_points, already in order; schema
	 * 6 adds where each point's time came from, and a repeated run's
	 * standard error and number of repetitions. */
#define TREND_SELECT(more)                                                                       \
	"SELECT time, report_id, provenance,"                                                    \
	" CASE WHEN provenance = 'measured' AND COALESCE(integrity, '') <> 'invalid'"            \
	" THEN 'yes' ELSE 'no' END AS counted, value, u, unit, board, integrity" more           \
	" FROM trend_points WHERE name = $1 AND device = $2"                                     \
	" AND (CAST($3 AS TEXT) IS NULL OR board = $3) ORDER BY time, report_id"
	if (db->version >= 4)
		return db->be->query(db->h,
				     db->version >= 6 ? TREND_SELECT(", time_source, sem, repetitions")
						      : TREND_SELECT(""),
				     3, p, fn, ctx, err);
#undef TREND_SELECT
	return db->be->query(
	    db->h,
	    "SELECT r.time, r.report_id, r.provenance,"
	    " CASE WHEN r.provenance = 'measured' AND COALESCE(r.integrity, '') <> 'invalid'"
	    " THEN 'yes' ELSE 'no' END AS counted, f.value, f.u, f.unit, r.board, r.integrity"
	    " FROM figures f JOIN runs r ON r.report_id = f.report_id"
	    " WHERE f.name = $1 AND r.device = $2 AND (CAST($3 AS TEXT) IS NULL OR r.board = $3)"
	    " ORDER BY r.time, r.report_id",
	    3, p, fn, ctx, err);
}
