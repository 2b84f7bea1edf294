/* The lifecycle driver table: a new lifecycle is a folder plus one line. */
#include "ergon/lifecycle.h"

#include <string.h>

extern const struct ergon_lifecycle_driver ergon_lifecycle_sim;
extern const struct ergon_lifecycle_driver ergon_lifecycle_qemu;
extern const struct ergon_lifecycle_driver ergon_lifecycle_jlink;
extern const struct ergon_lifecycle_driver ergon_lifecycle_openocd;
extern const struct ergon_lifecycle_driver ergon_lifecycle_pyocd;
extern const struct ergon_lifecycle_driver ergon_lifecycle_bmp;

static const struct ergon_lifecycle_driver *const drivers[] = {
    &ergon_lifecycle_sim,     &ergon_lifecycle_qemu,  &ergon_lifecycle_jlink,
    &ergon_lifecycle_openocd, &ergon_lifecycle_pyocd, &ergon_lifecycle_bmp,
};

const struct ergon_lifecycle_driver *const *ergon_lifecycle_drivers(size_t *count)
{
	*count = sizeof drivers / sizeof drivers[0];
	return drivers;
}

const struct ergon_lifecycle_driver *ergon_lifecycle_find(const char *name)
{
	for (size_t i = 0; name != NULL && i < sizeof drivers / sizeof drivers[0]; i++)
		if (strcmp(drivers[i]->name, name) == 0)
			return drivers[i];
	return NULL;
}
