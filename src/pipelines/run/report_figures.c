/* Figures from a report's embedded series. The run pipeline calls this to
 * fill "figures" and `ergon verify` calls it again on the file: one code
 * path, so a report verifies exactly when its figures follow from its series
 * (docs/METHOD.md, docs/THREAT_MODEL.md). */
#include "ergon/figures.h"
#include "ergon/issues.h"
#include "ergon/jcs.h"
#include "ergon/report.h"
#include "ergon/select.h"
#include "ergon/stats.h"
#include "pipelines/common/common.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An array of numbers at a path: the doubles the streaming reader packed
 * (taken, not copied: each series is read once; a spilled one is read
 * again from the file), or from the JSON. */
static int get_array(const json_t *r, struct ergon_jcs_stream_result *pk, const char *path,
		     double **out, size_t *n, struct ergon_err *err)
{
	struct ergon_jcs_packed *p = pk ? ergon_jcs_packed_find(pk, ergon_jpath(r, path)) : NULL;
	if (p == NULL || p->taken)
		return ergon_jarray(r, path, out, n, err);
	if (p->bad)
		return ergon_err_set(err, ERGON_EVERIFY, "field %s[%zu]: not a number", path,
				     p->bad_index);
	if (p->spilled) {
		double *d = malloc((p->n ? p->n : 1) * sizeof(double));
		if (d == NULL)
			return ergon_err_set(err, ERGON_ENOMEM,
					     "field %s: out of memory for %zu values", path, p->n);
		struct ergon_jcs_cursor *c = NULL;
		int rc = ergon_jcs_cursor_open(pk, p, &c, err);
		for (size_t i = 0; rc == 0 && i < p->n; i++)
			rc = ergon_jcs_cursor_next(c, &d[i], err) == 1 ? 0 : ERGON_EIO;
		ergon_jcs_cursor_free(c);
		if (rc) {
			free(d);
			return rc;
		}
		*out = d;
		*n = p->n;
		return 0;
	}
	*out = p->v ? p->v : malloc(sizeof(double));
	if (*out == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "field %s: out of memory", path);
	*n = p->n;
	p->taken = 1;
	return 0;
}

/* The bound of one reading (docs/METHOD.md, "Uncertainty"): rated
 * accuracy x |p| + resolution + the absolute floor; the ± of a peak. */
static double reading_u_w(const json_t *um, double p)
{
	const json_t *a = json_object_get(um, "accuracy_pct");
	const json_t *r = json_object_get(um, "resolution_w");
	const json_t *f = json_object_get(um, "floor_w");
	if (!isfinite(p) || !json_is_number(a) || !json_is_number(r))
		return NAN;
	return json_number_value(a) / 100.0 * fabs(p) + json_number_value(r) +
	       (json_is_number(f) ? json_number_value(f) : 0.0);
}

/* What the report says about the run that every series shares. */
struct shared {
	int stats; /* the report carries a "statistics" block (docs/REPORT_FORMAT.md) */
	double sample_hz;
	double it0, it1, lt0, lt1;
	const json_t *um;
	/* uncertainty_model.budget: present in reports written since the
	 * budgets (docs/UNCERTAINTY.md); without it the figures are exactly
	 * those of the reports before them. */
	int have_budget;
	struct ergon_run_um rum;
	double max_pct; /* plan.max_uncertainty_pct; NaN: no gate */
};

static int is_accum(const char *method)
{
	return method != NULL && strcmp(method, "accumulator_delta") == 0;
}

static json_t *energy_json(const struct ergon_energy *e, const char *method,
			   const struct shared *sh)
{
	json_t *o =
	    json_pack("{s:o, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:s}", "duration_s",
		      ergon_jnum(e->span_s), "samples", (json_int_t)e->n_samples, "energy_j",
		      ergon_jnum(e->energy_j), "energy_u_j", ergon_jnum(e->u_j), "energy_u_rated_j",
		      ergon_jnum(e->u_rated_j), "energy_u_timing_j", ergon_jnum(e->u_timing_j),
		      "mean_power_w", ergon_jnum(e->mean_power_w), "mean_power_u_w",
		      ergon_jnum(e->mean_power_u_w), "peak_power_w", ergon_jnum(e->peak_power_w),
		      "energy_method", method);
	if (o == NULL || !sh->have_budget || e->n_samples < 2)
		return o;
	/* The budgets, and what they were made from (so that a decimated
	 * report's exact block can make them again). */
	struct ergon_budget b;
	json_object_set_new(o, "abs_energy_j", ergon_jnum(e->abs_energy_j));
	json_object_set_new(o, "timestamp_sensitivity",
			    json_pack("{s:o, s:o, s:o}", "first_w", ergon_jnum(e->sens_first_w),
				      "last_w", ergon_jnum(e->sens_last_w), "interior_sq_w2",
				      ergon_jnum(e->sens_int2_w2)));
	ergon_budget_phase_energy(e, is_accum(method), &sh->rum, &b);
	json_object_set_new(o, "energy_budget", ergon_budget_json(&b));
	ergon_budget_phase_power(e, is_accum(method), &sh->rum, &b);
	json_object_set_new(o, "mean_power_budget", ergon_budget_json(&b));
	return o;
}

struct series {
	double *t, *p, *temp, *e;
	size_t n, n_temp, n_e;
	double *inv_t, *inv_l, *failed, *edges;
	size_t n_inv, n_failed, n_edges;
	/* Invocation columns too long to hold (spilled by the streaming
	 * reader): re-read from the file, in order, whenever needed. NULL
	 * for a column held in inv_t / inv_l / failed. */
	struct ergon_jcs_stream_result *pk;
	const struct ergon_jcs_packed *sp_t, *sp_l, *sp_f;
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

/* Energy of one phase from the samples inside [t0, t1]. `prefix` names
 * where the samples live ("series" or "series.rails[i]") for messages. */
static int phase_energy(const struct series *s, const char *prefix, double t0, double t1,
			const json_t *um, const char *name, struct ergon_energy *out,
			const char **method, struct ergon_err *err)
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
				     "field %s.samples (%s phase, from sample %zu): %s", prefix,
				     name, a, e2.msg);
	/* The documented absolute floor (optional field: reports written
	 * before it existed have none) bounds the energy whatever its
	 * method. */
	double floor_w = 0;
	const json_t *fw = json_object_get(um, "floor_w");
	if (json_is_number(fw))
		floor_w = json_number_value(fw);
	if (floor_w > 0 && out->span_s > 0) {
		out->u_rated_j += floor_w * out->span_s;
		out->u_j += floor_w * out->span_s;
		out->mean_power_u_w = out->u_j / out->span_s;
	}
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

/* The power columns under prefix.samples into s (t, p, temp, e). */
static int load_samples(const json_t *r, struct ergon_jcs_stream_result *pk, const char *prefix,
			struct series *s, struct ergon_err *err)
{
	char path[128];
	int rc;
	size_t n_p;
	snprintf(path, sizeof(path), "%s.samples.t_s", prefix);
	if ((rc = get_array(r, pk, path, &s->t, &s->n, err)))
		return rc;
	snprintf(path, sizeof(path), "%s.samples.power_w", prefix);
	if ((rc = get_array(r, pk, path, &s->p, &n_p, err)))
		return rc;
	snprintf(path, sizeof(path), "%s.samples.temp_c", prefix);
	if (json_is_array(ergon_jpath(r, path)) &&
	    (rc = get_array(r, pk, path, &s->temp, &s->n_temp, err)))
		return rc;
	snprintf(path, sizeof(path), "%s.samples.energy_j", prefix);
	if (json_is_array(ergon_jpath(r, path)) &&
	    (rc = get_array(r, pk, path, &s->e, &s->n_e, err)))
		return rc;
	if (n_p != s->n || (s->temp && s->n_temp != s->n) || (s->e && s->n_e != s->n))
		return ergon_err_set(err, ERGON_EVERIFY,
				     "field %s.samples: the columns differ in length", prefix);
	return 0;
}

/* A spilled invocation column at path, or NULL (then it is loaded). */
static const struct ergon_jcs_packed *
spilled_at(const json_t *r, struct ergon_jcs_stream_result *pk, const char *path)
{
	const struct ergon_jcs_packed *p =
	    pk ? ergon_jcs_packed_find(pk, ergon_jpath(r, path)) : NULL;
	return p && p->spilled && !p->bad ? p : NULL;
}

static int load_invocations(const json_t *r, struct ergon_jcs_stream_result *pk, struct series *s,
			    struct ergon_err *err)
{
	int rc;
	size_t n_l;
	s->pk = pk;
	s->sp_t = spilled_at(r, pk, "series.invocations.t_start_s");
	s->sp_l = spilled_at(r, pk, "series.invocations.latency_s");
	s->sp_f = spilled_at(r, pk, "series.invocations.failed_index");
	if (s->sp_t)
		s->n_inv = s->sp_t->n;
	else if ((rc = get_array(r, pk, "series.invocations.t_start_s", &s->inv_t, &s->n_inv, err)))
		return rc;
	if (s->sp_l)
		n_l = s->sp_l->n;
	else if ((rc = get_array(r, pk, "series.invocations.latency_s", &s->inv_l, &n_l, err)))
		return rc;
	if (n_l != s->n_inv)
		return ergon_err_set(
		    err, ERGON_EVERIFY,
		    "field series.invocations.latency_s: %zu values for %zu starts", n_l, s->n_inv);
	if (s->sp_f)
		s->n_failed = s->sp_f->n;
	else if ((rc = get_array(r, pk, "series.invocations.failed_index", &s->failed, &s->n_failed,
				 err)))
		return rc;
	if ((rc = get_array(r, pk, "series.window_edges_s", &s->edges, &s->n_edges, err)))
		return rc;
	struct ergon_jcs_cursor *c = NULL;
	if (s->sp_f && (rc = ergon_jcs_cursor_open(pk, s->sp_f, &c, err)))
		return rc;
	for (size_t i = 0; i < s->n_failed; i++) {
		double f = 0;
		if (c) {
			if (ergon_jcs_cursor_next(c, &f, err) != 1) {
				ergon_jcs_cursor_free(c);
				return ERGON_EIO;
			}
		} else {
			f = s->failed[i];
		}
		if (!(f >= 0 && f < (double)s->n_inv && f == floor(f))) {
			ergon_jcs_cursor_free(c);
			return ergon_err_set(err, ERGON_EVERIFY,
					     "field series.invocations.failed_index[%zu]: not an "
					     "invocation index",
					     i);
		}
	}
	ergon_jcs_cursor_free(c);
	return 0;
}

static int cmp_d(const void *a, const void *b);

/* The successful invocations in order, from the arrays or from cursors
 * over the spilled columns. failed_index is ascending (the session
 * appends in order); anything else ends as "not strictly ascending". */
struct inv_iter {
	const struct series *s;
	int need_end; /* 0: end times not wanted (t_start_s not read) */
	size_t n_ok, i, fi, k;
	struct ergon_jcs_cursor *ct, *cl, *cf;
	double next_failed;
	int have_failed;
};

static void inv_close(struct inv_iter *it)
{
	ergon_jcs_cursor_free(it->ct);
	ergon_jcs_cursor_free(it->cl);
	ergon_jcs_cursor_free(it->cf);
	memset(it, 0, sizeof(*it));
}

static int inv_open(struct inv_iter *it, const struct series *s, size_t n_ok, int need_end,
		    struct ergon_err *err)
{
	*it = (struct inv_iter){.s = s, .n_ok = n_ok, .need_end = need_end};
	int rc = 0;
	if (s->sp_t && need_end)
		rc = ergon_jcs_cursor_open(s->pk, s->sp_t, &it->ct, err);
	if (rc == 0 && s->sp_l)
		rc = ergon_jcs_cursor_open(s->pk, s->sp_l, &it->cl, err);
	if (rc == 0 && s->sp_f)
		rc = ergon_jcs_cursor_open(s->pk, s->sp_f, &it->cf, err);
	if (rc)
		inv_close(it);
	return rc;
}

static int col_next(struct ergon_jcs_cursor *c, const double *v, size_t i, double *out,
		    struct ergon_err *err)
{
	if (c == NULL) {
		*out = v[i];
		return 0;
	}
	return ergon_jcs_cursor_next(c, out, err) == 1 ? 0 : ERGON_EIO;
}

/* 1 with the next successful invocation's latency and end, 0 at the end
 * (after checking failed_index was used up), or a negative code. */
static int inv_next(struct inv_iter *it, double *lat, double *end, struct ergon_err *err)
{
	const struct series *s = it->s;
	while (it->i < s->n_inv) {
		size_t i = it->i++;
		double t = 0, l;
		int rc;
		if ((it->need_end && (rc = col_next(it->ct, s->inv_t, i, &t, err))) ||
		    (rc = col_next(it->cl, s->inv_l, i, &l, err)))
			return rc;
		if (!it->have_failed && it->fi < s->n_failed) {
			if ((rc = col_next(it->cf, s->failed, it->fi, &it->next_failed, err)))
				return rc;
			it->have_failed = 1;
		}
		if (it->have_failed && (size_t)it->next_failed == i) {
			it->have_failed = 0;
			it->fi++;
			continue;
		}
		if (it->k < it->n_ok) {
			it->k++;
			*lat = l;
			*end = t + l;
			return 1;
		}
	}
	if (it->fi != s->n_failed || it->k != it->n_ok)
		return ergon_err_set(
		    err, ERGON_EVERIFY,
		    "field series.invocations.failed_index: not strictly ascending");
	return 0;
}

/* Operations per window from a batch of end times, added to ops (the
 * engine's own count, run on batches; a bad edge list is reported later,
 * where the in-memory path reports it). */
#define END_BATCH 4096
static void count_batch(const double *end, size_t m, const double *edges, size_t nw, size_t *ops,
			size_t *tmp, double *tmp_s)
{
	struct ergon_err e2 = {0};
	if (nw == 0 || m == 0 || ergon_throughput_windows(end, m, edges, nw, tmp, tmp_s, &e2) != 0)
		return;
	for (size_t w = 0; w < nw; w++)
		ops[w] += tmp[w];
}

/* Latency statistics and per-window operation counts of the successful
 * invocations in bounded memory, identical to ergon_latency_stats and
 * ergon_throughput_windows on the whole arrays: the sum runs in the same
 * order; each nearest-rank percentile is found exactly by radix selection
 * on the doubles' bits (non-negative doubles order as their bits): a pass
 * counts 16 bits at a time among the values that share the bits found so
 * far, until the bucket is small enough to collect and sort. */
#define RADIX_COLLECT ((size_t)1 << 18)
static int latency_streamed(const struct series *s, size_t n_ok, const double *edges, size_t nw,
			    struct ergon_latency *out, size_t *ops, const double *edges2,
			    size_t *ops2, struct ergon_err *err)
{
	/* The ranks wanted: p50, p90, p95, p99, the quartiles (Tukey's
	 * fences) and the ends of the median's interval. */
	enum { NT = 8 };
	static const double pct[6] = {50, 90, 95, 99, 25, 75};
	struct target {
		uint64_t prefix, rank;
		int bits, collect, done;
		double value;
		size_t nc, cap;
		double *c;
		uint64_t *hist;
	} tg[NT];
	memset(tg, 0, sizeof(tg));
	*out = (struct ergon_latency){.count = n_ok};
	size_t kci = 1;
	double cov = NAN;
	if (n_ok > 0)
		ergon_median_ci_ranks(n_ok, &kci, &cov);
	double *endb = malloc(END_BATCH * sizeof(double));
	size_t *tmp = calloc(nw ? nw : 1, sizeof(size_t));
	double *tmp_s = calloc(nw ? nw : 1, sizeof(double));
	/* Columns held in memory (at most ERGON_JCS_SPILL_MIN values): one
	 * pass copies the latencies and selection finds each rank (one pass
	 * over a shrinking part per percentile); spilled ones keep the radix
	 * passes over the file. */
	int held = s->sp_t == NULL && s->sp_l == NULL && s->sp_f == NULL;
	double *all = held ? malloc((n_ok ? n_ok : 1) * sizeof(double)) : NULL;
	int rc = 0;
	for (int t = 0; t < NT; t++) {
		tg[t].rank = t < 6    ? ergon_percentile_rank(n_ok, pct[t])
			     : t == 6 ? kci
				      : n_ok - kci + 1;
		tg[t].hist = held ? NULL : calloc(65536, sizeof(uint64_t));
		tg[t].done = n_ok == 0;
		if (tg[t].hist == NULL && !held)
			rc = ERGON_ENOMEM;
	}
	if (endb == NULL || tmp == NULL || tmp_s == NULL || rc || (held && all == NULL)) {
		rc = ergon_err_set(err, ERGON_ENOMEM, "latency: out of memory");
		goto out;
	}
	double sum = 0, mn = INFINITY, mx = -INFINITY;
	for (int pass = 0; rc == 0; pass++) {
		int left = 0;
		for (int t = 0; t < NT; t++)
			left |= !tg[t].done;
		if (pass > 0 && !left)
			break;
		struct inv_iter it;
		/* The end times are needed only for the window counts. */
		if ((rc = inv_open(&it, s, n_ok, pass == 0, err)))
			goto out;
		size_t nb = 0, k = 0;
		double l, e;
		int got;
		while ((got = inv_next(&it, &l, &e, err)) == 1) {
			if (pass == 0) {
				if (!isfinite(l) || l < 0) {
					inv_close(&it);
					rc = ergon_err_set(err, ERGON_EPARSE,
							   "invocation %zu: latency %g s is not a "
							   "finite non-negative number",
							   k, l);
					goto out;
				}
				sum += l;
				if (l < mn)
					mn = l;
				if (l > mx)
					mx = l;
				endb[nb++] = e;
				if (nb == END_BATCH) {
					count_batch(endb, nb, edges, nw, ops, tmp, tmp_s);
					if (ops2)
						count_batch(endb, nb, edges2, nw, ops2, tmp, tmp_s);
					nb = 0;
				}
			}
			if (held) {
				all[k++] = l;
				continue;
			}
			k++;
			double lz = l == 0 ? 0.0 : l; /* -0 orders as +0 */
			uint64_t key;
			memcpy(&key, &lz, sizeof(key));
			for (int t = 0; t < NT; t++) {
				struct target *g = &tg[t];
				if (g->done || (g->bits && key >> (64 - g->bits) != g->prefix))
					continue;
				if (g->collect) {
					if (g->nc < g->cap)
						g->c[g->nc] = l;
					g->nc++; /* more than counted: the file changed */
				} else
					g->hist[(key >> (48 - g->bits)) & 0xFFFF]++;
			}
		}
		inv_close(&it);
		if (got < 0) {
			rc = got;
			goto out;
		}
		if (pass == 0) {
			count_batch(endb, nb, edges, nw, ops, tmp, tmp_s);
			if (ops2)
				count_batch(endb, nb, edges2, nw, ops2, tmp, tmp_s);
		}
		if (held && n_ok > 0) {
			if (k != n_ok) {
				rc = ergon_err_set(err, ERGON_EIO,
						   "series.invocations.latency_s changed while it "
						   "was read");
				goto out;
			}
			/* Highest rank first: each later one lies in the part
			 * below the one before. */
			int order[NT];
			for (int t = 0; t < NT; t++)
				order[t] = t;
			for (int a = 1; a < NT; a++)
				for (int b = a; b > 0 && tg[order[b]].rank > tg[order[b - 1]].rank;
				     b--) {
					int x = order[b];
					order[b] = order[b - 1];
					order[b - 1] = x;
				}
			size_t part = n_ok;
			for (int o = 0; o < NT; o++) {
				struct target *g = &tg[order[o]];
				g->value = ergon_select_kth(all, part, (size_t)g->rank);
				g->done = 1;
				part = (size_t)g->rank;
			}
		}
		for (int t = 0; t < NT && rc == 0; t++) {
			struct target *g = &tg[t];
			if (g->done)
				continue;
			if (g->collect) {
				if (g->nc != g->cap || g->rank > g->nc) {
					rc = ergon_err_set(
					    err, ERGON_EIO,
					    "series.invocations.latency_s changed while "
					    "it was read");
					break;
				}
				qsort(g->c, g->nc, sizeof(double), cmp_d);
				g->value = g->c[g->rank - 1];
				g->done = 1;
				continue;
			}
			uint64_t cum = 0;
			size_t b = 0;
			while (b < 65535 && cum + g->hist[b] < g->rank)
				cum += g->hist[b++];
			if (cum + g->hist[b] < g->rank) {
				rc = ergon_err_set(
				    err, ERGON_EIO,
				    "series.invocations.latency_s changed while it was "
				    "read");
				break;
			}
			uint64_t in_bucket = g->hist[b];
			g->rank -= cum;
			g->prefix = g->prefix << 16 | b;
			g->bits += 16;
			memset(g->hist, 0, 65536 * sizeof(uint64_t));
			if (g->bits == 64 || in_bucket == 1) {
				if (g->bits == 64) {
					memcpy(&g->value, &g->prefix, sizeof(g->value));
					g->done = 1;
				} else {
					/* One value has these bits: collect it. */
					g->collect = 1;
				}
			} else if (in_bucket <= RADIX_COLLECT) {
				g->collect = 1;
			}
			if (g->collect) {
				g->cap = (size_t)in_bucket;
				g->c = malloc(g->cap * sizeof(double));
				if (g->c == NULL)
					rc = ergon_err_set(err, ERGON_ENOMEM,
							   "latency: out of memory");
			}
		}
	}
	if (n_ok == 0) {
		out->min_s = out->mean_s = out->max_s = NAN;
		out->p50_s = out->p90_s = out->p95_s = out->p99_s = NAN;
		out->median_lo_s = out->median_hi_s = out->median_coverage = NAN;
		out->q1_s = out->q3_s = out->lo_fence_s = out->hi_fence_s = NAN;
	} else {
		out->min_s = mn;
		out->max_s = mx;
		out->mean_s = sum / (double)n_ok;
		out->p50_s = tg[0].value;
		out->p90_s = tg[1].value;
		out->p95_s = tg[2].value;
		out->p99_s = tg[3].value;
		out->q1_s = tg[4].value;
		out->q3_s = tg[5].value;
		out->median_lo_s = tg[6].value;
		out->median_hi_s = tg[7].value;
		out->median_coverage = cov;
		out->lo_fence_s = out->q1_s - ERGON_TUKEY_K * (out->q3_s - out->q1_s);
		out->hi_fence_s = out->q3_s + ERGON_TUKEY_K * (out->q3_s - out->q1_s);
		/* The values outside the fences: one more pass (over the held
		 * copy, or the file). */
		if (held) {
			for (size_t i = 0; i < n_ok; i++) {
				out->outliers_low += all[i] < out->lo_fence_s;
				out->outliers_high += all[i] > out->hi_fence_s;
			}
		} else {
			struct inv_iter it;
			if ((rc = inv_open(&it, s, n_ok, 0, err)))
				goto out;
			double l, e;
			int got;
			while ((got = inv_next(&it, &l, &e, err)) == 1) {
				out->outliers_low += l < out->lo_fence_s;
				out->outliers_high += l > out->hi_fence_s;
			}
			inv_close(&it);
			if (got < 0)
				rc = got;
		}
	}
out:
	for (int t = 0; t < NT; t++) {
		free(tg[t].hist);
		free(tg[t].c);
	}
	free(all);
	free(endb);
	free(tmp);
	free(tmp_s);
	return rc;
}

/* The latency distribution (reports with a "statistics" block): the
 * median's distribution-free interval, Tukey's fences and the outliers
 * outside them, and whether the mean can be trusted beside the median
 * (docs/METHOD.md, "Latency"). */
static void latency_distribution(json_t *latj, const struct ergon_latency *lat, json_t *issues)
{
	json_object_set_new(latj, "median_ci",
			    json_pack("{s:o, s:o, s:o}", "lo_s", ergon_jnum(lat->median_lo_s),
				      "hi_s", ergon_jnum(lat->median_hi_s), "coverage",
				      ergon_jnum(lat->median_coverage)));
	json_object_set_new(
	    latj, "outliers",
	    json_pack("{s:s, s:o, s:o, s:o, s:o, s:I, s:I}", "rule",
		      "Tukey's fences: below q1 - 1.5 IQR or above q3 + 1.5 IQR (nearest-rank "
		      "quartiles)",
		      "q1_s", ergon_jnum(lat->q1_s), "q3_s", ergon_jnum(lat->q3_s), "low_fence_s",
		      ergon_jnum(lat->lo_fence_s), "high_fence_s", ergon_jnum(lat->hi_fence_s),
		      "low", (json_int_t)lat->outliers_low, "high",
		      (json_int_t)lat->outliers_high));
	int above = lat->mean_s > lat->median_hi_s, below = lat->mean_s < lat->median_lo_s;
	if (!above && !below) {
		json_object_set_new(latj, "mean_vs_median",
				    json_sprintf("agree: the mean lies within the median's %.2f %% "
						 "interval; either describes the distribution",
						 100.0 * lat->median_coverage));
		return;
	}
	json_t *msg = json_sprintf(
	    "disagree: the mean %.6g s lies %s the median's %.2f %% interval [%.6g, %.6g] s; "
	    "%zu of %zu latencies are above Tukey's upper fence (%.6g s) and %zu below the "
	    "lower one (%.6g s): the %s pull the mean, so the median (p50) is the figure to "
	    "trust for this distribution",
	    lat->mean_s, above ? "above" : "below", 100.0 * lat->median_coverage, lat->median_lo_s,
	    lat->median_hi_s, lat->outliers_high, lat->count, lat->hi_fence_s, lat->outliers_low,
	    lat->lo_fence_s, above ? "slow outliers (preemption, stalls)" : "fast outliers");
	json_object_set_new(latj, "mean_vs_median", msg);
	ergon_issue_add(issues, "run.latency_skewed",
			json_pack("{s:f, s:f, s:f, s:I, s:I}", "mean_s", lat->mean_s, "median_lo_s",
				  lat->median_lo_s, "median_hi_s", lat->median_hi_s,
				  "outliers_high", (json_int_t)lat->outliers_high, "outliers_low",
				  (json_int_t)lat->outliers_low),
			"latency: the mean %.6g s lies %s the median's interval [%.6g, %.6g] s "
			"(%zu outliers above, %zu below Tukey's fences): trust the median",
			lat->mean_s, above ? "above" : "below", lat->median_lo_s, lat->median_hi_s,
			lat->outliers_high, lat->outliers_low);
}

/* The device's throttle record from instrument_stats.evidence (NVML:
 * polls that saw a power cap, thermal or hardware slowdown); JSON null
 * when the instrument keeps none or saw none. */
static json_t *device_evidence(const json_t *r)
{
	const json_t *ev = ergon_jpath(r, "instrument_stats.evidence");
	if (!json_is_object(ev))
		return json_null();
	json_int_t polls = json_integer_value(json_object_get(ev, "polls"));
	json_int_t th = json_integer_value(json_object_get(ev, "polls_thermal"));
	json_int_t pc = json_integer_value(json_object_get(ev, "polls_power_cap"));
	json_int_t hw = json_integer_value(json_object_get(ev, "polls_hw_slowdown"));
	if (th <= 0 && pc <= 0 && hw <= 0)
		return json_null();
	return json_pack("{s:I, s:I, s:I, s:I, s:I}", "polls", polls, "polls_thermal", th,
			 "polls_power_cap", pc, "polls_hw_slowdown", hw, "reasons_seen",
			 json_integer_value(json_object_get(ev, "reasons_seen")));
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
static int exact_energy(const json_t *r, const char *prefix, const char *phase, int budget,
			struct ergon_energy *e, const char **method, struct ergon_err *err)
{
	char path[160];
	const char *f[] = {"duration_s",	"energy_j",	"energy_u_rated_j",
			   "energy_u_timing_j", "peak_power_w", "samples"};
	double v[6];
	for (int i = 0; i < 6; i++) {
		snprintf(path, sizeof(path), "%s.exact.%s.%s", prefix, phase, f[i]);
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
	if (!budget || e->n_samples < 2)
		return 0;
	/* What the budgets are made from (written with them). */
	const char *g[] = {"abs_energy_j", "timestamp_sensitivity.first_w",
			   "timestamp_sensitivity.last_w", "timestamp_sensitivity.interior_sq_w2"};
	double *d[] = {&e->abs_energy_j, &e->sens_first_w, &e->sens_last_w, &e->sens_int2_w2};
	for (int i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "%s.exact.%s.%s", prefix, phase, g[i]);
		int rc = ergon_jnumber(r, path, d[i], err);
		if (rc)
			return rc;
	}
	snprintf(path, sizeof(path), "%s.exact.%s.energy_method", prefix, phase);
	const char *m = json_string_value(ergon_jpath(r, path));
	if (m == NULL || (strcmp(m, "trapezoid") != 0 && strcmp(m, "accumulator_delta") != 0))
		return ergon_err_set(err, ERGON_EVERIFY,
				     "field %s: trapezoid or accumulator_delta expected", path);
	*method = strcmp(m, "trapezoid") == 0 ? "trapezoid" : "accumulator_delta";
	return 0;
}

/* The power figures of one series: the whole single-rail report, or one
 * rail of a multi-rail report. */
struct power {
	struct series s; /* the samples (t, p, temp, e) */
	json_t *sampler; /* owned */
	struct ergon_energy idle, load;
	const char *im, *lm;
	int energy_ok;
};

/* The load phase's figures; with the statistics block, the ± of its
 * peak (one reading's bound). */
static json_t *load_json(const struct power *pw, const struct shared *sh)
{
	json_t *o = energy_json(&pw->load, pw->lm, sh);
	if (o && sh->stats)
		json_object_set_new(o, "peak_power_u_w",
				    ergon_jnum(reading_u_w(sh->um, pw->load.peak_power_w)));
	return o;
}

/* An issue context with the rail named (multi-rail reports); ctx may be
 * NULL. */
static json_t *with_rail(json_t *ctx, const char *rail)
{
	if (rail == NULL)
		return ctx;
	if (ctx == NULL)
		ctx = json_object();
	json_object_set_new(ctx, "rail", json_string(rail));
	return ctx;
}

static int power_block(const json_t *r, struct ergon_jcs_stream_result *pk, const char *prefix,
		       const char *rail, const struct shared *sh, json_t *issues, struct power *pw,
		       struct ergon_err *err)
{
	char rp[96] = "", path[160];
	if (rail)
		snprintf(rp, sizeof(rp), "rail %s: ", rail);
	int rc = pw->s.t ? 0 : load_samples(r, pk, prefix, &pw->s, err);
	if (rc)
		return rc;
	const struct series *s = &pw->s;
	/* Sampler figures from the sample timestamps. */
	double achieved_hz = NAN, max_gap = NAN, gap50 = NAN, gap99 = NAN;
	snprintf(path, sizeof(path), "%s.exact", prefix);
	const json_t *exact = ergon_jpath(r, path);
	if (json_is_object(exact)) {
		const char *k[4] = {"achieved_hz", "max_gap_s", "gap_p50_s", "gap_p99_s"};
		double *v[4] = {&achieved_hz, &max_gap, &gap50, &gap99};
		for (int i = 0; i < 4; i++) {
			snprintf(path, sizeof(path), "%s.exact.sampler.%s", prefix, k[i]);
			if ((rc = ergon_jnumber(r, path, v[i], err)))
				return rc;
		}
	} else if (s->n >= 2) {
		double *gaps = malloc((s->n - 1) * sizeof(double));
		if (gaps == NULL)
			return ergon_err_set(err, ERGON_ENOMEM, "out of memory");
		int nan = 0;
		for (size_t i = 1; i < s->n; i++) {
			gaps[i - 1] = s->t[i] - s->t[i - 1];
			nan |= isnan(gaps[i - 1]);
		}
		size_t ng = s->n - 1;
		if (nan) {
			/* Unordered values: the sort's answer, as always. */
			qsort(gaps, ng, sizeof(double), cmp_d);
			max_gap = gaps[ng - 1];
			gap50 = ergon_percentile_nearest_rank(gaps, ng, 50);
			gap99 = ergon_percentile_nearest_rank(gaps, ng, 99);
		} else {
			/* The same values by selection (the largest, then rank
			 * 99 %, then 50 % below it). */
			max_gap = gaps[0];
			for (size_t i = 1; i < ng; i++)
				if (gaps[i] > max_gap)
					max_gap = gaps[i];
			size_t r99 = ergon_percentile_rank(ng, 99),
			       r50 = ergon_percentile_rank(ng, 50);
			gap99 = ergon_select_kth(gaps, ng, r99);
			gap50 = ergon_select_kth(gaps, r99, r50);
		}
		free(gaps);
		achieved_hz = (double)(s->n - 1) / (s->t[s->n - 1] - s->t[0]);
	}
	pw->sampler =
	    json_pack("{s:I, s:o, s:o, s:o, s:o}", "samples", (json_int_t)s->n, "achieved_hz",
		      ergon_jnum(achieved_hz), "max_gap_s", ergon_jnum(max_gap), "gap_p50_s",
		      ergon_jnum(gap50), "gap_p99_s", ergon_jnum(gap99));
	if (isfinite(max_gap) && sh->sample_hz > 0 && max_gap > ERGON_SAMPLER_GAP_PERIODS / sh->sample_hz)
		ergon_issue_add(issues, "run.sampler_gap",
				with_rail(json_pack("{s:o, s:f}", "max_gap_s", ergon_jnum(max_gap),
						    "period_s", 1.0 / sh->sample_hz),
					  rail),
				"%slargest gap between samples %.6f s is over 10 sample periods",
				rp, max_gap);

	/* Energy of the idle baseline and of the load phase. */
	pw->im = pw->lm = "trapezoid";
	if (json_is_object(exact)) {
		if ((rc = exact_energy(r, prefix, "idle", sh->have_budget, &pw->idle, &pw->im,
				       err)) ||
		    (rc =
			 exact_energy(r, prefix, "load", sh->have_budget, &pw->load, &pw->lm, err)))
			return rc;
		/* The decimated series must still agree with the exact
		 * integrals it summarises. */
		struct ergon_energy di, dl;
		const char *m;
		if ((rc =
			 phase_energy(s, prefix, sh->it0, sh->it1, sh->um, "idle", &di, &m, err)) ||
		    (rc = phase_energy(s, prefix, sh->lt0, sh->lt1, sh->um, "load", &dl, &m, err)))
			return rc;
		/* Compared as mean power: the kept samples span slightly less
		 * of each phase than all of them did. A phase left with fewer
		 * than 2 kept samples cannot be checked this way. */
		const struct ergon_energy *idle = &pw->idle, *load = &pw->load;
		double ei = fabs(di.mean_power_w - idle->mean_power_w);
		double el = fabs(dl.mean_power_w - load->mean_power_w);
		int bad_i =
		    di.n_samples >= 2 &&
		    !(ei <= ERGON_DECIMATION_TOL * fabs(idle->mean_power_w) + idle->mean_power_u_w);
		int bad_l =
		    dl.n_samples >= 2 &&
		    !(el <= ERGON_DECIMATION_TOL * fabs(load->mean_power_w) + load->mean_power_u_w);
		if (bad_i || bad_l)
			return ergon_err_set(
			    err, ERGON_EVERIFY,
			    "field %s.exact.%s: the decimated samples average "
			    "%.6g W, the exact integral says %.6g W (tolerance %.0f%% "
			    "+ uncertainty)",
			    prefix, bad_i ? "idle" : "load",
			    bad_i ? di.mean_power_w : dl.mean_power_w,
			    bad_i ? idle->mean_power_w : load->mean_power_w,
			    ERGON_DECIMATION_TOL * 100);
		ergon_issue_add(issues, "run.samples_decimated", with_rail(NULL, rail),
				"%sthe embedded power series is decimated; energies come from the "
				"exact integrals in %s.exact",
				rp, prefix);
	} else {
		if ((rc = phase_energy(s, prefix, sh->it0, sh->it1, sh->um, "idle", &pw->idle,
				       &pw->im, err)) ||
		    (rc = phase_energy(s, prefix, sh->lt0, sh->lt1, sh->um, "load", &pw->load,
				       &pw->lm, err)))
			return rc;
	}
	pw->energy_ok = 1;
	if (pw->idle.n_samples < 2 || pw->load.n_samples < 2) {
		pw->energy_ok = 0;
		ergon_issue_add(
		    issues, "run.too_few_samples",
		    with_rail(json_pack("{s:I, s:I}", "idle", (json_int_t)pw->idle.n_samples,
					"load", (json_int_t)pw->load.n_samples),
			      rail),
		    "%s%zu idle and %zu load samples; at least 2 per phase are needed "
		    "to integrate (raise --sample-hz or lengthen the phases)",
		    rp, pw->idle.n_samples, pw->load.n_samples);
	} else if (!(pw->load.mean_power_w > pw->idle.mean_power_w)) {
		ergon_issue_add(issues, "run.power_below_idle",
				with_rail(json_pack("{s:f, s:f}", "load_w", pw->load.mean_power_w,
						    "idle_w", pw->idle.mean_power_w),
					  rail),
				"%smean load power %.4f W is not above the idle floor %.4f W", rp,
				pw->load.mean_power_w, pw->idle.mean_power_w);
	}
	return 0;
}

/* The standard error over the load windows of the mean of the per-window
 * energy per operation (window energy / its operations; above idle the
 * idle floor's power is taken off first): the "spread over windows" term.
 * NaN when fewer than two windows give one (a window without 2 samples or
 * without an operation gives none). */
static void window_spread(const struct power *pw, const double *edges, size_t nw, const size_t *ops,
			  double *se_total, double *se_above, size_t *used)
{
	const struct series *s = &pw->s;
	ergon_window_spread_eop(s->t, s->p, is_accum(pw->lm) ? s->e : NULL, s->n, edges, nw, ops,
				pw->idle.mean_power_w, se_total, se_above, used);
}

/* Energy per operation of one series; JSON null when none can be
 * published. With the budget model, its two budgets (total, above idle). */
static json_t *eop_block(const struct power *pw, size_t n_ok, const struct shared *sh,
			 const struct ergon_latency *lat, int periodic, double release_hz,
			 double lq, const double *edges, size_t nw, const size_t *ops,
			 struct ergon_budget *total_b, struct ergon_budget *above_b)
{
	if (!(pw->energy_ok && n_ok > 0 && sh->lt1 > sh->lt0))
		return json_null();
	struct ergon_eop_input in = {
	    .periodic = periodic,
	    .release_hz = release_hz,
	    .achieved_ops_per_s = (double)n_ok / (sh->lt1 - sh->lt0),
	    .latency_mean_s = lat->mean_s,
	    .latency_quantum_s = lq,
	    .load_power_w = pw->load.mean_power_w,
	    .load_power_u_w = pw->load.mean_power_u_w,
	    .idle_power_w = pw->idle.mean_power_w,
	    .idle_power_u_w = pw->idle.mean_power_u_w,
	};
	struct ergon_eop eop;
	struct ergon_err e2 = {0};
	if (ergon_energy_per_op(&in, &eop, &e2) != 0)
		return json_null();
	json_t *o = json_pack("{s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o}", "formula",
			      eop.formula == ERGON_EOP_PERIODIC ? "periodic" : "saturated",
			      "reason", eop.reason, "duty_cycle", ergon_jnum(eop.duty_cycle),
			      "achieved_ops_per_s", ergon_jnum(in.achieved_ops_per_s),
			      "above_idle_j", ergon_jnum(eop.above_idle_j), "above_idle_u_j",
			      ergon_jnum(eop.above_idle_u_j), "total_j", ergon_jnum(eop.total_j),
			      "total_u_j", ergon_jnum(eop.total_u_j));
	if (o == NULL || !sh->have_budget)
		return o;
	struct ergon_eop_budget_input bi = {
	    .eop = &eop,
	    .load = &pw->load,
	    .idle = &pw->idle,
	    .load_accum = is_accum(pw->lm),
	    .idle_accum = is_accum(pw->im),
	    .n_ops = n_ok,
	    .latency_mean_s = lat->mean_s,
	    .load_duration_s = sh->lt1 - sh->lt0,
	    .repeat_se_j = NAN,
	};
	window_spread(pw, edges, nw, ops, &bi.spread_se_total_j, &bi.spread_se_above_j,
		      &bi.spread_windows);
	ergon_budget_eop(&bi, &sh->rum, 0, total_b);
	ergon_budget_eop(&bi, &sh->rum, 1, above_b);
	json_object_set_new(o, "total_budget", ergon_budget_json(total_b));
	json_object_set_new(o, "above_idle_budget", ergon_budget_json(above_b));
	return o;
}

/* The Jetson method's duty-cycle figures (ergon run --trim-s S;
 * docs/METHOD.md, "Trimmed duty-cycle figures"): each load window loses S
 * seconds at its start (the first window's is the warm-up) and S at its
 * end; over what is kept, the load's mean power (its energy over the kept
 * samples' span, per kept interval, summed), the operations that started
 * and ended inside a kept interval, their rate over the kept time and
 * their mean latency; then the formulas of "Energy per operation" with
 * the untrimmed idle floor. An object with "withheld" when nothing is
 * kept or a kept interval has fewer than 2 samples. */
/* Adds the duty-cycle formula's result to *out, as both trimmed blocks (one
 * run's and the average over repeats) state it; on failure (*out NULL when
 * given: out of memory) *out is released and NULL. */
static int trimmed_eop_fields(json_t **out, const struct ergon_eop *eop, struct ergon_err *err)
{
	json_t *o = *out;
	json_t *f = o ? json_pack("{s:o, s:s, s:s, s:o, s:o, s:o, s:o}", "duty_cycle",
				  ergon_jnum(eop->duty_cycle), "formula",
				  eop->formula == ERGON_EOP_PERIODIC ? "periodic" : "saturated",
				  "reason", eop->reason, "total_j", ergon_jnum(eop->total_j),
				  "total_u_j", ergon_jnum(eop->total_u_j), "above_idle_j",
				  ergon_jnum(eop->above_idle_j), "above_idle_u_j",
				  ergon_jnum(eop->above_idle_u_j))
		      : NULL;
	if (f == NULL || json_object_update(o, f) != 0) {
		json_decref(f);
		json_decref(o);
		*out = NULL;
		return ergon_err_set(err, ERGON_ENOMEM, "out of memory");
	}
	json_decref(f);
	return 0;
}

static int duty_block(const struct power *pw, const struct series *s, size_t n_ok,
		      const struct shared *sh, const char *prefix, double trim_s, int periodic,
		      double release_hz, double lq, json_t **out, struct ergon_err *err)
{
	size_t nw = s->n_edges > 0 ? s->n_edges - 1 : 0;
	double kept_s = 0, e_j = 0, u_j = 0, span_s = 0, lat_sum = 0;
	size_t kept = 0, n_samples = 0, ops = 0, no_kept = 0;
	const char *why = NULL;
	int rc = 0;
	*out = NULL;
	for (size_t w = 0; w < nw && why == NULL; w++) {
		double a = s->edges[w] + trim_s, b = s->edges[w + 1] - trim_s;
		if (!(b > a)) {
			/* A window that ran shorter than 2 trim_s (its edges are
			 * where it really started and stopped) keeps nothing:
			 * counted, never silently dropped. */
			no_kept++;
			continue;
		}
		struct ergon_energy e;
		const char *m;
		if ((rc = phase_energy(&pw->s, prefix, a, b, sh->um, "trimmed load", &e, &m, err)))
			return rc;
		if (e.n_samples < 2) {
			why = "a kept part of a window holds fewer than 2 samples";
			break;
		}
		kept++;
		kept_s += b - a;
		e_j += e.energy_j;
		u_j += e.u_j;
		span_s += e.span_s;
		n_samples += e.n_samples;
	}
	if (why == NULL && kept == 0)
		why = "every window is shorter than twice trim_s: nothing is kept";
	if (why == NULL) {
		/* The operations wholly inside a kept interval (edges ascend). */
		struct inv_iter it;
		double lat, end;
		int got = 0;
		size_t w = 0;
		rc = inv_open(&it, s, n_ok, 1, err);
		while (rc == 0 && (got = inv_next(&it, &lat, &end, err)) == 1) {
			double start = end - lat;
			while (w < nw && start >= s->edges[w + 1] - trim_s)
				w++;
			if (w < nw && start >= s->edges[w] + trim_s &&
			    end <= s->edges[w + 1] - trim_s) {
				ops++;
				lat_sum += lat;
			}
		}
		inv_close(&it);
		if (rc == 0 && got < 0)
			rc = got;
		if (rc)
			return rc;
		if (ops == 0)
			why = "no operation started and ended inside a kept part of a window";
	}
	if (why != NULL) {
		*out = json_pack("{s:f, s:s, s:I}", "trim_s", trim_s, "withheld", why,
				 "windows_without_kept_part", (json_int_t)no_kept);
		return *out ? 0 : ergon_err_set(err, ERGON_ENOMEM, "out of memory");
	}
	struct ergon_eop_input in = {
	    .periodic = periodic,
	    .release_hz = release_hz,
	    .achieved_ops_per_s = (double)ops / kept_s,
	    .latency_mean_s = lat_sum / (double)ops,
	    .latency_quantum_s = lq,
	    .load_power_w = e_j / span_s,
	    .load_power_u_w = u_j / span_s,
	    .idle_power_w = pw->idle.mean_power_w,
	    .idle_power_u_w = pw->idle.mean_power_u_w,
	};
	struct ergon_eop eop;
	struct ergon_err e2 = {0};
	if (!pw->energy_ok || ergon_energy_per_op(&in, &eop, &e2) != 0) {
		*out = json_pack("{s:f, s:s, s:I}", "trim_s", trim_s, "withheld",
				 pw->energy_ok ? e2.msg : "the phases' energies are withheld",
				 "windows_without_kept_part", (json_int_t)no_kept);
		return *out ? 0 : ergon_err_set(err, ERGON_ENOMEM, "out of memory");
	}
	*out = json_pack(
	    "{s:f, s:I, s:f, s:I, s:I, s:o, s:o, s:o, s:o, s:I, s:o, s:o, s:s, s:I}", "trim_s",
	    trim_s, "kept_intervals", (json_int_t)kept, "kept_s", kept_s, "windows",
	    (json_int_t)nw, "samples", (json_int_t)n_samples, "load_power_w",
	    ergon_jnum(in.load_power_w), "load_power_u_w", ergon_jnum(in.load_power_u_w),
	    "idle_power_w", ergon_jnum(in.idle_power_w), "idle_power_u_w",
	    ergon_jnum(in.idle_power_u_w), "operations", (json_int_t)ops, "achieved_ops_per_s",
	    ergon_jnum(in.achieved_ops_per_s), "latency_mean_s", ergon_jnum(in.latency_mean_s),
	    "method",
	    "each window less trim_s at both ends; load power = the kept samples' energy "
	    "over their span; operations wholly inside a kept part; rate over the kept "
	    "time; idle floor untrimmed",
	    "windows_without_kept_part", (json_int_t)no_kept);
	return trimmed_eop_fields(out, &eop, err);
}

/* The gate (--max-uncertainty-pct): a budgeted figure whose relative
 * expanded uncertainty exceeds P, or whose budget is incomplete, raises
 * run.uncertainty_above_limit; the figure stays. */
static void gate_check(json_t *issues, const struct shared *sh, const char *rail,
		       const char *figure, const struct ergon_budget *b)
{
	int g = ergon_budget_gate(b, sh->max_pct);
	if (g == 0)
		return;
	char rp[96] = "";
	if (rail)
		snprintf(rp, sizeof(rp), "rail %s: ", rail);
	const char *dom = ergon_budget_dominant_name(b);
	double rel = ergon_budget_rel_pct(b);
	json_t *ctx =
	    with_rail(json_pack("{s:s, s:f, s:o, s:b, s:s}", "figure", figure,
				"max_uncertainty_pct", sh->max_pct, "U_pct", ergon_jnum(rel),
				"complete", b->complete, "dominant", dom),
		      rail);
	if (g == 2)
		ergon_issue_add(issues, "run.uncertainty_above_limit", ctx,
				"%s%s: the uncertainty budget is incomplete (%s is unknown), so "
				"it cannot be shown to be within %g %%; state the missing figure "
				"or drop --max-uncertainty-pct",
				rp, figure, dom, sh->max_pct);
	else if (g == 3)
		ergon_issue_add(issues, "run.uncertainty_above_limit", ctx,
				"%s%s is %g: no relative uncertainty can be within %g %%", rp,
				figure, b->value, sh->max_pct);
	else
		ergon_issue_add(issues, "run.uncertainty_above_limit", ctx,
				"%s%s: expanded uncertainty %.3g %% (k = 2) is above the limit "
				"%g %%; the largest term is %s",
				rp, figure, rel, sh->max_pct, dom);
}

/* The gate on one series' figures: the load phase's energy and mean power
 * and the energy per operation, total and above idle (the idle floor's
 * own figures are inputs of the latter, not gated alone). */
static void gate_series(json_t *issues, const struct shared *sh, const char *rail,
			const struct power *pw, const struct ergon_budget *total_b,
			const struct ergon_budget *above_b)
{
	if (!sh->have_budget || !isfinite(sh->max_pct) || !pw->energy_ok)
		return;
	struct ergon_budget b;
	ergon_budget_phase_energy(&pw->load, is_accum(pw->lm), &sh->rum, &b);
	gate_check(issues, sh, rail, "load energy", &b);
	ergon_budget_phase_power(&pw->load, is_accum(pw->lm), &sh->rum, &b);
	gate_check(issues, sh, rail, "load mean power", &b);
	if (total_b) {
		gate_check(issues, sh, rail, "energy per operation", total_b);
		gate_check(issues, sh, rail, "energy per operation above idle", above_b);
	}
}

/* A multi-rail report (series.rails[]): check the rails and find the
 * headline one, the rail instrument.total_rail names (-1: none). Each
 * series.rails[i].total_input must agree with that name. */
static int rails_check(const json_t *r, size_t *n, const char **names, int *head,
		       struct ergon_err *err)
{
	const json_t *rails = ergon_jpath(r, "series.rails");
	*n = json_array_size(rails);
	*head = -1;
	if (*n < 2 || *n > ERGON_MAX_RAILS)
		return ergon_err_set(err, ERGON_EVERIFY,
				     "field series.rails: %zu rails; a multi-rail report holds 2 "
				     "to %d",
				     *n, ERGON_MAX_RAILS);
	const json_t *tr = ergon_jpath(r, "instrument.total_rail");
	if (!json_is_string(tr) && !json_is_null(tr))
		return ergon_err_set(err, ERGON_EVERIFY,
				     "field instrument.total_rail: missing, or neither a rail name "
				     "nor null");
	const char *total = json_string_value(tr);
	for (size_t i = 0; i < *n; i++) {
		const json_t *ri = json_array_get(rails, i);
		names[i] = json_string_value(json_object_get(ri, "name"));
		const json_t *ti = json_object_get(ri, "total_input");
		if (names[i] == NULL || !json_is_boolean(ti))
			return ergon_err_set(err, ERGON_EVERIFY,
					     "field series.rails[%zu]: needs a name (string) and "
					     "total_input (boolean)",
					     i);
		for (size_t j = 0; j < i; j++)
			if (strcmp(names[i], names[j]) == 0)
				return ergon_err_set(err, ERGON_EVERIFY,
						     "field series.rails[%zu].name: rail %s "
						     "appears twice",
						     i, names[i]);
		int is_total = total && strcmp(names[i], total) == 0;
		if (json_is_true(ti) != is_total)
			return ergon_err_set(err, ERGON_EVERIFY,
					     "field series.rails[%zu].total_input: says %s, but "
					     "instrument.total_rail is %s",
					     i, json_is_true(ti) ? "true" : "false",
					     total ? total : "null");
		if (is_total)
			*head = (int)i;
	}
	if (total && *head < 0)
		return ergon_err_set(err, ERGON_EVERIFY,
				     "field instrument.total_rail: names %s, which no "
				     "series.rails entry holds",
				     total);
	return 0;
}

int ergon_report_compute_figures(const json_t *r, json_t **figures_out, json_t **issues_out,
				 struct ergon_err *err)
{
	return ergon_report_compute_figures_packed(r, NULL, figures_out, issues_out, err);
}

static int single_figures(const json_t *r, struct ergon_jcs_stream_result *pk, json_t **figures_out,
			  json_t **issues_out, struct ergon_err *err)
{
	struct series s = {0};
	struct power pw[ERGON_MAX_RAILS];
	memset(pw, 0, sizeof(pw));
	size_t n_pw = 0, n_rails = 0;
	const char *names[ERGON_MAX_RAILS] = {0};
	int head = -1;
	json_t *fig = NULL, *issues = json_array();
	size_t *win_ops_close = NULL;
	double *edges_close = NULL;
	*figures_out = NULL;
	*issues_out = NULL;
	int multi = json_is_array(ergon_jpath(r, "series.rails"));
	int rc = 0;
	if (!multi) {
		/* The samples first: a report without them is named by them. */
		n_pw = 1;
		if ((rc = load_samples(r, pk, "series", &pw[0].s, err)))
			goto out;
	}
	if ((rc = load_invocations(r, pk, &s, err)))
		goto out;
	if (multi && (rc = rails_check(r, &n_rails, names, &head, err)))
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
	struct shared sh = {.um = json_object_get(r, "uncertainty_model"),
			    .stats = json_is_object(json_object_get(r, "statistics"))};
	/* accuracy_pct 0 is how a driver says "no rated accuracy" (RAPL, a
	 * replay without accuracy_pct): the ± then holds only the resolution
	 * and timing terms, which reads as confident when it is not. */
	double acc_pct = 0;
	if ((rc = ergon_jnumber(r, "uncertainty_model.accuracy_pct", &acc_pct, err)))
		goto out;
	const json_t *floorj = ergon_jpath(r, "uncertainty_model.floor_w");
	if (!(acc_pct > 0) && !(json_is_number(floorj) && json_number_value(floorj) > 0))
		ergon_issue_add(issues, "instrument.unrated_accuracy", NULL,
				"the instrument states no rated accuracy (accuracy_pct %g): "
				"every ± holds its resolution and timing terms only; give "
				"the instrument's rated accuracy (replay: --instrument-opt "
				"accuracy_pct=PCT) or read the ± as unrated",
				acc_pct);
	if ((rc = ergon_jnumber(r, "sampler.target_hz", &sh.sample_hz, err)) ||
	    (rc = ergon_jnumber(r, "series.phases.idle.t_start_s", &sh.it0, err)) ||
	    (rc = ergon_jnumber(r, "series.phases.idle.t_end_s", &sh.it1, err)) ||
	    (rc = ergon_jnumber(r, "series.phases.load.t_start_s", &sh.lt0, err)) ||
	    (rc = ergon_jnumber(r, "series.phases.load.t_end_s", &sh.lt1, err)))
		goto out;
	/* The budgets and their gate, in reports that carry the model. */
	sh.max_pct = NAN;
	const json_t *ub = json_object_get(sh.um, "budget");
	if (ub != NULL) {
		if ((rc = ergon_run_um_from_json(ub, "uncertainty_model.budget", &sh.rum, err)) ||
		    (rc = ergon_jnumber(r, "uncertainty_model.timing_quantum_s",
					&sh.rum.timing_quantum_s, err)) ||
		    (rc = ergon_jnumber(r, "uncertainty_model.latency_quantum_s",
					&sh.rum.latency_quantum_s, err)))
			goto out;
		sh.have_budget = 1;
		const json_t *mp = ergon_jpath(r, "plan.max_uncertainty_pct");
		if (json_is_number(mp) && json_number_value(mp) > 0) {
			sh.max_pct = json_number_value(mp);
		} else if (mp != NULL && !json_is_null(mp)) {
			rc = ergon_err_set(err, ERGON_EVERIFY,
					   "field plan.max_uncertainty_pct: a percentage > 0 or "
					   "null");
			goto out;
		}
	}
	if (!multi) {
		head = 0;
		if ((rc = power_block(r, pk, "series", NULL, &sh, issues, &pw[0], err)))
			goto out;
	} else {
		/* Each rail integrated over its own timestamps; rails are never
		 * added together (nested rails would count twice). */
		for (size_t i = 0; i < n_rails; i++) {
			char prefix[48];
			snprintf(prefix, sizeof(prefix), "series.rails[%zu]", i);
			n_pw = i + 1;
			if ((rc = power_block(r, pk, prefix, names[i], &sh, issues, &pw[i], err)))
				goto out;
		}
	}
	/* The headline figures: the only series (single rail) or the total
	 * input rail. Without a total rail they are withheld. */
	if (head >= 0) {
		json_object_set(fig, "sampler", pw[head].sampler);
		json_object_set_new(fig, "idle", energy_json(&pw[head].idle, pw[head].im, &sh));
		json_object_set_new(fig, "load", load_json(&pw[head], &sh));
	}
	/* Temperature evidence comes with every rail's samples alike; the
	 * headline rail's (or the first rail's) are used. */
	const struct series *ts = &pw[head >= 0 ? head : 0].s;

	/* Latency of the invocations that succeeded, and (streamed) their
	 * operations per window. */
	size_t nw = s.n_edges > 0 ? s.n_edges - 1 : 0;
	/* From a streamed file (verify) the latency figures come from one
	 * pass plus radix selection, whether the columns are held or spilled:
	 * exact, and cheaper than sorting a copy. The run pipeline (a tree)
	 * keeps the engine's sort; test_verify_stream.c checks that the two
	 * agree exactly. */
	int streamed = pk != NULL || s.sp_t || s.sp_l || s.sp_f;
	struct ergon_latency lat;
	double *end_ok = NULL;
	size_t *ops_streamed = NULL;
	/* The budgets' spread over windows counts each window's operations up
	 * to the one that closes it (a window's edge is the end of the
	 * invocation that crossed its planned end; the throughput counts put
	 * that invocation in the next window): edges a nanosecond later. */
	if (sh.have_budget && nw > 0) {
		edges_close = malloc((nw + 1) * sizeof(double));
		win_ops_close = calloc(nw, sizeof(size_t));
		if (edges_close == NULL || win_ops_close == NULL) {
			rc = ergon_err_set(err, ERGON_ENOMEM, "out of memory");
			goto out;
		}
		for (size_t w = 0; w <= nw; w++)
			edges_close[w] = s.edges[w] + 1e-9;
	}
	if (streamed) {
		ops_streamed = calloc(nw ? nw : 1, sizeof(size_t));
		if (ops_streamed == NULL) {
			rc = ergon_err_set(err, ERGON_ENOMEM, "out of memory");
			goto out;
		}
		if ((rc = latency_streamed(&s, n_ok, s.edges, nw, &lat, ops_streamed, edges_close,
					   win_ops_close, err))) {
			free(ops_streamed);
			goto out;
		}
	} else {
		double *lat_ok = malloc((n_ok ? n_ok : 1) * sizeof(double));
		end_ok = malloc((n_ok ? n_ok : 1) * sizeof(double));
		struct inv_iter it = {0};
		if (lat_ok == NULL || end_ok == NULL) {
			free(lat_ok);
			free(end_ok);
			rc = ergon_err_set(err, ERGON_ENOMEM, "out of memory");
			goto out;
		}
		size_t k = 0;
		int got;
		rc = inv_open(&it, &s, n_ok, 1, err);
		while (rc == 0 && (got = inv_next(&it, &lat_ok[k], &end_ok[k], err)) == 1)
			k++;
		inv_close(&it);
		if (rc == 0 && got < 0)
			rc = got;
		if (rc == 0)
			rc = ergon_latency_stats(lat_ok, n_ok, &lat, err);
		free(lat_ok);
		if (rc) {
			free(end_ok);
			goto out;
		}
	}
	json_t *latj = json_pack("{s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:s}", "count",
				 (json_int_t)lat.count, "min_s", ergon_jnum(lat.min_s), "mean_s",
				 ergon_jnum(lat.mean_s), "max_s", ergon_jnum(lat.max_s), "p50_s",
				 ergon_jnum(lat.p50_s), "p90_s", ergon_jnum(lat.p90_s), "p95_s",
				 ergon_jnum(lat.p95_s), "p99_s", ergon_jnum(lat.p99_s), "method",
				 "nearest rank over every successful invocation");
	json_object_set_new(fig, "latency", latj);
	if (sh.stats && lat.count > 0)
		latency_distribution(latj, &lat, issues);
	if (n_ok == 0)
		ergon_issue_add(issues, "run.no_operations", NULL,
				"no invocation succeeded in the load phase");

	/* Throughput per window and the throttle rule. */
	double thr = 0, consec_d = 0;
	if ((rc = ergon_jnumber(r, "plan.throttle_threshold", &thr, err)) ||
	    (rc = ergon_jnumber(r, "plan.throttle_windows", &consec_d, err))) {
		free(end_ok);
		free(ops_streamed);
		goto out;
	}
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
			free(ops_streamed);
			rc = ergon_err_set(err, ERGON_ENOMEM, "out of memory");
			goto out;
		}
		struct ergon_err e2 = {0};
		/* Streamed: the engine checks the edges; the counts came with
		 * the latency pass, and the rates are its own expression. */
		rc = ergon_throughput_windows(end_ok, streamed ? 0 : n_ok, s.edges, nw, ops, ops_s,
					      &e2);
		if (rc == 0 && !streamed && win_ops_close != NULL) {
			double *tmp_s = calloc(nw, sizeof(double));
			struct ergon_err e3 = {0};
			if (tmp_s == NULL ||
			    ergon_throughput_windows(end_ok, n_ok, edges_close, nw, win_ops_close,
						     tmp_s, &e3) != 0) {
				free(win_ops_close);
				win_ops_close = NULL; /* no spread: the term is then unknown */
			}
			free(tmp_s);
		}
		for (size_t w = 0; rc == 0 && streamed && w < nw; w++) {
			ops[w] = ops_streamed[w];
			ops_s[w] = (double)ops[w] / (s.edges[w + 1] - s.edges[w]);
		}
		if (rc == 0)
			rc = ergon_throttle_onset(ops_s, nw, thr, (size_t)consec_d, &th, &e2);
		if (rc) {
			free(ops);
			free(ops_s);
			free(end_ok);
			free(ops_streamed);
			rc = ergon_err_set(err, ERGON_EVERIFY, "field series.window_edges_s: %s",
					   e2.msg);
			goto out;
		}
		json_t *wins = json_array();
		for (size_t w = 0; w < nw; w++)
			json_array_append_new(wins,
					      json_pack("{s:f, s:f, s:I, s:f}", "t_start_s",
							s.edges[w] - sh.lt0, "duration_s",
							s.edges[w + 1] - s.edges[w], "operations",
							(json_int_t)ops[w], "ops_per_s", ops_s[w]));
		json_object_set_new(tp, "windows", wins);
		free(ops);
		free(ops_s);
		/* A window that opened at or past its planned end (an
		 * invocation spanned it) holds the one invocation that ended
		 * it (session.c): per-window throughput says little there. */
		double plan_w = 0;
		size_t spanned = 0, first_spanned = 0;
		if (ergon_jnumber(r, "plan.window_s", &plan_w, &e2) == 0 && plan_w > 0)
			for (size_t w = 1; w < nw; w++)
				if (s.edges[w] >= s.edges[0] + (double)(w + 1) * plan_w &&
				    spanned++ == 0)
					first_spanned = w;
		if (spanned > 0)
			ergon_issue_add(
			    issues, "run.window_spanned",
			    json_pack("{s:I, s:I, s:f}", "windows", (json_int_t)spanned,
				      "first_window", (json_int_t)first_spanned, "window_s",
				      plan_w),
			    "%zu window(s) from window %zu on opened past their planned "
			    "end (an invocation ran longer than the windows): each ends "
			    "with the next invocation, so per-window throughput and the "
			    "throttle verdict say little; choose --window-s well above "
			    "the slowest invocation",
			    spanned, first_spanned);
	}
	free(end_ok);
	free(ops_streamed);
	json_object_set_new(tp, "first_ops_per_s", ergon_jnum(th.first_ops_per_s));
	json_object_set_new(tp, "tail_ops_per_s", ergon_jnum(th.tail_ops_per_s));
	json_object_set_new(tp, "change_pct", ergon_jnum(th.change_pct));
	json_object_set_new(tp, "throttled", json_boolean(th.throttled));
	json_object_set_new(tp, "onset_window",
			    th.throttled ? json_integer(th.onset_window) : json_null());
	double onset_t = th.throttled ? s.edges[th.onset_window] - sh.lt0 : NAN;
	json_object_set_new(tp, "onset_t_s", ergon_jnum(onset_t));
	json_object_set_new(tp, "rule",
			    json_sprintf("onset = first window below (1 - %g) x first-window "
					 "throughput that stays below for %zu consecutive windows, "
					 "the onset window counted among them",
					 thr, (size_t)consec_d));
	json_t *evidence = json_null();
	char verdict[1024];
	/* The device's own throttle record (NVML clock-event reasons), from
	 * the instrument's stats in the report: named only when it saw one. */
	json_t *devev = device_evidence(r);
	if (th.throttled) {
		int n =
		    snprintf(verdict, sizeof(verdict),
			     "throughput regressed: from window %ld (t=%.1f s) on, below %.0f%% "
			     "of the first window for %zu consecutive windows",
			     th.onset_window, onset_t, 100.0 * (1.0 - thr), (size_t)consec_d);
		double tf = mean_temp(ts, s.edges[0], s.edges[1]);
		double tl = mean_temp(ts, s.edges[nw - 1], s.edges[nw]);
		if (isfinite(tf) && isfinite(tl) && n > 0 && (size_t)n < sizeof(verdict)) {
			/* A temperature is evidence only when it rose: a flat
			 * series beside a regression points elsewhere. */
			int rose = tl - tf > ERGON_THROTTLE_TEMP_RISE_C;
			int m = snprintf(
			    verdict + n, sizeof(verdict) - (size_t)n,
			    rose ? "; temperature %.1f -> %.1f C (first -> last window) rose by "
				   "more than %g C: evidence of a thermal limit"
				 : "; temperature %.1f -> %.1f C (first -> last window) did not "
				   "rise by more than %g C: not evidence of a thermal limit",
			    tf, tl, ERGON_THROTTLE_TEMP_RISE_C);
			if (m > 0)
				n += m;
			if (rose) {
				json_decref(evidence);
				evidence = json_pack("{s:f, s:f}", "first_window_c", tf,
						     "last_window_c", tl);
			}
		}
		if (json_is_object(devev) && n > 0 && (size_t)n < sizeof(verdict))
			snprintf(verdict + n, sizeof(verdict) - (size_t)n,
				 "; the device reported clock slowdown (of %" JSON_INTEGER_FORMAT
				 " polls: thermal in %" JSON_INTEGER_FORMAT
				 ", power cap in %" JSON_INTEGER_FORMAT
				 ", hardware slowdown in %" JSON_INTEGER_FORMAT
				 "): evidence of a device limit",
				 json_integer_value(json_object_get(devev, "polls")),
				 json_integer_value(json_object_get(devev, "polls_thermal")),
				 json_integer_value(json_object_get(devev, "polls_power_cap")),
				 json_integer_value(json_object_get(devev, "polls_hw_slowdown")));
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
	/* Only when present, so that reports written before this field
	 * existed (and instruments without such a record) still verify. */
	if (json_is_object(devev))
		json_object_set_new(tp, "device_evidence", devev);
	else
		json_decref(devev);
	json_object_set_new(tp, "verdict", json_string(verdict));
	json_object_set_new(tp, "temperature_evidence", evidence);

	/* Energy per operation. */
	double release_hz = 0;
	const json_t *rh = ergon_jpath(r, "mode.release_hz");
	if (json_is_number(rh))
		release_hz = json_number_value(rh);
	const char *mode = json_string_value(ergon_jpath(r, "mode.kind"));
	int periodic = mode && strcmp(mode, "periodic") == 0;
	double lq = 0;
	if ((rc = ergon_jnumber(r, "uncertainty_model.latency_quantum_s", &lq, err)))
		goto out;
	size_t nwin = s.n_edges > 0 ? s.n_edges - 1 : 0;
	/* --trim-s: the duty-cycle figures of the headline series, trimmed
	 * (only in reports that state plan.trim_s). */
	const json_t *trimj = ergon_jpath(r, "plan.trim_s");
	if (trimj != NULL && !json_is_null(trimj)) {
		double trim_s = json_number_value(trimj);
		if (!json_is_number(trimj) || !(trim_s >= 0) || !isfinite(trim_s)) {
			rc = ergon_err_set(err, ERGON_EVERIFY,
					   "field plan.trim_s: seconds >= 0 or null");
			goto out;
		}
		json_t *dc = NULL;
		if (head >= 0) {
			char prefix[48] = "series";
			if (multi)
				snprintf(prefix, sizeof prefix, "series.rails[%d]", head);
			if ((rc = duty_block(&pw[head], &s, n_ok, &sh, prefix, trim_s, periodic,
					     release_hz, lq, &dc, err)))
				goto out;
		} else {
			dc = json_pack("{s:f, s:s}", "trim_s", trim_s, "withheld",
				       "no total input rail: no headline");
		}
		json_object_set_new(fig, "duty_cycle", dc);
	}
	if (!multi) {
		struct ergon_budget tb, ab;
		json_t *eop = eop_block(&pw[0], n_ok, &sh, &lat, periodic, release_hz, lq, s.edges,
					nwin, win_ops_close, &tb, &ab);
		gate_series(issues, &sh, NULL, &pw[0], json_is_object(eop) ? &tb : NULL, &ab);
		json_object_set_new(fig, "energy_per_op", eop);
	} else {
		json_t *rails = json_array();
		for (size_t i = 0; i < n_rails; i++) {
			struct ergon_budget tb, ab;
			json_t *eop = eop_block(&pw[i], n_ok, &sh, &lat, periodic, release_hz, lq,
						s.edges, nwin, win_ops_close, &tb, &ab);
			/* The gate holds the headline; without one, every rail. */
			if ((int)i == head || head < 0)
				gate_series(issues, &sh, names[i], &pw[i],
					    json_is_object(eop) ? &tb : NULL, &ab);
			if ((int)i == head)
				json_object_set(fig, "energy_per_op", eop);
			json_array_append_new(
			    rails,
			    json_pack("{s:s, s:b, s:O, s:o, s:o, s:o}", "name", names[i],
				      "total_input", (int)i == head, "sampler", pw[i].sampler,
				      "idle", energy_json(&pw[i].idle, pw[i].im, &sh), "load",
				      load_json(&pw[i], &sh), "energy_per_op", eop));
		}
		json_object_set_new(fig, "rails", rails);
		json_object_set_new(fig, "headline_rail",
				    head >= 0 ? json_string(names[head]) : json_null());
		if (head < 0) {
			char list[ERGON_MAX_RAILS * 50] = "";
			size_t lo = 0;
			json_t *jl = json_array();
			for (size_t i = 0; i < n_rails; i++) {
				int w = snprintf(list + lo, sizeof(list) - lo, "%s%s",
						 i ? ", " : "", names[i]);
				if (w > 0 && lo + (size_t)w < sizeof(list))
					lo += (size_t)w;
				json_array_append_new(jl, json_string(names[i]));
			}
			json_object_set_new(fig, "energy_per_op", json_null());
			ergon_issue_add(
			    issues, "run.no_total_rail", json_pack("{s:o}", "rails", jl),
			    "none of the rails %s is the module's total input: the headline "
			    "figures (idle, load, energy per operation) are withheld and each "
			    "rail's figures stand alone under figures.rails; rails are never "
			    "summed, as nested rails would count twice. Select the total input "
			    "rail (e.g. VDD_IN) to get a headline",
			    list);
		}
	}
	rc = 0;
out:
	free(win_ops_close);
	free(edges_close);
	series_free(&s);
	for (size_t i = 0; i < n_pw; i++) {
		series_free(&pw[i].s);
		json_decref(pw[i].sampler);
	}
	if (rc) {
		json_decref(fig);
		json_decref(issues);
		return rc;
	}
	*figures_out = fig;
	*issues_out = issues;
	return 0;
}

/* --- repeated runs (ergon run --repeat N) ---------------------------------
 *
 * A repeated report holds the raw data of each repetition under
 * repetitions[] and every derived figure under figures: each
 * repetition's own figures (figures.repetitions[i], computed by the code
 * above from a view of the report with that repetition's series, exactly
 * as a single run's) and the repeat statistics of every figure in
 * ergon_run_figures (figures.repeat; docs/METHOD.md, "Repeats"). */

#define LATENCY_U "uncertainty_model.latency_quantum_s"
static const struct ergon_run_figure run_figures[] = {
    {"energy_per_op.above_idle_j", "figures.energy_per_op.above_idle_u_j", "J",
     "energy per operation above idle", -1, 1},
    {"energy_per_op.total_j", "figures.energy_per_op.total_u_j", "J", "energy per operation total",
     -1, 0},
    {"load.mean_power_w", "figures.load.mean_power_u_w", "W", "load mean power", -1, 1},
    {"idle.mean_power_w", "figures.idle.mean_power_u_w", "W", "idle mean power", -1, 0},
    {"load.peak_power_w", "figures.load.peak_power_u_w", "W", "load peak power", -1, 0},
    {"load.energy_j", "figures.load.energy_u_j", "J", "load energy", 0, 0},
    {"latency.p50_s", LATENCY_U, "s", "latency p50", -1, 1},
    {"latency.p90_s", LATENCY_U, "s", "latency p90", -1, 0},
    {"latency.p95_s", LATENCY_U, "s", "latency p95", -1, 0},
    {"latency.p99_s", LATENCY_U, "s", "latency p99", -1, 0},
    {"latency.mean_s", LATENCY_U, "s", "latency mean", -1, 0},
    {"throughput.first_ops_per_s", NULL, "ops/s", "throughput first window", 1, 0},
    {"throughput.tail_ops_per_s", NULL, "ops/s", "throughput tail", 1, 1},
    {"throughput.change_pct", NULL, "%", "throughput change", 0, 0},
    {"operations.succeeded", NULL, "", "operations", 0, 0},
    {"sampler.achieved_hz", NULL, "Hz", "sampler achieved rate", 0, 0},
};

const struct ergon_run_figure *ergon_run_figures(size_t *n)
{
	*n = sizeof(run_figures) / sizeof(run_figures[0]);
	return run_figures;
}

/* The report as repetition i sees it: the shared members of r with the
 * repetition's own (status, session, sampler, uncertainty model, series,
 * measurement time) in their place. A shallow copy: every value is r's
 * own node, so the streaming reader's packed series are found by
 * identity. New reference. */
static json_t *rep_view(const json_t *r, const json_t *rep)
{
	json_t *v = json_copy((json_t *)r);
	if (v == NULL)
		return NULL;
	json_object_del(v, "repetitions");
	json_object_del(v, "figures");
	json_object_del(v, "repeat");
	const char *k;
	json_t *x;
	json_object_foreach((json_t *)rep, k, x)
	{
		if (strcmp(k, "index") != 0)
			json_object_set(v, k, x);
	}
	return v;
}

/* Issues a repetition's figures raise, named as that repetition's. */
static void tag_issues(json_t *dst, json_t *src, size_t i, size_t n)
{
	size_t k;
	json_t *x;
	json_array_foreach(src, k, x)
	{
		json_t *ctx = json_object_get(x, "context");
		if (!json_is_object(ctx)) {
			ctx = json_object();
			json_object_set_new(x, "context", ctx);
		}
		json_object_set_new(ctx, "repetition", json_integer((json_int_t)(i + 1)));
		const char *m = json_string_value(json_object_get(x, "message"));
		json_object_set_new(x, "message",
				    json_sprintf("repetition %zu/%zu: %s", i + 1, n, m ? m : ""));
		json_array_append(dst, x);
	}
}

/* The statistics of one figure over the repetitions (figures.repeat). */
static json_t *figure_stats(const struct ergon_run_figure *f, json_t *const *views, size_t n,
			    struct ergon_err *err)
{
	double *v = malloc((n ? n : 1) * sizeof *v), *u = malloc((n ? n : 1) * sizeof *u);
	if (v == NULL || u == NULL) {
		free(v);
		free(u);
		ergon_err_set(err, ERGON_ENOMEM, "out of memory");
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		char path[160];
		snprintf(path, sizeof path, "figures.%s", f->key);
		const json_t *jv = ergon_jpath(views[i], path);
		const json_t *ju = f->u_key ? ergon_jpath(views[i], f->u_key) : NULL;
		v[i] = json_is_number(jv) ? json_number_value(jv) : NAN;
		u[i] = json_is_number(ju) ? json_number_value(ju) : NAN;
	}
	json_t *o = ergon_repeat_figure_json(f->name, f->unit, v, u, n, err);
	free(v);
	free(u);
	return o;
}

/* The sum over the repetitions of their windows_without_kept_part (every
 * window that kept nothing, in whichever repetition), added to o; not
 * added when a repetition's block lacks the count (a report written
 * before it existed): no partial sum is stated as the total. Takes o;
 * NULL when o is NULL or out of memory. */
static json_t *repeat_no_kept(json_t *o, json_t *const *views, size_t n)
{
	json_int_t no_kept = 0;
	for (size_t i = 0; i < n; i++) {
		const json_t *c =
		    ergon_jpath(views[i], "figures.duty_cycle.windows_without_kept_part");
		if (!json_is_integer(c))
			return o;
		no_kept += json_integer_value(c);
	}
	if (o != NULL &&
	    json_object_set_new(o, "windows_without_kept_part", json_integer(no_kept)) != 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* The Jetson method with repeats (--trim-s, --repeat N): the mean over
 * the repetitions of each input of the duty-cycle formulas (each
 * repetition's figures.duty_cycle: load and idle power, achieved rate,
 * mean latency, and their ±), and the formulas applied once to those
 * means; not the mean of each repetition's energy per operation. Withheld
 * when a repetition withheld its own. Either way it states the windows
 * that kept nothing, summed over the repetitions. */
static int repeat_duty(json_t *const *views, size_t n, double trim_s, json_t **out,
		       struct ergon_err *err)
{
	static const char *const keys[] = {"load_power_w",	 "load_power_u_w",
					   "idle_power_w",	 "idle_power_u_w",
					   "achieved_ops_per_s", "latency_mean_s"};
	double sum[6] = {0};
	*out = NULL;
	for (size_t i = 0; i < n; i++) {
		const json_t *dc = ergon_jpath(views[i], "figures.duty_cycle");
		for (size_t k = 0; k < 6; k++) {
			const json_t *v = json_object_get(dc, keys[k]);
			if (!json_is_number(v)) {
				*out = repeat_no_kept(
				    json_pack("{s:f, s:I, s:s}", "trim_s", trim_s, "n",
					      (json_int_t)n, "withheld",
					      "a repetition's trimmed duty-cycle figures are "
					      "withheld (see figures.repetitions[].duty_cycle)"),
				    views, n);
				return *out ? 0 : ergon_err_set(err, ERGON_ENOMEM, "out of memory");
			}
			sum[k] += json_number_value(v);
		}
	}
	double m[6];
	for (size_t k = 0; k < 6; k++)
		m[k] = sum[k] / (double)n;
	const json_t *v0 = views[0];
	const char *mode = json_string_value(ergon_jpath(v0, "mode.kind"));
	const json_t *rh = ergon_jpath(v0, "mode.release_hz");
	const json_t *lq = ergon_jpath(v0, "uncertainty_model.latency_quantum_s");
	struct ergon_eop_input in = {
	    .periodic = mode && strcmp(mode, "periodic") == 0,
	    .release_hz = json_is_number(rh) ? json_number_value(rh) : 0,
	    .achieved_ops_per_s = m[4],
	    .latency_mean_s = m[5],
	    .latency_quantum_s = json_is_number(lq) ? json_number_value(lq) : 0,
	    .load_power_w = m[0],
	    .load_power_u_w = m[1],
	    .idle_power_w = m[2],
	    .idle_power_u_w = m[3],
	};
	struct ergon_eop eop;
	struct ergon_err e2 = {0};
	if (ergon_energy_per_op(&in, &eop, &e2) != 0) {
		*out = repeat_no_kept(json_pack("{s:f, s:I, s:s}", "trim_s", trim_s, "n",
						(json_int_t)n, "withheld", e2.msg),
				      views, n);
		return *out ? 0 : ergon_err_set(err, ERGON_ENOMEM, "out of memory");
	}
	*out = repeat_no_kept(
	    json_pack("{s:f, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:s}", "trim_s", trim_s, "n",
		      (json_int_t)n, "load_power_w", ergon_jnum(m[0]), "load_power_u_w",
		      ergon_jnum(m[1]), "idle_power_w", ergon_jnum(m[2]), "idle_power_u_w",
		      ergon_jnum(m[3]), "achieved_ops_per_s", ergon_jnum(m[4]), "latency_mean_s",
		      ergon_jnum(m[5]), "method",
		      "the formulas applied to the means over the repetitions of each repetition's "
		      "trimmed inputs (figures.repetitions[].duty_cycle), not the mean of their "
		      "results; each ± is the mean of the repetitions' ±"),
	    views, n);
	return trimmed_eop_fields(out, &eop, err);
}

static int repeated_figures(const json_t *r, struct ergon_jcs_stream_result *pk,
			    json_t **figures_out, json_t **issues_out, struct ergon_err *err)
{
	*figures_out = *issues_out = NULL;
	const json_t *reps = json_object_get(r, "repetitions");
	size_t n = json_array_size(reps);
	const json_t *planned = ergon_jpath(r, "repeat.planned");
	const char *status = json_string_value(json_object_get(r, "status"));
	if (n == 0 || n > ERGON_RUN_REPEAT_MAX)
		return ergon_err_set(err, ERGON_EVERIFY,
				     "field repetitions: %zu entries; a repeated report holds 1 to "
				     "%d",
				     n, ERGON_RUN_REPEAT_MAX);
	if (!json_is_integer(planned) || json_integer_value(planned) < 2 ||
	    json_integer_value(planned) > ERGON_RUN_REPEAT_MAX ||
	    (size_t)json_integer_value(planned) < n)
		return ergon_err_set(
		    err, ERGON_EVERIFY,
		    "field repeat.planned: missing, or not an integer from 2 to %d "
		    "and at least the %zu repetitions held",
		    ERGON_RUN_REPEAT_MAX, n);
	if (status == NULL)
		return ergon_err_set(err, ERGON_EVERIFY, "field status: missing or not a string");
	json_t **views = calloc(n, sizeof *views);
	json_t *fig = json_object(), *figs = json_array(), *issues = json_array();
	int rc = 0;
	if (views == NULL || fig == NULL || figs == NULL || issues == NULL) {
		rc = ergon_err_set(err, ERGON_ENOMEM, "out of memory");
		goto out;
	}
	json_object_set(fig, "repetitions", figs);
	size_t completed = 0;
	for (size_t i = 0; i < n; i++) {
		const json_t *rep = json_array_get(reps, i);
		const json_t *idx = json_object_get(rep, "index");
		if (!json_is_object(rep) || !json_is_integer(idx) ||
		    json_integer_value(idx) != (json_int_t)(i + 1)) {
			rc = ergon_err_set(err, ERGON_EVERIFY,
					   "field repetitions[%zu]: not a repetition object with "
					   "index %zu",
					   i, i + 1);
			goto out;
		}
		views[i] = rep_view(r, rep);
		json_t *fi = NULL, *ii = NULL;
		struct ergon_err e2 = {0};
		if (views[i] == NULL) {
			rc = ergon_err_set(err, ERGON_ENOMEM, "out of memory");
			goto out;
		}
		rc = single_figures(views[i], pk, &fi, &ii, &e2);
		if (rc) {
			ergon_err_set(err, rc, "repetitions[%zu]: %s", i, e2.msg);
			goto out;
		}
		json_object_set(views[i], "figures", fi);
		json_array_append_new(figs, fi);
		tag_issues(issues, ii, i, n);
		json_decref(ii);
		const char *st = json_string_value(json_object_get(rep, "status"));
		completed += st != NULL && strcmp(st, "complete") == 0;
	}
	if (strcmp(status, "complete") != 0 || completed != n ||
	    (size_t)json_integer_value(planned) != n) {
		json_object_set_new(fig, "withheld",
				    json_sprintf("%zu of %lld planned repetitions completed (the "
						 "run is %s): each repetition's own figures are "
						 "given, the repeat statistics are withheld",
						 completed, (long long)json_integer_value(planned),
						 status));
		goto out;
	}
	json_t *per = json_object();
	json_object_set_new(fig, "repeat",
			    json_pack("{s:I, s:f, s:s, s:s, s:o}", "n", (json_int_t)n, "level",
				      ERGON_STATS_LEVEL, "mean_interval",
				      "mean -+ t(0.975, n-1) x sd / sqrt(n) (Student t)",
				      "median_interval",
				      "order statistics [x(k), x(n-k+1)], binomial coverage "
				      "(distribution-free)",
				      "figures", per));
	size_t nf;
	const struct ergon_run_figure *f = ergon_run_figures(&nf);
	for (size_t k = 0; k < nf; k++) {
		json_t *o = figure_stats(&f[k], views, n, err);
		if (o == NULL) {
			rc = err->code ? err->code : ERGON_ENOMEM;
			goto out;
		}
		/* Nested as the figures are (figures.repeat.figures.load.
		 * mean_power_w), so that a path reaches it. */
		char key[96];
		snprintf(key, sizeof key, "%s", f[k].key);
		char *dot = strchr(key, '.');
		json_t *parent = per;
		if (dot) {
			*dot = '\0';
			parent = json_object_get(per, key);
			if (parent == NULL) {
				parent = json_object();
				json_object_set_new(per, key, parent);
			}
		}
		json_object_set_new(parent, dot ? dot + 1 : key, o);
	}
	/* --trim-s with repetitions: the duty-cycle formulas applied to the
	 * averages over the repetitions of their inputs. */
	const json_t *trimj = ergon_jpath(views[0], "plan.trim_s");
	if (json_is_number(trimj)) {
		json_t *avg = NULL;
		if ((rc = repeat_duty(views, n, json_number_value(trimj), &avg, err)))
			goto out;
		json_object_set_new(json_object_get(fig, "repeat"), "duty_cycle", avg);
	}
out:
	for (size_t i = 0; views && i < n; i++)
		json_decref(views[i]);
	free(views);
	json_decref(figs);
	if (rc) {
		json_decref(fig);
		json_decref(issues);
		return rc;
	}
	*figures_out = fig;
	*issues_out = issues;
	return 0;
}

int ergon_report_compute_figures_packed(const json_t *r, struct ergon_jcs_stream_result *pk,
					json_t **figures_out, json_t **issues_out,
					struct ergon_err *err)
{
	if (json_object_get(r, "repetitions") != NULL)
		return repeated_figures(r, pk, figures_out, issues_out, err);
	return single_figures(r, pk, figures_out, issues_out, err);
}
