/* Shared by the bridge driver (`bridge:ARGV`) and the drivers built on it
 * (`joulescope`): open a bridge from an argv, and the driver entries. */
#ifndef ERGON_BRIDGE_PRIV_H
#define ERGON_BRIDGE_PRIV_H

#include "drivers/workloads/wl_proc.h"
#include "ergon/instrument.h"

/* Spawn av as a bridge, wait for its hello and fill inst->identity.
 * label names the instrument in messages ("bridge:ARGV", "joulescope").
 * opts->kv may hold hello_timeout_s=S, heartbeat_s=S, accuracy_pct=PCT
 * (overrides the hello's, noted in the identity) and the keys in extra
 * (NULL-terminated, may be NULL), which the caller handles. */
int ergon_bridge_open_argv(struct ergon_instrument *inst, const struct ergon_wl_argv *av,
			   const char *label, const struct ergon_instrument_options *opts,
			   const char *const *extra, struct ergon_err *err);
int ergon_bridge_drv_start(struct ergon_instrument *inst, struct ergon_err *err);
int ergon_bridge_drv_read(struct ergon_instrument *inst, struct ergon_sample *buf, size_t cap,
			  size_t *n, struct ergon_err *err);
int ergon_bridge_drv_stop(struct ergon_instrument *inst, struct ergon_err *err);
void ergon_bridge_drv_close(struct ergon_instrument *inst);
json_t *ergon_bridge_drv_stats(const struct ergon_instrument *inst);

/* Run av once with no input and collect its stdout (at most cap - 1
 * bytes, NUL-terminated) and exit status, killing it after timeout_s. */
int ergon_bridge_run_once(const struct ergon_wl_argv *av, const char *label, double timeout_s,
			  char *out, size_t cap, int *status, struct ergon_err *err);

#endif
