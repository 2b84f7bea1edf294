/* The PMU result as JSON, in the reference parser's layout: the one place
 * that JSON is made (the engine returns struct ergon_pmu_result). */
#include "ergon/hpx_report.h"
#include "ergon/issue_list.h"
#include "ergon/utf8.h"
#include "hpx_json_internal.h"

#include <stdlib.h>
#include <string.h>

/* --- the power terminal record ------------------------------------------ */

/* A JSON string from bytes that may not be UTF-8: invalid sequences become
 * U+FFFD, as the reference's decode(errors='replace') does. */
static json_t *hpx_json_text(const char *s, size_t n)
{
	char *buf = malloc(n * 3 + 1);
	if (!buf)
		return NULL;
	size_t o = ergon_utf8_repair(s, n, buf, n * 3);
	json_t *j = json_stringn(buf, o);
	free(buf);
	return j;
}

static json_t *opt_int(bool has, int64_t v)
{
	return has ? json_integer((json_int_t)v) : json_null();
}

/* Text fields come from the wire and may not be UTF-8: replaced bytes
 * become U+FFFD, as the reference's decode(errors='replace') does. */
static json_t *text(const char *s)
{
	return hpx_json_text(s, strlen(s));
}

json_t *ergon_hpx_terminal_to_json(const struct ergon_hpx_terminal *t)
{
	json_t *term =
	    json_pack("{s:I, s:o, s:I, s:I, s:I, s:o, s:I, s:b, s:b}", "version",
		      (json_int_t)t->version, "status", text(t->status), "requested_count",
		      (json_int_t)t->requested_count, "completed_count",
		      (json_int_t)t->completed_count, "elapsed_us", (json_int_t)t->elapsed_us,
		      "final_phase", text(t->final_phase), "error_code", (json_int_t)t->error_code,
		      "gate_asserted", (int)t->gate_asserted, "gate_lowered", (int)t->gate_lowered);
	if (!term)
		return NULL;
	/* Fields the reference parser does not know appear only when the
	 * record carried them, so reference records convert unchanged; the
	 * source sits in the measurement when there is one. */
	if (t->has_source && !t->has_measurement)
		json_object_set_new(term, "measurement_source", text(t->source));
	json_t *meas = json_null();
	if (t->has_measurement) {
		const struct ergon_hpx_power_measurement *m = &t->measurement;
		json_decref(meas);
		meas = json_pack(
		    "{s:o, s:o, s:I, s:I, s:I, s:b, s:o, s:o, s:o, s:o}", "source", text(m->source),
		    "scope", text(m->scope), "energy_nj", (json_int_t)m->energy_nj, "duration_us",
		    (json_int_t)m->duration_us, "inference_count", (json_int_t)m->inference_count,
		    "overflow", (int)m->overflow, "charge_nc",
		    opt_int(m->has_charge_nc, m->charge_nc), "bus_voltage_uv",
		    opt_int(m->has_bus_voltage_uv, m->bus_voltage_uv), "sample_count",
		    opt_int(m->has_sample_count, m->sample_count), "calibration_id",
		    m->has_calibration_id ? text(m->calibration_id) : json_null());
		if (meas && m->has_charge_clamped)
			json_object_set_new(meas, "charge_clamped",
					    json_boolean(m->charge_clamped));
		if (meas && m->has_ina228_diag)
			json_object_set_new(meas, "ina228_diag",
					    json_integer((json_int_t)m->ina228_diag));
		if (!meas) {
			json_decref(term);
			return NULL;
		}
	}
	return json_pack("{s:o, s:o}", "terminal", term, "measurement", meas);
}

/* --- the PMU result ------------------------------------------------------ */

static json_t *value_json(const struct ergon_pmu_value *v)
{
	switch (v->kind) {
	case ERGON_PMU_INT:
		return json_integer((json_int_t)v->i);
	case ERGON_PMU_REAL:
		return json_real(v->d);
	case ERGON_PMU_TEXT:
		return json_stringn(v->text, v->len);
	case ERGON_PMU_BOOL:
		return json_boolean(v->i);
	default:
		return json_null();
	}
}

static json_t *layer_json(const struct ergon_pmu_layer *L)
{
	json_t *counters = json_object();
	for (size_t k = 0; counters && k < L->ncounters; k++) {
		const struct ergon_pmu_counter *c = &L->counters[k];
		json_t *v = json_real(c->value);
		if (!v || json_object_setn_new_nocheck(counters, c->name, c->name_len, v)) {
			json_decref(counters);
			return NULL;
		}
	}
	if (!counters)
		return NULL;
	return json_pack("{s:o, s:o, s:o, s:o, s:b}", "id", value_json(&L->id), "op",
			 value_json(&L->op), "counters", counters, "cycles",
			 L->has_cycles ? json_real(L->cycles) : json_null(), "overflow",
			 (int)L->overflow);
}

static json_t *table_json(const struct ergon_pmu_table *t)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < t->n; i++) {
		if (json_array_append_new(a, layer_json(&t->layers[i]))) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static json_t *meta_json(const struct ergon_pmu_result *r)
{
	json_t *m = json_object();
	if (!m)
		return NULL;
	for (size_t i = 0; i < r->nmeta; i++)
		json_object_set_new(m, r->meta[i].key, value_json(&r->meta[i].value));
	if (r->has_psram) {
		json_t *ps = json_object();
		for (size_t i = 0; ps && i < ERGON_PMU_PSRAM_FIELDS; i++)
			json_object_set_new(ps, r->psram[i].key, value_json(&r->psram[i].value));
		json_object_set_new(m, "psram", ps ? ps : json_null());
	} else {
		json_object_set_new(m, "psram", json_null());
	}
	json_t *presets = json_array();
	for (size_t i = 0; presets && i < r->npreset_list; i++)
		json_array_append_new(presets, value_json(&r->preset_list[i]));
	json_object_set_new(m, "presets", presets ? presets : json_null());
	return m;
}

static json_t *preset_json(const struct ergon_pmu_preset *p, bool tables)
{
	json_t *hdr = json_array();
	for (size_t c = 0; hdr && c < p->ncolumns; c++)
		json_array_append_new(hdr, json_string(p->columns[c]));
	json_t *pj = json_pack("{s:s, s:o}", "name", p->name, "header", hdr ? hdr : json_array());
	if (!pj)
		return NULL;
	if (!tables)
		return pj;
	if (p->iterations) {
		json_t *its = json_array();
		for (size_t it = 0; its && it < p->niterations; it++)
			json_array_append_new(its, table_json(&p->iterations[it]));
		if (!its) {
			json_decref(pj);
			return NULL;
		}
		json_object_set_new(pj, "iterations", its);
	}
	json_t *layers = table_json(&p->layers);
	json_object_set_new(pj, "layers", layers ? layers : json_array());
	return pj;
}

static int result_json(const struct ergon_pmu_result *r, bool tables, json_t **out,
		       struct ergon_err *err)
{
	*out = NULL;
	json_t *res = json_object();
	json_t *presets = json_object();
	json_t *groups = json_object();
	json_t *issues = json_array();
	json_t *merged = table_json(&r->layers);
	json_t *meta = meta_json(r);
	if (!res || !presets || !groups || !issues || !merged || !meta)
		goto fail;
	for (size_t i = 0; i < r->npresets; i++) {
		json_t *pj = preset_json(&r->presets[i], tables);
		if (!pj || json_object_set_new(presets, r->presets[i].name, pj))
			goto fail;
	}
	for (size_t i = 0; i < r->ngroups; i++) {
		json_t *g = table_json(&r->groups[i].layers);
		json_object_set_new(groups, r->groups[i].name, g ? g : json_array());
	}
	if (ergon_issue_list_to_json(&r->issues, issues))
		goto fail;
	json_object_set_new(res, "meta", meta);
	meta = NULL;
	json_object_set_new(res, "presets", presets);
	presets = NULL;
	json_object_set_new(res, "layers", merged);
	merged = NULL;
	json_object_set_new(res, "overflow_detected", json_boolean(r->overflow_detected));
	json_object_set_new(res, "groups", groups);
	groups = NULL;
	json_t *caps = json_pack("{s:o, s:o}", "pmu", value_json(&r->cap_pmu), "cycle_counter",
				 value_json(&r->cap_cycle_counter));
	json_t *eg = json_pack(
	    "{s:b, s:I, s:I, s:I, s:I, s:I, s:O}", "complete", (int)r->complete, "parse_errors",
	    (json_int_t)r->parse_errors, "lines", (json_int_t)r->lines, "lines_too_long",
	    (json_int_t)r->lines_too_long, "heartbeats", (json_int_t)r->heartbeats, "layer_count",
	    (json_int_t)r->layers.n, "issues", issues);
	if (!eg || !caps) {
		json_decref(eg);
		json_decref(caps);
		goto fail;
	}
	json_object_set_new(eg, "capabilities", caps);
	json_object_set_new(res, "ergon", eg);
	json_decref(issues);
	*out = res;
	return 0;
fail:
	json_decref(res);
	json_decref(presets);
	json_decref(groups);
	json_decref(issues);
	json_decref(merged);
	json_decref(meta);
	return ergon_err_set(err, ERGON_ENOMEM, "hpx: out of memory building the result");
}

int ergon_pmu_result_to_json(const struct ergon_pmu_result *r, json_t **out, struct ergon_err *err)
{
	return result_json(r, true, out, err);
}

static int parser_json(struct ergon_hpx_parser *p, int aggregation, unsigned flags, bool tables,
		       json_t **out, struct ergon_err *err)
{
	struct ergon_pmu_result *r = NULL;
	*out = NULL;
	int rc = ergon_hpx_parser_result(p, aggregation, flags, &r, err);
	if (rc == 0)
		rc = result_json(r, tables, out, err);
	ergon_pmu_result_free(r);
	return rc;
}

int ergon_hpx_parser_to_json(struct ergon_hpx_parser *p, int aggregation, unsigned flags,
			     json_t **out, struct ergon_err *err)
{
	return parser_json(p, aggregation, flags, true, out, err);
}

int hpx_parser_json_lean(struct ergon_hpx_parser *p, int aggregation, json_t **out,
			 struct ergon_err *err)
{
	return parser_json(p, aggregation, 0, false, out, err);
}
