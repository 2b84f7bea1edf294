/* Profile-flow heartbeats every N operators and every M ms of the window
 * clock (target/src/profile.c), on the virtual bench, whose inference is
 * three operators of exactly 1 ms in total (sim/src/board.c). Expected
 * lines are counted by hand from that model. */
#include "ergon/sim.h"
#include "test_support.h"

#include <string.h>

static size_t count(const char *s, const char *needle)
{
	size_t n = 0;
	for (const char *p = strstr(s, needle); p != NULL; p = strstr(p + 1, needle))
		n++;
	return n;
}

static struct ergon_sim_result run(const struct ergon_sim_options *o)
{
	struct ergon_sim_result r;
	struct ergon_err err = {0};
	if (ergon_sim_run_opts("baseline_profile", o, &r, &err) != 0)
		fail_msg("%s", err.msg);
	return r;
}

static void every_n_ops(void **state)
{
	(void)state;
	struct ergon_sim_options o;
	ergon_sim_options_default(&o);
	o.heartbeat_every_iters = 0;
	o.heartbeat_every_ops = 6;
	o.warmup = 4;
	o.profile_iterations = 6;
	struct ergon_sim_result r = run(&o);
	/* Warmup: 3 ops per inference, due after the 2nd (6 ops); the 4th is
	 * the last (warmup_done follows), so one warmup heartbeat. */
	assert_int_equal(count(r.stream, "HPX_HEARTBEAT warmup iters=2\n"), 1);
	assert_int_equal(count(r.stream, "HPX_HEARTBEAT warmup "), 1);
	/* Iterations 1..6: due after 2, 4 and 6. */
	assert_int_equal(count(r.stream, "HPX_HEARTBEAT infer "), 3);
	assert_int_equal(count(r.stream, "HPX_HEARTBEAT infer iters=2\n"), 1);
	assert_int_equal(count(r.stream, "HPX_HEARTBEAT infer iters=4\n"), 1);
	assert_int_equal(count(r.stream, "HPX_HEARTBEAT infer iters=6\n"), 1);
	ergon_sim_result_cleanup(&r);
}

static void every_m_ms_in_warmup(void **state)
{
	(void)state;
	struct ergon_sim_options o;
	ergon_sim_options_default(&o);
	o.heartbeat_every_iters = 0;
	o.heartbeat_every_ms = 5;
	o.warmup = 8;
	o.profile_iterations = 1;
	struct ergon_sim_result r = run(&o);
	/* Warmup of 8 x 1 ms with nothing written: 5 ms have passed after the
	 * 5th inference (one heartbeat), then 2 ms more before the last. */
	assert_int_equal(count(r.stream, "HPX_HEARTBEAT warmup "), 1);
	assert_int_equal(count(r.stream, "HPX_HEARTBEAT warmup iters=5\n"), 1);
	ergon_sim_result_cleanup(&r);
}

static void off_means_none(void **state)
{
	(void)state;
	struct ergon_sim_options o;
	ergon_sim_options_default(&o);
	o.heartbeat_every_iters = 0;
	o.warmup = 8;
	o.profile_iterations = 6;
	struct ergon_sim_result r = run(&o);
	assert_int_equal(count(r.stream, "HPX_HEARTBEAT warmup "), 0);
	assert_int_equal(count(r.stream, "HPX_HEARTBEAT infer "), 0);
	ergon_sim_result_cleanup(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(every_n_ops),
	    cmocka_unit_test(every_m_ms_in_warmup),
	    cmocka_unit_test(off_means_none),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
