/* The gated-window engine: edges, glitch rejection, windows and their
 * figures from statistics packets or raw samples (docs/internals/gated.md). */
#include "ergon/gated.h"

#include "ergon/plausible.h"
#include "ergon/select.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A distribution keeps one double per packet; this bounds it (16 Mi packets
 * is 4.6 hours at 1 kHz). Beyond it the percentiles use the first packets
 * only; `packets` < `packets_total` says so (power.distribution_truncated). */
#define DVEC_MAX ERGON_GATED_DIST_MAX
#define WINDOWS_MAX (1u << 20)

struct dvec {
	double *v;
	size_t n, cap;
	size_t max;	  /* 0 = DVEC_MAX */
	uint64_t dropped; /* values past max, not kept */
};

struct acc {
	double sum_i, sum_v, sum_p; /* raw: sample sums; packets: time-weighted sums */
	uint64_t n;		    /* raw samples used */
	double energy_j, charge_c, integral_s;
	double peak_i;
	int have_peak;
	int from_acc;
	struct ergon_sign_gaps sg;    /* backwards through the load; packet holes */
	struct ergon_accum_xcheck xc; /* accumulator cross-check (accum_check.c) */
	struct dvec di, dp;
	struct ergon_budget_sums bs; /* the uncertainty budgets' sums */
	/* The first and last packet (or raw run) of a window: their power and
	 * current and time step, for the gate-edge term. */
	int have_first;
	double first_p, first_i, first_dt, last_p, last_i, last_dt;
};

struct ergon_gated {
	struct ergon_gated_config cfg;
	struct ergon_gate_marker *markers;
	uint64_t *mk_start, *mk_end; /* raw: marker bounds as sample indexes */
	size_t mk_pos;
	int mode; /* 0 unset, 1 packets, 2 raw */
	double fs;
	uint64_t spp; /* samples per packet */
	uint64_t index;
	int level;	  /* gate level of the previous sample/packet */
	int initial_high; /* inside a gate that was high from the start */
	struct {
		uint64_t start, n, valid;
		double si, sp;
		int all_high;
	} pkt;
	int win_active;
	uint64_t win_r;
	double win_t0;
	struct acc win, whole;
	struct acc gated; /* union of the qualifying windows */
	struct ergon_window_figures *wins;
	size_t nwin, capwin;
	struct ergon_gated_result res;
	/* packet mode */
	uint64_t pkt_index;
	double prev_t_end, prev_energy, prev_charge;
	int prev_acc;
	double gated_span_s; /* edge-to-edge total of the qualifying windows */
	int finished;
	struct ergon_rating rating; /* cfg.rating copied (n_ranges 0: one range) */
	double prev_peak_a;	    /* the previous packet's largest |current| */
	uint64_t prev_sample_id;
	double pkt_peak_a; /* raw: the largest |current| of the packet being built */
};

static int dvec_push(struct dvec *d, double x)
{
	size_t max = d->max ? d->max : DVEC_MAX;
	if (d->n >= max) {
		d->dropped++;
		return 0;
	}
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 1024;
		if (cap > max)
			cap = max;
		double *v = realloc(d->v, cap * sizeof(double));
		if (v == NULL)
			return ERGON_ENOMEM;
		d->v = v;
		d->cap = cap;
	}
	d->v[d->n++] = x;
	return 0;
}

static void acc_reset(struct acc *a)
{
	struct dvec di = a->di, dp = a->dp;
	memset(a, 0, sizeof(*a));
	di.n = 0;
	dp.n = 0;
	di.dropped = 0;
	dp.dropped = 0;
	a->di = di;
	a->dp = dp;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Nearest rank: rank = ceil(p * n / 100), value = sorted[rank - 1]. */
static size_t rank_of(size_t n, unsigned p)
{
	size_t rank = (size_t)(((uint64_t)p * n + 99u) / 100u);
	return rank < 1 ? 1 : rank;
}

static double nearest_rank(const double *sorted, size_t n, unsigned p)
{
	return sorted[rank_of(n, p) - 1];
}

/* The nearest-rank p50, p95 and p99 of v[0..n) (n >= 1), reordering v:
 * by exact selection (p99, then p95 and p50 each in the part below the
 * one before), or, when a value is NaN (which has no place in an order),
 * by the sort as before. */
static void percentiles(double *v, size_t n, double *p50, double *p95, double *p99)
{
	int nan = 0;
	for (size_t i = 0; i < n; i++)
		nan |= isnan(v[i]);
	if (nan) {
		qsort(v, n, sizeof(double), cmp_double);
		*p50 = nearest_rank(v, n, 50);
		*p95 = nearest_rank(v, n, 95);
		*p99 = nearest_rank(v, n, 99);
		return;
	}
	size_t r99 = rank_of(n, 99), r95 = rank_of(n, 95), r50 = rank_of(n, 50);
	*p99 = ergon_select_kth(v, n, r99);
	*p95 = ergon_select_kth(v, r99, r95);
	*p50 = ergon_select_kth(v, r95, r50);
}

/* The range a span with largest |current| peak_a was taken in (the
 * previous packet's peak counts too: the instrument may not have ranged
 * down yet). */
static int range_of(const struct ergon_gated *g, double peak_a)
{
	double p = peak_a > g->prev_peak_a ? peak_a : g->prev_peak_a;
	return ergon_rating_range_for(&g->rating, p);
}

/* One span into the budget sums: span_s of power |p| mean abs_p_w,
 * voltage |v| abs_v_v, current |i| abs_i_a, over n_samples samples, in
 * range r; p_res_w / i_res_a the recorded rounding (0: exact). */
static void bs_add(struct acc *a, int r, double span_s, double abs_p_w, double abs_v_v,
		   double abs_i_a, double n_samples, double p_res_w, double i_res_a)
{
	struct ergon_budget_sums *b = &a->bs;
	if (n_samples < 1)
		n_samples = 1;
	b->rg_p_j[r] += abs_p_w * span_s;
	b->rg_v_vs[r] += abs_v_v * span_s;
	b->rg_q_c[r] += abs_i_a * span_s;
	b->rg_t_s[r] += span_s;
	b->q_p2[r] += (abs_v_v * span_s) * (abs_v_v * span_s) / n_samples;
	b->q_t2[r] += span_s * span_s / n_samples;
	b->rec_p_j += span_s * p_res_w;
	b->rec_i_c += span_s * i_res_a;
	if (!a->have_first) {
		a->have_first = 1;
		a->first_p = abs_p_w;
		a->first_i = abs_i_a;
		a->first_dt = span_s / n_samples;
	}
	a->last_p = abs_p_w;
	a->last_i = abs_i_a;
	a->last_dt = span_s / n_samples;
}

static void bs_merge(struct ergon_budget_sums *u, const struct ergon_budget_sums *w)
{
	for (int r = 0; r < ERGON_RATING_MAX_RANGES; r++) {
		u->rg_p_j[r] += w->rg_p_j[r];
		u->rg_v_vs[r] += w->rg_v_vs[r];
		u->rg_q_c[r] += w->rg_q_c[r];
		u->rg_t_s[r] += w->rg_t_s[r];
		u->q_p2[r] += w->q_p2[r];
		u->q_t2[r] += w->q_t2[r];
	}
	u->rec_p_j += w->rec_p_j;
	u->rec_i_c += w->rec_i_c;
	u->edge_p2_j2 += w->edge_p2_j2;
	u->edge_i2_c2 += w->edge_i2_c2;
	u->edges += w->edges;
}

static void figures_from(struct ergon_window_figures *w, struct acc *a)
{
	w->energy_j = a->energy_j;
	w->charge_c = a->charge_c;
	w->integral_s = a->integral_s;
	w->samples = a->n;
	w->from_accumulator = a->from_acc;
	w->xcheck = a->xc;
	w->sg = a->sg;
	w->avg_current_a = a->integral_s > 0 ? a->charge_c / a->integral_s : NAN;
	w->avg_power_w = a->integral_s > 0 ? a->energy_j / a->integral_s : NAN;
	w->peak_current_a = a->have_peak ? a->peak_i : NAN;
	w->avg_voltage_v = NAN;
	if (a->n > 0)
		w->avg_voltage_v = a->sum_v / (double)a->n;
	else if (a->integral_s > 0)
		w->avg_voltage_v = a->sum_v / a->integral_s;
	w->packets = a->di.n;
	w->packets_total = a->di.n + a->di.dropped;
	w->has_distribution = a->di.n > 0;
	if (w->has_distribution) {
		percentiles(a->di.v, a->di.n, &w->median_current_a, &w->p95_current_a,
			    &w->p99_current_a);
		percentiles(a->dp.v, a->dp.n, &w->median_power_w, &w->p95_power_w, &w->p99_power_w);
	}
}

int ergon_gated_new(const struct ergon_gated_config *cfg, struct ergon_gated **out,
		    struct ergon_err *err)
{
	*out = NULL;
	struct ergon_gated *g = calloc(1, sizeof(*g));
	if (g == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "gated engine: out of memory");
	g->cfg = *cfg;
	if (cfg->rating)
		g->rating = *cfg->rating;
	else
		ergon_rating_init(&g->rating, ERGON_RATING_NONE);
	g->cfg.rating = NULL;
	if (!(g->cfg.stats_rate_hz > 0))
		g->cfg.stats_rate_hz = ERGON_GATED_RAW_RATE_DEFAULT_HZ;
	if (!(g->cfg.min_window_s > 0))
		g->cfg.min_window_s = ERGON_GATE_MIN_WINDOW_S;
	struct acc *accs[3] = {&g->win, &g->whole, &g->gated};
	for (size_t k = 0; k < 3; k++) {
		accs[k]->di.max = cfg->distribution_max;
		accs[k]->dp.max = cfg->distribution_max;
	}
	if (g->cfg.sync_input_index > 31) {
		free(g);
		return ergon_err_set(err, ERGON_ERANGE,
				     "sync_input_index %u: digital inputs are 0..31 (INPUT0 = 0)",
				     cfg->sync_input_index);
	}
	if (cfg->marker_count > 0) {
		g->markers = calloc(cfg->marker_count, sizeof(*g->markers));
		if (g->markers == NULL) {
			free(g);
			return ergon_err_set(err, ERGON_ENOMEM, "gated engine: out of memory");
		}
		for (size_t i = 0; i < cfg->marker_count; i++) {
			const struct ergon_gate_marker *m = &cfg->markers[i];
			if (!isfinite(m->start_s) || !isfinite(m->end_s) || m->start_s < 0 ||
			    m->end_s <= m->start_s ||
			    (i > 0 && m->start_s < cfg->markers[i - 1].end_s)) {
				free(g->markers);
				free(g);
				return ergon_err_set(
				    err, ERGON_EPARSE,
				    "gate marker %zu [%g, %g): markers must be finite, "
				    "start >= 0, end > start, sorted and not overlapping",
				    i + 1, m->start_s, m->end_s);
			}
			g->markers[i] = *m;
		}
		g->cfg.markers = g->markers;
		g->res.gate_source = 2;
	} else {
		g->res.gate_source = 1;
	}
	g->res.stats_period_s = 1.0 / g->cfg.stats_rate_hz;
	*out = g;
	return 0;
}

void ergon_gated_free(struct ergon_gated *g)
{
	if (g == NULL)
		return;
	free(g->markers);
	free(g->mk_start);
	free(g->mk_end);
	free(g->win.di.v);
	free(g->win.dp.v);
	free(g->whole.di.v);
	free(g->whole.dp.v);
	free(g->gated.di.v);
	free(g->gated.dp.v);
	free(g->wins);
	free(g);
}

static int add_window(struct ergon_gated *g, const struct ergon_window_figures *w,
		      struct ergon_err *err)
{
	if (g->nwin == g->capwin) {
		if (g->capwin >= WINDOWS_MAX)
			return ergon_err_set(err, ERGON_ETOOBIG,
					     "more than %u gate windows; split the recording",
					     WINDOWS_MAX);
		size_t cap = g->capwin ? g->capwin * 2 : 8;
		struct ergon_window_figures *v = realloc(g->wins, cap * sizeof(*v));
		if (v == NULL)
			return ergon_err_set(err, ERGON_ENOMEM, "gated engine: out of memory");
		g->wins = v;
		g->capwin = cap;
	}
	g->wins[g->nwin++] = *w;
	return 0;
}

static void raw_integrals(struct acc *a, double fs, uint64_t span_samples);

/* A sample or packet that ran backwards through the load (its power is
 * negative while its current is beyond the noise of any meter), at t_s with
 * load-direction current i_a. */
static void note_reverse(struct acc *a, double t_s, double i_a)
{
	struct ergon_sign_gaps *s = &a->sg;
	if (s->reverse_n++ == 0 || i_a < s->reverse_min_a)
		s->reverse_min_a = i_a;
	if (s->reverse_n == 1)
		s->reverse_first_s = t_s;
}

/* A hole of gap_s between packets, starting at at_s. */
static void note_gap(struct acc *a, double at_s, double gap_s)
{
	struct ergon_sign_gaps *s = &a->sg;
	s->gap_s += gap_s;
	if (gap_s > s->gap_max_s) {
		s->gap_max_s = gap_s;
		s->gap_max_at_s = at_s;
	}
}

/* The union of the windows: their reversals and holes together. */
static void merge_sign(struct ergon_sign_gaps *u, const struct ergon_sign_gaps *w)
{
	if (w->reverse_n > 0) {
		if (u->reverse_n == 0 || w->reverse_min_a < u->reverse_min_a)
			u->reverse_min_a = w->reverse_min_a;
		if (u->reverse_n == 0)
			u->reverse_first_s = w->reverse_first_s;
		u->reverse_n += w->reverse_n;
	}
	u->gap_s += w->gap_s;
	if (w->gap_max_s > u->gap_max_s) {
		u->gap_max_s = w->gap_max_s;
		u->gap_max_at_s = w->gap_max_at_s;
	}
}

static void note_glitch(struct ergon_gated *g, double start_s, double duration_s)
{
	g->res.short_gate_pulses_ignored++;
	if (g->res.glitch_kept < ERGON_GATED_GLITCH_KEEP) {
		g->res.glitches[g->res.glitch_kept].start_s = start_s;
		g->res.glitches[g->res.glitch_kept].duration_s = duration_s;
		g->res.glitch_kept++;
	}
}

/* The gate fell: a window if it lasted min_window_s, else a glitch. */
static int close_window(struct ergon_gated *g, double end_s, uint64_t end_index,
			struct ergon_err *err)
{
	g->win_active = 0;
	double dur = end_s - g->win_t0;
	if (dur < g->cfg.min_window_s) {
		note_glitch(g, g->win_t0, dur);
		return 0;
	}
	struct ergon_window_figures w;
	memset(&w, 0, sizeof(w));
	w.start_s = g->win_t0;
	w.end_s = end_s;
	w.duration_s = dur;
	w.start_index = g->win_r;
	w.end_index = end_index;
	w.closed = 1;
	if (g->mode == 2)
		raw_integrals(&g->win, g->fs, end_index - g->win_r);
	/* The union keeps the window's sums and packets before figures_from
	 * sorts them. */
	struct acc *u = &g->gated;
	u->energy_j += g->win.energy_j;
	u->charge_c += g->win.charge_c;
	u->integral_s += g->win.integral_s;
	u->sum_v += g->win.sum_v;
	u->n += g->win.n;
	u->from_acc |= g->win.from_acc;
	ergon_accum_xcheck_merge(&u->xc, &g->win.xc);
	merge_sign(&u->sg, &g->win.sg);
	/* The gate's two edges: each known to one packet (or one sample). */
	if (g->win.have_first) {
		struct ergon_budget_sums *b = &g->win.bs;
		double fp = g->win.first_p * g->win.first_dt, lp = g->win.last_p * g->win.last_dt;
		double fi = g->win.first_i * g->win.first_dt, li = g->win.last_i * g->win.last_dt;
		if (g->mode == 1) { /* a packet's own span is the step */
			fp = g->win.first_p * g->res.stats_period_s;
			lp = g->win.last_p * g->res.stats_period_s;
			fi = g->win.first_i * g->res.stats_period_s;
			li = g->win.last_i * g->res.stats_period_s;
		}
		b->edge_p2_j2 += fp * fp + lp * lp;
		b->edge_i2_c2 += fi * fi + li * li;
		b->edges += 2;
	}
	bs_merge(&u->bs, &g->win.bs);
	if (g->win.have_peak && (!u->have_peak || g->win.peak_i > u->peak_i)) {
		u->peak_i = g->win.peak_i;
		u->have_peak = 1;
	}
	for (size_t i = 0; i < g->win.di.n; i++)
		if (dvec_push(&u->di, g->win.di.v[i]) || dvec_push(&u->dp, g->win.dp.v[i]))
			return ergon_err_set(err, ERGON_ENOMEM, "gated engine: out of memory");
	/* What the window itself could not keep is missing from the union too. */
	u->di.dropped += g->win.di.dropped;
	u->dp.dropped += g->win.dp.dropped;
	g->gated_span_s += dur;
	figures_from(&w, &g->win);
	return add_window(g, &w, err);
}

/* ---- statistics packets ------------------------------------------------ */

static int marker_level_at(struct ergon_gated *g, double t)
{
	while (g->mk_pos < g->cfg.marker_count && g->markers[g->mk_pos].end_s <= t)
		g->mk_pos++;
	return g->mk_pos < g->cfg.marker_count && g->markers[g->mk_pos].start_s <= t;
}

static void acc_packet(struct acc *a, const struct ergon_stats_packet *p, double span, double e,
		       double c, int from_acc, double peak, double gap)
{
	if (from_acc)
		ergon_accum_xcheck_add(&a->xc, p, span, gap, e);
	a->energy_j += e;
	a->charge_c += c;
	a->integral_s += span;
	a->sum_i += p->i_avg_a * span;
	if (p->fields & ERGON_PKT_VOLTAGE)
		a->sum_v += p->v_avg_v * span;
	if (from_acc)
		a->from_acc = 1;
	if (!a->have_peak || peak > a->peak_i) {
		a->peak_i = peak;
		a->have_peak = 1;
	}
}

int ergon_gated_push_packets(struct ergon_gated *g, const struct ergon_stats_packet *p, size_t n,
			     struct ergon_err *err)
{
	if (g->mode == 2)
		return ergon_err_set(err, ERGON_EUSAGE,
				     "gated engine: packets pushed into a raw-sample stream");
	g->mode = 1;
	g->res.raw = 0;
	for (size_t k = 0; k < n; k++, g->pkt_index++) {
		const struct ergon_stats_packet *q = &p[k];
		if (!isfinite(q->t_start_s) || !isfinite(q->t_end_s) || q->t_end_s < q->t_start_s)
			return ergon_err_set(
			    err, ERGON_EPARSE,
			    "statistics packet %llu: span [%g, %g] is not a finite "
			    "forward interval; fix t_start_s/t_end_s",
			    (unsigned long long)g->pkt_index + 1, q->t_start_s, q->t_end_s);
		if (g->cfg.stats_rate_strict) {
			double want = 1.0 / g->cfg.stats_rate_hz, got = q->t_end_s - q->t_start_s;
			if (fabs(got - want) > ERGON_STATS_RATE_REL * want + ERGON_STATS_RATE_ABS_S)
				return ergon_err_set(
				    err, ERGON_EUSAGE,
				    "statistics packet %llu (t = %.9g s) spans %.9g s, but the "
				    "statistics rate given (%g Hz) means %.9g s: the packets carry "
				    "their own period; drop the rate or correct it",
				    (unsigned long long)g->pkt_index + 1, q->t_start_s, got,
				    g->cfg.stats_rate_hz, want);
		}
		/* A few ns of slack: spans printed with finite precision. */
		if (g->pkt_index > 0 && q->t_start_s < g->prev_t_end - 1e-9)
			return ergon_err_set(err, ERGON_EPARSE,
					     "statistics packet %llu: t_start_s %.9g is before the "
					     "previous packet's end %.9g (time goes backwards); "
					     "packets must be in time order",
					     (unsigned long long)g->pkt_index + 1, q->t_start_s,
					     g->prev_t_end);
		int level;
		if (g->cfg.marker_count > 0)
			level = marker_level_at(g, 0.5 * (q->t_start_s + q->t_end_s));
		else
			level = (q->fields & ERGON_PKT_DIGITAL)
				    ? (int)((q->digital >> g->cfg.sync_input_index) & 1u)
				    : 0;
		if (level && !g->level) {
			g->res.rises++;
			if (g->pkt_index == 0) {
				g->res.gate_high_at_start = 1;
				g->initial_high = 1;
			} else {
				g->win_active = 1;
				g->win_t0 = q->t_start_s;
				acc_reset(&g->win);
			}
		} else if (!level && g->level) {
			if (g->initial_high) {
				g->initial_high = 0;
			} else if (g->win_active) {
				int rc = close_window(g, q->t_start_s, 0, err);
				if (rc)
					return rc;
			}
		}
		g->level = level;

		double span = q->t_end_s - q->t_start_s;
		int have_acc =
		    (q->fields & ERGON_PKT_ACCUM) && isfinite(q->energy_j) && isfinite(q->charge_c);
		double pw = (q->fields & ERGON_PKT_POWER)     ? q->p_avg_w
			    : (q->fields & ERGON_PKT_VOLTAGE) ? q->i_avg_a * q->v_avg_v
							      : NAN;
		double e, c;
		int from_acc = 0;
		double gap = g->pkt_index > 0 && q->t_start_s > g->prev_t_end
				 ? q->t_start_s - g->prev_t_end
				 : 0.0;
		double gap_at = g->prev_t_end;
		if (have_acc && g->prev_acc) {
			/* The instrument integrated this span itself. */
			e = q->energy_j - g->prev_energy;
			c = q->charge_c - g->prev_charge;
			from_acc = 1;
			/* Negative energy for a load (ergon/plausible.h): kept in
			 * the sums (nothing measured is dropped) and counted, so
			 * the accumulator's figure is not published as valid. */
			double sj = 1e-6 * fmax(fabs(q->energy_j), fabs(g->prev_energy)) + 1e-12;
			double sc = 1e-6 * fmax(fabs(q->charge_c), fabs(g->prev_charge)) + 1e-12;
			if (ergon_energy_step_negative(e, c, span + gap, pw, q->i_avg_a, sj, sc)) {
				if (g->res.energy_backwards++ == 0) {
					g->res.energy_backwards_first = g->pkt_index + 1;
					g->res.energy_backwards_j = -e;
				}
			}
		} else {
			e = pw * span;
			c = q->i_avg_a * span;
		}
		g->prev_acc = have_acc;
		g->prev_energy = q->energy_j;
		g->prev_charge = q->charge_c;
		g->prev_t_end = q->t_end_s;
		if (g->pkt_index == 0)
			g->res.whole.start_s = q->t_start_s;
		g->res.packets++;
		if (!isfinite(e) || !isfinite(c) || !isfinite(q->i_avg_a)) {
			/* Counted and left out, never summed as a number. */
			g->res.nan_samples++;
			continue;
		}
		double peak = (q->fields & ERGON_PKT_MINMAX) ? q->i_max_a : q->i_avg_a;
		/* Backwards through the load: negative power (the current
		 * alone when the packet has no voltage or power) beyond the
		 * noise of any meter. Holes between packets are time no
		 * packet saw. */
		int reverse = isfinite(pw) ? pw < 0 && fabs(q->i_avg_a) > ERGON_REVERSE_CURRENT_A
					   : q->i_avg_a < -ERGON_REVERSE_CURRENT_A;
		double i_load = isfinite(pw) && pw < 0 ? -fabs(q->i_avg_a) : q->i_avg_a;
		int in_win = level && g->win_active;
		if (reverse) {
			note_reverse(&g->whole, q->t_start_s, i_load);
			if (in_win)
				note_reverse(&g->win, q->t_start_s, i_load);
		}
		if (gap > 0) {
			note_gap(&g->whole, gap_at, gap);
			/* Inside a window when the gate was high on both sides. */
			if (in_win && g->win_t0 < q->t_start_s)
				note_gap(&g->win, gap_at, gap);
		}
		/* The budgets' view of the packet: its range, |p|, |v|, |i|, how
		 * many samples it averages (its sample ids, else 1) and the
		 * rounding of its printed values. */
		double pk_abs = (q->fields & ERGON_PKT_MINMAX)
				    ? fmax(fabs(q->i_max_a), fabs(q->i_min_a))
				    : fabs(q->i_avg_a);
		int rg = range_of(g, pk_abs);
		double av = (q->fields & ERGON_PKT_VOLTAGE)	? fabs(q->v_avg_v)
			    : (isfinite(pw) && q->i_avg_a != 0) ? fabs(pw / q->i_avg_a)
								: NAN;
		double ns = q->sample_id > g->prev_sample_id && g->pkt_index > 0
				? (double)(q->sample_id - g->prev_sample_id)
				: 1.0;
		double p_res = (q->fields & ERGON_PKT_POWER) ? q->p_res_w
			       : isfinite(av) ? av * q->i_res_a + fabs(q->i_avg_a) * q->v_res_v
					      : 0.0;
		double abs_p = isfinite(pw) ? fabs(pw) : fabs(q->i_avg_a) * av;
		g->prev_peak_a = pk_abs;
		g->prev_sample_id = q->sample_id;
		bs_add(&g->whole, rg, span, abs_p, av, fabs(q->i_avg_a), ns, p_res, q->i_res_a);
		acc_packet(&g->whole, q, span, e, c, from_acc, peak, gap);
		int rc = dvec_push(&g->whole.di, q->i_avg_a);
		if (rc == 0)
			rc = dvec_push(&g->whole.dp, isfinite(pw) ? pw : 0.0);
		if (rc == 0 && in_win) {
			bs_add(&g->win, rg, span, abs_p, av, fabs(q->i_avg_a), ns, p_res,
			       q->i_res_a);
			acc_packet(&g->win, q, span, e, c, from_acc, peak, gap);
			rc = dvec_push(&g->win.di, q->i_avg_a);
			if (rc == 0)
				rc = dvec_push(&g->win.dp, isfinite(pw) ? pw : 0.0);
		}
		if (rc)
			return ergon_err_set(err, rc, "gated engine: out of memory");
	}
	return 0;
}

/* ---- raw samples ------------------------------------------------------- */

int ergon_gated_raw_begin(struct ergon_gated *g, double sample_rate_hz, struct ergon_err *err)
{
	if (g->mode != 0)
		return ergon_err_set(err, ERGON_EUSAGE, "gated engine: raw_begin called twice");
	if (!(sample_rate_hz > 0) || !isfinite(sample_rate_hz) || sample_rate_hz > 1e10)
		return ergon_err_set(err, ERGON_ERANGE,
				     "sample rate %g Hz: must be positive and finite",
				     sample_rate_hz);
	g->mode = 2;
	g->fs = sample_rate_hz;
	double spp = floor(sample_rate_hz / g->cfg.stats_rate_hz + 0.5);
	g->spp = spp < 1 ? 1 : (uint64_t)spp;
	g->res.raw = 1;
	g->res.sample_rate_hz = sample_rate_hz;
	g->res.stats_period_s = (double)g->spp / sample_rate_hz;
	g->pkt.all_high = 1;
	if (g->cfg.marker_count > 0) {
		g->mk_start = calloc(g->cfg.marker_count, sizeof(uint64_t));
		g->mk_end = calloc(g->cfg.marker_count, sizeof(uint64_t));
		if (g->mk_start == NULL || g->mk_end == NULL)
			return ergon_err_set(err, ERGON_ENOMEM, "gated engine: out of memory");
		/* Sample k (time k/fs) is gated when start <= k/fs < end. */
		for (size_t i = 0; i < g->cfg.marker_count; i++) {
			g->mk_start[i] = (uint64_t)ceil(g->markers[i].start_s * sample_rate_hz);
			g->mk_end[i] = (uint64_t)ceil(g->markers[i].end_s * sample_rate_hz);
		}
	}
	return 0;
}

static inline int bit_at(const uint8_t *b, size_t i)
{
	return (b[i >> 3] >> (i & 7u)) & 1;
}

/* End (exclusive, <= m) of the run of samples starting at j with the same
 * gate level; *level gets that level. */
static size_t run_end(struct ergon_gated *g, const uint8_t *bits, size_t bit0, size_t j, size_t m,
		      int *level)
{
	if (g->cfg.marker_count > 0) {
		/* g->index is the absolute index of block position j. */
		uint64_t k = g->index;
		while (g->mk_pos < g->cfg.marker_count && g->mk_end[g->mk_pos] <= k)
			g->mk_pos++;
		uint64_t change;
		if (g->mk_pos >= g->cfg.marker_count) {
			*level = 0;
			return m;
		}
		if (k < g->mk_start[g->mk_pos]) {
			*level = 0;
			change = g->mk_start[g->mk_pos];
		} else {
			*level = 1;
			change = g->mk_end[g->mk_pos];
		}
		uint64_t end = change - k;
		return end < m - j ? j + (size_t)end : m;
	}
	if (bits == NULL) {
		*level = 0;
		return m;
	}
	int lv = bit_at(bits, bit0 + j);
	*level = lv;
	uint8_t full = lv ? 0xffu : 0x00u;
	size_t k = j + 1;
	while (k < m) {
		size_t b = bit0 + k;
		if ((b & 7u) == 0 && k + 8 <= m && bits[b >> 3] == full) {
			k += 8;
			continue;
		}
		if (bit_at(bits, b) != lv)
			break;
		k++;
	}
	return k;
}

static void close_packet(struct ergon_gated *g)
{
	if (g->pkt.valid > 0) {
		double mi = g->pkt.si / (double)g->pkt.valid;
		double mp = g->pkt.sp / (double)g->pkt.valid;
		g->res.packets++;
		if (dvec_push(&g->whole.di, mi) == 0)
			(void)dvec_push(&g->whole.dp, mp);
		if (g->pkt.all_high && g->win_active && g->win_r <= g->pkt.start) {
			if (dvec_push(&g->win.di, mi) == 0)
				(void)dvec_push(&g->win.dp, mp);
		}
	}
	g->prev_peak_a = g->pkt_peak_a;
	g->pkt_peak_a = 0;
	g->pkt.start = g->index;
	g->pkt.n = 0;
	g->pkt.valid = 0;
	g->pkt.si = 0;
	g->pkt.sp = 0;
	g->pkt.all_high = 1;
}

int ergon_gated_push_raw(struct ergon_gated *g, const float *current_a, const float *voltage_v,
			 const float *power_w, const uint8_t *gate_bits, size_t bit0, size_t n,
			 struct ergon_err *err)
{
	if (g->mode != 2)
		return ergon_err_set(err, ERGON_EUSAGE,
				     "gated engine: call ergon_gated_raw_begin before raw samples");
	size_t j = 0;
	while (j < n) {
		size_t m = n - j;
		if (m > g->spp - g->pkt.n)
			m = (size_t)(g->spp - g->pkt.n);
		int level;
		size_t e = run_end(g, gate_bits, bit0, j, j + m, &level);
		if (level != g->level) {
			/* An edge at absolute sample g->index (this run's first). */
			double t = (double)g->index / g->fs;
			if (level) {
				g->res.rises++;
				if (g->index == 0) {
					g->res.gate_high_at_start = 1;
					g->initial_high = 1;
				} else {
					g->win_active = 1;
					g->win_r = g->index;
					g->win_t0 = t;
					acc_reset(&g->win);
				}
			} else if (g->initial_high) {
				g->initial_high = 0;
			} else if (g->win_active) {
				int rc = close_window(g, t, g->index, err);
				if (rc)
					return rc;
			}
			g->level = level;
		}
		/* Sums of the run in float64, in sample order. The fast loop has no
		 * branch per sample; a NaN or an infinity anywhere makes a sum
		 * non-finite, and only then is the run summed again sample by
		 * sample, leaving those out (counted like NaN). */
		/* |p|, |v|, |i| and the smallest current ride along for the
		 * uncertainty budgets (their sums are the signed ones whenever
		 * the rail keeps one sign). */
		double si = 0, sv = 0, sp = 0, mx = -INFINITY, mn = INFINITY, mnp = INFINITY;
		double sap = 0, sav = 0, sai = 0;
		uint64_t valid = e - j;
		if (power_w) {
			for (size_t k = j; k < e; k++) {
				double i = current_a[k], v = voltage_v[k], p = power_w[k];
				si += i;
				sv += v;
				sp += p;
				sai += fabs(i);
				sav += fabs(v);
				sap += fabs(p);
				mx = i > mx ? i : mx;
				mn = i < mn ? i : mn;
				mnp = p < mnp ? p : mnp;
			}
		} else {
			for (size_t k = j; k < e; k++) {
				double i = current_a[k], v = voltage_v[k], p = i * v;
				si += i;
				sv += v;
				sp += p;
				sai += fabs(i);
				sav += fabs(v);
				sap += fabs(p);
				mx = i > mx ? i : mx;
				mn = i < mn ? i : mn;
				mnp = p < mnp ? p : mnp;
			}
		}
		/* A sample ran backwards through the load when its power is
		 * negative and its current beyond any meter's noise: only a run
		 * with both is looked at sample by sample. */
		if (mnp < 0 && (mn < -ERGON_REVERSE_CURRENT_A || mx > ERGON_REVERSE_CURRENT_A))
			for (size_t k = j; k < e; k++) {
				double i = current_a[k];
				double p = power_w ? (double)power_w[k] : i * (double)voltage_v[k];
				if (!(p < 0 && fabs(i) > ERGON_REVERSE_CURRENT_A))
					continue;
				double t = (double)(g->index + (k - j)) / g->fs;
				note_reverse(&g->whole, t, -fabs(i));
				if (level && g->win_active)
					note_reverse(&g->win, t, -fabs(i));
			}
		if (!isfinite(si) || !isfinite(sv) || !isfinite(sp)) {
			si = sv = sp = sap = sav = sai = 0;
			mx = -INFINITY;
			mn = INFINITY;
			valid = 0;
			for (size_t k = j; k < e; k++) {
				double i = current_a[k], v = voltage_v[k];
				double p = power_w ? (double)power_w[k] : i * v;
				if (!isfinite(i) || !isfinite(v) || !isfinite(p)) {
					g->res.nan_samples++;
					continue;
				}
				si += i;
				sv += v;
				sp += p;
				sai += fabs(i);
				sav += fabs(v);
				sap += fabs(p);
				mx = i > mx ? i : mx;
				mn = i < mn ? i : mn;
				valid++;
			}
		}
		int rg = 0;
		if (valid) {
			double pk = fmax(fabs(mx), fabs(mn));
			if (pk > g->pkt_peak_a)
				g->pkt_peak_a = pk;
			rg = range_of(g, g->pkt_peak_a);
		}
		size_t len = e - j;
		g->pkt.n += len;
		g->pkt.valid += valid;
		g->pkt.si += si;
		g->pkt.sp += sp;
		if (!level)
			g->pkt.all_high = 0;
		struct acc *targets[2] = {&g->whole, level && g->win_active ? &g->win : NULL};
		for (int t = 0; t < 2; t++) {
			struct acc *a = targets[t];
			if (a == NULL)
				continue;
			a->sum_i += si;
			a->sum_v += sv;
			a->sum_p += sp;
			a->n += valid;
			if (valid) {
				double n = (double)valid, span = n / g->fs;
				bs_add(a, rg, span, sap / n, sav / n, sai / n, n, 0.0, 0.0);
			}
			if (valid && (!a->have_peak || mx > a->peak_i)) {
				a->peak_i = mx;
				a->have_peak = 1;
			}
		}
		g->index += len;
		g->res.samples += len;
		j = e;
		if (g->pkt.n == g->spp)
			close_packet(g);
	}
	return 0;
}

/* Raw sums become integrals at the end: energy = sum(p) / fs over exactly
 * the samples in [rise, fall). integral_s is the time those samples
 * observed: a NaN sample (one the instrument lost) is time without an
 * observation, as a missing packet is in packet input, so averages are
 * over what was seen and a window thinned by losses shows as shorter. */
static void raw_integrals(struct acc *a, double fs, uint64_t span_samples)
{
	a->energy_j = a->sum_p / fs;
	a->charge_c = a->sum_i / fs;
	a->integral_s = (double)(a->n < span_samples ? a->n : span_samples) / fs;
}

int ergon_gated_finish(struct ergon_gated *g, const struct ergon_gated_result **out,
		       struct ergon_err *err)
{
	(void)err;
	if (!g->finished) {
		g->finished = 1;
		if (g->win_active) {
			g->res.unterminated = 1;
			g->res.unterminated_start_s = g->win_t0;
		}
		double t0 = g->res.whole.start_s;
		memset(&g->res.whole, 0, sizeof(g->res.whole));
		g->res.whole.start_s = t0;
		if (g->mode == 2) {
			raw_integrals(&g->whole, g->fs, g->index);
			g->res.whole.end_index = g->index;
			g->res.whole.end_s = (double)g->index / g->fs;
			g->res.whole.duration_s = g->res.whole.end_s;
		} else if (g->mode == 1) {
			g->res.whole.end_s = g->prev_t_end;
		}
		figures_from(&g->res.whole, &g->whole);
		if (g->mode == 1)
			g->res.whole.duration_s = g->whole.integral_s;
		g->res.whole.closed = 1;
		memset(&g->res.gated, 0, sizeof(g->res.gated));
		if (g->nwin > 0) {
			figures_from(&g->res.gated, &g->gated);
			g->res.gated.start_s = g->wins[0].start_s;
			g->res.gated.end_s = g->wins[g->nwin - 1].end_s;
			g->res.gated.duration_s = g->gated_span_s;
			g->res.gated.closed = 1;
		}
		g->res.windows = g->wins;
		g->res.window_count = g->nwin;
		g->res.whole_sums = g->whole.bs;
		g->res.gated_sums = g->gated.bs;
		g->res.rating = g->rating.n_ranges > 0 || g->rating.model != ERGON_RATING_NONE
				    ? &g->rating
				    : NULL;
	}
	*out = &g->res;
	return 0;
}
