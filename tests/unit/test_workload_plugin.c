/* plugin workload: the example plugins (noop, int8 matmul) and test plugins
 * that break the ABI (tests/support/plugins/), found via ERGON_BUILD_DIR. */
#include "ergon/workload.h"
#include "test_support.h"

#include <stdlib.h>
#include <string.h>

static char *build_path(const char *rel)
{
	const char *b = getenv("ERGON_BUILD_DIR");
	assert_non_null(b);
	return ts_strf("%s/%s", b, rel);
}

static int open_spec(const char *fmt_rel, const char *suffix, struct ergon_workload **wl,
		     struct ergon_err *err)
{
	char *path = build_path(fmt_rel);
	char *spec = ts_strf("plugin:%s%s", path, suffix ? suffix : "");
	int rc = ergon_workload_open(spec, NULL, wl, err);
	free(spec);
	free(path);
	return rc;
}

static void noop_plugin_runs(void **state)
{
	(void)state;
	struct ergon_err err = {0};
	struct ergon_workload *wl = NULL;
	assert_int_equal(open_spec("examples/noop_plugin/libergon_noop_plugin.so", NULL, &wl, &err),
			 0);
	/* The plugin's name reaches the description the report carries. */
	assert_non_null(strstr(wl->description, "(noop)"));
	assert_int_equal(ergon_workload_prepare(wl, &err), 0);
	for (int i = 0; i < 100; i++)
		assert_int_equal(ergon_workload_invoke(wl, &err), 0);
	ergon_workload_teardown(wl);
	ergon_workload_close(wl);
}

static void matmul_plugin_runs_and_checks_arg(void **state)
{
	(void)state;
	struct ergon_err err = {0};
	struct ergon_workload *wl = NULL;
	assert_int_equal(
	    open_spec("examples/matmul_plugin/libergon_matmul_plugin.so", ",16", &wl, &err), 0);
	assert_int_equal(ergon_workload_prepare(wl, &err), 0);
	assert_int_equal(ergon_workload_invoke(wl, &err), 0);
	assert_int_equal(ergon_workload_invoke(wl, &err), 0);
	ergon_workload_close(wl);
	/* N=0 is outside 1..1024: the plugin's prepare returns 1. */
	assert_int_equal(
	    open_spec("examples/matmul_plugin/libergon_matmul_plugin.so", ",0", &wl, &err), 0);
	assert_int_equal(ergon_workload_prepare(wl, &err), ERGON_EIO);
	assert_non_null(strstr(err.msg, "prepare returned 1"));
	ergon_workload_close(wl);
}

static void failing_invocations_are_reported(void **state)
{
	(void)state;
	struct ergon_err err = {0};
	struct ergon_workload *wl = NULL;
	assert_int_equal(open_spec("tests/plugins/fail_plugin.so", NULL, &wl, &err), 0);
	assert_int_equal(ergon_workload_prepare(wl, &err), 0);
	/* fail_plugin fails every third call with 7. */
	assert_int_equal(ergon_workload_invoke(wl, &err), 0);
	assert_int_equal(ergon_workload_invoke(wl, &err), 0);
	assert_int_equal(ergon_workload_invoke(wl, &err), ERGON_EIO);
	assert_non_null(strstr(err.msg, "invoke returned 7"));
	ergon_workload_close(wl);
	ergon_err_clear(&err);
	assert_int_equal(open_spec("tests/plugins/fail_plugin.so", ",refuse", &wl, &err), 0);
	assert_int_equal(ergon_workload_prepare(wl, &err), ERGON_EIO);
	assert_non_null(strstr(err.msg, "prepare returned 5"));
	ergon_workload_close(wl);
}

static void slow_invoke_reported_as_timeout(void **state)
{
	(void)state;
	struct ergon_err err = {0};
	struct ergon_workload *wl = NULL;
	char *path = build_path("tests/plugins/sleep_plugin.so");
	char *spec = ts_strf("plugin:%s", path);
	/* 50 ms per invoke against a 10 ms bound: over by far more than the
	 * coarse clock's tick. No prepare in this plugin: invoke gets NULL. */
	struct ergon_workload_options o = {.invoke_timeout_s = 0.01};
	assert_int_equal(ergon_workload_open(spec, &o, &wl, &err), 0);
	assert_int_equal(ergon_workload_invoke(wl, &err), ERGON_ETIMEDOUT);
	assert_non_null(strstr(err.msg, "over the 0.01 s timeout"));
	ergon_workload_close(wl);
	/* A 1 s bound is not reached. */
	o.invoke_timeout_s = 1.0;
	ergon_err_clear(&err);
	assert_int_equal(ergon_workload_open(spec, &o, &wl, &err), 0);
	assert_int_equal(ergon_workload_invoke(wl, &err), 0);
	ergon_workload_close(wl);
	free(spec);
	free(path);
}

static void wrong_abi_refused(void **state)
{
	(void)state;
	struct ergon_err err = {0};
	struct ergon_workload *wl = NULL;
	assert_int_equal(open_spec("tests/plugins/bad_abi_plugin.so", NULL, &wl, &err),
			 ERGON_ENOTSUP);
	assert_null(wl);
	assert_non_null(strstr(err.msg, "ABI version 99 but this ergon speaks version 1"));
	assert_non_null(strstr(err.msg, "rebuild"));
}

static void missing_symbol_refused(void **state)
{
	(void)state;
	struct ergon_err err = {0};
	struct ergon_workload *wl = NULL;
	assert_int_equal(open_spec("tests/plugins/nosym_plugin.so", NULL, &wl, &err), ERGON_ENOENT);
	assert_null(wl);
	assert_non_null(strstr(err.msg, "exports no symbol ergon_workload_plugin_v1"));
}

static void missing_file_refused(void **state)
{
	(void)state;
	struct ergon_err err = {0};
	struct ergon_workload *wl = NULL;
	assert_int_equal(ergon_workload_open("plugin:/nonexistent/libx.so", NULL, &wl, &err),
			 ERGON_ENOENT);
	assert_non_null(strstr(err.msg, "cannot open plugin '/nonexistent/libx.so'"));
	ergon_err_clear(&err);
	assert_int_equal(ergon_workload_open("plugin:", NULL, &wl, &err), ERGON_EUSAGE);
	assert_non_null(strstr(err.msg, "no plugin path"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(noop_plugin_runs),
	    cmocka_unit_test(matmul_plugin_runs_and_checks_arg),
	    cmocka_unit_test(failing_invocations_are_reported),
	    cmocka_unit_test(slow_invoke_reported_as_timeout),
	    cmocka_unit_test(wrong_abi_refused),
	    cmocka_unit_test(missing_symbol_refused),
	    cmocka_unit_test(missing_file_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
