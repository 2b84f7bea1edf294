/* ergon db schema versions on SQLite: a version-1 database migrates to the
 * current version keeping its rows and ends with exactly the tables and
 * views of a new one; a newer version is refused with both versions; a
 * figure and its ± are stored as written (values chosen here). */
#include "ergon/artifact.h"
#include "ergon/db.h"
#include "test_support.h"
#include "ts_db_migrate.h"

#include <cmocka.h>
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *write_artifact(const char *dir)
{
	json_t *a = ergon_artifact_new("ergon.profile", 1, ERGON_PROV_SYNTHETIC);
	json_object_set_new(a, "power",
			    json_pack("{s:f, s:f, s:[{s:f, s:f, s:f}]}", "energy_j", 0.5,
				      "energy_uncertainty_j", 0.01, "windows", "start_s", 1.0,
				      "duration_s", 2.0, "energy_j", 0.5));
	json_object_set_new(a, "profile",
			    json_pack("{s:[{s:i, s:s, s:f, s:{s:i}}]}", "layers", "id", 0, "op",
				      "CONV_2D", "cycles", 48000.0, "counters", "l1d_miss", 7));
	json_object_set_new(a, "integrity", json_string("valid"));
	char *path = malloc(strlen(dir) + 16);
	snprintf(path, strlen(dir) + 16, "%s/a.json", dir);
	struct ergon_err err = {0};
	assert_int_equal(ergon_artifact_write(a, path, 0, &err), 0);
	json_decref(a);
	return path;
}

static void q(struct ergon_db *db, const char *sql, char out[4096])
{
	struct ergon_err err = {0};
	out[0] = '\0';
	assert_int_equal(ergon_db_query(db, sql, 0, NULL, ts_db_append_row, out, &err), 0);
}

static const char objects_sql[] = "SELECT type, name FROM sqlite_master WHERE type IN "
				  "('table', 'view', 'index') AND name NOT LIKE 'sqlite_%' "
				  "ORDER BY type, name";

static void migrate_v1_to_current(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *art = write_artifact(dir);
	char path[512], fresh[512], out[4096], want[4096];
	snprintf(path, sizeof path, "%s/old.db", dir);
	snprintf(fresh, sizeof fresh, "%s/sub/new.db", dir);
	struct ergon_err err = {0};
	struct ergon_db *db = NULL;
	int res = 0;

	assert_int_equal(ergon_db_open(path, 1, &db, &err), 0);
	assert_int_equal(ergon_db_schema_version(db), 1);
	assert_int_equal(ergon_db_ingest_file(db, art, &res, NULL, &err), 0);
	assert_int_equal(res, ERGON_DB_INGESTED);
	q(db, "SELECT COUNT(*) FROM sqlite_master WHERE name IN ('windows', 'layers')", out);
	assert_string_equal(out, "0\n");
	ergon_db_close(db);

	assert_int_equal(ergon_db_open(path, ERGON_DB_SCHEMA_VERSION, &db, &err), 0);
	assert_int_equal(ergon_db_schema_version(db), 6);
	q(db, "SELECT version FROM schema_version", out);
	assert_string_equal(out, "6\n");
	/* Schema 5: figures_name is on the name alone (ingest appends to it). */
	q(db, "SELECT sql FROM sqlite_master WHERE name = 'figures_name'", out);
	assert_string_equal(out, "CREATE INDEX figures_name ON figures (name)\n");
	/* Runs stored before version 3 say nothing about their signature. */
	q(db, "SELECT signer_key_id, signature FROM runs", out);
	assert_string_equal(out, "NULL|NULL\n");
	q(db, "SELECT name, value, unit, u FROM figures ORDER BY name", out);
	assert_string_equal(out, "power.energy_j|0.5|J|0.01\n");
	/* Ingesting again after the migration changes nothing. */
	assert_int_equal(ergon_db_ingest_file(db, art, &res, NULL, &err), 0);
	assert_int_equal(res, ERGON_DB_DUPLICATE);
	q(db, "SELECT COUNT(*) FROM runs", out);
	assert_string_equal(out, "1\n");
	q(db, objects_sql, out);
	ergon_db_close(db);

	/* A new database (its folder created) has the same objects. */
	assert_int_equal(ergon_db_open(fresh, ERGON_DB_SCHEMA_VERSION, &db, &err), 0);
	q(db, objects_sql, want);
	assert_string_equal(out, want);
	assert_non_null(strstr(want, "view|measured_figures"));
	assert_int_equal(ergon_db_ingest_file(db, art, &res, NULL, &err), 0);
	q(db, "SELECT idx, layer_id, op, counter, value FROM layers ORDER BY counter", out);
	assert_string_equal(out, "0|0|CONV_2D|cycles|48000\n0|0|CONV_2D|l1d_miss|7\n");
	q(db, "SELECT t_start_s, duration_s, energy_j FROM windows", out);
	assert_string_equal(out, "1|2|0.5\n");
	ergon_db_close(db);
	free(art);
	ts_tmpdir_remove(dir);
	free(dir);
}

static void newer_schema_refused(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char path[512], out[4096];
	snprintf(path, sizeof path, "%s/n.db", dir);
	struct ergon_err err = {0};
	struct ergon_db *db = NULL;
	assert_int_equal(ergon_db_open(path, ERGON_DB_SCHEMA_VERSION, &db, &err), 0);
	q(db, "UPDATE schema_version SET version = 9", out);
	ergon_db_close(db);
	assert_int_equal(ergon_db_open(path, ERGON_DB_SCHEMA_VERSION, &db, &err), ERGON_EREFUSED);
	assert_null(db);
	assert_non_null(strstr(err.msg, "schema version 9 was written by a newer ergon"));
	assert_non_null(strstr(err.msg, "up to 6"));
	ts_tmpdir_remove(dir);
	free(dir);
}

/* Schema 3 -> 4 on SQLite (trend_points; the same check runs on
 * PostgreSQL in tests/functional/test_db_migrate_pg.c). */
static void migrate_v3_to_v4(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char path[512];
	snprintf(path, sizeof path, "%s/v3.db", dir);
	ts_db_v3_to_current(path, dir);
	ts_tmpdir_remove(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(migrate_v1_to_current),
	    cmocka_unit_test(newer_schema_refused),
	    cmocka_unit_test(migrate_v3_to_v4),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
