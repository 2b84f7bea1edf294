/* The power section of summary.json and its two derived views (CSV and the
 * terminal table). Composition only: every figure comes from the engine or
 * the terminal record, every verdict from power_checks.c. */
#include "ergon/analyze.h"
#include "ergon/ert_hal.h"
#include "ergon/issue_list.h"
#include "ergon/issues.h"
#include "ergon/wire.h"
#include "pipelines/common/common.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *ergon_power_error_name(const char *final_phase, int64_t error_code)
{
	int init = final_phase != NULL && strcmp(final_phase, HPX_PT_PHASE_INA228_INIT) == 0;
	if (init && error_code == HPX_PT_INA228_INIT_SHUNT_CAL_WRITE_FAILED)
		return HPX_ERR_SHUNT_CAL_WRITE;
	if (init && error_code == HPX_PT_INA228_INIT_SHUNT_CAL_READBACK_DIFFERS)
		return HPX_ERR_SHUNT_CAL_READBACK;
	if (error_code < 0 || error_code > 1000)
		return HPX_ERR_UNKNOWN;
	return ert_status_name(-(int)error_code);
}

static json_t *num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

json_t *ergon_power_ceiling_json(const struct ergon_power_ceiling *c)
{
	json_t *o = json_pack(
	    "{s:o,s:o,s:o,s:o,s:o,s:o}", "elapsed_us",
	    c->have_elapsed ? json_integer((json_int_t)c->elapsed_us) : json_null(), "elapsed_s",
	    c->have_elapsed ? json_real(c->elapsed_s) : json_null(), "host_envelope_s",
	    c->have_envelope ? json_real(c->host_envelope_s) : json_null(), "slack_s",
	    c->have_envelope ? json_real(c->slack_s) : json_null(), "ratio",
	    c->have_ratio ? json_real(c->ratio) : json_null(), "reason",
	    c->reason ? json_string(c->reason) : json_null());
	return o ? o : json_null();
}

static json_t *window_json(const struct ergon_window_figures *w, int raw)
{
	json_t *o = json_object();
	json_object_set_new(o, "start_s", num(w->start_s));
	json_object_set_new(o, "end_s", num(w->end_s));
	json_object_set_new(o, "duration_s", num(w->duration_s));
	json_object_set_new(o, "integral_s", num(w->integral_s));
	if (raw) {
		json_object_set_new(o, "start_index", json_integer((json_int_t)w->start_index));
		json_object_set_new(o, "end_index", json_integer((json_int_t)w->end_index));
		json_object_set_new(o, "samples", json_integer((json_int_t)w->samples));
	}
	json_object_set_new(o, "packets", json_integer((json_int_t)w->packets));
	json_object_set_new(o, "energy_j", num(w->energy_j));
	json_object_set_new(o, "charge_c", num(w->charge_c));
	json_object_set_new(o, "energy_source",
			    json_string(w->from_accumulator ? "instrument_accumulator"
					: raw		    ? "integrated_samples"
							    : "integrated_packets"));
	json_object_set_new(o, "avg_current_a", num(w->avg_current_a));
	json_object_set_new(o, "avg_voltage_v", num(w->avg_voltage_v));
	json_object_set_new(o, "avg_power_w", num(w->avg_power_w));
	json_object_set_new(o, "peak_current_a", num(w->peak_current_a));
	double nan = NAN;
	int d = w->has_distribution;
	json_object_set_new(o, "median_current_a", num(d ? w->median_current_a : nan));
	json_object_set_new(o, "p95_current_a", num(d ? w->p95_current_a : nan));
	json_object_set_new(o, "p99_current_a", num(d ? w->p99_current_a : nan));
	json_object_set_new(o, "median_power_w", num(d ? w->median_power_w : nan));
	json_object_set_new(o, "p95_power_w", num(d ? w->p95_power_w : nan));
	json_object_set_new(o, "p99_power_w", num(d ? w->p99_power_w : nan));
	return o;
}

static const char *status_name(int s)
{
	switch (s) {
	case ERGON_TERMINAL_OK:
		return "ok";
	case ERGON_TERMINAL_FAILED:
		return "failed";
	case ERGON_TERMINAL_INCOMPLETE:
		return "incomplete";
	default:
		return "none";
	}
}

static json_t *terminal_json(const struct ergon_power_terminal *t)
{
	if (t->status == ERGON_TERMINAL_NONE)
		return json_null();
	json_t *m = json_object();
	json_object_set_new(m, "source", json_string(t->source));
	json_object_set_new(m, "scope", json_string(t->scope));
	json_object_set_new(m, "energy_nj", t->have_energy ? json_real(t->energy_nj) : json_null());
	json_object_set_new(m, "charge_nc", t->have_charge ? json_real(t->charge_nc) : json_null());
	json_object_set_new(m, "duration_us", json_integer((json_int_t)t->duration_us));
	json_object_set_new(m, "inference_count", json_integer((json_int_t)t->inference_count));
	json_object_set_new(m, "overflow", json_boolean(t->overflow));
	json_object_set_new(m, "bus_voltage_uv", json_real(t->bus_voltage_uv));
	json_object_set_new(m, "calibration_id", json_string(t->calibration_id));
	return json_pack(
	    "{s:i,s:s,s:I,s:I,s:o,s:s,s:I,s:s,s:b,s:b,s:o}", "version", t->version, "status",
	    status_name(t->status), "requested_count", (json_int_t)t->requested_count,
	    "completed_count", (json_int_t)t->completed_count, "elapsed_us",
	    t->have_elapsed ? json_integer((json_int_t)t->elapsed_us) : json_null(), "final_phase",
	    t->final_phase, "error_code", (json_int_t)t->error_code, "error_name",
	    ergon_power_error_name(t->final_phase, t->error_code), "gate_asserted",
	    t->gate_asserted, "gate_lowered", t->gate_lowered, "measurement", m);
}

int ergon_power_section(const struct ergon_gated_result *res, double min_window_s,
			const struct ergon_power_facts *f, const struct ergon_issue_list *warnings,
			json_t **out, struct ergon_err *err)
{
	return ergon_power_section_ex(res, min_window_s, f, warnings, NULL, out, err);
}

/* The gate on one budgeted figure: power.uncertainty_above_limit when its
 * relative expanded uncertainty exceeds P or its budget is incomplete. */
static void power_gate(json_t *issues, double max_pct, const char *figure,
		       const struct ergon_budget *b)
{
	int g = ergon_budget_gate(b, max_pct);
	if (g == 0)
		return;
	const char *dom = ergon_budget_dominant_name(b);
	double rel = ergon_budget_rel_pct(b);
	json_t *ctx =
	    json_pack("{s:s, s:f, s:o, s:b, s:s}", "figure", figure, "max_uncertainty_pct", max_pct,
		      "U_pct", num(rel), "complete", b->complete, "dominant", dom);
	if (g == 2)
		ergon_issue_add(issues, "power.uncertainty_above_limit", ctx,
				"%s: the uncertainty budget is incomplete (%s is unknown), so it "
				"cannot be shown to be within %g %%; state the missing figure "
				"(--rating KEY=VALUE) or drop --max-uncertainty-pct",
				figure, dom, max_pct);
	else if (g == 3)
		ergon_issue_add(issues, "power.uncertainty_above_limit", ctx,
				"%s is %g: no relative uncertainty can be within %g %%", figure,
				b->value, max_pct);
	else
		ergon_issue_add(
		    issues, "power.uncertainty_above_limit", ctx,
		    "%s: expanded uncertainty %.3g %% (k = 2) is above the limit %g %%; "
		    "the largest term is %s",
		    figure, rel, max_pct, dom);
}

/* The budgets of the section's figures (docs/UNCERTAINTY.md) and their
 * gate; the "uncertainty" object. */
static json_t *
power_budgets(const struct ergon_gated_result *res, const struct ergon_power_facts *f,
	      const struct ergon_power_budget_opts *bo, const struct ergon_window_figures *fig,
	      const struct ergon_power_verdict *v, const struct ergon_power_gate_view *gv,
	      uint64_t count, int publish_epi, json_t *issues)
{
	struct ergon_budget eb, qb, pb, ib;
	const struct ergon_rating *rating = bo->rating;
	struct ergon_rating none;
	if (rating == NULL) {
		ergon_rating_init(&none, ERGON_RATING_NONE);
		rating = &none;
	}
	if (!isfinite(fig->energy_j))
		return json_null();
	if (f->internal) {
		ergon_internal_budget(&f->terminal, rating, bo->energy_lsb_j, bo->charge_lsb_c,
				      bo->cycle_s, ERGON_PF_ENERGY, &eb);
		ergon_internal_budget(&f->terminal, rating, bo->energy_lsb_j, bo->charge_lsb_c,
				      bo->cycle_s, ERGON_PF_CHARGE, &qb);
		ergon_internal_budget(&f->terminal, rating, bo->energy_lsb_j, bo->charge_lsb_c,
				      bo->cycle_s, ERGON_PF_POWER, &pb);
		if (publish_epi)
			ergon_epi_budget(&eb, count, NAN, NAN, NULL, &ib);
	} else {
		int whole = res->window_count == 0;
		ergon_gated_budget(res, whole, ERGON_PF_ENERGY, bo->rating, &eb);
		ergon_gated_budget(res, whole, ERGON_PF_CHARGE, bo->rating, &qb);
		ergon_gated_budget(res, whole, ERGON_PF_POWER, bo->rating, &pb);
		if (publish_epi) {
			/* The count is the firmware's; the energy is the gate's. */
			char src[300];
			double e = NAN;
			if (v->observer_checked && f->terminal.have_elapsed) {
				e = gv->gate_s - (double)f->terminal.elapsed_us * 1e-6;
				snprintf(src, sizeof(src),
					 "the count is the firmware window's (elapsed %.6f s); the "
					 "gate held %.6f s: their difference at the mean power",
					 (double)f->terminal.elapsed_us * 1e-6, gv->gate_s);
			} else if (v->have_expected) {
				e = gv->gate_s - v->expected_s;
				snprintf(
				    src, sizeof(src),
				    "no firmware window: the gate's %.6f s against the count x "
				    "the reference inference time (%.6f s), at the mean power",
				    gv->gate_s, v->expected_s);
			} else {
				snprintf(src, sizeof(src),
					 "nothing compares the count's window with the gate (no "
					 "firmware window, no reference inference time)");
			}
			ergon_epi_budget(&eb, count, e, fig->avg_power_w, src, &ib);
		}
	}
	double p = bo->max_uncertainty_pct;
	if (p > 0) {
		power_gate(issues, p, "energy", &eb);
		power_gate(issues, p, "charge", &qb);
		power_gate(issues, p, "mean power", &pb);
		if (publish_epi)
			power_gate(issues, p, "energy per inference", &ib);
	}
	json_t *rj = bo->rating ? ergon_rating_to_json(bo->rating) : json_null();
	return json_pack(
	    "{s:o, s:o, s:o, s:o, s:o, s:o}", "energy_j", ergon_budget_json(&eb), "charge_c",
	    ergon_budget_json(&qb), "avg_power_w", ergon_budget_json(&pb), "energy_per_inference_j",
	    publish_epi ? ergon_budget_json(&ib) : json_null(), "rating", rj ? rj : json_null(),
	    "max_uncertainty_pct", p > 0 ? json_real(p) : json_null());
}

int ergon_power_section_ex(const struct ergon_gated_result *res, double min_window_s,
			   const struct ergon_power_facts *f,
			   const struct ergon_issue_list *warnings,
			   const struct ergon_power_budget_opts *bo, json_t **out,
			   struct ergon_err *err)
{
	static const struct ergon_power_facts no_facts;
	if (f == NULL)
		f = &no_facts;
	if (!(min_window_s > 0))
		min_window_s = ERGON_GATE_MIN_WINDOW_S;
	*out = NULL;
	json_t *p = json_object();
	json_t *issues = json_array();
	if (p == NULL || issues == NULL) {
		json_decref(p);
		json_decref(issues);
		return ergon_err_set(err, ERGON_ENOMEM, "power section: out of memory");
	}
	/* A reader's list that lost an entry to memory would drop a warning
	 * silently: refuse it. */
	if (warnings && warnings->oom) {
		json_decref(p);
		json_decref(issues);
		return ergon_err_set(err, ERGON_ENOMEM,
				     "power section: out of memory while the recording's "
				     "warnings were gathered");
	}
	for (size_t i = 0; warnings && i < warnings->n; i++)
		ergon_issue_add(issues, warnings->items[i].code, NULL, "%s",
				warnings->items[i].message);
	if (res == NULL && !f->internal) {
		json_decref(p);
		json_decref(issues);
		return ergon_err_set(
		    err, ERGON_EUSAGE,
		    "power section: a recording is needed unless the facts say the "
		    "on-board INA228 measured (internal)");
	}
	const char *scope;
	const char *gate_failure = NULL;
	struct ergon_window_figures fig;
	memset(&fig, 0, sizeof(fig));
	struct ergon_power_gate_view gv;
	memset(&gv, 0, sizeof(gv));
	gv.min_window_s = min_window_s;
	double duration_s = NAN;
	if (res != NULL) {
		if (res->nan_samples > 0)
			ergon_issue_add(
			    issues, "power.nan_samples",
			    json_pack("{s:I}", "count", (json_int_t)res->nan_samples),
			    "%llu NaN or infinite %s were left out of the sums (energy covers the "
			    "rest)",
			    (unsigned long long)res->nan_samples, res->raw ? "samples" : "packets");
		if (res->gate_high_at_start)
			ergon_issue_add(
			    issues, "power.gate_high_at_start", NULL,
			    "the gate was high from the first sample: that interval has "
			    "no rising edge and is not a window");
		gv.window_count = res->window_count;
		gv.gate_s = res->gated.duration_s;
		gv.integral_s = res->gated.integral_s;
		gv.shortest_integral_s = INFINITY;
		for (size_t k = 0; k < res->window_count; k++)
			if (res->windows[k].integral_s < gv.shortest_integral_s)
				gv.shortest_integral_s = res->windows[k].integral_s;
		gv.gated_avg_current_a = res->gated.avg_current_a;
		gv.whole_avg_current_a = res->whole.avg_current_a;
		gv.have_whole = res->window_count > 0 && isfinite(res->whole.avg_current_a);
		gv.stats_period_s = res->stats_period_s;
		duration_s = res->whole.duration_s;
	}
	struct ergon_power_verdict v;
	struct ergon_issue_list checked = {0};
	int rc = ergon_power_evaluate(f, &gv, &checked, &v);
	/* The profile boot's clean-window health travels with the power figures
	 * it qualifies (warnings: they degrade, they do not withhold). */
	if (rc == 0 && f->have_clean_window)
		ergon_clean_window_check_counts(f->clean_stalled_iters, f->clean_partial_iters, 0,
						f->have_clean_count ? f->clean_infer_count : 0,
						f->clean_ref_cycles, &checked);
	if (rc == 0 && f->have_rate_probe)
		ergon_clean_window_rate_check(f->system_clock_hz, f->rate_probe_us,
					      f->rate_probe_cycles, &checked);
	/* The accumulator's figure stands only when the packets agree with it. */
	if (rc == 0 && res != NULL && !f->internal && ergon_accum_check(res, &checked)) {
		v.omit_per_inference = 1;
		if (v.nreasons < ERGON_POWER_REASONS_MAX)
			v.reasons[v.nreasons++] = "accumulator_inconsistent";
	}
	/* A load draws energy, and a gate window's packets must cover it. */
	if (rc == 0 && res != NULL && !f->internal && ergon_recording_check(res, &checked)) {
		v.omit_per_inference = 1;
		if (v.nreasons < ERGON_POWER_REASONS_MAX)
			v.reasons[v.nreasons++] = "recording_implausible";
	}
	if (rc == 0)
		rc = checked.oom ? ERGON_ENOMEM : ergon_issue_list_to_json(&checked, issues);
	ergon_issue_list_cleanup(&checked);
	if (rc) {
		json_decref(p);
		json_decref(issues);
		return ergon_err_set(err, rc, "power checks: out of memory");
	}
	if (res != NULL && res->short_gate_pulses_ignored > 0) {
		/* Ignored, but never silently: the artifact's issues list carries
		 * the count and the kept pulses' start and duration. */
		json_t *pulses = json_array();
		for (size_t k = 0; pulses && k < res->glitch_kept; k++)
			json_array_append_new(
			    pulses, json_pack("{s:f,s:f}", "start_s", res->glitches[k].start_s,
					      "duration_s", res->glitches[k].duration_s));
		ergon_issue_add(issues, "power.short_gate_pulses_ignored",
				json_pack("{s:I,s:f,s:o}", "count",
					  (json_int_t)res->short_gate_pulses_ignored,
					  "min_window_s", min_window_s, "pulses",
					  pulses ? pulses : json_array()),
				"%llu gate pulse(s) shorter than %.3f s were ignored as glitches "
				"(first %zu listed with start and duration); check the sync "
				"wire for noise if they were not expected",
				(unsigned long long)res->short_gate_pulses_ignored, min_window_s,
				res->glitch_kept);
	}
	uint64_t count = f->have_clean_count ? f->clean_infer_count : 0;
	if (f->internal) {
		/* The target measured itself: figures come from its record. */
		const struct ergon_power_terminal *t = &f->terminal;
		scope = "on_device_gated_inference";
		double dur = t->duration_us > 0	 ? (double)t->duration_us * 1e-6
			     : t->elapsed_us > 0 ? (double)t->elapsed_us * 1e-6
						 : NAN;
		fig.energy_j = t->have_energy ? t->energy_nj * 1e-9 : NAN;
		fig.charge_c = t->have_charge ? t->charge_nc * 1e-9 : NAN;
		fig.integral_s = dur;
		fig.avg_power_w = fig.energy_j / dur;
		fig.avg_current_a = fig.charge_c / dur;
		fig.peak_current_a = NAN;
		duration_s = dur;
		if (count == 0 && t->inference_count > 0)
			count = t->inference_count;
		if (count > 0 && !f->have_clean_count) {
			/* The record's own count is the count of the measured window. */
			size_t w = 0;
			for (size_t k = 0; k < v.nreasons; k++)
				if (strcmp(v.reasons[k], "no_clean_inference_count") != 0)
					v.reasons[w++] = v.reasons[k];
			v.nreasons = w;
		}
		v.omit_per_inference = v.suspect || count == 0 || v.nreasons > 0;
	} else if (res->window_count > 0) {
		scope = "gpio_gated_clean_window";
		fig = res->gated;
	} else {
		scope = "free_form_capture";
		fig = res->whole;
		if (res->unterminated)
			gate_failure = "no_gate_fall";
		else if (res->samples == 0 && res->packets == 0) {
			gate_failure = "no_stats_window";
			/* Nothing was observed: no energy, not 0 J. */
			fig.energy_j = NAN;
			fig.charge_c = NAN;
		} else
			gate_failure = "no_gate_rise";
		ergon_issue_add(issues, "power.observation_degraded",
				json_pack("{s:s,s:I}", "gate_failure", gate_failure,
					  "short_gate_pulses_ignored",
					  (json_int_t)res->short_gate_pulses_ignored),
				"no qualifying gate window (%s%s): whole-capture energy kept, "
				"per-inference figures withheld",
				strcmp(gate_failure, "no_gate_fall") == 0
				    ? "the gate rose but did not fall"
				: strcmp(gate_failure, "no_stats_window") == 0
				    ? "the recording holds no samples"
				    : "the gate never rose",
				res->short_gate_pulses_ignored ? ", only glitches" : "");
	}
	if (res != NULL &&
	    (fig.packets_total > fig.packets || res->whole.packets_total > res->whole.packets))
		ergon_issue_add(
		    issues, "power.distribution_truncated",
		    json_pack("{s:I,s:I,s:I,s:I}", "retained", (json_int_t)fig.packets, "total",
			      (json_int_t)fig.packets_total, "whole_retained",
			      (json_int_t)res->whole.packets, "whole_total",
			      (json_int_t)res->whole.packets_total),
		    "median/p95/p99 use the first %llu of %llu packets (whole capture: %llu of "
		    "%llu): the distribution is capped; energy, charge and means cover "
		    "every packet",
		    (unsigned long long)fig.packets, (unsigned long long)fig.packets_total,
		    (unsigned long long)res->whole.packets,
		    (unsigned long long)res->whole.packets_total);
	double epi = NAN, ipj = NAN;
	if (!v.omit_per_inference && count > 0 && fig.energy_j > 0 && isfinite(fig.energy_j)) {
		epi = fig.energy_j / (double)count;
		ipj = (double)count / fig.energy_j;
	} else {
		v.omit_per_inference = 1;
	}
	/* profiling.clean_window_probe busy_loop: the window spun a delay per
	 * count and ran no inference, so its energy per count is published as
	 * that (power.busy_loop) and never as an energy per inference: the
	 * per-inference figures are withheld with the probe as the reason. */
	json_t *busy = NULL;
	if (f->probe_kind == ERGON_PROBE_BUSY_LOOP) {
		busy = json_pack("{s:o,s:o,s:o,s:s}", "counts",
				 count ? json_integer((json_int_t)count) : json_null(),
				 "energy_per_count_j", num(epi), "loop_us",
				 f->clean_infer_avg_us > 0 ? json_real(f->clean_infer_avg_us)
							   : json_null(),
				 "note",
				 "the window spun loop_us per count instead of inferring: "
				 "no inference ran, per-inference figures withheld");
		epi = ipj = NAN;
		if (v.nreasons < ERGON_POWER_REASONS_MAX)
			v.reasons[v.nreasons++] = "busy_loop_probe";
		v.omit_per_inference = 1;
	}
	/* The budgets, before the integrity: the gate's issue is an error. */
	json_t *unc =
	    bo ? power_budgets(res, f, bo, &fig, &v, &gv, count, !v.omit_per_inference, issues)
	       : NULL;
	json_object_set_new(p, "measurement_scope", json_string(scope));
	json_object_set_new(p, "integrity",
			    json_string(ergon_integrity_name(ergon_issues_integrity(issues))));
	json_object_set_new(p, "avg_current_a", num(fig.avg_current_a));
	json_object_set_new(p, "avg_power_w", num(fig.avg_power_w));
	json_object_set_new(p, "peak_current_a", num(fig.peak_current_a));
	json_object_set_new(p, "energy_j", num(fig.energy_j));
	json_object_set_new(p, "charge_c", num(fig.charge_c));
	json_object_set_new(p, "gated_duration_s", num(fig.integral_s));
	json_object_set_new(p, "capture_duration_s", num(duration_s));
	int d = fig.has_distribution;
	json_object_set_new(p, "median_current_a", num(d ? fig.median_current_a : NAN));
	json_object_set_new(p, "p95_current_a", num(d ? fig.p95_current_a : NAN));
	json_object_set_new(p, "p99_current_a", num(d ? fig.p99_current_a : NAN));
	json_object_set_new(p, "median_power_w", num(d ? fig.median_power_w : NAN));
	json_object_set_new(p, "p95_power_w", num(d ? fig.p95_power_w : NAN));
	json_object_set_new(p, "p99_power_w", num(d ? fig.p99_power_w : NAN));
	json_object_set_new(p, "energy_per_inference_j", num(epi));
	json_object_set_new(p, "inferences_per_joule", num(ipj));
	json_object_set_new(p, "inference_count",
			    count && busy == NULL ? json_integer((json_int_t)count) : json_null());
	json_object_set_new(p, "gated_window_count",
			    json_integer(res ? (json_int_t)res->window_count : 0));
	json_object_set_new(p, "gated_window_expected_duration_s",
			    v.have_expected ? json_real(v.expected_s) : json_null());
	json_object_set_new(p, "gated_window_duration_ratio",
			    v.have_expected ? json_real(v.ratio) : json_null());
	json_object_set_new(p, "gated_window_duration_suspect", json_boolean(v.suspect));
	/* heliaPROFILER's gate_duration_integrity: the count x reference check
	 * on its own (the tolerance of ergon_power_reference_tolerance_s and
	 * the glitch floor), whatever the firmware window's arbitration says;
	 * null when there is no gate or no reference. */
	json_t *gdi = json_null();
	if (v.have_expected) {
		double tol = ergon_power_reference_tolerance_s(
		    v.expected_s, f->have_clean_count ? f->clean_infer_count : 0,
		    f->clean_infer_avg_us, gv.stats_period_s, f->probe_kind);
		int ok = fabs(gv.gate_s - v.expected_s) <= tol && gv.gate_s >= gv.min_window_s;
		gdi = json_pack("{s:b,s:f,s:f,s:f,s:f,s:f}", "valid", ok, "measured_s", gv.gate_s,
				"expected_s", v.expected_s, "ratio", v.ratio, "tolerance_s", tol,
				"minimum_s", gv.min_window_s);
	}
	json_object_set_new(p, "gate_duration_integrity", gdi);
	json_object_set_new(p, "gated_window_reference_drift",
			    v.have_drift ? json_real(v.drift) : json_null());
	json_object_set_new(p, "gated_vs_whole_current_ok",
			    v.have_current_ok ? json_boolean(v.current_ok) : json_null());
	json_object_set_new(p, "gate_failure",
			    gate_failure ? json_string(gate_failure) : json_null());
	json_object_set_new(p, "short_gate_pulses_ignored",
			    json_integer(res ? (json_int_t)res->short_gate_pulses_ignored : 0));
	json_object_set_new(p, "per_inference_metrics_omitted", json_boolean(v.omit_per_inference));
	if (busy != NULL)
		json_object_set_new(p, "busy_loop", busy);
	json_t *reasons = json_array();
	for (size_t k = 0; reasons && k < v.nreasons; k++)
		json_array_append_new(reasons, json_string(v.reasons[k]));
	json_object_set_new(p, "per_inference_omitted_reasons", reasons);
	/* The issues of this section that decided those reasons, by code, so
	 * that a reader finds each in docs/ISSUES.md (a code belongs to one
	 * reason, so none is listed twice). */
	json_t *deciding = json_array();
	for (size_t k = 0; deciding && k < v.nreasons; k++) {
		const char *const *c = ergon_power_reason_issues(v.reasons[k]);
		for (size_t j = 0; c != NULL && c[j] != NULL; j++)
			if (ergon_issue_has(issues, c[j]))
				json_array_append_new(deciding, json_string(c[j]));
	}
	json_object_set_new(p, "per_inference_omitted_issues", deciding);
	json_object_set_new(p, "terminal", terminal_json(&f->terminal));
	/* The profile boot's clean-window figures, heliaPROFILER's names
	 * (`ergon profile` sets them from the profile boot's stream). */
	json_object_set_new(p, "device_clean_ref_cycles",
			    f->have_clean_window ? json_integer((json_int_t)f->clean_ref_cycles)
						 : json_null());
	json_object_set_new(p, "device_clean_dwt_rate_cyc",
			    f->have_rate_probe ? json_integer((json_int_t)f->rate_probe_cycles)
					       : json_null());
	json_object_set_new(p, "device_clean_dwt_rate_us",
			    !f->have_rate_probe ? json_null()
			    : f->rate_probe_us == floor(f->rate_probe_us) && f->rate_probe_us < 9e15
				? json_integer((json_int_t)f->rate_probe_us)
				: json_real(f->rate_probe_us));
	json_object_set_new(p, "window_clock_ceiling",
			    v.have_ceiling ? ergon_power_ceiling_json(&v.ceiling) : json_null());
	json_object_set_new(p, "observer_check",
			    v.observer_checked ? json_pack("{s:b,s:f}", "agrees", v.observer_ok,
							   "allowance_s", v.observer_allowance_s)
					       : json_null());
	if (res != NULL) {
		json_t *wins = json_array();
		for (size_t k = 0; k < res->window_count; k++)
			json_array_append_new(wins, window_json(&res->windows[k], res->raw));
		json_object_set_new(p, "windows", wins);
		json_object_set_new(p, "whole_capture_window", window_json(&res->whole, res->raw));
		json_t *gl = json_array();
		for (size_t k = 0; k < res->glitch_kept; k++)
			json_array_append_new(gl, json_pack("{s:f,s:f}", "start_s",
							    res->glitches[k].start_s, "duration_s",
							    res->glitches[k].duration_s));
		json_object_set_new(
		    p, "gate",
		    json_pack("{s:s,s:I,s:b,s:o,s:o,s:f,s:f,s:o,s:I,s:I}", "source",
			      res->gate_source == 2 ? "markers" : "digital_input", "rising_edges",
			      (json_int_t)res->rises, "high_at_start", res->gate_high_at_start,
			      "unterminated_start_s",
			      res->unterminated ? json_real(res->unterminated_start_s)
						: json_null(),
			      "glitches", gl, "min_window_s", min_window_s, "stats_period_s",
			      res->stats_period_s, "sample_rate_hz",
			      res->raw ? json_real(res->sample_rate_hz) : json_null(), "samples",
			      (json_int_t)res->samples, "packets", (json_int_t)res->packets));
	}
	if (unc)
		json_object_set_new(p, "uncertainty", unc);
	json_object_set_new(p, "issues", issues);
	*out = p;
	return 0;
}

/* A growable text buffer with a limit. */
struct text {
	char *s;
	size_t len, cap;
	int oom;
};

static void tprintf(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void tprintf(struct text *t, const char *fmt, ...)
{
	if (t->oom)
		return;
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? t->cap - t->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			t->oom = 1;
			return;
		}
		if (t->s && (size_t)n < t->cap - t->len) {
			t->len += (size_t)n;
			return;
		}
		size_t cap = (t->cap ? t->cap * 2 : 1024) + (size_t)n;
		if (cap > ((size_t)64 << 20)) {
			t->oom = 1;
			return;
		}
		char *s = realloc(t->s, cap);
		if (s == NULL) {
			t->oom = 1;
			return;
		}
		t->s = s;
		t->cap = cap;
	}
}

/* One CSV field (RFC 4180: quoted when it holds a comma, a quote or a line
 * break; a quote doubled). */
static void csv_field(struct text *t, const char *v)
{
	if (strpbrk(v, ",\"\r\n") == NULL) {
		tprintf(t, "%s", v);
		return;
	}
	tprintf(t, "\"");
	for (const char *c = v; *c; c++)
		tprintf(t, *c == '"' ? "\"\"" : "%c", *c);
	tprintf(t, "\"");
}

/* The columns: every scalar (number, string, null) key of the windows and
 * of the whole-capture window, in order of first appearance. */
static int csv_columns(const json_t *wins, const json_t *whole, json_t *cols)
{
	const json_t *rows[2] = {wins, NULL};
	json_t *one = json_array();
	if (one == NULL)
		return -1;
	if (whole)
		json_array_append(one, (json_t *)whole);
	rows[1] = one;
	for (int r = 0; r < 2; r++) {
		size_t i;
		json_t *w;
		json_array_foreach(rows[r], i, w)
		{
			const char *k;
			json_t *v;
			json_object_foreach(w, k, v)
			{
				if (!(json_is_number(v) || json_is_string(v) || json_is_null(v)))
					continue;
				size_t j;
				json_t *c;
				int seen = 0;
				json_array_foreach(cols, j, c)
				{
					if (strcmp(json_string_value(c), k) == 0)
						seen = 1;
				}
				if (!seen && json_array_append_new(cols, json_string(k)) != 0) {
					json_decref(one);
					return -1;
				}
			}
		}
	}
	json_decref(one);
	return 0;
}

static void csv_row(struct text *t, const char *scope, const json_t *o, const json_t *cols)
{
	csv_field(t, scope);
	size_t j;
	json_t *c;
	json_array_foreach(cols, j, c)
	{
		const json_t *v = json_object_get(o, json_string_value(c));
		tprintf(t, ",");
		if (json_is_number(v))
			tprintf(t, "%.17g", json_number_value(v));
		else if (json_is_string(v))
			csv_field(t, json_string_value(v));
	}
	tprintf(t, "\n");
}

/* detailed/power_summary.csv as the method writes it: one row per gated
 * window (scope window_1, window_2, ...) and the whole-capture row
 * (scope whole_capture_window), a column per metric (every scalar field of
 * the windows: ergon's extra fields are kept as columns); empty where a
 * row has no such field or it is null. */
int ergon_power_csv_render(const json_t *power, char **out, size_t *len, struct ergon_err *err)
{
	struct text t = {0};
	const json_t *wins = json_object_get(power, "windows");
	const json_t *whole = json_object_get(power, "whole_capture_window");
	json_t *cols = json_array();
	if (cols == NULL || csv_columns(wins, json_is_object(whole) ? whole : NULL, cols) != 0) {
		json_decref(cols);
		return ergon_err_set(err, ERGON_ENOMEM, "power CSV: out of memory");
	}
	tprintf(&t, "scope");
	size_t j;
	json_t *c;
	json_array_foreach(cols, j, c)
	{
		tprintf(&t, ",");
		csv_field(&t, json_string_value(c));
	}
	tprintf(&t, "\n");
	size_t i;
	json_t *w;
	json_array_foreach(wins, i, w)
	{
		char scope[32];
		snprintf(scope, sizeof(scope), "window_%zu", i + 1);
		csv_row(&t, scope, w, cols);
	}
	if (json_is_object(whole))
		csv_row(&t, "whole_capture_window", whole, cols);
	json_decref(cols);
	if (t.oom) {
		free(t.s);
		return ergon_err_set(err, ERGON_ENOMEM, "power CSV: out of memory");
	}
	*out = t.s;
	*len = t.len;
	return 0;
}

/* "11.925 mA": three decimals in the SI prefix that keeps 1..999. */
static void si(char *buf, size_t n, double v, const char *unit, int utf8)
{
	if (!isfinite(v)) {
		snprintf(buf, n, "n/a");
		return;
	}
	static const char *const pre_utf8[] = {"n", "\xc2\xb5", "m", "", "k"};
	static const char *const pre_ascii[] = {"n", "u", "m", "", "k"};
	double a = fabs(v);
	int e = 3;
	double s = v;
	if (a > 0) {
		while (e > 0 && fabs(s) < 1.0) {
			s *= 1000.0;
			e--;
		}
		while (e < 4 && fabs(s) >= 1000.0) {
			s /= 1000.0;
			e++;
		}
	}
	if (fabs(s) >= 1000.0) /* beyond kilo: an exponent, never a 300-digit number */
		snprintf(buf, n, "%.3e %s", v, unit);
	else
		snprintf(buf, n, "%.3f %s%s", s, utf8 ? pre_utf8[e] : pre_ascii[e], unit);
}

/* u in the unit si() gives ref (one unit per line: "9.000 uJ +/- 0.0365
 * uJ", never "9.000 uJ +/- 36.465 nJ"); si(u) when ref has no scale. */
static void si_as(char *buf, size_t n, double u, double ref, const char *unit, int utf8)
{
	static const char *const pre_utf8[] = {"n", "\xc2\xb5", "m", "", "k"};
	static const char *const pre_ascii[] = {"n", "u", "m", "", "k"};
	if (!isfinite(u) || !isfinite(ref) || ref == 0) {
		si(buf, n, u, unit, utf8);
		return;
	}
	int e = 3;
	double s = ref, f = 1.0;
	while (e > 0 && fabs(s) < 1.0) {
		s *= 1000.0;
		f *= 1000.0;
		e--;
	}
	while (e < 4 && fabs(s) >= 1000.0) {
		s /= 1000.0;
		f /= 1000.0;
		e++;
	}
	if (fabs(s) >= 1000.0)
		si(buf, n, u, unit, utf8);
	else
		snprintf(buf, n, "%.3g %s%s", u * f, utf8 ? pre_utf8[e] : pre_ascii[e], unit);
}

/* Display width of UTF-8 text: code points (the table holds no wide ones). */
static size_t width(const char *s)
{
	size_t w = 0;
	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return w;
}

int ergon_power_table_render(const json_t *power, int utf8, char **out, struct ergon_err *err)
{
	struct {
		const char *label, *key, *unit;
	} rows[] = {
	    {"Avg current", "avg_current_a", "A"},
	    {"Avg power", "avg_power_w", "W"},
	    {"Peak current", "peak_current_a", "A"},
	    {"Energy", "energy_j", "J"},
	    /* The count an energy per inference divides by, beside it. */
	    {"Inferences", "inference_count", NULL},
	    {"Energy/inference", "energy_per_inference_j", "J"},
	    {"Uncertainty", NULL, ""},
	};
	enum { NROWS = sizeof(rows) / sizeof(rows[0]) };
	char vals[NROWS][160];
	const json_t *unc = json_object_get(power, "uncertainty");
	size_t w0 = width("Power"), w1 = 0;
	const char *scope = json_string_value(json_object_get(power, "measurement_scope"));
	const char *integ = json_string_value(json_object_get(power, "integrity"));
	char head[96];
	snprintf(head, sizeof(head), "%s, %s", scope ? scope : "?", integ ? integ : "?");
	w1 = width(head);
	for (int r = 0; r < NROWS; r++) {
		if (rows[r].key == NULL) {
			/* The budget's verdict: of energy/inference when published,
			 * else of the energy. */
			const json_t *b = json_object_get(unc, "energy_per_inference_j");
			if (!json_is_object(b))
				b = json_object_get(unc, "energy_j");
			const char *dom = json_string_value(json_object_get(b, "dominant"));
			if (!json_is_object(b))
				snprintf(vals[r], sizeof(vals[r]), "no budget");
			else if (json_is_true(json_object_get(b, "complete")))
				snprintf(vals[r], sizeof(vals[r]), "k = 2; largest term: %s",
					 dom ? dom : "?");
			else
				snprintf(vals[r], sizeof(vals[r]), "incomplete: %s unknown",
					 dom ? dom : "a term");
			if (width(rows[r].label) > w0)
				w0 = width(rows[r].label);
			if (width(vals[r]) > w1)
				w1 = width(vals[r]);
			continue;
		}
		const json_t *v = json_object_get(power, rows[r].key);
		const json_t *busy = json_object_get(power, "busy_loop");
		if (r == 5 && json_is_object(busy))
			snprintf(vals[r], sizeof(vals[r]), "withheld: busy_loop probe, no inference ran");
		else if (r == 4 && json_is_object(busy)) {
			/* The probe's own figure, under its own name. */
			const json_t *n = json_object_get(busy, "counts");
			const json_t *ec = json_object_get(busy, "energy_per_count_j");
			char each[64];
			si(each, sizeof each, json_is_number(ec) ? json_number_value(ec) : NAN, "J",
			   utf8);
			snprintf(vals[r], sizeof(vals[r]), "none; %.0f busy-loop counts, %s each",
				 json_is_number(n) ? json_number_value(n) : 0.0, each);
		} else if (r == 4 && json_is_true(json_object_get(power, "per_inference_metrics_omitted")))
			snprintf(vals[r], sizeof(vals[r]), "withheld");
		else if (rows[r].unit == NULL && json_is_number(v))
			snprintf(vals[r], sizeof(vals[r]), "%.0f", json_number_value(v));
		else if (rows[r].unit == NULL)
			snprintf(vals[r], sizeof(vals[r]), "-");
		else
			si(vals[r], sizeof(vals[r]), json_is_number(v) ? json_number_value(v) : NAN,
			   rows[r].unit, utf8);
		const json_t *b = json_object_get(unc, rows[r].key);
		if (json_is_object(b) && strcmp(vals[r], "withheld") != 0) {
			char u[64];
			size_t l = strlen(vals[r]);
			if (json_is_true(json_object_get(b, "complete"))) {
				si_as(u, sizeof(u), json_number_value(json_object_get(b, "U")),
				      json_is_number(v) ? json_number_value(v) : NAN, rows[r].unit,
				      utf8);
				snprintf(vals[r] + l, sizeof(vals[r]) - l, " %s %s",
					 utf8 ? "\xc2\xb1" : "+/-", u);
			} else {
				snprintf(vals[r] + l, sizeof(vals[r]) - l, " %s ?",
					 utf8 ? "\xc2\xb1" : "+/-");
			}
		}
		if (width(rows[r].label) > w0)
			w0 = width(rows[r].label);
		if (width(vals[r]) > w1)
			w1 = width(vals[r]);
	}
	const char *h = utf8 ? "\xe2\x94\x80" : "-", *vb = utf8 ? "\xe2\x94\x82" : "|";
	const char *tl = utf8 ? "\xe2\x94\x8c" : "+", *tm = utf8 ? "\xe2\x94\xac" : "+",
		   *tr = utf8 ? "\xe2\x94\x90" : "+";
	const char *ml = utf8 ? "\xe2\x94\x9c" : "+", *mm = utf8 ? "\xe2\x94\xbc" : "+",
		   *mr = utf8 ? "\xe2\x94\xa4" : "+";
	const char *bl = utf8 ? "\xe2\x94\x94" : "+", *bm = utf8 ? "\xe2\x94\xb4" : "+",
		   *br = utf8 ? "\xe2\x94\x98" : "+";
	struct text t = {0};
	const char *corners[3][3] = {{tl, tm, tr}, {ml, mm, mr}, {bl, bm, br}};
	for (int line = 0; line < NROWS + 4; line++) {
		int rule = line == 0 ? 0 : line == 2 ? 1 : line == NROWS + 3 ? 2 : -1;
		if (rule >= 0) {
			tprintf(&t, "%s", corners[rule][0]);
			for (size_t k = 0; k < w0 + 2; k++)
				tprintf(&t, "%s", h);
			tprintf(&t, "%s", corners[rule][1]);
			for (size_t k = 0; k < w1 + 2; k++)
				tprintf(&t, "%s", h);
			tprintf(&t, "%s\n", corners[rule][2]);
			continue;
		}
		const char *a = line == 1 ? "Power" : rows[line - 3].label;
		const char *b = line == 1 ? head : vals[line - 3];
		tprintf(&t, "%s %s%*s %s %*s%s %s\n", vb, a, (int)(w0 - width(a)), "", vb,
			(int)(w1 - width(b)), "", b, vb);
	}
	if (t.oom) {
		free(t.s);
		return ergon_err_set(err, ERGON_ENOMEM, "power table: out of memory");
	}
	*out = t.s;
	return 0;
}

static double sec_num(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

void ergon_power_summary_read(const json_t *power, struct ergon_power_summary *out)
{
	memset(out, 0, sizeof *out); /* padding too: a reader is a pure function */
	out->energy_per_inference_j = out->energy_per_inference_u_j = NAN;
	out->inferences_per_joule = out->gated_duration_s = out->energy_j = NAN;
	out->charge_c = out->avg_power_w = out->avg_current_a = NAN;
	out->peak_current_a = out->capture_duration_s = NAN;
	out->integrity = ERGON_INTEGRITY_INVALID;
	const char *st = json_string_value(json_object_get(power, "status"));
	if (!json_is_object(power) || (st != NULL && strcmp(st, "refused") == 0))
		return;
	out->present = 1;
	const char *integ = json_string_value(json_object_get(power, "integrity"));
	out->integrity = integ && strcmp(integ, "valid") == 0	   ? ERGON_INTEGRITY_VALID
			 : integ && strcmp(integ, "degraded") == 0 ? ERGON_INTEGRITY_DEGRADED
								   : ERGON_INTEGRITY_INVALID;
	out->per_inference_omitted =
	    !json_is_false(json_object_get(power, "per_inference_metrics_omitted"));
	out->energy_per_inference_j = sec_num(power, "energy_per_inference_j");
	out->energy_per_inference_u_j = sec_num(power, "energy_per_inference_uncertainty_j");
	out->inferences_per_joule = sec_num(power, "inferences_per_joule");
	/* A loaded document may hold anything: counts only in range. */
	double n = sec_num(power, "inference_count");
	out->inference_count = n > 0 && n < 18446744073709551616.0 ? (uint64_t)n : 0;
	double w = sec_num(power, "gated_window_count");
	out->gated_window_count = w > 0 && w <= (double)UINT_MAX ? (unsigned)w : 0;
	out->gated_duration_s = sec_num(power, "gated_duration_s");
	out->energy_j = sec_num(power, "energy_j");
	out->charge_c = sec_num(power, "charge_c");
	out->avg_power_w = sec_num(power, "avg_power_w");
	out->avg_current_a = sec_num(power, "avg_current_a");
	out->peak_current_a = sec_num(power, "peak_current_a");
	out->capture_duration_s = sec_num(power, "capture_duration_s");
}
