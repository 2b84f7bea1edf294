/* `ergon analyze` end to end through the CLI: the shared JLS fixture with
 * firmware facts, its artifacts and exit codes. Expected energies come from
 * the fixture's .expected.json (computed by the reference writer). */
#include "ergon/issues.h"
#include "ergon/jls.h"
#include "test_support.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static json_t *load(const char *path)
{
	json_error_t je;
	json_t *j = json_load_file(path, 0, &je);
	if (j == NULL)
		fail_msg("%s: %s", path, je.text);
	return j;
}

static char *write_facts(const char *dir, const char *name, const char *json)
{
	char *p = ts_strf("%s/%s", dir, name);
	assert_int_equal(ts_write_file(p, json, strlen(json)), 0);
	return p;
}

static double expected_window_energy(void)
{
	char *exp = ts_fixture("jls/shared_basic.expected.json");
	json_t *e = load(exp);
	double v = json_number_value(
	    json_object_get(json_array_get(json_object_get(e, "gate_windows"), 0), "energy_j"));
	json_decref(e);
	free(exp);
	return v;
}

/* 100 inferences of 20 ms = 2.000 s, the fixture's gate; the firmware clock
 * says 2.0005 s (within 1 % + 2 ms). */
static const char *facts_ok =
    "{\"clean_infer_count\": 100, \"clean_infer_avg_us\": 20000, \"probe_kind\": \"infer\",\n"
    " \"terminal\": {\"version\": 1, \"status\": \"ok\", \"requested_count\": 100,\n"
    "   \"completed_count\": 100, \"elapsed_us\": 2000500, \"gate_asserted\": true,\n"
    "   \"gate_lowered\": true, \"final_phase\": \"complete\", \"error_code\": 0}}\n";

static void analyze_fixture_with_facts(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *jls = ts_fixture("jls/shared_basic.jls");
	char *facts = write_facts(dir, "facts.json", facts_ok);
	char *out = ts_strf("%s/run", dir);
	char *so = NULL, *se = NULL;
	int rc =
	    ts_run_ergon(&so, &se, "analyze", "--jls", jls, "--facts", facts, "--out", out, NULL);
	if (rc != 0)
		fail_msg("exit %d: %s", rc, se);
	/* stdout is a pipe: the plain ASCII table. */
	assert_non_null(strstr(so, "+------------------+"));
	assert_non_null(strstr(so, "| Energy/inference |"));
	assert_null(strstr(so, "\xe2\x94"));
	char *sum = ts_strf("%s/summary.json", out);
	json_t *s = load(sum);
	json_t *p = json_object_get(s, "power");
	double e = expected_window_energy();
	assert_string_equal(json_string_value(json_object_get(p, "measurement_scope")),
			    "gpio_gated_clean_window");
	assert_string_equal(json_string_value(json_object_get(p, "integrity")), "valid");
	double got = json_number_value(json_object_get(p, "energy_j"));
	assert_true(fabs(got - e) <= 1e-9 * e);
	double epi = json_number_value(json_object_get(p, "energy_per_inference_j"));
	assert_true(fabs(epi - e / 100.0) <= 1e-9 * e / 100.0);
	assert_false(json_is_true(json_object_get(p, "per_inference_metrics_omitted")));
	assert_int_equal(json_integer_value(json_object_get(p, "short_gate_pulses_ignored")), 2);
	assert_int_equal(json_integer_value(json_object_get(p, "gated_window_count")), 1);
	assert_true(json_number_value(json_object_get(p, "gated_window_duration_ratio")) == 1.0);
	assert_true(json_is_true(json_object_get(json_object_get(p, "observer_check"), "agrees")));
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(s, "provenance"), "kind")),
	    "replayed");
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(s, "instrument"), "model")), "JS220");
	/* The report_id is what `ergon digest` recomputes. */
	char *dig = NULL;
	assert_int_equal(ts_run_ergon(&dig, NULL, "digest", sum, NULL), 0);
	assert_non_null(strstr(dig, json_string_value(json_object_get(s, "report_id"))));
	free(dig);
	char *csvp = ts_strf("%s/detailed/power_summary.csv", out);
	char *csv = ts_read_file(csvp, NULL);
	assert_non_null(csv);
	/* One row per window and the whole-capture row, a column per metric. */
	assert_true(strncmp(csv, "scope,", 6) == 0);
	const char *cells[][3] = {{"window_1", "start_index", "100000"},
				  {"window_1", "end_index", "300000"},
				  {"whole_capture_window", "samples", "400000"}};
	for (size_t k = 0; k < sizeof cells / sizeof cells[0]; k++) {
		char *v = ts_csv_cell(csv, cells[k][0], cells[k][1]);
		assert_non_null(v);
		assert_string_equal(v, cells[k][2]);
		free(v);
	}
	assert_null(ts_csv_cell(csv, "window_2", "start_index"));
	/* Running again into the same folder is refused without --force. */
	char *se2 = NULL;
	rc = ts_run_ergon(NULL, &se2, "analyze", "--jls", jls, "--out", out, NULL);
	assert_int_equal(rc, 3);
	assert_non_null(strstr(se2, "--force"));
	free(se2);
	assert_int_equal(
	    ts_run_ergon(NULL, NULL, "analyze", "--jls", jls, "--out", out, "--force", NULL), 0);
	free(csv);
	free(csvp);
	json_decref(s);
	free(sum);
	free(so);
	free(se);
	free(out);
	free(facts);
	free(jls);
	ts_tmpdir_remove(dir);
	free(dir);
}

/* The firmware clock says 2.5 s against a 2.0 s gate: an invalid run is
 * still a written artifact, with energy per inference withheld; the exit
 * code says invalid (1; it was 0 before exit codes said one thing). */
static void observer_mismatch_is_an_artifact(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *jls = ts_fixture("jls/shared_basic.jls");
	char *f = ts_strf("%s", facts_ok);
	char *at = strstr(f, "2000500");
	memcpy(at, "2500000", 7);
	char *facts = write_facts(dir, "facts.json", f);
	char *out = ts_strf("%s/run", dir);
	assert_int_equal(
	    ts_run_ergon(NULL, NULL, "analyze", "--jls", jls, "--facts", facts, "--out", out, NULL),
	    1);
	char *sum = ts_strf("%s/summary.json", out);
	json_t *s = load(sum);
	json_t *p = json_object_get(s, "power");
	assert_string_equal(json_string_value(json_object_get(p, "integrity")), "invalid");
	assert_true(json_is_null(json_object_get(p, "energy_per_inference_j")));
	assert_true(json_is_true(json_object_get(p, "per_inference_metrics_omitted")));
	assert_true(json_is_true(json_object_get(p, "gated_window_duration_suspect")));
	const char *code = json_string_value(
	    json_object_get(json_array_get(json_object_get(s, "issues"), 0), "code"));
	assert_string_equal(code, "power.window_observer_mismatch");
	json_decref(s);
	free(sum);
	free(out);
	free(facts);
	free(f);
	free(jls);
	ts_tmpdir_remove(dir);
	free(dir);
}

static void usage_and_io_errors(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *jls = ts_fixture("jls/shared_basic.jls");
	char *out = ts_strf("%s/run", dir);
	char *se = NULL;
	assert_int_equal(ts_run_ergon(NULL, &se, "analyze", "--out", out, NULL), 2);
	assert_non_null(strstr(se, "--jls"));
	free(se);
	assert_int_equal(
	    ts_run_ergon(NULL, NULL, "analyze", "--jls", jls, "--stats", jls, "--out", out, NULL),
	    2);
	assert_int_equal(ts_run_ergon(NULL, NULL, "analyze", "--jls", jls, "--sync-input-index",
				      "40", "--out", out, NULL),
			 2);
	se = NULL;
	assert_int_equal(
	    ts_run_ergon(NULL, &se, "analyze", "--jls", "/nonexistent/x.jls", "--out", out, NULL),
	    3);
	assert_non_null(strstr(se, "/nonexistent/x.jls"));
	free(se);
	/* A facts field of the wrong type names the field. */
	char *facts = write_facts(dir, "bad.json", "{\"clean_infer_count\": \"many\"}");
	se = NULL;
	assert_int_equal(
	    ts_run_ergon(NULL, &se, "analyze", "--jls", jls, "--facts", facts, "--out", out, NULL),
	    3);
	assert_non_null(strstr(se, "'clean_infer_count' must be a non-negative integer"));
	free(se);
	free(facts);
	free(out);
	free(jls);
	ts_tmpdir_remove(dir);
	free(dir);
}

/* Statistics CSV with a software gate from a marker file. */
static void stats_csv_with_markers(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *csv = ts_strf("%s/p.csv", dir);
	char *mk = ts_strf("%s/gate.csv", dir);
	/* 0.5 s packets at 1 W (p_avg_w) for 4 s; the marker covers 1.0..3.0 s:
	 * 2 s x 1 W = 2 J (no accumulators: integrated over packets). */
	char *text = ts_strf("t_start_s,t_end_s,i_avg_a,p_avg_w\n");
	for (int k = 0; k < 8; k++) {
		char *n = ts_strf("%s%.1f,%.1f,0.5,1.0\n", text, 0.5 * k, 0.5 * k + 0.5);
		free(text);
		text = n;
	}
	assert_int_equal(ts_write_file(csv, text, strlen(text)), 0);
	assert_int_equal(ts_write_file(mk, "start_s,end_s\n1.0,3.0\n", 22), 0);
	char *out = ts_strf("%s/run", dir);
	assert_int_equal(ts_run_ergon(NULL, NULL, "analyze", "--stats", csv, "--markers", mk,
				      "--out", out, NULL),
			 0);
	char *sum = ts_strf("%s/summary.json", out);
	json_t *s = load(sum);
	json_t *p = json_object_get(s, "power");
	assert_true(fabs(json_number_value(json_object_get(p, "energy_j")) - 2.0) < 1e-12);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(p, "gate"), "source")), "markers");
	json_decref(s);
	free(sum);
	free(out);
	free(text);
	free(mk);
	free(csv);
	ts_tmpdir_remove(dir);
	free(dir);
}

/* An HPX log as the facts file, read through the HPX parser: the power
 * terminal of power_ok.hpx.txt says HPX_POWER_ELAPSED_US=5001234, which the
 * 2.000 s gate of shared_basic contradicts (observer mismatch). */
static void hpx_log_as_facts(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *jls = ts_fixture("jls/shared_basic.jls");
	char *hpx = ts_fixture("hpx/power_ok.hpx.txt");
	char *out = ts_strf("%s/run", dir);
	/* The mismatch is an error: invalid, exit 1 (was 0). */
	assert_int_equal(
	    ts_run_ergon(NULL, NULL, "analyze", "--jls", jls, "--facts", hpx, "--out", out, NULL),
	    1);
	char *sum = ts_strf("%s/summary.json", out);
	json_t *s = load(sum);
	json_t *p = json_object_get(s, "power");
	json_t *t = json_object_get(p, "terminal");
	assert_int_equal(json_integer_value(json_object_get(t, "elapsed_us")), 5001234);
	assert_int_equal(json_integer_value(json_object_get(t, "completed_count")), 237);
	assert_true(json_is_true(json_object_get(t, "gate_asserted")));
	assert_true(
	    ergon_issue_has(json_object_get(p, "issues"), "power.window_observer_mismatch"));
	json_decref(s);
	free(sum);
	/* basic.hpx.txt: HPX_CLEAN_INFER_COUNT=50, HPX_CLEAN_INFER_AVG_US=26868:
	 * expected window 1.3434 s against the 2 s gate, no terminal: the
	 * per-inference figures the facts ask for are withheld, a warning:
	 * degraded, exit 4 (was 0). */
	free(hpx);
	hpx = ts_fixture("hpx/basic.hpx.txt");
	assert_int_equal(ts_run_ergon(NULL, NULL, "analyze", "--jls", jls, "--facts", hpx, "--out",
				      out, "--force", NULL),
			 4);
	sum = ts_strf("%s/summary.json", out);
	s = load(sum);
	p = json_object_get(s, "power");
	assert_int_equal(json_integer_value(json_object_get(p, "inference_count")), 50);
	assert_true(fabs(json_number_value(json_object_get(p, "gated_window_expected_duration_s")) -
			 1.3434) < 1e-12);
	assert_true(ergon_issue_has(json_object_get(p, "issues"), "power.gate_duration_mismatch"));
	assert_true(json_is_true(json_object_get(p, "gated_window_duration_suspect")));
	json_decref(s);
	free(sum);
	free(out);
	free(hpx);
	free(jls);
	ts_tmpdir_remove(dir);
	free(dir);
}

/* Clean-window counts and the rate probe travel in the facts: 2 stalled
 * of 100 with ref 8000; 96 MHz x 100 us = 9600 cycles, 4799 < 4800. */
static void clean_window_facts(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *jls = ts_fixture("jls/shared_basic.jls");
	char *facts = write_facts(dir, "f.json",
				  "{\"clean_infer_count\": 100, \"clean_infer_avg_us\": 20000,\n"
				  " \"clean_stalled_iters\": 2, \"clean_partial_iters\": 0,\n"
				  " \"clean_ref_cycles\": 8000, \"system_clock_hz\": 96000000,\n"
				  " \"clean_dwt_rate_us\": 100, \"clean_dwt_rate_cyc\": 4799}");
	char *out = ts_strf("%s/run", dir);
	assert_int_equal(
	    ts_run_ergon(NULL, NULL, "analyze", "--jls", jls, "--facts", facts, "--out", out, NULL),
	    0);
	char *sum = ts_strf("%s/summary.json", out);
	json_t *s = load(sum);
	json_t *is = json_object_get(json_object_get(s, "power"), "issues");
	assert_true(ergon_issue_has(is, "profile.clean_window_stalled"));
	assert_true(ergon_issue_has(is, "profile.clean_window_clock_rate_low"));
	assert_false(ergon_issue_has(is, "profile.clean_window_check_inoperative"));
	/* heliaPROFILER's names for the same facts, verbatim. */
	json_t *p = json_object_get(s, "power");
	assert_int_equal(json_integer_value(json_object_get(p, "device_clean_ref_cycles")), 8000);
	assert_int_equal(json_integer_value(json_object_get(p, "device_clean_dwt_rate_cyc")), 4799);
	assert_int_equal(json_integer_value(json_object_get(p, "device_clean_dwt_rate_us")), 100);
	json_decref(s);
	free(sum);
	free(out);
	free(facts);
	free(jls);
	ts_tmpdir_remove(dir);
	free(dir);
}

/* The issue with this code in the artifact's power section, or NULL. */
static const json_t *power_issue(const json_t *s, const char *code)
{
	size_t i;
	const json_t *v;
	json_array_foreach(json_object_get(json_object_get(s, "power"), "issues"), i, v)
	{
		if (strcmp(json_string_value(json_object_get(v, "code")), code) == 0)
			return v;
	}
	return NULL;
}

/* Run analyze on one input; it must write an invalid artifact (exit 1, as
 * for any invalid measurement; it was 0) carrying `code` whose message
 * holds `where`, with no stats window. */
static void assert_fault_artifact(const char *opt, const char *input, const char *out,
				  const char *code, const char *where)
{
	char *se = NULL;
	int rc = ts_run_ergon(NULL, &se, "analyze", opt, input, "--out", out, NULL);
	if (rc != 1)
		fail_msg("%s %s: exit %d, not 1: %s", opt, input, rc, se ? se : "");
	free(se);
	char *sum = ts_strf("%s/summary.json", out);
	json_t *s = load(sum);
	const json_t *p = json_object_get(s, "power");
	assert_string_equal(json_string_value(json_object_get(p, "integrity")), "invalid");
	assert_string_equal(json_string_value(json_object_get(p, "gate_failure")),
			    "no_stats_window");
	const json_t *is = power_issue(s, code);
	if (is == NULL)
		fail_msg("%s: no %s issue", input, code);
	const char *msg = json_string_value(json_object_get(is, "message"));
	if (strstr(msg, where) == NULL)
		fail_msg("%s: message '%s' does not name '%s'", code, msg, where);
	json_decref(s);
	free(sum);
}

/* Data faults in the recording are issues on an invalid artifact, named by
 * file and line; only I/O errors exit 3 (see usage_and_io_errors). */
static void data_faults_write_an_artifact(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	/* Row 3 (file line 4) starts at 0.4 s, before row 2's end at 1.0 s. */
	char *csv = ts_strf("%s/back.csv", dir);
	const char *text = "t_start_s,t_end_s,i_avg_a,p_avg_w\n"
			   "0.0,0.5,0.5,1.0\n"
			   "0.5,1.0,0.5,1.0\n"
			   "0.4,0.9,0.5,1.0\n";
	assert_int_equal(ts_write_file(csv, text, strlen(text)), 0);
	char *out = ts_strf("%s/back", dir);
	char *where = ts_strf("%s:4", csv);
	assert_fault_artifact("--stats", csv, out, "power.time_backwards", where);
	free(where);
	free(out);
	/* Near miss: the same rows in order are not a fault. */
	char *ok = ts_strf("%s/ok.csv", dir);
	const char *okt = "t_start_s,t_end_s,i_avg_a,p_avg_w\n"
			  "0.0,0.5,0.5,1.0\n"
			  "0.5,1.0,0.5,1.0\n"
			  "1.0,1.5,0.5,1.0\n";
	assert_int_equal(ts_write_file(ok, okt, strlen(okt)), 0);
	out = ts_strf("%s/ok", dir);
	/* No digital column, so no gate window: whole-capture figures only,
	 * degraded, exit 4 (was 0); not invalid as the fault above is. */
	assert_int_equal(ts_run_ergon(NULL, NULL, "analyze", "--stats", ok, "--out", out, NULL), 4);
	char *sum = ts_strf("%s/summary.json", out);
	json_t *s = load(sum);
	assert_null(power_issue(s, "power.time_backwards"));
	assert_null(power_issue(s, "power.recording_unusable"));
	json_decref(s);
	free(sum);
	free(out);
	free(ok);
	/* An empty .jls and one cut inside its header: unusable, not I/O. */
	char *empty = ts_strf("%s/empty.jls", dir);
	assert_int_equal(ts_write_file(empty, "", 0), 0);
	out = ts_strf("%s/empty", dir);
	assert_fault_artifact("--jls", empty, out, "power.recording_unusable", empty);
	free(out);
	char *cut = ts_strf("%s/cut.jls", dir);
	assert_int_equal(ts_write_file(cut, "not a JLS recording at all, 40 bytes..\n", 40), 0);
	out = ts_strf("%s/cut", dir);
	assert_fault_artifact("--jls", cut, out, "power.recording_unusable", cut);
	free(out);
	/* The reference fixture with its 'current' signal renamed 'kurrent'
	 * (payload CRC recomputed, so the file is intact): no usable current. */
	char *fx = ts_fixture("jls/shared_basic.jls");
	size_t flen = 0;
	char *b = ts_read_file(fx, &flen);
	assert_non_null(b);
	int renamed = 0;
	for (size_t off = 32; off + 32 <= flen;) {
		const uint8_t *h = (const uint8_t *)b + off;
		uint32_t plen = (uint32_t)h[20] | (uint32_t)h[21] << 8 | (uint32_t)h[22] << 16 |
				(uint32_t)h[23] << 24;
		size_t span = (size_t)ergon_jls_payload_span(plen);
		char *pl = b + off + 32;
		if (h[16] == ERGON_JLS_TAG_SIGNAL_DEF && plen > 136 &&
		    memcmp(pl + 128, "current", 8) == 0) {
			pl[128] = 'k';
			uint32_t crc = ergon_jls_crc32c(0, pl, plen);
			for (int i = 0; i < 4; i++)
				pl[span - 4 + (size_t)i] = (char)(crc >> (8 * i));
			renamed = 1;
		}
		if (h[16] == ERGON_JLS_TAG_END || off + 32 + span > flen)
			break;
		off += 32 + span;
	}
	assert_true(renamed);
	char *nocur = ts_strf("%s/nocurrent.jls", dir);
	assert_int_equal(ts_write_file(nocur, b, flen), 0);
	out = ts_strf("%s/nocurrent", dir);
	assert_fault_artifact("--jls", nocur, out, "power.recording_unusable", nocur);
	free(out);
	free(nocur);
	free(b);
	free(fx);
	free(cut);
	free(empty);
	free(csv);
	ts_tmpdir_remove(dir);
	free(dir);
}

/* shared_two_windows holds two gate windows (0.6..1.8 s, 2.8..5.2 s); the
 * power firmware drives one. Without a statement in the facts the summed
 * energy (0.0257 + 0.0514 J) / 36 = 2.141 mJ must not be reported. */
static void multiple_gate_windows(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *two = ts_fixture("jls/shared_two_windows.jls");
	char *one = ts_fixture("jls/shared_basic.jls");
	char *facts = write_facts(dir, "f.json", "{\"clean_infer_count\": 36}");
	char *facts2 =
	    write_facts(dir, "f2.json", "{\"clean_infer_count\": 36, \"gate_windows\": 2}");
	const char *jls[3] = {two, one, two};
	const char *fx[3] = {facts, facts, facts2};
	/* The trigger withholds energy per inference the facts ask for:
	 * degraded, exit 4 (was 0); the near misses publish it: exit 0. */
	const int want_exit[3] = {4, 0, 0};
	for (int k = 0; k < 3; k++) {
		char *out = ts_strf("%s/run%d", dir, k);
		assert_int_equal(ts_run_ergon(NULL, NULL, "analyze", "--jls", jls[k], "--facts",
					      fx[k], "--out", out, NULL),
				 want_exit[k]);
		char *sum = ts_strf("%s/summary.json", out);
		json_t *s = load(sum);
		const json_t *p = json_object_get(s, "power");
		const json_t *is = power_issue(s, "power.multiple_gate_windows");
		if (k == 0) {
			/* trigger: two windows seen, one driven */
			assert_non_null(is);
			assert_string_equal(json_string_value(json_object_get(is, "severity")),
					    "warning");
			const json_t *c = json_object_get(is, "context");
			assert_int_equal(json_integer_value(json_object_get(c, "windows_seen")), 2);
			assert_int_equal(json_integer_value(json_object_get(c, "windows_driven")),
					 1);
			assert_true(json_is_null(json_object_get(p, "energy_per_inference_j")));
			assert_true(
			    json_is_true(json_object_get(p, "gated_window_duration_suspect")));
		} else {
			/* near misses: one window; two windows the facts say were driven */
			assert_null(is);
			assert_true(json_is_number(json_object_get(p, "energy_per_inference_j")));
		}
		/* The UTC of sample 0, from the fixtures' expected.json "utc" blocks. */
		assert_string_equal(json_string_value(json_object_get(p, "capture_start_utc")),
				    k == 1 ? "2025-06-02T15:04:05.000000Z"
					   : "2025-06-02T16:00:00.000000Z");
		assert_string_equal(
		    json_string_value(json_object_get(
			json_object_get(json_object_get(s, "provenance"), "recording"),
			"capture_start_utc")),
		    json_string_value(json_object_get(p, "capture_start_utc")));
		json_decref(s);
		free(sum);
		free(out);
	}
	free(facts2);
	free(facts);
	free(one);
	free(two);
	ts_tmpdir_remove(dir);
	free(dir);
}

/* sample_id continuity: 0.5 s packets advance the JS220's 2 MHz sample id
 * by 0.5 x 2e6 = 1,000,000. Line 5 jumps from 2,000,000 to 4,000,000 = two
 * packets' worth, so one packet was dropped. Near miss: +1,400,000 is within
 * the half-packet slack (1.5 x 1,000,000) and is not a drop. */
static void packets_dropped_from_sample_id(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	const char *ids[2] = {"4000000", "3400000"};
	for (int k = 0; k < 2; k++) {
		char *csv = ts_strf("%s/s%d.csv", dir, k);
		char *text = ts_strf("t_start_s,t_end_s,i_avg_a,p_avg_w,sample_id\n"
				     "0.0,0.5,0.5,1.0,0\n"
				     "0.5,1.0,0.5,1.0,1000000\n"
				     "1.0,1.5,0.5,1.0,2000000\n"
				     "2.0,2.5,0.5,1.0,%s\n",
				     ids[k]);
		assert_int_equal(ts_write_file(csv, text, strlen(text)), 0);
		char *out = ts_strf("%s/run%d", dir, k);
		/* No digital column: no gate window, whole-capture figures only:
		 * degraded, exit 4 (was 0). */
		assert_int_equal(
		    ts_run_ergon(NULL, NULL, "analyze", "--stats", csv, "--out", out, NULL), 4);
		char *sum = ts_strf("%s/summary.json", out);
		json_t *s = load(sum);
		const json_t *is = power_issue(s, "power.packets_dropped");
		if (k == 0) {
			assert_non_null(is);
			const char *msg = json_string_value(json_object_get(is, "message"));
			char *where = ts_strf("%s:5:", csv);
			if (strstr(msg, where) == NULL || strstr(msg, "about 1 statistics") == NULL)
				fail_msg("message '%s' lacks '%s' or the count", msg, where);
			free(where);
		} else {
			assert_null(is);
		}
		json_decref(s);
		free(sum);
		free(out);
		free(text);
		free(csv);
	}
	ts_tmpdir_remove(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(analyze_fixture_with_facts),
	    cmocka_unit_test(observer_mismatch_is_an_artifact),
	    cmocka_unit_test(usage_and_io_errors),
	    cmocka_unit_test(stats_csv_with_markers),
	    cmocka_unit_test(hpx_log_as_facts),
	    cmocka_unit_test(clean_window_facts),
	    cmocka_unit_test(data_faults_write_an_artifact),
	    cmocka_unit_test(multiple_gate_windows),
	    cmocka_unit_test(packets_dropped_from_sample_id),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
