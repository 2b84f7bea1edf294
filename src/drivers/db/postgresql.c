/* The PostgreSQL backend of `ergon db` (libpq): one server for a lab.
 *
 * The same SQL text as SQLite, sent with PQexecParams (text parameters);
 * insert() sends a table's rows as multi-row INSERTs (one round trip per
 * 1,000 rows, or per 65,535 parameters).
 * A lost connection fails the statement; the server rolls back the open
 * transaction, so an artifact is either committed whole or absent. Messages
 * name host, port and database, never the password of the URL.
 *
 * libpq is loaded (dlopen) the first time a PostgreSQL database is opened,
 * not linked: it brings two dozen libraries (Kerberos, LDAP, GnuTLS) whose
 * loading took 9 ms of every ergon command's start here, a database or not
 * (docs/PERFORMANCE.md, "start-up"). Its header still gives the types and
 * each function's prototype, so every call is checked as before.
 */
#include "db_backend.h"

#include <dlfcn.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The soname Debian's libpq5 (and every libpq since 8.x) provides. */
#define PQ_SONAME "libpq.so.5"

#define PQ_FUNCS(X)                                                                        \
	X(PQconnectdb)                                                                     \
	X(PQfinish)                                                                        \
	X(PQstatus)                                                                        \
	X(PQerrorMessage)                                                                  \
	X(PQhost)                                                                          \
	X(PQport)                                                                          \
	X(PQdb)                                                                            \
	X(PQsetNoticeProcessor)                                                            \
	X(PQexec)                                                                          \
	X(PQexecParams)                                                                    \
	X(PQresultStatus)                                                                  \
	X(PQresultErrorMessage)                                                            \
	X(PQresultErrorField)                                                              \
	X(PQclear)                                                                         \
	X(PQnfields)                                                                       \
	X(PQfname)                                                                         \
	X(PQntuples)                                                                       \
	X(PQgetisnull)                                                                     \
	X(PQgetvalue)

/* One pointer per function, of the prototype's type. */
static struct {
#define PQ_FIELD(f) __typeof__(f) *f;
	PQ_FUNCS(PQ_FIELD)
#undef PQ_FIELD
} pq;

static pthread_once_t pq_once = PTHREAD_ONCE_INIT;
static char pq_error[300]; /* empty: loaded */

static void pq_load(void)
{
	void *lib = dlopen(PQ_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		const char *why = dlerror();
		snprintf(pq_error, sizeof pq_error, "%s", why ? why : "not found");
		return;
	}
#define PQ_SYM(f)                                                                          \
	if (pq_error[0] == '\0' && (*(void **)(&pq.f) = dlsym(lib, #f)) == NULL)           \
		snprintf(pq_error, sizeof pq_error, "%s has no %s", PQ_SONAME, #f);
	PQ_FUNCS(PQ_SYM)
#undef PQ_SYM
	/* Kept loaded: libpq keeps state (SSL, Kerberos) for the process. */
}

/* The calls below go through the loaded pointers. */
#define PQ_CALL(f) (pq.f)
#define PQconnectdb PQ_CALL(PQconnectdb)
#define PQfinish PQ_CALL(PQfinish)
#define PQstatus PQ_CALL(PQstatus)
#define PQerrorMessage PQ_CALL(PQerrorMessage)
#define PQhost PQ_CALL(PQhost)
#define PQport PQ_CALL(PQport)
#define PQdb PQ_CALL(PQdb)
#define PQsetNoticeProcessor PQ_CALL(PQsetNoticeProcessor)
#define PQexec PQ_CALL(PQexec)
#define PQexecParams PQ_CALL(PQexecParams)
#define PQresultStatus PQ_CALL(PQresultStatus)
#define PQresultErrorMessage PQ_CALL(PQresultErrorMessage)
#define PQresultErrorField PQ_CALL(PQresultErrorField)
#define PQclear PQ_CALL(PQclear)
#define PQnfields PQ_CALL(PQnfields)
#define PQfname PQ_CALL(PQfname)
#define PQntuples PQ_CALL(PQntuples)
#define PQgetisnull PQ_CALL(PQgetisnull)
#define PQgetvalue PQ_CALL(PQgetvalue)

#define PG_COLS_MAX 64
/* Parameters of one statement: the protocol counts them in 16 bits. */
#define PG_PARAMS_MAX 65535
/* Rows of one multi-row INSERT (fewer when the parameters run out). */
#define PG_INSERT_ROWS_MAX 1000

struct pg_h {
	PGconn *conn;
	char where[300];
};

static void pg_quiet(void *arg, const char *message)
{
	/* The library never prints: server NOTICEs are dropped. */
	(void)arg;
	(void)message;
}

/* libpq messages end with a newline; keep the first line. */
static const char *first_line(const char *msg, char buf[512])
{
	snprintf(buf, 512, "%s", msg ? msg : "");
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

static int pg_fail(struct pg_h *p, const PGresult *res, struct ergon_err *err)
{
	char line[512];
	const char *msg = res ? PQresultErrorMessage(res) : PQerrorMessage(p->conn);
	if (PQstatus(p->conn) != CONNECTION_OK)
		return ergon_err_set(err, ERGON_EIO,
				     "PostgreSQL %s: connection lost: %s (the open transaction is "
				     "rolled back by the server: nothing of this artifact is "
				     "stored; ingest it again)",
				     p->where, first_line(msg, line));
	/* SQLSTATE class 23, integrity constraint violation: the rows of one
	 * artifact break the schema (a key twice), the artifact's fault. */
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	if (state && strncmp(state, "23", 2) == 0)
		return ergon_err_set(err, ERGON_EREFUSED,
				     "PostgreSQL %s: %s: the artifact's rows break a constraint of "
				     "the schema (a key stored twice)",
				     p->where, first_line(msg, line));
	return ergon_err_set(err, ERGON_EIO, "PostgreSQL %s: %s", p->where, first_line(msg, line));
}

static int pg_open(const char *target, void **h, struct ergon_err *err)
{
	pthread_once(&pq_once, pq_load);
	if (pq_error[0])
		return ergon_err_set(err, ERGON_ENOTSUP,
				     "--db postgresql://...: PostgreSQL needs libpq, which cannot be "
				     "loaded (%s); install it (Debian: apt install libpq5) or use "
				     "the default SQLite database",
				     pq_error);
	struct pg_h *p = calloc(1, sizeof *p);
	if (!p)
		return ergon_err_set(err, ERGON_ENOMEM, "db: out of memory");
	p->conn = PQconnectdb(target);
	if (!p->conn) {
		free(p);
		return ergon_err_set(err, ERGON_ENOMEM, "db: out of memory");
	}
	const char *host = PQhost(p->conn), *port = PQport(p->conn), *db = PQdb(p->conn);
	snprintf(p->where, sizeof p->where, "(host %s, port %s, database %s)",
		 host && host[0] ? host : "default", port && port[0] ? port : "default",
		 db ? db : "?");
	if (PQstatus(p->conn) != CONNECTION_OK) {
		char line[512];
		int rc = ergon_err_set(err, ERGON_EIO,
				       "PostgreSQL %s unreachable: %s; start the server or fix "
				       "--db postgresql://USER@HOST:PORT/DB",
				       p->where, first_line(PQerrorMessage(p->conn), line));
		PQfinish(p->conn);
		free(p);
		return rc;
	}
	PQsetNoticeProcessor(p->conn, pg_quiet, NULL);
	*h = p;
	return 0;
}

static void pg_close(void *h)
{
	struct pg_h *p = h;
	if (!p)
		return;
	PQfinish(p->conn);
	free(p);
}

static int pg_exec(void *h, const char *sql, struct ergon_err *err)
{
	struct pg_h *p = h;
	PGresult *res = PQexec(p->conn, sql);
	ExecStatusType st = PQresultStatus(res);
	int rc = 0;
	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
		rc = pg_fail(p, res, err);
	PQclear(res);
	return rc;
}

static int pg_query(void *h, const char *sql, int nparams, const char *const *params,
		    ergon_db_row_fn fn, void *ctx, struct ergon_err *err)
{
	struct pg_h *p = h;
	PGresult *res = PQexecParams(p->conn, sql, nparams, NULL, params, NULL, NULL, 0);
	ExecStatusType st = PQresultStatus(res);
	int rc = 0;
	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
		rc = pg_fail(p, res, err);
	} else if (fn && st == PGRES_TUPLES_OK) {
		int n = PQnfields(res);
		if (n > PG_COLS_MAX)
			n = PG_COLS_MAX;
		const char *names[PG_COLS_MAX], *vals[PG_COLS_MAX];
		for (int c = 0; c < n; c++)
			names[c] = PQfname(res, c);
		int rows = PQntuples(res);
		for (int r = 0; r < rows; r++) {
			for (int c = 0; c < n; c++)
				vals[c] = PQgetisnull(res, r, c) ? NULL : PQgetvalue(res, r, c);
			if (fn(ctx, n, names, vals))
				break;
		}
	}
	PQclear(res);
	return rc;
}

/* Multi-row INSERTs: one round trip for up to PG_INSERT_ROWS_MAX rows
 * instead of one per row. */
static int pg_insert(void *h, const char *table, const char *cols, int ncols, size_t nrows,
		     const char *const *vals, struct ergon_err *err)
{
	struct pg_h *p = h;
	if (ncols < 1 || ncols > PG_COLS_MAX)
		return ergon_err_set(err, ERGON_EUSAGE, "insert into %s: %d columns", table, ncols);
	size_t per = PG_PARAMS_MAX / (size_t)ncols;
	if (per > PG_INSERT_ROWS_MAX)
		per = PG_INSERT_ROWS_MAX;
	/* "($1, $2), " is at most ncols * 9 + 4 bytes a row. */
	size_t cap = 256 + strlen(table) + strlen(cols) + per * ((size_t)ncols * 9 + 4);
	char *sql = malloc(cap);
	if (!sql)
		return ergon_err_set(err, ERGON_ENOMEM, "db: out of memory");
	int rc = 0;
	for (size_t r0 = 0; r0 < nrows && rc == 0; r0 += per) {
		size_t rows = nrows - r0 < per ? nrows - r0 : per;
		size_t n = (size_t)snprintf(sql, cap, "INSERT INTO %s (%s) VALUES ", table, cols);
		int k = 1;
		for (size_t r = 0; r < rows; r++) {
			n += (size_t)snprintf(sql + n, cap - n, "%s(", r ? ", " : "");
			for (int c = 0; c < ncols; c++)
				n +=
				    (size_t)snprintf(sql + n, cap - n, "%s$%d", c ? ", " : "", k++);
			n += (size_t)snprintf(sql + n, cap - n, ")");
		}
		PGresult *res = PQexecParams(p->conn, sql, (int)(rows * (size_t)ncols), NULL,
					     vals + r0 * (size_t)ncols, NULL, NULL, 0);
		if (PQresultStatus(res) != PGRES_COMMAND_OK)
			rc = pg_fail(p, res, err);
		PQclear(res);
	}
	free(sql);
	return rc;
}

static int pg_begin(void *h, struct ergon_err *err)
{
	return pg_exec(h, "BEGIN", err);
}

static int pg_row(void *ctx, int n, const char *const *names, const char *const *vals)
{
	(void)n;
	(void)names;
	(void)vals;
	*(int *)ctx = 1;
	return 1;
}

static int pg_has_table(void *h, const char *table, struct ergon_err *err)
{
	int found = 0;
	const char *p[1] = {table};
	int rc = pg_query(h,
			  "SELECT 1 FROM information_schema.tables WHERE table_schema ="
			  " current_schema() AND table_name = $1",
			  1, p, pg_row, &found, err);
	return rc ? rc : found;
}

const struct ergon_db_backend ergon_db_backend_postgresql = {
    .name = "postgresql",
    .open = pg_open,
    .close = pg_close,
    .exec = pg_exec,
    .query = pg_query,
    .insert = pg_insert,
    .begin = pg_begin,
    .has_table = pg_has_table,
    /* Two ingests into an empty database must not both create the schema:
     * a transaction-scoped advisory lock serialises migrations only. */
    .schema_lock = "SELECT pg_advisory_xact_lock(7270111)",
};
