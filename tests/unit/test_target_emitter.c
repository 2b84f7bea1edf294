/* The target runtime's formatter and HPX emitter on the host build, and
 * the configuration checks that must fail before anything runs. */
#include "ergon/ert_fmt.h"
#include "ergon/ert_hpx.h"
#include "ergon/ert_profile.h"
#include "ergon/ert_sync.h"
#include "ergon/ert_window.h"
#include "test_support.h"

#include <stdint.h>
#include <string.h>

struct sink {
	char data[4096];
	size_t len;
	size_t fail_after; /* 0: never */
	unsigned calls;
};

static int sink_write(void *ctx, const char *d, size_t n)
{
	struct sink *s = ctx;
	s->calls++;
	if (s->fail_after > 0 && s->len + n > s->fail_after)
		return -1;
	if (s->len + n >= sizeof s->data)
		return -1;
	memcpy(s->data + s->len, d, n);
	s->len += n;
	s->data[s->len] = '\0';
	return 0;
}

static int t_clock(void *ctx, uint32_t *us)
{
	(void)ctx;
	static uint32_t t;
	*us = t += 7;
	return 0;
}

static int t_delay(void *ctx, uint32_t us)
{
	(void)ctx;
	(void)us;
	return 0;
}

static void integers_and_bounds(void **state)
{
	(void)state;
	char mem[32];
	struct ert_buf b;
	ert_buf_init(&b, mem, sizeof mem);
	ert_buf_u64(&b, 0);
	ert_buf_char(&b, ' ');
	ert_buf_u64(&b, UINT64_MAX);
	assert_string_equal(ert_buf_cstr(&b), "0 18446744073709551615");
	ert_buf_reset(&b);
	ert_buf_i64(&b, INT64_MIN);
	assert_string_equal(ert_buf_cstr(&b), "-9223372036854775808");
	ert_buf_reset(&b);
	ert_buf_i64(&b, -42);
	assert_string_equal(ert_buf_cstr(&b), "-42");
	assert_int_equal(b.overflow, 0);
	/* Capacity 4 holds 3 characters and the NUL; the rest is dropped. */
	char small[4];
	ert_buf_init(&b, small, sizeof small);
	ert_buf_str(&b, "hello");
	assert_string_equal(ert_buf_cstr(&b), "hel");
	assert_int_equal(b.overflow, 1);
}

static void lines_follow_the_wire_registry(void **state)
{
	(void)state;
	struct sink s = {0};
	struct ert_hal hal = {.ctx = &s, .write = sink_write};
	struct ert_hpx e;
	assert_int_equal(ert_hpx_init(&e, &hal), ERT_OK);
	assert_int_equal(ert_hpx_meta_u(&e, HPX_KEY_VERSION, 1), ERT_OK);
	assert_int_equal(ert_hpx_marker_u(&e, HPX_TOK_ITER_PREFIX, 7), ERT_OK);
	assert_int_equal(ert_hpx_marker(&e, HPX_TOK_PRESET_PREFIX, "cache"), ERT_OK);
	assert_int_equal(ert_hpx_heartbeat(&e, HPX_HB_INFER, HPX_HB_KEY_ITERS, 2), ERT_OK);
	assert_int_equal(ert_hpx_line(&e, HPX_TOK_END), ERT_OK);
	assert_string_equal(s.data, "HPX_VERSION=1\n"
				    "--- HPX_ITER 7 ---\n"
				    "--- HPX_PRESET cache ---\n"
				    "HPX_HEARTBEAT infer iters=2\n"
				    "--- HPX_END ---\n");
	assert_int_equal(e.bytes_written, strlen(s.data));
}

static void transport_failure_is_sticky_and_never_retried(void **state)
{
	(void)state;
	struct sink s = {.fail_after = 20};
	struct ert_hal hal = {.ctx = &s, .write = sink_write};
	struct ert_hpx e;
	assert_int_equal(ert_hpx_init(&e, &hal), ERT_OK);
	assert_int_equal(ert_hpx_line(&e, "0123456789"), ERT_OK); /* 11 bytes */
	assert_int_equal(ert_hpx_line(&e, "0123456789"), ERT_E_TRANSPORT);
	unsigned calls = s.calls;
	assert_int_equal(ert_hpx_line(&e, "x"), ERT_E_TRANSPORT);
	assert_int_equal(ert_hpx_meta_u(&e, "K", 1), ERT_E_TRANSPORT);
	/* The dead transport is not called again: the target cannot hang. */
	assert_int_equal(s.calls, calls);
	/* No transport at all. */
	struct ert_hal none = {0};
	assert_int_equal(ert_hpx_init(&e, &none), ERT_E_UNSUPPORTED);
}

static void line_too_long_is_refused_not_truncated(void **state)
{
	(void)state;
	struct sink s = {0};
	struct ert_hal hal = {.ctx = &s, .write = sink_write};
	struct ert_hpx e;
	char big[ERT_HPX_LINE_MAX + 10];
	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	assert_int_equal(ert_hpx_init(&e, &hal), ERT_OK);
	assert_int_equal(ert_hpx_line(&e, big), ERT_E_CONFIG);
	assert_int_equal(s.len, 0);
}

static int never_infer(void *user)
{
	(void)user;
	fail_msg("a refused configuration must not run the workload");
	return -1;
}

static void bad_configurations_fail_before_output(void **state)
{
	(void)state;
	struct sink s = {0};
	struct ert_hal hal = {.ctx = &s,
			      .write = sink_write,
			      .clock_us = t_clock,
			      .delay_us = t_delay,
			      .max_gpio_pin = 8};
	const struct ert_workload work = {never_infer, NULL};
	struct ert_window_config w = {
	    .mode = ERT_WINDOW_AUTO, .window_target_ms = 10, .window_min = 50, .window_max = 10};
	assert_int_equal(ert_window_validate(&w), ERT_E_CONFIG); /* min > max */
	w.window_min = 5;
	assert_int_equal(ert_window_validate(&w), ERT_OK);
	struct ert_window_config fixed0 = {.mode = ERT_WINDOW_FIXED, .iterations = 0};
	assert_int_equal(ert_window_validate(&fixed0), ERT_E_CONFIG);

	/* Five counters cannot fit one pass of four. */
	struct ert_preset p = {.name = "too_many", .n_events = 5};
	struct ert_profile_config cfg = {.iterations = 1, .presets = &p, .n_presets = 1};
	static struct ert_layers L;
	assert_int_equal(ert_profile_run(&hal, &cfg, &work, &L, NULL), ERT_E_CONFIG);
	/* Nothing ran; the only output says why, naming the preset. */
	assert_string_equal(s.data, "HPX_ERROR config: preset too_many: more counters than one "
				    "pass holds (4); split the preset as the host's pass plan "
				    "does\n");
	/* Window min > max inside a profile config is refused the same way. */
	s.len = 0;
	cfg.n_presets = 0;
	cfg.clean_window = 1;
	cfg.window = (struct ert_window_config){
	    .mode = ERT_WINDOW_AUTO, .window_target_ms = 1, .window_min = 9, .window_max = 3};
	assert_int_equal(ert_profile_run(&hal, &cfg, &work, &L, NULL), ERT_E_CONFIG);
	assert_non_null(strstr(s.data, "HPX_ERROR config: clean window: "));
	assert_null(strstr(s.data, "HPX_START"));

	/* Pins: beyond the board, lock-step half wired, collisions. */
	struct ert_sync_config sc = {.gate_pin = 9};
	hal.gpio_set = NULL;
	assert_int_equal(ert_sync_validate(&sc, &hal), ERT_E_CONFIG);
	sc = (struct ert_sync_config){.gate_pin = 1, .state_pin = 2};
	assert_int_equal(ert_sync_validate(&sc, &hal), ERT_E_CONFIG);
	sc = (struct ert_sync_config){
	    .gate_pin = 1, .state_pin = 2, .go_pin = 2, .go_timeout_us = 10, .go_poll_us = 1};
	assert_int_equal(ert_sync_validate(&sc, &hal), ERT_E_CONFIG);
	/* A gate without GPIO functions on the board. */
	sc = (struct ert_sync_config){.gate_pin = 1};
	assert_int_equal(ert_sync_validate(&sc, &hal), ERT_E_UNSUPPORTED);
	/* Pin 0 means absent: nothing to check. */
	sc = (struct ert_sync_config){0};
	assert_int_equal(ert_sync_validate(&sc, &hal), ERT_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(integers_and_bounds),
	    cmocka_unit_test(lines_follow_the_wire_registry),
	    cmocka_unit_test(transport_failure_is_sticky_and_never_retried),
	    cmocka_unit_test(line_too_long_is_refused_not_truncated),
	    cmocka_unit_test(bad_configurations_fail_before_output),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
