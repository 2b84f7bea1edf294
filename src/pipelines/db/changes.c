/* `ergon db changes FIGURE`: the shifts in one figure's history on one
 * device (docs/DB.md, docs/METHOD.md "Changes over time"). The points are
 * those `ergon db trend` reads, in measurement-time order; the method is
 * the engine's (ergon/changepoint.h: PELT on an uncertainty-weighted
 * mean-shift cost). Each point's own standard uncertainty is its stated ±
 * read as the half-width of a rectangular distribution (GUM 4.3.7: ±/√3,
 * the reports' ± being a worst-case bound), combined in quadrature with
 * the standard error of the mean over repetitions where the point is a
 * repeated run's mean. */
#include "db_internal.h"
#include "ergon/changepoint.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct pt {
	double x, s;
	char time[40], rid[80], prov[16], tsrc[16];
	int counted;
};

struct collect {
	struct pt *p;
	size_t n, cap;
	int all; /* every point, not only the counted ones */
	char unit[32];
	int oom;
	size_t ingest_times; /* points whose time is when they were ingested */
};

static const char *col(int n, const char *const *names, const char *const *vals, const char *c)
{
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], c) == 0)
			return vals[i];
	return NULL;
}

static double num(const char *s)
{
	char *end = NULL;
	double v = s ? strtod(s, &end) : NAN;
	return s && end && *end == '\0' ? v : NAN;
}

static int point_row(void *ctx, int n, const char *const *names, const char *const *vals)
{
	struct collect *c = ctx;
	const char *counted = col(n, names, vals, "counted");
	int yes = counted && strcmp(counted, "yes") == 0;
	double x = num(col(n, names, vals, "value"));
	if ((!yes && !c->all) || !isfinite(x))
		return 0;
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		if (cap > ERGON_CP_MAX_POINTS) {
			c->oom = 2;
			return 1;
		}
		struct pt *q = realloc(c->p, cap * sizeof *q);
		if (q == NULL) {
			c->oom = 1;
			return 1;
		}
		c->p = q;
		c->cap = cap;
	}
	struct pt *p = &c->p[c->n++];
	memset(p, 0, sizeof *p);
	p->x = x;
	double u = num(col(n, names, vals, "u"));
	double sem = num(col(n, names, vals, "sem"));
	double su = isfinite(u) && u > 0 ? u / sqrt(3.0) : 0;
	double ss = isfinite(sem) && sem > 0 ? sem : 0;
	p->s = su > 0 || ss > 0 ? sqrt(su * su + ss * ss) : NAN;
	p->counted = yes;
	const char *t = col(n, names, vals, "time"), *r = col(n, names, vals, "report_id"),
		   *pv = col(n, names, vals, "provenance"), *un = col(n, names, vals, "unit"),
		   *ts = col(n, names, vals, "time_source");
	snprintf(p->time, sizeof p->time, "%s", t ? t : "");
	snprintf(p->rid, sizeof p->rid, "%s", r ? r : "");
	snprintf(p->prov, sizeof p->prov, "%s", pv ? pv : "");
	snprintf(p->tsrc, sizeof p->tsrc, "%s", ts ? ts : "unknown");
	c->ingest_times += ts && strcmp(ts, "ingested") == 0;
	if (un && !c->unit[0])
		snprintf(c->unit, sizeof c->unit, "%s", un);
	return 0;
}

static json_t *real_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *point_json(const struct pt *p)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:f}", "time", p->time, "time_source", p->tsrc,
			 "report_id", p->rid, "provenance", p->prov, "value", p->x);
}

int ergon_db_changes(struct ergon_db *db, const struct ergon_db_changes_opts *o, json_t **out,
		     struct ergon_err *err)
{
	*out = NULL;
	struct collect c = {.all = o->all};
	int rc = ergon_db_trend(db, o->figure, o->device, o->board, point_row, &c, err);
	if (rc == 0 && c.oom)
		rc = c.oom == 2 ? ergon_err_set(err, ERGON_ETOOBIG,
						"changes: more than %d points; narrow it with "
						"--board",
						ERGON_CP_MAX_POINTS)
				: ergon_err_set(err, ERGON_ENOMEM, "changes: out of memory");
	if (rc) {
		free(c.p);
		return rc;
	}
	double *x = malloc((c.n ? c.n : 1) * sizeof *x), *s = malloc((c.n ? c.n : 1) * sizeof *s);
	struct ergon_cp_result cp = {0};
	json_t *res = NULL;
	if (x == NULL || s == NULL) {
		rc = ergon_err_set(err, ERGON_ENOMEM, "changes: out of memory");
		goto out;
	}
	for (size_t i = 0; i < c.n; i++) {
		x[i] = c.p[i].x;
		s[i] = c.p[i].s;
	}
	if (c.n > 0 && (rc = ergon_changepoints(x, s, c.n, o->alpha, &cp, err)) != 0)
		goto out;
	json_t *segs = json_array(), *shifts = json_array();
	for (size_t k = 0; k < cp.n_seg; k++) {
		const struct ergon_cp_segment *g = &cp.seg[k];
		json_array_append_new(
		    segs, json_pack("{s:I, s:I, s:s, s:s, s:f, s:o}", "first", (json_int_t)g->start,
				    "points", (json_int_t)(g->end - g->start), "from_time",
				    c.p[g->start].time, "to_time", c.p[g->end - 1].time, "mean",
				    g->mean, "se", real_or_null(g->se)));
		if (k == 0)
			continue;
		const struct ergon_cp_segment *h = &cp.seg[k - 1];
		json_array_append_new(
		    shifts,
		    json_pack("{s:I, s:s, s:f, s:o, s:f, s:o, s:o, s:o, s:o}", "at",
			      (json_int_t)g->start, "time", c.p[g->start].time, "from", h->mean,
			      "from_se", real_or_null(h->se), "to", g->mean, "to_se",
			      real_or_null(g->se), "change_pct",
			      h->mean != 0 ? json_real(100.0 * (g->mean - h->mean) / fabs(h->mean))
					   : json_null(),
			      "before", point_json(&c.p[g->start - 1]), "after",
			      point_json(&c.p[g->start])));
	}
	res = json_pack(
	    "{s:s, s:s, s:s?, s:s, s:b, s:I, s:s, s:o, s:o, s:o, s:o, s:o, s:o}", "figure",
	    o->figure, "device", o->device, "board", o->board, "unit", c.unit, "all", o->all,
	    "points", (json_int_t)c.n, "method",
	    "PELT (Killick, Fearnhead and Eckley 2012) on the mean-shift cost sum w_i (x_i - m)^2, "
	    "w_i = 1 / max(s_i, sigma_d)^2 (s_i: the point's own standard uncertainty, its ± / "
	    "sqrt 3 with the repetitions' standard error in quadrature; sigma_d: the history's "
	    "scatter from its successive differences, 1.4826 median |dx| / sqrt 2); a shift "
	    "costs the chi-square(1) quantile at 1 - alpha / (n - 1) (Bonferroni over the places "
	    "of one shift); segments of at least 2 points",
	    "alpha", c.n ? json_real(cp.alpha) : json_null(), "penalty",
	    c.n ? json_real(cp.penalty) : json_null(), "sigma_data",
	    c.n && isfinite(cp.sigma_data) ? json_real(cp.sigma_data) : json_null(), "segments",
	    segs, "shifts", shifts, "counted_only", json_boolean(!o->all));
	if (res && c.ingest_times)
		json_object_set_new(
		    res, "time_note",
		    json_sprintf("%zu of the %zu points carry the time they were ingested, not "
				 "when they were measured (artifacts that did not say): their "
				 "place in the history is their ingest order",
				 c.ingest_times, c.n));
	if (res == NULL)
		rc = ergon_err_set(err, ERGON_ENOMEM, "changes: out of memory");
out:
	free(x);
	free(s);
	free(cp.seg);
	free(c.p);
	if (rc) {
		json_decref(res);
		return rc;
	}
	*out = res;
	return 0;
}
