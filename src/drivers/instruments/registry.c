/* The instrument driver table: one line per driver, in listing order. */
#include "ergon/instrument.h"

#include <stddef.h>

/* Each driver folder defines one of these. */
extern const struct ergon_instrument_driver ergon_instrument_synthetic;
extern const struct ergon_instrument_driver ergon_instrument_replay;
extern const struct ergon_instrument_driver ergon_instrument_hwmon;
extern const struct ergon_instrument_driver ergon_instrument_rapl;
extern const struct ergon_instrument_driver ergon_instrument_nvml;
extern const struct ergon_instrument_driver ergon_instrument_bridge;
extern const struct ergon_instrument_driver ergon_instrument_joulescope;
extern const struct ergon_instrument_driver ergon_instrument_ppk2;

static const struct ergon_instrument_driver *const drivers[] = {
	&ergon_instrument_synthetic,
	&ergon_instrument_replay,
	&ergon_instrument_hwmon,
	&ergon_instrument_rapl,
	&ergon_instrument_nvml,
	&ergon_instrument_bridge,
	&ergon_instrument_joulescope,
	&ergon_instrument_ppk2,
	NULL, /* sentinel: keep last */
};

const struct ergon_instrument_driver *const *ergon_instrument_drivers(size_t *count)
{
	*count = sizeof(drivers) / sizeof(drivers[0]) - 1;
	return drivers;
}
