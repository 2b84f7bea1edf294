/* Energy per layer at the artifact edge (common.h): the layer engine's
 * typed result (ergon/layer_energy.h) as summary.json's power.layers[] and
 * power.layer_energy, and detailed/layer_energy.csv from them
 * (docs/METHOD.md, "Energy per layer"). */
#include "common.h"

#include "ergon/dynbuf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* The model layers of segments [a, b]: [*l0, *l1]. */
static void layer_span(const struct ergon_layer_model *m, size_t a, size_t b, size_t *l0,
		       size_t *l1)
{
	*l0 = m->seg_first[a];
	*l1 = b + 1 < m->n_segments ? m->seg_first[b + 1] - 1 : m->n_layers - 1;
}

/* "CONV_2D" or "CONV_2D + RESHAPE + ADD" for layers l0..l1. */
static json_t *op_names(const struct ergon_layer_model *m, size_t l0, size_t l1)
{
	char buf[512];
	size_t o = 0;
	buf[0] = '\0';
	for (size_t l = l0; l <= l1 && o < sizeof buf; l++) {
		const char *op = m->op != NULL && m->op[l] != NULL ? m->op[l] : "?";
		int w = snprintf(buf + o, sizeof buf - o, "%s%s", l > l0 ? " + " : "", op);
		if (w < 0)
			break;
		o += (size_t)w;
	}
	return json_string(buf);
}

json_t *ergon_layers_json(const struct ergon_layers_result *res, const struct ergon_layer_model *m,
			  double epi_j, json_t **meta_out)
{
	json_t *arr = json_array(), *unres = json_array();
	double total_cycles = 0;
	for (size_t l = 0; m->cycles != NULL && l < m->n_layers; l++)
		total_cycles += m->cycles[l] > 0 ? m->cycles[l] : 0;
	int estimate = m->cycles != NULL && total_cycles > 0 && isfinite(epi_j);
	for (size_t u = 0; arr != NULL && u < res->n_layers; u++) {
		const struct ergon_layer_figures *f = &res->layers[u];
		size_t l0 = 0, l1 = 0;
		layer_span(m, f->first, f->last, &l0, &l1);
		double cyc = 0;
		for (size_t l = l0; m->cycles != NULL && l <= l1; l++)
			cyc += m->cycles[l] > 0 ? m->cycles[l] : 0;
		double est = estimate ? epi_j * cyc / total_cycles : NAN;
		json_t *e = json_pack(
		    "{s:I, s:I, s:o, s:s, s:o, s:o, s:o, s:o, s:[o,o], s:o, s:o, s:o, s:o, s:o, "
		    "s:I, s:o, s:b}",
		    "index", (json_int_t)l0, "last_index", (json_int_t)l1, "op", op_names(m, l0, l1),
		    "kind", "measured", "energy_j", num(f->energy_mean_j), "energy_U_j",
		    num(f->budget.complete ? f->budget.U : NAN), "energy_U_known_j",
		    num(f->budget.U_known), "median_energy_j", num(f->energy_median_j),
		    "median_interval_j", num(f->median_lo_j), num(f->median_hi_j), "duration_s",
		    num(f->duration_s), "power_w", num(f->power_w), "share", num(f->share),
		    "samples_median", num(f->samples), "budget", ergon_budget_json(&f->budget),
		    "inferences_used", (json_int_t)f->inferences, "estimated_energy",
		    estimate ? json_pack("{s:o, s:s, s:s, s:o}", "energy_j", num(est), "kind",
					 "estimated", "method",
					 "the energy per inference split by the PMU stage's cycles",
					 "measured_over_estimated",
					 num(est > 0 ? f->energy_mean_j / est : NAN))
			     : json_null(),
		    "resolved_alone", l0 == l1);
		json_array_append_new(arr, e);
		for (size_t l = l0 + 1; unres != NULL && l <= l1; l++) {
			const char *op = m->op != NULL && m->op[l] != NULL ? m->op[l] : "?";
			int unmarked = 1;
			for (size_t s = 0; s < m->n_segments; s++)
				unmarked &= m->seg_first[s] != l;
			char why[300];
			if (unmarked)
				snprintf(why, sizeof why,
					 "not marked: the marker plan at %g Hz keeps every marked "
					 "segment at least %g samples long, and the segment from "
					 "layer %zu (or this layer alone) was shorter; measured "
					 "with layer %zu",
					 m->plan_rate_hz > 0 ? m->plan_rate_hz
							     : res->sample_rate_hz,
					 res->min_samples, l0, l0);
			else
				snprintf(why, sizeof why,
					 "marked, but its segment spanned fewer than %g samples "
					 "(median); measured with layer %zu",
					 res->min_samples, l0);
			json_array_append_new(unres, json_pack("{s:I, s:s, s:I, s:s}", "index",
								(json_int_t)l, "op", op,
								"measured_with", (json_int_t)l0,
								"reason", why));
		}
	}
	if (arr == NULL || unres == NULL) {
		json_decref(arr);
		json_decref(unres);
		return NULL;
	}
	/* The layers by energy, costliest first (positions in layers[]): the
	 * terminal's table. */
	json_t *order = json_array();
	size_t nl = res->n_layers;
	size_t *idx = calloc(nl ? nl : 1, sizeof *idx);
	for (size_t i = 0; idx != NULL && i < nl; i++) {
		size_t j = i;
		while (j > 0 &&
		       res->layers[idx[j - 1]].energy_mean_j < res->layers[i].energy_mean_j) {
			idx[j] = idx[j - 1];
			j--;
		}
		idx[j] = i;
	}
	for (size_t i = 0; idx != NULL && order != NULL && i < nl; i++)
		json_array_append_new(order, json_integer((json_int_t)idx[i]));
	free(idx);
	if (meta_out != NULL)
		*meta_out = json_pack(
		    "{s:s, s:f, s:f, s:I, s:{s:I, s:I, s:I, s:I}, s:I, s:o, s:o, s:o, s:o, s:o}",
		    "method", "marker edges (docs/METHOD.md, Energy per layer)", "sample_rate_hz",
		    res->sample_rate_hz, "min_samples", res->min_samples, "marked_segments",
		    (json_int_t)res->segments, "inferences", "expected",
		    (json_int_t)res->inferences_expected, "used", (json_int_t)res->inferences_used,
		    "dropped", (json_int_t)res->inferences_dropped, "lost",
		    (json_int_t)res->inferences_lost, "edges", (json_int_t)res->edges, "sum_j",
		    num(res->sum_j), "sum_budget", ergon_budget_json(&res->sum_budget),
		    "energy_per_inference_j", num(epi_j), "unmarked_j", num(res->unmarked_j),
		    "unresolved", unres);
	else
		json_decref(unres);
	if (meta_out != NULL && *meta_out != NULL && order != NULL)
		json_object_set_new(*meta_out, "costliest", order);
	else
		json_decref(order);
	return arr;
}

json_t *ergon_layers_estimate_json(const struct ergon_layer_model *m, double epi_j)
{
	double total = 0;
	for (size_t l = 0; m->cycles != NULL && l < m->n_layers; l++)
		total += m->cycles[l] > 0 ? m->cycles[l] : 0;
	if (!(total > 0) || !isfinite(epi_j))
		return json_null();
	json_t *arr = json_array();
	for (size_t l = 0; arr != NULL && l < m->n_layers; l++) {
		double c = m->cycles[l] > 0 ? m->cycles[l] : 0;
		const char *op = m->op != NULL && m->op[l] != NULL ? m->op[l] : "?";
		json_array_append_new(
		    arr, json_pack("{s:I, s:s, s:s, s:o, s:f}", "index", (json_int_t)l, "op", op,
				   "kind", "estimated", "energy_j", num(epi_j * c / total), "cycles",
				   c));
	}
	return arr;
}

static void csv_num(struct ergon_dynbuf *b, const json_t *v)
{
	if (json_is_number(v))
		ergon_dynbuf_addf(b, ",%.9g", json_number_value(v));
	else
		ergon_dynbuf_addf(b, ",");
}

int ergon_layers_csv(const json_t *layers, char **text, size_t *len, struct ergon_err *err)
{
	struct ergon_dynbuf b;
	ergon_dynbuf_init(&b, (size_t)64 << 20);
	ergon_dynbuf_addf(&b, "index,last_index,op,kind,energy_j,energy_U_j,energy_U_known_j,"
				"median_energy_j,median_lo_j,median_hi_j,estimated_energy_j,"
				"measured_over_estimated,duration_s,power_w,share,inferences_used,"
				"samples_median\n");
	size_t i;
	const json_t *e;
	json_array_foreach(layers, i, e)
	{
		const char *op = json_string_value(json_object_get(e, "op"));
		ergon_dynbuf_addf(&b, "%lld,%lld,\"%s\",measured",
				    (long long)json_integer_value(json_object_get(e, "index")),
				    (long long)json_integer_value(json_object_get(e, "last_index")),
				    op ? op : "");
		csv_num(&b, json_object_get(e, "energy_j"));
		csv_num(&b, json_object_get(e, "energy_U_j"));
		csv_num(&b, json_object_get(e, "energy_U_known_j"));
		csv_num(&b, json_object_get(e, "median_energy_j"));
		csv_num(&b, json_array_get(json_object_get(e, "median_interval_j"), 0));
		csv_num(&b, json_array_get(json_object_get(e, "median_interval_j"), 1));
		const json_t *est = json_object_get(e, "estimated_energy");
		csv_num(&b, json_object_get(est, "energy_j"));
		csv_num(&b, json_object_get(est, "measured_over_estimated"));
		csv_num(&b, json_object_get(e, "duration_s"));
		csv_num(&b, json_object_get(e, "power_w"));
		csv_num(&b, json_object_get(e, "share"));
		csv_num(&b, json_object_get(e, "inferences_used"));
		csv_num(&b, json_object_get(e, "samples_median"));
		ergon_dynbuf_addf(&b, "\n");
	}
	int rc = ergon_dynbuf_error(&b);
	if (rc) {
		ergon_dynbuf_free(&b);
		return ergon_err_set(err, rc, "layer_energy.csv: out of memory");
	}
	*text = ergon_dynbuf_take(&b, len);
	return 0;
}

void ergon_marker_mask_define(const uint32_t mask[8], char *out, size_t cap)
{
	int o = snprintf(out, cap, "-DERT_MODEL_MARKER_MASK=");
	for (size_t w = 0; w < 8 && o > 0 && (size_t)o < cap; w++)
		o +=
		    snprintf(out + o, cap - (size_t)o, "%s0x%08x", w ? "," : "", (unsigned)mask[w]);
}

void ergon_marker_mask_initializer(const uint32_t mask[8], char *out, size_t cap)
{
	int o = snprintf(out, cap, "{");
	for (size_t w = 0; w < 8 && o > 0 && (size_t)o < cap; w++)
		o += snprintf(out + o, cap - (size_t)o, "%s0x%08x", w ? ", " : "",
			      (unsigned)mask[w]);
	if (o > 0 && (size_t)o < cap)
		snprintf(out + o, cap - (size_t)o, "}");
}

json_t *ergon_layer_plan_json(const struct ergon_layer_plan *lp, const char *from)
{
	char def[ERGON_MARKER_DEFINE_MAX], init[ERGON_MARKER_INIT_MAX];
	ergon_marker_mask_define(lp->mask, def, sizeof def);
	ergon_marker_mask_initializer(lp->mask, init, sizeof init);
	json_t *words = json_array(), *first = json_array(), *left = json_array();
	for (size_t w = 0; w < 8; w++)
		json_array_append_new(words, json_sprintf("0x%08x", (unsigned)lp->mask[w]));
	size_t s = 0;
	for (size_t l = 0; l < lp->n_layers; l++) {
		if (s < lp->n_segments && lp->seg_first[s] == l) {
			json_array_append_new(first, json_integer((json_int_t)l));
			s++;
		} else {
			json_array_append_new(left, json_integer((json_int_t)l));
		}
	}
	return json_pack("{s:o,s:I,s:I,s:o,s:o,s:f,s:f,s:s,s:s,s:s}", "mask", words, "layers",
			 (json_int_t)lp->n_layers, "segments", (json_int_t)lp->n_segments,
			 "first_layers", first, "left_out", left, "rate_hz", lp->rate_hz,
			 "min_samples", ERGON_LAYERS_MIN_SAMPLES, "define", def, "initializer",
			 init, "from", from);
}

void ergon_layer_plan_free(struct ergon_layer_plan *lp)
{
	if (lp == NULL)
		return;
	free(lp->op);
	free(lp->cycles);
	free(lp->layer_s);
	free(lp->seg_first);
	memset(lp, 0, sizeof *lp);
}

int ergon_layer_plan_from_profile(const json_t *profile, double rate_hz, const char *what,
				  struct ergon_layer_plan *lp, struct ergon_err *err)
{
	memset(lp, 0, sizeof *lp);
	const json_t *layers = json_object_get(profile, "layers");
	size_t n = json_array_size(layers);
	if (n == 0)
		return ergon_err_set(err, ERGON_EUSAGE,
				     "%s reported no layers, so there is nothing to mark; it needs "
				     "the profile build's per-layer rows",
				     what);
	double hz =
	    json_number_value(json_object_get(json_object_get(profile, "meta"), "system_clock_hz"));
	lp->op = calloc(n, sizeof *lp->op);
	lp->cycles = calloc(n, sizeof *lp->cycles);
	lp->layer_s = calloc(n, sizeof *lp->layer_s);
	lp->seg_first = calloc(n, sizeof *lp->seg_first);
	if (!lp->op || !lp->cycles || !lp->layer_s || !lp->seg_first) {
		ergon_layer_plan_free(lp);
		return ergon_err_set(err, ERGON_ENOMEM, "out of memory");
	}
	lp->n_layers = n;
	for (size_t i = 0; i < n; i++) {
		const json_t *l = json_array_get(layers, i);
		lp->op[i] = json_string_value(json_object_get(l, "op"));
		double c = json_number_value(json_object_get(l, "cycles"));
		double us =
		    json_number_value(json_object_get(json_object_get(l, "counters"), "window_us"));
		lp->cycles[i] = c > 0 ? c : NAN;
		/* The cycles at the core clock are finer than the window clock's
		 * microseconds; either is an expectation, the markers measure. */
		lp->layer_s[i] = c > 0 && hz > 0 ? c / hz : us > 0 ? us * 1e-6 : 0.0;
	}
	lp->rate_hz = rate_hz;
	ergon_layers_plan(lp->layer_s, n, rate_hz, ERGON_LAYERS_MIN_SAMPLES, lp->mask,
			  lp->seg_first, &lp->n_segments);
	lp->on = lp->n_segments > 0;
	return 0;
}

int ergon_layers_section(const struct ergon_layers_result *res, const struct ergon_layer_plan *plan,
			 double epi_j, double epi_u_j, const char *meter, json_t *sec,
			 json_t *extra_issues, struct ergon_err *err)
{
	/* The sum against the gated energy per inference, whose bound the
	 * power section states (a rectangular half-width). */
	struct ergon_issue_list il = {0};
	struct ergon_budget eb;
	ergon_budget_init(&eb, epi_j, "J");
	if (isfinite(epi_u_j))
		ergon_budget_add(&eb, "energy per inference bound", epi_u_j, ERGON_DIST_RECT, 0,
				 "%s",
				 "the power section's uncertainty of the energy per inference");
	ergon_budget_close(&eb);
	ergon_layers_check_sum(res, epi_j, &eb, &il);
	struct ergon_layer_model m = {.n_layers = plan->n_layers,
				      .op = plan->op,
				      .cycles = plan->cycles,
				      .seg_first = plan->seg_first,
				      .n_segments = plan->n_segments,
				      .plan_rate_hz = plan->rate_hz};
	json_t *meta = NULL;
	json_t *arr = ergon_layers_json(res, &m, epi_j, &meta);
	json_t *a = json_array();
	int rc = arr && meta && a ? 0 : ERGON_ENOMEM;
	if (rc == 0) {
		json_object_set_new(meta, "meter", json_string(meter));
		json_object_set_new(sec, "layers", arr);
		json_object_set_new(sec, "layer_energy", meta);
		arr = meta = NULL;
		rc = ergon_issue_list_to_json(&res->issues, a);
	}
	if (rc == 0)
		rc = ergon_issue_list_to_json(&il, a);
	if (rc == 0) {
		if (extra_issues != NULL)
			json_array_extend(extra_issues, a);
		json_array_extend(json_object_get(sec, "issues"), a);
	}
	json_decref(arr);
	json_decref(meta);
	json_decref(a);
	ergon_issue_list_cleanup(&il);
	return rc ? ergon_err_set(err, ERGON_ENOMEM, "out of memory") : 0;
}
