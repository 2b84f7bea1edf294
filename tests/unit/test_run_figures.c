/* The figures engines against hand-computed values (each in a comment). */
#include "ergon/figures.h"
#include "test_support.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NEAR(a, b) assert_true(fabs((double)(a) - (double)(b)) < 1e-12 * (1 + fabs((double)(b))))

static void trapezoid_over_real_timestamps(void **state)
{
	(void)state;
	/* t = 0, 1, 3 s; p = 2, 4, 4 W.
	 * E = (2+4)/2*1 + (4+4)/2*2 = 3 + 8 = 11 J; span 3 s; mean 11/3 W.
	 * u_rated = 1% * integral|p| (11) + 0.01 W * 3 s = 0.11 + 0.03 = 0.14 J.
	 * u_timing = 1 ms * (|p0+p1|/2 + |p0-p2|/2 + |p1+p2|/2) = 1e-3 * (3+1+4)
	 *          = 0.008 J. */
	double t[] = {0, 1, 3}, p[] = {2, 4, 4};
	struct ergon_energy e;
	struct ergon_err err = {0};
	assert_int_equal(ergon_energy_trapezoid(t, p, 3, 1.0, 0.01, 1e-3, &e, &err), 0);
	NEAR(e.energy_j, 11.0);
	NEAR(e.span_s, 3.0);
	NEAR(e.mean_power_w, 11.0 / 3.0);
	NEAR(e.u_rated_j, 0.14);
	NEAR(e.u_timing_j, 0.008);
	NEAR(e.u_j, 0.148);
	NEAR(e.mean_power_u_w, 0.148 / 3.0);
	NEAR(e.peak_power_w, 4.0);
	assert_int_equal(e.n_samples, 3);
}

static void trapezoid_is_not_mean_times_wallclock(void **state)
{
	(void)state;
	/* A stuttering sampler: t = 0, 0.1, 1.0 s, p = 1, 1, 10 W.
	 * Trapezoid: 0.1*1 + 0.9*5.5 = 5.05 J. Mean of readings x span:
	 * 4 W * 1 s = 4 J, which is wrong. */
	double t[] = {0, 0.1, 1.0}, p[] = {1, 1, 10};
	struct ergon_energy e;
	assert_int_equal(ergon_energy_trapezoid(t, p, 3, 0, 0, 0, &e, NULL), 0);
	NEAR(e.energy_j, 5.05);
	assert_true(fabs(e.energy_j - 4.0) > 1.0);
}

static void trapezoid_refuses_non_monotonic(void **state)
{
	(void)state;
	double t[] = {0, 1, 1}, p[] = {1, 1, 1};
	struct ergon_energy e;
	struct ergon_err err = {0};
	assert_int_equal(ergon_energy_trapezoid(t, p, 3, 0, 0, 0, &e, &err), ERGON_EPARSE);
	assert_non_null(strstr(err.msg, "sample 2"));
	double t2[] = {0, 2, 1};
	ergon_err_clear(&err);
	assert_int_equal(ergon_energy_trapezoid(t2, p, 3, 0, 0, 0, &e, &err), ERGON_EPARSE);
	double p3[] = {1, NAN, 1};
	ergon_err_clear(&err);
	assert_int_equal(ergon_energy_trapezoid(t, p3, 3, 0, 0, 0, &e, &err), ERGON_EPARSE);
	assert_non_null(strstr(err.msg, "non-finite"));
}

static void too_few_samples_gives_no_mean(void **state)
{
	(void)state;
	double t[] = {5}, p[] = {3};
	struct ergon_energy e;
	assert_int_equal(ergon_energy_trapezoid(t, p, 1, 1, 0.01, 0, &e, NULL), 0);
	assert_true(isnan(e.mean_power_w));
	assert_true(e.energy_j == 0.0);
}

static void accumulator_deltas(void **state)
{
	(void)state;
	/* e = 10, 12, 15 J over 2 s: 5 J; 1% -> 0.05 J + 2 LSB of 1 mJ = 0.052 J. */
	double t[] = {0, 1, 2}, e_j[] = {10, 12, 15};
	struct ergon_energy e;
	struct ergon_err err = {0};
	assert_int_equal(ergon_energy_accumulator(t, e_j, 3, 1.0, 0.001, &e, &err), 0);
	NEAR(e.energy_j, 5.0);
	NEAR(e.u_j, 0.052);
	NEAR(e.mean_power_w, 2.5);
	double back[] = {10, 12, 11};
	assert_int_equal(ergon_energy_accumulator(t, back, 3, 1.0, 0.001, &e, &err),
			 ERGON_EMEASURE);
	assert_non_null(strstr(err.msg, "sample 2"));
}

static void latency_nearest_rank(void **state)
{
	(void)state;
	/* 1..20 shuffled. Nearest rank: p50 -> rank ceil(10) = 10; p90 -> 18;
	 * p95 -> 19; p99 -> ceil(19.8) = 20. Mean 10.5. */
	double v[20];
	for (int i = 0; i < 20; i++)
		v[i] = (double)(((i * 7) % 20) + 1);
	struct ergon_latency l;
	assert_int_equal(ergon_latency_stats(v, 20, &l, NULL), 0);
	NEAR(l.p50_s, 10);
	NEAR(l.p90_s, 18);
	NEAR(l.p95_s, 19);
	NEAR(l.p99_s, 20);
	NEAR(l.min_s, 1);
	NEAR(l.max_s, 20);
	NEAR(l.mean_s, 10.5);
	assert_int_equal(l.count, 20);
	/* 1..100: p95 is exactly rank 95 (no binary-rounding push to 96). */
	double w[100];
	for (int i = 0; i < 100; i++)
		w[i] = i + 1;
	assert_int_equal(ergon_latency_stats(w, 100, &l, NULL), 0);
	NEAR(l.p95_s, 95);
	NEAR(l.p99_s, 99);
	NEAR(l.p50_s, 50);
	/* One value: every percentile is that value. */
	double one = 0.25;
	assert_int_equal(ergon_latency_stats(&one, 1, &l, NULL), 0);
	NEAR(l.p99_s, 0.25);
	NEAR(l.p50_s, 0.25);
}

static void throughput_by_end_time(void **state)
{
	(void)state;
	/* Edges 0,1,2,3. Ends 0.5, 0.9 -> w0; 1.0, 1.5 -> w1 ([lo, hi));
	 * 2.99, 3.0 -> w2 (the last window includes its end); 3.5 outside. */
	double edges[] = {0, 1, 2, 3};
	double ends[] = {0.5, 1.0, 0.9, 1.5, 2.99, 3.0, 3.5};
	size_t ops[3];
	double ops_s[3];
	assert_int_equal(ergon_throughput_windows(ends, 7, edges, 3, ops, ops_s, NULL), 0);
	assert_int_equal(ops[0], 2);
	assert_int_equal(ops[1], 2);
	assert_int_equal(ops[2], 2);
	NEAR(ops_s[1], 2.0);
	double bad[] = {0, 1, 1, 3};
	assert_int_equal(ergon_throughput_windows(ends, 7, bad, 3, ops, ops_s, NULL), ERGON_EPARSE);
}

static void throttle_needs_consecutive_windows(void **state)
{
	(void)state;
	struct ergon_throttle th;
	/* limit = 0.85 * 100 = 85. w2 (84) below, w3 (86) recovers: one slow
	 * window is not an onset. w4, w5 below for 2 windows: onset 4.
	 * Tail = mean of the last 2 = 84; change = -16%. */
	double tp[] = {100, 90, 84, 86, 84, 84};
	assert_int_equal(ergon_throttle_onset(tp, 6, 0.15, 2, &th, NULL), 0);
	assert_true(th.throttled);
	assert_int_equal(th.onset_window, 4);
	NEAR(th.tail_ops_per_s, 84);
	NEAR(th.change_pct, -16);
	/* Only the last window below: with K = 2 the run ended too soon. */
	double late[] = {100, 100, 80};
	assert_int_equal(ergon_throttle_onset(late, 3, 0.15, 2, &th, NULL), 0);
	assert_false(th.throttled);
	assert_int_equal(th.onset_window, -1);
	/* Exactly at the limit is not below. */
	double eq[] = {100, 85, 85};
	assert_int_equal(ergon_throttle_onset(eq, 3, 0.15, 2, &th, NULL), 0);
	assert_false(th.throttled);
}

static void throttle_onset_window_counts_among_k(void **state)
{
	(void)state;
	struct ergon_throttle th;
	/* Windows 1 and 2 below. The onset window counts among the K:
	 * K = 2 -> onset 1 (were it not counted, K = 2 would need windows
	 * 2 and 3 after it, and there is no window 3). */
	double tp[] = {100, 80, 80};
	assert_int_equal(ergon_throttle_onset(tp, 3, 0.15, 2, &th, NULL), 0);
	assert_true(th.throttled);
	assert_int_equal(th.onset_window, 1);
	/* K = 3 needs windows 1, 2, 3: not enough windows, no onset. */
	assert_int_equal(ergon_throttle_onset(tp, 3, 0.15, 3, &th, NULL), 0);
	assert_false(th.throttled);
	/* K = 1: the first slow window is the onset. */
	double one[] = {100, 100, 70, 100};
	assert_int_equal(ergon_throttle_onset(one, 4, 0.15, 1, &th, NULL), 0);
	assert_int_equal(th.onset_window, 2);
	assert_int_equal(ergon_throttle_onset(one, 4, 1.5, 1, &th, NULL), ERGON_ERANGE);
}

static void energy_per_op_formulas(void **state)
{
	(void)state;
	struct ergon_eop e;
	/* Saturated: 3 W +- 0.02 load, 0.6 W +- 0.004 idle, 10 ms latency,
	 * 1 ns clock. total = 3 * 0.01 = 0.03 J; above = 2.4 * 0.01 = 0.024 J;
	 * u_above = (0.02 + 0.004) * 0.01 + 2.4 * 1e-9 = 0.00024 + 2.4e-9. */
	struct ergon_eop_input in = {.achieved_ops_per_s = 100,
				     .latency_mean_s = 0.01,
				     .latency_quantum_s = 1e-9,
				     .load_power_w = 3,
				     .load_power_u_w = 0.02,
				     .idle_power_w = 0.6,
				     .idle_power_u_w = 0.004};
	assert_int_equal(ergon_energy_per_op(&in, &e, NULL), 0);
	assert_int_equal(e.formula, ERGON_EOP_SATURATED);
	NEAR(e.total_j, 0.03);
	NEAR(e.above_idle_j, 0.024);
	NEAR(e.above_idle_u_j, 0.00024 + 2.4e-9);
	/* Periodic, 10 Hz, 20 ms latency: duty 0.2 < 1 -> mean power / rate.
	 * total = 3 / 10 = 0.3 J; above = 2.4 / 10 = 0.24 J; u = 0.024/10. */
	in.periodic = 1;
	in.release_hz = 10;
	in.achieved_ops_per_s = 10;
	in.latency_mean_s = 0.02;
	assert_int_equal(ergon_energy_per_op(&in, &e, NULL), 0);
	assert_int_equal(e.formula, ERGON_EOP_PERIODIC);
	NEAR(e.duty_cycle, 0.2);
	NEAR(e.total_j, 0.3);
	NEAR(e.above_idle_j, 0.24);
	NEAR(e.above_idle_u_j, 0.0024);
	/* Periodic but overrunning: 200 ms at 10 Hz, duty 2 -> saturated. */
	in.latency_mean_s = 0.2;
	assert_int_equal(ergon_energy_per_op(&in, &e, NULL), 0);
	assert_int_equal(e.formula, ERGON_EOP_SATURATED);
	NEAR(e.above_idle_j, 2.4 * 0.2);
	assert_non_null(strstr(e.reason, "overran"));
	/* No idle figure: no energy per operation. */
	in.idle_power_w = NAN;
	assert_int_equal(ergon_energy_per_op(&in, &e, NULL), ERGON_EMEASURE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(trapezoid_over_real_timestamps),
	    cmocka_unit_test(trapezoid_is_not_mean_times_wallclock),
	    cmocka_unit_test(trapezoid_refuses_non_monotonic),
	    cmocka_unit_test(too_few_samples_gives_no_mean),
	    cmocka_unit_test(accumulator_deltas),
	    cmocka_unit_test(latency_nearest_rank),
	    cmocka_unit_test(throughput_by_end_time),
	    cmocka_unit_test(throttle_needs_consecutive_windows),
	    cmocka_unit_test(throttle_onset_window_counts_among_k),
	    cmocka_unit_test(energy_per_op_formulas),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
