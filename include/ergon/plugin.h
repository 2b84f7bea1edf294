/* The plugin workload ABI (`--workload plugin:PATH.so`).
 *
 * A plugin is a shared object exporting one symbol, ERGON_PLUGIN_SYMBOL, of
 * type `const struct ergon_plugin_v1`. ergon checks abi_version before
 * calling anything. The plugin needs nothing from libergon.
 */
#ifndef ERGON_PLUGIN_H
#define ERGON_PLUGIN_H

#include <stdint.h>

#define ERGON_PLUGIN_ABI_VERSION 1u
#define ERGON_PLUGIN_SYMBOL "ergon_workload_plugin_v1"

struct ergon_plugin_v1 {
	uint32_t abi_version; /* ERGON_PLUGIN_ABI_VERSION */
	const char *name;
	/* Set *state; arg is the text after "PATH.so," or NULL. 0 on success. */
	int (*prepare)(void **state, const char *arg);
	/* One unit of work; 0 on success, non-zero counts as a failed invocation. */
	int (*invoke)(void *state);
	void (*teardown)(void *state);
};

#endif
