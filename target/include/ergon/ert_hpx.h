/* The HPX emitter: the wire protocol of ergon/wire.h written line by line
 * through the HAL transport.
 *
 * Errors are sticky: after the first failed write every later call returns
 * that status at once, so a dead transport never hangs the target (the host
 * sees a truncated capture).
 *
 * In the dedicated power build (ERT_POWER_BUILD) there is no transport: the
 * calls below become nothing and emit.c is not compiled, so the binary
 * contains no transport code (tests/functional/test_target_power_nm.sh).
 */
#ifndef ERT_HPX_H
#define ERT_HPX_H

#include "ergon/ert_fmt.h"
#include "ergon/ert_hal.h"
#include "ergon/wire.h"

#include <stdint.h>

/* Longest line the emitter builds (a CSV row with 6 counters is < 120). */
#define ERT_HPX_LINE_MAX 192 /* also the longest HPX_ERROR config line (~150) */

/* Keys this runtime emits that the registry in wire.h does not list yet
 * (HPX_<KEY>=<value> lines, which the host parser accepts generically).
 * Proposed for wire.h; kept here so wire.h stays owned by the parser. */
#define ERT_KEY_PMU "PMU"			  /* "present" | "missing" */
#define ERT_KEY_CYCLE_COUNTER "CYCLE_COUNTER"	  /* "present" | "missing" */
#define ERT_KEY_CLOCK_NOTE "CLOCK_NOTE"		  /* free text from the port */
#define ERT_KEY_SYSTEM_CLOCK_HZ "SYSTEM_CLOCK_HZ" /* host meta system_clock_hz */
#define ERT_KEY_WINDOW_MODE "WINDOW_MODE"	  /* "auto" | "fixed" | "busy_loop" */
#define ERT_KEY_CLEAN_REQUESTED "CLEAN_INFER_REQUESTED"
#define ERT_KEY_CLEAN_ELAPSED_US "CLEAN_ELAPSED_US"
/* Clean-window keys under the names the host parser already reads
 * (src/engines/hpx/aggregate.c meta_json). */
#define ERT_KEY_STALLED_ITERS "CLEAN_STALLED_ITERS"
#define ERT_KEY_PARTIAL_ITERS "CLEAN_PARTIAL_ITERS"
#define ERT_KEY_REF_CYCLES "CLEAN_REF_CYCLES"
#define ERT_KEY_RATE_PROBE_US "CLEAN_DWT_RATE_US"
#define ERT_KEY_RATE_PROBE_CYCLES "CLEAN_DWT_RATE_CYC"
#define ERT_KEY_DRAIN_WAIT_US "CLEAN_ATTACH_WAIT_US"
#define ERT_KEY_CLEAN_TOTAL_CYCLES "CLEAN_INFER_TOTAL_CYCLES"
#define ERT_KEY_CLEAN_AVG_CYCLES "CLEAN_INFER_AVG_CYCLES"
#define ERT_KEY_PROFILED_TOTAL_US "PROFILED_INFER_TOTAL_US"
#define ERT_KEY_DRAIN_TIMED_OUT "DRAIN_TIMED_OUT"
#define ERT_KEY_CLEAN_TRACE "CLEAN_TRACE" /* "1": lines per iteration (perturbing) */
#define ERT_HB_CLEAN_ITER "clean_iter"	  /* clean_window_trace line */
#define ERT_CSV_COL_WINDOW_US "\"window_us\""
#define ERT_CSV_COL_CYCLES "\"ARM_PMU_CPU_CYCLES\"" /* the host reads cycles from this column */

struct ert_hpx {
	const struct ert_hal *hal;
	struct ert_buf line;
	char line_data[ERT_HPX_LINE_MAX];
	int status;		/* first failure, sticky */
	uint64_t bytes_written; /* accepted by the transport */
};

#ifndef ERT_POWER_BUILD
/* Bind to a HAL; ERT_E_UNSUPPORTED when hal->write is NULL. */
int ert_hpx_init(struct ert_hpx *e, const struct ert_hal *hal);
/* Write one whole line (text + '\n'). */
int ert_hpx_line(struct ert_hpx *e, const char *text);
/* "--- <prefix><name> ---" with a string or a number. */
int ert_hpx_marker(struct ert_hpx *e, const char *prefix, const char *name);
int ert_hpx_marker_u(struct ert_hpx *e, const char *prefix, uint64_t n);
/* HPX_<key>=<value> metadata. */
int ert_hpx_meta_u(struct ert_hpx *e, const char *key, uint64_t value);
int ert_hpx_meta_s(struct ert_hpx *e, const char *key, const char *value);
/* HPX_HEARTBEAT <phase> [<key>=<value>] (key NULL for none). */
int ert_hpx_heartbeat(struct ert_hpx *e, const char *phase, const char *key, uint64_t value);
/* Build a line piecewise: begin, append with ert_buf_* on &e->line, end. */
struct ert_buf *ert_hpx_begin(struct ert_hpx *e);
int ert_hpx_end(struct ert_hpx *e);
#define ERT_HPX_ENABLED 1
#else
#define ERT_HPX_ENABLED 0
#define ert_hpx_init(e, hal) ((void)(e), (void)(hal), ERT_E_UNSUPPORTED)
#define ert_hpx_line(e, t) ((void)(e), ERT_OK)
#define ert_hpx_marker(e, p, n) ((void)(e), ERT_OK)
#define ert_hpx_marker_u(e, p, n) ((void)(e), ERT_OK)
#define ert_hpx_meta_u(e, k, v) ((void)(e), ERT_OK)
#define ert_hpx_meta_s(e, k, v) ((void)(e), ERT_OK)
#define ert_hpx_heartbeat(e, p, k, v) ((void)(e), ERT_OK)
#endif

#endif
