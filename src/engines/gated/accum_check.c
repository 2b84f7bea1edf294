/* Accumulator cross-checks (docs/POWER_CHECKS.md, "Accumulator
 * cross-checks"): a window's energy from the instrument's energy_j
 * accumulator must agree with what the same packets say otherwise, the
 * integral of p_avg_w and the integral of i_avg_a x v_avg_v, within a
 * tolerance built from the packets' own statistics. A mismatch means one of
 * the columns is wrong, and the accumulator's figure is not published as
 * valid (power.accumulator_inconsistent, an error). */
#include "ergon/gated.h"
#include "ergon/issue_list.h"

#include <math.h>
#include <stdio.h>

/* Relative agreement of two float sums of the same samples: the packets'
 * means are float32 (about 6e-8 relative); 1e-6 covers that with margin.
 * Printed values add their own resolution (energy_res_j, p_res_w, ...). */
#define XCHECK_REL 1e-6
/* The accumulator is a running total: its start and end values each carry
 * the printing precision of the largest total seen (2 roundings). */
#define XCHECK_ACC_ROUNDINGS 2.0
/* An absolute floor, far below any instrument's energy resolution. */
#define XCHECK_ABS_J 1e-12

void ergon_accum_xcheck_add(struct ergon_accum_xcheck *x, const struct ergon_stats_packet *q,
			    double span_s, double gap_s, double delta_j)
{
	x->packets++;
	x->acc_j += delta_j;
	/* The window's delta is end minus start of the running total: both
	 * roundings are bounded by the resolution of the largest total. */
	if (fabs(q->energy_j) >= x->acc_max_abs) {
		x->acc_max_abs = fabs(q->energy_j);
		x->acc_res_j = q->energy_res_j;
	}
	/* Printed values are off by at most half their last digit. */
	x->pres_j += span_s * 0.5 * q->p_res_w;
	x->ivres_j +=
	    span_s * 0.5 * (fabs(q->v_avg_v) * q->i_res_a + fabs(q->i_avg_a) * q->v_res_v);
	double p = NAN;
	if (q->fields & ERGON_PKT_POWER) {
		p = q->p_avg_w;
		x->p_packets++;
		x->pdt_j += p * span_s;
	}
	if (q->fields & ERGON_PKT_VOLTAGE) {
		double iv = q->i_avg_a * q->v_avg_v;
		x->iv_packets++;
		x->ivdt_j += iv * span_s;
		if (!isfinite(p))
			p = iv;
		/* mean(i v) = mean(i) mean(v) + cov(i, v), and |cov| <= sd_i sd_v
		 * (Cauchy-Schwarz); without the standard deviations, the range
		 * bounds each sd by half of max - min. */
		double sd_i = q->i_std_a, sd_v = q->v_std_v;
		int known = sd_i > 0 || sd_v > 0;
		if (!known && (q->fields & ERGON_PKT_MINMAX)) {
			sd_i = 0.5 * (q->i_max_a - q->i_min_a);
			sd_v = 0.5 * (q->v_max_v - q->v_min_v);
			known = 1;
		}
		if (known) {
			x->cov_packets++;
			x->cov_j += fabs(sd_i * sd_v) * span_s;
		}
	}
	if (gap_s > 0) {
		/* Between packets nothing but the accumulator saw the power: bound
		 * it by this packet's peak (max, else mean + 3 sd). */
		double peak = fabs(p);
		if ((q->fields & ERGON_PKT_POWER) && (q->fields & ERGON_PKT_MINMAX))
			peak = fmax(peak, fmax(fabs(q->p_max_w), fabs(q->p_min_w)));
		else if (q->fields & ERGON_PKT_POWER)
			peak += 3 * fabs(q->p_std_w);
		x->gap_j += gap_s * (isfinite(peak) ? peak : 0.0);
	}
}

void ergon_accum_xcheck_merge(struct ergon_accum_xcheck *x, const struct ergon_accum_xcheck *y)
{
	x->packets += y->packets;
	x->acc_j += y->acc_j;
	x->p_packets += y->p_packets;
	x->pdt_j += y->pdt_j;
	x->iv_packets += y->iv_packets;
	x->ivdt_j += y->ivdt_j;
	x->cov_packets += y->cov_packets;
	x->cov_j += y->cov_j;
	x->gap_j += y->gap_j;
	x->pres_j += y->pres_j;
	x->ivres_j += y->ivres_j;
	if (y->acc_max_abs > x->acc_max_abs)
		x->acc_max_abs = y->acc_max_abs;
	x->acc_res_j = fmax(x->acc_res_j, y->acc_res_j);
}

double ergon_accum_xcheck_tolerance_j(const struct ergon_accum_xcheck *x, double other_j)
{
	/* The window's delta is end minus start of the running total: two
	 * roundings, each within half its resolution (or float32-like
	 * precision when the values were exact binary). */
	double acc_round = fmax(x->acc_res_j, XCHECK_ACC_ROUNDINGS * XCHECK_REL * x->acc_max_abs);
	return XCHECK_REL * (fabs(x->acc_j) + fabs(other_j)) + acc_round + x->gap_j + XCHECK_ABS_J;
}

/* One comparison; adds the issue and returns 1 on a mismatch. */
static int compare(const struct ergon_accum_xcheck *x, const char *where, const char *what,
		   double other_j, double extra_tol_j, struct ergon_issue_list *issues)
{
	double tol = ergon_accum_xcheck_tolerance_j(x, other_j) + extra_tol_j;
	double diff = x->acc_j - other_j;
	if (isfinite(diff) && fabs(diff) <= tol)
		return 0;
	struct ergon_issue_field ctx[] = {
	    ERGON_ISSUE_TEXT("window", where),
	    ERGON_ISSUE_TEXT("compared_with", what),
	    isfinite(x->acc_j) ? ERGON_ISSUE_REAL("accumulator_j", x->acc_j)
			       : ERGON_ISSUE_NULL("accumulator_j"),
	    isfinite(other_j) ? ERGON_ISSUE_REAL("integrated_j", other_j)
			      : ERGON_ISSUE_NULL("integrated_j"),
	    ERGON_ISSUE_REAL("tolerance_j", tol),
	    ERGON_ISSUE_INT("packets", x->packets),
	};
	ergon_issue_list_add(
	    issues, "power.accumulator_inconsistent", ctx, sizeof ctx / sizeof ctx[0],
	    "%s: the energy_j accumulator moved %.6g J over %llu packets, but the same "
	    "packets' %s integrates to %.6g J (difference %.3g J, tolerance %.3g J): "
	    "one of the columns is wrong, so the accumulator's energy is not valid; "
	    "check the recording's export",
	    where, x->acc_j, (unsigned long long)x->packets, what, other_j, diff, tol);
	return 1;
}

static int check_one(const struct ergon_accum_xcheck *x, const char *where,
		     struct ergon_issue_list *issues)
{
	if (x->packets == 0)
		return 0;
	/* Only like with like: every accumulator packet must carry the field
	 * (and, for i x v, a bound on the covariance). */
	int bad = 0;
	if (x->p_packets == x->packets)
		bad = compare(x, where, "p_avg_w", x->pdt_j, x->pres_j, issues);
	if (!bad && x->iv_packets == x->packets && x->cov_packets == x->packets)
		bad = compare(x, where, "i_avg_a x v_avg_v", x->ivdt_j, x->cov_j + x->ivres_j,
			      issues);
	return bad;
}

int ergon_accum_check(const struct ergon_gated_result *res, struct ergon_issue_list *issues)
{
	if (res == NULL || res->raw)
		return 0;
	if (res->energy_backwards > 0) {
		/* Negative energy for a load (ergon/plausible.h, counted by
		 * the engine): the accumulator cannot be right. */
		struct ergon_issue_field ctx[] = {
		    ERGON_ISSUE_TEXT("compared_with", "the packets' own power or current"),
		    ERGON_ISSUE_INT("first_packet", res->energy_backwards_first),
		    ERGON_ISSUE_REAL("backwards_j", res->energy_backwards_j),
		    ERGON_ISSUE_INT("packets", res->energy_backwards),
		};
		ergon_issue_list_add(
		    issues, "power.accumulator_inconsistent", ctx, sizeof ctx / sizeof ctx[0],
		    "statistics packet %llu: energy_j runs backwards by %.3g J while the "
		    "packet's power (or current and charge) says the load drew energy, in %llu "
		    "packet(s): negative energy is physically impossible, so the accumulator's "
		    "energy is not valid; check the instrument or its bridge",
		    (unsigned long long)res->energy_backwards_first, res->energy_backwards_j,
		    (unsigned long long)res->energy_backwards);
		return 1;
	}
	char where[48];
	for (size_t k = 0; k < res->window_count; k++) {
		snprintf(where, sizeof(where), "gate window %zu", k + 1);
		if (check_one(&res->windows[k].xcheck, where, issues))
			return 1; /* the first inconsistent window is enough */
	}
	return check_one(&res->whole.xcheck, "the whole capture", issues);
}
