/* Linux powercap RAPL zones: discovery under /sys/class/powercap and the
 * energy_uj counter with its wrap at max_energy_range_uj. Private to the
 * rapl driver. */
#ifndef ERGON_RAPL_ZONE_H
#define ERGON_RAPL_ZONE_H

#include "../sysfs/sysfs.h"
#include "ergon/error.h"

#include <stdint.h>

#define RAPL_MAX_ZONES 32

struct rapl_zone {
	char name[48]; /* "package-0", "psys", or "package-0/core" for a subzone */
	char dir[ERGON_SYSFS_PATH_MAX];
	char energy_path[ERGON_SYSFS_PATH_MAX];
	int64_t max_range_uj; /* 0 when max_energy_range_uj is absent */
	double max_power_w;   /* constraint_0_max_power_uw, 0 when absent */
	int is_sub;
};

/* Find the intel-rapl zones and subzones under root, sorted by name.
 * ERGON_ENOENT with a message naming the folder when there are none. */
int rapl_discover(const char *root, struct rapl_zone *zones, int cap, int *n,
		  struct ergon_err *err);

enum rapl_step {
	RAPL_STEP_OK = 0,
	RAPL_STEP_WRAPPED = 1,	 /* the counter passed max_energy_range_uj and restarted */
	RAPL_STEP_BACKWARDS = 2, /* it went back without a plausible wrap: not added */
};

/* One counter's unwrapping state. */
struct rapl_counter {
	int64_t max_range_uj;
	int64_t last_uj;
	int have_last;
};

/* Account for a new raw reading; *delta_uj is what it adds (0 on the first
 * reading and when it went backwards). A decrease is a wrap only when the
 * range is known and the implied increase (range - last + raw) is less
 * than half the range: a counter read every few ms never moves that far,
 * so anything else is a reset, not a wrap. */
int rapl_counter_step(struct rapl_counter *c, int64_t raw_uj, int64_t *delta_uj);

#endif
