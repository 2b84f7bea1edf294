/* run/: `ergon run`: a sustained-load report.
 *
 * The run pipeline: open the instrument and workload, check the output
 * path, run the session, build the report (series, figures, issues) and
 * write it atomically. Figures come from report_figures.c. */
#include "drivers/instruments/synthetic/synthetic.h"
#include "ergon/artifact.h"
#include "ergon/clock.h"
#include "ergon/fileio.h"
#include "ergon/issues.h"
#include "ergon/json_alloc.h"
#include "ergon/mtime.h"
#include "ergon/parse.h"
#include "ergon/report.h"
#include "ergon/reserve.h"
#include "ergon/stats.h"
#include "pipelines/common/common.h"
#include "run_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

static const char *status_name(int st)
{
	switch (st) {
	case ERGON_SESSION_COMPLETE:
		return "complete";
	case ERGON_SESSION_INTERRUPTED:
		return "interrupted";
	case ERGON_SESSION_INSTRUMENT_FAILED:
		return "instrument_failed";
	default:
		return "aborted";
	}
}

static json_t *size_array(const size_t *v, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < n; i++)
		json_array_append_new(a, json_integer((json_int_t)v[i]));
	return a;
}

/* Keep every k-th sample and the last one. */
static json_t *decimate(const double *v, size_t n, size_t k)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < n; i += k)
		json_array_append_new(a, ergon_jnum(v[i]));
	if (a && n > 0 && (n - 1) % k != 0)
		json_array_append_new(a, ergon_jnum(v[n - 1]));
	return a;
}

static json_t *samples_json(const struct ergon_session_result *res, size_t k)
{
	json_t *s = json_object();
	json_object_set_new(s, "t_s", decimate(res->sample_t_s, res->n_samples, k));
	json_object_set_new(s, "power_w", decimate(res->sample_power_w, res->n_samples, k));
	if (res->has_temp)
		json_object_set_new(s, "temp_c", decimate(res->sample_temp_c, res->n_samples, k));
	if (res->has_energy)
		json_object_set_new(s, "energy_j",
				    decimate(res->sample_energy_j, res->n_samples, k));
	return s;
}

/* One rail's samples split out of the interleaved stream, as a result
 * view whose sample arrays the caller frees (rail_view_free); the other
 * fields are not set. */
static int rail_view(const struct ergon_session_result *res, int c, struct ergon_session_result *v)
{
	*v = (struct ergon_session_result){0};
	size_t n = 0;
	for (size_t i = 0; i < res->n_samples; i++)
		n += res->sample_channel[i] == c;
	size_t cap = n ? n : 1;
	v->sample_t_s = malloc(cap * sizeof(double));
	v->sample_power_w = malloc(cap * sizeof(double));
	v->sample_temp_c = malloc(cap * sizeof(double));
	v->sample_energy_j = malloc(cap * sizeof(double));
	if (!v->sample_t_s || !v->sample_power_w || !v->sample_temp_c || !v->sample_energy_j)
		return ERGON_ENOMEM;
	size_t k = 0;
	for (size_t i = 0; i < res->n_samples; i++) {
		if (res->sample_channel[i] != c)
			continue;
		v->sample_t_s[k] = res->sample_t_s[i];
		v->sample_power_w[k] = res->sample_power_w[i];
		v->sample_temp_c[k] = res->sample_temp_c ? res->sample_temp_c[i] : NAN;
		v->sample_energy_j[k] = res->sample_energy_j ? res->sample_energy_j[i] : NAN;
		/* A rail's energy column exists when that rail integrates. */
		if (isfinite(v->sample_energy_j[k]))
			v->has_energy = 1;
		k++;
	}
	v->n_samples = n;
	v->has_temp = res->has_temp;
	return 0;
}

static void rail_view_free(struct ergon_session_result *v)
{
	free(v->sample_t_s);
	free(v->sample_power_w);
	free(v->sample_temp_c);
	free(v->sample_energy_j);
	*v = (struct ergon_session_result){0};
}

/* series.rails[]: one entry per rail with its own samples. */
static json_t *rails_json(const struct ergon_instrument_identity *id,
			  const struct ergon_session_result *views, int n)
{
	json_t *a = json_array();
	for (int c = 0; a && c < n; c++)
		json_array_append_new(a, json_pack("{s:s, s:i, s:b, s:o}", "name", id->rails[c],
						   "channel", c, "total_input", c == id->total_rail,
						   "samples", samples_json(&views[c], 1)));
	return a;
}

static void session_issues(json_t *issues, const struct ergon_session_result *res)
{
	switch (res->status) {
	case ERGON_SESSION_INTERRUPTED:
		ergon_issue_add(issues, "run.interrupted", NULL, "%s", res->stop_reason);
		break;
	case ERGON_SESSION_INSTRUMENT_FAILED:
		ergon_issue_add(issues, "run.instrument_read_failed", NULL, "%s", res->stop_reason);
		break;
	default:
		break;
	}
	if (res->status != ERGON_SESSION_COMPLETE)
		ergon_issue_add(
		    issues, "run.incomplete",
		    json_pack("{s:I}", "windows_completed", (json_int_t)res->windows_completed),
		    "the run stopped early (%s): figures are withheld; the series hold "
		    "what was measured",
		    res->stop_reason);
	if (res->n_timeouts)
		ergon_issue_add(issues, "run.invocation_timeout",
				json_pack("{s:I}", "timeouts", (json_int_t)res->n_timeouts),
				"%zu invocations exceeded the per-invocation timeout",
				res->n_timeouts);
	if (res->sampler_late || res->sampler_missed)
		ergon_issue_add(issues, "run.sampler_late",
				json_pack("{s:I, s:I}", "late", (json_int_t)res->sampler_late,
					  "missed", (json_int_t)res->sampler_missed),
				"%zu readings were late and %zu missed against the sampling "
				"schedule",
				res->sampler_late, res->sampler_missed);
	if (res->samples_rejected)
		ergon_issue_add(issues, "run.samples_rejected",
				json_pack("{s:I}", "rejected", (json_int_t)res->samples_rejected),
				"%zu instrument readings were refused (non-finite value or a time "
				"that did not increase)",
				res->samples_rejected);
	if (res->release_overruns)
		ergon_issue_add(issues, "run.release_overrun",
				json_pack("{s:I}", "overruns", (json_int_t)res->release_overruns),
				"%zu invocations ended after the next release time",
				res->release_overruns);
}

static int add_figures(json_t *rep, struct ergon_err *err)
{
	json_t *fig = NULL, *fissues = NULL;
	int rc = ergon_report_compute_figures(rep, &fig, &fissues, err);
	if (rc)
		return rc;
	json_object_set_new(rep, "figures", fig);
	json_t *issues = json_object_get(rep, "issues");
	json_array_extend(issues, fissues);
	json_decref(fissues);
	json_object_set_new(rep, "integrity",
			    json_string(ergon_integrity_name(ergon_issues_integrity(issues))));
	return 0;
}

/* The method of the statistics every new report states (docs/METHOD.md):
 * its presence tells verify to recompute the distribution figures, which
 * reports written before them do not have. */
static json_t *statistics_json(void)
{
	return json_pack("{s:f, s:s, s:s, s:s, s:s}", "level", ERGON_STATS_LEVEL, "mean_interval",
			 "Student t: mean -+ t(0.975, n-1) sd / sqrt(n)", "median_interval",
			 "distribution-free: order statistics [x(k), x(n-k+1)] with binomial "
			 "coverage (Conover 3.2)",
			 "outliers",
			 "Tukey's fences: below q1 - 1.5 IQR or above q3 + 1.5 IQR, nearest-rank "
			 "quartiles",
			 "comparison",
			 "a difference is called only when it exceeds both the instruments' ± and "
			 "the run-to-run spread (Welch's t test, two-sided, alpha 0.05; "
			 "docs/COMPARE.md)");
}

static int report_build(const struct ergon_run_config *cfg, const struct ergon_instrument *inst,
			const struct ergon_workload *wl, const struct ergon_session_result *res,
			const struct ergon_mtime *mt, json_t **out, struct ergon_err *err);
/* The run's uncertainty model from the instrument's identity. */
static void run_um_of(const struct ergon_instrument_identity *id, struct ergon_run_um *um)
{
	memset(um, 0, sizeof(*um));
	const struct ergon_rating *r = &id->rating;
	um->n_pterms = r->n_pterms;
	for (int i = 0; i < r->n_pterms; i++)
		um->pterm[i] = r->pterm[i];
	um->offset_constant = r->offset_constant;
	if (id->resolution_w > 0)
		ergon_rated_set(&um->resolution_w, id->resolution_w,
				"the instrument's reading step (identity resolution_w)");
	else
		ergon_rated_unknown(&um->resolution_w, "the instrument states no reading step%s",
				    strcmp(id->integrates, "energy") == 0
					? " (it integrates: its accumulator step applies)"
					: "; give --instrument-opt resolution_w= where the driver "
					  "takes it");
	if (id->resolution_j > 0)
		ergon_rated_set(&um->resolution_j, id->resolution_j,
				"the accumulator's step (identity resolution_j)");
	else
		ergon_rated_unknown(&um->resolution_j, "the instrument states no accumulator step");
	char src[ERGON_RATING_SRC];
	double ppm = ergon_clock_rate_bound_ppm(src, sizeof(src));
	if (isfinite(ppm))
		ergon_rated_set(&um->host_ppm, ppm, "%s", src);
	else
		ergon_rated_unknown(&um->host_ppm, "%s", src);
	um->inst_ppm = r->timebase_ppm;
	if (!um->inst_ppm.source[0])
		snprintf(um->inst_ppm.source, sizeof(um->inst_ppm.source),
			 "the instrument states no clock tolerance");
	um->clock_instrument = strcmp(id->clock, "instrument") == 0;
}

/* The plan's estimate (docs/UNCERTAINTY.md, "Before measuring"): what the
 * run's gated figures will at least carry, and whether they can meet
 * --max-uncertainty-pct. *verdict: 0 can meet (or no gate), 1 cannot (the
 * lower bound exceeds P), 2 cannot (a term will be unknown). */
static json_t *plan_estimate(const struct ergon_run_config *cfg,
			     const struct ergon_instrument_identity *id, int *verdict)
{
	struct ergon_run_um um;
	run_um_of(id, &um);
	struct ergon_budget b;
	ergon_budget_run_plan(&um, cfg->session.windows, strcmp(id->integrates, "none") != 0, &b);
	double lb_pct = 100.0 * b.U_known;
	double p = cfg->max_uncertainty_pct;
	*verdict = !(p > 0) ? 0 : !b.complete ? 2 : lb_pct > p ? 1 : 0;
	const char *dom = ergon_budget_dominant_name(&b);
	char why[600];
	if (*verdict == 2)
		snprintf(why, sizeof(why),
			 "the budget will be incomplete (%s is unknown: %s), and an incomplete "
			 "budget fails the gate",
			 dom, b.term[b.dominant].source);
	else if (*verdict == 1)
		snprintf(why, sizeof(why),
			 "the terms the plan already bounds give at least %.3g %% (k = 2; largest: "
			 "%s), above the limit %g %%",
			 lb_pct, dom, p);
	else if (!b.complete)
		snprintf(why, sizeof(why),
			 "no gate; the budget will be incomplete: %s is unknown (%s)", dom,
			 b.term[b.dominant].source);
	else if (p > 0)
		snprintf(why, sizeof(why),
			 "at least %.3g %% from the terms the plan bounds, within %g %% so far; "
			 "the measured terms add to it",
			 lb_pct, p);
	else
		snprintf(why, sizeof(why),
			 "no gate; at least %.3g %% from the terms the plan "
			 "bounds",
			 lb_pct);
	json_t *o = json_pack(
	    "{s:s, s:o, s:o, s:b, s:s, s:s, s:o}", "figures",
	    "load energy, load mean power, energy per operation (total, above idle)",
	    "lower_bound_pct", ergon_jnum(lb_pct), "max_uncertainty_pct",
	    p > 0 ? json_real(p) : json_null(), "complete_expected", b.complete, "verdict",
	    *verdict ? "cannot meet the limit"
	    : p > 0  ? "may meet the limit"
		     : "no gate",
	    "why", why, "budget", ergon_budget_json(&b));
	return o;
}

int ergon_run_plan(const struct ergon_run_config *cfg, json_t **plan, struct ergon_err *err)
{
	*plan = NULL;
	struct ergon_instrument *inst = NULL;
	int rc = ergon_instrument_open(cfg->instrument_spec, &cfg->instrument_opts, &inst, err);
	if (rc)
		return rc;
	int verdict = 0;
	json_t *est = plan_estimate(cfg, &inst->identity, &verdict);
	json_t *idj = ergon_instrument_identity_json(inst);
	*plan =
	    json_pack("{s:o, s:{s:f, s:f, s:I, s:f, s:f}, s:o, s:b}", "instrument",
		      idj ? idj : json_null(), "plan", "settle_s", cfg->session.settle_s, "idle_s",
		      cfg->session.idle_s, "windows", (json_int_t)cfg->session.windows, "window_s",
		      cfg->session.window_s, "sample_hz", cfg->session.sample_hz,
		      "uncertainty_estimate", est ? est : json_null(), "refused", verdict != 0);
	ergon_instrument_close(inst);
	if (*plan == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "out of memory");
	return 0;
}

int ergon_report_build(const struct ergon_run_config *cfg, const struct ergon_instrument *inst,
		       const struct ergon_workload *wl, const struct ergon_session_result *res,
		       json_t **out, struct ergon_err *err)
{
	return report_build(cfg, inst, wl, res, NULL, out, err);
}

static int report_build(const struct ergon_run_config *cfg, const struct ergon_instrument *inst,
			const struct ergon_workload *wl, const struct ergon_session_result *res,
			const struct ergon_mtime *mt, json_t **out, struct ergon_err *err)
{
	*out = NULL;
	const struct ergon_instrument_identity *id = &inst->identity;
	json_t *rep = ergon_artifact_new(ERGON_REPORT_SCHEMA, ERGON_REPORT_VERSION, id->provenance);
	if (rep == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "out of memory building the report");
	json_t *prov = json_object_get(rep, "provenance");
	json_object_set_new(prov, "source", json_string(inst->driver->name));
	/* The recording's own kind is kept, but the report's figures are
	 * never a measurement of this workload: the power was recorded at
	 * another time. The note says so wherever the report is read. */
	if (id->provenance == ERGON_PROV_REPLAYED) {
		json_object_set_new(prov, "recording", json_string("measured"));
		json_object_set_new(prov, "note", json_string(ERGON_REPLAYED_LABEL));
	}
	if (mt) {
		json_t *m = ergon_mtime_json(mt);
		json_object_set_new(rep, "measurement_time", m ? m : json_null());
	}
	json_object_set_new(rep, "kind", json_string("sustained"));
	json_object_set_new(rep, "statistics", statistics_json());
	json_object_set_new(rep, "device", json_pack("{s:s}", "name", cfg->device));
	json_t *idj = ergon_instrument_identity_json(inst);
	json_object_set_new(rep, "instrument", idj ? idj : json_null());
	char caller_spec[96];
	snprintf(caller_spec, sizeof caller_spec, "caller:%.80s",
		 wl->driver && wl->driver->name ? wl->driver->name : "workload");
	json_object_set_new(rep, "workload",
			    json_pack("{s:s, s:s}", "spec",
				      cfg->workload ? caller_spec : cfg->workload_spec,
				      "description", wl->description));
	json_t *cond = json_object_get(rep, "conditions");
	if (cond) {
		json_object_set_new(cond, "ambient_c", ergon_jnum(cfg->ambient_c));
		json_object_set_new(cond, "temp_file",
				    cfg->temp_file ? json_string(cfg->temp_file) : json_null());
	}
	const struct ergon_session_config *sc = &cfg->session;
	int periodic = sc->release_hz > 0;
	json_object_set_new(rep, "mode",
			    json_pack("{s:s, s:o}", "kind", periodic ? "periodic" : "saturated",
				      "release_hz",
				      periodic ? json_real(sc->release_hz) : json_null()));
	json_object_set_new(rep, "sampler",
			    json_pack("{s:s, s:f, s:I, s:I, s:I, s:f, s:f}", "kind",
				      sc->sampler == ERGON_SAMPLER_INLINE ? "inline" : "threaded",
				      "target_hz", sc->sample_hz, "late",
				      (json_int_t)res->sampler_late, "missed",
				      (json_int_t)res->sampler_missed, "rejected",
				      (json_int_t)res->samples_rejected, "max_read_s",
				      res->max_read_s, "mean_read_s", res->mean_read_s));
	json_object_set_new(
	    rep, "plan",
	    json_pack("{s:f, s:f, s:I, s:f, s:f, s:I, s:s, s:o}", "settle_s", sc->settle_s,
		      "idle_s", sc->idle_s, "windows", (json_int_t)sc->windows, "window_s",
		      sc->window_s, "throttle_threshold", cfg->throttle_threshold,
		      "throttle_windows", (json_int_t)cfg->throttle_windows, "failure_policy",
		      sc->failure_policy == ERGON_ON_FAILURE_ABORT ? "abort" : "continue",
		      "invoke_timeout_s",
		      sc->invoke_timeout_s > 0 ? json_real(sc->invoke_timeout_s) : json_null()));
	json_t *emu = ergon_synthetic_scenario_json(inst);
	json_object_set_new(rep, "emulation", emu ? emu : json_null());
	json_object_set_new(rep, "status", json_string(status_name(res->status)));
	json_object_set_new(rep, "stop_reason",
			    res->status == ERGON_SESSION_COMPLETE ? json_null()
								  : json_string(res->stop_reason));
	json_object_set_new(rep, "session",
			    json_pack("{s:I, s:I, s:I}", "timeouts", (json_int_t)res->n_timeouts,
				      "release_overruns", (json_int_t)res->release_overruns,
				      "windows_completed", (json_int_t)res->windows_completed));
	/* A host-timed reading is stamped within its read call: its time is
	 * uncertain by about one read call, never less than the clock tick.
	 * The mean call is used; the longest (a preemption outlier, recorded
	 * as sampler.max_read_s) would inflate every interior term of the
	 * worst-case sum. */
	double q = res->clock_res_s;
	if (strcmp(id->clock, "host_monotonic") == 0 && res->mean_read_s > q)
		q = res->mean_read_s;
	json_object_set_new(rep, "uncertainty_model",
			    json_pack("{s:f, s:f, s:f, s:f, s:f, s:s}", "accuracy_pct",
				      id->accuracy_pct, "resolution_w", id->resolution_w,
				      "resolution_j", id->resolution_j, "timing_quantum_s", q,
				      "latency_quantum_s", res->clock_res_s, "combination",
				      "linear (worst case): rated + timing; above idle adds the "
				      "idle term"));
	/* A documented absolute accuracy (NVML's +-5 W) bounds every energy,
	 * accumulator deltas included: floor_w x span. */
	json_object_set_new(json_object_get(rep, "uncertainty_model"), "floor_w",
			    json_real(id->floor_w));
	/* What the budgets are made from (docs/UNCERTAINTY.md): the
	 * instrument's rating as it bears on a power reading, its steps, and
	 * the clocks' bounds. */
	struct ergon_run_um um;
	run_um_of(id, &um);
	json_object_set_new(json_object_get(rep, "uncertainty_model"), "budget",
			    ergon_run_um_json(&um));
	json_object_set_new(json_object_get(rep, "plan"), "max_uncertainty_pct",
			    cfg->max_uncertainty_pct > 0 ? json_real(cfg->max_uncertainty_pct)
							 : json_null());
	/* Only when asked, so that reports without it verify as before. */
	if (cfg->trim)
		json_object_set_new(json_object_get(rep, "plan"), "trim_s", json_real(cfg->trim_s));
	int verdict = 0;
	json_t *est = plan_estimate(cfg, id, &verdict);
	json_object_set_new(json_object_get(rep, "plan"), "uncertainty_estimate",
			    est ? est : json_null());
	json_t *series = json_object();
	json_object_set_new(series, "time_origin",
			    json_string("seconds since the start of the idle baseline "
					"(CLOCK_MONOTONIC)"));
	json_object_set_new(
	    series, "phases",
	    json_pack("{s:{s:f, s:f}, s:{s:o, s:o}}", "idle", "t_start_s", res->idle_start_s,
		      "t_end_s", res->idle_end_s, "load", "t_start_s",
		      ergon_jnum(res->n_inv || res->windows_completed ? res->load_start_s : NAN),
		      "t_end_s",
		      ergon_jnum(res->n_inv || res->windows_completed ? res->load_end_s : NAN)));
	json_object_set_new(series, "window_edges_s",
			    ergon_darray(res->window_edges_s,
					 res->windows_completed ? res->windows_completed + 1 : 0, 1,
					 0));
	/* A multi-rail instrument: every rail keeps its own series (time
	 * increases within a rail, not across rails); a single rail keeps
	 * series.samples as it always was. */
	int n_rails = res->n_channels > 1 ? res->n_channels : 1;
	struct ergon_session_result views[ERGON_MAX_RAILS];
	memset(views, 0, sizeof(views));
	int rc;
	if (n_rails > 1) {
		for (int c = 0; c < n_rails; c++)
			if (rail_view(res, c, &views[c])) {
				rc = ergon_err_set(err, ERGON_ENOMEM,
						   "out of memory splitting the rails");
				goto fail;
			}
		json_object_set_new(series, "rails", rails_json(id, views, n_rails));
	} else {
		json_object_set_new(series, "samples", samples_json(res, 1));
	}
	json_object_set_new(series, "invocations",
			    json_pack("{s:o, s:o, s:o}", "t_start_s",
				      ergon_darray(res->inv_start_s, res->n_inv, 1, 0), "latency_s",
				      ergon_darray(res->inv_latency_s, res->n_inv, 1, 0),
				      "failed_index",
				      size_array(res->failed_index, res->n_failed)));
	json_object_set_new(rep, "series", series);
	session_issues(json_object_get(rep, "issues"), res);
	/* What the instrument itself found (a counter going backwards, stale
	 * readings) and its read-rate figures go into the report too. */
	if (inst->issues)
		json_array_extend(json_object_get(rep, "issues"), inst->issues);
	ergon_instrument_unvalidated_issue(inst, json_object_get(rep, "issues"));
	/* Averaged power (NVML on Ampere+) smears short phases: check the
	 * shortest phase the figures come from. */
	double shortest_s = cfg->session.window_s < cfg->session.idle_s ? cfg->session.window_s
									: cfg->session.idle_s;
	ergon_instrument_check_window(inst, shortest_s, json_object_get(rep, "issues"));
	json_t *ist = ergon_instrument_stats(inst);
	if (ist)
		json_object_set_new(rep, "instrument_stats", ist);

	size_t max =
	    cfg->max_embedded_samples ? cfg->max_embedded_samples : ERGON_REPORT_MAX_SAMPLES;
	int decimate_rails = 0;
	for (int c = 0; n_rails > 1 && c < n_rails; c++)
		decimate_rails |= views[c].n_samples > max;
	if (decimate_rails && res->status == ERGON_SESSION_COMPLETE) {
		/* The limit holds per rail: each rail over it is decimated by
		 * its own factor, its exact integrals computed over all of its
		 * samples first. */
		json_t *full = json_deep_copy(rep);
		json_t *fig = NULL, *fi = NULL;
		rc = ergon_report_compute_figures(full, &fig, &fi, err);
		json_decref(full);
		json_decref(fi);
		if (rc)
			goto fail;
		json_t *rails = json_object_get(series, "rails");
		for (int c = 0; c < n_rails; c++) {
			if (views[c].n_samples <= max)
				continue;
			json_t *rf = json_array_get(json_object_get(fig, "rails"), (size_t)c);
			json_t *rj = json_array_get(rails, (size_t)c);
			size_t k = (views[c].n_samples + max - 1) / max;
			json_t *exact = json_pack(
			    "{s:O, s:O, s:O, s:s, s:I, s:I}", "idle", json_object_get(rf, "idle"),
			    "load", json_object_get(rf, "load"), "sampler",
			    json_object_get(rf, "sampler"), "decimation",
			    "every k-th sample of this rail kept (k = decimation_factor) plus the "
			    "last; these integrals were computed over all of its samples",
			    "decimation_factor", (json_int_t)k, "samples_total",
			    (json_int_t)views[c].n_samples);
			json_object_set_new(rj, "samples", samples_json(&views[c], k));
			json_object_set_new(rj, "exact", exact);
		}
		json_decref(fig);
	}
	if (n_rails == 1 && res->n_samples > max && res->status == ERGON_SESSION_COMPLETE) {
		/* Exact integrals from the full series first, then decimate. */
		json_t *full = json_deep_copy(rep);
		json_t *fig = NULL, *fi = NULL;
		rc = ergon_report_compute_figures(full, &fig, &fi, err);
		json_decref(full);
		json_decref(fi);
		if (rc)
			goto fail;
		size_t k = (res->n_samples + max - 1) / max;
		json_t *exact =
		    json_pack("{s:O, s:O, s:O, s:s}", "idle", json_object_get(fig, "idle"), "load",
			      json_object_get(fig, "load"), "sampler",
			      json_object_get(fig, "sampler"), "decimation",
			      "every k-th sample kept (k = decimation_factor) plus the last; these "
			      "integrals were computed over all samples");
		json_object_set_new(exact, "decimation_factor", json_integer((json_int_t)k));
		json_object_set_new(exact, "samples_total",
				    json_integer((json_int_t)res->n_samples));
		json_decref(fig);
		json_object_set_new(series, "samples", samples_json(res, k));
		json_object_set_new(series, "exact", exact);
	}
	rc = add_figures(rep, err);
	if (rc)
		goto fail;
	for (int c = 0; c < n_rails; c++)
		rail_view_free(&views[c]);
	*out = rep;
	return 0;
fail:
	for (int c = 0; c < n_rails; c++)
		rail_view_free(&views[c]);
	json_decref(rep);
	return rc;
}

/* --temp-file: a decorator around the instrument that adds the device
 * temperature read from a thermal-zone style file (an integer in
 * millidegrees Celsius, e.g. /sys/class/thermal/thermal_zone0/temp) to every
 * sample. The file is re-read at most every 100 ms; samples in between carry
 * the last value. */
struct temp_wrap {
	struct ergon_instrument *inner;
	const char *path;
	double last_c, next_read_s;
};

static int temp_read_file(const char *path, double *out_c, struct ergon_err *err)
{
	char buf[64];
	int fd;
	/* A thermal zone is a (sysfs) regular file; a FIFO or a device is
	 * refused, never waited on. */
	int rc = ergon_open_input(path, "(--temp-file)", 0, &fd, err);
	if (rc)
		return rc;
	ssize_t got;
	do
		got = read(fd, buf, sizeof(buf) - 1);
	while (got < 0 && errno == EINTR);
	int e = errno;
	close(fd);
	if (got < 0)
		return ergon_err_errno(err, e, "--temp-file %s", path);
	size_t n = (size_t)got;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	long milli;
	struct ergon_err perr = {0};
	if (ergon_parse_long(buf, "--temp-file", -273150, 1000000, &milli, &perr))
		return ergon_err_set(err, ERGON_EPARSE,
				     "--temp-file %s: expected an integer in millidegrees Celsius "
				     "(thermal-zone format), found '%.20s'",
				     path, buf);
	*out_c = (double)milli / 1000.0;
	return 0;
}

static int temp_wrap_read(struct ergon_instrument *inst, struct ergon_sample *buf, size_t cap,
			  size_t *n, struct ergon_err *err)
{
	struct temp_wrap *tw = inst->priv;
	int rc = ergon_instrument_read(tw->inner, buf, cap, n, err);
	if (rc || *n == 0)
		return rc;
	double t = ergon_now_s();
	if (t >= tw->next_read_s) {
		rc = temp_read_file(tw->path, &tw->last_c, err);
		if (rc)
			return rc;
		tw->next_read_s = t + 0.1;
	}
	for (size_t i = 0; i < *n; i++) {
		buf[i].temp_c = tw->last_c;
		buf[i].fields |= ERGON_F_TEMP;
	}
	return 0;
}

static int temp_wrap_start(struct ergon_instrument *inst, struct ergon_err *err)
{
	struct temp_wrap *tw = inst->priv;
	return ergon_instrument_start(tw->inner, err);
}

static int temp_wrap_stop(struct ergon_instrument *inst, struct ergon_err *err)
{
	struct temp_wrap *tw = inst->priv;
	return ergon_instrument_stop(tw->inner, err);
}

static void temp_wrap_hint(struct ergon_instrument *inst, double load)
{
	struct temp_wrap *tw = inst->priv;
	if (tw->inner->driver->hint_load)
		tw->inner->driver->hint_load(tw->inner, load);
}

static double synth_stretch(void *ctx, double t_start_s, double t_end_s)
{
	return ergon_synthetic_stretch(ctx, t_start_s, t_end_s);
}

/* A conservative (upper) estimate of the report's size, reserved before
 * measuring: every embedded sample with all five of its fields and every
 * invocation at about 32 bytes per number (17 digits, indentation), for
 * the planned phases at the planned rates; a saturated workload is counted
 * at 1000 operations/s. A faster one can outgrow it: ergon_out_commit then
 * still keeps the report (OUT.partial or the temporary folder). */
static size_t report_estimate_bytes(const struct ergon_run_config *cfg, int n_rails)
{
	const struct ergon_session_config *s = &cfg->session;
	double load_s = (double)s->windows * s->window_s;
	double per_rail = (s->idle_s + load_s) * s->sample_hz;
	double cap = (double)(cfg->max_embedded_samples ? cfg->max_embedded_samples
							: ERGON_REPORT_MAX_SAMPLES);
	if (per_rail > cap)
		per_rail = cap;
	double ops = load_s * (s->release_hz > 0 ? s->release_hz : 1000.0);
	double bytes = 65536.0 + per_rail * (n_rails > 0 ? n_rails : 1) * 5 * 32 + ops * 2 * 32;
	if (cfg->repeat > 1)
		bytes *= (double)cfg->repeat;
	if (!(bytes < (double)ERGON_RESERVE_MAX_BYTES))
		return ERGON_RESERVE_MAX_BYTES;
	return (size_t)bytes;
}

/* Name the thread after the phase: `ps -L` shows what a long run is doing,
 * and the fault-injection shim (tests/support/faultinj/) arms on it. */
static void phase_mark(const char *name)
{
	prctl(PR_SET_NAME, (unsigned long)name, 0UL, 0UL, 0UL);
}

/* Keep the raw series when no report can be produced (see run_rescue.c).
 * Returns rc with a message that says where the measurement went. */
static int rescue_raw(struct ergon_out_slot *slot, const struct ergon_run_config *cfg,
		      const struct ergon_instrument *inst, const struct ergon_workload *wl,
		      const struct ergon_session_result *res, int rc, struct ergon_err *err)
{
	struct ergon_run_rescue r = {.reason = err->msg[0] ? err->msg : ergon_strerror(rc),
				     .out_path = cfg->out_path,
				     .device = cfg->device,
				     .inst = inst,
				     .wl = wl,
				     .res = res};
	char why[ERGON_ERR_MSG_MAX / 2];
	snprintf(why, sizeof(why), "%.500s", r.reason);
	r.reason = why;
	struct ergon_err rerr = {0};
	int k = ergon_out_rescue(slot, ergon_run_rescue_emit, &r, &rerr);
	ergon_err_clear(err);
	if (k == 0)
		return ergon_err_set(
		    err, rc,
		    "%s: the report could not be produced (%s); the raw measurement "
		    "is kept in %s",
		    cfg->out_path, why, slot->kept_path);
	return ergon_err_set(err, rc,
			     "%s: the report could not be produced (%s), and keeping the raw "
			     "measurement failed too: %s",
			     cfg->out_path, why, rerr.msg);
}

/* --repeat: the session's progress with the repetition added. */
struct rep_progress {
	void (*fn)(void *ctx, const struct ergon_session_progress *p);
	void *ctx;
	size_t rep, n;
};

static void rep_progress_fn(void *ctx, const struct ergon_session_progress *p)
{
	struct rep_progress *rp = ctx;
	struct ergon_session_progress q = *p;
	q.repetition = rp->rep;
	q.repetitions = rp->n;
	rp->fn(rp->ctx, &q);
}

/* The members of a report that belong to one repetition: what the
 * session measured and when. The rest (device, instrument, workload,
 * mode, plan, emulation, statistics) is the same for every repetition. */
static const char *const REP_KEYS[] = {"measurement_time", "status",  "stop_reason",
				       "session",	   "sampler", "uncertainty_model",
				       "series",	   NULL};

/* repetitions[i] from the single-run report of repetition i. */
static json_t *rep_entry(const json_t *single, size_t i)
{
	json_t *o = json_pack("{s:I}", "index", (json_int_t)(i + 1));
	for (size_t k = 0; o && REP_KEYS[k]; k++) {
		json_t *v = json_object_get(single, REP_KEYS[k]);
		if (v)
			json_object_set(o, REP_KEYS[k], v);
	}
	return o;
}

/* The session issues of repetition i of n, named as its own. */
static void rep_session_issues(json_t *issues, const struct ergon_session_result *res, size_t i,
			       size_t n)
{
	json_t *mine = json_array();
	session_issues(mine, res);
	size_t k;
	json_t *x;
	json_array_foreach(mine, k, x)
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
		json_array_append(issues, x);
	}
	json_decref(mine);
}

/* The repeated report (version 2) from the single-run reports of the
 * repetitions measured: the shared members of the first, every
 * repetition's own under repetitions[], the issues, then every figure
 * (report_figures.c). */
static int repeated_build(const struct ergon_run_config *cfg, const struct ergon_instrument *inst,
			  json_t *const *singles, json_t *rep_issues, size_t done,
			  const struct ergon_mtime *whole, const char *stop_reason, json_t **out,
			  struct ergon_err *err)
{
	const json_t *first = singles[0];
	json_t *rep = ergon_artifact_new(ERGON_REPORT_SCHEMA, ERGON_REPORT_VERSION_REPEATED,
					 inst->identity.provenance);
	if (rep == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "out of memory building the report");
	static const char *const shared[] = {"provenance", "conditions", "kind", "device",
					     "instrument", "workload",	 "mode", "plan",
					     "emulation",  "statistics", NULL};
	for (size_t k = 0; shared[k]; k++) {
		json_t *v = json_object_get(first, shared[k]);
		if (v)
			json_object_set_new(rep, shared[k], json_deep_copy(v));
	}
	const json_t *sm = json_object_get(first, "sampler");
	json_object_set_new(rep, "sampler",
			    json_pack("{s:O, s:O}", "kind", json_object_get(sm, "kind"),
				      "target_hz", json_object_get(sm, "target_hz")));
	json_t *mj = ergon_mtime_json(whole);
	json_object_set_new(rep, "measurement_time", mj ? mj : json_null());
	size_t completed = 0;
	json_t *reps = json_array();
	for (size_t i = 0; i < done; i++) {
		const char *st = json_string_value(json_object_get(singles[i], "status"));
		completed += st && strcmp(st, "complete") == 0;
		json_array_append_new(reps, rep_entry(singles[i], i));
	}
	int complete = completed == cfg->repeat && done == cfg->repeat;
	json_object_set_new(
	    rep, "repeat",
	    json_pack("{s:I, s:I, s:s}", "planned", (json_int_t)cfg->repeat, "completed",
		      (json_int_t)completed, "what",
		      "each repetition is the whole measurement: settle, its own idle baseline "
		      "and load windows, with the instrument and workload kept open"));
	const char *last_status = json_string_value(json_object_get(singles[done - 1], "status"));
	json_object_set_new(rep, "status",
			    json_string(complete ? "complete"
					: last_status && strcmp(last_status, "complete") != 0
					    ? last_status
					    : "interrupted"));
	json_object_set_new(rep, "stop_reason", complete ? json_null() : json_string(stop_reason));
	json_t *issues = json_object_get(rep, "issues");
	json_array_extend(issues, rep_issues);
	if (inst->issues)
		json_array_extend(issues, inst->issues);
	ergon_instrument_unvalidated_issue(inst, issues);
	double shortest_s = cfg->session.window_s < cfg->session.idle_s ? cfg->session.window_s
									: cfg->session.idle_s;
	ergon_instrument_check_window(inst, shortest_s, issues);
	if (!complete) {
		ergon_issue_add(issues, "run.repetitions_incomplete",
				json_pack("{s:I, s:I}", "planned", (json_int_t)cfg->repeat,
					  "completed", (json_int_t)completed),
				"%zu of %zu repetitions completed (%s): each repetition's figures "
				"are given, the repeat statistics are withheld",
				completed, cfg->repeat, stop_reason);
		if (!ergon_issue_has(issues, "run.incomplete"))
			ergon_issue_add(issues, "run.incomplete", NULL,
					"the run stopped before its planned end (%s)", stop_reason);
	}
	json_t *ist = ergon_instrument_stats(inst);
	if (ist)
		json_object_set_new(rep, "instrument_stats", ist);
	json_object_set_new(rep, "repetitions", reps);
	int rc = add_figures(rep, err);
	if (rc) {
		json_decref(rep);
		return rc;
	}
	*out = rep;
	return 0;
}

/* A count from a document (which may come from anywhere): 0 unless it is a
 * number in [0, 2^64). */
static uint64_t count_of(double v)
{
	return v >= 0 && v < 18446744073709551616.0 ? (uint64_t)v : 0;
}

/* The report's figures, typed (NaN where it has none). */
static double fig(const json_t *figures, const char *path)
{
	const json_t *v = ergon_jpath(figures, path);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

void ergon_run_result_read(const json_t *rep, struct ergon_run_result *res)
{
	const json_t *f = json_object_get(rep, "figures");
	struct ergon_run_headline *o = &res->figures;
	memset(res, 0, sizeof *res); /* padding too: a reader is a pure function */
	res->provenance =
	    ergon_provenance_parse(json_string_value(ergon_jpath(rep, "provenance.kind")));
	const char *integ = json_string_value(json_object_get(rep, "integrity"));
	res->integrity = integ && strcmp(integ, "valid") == 0	   ? ERGON_INTEGRITY_VALID
			 : integ && strcmp(integ, "degraded") == 0 ? ERGON_INTEGRITY_DEGRADED
								   : ERGON_INTEGRITY_INVALID;
	ergon_verdict_run(rep, &res->verdict);
	const char *id = json_string_value(json_object_get(rep, "report_id"));
	snprintf(res->report_id, sizeof res->report_id, "%s", id ? id : "");
	const json_t *reps = json_object_get(rep, "repetitions");
	res->repetitions = json_is_array(reps) ? json_array_size(reps) : 1;
	o->operations = count_of(fig(f, "operations.count"));
	o->operations_failed = count_of(fig(f, "operations.failed"));
	o->withheld = json_is_string(json_object_get(f, "withheld"));
	o->idle_duration_s = fig(f, "idle.duration_s");
	o->idle_energy_j = fig(f, "idle.energy_j");
	o->idle_energy_u_j = fig(f, "idle.energy_u_j");
	o->idle_mean_power_w = fig(f, "idle.mean_power_w");
	o->idle_mean_power_u_w = fig(f, "idle.mean_power_u_w");
	o->load_duration_s = fig(f, "load.duration_s");
	o->load_energy_j = fig(f, "load.energy_j");
	o->load_energy_u_j = fig(f, "load.energy_u_j");
	o->load_mean_power_w = fig(f, "load.mean_power_w");
	o->load_mean_power_u_w = fig(f, "load.mean_power_u_w");
	o->load_peak_power_w = fig(f, "load.peak_power_w");
	o->energy_per_op_j = fig(f, "energy_per_op.above_idle_j");
	o->energy_per_op_u_j = fig(f, "energy_per_op.above_idle_u_j");
	o->energy_per_op_total_j = fig(f, "energy_per_op.total_j");
	o->energy_per_op_total_u_j = fig(f, "energy_per_op.total_u_j");
	o->ops_per_s = fig(f, "energy_per_op.achieved_ops_per_s");
	o->latency_min_s = fig(f, "latency.min_s");
	o->latency_mean_s = fig(f, "latency.mean_s");
	o->latency_max_s = fig(f, "latency.max_s");
	o->latency_p50_s = fig(f, "latency.p50_s");
	o->latency_p90_s = fig(f, "latency.p90_s");
	o->latency_p95_s = fig(f, "latency.p95_s");
	o->latency_p99_s = fig(f, "latency.p99_s");
	o->first_ops_per_s = fig(f, "throughput.first_ops_per_s");
	o->tail_ops_per_s = fig(f, "throughput.tail_ops_per_s");
	o->change_pct = fig(f, "throughput.change_pct");
	o->throttled = json_is_true(ergon_jpath(f, "throughput.throttled"));
	o->onset_t_s = fig(f, "throughput.onset_t_s");
}

int ergon_run(const struct ergon_run_config *cfg, struct ergon_run_result *res_out, json_t **report,
	      struct ergon_err *err)
{
	struct ergon_out_slot slot;
	char *text = NULL;
	size_t text_len = 0;
	struct ergon_instrument *inst = NULL;
	struct ergon_workload *wl = NULL;
	struct ergon_session_result res = {0};
	json_t *rep = NULL;
	size_t n_rep = cfg->repeat > 1 ? cfg->repeat : 1;
	json_t **singles = NULL;
	json_t *rep_issues = NULL;
	size_t done = 0;
	char stop_reason[ERGON_ERR_MSG_MAX] = "";
	if (report)
		*report = NULL;
	if (res_out)
		*res_out = (struct ergon_run_result){0};
	/* The output must be writable before a second is measured (cheap
	 * checks first; the reservation follows once the rails are known). */
	slot.fd = slot.lock_fd = -1;
	slot.tmp[0] = '\0';
	if (cfg->repeat > ERGON_RUN_REPEAT_MAX)
		return ergon_err_set(err, ERGON_EUSAGE, "--repeat %zu: at most %d repetitions",
				     cfg->repeat, ERGON_RUN_REPEAT_MAX);
	if (cfg->trim && !(cfg->trim_s >= 0 && 2.0 * cfg->trim_s < cfg->session.window_s))
		return ergon_err_set(
		    err, ERGON_EUSAGE,
		    "--trim-s %g: each window loses trim_s at both ends, so it must "
		    "be >= 0 and under half of --window-s %g; nothing was measured",
		    cfg->trim_s, cfg->session.window_s);
	int rc = ergon_file_check_writable(cfg->out_path, cfg->write_flags, err);
	if (rc)
		return rc;
	singles = calloc(n_rep, sizeof *singles);
	rep_issues = json_array();
	if (singles == NULL || rep_issues == NULL) {
		rc = ergon_err_set(err, ERGON_ENOMEM, "out of memory");
		goto out;
	}
	rc = ergon_instrument_open(cfg->instrument_spec, &cfg->instrument_opts, &inst, err);
	if (rc)
		goto out;
	if (inst->identity.n_rails > ERGON_MAX_RAILS) {
		rc = ergon_err_set(err, ERGON_EUSAGE,
				   "--instrument %s: %d rails selected, at most %d can be measured "
				   "at once; name fewer",
				   cfg->instrument_spec, inst->identity.n_rails, ERGON_MAX_RAILS);
		goto out;
	}
	/* Can this meter resolve it? With the gate, a run whose plan already
	 * cannot meet the limit is refused before a second is measured. */
	if (cfg->max_uncertainty_pct > 0) {
		int verdict = 0;
		json_t *est = plan_estimate(cfg, &inst->identity, &verdict);
		if (verdict) {
			rc = ergon_err_set(err, ERGON_EREFUSED,
					   "--max-uncertainty-pct %g: %s; nothing was measured "
					   "(--dry-run shows the estimate)",
					   cfg->max_uncertainty_pct,
					   json_string_value(json_object_get(est, "why")));
			json_decref(est);
			goto out;
		}
		json_decref(est);
	}
	/* Claim the output and its space before the first sample: a full
	 * disk or a second run on the same --out fails here, not at the end. */
	rc = ergon_out_reserve(&slot, cfg->out_path,
			       report_estimate_bytes(cfg, inst->identity.n_rails), cfg->write_flags,
			       err);
	if (rc)
		goto out;
	if (cfg->workload != NULL)
		wl = cfg->workload; /* the caller's own */
	else
		rc = ergon_workload_open(cfg->workload_spec, &cfg->workload_opts, &wl, err);
	if (rc)
		goto out;
	struct ergon_session_config sc = cfg->session;
	if (strcmp(inst->driver->name, "synthetic") == 0) {
		sc.stretch = synth_stretch;
		sc.stretch_ctx = inst;
	}
	struct rep_progress rp = {.fn = sc.progress, .ctx = sc.progress_ctx, .n = n_rep};
	if (n_rep > 1 && sc.progress) {
		sc.progress = rep_progress_fn;
		sc.progress_ctx = &rp;
	}
	struct ergon_instrument *measure = inst;
	struct temp_wrap tw = {.inner = inst, .path = cfg->temp_file};
	/* The wrapper keeps the inner driver's name so the report names the
	 * real instrument; only read/start/stop/hint pass through it. */
	struct ergon_instrument_driver tdrv = *inst->driver;
	struct ergon_instrument wrapped = {
	    .driver = &tdrv, .identity = inst->identity, .priv = &tw};
	if (cfg->temp_file) {
		rc = temp_read_file(cfg->temp_file, &tw.last_c, err); /* fail before measuring */
		if (rc)
			goto out;
		tdrv.read = temp_wrap_read;
		tdrv.start = temp_wrap_start;
		tdrv.stop = temp_wrap_stop;
		tdrv.hint_load = inst->driver->hint_load ? temp_wrap_hint : NULL;
		tdrv.close = NULL;
		measure = &wrapped;
	}
	/* Every input passed: the caller may say how long it will take. */
	if (cfg->ready)
		cfg->ready(cfg->ready_ctx);
	struct ergon_mtime whole, mt;
	ergon_mtime_start(&whole);
	for (size_t i = 0; i < n_rep; i++) {
		if (i > 0 && cfg->session.stop_flag && *cfg->session.stop_flag) {
			snprintf(stop_reason, sizeof stop_reason,
				 "interrupted before repetition %zu of %zu", i + 1, n_rep);
			break;
		}
		rp.rep = i + 1;
		phase_mark("ergon-measure");
		ergon_mtime_start(&mt);
		rc = ergon_session_run(&sc, measure, wl, &res, err);
		ergon_mtime_end(&mt);
		if (rc) {
			/* The session fails only before its first sample (preparing
			 * the workload, starting the instrument or the sampler); from
			 * then on it ends with a status and what it measured. */
			char why[ERGON_ERR_MSG_MAX - 96];
			snprintf(why, sizeof(why), "%.900s",
				 err->msg[0] ? err->msg : ergon_strerror(rc));
			ergon_err_clear(err);
			if (i == 0) {
				ergon_err_set(err, rc, "%s; nothing was measured", why);
				goto out;
			}
			/* Repetitions measured before are kept. */
			snprintf(stop_reason, sizeof stop_reason,
				 "repetition %zu of %zu could not start: %.800s", i + 1, n_rep,
				 why);
			rc = 0;
			break;
		}
		phase_mark("ergon-report");
		/* A value jansson dropped on a failed allocation would leave a
		 * report that lies by omission: count them, and rescue the raw
		 * data instead. */
		ergon_json_alloc_watch();
		unsigned long jfail = ergon_json_alloc_failures();
		rc = report_build(cfg, inst, wl, &res, &mt, &singles[i], err);
		if (rc == 0 && n_rep == 1)
			rc = ergon_artifact_serialize(singles[0], cfg->out_path, &text, &text_len,
						      err);
		if (rc == 0 && ergon_json_alloc_failures() != jfail)
			rc = ergon_err_set(err, ERGON_ENOMEM,
					   "out of memory while building the report (an allocation "
					   "inside the JSON library failed)");
		if (rc) {
			rc = rescue_raw(&slot, cfg, inst, wl, &res, rc, err);
			goto out;
		}
		done = i + 1;
		if (n_rep > 1)
			rep_session_issues(rep_issues, &res, i, n_rep);
		int complete = res.status == ERGON_SESSION_COMPLETE;
		if (!complete)
			snprintf(stop_reason, sizeof stop_reason, "repetition %zu of %zu: %.900s",
				 i + 1, n_rep, res.stop_reason);
		ergon_session_result_cleanup(&res);
		res = (struct ergon_session_result){0};
		if (!complete)
			break;
	}
	ergon_mtime_end(&whole);
	if (n_rep == 1) {
		rep = singles[0];
		singles[0] = NULL;
	} else {
		ergon_json_alloc_watch();
		unsigned long jfail = ergon_json_alloc_failures();
		rc = repeated_build(cfg, inst, singles, rep_issues, done, &whole,
				    stop_reason[0] ? stop_reason : "stopped", &rep, err);
		if (rc == 0)
			rc = ergon_artifact_serialize(rep, cfg->out_path, &text, &text_len, err);
		if (rc == 0 && ergon_json_alloc_failures() != jfail)
			rc = ergon_err_set(err, ERGON_ENOMEM,
					   "out of memory while building the report (an allocation "
					   "inside the JSON library failed)");
		if (rc) {
			char why[ERGON_ERR_MSG_MAX / 2];
			snprintf(why, sizeof why, "%.500s", err->msg);
			ergon_err_clear(err);
			ergon_err_set(
			    err, rc,
			    "%s: the repeated report could not be built (%s); nothing was "
			    "written",
			    cfg->out_path, why);
			goto out;
		}
	}
	rc = ergon_out_commit(&slot, text, text_len, err);
	if (rc)
		goto out;
	if (res_out)
		ergon_run_result_read(rep, res_out);
	if (report) {
		*report = rep;
		rep = NULL;
	}
out:
	free(text);
	ergon_out_release(&slot);
	json_decref(rep);
	for (size_t i = 0; singles && i < n_rep; i++)
		json_decref(singles[i]);
	free(singles);
	json_decref(rep_issues);
	ergon_session_result_cleanup(&res);
	if (wl != cfg->workload)
		ergon_workload_close(wl);
	ergon_instrument_close(inst);
	return rc;
}
