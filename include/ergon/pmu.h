/* The Armv8.1-M PMU event catalog and counter pass planning.
 *
 * The catalog is data: event id (as programmed into PMU_EVTYPERn), the CMSIS
 * name (ARM_PMU_*), a group (cpu / memory / mve) and a one-line description.
 * Source: Arm Armv8.1-M PMU event list as published in CMSIS-Core
 * pmu_armv8.h, plus the Cortex-M55 TCM events (0x4007/0x4008).
 *
 * Planning: a Cortex-M55 has 8 event counters of 16 bits; ergon chains them
 * in pairs (the odd counter counts ARM_PMU_CHAIN, 0x001E) into 4 counters of
 * 32 bits per pass. CPU cycles come from the dedicated cycle counter (CCNTR)
 * and take no slot. A request is split into passes of at most 4 events,
 * grouped by event group and named <group>_<n> (cpu_0, mve_0, mve_1, ...),
 * which is the preset naming the HPX parser groups by.
 */
#ifndef ERGON_PMU_H
#define ERGON_PMU_H

#include "ergon/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ERGON_PMU_M55_EVENT_COUNTERS 8
#define ERGON_PMU_M55_COUNTERS_PER_PASS 4 /* 8 x 16-bit chained in pairs */
#define ERGON_PMU_EVENT_CHAIN 0x001E
#define ERGON_PMU_EVENT_CPU_CYCLES 0x0011

struct ergon_pmu_event {
	uint16_t id;
	const char *name;	 /* "ARM_PMU_CPU_CYCLES" */
	const char *group;	 /* "cpu", "memory" or "mve" */
	const char *description; /* one line */
};

/* The whole catalog (static; n receives its length). */
ERGON_API const struct ergon_pmu_event *ergon_pmu_events(size_t *n);
/* Look an event up by name, case-insensitive, with or without the ARM_PMU_
 * prefix ("mve_stall", "ARM_PMU_MVE_STALL"); NULL if unknown. */
ERGON_API const struct ergon_pmu_event *ergon_pmu_event_find(const char *name);

#define ERGON_PMU_PASS_NAME_MAX 32

struct ergon_pmu_pass {
	char name[ERGON_PMU_PASS_NAME_MAX]; /* <group>_<n> */
	const struct ergon_pmu_event *events[ERGON_PMU_M55_COUNTERS_PER_PASS];
	size_t nevents;
};

struct ergon_pmu_plan {
	bool cycles; /* ARM_PMU_CPU_CYCLES requested: read from CCNTR in every pass */
	struct ergon_pmu_pass *passes; /* owned; ergon_pmu_plan_cleanup */
	size_t npasses;
};

/* Plan passes for the requested items: event names, curated sets "cpu",
 * "memory", "mve", or "<group>:all" (every countable event of the group).
 * Duplicates are removed; ARM_PMU_CHAIN cannot be requested. An unknown
 * name is ERGON_EUSAGE with the nearest catalog names in err. */
ERGON_API int ergon_pmu_plan(const char *const *items, size_t nitems, struct ergon_pmu_plan *out,
			     struct ergon_err *err);
ERGON_API void ergon_pmu_plan_cleanup(struct ergon_pmu_plan *plan);

#ifdef __cplusplus
}
#endif
#endif
