/* Test plugin: every invoke sleeps 50 ms, to exercise the after-the-fact
 * invocation timeout of in-process plugins. */
#include "ergon/plugin.h"

#include <time.h>

static int sleep_invoke(void *state)
{
	(void)state;
	struct timespec ts = {0, 50 * 1000 * 1000};
	while (nanosleep(&ts, &ts) != 0)
		;
	return 0;
}

__attribute__((visibility("default"))) const struct ergon_plugin_v1 ergon_workload_plugin_v1 = {
    .abi_version = ERGON_PLUGIN_ABI_VERSION,
    .name = "sleep-50ms",
    .invoke = sleep_invoke,
};
