/* The workload driver table: one line per driver, in listing order. */
#include "ergon/workload.h"

#include <stddef.h>

extern const struct ergon_workload_driver ergon_workload_builtin;
extern const struct ergon_workload_driver ergon_workload_command;
extern const struct ergon_workload_driver ergon_workload_pipe;
extern const struct ergon_workload_driver ergon_workload_plugin;
extern const struct ergon_workload_driver ergon_workload_tflite;

static const struct ergon_workload_driver *const drivers[] = {
	&ergon_workload_builtin,
	&ergon_workload_command,
	&ergon_workload_pipe,
	&ergon_workload_plugin,
	&ergon_workload_tflite,
	NULL, /* sentinel: keep last */
};

const struct ergon_workload_driver *const *ergon_workload_drivers(size_t *count)
{
	*count = sizeof(drivers) / sizeof(drivers[0]) - 1;
	return drivers;
}
