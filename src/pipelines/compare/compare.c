/* compare/: `ergon compare`: comparability, figures, regressions.
 *
 * ergon compare: comparability, figures with their uncertainty, per-layer
 * diff and the regression verdict (compare.h, docs/COMPARE.md). */
#include "ergon/compare.h"

#include "ergon/artifact.h"
#include "ergon/dynbuf.h"
#include "ergon/report.h"
#include "ergon/signature.h"
#include "pipelines/compare/compare_internal.h"
#include "pipelines/common/common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* better: -1 lower is better, +1 higher is better, 0 no direction.
 * headline: counts for the regression verdict. u_path: where the ± is
 * (any path in the artifact), NULL when the artifact states none. */
struct figure_def {
	const char *name;
	const char *path;
	const char *u_path;
	const char *unit;
	int better;
	int headline;
};

struct compare_kind {
	const char *name;
	const char *what; /* in messages */
	int (*match)(const json_t *a);
	const struct ident_field *ident;
	size_t n_ident;
	const struct figure_def *fig;
	size_t n_fig;
	int layers; /* has profile.layers */
	/* Figures matched by name rather than by path (kernels): fills
	 * "figures" and its own extra members of the result. */
	json_t *(*rows)(const json_t *const *a, const char *const *labels, size_t n,
			double threshold_pct, json_t *regressed, json_t *result,
			size_t *spread_unknown);
};

/* --- run reports (ergon.report) ------------------------------------------ */

static const struct ident_field run_ident[] = {
    {"provenance.kind", F_BREAKS, 0},
    {"provenance.source", F_BREAKS, 0},
    {"provenance.recording", F_BREAKS, 0},
    {"instrument.driver", F_BREAKS, 0},
    {"instrument.vendor", F_BREAKS, 0},
    {"instrument.model", F_BREAKS, 0},
    {"instrument.accuracy_pct", F_BREAKS, 0},
    {"instrument.resolution_w", F_BREAKS, 0},
    {"instrument.resolution_j", F_BREAKS, 0},
    {"instrument.floor_w", F_BREAKS, 0},
    {"instrument.sample_rate_hz", F_BREAKS, 0},
    {"instrument.averaging_period_s", F_BREAKS, 0},
    {"instrument.integrates", F_BREAKS, 0},
    {"instrument.clock", F_BREAKS, 0},
    {"instrument.rails", F_BREAKS, 0},
    {"instrument.total_rail", F_BREAKS, 0},
    {"sampler.kind", F_BREAKS, 0},
    {"sampler.target_hz", F_BREAKS, 0},
    {"device.name", F_BREAKS, 0},
    {"device.firmware_sha256", F_BREAKS, 0},
    {"conditions.cpu_model", F_BREAKS, 0},
    {"conditions.cpu_count", F_BREAKS, 0},
    {"conditions.governor", F_BREAKS, 0},
    {"conditions.ambient_c", F_BREAKS, 2.0},
    {"conditions.temp_file", F_BREAKS, 0},
    {"mode.kind", F_BREAKS, 0},
    {"mode.release_hz", F_BREAKS, 0},
    {"plan.settle_s", F_BREAKS, 0},
    {"plan.idle_s", F_BREAKS, 0},
    {"plan.windows", F_BREAKS, 0},
    {"plan.window_s", F_BREAKS, 0},
    {"plan.throttle_threshold", F_BREAKS, 0},
    {"plan.throttle_windows", F_BREAKS, 0},
    {"plan.failure_policy", F_BREAKS, 0},
    {"plan.invoke_timeout_s", F_BREAKS, 0},
    {"figures.headline_rail", F_BREAKS, 0},
    {"workload.spec", F_SUBJECT, 0},
    {"workload.description", F_SUBJECT, 0},
    {"instrument.serial", F_NOTE, 0},
    {"conditions.host", F_NOTE, 0},
    {"conditions.kernel", F_NOTE, 0},
    {"tool.version", F_NOTE, 0},
    {"status", F_NOTE, 0},
    {"integrity", F_NOTE, 0},
};

/* The run figures are ergon_run_figures() (ergon/report.h): the same
 * table the repeat statistics of a run report are made for. */
static struct figure_def run_fig[32];
static size_t n_run_fig;

static void run_fig_init(void)
{
	if (n_run_fig)
		return;
	size_t n;
	const struct ergon_run_figure *f = ergon_run_figures(&n);
	static char paths[32][96];
	for (size_t i = 0; i < n && i < 32; i++) {
		snprintf(paths[i], sizeof paths[i], "figures.%s", f[i].key);
		run_fig[i] = (struct figure_def){f[i].name, paths[i],	 f[i].u_key,
						 f[i].unit, f[i].better, f[i].headline};
	}
	n_run_fig = n < 32 ? n : 32;
}

static int is_run(const json_t *a)
{
	const char *s = json_string_value(json_object_get(a, "schema"));
	return s && strcmp(s, "ergon.report") == 0;
}

/* --- profile summaries (ergon.profile with a profile section) ------------ */

static const struct ident_field profile_ident[] = {
    {"provenance.kind", F_BREAKS, 0},
    {"provenance.target.board", F_BREAKS, 0},
    {"provenance.target.lifecycle", F_BREAKS, 0},
    {"provenance.target.hardware", F_BREAKS, 0},
    {"board.name", F_BREAKS, 0},
    {"board.soc", F_BREAKS, 0},
    {"plan.counters.passes", F_BREAKS, 0},
    {"plan.counters.cycles", F_BREAKS, 0},
    {"plan.window.mode", F_BREAKS, 0},
    {"plan.window.target_ms", F_BREAKS, 0},
    {"plan.window.min", F_BREAKS, 0},
    {"plan.window.max", F_BREAKS, 0},
    {"plan.window.iterations", F_BREAKS, 0},
    {"plan.window.warmup", F_BREAKS, 0},
    {"plan.power.enabled", F_BREAKS, 0},
    {"plan.power.mode", F_BREAKS, 0},
    {"plan.power.firmware", F_BREAKS, 0},
    {"plan.power.driver", F_BREAKS, 0},
    {"plan.power.lockstep", F_BREAKS, 0},
    {"profile.aggregation", F_BREAKS, 0},
    {"profile.meta.system_clock_hz", F_BREAKS, 0},
    {"instrument.vendor", F_BREAKS, 0},
    {"instrument.model", F_BREAKS, 0},
    {"power.measurement_scope", F_BREAKS, 0},
    {"power.gate.source", F_BREAKS, 0},
    {"power.gate.min_window_s", F_BREAKS, 0},
    {"power.gate.stats_period_s", F_BREAKS, 0},
    {"power.gate.sample_rate_hz", F_BREAKS, 0},
    {"power.firmware.kind", F_BREAKS, 0},
    /* The firmware is the subject of a profile comparison: two builds of
     * a model are what one compares (docs/COMPARE.md). */
    {"firmware.sha256", F_SUBJECT, 0},
    {"stages.pmu.firmware_sha256", F_SUBJECT, 0},
    {"stages.power.firmware_sha256", F_SUBJECT, 0},
    {"stages.pmu.image", F_SUBJECT, 0},
    {"stages.power.image", F_SUBJECT, 0},
    {"profile.meta.model_size", F_SUBJECT, 0},
    {"instrument.serial", F_NOTE, 0},
    {"conditions.host", F_NOTE, 0},
    {"tool.version", F_NOTE, 0},
    {"integrity", F_NOTE, 0},
};

static const struct figure_def profile_fig[] = {
    {"energy per inference", "power.energy_per_inference_j",
     "power.energy_per_inference_uncertainty_j", "J", -1, 1},
    {"mean power (gated)", "power.avg_power_w", NULL, "W", -1, 1},
    {"mean current (gated)", "power.avg_current_a", NULL, "A", -1, 0},
    {"p99 current (gated)", "power.p99_current_a", NULL, "A", -1, 0},
    {"gated energy", "power.energy_j", NULL, "J", 0, 0},
    {"inferences per joule", "power.inferences_per_joule", NULL, "1/J", 1, 0},
    {"total cycles (per-layer sum)", "profile.total_cycles", NULL, "cycles", -1, 1},
    {"clean inference time", "profile.meta.clean_infer_avg_us", NULL, "us", -1, 1},
    {"clean inference cycles", "profile.meta.clean_infer_avg_cycles", NULL, "cycles", -1, 0},
};

static int is_profile(const json_t *a)
{
	const char *s = json_string_value(json_object_get(a, "schema"));
	return s && strcmp(s, "ergon.profile") == 0 &&
	       json_is_object(json_object_get(a, "profile"));
}

/* --- power analyses (ergon.profile written by ergon analyze) ------------- */

static const struct ident_field power_ident[] = {
    {"provenance.kind", F_BREAKS, 0},
    {"provenance.recording.format", F_BREAKS, 0},
    {"provenance.recording.recording_provenance", F_BREAKS, 0},
    {"instrument.vendor", F_BREAKS, 0},
    {"instrument.model", F_BREAKS, 0},
    {"power.measurement_scope", F_BREAKS, 0},
    {"power.gate.source", F_BREAKS, 0},
    {"power.gate.min_window_s", F_BREAKS, 0},
    {"power.gate.stats_period_s", F_BREAKS, 0},
    {"power.gate.sample_rate_hz", F_BREAKS, 0},
    {"provenance.recording.path", F_SUBJECT, 0},
    {"instrument.name", F_NOTE, 0},
    {"instrument.serial", F_NOTE, 0},
    {"conditions.host", F_NOTE, 0},
    {"tool.version", F_NOTE, 0},
};

static const struct figure_def power_fig[] = {
    {"energy per inference", "power.energy_per_inference_j",
     "power.energy_per_inference_uncertainty_j", "J", -1, 1},
    {"mean power (gated)", "power.avg_power_w", NULL, "W", -1, 1},
    {"mean current (gated)", "power.avg_current_a", NULL, "A", -1, 0},
    {"median current (gated)", "power.median_current_a", NULL, "A", -1, 0},
    {"p95 current (gated)", "power.p95_current_a", NULL, "A", -1, 0},
    {"p99 current (gated)", "power.p99_current_a", NULL, "A", -1, 0},
    {"gated energy", "power.energy_j", NULL, "J", 0, 0},
    {"gated duration", "power.gated_duration_s", NULL, "s", 0, 0},
};

static int is_power(const json_t *a)
{
	const char *s = json_string_value(json_object_get(a, "schema"));
	return s && strcmp(s, "ergon.profile") == 0 && !json_object_get(a, "profile") &&
	       json_is_object(json_object_get(a, "power"));
}

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))
/* The kinds ergon compare knows. A new artifact kind (kernels, ...) is one
 * more entry: a match function, its identity fields and its figures. */
static const struct compare_kind kinds[] = {
    {"run", "ergon run report", is_run, run_ident, N_OF(run_ident), run_fig, 0, 0, NULL},
    {"profile", "ergon profile summary", is_profile, profile_ident, N_OF(profile_ident),
     profile_fig, N_OF(profile_fig), 1, NULL},
    {"power", "ergon analyze summary", is_power, power_ident, N_OF(power_ident), power_fig,
     N_OF(power_fig), 0, NULL},
    {"kernels", "ergon kernels artifact", cmp_is_kernels, cmp_kernels_ident, CMP_KERNELS_IDENT_N,
     NULL, 0, 0, cmp_kernels_rows},
};

static const struct compare_kind *kind_of(const json_t *a)
{
	for (size_t i = 0; i < N_OF(kinds); i++)
		if (kinds[i].match(a))
			return &kinds[i];
	return NULL;
}

static size_t n_fig_of(const struct compare_kind *k)
{
	if (k->fig == run_fig) {
		run_fig_init();
		return n_run_fig;
	}
	return k->n_fig;
}

/* The repeat statistics of the figure at path, when the artifact holds
 * repetitions: a run report's figures.repeat.figures["load.mean_power_w"]
 * for path "figures.load.mean_power_w", another artifact's
 * repeat.figures[path]. NULL for a single run. */
static const json_t *repeat_entry(const json_t *a, const char *path)
{
	char p[256];
	if (json_is_object(ergon_jpath(a, "figures.repeat.figures")) &&
	    strncmp(path, "figures.", 8) == 0) {
		snprintf(p, sizeof p, "figures.repeat.figures.%s", path + 8);
		return ergon_jpath(a, p);
	}
	if (!json_is_object(ergon_jpath(a, "repeat.figures")))
		return NULL;
	snprintf(p, sizeof p, "repeat.figures.%s", path);
	return ergon_jpath(a, p);
}

/* One artifact's figure: its repetitions' values and ±, or its single
 * value and ±. A repeated run whose statistics are withheld (it did not
 * complete) has no value. */
static void sample_at(const json_t *a, const struct figure_def *d, struct cmp_sample *out)
{
	const json_t *re = repeat_entry(a, d->path);
	if (re == NULL && json_is_array(ergon_jpath(a, "figures.repetitions"))) {
		cmp_sample_of(NULL, NULL, 0, out);
		return;
	}
	if (re != NULL) {
		const json_t *vals = json_object_get(re, "values");
		const json_t *us = json_object_get(re, "u");
		size_t m = json_array_size(vals);
		double v[ERGON_RUN_REPEAT_MAX], u[ERGON_RUN_REPEAT_MAX];
		if (m > ERGON_RUN_REPEAT_MAX)
			m = ERGON_RUN_REPEAT_MAX;
		for (size_t i = 0; i < m; i++) {
			const json_t *x = json_array_get(vals, i), *y = json_array_get(us, i);
			v[i] = json_is_number(x) ? json_number_value(x) : NAN;
			u[i] = json_is_number(y) ? json_number_value(y) : NAN;
		}
		cmp_sample_of(v, u, m, out);
		return;
	}
	const json_t *jv = ergon_jpath(a, d->path);
	const json_t *ju = d->u_path ? ergon_jpath(a, d->u_path) : NULL;
	double v = json_is_number(jv) ? json_number_value(jv) : NAN;
	double u = json_is_number(ju) ? json_number_value(ju) : NAN;
	cmp_sample_of(&v, &u, 1, out);
}

/* Equal for comparability: both absent, numbers within tol (or 1e-9
 * relative), anything else by json_equal. */
static int same_value(const json_t *a, const json_t *b, double tol)
{
	if (a == NULL || b == NULL)
		return a == b;
	if (json_is_number(a) && json_is_number(b)) {
		double x = json_number_value(a), y = json_number_value(b);
		return fabs(x - y) <= fmax(tol, 1e-9 * fmax(fabs(x), fabs(y)));
	}
	return json_equal((json_t *)a, (json_t *)b);
}

static const char *class_name(int cls)
{
	return cls == F_BREAKS ? "breaks" : cls == F_SUBJECT ? "subject" : "note";
}

/* comparability: every identity field that differs between any artifact
 * and the baseline. Returns 1 when one of them breaks comparability. */
static int comparability(const struct compare_kind *k, const json_t *const *a, size_t n,
			 json_t *diffs)
{
	int broken = 0;
	for (size_t f = 0; f < k->n_ident; f++) {
		const json_t *v0 = ergon_jpath(a[0], k->ident[f].path);
		int differs = 0;
		for (size_t i = 1; i < n; i++)
			if (!same_value(v0, ergon_jpath(a[i], k->ident[f].path), k->ident[f].tol))
				differs = 1;
		if (!differs)
			continue;
		json_t *vals = json_array();
		for (size_t i = 0; i < n; i++) {
			const json_t *v = ergon_jpath(a[i], k->ident[f].path);
			json_array_append_new(vals,
					      v ? json_deep_copy(v) : json_string("(absent)"));
		}
		json_array_append_new(diffs, json_pack("{s:s, s:s, s:o}", "field", k->ident[f].path,
						       "class", class_name(k->ident[f].cls),
						       "values", vals));
		if (k->ident[f].cls == F_BREAKS)
			broken = 1;
	}
	return broken;
}

static json_t *figure_rows(const struct compare_kind *k, const json_t *const *a, size_t n,
			   double threshold_pct, json_t *regressed, size_t *spread_unknown)
{
	json_t *rows = json_array();
	size_t nf = n_fig_of(k);
	for (size_t f = 0; f < nf; f++) {
		const struct figure_def *d = &k->fig[f];
		json_t *vals = json_array();
		struct cmp_sample smp[ERGON_COMPARE_MAX];
		for (size_t i = 0; i < n; i++) {
			sample_at(a[i], d, &smp[i]);
			json_array_append_new(vals, cmp_value_json(&smp[i]));
		}
		json_t *vs = cmp_versus(d->name, d->better, d->headline, smp, n, threshold_pct,
					regressed, spread_unknown);
		json_array_append_new(
		    rows, json_pack("{s:s, s:s, s:s, s:s, s:b, s:o, s:o}", "name", d->name, "path",
				    d->path, "unit", d->unit, "better",
				    d->better < 0   ? "lower"
				    : d->better > 0 ? "higher"
						    : "none",
				    "headline", d->headline, "values", vals, "versus", vs));
	}
	return rows;
}

/* Every counter of a layer: cycles, then counters in the layer's order. */
static void layer_counters(const json_t *layer, json_t *names)
{
	if (json_is_number(json_object_get(layer, "cycles"))) {
		json_t *c = json_string("cycles");
		int seen = 0;
		size_t i;
		json_t *x;
		json_array_foreach(names, i, x) if (json_equal(x, c)) seen = 1;
		if (!seen)
			json_array_append(names, c);
		json_decref(c);
	}
	const char *key;
	json_t *val;
	json_object_foreach((json_t *)json_object_get(layer, "counters"), key, val)
	{
		int seen = 0;
		size_t i;
		json_t *x;
		json_array_foreach(names, i, x) if (strcmp(json_string_value(x), key) == 0) seen =
		    1;
		if (!seen && json_is_number(val))
			json_array_append_new(names, json_string(key));
	}
}

static const json_t *layer_value(const json_t *layer, const char *counter)
{
	if (strcmp(counter, "cycles") == 0)
		return json_object_get(layer, "cycles");
	return json_object_get(json_object_get(layer, "counters"), counter);
}

/* Layers matched by position and op; a layer missing in one artifact has
 * null there. */
static json_t *layer_rows(const json_t *const *a, size_t n)
{
	json_t *rows = json_array();
	size_t most = 0;
	for (size_t i = 0; i < n; i++) {
		size_t m = json_array_size(ergon_jpath(a[i], "profile.layers"));
		if (m > most)
			most = m;
	}
	for (size_t l = 0; l < most; l++) {
		const json_t *base = json_array_get(ergon_jpath(a[0], "profile.layers"), l);
		const char *op = json_string_value(json_object_get(base, "op"));
		json_t *names = json_array();
		for (size_t i = 0; i < n; i++)
			layer_counters(json_array_get(ergon_jpath(a[i], "profile.layers"), l),
				       names);
		size_t c;
		json_t *cn;
		json_array_foreach(names, c, cn)
		{
			const char *counter = json_string_value(cn);
			json_t *vals = json_array(), *diff = json_array(), *ratio = json_array();
			const json_t *b0 = layer_value(base, counter);
			for (size_t i = 0; i < n; i++) {
				const json_t *li =
				    json_array_get(ergon_jpath(a[i], "profile.layers"), l);
				const char *opi = json_string_value(json_object_get(li, "op"));
				/* A different op at this position is a different layer. */
				const json_t *vi = (op && opi && strcmp(op, opi) == 0) || i == 0
						       ? layer_value(li, counter)
						       : NULL;
				double x = json_is_number(vi) ? json_number_value(vi) : NAN;
				json_array_append_new(vals, ergon_jnum(x));
				if (i == 0)
					continue;
				double y = json_is_number(b0) ? json_number_value(b0) : NAN;
				json_array_append_new(diff, ergon_jnum(x - y));
				json_array_append_new(ratio, ergon_jnum(y != 0 ? x / y : NAN));
			}
			json_array_append_new(
			    rows, json_pack("{s:I, s:s, s:s, s:o, s:o, s:o}", "layer",
					    (json_int_t)l, "op", op ? op : "?", "counter", counter,
					    "values", vals, "diff", diff, "ratio", ratio));
		}
		json_decref(names);
	}
	return rows;
}

/* The comparison's provenance: measured only when every input is. */
static int combined_provenance(const json_t *const *a, size_t n)
{
	int worst = ERGON_PROV_MEASURED;
	for (size_t i = 0; i < n; i++) {
		int k =
		    ergon_provenance_parse(json_string_value(ergon_jpath(a[i], "provenance.kind")));
		if (k == 0 || k == ERGON_PROV_SYNTHETIC)
			return ERGON_PROV_SYNTHETIC;
		if (k == ERGON_PROV_REPLAYED)
			worst = ERGON_PROV_REPLAYED;
	}
	return worst;
}

int ergon_compare(const json_t *const *a, const char *const *labels, size_t n,
		  const struct ergon_compare_options *o, json_t **result, struct ergon_err *err)
{
	*result = NULL;
	if (n < 2 || n > ERGON_COMPARE_MAX)
		return ergon_err_set(err, ERGON_EUSAGE,
				     "compare needs 2 to %d artifacts (got %zu): ergon compare A B "
				     "[C ...]",
				     ERGON_COMPARE_MAX, n);
	const struct compare_kind *k = NULL;
	for (size_t i = 0; i < n; i++) {
		const struct compare_kind *ki = kind_of(a[i]);
		if (ki == NULL) {
			const char *s = json_string_value(json_object_get(a[i], "schema"));
			return ergon_err_set(err, ERGON_EUSAGE,
					     "%s: schema %s is not a kind ergon compare knows (run "
					     "reports ergon.report, profile and analyze summaries "
					     "ergon.profile, kernels artifacts ergon.kernels)",
					     labels[i], s ? s : "(missing)");
		}
		if (k && ki != k)
			return ergon_err_set(
			    err, ERGON_EREFUSED,
			    "%s is an %s, %s is an %s: artifacts of different kinds "
			    "are never compared",
			    labels[0], k->what, labels[i], ki->what);
		k = ki;
	}
	json_t *r = ergon_artifact_new(ERGON_COMPARE_SCHEMA, ERGON_COMPARE_VERSION,
				       combined_provenance(a, n));
	if (r == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "out of memory");
	json_object_set_new(r, "kind", json_string(k->name));
	json_t *inputs = json_array();
	for (size_t i = 0; i < n; i++) {
		char signer[ERGON_KEY_ID_MAX];
		int signed_ = ergon_artifact_signer(a[i], signer);
		const json_t *rid = json_object_get(a[i], "report_id");
		/* When each input was measured (null for artifacts written before
		 * they said so). */
		const json_t *mt = json_object_get(a[i], "measurement_time");
		json_array_append_new(
		    inputs, json_pack("{s:s, s:o, s:o, s:o, s:o, s:o}", "label", labels[i], "schema",
				      json_deep_copy(json_object_get(a[i], "schema")), "report_id",
				      rid ? json_deep_copy(rid) : json_null(), "provenance",
				      json_deep_copy(ergon_jpath(a[i], "provenance.kind")),
				      "signer", signed_ ? json_string(signer) : json_null(),
				      "measurement_time", mt ? json_deep_copy(mt) : json_null()));
	}
	json_object_set_new(r, "inputs", inputs);
	json_t *diffs = json_array();
	int broken = comparability(k, a, n, diffs);
	json_object_set_new(r, "comparability",
			    json_pack("{s:b, s:b, s:o}", "comparable", !broken, "forced",
				      broken && o->force_incomparable, "differences", diffs));
	if (broken && !o->force_incomparable) {
		*result = r;
		return ergon_err_set(err, ERGON_EREFUSED,
				     "the artifacts are not comparable (differences above); pass "
				     "--force-incomparable to compare them anyway");
	}
	json_t *regressed = json_array();
	size_t unknown = 0;
	json_object_set_new(r, "figures",
			    k->rows
				? k->rows(a, labels, n, o->threshold_pct, regressed, r, &unknown)
				: figure_rows(k, a, n, o->threshold_pct, regressed, &unknown));
	if (k->layers)
		json_object_set_new(r, "layers", layer_rows(a, n));
	json_object_set_new(
	    r, "rule",
	    json_sprintf("a difference is called only when it exceeds both the instruments' "
			 "combined ± and the run-to-run spread: Welch's t test on the "
			 "repetitions of each side, two-sided, alpha %.2g (Welch-Satterthwaite "
			 "degrees of freedom); with fewer than %d repetitions on a side the "
			 "spread is unknown and the figure gets no verdict",
			 1.0 - ERGON_STATS_LEVEL, ERGON_STATS_MIN_REPEATS));
	json_object_set_new(r, "spread_unknown", json_integer((json_int_t)unknown));
	const char *verdict = isnan(o->threshold_pct)	   ? "not assessed (no --threshold)"
			      : json_array_size(regressed) ? "regression"
			      : unknown ? "not assessed (run-to-run spread unknown: "
					  "fewer than 3 repetitions on a side)"
					: "no regression";
	json_object_set_new(r, "regression",
			    json_pack("{s:o, s:s, s:o}", "threshold_pct",
				      ergon_jnum(o->threshold_pct), "verdict", verdict, "figures",
				      regressed));
	*result = r;
	return 0;
}

int ergon_compare_regressed(const json_t *result)
{
	const char *v = json_string_value(ergon_jpath(result, "regression.verdict"));
	return v && strcmp(v, "regression") == 0;
}

static void csv_num(struct ergon_dynbuf *b, const json_t *v)
{
	if (json_is_number(v))
		ergon_dynbuf_addf(b, ",%.17g", json_number_value(v));
	else
		ergon_dynbuf_adds(b, ",");
}

int ergon_compare_layer_csv(const json_t *result, char **out, size_t *len, struct ergon_err *err)
{
	struct ergon_dynbuf b;
	size_t n = json_array_size(json_object_get(result, "inputs"));
	ergon_dynbuf_init(&b, (size_t)1 << 30);
	ergon_dynbuf_adds(&b, "layer_id,op,counter,a");
	for (size_t i = 1; i < n; i++)
		ergon_dynbuf_addf(&b, ",%c,diff_%c,ratio_%c", (int)('a' + i), (int)('a' + i),
				  (int)('a' + i));
	ergon_dynbuf_adds(&b, "\n");
	size_t r;
	json_t *row;
	json_array_foreach(json_object_get(result, "layers"), r, row)
	{
		const json_t *vals = json_object_get(row, "values");
		ergon_dynbuf_addf(&b, "%lld,%s,%s",
				  (long long)json_integer_value(json_object_get(row, "layer")),
				  json_string_value(json_object_get(row, "op")),
				  json_string_value(json_object_get(row, "counter")));
		csv_num(&b, json_array_get(vals, 0));
		for (size_t i = 1; i < n; i++) {
			csv_num(&b, json_array_get(vals, i));
			csv_num(&b, json_array_get(json_object_get(row, "diff"), i - 1));
			csv_num(&b, json_array_get(json_object_get(row, "ratio"), i - 1));
		}
		ergon_dynbuf_adds(&b, "\n");
	}
	int rc = ergon_dynbuf_error(&b);
	if (rc) {
		ergon_dynbuf_free(&b);
		return ergon_err_set(err, rc, "layer_diff.csv: too large or out of memory");
	}
	*out = ergon_dynbuf_take(&b, len);
	return 0;
}

/* The SI prefix that puts v in [1, 1000) (down to nano), as the run
 * summary prints. */
static void si_prefix(double v, double *f, const char **p)
{
	static const struct {
		double f;
		const char *p;
	} pre[] = {{1, ""}, {1e-3, "m"}, {1e-6, "u"}, {1e-9, "n"}};
	size_t k = 0;
	double mag = fabs(v);
	while (isfinite(mag) && mag > 0 && k + 1 < sizeof pre / sizeof pre[0] && mag < pre[k].f)
		k++;
	*f = pre[k].f;
	*p = pre[k].p;
}

static void text_value(struct ergon_dynbuf *b, const json_t *v)
{
	if (json_is_number(v))
		ergon_dynbuf_addf(b, "%.6g", json_number_value(v));
	else if (json_is_string(v))
		ergon_dynbuf_addf(b, "%.60s", json_string_value(v));
	else if (v == NULL || json_is_null(v))
		ergon_dynbuf_adds(b, "null");
	else {
		char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
		ergon_dynbuf_addf(b, "%.60s", s ? s : "?");
		free(s);
	}
}

int ergon_compare_text(const json_t *result, char **out, struct ergon_err *err)
{
	struct ergon_dynbuf b;
	ergon_dynbuf_init(&b, (size_t)64 << 20);
	const json_t *inputs = json_object_get(result, "inputs");
	size_t n = json_array_size(inputs), i, j;
	json_t *x;
	ergon_dynbuf_addf(&b, "compare: %s artifacts (provenance of the comparison: %s)\n",
			  json_string_value(json_object_get(result, "kind")),
			  json_string_value(ergon_jpath(result, "provenance.kind")));
	json_array_foreach(inputs, i, x)
	{
		const char *signer = json_string_value(json_object_get(x, "signer"));
		ergon_dynbuf_addf(&b, "  %c = %s (%s, %s%s%s)\n", (int)('A' + i),
				  json_string_value(json_object_get(x, "label")),
				  json_string_value(json_object_get(x, "provenance")),
				  json_string_value(json_object_get(x, "report_id")),
				  signer ? ", signed by " : ", unsigned", signer ? signer : "");
	}
	const json_t *cmp = json_object_get(result, "comparability");
	const json_t *diffs = json_object_get(cmp, "differences");
	ergon_dynbuf_addf(&b, "comparability: %s\n",
			  json_is_true(json_object_get(cmp, "comparable")) ? "comparable"
			  : json_is_true(json_object_get(cmp, "forced"))
			      ? "NOT comparable (forced with --force-incomparable)"
			      : "NOT comparable");
	if (json_array_size(diffs) == 0)
		ergon_dynbuf_adds(&b, "  no identity field differs\n");
	json_array_foreach(diffs, i, x)
	{
		ergon_dynbuf_addf(&b, "  %-8s %s:", json_string_value(json_object_get(x, "class")),
				  json_string_value(json_object_get(x, "field")));
		json_t *y;
		json_array_foreach(json_object_get(x, "values"), j, y)
		{
			ergon_dynbuf_addf(&b, " %c=", (int)('A' + j));
			text_value(&b, y);
		}
		ergon_dynbuf_adds(&b, "\n");
	}
	const json_t *figs = json_object_get(result, "figures");
	if (json_is_array(figs)) {
		const char *rule = json_string_value(json_object_get(result, "rule"));
		ergon_dynbuf_addf(&b, "figures (versus A; %s):\n", rule ? rule : "");
		json_array_foreach(figs, i, x)
		{
			const json_t *vals = json_object_get(x, "values");
			const char *unit = json_string_value(json_object_get(x, "unit"));
			/* One SI prefix per row, from the baseline (the run
			 * summary's units: mJ, mW, ms). */
			double f = 1;
			const char *pfx = "";
			if (unit && (strcmp(unit, "J") == 0 || strcmp(unit, "W") == 0 ||
				     strcmp(unit, "s") == 0 || strcmp(unit, "A") == 0))
				si_prefix(json_number_value(
					      json_object_get(json_array_get(vals, 0), "value")),
					  &f, &pfx);
			ergon_dynbuf_addf(&b, "  %s%s\n",
					  json_is_true(json_object_get(x, "headline")) ? "*" : " ",
					  json_string_value(json_object_get(x, "name")));
			for (j = 0; j < n; j++) {
				const json_t *e = json_array_get(vals, j);
				const json_t *v = json_object_get(e, "value");
				const json_t *u = json_object_get(e, "u");
				json_int_t reps = json_integer_value(json_object_get(e, "n"));
				if (reps == 0)
					reps =
					    json_integer_value(json_object_get(e, "repetitions"));
				ergon_dynbuf_addf(&b, "      %c = ", (int)('A' + j));
				if (!json_is_number(v)) {
					ergon_dynbuf_adds(&b, "not available\n");
					continue;
				}
				ergon_dynbuf_addf(&b, "%.6g", json_number_value(v) / f);
				if (json_is_number(u))
					ergon_dynbuf_addf(&b, " %s %.2g", "±",
							  json_number_value(u) / f);
				ergon_dynbuf_addf(&b, " %s%s", pfx, unit ? unit : "");
				const json_t *sd = json_object_get(e, "sd");
				if (json_is_number(sd))
					ergon_dynbuf_addf(
					    &b, " (mean of %lld repetitions, sd %.3g)",
					    (long long)reps, json_number_value(sd) / f);
				else
					ergon_dynbuf_addf(&b, " (%lld repetition%s)",
							  (long long)reps, reps == 1 ? "" : "s");
				ergon_dynbuf_adds(&b, "\n");
			}
			for (j = 1; j < n; j++) {
				const json_t *v =
				    json_array_get(json_object_get(x, "versus"), j - 1);
				const json_t *pct = json_object_get(v, "pct");
				const json_t *d = json_object_get(v, "diff");
				ergon_dynbuf_addf(&b, "      %c-A ", (int)('A' + j));
				if (json_is_number(d))
					ergon_dynbuf_addf(&b, "%+.4g %s%s",
							  json_number_value(d) / f, pfx,
							  unit ? unit : "");
				else
					ergon_dynbuf_adds(&b, "-");
				if (json_is_number(pct))
					ergon_dynbuf_addf(
					    &b, " (%+.2f %%, ratio %.4f)", json_number_value(pct),
					    json_number_value(json_object_get(v, "ratio")));
				const json_t *w = json_object_get(v, "welch");
				if (json_is_object(w) && json_is_number(json_object_get(w, "df")))
					ergon_dynbuf_addf(
					    &b, "; Welch t %.3g, df %.3g, p %.2g",
					    json_number_value(json_object_get(w, "t")),
					    json_number_value(json_object_get(w, "df")),
					    json_number_value(json_object_get(w, "p")));
				else if (json_is_object(w))
					ergon_dynbuf_adds(&b, "; no spread on either side");
				ergon_dynbuf_addf(&b, ": %s\n",
						  json_string_value(json_object_get(v, "verdict")));
				const char *rn =
				    json_string_value(json_object_get(v, "regression_note"));
				if (rn != NULL)
					ergon_dynbuf_addf(&b, "      %s\n", rn);
			}
		}
		ergon_dynbuf_adds(&b, "  (* counts for the regression verdict; ± is the "
				      "instruments')\n");
		json_int_t unknown = json_integer_value(json_object_get(result, "spread_unknown"));
		if (unknown > 0)
			ergon_dynbuf_addf(
			    &b,
			    "run-to-run spread unknown for %lld comparison%s (fewer "
			    "than 3 repetitions on a side): no verdict on %s; measure "
			    "each side with --repeat 3 or more\n",
			    (long long)unknown, unknown == 1 ? "" : "s",
			    unknown == 1 ? "it" : "them");
	}
	const json_t *only = json_object_get(result, "only_in");
	if (json_array_size(only) > 0)
		ergon_dynbuf_adds(&b, "not in every artifact (not compared):\n");
	json_array_foreach(only, i, x)
	{
		ergon_dynbuf_addf(&b, "  %s [%s]: only in",
				  json_string_value(json_object_get(x, "case")),
				  json_string_value(json_object_get(x, "impl")));
		json_t *y;
		json_array_foreach(json_object_get(x, "in"), j, y)
		    ergon_dynbuf_addf(&b, " %s", json_string_value(y));
		ergon_dynbuf_adds(&b, "\n");
	}
	const json_t *reg = json_object_get(result, "regression");
	if (reg) {
		ergon_dynbuf_addf(&b, "regression verdict: %s",
				  json_string_value(json_object_get(reg, "verdict")));
		if (json_is_number(json_object_get(reg, "threshold_pct")))
			ergon_dynbuf_addf(&b, " (threshold %g %%)",
					  json_number_value(json_object_get(reg, "threshold_pct")));
		ergon_dynbuf_adds(&b, "\n");
		json_array_foreach(json_object_get(reg, "figures"), i, x) ergon_dynbuf_addf(
		    &b, "  %s: %c is %.2f %% worse than A\n",
		    json_string_value(json_object_get(x, "figure")),
		    (int)('A' + json_integer_value(json_object_get(x, "artifact"))),
		    fabs(json_number_value(json_object_get(x, "pct"))));
	}
	int rc = ergon_dynbuf_error(&b);
	if (rc) {
		ergon_dynbuf_free(&b);
		return ergon_err_set(err, rc, "compare text: too large or out of memory");
	}
	*out = ergon_dynbuf_take(&b, NULL);
	return 0;
}
