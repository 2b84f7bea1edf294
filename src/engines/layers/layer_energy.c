/* Energy per layer from a gate line and a layer-marker line
 * (ergon/layer_energy.h, docs/METHOD.md "Energy per layer").
 *
 * While the samples pass, every marker edge inside the first gate window
 * is kept with the cumulative energy at its place (the middle of the
 * sample it happened in: the sample before the first one showing the new
 * level) and the cumulative budget sums at the start of that sample. At
 * the end the edges are cut into inferences by time, the inferences with
 * the right number of edges folded by segment, short segments merged, and
 * every layer budgeted with the gated engine's budget code (issue 32). */
#include "ergon/layer_energy.h"

#include "ergon/select.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The most marker edges kept: each holds its cumulative budget sums. */
#define MAX_EDGES ((size_t)1 << 18)
/* Budget sums kept per range (rg_p_j, rg_v_vs, rg_q_c, rg_t_s, q_p2, q_t2). */
#define NSUM 6

struct edge {
	uint64_t k;	/* the first sample showing the new level */
	double t_s;	/* the middle of the sample before it */
	double e_j;	/* cumulative gate energy at that middle */
	double half_j;	/* half that sample's energy: the placement bound */
};

struct ergon_layers {
	struct ergon_layers_config cfg;
	struct ergon_rating rating;
	int rated;
	int nr; /* ranges */
	double dt_s;
	uint64_t k; /* samples seen */
	int in_gate, gate_seen, gate_done;
	int prev_marker;
	double prev_e_j;  /* the previous in-gate sample's energy */
	double prev_abs_a;
	double cum_e_j;	  /* energy from the first sample to the present one */
	double gate_e0_j; /* cum_e_j when the gate rose */
	double *cum;	  /* NSUM x nr: budget sums before the present sample */
	double *prev_cum; /* the same before the previous sample */
	struct edge *edges;
	size_t n_edges;
	double *sum_block; /* MAX_EDGES x NSUM x nr, grown */
	size_t sum_cap;	   /* edges the block holds */
	struct ergon_layers_result res;
	int finished;
};

int ergon_layers_new(const struct ergon_layers_config *cfg, struct ergon_layers **out,
		     struct ergon_err *err)
{
	*out = NULL;
	if (!(cfg->sample_rate_hz > 0) || !isfinite(cfg->sample_rate_hz))
		return ergon_err_set(err, ERGON_EUSAGE,
				     "layer energy: the sample rate %g Hz is not a rate; give the "
				     "recording's samples per second",
				     cfg->sample_rate_hz);
	if (cfg->segments < 1 || cfg->segments > ERGON_LAYERS_MAX_SEGMENTS)
		return ergon_err_set(err, ERGON_EUSAGE,
				     "layer energy: %zu marked segments per inference; 1..%d",
				     cfg->segments, ERGON_LAYERS_MAX_SEGMENTS);
	if (cfg->gate_bit > 7 || cfg->marker_bit > 7 || cfg->gate_bit == cfg->marker_bit)
		return ergon_err_set(err, ERGON_EUSAGE,
				     "layer energy: gate input %u and marker input %u: each 0..7 "
				     "and not the same input",
				     cfg->gate_bit, cfg->marker_bit);
	if (cfg->inferences > ERGON_LAYERS_MAX_INFERENCES)
		return ergon_err_set(err, ERGON_EUSAGE,
				     "layer energy: %llu inferences; at most %u are folded",
				     (unsigned long long)cfg->inferences,
				     ERGON_LAYERS_MAX_INFERENCES);
	struct ergon_layers *L = calloc(1, sizeof *L);
	if (L == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "layer energy: out of memory");
	L->cfg = *cfg;
	if (!(L->cfg.min_samples > 0))
		L->cfg.min_samples = ERGON_LAYERS_MIN_SAMPLES;
	if (!(L->cfg.period_tolerance > 0))
		L->cfg.period_tolerance = ERGON_LAYERS_PERIOD_TOL;
	L->rated = cfg->rating != NULL;
	if (L->rated)
		L->rating = *cfg->rating;
	else
		ergon_rating_init(&L->rating, ERGON_RATING_NONE);
	L->cfg.rating = NULL;
	L->nr = L->rating.n_ranges > 0 ? L->rating.n_ranges : 1;
	L->dt_s = 1.0 / cfg->sample_rate_hz;
	L->cum = calloc((size_t)(2 * NSUM * L->nr), sizeof(double));
	L->edges = calloc(MAX_EDGES, sizeof *L->edges);
	if (L->cum == NULL || L->edges == NULL) {
		ergon_layers_free(L);
		return ergon_err_set(err, ERGON_ENOMEM, "layer energy: out of memory");
	}
	L->prev_cum = L->cum + NSUM * L->nr;
	L->res.first_dropped = -1;
	*out = L;
	return 0;
}

int ergon_layers_set_inferences(struct ergon_layers *L, uint64_t inferences,
				struct ergon_err *err)
{
	if (L->finished)
		return ergon_err_set(err, ERGON_EUSAGE,
				     "layer energy: the inference count given after finish");
	if (inferences > ERGON_LAYERS_MAX_INFERENCES)
		return ergon_err_set(err, ERGON_EUSAGE,
				     "layer energy: %llu inferences; at most %u are folded",
				     (unsigned long long)inferences, ERGON_LAYERS_MAX_INFERENCES);
	L->cfg.inferences = inferences;
	return 0;
}

void ergon_layers_free(struct ergon_layers *L)
{
	if (L == NULL)
		return;
	free(L->cum);
	free(L->edges);
	free(L->sum_block);
	free(L->res.layers);
	ergon_issue_list_cleanup(&L->res.issues);
	free(L);
}

static int add_edge(struct ergon_layers *L, struct ergon_err *err)
{
	size_t w = (size_t)(NSUM * L->nr);
	if (L->n_edges >= MAX_EDGES)
		return ergon_err_set(err, ERGON_ETOOBIG,
				     "layer energy: more than %zu marker edges in the gate "
				     "window; shorten the window (fewer inferences)",
				     MAX_EDGES);
	if (L->n_edges >= L->sum_cap) {
		size_t cap = L->sum_cap ? 2 * L->sum_cap : 1024;
		double *b = realloc(L->sum_block, cap * w * sizeof(double));
		if (b == NULL)
			return ergon_err_set(err, ERGON_ENOMEM, "layer energy: out of memory");
		L->sum_block = b;
		L->sum_cap = cap;
	}
	struct edge *e = &L->edges[L->n_edges];
	e->k = L->k;
	e->t_s = ((double)L->k - 0.5) * L->dt_s;
	e->half_j = 0.5 * L->prev_e_j;
	e->e_j = L->cum_e_j - L->prev_e_j + e->half_j;
	/* The cumulative budget sums at that sample's start, by edge index
	 * (the block may move as it grows). */
	memcpy(L->sum_block + L->n_edges * w, L->prev_cum, w * sizeof(double));
	L->n_edges++;
	return 0;
}

int ergon_layers_push(struct ergon_layers *L, const float *current_a, const float *voltage_v,
		      double voltage_const_v, const uint8_t *digital, size_t n,
		      struct ergon_err *err)
{
	if (L->finished)
		return ergon_err_set(err, ERGON_EUSAGE, "layer energy: push after finish");
	size_t w = (size_t)(NSUM * L->nr);
	for (size_t j = 0; j < n; j++, L->k++) {
		double i = current_a[j];
		double v = voltage_v != NULL ? voltage_v[j] : voltage_const_v;
		if (!isfinite(i) || !isfinite(v))
			return ergon_err_set(err, ERGON_EPARSE,
					     "layer energy: sample %llu: %s is not a number; the "
					     "method needs every sample inside the gate",
					     (unsigned long long)L->k,
					     isfinite(i) ? "the voltage" : "the current");
		int gate = (digital[j] >> L->cfg.gate_bit) & 1u;
		int marker = (digital[j] >> L->cfg.marker_bit) & 1u;
		if (L->gate_done)
			continue;
		/* An edge is a change of the marker between two samples of which
		 * the later is in the gate, or is the first after it: an edge
		 * within a sample of the gate's rise or fall counts. */
		if (L->k > 0 && marker != L->prev_marker && (gate || L->in_gate)) {
			int rc = add_edge(L, err);
			if (rc)
				return rc;
		}
		L->prev_marker = marker;
		if (gate && !L->in_gate) {
			L->in_gate = 1;
			L->gate_seen = 1;
			L->res.gate_start_s = (double)L->k * L->dt_s;
			L->gate_e0_j = L->cum_e_j;
		} else if (!gate && L->in_gate) {
			L->in_gate = 0;
			L->gate_done = 1;
			L->res.gate_end_s = (double)L->k * L->dt_s;
			L->res.gate_energy_j = L->cum_e_j - L->gate_e0_j;
		}
		/* This sample into the sums: its energy and the budgets' view
		 * (range by the larger |i| of it and the one before, as the
		 * gated engine does). */
		double p = i * v, e = p * L->dt_s;
		int r = L->rated ? ergon_rating_range_for(&L->rating, fmax(fabs(i), L->prev_abs_a))
				 : 0;
		if (r < 0 || r >= L->nr)
			r = L->nr - 1;
		memcpy(L->prev_cum, L->cum, w * sizeof(double));
		double *c = L->cum + NSUM * r;
		c[0] += fabs(p) * L->dt_s;
		c[1] += fabs(v) * L->dt_s;
		c[2] += fabs(i) * L->dt_s;
		c[3] += L->dt_s;
		c[4] += (fabs(v) * L->dt_s) * (fabs(v) * L->dt_s);
		c[5] += L->dt_s * L->dt_s;
		L->prev_e_j = e;
		L->cum_e_j += e;
		L->prev_abs_a = fabs(i);
	}
	L->res.samples = L->k;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static const char *sample_name(const struct ergon_layers *L)
{
	return L->cfg.sample_name != NULL ? L->cfg.sample_name : "sample";
}

/* The budget of `count` inferences' energy between edges a[i] and b[i]
 * (sum e_j), as the gated engine budgets a gated window, then per
 * inference (/ count) with the spread over inferences added. */
static void budget_span(const struct ergon_layers *L, const size_t *a, const size_t *b,
			size_t count, const double *per_inf, double mean_j, struct ergon_budget *out)
{
	struct ergon_gated_result fake;
	memset(&fake, 0, sizeof fake);
	fake.raw = 1;
	fake.sample_rate_hz = L->cfg.sample_rate_hz;
	fake.rating = L->rated ? &L->rating : NULL;
	struct ergon_budget_sums *s = &fake.gated_sums;
	size_t w = (size_t)(NSUM * L->nr);
	double e = 0, t = 0, hs = 0, he = 0;
	for (size_t i = 0; i < count; i++) {
		const double *sa = L->sum_block + a[i] * w, *sb = L->sum_block + b[i] * w;
		for (int r = 0; r < L->nr; r++) {
			s->rg_p_j[r] += sb[NSUM * r + 0] - sa[NSUM * r + 0];
			s->rg_v_vs[r] += sb[NSUM * r + 1] - sa[NSUM * r + 1];
			s->rg_q_c[r] += sb[NSUM * r + 2] - sa[NSUM * r + 2];
			s->rg_t_s[r] += sb[NSUM * r + 3] - sa[NSUM * r + 3];
			s->q_p2[r] += sb[NSUM * r + 4] - sa[NSUM * r + 4];
			s->q_t2[r] += sb[NSUM * r + 5] - sa[NSUM * r + 5];
		}
		e += L->edges[b[i]].e_j - L->edges[a[i]].e_j;
		t += L->edges[b[i]].t_s - L->edges[a[i]].t_s;
		hs += L->edges[a[i]].half_j;
		he += L->edges[b[i]].half_j;
	}
	/* Each edge within half a sample of its place; the same edge of every
	 * inference may sit at the same phase of the sample clock, so the
	 * inferences' placements add linearly (the start and the end edge
	 * are independent). */
	s->edges = 2 * count;
	s->edge_p2_j2 = hs * hs + he * he;
	fake.gated.energy_j = e;
	fake.gated.integral_s = t;
	fake.gated.duration_s = t;
	ergon_gated_budget(&fake, 0, ERGON_PF_ENERGY, fake.rating, out);
	for (size_t i = 0; i < out->n; i++)
		if (strcmp(out->term[i].name, "gate edges") == 0) {
			snprintf(out->term[i].name, sizeof out->term[i].name, "%s",
				 "marker edges");
			snprintf(out->term[i].source, sizeof out->term[i].source,
				 "each of the layer's two marker edges within half a %s "
				 "(%.6g s) of the middle of the %s it fell in, at that "
				 "%s's energy; added linearly over the %zu inferences",
				 sample_name(L), L->dt_s, sample_name(L), sample_name(L), count);
		}
	ergon_budget_close(out);
	ergon_budget_scale(out, 1.0 / (double)count, "J");
	out->value = mean_j;
	if (count > 1) {
		double ss = 0;
		for (size_t i = 0; i < count; i++)
			ss += (per_inf[i] - mean_j) * (per_inf[i] - mean_j);
		double sd = sqrt(ss / (double)(count - 1));
		ergon_budget_add(out, "spread over inferences", sd / sqrt((double)count),
				 ERGON_DIST_STAT, 0,
				 "the standard error of the layer's energy over %zu inferences "
				 "(standard deviation %.6g J)",
				 count, sd);
	}
	ergon_budget_close(out);
}

/* Cut the edges into inferences by time; fills starts[] (edge index of
 * each used inference's first edge) and returns how many were used. */
static size_t find_inferences(struct ergon_layers *L, size_t *starts)
{
	struct ergon_layers_result *R = &L->res;
	size_t S = L->cfg.segments, M = L->n_edges;
	uint64_t N = L->cfg.inferences > 0 ? L->cfg.inferences : (M - 1 + S / 2) / S;
	R->inferences_expected = N;
	if (N == 0)
		return 0;
	double P = (L->edges[M - 1].t_s - L->edges[0].t_s) / (double)N;
	R->period_s = P;
	double tol = L->cfg.period_tolerance * P;
	if (tol < 2.0 * L->dt_s)
		tol = 2.0 * L->dt_s;
	size_t used = 0, s = 0;
	uint64_t found = 0;
	while (s + 1 < M && found < N) {
		double target = L->edges[s].t_s + P;
		size_t j = s + 1;
		while (j + 1 < M && L->edges[j + 1].t_s <= target)
			j++;
		if (j + 1 < M && fabs(L->edges[j + 1].t_s - target) < fabs(L->edges[j].t_s - target))
			j++;
		if (fabs(L->edges[j].t_s - target) > tol)
			break; /* no edge where the next inference should start */
		found++;
		if (j - s == S) {
			starts[used++] = s;
		} else {
			if (R->inferences_dropped == 0) {
				R->first_dropped = (int64_t)(found - 1);
				R->first_dropped_edges = j - s;
			}
			R->inferences_dropped++;
		}
		s = j;
	}
	R->inferences_used = used;
	R->inferences_lost = N > found ? N - found : 0;
	/* What the gate held outside the found inferences' marked spans. */
	if (found > 0) {
		double marked = L->edges[s].e_j - L->edges[0].e_j;
		R->unmarked_j = (R->gate_energy_j - marked) / (double)found;
	}
	return used;
}

/* Group the segments into layers of at least min_samples (median). */
static size_t plan_units(const struct ergon_layers *L, const double *med_samples, size_t *ufirst,
			 size_t *ulast)
{
	size_t S = L->cfg.segments, n = 0;
	for (size_t a = 0; a < S;) {
		size_t b = a;
		double span = med_samples[a];
		while (span < L->cfg.min_samples && b + 1 < S)
			span += med_samples[++b];
		if (span < L->cfg.min_samples && n > 0) {
			ulast[n - 1] = b; /* a short tail joins the layer before */
		} else {
			ufirst[n] = a;
			ulast[n] = b;
			n++;
		}
		a = b + 1;
	}
	return n;
}

static void median_ci(double *v, size_t n, double *med, double *lo, double *hi)
{
	qsort(v, n, sizeof *v, cmp_double);
	*med = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
	/* Distribution-free: the order statistics around the median that hold
	 * it with about 95 % (binomial, normal approximation); all of them
	 * for few inferences. */
	double h = ERGON_LAYERS_CI_Z * sqrt((double)n);
	double l = floor((double)n / 2.0 - h), u = ceil((double)n / 2.0 + 1.0 + h);
	*lo = n < ERGON_LAYERS_CI_MIN_N || l < 1 ? v[0] : v[(size_t)l - 1];
	*hi = n < ERGON_LAYERS_CI_MIN_N || u > (double)n ? v[n - 1] : v[(size_t)u - 1];
}

static int fold(struct ergon_layers *L, const size_t *starts, size_t K, struct ergon_err *err)
{
	struct ergon_layers_result *R = &L->res;
	size_t S = L->cfg.segments;
	int rc = 0;
	double *med = calloc(S, sizeof *med);
	double *tmp = calloc(K, sizeof *tmp);
	double *per = calloc(K, sizeof *per);
	size_t *ufirst = calloc(S, sizeof *ufirst), *ulast = calloc(S, sizeof *ulast);
	size_t *ea = calloc(K, sizeof *ea), *eb = calloc(K, sizeof *eb);
	if (!med || !tmp || !per || !ufirst || !ulast || !ea || !eb) {
		rc = ergon_err_set(err, ERGON_ENOMEM, "layer energy: out of memory");
		goto out;
	}
	for (size_t m = 0; m < S; m++) {
		for (size_t i = 0; i < K; i++)
			tmp[i] = (double)(L->edges[starts[i] + m + 1].k - L->edges[starts[i] + m].k);
		med[m] = ergon_select_kth(tmp, K, (K + 1) / 2); /* k counts from 1 */
	}
	size_t U = plan_units(L, med, ufirst, ulast);
	R->layers = calloc(U, sizeof *R->layers);
	if (R->layers == NULL) {
		rc = ergon_err_set(err, ERGON_ENOMEM, "layer energy: out of memory");
		goto out;
	}
	R->n_layers = U;
	double sum = 0;
	for (size_t u = 0; u < U; u++) {
		struct ergon_layer_figures *f = &R->layers[u];
		f->first = ufirst[u];
		f->last = ulast[u];
		f->merged = f->last > f->first;
		f->inferences = K;
		double e = 0, d = 0, smp = 0;
		f->energy_min_j = INFINITY;
		f->energy_max_j = -INFINITY;
		for (size_t i = 0; i < K; i++) {
			ea[i] = starts[i] + f->first;
			eb[i] = starts[i] + f->last + 1;
			per[i] = L->edges[eb[i]].e_j - L->edges[ea[i]].e_j;
			e += per[i];
			d += L->edges[eb[i]].t_s - L->edges[ea[i]].t_s;
			f->energy_min_j = fmin(f->energy_min_j, per[i]);
			f->energy_max_j = fmax(f->energy_max_j, per[i]);
		}
		for (size_t m = f->first; m <= f->last; m++)
			smp += med[m];
		f->samples = smp;
		f->energy_mean_j = e / (double)K;
		f->duration_s = d / (double)K;
		f->power_w = f->duration_s > 0 ? f->energy_mean_j / f->duration_s : NAN;
		budget_span(L, ea, eb, K, per, f->energy_mean_j, &f->budget);
		memcpy(tmp, per, K * sizeof *tmp);
		median_ci(tmp, K, &f->energy_median_j, &f->median_lo_j, &f->median_hi_j);
		sum += f->energy_mean_j;
	}
	R->sum_j = sum;
	for (size_t u = 0; u < U; u++)
		R->layers[u].share = sum != 0 ? R->layers[u].energy_mean_j / sum : NAN;
	/* The whole marked inference: its inner edges cancel in the sum. */
	for (size_t i = 0; i < K; i++) {
		ea[i] = starts[i];
		eb[i] = starts[i] + S;
		per[i] = L->edges[eb[i]].e_j - L->edges[ea[i]].e_j;
	}
	budget_span(L, ea, eb, K, per, sum, &R->sum_budget);
	for (size_t u = 0; u < U; u++) {
		const struct ergon_layer_figures *f = &R->layers[u];
		if (!f->merged)
			continue;
		struct ergon_issue_field fl[] = {
		    ERGON_ISSUE_INT("first_segment", f->first),
		    ERGON_ISSUE_INT("last_segment", f->last),
		    ERGON_ISSUE_REAL("median_samples", f->samples),
		    ERGON_ISSUE_REAL("min_samples", L->cfg.min_samples)};
		ergon_issue_list_add(
		    &R->issues, "power.layers_unresolved", fl, 4,
		    "marked segments %zu..%zu each span fewer than %g %ss at %g Hz: "
		    "measured together (%g %ss), not one by one",
		    f->first, f->last, L->cfg.min_samples, sample_name(L), L->cfg.sample_rate_hz,
		    f->samples, sample_name(L));
	}
out:
	free(med);
	free(tmp);
	free(per);
	free(ufirst);
	free(ulast);
	free(ea);
	free(eb);
	return rc;
}

int ergon_layers_finish(struct ergon_layers *L, const struct ergon_layers_result **out,
			struct ergon_err *err)
{
	struct ergon_layers_result *R = &L->res;
	*out = NULL;
	if (L->finished) {
		*out = R;
		return 0;
	}
	L->finished = 1;
	R->sample_rate_hz = L->cfg.sample_rate_hz;
	R->min_samples = L->cfg.min_samples;
	R->segments = L->cfg.segments;
	R->edges = L->n_edges;
	if (L->in_gate) {
		R->gate_end_s = (double)L->k * L->dt_s;
		R->gate_energy_j = L->cum_e_j - L->gate_e0_j;
	}
	if (!L->gate_seen) {
		struct ergon_issue_field f[] = {ERGON_ISSUE_INT("gate_input", L->cfg.gate_bit)};
		ergon_issue_list_add(&R->issues, "power.layers_no_gate", f, 1,
				     "the gate (input %u) never rose: no window to fold layers in",
				     L->cfg.gate_bit);
		*out = R;
		return R->issues.oom ? ergon_err_set(err, ERGON_ENOMEM, "out of memory") : 0;
	}
	size_t *starts = NULL;
	size_t K = 0;
	if (L->n_edges >= 2) {
		starts = calloc(L->n_edges, sizeof *starts);
		if (starts == NULL)
			return ergon_err_set(err, ERGON_ENOMEM, "layer energy: out of memory");
		K = find_inferences(L, starts);
	} else {
		R->inferences_expected = L->cfg.inferences;
		R->inferences_lost = L->cfg.inferences;
	}
	int rc = 0;
	if (R->inferences_dropped > 0 || R->inferences_lost > 0) {
		struct ergon_issue_field f[] = {
		    ERGON_ISSUE_INT("dropped", R->inferences_dropped),
		    ERGON_ISSUE_INT("lost", R->inferences_lost),
		    ERGON_ISSUE_INT("used", R->inferences_used),
		    ERGON_ISSUE_INT("expected", R->inferences_expected),
		    ERGON_ISSUE_INT("first_dropped", R->first_dropped),
		    ERGON_ISSUE_INT("first_dropped_edges", R->first_dropped_edges),
		    ERGON_ISSUE_INT("segments", L->cfg.segments)};
		ergon_issue_list_add(
		    &R->issues, "power.layers_inferences_dropped", f, 7,
		    "%llu of %llu inferences left out of the layer figures: %llu showed another "
		    "number of marker edges than the %zu marked layers (the first, inference "
		    "%lld, showed %llu), %llu were not found one inference period after the "
		    "last",
		    (unsigned long long)(R->inferences_dropped + R->inferences_lost),
		    (unsigned long long)R->inferences_expected,
		    (unsigned long long)R->inferences_dropped, L->cfg.segments,
		    (long long)R->first_dropped, (unsigned long long)R->first_dropped_edges,
		    (unsigned long long)R->inferences_lost);
	}
	if (K == 0) {
		struct ergon_issue_field f[] = {ERGON_ISSUE_INT("edges", L->n_edges),
						ERGON_ISSUE_INT("segments", L->cfg.segments)};
		ergon_issue_list_add(&R->issues, "power.layers_none", f, 2,
				     "no inference showed its %zu marker edges (%zu edges in the "
				     "gate): no layer figures",
				     L->cfg.segments, L->n_edges);
	} else {
		rc = fold(L, starts, K, err);
	}
	free(starts);
	if (rc == 0 && R->issues.oom)
		rc = ergon_err_set(err, ERGON_ENOMEM, "layer energy: out of memory");
	*out = R;
	return rc;
}

int ergon_layers_check_sum(const struct ergon_layers_result *res, double epi_j,
			   const struct ergon_budget *epi_budget, struct ergon_issue_list *issues)
{
	if (res->n_layers == 0 || !isfinite(epi_j))
		return 0;
	double u1 = res->sum_budget.U_known;
	double u2 = epi_budget != NULL ? epi_budget->U_known : 0.0;
	if (!isfinite(u1))
		u1 = 0;
	if (!isfinite(u2))
		u2 = 0;
	double tol = sqrt(u1 * u1 + u2 * u2);
	double diff = res->sum_j - epi_j;
	if (fabs(diff) <= tol)
		return 0;
	struct ergon_issue_field f[] = {
	    ERGON_ISSUE_REAL("layers_sum_j", res->sum_j),
	    ERGON_ISSUE_REAL("layers_sum_U_j", u1),
	    ERGON_ISSUE_REAL("energy_per_inference_j", epi_j),
	    ERGON_ISSUE_REAL("energy_per_inference_U_j", u2),
	    ERGON_ISSUE_REAL("unmarked_j", res->unmarked_j)};
	ergon_issue_list_add(issues, "power.layers_sum_mismatch", f, 5,
			     "the layers sum to %.6g J per inference, the gate's energy per "
			     "inference is %.6g J: %.3g J apart, beyond their combined expanded "
			     "uncertainty %.3g J (energy in the gate outside the marked spans: "
			     "%.3g J per inference)",
			     res->sum_j, epi_j, diff, tol, res->unmarked_j);
	return 1;
}

void ergon_layers_plan(const double *layer_s, size_t n, double rate_hz, double min_samples,
		       uint32_t mask[8], size_t *seg_first, size_t *segments)
{
	memset(mask, 0, 8 * sizeof *mask);
	*segments = 0;
	if (!(min_samples > 0))
		min_samples = ERGON_LAYERS_MIN_SAMPLES;
	double need_s = min_samples / rate_hz;
	size_t nseg = 0;
	double open_s = 0; /* the open segment's length */
	for (size_t i = 0; i < n && i < 256; i++) {
		if (nseg == 0 || open_s >= need_s) {
			if (seg_first != NULL)
				seg_first[nseg] = i;
			nseg++;
			mask[i / 32] |= 1u << (i % 32);
			open_s = 0;
		}
		open_s += layer_s[i] > 0 ? layer_s[i] : 0;
	}
	for (size_t i = 256; i < n; i++)
		open_s += layer_s[i] > 0 ? layer_s[i] : 0;
	if (nseg > 1 && open_s < need_s) {
		/* The last segment is short: its mark goes, it joins the one
		 * before. */
		size_t last = seg_first != NULL ? seg_first[nseg - 1] : 0;
		if (seg_first == NULL)
			for (size_t i = 0; i < n && i < 256; i++)
				if (mask[i / 32] >> (i % 32) & 1u)
					last = i;
		mask[last / 32] &= ~(1u << (last % 32));
		nseg--;
	}
	*segments = nseg;
}
