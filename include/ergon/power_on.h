/* `ergon power-on` as a pipeline (src/pipelines/live/power_on.c): open the
 * instrument with the target's power on (a PPK2 as a source meter with DUT
 * power on; a Joulescope with its passthrough on), hold it, and release
 * it. The CLI parses arguments, installs the signal handlers and
 * prints; it never opens the instrument itself.
 */
#ifndef ERGON_POWER_ON_H
#define ERGON_POWER_ON_H

#include "ergon/error.h"
#include "ergon/instrument.h"

#include <signal.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ergon_power_on_opts {
	const char *spec;   /* --instrument: "ppk2", "ppk2:PORT", "ppk2:serial=SN",
			     * "joulescope", "joulescope:SERIAL" */
	const char *vdd_kv; /* "vdd_mv=N" (the supply a PPK2 drives) or NULL; refused for
			     * a Joulescope, which sets no voltage */
	int off_on_exit;    /* switch the target's power off on release */
	double hold_s;	    /* release after this long; <= 0: hold until *stop */
	/* Set (by a signal handler) to release early; may be NULL with hold_s > 0. */
	const volatile sig_atomic_t *stop;
	/* Called once the power is on, before holding (the CLI prints there);
	 * may be NULL. */
	void (*on_powered)(void *ctx, const struct ergon_instrument_identity *id);
	void *ctx;
};

/* A PPK2: open o->spec with mode=source, dut_power=on, off_on_exit and
 * vdd_kv, call o->on_powered, hold, and close (which leaves the power on
 * unless off_on_exit). A Joulescope (or another bridge, `bridge:...`):
 * open it, switch its passthrough on through the bridge (the bridge's ack
 * says the relay changed), call o->on_powered, hold while taking what the
 * bridge writes, switch the passthrough off when off_on_exit, close. An
 * instrument that cannot be opened or switched returns its error
 * (ERGON_EUSAGE naming vdd_mv when a PPK2 needs a voltage; ERGON_ENOTSUP
 * from a bridge that cannot switch the supply); a bridge that fails while
 * held (its Joulescope unplugged) returns that failure. */
ERGON_API int ergon_power_on_run(const struct ergon_power_on_opts *o, struct ergon_err *err);

#ifdef __cplusplus
}
#endif
#endif
