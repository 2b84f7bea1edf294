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
#include "pipelines/common/common.h"
#include "profile_internal.h"

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
