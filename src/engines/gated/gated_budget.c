/* The uncertainty budgets of the gated engine's figures (energy, charge,
 * mean power of the gated windows or the whole capture) from the sums the
 * engine kept and the instrument's rating (docs/UNCERTAINTY.md,
 * "Recordings and gated windows"). */
#include "ergon/gated.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The ranges that held any of the figure's time, as "18 mA, 180 mA". */
static void ranges_used(const struct ergon_rating *r, const struct ergon_budget_sums *s, char *out,
			size_t cap)
{
	size_t o = 0;
	out[0] = '\0';
	int n = r && r->n_ranges > 0 ? r->n_ranges : 1;
	for (int i = 0; i < n && o < cap; i++) {
		if (!(s->rg_t_s[i] > 0))
			continue;
		int w = snprintf(out + o, cap - o, "%s%s", o ? ", " : "",
				 r && r->n_ranges > 0 ? r->range[i].name : "the one range");
		if (w < 0)
			break;
		o += (size_t)w;
	}
}

/* A per-range rated figure summed over the ranges that were used: sum of
 * value(range) x weight[range] (scaled); unknown when a used range's
 * figure is unknown (its source is the reason). */
static void per_range(struct ergon_budget *b, const char *name, const struct ergon_rating *r,
		      const struct ergon_budget_sums *s, int offset, const double *weight,
		      double scale, const char *how)
{
	double sum = 0;
	int n = r->n_ranges > 0 ? r->n_ranges : 1;
	char used[160];
	ranges_used(r, s, used, sizeof(used));
	const char *src = "";
	for (int i = 0; i < n; i++) {
		if (!(s->rg_t_s[i] > 0))
			continue;
		const struct ergon_rated *x =
		    offset ? &r->range[i].offset_a : &r->range[i].gain_pct;
		if (!ergon_rated_known(x)) {
			ergon_budget_add_unknown(b, name, "range %s: %s", r->range[i].name,
						 x->source[0] ? x->source : "not stated");
			return;
		}
		sum += x->value * weight[i];
		src = x->source;
	}
	ergon_budget_add(b, name, sum * scale, ERGON_DIST_RECT, 0, "%s (%s%s%s); %s", src,
			 r->n_ranges > 1 ? "ranges used: " : "", r->n_ranges > 1 ? used : "",
			 r->n_ranges > 1 && r->range_rule[0] ? ", by the rule in the rating" : "",
			 how);
}

static void rated(struct ergon_budget *b, const char *name, const struct ergon_rated *x,
		  double scale, const char *how)
{
	if (ergon_rated_known(x))
		ergon_budget_add(b, name, x->value * scale, ERGON_DIST_RECT, 0, "%s; %s", x->source,
				 how);
	else
		ergon_budget_add_unknown(b, name, "%s", x->source[0] ? x->source : "not stated");
}

/* The board's shunt (an instrument that does not own it): its tolerance
 * and its temperature coefficient x span, of a (the figure's integral of
 * |p| or |i|, or 1 for a relative budget). */
static void shunt_terms(struct ergon_budget *b, const struct ergon_rating *r, double a,
			const char *how)
{
	rated(b, "shunt tolerance", &r->shunt_tol_pct, 0.01 * a, how);
	double tc = r->shunt_tempco_ppm_c.value * r->shunt_temp_span_c.value;
	if (isfinite(tc))
		ergon_budget_add(b, "shunt tempco", 1e-6 * tc * a, ERGON_DIST_RECT, 0,
				 "%g ppm/C (%s) x %g C (%s)", r->shunt_tempco_ppm_c.value,
				 r->shunt_tempco_ppm_c.source, r->shunt_temp_span_c.value,
				 r->shunt_temp_span_c.source);
	else
		ergon_budget_add_unknown(b, "shunt tempco", "%s",
					 !ergon_rated_known(&r->shunt_tempco_ppm_c)
					     ? r->shunt_tempco_ppm_c.source
					     : r->shunt_temp_span_c.source);
}

static double total(const double *v, int n)
{
	double s = 0;
	for (int i = 0; i < n; i++)
		s += v[i];
	return s;
}

void ergon_gated_budget(const struct ergon_gated_result *res, int whole, int figure,
			const struct ergon_rating *rating, struct ergon_budget *b)
{
	const struct ergon_window_figures *w = whole ? &res->whole : &res->gated;
	const struct ergon_budget_sums *s = whole ? &res->whole_sums : &res->gated_sums;
	struct ergon_rating none;
	if (rating == NULL) {
		ergon_rating_init(&none, ERGON_RATING_NONE);
		rating = &none;
	}
	int charge = figure == ERGON_PF_CHARGE;
	double value = charge ? w->charge_c : w->energy_j;
	ergon_budget_init(b, value, charge ? "C" : "J");
	int nr = rating->n_ranges > 0 ? rating->n_ranges : 1;
	double sum_p = total(s->rg_p_j, ERGON_RATING_MAX_RANGES);
	double sum_q = total(s->rg_q_c, ERGON_RATING_MAX_RANGES);
	if (rating->model == ERGON_RATING_IV) {
		per_range(b, "current gain", rating, s, 0, charge ? s->rg_q_c : s->rg_p_j, 0.01,
			  charge ? "% of every reading, over the integral of |i| in each range"
				 : "% of every reading, over the integral of |p| in each range");
		per_range(b, "current offset", rating, s, 1, charge ? s->rg_t_s : s->rg_v_vs, 1.0,
			  charge ? "every reading, over the time in each range"
				 : "every reading, times |v|, over the time in each range");
		if (!charge) {
			rated(b, "voltage gain", &rating->v_gain_pct, 0.01 * sum_p,
			      "% of every reading, over the integral of |p|");
			rated(b, "voltage offset", &rating->v_offset_v, sum_q,
			      "every reading, times |i|, over the time");
		}
	} else if (rating->model == ERGON_RATING_POWER && !charge) {
		for (int i = 0; i < rating->n_pterms; i++) {
			const struct ergon_rating_pterm *t = &rating->pterm[i];
			if (t->kind == ERGON_PTERM_GAIN_PCT)
				rated(b, t->name, &t->x, 0.01 * sum_p,
				      "% of every reading, over the integral of |p|");
			else
				rated(b, t->name, &t->x, w->integral_s,
				      "every reading, over the time");
		}
	} else {
		ergon_budget_add_unknown(b, "rated accuracy",
					 "the instrument that made the recording states none known "
					 "to ergon; give it (analyze --meter MODEL or --rating "
					 "KEY=VALUE)");
	}
	if (rating->external_shunt) {
		double a = charge ? sum_q : sum_p;
		shunt_terms(b, rating, a, "% of every reading");
	}
	/* Quantization: each sample rounded to its range's step, independent. */
	double q2 = 0;
	int q_known = 1;
	for (int i = 0; i < nr; i++) {
		if (!(s->rg_t_s[i] > 0))
			continue;
		double step = rating->model == ERGON_RATING_IV ? rating->range[i].resolution_a : 0;
		if (!(step > 0)) {
			q_known = 0;
			break;
		}
		q2 += step * step * (charge ? s->q_t2[i] : s->q_p2[i]);
	}
	if (q_known && sum_p + sum_q > 0)
		ergon_budget_add_u(b, "quantization", sqrt(q2), sqrt(12.0), ERGON_DIST_RECT, 0,
				   "each sample within half its range's step, independent "
				   "(statistics packets: averaged over their samples)");
	else if (sum_p + sum_q > 0)
		ergon_budget_add_unknown(b, "quantization",
					 "the instrument's step in a range used is not stated");
	double rec = charge ? s->rec_i_c : s->rec_p_j;
	if (rec > 0)
		ergon_budget_add(b, "recording resolution", 0.5 * rec, ERGON_DIST_RECT, 0,
				 "each printed value within half its last digit (the CSV's "
				 "precision), the same way for a steady signal: over the time");
	if (w->from_accumulator && w->xcheck.acc_res_j > 0 && !charge)
		ergon_budget_add(b, "accumulator resolution", w->xcheck.acc_res_j, ERGON_DIST_RECT,
				 0, "the energy_j column's last digit at both ends of a window");
	rated(b, "timebase", &rating->timebase_ppm, 1e-6 * fabs(value),
	      "ppm of the instrument's clock, over the figure");
	if (!whole && s->edges > 0)
		ergon_budget_add_u(
		    b, "gate edges", sqrt(charge ? s->edge_i2_c2 : s->edge_p2_j2), sqrt(3.0),
		    ERGON_DIST_RECT, 0, "%llu gate edge(s), each within one %s at the edge's %s",
		    (unsigned long long)s->edges, res->raw ? "sample" : "statistics packet",
		    charge ? "current" : "power");
	if (figure == ERGON_PF_POWER) {
		/* mean power = energy / observed time, both on the instrument's
		 * clock: the timebase cancels. */
		for (size_t i = 0; i < b->n; i++)
			if (strcmp(b->term[i].name, "timebase") == 0) {
				b->term[i].known = 1;
				b->term[i].limit = b->term[i].u = 0.0;
				b->term[i].divisor = sqrt(3.0);
				snprintf(
				    b->term[i].source, sizeof(b->term[i].source),
				    "cancels: the energy and the observed time are on one clock");
			}
		ergon_budget_close(b);
		ergon_budget_scale(b, w->integral_s > 0 ? 1.0 / w->integral_s : NAN, "W");
		return;
	}
	ergon_budget_close(b);
}

void ergon_internal_budget(const struct ergon_power_terminal *t, const struct ergon_rating *r,
			   double energy_lsb_j, double charge_lsb_c, double cycle_s, int figure,
			   struct ergon_budget *b)
{
	double e = t->have_energy ? t->energy_nj * 1e-9 : NAN;
	double q = t->have_charge ? t->charge_nc * 1e-9 : NAN;
	double dur = t->duration_us > 0	 ? (double)t->duration_us * 1e-6
		     : t->elapsed_us > 0 ? (double)t->elapsed_us * 1e-6
					 : NAN;
	double v = t->bus_voltage_uv * 1e-6;
	int charge = figure == ERGON_PF_CHARGE;
	double value = charge ? q : e;
	ergon_budget_init(b, value, charge ? "C" : "J");
	const struct ergon_rating_range *g = &r->range[0];
	if (r->model != ERGON_RATING_IV) {
		ergon_budget_add_unknown(b, "rated accuracy",
					 "the on-board monitor's rating is not "
					 "known");
	} else {
		rated(b, "current gain", &g->gain_pct, 0.01 * fabs(value),
		      "% of the accumulated reading");
		rated(b, "current offset", &g->offset_a, charge ? dur : fabs(v) * dur,
		      charge ? "over the window's duration"
			     : "times the bus voltage, over the window's duration");
		if (!charge) {
			rated(b, "voltage gain", &r->v_gain_pct, 0.01 * fabs(value),
			      "% of the accumulated reading");
			rated(b, "voltage offset", &r->v_offset_v, fabs(q),
			      "times the charge of the window");
		}
	}
	if (r->external_shunt)
		shunt_terms(b, r, fabs(value), "% of the reading");
	double lsb = charge ? charge_lsb_c : energy_lsb_j;
	if (isfinite(lsb) && lsb > 0)
		ergon_budget_add(b, "resolution", lsb, ERGON_DIST_RECT, 0,
				 "one %s register step (from CURRENT_LSB: the configured shunt "
				 "and maximum current)",
				 charge ? "CHARGE" : "ENERGY");
	else
		ergon_budget_add_unknown(b, "resolution",
					 "the %s register's step is not known here (it follows "
					 "from the configured shunt and maximum current)",
					 charge ? "CHARGE" : "ENERGY");
	rated(b, "timebase", &r->timebase_ppm, 1e-6 * fabs(value),
	      "the monitor's oscillator times the accumulation");
	double mean = fabs(value) / dur;
	if (isfinite(cycle_s) && cycle_s > 0 && isfinite(mean))
		ergon_budget_add(
		    b, "window edges", sqrt(2.0) * cycle_s * mean, ERGON_DIST_RECT, 0,
		    "the accumulator moves once per conversion cycle (%.6g s): each of "
		    "the window's two ends within one cycle at the mean %s",
		    cycle_s, charge ? "current" : "power");
	else
		ergon_budget_add_unknown(b, "window edges",
					 "the monitor's conversion cycle (conversion time x "
					 "averaging) is not known here");
	ergon_budget_close(b);
	if (figure == ERGON_PF_POWER) {
		ergon_budget_add_unknown(b, "firmware clock",
					 "the mean power divides by the firmware's window clock, "
					 "whose tolerance the record does not state");
		ergon_budget_scale(b, 1.0 / dur, "W");
	}
}

void ergon_epi_budget(const struct ergon_budget *energy, uint64_t count, double window_error_s,
		      double avg_power_w, const char *observer_src, struct ergon_budget *b)
{
	*b = *energy;
	ergon_budget_scale(b, 1.0 / (double)count, "J");
	if (observer_src == NULL)
		return;
	if (isfinite(window_error_s))
		ergon_budget_add(b, "observer window",
				 fabs(window_error_s * avg_power_w) / (double)count,
				 ERGON_DIST_RECT, 0, "%s", observer_src);
	else
		ergon_budget_add_unknown(b, "observer window", "%s", observer_src);
	ergon_budget_close(b);
}

void ergon_gated_plan_budget(const struct ergon_rating *r, const struct ergon_gated_plan *p,
			     struct ergon_budget *b)
{
	struct ergon_rating none;
	if (r == NULL) {
		ergon_rating_init(&none, ERGON_RATING_NONE);
		r = &none;
	}
	ergon_budget_init(b, 1.0, "1");
	double i = fabs(p->current_a), v = fabs(p->voltage_v), t = p->window_s;
	int have_i = isfinite(i) && i > 0, have_v = isfinite(v) && v > 0;
	int have_t = isfinite(t) && t > 0;
	if (r->model == ERGON_RATING_IV && r->n_ranges > 0) {
		/* The range the expected current needs; without one the
		 * smallest gain of any range keeps the estimate a lower bound. */
		int rg = have_i ? ergon_rating_range_for(r, i) : -1;
		if (rg >= 0) {
			rated(b, "current gain", &r->range[rg].gain_pct, 0.01,
			      "% of every reading");
			if (!ergon_rated_known(&r->range[rg].offset_a))
				rated(b, "current offset", &r->range[rg].offset_a, 1.0, "");
			else
				ergon_budget_add(
				    b, "current offset", r->range[rg].offset_a.value / i,
				    ERGON_DIST_RECT, 0, "%s; over the expected %.6g A in range %s",
				    r->range[rg].offset_a.source, i, r->range[rg].name);
		} else {
			int lo = -1;
			for (int k = 0; k < r->n_ranges; k++) {
				const struct ergon_rated *g = &r->range[k].gain_pct;
				if (!ergon_rated_known(g)) {
					lo = k;
					break;
				}
				if (lo < 0 || g->value < r->range[lo].gain_pct.value)
					lo = k;
			}
			rated(b, "current gain", &r->range[lo].gain_pct, 0.01,
			      "% of every reading; the smallest of the ranges (no expected "
			      "current picks one)");
		}
		rated(b, "voltage gain", &r->v_gain_pct, 0.01, "% of every reading");
		if (!ergon_rated_known(&r->v_offset_v))
			rated(b, "voltage offset", &r->v_offset_v, 1.0, "");
		else if (have_v)
			ergon_budget_add(b, "voltage offset", r->v_offset_v.value / v,
					 ERGON_DIST_RECT, 0, "%s; over the %.6g V rail",
					 r->v_offset_v.source, v);
		if (have_i && have_v && have_t && p->samples_per_packet >= 1 && p->edge_s > 0) {
			/* Each sample within half its range's step, independent:
			 * over N = T / edge_s packets of n samples each, the
			 * relative bound is step x sqrt(N / n) x edge_s / (i x T). */
			int rg = ergon_rating_range_for(r, i);
			double step = rg >= 0 ? r->range[rg].resolution_a : NAN;
			double n_pk = t / p->edge_s;
			if (step > 0)
				ergon_budget_add_u(b, "quantization",
						   step * sqrt(n_pk / p->samples_per_packet) *
						       p->edge_s / (i * t),
						   sqrt(12.0), ERGON_DIST_RECT, 0,
						   "each sample within half its range's step, "
						   "independent (%.0f samples a packet)",
						   p->samples_per_packet);
			else
				ergon_budget_add_unknown(b, "quantization",
							 "the instrument's step in the range the "
							 "expected current needs is not stated");
		}
	} else if (r->model == ERGON_RATING_POWER) {
		for (int k = 0; k < r->n_pterms; k++) {
			const struct ergon_rating_pterm *q = &r->pterm[k];
			if (q->kind == ERGON_PTERM_GAIN_PCT)
				rated(b, q->name, &q->x, 0.01, "% of every reading");
			else if (!ergon_rated_known(&q->x))
				ergon_budget_add_unknown(b, q->name, "%s", q->x.source);
			else if (have_i && have_v)
				ergon_budget_add(b, q->name, q->x.value / (i * v), ERGON_DIST_RECT,
						 0, "%s; over the expected %.6g W", q->x.source,
						 i * v);
		}
	} else {
		ergon_budget_add_unknown(b, "rated accuracy",
					 "the instrument states no accuracy known to ergon");
	}
	if (r->external_shunt)
		shunt_terms(b, r, 1.0, "% of every reading");
	if (isfinite(p->energy_lsb_j) && p->energy_lsb_j > 0 && have_i && have_v && have_t)
		ergon_budget_add(b, "resolution", p->energy_lsb_j / (i * v * t), ERGON_DIST_RECT, 0,
				 "one ENERGY register step over the expected window's energy");
	rated(b, "timebase", &r->timebase_ppm, 1e-6, "ppm of the instrument's clock");
	if (have_t && p->edge_s > 0)
		/* Both edges at the window's power: sqrt(2) x edge_s / T. */
		ergon_budget_add_u(b, "gate edges", sqrt(2.0) * p->edge_s / t, sqrt(3.0),
				   ERGON_DIST_RECT, 0,
				   "2 gate edges, each within %.6g s at the window's power, over "
				   "the planned %.6g s window",
				   p->edge_s, t);
	ergon_budget_close(b);
}
