/* verify/: `ergon verify` and the energy-model export.
 *
 * ergon verify (an artifact's schema, digest, signature and every figure
 * recomputed from its series: run/report_figures.c through ergon/report.h)
 * and the measurement-harness/energy-model/v1 export of a verified report. */
#include "ergon/artifact.h"
#include "ergon/budget.h"
#include "ergon/issues.h"
#include "ergon/jcs.h"
#include "ergon/json_alloc.h"
#include "ergon/report.h"
#include "ergon/signature.h"
#include "pipelines/common/common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How far apart two numbers are in units of the verify band, as a power
 * of ten: a failure says "by about 10^k x the tolerance", never the value
 * the series give (a forger would copy it in and re-seal). */
static int band_decade(double x, double y)
{
	double band = ERGON_VERIFY_ABS + ERGON_VERIFY_REL * fmax(fabs(x), fabs(y));
	double ratio = fabs(x - y) / band;
	if (!isfinite(ratio))
		return 308;
	return (int)floor(log10(ratio));
}

/* First difference between stored (a) and recomputed (b) figures. */
static int compare(const json_t *a, const json_t *b, const char *path, struct ergon_err *err)
{
	if (b == NULL) /* a recomputed value that could not be built */
		return ergon_err_set(err, ERGON_ENOMEM,
				     "field %s: could not be recomputed (out of memory; the "
				     "artifact itself may be fine: free memory and retry)",
				     path);
	if (a == NULL)
		return ergon_err_set(err, ERGON_EVERIFY,
				     "field %s: missing from the report; the series give it", path);
	if (json_is_number(a) && json_is_number(b)) {
		double x = json_number_value(a), y = json_number_value(b);
		double band = ERGON_VERIFY_ABS + ERGON_VERIFY_REL * fmax(fabs(x), fabs(y));
		if (fabs(x - y) <= band)
			return 0;
		return ergon_err_set(
		    err, ERGON_EVERIFY,
		    "field %s: differs from what the embedded series give by about "
		    "10^%d times the tolerance (%g relative + %g absolute); the "
		    "report was edited after its figures were computed",
		    path, band_decade(x, y), ERGON_VERIFY_REL, ERGON_VERIFY_ABS);
	}
	if (json_typeof(a) != json_typeof(b) && !(json_is_boolean(a) && json_is_boolean(b)))
		return ergon_err_set(err, ERGON_EVERIFY,
				     "field %s: the report holds a different kind of value than "
				     "the series give (%s)",
				     path, "type differs");
	char sub[512];
	if (json_is_object(b)) {
		const char *k;
		json_t *v;
		json_object_foreach((json_t *)b, k, v)
		{
			snprintf(sub, sizeof(sub), "%s.%s", path, k);
			int rc = compare(json_object_get(a, k), v, sub, err);
			if (rc)
				return rc;
		}
		json_object_foreach((json_t *)a, k, v)
		{
			if (json_object_get(b, k) == NULL)
				return ergon_err_set(err, ERGON_EVERIFY,
						     "field %s.%s: not a figure ergon derives; the "
						     "report was edited",
						     path, k);
		}
		return 0;
	}
	if (json_is_array(b)) {
		if (json_array_size(a) != json_array_size(b))
			return ergon_err_set(
			    err, ERGON_EVERIFY, "field %s: %zu entries, %s than the series give",
			    path, json_array_size(a),
			    json_array_size(a) > json_array_size(b) ? "more" : "fewer");
		for (size_t i = 0; i < json_array_size(b); i++) {
			snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
			int rc = compare(json_array_get(a, i), json_array_get(b, i), sub, err);
			if (rc)
				return rc;
		}
		return 0;
	}
	if (json_is_string(b)) {
		const char *x = json_string_value(a), *y = json_string_value(b);
		if (strcmp(x, y) != 0) {
			size_t at = 0;
			while (x[at] && x[at] == y[at])
				at++;
			return ergon_err_set(err, ERGON_EVERIFY,
					     "field %s: the text differs from what the series give "
					     "from character %zu on",
					     path, at);
		}
		return 0;
	}
	if (json_is_boolean(b) && json_is_true(a) != json_is_true(b))
		return ergon_err_set(err, ERGON_EVERIFY, "field %s: boolean differs", path);
	return 0;
}

/* --- the checks, in the order verify runs them ---------------------------
 *
 * Each check names the first field that fails. A new check (a signature,
 * say) is one more function and one more entry in `checks` below. */

struct verify_ctx {
	const json_t *r;
	/* The streaming reader's result (digest and packed series), or NULL
	 * when the report came as a jansson tree. */
	struct ergon_jcs_stream_result *stream;
};

/* Version 1: one run; version 2: a repeated run, whose series live under
 * repetitions[] (docs/REPORT_FORMAT.md). Each shape only under its own
 * version, so that an older ergon refuses a repeated report by its
 * version instead of misreading it. */
static int check_schema(struct verify_ctx *c, struct ergon_err *err)
{
	const char *schema = json_string_value(json_object_get(c->r, "schema"));
	json_int_t v = json_integer_value(json_object_get(c->r, "schema_version"));
	int repeated = json_object_get(c->r, "repetitions") != NULL;
	if (schema == NULL || strcmp(schema, ERGON_REPORT_SCHEMA) != 0 ||
	    (v != ERGON_REPORT_VERSION && v != ERGON_REPORT_VERSION_REPEATED))
		return ergon_err_set(
		    err, ERGON_EVERIFY, "field schema: not an %s version %d or %d report",
		    ERGON_REPORT_SCHEMA, ERGON_REPORT_VERSION, ERGON_REPORT_VERSION_REPEATED);
	if (repeated != (v == ERGON_REPORT_VERSION_REPEATED))
		return ergon_err_set(err, ERGON_EVERIFY,
				     "field schema_version: %d, but the report %s repetitions "
				     "(version %d is a repeated run, %d a single one)",
				     (int)v, repeated ? "holds" : "holds no",
				     ERGON_REPORT_VERSION_REPEATED, ERGON_REPORT_VERSION);
	return 0;
}

static int check_digest(struct verify_ctx *c, struct ergon_err *err)
{
	if (c->stream == NULL)
		return ergon_artifact_check_digest(c->r, err);
	const char *claimed = json_string_value(json_object_get(c->r, "report_id"));
	if (claimed == NULL)
		return ergon_err_set(err, ERGON_EVERIFY,
				     "field report_id: missing or not a string; the artifact was "
				     "never sealed");
	if (strcmp(c->stream->digest, claimed) != 0)
		return ergon_err_set(
		    err, ERGON_EVERIFY,
		    "field report_id: digest mismatch (file says %s, content hashes "
		    "to %s): the report was changed after it was written",
		    claimed, c->stream->digest);
	return 0;
}

static int check_figures(struct verify_ctx *c, struct ergon_err *err)
{
	const json_t *r = c->r;
	json_t *fig = NULL, *fissues = NULL;
	int rc = ergon_report_compute_figures_packed(r, c->stream, &fig, &fissues, err);
	if (rc)
		return rc;
	rc = compare(json_object_get(r, "figures"), fig, "figures", err);
	const json_t *issues = json_object_get(r, "issues");
	size_t i;
	json_t *x;
	if (rc == 0) {
		json_array_foreach(fissues, i, x)
		{
			const char *code = json_string_value(json_object_get(x, "code"));
			if (!ergon_issue_has(issues, code)) {
				rc = ergon_err_set(
				    err, ERGON_EVERIFY,
				    "field issues: the series raise %s, the report does "
				    "not list it",
				    code);
				break;
			}
		}
	}
	if (rc == 0) {
		const char *integ = json_string_value(json_object_get(r, "integrity"));
		const char *want = ergon_integrity_name(ergon_issues_integrity(issues));
		if (integ == NULL || strcmp(integ, want) != 0)
			rc = ergon_err_set(err, ERGON_EVERIFY,
					   "field integrity: says %s, its issues make it %s",
					   integ ? integ : "(missing)", want);
	}
	if (rc == 0) {
		const char *st = json_string_value(json_object_get(r, "status"));
		if (st && strcmp(st, "complete") != 0 && !ergon_issue_has(issues, "run.incomplete"))
			rc = ergon_err_set(err, ERGON_EVERIFY,
					   "field issues: status %s without run.incomplete", st);
	}
	json_decref(fig);
	json_decref(fissues);
	return rc;
}

/* A number the report states twice (the uncertainty model copies the
 * instrument's identity): both must be present and equal. */
static int same_number(const json_t *r, const char *a, const char *b, int optional,
		       struct ergon_err *err)
{
	const json_t *x = ergon_jpath(r, a), *y = ergon_jpath(r, b);
	if (optional && x == NULL && y == NULL)
		return 0;
	if (!json_is_number(x) || !json_is_number(y))
		return ergon_err_set(err, ERGON_EVERIFY,
				     "field %s: missing or not a number, though %s %s", a, b,
				     json_is_number(y) ? "states one" : "is missing too");
	if (json_number_value(x) != json_number_value(y))
		return ergon_err_set(err, ERGON_EVERIFY,
				     "field %s: differs from %s, which must state the same value; "
				     "the report was edited",
				     a, b);
	return 0;
}

/* The artifact agrees with itself: what it says it is (provenance) matches
 * the instrument that made it, the uncertainty model is the instrument's,
 * and the counts of the plan, the session and the series agree. */
static int check_one(const json_t *r, struct verify_ctx *c, struct ergon_err *err);

/* A repeated report: every repetition (as the report it would be alone)
 * agrees with itself, and the report's status says complete only when
 * every planned repetition completed. */
static int check_consistency(struct verify_ctx *c, struct ergon_err *err)
{
	const json_t *reps = json_object_get(c->r, "repetitions");
	if (reps == NULL)
		return check_one(c->r, c, err);
	size_t i;
	const json_t *rep;
	size_t completed = 0;
	json_array_foreach(reps, i, rep)
	{
		json_t *v = json_copy((json_t *)c->r);
		if (v == NULL)
			return ergon_err_set(err, ERGON_ENOMEM, "out of memory");
		json_object_del(v, "repetitions");
		const char *k;
		json_t *x;
		json_object_foreach((json_t *)rep, k, x) json_object_set(v, k, x);
		struct ergon_err e2 = {0};
		int rc = check_one(v, c, &e2);
		json_decref(v);
		if (rc)
			return ergon_err_set(err, rc, "repetitions[%zu]: %s", i, e2.msg);
		const char *st = json_string_value(json_object_get(rep, "status"));
		completed += st && strcmp(st, "complete") == 0;
	}
	const char *st = json_string_value(json_object_get(c->r, "status"));
	const json_t *planned = ergon_jpath(c->r, "repeat.planned");
	int all = json_is_integer(planned) && (size_t)json_integer_value(planned) == completed &&
		  completed == json_array_size(reps);
	if (st == NULL || (strcmp(st, "complete") == 0) != all)
		return ergon_err_set(
		    err, ERGON_EVERIFY,
		    "field status: %s, but %zu of %lld planned repetitions completed",
		    st ? st : "(missing)", completed, (long long)json_integer_value(planned));
	const json_t *cj = ergon_jpath(c->r, "repeat.completed");
	if (!json_is_integer(cj) || (size_t)json_integer_value(cj) != completed)
		return ergon_err_set(err, ERGON_EVERIFY,
				     "field repeat.completed: does not count the %zu complete "
				     "repetitions",
				     completed);
	return 0;
}

static int check_one(const json_t *r, struct verify_ctx *c, struct ergon_err *err)
{
	const char *kind = json_string_value(ergon_jpath(r, "provenance.kind"));
	int k = ergon_provenance_parse(kind);
	if (k == 0)
		return ergon_err_set(err, ERGON_EVERIFY,
				     "field provenance.kind: %s; it must be measured, synthetic or "
				     "replayed",
				     kind ? "not a known kind" : "missing or not a string");
	const json_t *inst = json_object_get(r, "instrument");
	if (!json_is_object(inst))
		return ergon_err_set(err, ERGON_EVERIFY,
				     "field instrument: missing or not an object");
	const char *iprov = json_string_value(json_object_get(inst, "provenance"));
	if (iprov == NULL || strcmp(iprov, ergon_provenance_name(k)) != 0)
		return ergon_err_set(
		    err, ERGON_EVERIFY,
		    "field provenance.kind: says %s, but instrument.provenance says "
		    "%s: the artifact contradicts itself (was provenance.kind "
		    "edited?)",
		    kind, iprov ? iprov : "nothing");
	const char *drv = json_string_value(json_object_get(inst, "driver"));
	const char *src = json_string_value(ergon_jpath(r, "provenance.source"));
	if (drv == NULL || src == NULL || strcmp(drv, src) != 0)
		return ergon_err_set(err, ERGON_EVERIFY,
				     "field provenance.source: names %s, but instrument.driver is "
				     "%s; they must name the same driver",
				     src ? src : "nothing", drv ? drv : "missing");
	/* Drivers whose provenance is fixed by what they are (DESIGN.md). */
	if (strcmp(drv, "synthetic") == 0 && k != ERGON_PROV_SYNTHETIC)
		return ergon_err_set(
		    err, ERGON_EVERIFY,
		    "field provenance.kind: says %s, but the synthetic driver only "
		    "ever produces synthetic figures",
		    kind);
	if (strcmp(drv, "replay") == 0 && k == ERGON_PROV_MEASURED)
		return ergon_err_set(
		    err, ERGON_EVERIFY,
		    "field provenance.kind: says measured, but a replay is never a "
		    "measurement of this run (replayed or synthetic)");
	if (k == ERGON_PROV_REPLAYED &&
	    ergon_provenance_parse(json_string_value(ergon_jpath(r, "provenance.recording"))) == 0)
		return ergon_err_set(err, ERGON_EVERIFY,
				     "field provenance.recording: a replayed report names the kind "
				     "of its recording (measured or synthetic); it is missing");
	if (json_is_object(json_object_get(r, "emulation")) && k != ERGON_PROV_SYNTHETIC)
		return ergon_err_set(err, ERGON_EVERIFY,
				     "field provenance.kind: says %s, but the report carries an "
				     "emulation block (an emulated run is synthetic)",
				     kind);
	int rc;
	if ((rc = same_number(r, "uncertainty_model.accuracy_pct", "instrument.accuracy_pct", 0,
			      err)) ||
	    (rc = same_number(r, "uncertainty_model.resolution_w", "instrument.resolution_w", 0,
			      err)) ||
	    (rc = same_number(r, "uncertainty_model.resolution_j", "instrument.resolution_j", 0,
			      err)) ||
	    (rc = same_number(r, "uncertainty_model.floor_w", "instrument.floor_w", 1, err)))
		return rc;
	/* The budgets' rated terms are the instrument's rating (its power
	 * view), term for term. */
	const json_t *ur = ergon_jpath(r, "uncertainty_model.budget.rated");
	if (ur != NULL) {
		const json_t *pv = ergon_jpath(r, "instrument.rating.power_view");
		if (!json_is_array(ur) || !json_is_array(pv) ||
		    json_array_size(ur) != json_array_size(pv))
			return ergon_err_set(err, ERGON_EVERIFY,
					     "field uncertainty_model.budget.rated: must list the "
					     "terms of instrument.rating.power_view");
		for (size_t i = 0; i < json_array_size(ur); i++) {
			const json_t *a = json_array_get(ur, i), *b = json_array_get(pv, i);
			if (!json_equal(json_object_get(a, "name"), json_object_get(b, "name")) ||
			    !json_equal(json_object_get(a, "kind"), json_object_get(b, "kind")) ||
			    !json_equal(json_object_get(a, "value"), json_object_get(b, "value")))
				return ergon_err_set(
				    err, ERGON_EVERIFY,
				    "field uncertainty_model.budget.rated[%zu]: differs from "
				    "instrument.rating.power_view[%zu]; the report was edited",
				    i, i);
		}
	}
	/* Counts: a complete run completed every planned window, and the
	 * window edges are one more than the windows. */
	const json_t *edges = ergon_jpath(r, "series.window_edges_s");
	const struct ergon_jcs_packed *pe =
	    c->stream ? ergon_jcs_packed_find(c->stream, edges) : NULL;
	size_t n_edges = pe ? pe->n : json_array_size(edges);
	const json_t *wc = ergon_jpath(r, "session.windows_completed");
	if (json_is_integer(wc)) {
		json_int_t w = json_integer_value(wc);
		if ((w == 0 && n_edges != 0) || (w > 0 && n_edges != (size_t)w + 1))
			return ergon_err_set(
			    err, ERGON_EVERIFY,
			    "field session.windows_completed: %" JSON_INTEGER_FORMAT
			    " windows, but series.window_edges_s holds %zu edges "
			    "(windows + 1)",
			    w, n_edges);
		const char *st = json_string_value(json_object_get(r, "status"));
		const json_t *pw = ergon_jpath(r, "plan.windows");
		if (st && strcmp(st, "complete") == 0 && json_is_integer(pw) &&
		    json_integer_value(pw) != w)
			return ergon_err_set(
			    err, ERGON_EVERIFY,
			    "field session.windows_completed: %" JSON_INTEGER_FORMAT
			    " windows in a complete run that planned %" JSON_INTEGER_FORMAT,
			    w, json_integer_value(pw));
	}
	return 0;
}

typedef int (*verify_check)(struct verify_ctx *c, struct ergon_err *err);

/* Schema, then the digest, then the figures against the series (the
 * messages existing users know), then the artifact's own consistency. */
static const verify_check checks[] = {check_schema, check_digest, check_figures, check_consistency};

static int run_checks(struct verify_ctx *c, struct ergon_err *err)
{
	/* jansson drops a value when an allocation fails inside its builders:
	 * recomputed figures would then differ from the report's, and verify
	 * would call an intact artifact edited. Count them: a failure is out
	 * of memory, never a verdict on the artifact. */
	ergon_json_alloc_watch();
	unsigned long jfail = ergon_json_alloc_failures();
	for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
		int rc = checks[i](c, err);
		if (ergon_json_alloc_failures() != jfail) {
			ergon_err_clear(err);
			return ergon_err_set(err, ERGON_ENOMEM,
					     "out of memory while checking the report (an "
					     "allocation inside the JSON library failed); the "
					     "artifact itself may be fine: free memory and retry");
		}
		if (rc)
			return rc;
	}
	return 0;
}

int ergon_report_verify(const json_t *r, struct ergon_err *err)
{
	struct verify_ctx c = {.r = r};
	return run_checks(&c, err);
}

int ergon_artifact_verify(const json_t *j, struct ergon_err *err)
{
	const char *schema = json_string_value(json_object_get(j, "schema"));
	const char *kind = json_string_value(json_object_get(j, "kind"));
	int sustained = schema && strcmp(schema, ERGON_REPORT_SCHEMA) == 0 && kind &&
			strcmp(kind, "sustained") == 0;
	int rc = sustained ? ergon_report_verify(j, err) : ergon_artifact_check_digest(j, err);
	if (rc == 0)
		rc = ergon_artifact_signature_bound(j, err);
	return rc;
}

int ergon_report_verify_file(const char *path, size_t max_len, unsigned flags, json_t **report,
			     struct ergon_err *err)
{
	struct ergon_jcs_stream_result res;
	if (report)
		*report = NULL;
	unsigned jf = ERGON_JCS_OMIT_REPORT_ID | ERGON_JCS_BUILD_TREE | ERGON_JCS_PACK_SERIES;
	if (flags & ERGON_VERIFY_SPILL_ALL)
		jf |= ERGON_JCS_SPILL_ALL;
	int rc = ergon_jcs_stream_file(path, max_len, jf, &res, err);
	if (rc)
		return rc;
	struct verify_ctx c = {.r = res.tree, .stream = &res};
	rc = run_checks(&c, err);
	if (rc == 0 && report)
		*report = json_incref(res.tree);
	ergon_jcs_stream_result_free(&res);
	return rc;
}

/* A power section's gate against its budgets. */
static int check_power_gate(const json_t *power, const char *where, struct ergon_err *err)
{
	const json_t *unc = json_object_get(power, "uncertainty");
	const json_t *mp = json_object_get(unc, "max_uncertainty_pct");
	if (!json_is_number(mp))
		return 0;
	static const char *const figs[] = {"energy_j", "charge_c", "avg_power_w",
					   "energy_per_inference_j"};
	int fails = 0;
	for (size_t i = 0; i < 4; i++) {
		const json_t *bj = json_object_get(unc, figs[i]);
		if (!json_is_object(bj))
			continue;
		struct ergon_budget b;
		char w[160];
		snprintf(w, sizeof(w), "%s.uncertainty.%s", where, figs[i]);
		int rc = ergon_budget_from_json(bj, w, &b, err);
		if (rc)
			return rc;
		fails |= ergon_budget_gate(&b, json_number_value(mp)) != 0;
	}
	int listed =
	    ergon_issue_has(json_object_get(power, "issues"), "power.uncertainty_above_limit");
	if (fails != listed)
		return ergon_err_set(err, ERGON_EVERIFY,
				     "field %s.issues: the budgets %s the gate of %g %%, but "
				     "power.uncertainty_above_limit is %s",
				     where, fails ? "fail" : "meet", json_number_value(mp),
				     listed ? "listed" : "not listed");
	return 0;
}

int ergon_artifact_check_budgets(const json_t *a, size_t *count, struct ergon_err *err)
{
	*count = 0;
	int rc = ergon_budget_json_check_all(a, "", count, err);
	if (rc)
		return rc;
	const json_t *power = json_object_get(a, "power");
	if (json_is_object(power) && (rc = check_power_gate(power, "power", err)))
		return rc;
	return 0;
}

int ergon_energy_model_build(const json_t *r, const char *const *actions, size_t n_actions,
			     int allow, json_t **model, struct ergon_err *err)
{
	*model = NULL;
	if (n_actions == 0)
		return ergon_err_set(err, ERGON_EUSAGE,
				     "give at least one --action NAME (what one operation is, e.g. "
				     "inference)");
	int rc = ergon_report_verify(r, err);
	if (rc)
		return rc;
	const char *prov = json_string_value(ergon_jpath(r, "provenance.kind"));
	int kind = ergon_provenance_parse(prov);
	/* Only power recorded while this workload ran is a measurement of its
	 * energy per operation. A replay pairs a recording made at another
	 * time with a live workload: even a recording that was itself
	 * measured says nothing about this workload, so it is never
	 * labelled measured. */
	int measured = kind == ERGON_PROV_MEASURED;
	int replayed = kind == ERGON_PROV_REPLAYED;
	if (replayed && !(allow & ERGON_MODEL_ALLOW_REPLAYED))
		return ergon_err_set(
		    err, ERGON_EREFUSED,
		    "the report's provenance is replayed: its power comes from a "
		    "recording, not from the device while this workload ran, so its "
		    "energy per operation is not a measurement; pass "
		    "--allow-replayed to export it labelled \"%s\"",
		    ERGON_REPLAYED_LABEL);
	if (!measured && !replayed && !(allow & ERGON_MODEL_ALLOW_SYNTHETIC))
		return ergon_err_set(err, ERGON_EREFUSED,
				     "the report's provenance is %s, not measured: its figures are "
				     "not a measurement of a device; pass --allow-synthetic to "
				     "export them labelled \"synthetic — not measured\"",
				     prov ? prov : "unknown");
	const char *label = measured   ? "measured"
			    : replayed ? ERGON_REPLAYED_LABEL
				       : "synthetic — not measured";
	const char *integ = json_string_value(json_object_get(r, "integrity"));
	const json_t *eop = ergon_jpath(r, "figures.energy_per_op");
	/* Several rails: the model is the total input rail's figure; without
	 * one there is nothing to export (a sum of rails would double-count
	 * nested ones). */
	const json_t *frails = ergon_jpath(r, "figures.rails");
	const char *headline = json_string_value(ergon_jpath(r, "figures.headline_rail"));
	if (json_is_array(frails) && headline == NULL) {
		char list[400] = "";
		size_t lo = 0, i;
		const json_t *fr;
		json_array_foreach(frails, i, fr)
		{
			const char *nm = json_string_value(json_object_get(fr, "name"));
			int w = snprintf(list + lo, sizeof(list) - lo, "%s%s", i ? ", " : "",
					 nm ? nm : "?");
			if (w > 0 && lo + (size_t)w < sizeof(list))
				lo += (size_t)w;
		}
		return ergon_err_set(
		    err, ERGON_EREFUSED,
		    "the report measured the rails %s and none is the module's "
		    "total input: energy-model exports the total input's energy per "
		    "operation and never a sum of rails; rerun with the total input "
		    "rail selected (e.g. hwmon:VDD_IN)",
		    list);
	}
	double j = 0, u = 0, n_ops = 0;
	/* A repeated run: the mean over its repetitions, with a ± that adds
	 * the half-width of the mean's 95 % interval to the instrument's (the
	 * run-to-run spread is part of what one operation costs). */
	const json_t *rst = ergon_jpath(r, "figures.repeat.figures.energy_per_op.above_idle_j");
	char reptxt[200] = "";
	if (json_is_array(json_object_get(r, "repetitions"))) {
		double m = json_number_value(json_object_get(rst, "mean"));
		double hi = json_number_value(json_object_get(rst, "ci_hi"));
		double ui = json_number_value(json_object_get(rst, "u_instrument"));
		json_int_t n = json_integer_value(json_object_get(rst, "n"));
		size_t nrep = json_array_size(json_object_get(r, "repetitions"));
		if (integ == NULL || strcmp(integ, "invalid") == 0 ||
		    !json_is_number(json_object_get(rst, "mean")) ||
		    !json_is_number(json_object_get(rst, "ci_hi")) || (size_t)n != nrep)
			return ergon_err_set(
			    err, ERGON_EREFUSED,
			    "the repeated report's integrity is %s and it states no "
			    "energy per operation in every repetition; nothing to "
			    "export",
			    integ ? integ : "unknown");
		j = m;
		u = (isfinite(ui) ? ui : 0) + (hi - m);
		size_t i;
		const json_t *fr;
		json_array_foreach(ergon_jpath(r, "figures.repetitions"), i, fr) n_ops +=
		    json_number_value(ergon_jpath(fr, "operations.succeeded"));
		snprintf(
		    reptxt, sizeof reptxt,
		    ", the mean of %lld repetitions (sd %.2g J; ± = instrument + the half-width "
		    "of the mean's 95 %% interval)",
		    (long long)n, json_number_value(json_object_get(rst, "sd")));
	} else if (integ == NULL || strcmp(integ, "invalid") == 0 || !json_is_object(eop))
		return ergon_err_set(err, ERGON_EREFUSED,
				     "the report's integrity is %s and it publishes no energy per "
				     "operation; nothing to export",
				     integ ? integ : "unknown");
	if (reptxt[0] == '\0' &&
	    ((rc = ergon_jnumber(r, "figures.energy_per_op.above_idle_j", &j, err)) ||
	     (rc = ergon_jnumber(r, "figures.energy_per_op.above_idle_u_j", &u, err)) ||
	     (rc = ergon_jnumber(r, "figures.operations.succeeded", &n_ops, err))))
		return rc;
	const char *device = json_string_value(ergon_jpath(r, "device.name"));
	const char *drv = json_string_value(ergon_jpath(r, "instrument.driver"));
	const char *vendor = json_string_value(ergon_jpath(r, "instrument.vendor"));
	const char *modelname = json_string_value(ergon_jpath(r, "instrument.model"));
	const char *rid = json_string_value(json_object_get(r, "report_id"));
	const char *verdict = json_string_value(ergon_jpath(r, "figures.throughput.verdict"));
	if (reptxt[0])
		verdict = "stated per repetition in the report";
	/* No rated accuracy: the ± is resolution and timing only, so the
	 * sentence says "unrated" and the model carries the flag. */
	int unrated = ergon_issue_has(json_object_get(r, "issues"), "instrument.unrated_accuracy");
	char src[1400], railtxt[128] = "", utxt[160];
	if (unrated)
		snprintf(utxt, sizeof(utxt),
			 "± unrated: the instrument states no accuracy; resolution and timing "
			 "alone give %.2g J",
			 u);
	else
		snprintf(utxt, sizeof(utxt), "± %.2g J", u);
	if (headline)
		snprintf(railtxt, sizeof(railtxt), ", rail %.60s (the module's total input)",
			 headline);
	/* A sysfs tree that is not the system's own says where it came from. */
	const char *sroot = json_string_value(ergon_jpath(r, "instrument.sysfs_root"));
	char roottxt[300] = "";
	if (sroot != NULL && sroot[0])
		snprintf(roottxt, sizeof(roottxt), ", read under sysfs root %.200s (not /)", sroot);
	snprintf(src, sizeof(src),
		 "%s: %.6g J per operation above idle (%s%s) on %s, instrument %s (%s %s)%s%s, "
		 "%.0f operations, basis above_idle, report %s; sustained throughput: %s",
		 label, j, utxt, reptxt, device ? device : "?", drv ? drv : "?",
		 vendor ? vendor : "?", modelname ? modelname : "?", railtxt, roottxt, n_ops,
		 rid ? rid : "?", verdict ? verdict : "not assessed");
	json_t *values = json_object();
	for (size_t i = 0; i < n_actions; i++) {
		if (actions[i] == NULL || actions[i][0] == '\0') {
			json_decref(values);
			return ergon_err_set(err, ERGON_EUSAGE, "--action: empty name");
		}
		json_object_set_new(values, actions[i], json_real(j));
	}
	*model = json_pack(
	    "{s:s, s:s, s:o, s:s, s:f, s:s, s:s, s:s, s:s}", "schema", ERGON_ENERGY_MODEL_SCHEMA, "basis",
	    "above_idle", "values", values, "source", src, "uncertainty_j_per_operation", u, "unit",
	    "J per operation", "provenance",
	    measured   ? "measured"
	    : replayed ? "replayed"
		       : "synthetic",
	    "report_id", rid ? rid : "", "formula",
	    json_string_value(ergon_jpath(r, "figures.energy_per_op.formula"))
		? json_string_value(ergon_jpath(r, "figures.energy_per_op.formula"))
	    : json_string_value(ergon_jpath(r, "figures.repetitions[0].energy_per_op.formula"))
		? json_string_value(ergon_jpath(r, "figures.repetitions[0].energy_per_op.formula"))
		: "");
	if (*model == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "cannot build the energy model");
	json_object_set_new(*model, "accuracy_rated", json_boolean(!unrated));
	/* The budget's expanded uncertainty (k = 2), when the report has one:
	 * uncertainty_j_per_operation keeps its meaning (the worst-case bound of
	 * reports before the budgets). */
	const json_t *ab = json_object_get(eop, "above_idle_budget");
	if (json_is_object(ab)) {
		json_object_set(*model, "expanded_uncertainty_j_per_operation",
				json_object_get(ab, "U"));
		json_object_set_new(*model, "coverage_factor", json_real(ERGON_BUDGET_K));
		json_object_set(*model, "budget_complete", json_object_get(ab, "complete"));
		json_object_set(*model, "budget_dominant_term", json_object_get(ab, "dominant"));
	}
	/* When the report's figure was measured. */
	const json_t *mt = json_object_get(r, "measurement_time");
	json_object_set_new(*model, "measurement_time", mt ? json_deep_copy(mt) : json_null());
	return 0;
}
