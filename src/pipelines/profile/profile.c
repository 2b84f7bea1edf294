/* profile/: `ergon profile`: plan, PMU, power, outputs.
 *
 * `ergon profile`: plan, PMU stage, power stage, outputs (issue 7). Each
 * stage records its status in summary.json; a failed or interrupted stage
 * keeps its raw log and everything written before it. */
#include "ergon/profile.h"

#include "ergon/analyze.h"
#include "ergon/artifact.h"
#include "ergon/fileio.h"
#include "ergon/gated.h"
#include "ergon/hpx.h"
#include "ergon/hpx_capture.h"
#include "ergon/hpx_report.h"
#include "ergon/issue_list.h"
#include "ergon/issues.h"
#include "ergon/lifecycle.h"
#include "ergon/reserve.h"
#include "ergon/sim.h"
#include "profile_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Capture bounds when the configuration leaves them open: a profile boot
 * of the example firmware takes seconds; 120 s is generous. */
#define PMU_CAPTURE_TIMEOUT_S 120.0
/* summary.json space claimed before the stages: per-layer PMU tables of a
 * large model stay well under this; a larger one is kept by the rescue. */
#define PROFILE_SUMMARY_RESERVE_BYTES ((size_t)4 << 20)

/* --- PMU stage ------------------------------------------------------------ */

/* A metadata value of the typed PMU result (NULL: absent, or no result). */
static const struct ergon_pmu_value *meta_get(const struct ergon_pmu_result *res, const char *key)
{
	for (size_t i = 0; res != NULL && i < res->nmeta; i++)
		if (strcmp(res->meta[i].key, key) == 0)
			return &res->meta[i].value;
	return NULL;
}

static int meta_number(const struct ergon_pmu_result *res, const char *key, double *out)
{
	const struct ergon_pmu_value *v = meta_get(res, key);
	if (v == NULL || (v->kind != ERGON_PMU_INT && v->kind != ERGON_PMU_REAL))
		return 0;
	*out = v->kind == ERGON_PMU_INT ? (double)v->i : v->d;
	return 1;
}

/* The integer value, 0 when absent or not an integer. */
static int64_t meta_int(const struct ergon_pmu_result *res, const char *key)
{
	const struct ergon_pmu_value *v = meta_get(res, key);
	return v != NULL && v->kind == ERGON_PMU_INT ? v->i : 0;
}

/* A JSON integer from a metadata key, null when absent. */
static json_t *meta_json_int(const struct ergon_pmu_result *res, const char *key)
{
	const struct ergon_pmu_value *v = meta_get(res, key);
	return v != NULL && v->kind == ERGON_PMU_INT ? json_integer((json_int_t)v->i) : json_null();
}

/* The same clean-window checks `ergon analyze` runs on a facts file
 * (src/pipelines/analyze/power_report.c): the firmware's stalled/partial counts
 * against its warm reference (CLEAN_REF_CYCLES), with the inoperative
 * check when that reference is zero, and the rate probe. The device's
 * figures go to r->device_clean for the power section (heliaPROFILER's
 * device_clean_* names). */
static void clean_window_checks(struct prof_run *r, const struct ergon_pmu_result *res)
{
	double hz, us, cyc;
	struct ergon_issue_list l = {0};
	if (meta_number(res, "system_clock_hz", &hz) &&
	    meta_number(res, "clean_dwt_rate_us", &us) &&
	    meta_number(res, "clean_dwt_rate_cyc", &cyc))
		ergon_clean_window_rate_check(hz, us, (uint64_t)cyc, &l);
	int64_t stalled = meta_int(res, "clean_stalled_iters");
	int64_t partial = meta_int(res, "clean_partial_iters");
	int64_t count = meta_int(res, "clean_infer_count");
	int have_counts = meta_get(res, "clean_stalled_iters") != NULL ||
			  meta_get(res, "clean_partial_iters") != NULL;
	const struct ergon_pmu_value *ref = meta_get(res, "clean_ref_cycles");
	int have_ref = ref != NULL && ref->kind == ERGON_PMU_INT && ref->i >= 0;
	if (have_counts && have_ref && stalled >= 0 && partial >= 0)
		ergon_clean_window_check_counts((uint64_t)stalled, (uint64_t)partial, 0,
						count > 0 ? (uint64_t)count : 0, (uint64_t)ref->i,
						&l);
	ergon_issue_list_to_json(&l, r->issues);
	ergon_issue_list_cleanup(&l);
	if ((stalled > 0 || partial > 0) && !have_ref &&
	    !ergon_issue_has(r->issues, "profile.clean_window_stalled"))
		/* A firmware without CLEAN_REF_CYCLES: the counts alone. */
		ergon_issue_add(r->issues, "profile.clean_window_stalled",
				json_pack("{s:I,s:I,s:I,s:b}", "stalled_iters", (json_int_t)stalled,
					  "partial_iters", (json_int_t)partial, "total_iters",
					  (json_int_t)count, "ref_cycles_unknown", 1),
				"the firmware counted %lld stalled and %lld partial iterations of "
				"%lld in the clean window (it reports no CLEAN_REF_CYCLES, so the "
				"understatement cannot be bounded): its cycle counts are not "
				"trustworthy",
				(long long)stalled, (long long)partial, (long long)count);
	if (res != NULL && (have_ref || meta_get(res, "clean_dwt_rate_cyc") != NULL)) {
		json_decref(r->device_clean);
		r->device_clean =
		    json_pack("{s:o,s:o,s:o}", "device_clean_ref_cycles",
			      meta_json_int(res, "clean_ref_cycles"), "device_clean_dwt_rate_cyc",
			      meta_json_int(res, "clean_dwt_rate_cyc"), "device_clean_dwt_rate_us",
			      meta_json_int(res, "clean_dwt_rate_us"));
	}
}

static int pmu_stage(struct prof_run *r, json_t *stage)
{
	const struct ergon_config *cfg = r->o->cfg;
	char dir[1100];
	struct ergon_err e = {0};
	struct ergon_hpx_parser *p = NULL;
	struct ergon_hpx_capture_result cap = {0};
	struct ergon_lifecycle *lc = NULL;
	struct ergon_pmu_result *res = NULL;
	json_t *result = NULL;
	int rc = prof_stage_dir(r, "pmu", dir, sizeof dir, &e);
	const char *image =
	    r->sim ? ergon_profile_sim_stage_scenario(r->o->sim_scenario, 0, 0) : r->o->fw->profile;
	json_object_set_new(stage, "image", json_string(image));
	json_object_set_new(stage, "log", json_sprintf("%s/capture.log", dir));
	double timeout_s = isnan(cfg->target.heartbeat.overall_timeout_s)
			       ? PMU_CAPTURE_TIMEOUT_S
			       : cfg->target.heartbeat.overall_timeout_s;
	if (!rc)
		rc = ergon_hpx_parser_new(NULL, &p, &e);
	if (!rc)
		rc = prof_boot_and_capture(r, dir, image, timeout_s, 0.0,
					   prof_planned_window_hb_s(cfg, 0.0), p, &cap, &lc, &e);
	if (p != NULL && (rc == 0 || rc == ERGON_EINTR)) {
		prof_progress(r, "analysis", "the PMU stream");
		/* Parse what arrived, also after an interrupt: it is kept. */
		struct ergon_err pe = {0};
		int frc = ergon_hpx_parser_finish(p, &pe);
		if (frc >= 0 && ergon_hpx_parser_result(p, r->aggregation, 0, &res, &pe) == 0 &&
		    ergon_pmu_result_to_json(res, &result, &pe) == 0) {
			json_t *body = NULL;
			if (ergon_hpx_profile_body(result, r->aggregation, &body, &pe) == 0) {
				json_decref(r->profile);
				r->profile = body;
			}
		}
		struct ergon_hpx_stats st;
		ergon_hpx_parser_stats(p, &st);
		json_object_set_new(stage, "bytes", json_integer((json_int_t)st.bytes));
		if (!st.started && rc == 0)
			ergon_issue_add(
			    r->issues, "profile.no_start_sentinel",
			    json_pack("{s:s,s:I}", "log",
				      json_string_value(json_object_get(stage, "log")), "bytes",
				      (json_int_t)st.bytes),
			    "the target's stream never showed `--- HPX_START ---` "
			    "(%llu bytes in %s): check the transport (%s), the firmware "
			    "build (profile, not power) and the baud rate",
			    (unsigned long long)st.bytes,
			    json_string_value(json_object_get(stage, "log")), cfg->board->name);
	}
	if (cap.issues)
		json_array_extend(r->issues, cap.issues);
	if (cap.details)
		json_object_set(stage, "capture", cap.details);
	if (r->profile)
		json_array_extend(r->issues, json_object_get(r->profile, "issues"));
	/* The clean-window reference the power checks compare against, from
	 * the typed result. */
	clean_window_checks(r, res);
	double avg;
	if (meta_number(res, "clean_infer_avg_us", &avg))
		r->clean_infer_avg_us = avg;
	if (meta_int(res, "clean_infer_count") > 0)
		r->clean_infer_count = (uint64_t)meta_int(res, "clean_infer_count");
	/* An inference that reports zero time (faster than the window clock's
	 * 1 us, or a clock that did not run) leaves no reference to check the
	 * power window against. */
	r->clean_zero_time =
	    r->clean_infer_count > 0 && meta_number(res, "clean_infer_avg_us", &avg) && avg == 0.0;
	if (rc == ERGON_EINTR || prof_interrupted(r))
		prof_stage_fail(r, stage, "interrupted", NULL);
	else if (rc)
		prof_stage_fail(r, stage, "failed", &e);
	else
		json_object_set_new(stage, "status", json_string(r->profile ? "ok" : "failed"));
	if (lc)
		r->drv->close(lc);
	ergon_hpx_parser_free(p);
	ergon_hpx_capture_result_cleanup(&cap);
	json_decref(result);
	ergon_pmu_result_free(res);
	return rc;
}

/* --- outputs -------------------------------------------------------------- */

static int write_outputs(struct prof_run *r, json_t *art, struct ergon_out_slot *slot,
			 struct ergon_err *err)
{
	const struct ergon_config *cfg = r->o->cfg;
	unsigned flags = ERGON_WRITE_FORCE | ERGON_WRITE_MKDIR;
	char path[1200];
	int rc = 0;
	const json_t *layers = json_object_get(r->profile, "layers");
	if (json_is_array(layers)) {
		char *csv = NULL;
		size_t len = 0;
		snprintf(path, sizeof path, "%s/profile_results.csv", r->o->out_dir);
		rc = ergon_hpx_layers_csv(layers, &csv, &len, err);
		if (!rc)
			rc = ergon_file_write_atomic(path, csv, len, flags, err);
		free(csv);
	}
	if (!rc && cfg->output.detailed) {
		snprintf(path, sizeof path, "%s/detailed/plan.json", r->o->out_dir);
		char *s = json_dumps(json_object_get(art, "plan"), JSON_INDENT(2));
		rc = s ? ergon_file_write_atomic(path, s, strlen(s), flags, err)
		       : ergon_err_set(err, ERGON_ENOMEM, "out of memory");
		free(s);
		if (!rc && json_is_object(r->power) &&
		    json_object_get(r->power, "measurement_scope")) {
			char *csv = NULL;
			size_t len = 0;
			snprintf(path, sizeof path, "%s/detailed/power_summary.csv", r->o->out_dir);
			rc = ergon_power_csv_render(r->power, &csv, &len, err);
			if (!rc)
				rc = ergon_file_write_atomic(path, csv, len, flags, err);
			free(csv);
		}
		if (!rc && json_is_array(layers)) {
			char *csv = NULL;
			size_t len = 0;
			const char *g;
			json_t *gl;
			json_object_foreach(json_object_get(r->profile, "groups"), g, gl)
			{
				if (rc ||
				    strspn(g, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(g))
					continue;
				snprintf(path, sizeof path, "%s/detailed/profile_results_%.64s.csv",
					 r->o->out_dir, g);
				rc = ergon_hpx_layers_csv(gl, &csv, &len, err);
				if (!rc)
					rc = ergon_file_write_atomic(path, csv, len, flags, err);
				free(csv);
				csv = NULL;
			}
		}
	}
	snprintf(path, sizeof path, "%s/summary.json", r->o->out_dir);
	/* summary.json is written even when a CSV failed: it says what
	 * happened. It goes into the space reserved before the stages ran;
	 * a failed commit keeps it in summary.json.partial (or $TMPDIR). */
	char *text = NULL;
	size_t len = 0;
	struct ergon_err werr = {0};
	int wrc = ergon_artifact_serialize(art, path, &text, &len, &werr);
	if (wrc == 0)
		wrc = ergon_out_commit(slot, text, len, &werr);
	free(text);
	if (wrc)
		ergon_err_set(err, werr.code, "%s", werr.msg);
	return rc ? rc : wrc;
}

int ergon_profile_run(const struct ergon_profile_opts *o, json_t **summary, struct ergon_err *err)
{
	const struct ergon_config *cfg = o->cfg;
	struct prof_run r = {.o = o, .aggregation = ERGON_HPX_AGG_MEDIAN};
	if (summary)
		*summary = NULL;
	if (!cfg->resolved || cfg->board == NULL)
		return ergon_err_set(err, ERGON_EUSAGE,
				     "profile: the configuration is not resolved");
	const char *lifecycle = prof_lifecycle_name(cfg);
	r.drv = ergon_lifecycle_find(lifecycle);
	if (r.drv == NULL)
		return ergon_err_set(err, ERGON_EUSAGE, "profile: no lifecycle driver %s",
				     lifecycle);
	r.sim = cfg->target.lifecycle == ERGON_LIFECYCLE_SIM;
	if (!r.sim && o->fw == NULL)
		return ergon_err_set(err, ERGON_EUSAGE,
				     "profile: board %s needs FIRMWARE_DIR (the profile and power "
				     "builds)",
				     cfg->board->name);
	if (cfg->profiling.aggregation == ERGON_AGG_MEAN)
		r.aggregation = ERGON_HPX_AGG_MEAN;
	else if (cfg->profiling.aggregation == ERGON_AGG_TRIMMED)
		r.aggregation = ERGON_HPX_AGG_TRIMMED;
	int rc = ergon_mkdir_p(o->out_dir, err);
	if (rc)
		return rc;
	char spath[1200];
	snprintf(spath, sizeof spath, "%s/summary.json", o->out_dir);
	rc = ergon_file_check_writable(spath, o->write_flags | ERGON_WRITE_MKDIR, err);
	if (rc)
		return rc;
	/* Claim summary.json and its space before a stage runs (a full disk or
	 * a second profile into the same folder fails here). */
	struct ergon_out_slot slot;
	rc = ergon_out_reserve(&slot, spath, PROFILE_SUMMARY_RESERVE_BYTES,
			       ERGON_WRITE_FORCE | ERGON_WRITE_MKDIR, err);
	if (rc)
		return rc;

	r.issues = json_deep_copy(cfg->issues);
	json_t *plan = NULL;
	rc = ergon_profile_plan(cfg, &plan, err);
	if (!rc) {
		/* Again, now with the run's issues (the plan is already checked). */
		rc = prof_config_acts(cfg, plan, r.issues, err);
		if (rc)
			json_decref(plan);
	}
	if (rc) {
		json_decref(r.issues);
		ergon_out_release(&slot);
		return rc;
	}
	int prov = r.sim || cfg->target.lifecycle == ERGON_LIFECYCLE_QEMU ? ERGON_PROV_SYNTHETIC
									  : ERGON_PROV_MEASURED;
	json_t *art = ergon_artifact_new("ergon.profile", 1, prov);
	json_t *stages = json_object();
	json_t *pmu = json_pack("{s:s,s:s}", "name", "pmu", "status", "not_run");
	json_t *pow = json_pack("{s:s,s:s}", "name", "power", "status",
				cfg->power.enabled ? "not_run" : "disabled");
	if (!art || !stages || !pmu || !pow || !r.issues) {
		json_decref(art);
		json_decref(stages);
		json_decref(pmu);
		json_decref(pow);
		json_decref(plan);
		json_decref(r.issues);
		ergon_out_release(&slot);
		return ergon_err_set(err, ERGON_ENOMEM, "profile: out of memory");
	}
	json_object_set_new(json_object_get(art, "provenance"), "target",
			    json_pack("{s:s,s:s,s:s,s:b,s:s?}", "board", cfg->board->name, "soc",
				      cfg->board->soc, "lifecycle", r.drv->name, "hardware",
				      r.drv->hardware, "sim_scenario", o->sim_scenario));
	if (r.drv->hardware)
		json_object_set_new(json_object_get(art, "provenance"), "note",
				    json_string("this lifecycle driver has not yet been run on "
						"hardware (tested against fake vendor tools)"));

	r.passes =
	    (unsigned)json_array_size(json_object_get(json_object_get(plan, "counters"), "passes"));
	r.stages = cfg->power.enabled ? 3 : 2;
	r.stage = "pmu";
	r.stage_no = 1;
	int prc = pmu_stage(&r, pmu);
	r.pass = r.passes = 0;
	if (cfg->power.enabled) {
		r.stage = "power";
		r.stage_no = 2;
		if (prof_interrupted(&r))
			prof_stage_fail(&r, pow, "interrupted", NULL);
		else
			prof_power_stage(&r, pow, plan, prc == 0);
	}
	/* A live instrument that is a simulator or a stub (its identity says
	 * so) makes the power figures synthetic, whatever the board. */
	const char *lsrc =
	    json_string_value(json_object_get(json_object_get(r.power, "live_capture"), "source"));
	if (lsrc != NULL && strcmp(lsrc, "measured") != 0) {
		json_t *pv = json_object_get(art, "provenance");
		json_object_set_new(pv, "kind", json_string(lsrc));
		json_object_set_new(pv, "instrument_note",
				    json_string("the live power instrument's identity is not "
						"measured (a simulator or a stub): the power "
						"figures are not measurements"));
	}
	/* The profile boot's clean-window figures qualify the power figures:
	 * they travel in the power section, as heliaPROFILER writes them. */
	if (json_is_object(r.power) && r.device_clean != NULL)
		json_object_update(r.power, r.device_clean);
	json_object_set(stages, "pmu", pmu);
	json_object_set(stages, "power", pow);
	json_object_set_new(art, "board",
			    json_pack("{s:s,s:s,s:I,s:I,s:I}", "name", cfg->board->name, "soc",
				      cfg->board->soc, "sync_gpio_pin",
				      (json_int_t)cfg->power.sync_gpio_pin, "state_gpio_pin",
				      (json_int_t)cfg->power.state_gpio_pin, "go_gpio_pin",
				      (json_int_t)cfg->power.go_gpio_pin));
	json_object_set_new(art, "config", ergon_config_to_json(cfg));
	json_object_set_new(art, "plan", plan);
	json_object_set_new(art, "stages", stages);
	if (r.profile)
		json_object_set(art, "profile", r.profile);
	else
		json_object_set_new(art, "profile", json_null());
	if (r.power)
		json_object_set(art, "power", r.power);
	else
		json_object_set_new(art, "power", json_null());
	prof_model_annotate(&r, art, pmu);
	json_array_extend(json_object_get(art, "issues"), r.issues);
	int integrity = ergon_issues_integrity(r.issues);
	const char *pst = json_string_value(json_object_get(pmu, "status"));
	const char *wst = json_string_value(json_object_get(pow, "status"));
	int stages_ok =
	    strcmp(pst, "ok") == 0 && (strcmp(wst, "ok") == 0 || strcmp(wst, "disabled") == 0);
	/* A power run without a per-inference figure measured nothing usable. */
	int power_ok = !cfg->power.enabled ||
		       (json_is_object(r.power) &&
			json_is_false(json_object_get(r.power, "per_inference_metrics_omitted")));
	int valid = stages_ok && power_ok && !r.interrupted && integrity != ERGON_INTEGRITY_INVALID;
	json_object_set_new(art, "integrity", json_string(ergon_integrity_name(integrity)));
	json_object_set_new(art, "interrupted", json_boolean(r.interrupted));
	json_object_set_new(art, "valid", json_boolean(valid));
	r.stage = "outputs";
	r.stage_no = r.stages;
	prof_progress(&r, "writing", o->out_dir);
	rc = write_outputs(&r, art, &slot, err);
	ergon_out_release(&slot);
	if (rc == 0 && r.first.code)
		ergon_err_set(err, r.first.code, "%s", r.first.msg);
	if (rc == 0 && summary)
		*summary = json_incref(art);
	json_decref(art);
	json_decref(pmu);
	json_decref(pow);
	json_decref(r.profile);
	json_decref(r.power);
	json_decref(r.device_clean);
	json_decref(r.issues);
	return rc;
}
