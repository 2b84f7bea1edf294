/* The live gated capture (include/ergon/live_gate.h) against the fake
 * bridge's lock-step target (tests/support/bridge_fake.py --lockstep):
 * input 0 glitches for the first 50 ms after the reset, READY (input 1)
 * from 100 ms, the gate rises 20 ms after GO and stays high 1.2 s at
 * 30 mA, 3.3 V (5 mA otherwise): by hand the window holds 0.030 x 3.3 x
 * 1.2 = 0.1188 J, to one 1 ms packet at each edge. */
#include "ergon/gated.h"
#include "ergon/instrument.h"
#include "ergon/live_gate.h"
#include "test_support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct ergon_instrument *open_fake(const char *args)
{
	char spec[1024];
	const char *src = getenv("ERGON_SOURCE_DIR");
	snprintf(spec, sizeof(spec), "bridge:python3 %s/tests/support/bridge_fake.py --realtime %s",
		 src ? src : ".", args);
	struct ergon_instrument *inst = NULL;
	struct ergon_err err = {0};
	if (ergon_instrument_open(spec, NULL, &inst, &err))
		fail_msg("%s: %s", spec, err.msg);
	return inst;
}

static void test_lockstep_window(void **state)
{
	(void)state;
	struct ergon_instrument *inst = open_fake("--lockstep");
	struct ergon_gated_config gc = {.min_window_s = 1.0};
	struct ergon_gated *g = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_gated_new(&gc, &g, &err), 0);
	struct ergon_live_config cfg = {.sync_input_index = 0,
					.state_input_index = 1,
					.go_output_index = 0,
					.lockstep = 1,
					.reset_grace_s = 0.06,
					.timeout_s = 20,
					.windows = 1};
	struct ergon_live_result res;
	int rc = ergon_live_gated_capture(inst, &cfg, g, &res, &err);
	if (rc)
		fail_msg("capture: %s", err.msg);
	assert_int_equal(res.end, ERGON_LIVE_WINDOWS);
	assert_int_equal(res.ready_observed, 1);
	assert_int_equal(res.go_set, 1);
	/* READY rises at 100 ms after the reset (the stream's start), seen on
	 * the first packet ending after it, give or take the pipe's delay. */
	assert_true(res.ready_after_reset_s > 0.09 && res.ready_after_reset_s < 0.5);
	assert_true(res.packets_discarded >= 50); /* the 50 ms of glitches, at least */
	const struct ergon_gated_result *gr = NULL;
	assert_int_equal(ergon_gated_finish(g, &gr, &err), 0);
	/* The glitches fell in the grace period: none reached the engine. */
	assert_int_equal(gr->short_gate_pulses_ignored, 0);
	assert_int_equal(gr->window_count, 1);
	double e = gr->windows[0].energy_j, want = 0.030 * 3.3 * 1.2;
	double u = 2 * 0.001 * 0.030 * 3.3; /* one packet at each edge */
	if (fabs(e - want) > u)
		fail_msg("window energy %.9g J, truth %.9g +- %.3g", e, want, u);
	assert_true(fabs(gr->windows[0].duration_s - 1.2) <= 0.002 + 1e-9);
	ergon_gated_free(g);
	ergon_instrument_close(inst);
}

static void test_ready_never(void **state)
{
	(void)state;
	struct ergon_instrument *inst = open_fake("--lockstep --no-ready");
	struct ergon_gated_config gc = {0};
	struct ergon_gated *g = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_gated_new(&gc, &g, &err), 0);
	struct ergon_live_config cfg = {.state_input_index = 1,
					.lockstep = 1,
					.reset_grace_s = 0.06,
					.ready_timeout_s = 0.5,
					.timeout_s = 20};
	struct ergon_live_result res;
	assert_int_equal(ergon_live_gated_capture(inst, &cfg, g, &res, &err), ERGON_ETIMEDOUT);
	assert_non_null(strstr(err.msg, "READY (input 1) not observed within 0.5 s"));
	assert_int_equal(res.go_set, 0);
	assert_true(res.packets_fed > 100); /* what was seen was still measured */
	ergon_gated_free(g);
	ergon_instrument_close(inst);
}

static void test_lockstep_needs_outputs(void **state)
{
	(void)state;
	struct ergon_instrument *inst = open_fake("--lockstep");
	struct ergon_gated *g = NULL;
	struct ergon_err err = {0};
	struct ergon_gated_config gc = {0};
	assert_int_equal(ergon_gated_new(&gc, &g, &err), 0);
	struct ergon_live_config cfg = {
	    .state_input_index = 1, .go_output_index = 3, .lockstep = 1};
	struct ergon_live_result res;
	assert_int_equal(ergon_live_gated_capture(inst, &cfg, g, &res, &err), ERGON_ECONFIG);
	assert_non_null(strstr(err.msg, "has 2 inputs and 1 outputs"));
	ergon_gated_free(g);
	ergon_instrument_close(inst);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lockstep_window),
	    cmocka_unit_test(test_ready_never),
	    cmocka_unit_test(test_lockstep_needs_outputs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
