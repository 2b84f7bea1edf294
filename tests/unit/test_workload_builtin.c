/* builtin workloads: spin, memstream and periodic at their boundary (open
 * with options, prepare, invoke, teardown) and every option error. */
#include "ergon/workload.h"
#include "test_support.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void run_n(const char *spec, int n)
{
	struct ergon_err err = {0};
	struct ergon_workload *wl = NULL;
	assert_int_equal(ergon_workload_open(spec, NULL, &wl, &err), 0);
	assert_non_null(wl);
	assert_string_equal(wl->description, spec);
	assert_int_equal(ergon_workload_prepare(wl, &err), 0);
	for (int i = 0; i < n; i++)
		assert_int_equal(ergon_workload_invoke(wl, &err), 0);
	assert_int_equal(err.code, 0);
	ergon_workload_teardown(wl);
	ergon_workload_close(wl);
}

static void spin_invokes(void **state)
{
	(void)state;
	run_n("builtin:spin", 3);
	run_n("builtin:spin,iters=1", 5);
}

static void memstream_invokes(void **state)
{
	(void)state;
	/* 4096 bytes is the documented minimum. */
	run_n("builtin:memstream,bytes=4096", 4);
	run_n("builtin:memstream,bytes=1048576", 2);
}

static void options_from_kv_win_over_spec(void **state)
{
	(void)state;
	/* The kv list is applied after the spec suffix, so bytes=100 (below the
	 * 4096 minimum) from kv must be refused even though the suffix is valid. */
	const char *kv[] = {"bytes=100", NULL};
	struct ergon_workload_options o = {.kv = kv};
	struct ergon_err err = {0};
	struct ergon_workload *wl = NULL;
	assert_int_equal(ergon_workload_open("builtin:memstream,bytes=8192", &o, &wl, &err),
			 ERGON_ERANGE);
	assert_null(wl);
	assert_non_null(strstr(err.msg, "bytes=100"));
	assert_non_null(strstr(err.msg, "[4096,"));
}

static void periodic_sleeps_at_least_sleep_ms(void **state)
{
	(void)state;
	struct ergon_err err = {0};
	struct ergon_workload *wl = NULL;
	assert_int_equal(
	    ergon_workload_open("builtin:periodic,burst_ms=2,sleep_ms=30", NULL, &wl, &err), 0);
	assert_int_equal(ergon_workload_prepare(wl, &err), 0);
	double t0 = mono_s();
	assert_int_equal(ergon_workload_invoke(wl, &err), 0);
	double dt = mono_s() - t0;
	/* A lower bound, not a timing figure: nanosleep never returns early
	 * and the burst spins until 2 ms have passed, so at least 32 ms. */
	assert_true(dt >= 0.032);
	ergon_workload_close(wl);
}

static void expect_open_error(const char *spec, int code, const char *needle)
{
	struct ergon_err err = {0};
	struct ergon_workload *wl = NULL;
	assert_int_equal(ergon_workload_open(spec, NULL, &wl, &err), code);
	assert_null(wl);
	if (strstr(err.msg, needle) == NULL)
		fail_msg("error for %s lacks '%s': %s", spec, needle, err.msg);
}

static void option_errors(void **state)
{
	(void)state;
	expect_open_error("builtin:nosuch", ERGON_EUSAGE, "builtin:spin, builtin:memstream");
	expect_open_error("builtin:spin,iterz=5", ERGON_EUSAGE, "valid options: iters");
	expect_open_error("builtin:spin,iters", ERGON_EUSAGE, "unknown option 'iters'");
	expect_open_error("builtin:spin,iters=-1", ERGON_EUSAGE, "not an unsigned decimal");
	expect_open_error("builtin:spin,iters=0x10", ERGON_EUSAGE, "not an unsigned decimal");
	expect_open_error("builtin:spin,iters=", ERGON_EUSAGE, "not an unsigned decimal");
	expect_open_error("builtin:spin,iters=0", ERGON_ERANGE, "[1, ");
	/* 2^64 = 18446744073709551616 overflows uint64. */
	expect_open_error("builtin:spin,iters=18446744073709551616", ERGON_ERANGE, "out of range");
	expect_open_error("builtin:memstream,bytes=4095", ERGON_ERANGE, "[4096,");
	expect_open_error("builtin:periodic,burst_ms=0,sleep_ms=0", ERGON_EUSAGE, "no work");
	expect_open_error("builtin:periodic,sleep_ms=3600001", ERGON_ERANGE, "3600000]");
	expect_open_error("nosuchkind:x", ERGON_EUSAGE, "known kinds: builtin");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(spin_invokes),
	    cmocka_unit_test(memstream_invokes),
	    cmocka_unit_test(options_from_kv_win_over_spec),
	    cmocka_unit_test(periodic_sleeps_at_least_sleep_ms),
	    cmocka_unit_test(option_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
