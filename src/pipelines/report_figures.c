/* Figures from a report's embedded series. The run pipeline calls this to
 * fill "figures" and `ergon verify` calls it again on the file: one code
 * path, so a report verifies exactly when its figures follow from its series
 * (docs/METHOD.md, docs/THREAT_MODEL.md). */
#include "ergon/figures.h"
#include "ergon/issues.h"
#include "ergon/report.h"
#include "pipelines/report_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

json_t *ergon_jnum(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* Resolve a dotted path ("series.samples.t_s"). */
const json_t *ergon_jpath(const json_t *root, const char *path)
{
	char key[128];
	const json_t *cur = root;
	while (cur && *path) {
		size_t l = strcspn(path, ".");
		if (l >= sizeof(key))
			return NULL;
		memcpy(key, path, l);
		key[l] = '\0';
		cur = json_object_get(cur, key);
		path += l + (path[l] == '.');
	}
	return cur;
}

int ergon_jnumber(const json_t *root, const char *path, double *out, struct ergon_err *err)
{
	const json_t *v = ergon_jpath(root, path);
	if (!json_is_number(v))
		return ergon_err_set(
		    err, ERGON_EVERIFY,
		    "field %s: missing or not a number; the report is incomplete or "
		    "was edited",
		    path);
	*out = json_number_value(v);
	return 0;
}

int ergon_jarray(const json_t *root, const char *path, double **out, size_t *n,
		 struct ergon_err *err)
{
	*out = NULL;
	*n = 0;
	const json_t *a = ergon_jpath(root, path);
	if (!json_is_array(a))
		return ergon_err_set(err, ERGON_EVERIFY, "field %s: missing or not an array", path);
	size_t len = json_array_size(a);
	double *d = malloc((len ? len : 1) * sizeof(double));
	if (d == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "field %s: out of memory", path);
	for (size_t i = 0; i < len; i++) {
		const json_t *x = json_array_get(a, i);
		if (json_is_number(x)) {
			d[i] = json_number_value(x);
		} else if (json_is_null(x)) {
			d[i] = NAN; /* a reading without this field */
		} else {
			free(d);
			return ergon_err_set(err, ERGON_EVERIFY, "field %s[%zu]: not a number",
					     path, i);
		}
	}
	*out = d;
	*n = len;
	return 0;
}

json_t *ergon_darray(const double *v, size_t n, size_t stride_keep, size_t total)
{
	json_t *a = json_array();
	if (a == NULL)
		return NULL;
	(void)total;
	for (size_t i = 0; i < n; i += stride_keep ? stride_keep : 1)
		json_array_append_new(a, ergon_jnum(v[i]));
	return a;
}

static json_t *energy_json(const struct ergon_energy *e, const char *method)
{
	return json_pack("{s:o, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:s}", "duration_s",
			 ergon_jnum(e->span_s), "samples", (json_int_t)e->n_samples, "energy_j",
			 ergon_jnum(e->energy_j), "energy_u_j", ergon_jnum(e->u_j),
			 "energy_u_rated_j", ergon_jnum(e->u_rated_j), "energy_u_timing_j",
			 ergon_jnum(e->u_timing_j), "mean_power_w", ergon_jnum(e->mean_power_w),
			 "mean_power_u_w", ergon_jnum(e->mean_power_u_w), "peak_power_w",
			 ergon_jnum(e->peak_power_w), "energy_method", method);
}

struct series {
	double *t, *p, *temp, *e;
	size_t n, n_temp, n_e;
	double *inv_t, *inv_l, *failed, *edges;
	size_t n_inv, n_failed, n_edges;
};

static void series_free(struct series *s)
{
	free(s->t);
	free(s->p);
	free(s->temp);
	free(s->e);
	free(s->inv_t);
	free(s->inv_l);
	free(s->failed);
	free(s->edges);
}

/* Energy of one phase from the samples inside [t0, t1]. */
static int phase_energy(const struct series *s, double t0, double t1, const json_t *um,
			const char *name, struct ergon_energy *out, const char **method,
			struct ergon_err *err)
{
	double acc = 0, res_w = 0, res_j = 0, q = 0;
	int rc;
	if ((rc = ergon_jnumber(um, "accuracy_pct", &acc, err)) ||
	    (rc = ergon_jnumber(um, "resolution_w", &res_w, err)) ||
	    (rc = ergon_jnumber(um, "resolution_j", &res_j, err)) ||
	    (rc = ergon_jnumber(um, "timing_quantum_s", &q, err)))
		return rc;
	size_t a = 0;
	while (a < s->n && s->t[a] < t0)
		a++;
	size_t b = a;
	while (b < s->n && s->t[b] <= t1)
		b++;
	int accum = s->n_e == s->n && b > a;
	for (size_t i = a; accum && i < b; i++)
		accum = isfinite(s->e[i]);
	struct ergon_err e2 = {0};
	if (accum) {
		*method = "accumulator_delta";
		rc = ergon_energy_accumulator(s->t + a, s->e + a, b - a, acc, res_j, out, &e2);
	} else {
		*method = "trapezoid";
		rc = ergon_energy_trapezoid(s->t + a, s->p + a, b - a, acc, res_w, q, out, &e2);
	}
	if (rc)
		return ergon_err_set(err, ERGON_EVERIFY,
				     "field series.samples (%s phase, from sample %zu): %s", name,
				     a, e2.msg);
	if (accum) {
		/* Peak from the instantaneous power column, when present. */
		double peak = NAN;
		for (size_t i = a; i < b; i++)
			if (isfinite(s->p[i]) && !(s->p[i] <= peak))
				peak = s->p[i];
		out->peak_power_w = peak;
	}
	return 0;
}

static int load_series(const json_t *r, struct series *s, struct ergon_err *err)
{
	int rc;
	*s = (struct series){0};
	size_t n_p, n_l;
	if ((rc = ergon_jarray(r, "series.samples.t_s", &s->t, &s->n, err)) ||
	    (rc = ergon_jarray(r, "series.samples.power_w", &s->p, &n_p, err)) ||
	    (rc = ergon_jarray(r, "series.invocations.t_start_s", &s->inv_t, &s->n_inv, err)) ||
	    (rc = ergon_jarray(r, "series.invocations.latency_s", &s->inv_l, &n_l, err)))
		return rc;
	if (n_l != s->n_inv)
		return ergon_err_set(
		    err, ERGON_EVERIFY,
		    "field series.invocations.latency_s: %zu values for %zu starts", n_l, s->n_inv);
	if ((rc = ergon_jarray(r, "series.invocations.failed_index", &s->failed, &s->n_failed,
			       err)) ||
	    (rc = ergon_jarray(r, "series.window_edges_s", &s->edges, &s->n_edges, err)))
		return rc;
	if (json_is_array(ergon_jpath(r, "series.samples.temp_c")) &&
	    (rc = ergon_jarray(r, "series.samples.temp_c", &s->temp, &s->n_temp, err)))
		return rc;
	if (json_is_array(ergon_jpath(r, "series.samples.energy_j")) &&
	    (rc = ergon_jarray(r, "series.samples.energy_j", &s->e, &s->n_e, err)))
		return rc;
	if (n_p != s->n || (s->temp && s->n_temp != s->n) || (s->e && s->n_e != s->n))
		return ergon_err_set(err, ERGON_EVERIFY,
				     "field series.samples: the columns differ in length");
	for (size_t i = 0; i < s->n_failed; i++)
		if (!(s->failed[i] >= 0 && s->failed[i] < (double)s->n_inv &&
		      s->failed[i] == floor(s->failed[i])))
			return ergon_err_set(err, ERGON_EVERIFY,
					     "field series.invocations.failed_index[%zu]: not an "
					     "invocation index",
					     i);
	return 0;
}

/* Mean temperature of the samples within [t0, t1]; NaN when none. */
static double mean_temp(const struct series *s, double t0, double t1)
{
	double sum = 0;
	size_t n = 0;
	for (size_t i = 0; s->temp && i < s->n; i++)
		if (s->t[i] >= t0 && s->t[i] <= t1 && isfinite(s->temp[i]))
			sum += s->temp[i], n++;
	return n ? sum / (double)n : NAN;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Figures of an embedded exact block (decimated reports). */
static int exact_energy(const json_t *r, const char *phase, struct ergon_energy *e,
			struct ergon_err *err)
{
	char path[96];
	const char *f[] = {"duration_s",	"energy_j",	"energy_u_rated_j",
			   "energy_u_timing_j", "peak_power_w", "samples"};
	double v[6];
	for (int i = 0; i < 6; i++) {
		snprintf(path, sizeof(path), "series.exact.%s.%s", phase, f[i]);
		int rc = ergon_jnumber(r, path, &v[i], err);
		if (rc)
			return rc;
	}
	*e = (struct ergon_energy){.span_s = v[0],
				   .energy_j = v[1],
				   .u_rated_j = v[2],
				   .u_timing_j = v[3],
				   .peak_power_w = v[4],
				   .n_samples = (size_t)v[5]};
	e->u_j = e->u_rated_j + e->u_timing_j;
	e->mean_power_w = e->span_s > 0 ? e->energy_j / e->span_s : NAN;
	e->mean_power_u_w = e->span_s > 0 ? e->u_j / e->span_s : NAN;
	return 0;
}

int ergon_report_compute_figures(const json_t *r, json_t **figures_out, json_t **issues_out,
				 struct ergon_err *err)
{
	struct series s;
	json_t *fig = NULL, *issues = json_array();
	*figures_out = NULL;
	*issues_out = NULL;
	int rc = load_series(r, &s, err);
	if (rc)
		goto out;
	fig = json_object();
	const char *status = json_string_value(json_object_get(r, "status"));
	if (status == NULL) {
		rc = ergon_err_set(err, ERGON_EVERIFY, "field status: missing or not a string");
		goto out;
	}
	/* Operations: every invocation of the load phase. */
	size_t n_ok = s.n_inv - s.n_failed;
	json_object_set_new(fig, "operations",
			    json_pack("{s:I, s:I, s:I}", "count", (json_int_t)s.n_inv, "succeeded",
				      (json_int_t)n_ok, "failed", (json_int_t)s.n_failed));
	if (s.n_failed)
		ergon_issue_add(issues, "run.invocations_failed",
				json_pack("{s:I}", "failed", (json_int_t)s.n_failed),
				"%zu of %zu invocations failed", s.n_failed, s.n_inv);
	if (strcmp(status, "complete") != 0) {
		/* Never a plausible figure from a run that did not finish. */
		json_object_set_new(fig, "withheld",
				    json_sprintf("the run is %s: the series hold what was "
						 "measured, no figure is derived from them",
						 status));
		rc = 0;
		goto out;
	}
	/* Sampler figures from the sample timestamps. */
	double achieved_hz = NAN, max_gap = NAN, gap50 = NAN, gap99 = NAN;
	const json_t *exact = ergon_jpath(r, "series.exact");
	if (json_is_object(exact)) {
		if ((rc =
			 ergon_jnumber(r, "series.exact.sampler.achieved_hz", &achieved_hz, err)) ||
		    (rc = ergon_jnumber(r, "series.exact.sampler.max_gap_s", &max_gap, err)) ||
		    (rc = ergon_jnumber(r, "series.exact.sampler.gap_p50_s", &gap50, err)) ||
		    (rc = ergon_jnumber(r, "series.exact.sampler.gap_p99_s", &gap99, err)))
			goto out;
	} else if (s.n >= 2) {
		double *gaps = malloc((s.n - 1) * sizeof(double));
		if (gaps == NULL) {
			rc = ergon_err_set(err, ERGON_ENOMEM, "out of memory");
			goto out;
		}
		for (size_t i = 1; i < s.n; i++)
			gaps[i - 1] = s.t[i] - s.t[i - 1];
		qsort(gaps, s.n - 1, sizeof(double), cmp_d);
		max_gap = gaps[s.n - 2];
		gap50 = ergon_percentile_nearest_rank(gaps, s.n - 1, 50);
		gap99 = ergon_percentile_nearest_rank(gaps, s.n - 1, 99);
		free(gaps);
		achieved_hz = (double)(s.n - 1) / (s.t[s.n - 1] - s.t[0]);
	}
	json_object_set_new(fig, "sampler",
			    json_pack("{s:I, s:o, s:o, s:o, s:o}", "samples", (json_int_t)s.n,
				      "achieved_hz", ergon_jnum(achieved_hz), "max_gap_s",
				      ergon_jnum(max_gap), "gap_p50_s", ergon_jnum(gap50),
				      "gap_p99_s", ergon_jnum(gap99)));
	double sample_hz = 0;
	if ((rc = ergon_jnumber(r, "sampler.target_hz", &sample_hz, err)))
		goto out;
	if (isfinite(max_gap) && sample_hz > 0 && max_gap > 10.0 / sample_hz)
		ergon_issue_add(issues, "run.sampler_gap",
				json_pack("{s:o, s:f}", "max_gap_s", ergon_jnum(max_gap),
					  "period_s", 1.0 / sample_hz),
				"largest gap between samples %.6f s is over 10 sample periods",
				max_gap);

	/* Energy of the idle baseline and of the load phase. */
	double it0, it1, lt0, lt1;
	if ((rc = ergon_jnumber(r, "series.phases.idle.t_start_s", &it0, err)) ||
	    (rc = ergon_jnumber(r, "series.phases.idle.t_end_s", &it1, err)) ||
	    (rc = ergon_jnumber(r, "series.phases.load.t_start_s", &lt0, err)) ||
	    (rc = ergon_jnumber(r, "series.phases.load.t_end_s", &lt1, err)))
		goto out;
	const json_t *um = json_object_get(r, "uncertainty_model");
	struct ergon_energy idle, load;
	const char *im = "trapezoid", *lm = "trapezoid";
	if (json_is_object(exact)) {
		if ((rc = exact_energy(r, "idle", &idle, err)) ||
		    (rc = exact_energy(r, "load", &load, err)))
			goto out;
		/* The decimated series must still agree with the exact
		 * integrals it summarises. */
		struct ergon_energy di, dl;
		const char *m;
		if ((rc = phase_energy(&s, it0, it1, um, "idle", &di, &m, err)) ||
		    (rc = phase_energy(&s, lt0, lt1, um, "load", &dl, &m, err)))
			goto out;
		/* Compared as mean power: the kept samples span slightly less
		 * of each phase than all of them did. A phase left with fewer
		 * than 2 kept samples cannot be checked this way. */
		double ei = fabs(di.mean_power_w - idle.mean_power_w);
		double el = fabs(dl.mean_power_w - load.mean_power_w);
		int bad_i =
		    di.n_samples >= 2 &&
		    !(ei <= ERGON_DECIMATION_TOL * fabs(idle.mean_power_w) + idle.mean_power_u_w);
		int bad_l =
		    dl.n_samples >= 2 &&
		    !(el <= ERGON_DECIMATION_TOL * fabs(load.mean_power_w) + load.mean_power_u_w);
		if (bad_i || bad_l) {
			rc = ergon_err_set(
			    err, ERGON_EVERIFY,
			    "field series.exact.%s: the decimated samples average "
			    "%.6g W, the exact integral says %.6g W (tolerance %.0f%% "
			    "+ uncertainty)",
			    bad_i ? "idle" : "load", bad_i ? di.mean_power_w : dl.mean_power_w,
			    bad_i ? idle.mean_power_w : load.mean_power_w,
			    ERGON_DECIMATION_TOL * 100);
			goto out;
		}
		ergon_issue_add(issues, "run.samples_decimated", NULL,
				"the embedded power series is decimated; energies come from the "
				"exact integrals in series.exact");
	} else {
		if ((rc = phase_energy(&s, it0, it1, um, "idle", &idle, &im, err)) ||
		    (rc = phase_energy(&s, lt0, lt1, um, "load", &load, &lm, err)))
			goto out;
	}
	json_object_set_new(fig, "idle", energy_json(&idle, im));
	json_object_set_new(fig, "load", energy_json(&load, lm));
	int energy_ok = 1;
	if (idle.n_samples < 2 || load.n_samples < 2) {
		energy_ok = 0;
		ergon_issue_add(issues, "run.too_few_samples",
				json_pack("{s:I, s:I}", "idle", (json_int_t)idle.n_samples, "load",
					  (json_int_t)load.n_samples),
				"%zu idle and %zu load samples; at least 2 per phase are needed to "
				"integrate (raise --sample-hz or lengthen the phases)",
				idle.n_samples, load.n_samples);
	} else if (!(load.mean_power_w > idle.mean_power_w)) {
		ergon_issue_add(issues, "run.power_below_idle",
				json_pack("{s:f, s:f}", "load_w", load.mean_power_w, "idle_w",
					  idle.mean_power_w),
				"mean load power %.4f W is not above the idle floor %.4f W",
				load.mean_power_w, idle.mean_power_w);
	}

	/* Latency of the invocations that succeeded. */
	double *lat_ok = malloc((n_ok ? n_ok : 1) * sizeof(double));
	double *end_ok = malloc((n_ok ? n_ok : 1) * sizeof(double));
	if (lat_ok == NULL || end_ok == NULL) {
		free(lat_ok);
		free(end_ok);
		rc = ergon_err_set(err, ERGON_ENOMEM, "out of memory");
		goto out;
	}
	size_t k = 0, fi = 0;
	/* failed_index is ascending (the session appends in order). */
	for (size_t i = 0; i < s.n_inv; i++) {
		if (fi < s.n_failed && (size_t)s.failed[fi] == i) {
			fi++;
			continue;
		}
		if (k < n_ok) {
			lat_ok[k] = s.inv_l[i];
			end_ok[k] = s.inv_t[i] + s.inv_l[i];
			k++;
		}
	}
	if (fi != s.n_failed || k != n_ok) {
		free(lat_ok);
		free(end_ok);
		rc = ergon_err_set(err, ERGON_EVERIFY,
				   "field series.invocations.failed_index: not strictly ascending");
		goto out;
	}
	struct ergon_latency lat;
	rc = ergon_latency_stats(lat_ok, n_ok, &lat, err);
	free(lat_ok);
	if (rc) {
		free(end_ok);
		goto out;
	}
	json_object_set_new(fig, "latency",
			    json_pack("{s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:s}", "count",
				      (json_int_t)lat.count, "min_s", ergon_jnum(lat.min_s),
				      "mean_s", ergon_jnum(lat.mean_s), "max_s",
				      ergon_jnum(lat.max_s), "p50_s", ergon_jnum(lat.p50_s),
				      "p90_s", ergon_jnum(lat.p90_s), "p95_s",
				      ergon_jnum(lat.p95_s), "p99_s", ergon_jnum(lat.p99_s),
				      "method", "nearest rank over every successful invocation"));
	if (n_ok == 0)
		ergon_issue_add(issues, "run.no_operations", NULL,
				"no invocation succeeded in the load phase");

	/* Throughput per window and the throttle rule. */
	double thr = 0, consec_d = 0;
	if ((rc = ergon_jnumber(r, "plan.throttle_threshold", &thr, err)) ||
	    (rc = ergon_jnumber(r, "plan.throttle_windows", &consec_d, err))) {
		free(end_ok);
		goto out;
	}
	size_t nw = s.n_edges > 0 ? s.n_edges - 1 : 0;
	json_t *tp = json_object();
	json_object_set_new(fig, "throughput", tp);
	struct ergon_throttle th = {.onset_window = -1};
	if (nw > 0) {
		size_t *ops = calloc(nw, sizeof(size_t));
		double *ops_s = calloc(nw, sizeof(double));
		if (ops == NULL || ops_s == NULL) {
			free(ops);
			free(ops_s);
			free(end_ok);
			rc = ergon_err_set(err, ERGON_ENOMEM, "out of memory");
			goto out;
		}
		struct ergon_err e2 = {0};
		rc = ergon_throughput_windows(end_ok, n_ok, s.edges, nw, ops, ops_s, &e2);
		if (rc == 0)
			rc = ergon_throttle_onset(ops_s, nw, thr, (size_t)consec_d, &th, &e2);
		if (rc) {
			free(ops);
			free(ops_s);
			free(end_ok);
			rc = ergon_err_set(err, ERGON_EVERIFY, "field series.window_edges_s: %s",
					   e2.msg);
			goto out;
		}
		json_t *wins = json_array();
		for (size_t w = 0; w < nw; w++)
			json_array_append_new(
			    wins, json_pack("{s:f, s:f, s:I, s:f}", "t_start_s", s.edges[w] - lt0,
					    "duration_s", s.edges[w + 1] - s.edges[w], "operations",
					    (json_int_t)ops[w], "ops_per_s", ops_s[w]));
		json_object_set_new(tp, "windows", wins);
		free(ops);
		free(ops_s);
	}
	free(end_ok);
	json_object_set_new(tp, "first_ops_per_s", ergon_jnum(th.first_ops_per_s));
	json_object_set_new(tp, "tail_ops_per_s", ergon_jnum(th.tail_ops_per_s));
	json_object_set_new(tp, "change_pct", ergon_jnum(th.change_pct));
	json_object_set_new(tp, "throttled", json_boolean(th.throttled));
	json_object_set_new(tp, "onset_window",
			    th.throttled ? json_integer(th.onset_window) : json_null());
	double onset_t = th.throttled ? s.edges[th.onset_window] - lt0 : NAN;
	json_object_set_new(tp, "onset_t_s", ergon_jnum(onset_t));
	json_object_set_new(tp, "rule",
			    json_sprintf("onset = first window below (1 - %g) x first-window "
					 "throughput that stays below for %zu consecutive windows, "
					 "the onset window counted among them",
					 thr, (size_t)consec_d));
	json_t *evidence = json_null();
	char verdict[512];
	if (th.throttled) {
		int n =
		    snprintf(verdict, sizeof(verdict),
			     "throughput regressed: from window %ld (t=%.1f s) on, below %.0f%% "
			     "of the first window for %zu consecutive windows",
			     th.onset_window, onset_t, 100.0 * (1.0 - thr), (size_t)consec_d);
		double tf = mean_temp(&s, s.edges[0], s.edges[1]);
		double tl = mean_temp(&s, s.edges[nw - 1], s.edges[nw]);
		if (isfinite(tf) && isfinite(tl) && n > 0 && (size_t)n < sizeof(verdict)) {
			snprintf(
			    verdict + n, sizeof(verdict) - (size_t)n,
			    "; temperature %.1f -> %.1f C (first -> last window) is evidence of "
			    "a thermal limit",
			    tf, tl);
			json_decref(evidence);
			evidence =
			    json_pack("{s:f, s:f}", "first_window_c", tf, "last_window_c", tl);
		}
		ergon_issue_add(issues, "run.throttled",
				json_pack("{s:I, s:f}", "onset_window", (json_int_t)th.onset_window,
					  "onset_t_s", onset_t),
				"%s", verdict);
	} else {
		snprintf(verdict, sizeof(verdict),
			 "stable: no window stayed below %.0f%% of the first window for %zu "
			 "consecutive windows",
			 100.0 * (1.0 - thr), (size_t)consec_d);
	}
	json_object_set_new(tp, "verdict", json_string(verdict));
	json_object_set_new(tp, "temperature_evidence", evidence);

	/* Energy per operation. */
	double release_hz = 0;
	const json_t *rh = ergon_jpath(r, "mode.release_hz");
	if (json_is_number(rh))
		release_hz = json_number_value(rh);
	const char *mode = json_string_value(ergon_jpath(r, "mode.kind"));
	double lq = 0;
	if ((rc = ergon_jnumber(r, "uncertainty_model.latency_quantum_s", &lq, err)))
		goto out;
	json_t *eop_j = json_null();
	if (energy_ok && n_ok > 0 && lt1 > lt0) {
		struct ergon_eop_input in = {
		    .periodic = mode && strcmp(mode, "periodic") == 0,
		    .release_hz = release_hz,
		    .achieved_ops_per_s = (double)n_ok / (lt1 - lt0),
		    .latency_mean_s = lat.mean_s,
		    .latency_quantum_s = lq,
		    .load_power_w = load.mean_power_w,
		    .load_power_u_w = load.mean_power_u_w,
		    .idle_power_w = idle.mean_power_w,
		    .idle_power_u_w = idle.mean_power_u_w,
		};
		struct ergon_eop eop;
		struct ergon_err e2 = {0};
		if (ergon_energy_per_op(&in, &eop, &e2) == 0) {
			json_decref(eop_j);
			eop_j = json_pack(
			    "{s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o}", "formula",
			    eop.formula == ERGON_EOP_PERIODIC ? "periodic" : "saturated", "reason",
			    eop.reason, "duty_cycle", ergon_jnum(eop.duty_cycle),
			    "achieved_ops_per_s", ergon_jnum(in.achieved_ops_per_s), "above_idle_j",
			    ergon_jnum(eop.above_idle_j), "above_idle_u_j",
			    ergon_jnum(eop.above_idle_u_j), "total_j", ergon_jnum(eop.total_j),
			    "total_u_j", ergon_jnum(eop.total_u_j));
		}
	}
	json_object_set_new(fig, "energy_per_op", eop_j);
	rc = 0;
out:
	series_free(&s);
	if (rc) {
		json_decref(fig);
		json_decref(issues);
		return rc;
	}
	*figures_out = fig;
	*issues_out = issues;
	return 0;
}
