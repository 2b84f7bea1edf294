/* `ergon db trend --html|--out`: one figure over time as a sealed
 * ergon.trend artifact, which `ergon report` renders (html_trend.c).
 *
 * Every point keeps its own provenance and a counted flag (measured and
 * not invalid), so a synthetic or replayed point can be shown but is never
 * drawn as a measurement. The artifact's own provenance is "measured" only
 * when every point is counted; otherwise it is the least trustworthy kind
 * among its points (synthetic before replayed), so the envelope never
 * claims more than its weakest point.
 */
#include "db_internal.h"
#include "ergon/artifact.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The most points one trend artifact holds (the trend table has no limit). */
#define TREND_POINTS_MAX 1000000

struct trend_build {
	json_t *points;
	char unit[32];
	int synthetic, replayed, counted, not_counted, too_many;
};

static const char *col(int n, const char *const *names, const char *const *vals, const char *c)
{
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], c) == 0)
			return vals[i];
	return NULL;
}

static json_t *num_or_null(const char *s)
{
	char *end = NULL;
	double v = s ? strtod(s, &end) : NAN;
	return s && end && *end == '\0' && isfinite(v) ? json_real(v) : json_null();
}

static int trend_point(void *ctx, int n, const char *const *names, const char *const *vals)
{
	struct trend_build *t = ctx;
	if (json_array_size(t->points) >= TREND_POINTS_MAX) {
		t->too_many = 1;
		return 1;
	}
	const char *prov = col(n, names, vals, "provenance");
	const char *counted = col(n, names, vals, "counted");
	const char *unit = col(n, names, vals, "unit");
	int yes = counted && strcmp(counted, "yes") == 0;
	t->counted += yes;
	t->not_counted += !yes;
	t->synthetic += prov && strcmp(prov, "synthetic") == 0;
	t->replayed += prov && strcmp(prov, "replayed") == 0;
	if (unit && !t->unit[0])
		snprintf(t->unit, sizeof t->unit, "%s", unit);
	const char *time = col(n, names, vals, "time");
	const char *rid = col(n, names, vals, "report_id");
	json_t *pt = json_pack("{s:s?, s:s?, s:s?, s:b, s:o, s:o}", "time", time, "report_id", rid,
			       "provenance", prov, "counted", yes, "value",
			       num_or_null(col(n, names, vals, "value")), "u",
			       num_or_null(col(n, names, vals, "u")));
	/* Schema 6: where the time came from; a repeated run's standard
	 * error of the mean and its number of repetitions. */
	const char *ts = col(n, names, vals, "time_source");
	if (pt && ts)
		json_object_set_new(pt, "time_source", json_string(ts));
	if (pt && col(n, names, vals, "sem"))
		json_object_set_new(pt, "sem", num_or_null(col(n, names, vals, "sem")));
	const char *reps = col(n, names, vals, "repetitions");
	if (pt && reps)
		json_object_set_new(pt, "repetitions", json_integer(strtoll(reps, NULL, 10)));
	json_array_append_new(t->points, pt);
	return 0;
}

int ergon_db_trend_artifact(struct ergon_db *db, const char *figure, const char *device,
			    const char *board, json_t **out, struct ergon_err *err)
{
	*out = NULL;
	struct trend_build t = {.points = json_array()};
	if (!t.points)
		return ergon_err_set(err, ERGON_ENOMEM, "trend: out of memory");
	int rc = ergon_db_trend(db, figure, device, board, trend_point, &t, err);
	if (rc == 0 && t.too_many)
		rc = ergon_err_set(err, ERGON_ETOOBIG,
				   "trend %s on %s: more than %d points; narrow it with --board",
				   figure, device, TREND_POINTS_MAX);
	if (rc) {
		json_decref(t.points);
		return rc;
	}
	int kind = t.not_counted == 0 ? ERGON_PROV_MEASURED
		   : t.synthetic      ? ERGON_PROV_SYNTHETIC
		   : t.replayed	      ? ERGON_PROV_REPLAYED
				      : ERGON_PROV_MEASURED;
	json_t *a = ergon_artifact_new("ergon.trend", 1, kind);
	if (!a) {
		json_decref(t.points);
		return ergon_err_set(err, ERGON_ENOMEM, "trend: out of memory");
	}
	json_object_set_new(json_object_get(a, "provenance"), "note",
			    json_string("a trend of stored results: every point keeps its own "
					"provenance; only counted points (measured, not invalid) "
					"are measurements"));
	json_object_set_new(a, "trend",
			    json_pack("{s:s, s:s, s:s?, s:s, s:s, s:i, s:i, s:o}", "figure", figure,
				      "device", device, "board", board, "unit", t.unit, "database",
				      ergon_db_backend_name(db), "counted", t.counted,
				      "not_counted", t.not_counted, "points", t.points));
	rc = ergon_artifact_seal(a, err);
	if (rc) {
		json_decref(a);
		return rc;
	}
	*out = a;
	return 0;
}
