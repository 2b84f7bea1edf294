/* The host's side of a virtual-bench run: a scenario's bytes and packets go
 * through the same pipelines and engines a real capture goes through. The
 * bench itself (ergon/sim.h) is a board and calls none of this.
 */
#ifndef ERGON_SIM_HOST_H
#define ERGON_SIM_HOST_H

#include "ergon/error.h"

#include <jansson.h>

/* The virtual bench's own header (sim/include/ergon/sim.h, not installed):
 * complete in the tree; the result is opaque, through a pointer, for an
 * installed consumer. */
#if defined(__has_include)
#if __has_include("ergon/sim.h")
#include "ergon/sim.h"
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

struct ergon_sim_result;

/* What the host reports about a scenario's output, through the host's own
 * engines: power flows go through the HPX terminal parser, the firmware
 * facts and the gated engine (with the simulated Joulescope's packets for
 * external mode, without a recording for INA228 mode) into
 * ergon_power_section; profile flows through the HPX parser plus the
 * clean-window rate check. reference_avg_us is the profile boot's
 * CLEAN_INFER_AVG_US (0: unknown). *issues (new reference) is the list of
 * issues the host raised; *detail (may be NULL; new reference) gets the
 * power section (power flows) or the parsed profile (profile flows). */
ERGON_API int ergon_sim_host_issues(const struct ergon_sim_result *res, double reference_avg_us,
				    json_t **issues, json_t **detail, struct ergon_err *err);

#ifdef __cplusplus
}
#endif
#endif
