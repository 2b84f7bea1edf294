/* Test plugin: invoke fails (returns 7) on every third call, and prepare
 * refuses the argument "refuse" with 5, so the failure paths are covered. */
#include "ergon/plugin.h"

#include <string.h>

static unsigned fail_calls;

static int fail_prepare(void **state, const char *arg)
{
	if (arg && strcmp(arg, "refuse") == 0)
		return 5;
	fail_calls = 0;
	*state = &fail_calls;
	return 0;
}

static int fail_invoke(void *state)
{
	unsigned *n = state;
	return ++*n % 3 == 0 ? 7 : 0;
}

__attribute__((visibility("default"))) const struct ergon_plugin_v1 ergon_workload_plugin_v1 = {
    .abi_version = ERGON_PLUGIN_ABI_VERSION,
    .name = "fail-every-third",
    .prepare = fail_prepare,
    .invoke = fail_invoke,
};
