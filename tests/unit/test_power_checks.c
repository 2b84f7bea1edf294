/* Every power/profile check: a case that triggers it and a near miss that
 * just does not. Thresholds are from the issue (docs/POWER_CHECKS.md); the
 * expected numbers are worked out by hand in the comments. */
#include "ergon/analyze.h"
#include "ergon/gated.h"
#include "ergon/issue_list.h"
#include "ergon/issues.h"
#include "test_support.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The checks return typed issues (ergon/issue_list.h) and a typed
 * ceiling; these tests read them as the artifact carries them (JSON). */
static void to_json(struct ergon_issue_list *l, json_t *issues)
{
	assert_false(l->oom);
	assert_int_equal(ergon_issue_list_to_json(l, issues), 0);
	ergon_issue_list_cleanup(l);
}

static json_t *check_internal(const struct ergon_power_facts *f, json_t *issues, int *fail)
{
	struct ergon_issue_list l = {0};
	struct ergon_power_ceiling c;
	ergon_power_check_internal(f, &l, fail, &c);
	to_json(&l, issues);
	json_t *j = ergon_power_ceiling_json(&c);
	if (json_is_null(j)) {
		json_decref(j);
		return NULL;
	}
	return j;
}

static int window_check(const uint64_t *deltas, size_t n, uint64_t total_iters, uint64_t ref_cycles,
			json_t *issues)
{
	struct ergon_issue_list l = {0};
	int any = ergon_clean_window_check(deltas, n, total_iters, ref_cycles, &l);
	to_json(&l, issues);
	return any;
}

static int rate_check(double core_hz, double probe_us, uint64_t probe_cycles, json_t *issues)
{
	struct ergon_issue_list l = {0};
	int any = ergon_clean_window_rate_check(core_hz, probe_us, probe_cycles, &l);
	to_json(&l, issues);
	return any;
}

/* One 1 ms-packet gate of gate_s seconds, whole capture lighter. */
static struct ergon_power_gate_view view(double gate_s)
{
	struct ergon_power_gate_view gv;
	memset(&gv, 0, sizeof(gv));
	gv.window_count = 1;
	gv.gate_s = gate_s;
	gv.integral_s = gate_s;
	gv.shortest_integral_s = gate_s;
	gv.gated_avg_current_a = 0.010;
	gv.whole_avg_current_a = 0.005;
	gv.have_whole = 1;
	gv.stats_period_s = 0.001;
	gv.min_window_s = 1.0;
	return gv;
}

/* 100 inferences of 50 ms: expected window 5.000 s. */
static struct ergon_power_facts facts_counted(void)
{
	struct ergon_power_facts f;
	memset(&f, 0, sizeof(f));
	f.have_clean_count = 1;
	f.clean_infer_count = 100;
	f.clean_infer_avg_us = 50000;
	f.probe_kind = ERGON_PROBE_INFER;
	return f;
}

static void with_terminal(struct ergon_power_facts *f, uint64_t elapsed_us)
{
	f->terminal.status = ERGON_TERMINAL_OK;
	f->terminal.requested_count = 100;
	f->terminal.completed_count = 100;
	f->terminal.have_elapsed = 1;
	f->terminal.elapsed_us = elapsed_us;
}

static json_t *eval(const struct ergon_power_facts *f, const struct ergon_power_gate_view *gv,
		    struct ergon_power_verdict *v)
{
	json_t *issues = json_array();
	struct ergon_issue_list l = {0};
	assert_int_equal(ergon_power_evaluate(f, gv, &l, v), 0);
	to_json(&l, issues);
	return issues;
}

static void done(json_t *issues, struct ergon_power_verdict *v)
{
	json_decref(issues);
	(void)v; /* the verdict holds nothing to free */
}

/* Observer: tolerance = 1% of 5.000 s + 2 x 1 ms = 0.052 s. */
static void observer_mismatch_trigger_and_near_miss(void **state)
{
	(void)state;
	struct ergon_power_facts f = facts_counted();
	with_terminal(&f, 5000000);
	struct ergon_power_verdict v;
	struct ergon_power_gate_view gv = view(5.0519);
	json_t *is = eval(&f, &gv, &v);
	assert_false(ergon_issue_has(is, "power.window_observer_mismatch"));
	assert_true(v.observer_checked && v.observer_ok);
	assert_false(v.suspect);
	assert_false(v.omit_per_inference);
	done(is, &v);

	gv = view(5.0521);
	is = eval(&f, &gv, &v);
	assert_true(ergon_issue_has(is, "power.window_observer_mismatch"));
	assert_int_equal(ergon_issues_integrity(is), ERGON_INTEGRITY_INVALID);
	assert_true(v.suspect);
	assert_true(v.omit_per_inference);
	done(is, &v);

	/* Below as well: 4.9481 is 0.0519 short (agrees), 4.9479 is not. */
	gv = view(4.9481);
	is = eval(&f, &gv, &v);
	assert_false(ergon_issue_has(is, "power.window_observer_mismatch"));
	done(is, &v);
	gv = view(4.9479);
	is = eval(&f, &gv, &v);
	assert_true(ergon_issue_has(is, "power.window_observer_mismatch"));
	done(is, &v);
}

/* Confirmed gate: ratio within 15 % is drift (published), beyond it a
 * mismatch warning that stands; both firmware and gate say the same. */
static void reference_drift_and_mismatch_with_observer(void **state)
{
	(void)state;
	struct ergon_power_facts f = facts_counted();
	struct ergon_power_verdict v;
	/* 5.74 s / 5.000 s = 1.148: drift +14.8 %, informational. */
	with_terminal(&f, 5740000);
	struct ergon_power_gate_view gv = view(5.74);
	json_t *is = eval(&f, &gv, &v);
	assert_true(v.have_drift);
	assert_true(fabs(v.drift - 0.148) < 1e-12);
	assert_true(ergon_issue_has(is, "power.gated_window_reference_drift"));
	assert_false(ergon_issue_has(is, "power.gate_duration_mismatch"));
	assert_int_equal(ergon_issues_integrity(is), ERGON_INTEGRITY_VALID);
	assert_false(v.omit_per_inference);
	done(is, &v);
	/* 5.76 / 5.000 = 1.152: beyond 15 %, a warning even with agreement. */
	with_terminal(&f, 5760000);
	gv = view(5.76);
	is = eval(&f, &gv, &v);
	assert_true(ergon_issue_has(is, "power.gate_duration_mismatch"));
	assert_false(v.have_drift);
	assert_false(v.suspect);
	assert_int_equal(ergon_issues_integrity(is), ERGON_INTEGRITY_DEGRADED);
	done(is, &v);
	/* 5.04 / 5.000 = 1.008: drift published, under 1 % no issue at all. */
	with_terminal(&f, 5040000);
	gv = view(5.04);
	is = eval(&f, &gv, &v);
	assert_true(v.have_drift);
	assert_false(ergon_issue_has(is, "power.gated_window_reference_drift"));
	done(is, &v);
}

/* No firmware window: tolerance = max(2 packets, half an inference,
 * 10 % (counted) / 25 % (busy loop) of expected). */
static void reference_check_without_firmware_window(void **state)
{
	(void)state;
	struct ergon_power_facts f = facts_counted();
	struct ergon_power_verdict v;
	/* 10 % of 5.000 s = 0.5 s. */
	struct ergon_power_gate_view gv = view(5.49);
	json_t *is = eval(&f, &gv, &v);
	assert_false(ergon_issue_has(is, "power.gate_duration_mismatch"));
	assert_false(v.suspect);
	done(is, &v);
	gv = view(5.51);
	is = eval(&f, &gv, &v);
	assert_true(ergon_issue_has(is, "power.gate_duration_mismatch"));
	assert_true(v.suspect);
	assert_true(v.omit_per_inference);
	/* The reason names the issue that decided it (its code without
	 * "power."), and the lookup gives that code back. */
	assert_int_equal(v.nreasons, 1);
	assert_string_equal(v.reasons[0], "gate_duration_mismatch");
	const char *const *codes = ergon_power_reason_issues(v.reasons[0]);
	assert_non_null(codes);
	assert_string_equal(codes[0], "power.gate_duration_mismatch");
	assert_null(codes[1]);
	done(is, &v);
	/* Busy loop: 25 % of 5.000 s = 1.25 s. */
	f.probe_kind = ERGON_PROBE_BUSY_LOOP;
	gv = view(6.24);
	is = eval(&f, &gv, &v);
	assert_false(ergon_issue_has(is, "power.gate_duration_mismatch"));
	done(is, &v);
	gv = view(6.26);
	is = eval(&f, &gv, &v);
	assert_true(ergon_issue_has(is, "power.gate_duration_mismatch"));
	done(is, &v);
	/* A terminal that reported incomplete work gives no firmware window
	 * either, and is itself suspect. */
	f = facts_counted();
	with_terminal(&f, 5000000);
	f.terminal.status = ERGON_TERMINAL_INCOMPLETE;
	gv = view(5.51);
	is = eval(&f, &gv, &v);
	assert_true(ergon_issue_has(is, "power.gate_duration_mismatch"));
	assert_false(v.observer_checked);
	done(is, &v);
}

static void reference_tolerance_regimes(void **state)
{
	(void)state;
	/* Two packets dominate: 1 inference of 5 ms, 10 % = 0.5 ms < 2 ms. */
	assert_true(ergon_power_reference_tolerance_s(0.005, 1, 5000, 0.001, ERGON_PROBE_INFER) ==
		    0.002);
	/* Half an inference dominates: 2 x 1 s, 10 % = 0.2 s < 0.5 s. */
	assert_true(ergon_power_reference_tolerance_s(2.0, 2, 1e6, 0.001, ERGON_PROBE_INFER) ==
		    0.5);
	/* ... but only when more than one inference was counted. */
	assert_true(fabs(ergon_power_reference_tolerance_s(1.0, 1, 1e6, 0.001, ERGON_PROBE_INFER) -
			 0.1) < 1e-15);
	/* Cross-boot allowance dominates: 25 % of 4 s for a busy loop. */
	assert_true(ergon_power_reference_tolerance_s(4.0, 1000, 4000, 0.001,
						      ERGON_PROBE_BUSY_LOOP) == 1.0);
}

static void gated_vs_whole_current(void **state)
{
	(void)state;
	struct ergon_power_facts f = facts_counted();
	struct ergon_power_verdict v;
	struct ergon_power_gate_view gv = view(5.0);
	gv.gated_avg_current_a = 0.0100;
	gv.whole_avg_current_a = 0.0099;
	json_t *is = eval(&f, &gv, &v);
	assert_true(v.have_current_ok && v.current_ok);
	assert_false(ergon_issue_has(is, "power.gated_current_not_above_whole"));
	done(is, &v);
	/* Equal is "not above": a hint, not a degradation. */
	gv.gated_avg_current_a = 0.0099;
	is = eval(&f, &gv, &v);
	assert_true(v.have_current_ok && !v.current_ok);
	assert_true(ergon_issue_has(is, "power.gated_current_not_above_whole"));
	assert_int_equal(ergon_issues_integrity(is), ERGON_INTEGRITY_VALID);
	done(is, &v);
}

static void suspect_terminal_and_zero_time(void **state)
{
	(void)state;
	struct ergon_power_facts f = facts_counted();
	struct ergon_power_verdict v;
	struct ergon_power_gate_view gv = view(5.0);
	with_terminal(&f, 5000000);
	json_t *is = eval(&f, &gv, &v);
	assert_false(v.suspect);
	assert_false(ergon_issue_has(is, "power.terminal_incomplete"));
	done(is, &v);
	f.terminal.status = ERGON_TERMINAL_FAILED;
	is = eval(&f, &gv, &v);
	assert_true(v.suspect);
	assert_true(ergon_issue_has(is, "power.terminal_incomplete"));
	done(is, &v);
	f = facts_counted();
	f.zero_time_inference = 1;
	is = eval(&f, &gv, &v);
	assert_true(v.suspect && v.omit_per_inference);
	assert_true(ergon_issue_has(is, "power.device_timing_corrupt"));
	done(is, &v);
}

static void window_clock_frozen_external_and_internal(void **state)
{
	(void)state;
	struct ergon_power_facts f = facts_counted();
	struct ergon_power_verdict v;
	struct ergon_power_gate_view gv = view(5.0);
	/* Near miss: 1 us is a running clock (it then fails the observer). */
	with_terminal(&f, 1);
	json_t *is = eval(&f, &gv, &v);
	assert_false(ergon_issue_has(is, "power.window_clock_frozen"));
	done(is, &v);
	with_terminal(&f, 0);
	is = eval(&f, &gv, &v);
	assert_true(ergon_issue_has(is, "power.window_clock_frozen"));
	assert_int_equal(ergon_issues_integrity(is), ERGON_INTEGRITY_DEGRADED);
	/* The instrument owns the figures: not suspect on this alone. */
	assert_false(v.suspect);
	/* The issue itself says warning in external mode. */
	assert_string_equal(json_string_value(json_object_get(json_array_get(is, 0), "severity")),
			    "warning");
	done(is, &v);
	/* Internal: the same code (the method's one name), now an error. */
	f.internal = 1;
	is = eval(&f, &gv, &v);
	assert_true(ergon_issue_has(is, "power.window_clock_frozen"));
	assert_true(v.suspect);
	assert_int_equal(ergon_issues_integrity(is), ERGON_INTEGRITY_INVALID);
	for (size_t i = 0; i < json_array_size(is); i++) {
		json_t *e = json_array_get(is, i);
		if (strcmp(json_string_value(json_object_get(e, "code")),
			   "power.window_clock_frozen") == 0)
			assert_string_equal(json_string_value(json_object_get(e, "severity")),
					    "error");
	}
	done(is, &v);
	/* Near miss, internal: 1 us is a running clock, no frozen code. */
	with_terminal(&f, 1);
	is = eval(&f, &gv, &v);
	assert_false(ergon_issue_has(is, "power.window_clock_frozen"));
	done(is, &v);
}

static void gate_below_minimum(void **state)
{
	(void)state;
	struct ergon_power_facts f = facts_counted();
	struct ergon_power_verdict v;
	struct ergon_power_gate_view gv = view(5.0);
	gv.shortest_integral_s = 1.0;
	json_t *is = eval(&f, &gv, &v);
	assert_false(ergon_issue_has(is, "power.gate_below_minimum"));
	done(is, &v);
	gv.shortest_integral_s = 0.999;
	is = eval(&f, &gv, &v);
	assert_true(ergon_issue_has(is, "power.gate_below_minimum"));
	assert_int_equal(ergon_issues_integrity(is), ERGON_INTEGRITY_INVALID);
	assert_true(v.suspect);
	done(is, &v);
}

static struct ergon_power_facts internal_facts(void)
{
	struct ergon_power_facts f = facts_counted();
	f.internal = 1;
	with_terminal(&f, 5000000);
	strcpy(f.terminal.source, "ina228");
	f.terminal.have_energy = 1;
	f.terminal.have_charge = 1;
	f.terminal.energy_nj = 90123456;
	f.terminal.charge_nc = 50000000;
	return f;
}

/* count x reference = 100 x 50 ms = 5 s; 25 % = 1.25 s. */
static void internal_window_clock_mismatch(void **state)
{
	(void)state;
	struct ergon_power_facts f = internal_facts();
	int fail;
	json_t *is = json_array();
	f.terminal.elapsed_us = 6249900;
	json_decref(check_internal(&f, is, &fail));
	assert_false(ergon_issue_has(is, "power.window_clock_mismatch"));
	f.terminal.elapsed_us = 6250100;
	json_decref(check_internal(&f, is, &fail));
	assert_true(ergon_issue_has(is, "power.window_clock_mismatch"));
	json_decref(is);
	is = json_array();
	f.terminal.elapsed_us = 3749900; /* 1.2501 s short */
	json_decref(check_internal(&f, is, &fail));
	assert_true(ergon_issue_has(is, "power.window_clock_mismatch"));
	json_decref(is);
}

/* Host envelope 10 s: slack max(0.25 s, 2 % = 0.2 s) = 0.25 s; ceiling
 * 10.25 s. The ceiling object is written healthy or not. */
static void internal_window_clock_ceiling(void **state)
{
	(void)state;
	struct ergon_power_facts f = internal_facts();
	f.host_envelope_s = 10.0;
	f.clean_infer_avg_us = 0; /* keep the mismatch check out of this test */
	int fail;
	json_t *is = json_array();
	f.terminal.elapsed_us = 10249900;
	json_t *c = check_internal(&f, is, &fail);
	assert_non_null(c);
	assert_false(ergon_issue_has(is, "power.window_clock_exceeds_host_time"));
	assert_true(json_real_value(json_object_get(c, "slack_s")) == 0.25);
	assert_true(fabs(json_real_value(json_object_get(c, "ratio")) - 1.02499) < 1e-12);
	assert_int_equal(json_integer_value(json_object_get(c, "elapsed_us")), 10249900);
	json_decref(c);
	f.terminal.elapsed_us = 10250100;
	c = check_internal(&f, is, &fail);
	assert_true(ergon_issue_has(is, "power.window_clock_exceeds_host_time"));
	json_decref(c);
	/* 100 s envelope: slack is 2 % = 2 s. */
	json_decref(is);
	is = json_array();
	f.host_envelope_s = 100.0;
	f.terminal.elapsed_us = 101999000;
	c = check_internal(&f, is, &fail);
	assert_false(ergon_issue_has(is, "power.window_clock_exceeds_host_time"));
	assert_true(json_real_value(json_object_get(c, "slack_s")) == 2.0);
	json_decref(c);
	/* The ceiling is there on every internal run: a record without
	 * elapsed_us, and no record at all, give nulls and the reason. */
	f.terminal.have_elapsed = 0;
	c = check_internal(&f, is, &fail);
	assert_non_null(c);
	assert_true(json_is_null(json_object_get(c, "elapsed_us")));
	assert_true(json_is_null(json_object_get(c, "ratio")));
	assert_true(json_real_value(json_object_get(c, "host_envelope_s")) == 100.0);
	assert_string_equal(json_string_value(json_object_get(c, "reason")),
			    "record_lacks_elapsed_us");
	json_decref(c);
	f.terminal.status = ERGON_TERMINAL_NONE;
	c = check_internal(&f, is, &fail);
	assert_non_null(c);
	assert_true(json_is_null(json_object_get(c, "elapsed_s")));
	assert_string_equal(json_string_value(json_object_get(c, "reason")), "no_terminal_record");
	json_decref(c);
	json_decref(is);
}

static void internal_zero_energy_and_charge(void **state)
{
	(void)state;
	struct ergon_power_facts f = internal_facts();
	int fail;
	json_t *is = json_array();
	f.terminal.energy_nj = 1;
	f.terminal.charge_nc = 1;
	json_decref(check_internal(&f, is, &fail));
	assert_false(fail);
	assert_int_equal(json_array_size(is), 0);
	f.terminal.energy_nj = 0;
	f.terminal.charge_nc = 0;
	json_decref(check_internal(&f, is, &fail));
	assert_true(fail);
	assert_true(ergon_issue_has(is, "power.zero_energy_and_charge"));
	assert_false(ergon_issue_has(is, "power.zero_charge"));
	json_decref(is);
	/* Energy without charge: the reversed-input hint. */
	is = json_array();
	f.terminal.energy_nj = 100;
	f.terminal.charge_nc = 0;
	json_decref(check_internal(&f, is, &fail));
	assert_true(fail);
	assert_true(ergon_issue_has(is, "power.zero_charge"));
	json_t *m = json_object_get(json_array_get(is, 0), "message");
	assert_non_null(strstr(json_string_value(m), "IN+ and IN-"));
	json_decref(is);
	/* The firmware says it clamped a negative CHARGE: the reversed hint. */
	is = json_array();
	f.terminal.have_charge_clamped = 1;
	f.terminal.charge_clamped = 1;
	json_decref(check_internal(&f, is, &fail));
	assert_true(fail);
	m = json_object_get(json_array_get(is, 0), "message");
	assert_non_null(strstr(json_string_value(m), "IN+ and IN-"));
	json_decref(is);
	/* ... and says it did not: a true zero net charge, no reversed hint. */
	is = json_array();
	f.terminal.charge_clamped = 0;
	json_decref(check_internal(&f, is, &fail));
	assert_true(fail);
	assert_true(ergon_issue_has(is, "power.zero_charge"));
	m = json_object_get(json_array_get(is, 0), "message");
	assert_null(strstr(json_string_value(m), "reversed"));
	assert_non_null(strstr(json_string_value(m), "not clamped"));
	json_decref(is);
}

/* Issue 30, case 9: on an internal run the on-board INA228 is the
 * measurement of record, so a record without a measurement, or an
 * ina228_arm / ina228_read failure, fails the run (power.ina228_failed,
 * an error; per-inference figures withheld with a reason). Before, the
 * first was valid with 0 issues and the others a warning. The near misses:
 * a healthy record, a failure in another phase (the terminal check's
 * warning, as before), and the same INA228 phases on an external run
 * (the INA228 is a bystander there). */
static void internal_ina228_failures_fail_the_run(void **state)
{
	(void)state;
	struct ergon_power_facts f = internal_facts();
	struct ergon_power_verdict v;
	struct ergon_power_gate_view gv = view(5.0);
	int fail;
	json_t *is = json_array();
	json_decref(check_internal(&f, is, &fail));
	assert_false(fail);
	assert_false(ergon_issue_has(is, "power.ina228_failed"));
	json_decref(is);
	/* Status ok, no measurement in the record. */
	f.terminal.have_energy = 0;
	f.terminal.have_charge = 0;
	is = eval(&f, &gv, &v);
	assert_true(ergon_issue_has(is, "power.ina228_failed"));
	assert_int_equal(ergon_issues_integrity(is), ERGON_INTEGRITY_INVALID);
	assert_true(v.omit_per_inference);
	int said = 0;
	for (size_t k = 0; k < v.nreasons; k++)
		said |= strcmp(v.reasons[k], "ina228_measurement_failed") == 0;
	assert_true(said);
	done(is, &v);
	/* Arming and reading failures (the virtual bench's ina228_arm_fails
	 * and ina228_read_fails: error 3, i2c). */
	static const char *const phases[] = {"ina228_arm", "ina228_read"};
	for (size_t k = 0; k < 2; k++) {
		f = internal_facts();
		f.terminal.status = ERGON_TERMINAL_FAILED;
		snprintf(f.terminal.final_phase, sizeof f.terminal.final_phase, "%s", phases[k]);
		f.terminal.error_code = 3;
		f.terminal.have_energy = k == 0 ? 0 : 1; /* arm: none; read: a stale one */
		is = eval(&f, &gv, &v);
		assert_true(ergon_issue_has(is, "power.ina228_failed"));
		assert_int_equal(ergon_issues_integrity(is), ERGON_INTEGRITY_INVALID);
		char *want = ts_strf("failed in phase %s (error 3", phases[k]);
		int found = 0;
		for (size_t i = 0; i < json_array_size(is); i++)
			found |= strstr(json_string_value(
					    json_object_get(json_array_get(is, i), "message")),
					want) != NULL;
		assert_true(found);
		free(want);
		done(is, &v);
		/* External: a bystander's failure is the terminal's warning. */
		f.internal = 0;
		is = eval(&f, &gv, &v);
		assert_false(ergon_issue_has(is, "power.ina228_failed"));
		assert_true(ergon_issue_has(is, "power.terminal_incomplete"));
		done(is, &v);
	}
	/* Another phase failed on an internal run with a measurement: the
	 * terminal check's warning only. */
	f = internal_facts();
	f.terminal.status = ERGON_TERMINAL_FAILED;
	snprintf(f.terminal.final_phase, sizeof f.terminal.final_phase, "gate_low");
	is = eval(&f, &gv, &v);
	assert_false(ergon_issue_has(is, "power.ina228_failed"));
	assert_true(ergon_issue_has(is, "power.terminal_incomplete"));
	done(is, &v);
}

static void accumulator_overflow_record_vs_bystander(void **state)
{
	(void)state;
	struct ergon_power_facts f = internal_facts();
	struct ergon_power_verdict v;
	struct ergon_power_gate_view gv = view(5.0);
	json_t *is = eval(&f, &gv, &v);
	assert_false(ergon_issue_has(is, "power.accumulator_overflow"));
	done(is, &v);
	f.terminal.overflow = 1;
	is = eval(&f, &gv, &v);
	assert_true(ergon_issue_has(is, "power.accumulator_overflow"));
	assert_int_equal(ergon_issues_integrity(is), ERGON_INTEGRITY_INVALID);
	assert_true(v.omit_per_inference);
	done(is, &v);
	/* Bystander to an external capture: a warning, figures stand. */
	f.internal = 0;
	is = eval(&f, &gv, &v);
	assert_false(ergon_issue_has(is, "power.accumulator_overflow"));
	assert_true(ergon_issue_has(is, "power.accumulator_overflow_bystander"));
	assert_int_equal(ergon_issues_integrity(is), ERGON_INTEGRITY_DEGRADED);
	assert_false(v.omit_per_inference);
	done(is, &v);
}

/* ref 8000 cycles: partial floor 1000. */
static void clean_window_stalled(void **state)
{
	(void)state;
	json_t *is = json_array();
	uint64_t ok[] = {8000, 1000, 8000, 8000};
	assert_int_equal(window_check(ok, 4, 4, 8000, is), 0);
	assert_int_equal(json_array_size(is), 0);
	uint64_t bad[] = {8000, 0, 999, 8000};
	assert_int_equal(window_check(bad, 4, 4, 8000, is), 1);
	json_t *c = json_object_get(json_array_get(is, 0), "context");
	assert_int_equal(json_integer_value(json_object_get(c, "stalled_iters")), 1);
	assert_int_equal(json_integer_value(json_object_get(c, "partial_iters")), 1);
	assert_int_equal(json_integer_value(json_object_get(c, "total_iters")), 4);
	assert_true(json_real_value(json_object_get(c, "affected_fraction")) == 0.5);
	/* (1 + 0.875) / 4 */
	assert_true(json_real_value(json_object_get(c, "understatement_lower_bound")) == 0.46875);
	assert_int_equal(json_integer_value(json_object_get(c, "ref_cycles")), 8000);
	assert_null(json_object_get(c, "counts_are_inconsistent"));
	assert_null(json_object_get(c, "total_is_unknown"));
	assert_null(json_object_get(c, "partial_check_inoperative"));
	json_decref(is);
	/* Only when they apply: a total that does not match, an unknown total. */
	is = json_array();
	window_check(bad, 4, 3, 8000, is);
	c = json_object_get(json_array_get(is, 0), "context");
	assert_true(json_is_true(json_object_get(c, "counts_are_inconsistent")));
	json_decref(is);
	is = json_array();
	window_check(bad, 4, 0, 8000, is);
	c = json_object_get(json_array_get(is, 0), "context");
	assert_true(json_is_true(json_object_get(c, "total_is_unknown")));
	assert_int_equal(json_integer_value(json_object_get(c, "total_iters")), 4);
	json_decref(is);
}

static void clean_window_check_inoperative(void **state)
{
	(void)state;
	json_t *is = json_array();
	uint64_t d[] = {8, 8};
	/* ref 8: floor 1, operative. */
	assert_int_equal(window_check(d, 2, 2, 8, is), 0);
	assert_int_equal(json_array_size(is), 0);
	/* ref 7: floor 0, silence is not health. */
	assert_int_equal(window_check(d, 2, 2, 7, is), 1);
	assert_true(ergon_issue_has(is, "profile.clean_window_check_inoperative"));
	json_decref(is);
	/* With a stall too, the stalled issue flags the inoperative partial check. */
	is = json_array();
	uint64_t s[] = {0, 8};
	window_check(s, 2, 2, 7, is);
	json_t *c = json_object_get(json_array_get(is, 0), "context");
	assert_true(json_is_true(json_object_get(c, "partial_check_inoperative")));
	json_decref(is);
}

/* 100 MHz x 100 us = 10000 cycles; half is 5000. */
static void clean_window_clock_rate_low(void **state)
{
	(void)state;
	json_t *is = json_array();
	assert_int_equal(rate_check(100e6, 100, 5000, is), 0);
	assert_int_equal(json_array_size(is), 0);
	assert_int_equal(rate_check(100e6, 100, 4999, is), 1);
	assert_true(ergon_issue_has(is, "profile.clean_window_clock_rate_low"));
	json_decref(is);
}

/* Every reason the checks can give that an issue decides maps to
 * registered codes, so the terminal's withheld line and
 * per_inference_omitted_issues name codes docs/ISSUES.md lists; the
 * reasons no issue decides map to none. */
static void reasons_name_registered_codes(void **state)
{
	(void)state;
	static const char *const decided[] = {"window_clock_frozen",
					      "ina228_measurement_failed",
					      "terminal_failed_or_incomplete",
					      "device_timing_corrupt",
					      "multiple_gate_windows",
					      "gate_below_minimum",
					      "window_observer_mismatch",
					      "gate_duration_mismatch",
					      "no_gate_window",
					      "accumulator_inconsistent",
					      "recording_implausible"};
	for (size_t i = 0; i < sizeof decided / sizeof decided[0]; i++) {
		const char *const *c = ergon_power_reason_issues(decided[i]);
		if (c == NULL || c[0] == NULL)
			fail_msg("reason %s names no issue", decided[i]);
		for (size_t j = 0; c[j] != NULL; j++)
			if (ergon_issue_severity(c[j]) == 0)
				fail_msg("reason %s: %s is not a registered code", decided[i],
					 c[j]);
	}
	assert_string_equal(ergon_power_reason_issues("multiple_gate_windows")[0],
			    "power.multiple_gate_windows");
	assert_null(ergon_power_reason_issues("no_clean_inference_count"));
	assert_null(ergon_power_reason_issues("busy_loop_probe"));
	assert_null(ergon_power_reason_issues("reference_check_failed"));
	assert_null(ergon_power_reason_issues(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(observer_mismatch_trigger_and_near_miss),
	    cmocka_unit_test(reference_drift_and_mismatch_with_observer),
	    cmocka_unit_test(reference_check_without_firmware_window),
	    cmocka_unit_test(reasons_name_registered_codes),
	    cmocka_unit_test(reference_tolerance_regimes),
	    cmocka_unit_test(gated_vs_whole_current),
	    cmocka_unit_test(suspect_terminal_and_zero_time),
	    cmocka_unit_test(window_clock_frozen_external_and_internal),
	    cmocka_unit_test(gate_below_minimum),
	    cmocka_unit_test(internal_window_clock_mismatch),
	    cmocka_unit_test(internal_window_clock_ceiling),
	    cmocka_unit_test(internal_zero_energy_and_charge),
	    cmocka_unit_test(internal_ina228_failures_fail_the_run),
	    cmocka_unit_test(accumulator_overflow_record_vs_bystander),
	    cmocka_unit_test(clean_window_stalled),
	    cmocka_unit_test(clean_window_check_inoperative),
	    cmocka_unit_test(clean_window_clock_rate_low),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
