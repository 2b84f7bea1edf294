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
					 "not marked: the marker plan found it too short for %g "
					 "samples at %g Hz; measured with layer %zu",
					 res->min_samples, res->sample_rate_hz, l0);
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
