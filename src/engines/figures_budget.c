/* The uncertainty budgets of `ergon run`'s figures: a phase's energy and
 * mean power, and the energy per operation (docs/UNCERTAINTY.md, "ergon
 * run"). Every term is a bound with its distribution and source; the
 * combination is budget.c's. */
#include "ergon/figures.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* A rated term: limit = rated value x scale, or unknown with its reason. */
static void rated_term(struct ergon_budget *b, const char *name, const struct ergon_rated *r,
		       double scale, const char *how)
{
	if (ergon_rated_known(r))
		ergon_budget_add(b, name, r->value * scale, ERGON_DIST_RECT, 0, "%s%s%s", r->source,
				 how ? "; " : "", how ? how : "");
	else
		ergon_budget_add_unknown(b, name, "%s", r->source[0] ? r->source : "not stated");
}

/* Sum of the squared sensitivities of the mean power E / T to every
 * timestamp (W^2 / s^2 after the division by T^2). */
static double power_sens2(const struct ergon_energy *e, int accum)
{
	if (!(e->span_s > 0))
		return NAN;
	double p = e->mean_power_w, t2 = e->span_s * e->span_s;
	if (accum) /* P = dE / T: only the span's two ends */
		return 2.0 * p * p / t2;
	double a = e->sens_first_w + p, z = e->sens_last_w - p;
	return (a * a + e->sens_int2_w2 + z * z) / t2;
}

/* The rating's power-view terms: gains over a_j (the integral or mean of
 * |p| the gain scales), absolute bounds over span_s (1 for a power).
 * offset_mul: how many times the offset enters (0 when it cancels). */
static void rated_terms(struct ergon_budget *b, const struct ergon_run_um *um, double a, double t,
			double offset_mul, const char *gain_how, const char *offset_how)
{
	for (int i = 0; i < um->n_pterms; i++) {
		const struct ergon_rating_pterm *p = &um->pterm[i];
		if (p->kind == ERGON_PTERM_GAIN_PCT) {
			rated_term(b, p->name, &p->x, a / 100.0, gain_how);
		} else if (offset_mul == 0) {
			ergon_budget_add(b, p->name, 0.0, ERGON_DIST_RECT, 0,
					 "cancels: one offset in load and idle (%s)",
					 p->x.source[0] ? p->x.source : "not stated");
		} else {
			rated_term(b, p->name, &p->x, t * offset_mul, offset_how);
		}
	}
	if (um->n_pterms == 0)
		ergon_budget_add_unknown(b, "rated accuracy", "the instrument states none");
}

static const struct ergon_rated *timebase_of(const struct ergon_run_um *um, int accum)
{
	return accum || um->clock_instrument ? &um->inst_ppm : &um->host_ppm;
}

void ergon_budget_phase_energy(const struct ergon_energy *e, int accum,
			       const struct ergon_run_um *um, struct ergon_budget *b)
{
	ergon_budget_init(b, e->energy_j, "J");
	rated_terms(b, um, e->abs_energy_j, e->span_s, 1.0,
		    "% of every reading, over the integral of |p|", "every reading, over the span");
	if (accum)
		rated_term(b, "resolution", &um->resolution_j, 1.0,
			   "one accumulator step: the delta of two readings");
	else
		rated_term(b, "resolution", &um->resolution_w, 0.5 * e->span_s,
			   "half a reading step, the same for every reading of a steady "
			   "signal: over the span");
	if (!accum) {
		double s2 = e->sens_first_w * e->sens_first_w + e->sens_int2_w2 +
			    e->sens_last_w * e->sens_last_w;
		ergon_budget_add_u(b, "timestamps", um->timing_quantum_s * sqrt(s2), sqrt(3.0),
				   ERGON_DIST_RECT, 0,
				   "each timestamp within +-%.3g s (the timing quantum), "
				   "independent: propagated through the trapezoid in quadrature",
				   um->timing_quantum_s);
	}
	const struct ergon_rated *tb = timebase_of(um, accum);
	rated_term(b, "timebase", tb, 1e-6 * fabs(e->energy_j),
		   accum ? "ppm of the accumulator's own clock" : "ppm of the sample clock");
	ergon_budget_close(b);
}

void ergon_budget_phase_power(const struct ergon_energy *e, int accum,
			      const struct ergon_run_um *um, struct ergon_budget *b)
{
	double t = e->span_s;
	ergon_budget_init(b, e->mean_power_w, "W");
	rated_terms(b, um, e->abs_energy_j / t, 1.0, 1.0,
		    "% of every reading, over the mean of |p|", "every reading");
	if (accum)
		rated_term(b, "resolution", &um->resolution_j, 1.0 / t,
			   "one accumulator step over the span");
	else
		rated_term(b, "resolution", &um->resolution_w, 0.5,
			   "half a reading step, the same for every reading of a steady signal");
	ergon_budget_add_u(b, "timestamps", um->timing_quantum_s * sqrt(power_sens2(e, accum)),
			   sqrt(3.0), ERGON_DIST_RECT, 0,
			   "each timestamp within +-%.3g s, independent, through energy / span",
			   um->timing_quantum_s);
	if (accum) {
		rated_term(b, "timebase", &um->inst_ppm, 1e-6 * fabs(e->mean_power_w),
			   "ppm of the accumulator's clock");
		rated_term(b, "host timebase", &um->host_ppm, 1e-6 * fabs(e->mean_power_w),
			   "ppm of the clock that times the span");
	} else {
		ergon_budget_add(b, "timebase", 0.0, ERGON_DIST_RECT, 0,
				 "cancels: the samples' times and the span are on one clock");
	}
	ergon_budget_close(b);
}

void ergon_budget_eop(const struct ergon_eop_budget_input *in, const struct ergon_run_um *um,
		      int above_idle, struct ergon_budget *b)
{
	const struct ergon_eop *eop = in->eop;
	const struct ergon_energy *l = in->load, *i = in->idle;
	int periodic = eop->formula == ERGON_EOP_PERIODIC;
	double value = above_idle ? eop->above_idle_j : eop->total_j;
	double dp = above_idle ? l->mean_power_w - i->mean_power_w : l->mean_power_w;
	/* E_op = dP x f: f is the mean latency (saturated) or the load
	 * duration per operation (periodic). */
	double f = periodic ? in->load_duration_s / (double)in->n_ops : in->latency_mean_s;
	ergon_budget_init(b, value, "J");
	double al = l->abs_energy_j / l->span_s, ai = i->abs_energy_j / i->span_s;
	rated_terms(b, um, (above_idle ? fabs(al - ai) : al) * f, f,
		    above_idle ? (um->offset_constant ? 0.0 : 2.0) : 1.0,
		    above_idle ? "% of every reading; one gain in load and idle: over the "
				 "difference of their mean |p|"
			       : "% of every reading, over the load's mean |p|",
		    above_idle ? "every reading, load and idle (their ranges may differ)"
			       : "every reading of the load");
	const struct ergon_energy *ph[2] = {l, i};
	int acc[2] = {in->load_accum, in->idle_accum};
	const char *nm[2] = {"resolution (load)", "resolution (idle)"};
	for (int k = 0; k < (above_idle ? 2 : 1); k++) {
		if (acc[k])
			rated_term(b, nm[k], &um->resolution_j, f / ph[k]->span_s,
				   "one accumulator step over the phase");
		else
			rated_term(b, nm[k], &um->resolution_w, 0.5 * f,
				   "half a reading step of the phase's mean power");
	}
	double s2 = power_sens2(l, in->load_accum);
	if (above_idle)
		s2 += power_sens2(i, in->idle_accum);
	ergon_budget_add_u(b, "timestamps", um->timing_quantum_s * sqrt(s2) * f, sqrt(3.0),
			   ERGON_DIST_RECT, 0,
			   "each power timestamp within +-%.3g s, independent, through the "
			   "phases' mean power",
			   um->timing_quantum_s);
	if (periodic)
		ergon_budget_add(b, "load duration",
				 fabs(value) * um->latency_quantum_s * sqrt(2.0) /
				     in->load_duration_s,
				 ERGON_DIST_RECT, 0,
				 "the load phase's two ends, each within one clock tick (%.3g s), "
				 "over its %.6g s",
				 um->latency_quantum_s, in->load_duration_s);
	else
		ergon_budget_add(b, "latency quantization",
				 fabs(dp) * um->latency_quantum_s / sqrt((double)in->n_ops),
				 ERGON_DIST_RECT, 0,
				 "each latency within one clock tick (%.3g s), independent over "
				 "%zu operations: the mean's bound / sqrt(n)",
				 um->latency_quantum_s, in->n_ops);
	if (in->load_accum)
		rated_term(b, "timebase", &um->inst_ppm, 1e-6 * fabs(value),
			   "ppm of the accumulator's clock (the host clock cancels: the span "
			   "and the latencies are both on it)");
	else
		rated_term(b, "timebase", &um->host_ppm, 1e-6 * fabs(value),
			   periodic ? "ppm of the host clock that times the load phase"
				    : "ppm of the host clock that times the latencies");
	double se = above_idle ? in->spread_se_above_j : in->spread_se_total_j;
	if (isfinite(se))
		ergon_budget_add(b, "spread over windows", se, ERGON_DIST_STAT, 0,
				 "standard error of the mean over %zu windows of the per-window "
				 "energy per operation (window energy %s/ its operations)",
				 in->spread_windows, above_idle ? "above idle " : "");
	else
		ergon_budget_add_unknown(b, "spread over windows",
					 "%zu window(s) give an energy per operation: at least 2 "
					 "are needed to estimate the spread (run more windows)",
					 in->spread_windows);
	/* Issue 31's repeats feed this term: the spread over whole runs. */
	if (isfinite(in->repeat_se_j))
		ergon_budget_add(b, "spread over repetitions", in->repeat_se_j, ERGON_DIST_STAT, 0,
				 "standard error of the mean over %zu repeated runs", in->repeats);
	ergon_budget_close(b);
}

void ergon_budget_run_plan(const struct ergon_run_um *um, size_t windows, int accum,
			   struct ergon_budget *b)
{
	ergon_budget_init(b, 1.0, "1");
	for (int i = 0; i < um->n_pterms; i++) {
		const struct ergon_rating_pterm *p = &um->pterm[i];
		if (p->kind == ERGON_PTERM_GAIN_PCT)
			rated_term(b, p->name, &p->x, 0.01, "% of every reading");
		else if (!ergon_rated_known(&p->x))
			ergon_budget_add_unknown(b, p->name, "%s", p->x.source);
		/* A known offset's share depends on the power: measured, not
		 * planned (0 here keeps the bound a lower one). */
	}
	if (um->n_pterms == 0)
		ergon_budget_add_unknown(b, "rated accuracy", "the instrument states none");
	const struct ergon_rated *res = accum ? &um->resolution_j : &um->resolution_w;
	if (!ergon_rated_known(res))
		ergon_budget_add_unknown(b, "resolution", "%s", res->source);
	rated_term(b, "timebase", timebase_of(um, accum), 1e-6, "the clock's rate bound");
	if (windows < 2)
		ergon_budget_add_unknown(b, "spread over windows",
					 "%zu window(s) planned: the spread needs at least 2 "
					 "(raise --windows)",
					 windows);
	ergon_budget_close(b);
}

void ergon_window_spread_eop(const double *t_s, const double *power_w, const double *energy_j,
			     size_t n, const double *edges_s, size_t nw, const size_t *ops,
			     double idle_power_w, double *se_total_j, double *se_above_j,
			     size_t *used)
{
	*se_total_j = *se_above_j = NAN;
	*used = 0;
	if (nw < 2 || ops == NULL)
		return;
	double *xt = malloc(nw * sizeof(double)), *xa = malloc(nw * sizeof(double));
	if (xt == NULL || xa == NULL) {
		free(xt);
		free(xa);
		return;
	}
	size_t a = 0, m = 0;
	for (size_t w = 0; w < nw; w++) {
		while (a < n && t_s[a] < edges_s[w])
			a++;
		size_t b = a;
		while (b < n && t_s[b] <= edges_s[w + 1])
			b++;
		struct ergon_energy e;
		int rc =
		    b - a < 2 || ops[w] == 0 ? -1
		    : energy_j
			? ergon_energy_accumulator(t_s + a, energy_j + a, b - a, 0, 0, &e, NULL)
			: ergon_energy_trapezoid(t_s + a, power_w + a, b - a, 0, 0, 0, &e, NULL);
		if (rc != 0 || !(e.span_s > 0))
			continue;
		double per_op_s = (edges_s[w + 1] - edges_s[w]) / (double)ops[w];
		xt[m] = e.mean_power_w * per_op_s;
		xa[m] = (e.mean_power_w - idle_power_w) * per_op_s;
		m++;
	}
	*used = m;
	*se_total_j = ergon_window_spread(xt, m);
	*se_above_j = ergon_window_spread(xa, m);
	free(xt);
	free(xa);
}

double ergon_window_spread(const double *x, size_t n)
{
	if (n < 2)
		return NAN;
	double m = 0;
	for (size_t k = 0; k < n; k++) {
		if (!isfinite(x[k]))
			return NAN;
		m += x[k];
	}
	m /= (double)n;
	double ss = 0;
	for (size_t k = 0; k < n; k++)
		ss += (x[k] - m) * (x[k] - m);
	return sqrt(ss / (double)(n - 1)) / sqrt((double)n);
}
