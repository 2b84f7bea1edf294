/* The clean window on a scripted HAL: auto mode and its clamps, fixed
 * mode, the busy_loop probe, the trace, the bounded drain wait and a
 * frozen clock. Time advances only when the fake says so, so every count
 * below is worked out by hand. */
#include "ergon/ert_hpx.h"
#include "ergon/ert_profile.h"
#include "ergon/ert_window.h"
#include "test_support.h"

#include <stdint.h>
#include <string.h>

struct fake {
	uint32_t now_us;
	int frozen;
	uint32_t infer_us; /* each inference advances the clock this much */
	unsigned infers;
	unsigned delays;
	uint64_t delayed_us;
	unsigned pending_polls; /* tx_pending reports bytes this many times */
	char out[8192];
	size_t out_len;
};

static int f_clock(void *ctx, uint32_t *us)
{
	struct fake *f = ctx;
	*us = f->frozen ? 0 : f->now_us;
	return 0;
}

static int f_delay(void *ctx, uint32_t us)
{
	struct fake *f = ctx;
	f->delays++;
	f->delayed_us += us;
	f->now_us += us;
	return 0;
}

static int f_pending(void *ctx, size_t *n)
{
	struct fake *f = ctx;
	*n = f->pending_polls > 0 ? 64 : 0;
	if (f->pending_polls > 0 && f->pending_polls != UINT32_MAX)
		f->pending_polls--;
	return 0;
}

static int f_write(void *ctx, const char *d, size_t n)
{
	struct fake *f = ctx;
	if (f->out_len + n >= sizeof f->out)
		return -1;
	memcpy(f->out + f->out_len, d, n);
	f->out_len += n;
	f->out[f->out_len] = '\0';
	return 0;
}

static int f_infer(void *user)
{
	struct fake *f = user;
	f->infers++;
	f->now_us += f->infer_us;
	return 0;
}

static struct ert_hal hal_for(struct fake *f)
{
	return (struct ert_hal){.ctx = f,
				.clock_us = f_clock,
				.delay_us = f_delay,
				.tx_pending = f_pending,
				.write = f_write};
}

static void auto_mode_and_its_clamps(void **state)
{
	(void)state;
	struct fake f = {.infer_us = 100};
	struct ert_hal hal = hal_for(&f);
	struct ert_workload w = {f_infer, &f};
	struct ert_window_result r;
	/* 1 ms target at 100 us each: the 10th inference reaches it. */
	struct ert_window_config c = {
	    .mode = ERT_WINDOW_AUTO, .window_target_ms = 1, .window_min = 3, .window_max = 100};
	assert_int_equal(ert_window_run(&hal, &c, &w, NULL, &r, NULL), ERT_OK);
	assert_int_equal(r.completed, 10);
	assert_int_equal(r.elapsed_us, 1000);
	assert_int_equal(r.requested, 100);
	/* No cycle counter: no stalled/partial statistics, no reference. */
	assert_int_equal(r.have_cycles, 0);
	/* Clamped by window_max: 10 ms would need 100, max is 5. */
	c.window_target_ms = 10;
	c.window_max = 5;
	assert_int_equal(ert_window_run(&hal, &c, &w, NULL, &r, NULL), ERT_OK);
	assert_int_equal(r.completed, 5);
	assert_int_equal(r.elapsed_us, 500);
	/* Clamped by window_min: 1 ms is reached at 10, min is 20. */
	c.window_target_ms = 1;
	c.window_min = 20;
	c.window_max = 100;
	assert_int_equal(ert_window_run(&hal, &c, &w, NULL, &r, NULL), ERT_OK);
	assert_int_equal(r.completed, 20);
}

static void fixed_mode_and_busy_loop(void **state)
{
	(void)state;
	struct fake f = {.infer_us = 250};
	struct ert_hal hal = hal_for(&f);
	struct ert_workload w = {f_infer, &f};
	struct ert_window_result r;
	struct ert_window_config c = {.mode = ERT_WINDOW_FIXED, .iterations = 7};
	assert_int_equal(ert_window_run(&hal, &c, &w, NULL, &r, NULL), ERT_OK);
	assert_int_equal(r.completed, 7);
	assert_int_equal(r.elapsed_us, 1750);
	assert_int_equal(f.infers, 7);
	/* busy_loop: a calibrated spin (delay_us) instead of inference; the
	 * workload is never called. */
	f.infers = 0;
	f.delays = 0;
	c.busy_loop = 1;
	c.busy_loop_us = 40;
	assert_int_equal(ert_window_run(&hal, &c, NULL, NULL, &r, NULL), ERT_OK);
	assert_int_equal(f.infers, 0);
	assert_int_equal(f.delays, 7);
	assert_int_equal(r.elapsed_us, 280);
}

static void trace_prints_a_line_per_iteration(void **state)
{
	(void)state;
	struct fake f = {.infer_us = 10};
	struct ert_hal hal = hal_for(&f);
	struct ert_workload w = {f_infer, &f};
	struct ert_window_result r;
	struct ert_hpx e;
	assert_int_equal(ert_hpx_init(&e, &hal), ERT_OK);
	struct ert_window_config c = {.mode = ERT_WINDOW_FIXED, .iterations = 3, .trace = 1};
	assert_int_equal(ert_window_run(&hal, &c, &w, NULL, &r, &e), ERT_OK);
	/* The method's trace line, HPX_CLEAN_ITER=<n>. */
	assert_string_equal(f.out, "HPX_CLEAN_ITER=1\n"
				   "HPX_CLEAN_ITER=2\n"
				   "HPX_CLEAN_ITER=3\n");
}

static void drain_wait_is_bounded_and_reported(void **state)
{
	(void)state;
	struct fake f = {.infer_us = 10, .pending_polls = 3};
	struct ert_hal hal = hal_for(&f);
	struct ert_workload w = {f_infer, &f};
	struct ert_window_result r;
	struct ert_window_config c = {
	    .mode = ERT_WINDOW_FIXED, .iterations = 1, .drain_wait_max_us = 1000};
	/* Three polls see bytes, 100 us apart; the fourth sees none. */
	assert_int_equal(ert_window_run(&hal, &c, &w, NULL, &r, NULL), ERT_OK);
	assert_int_equal(r.drain_waited_us, 300);
	assert_int_equal(r.drain_timed_out, 0);
	/* A transport that never drains: the wait stops past 1000 us. */
	f.pending_polls = UINT32_MAX;
	assert_int_equal(ert_window_run(&hal, &c, &w, NULL, &r, NULL), ERT_OK);
	assert_int_equal(r.drain_timed_out, 1);
	assert_int_equal(r.drain_waited_us, 1100);
	assert_int_equal(r.completed, 1);
}

static void frozen_clock_is_bounded_and_refused(void **state)
{
	(void)state;
	struct fake f = {.infer_us = 100, .frozen = 1};
	struct ert_hal hal = hal_for(&f);
	struct ert_workload w = {f_infer, &f};
	struct ert_window_result r;
	/* The target is never reached: window_max ends it, and 0 us for 50
	 * inferences is refused. */
	struct ert_window_config c = {
	    .mode = ERT_WINDOW_AUTO, .window_target_ms = 5, .window_min = 1, .window_max = 50};
	assert_int_equal(ert_window_run(&hal, &c, &w, NULL, &r, NULL), ERT_E_CLOCK);
	assert_int_equal(r.completed, 50);
	assert_int_equal(r.elapsed_us, 0);
}

/* Heartbeats every M ms in the profile flow: 400 us per inference and a
 * 1 ms period give one heartbeat, after the 3rd iteration (1200 us since
 * the last one); the 4th and 5th reach only 400 and 800 us after it. */
static void profile_heartbeat_every_ms(void **state)
{
	(void)state;
	struct fake f = {.infer_us = 400};
	struct ert_hal hal = hal_for(&f);
	struct ert_workload w = {f_infer, &f};
	static struct ert_layers L;
	struct ert_profile_config cfg = {.iterations = 5, .heartbeat_every_ms = 1};
	struct ert_profile_stats st;
	assert_int_equal(ert_profile_run(&hal, &cfg, &w, &L, &st), ERT_OK);
	const char *hb = strstr(f.out, "HPX_HEARTBEAT infer");
	assert_non_null(hb);
	assert_true(strncmp(hb, "HPX_HEARTBEAT infer iters=3\n", 28) == 0);
	assert_null(strstr(hb + 1, "HPX_HEARTBEAT infer"));
	assert_int_equal(st.profiled_iters, 5);
	assert_int_equal(st.profiled_us, 2000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(auto_mode_and_its_clamps),
	    cmocka_unit_test(fixed_mode_and_busy_loop),
	    cmocka_unit_test(trace_prints_a_line_per_iteration),
	    cmocka_unit_test(drain_wait_is_bounded_and_reported),
	    cmocka_unit_test(frozen_clock_is_bounded_and_refused),
	    cmocka_unit_test(profile_heartbeat_every_ms),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
