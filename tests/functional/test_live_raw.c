/* The raw live capture (ergon_live_raw_capture, include/ergon/live_raw.h)
 * on the ppk2 instrument against the in-process PPK2 protocol simulator,
 * unpaced (the samples carry their own time: device sample index / 100
 * kHz, so nothing here depends on the host's speed or load):
 * - a 1.2 s gate on D2 with a counter gap of 50 samples inside it: the
 *   window's edges stay sample-precise, the lost samples are NaN (never
 *   interpolated) and its energy is the 119,950 samples that came, worked
 *   out by hand from the waveform;
 * - an unplug inside the window: everything read is in the engine, the
 *   capture says the instrument failed, the gate never fell;
 * - the stop flag (SIGINT) ends it at once, keeping what was fed;
 * - a gate that never rises ends at the timeout;
 * - lock-step is refused (a PPK2 has no outputs);
 * - a window drawn while the host's reset still runs: on the samples'
 *   clock (packet_clock, a synthetic instrument) the grace is counted from
 *   the first sample and the window is measured exactly; on the host clock
 *   (a measured instrument) everything read before the reset returned is
 *   discarded, as before. */
#include "ergon/gated.h"
#include "ergon/instrument.h"
#include "ergon/live_raw.h"
#include "test_support.h"
#include "ts_ppk2_sim.h"

#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* One raw14 step: 4 ADC counts of 1.8 V / 163840 (PPK2 protocol facts). */
#define STEP_V (4.0 * 1.8 / 163840.0)
/* By hand on range 2 (10.15 ohm, identity calibration): 30 mA x 10.15 =
 * 0.3045 V = 6929.07 steps -> 6929; 1 mA = 0.01015 V = 230.97 -> 231. */
#define I_HI (6929 * STEP_V / 10.15)
#define I_LO (231 * STEP_V / 10.15)
#define VDD_V 3.3
#define GATE_START 20000u
#define GATE_END 140000u /* exclusive: 120,000 samples = 1.2 s */

static double cur(uint64_t k, void *ctx)
{
	(void)ctx;
	return k >= GATE_START && k < GATE_END ? 0.030 : 0.001;
}

/* One range throughout: no range switch, so the spike filter never acts
 * and the hand figures are the grid currents above. */
static int rng(uint64_t k, void *ctx)
{
	(void)k;
	(void)ctx;
	return 2;
}

static uint8_t logic_d2(uint64_t k, void *ctx)
{
	(void)ctx;
	return k >= GATE_START && k < GATE_END ? 0x04 : 0x00;
}

static uint8_t logic_none(uint64_t k, void *ctx)
{
	(void)k;
	(void)ctx;
	return 0;
}

struct bench {
	struct ts_ppk2_sim *sim;
	struct ergon_instrument *inst;
	struct ergon_gated *g;
};

static void bench_open(struct bench *b, struct ts_ppk2_sim_cfg *c)
{
	const char *path = NULL;
	c->current_a = cur;
	c->range = rng;
	b->sim = ts_ppk2_sim_start(c, &path);
	assert_non_null(b->sim);
	char *spec = ts_strf("ppk2:%s", path);
	const char *kv[] = {"vdd_mv=3300", NULL};
	struct ergon_instrument_options o = {.kv = kv};
	struct ergon_err e = {0};
	if (ergon_instrument_open(spec, &o, &b->inst, &e) != 0)
		fail_msg("open %s: %s", spec, e.msg);
	free(spec);
	struct ergon_gated_config gc = {.min_window_s = 1.0, .sync_input_index = 2};
	assert_int_equal(ergon_gated_new(&gc, &b->g, &e), 0);
}

static void bench_close(struct bench *b)
{
	ergon_gated_free(b->g);
	ergon_instrument_close(b->inst);
	ts_ppk2_sim_stop(b->sim);
}

/* Run the capture; any error fails the test with its message. */
static void capture_ok(struct bench *b, const struct ergon_live_config *lc,
		       struct ergon_live_raw_result *res)
{
	struct ergon_err e = {0};
	if (ergon_live_raw_capture(b->inst, lc, b->g, res, &e) != 0)
		fail_msg("capture: %s", e.msg);
}

static struct ergon_live_config live_cfg(void)
{
	struct ergon_live_config c = {
	    .sync_input_index = 2, .min_window_s = 1.0, .timeout_s = 60.0, .windows = 1};
	return c;
}

static void gap_inside_the_window(void **state)
{
	(void)state;
	struct ts_ppk2_sim_cfg c = {.logic = logic_d2, .n_gaps = 1};
	c.gap_at[0] = 60000;
	/* Under 64: the 6-bit counter sees a loss of k samples only mod 64. */
	c.gap_len[0] = 50;
	struct bench b = {0};
	bench_open(&b, &c);
	struct ergon_live_config lc = live_cfg();
	struct ergon_live_raw_result res;
	struct ergon_err e = {0};
	capture_ok(&b, &lc, &res);
	assert_int_equal(res.end, ERGON_LIVE_WINDOWS);
	assert_int_equal(res.windows_closed, 1);
	assert_int_equal(res.samples_lost, 50);
	assert_int_equal(res.samples_discarded, 0);
	/* It stops on the sample where the gate fell. */
	assert_int_equal(res.samples_fed, GATE_END + 1);
	const struct ergon_gated_result *gr = NULL;
	assert_int_equal(ergon_gated_finish(b.g, &gr, &e), 0);
	assert_int_equal(gr->raw, 1);
	assert_int_equal(gr->window_count, 1);
	assert_int_equal(gr->nan_samples, 50);
	const struct ergon_window_figures *w = &gr->windows[0];
	/* Edges at samples 20000 and 140000 of the stream: 1.2 s, exactly. */
	assert_true(fabs(w->start_s - 0.2) < 1e-12);
	assert_true(fabs(w->duration_s - 1.2) < 1e-12);
	assert_int_equal(w->samples, 120000 - 50);
	/* By hand: 119,950 samples of I_HI at 3.3 V, 10 us each (the floats
	 * the driver hands over: 1e-6 relative). */
	double want_j = 119950.0 * 1e-5 * I_HI * VDD_V;
	if (!(fabs(w->energy_j - want_j) <= 1e-6 * want_j))
		fail_msg("window energy %.9g J, by hand %.9g J", w->energy_j, want_j);
	if (!(fabs(w->avg_current_a - I_HI) < 1e-6 * I_HI))
		fail_msg("avg %.9g integral %.9g I_HI %.9g", w->avg_current_a, w->integral_s, I_HI);
	/* Whole capture: I_LO before the gate, the window, one I_LO sample. */
	double whole_j = (20000.0 + 1.0) * 1e-5 * I_LO * VDD_V + want_j;
	assert_true(fabs(gr->whole.energy_j - whole_j) <= 1e-6 * whole_j);
	/* The driver's own record of the gap, with its sample index. */
	struct ergon_err se = {0};
	assert_int_equal(ergon_instrument_stop(b.inst, &se), 0);
	char *issues = json_dumps(b.inst->issues, 0);
	assert_non_null(strstr(issues, "instrument.samples_dropped"));
	assert_non_null(strstr(issues, "\"sample_index\": 60000"));
	free(issues);
	bench_close(&b);
}

static void unplug_inside_the_window(void **state)
{
	(void)state;
	struct ts_ppk2_sim_cfg c = {.logic = logic_d2, .disconnect_after = 100000};
	struct bench b = {0};
	bench_open(&b, &c);
	struct ergon_live_config lc = live_cfg();
	struct ergon_live_raw_result res;
	struct ergon_err e = {0};
	int rc = ergon_live_raw_capture(b.inst, &lc, b.g, &res, &e);
	assert_int_equal(rc, ERGON_EDEVICE);
	assert_non_null(strstr(e.msg, "disconnected after 100000 samples"));
	assert_int_equal(res.instrument_failed, 1);
	assert_int_equal(res.samples_fed, 100000);
	const struct ergon_gated_result *gr = NULL;
	assert_int_equal(ergon_gated_finish(b.g, &gr, &e), 0);
	/* Nothing measured is lost: all 100,000 samples are in the whole
	 * capture; the window rose and never fell, so it is no window. */
	assert_int_equal(gr->whole.samples, 100000);
	assert_int_equal(gr->window_count, 0);
	assert_int_equal(gr->unterminated, 1);
	double whole_j = (20000.0 * I_LO + 80000.0 * I_HI) * 1e-5 * VDD_V;
	assert_true(fabs(gr->whole.energy_j - whole_j) <= 1e-6 * whole_j);
	char *issues = json_dumps(b.inst->issues, 0);
	assert_non_null(strstr(issues, "instrument.disconnected"));
	free(issues);
	bench_close(&b);
}

static void stop_flag_and_timeout(void **state)
{
	(void)state;
	struct ts_ppk2_sim_cfg c = {.logic = logic_none};
	struct bench b = {0};
	bench_open(&b, &c);
	struct ergon_live_config lc = live_cfg();
	volatile sig_atomic_t stop = 1;
	lc.stop = &stop;
	struct ergon_live_raw_result res;
	struct ergon_err e = {0};
	assert_int_equal(ergon_live_raw_capture(b.inst, &lc, b.g, &res, &e), 0);
	assert_int_equal(res.end, ERGON_LIVE_SIGNAL);
	assert_int_equal(res.windows_closed, 0);
	bench_close(&b);

	/* The gate never rises: the bound ends it, the samples are kept. */
	struct bench b2 = {0};
	bench_open(&b2, &c);
	lc.stop = NULL;
	lc.timeout_s = 0.3;
	assert_int_equal(ergon_live_raw_capture(b2.inst, &lc, b2.g, &res, &e), 0);
	assert_int_equal(res.end, ERGON_LIVE_TIMEOUT);
	assert_true(res.samples_fed > 0);
	assert_int_equal(res.rises, 0);
	const struct ergon_gated_result *gr = NULL;
	assert_int_equal(ergon_gated_finish(b2.g, &gr, &e), 0);
	assert_int_equal(gr->whole.samples, res.samples_fed);
	assert_int_equal(gr->window_count, 0);
	bench_close(&b2);
}

static void lockstep_refused(void **state)
{
	(void)state;
	struct ts_ppk2_sim_cfg c = {.logic = logic_none};
	struct bench b = {0};
	bench_open(&b, &c);
	struct ergon_live_config lc = live_cfg();
	lc.lockstep = 1;
	struct ergon_live_raw_result res;
	struct ergon_err e = {0};
	assert_int_equal(ergon_live_raw_capture(b.inst, &lc, b.g, &res, &e), ERGON_ECONFIG);
	assert_non_null(strstr(e.msg, "no outputs for GO"));
	assert_non_null(strstr(e.msg, "power.lockstep: false"));
	bench_close(&b);
}

#define SENT 150000u /* the stream pauses after these: past GATE_END */

/* A reset that lasts until the simulator has sent SENT samples and the
 * host has read them all: the whole window arrives during the reset.
 * "Read" is the pty's side: the driver may still hold decoded samples the
 * capture has not taken yet, so the reset lasts 0.3 s more, in which the
 * capture's drain takes them (on a loaded host a reset that returned at
 * once left some for after it: fed or cut by the bound, not discarded). */
static int slow_reset(void *ctx, struct ergon_err *err)
{
	struct bench *b = ctx;
	for (int i = 0; i < 6000; i++) {
		if (ts_ppk2_sim_drained(b->sim, SENT)) {
			nanosleep(&(struct timespec){0, 300000000}, NULL);
			return 0;
		}
		nanosleep(&(struct timespec){0, 10000000}, NULL);
	}
	return ergon_err_set(err, ERGON_ETIMEDOUT, "the host never read %u samples", SENT);
}

static void window_during_the_reset(void **state)
{
	(void)state;
	struct ts_ppk2_sim_cfg c = {.logic = logic_d2, .samples = SENT};
	struct bench b = {0};
	bench_open(&b, &c);
	struct ergon_live_config lc = live_cfg();
	lc.reset = slow_reset;
	lc.reset_ctx = &b;
	lc.reset_grace_s = 0.06;
	lc.packet_clock = 1;
	struct ergon_live_raw_result res;
	struct ergon_err e = {0};
	capture_ok(&b, &lc, &res);
	assert_int_equal(res.end, ERGON_LIVE_WINDOWS);
	assert_int_equal(res.windows_closed, 1);
	/* Sample j ends at (j + 1) / 100 kHz: 0 .. 5998 end before 60 ms. */
	assert_int_equal(res.samples_discarded, 5999);
	/* Fed from 5999 through GATE_END, the first low sample. */
	assert_int_equal(res.samples_fed, GATE_END + 1 - 5999);
	const struct ergon_gated_result *gr = NULL;
	assert_int_equal(ergon_gated_finish(b.g, &gr, &e), 0);
	assert_int_equal(gr->window_count, 1);
	const struct ergon_window_figures *w = &gr->windows[0];
	/* The engine's time starts at the first fed sample (stream 5999). */
	assert_true(fabs(w->start_s - (GATE_START - 5999) * 1e-5) < 1e-12);
	assert_true(fabs(w->duration_s - 1.2) < 1e-12);
	assert_int_equal(w->samples, GATE_END - GATE_START);
	double want_j = 120000.0 * 1e-5 * I_HI * VDD_V;
	assert_true(fabs(w->energy_j - want_j) <= 1e-6 * want_j);
	bench_close(&b);

	/* The host's clock (a measured PPK2): what came before the reset
	 * returned is reset noise, all SENT samples of it; then the stream
	 * is paused and the bound ends the capture without a window. */
	struct bench b2 = {0};
	bench_open(&b2, &c);
	lc.reset_ctx = &b2;
	lc.packet_clock = 0;
	lc.timeout_s = 0.3;
	capture_ok(&b2, &lc, &res);
	assert_int_equal(res.end, ERGON_LIVE_TIMEOUT);
	assert_int_equal(res.samples_discarded, SENT);
	assert_int_equal(res.samples_fed, 0);
	assert_int_equal(res.windows_closed, 0);
	bench_close(&b2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(gap_inside_the_window),   cmocka_unit_test(unplug_inside_the_window),
	    cmocka_unit_test(stop_flag_and_timeout),   cmocka_unit_test(lockstep_refused),
	    cmocka_unit_test(window_during_the_reset),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
