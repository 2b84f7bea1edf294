/* The schema 3 -> 4 migration (trend_points) on PostgreSQL: the same steps
 * as on SQLite (tests/support/ts_db_migrate.c) in a fresh database created
 * here and dropped afterwards. Needs ERGON_PG_URL (a role that may CREATE
 * DATABASE; scripts/test.sh starts a server); without it the test exits 77
 * and ctest reports it skipped, never passed. */
#include "test_support.h"
#include "ts_db_migrate.h"

#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char admin_url[1024], db_name[64], db_url[1100];

static int admin(const char *sql)
{
	PGconn *c = PQconnectdb(admin_url);
	int ok = PQstatus(c) == CONNECTION_OK;
	if (ok) {
		PGresult *r = PQexec(c, sql);
		ok = PQresultStatus(r) == PGRES_COMMAND_OK;
		if (!ok)
			fprintf(stderr, "%s: %s", sql, PQerrorMessage(c));
		PQclear(r);
	} else {
		fprintf(stderr, "cannot connect to ERGON_PG_URL: %s", PQerrorMessage(c));
	}
	PQfinish(c);
	return ok ? 0 : -1;
}

static void migrate_v3_to_v4_pg(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	ts_db_v3_to_current(db_url, dir);
	ts_tmpdir_remove(dir);
	free(dir);
}

int main(void)
{
	const char *url = getenv("ERGON_PG_URL");
	if (url == NULL || url[0] == '\0') {
		printf("SKIP: ERGON_PG_URL is not set (start a server: eval "
		       "\"$(scripts/pg_start.sh)\")\n");
		return 77;
	}
	const char *slash = strrchr(url, '/');
	if (slash == NULL || strlen(url) >= sizeof admin_url) {
		fprintf(stderr, "ERGON_PG_URL=%s: expected postgresql://USER@HOST:PORT/DB\n", url);
		return 1;
	}
	snprintf(admin_url, sizeof admin_url, "%s", url);
	snprintf(db_name, sizeof db_name, "ergon_t_%ld_v4", (long)getpid());
	snprintf(db_url, sizeof db_url, "%.*s/%s", (int)(slash - url), url, db_name);
	char sql[160];
	snprintf(sql, sizeof sql, "CREATE DATABASE %s", db_name);
	if (admin(sql) != 0) {
		printf("SKIP: no PostgreSQL answers at ERGON_PG_URL\n");
		return 77;
	}
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(migrate_v3_to_v4_pg),
	};
	int failed = cmocka_run_group_tests(tests, NULL, NULL);
	snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %s WITH (FORCE)", db_name);
	if (admin(sql) != 0)
		failed++;
	return failed;
}
