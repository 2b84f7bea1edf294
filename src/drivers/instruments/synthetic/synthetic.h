/* The synthetic instrument's scenario, seen by the run pipeline.
 *
 * A synthetic instrument cannot heat a CPU, so its scenario reaches the
 * workload through one explicit, reported mechanism: the session asks when
 * each invocation must end and busy-waits until then (load hint still on).
 * An invocation lasts at least work_s (per-invocation work), and after the
 * throttle onset 1/(1-drop) times longer, as a governor pulling the clock
 * back would. The report records the emulation under "emulation". */
#ifndef ERGON_SYNTHETIC_H
#define ERGON_SYNTHETIC_H

#include "ergon/instrument.h"

/* The time (host monotonic) an invocation that ran from t_start_s to
 * t_end_s must end at under the scenario; t_end_s for an instrument that is
 * not synthetic. */
double ergon_synthetic_stretch(struct ergon_instrument *inst, double t_start_s, double t_end_s);
/* The scenario as a JSON object for the report (caller owns); NULL if inst is
 * not synthetic. */
json_t *ergon_synthetic_scenario_json(const struct ergon_instrument *inst);

#endif
