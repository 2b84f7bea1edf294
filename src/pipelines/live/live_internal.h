/* What the gated captures (live_gate.c, live_raw.c) share: the reset on
 * a thread of its own while the instrument is drained, and the clock. */
#ifndef ERGON_LIVE_INTERNAL_H
#define ERGON_LIVE_INTERNAL_H

#include "ergon/live_gate.h"

/* Keep draining an instrument while cfg->reset runs: a probe's reset or
 * flash takes seconds, and an instrument that is not read meanwhile
 * loses what it measured (a PPK2's USB buffer, a Joulescope's vendor
 * queue overflow). Runs cfg->reset(cfg->reset_ctx) on a thread of its own
 * and calls drain(ctx) on this one until the reset has returned; drain
 * reads what is there (waiting briefly when nothing is) and returns 0, or
 * non-zero when it has nothing more to read (it is then not called again;
 * this thread sleeps 10 ms at a time instead). *t_done_s is the host's
 * monotonic time at which the reset returned. Returns the reset's own
 * result, its message in err; ERGON_ENOMEM when no thread could start (the
 * reset did not run). */
int live_reset_draining(const struct ergon_live_config *cfg, int (*drain)(void *ctx), void *ctx,
			double *t_done_s, struct ergon_err *err);

/* The host's monotonic clock, in seconds. */
double live_now_s(void);

#endif
