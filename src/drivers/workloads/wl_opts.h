/* Private helpers shared by the workload drivers: option lookup and bounded
 * number parsing ("key=value" pairs from the spec or from
 * ergon_workload_options.kv), and the monotonic clock. */
#ifndef ERGON_WL_OPTS_H
#define ERGON_WL_OPTS_H

#include "ergon/error.h"
#include "ergon/workload.h"

#include <stdint.h>

/* Look key up: first in the ",key=value" suffix of suffix (may be NULL),
 * then in opts->kv. A later pair wins over an earlier one in the same list;
 * the kv list wins over the spec suffix (it is what the caller set last).
 * Returns the value text (not NUL-terminated at the pair end: *len_out says
 * how long) or NULL when absent. */
const char *ergon_wl_opt_find(const struct ergon_workload_options *opts, const char *suffix,
			      const char *key, size_t *len_out);

/* Parse option key as an unsigned decimal integer in [min, max]; *out keeps
 * def when the option is absent. spec names the workload in the message. */
int ergon_wl_opt_u64(const struct ergon_workload_options *opts, const char *suffix,
		     const char *spec, const char *key, uint64_t min, uint64_t max, uint64_t def,
		     uint64_t *out, struct ergon_err *err);

/* Refuse any key not in known (NULL-terminated), naming the valid keys. */
int ergon_wl_opt_check_keys(const struct ergon_workload_options *opts, const char *suffix,
			    const char *spec, const char *const *known, struct ergon_err *err);

/* While a stop flag is given, blocking waits are cut into slices this
 * long so that a flag set just before the wait is still seen promptly. */
#define ERGON_WL_STOP_SLICE_MS 100

/* True when the caller asked to stop. */
static inline int ergon_wl_stopping(const volatile sig_atomic_t *stop)
{
	return stop != NULL && *stop != 0;
}

/* CLOCK_MONOTONIC in seconds. */
double ergon_wl_now_s(void);
/* CLOCK_MONOTONIC_COARSE in seconds: resolution of one scheduler tick
 * (1-10 ms) but far cheaper to read; for bounds checks on the hot path. */
double ergon_wl_coarse_now_s(void);

#endif
