/* Sign and continuity checks of a recording (docs/POWER_CHECKS.md, "Sign
 * and time checks"; thresholds in ergon/plausible.h): a load draws energy,
 * so a window that delivers it, or samples that run backwards through the
 * load, are a negated column or a corrupt file; and statistics packets
 * that leave part of a gate window uncovered make its figures miss that
 * part. Each is an error: the figures are withheld, never published as
 * valid. Pure: numbers the gated engine gathered in, issues out. */
#include "ergon/gated.h"
#include "ergon/issue_list.h"
#include "ergon/plausible.h"

#include <math.h>
#include <stdio.h>

/* The window's mean current in the load's direction, for the message: from
 * the energy over the mean voltage when it is known, else the charge. */
static double load_current_a(const struct ergon_window_figures *w, int by_energy)
{
	if (by_energy)
		return w->energy_j / (w->integral_s * fabs(w->avg_voltage_v));
	return w->charge_c / w->integral_s;
}

/* Negative energy beyond what an offset explains; 1 when w delivered it. */
static int negative(const struct ergon_window_figures *w, int *by_energy)
{
	double t = w->integral_s;
	*by_energy = 0;
	if (!(t > 0))
		return 0;
	double floor_a = ERGON_NEGATIVE_MEAN_A;
	if (isfinite(w->energy_j)) {
		int v_known = isfinite(w->avg_voltage_v) && w->avg_voltage_v != 0;
		if (!(w->energy_j < 0))
			return 0;
		if (v_known) {
			*by_energy = 1;
			return -w->energy_j > floor_a * t * fabs(w->avg_voltage_v);
		}
		/* No voltage: the energy's own effective voltage |E / Q| makes
		 * the floor 1 mA x T of charge. */
		return isfinite(w->charge_c) && fabs(w->charge_c) > floor_a * t;
	}
	return isfinite(w->charge_c) && w->charge_c < -floor_a * t;
}

static int check_negative(const struct ergon_window_figures *w, const char *where,
			  struct ergon_issue_list *issues)
{
	int by_energy;
	if (!negative(w, &by_energy))
		return 0;
	double i = load_current_a(w, by_energy);
	if (!isfinite(i))
		i = w->charge_c / w->integral_s;
	struct ergon_issue_field ctx[] = {
	    ERGON_ISSUE_TEXT("window", where),
	    ERGON_ISSUE_REAL("start_s", w->start_s),
	    ERGON_ISSUE_REAL("end_s", w->end_s),
	    isfinite(w->energy_j) ? ERGON_ISSUE_REAL("energy_j", w->energy_j)
				  : ERGON_ISSUE_NULL("energy_j"),
	    isfinite(w->charge_c) ? ERGON_ISSUE_REAL("charge_c", w->charge_c)
				  : ERGON_ISSUE_NULL("charge_c"),
	    ERGON_ISSUE_REAL("floor_a", ERGON_NEGATIVE_MEAN_A),
	};
	ergon_issue_list_add(
	    issues, "power.negative_energy", ctx, sizeof ctx / sizeof ctx[0],
	    "%s (t = %.6f .. %.6f s): energy %.6g J, charge %.6g C over %.6g s, a mean of %.4g A "
	    "in the load's direction: the rail delivered energy instead of drawing it, beyond "
	    "the %g A an offset or noise explains; a current, voltage or energy column is "
	    "negated (IN+/IN- swapped, a sign flipped in the export); figures withheld",
	    where, w->start_s, w->end_s, w->energy_j, w->charge_c, w->integral_s, i,
	    ERGON_NEGATIVE_MEAN_A);
	return 1;
}

static int check_reverse(const struct ergon_window_figures *w, const char *where, int raw,
			 struct ergon_issue_list *issues)
{
	if (w->sg.reverse_n <= ERGON_REVERSE_COUNT_MAX)
		return 0;
	struct ergon_issue_field ctx[] = {
	    ERGON_ISSUE_TEXT("window", where),
	    ERGON_ISSUE_INT("count", w->sg.reverse_n),
	    ERGON_ISSUE_REAL("first_t_s", w->sg.reverse_first_s),
	    ERGON_ISSUE_REAL("most_negative_a", w->sg.reverse_min_a),
	    ERGON_ISSUE_REAL("threshold_a", ERGON_REVERSE_CURRENT_A),
	};
	ergon_issue_list_add(
	    issues, "power.reverse_current", ctx, sizeof ctx / sizeof ctx[0],
	    "%s: %llu %s ran backwards through the load (negative power at more than %g A), the "
	    "first at t = %.6f s, down to %.4g A: a load does not return current (more than %d "
	    "such readings is no range-switching spike); the recording is corrupt or the rail "
	    "back-feeds; figures withheld",
	    where, (unsigned long long)w->sg.reverse_n, raw ? "samples" : "statistics packets",
	    ERGON_REVERSE_CURRENT_A, w->sg.reverse_first_s, w->sg.reverse_min_a,
	    ERGON_REVERSE_COUNT_MAX);
	return 1;
}

static int check_gap(const struct ergon_window_figures *w, const char *where,
		     struct ergon_issue_list *issues)
{
	double span = w->end_s - w->start_s;
	if (!(w->sg.gap_s > ERGON_TIME_GAP_FRACTION * span))
		return 0;
	struct ergon_issue_field ctx[] = {
	    ERGON_ISSUE_TEXT("window", where),
	    ERGON_ISSUE_REAL("uncovered_s", w->sg.gap_s),
	    ERGON_ISSUE_REAL("window_s", span),
	    ERGON_ISSUE_REAL("largest_gap_s", w->sg.gap_max_s),
	    ERGON_ISSUE_REAL("largest_gap_at_s", w->sg.gap_max_at_s),
	};
	ergon_issue_list_add(
	    issues, "power.time_gap", ctx, sizeof ctx / sizeof ctx[0],
	    "%s (t = %.6f .. %.6f s): %.6g s of its %.6g s are covered by no statistics packet "
	    "(the largest hole %.6g s from t = %.6f s): more than %g%% of it is missing from "
	    "its figures; re-record, or cut the recording at the hole",
	    where, w->start_s, w->end_s, w->sg.gap_s, span, w->sg.gap_max_s, w->sg.gap_max_at_s,
	    100.0 * ERGON_TIME_GAP_FRACTION);
	return 1;
}

int ergon_recording_check(const struct ergon_gated_result *res, struct ergon_issue_list *issues)
{
	if (res == NULL)
		return 0;
	char where[48];
	int neg = 0, rev = 0, gap = 0;
	for (size_t k = 0; k < res->window_count; k++) {
		const struct ergon_window_figures *w = &res->windows[k];
		snprintf(where, sizeof(where), "gate window %zu", k + 1);
		neg = neg || check_negative(w, where, issues);
		rev = rev || check_reverse(w, where, res->raw, issues);
		gap = gap || check_gap(w, where, issues);
	}
	/* The whole capture: a corrupt stretch outside the gate is still a
	 * corrupt recording. A hole outside every gate window costs no gated
	 * figure; without a window, the whole capture's figures are degraded
	 * already and its holes are what power.packets_dropped names. */
	neg = neg || check_negative(&res->whole, "the whole capture", issues);
	rev = rev || check_reverse(&res->whole, "the whole capture", res->raw, issues);
	return neg || rev || gap;
}
