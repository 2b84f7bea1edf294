/* Smoke: the CLI starts, prints its version and help, and rejects unknown
 * commands with the usage exit code. */
#include <stdlib.h>
#include <string.h>

#include "test_support.h"

static void version_prints(void **state)
{
	(void)state;
	char *out = NULL;
	assert_int_equal(ts_run_ergon(&out, NULL, "--version", NULL), 0);
	assert_non_null(strstr(out, "ergon " ERGON_VERSION));
	free(out);
}

static void help_lists_exit_codes(void **state)
{
	(void)state;
	char *out = NULL;
	assert_int_equal(ts_run_ergon(&out, NULL, "--help", NULL), 0);
	assert_non_null(strstr(out, "Exit codes"));
	assert_non_null(strstr(out, "digest"));
	free(out);
}

static void unknown_command_is_usage_error(void **state)
{
	(void)state;
	char *err = NULL;
	assert_int_equal(ts_run_ergon(NULL, &err, "frobnicate", NULL), 2);
	assert_non_null(strstr(err, "unknown command 'frobnicate'"));
	free(err);
}

static void no_arguments_is_usage_error(void **state)
{
	(void)state;
	assert_int_equal(ts_run_ergon(NULL, NULL, NULL), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(version_prints),
		cmocka_unit_test(help_lists_exit_codes),
		cmocka_unit_test(unknown_command_is_usage_error),
		cmocka_unit_test(no_arguments_is_usage_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
