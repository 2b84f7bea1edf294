/* A target's HPX stream through its lifecycle driver (ergon/lifecycle.h):
 * open, flash, reset and capture (ergon_hpx_capture_boot), or the capture
 * alone on a target already reset (ergon_hpx_capture_endpoint). The
 * capture itself is ergon_hpx_capture (hpx_capture.c). `ergon profile`'s
 * PMU and power stages and its live power path run their boards through
 * these. */
#include "ergon/hpx_capture.h"
#include "ergon/lifecycle.h"

#include <stdio.h>

static int cancelled(const struct ergon_hpx_target_opts *o)
{
	return o->cancel != NULL && *o->cancel != 0;
}

static void step(const struct ergon_hpx_target_opts *o, const char *name, const char *detail)
{
	if (o->on_step != NULL)
		o->on_step(o->ctx, name, detail);
}

struct open_reset {
	const struct ergon_hpx_target_opts *o;
	struct ergon_lifecycle *lc;
};

/* The capture's on_open hook for a serial stream: start the target now
 * that the port is open, so its first line is not lost. */
static int reset_on_open(void *ctx, struct ergon_err *err)
{
	struct open_reset *c = ctx;
	step(c->o, "start", c->o->board);
	return c->o->drv->reset(c->lc, err);
}

/* Capture the stream of lc's endpoint into DIR/capture.log, feeding p;
 * with reset set, reset the target once the endpoint is open. */
static int capture_endpoint(const struct ergon_hpx_target_opts *o, struct ergon_lifecycle *lc,
			    int reset, struct ergon_hpx_parser *p,
			    struct ergon_hpx_capture_result *cap, struct ergon_err *err)
{
	char spec[1200], log[1200];
	snprintf(log, sizeof log, "%s/capture.log", o->dir);
	int rc = o->drv->endpoint(lc, spec, sizeof spec, err);
	if (!rc && !cancelled(o)) {
		struct ergon_hpx_capture_opts co = {.transport = spec,
						    .log_path = log,
						    .write_flags = o->write_flags,
						    .timeout_s = o->timeout_s,
						    .heartbeat_s = o->heartbeat_s,
						    .window_heartbeat_s = o->window_heartbeat_s,
						    .cancel = o->cancel,
						    .on_line = o->on_line,
						    .on_line_ctx = o->ctx};
		struct open_reset orc = {.o = o, .lc = lc};
		if (reset) {
			co.on_open = reset_on_open;
			co.on_open_ctx = &orc;
		}
		step(o, "capture", spec);
		rc = ergon_hpx_capture(&co, p, cap, err);
	}
	return rc;
}

int ergon_hpx_capture_endpoint(const struct ergon_hpx_target_opts *o, struct ergon_lifecycle *lc,
			       struct ergon_hpx_parser *p, struct ergon_hpx_capture_result *cap,
			       struct ergon_err *err)
{
	return capture_endpoint(o, lc, 0, p, cap, err);
}

int ergon_hpx_capture_boot(const struct ergon_hpx_target_opts *o,
			   const struct ergon_lifecycle_opts *lo, const char *image,
			   struct ergon_hpx_parser *p, struct ergon_hpx_capture_result *cap,
			   struct ergon_lifecycle **lc_out, struct ergon_err *err)
{
	/* A serial port keeps nothing sent before it is open: reset after. */
	int late_reset = lo->stream == ERGON_LC_STREAM_SERIAL;
	struct ergon_lifecycle *lc = NULL;
	int rc = o->drv->open(lo, &lc, err);
	if (rc)
		return rc;
	*lc_out = lc;
	if (!rc && !cancelled(o)) {
		step(o, "firmware", image);
		rc = o->drv->flash(lc, image, err);
	}
	if (!rc && !cancelled(o) && !late_reset) {
		step(o, "start", o->board);
		rc = o->drv->reset(lc, err);
	}
	if (!rc && !cancelled(o))
		rc = capture_endpoint(o, lc, late_reset, p, cap, err);
	if (cancelled(o) && rc == 0)
		rc = ERGON_EINTR;
	struct ergon_err fe = {0};
	o->drv->finish(lc, &fe);
	return rc;
}
