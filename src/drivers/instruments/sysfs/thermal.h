/* Temperature series from /sys/class/thermal/thermal_zoneN/temp
 * (millidegrees Celsius, kernel ABI), read alongside power as evidence for
 * the throttle verdict. Private to libergon. */
#ifndef ERGON_DRIVERS_THERMAL_H
#define ERGON_DRIVERS_THERMAL_H

#include "ergon/error.h"

#include <jansson.h>

#define ERGON_THERMAL_MAX_ZONES 16

struct ergon_thermal_zone {
	int fd;
	char type[32];
	char path[512];
	double first_c, last_c, max_c;
	long reads, failures;
};

struct ergon_thermal {
	int n;
	struct ergon_thermal_zone zone[ERGON_THERMAL_MAX_ZONES];
	double interval_s;  /* read the zones at most this often */
	double last_read_s; /* host monotonic time of the last read, < 0 before the first */
	double hottest_c;   /* the hottest zone at the last read */
};

/* Open every readable thermal zone under root (root "" is the real /). No
 * zone is not an error (t->n == 0). interval_s bounds how often the zones
 * are read: temperatures change slowly and some zones are slow to read. */
int ergon_thermal_open(struct ergon_thermal *t, const char *root, double interval_s,
		       struct ergon_err *err);
/* Read the zones if interval_s has passed since the last read. Returns 1
 * and sets *hottest_c when a temperature is known, 0 when none is. A zone
 * that fails mid-run is counted and skipped: temperature is evidence, not
 * the measurement. */
int ergon_thermal_poll(struct ergon_thermal *t, double now_s, double *hottest_c);
/* {zones: [{type, first_c, last_c, max_c, reads, failures}]} (caller owns). */
json_t *ergon_thermal_stats(const struct ergon_thermal *t);
void ergon_thermal_close(struct ergon_thermal *t);

#endif
