/* Firmware facts for the power checks: their documented JSON form
 * (docs/POWER_CHECKS.md), or an HPX log read through the HPX parser. */
#include "ergon/analyze.h"
#include "ergon/fileio.h"
#include "ergon/hpx.h"
#include "ergon/hpx_report.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define FACTS_MAX_BYTES (16u << 20)

static int bad(struct ergon_err *err, const char *name, const char *field, const char *want)
{
	return ergon_err_set(err, ERGON_EPARSE, "%s: field '%s' must be %s", name, field, want);
}

static int get_u64(const json_t *o, const char *k, const char *name, int *have, uint64_t *out,
		   struct ergon_err *err)
{
	const json_t *v = json_object_get(o, k);
	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return bad(err, name, k, "a non-negative integer");
	*out = (uint64_t)json_integer_value(v);
	if (have)
		*have = 1;
	return 0;
}

static int get_num(const json_t *o, const char *k, const char *name, int *have, double *out,
		   struct ergon_err *err)
{
	const json_t *v = json_object_get(o, k);
	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_number(v) || !isfinite(json_number_value(v)))
		return bad(err, name, k, "a finite number");
	*out = json_number_value(v);
	if (have)
		*have = 1;
	return 0;
}

static int get_bool(const json_t *o, const char *k, const char *name, int *out,
		    struct ergon_err *err)
{
	const json_t *v = json_object_get(o, k);
	if (v == NULL || json_is_null(v))
		return 0;
	if (json_is_boolean(v))
		*out = json_is_true(v);
	else if (json_is_integer(v) && (json_integer_value(v) == 0 || json_integer_value(v) == 1))
		*out = (int)json_integer_value(v);
	else
		return bad(err, name, k, "true/false (or 0/1)");
	return 0;
}

static int get_str(const json_t *o, const char *k, const char *name, char *dst, size_t n,
		   struct ergon_err *err)
{
	const json_t *v = json_object_get(o, k);
	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_string(v) || json_string_length(v) >= n)
		return bad(err, name, k, "a short string");
	snprintf(dst, n, "%s", json_string_value(v));
	return 0;
}

int ergon_power_facts_from_json(const json_t *j, const char *name, struct ergon_power_facts *f,
				struct ergon_err *err)
{
	memset(f, 0, sizeof(*f));
	if (!json_is_object(j))
		return ergon_err_set(err, ERGON_EPARSE, "%s: facts must be a JSON object", name);
	/* The HPX parser's terminal output ({"result": {"terminal", "measurement"}})
	 * is accepted as it is. */
	const json_t *res = json_object_get(j, "result");
	const json_t *term = json_object_get(json_is_object(res) ? res : j, "terminal");
	const json_t *meas = json_object_get(json_is_object(res) ? res : j, "measurement");
	int rc =
	    get_u64(j, "clean_infer_count", name, &f->have_clean_count, &f->clean_infer_count, err);
	if (rc == 0)
		rc = get_num(j, "clean_infer_avg_us", name, NULL, &f->clean_infer_avg_us, err);
	if (rc == 0 && f->clean_infer_avg_us < 0)
		rc = bad(err, name, "clean_infer_avg_us", ">= 0");
	if (rc == 0)
		rc = get_bool(j, "zero_time_inference", name, &f->zero_time_inference, err);
	if (rc == 0)
		rc = get_bool(j, "internal", name, &f->internal, err);
	if (rc == 0)
		rc = get_bool(j, "terminal_expected", name, &f->terminal_expected, err);
	if (rc == 0)
		rc = get_str(j, "clean_count_source", name, f->clean_count_source,
			     sizeof f->clean_count_source, err);
	if (rc == 0)
		rc = get_num(j, "host_envelope_s", name, NULL, &f->host_envelope_s, err);
	if (rc == 0)
		rc = get_u64(j, "gate_windows", name, NULL, &f->gate_windows_driven, err);
	/* The on-board monitor's configuration, for its budgets. */
	const json_t *mon = json_object_get(j, "monitor");
	const char *mk[4] = {"shunt_ohms", "energy_lsb_j", "charge_lsb_c", "conversion_cycle_s"};
	double *mv[4] = {&f->monitor_shunt_ohms, &f->monitor_energy_lsb_j, &f->monitor_charge_lsb_c,
			 &f->monitor_cycle_s};
	for (int k = 0; rc == 0 && k < 4; k++) {
		rc = get_num(mon, mk[k], name, NULL, mv[k], err);
		if (rc == 0 && !(*mv[k] >= 0))
			rc = bad(err, name, mk[k], ">= 0");
	}
	if (rc)
		return rc;
	/* Clean-window counts and the rate probe (HPX_CLEAN_* names). */
	int hs = 0, hp = 0, hr = 0;
	if (rc == 0)
		rc = get_u64(j, "clean_stalled_iters", name, &hs, &f->clean_stalled_iters, err);
	if (rc == 0)
		rc = get_u64(j, "clean_partial_iters", name, &hp, &f->clean_partial_iters, err);
	if (rc == 0)
		rc = get_u64(j, "clean_ref_cycles", name, &hr, &f->clean_ref_cycles, err);
	f->have_clean_window = (hs || hp) && hr;
	int hc = 0, hcyc = 0, hus = 0;
	if (rc == 0)
		rc = get_num(j, "system_clock_hz", name, &hc, &f->system_clock_hz, err);
	if (rc == 0)
		rc = get_u64(j, "clean_dwt_rate_cyc", name, &hcyc, &f->rate_probe_cycles, err);
	if (rc == 0)
		rc = get_num(j, "clean_dwt_rate_us", name, &hus, &f->rate_probe_us, err);
	f->have_rate_probe = hc && hcyc && hus && f->system_clock_hz > 0 && f->rate_probe_us > 0;
	if (rc)
		return rc;
	const json_t *pk = json_object_get(j, "probe_kind");
	if (pk != NULL && !json_is_null(pk)) {
		const char *s = json_string_value(pk);
		if (s && strcmp(s, "infer") == 0)
			f->probe_kind = ERGON_PROBE_INFER;
		else if (s && strcmp(s, "busy_loop") == 0)
			f->probe_kind = ERGON_PROBE_BUSY_LOOP;
		else
			return bad(err, name, "probe_kind", "\"infer\" or \"busy_loop\"");
	}
	if (term != NULL && !json_is_null(term)) {
		struct ergon_power_terminal *t = &f->terminal;
		if (!json_is_object(term))
			return bad(err, name, "terminal", "an object");
		const char *st = json_string_value(json_object_get(term, "status"));
		if (st && strcmp(st, "ok") == 0)
			t->status = ERGON_TERMINAL_OK;
		else if (st && (strcmp(st, "failed") == 0 || strcmp(st, "error") == 0))
			t->status = ERGON_TERMINAL_FAILED;
		else if (st && strcmp(st, "incomplete") == 0)
			t->status = ERGON_TERMINAL_INCOMPLETE;
		else
			return bad(err, name, "terminal.status",
				   "\"ok\", \"failed\" (or \"error\") or \"incomplete\"");
		uint64_t ver = 0, ec = 0;
		rc = get_u64(term, "version", name, NULL, &ver, err);
		t->version = ver > 1000 ? 0 : (int)ver;
		if (rc == 0)
			rc = get_u64(term, "requested_count", name, NULL, &t->requested_count, err);
		if (rc == 0)
			rc = get_u64(term, "completed_count", name, NULL, &t->completed_count, err);
		if (rc == 0)
			rc = get_u64(term, "elapsed_us", name, &t->have_elapsed, &t->elapsed_us,
				     err);
		if (rc == 0)
			rc = get_bool(term, "gate_asserted", name, &t->gate_asserted, err);
		if (rc == 0)
			rc = get_bool(term, "gate_lowered", name, &t->gate_lowered, err);
		if (rc == 0)
			rc = get_str(term, "final_phase", name, t->final_phase,
				     sizeof(t->final_phase), err);
		if (rc == 0)
			rc = get_u64(term, "error_code", name, NULL, &ec, err);
		t->error_code = (int64_t)ec;
		if (rc)
			return rc;
	}
	if (meas != NULL && !json_is_null(meas)) {
		struct ergon_power_terminal *t = &f->terminal;
		if (!json_is_object(meas))
			return bad(err, name, "measurement", "an object");
		rc = get_str(meas, "source", name, t->source, sizeof(t->source), err);
		if (rc == 0)
			rc = get_str(meas, "scope", name, t->scope, sizeof(t->scope), err);
		if (rc == 0)
			rc = get_num(meas, "energy_nj", name, &t->have_energy, &t->energy_nj, err);
		if (rc == 0)
			rc = get_num(meas, "charge_nc", name, &t->have_charge, &t->charge_nc, err);
		if (rc == 0 && json_object_get(meas, "charge_clamped") != NULL &&
		    !json_is_null(json_object_get(meas, "charge_clamped"))) {
			t->have_charge_clamped = 1;
			rc = get_bool(meas, "charge_clamped", name, &t->charge_clamped, err);
		}
		if (rc == 0)
			rc = get_u64(meas, "duration_us", name, NULL, &t->duration_us, err);
		if (rc == 0)
			rc = get_u64(meas, "inference_count", name, NULL, &t->inference_count, err);
		if (rc == 0)
			rc = get_bool(meas, "overflow", name, &t->overflow, err);
		if (rc == 0)
			rc = get_num(meas, "bus_voltage_uv", name, NULL, &t->bus_voltage_uv, err);
		if (rc == 0)
			rc = get_str(meas, "calibration_id", name, t->calibration_id,
				     sizeof(t->calibration_id), err);
		if (rc)
			return rc;
	}
	return 0;
}

/* An HPX log: the HPX parser (one parser for the protocol) gives the
 * profile boot's metadata and the power terminal record; they become the
 * JSON facts form. */
static int facts_from_hpx(const char *data, size_t len, const char *path,
			  struct ergon_power_facts *f, struct ergon_err *err)
{
	struct ergon_hpx_parser *p = NULL;
	json_t *res = NULL, *facts = NULL;
	int rc = ergon_hpx_parser_new(NULL, &p, err);
	if (rc)
		return rc;
	rc = ergon_hpx_parser_feed(p, data, len, err);
	if (rc >= 0)
		rc = ergon_hpx_parser_finish(p, err);
	if (rc < 0)
		goto out;
	facts = json_object();
	if (facts == NULL) {
		rc = ergon_err_set(err, ERGON_ENOMEM, "%s: out of memory", path);
		goto out;
	}
	struct ergon_hpx_stats st;
	ergon_hpx_parser_stats(p, &st);
	if (st.started) {
		rc = ergon_hpx_parser_to_json(p, ERGON_HPX_AGG_MEDIAN, 0, &res, err);
		if (rc < 0)
			goto out;
		json_t *meta = json_object_get(res, "meta");
		const char *k;
		json_t *v;
		json_object_foreach(meta, k, v)
		{
			if (strncmp(k, "clean_", 6) == 0 || strcmp(k, "system_clock_hz") == 0)
				if (!json_is_null(v))
					json_object_set(facts, k, v);
		}
	}
	struct ergon_hpx_terminal t;
	struct ergon_err terr = {0};
	rc = ergon_hpx_parser_terminal(p, &t, &terr);
	if (rc == 0) {
		json_t *tj = ergon_hpx_terminal_to_json(&t);
		if (tj == NULL) {
			rc = ergon_err_set(err, ERGON_ENOMEM, "%s: out of memory", path);
			goto out;
		}
		json_object_update(facts, tj);
		json_decref(tj);
	} else if (rc != ERGON_ENOENT) {
		/* A damaged terminal record is an input error, said where. */
		rc = ergon_err_set(err, rc, "%s: %s", path, terr.msg);
		goto out;
	}
	rc = ergon_power_facts_from_json(facts, path, f, err);
out:
	json_decref(res);
	json_decref(facts);
	ergon_hpx_parser_free(p);
	return rc < 0 ? rc : 0;
}

int ergon_power_facts_load(const char *path, struct ergon_power_facts *f, struct ergon_err *err)
{
	char *data = NULL;
	size_t len = 0;
	int rc = ergon_file_read_all(path, FACTS_MAX_BYTES, &data, &len, err);
	if (rc)
		return rc;
	size_t i = 0;
	while (i < len && (data[i] == ' ' || data[i] == '\n' || data[i] == '\r' || data[i] == '\t'))
		i++;
	if (i == len || data[i] != '{') {
		int hpx = strstr(data, "HPX_") != NULL;
		if (hpx) {
			rc = facts_from_hpx(data, len, path, f, err);
			free(data);
			return rc;
		}
		free(data);
		return ergon_err_set(err, ERGON_EPARSE,
				     "%s: not a facts file; expected a JSON object or an HPX log "
				     "(docs/POWER_CHECKS.md)",
				     path);
	}
	json_error_t je;
	json_t *j = json_loadb(data, len, JSON_REJECT_DUPLICATES, &je);
	free(data);
	if (j == NULL)
		return ergon_err_set(err, ERGON_EPARSE, "%s:%d:%d: %s", path, je.line, je.column,
				     je.text);
	rc = ergon_power_facts_from_json(j, path, f, err);
	json_decref(j);
	return rc;
}
