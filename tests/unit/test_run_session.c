/* The session engine with a test-only instrument and workload defined here:
 * samplers, windows, failure policy, instrument failure, stop flag,
 * timeouts. No timing assertions: counts are checked against what the test
 * drivers themselves counted. */
#include "ergon/session.h"
#include "test_support.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* --- a test instrument: constant 2 W, can fail at read N ---------------- */
struct tinst {
	long reads, fail_at, nan_every, bad_returned;
	double load, last_t;
};

static int ti_read(struct ergon_instrument *inst, struct ergon_sample *buf, size_t cap, size_t *n,
		   struct ergon_err *err)
{
	struct tinst *t = inst->priv;
	*n = 0;
	t->reads++;
	if (t->fail_at && t->reads >= t->fail_at)
		return ergon_err_set(err, ERGON_EDEVICE, "test instrument: read %ld failed",
				     t->reads);
	if (cap == 0)
		return 0;
	buf[0] = (struct ergon_sample){
	    .t_s = ergon_now_s(), .power_w = 1.0 + t->load, .fields = ERGON_F_POWER};
	*n = 1;
	if (t->nan_every && t->reads % t->nan_every == 0) {
		/* Alternate a NaN reading and a repeated timestamp. */
		if ((t->reads / t->nan_every) % 2)
			buf[0].power_w = NAN;
		else
			buf[0].t_s = t->last_t;
		t->bad_returned++;
	}
	if (buf[0].t_s > t->last_t)
		t->last_t = buf[0].t_s;
	return 0;
}

static void ti_hint(struct ergon_instrument *inst, double load)
{
	((struct tinst *)inst->priv)->load = load;
}

static const struct ergon_instrument_driver ti_driver = {
    .name = "test", .longname = "test", .read = ti_read, .hint_load = ti_hint};

/* --- a test workload: fails every fail_every-th, raises stop at stop_at -- */
struct twl {
	long calls, failures, fail_every, stop_at, timeout_every;
	double sleep_s;
	volatile sig_atomic_t *stop;
};

static int tw_invoke(struct ergon_workload *wl, struct ergon_err *err)
{
	struct twl *w = wl->priv;
	w->calls++;
	if (w->sleep_s > 0) {
		struct timespec ts = {0, (long)(w->sleep_s * 1e9)};
		nanosleep(&ts, NULL);
	}
	if (w->stop_at && w->calls == w->stop_at)
		*w->stop = 1;
	if (w->timeout_every && w->calls % w->timeout_every == 0) {
		w->failures++;
		return ergon_err_set(err, ERGON_ETIMEDOUT, "test: timed out");
	}
	if (w->fail_every && w->calls % w->fail_every == 0) {
		w->failures++;
		return ergon_err_set(err, ERGON_EIO, "test: failure %ld", w->failures);
	}
	return 0;
}

static const struct ergon_workload_driver tw_driver = {
    .name = "test", .longname = "test", .invoke = tw_invoke};

static struct ergon_session_config base_cfg(int sampler)
{
	return (struct ergon_session_config){.idle_s = 0.05,
					     .windows = 3,
					     .window_s = 0.05,
					     .sampler = sampler,
					     .sample_hz = 2000,
					     .failure_policy = ERGON_ON_FAILURE_CONTINUE};
}

static void run_session(struct ergon_session_config *cfg, struct tinst *ti, struct twl *tw,
			struct ergon_session_result *res)
{
	struct ergon_instrument inst = {.driver = &ti_driver, .priv = ti};
	struct ergon_workload wl = {.driver = &tw_driver, .priv = tw};
	struct ergon_err err = {0};
	assert_int_equal(ergon_session_run(cfg, &inst, &wl, res, &err), 0);
}

static void check_series_shape(const struct ergon_session_result *res, long calls)
{
	assert_int_equal(res->n_inv, (size_t)calls);
	for (size_t i = 1; i < res->n_inv; i++)
		assert_true(res->inv_start_s[i] >=
			    res->inv_start_s[i - 1] + res->inv_latency_s[i - 1]);
	for (size_t i = 1; i < res->n_samples; i++)
		assert_true(res->sample_t_s[i] > res->sample_t_s[i - 1]);
	for (size_t w = 0; w < res->windows_completed; w++)
		assert_true(res->window_edges_s[w + 1] > res->window_edges_s[w]);
	assert_true(res->idle_end_s > res->idle_start_s);
	assert_true(res->load_start_s >= res->idle_end_s);
}

static void inline_and_threaded_complete(void **state)
{
	(void)state;
	int kinds[] = {ERGON_SAMPLER_INLINE, ERGON_SAMPLER_THREADED};
	for (int k = 0; k < 2; k++) {
		struct tinst ti = {0};
		struct twl tw = {.sleep_s = 0.001};
		struct ergon_session_config cfg = base_cfg(kinds[k]);
		/* A longer idle phase than the other tests: the check below wants
		 * samples in both phases, and a loaded CI machine can starve the
		 * sampler thread for tens of milliseconds. */
		cfg.idle_s = 0.25;
		struct ergon_session_result res;
		run_session(&cfg, &ti, &tw, &res);
		assert_int_equal(res.status, ERGON_SESSION_COMPLETE);
		assert_int_equal(res.windows_completed, 3);
		check_series_shape(&res, tw.calls);
		assert_true(tw.calls > 0);
		/* Every sample the series holds came from one read. */
		assert_true(res.n_samples > 2 && res.n_samples <= (size_t)ti.reads);
		assert_int_equal(res.n_failed, 0);
		/* Samples exist in both phases. */
		size_t idle = 0, load = 0;
		for (size_t i = 0; i < res.n_samples; i++) {
			idle += res.sample_t_s[i] <= res.idle_end_s;
			load += res.sample_t_s[i] >= res.load_start_s;
		}
		assert_true(idle >= 2);
		assert_true(load >= 2);
		ergon_session_result_cleanup(&res);
	}
}

static void failures_counted_or_abort(void **state)
{
	(void)state;
	struct tinst ti = {0};
	struct twl tw = {.fail_every = 3, .sleep_s = 0.0005};
	struct ergon_session_config cfg = base_cfg(ERGON_SAMPLER_INLINE);
	struct ergon_session_result res;
	run_session(&cfg, &ti, &tw, &res);
	assert_int_equal(res.status, ERGON_SESSION_COMPLETE);
	assert_int_equal(res.n_failed, (size_t)tw.failures);
	/* Exactly every third call failed: floor(calls / 3), at least one. */
	assert_true(tw.calls >= 3);
	assert_int_equal(tw.failures, tw.calls / 3);
	for (size_t i = 0; i < res.n_failed; i++)
		assert_int_equal((res.failed_index[i] + 1) % 3, 0);
	ergon_session_result_cleanup(&res);

	struct twl tw2 = {.fail_every = 3};
	struct tinst ti2 = {0};
	cfg.failure_policy = ERGON_ON_FAILURE_ABORT;
	run_session(&cfg, &ti2, &tw2, &res);
	assert_int_equal(res.status, ERGON_SESSION_ABORTED);
	assert_int_equal(res.n_inv, 3); /* the third call failed and stopped the run */
	assert_non_null(strstr(res.stop_reason, "--on-failure abort"));
	ergon_session_result_cleanup(&res);
}

static void instrument_failure_stops_the_run(void **state)
{
	(void)state;
	int kinds[] = {ERGON_SAMPLER_INLINE, ERGON_SAMPLER_THREADED};
	for (int k = 0; k < 2; k++) {
		/* Fail on read 40: past the idle baseline (at 2 kHz ~100 reads
		 * would be due), so the run stops in idle or early load. */
		struct tinst ti = {.fail_at = 40};
		struct twl tw = {.sleep_s = 0.0005};
		struct ergon_session_config cfg = base_cfg(kinds[k]);
		cfg.windows = 50; /* 2.5 s planned: the failure must cut it short */
		struct ergon_session_result res;
		run_session(&cfg, &ti, &tw, &res);
		assert_int_equal(res.status, ERGON_SESSION_INSTRUMENT_FAILED);
		assert_non_null(strstr(res.stop_reason, "read 40 failed"));
		assert_true(res.windows_completed < 50);
		assert_int_equal(res.n_samples, 39);
		ergon_session_result_cleanup(&res);
	}
}

static void stop_flag_interrupts(void **state)
{
	(void)state;
	volatile sig_atomic_t stop = 0;
	struct tinst ti = {0};
	struct twl tw = {.stop_at = 5, .stop = &stop, .sleep_s = 0.001};
	struct ergon_session_config cfg = base_cfg(ERGON_SAMPLER_THREADED);
	cfg.windows = 100;
	cfg.stop_flag = &stop;
	struct ergon_session_result res;
	run_session(&cfg, &ti, &tw, &res);
	assert_int_equal(res.status, ERGON_SESSION_INTERRUPTED);
	assert_int_equal(res.n_inv, 5);
	assert_true(res.windows_completed < 100);
	ergon_session_result_cleanup(&res);
}

static void timeouts_are_failures(void **state)
{
	(void)state;
	/* Reported by the driver. */
	struct tinst ti = {0};
	struct twl tw = {.timeout_every = 2, .sleep_s = 0.0005};
	struct ergon_session_config cfg = base_cfg(ERGON_SAMPLER_INLINE);
	struct ergon_session_result res;
	run_session(&cfg, &ti, &tw, &res);
	assert_int_equal(res.n_timeouts, (size_t)tw.failures);
	assert_int_equal(res.n_failed, (size_t)tw.failures);
	ergon_session_result_cleanup(&res);
	/* Measured by the session: 3 ms invocations against a 1 ms bound. */
	struct tinst ti2 = {0};
	struct twl tw2 = {.sleep_s = 0.003};
	cfg.invoke_timeout_s = 0.001;
	run_session(&cfg, &ti2, &tw2, &res);
	assert_int_equal(res.n_timeouts, (size_t)tw2.calls);
	assert_int_equal(res.n_failed, (size_t)tw2.calls);
	ergon_session_result_cleanup(&res);
}

static void periodic_releases(void **state)
{
	(void)state;
	/* 200 Hz for 3 x 0.05 s: at most 30 releases plus one at each
	 * window edge; each invocation starts no earlier than its release. */
	struct tinst ti = {0};
	struct twl tw = {.sleep_s = 0.0005};
	struct ergon_session_config cfg = base_cfg(ERGON_SAMPLER_THREADED);
	cfg.release_hz = 200;
	struct ergon_session_result res;
	run_session(&cfg, &ti, &tw, &res);
	assert_int_equal(res.status, ERGON_SESSION_COMPLETE);
	assert_true(res.n_inv <= 31 && res.n_inv > 0);
	for (size_t i = 0; i < res.n_inv; i++)
		assert_true(res.inv_start_s[i] - res.load_start_s >= (double)i / 200.0 - 1e-6 ||
			    res.release_overruns > 0);
	ergon_session_result_cleanup(&res);
}

static void bad_readings_refused_and_counted(void **state)
{
	(void)state;
	struct tinst ti = {.nan_every = 7};
	struct twl tw = {.sleep_s = 0.0005};
	struct ergon_session_config cfg = base_cfg(ERGON_SAMPLER_THREADED);
	struct ergon_session_result res;
	run_session(&cfg, &ti, &tw, &res);
	assert_int_equal(res.status, ERGON_SESSION_COMPLETE);
	assert_true(ti.bad_returned > 0);
	assert_int_equal(res.samples_rejected, (size_t)ti.bad_returned);
	assert_int_equal(res.n_samples + res.samples_rejected, (size_t)ti.reads);
	for (size_t i = 0; i < res.n_samples; i++) {
		assert_true(isfinite(res.sample_power_w[i]) != 0);
		if (i)
			assert_true(res.sample_t_s[i] > res.sample_t_s[i - 1]);
	}
	ergon_session_result_cleanup(&res);
}

static void bad_config_refused(void **state)
{
	(void)state;
	struct tinst ti = {0};
	struct twl tw = {0};
	struct ergon_instrument inst = {.driver = &ti_driver, .priv = &ti};
	struct ergon_workload wl = {.driver = &tw_driver, .priv = &tw};
	struct ergon_session_config cfg = base_cfg(ERGON_SAMPLER_INLINE);
	cfg.windows = 0;
	struct ergon_session_result res;
	struct ergon_err err = {0};
	assert_int_equal(ergon_session_run(&cfg, &inst, &wl, &res, &err), ERGON_EUSAGE);
	assert_int_equal(tw.calls, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(inline_and_threaded_complete),
	    cmocka_unit_test(failures_counted_or_abort),
	    cmocka_unit_test(instrument_failure_stops_the_run),
	    cmocka_unit_test(stop_flag_interrupts),
	    cmocka_unit_test(timeouts_are_failures),
	    cmocka_unit_test(periodic_releases),
	    cmocka_unit_test(bad_readings_refused_and_counted),
	    cmocka_unit_test(bad_config_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
