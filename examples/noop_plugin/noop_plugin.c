/* The smallest ergon workload plugin: every invoke does nothing and
 * succeeds. It measures ergon's own per-invocation overhead and shows the
 * ABI (include/ergon/plugin.h). Build: the CMakeLists.txt beside this file.
 * Run: ergon run --workload plugin:build/examples/noop_plugin/libergon_noop_plugin.so
 */
#include "ergon/plugin.h"

#include <stddef.h>

/* Counts invocations, so that a test can see the calls arrive. */
struct noop_state {
	unsigned long long calls;
};

static struct noop_state noop_the_state;

static int noop_prepare(void **state, const char *arg)
{
	(void)arg;
	noop_the_state.calls = 0;
	*state = &noop_the_state;
	return 0;
}

static int noop_invoke(void *state)
{
	((struct noop_state *)state)->calls++;
	return 0;
}

static void noop_teardown(void *state)
{
	(void)state;
}

/* The one exported symbol; its name is ERGON_PLUGIN_SYMBOL. */
__attribute__((visibility("default"))) const struct ergon_plugin_v1 ergon_workload_plugin_v1 = {
    .abi_version = ERGON_PLUGIN_ABI_VERSION,
    .name = "noop",
    .prepare = noop_prepare,
    .invoke = noop_invoke,
    .teardown = noop_teardown,
};
