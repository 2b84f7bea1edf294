/* The synthetic instrument's scenario, seen by the run pipeline.
 *
 * A synthetic instrument cannot heat a CPU, so its throttle scenario reaches
 * the workload through one explicit, reported mechanism: after the scenario's
 * onset the session stretches every invocation by the slowdown factor
 * (busy-waiting, load hint still on), as a governor pulling the clock back
 * would. The report records the emulation under "emulation". */
#ifndef ERGON_SYNTHETIC_H
#define ERGON_SYNTHETIC_H

#include "ergon/instrument.h"

/* Slowdown factor (>= 1) the scenario imposes at host monotonic time t_s;
 * 1 for an instrument that is not synthetic. */
double ergon_synthetic_slowdown(struct ergon_instrument *inst, double t_s);
/* The scenario as a JSON object for the report (caller owns); NULL if inst is
 * not synthetic. */
json_t *ergon_synthetic_scenario_json(const struct ergon_instrument *inst);

#endif
