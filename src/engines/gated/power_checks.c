/* The power checks: gate vs firmware window clock (observer), gate vs the
 * reference inference time, terminal-record and INA228 checks, and the
 * clean-window checks. Pure functions of numbers; every threshold is
 * documented in docs/POWER_CHECKS.md. */
#include "ergon/gated.h"
#include "ergon/issue_list.h"
#include "ergon/issues.h"

#include <math.h>
#include <string.h>

/* Observer check relative tolerance: two independent clocks (firmware
 * timer, instrument sample clock), each good to well under 0.5 %. */
#define OBSERVER_REL 0.01
/* Reference check: a confirmed gate may drift this far from the profile
 * boot's reference (cold-boot HFRC clocks run ~10 % off) before it is a
 * mismatch. */
#define REFERENCE_DRIFT_MAX 0.15
#define CROSS_BOOT_COUNTED 0.10
#define CROSS_BOOT_BUSY_LOOP 0.25
#define WINDOW_CLOCK_MISMATCH 0.25

static void reason(struct ergon_power_verdict *v, const char *why)
{
	if (v->nreasons < ERGON_POWER_REASONS_MAX)
		v->reasons[v->nreasons++] = why;
}

/* Each per-inference reason and the issue codes that can decide it
 * (docs/POWER_CHECKS.md, "Why per-inference figures are withheld"). A
 * reason decided by one issue is that issue's code without "power.". */
static const struct {
	const char *reason;
	const char *codes[5];
} reason_issues[] = {
    {"window_clock_frozen", {"power.window_clock_frozen"}},
    {"ina228_measurement_failed",
     {"power.ina228_failed", "power.zero_energy_and_charge", "power.zero_charge",
      "power.accumulator_overflow"}},
    {"terminal_failed_or_incomplete", {"power.terminal_incomplete"}},
    {"device_timing_corrupt", {"power.device_timing_corrupt"}},
    {"multiple_gate_windows", {"power.multiple_gate_windows"}},
    {"gate_below_minimum", {"power.gate_below_minimum"}},
    {"window_observer_mismatch", {"power.window_observer_mismatch"}},
    {"gate_duration_mismatch", {"power.gate_duration_mismatch"}},
    {"no_gate_window", {"power.observation_degraded"}},
    {"accumulator_inconsistent", {"power.accumulator_inconsistent"}},
    {"recording_implausible", {"power.negative_energy", "power.reverse_current", "power.time_gap"}},
};

const char *const *ergon_power_reason_issues(const char *why)
{
	for (size_t i = 0; why != NULL && i < sizeof reason_issues / sizeof reason_issues[0]; i++)
		if (strcmp(reason_issues[i].reason, why) == 0)
			return reason_issues[i].codes;
	return NULL;
}

int ergon_power_observer_agrees(double gate_s, double elapsed_s, double stats_period_s,
				double *allowance_s)
{
	/* An edge lands anywhere inside a packet and the gate is polled once per
	 * packet: one packet of quantization at each end. */
	double allow = 2.0 * stats_period_s;
	if (allowance_s)
		*allowance_s = allow;
	return fabs(gate_s - elapsed_s) <= OBSERVER_REL * elapsed_s + allow;
}

double ergon_power_reference_tolerance_s(double expected_s, uint64_t count, double avg_us,
					 double stats_period_s, int probe_kind)
{
	double tol = 2.0 * stats_period_s;
	if (count > 1 && 0.5 * avg_us * 1e-6 > tol)
		tol = 0.5 * avg_us * 1e-6;
	double cross =
	    (probe_kind == ERGON_PROBE_BUSY_LOOP ? CROSS_BOOT_BUSY_LOOP : CROSS_BOOT_COUNTED) *
	    expected_s;
	return cross > tol ? cross : tol;
}

static uint64_t reference_count(const struct ergon_power_facts *f)
{
	if (f->have_clean_count && f->clean_infer_count > 0)
		return f->clean_infer_count;
	if (f->terminal.status != ERGON_TERMINAL_NONE)
		return f->terminal.completed_count;
	return 0;
}

void ergon_power_check_internal(const struct ergon_power_facts *f, struct ergon_issue_list *issues,
				int *fail, struct ergon_power_ceiling *ceiling)
{
	const struct ergon_power_terminal *t = &f->terminal;
	*fail = 0;
	double elapsed_s = (double)t->elapsed_us * 1e-6;
	double env = f->host_envelope_s;
	double slack = env > 0 ? fmax(0.25, 0.02 * env) : 0;
	/* Present on every internal run, so a reader can tell "checked and
	 * fine" from "could not be checked": the fields it cannot compute are
	 * null and `reason` says why (null when the check ran in full). */
	int have = t->status != ERGON_TERMINAL_NONE && t->have_elapsed;
	const char *why = t->status == ERGON_TERMINAL_NONE ? "no_terminal_record"
			  : !t->have_elapsed		   ? "record_lacks_elapsed_us"
			  : !(env > 0)			   ? "host_envelope_unknown"
							   : NULL;
	memset(ceiling, 0, sizeof(*ceiling));
	ceiling->have_elapsed = have;
	ceiling->elapsed_us = have ? t->elapsed_us : 0;
	ceiling->elapsed_s = have ? elapsed_s : 0;
	ceiling->have_envelope = env > 0;
	ceiling->host_envelope_s = env > 0 ? env : 0;
	ceiling->slack_s = env > 0 ? slack : 0;
	ceiling->have_ratio = have && env > 0;
	ceiling->ratio = have && env > 0 ? elapsed_s / env : 0;
	ceiling->reason = why;
	/* The on-board INA228 is the measurement of record: when it failed, or
	 * the record carries no measurement, nothing was measured and the run
	 * is failed (an error, not the warning an external run's incomplete
	 * terminal is). */
	int ina_phase = strncmp(t->final_phase, "ina228_", 7) == 0;
	if (t->status == ERGON_TERMINAL_NONE || (t->status != ERGON_TERMINAL_OK && ina_phase) ||
	    !t->have_energy) {
		struct ergon_issue_field c[] = {
		    ERGON_ISSUE_TEXT("final_phase",
				     t->status == ERGON_TERMINAL_NONE ? "" : t->final_phase),
		    ERGON_ISSUE_INT("error_code", t->error_code)};
		if (t->status == ERGON_TERMINAL_NONE)
			ergon_issue_list_add(
			    issues, "power.ina228_failed", c, 2,
			    "no power terminal record: the on-board INA228's "
			    "measurement never reached the host; the run is failed");
		else if (t->status != ERGON_TERMINAL_OK && ina_phase)
			ergon_issue_list_add(
			    issues, "power.ina228_failed", c, 2,
			    "the on-board INA228, the measurement of record, failed "
			    "in phase %s (error %lld; the terminal record names it): "
			    "no energy was measured; the run is failed",
			    t->final_phase, (long long)t->error_code);
		else
			ergon_issue_list_add(
			    issues, "power.ina228_failed", c, 2,
			    "the power terminal record (status %s, phase %s) carries "
			    "no INA228 measurement: nothing was measured; the run is "
			    "failed",
			    t->status == ERGON_TERMINAL_OK ? "ok" : "not ok", t->final_phase);
		*fail = 1;
	}
	if (t->status == ERGON_TERMINAL_NONE)
		return;
	if (t->have_elapsed) {
		/* The host envelope (start of the power binary to collecting its
		 * record) bounds the firmware window from above; the slack covers
		 * boot and record transfer. */
		if (env > 0 && elapsed_s > env + slack) {
			struct ergon_issue_field c[] = {ERGON_ISSUE_REAL("elapsed_s", elapsed_s),
							ERGON_ISSUE_REAL("host_envelope_s", env),
							ERGON_ISSUE_REAL("slack_s", slack)};
			ergon_issue_list_add(
			    issues, "power.window_clock_exceeds_host_time", c, 3,
			    "the firmware window (%.6f s) is longer than the host-timed "
			    "envelope %.6f s + %.3f s slack: the firmware clock runs fast "
			    "or the counter is corrupt",
			    elapsed_s, env, slack);
		}
	}
	uint64_t count = reference_count(f);
	if (t->have_elapsed && t->elapsed_us > 0 && count > 0 && f->clean_infer_avg_us > 0) {
		double ref_s = (double)count * f->clean_infer_avg_us * 1e-6;
		if (fabs(elapsed_s - ref_s) > WINDOW_CLOCK_MISMATCH * ref_s) {
			struct ergon_issue_field c[] = {
			    ERGON_ISSUE_REAL("elapsed_s", elapsed_s),
			    ERGON_ISSUE_REAL("reference_s", ref_s), ERGON_ISSUE_INT("count", count),
			    ERGON_ISSUE_REAL("clean_infer_avg_us", f->clean_infer_avg_us)};
			ergon_issue_list_add(
			    issues, "power.window_clock_mismatch", c, 4,
			    "elapsed %.6f s vs %llu x %.3f us = %.6f s: off by more than "
			    "25%%; check the window timer's clock source",
			    elapsed_s, (unsigned long long)count, f->clean_infer_avg_us, ref_s);
		}
	}
	if (t->have_energy) {
		int zero_charge = t->have_charge && t->charge_nc == 0.0;
		if (t->energy_nj == 0.0 && (zero_charge || !t->have_charge)) {
			ergon_issue_list_add(
			    issues, "power.zero_energy_and_charge", NULL, 0,
			    "the INA228 reported exactly zero energy and charge: the sense "
			    "path is dead (shunt or IN+/IN- not connected) or the window "
			    "was shorter than one accumulator update (conversion time x "
			    "averaging count)");
			*fail = 1;
		} else if (zero_charge && t->have_charge_clamped && !t->charge_clamped) {
			/* The firmware read a true zero, not a clamped negative:
			 * the wiring is not reversed, the net charge cancelled. */
			ergon_issue_list_add(
			    issues, "power.zero_charge", NULL, 0,
			    "the INA228 reported %.0f nJ but a net charge of exactly zero "
			    "(not clamped: the current was not negative on the whole): "
			    "current flowed both ways in equal measure, so charge-based "
			    "figures cannot be trusted; check for back-feeding on the rail",
			    t->energy_nj);
			*fail = 1;
		} else if (zero_charge) {
			ergon_issue_list_add(
			    issues, "power.zero_charge", NULL, 0,
			    "the INA228 reported %.0f nJ but zero charge: current reads "
			    "as negative, so IN+ and IN- are probably reversed; swap them",
			    t->energy_nj);
			*fail = 1;
		}
	}
	if (t->overflow) {
		ergon_issue_list_add(
		    issues, "power.accumulator_overflow", NULL, 0,
		    "the INA228 energy/charge accumulator overflowed during the window: "
		    "its total is not the window's; shorten the window or lower the "
		    "current LSB");
		*fail = 1;
	}
}

int ergon_power_evaluate(const struct ergon_power_facts *f, const struct ergon_power_gate_view *gv,
			 struct ergon_issue_list *issues, struct ergon_power_verdict *v)
{
	memset(v, 0, sizeof(*v));
	const struct ergon_power_terminal *t = &f->terminal;
	int have_term = t->status != ERGON_TERMINAL_NONE;
	int term_ok = t->status == ERGON_TERMINAL_OK;
	double elapsed_s = (double)t->elapsed_us * 1e-6;
	int firmware_window = have_term && term_ok && t->have_elapsed && t->elapsed_us > 0;

	if (have_term && t->completed_count > 0 && t->have_elapsed && t->elapsed_us == 0) {
		/* One code, as the method names it; its severity follows the
		 * mode: external (the instrument owns the figures) a warning that
		 * degrades the run, internal (no other clock) an error. */
		if (ergon_issue_list_add(issues, "power.window_clock_frozen", NULL, 0,
					 "%llu inferences completed but the firmware window "
					 "clock reads 0 us: %s",
					 (unsigned long long)t->completed_count,
					 f->internal
					     ? "the timer is not running; the on-device "
					       "figures cannot be timed"
					     : "no firmware window to check the gate "
					       "against; the instrument's figures stand") == 0 &&
		    f->internal) {
			issues->items[issues->n - 1].severity = ERGON_SEV_ERROR;
			v->suspect = 1;
			reason(v, "window_clock_frozen");
		}
	}
	if (f->internal) {
		int fail = 0;
		v->have_ceiling = 1;
		ergon_power_check_internal(f, issues, &fail, &v->ceiling);
		if (fail) {
			v->omit_per_inference = 1;
			reason(v, "ina228_measurement_failed");
		}
	} else if (have_term && t->overflow && strcmp(t->source, "ina228") == 0) {
		ergon_issue_list_add(
		    issues, "power.accumulator_overflow_bystander", NULL, 0,
		    "the on-board INA228 accumulator overflowed; it is only a bystander "
		    "to this external capture, whose figures stand");
	}
	if (have_term && !term_ok) {
		struct ergon_issue_field c[] = {
		    ERGON_ISSUE_INT("requested_count", t->requested_count),
		    ERGON_ISSUE_INT("completed_count", t->completed_count)};
		ergon_issue_list_add(
		    issues, "power.terminal_incomplete", c, 2,
		    "the power terminal reported %s work (%llu of %llu inferences)",
		    t->status == ERGON_TERMINAL_FAILED ? "failed" : "incomplete",
		    (unsigned long long)t->completed_count, (unsigned long long)t->requested_count);
		v->suspect = 1;
		reason(v, "terminal_failed_or_incomplete");
	}
	if (f->terminal_expected && !have_term) {
		/* The record was lost (link, reset, a capture cut short): the
		 * observer check has no firmware clock to compare, so the ratio
		 * check below decides alone, with its cross-boot tolerance. */
		int ratio = f->have_clean_count && f->clean_infer_count > 0 &&
			    f->clean_infer_avg_us > 0 && gv->window_count > 0;
		struct ergon_issue_field c[] = {
		    ERGON_ISSUE_TEXT("observer_check", "not_run"),
		    ERGON_ISSUE_TEXT("ratio_check", ratio ? "authoritative" : "not_run"),
		    f->have_clean_count ? ERGON_ISSUE_INT("clean_infer_count", f->clean_infer_count)
					: ERGON_ISSUE_NULL("clean_infer_count"),
		    f->clean_count_source[0]
			? ERGON_ISSUE_TEXT("clean_count_source", f->clean_count_source)
			: ERGON_ISSUE_NULL("clean_count_source")};
		ergon_issue_list_add(
		    issues, "power.terminal_missing", c, 4,
		    "the power build's terminal record never arrived: the firmware's window "
		    "clock cannot confirm the gate, so %s; read the record through the debug "
		    "probe (symbol ert_power_terminal) or check the link",
		    ratio ? "the gate is checked against count x reference alone "
			    "(power.gate_duration_mismatch if it misses)"
			  : "with no clean count or reference either, per-inference figures are "
			    "withheld");
	}
	if (f->zero_time_inference) {
		ergon_issue_list_add(
		    issues, "power.device_timing_corrupt", NULL, 0,
		    "an inference reported zero time: the device timing is corrupt");
		v->suspect = 1;
		reason(v, "device_timing_corrupt");
	}

	if (gv->window_count > 1 && f->gate_windows_driven != gv->window_count) {
		/* The power firmware drives exactly one window; the sum of several
		 * divided by one window's count is not energy per inference. */
		uint64_t driven = f->gate_windows_driven ? f->gate_windows_driven : 1;
		struct ergon_issue_field c[] = {ERGON_ISSUE_INT("windows_seen", gv->window_count),
						ERGON_ISSUE_INT("windows_driven", driven)};
		ergon_issue_list_add(
		    issues, "power.multiple_gate_windows", c, 2,
		    "the recording holds %zu qualifying gate windows but the firmware "
		    "drove %llu%s: their summed energy is not divided by one window's "
		    "count; per-inference figures are withheld (cut the recording to "
		    "one window, or say \"gate_windows\": N in the facts)",
		    gv->window_count, (unsigned long long)driven,
		    f->gate_windows_driven ? "" : " (facts state no gate_windows)");
		v->suspect = 1;
		reason(v, "multiple_gate_windows");
	}
	if (gv->window_count > 0) {
		if (gv->shortest_integral_s < gv->min_window_s) {
			struct ergon_issue_field c[] = {
			    ERGON_ISSUE_REAL("integral_s", gv->shortest_integral_s),
			    ERGON_ISSUE_REAL("minimum_s", gv->min_window_s)};
			ergon_issue_list_add(
			    issues, "power.gate_below_minimum", c, 2,
			    "a gate window passed edge extraction but its statistics "
			    "packets cover only %.6f s (< %.3f s): packets are missing "
			    "inside the window; the run is invalid",
			    gv->shortest_integral_s, gv->min_window_s);
			v->suspect = 1;
			reason(v, "gate_below_minimum");
		}
		if (firmware_window) {
			v->observer_checked = 1;
			v->observer_ok = ergon_power_observer_agrees(
			    gv->gate_s, elapsed_s, gv->stats_period_s, &v->observer_allowance_s);
			if (!v->observer_ok) {
				struct ergon_issue_field c[] = {
				    ERGON_ISSUE_REAL("gate_s", gv->gate_s),
				    ERGON_ISSUE_REAL("elapsed_s", elapsed_s),
				    ERGON_ISSUE_REAL("tolerance_s", OBSERVER_REL * elapsed_s +
									v->observer_allowance_s)};
				ergon_issue_list_add(
				    issues, "power.window_observer_mismatch", c, 3,
				    "the instrument saw a %.6f s gate but the firmware's window "
				    "clock says %.6f s (tolerance 1%% + %.6f s): they did not "
				    "watch "
				    "the same window",
				    gv->gate_s, elapsed_s, v->observer_allowance_s);
				v->suspect = 1;
				reason(v, "window_observer_mismatch");
			}
		}
		uint64_t count = f->have_clean_count ? f->clean_infer_count : 0;
		if (count > 0 && f->clean_infer_avg_us > 0) {
			v->have_expected = 1;
			v->expected_s = (double)count * f->clean_infer_avg_us * 1e-6;
			v->ratio = gv->gate_s / v->expected_s;
			double miss = fabs(v->ratio - 1.0);
			if (firmware_window && v->observer_ok) {
				if (miss <= REFERENCE_DRIFT_MAX) {
					v->have_drift = 1;
					v->drift = v->ratio - 1.0;
					if (miss > OBSERVER_REL) {
						struct ergon_issue_field c[] = {
						    ERGON_ISSUE_REAL("drift", v->drift)};
						ergon_issue_list_add(
						    issues, "power.gated_window_reference_drift", c,
						    1,
						    "the confirmed gate runs %+.2f%% against the "
						    "profile boot's reference (clock drift between "
						    "boots)",
						    100.0 * v->drift);
					}
				} else {
					struct ergon_issue_field c[] = {
					    ERGON_ISSUE_REAL("gate_s", gv->gate_s),
					    ERGON_ISSUE_REAL("expected_s", v->expected_s),
					    ERGON_ISSUE_REAL("ratio", v->ratio)};
					ergon_issue_list_add(
					    issues, "power.gate_duration_mismatch", c, 3,
					    "the gate (%.6f s) is %.3f x the reference window "
					    "(%.6f s), beyond 15%% even though the firmware clock "
					    "agrees",
					    gv->gate_s, v->ratio, v->expected_s);
				}
			} else if (!firmware_window) {
				double tol = ergon_power_reference_tolerance_s(
				    v->expected_s, count, f->clean_infer_avg_us, gv->stats_period_s,
				    f->probe_kind);
				if (fabs(gv->gate_s - v->expected_s) > tol) {
					struct ergon_issue_field c[] = {
					    ERGON_ISSUE_REAL("gate_s", gv->gate_s),
					    ERGON_ISSUE_REAL("expected_s", v->expected_s),
					    ERGON_ISSUE_REAL("ratio", v->ratio),
					    ERGON_ISSUE_REAL("tolerance_s", tol)};
					ergon_issue_list_add(
					    issues, "power.gate_duration_mismatch", c, 4,
					    "the gate (%.6f s) misses count x reference (%.6f s) "
					    "by "
					    "more than %.6f s and no firmware window arbitrates",
					    gv->gate_s, v->expected_s, tol);
					v->suspect = 1;
					reason(v, "gate_duration_mismatch");
				}
			}
		}
		if (gv->have_whole) {
			v->have_current_ok = 1;
			v->current_ok = gv->gated_avg_current_a > gv->whole_avg_current_a;
			if (!v->current_ok)
				ergon_issue_list_add(
				    issues, "power.gated_current_not_above_whole", NULL, 0,
				    "the gated mean current %.9g A is not above the "
				    "whole-capture mean %.9g A (expected for very light "
				    "models; otherwise the gate may be on the wrong input)",
				    gv->gated_avg_current_a, gv->whole_avg_current_a);
		}
	} else if (!f->internal) {
		/* Internal runs need no host-side window: the target's INA228
		 * accumulated exactly its own gated window. */
		reason(v, "no_gate_window");
	}
	if (!f->have_clean_count || f->clean_infer_count == 0)
		reason(v, "no_clean_inference_count");
	v->omit_per_inference = v->omit_per_inference || v->suspect || gv->window_count == 0 ||
				!f->have_clean_count || f->clean_infer_count == 0;
	return 0;
}

int ergon_clean_window_check_counts(uint64_t stalled, uint64_t partial, uint64_t observed,
				    uint64_t total_iters, uint64_t ref_cycles,
				    struct ergon_issue_list *issues)
{
	uint64_t floor_cycles = ref_cycles / 8u;
	int any = 0;
	int total_unknown = total_iters == 0;
	uint64_t total = total_unknown ? observed : total_iters;
	int inconsistent =
	    !total_unknown && (stalled + partial > total || (observed != 0 && observed != total));
	if (stalled + partial > 0) {
		double aff = total ? (double)(stalled + partial) / (double)total : 1.0;
		/* A frozen iteration hides all its time, a partial at least 7/8. */
		double under =
		    total ? ((double)stalled + 0.875 * (double)partial) / (double)total : 1.0;
		struct ergon_issue_field c[9] = {
		    ERGON_ISSUE_INT("stalled_iters", stalled),
		    ERGON_ISSUE_INT("partial_iters", partial),
		    ERGON_ISSUE_INT("total_iters", total),
		    ERGON_ISSUE_REAL("affected_fraction", aff),
		    ERGON_ISSUE_REAL("understatement_lower_bound", under),
		    ERGON_ISSUE_INT("ref_cycles", ref_cycles)};
		size_t nc = 6;
		if (inconsistent)
			c[nc++] = ERGON_ISSUE_BOOL("counts_are_inconsistent", 1);
		if (total_unknown)
			c[nc++] = ERGON_ISSUE_BOOL("total_is_unknown", 1);
		if (floor_cycles == 0)
			c[nc++] = ERGON_ISSUE_BOOL("partial_check_inoperative", 1);
		ergon_issue_list_add(
		    issues, "profile.clean_window_stalled", c, nc,
		    "%llu of %llu clean-window iterations stalled and %llu ran partial: "
		    "the cycle counter stopped, so the clean time is understated by at "
		    "least %.1f%%",
		    (unsigned long long)stalled, (unsigned long long)total,
		    (unsigned long long)partial, 100.0 * under);
		any = 1;
	}
	if (floor_cycles == 0) {
		struct ergon_issue_field c[] = {ERGON_ISSUE_INT("ref_cycles", ref_cycles)};
		ergon_issue_list_add(
		    issues, "profile.clean_window_check_inoperative", c, 1,
		    "the warm reference is %llu cycles, so the partial-iteration floor "
		    "(1/8 of it) is zero: a silent check here is not health",
		    (unsigned long long)ref_cycles);
		any = 1;
	}
	return any;
}

int ergon_clean_window_check(const uint64_t *deltas, size_t n, uint64_t total_iters,
			     uint64_t ref_cycles, struct ergon_issue_list *issues)
{
	/* A partial iteration ran under 1/8 of the warm reference: the counter
	 * froze for most of it. */
	uint64_t floor_cycles = ref_cycles / 8u;
	uint64_t stalled = 0, partial = 0;
	for (size_t i = 0; i < n; i++) {
		if (deltas[i] == 0)
			stalled++;
		else if (deltas[i] < floor_cycles)
			partial++;
	}
	return ergon_clean_window_check_counts(stalled, partial, (uint64_t)n, total_iters,
					       ref_cycles, issues);
}

int ergon_clean_window_rate_check(double core_hz, double probe_us, uint64_t probe_cycles,
				  struct ergon_issue_list *issues)
{
	double expect = core_hz * probe_us * 1e-6;
	if ((double)probe_cycles < 0.5 * expect) {
		struct ergon_issue_field c[] = {ERGON_ISSUE_INT("probe_cycles", probe_cycles),
						ERGON_ISSUE_REAL("core_clock_hz", core_hz),
						ERGON_ISSUE_REAL("probe_us", probe_us)};
		ergon_issue_list_add(
		    issues, "profile.clean_window_clock_rate_low", c, 3,
		    "the rate probe counted %llu cycles in %.3f us, under half of the "
		    "%.0f expected at %.0f Hz: the counter runs slow or stalls",
		    (unsigned long long)probe_cycles, probe_us, expect, core_hz);
		return 1;
	}
	return 0;
}
