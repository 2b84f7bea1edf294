/* The outputs stage of `ergon profile`: summary.json made from what the
 * stages returned (the plan, the stages' records, the profile body, the
 * power section, the model and its correctness), its verdict (integrity,
 * valid), and the derived views: profile_results.csv and, with
 * output.detailed, detailed/plan.json, detailed/power_summary.csv and a
 * CSV per layer group; with --layer-energy detailed/layer_energy.csv. summary.json goes into the space reserved before
 * the stages ran, also when a CSV failed: it says what happened. */
#include "ergon/analyze.h"
#include "ergon/artifact.h"
#include "ergon/fileio.h"
#include "ergon/hpx_report.h"
#include "ergon/issues.h"
#include "ergon/reserve.h"
#include "ergon/stats.h"
#include "pipelines/common/common.h"
#include "profile_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int write_outputs(struct prof_run *r, json_t *art, const json_t *profile,
			 const json_t *power, struct ergon_out_slot *slot, struct ergon_err *err)
{
	const struct ergon_config *cfg = r->o->cfg;
	unsigned flags = ERGON_WRITE_FORCE | ERGON_WRITE_MKDIR;
	char path[1200];
	int rc = 0;
	const json_t *layers = json_object_get(profile, "layers");
	if (json_is_array(layers)) {
		char *csv = NULL;
		size_t len = 0;
		snprintf(path, sizeof path, "%s/profile_results.csv", r->o->out_dir);
		rc = ergon_hpx_layers_csv(layers, &csv, &len, err);
		if (!rc)
			rc = ergon_file_write_atomic(path, csv, len, flags, err);
		free(csv);
	}
	/* --layer-energy: the layers as a table, whether or not the other
	 * detailed files are asked for. */
	const json_t *lay = json_object_get(power, "layers");
	if (!rc && json_is_array(lay)) {
		char *csv = NULL;
		size_t len = 0;
		snprintf(path, sizeof path, "%s/detailed/layer_energy.csv", r->o->out_dir);
		rc = ergon_layers_csv(lay, &csv, &len, err);
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
		if (!rc && json_is_object(power) && json_object_get(power, "measurement_scope")) {
			char *csv = NULL;
			size_t len = 0;
			snprintf(path, sizeof path, "%s/detailed/power_summary.csv", r->o->out_dir);
			rc = ergon_power_csv_render(power, &csv, &len, err);
			if (!rc)
				rc = ergon_file_write_atomic(path, csv, len, flags, err);
			free(csv);
		}
		if (!rc && json_is_array(layers)) {
			char *csv = NULL;
			size_t len = 0;
			const char *g;
			json_t *gl;
			json_object_foreach(json_object_get(profile, "groups"), g, gl)
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

/* The power figures a repeated profile gives statistics of: the path in
 * the power section, the budget that states its U (NULL: none), name and
 * unit (ergon compare's profile figures). */
static const struct {
	const char *key, *budget, *name, *unit;
} repeat_figs[] = {
    {"energy_per_inference_j", "energy_per_inference_j", "energy per inference", "J"},
    {"avg_power_w", "avg_power_w", "mean power (gated)", "W"},
    {"avg_current_a", NULL, "mean current (gated)", "A"},
    {"p99_current_a", NULL, "p99 current (gated)", "A"},
    {"energy_j", "energy_j", "gated energy", "J"},
    {"inferences_per_joule", NULL, "inferences per joule", "1/J"},
};

/* The PMU figures a repetition of the whole profile gives (repeat_pmu):
 * the path in repetitions[].pmu, the path compare reads under "profile". */
static const struct {
	const char *key, *path, *name, *unit;
} repeat_pmu_figs[] = {
    {"total_cycles", "total_cycles", "total cycles (per-layer sum)", "cycles"},
    {"clean_infer_avg_us", "meta.clean_infer_avg_us", "clean inference time", "us"},
    {"clean_infer_avg_cycles", "meta.clean_infer_avg_cycles", "clean inference cycles", "cycles"},
};

/* One figure's statistics into parent at the dotted path (nested, so that
 * repeat.figures.<path> reaches it as ergon compare looks it up). */
static void repeat_put(json_t *parent, const char *path, json_t *o)
{
	const char *dot = strchr(path, '.');
	if (o == NULL)
		return;
	if (dot == NULL) {
		json_object_set_new(parent, path, o);
		return;
	}
	char head[64];
	snprintf(head, sizeof head, "%.*s", (int)(dot - path), path);
	json_t *child = json_object_get(parent, head);
	if (child == NULL) {
		child = json_object();
		json_object_set_new(parent, head, child);
	}
	repeat_put(child, dot + 1, o);
}

/* --repeat N: the repetitions (each {index, status, measurement_time,
 * power, and with the PMU stage repeated pmu}) into art's "repetitions",
 * and "repeat" {planned, completed, what, n, level, intervals,
 * figures.power.<figure> (and figures.profile.*): ergon_repeat_figure_json}
 * when every planned repetition completed ("withheld" says why otherwise). */
static void prof_repeat(struct prof_run *r, unsigned planned, int power, int pmu, json_t *reps,
			json_t *art)
{
	size_t n = json_array_size(reps), completed = 0;
	json_object_set(art, "repetitions", reps);
	for (size_t i = 0; i < n; i++) {
		const json_t *e = json_array_get(reps, i);
		const char *st = json_string_value(json_object_get(e, "status"));
		const char *ps =
		    json_string_value(json_object_get(json_object_get(e, "pmu"), "status"));
		completed += (!power || (st != NULL && strcmp(st, "ok") == 0)) &&
			     (!pmu || (ps != NULL && strcmp(ps, "ok") == 0));
	}
	json_t *rep = json_pack(
	    "{s:I,s:I,s:s}", "planned", (json_int_t)planned, "completed", (json_int_t)completed,
	    "what",
	    pmu ? "each repetition is the whole profile: the PMU stage and the power stage's "
		  "whole capture (program, reset, the handshake, the gated window, the terminal "
		  "record, the analysis)"
		: "each repetition is the power stage's whole capture (program, reset, the "
		  "handshake, the gated window, the terminal record, the analysis); the PMU "
		  "stage ran once");
	if (rep == NULL)
		return;
	json_object_set_new(art, "repeat", rep);
	if (completed != planned || n != planned) {
		json_object_set_new(rep, "withheld",
				    json_sprintf("%zu of %u planned repetitions completed: each "
						 "repetition's figures are given, the repeat "
						 "statistics are withheld",
						 completed, planned));
		ergon_issue_add(r->issues, "profile.repetitions_incomplete",
				json_pack("{s:I,s:I}", "planned", (json_int_t)planned, "completed",
					  (json_int_t)completed),
				"%zu of %u repetitions completed: the repeat statistics are "
				"withheld",
				completed, planned);
		return;
	}
	json_t *figs = json_object();
	json_object_set_new(rep, "n", json_integer((json_int_t)n));
	json_object_set_new(rep, "level", json_real(ERGON_STATS_LEVEL));
	json_object_set_new(rep, "mean_interval",
			    json_string("mean -+ t(0.975, n-1) x sd / sqrt(n) (Student t)"));
	json_object_set_new(rep, "median_interval",
			    json_string("order statistics [x(k), x(n-k+1)], binomial coverage "
					"(distribution-free)"));
	json_object_set_new(rep, "u_is",
			    json_string("each repetition's expanded uncertainty U (k = 2) from "
					"its budget (power.uncertainty), null without one"));
	json_object_set_new(rep, "figures", figs);
	double v[ERGON_PROFILE_REPEAT_MAX], u[ERGON_PROFILE_REPEAT_MAX];
	struct ergon_err e = {0};
	for (size_t f = 0; power && f < sizeof repeat_figs / sizeof repeat_figs[0]; f++) {
		for (size_t i = 0; i < n && i < ERGON_PROFILE_REPEAT_MAX; i++) {
			const json_t *sec = json_object_get(json_array_get(reps, i), "power");
			const json_t *x = json_object_get(sec, repeat_figs[f].key);
			const json_t *b = repeat_figs[f].budget
					      ? json_object_get(json_object_get(sec, "uncertainty"),
								repeat_figs[f].budget)
					      : NULL;
			const json_t *U = json_object_get(b, "U");
			v[i] = json_is_number(x) ? json_number_value(x) : NAN;
			u[i] = json_is_number(U) ? json_number_value(U) : NAN;
		}
		char path[96];
		snprintf(path, sizeof path, "power.%s", repeat_figs[f].key);
		repeat_put(figs, path,
			   ergon_repeat_figure_json(repeat_figs[f].name, repeat_figs[f].unit, v, u,
						    n, &e));
	}
	for (size_t f = 0; pmu && f < sizeof repeat_pmu_figs / sizeof repeat_pmu_figs[0]; f++) {
		for (size_t i = 0; i < n && i < ERGON_PROFILE_REPEAT_MAX; i++) {
			const json_t *x =
			    json_object_get(json_object_get(json_array_get(reps, i), "pmu"),
					    repeat_pmu_figs[f].key);
			v[i] = json_is_number(x) ? json_number_value(x) : NAN;
			u[i] = NAN;
		}
		char path[96];
		snprintf(path, sizeof path, "profile.%s", repeat_pmu_figs[f].path);
		repeat_put(figs, path,
			   ergon_repeat_figure_json(repeat_pmu_figs[f].name,
						    repeat_pmu_figs[f].unit, v, u, n, &e));
	}
}

int prof_outputs(struct prof_run *r, const struct prof_plan *plan, struct prof_pmu *pmu,
		 const struct prof_power *pw, json_t *art, json_t *stages, json_t *pmu_stage,
		 json_t *pow_stage, struct ergon_out_slot *slot, struct ergon_err *err)
{
	const struct ergon_config *cfg = r->o->cfg;
	/* A live instrument that is a simulator or a stub (its identity says
	 * so) makes the power figures synthetic, whatever the board. */
	const char *lsrc = json_string_value(
	    json_object_get(json_object_get(pw->section, "live_capture"), "source"));
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
	if (json_is_object(pw->section) && pmu->device_clean != NULL)
		json_object_update(pw->section, pmu->device_clean);
	/* The power stage's recording (the virtual bench writes its trace):
	 * what the summary was made from, for report --jls and view. */
	const json_t *rec = json_object_get(pow_stage, "recording");
	if (json_is_object(rec))
		json_object_set(json_object_get(art, "provenance"), "recording", (json_t *)rec);
	json_object_set(stages, "pmu", pmu_stage);
	json_object_set(stages, "power", pow_stage);
	json_object_set_new(art, "board",
			    json_pack("{s:s,s:s,s:I,s:I,s:I}", "name", cfg->board->name, "soc",
				      cfg->board->soc, "sync_gpio_pin",
				      (json_int_t)cfg->power.sync_gpio_pin, "state_gpio_pin",
				      (json_int_t)cfg->power.state_gpio_pin, "go_gpio_pin",
				      (json_int_t)cfg->power.go_gpio_pin));
	json_object_set_new(art, "config", ergon_config_to_json(cfg));
	json_object_set(art, "plan", plan->json);
	json_object_set(art, "stages", stages);
	if (pmu->profile)
		json_object_set(art, "profile", pmu->profile);
	else
		json_object_set_new(art, "profile", json_null());
	if (pw->section)
		json_object_set(art, "power", pw->section);
	else
		json_object_set_new(art, "power", json_null());
	prof_model_annotate(r, art, pmu->profile, pmu_stage);
	if (r->repetitions != NULL)
		prof_repeat(r, r->planned, cfg->power.enabled, r->o->repeat_pmu, r->repetitions,
			    art);
	json_array_extend(json_object_get(art, "issues"), r->issues);
	int integrity = ergon_issues_integrity(r->issues);
	const char *pst = json_string_value(json_object_get(pmu_stage, "status"));
	const char *wst = json_string_value(json_object_get(pow_stage, "status"));
	int stages_ok =
	    strcmp(pst, "ok") == 0 && (strcmp(wst, "ok") == 0 || strcmp(wst, "disabled") == 0);
	/* A power run without a per-inference figure measured nothing usable. */
	int power_ok =
	    !cfg->power.enabled ||
	    (json_is_object(pw->section) &&
	     json_is_false(json_object_get(pw->section, "per_inference_metrics_omitted")));
	int valid =
	    stages_ok && power_ok && !r->interrupted && integrity != ERGON_INTEGRITY_INVALID;
	json_object_set_new(art, "integrity", json_string(ergon_integrity_name(integrity)));
	json_object_set_new(art, "interrupted", json_boolean(r->interrupted));
	json_object_set_new(art, "valid", json_boolean(valid));
	r->stage = "outputs";
	r->stage_no = r->stages;
	prof_progress(r, "writing", r->o->out_dir);
	return write_outputs(r, art, pmu->profile, pw->section, slot, err);
}
