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

/* Every token this runtime prints is in ergon/wire.h (the one registry). */

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
