/* Test plugin: exports the right symbol with ABI version 99, which ergon
 * must refuse before calling anything. invoke aborts to prove it is never
 * called. */
#include "ergon/plugin.h"

#include <stdlib.h>

static int bad_invoke(void *state)
{
	(void)state;
	abort();
}

__attribute__((visibility("default"))) const struct ergon_plugin_v1 ergon_workload_plugin_v1 = {
    .abi_version = 99u,
    .name = "bad-abi",
    .invoke = bad_invoke,
};
