/* profile/: `ergon profile`: plan, PMU, power, outputs.
 *
 * `ergon profile` (issue 7), its flow read top down: ergon_profile_run
 * sets up the run context (the lifecycle driver, the output folder and its
 * summary.json space, the artifact's skeleton), then calls the stages in
 * order, each a function of its own file returning its typed result:
 * plan (profile_plan.c) -> accept (profile_accept.c) -> pmu
 * (profile_pmu.c) -> power (profile_power.c: sim | live | internal) ->
 * outputs (profile_outputs.c). Each stage records its status in
 * summary.json ("stages"); a failed or interrupted stage keeps its raw log
 * and everything written before it. scripts/check_flow.py checks that no
 * stage calls back into a file the flow has left. */
#include "ergon/profile.h"

#include "ergon/analyze.h"
#include "ergon/artifact.h"
#include "ergon/fileio.h"
#include "ergon/hpx.h"
#include "ergon/issues.h"
#include "ergon/lifecycle.h"
#include "ergon/mtime.h"
#include "ergon/reserve.h"
#include "ergon/verdict.h"
#include "ergon/wire.h"
#include "pipelines/common/common.h"
#include "profile_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* summary.json space claimed before the stages: per-layer PMU tables of a
 * large model stay well under this; a larger one is kept by the rescue. */
#define PROFILE_SUMMARY_RESERVE_BYTES ((size_t)4 << 20)

int ergon_profile_plan(const struct ergon_config *cfg, json_t **out, struct ergon_err *err)
{
	return ergon_profile_plan_model(cfg, NULL, out, err);
}

int ergon_profile_plan_model(const struct ergon_config *cfg, const json_t *model, json_t **out,
			     struct ergon_err *err)
{
	struct prof_plan plan;
	int rc = prof_plan(cfg, NULL, model, &plan, err);
	/* The transport and reset steps as the lifecycle carries them out
	 * (--dry-run shows them; a value that cannot act is refused here). */
	if (!rc)
		rc = prof_accept(cfg, model, plan.json, NULL, NULL, err);
	if (rc) {
		json_decref(plan.json);
		return rc;
	}
	*out = plan.json;
	return 0;
}

/* Progress from a stage's capture: each step as it begins. */
static void capture_step(void *ctx, const char *step, const char *detail)
{
	prof_progress(ctx, step, detail);
}

/* A capture's lines: a new `--- HPX_PRESET name ---` is a new counter pass. */
static void capture_line(void *ctx, const char *line)
{
	struct prof_run *r = ctx;
	size_t pl = strlen(HPX_TOK_PRESET_PREFIX);
	static const char num[] = HPX_TOK_META_PREFIX HPX_KEY_NUM_PRESETS "=";
	if (strncmp(line, num, sizeof num - 1) == 0) {
		/* The firmware's own pass count beats the host's plan. */
		unsigned long k = strtoul(line + sizeof num - 1, NULL, 10);
		if (k > 0 && k < 1000)
			r->passes = (unsigned)k;
		return;
	}
	if (strncmp(line, HPX_TOK_PRESET_PREFIX, pl) != 0)
		return;
	const char *name = line + pl;
	size_t l = strlen(name);
	if (l >= 4 && strcmp(name + l - 4, " ---") == 0)
		l -= 4;
	if (r->pass > 0 && strlen(r->preset) == l && strncmp(r->preset, name, l) == 0)
		return; /* the same pass again (its next iteration) */
	snprintf(r->preset, sizeof r->preset, "%.*s", (int)l, name);
	r->pass++;
	prof_progress(r, "pass", r->preset);
}

/* A stage's end in its record ("stages") and, for a failure, the issues
 * and the run's first error. */
static void stage_record(struct prof_run *r, json_t *stage, int status, const struct ergon_err *e)
{
	const char *name = json_string_value(json_object_get(stage, "name"));
	switch (status) {
	case PROF_OK:
		json_object_set_new(stage, "status", json_string("ok"));
		break;
	case PROF_EMPTY:
		json_object_set_new(stage, "status", json_string("failed"));
		break;
	case PROF_INTERRUPTED:
		json_object_set_new(stage, "status", json_string("interrupted"));
		if (!ergon_issue_has(r->issues, "profile.interrupted"))
			ergon_issue_add(r->issues, "profile.interrupted", NULL,
					"interrupted during the %s stage; the artifacts so far are "
					"kept and marked",
					name);
		r->interrupted = 1;
		break;
	case PROF_FAILED:
		json_object_set_new(stage, "status", json_string("failed"));
		if (e->msg[0]) {
			json_object_set_new(stage, "error", json_string(e->msg));
			ergon_err_set(&r->first, e->code ? e->code : ERGON_EIO, "%s", e->msg);
		}
		ergon_issue_add(r->issues, "profile.stage_failed",
				json_pack("{s:s}", "stage", name), "the %s stage failed: %s", name,
				e->msg[0] ? e->msg : "see the stage's log");
		break;
	default: /* PROF_REFUSED: the stage said why */
		break;
	}
}

static int stage_status(const json_t *summary, const char *name)
{
	const char *st = json_string_value(
	    json_object_get(json_object_get(json_object_get(summary, "stages"), name), "status"));
	static const char *const names[] = {"not_run",	   "ok",      "failed",
					    "interrupted", "refused", "disabled"};
	for (int i = 0; st != NULL && i < 6; i++)
		if (strcmp(st, names[i]) == 0)
			return i;
	return ERGON_PROFILE_STAGE_NOT_RUN;
}

void ergon_profile_result_read(const json_t *summary, struct ergon_profile_result *res)
{
	memset(res, 0, sizeof *res); /* padding too: a reader is a pure function */
	ergon_power_summary_read(NULL, &res->power);
	if (summary == NULL)
		return;
	res->provenance = ergon_provenance_parse(
	    json_string_value(json_object_get(json_object_get(summary, "provenance"), "kind")));
	const char *integ = json_string_value(json_object_get(summary, "integrity"));
	res->integrity = integ && strcmp(integ, "valid") == 0	   ? ERGON_INTEGRITY_VALID
			 : integ && strcmp(integ, "degraded") == 0 ? ERGON_INTEGRITY_DEGRADED
								   : ERGON_INTEGRITY_INVALID;
	res->valid = json_is_true(json_object_get(summary, "valid"));
	res->interrupted = json_is_true(json_object_get(summary, "interrupted"));
	ergon_verdict_profile(summary, &res->verdict);
	res->pmu_status = stage_status(summary, "pmu");
	res->power_status = stage_status(summary, "power");
	res->layers =
	    json_array_size(json_object_get(json_object_get(summary, "profile"), "layers"));
	ergon_power_summary_read(json_object_get(summary, "power"), &res->power);
	const char *id = json_string_value(json_object_get(summary, "report_id"));
	snprintf(res->report_id, sizeof res->report_id, "%s", id ? id : "");
}

int ergon_profile_run(const struct ergon_profile_opts *o, struct ergon_profile_result *res,
		      json_t **summary, struct ergon_err *err)
{
	const struct ergon_config *cfg = o->cfg;
	struct prof_run r = {.o = o, .aggregation = ERGON_HPX_AGG_MEDIAN};
	if (summary)
		*summary = NULL;
	if (res)
		ergon_profile_result_read(NULL, res);
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
	/* 1. plan. Can this meter resolve it? With the gate, a plan that
	 * cannot meet it is refused before a second is measured (and before
	 * the output folder is made). */
	struct prof_plan plan;
	int rc = prof_plan(cfg, o, o->model, &plan, err);
	if (!rc && plan.u_refused)
		rc = ergon_err_set(err, ERGON_EREFUSED,
				   "power.max_uncertainty_pct %g: %s; nothing was measured "
				   "(--dry-run shows the estimate)",
				   cfg->power.max_uncertainty_pct, plan.u_why);
	char spath[1200];
	snprintf(spath, sizeof spath, "%s/summary.json", o->out_dir);
	if (!rc)
		rc = ergon_mkdir_p(o->out_dir, err);
	if (!rc)
		rc = ergon_file_check_writable(spath, o->write_flags | ERGON_WRITE_MKDIR, err);
	/* Claim summary.json and its space before a stage runs (a full disk or
	 * a second profile into the same folder fails here). */
	struct ergon_out_slot slot;
	if (!rc)
		rc = ergon_out_reserve(&slot, spath, PROFILE_SUMMARY_RESERVE_BYTES,
				       ERGON_WRITE_FORCE | ERGON_WRITE_MKDIR, err);
	if (rc) {
		json_decref(plan.json);
		return rc;
	}

	r.issues = json_deep_copy(cfg->issues);
	/* 2. accept (with the run's issues). */
	rc = prof_accept_run(cfg, o->model, o->layer_energy, plan.json, r.issues, &r.lo, err);
	if (rc) {
		json_decref(plan.json);
		json_decref(r.issues);
		json_decref(r.power_build);
		ergon_out_release(&slot);
		return rc;
	}
	/* What every stage opens its board and captures its stream with. */
	r.lo.start_timeout_s = o->start_timeout_s;
	r.lo.rtt_port = o->rtt_port;
	r.lo.cancel = o->interrupted;
	r.lo.sim_options = r.sim ? &plan.sim : NULL;
	r.capture = (struct ergon_hpx_target_opts){.drv = r.drv,
						   .write_flags = o->write_flags,
						   .cancel = o->interrupted,
						   .board = cfg->board->name,
						   .on_step = capture_step,
						   .on_line = o->progress ? capture_line : NULL,
						   .ctx = &r};
	int prov = r.sim || cfg->target.lifecycle == ERGON_LIFECYCLE_QEMU ? ERGON_PROV_SYNTHETIC
									  : ERGON_PROV_MEASURED;
	json_t *art = ergon_artifact_new("ergon.profile", 1, prov);
	json_t *stages = json_object();
	json_t *pmu_stage = json_pack("{s:s,s:s}", "name", "pmu", "status", "not_run");
	json_t *pow_stage = json_pack("{s:s,s:s}", "name", "power", "status",
				      cfg->power.enabled ? "not_run" : "disabled");
	if (!art || !stages || !pmu_stage || !pow_stage || !r.issues) {
		json_decref(art);
		json_decref(stages);
		json_decref(pmu_stage);
		json_decref(pow_stage);
		json_decref(plan.json);
		json_decref(r.issues);
		json_decref(r.power_build);
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

	/* When it was measured: the whole, from the PMU stage's start to the
	 * power stage's end, and each stage's own (docs/REPORT_FORMAT.md). */
	struct ergon_mtime mt_all, mt_stage;
	ergon_mtime_start(&mt_all);
	/* 3. pmu, then 4. power: once, or --repeat N times, each repetition
	 * the power stage's whole capture (the first is the summary's
	 * "power"); with repeat_pmu the PMU stage too (the first's profile is
	 * the summary's). One pass of the flow: each stage's call appears
	 * once (scripts/check_flow.py). */
	r.stages = cfg->power.enabled ? 3 : 2;
	struct prof_pmu pmu = {0};
	struct prof_power pw = {0};
	unsigned nrep = o->repeat > 1 ? o->repeat : 1;
	json_t *reps = nrep > 1 ? json_array() : NULL;
	for (unsigned k = 1; k <= nrep; k++) {
		char rk[32];
		snprintf(rk, sizeof rk, "%u/%u", k, nrep);
		json_t *entry = reps ? json_pack("{s:I}", "index", (json_int_t)k) : NULL;
		if (k == 1 || o->repeat_pmu) {
			/* The PMU stage: the first is the summary's. */
			struct prof_pmu pk = {0};
			json_t *st =
			    k == 1 ? pmu_stage
				   : json_pack("{s:s,s:s}", "name", "pmu", "status", "not_run");
			r.rep = k == 1 ? 0 : k;
			r.reps = nrep;
			r.passes = plan.passes;
			r.stage = "pmu";
			r.stage_no = 1;
			if (k > 1)
				prof_progress(&r, "repetition", rk);
			if (k > 1 && prof_interrupted(&r)) {
				stage_record(&r, st, PROF_INTERRUPTED, NULL);
			} else {
				ergon_mtime_start(&mt_stage);
				prof_pmu(&r, &plan, st, &pk);
				ergon_mtime_end(&mt_stage);
				json_object_set_new(st, "measurement_time",
						    ergon_mtime_json(&mt_stage));
				stage_record(&r, st, pk.status, &pk.err);
			}
			r.pass = r.passes = 0;
			if (entry && o->repeat_pmu)
				json_object_set_new(
				    entry, "pmu",
				    json_pack(
					"{s:O,s:O*,s:O*,s:O*,s:O*}", "status",
					json_object_get(st, "status"), "measurement_time",
					json_object_get(st, "measurement_time"), "total_cycles",
					ergon_jpath(pk.profile, "total_cycles"),
					"clean_infer_avg_us",
					ergon_jpath(pk.profile, "meta.clean_infer_avg_us"),
					"clean_infer_avg_cycles",
					ergon_jpath(pk.profile, "meta.clean_infer_avg_cycles")));
			if (k == 1) {
				pmu = pk;
			} else {
				json_decref(st);
				json_decref(pk.profile);
				json_decref(pk.device_clean);
			}
		}
		r.rep = k;
		if (cfg->power.enabled) {
			r.stage = "power";
			r.stage_no = 2;
			json_t *st =
			    k == 1 ? pow_stage
				   : json_pack("{s:s,s:s}", "name", "power", "status", "not_run");
			struct prof_power pk = {0};
			if (nrep > 1)
				prof_progress(&r, "repetition", rk);
			if (prof_interrupted(&r)) {
				stage_record(&r, st, PROF_INTERRUPTED, NULL);
			} else {
				ergon_mtime_start(&mt_stage);
				prof_power(&r, &plan, &pmu, st, &pk);
				ergon_mtime_end(&mt_stage);
				json_object_set_new(st, "measurement_time",
						    ergon_mtime_json(&mt_stage));
				stage_record(&r, st, pk.status, &pk.err);
			}
			if (entry)
				json_object_update_new(
				    entry,
				    json_pack("{s:O,s:O*,s:O}", "status",
					      json_object_get(st, "status"), "measurement_time",
					      json_object_get(st, "measurement_time"), "power",
					      pk.section ? pk.section : json_null()));
			if (k == 1)
				pw = pk;
			else
				json_decref(pk.section);
			if (st != pow_stage)
				json_decref(st);
		}
		if (entry)
			json_array_append_new(reps, entry);
		if (r.interrupted)
			break;
	}
	ergon_mtime_end(&mt_all);
	json_object_set_new(art, "measurement_time", ergon_mtime_json(&mt_all));
	/* What the outputs stage folds into repetitions[] and repeat. */
	r.repetitions = reps;
	r.planned = nrep;
	/* 5. outputs. */
	rc = prof_outputs(&r, &plan, &pmu, &pw, art, stages, pmu_stage, pow_stage, &slot, err);
	ergon_out_release(&slot);
	if (rc == 0 && r.first.code)
		ergon_err_set(err, r.first.code, "%s", r.first.msg);
	if (rc == 0 && res)
		ergon_profile_result_read(art, res);
	if (rc == 0 && summary)
		*summary = json_incref(art);
	json_decref(art);
	json_decref(stages);
	json_decref(pmu_stage);
	json_decref(pow_stage);
	json_decref(plan.json);
	json_decref(pmu.profile);
	json_decref(pmu.device_clean);
	json_decref(reps);
	json_decref(pw.section);
	json_decref(r.issues);
	json_decref(r.power_build);
	return rc;
}
