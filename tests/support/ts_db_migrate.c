/* ts_db_v3_to_current: the expected rows are written here by hand from the
 * artifacts this file makes (times, values, provenance, integrity). */
#include "ts_db_migrate.h"

#include "ergon/artifact.h"
#include "ergon/db.h"
#include "test_support.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A profile artifact on device dev1 (NULL: none) and board, its
 * power.energy_per_inference_j = e with ± u, captured at t. */
static void write_profile(const char *path, int prov, const char *integrity, const char *dev,
			  const char *board, const char *t, double e, double u, char rid[80])
{
	json_t *a = ergon_artifact_new("ergon.profile", 1, prov);
	json_object_set_new(json_object_get(a, "provenance"), "recording",
			    json_pack("{s:s}", "capture_start_utc", t));
	if (dev)
		json_object_set_new(a, "device", json_pack("{s:s}", "name", dev));
	json_object_set_new(a, "board", json_pack("{s:s}", "name", board));
	json_object_set_new(a, "power",
			    json_pack("{s:f, s:f}", "energy_per_inference_j", e,
				      "energy_per_inference_uncertainty_j", u));
	json_object_set_new(a, "integrity", json_string(integrity));
	struct ergon_err err = {0};
	assert_int_equal(ergon_artifact_write(a, path, 0, &err), 0);
	snprintf(rid, 80, "%s", json_string_value(json_object_get(a, "report_id")));
	json_decref(a);
}

int ts_db_append_row(void *ctx, int n, const char *const *names, const char *const *vals)
{
	(void)names;
	char *buf = ctx;
	for (int i = 0; i < n; i++) {
		strncat(buf, vals[i] ? vals[i] : "NULL", 4095 - strlen(buf));
		strncat(buf, i + 1 < n ? "|" : "\n", 4095 - strlen(buf));
	}
	return 0;
}

/* The trend's first 9 columns, those every schema gives (schema 6 adds
 * time_source, sem and repetitions, checked apart). */
static int first9(void *ctx, int n, const char *const *names, const char *const *vals)
{
	return ts_db_append_row(ctx, n < 9 ? n : 9, names, vals);
}

static void trend(struct ergon_db *db, const char *board, char out[4096])
{
	struct ergon_err err = {0};
	out[0] = '\0';
	assert_int_equal(ergon_db_trend(db, "power.energy_per_inference_j", "dev1", board, first9,
					out, &err),
			 0);
}

static void ingest(struct ergon_db *db, const char *path)
{
	struct ergon_err err = {0};
	int res = 0;
	if (ergon_db_ingest_file(db, path, &res, NULL, &err) != 0)
		fail_msg("ingest %s: %s", path, err.msg);
	assert_int_equal(res, ERGON_DB_INGESTED);
}

void ts_db_v3_to_current(const char *target, const char *dir)
{
	char p[5][600], r[5][80], out[4096], want[4096], has[4096];
	for (int i = 0; i < 5; i++)
		snprintf(p[i], sizeof p[i], "%s/p%d.json", dir, i);
	/* Out of time order on purpose: the trend sorts by time. */
	write_profile(p[0], ERGON_PROV_MEASURED, "valid", "dev1", "b1", "2026-01-03T00:00:00Z",
		      0.25, 0.01, r[0]);
	write_profile(p[1], ERGON_PROV_SYNTHETIC, "valid", "dev1", "b2", "2026-01-01T00:00:00Z",
		      0.5, 0.02, r[1]);
	write_profile(p[2], ERGON_PROV_MEASURED, "invalid", "dev1", "b1", "2026-01-02T00:00:00Z",
		      0.75, 0.03, r[2]);
	write_profile(p[3], ERGON_PROV_MEASURED, "valid", NULL, "b3", "2026-01-04T00:00:00Z", 1.0,
		      0.04, r[3]);
	write_profile(p[4], ERGON_PROV_MEASURED, "degraded", "dev1", "b2", "2026-01-05T00:00:00Z",
		      0.125, 0.005, r[4]);

	struct ergon_err err = {0};
	struct ergon_db *db = NULL;
	if (ergon_db_open(target, 3, &db, &err) != 0)
		fail_msg("open at schema 3: %s", err.msg);
	assert_int_equal(ergon_db_schema_version(db), 3);
	for (int i = 0; i < 4; i++)
		ingest(db, p[i]);
	/* p3 names no device: ingest stores its board as the device, so it
	 * is a point on b3, not on dev1. */
	trend(db, NULL, want);
	ergon_db_close(db);

	if (ergon_db_open(target, ERGON_DB_SCHEMA_VERSION, &db, &err) != 0)
		fail_msg("migrate to %d: %s", ERGON_DB_SCHEMA_VERSION, err.msg);
	assert_int_equal(ergon_db_schema_version(db), ERGON_DB_SCHEMA_VERSION);
	out[0] = '\0';
	assert_int_equal(ergon_db_query(db, "SELECT MAX(version), COUNT(*) FROM schema_version", 0,
					NULL, ts_db_append_row, out, &err),
			 0);
	assert_string_equal(out, "6|1\n");
	/* Schema 6: every migrated point keeps where its time came from (a
	 * recording's capture start here), and none is a repeated mean. */
	out[0] = '\0';
	assert_int_equal(ergon_db_query(db,
					"SELECT time_source, sem, repetitions, COUNT(*) FROM "
					"trend_points GROUP BY time_source, sem, repetitions",
					0, NULL, ts_db_append_row, out, &err),
			 0);
	assert_string_equal(out, "artifact|NULL|NULL|4\n");
	/* Every stored figure of a run with a device became a trend point. */
	out[0] = '\0';
	assert_int_equal(ergon_db_query(db,
					"SELECT device, COUNT(*) FROM trend_points GROUP BY "
					"device ORDER BY device",
					0, NULL, ts_db_append_row, out, &err),
			 0);
	assert_string_equal(out, "b3|1\ndev1|3\n");
	/* time, report_id, provenance, counted, value, u, unit, board,
	 * integrity: oldest first; only measured and not invalid counts. */
	snprintf(has, sizeof has,
		 "2026-01-01T00:00:00Z|%s|synthetic|no|0.5|0.02|J|b2|valid\n"
		 "2026-01-02T00:00:00Z|%s|measured|no|0.75|0.03|J|b1|invalid\n"
		 "2026-01-03T00:00:00Z|%s|measured|yes|0.25|0.01|J|b1|valid\n",
		 r[1], r[2], r[0]);
	trend(db, NULL, out);
	assert_string_equal(out, has);
	/* The schema 3 query (a join) gave the same answer. */
	assert_string_equal(want, has);
	trend(db, "b2", out);
	snprintf(has, sizeof has, "2026-01-01T00:00:00Z|%s|synthetic|no|0.5|0.02|J|b2|valid\n",
		 r[1]);
	assert_string_equal(out, has);

	/* An ingest after the migration adds its point. */
	ingest(db, p[4]);
	trend(db, "b2", out);
	snprintf(has, sizeof has,
		 "2026-01-01T00:00:00Z|%s|synthetic|no|0.5|0.02|J|b2|valid\n"
		 "2026-01-05T00:00:00Z|%s|measured|yes|0.125|0.005|J|b2|degraded\n",
		 r[1], r[4]);
	assert_string_equal(out, has);
	ergon_db_close(db);
}
