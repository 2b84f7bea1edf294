/* The power terminal record: HPX_POWER_<KEY>=<value> lines between
 * `--- HPX_POWER_TERMINAL_START ---` and `--- HPX_POWER_TERMINAL_END ---`.
 *
 * The checks follow the reference (heliaPROFILER power_terminal.py): lines
 * outside the record are ignored; inside it a line without '=', a duplicate
 * key, a second START or an END before START is an error; after END the
 * record must hold every required key and no unknown one, version 1, status
 * ok|error with a matching error code, and an all-or-none measurement whose
 * duration and count equal the terminal's elapsed time and completed count.
 */
#include "hpx_internal.h"
#include "hpx_parser.h"

#include <stdio.h>
#include <string.h>

/* The record's keys, in wire order; the first nine are required. */
static const char *const pt_keys[HPX_PT_NKEYS] = {
    "HPX_" HPX_KEY_POWER_PREFIX HPX_KEY_PT_TERMINAL_VERSION,
    "HPX_" HPX_KEY_POWER_PREFIX HPX_KEY_PT_STATUS,
    "HPX_" HPX_KEY_POWER_PREFIX HPX_KEY_PT_REQUESTED_COUNT,
    "HPX_" HPX_KEY_POWER_PREFIX HPX_KEY_PT_COMPLETED_COUNT,
    "HPX_" HPX_KEY_POWER_PREFIX HPX_KEY_PT_ELAPSED_US,
    "HPX_" HPX_KEY_POWER_PREFIX HPX_KEY_PT_FINAL_PHASE,
    "HPX_" HPX_KEY_POWER_PREFIX HPX_KEY_PT_ERROR_CODE,
    "HPX_" HPX_KEY_POWER_PREFIX HPX_KEY_PT_GATE_ASSERTED,
    "HPX_" HPX_KEY_POWER_PREFIX HPX_KEY_PT_GATE_LOWERED,
    "HPX_" HPX_KEY_POWER_PREFIX HPX_KEY_PT_MEASUREMENT_SOURCE,
    "HPX_" HPX_KEY_POWER_PREFIX HPX_KEY_PT_MEASUREMENT_SCOPE,
    "HPX_" HPX_KEY_POWER_PREFIX HPX_KEY_PT_ENERGY_NJ,
    "HPX_" HPX_KEY_POWER_PREFIX HPX_KEY_PT_MEASUREMENT_DURATION_US,
    "HPX_" HPX_KEY_POWER_PREFIX HPX_KEY_PT_MEASUREMENT_COUNT,
    "HPX_" HPX_KEY_POWER_PREFIX HPX_KEY_PT_MEASUREMENT_OVERFLOW,
    "HPX_" HPX_KEY_POWER_PREFIX HPX_KEY_PT_CHARGE_NC,
    "HPX_" HPX_KEY_POWER_PREFIX HPX_KEY_PT_BUS_VOLTAGE_UV,
    "HPX_" HPX_KEY_POWER_PREFIX HPX_KEY_PT_SAMPLE_COUNT,
    "HPX_" HPX_KEY_POWER_PREFIX HPX_KEY_PT_CALIBRATION_ID,
    "HPX_" HPX_KEY_POWER_PREFIX HPX_KEY_PT_CHARGE_CLAMPED,
    "HPX_" HPX_KEY_POWER_PREFIX HPX_KEY_PT_INA228_DIAG,
    /* Not part of the record: accepted names that are refused inside it. */
    NULL,
    NULL,
};

enum {
	K_VERSION,
	K_STATUS,
	K_REQUESTED,
	K_COMPLETED,
	K_ELAPSED,
	K_PHASE,
	K_ERRCODE,
	K_GATE_ASSERTED,
	K_GATE_LOWERED,
	K_N_REQUIRED,
	K_SOURCE = K_N_REQUIRED,
	K_SCOPE,
	K_ENERGY,
	K_DURATION,
	K_COUNT,
	K_OVERFLOW,
	K_CHARGE,
	K_BUS_V,
	K_SAMPLES,
	K_CALIB,
	K_CLAMPED,
	K_DIAG,
};

static void t_fail(struct hpx_terminal_state *t, uint64_t lineno, const char *fmt, const char *a)
{
	if (t->err_code)
		return;
	t->err_code = ERGON_EPARSE;
	char m[200];
	snprintf(m, sizeof(m), fmt, a);
	snprintf(t->err_msg, sizeof(t->err_msg), "line %llu: %s", (unsigned long long)lineno, m);
}

static bool line_is(const char *line, size_t n, const char *tok)
{
	size_t k = strlen(tok);
	return n == k && memcmp(line, tok, k) == 0;
}

bool hpx_terminal_line(struct hpx_terminal_state *t, const char *line, size_t n, uint64_t lineno)
{
	if (line_is(line, n, HPX_TOK_POWER_TERMINAL_START)) {
		if (t->in_record || t->complete)
			t_fail(t, lineno, "duplicate %s marker; the firmware must emit one record",
			       HPX_TOK_POWER_TERMINAL_START);
		t->in_record = true;
		t->seen_start = true;
		if (!t->start_lineno)
			t->start_lineno = lineno;
		return true;
	}
	if (line_is(line, n, HPX_TOK_POWER_TERMINAL_END)) {
		if (!t->in_record)
			t_fail(t, lineno, "%s before the start marker", HPX_TOK_POWER_TERMINAL_END);
		t->in_record = false;
		t->complete = true;
		return true;
	}
	if (!t->in_record)
		return false;
	if (n == 0)
		return true;
	const char *eq = memchr(line, '=', n);
	if (!eq) {
		char shown[64];
		size_t k = n < sizeof(shown) - 1 ? n : sizeof(shown) - 1;
		memcpy(shown, line, k);
		shown[k] = '\0';
		t_fail(t, lineno,
		       "malformed power terminal line '%s': expected HPX_POWER_<KEY>=<value>",
		       shown);
		return true;
	}
	size_t klen = (size_t)(eq - line);
	const char *val = eq + 1;
	size_t vlen = n - klen - 1;
	for (int i = 0; i < HPX_PT_NKEYS; i++) {
		if (!pt_keys[i] || strlen(pt_keys[i]) != klen || memcmp(pt_keys[i], line, klen))
			continue;
		if (t->present[i]) {
			t_fail(t, lineno, "duplicate power terminal field %s", pt_keys[i]);
			return true;
		}
		if (vlen >= ERGON_HPX_TEXT_MAX) {
			t_fail(t, lineno, "power terminal field %s: value longer than 127 bytes",
			       pt_keys[i]);
			return true;
		}
		t->present[i] = true;
		memcpy(t->values[i], val, vlen);
		t->values[i][vlen] = '\0';
		return true;
	}
	/* Unknown key: the reference reports unknown fields after END; keep the
	 * first few names (duplicates among unknown keys are also errors). */
	for (unsigned i = 0; i < t->n_unknown && i < 4; i++) {
		if (strlen(t->unknown[i]) == klen && memcmp(t->unknown[i], line, klen) == 0) {
			t_fail(t, lineno, "duplicate power terminal field %s", t->unknown[i]);
			return true;
		}
	}
	if (t->n_unknown < 4) {
		size_t k = klen < 63 ? klen : 63;
		memcpy(t->unknown[t->n_unknown], line, k);
		t->unknown[t->n_unknown][k] = '\0';
	}
	t->n_unknown++;
	return true;
}

static int get_int(const struct hpx_terminal_state *t, int k, int64_t *out, struct ergon_err *err)
{
	double d;
	int64_t v = 0;
	bool fits = false;
	if (!hpx_py_int(t->values[k], strlen(t->values[k]), &d, &v, &fits) || !fits)
		return ergon_err_set(err, ERGON_EPARSE,
				     "power terminal: malformed integer %s=%s; expected a base-10 "
				     "integer",
				     pt_keys[k], t->values[k]);
	*out = v;
	return 0;
}

static int get_bool(const struct hpx_terminal_state *t, int k, bool *out, struct ergon_err *err)
{
	if (strcmp(t->values[k], "0") == 0) {
		*out = false;
		return 0;
	}
	if (strcmp(t->values[k], "1") == 0) {
		*out = true;
		return 0;
	}
	return ergon_err_set(err, ERGON_EPARSE,
			     "power terminal: malformed boolean %s=%s; expected 0 or 1", pt_keys[k],
			     t->values[k]);
}

int hpx_terminal_result(const struct hpx_terminal_state *t, struct ergon_hpx_terminal *out,
			struct ergon_err *err)
{
	memset(out, 0, sizeof(*out));
	if (t->err_code)
		return ergon_err_set(err, t->err_code, "power terminal: %s", t->err_msg);
	if (!t->seen_start)
		return ergon_err_set(err, ERGON_ENOENT,
				     "power terminal: no %s record in the stream; check that the "
				     "power firmware reached its end of run",
				     HPX_TOK_POWER_TERMINAL_START);
	if (t->in_record || !t->complete)
		return ergon_err_set(
		    err, ERGON_EPARSE,
		    "power terminal: record starting at line %llu is incomplete (no "
		    "%s); capture until the end marker",
		    (unsigned long long)t->start_lineno, HPX_TOK_POWER_TERMINAL_END);
	char missing[400] = "";
	for (int i = 0; i < K_N_REQUIRED; i++) {
		if (t->present[i])
			continue;
		size_t used = strlen(missing);
		snprintf(missing + used, sizeof(missing) - used, "%s%s", used ? ", " : "",
			 pt_keys[i]);
	}
	if (missing[0])
		return ergon_err_set(err, ERGON_EPARSE,
				     "power terminal: record is missing fields: %s", missing);
	if (t->n_unknown)
		return ergon_err_set(err, ERGON_EPARSE,
				     "power terminal: record has %u unknown field(s), first %s; "
				     "diagnostics belong before the start marker",
				     t->n_unknown, t->unknown[0]);
	int rc;
	if ((rc = get_int(t, K_VERSION, &out->version, err)))
		return rc;
	if (out->version != HPX_WIRE_VERSION)
		return ergon_err_set(err, ERGON_EPARSE,
				     "power terminal: unsupported version %lld; expected %d",
				     (long long)out->version, HPX_WIRE_VERSION);
	const char *status = t->values[K_STATUS];
	if (strcmp(status, HPX_STATUS_OK) != 0 && strcmp(status, HPX_STATUS_ERROR) != 0)
		return ergon_err_set(err, ERGON_EPARSE,
				     "power terminal: malformed status '%s'; expected ok or error",
				     status);
	snprintf(out->status, sizeof(out->status), "%s", status);
	if ((rc = get_int(t, K_REQUESTED, &out->requested_count, err)) ||
	    (rc = get_int(t, K_COMPLETED, &out->completed_count, err)) ||
	    (rc = get_int(t, K_ERRCODE, &out->error_code, err)) ||
	    (rc = get_int(t, K_ELAPSED, &out->elapsed_us, err)))
		return rc;
	if (out->requested_count < 0 || out->completed_count < 0 || out->error_code < 0)
		return ergon_err_set(err, ERGON_EPARSE,
				     "power terminal: count and error fields must be non-negative");
	if (out->elapsed_us < 0)
		return ergon_err_set(err, ERGON_EPARSE,
				     "power terminal: elapsed time must be non-negative");
	if (out->completed_count > out->requested_count)
		return ergon_err_set(err, ERGON_EPARSE,
				     "power terminal: completed count %lld exceeds requested count "
				     "%lld",
				     (long long)out->completed_count,
				     (long long)out->requested_count);
	if (strcmp(status, HPX_STATUS_OK) == 0 && out->error_code != 0)
		return ergon_err_set(err, ERGON_EPARSE,
				     "power terminal: status ok requires error code 0, got %lld",
				     (long long)out->error_code);
	if (strcmp(status, HPX_STATUS_ERROR) == 0 && out->error_code == 0)
		return ergon_err_set(err, ERGON_EPARSE,
				     "power terminal: status error requires a nonzero error code");
	if (!t->values[K_PHASE][0])
		return ergon_err_set(err, ERGON_EPARSE,
				     "power terminal: final phase must not be empty");
	snprintf(out->final_phase, sizeof(out->final_phase), "%s", t->values[K_PHASE]);
	if ((rc = get_bool(t, K_GATE_ASSERTED, &out->gate_asserted, err)) ||
	    (rc = get_bool(t, K_GATE_LOWERED, &out->gate_lowered, err)))
		return rc;

	/* Every record names its source (an external meter's has no figures;
	 * a failed INA228 bring-up has none yet); figures need a source. */
	if (t->present[K_ENERGY] && !t->present[K_SOURCE])
		return ergon_err_set(err, ERGON_EPARSE,
				     "power terminal: energy fields need HPX_POWER_MEASUREMENT_SOURCE");
	if (t->present[K_SOURCE] && !t->values[K_SOURCE][0])
		return ergon_err_set(err, ERGON_EPARSE,
				     "power terminal: measurement source must not be empty");
	out->has_source = t->present[K_SOURCE];
	if (out->has_source)
		snprintf(out->source, sizeof(out->source), "%s", t->values[K_SOURCE]);
	if (!t->present[K_ENERGY]) {
		const int meas_only[] = {K_SCOPE, K_DURATION, K_COUNT, K_OVERFLOW, K_CHARGE,
					 K_BUS_V, K_SAMPLES, K_CLAMPED, K_DIAG};
		for (size_t i = 0; i < sizeof(meas_only) / sizeof(meas_only[0]); i++)
			if (t->present[meas_only[i]])
				return ergon_err_set(err, ERGON_EPARSE,
						     "power terminal: %s without the energy field",
						     pt_keys[meas_only[i]]);
		return 0;
	}
	struct ergon_hpx_power_measurement *m = &out->measurement;
	const int need[] = {K_SCOPE, K_DURATION, K_COUNT, K_OVERFLOW};
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (!t->present[need[i]])
			return ergon_err_set(err, ERGON_EPARSE,
					     "power terminal: measurement payload is missing %s",
					     pt_keys[need[i]]);
	if (strcmp(t->values[K_SCOPE], HPX_PT_SCOPE_FIXED_N_INFERENCE) != 0)
		return ergon_err_set(err, ERGON_EPARSE,
				     "power terminal: unsupported measurement scope '%s'; expected "
				     "fixed_n_inference",
				     t->values[K_SCOPE]);
	int64_t ovf = 0;
	if ((rc = get_int(t, K_ENERGY, &m->energy_nj, err)) ||
	    (rc = get_int(t, K_DURATION, &m->duration_us, err)) ||
	    (rc = get_int(t, K_COUNT, &m->inference_count, err)) ||
	    (rc = get_int(t, K_OVERFLOW, &ovf, err)))
		return rc;
	m->has_charge_nc = t->present[K_CHARGE];
	m->has_bus_voltage_uv = t->present[K_BUS_V];
	m->has_sample_count = t->present[K_SAMPLES];
	m->has_charge_clamped = t->present[K_CLAMPED];
	m->has_ina228_diag = t->present[K_DIAG];
	int64_t clamped = 0;
	if ((m->has_charge_clamped && (rc = get_int(t, K_CLAMPED, &clamped, err))) ||
	    (m->has_ina228_diag && (rc = get_int(t, K_DIAG, &m->ina228_diag, err))))
		return rc;
	if (clamped != 0 && clamped != 1)
		return ergon_err_set(err, ERGON_EPARSE,
				     "power terminal: charge clamped must be 0 or 1, got %lld",
				     (long long)clamped);
	if (m->has_ina228_diag && (m->ina228_diag < 0 || m->ina228_diag > 0xFFFF))
		return ergon_err_set(err, ERGON_EPARSE,
				     "power terminal: INA228 DIAG_ALRT %lld is not a 16-bit register",
				     (long long)m->ina228_diag);
	m->charge_clamped = clamped == 1;
	if ((m->has_charge_nc && (rc = get_int(t, K_CHARGE, &m->charge_nc, err))) ||
	    (m->has_bus_voltage_uv && (rc = get_int(t, K_BUS_V, &m->bus_voltage_uv, err))) ||
	    (m->has_sample_count && (rc = get_int(t, K_SAMPLES, &m->sample_count, err))))
		return rc;
	if (m->energy_nj < 0 || m->duration_us < 0 || m->inference_count < 0 || ovf < 0 ||
	    (m->has_charge_nc && m->charge_nc < 0) ||
	    (m->has_bus_voltage_uv && m->bus_voltage_uv < 0) ||
	    (m->has_sample_count && m->sample_count < 0))
		return ergon_err_set(err, ERGON_EPARSE,
				     "power terminal: measurement fields must be non-negative");
	if (ovf != 0 && ovf != 1)
		return ergon_err_set(
		    err, ERGON_EPARSE,
		    "power terminal: measurement overflow must be 0 or 1, got %lld",
		    (long long)ovf);
	m->overflow = ovf == 1;
	if (m->inference_count > 0 && m->duration_us == 0)
		return ergon_err_set(err, ERGON_EPARSE,
				     "power terminal: measurement duration must be positive for "
				     "completed work");
	if (m->inference_count != out->completed_count)
		return ergon_err_set(
		    err, ERGON_EPARSE,
		    "power terminal: measurement count %lld does not match completed "
		    "count %lld",
		    (long long)m->inference_count, (long long)out->completed_count);
	if (m->duration_us != out->elapsed_us)
		return ergon_err_set(err, ERGON_EPARSE,
				     "power terminal: measurement duration %lld us does not match "
				     "elapsed %lld us",
				     (long long)m->duration_us, (long long)out->elapsed_us);
	snprintf(m->source, sizeof(m->source), "%s", t->values[K_SOURCE]);
	snprintf(m->scope, sizeof(m->scope), "%s", t->values[K_SCOPE]);
	m->has_calibration_id = t->present[K_CALIB];
	if (m->has_calibration_id)
		snprintf(m->calibration_id, sizeof(m->calibration_id), "%s", t->values[K_CALIB]);
	out->has_measurement = true;
	return 0;
}
