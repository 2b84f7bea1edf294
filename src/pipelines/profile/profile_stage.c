/* What every stage of `ergon profile` does alike: the stage's folder, its
 * failure record, and booting the board to capture its stream (the PMU and
 * the power stage, profile.c and profile_power.c, both use these). */
#include "ergon/fileio.h"
#include "ergon/issues.h"
#include "ergon/sim.h"
#include "ergon/wire.h"
#include "profile_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int prof_interrupted(const struct prof_run *r)
{
	return r->o->interrupted != NULL && *r->o->interrupted != 0;
}

void prof_progress(struct prof_run *r, const char *step, const char *detail)
{
	if (r->o->progress == NULL)
		return;
	struct ergon_profile_progress p = {.stage = r->stage ? r->stage : "",
					   .step = step,
					   .detail = detail,
					   .pass = r->pass,
					   .passes = r->passes,
					   .stage_no = r->stage_no,
					   .stages = r->stages};
	r->o->progress(r->o->progress_ctx, &p);
}

/* A capture's lines: a new `--- HPX_PRESET name ---` is a new counter pass. */
static void capture_line(void *ctx, const char *line)
{
	struct prof_run *r = ctx;
	size_t pl = strlen(HPX_TOK_PRESET_PREFIX);
	static const char num[] = HPX_TOK_META_PREFIX HPX_KEY_NUM_PRESETS "=";
	if (strncmp(line, num, sizeof num - 1) == 0) {
		/* The firmware's own pass count beats the host's plan. */
		unsigned long k = strtoul(line + sizeof num - 1, NULL, 10);
		if (k > 0 && k < 1000)
			r->passes = (unsigned)k;
		return;
	}
	if (strncmp(line, HPX_TOK_PRESET_PREFIX, pl) != 0)
		return;
	const char *name = line + pl;
	size_t l = strlen(name);
	if (l >= 4 && strcmp(name + l - 4, " ---") == 0)
		l -= 4;
	if (r->pass > 0 && strlen(r->preset) == l && strncmp(r->preset, name, l) == 0)
		return; /* the same pass again (its next iteration) */
	snprintf(r->preset, sizeof r->preset, "%.*s", (int)l, name);
	r->pass++;
	prof_progress(r, "pass", r->preset);
}

void prof_stage_fail(struct prof_run *r, json_t *stage, const char *status,
		     const struct ergon_err *e)
{
	json_object_set_new(stage, "status", json_string(status));
	if (e != NULL && e->msg[0]) {
		json_object_set_new(stage, "error", json_string(e->msg));
		ergon_err_set(&r->first, e->code ? e->code : ERGON_EIO, "%s", e->msg);
	}
	if (strcmp(status, "interrupted") == 0) {
		if (!ergon_issue_has(r->issues, "profile.interrupted"))
			ergon_issue_add(r->issues, "profile.interrupted", NULL,
					"interrupted during the %s stage; the artifacts so far are "
					"kept and marked",
					json_string_value(json_object_get(stage, "name")));
		r->interrupted = 1;
	} else {
		ergon_issue_add(
		    r->issues, "profile.stage_failed",
		    json_pack("{s:s}", "stage", json_string_value(json_object_get(stage, "name"))),
		    "the %s stage failed: %s", json_string_value(json_object_get(stage, "name")),
		    e && e->msg[0] ? e->msg : "see the stage's log");
	}
}

void prof_lifecycle_opts(const struct prof_run *r, const char *dir, struct ergon_lifecycle_opts *lo)
{
	const struct ergon_config *cfg = r->o->cfg;
	const char *probe = cfg->target.probe;
	*lo = (struct ergon_lifecycle_opts){
	    .board = cfg->board->name,
	    .device = cfg->board->soc,
	    .probe_serial = cfg->target.jlink_serial,
	    .work_dir = dir,
	    .start_timeout_s = r->o->start_timeout_s,
	    .rtt_port = r->o->rtt_port,
	    .stream = prof_lifecycle_stream(cfg),
	    /* target.probe is checked to be one of its forms (resolve.c). */
	    .gdb_server = strncmp(probe, "gdb://", 6) == 0 ? probe + 6 : NULL,
	    .cancel = r->o->interrupted,
	    .probe = probe,
	};
	/* power.reset_strategy, the SWPOI write and target.usb_port. */
	prof_lifecycle_reset_opts(cfg, lo);
}

int prof_stage_dir(struct prof_run *r, const char *name, char *dir, size_t cap,
		   struct ergon_err *err)
{
	if ((size_t)snprintf(dir, cap, "%s/%s", r->o->out_dir, name) >= cap)
		return ergon_err_set(err, ERGON_ETOOBIG, "--out %s: path too long", r->o->out_dir);
	return ergon_mkdir_p(dir, err);
}

struct open_reset {
	struct prof_run *r;
	struct ergon_lifecycle *lc;
};

/* The capture's on_open hook for a serial stream: start the target now
 * that the port is open, so its first line is not lost. */
static int reset_on_open(void *ctx, struct ergon_err *err)
{
	struct open_reset *c = ctx;
	prof_progress(c->r, "start", c->r->o->cfg->board->name);
	return c->r->drv->reset(c->lc, err);
}

/* Capture the stream of lc's endpoint into DIR/capture.log, feeding p;
 * with reset set, reset the target once the endpoint is open. */
static int capture_endpoint(struct prof_run *r, struct ergon_lifecycle *lc, const char *dir,
			    double timeout_s, double hb_floor_s, double window_hb_s, int reset,
			    struct ergon_hpx_parser *p, struct ergon_hpx_capture_result *cap,
			    struct ergon_err *err)
{
	const struct ergon_config *cfg = r->o->cfg;
	char spec[1200], log[1200];
	snprintf(log, sizeof log, "%s/capture.log", dir);
	int rc = r->drv->endpoint(lc, spec, sizeof spec, err);
	if (!rc && !prof_interrupted(r)) {
		double hb = cfg->target.heartbeat.host_timeout_s;
		if (hb > 0 && hb_floor_s > hb)
			hb = hb_floor_s;
		struct ergon_hpx_capture_opts co = {.transport = spec,
						    .log_path = log,
						    .write_flags = r->o->write_flags,
						    .timeout_s = timeout_s,
						    .heartbeat_s = hb > 0 ? hb : 0,
						    .window_heartbeat_s = window_hb_s,
						    .cancel = r->o->interrupted};
		if (r->o->progress != NULL) {
			co.on_line = capture_line;
			co.on_line_ctx = r;
		}
		struct open_reset orc = {.r = r, .lc = lc};
		if (reset) {
			co.on_open = reset_on_open;
			co.on_open_ctx = &orc;
		}
		prof_progress(r, "capture", spec);
		rc = ergon_hpx_capture(&co, p, cap, err);
	}
	return rc;
}

int prof_capture_endpoint(struct prof_run *r, struct ergon_lifecycle *lc, const char *dir,
			  double timeout_s, double hb_floor_s, double window_hb_s,
			  struct ergon_hpx_parser *p, struct ergon_hpx_capture_result *cap,
			  struct ergon_err *err)
{
	return capture_endpoint(r, lc, dir, timeout_s, hb_floor_s, window_hb_s, 0, p, cap, err);
}

int prof_boot_and_capture(struct prof_run *r, const char *dir, const char *image, double timeout_s,
			  double hb_floor_s, double window_hb_s, struct ergon_hpx_parser *p,
			  struct ergon_hpx_capture_result *cap, struct ergon_lifecycle **lc_out,
			  struct ergon_err *err)
{
	const struct ergon_config *cfg = r->o->cfg;
	struct ergon_lifecycle_opts lo;
	prof_lifecycle_opts(r, dir, &lo);
	/* A serial port keeps nothing sent before it is open: reset after. */
	int late_reset = lo.stream == ERGON_LC_STREAM_SERIAL;
	/* The virtual firmware is "built" with the resolved configuration. */
	struct ergon_sim_options so;
	if (r->sim) {
		ergon_profile_sim_options(cfg, &so);
		/* ergon profile MODEL.tflite --board sim: the virtual firmware
		 * runs the model (sim.h, model_path). */
		so.model_path = json_string_value(json_object_get(r->o->model, "path"));
		lo.sim_options = &so;
	}
	struct ergon_lifecycle *lc = NULL;
	int rc = r->drv->open(&lo, &lc, err);
	if (rc)
		return rc;
	*lc_out = lc;
	if (!rc && !prof_interrupted(r)) {
		prof_progress(r, "firmware", image);
		rc = r->drv->flash(lc, image, err);
	}
	if (!rc && !prof_interrupted(r) && !late_reset) {
		prof_progress(r, "start", cfg->board->name);
		rc = r->drv->reset(lc, err);
	}
	if (!rc && !prof_interrupted(r))
		rc = capture_endpoint(r, lc, dir, timeout_s, hb_floor_s, window_hb_s, late_reset, p,
				      cap, err);
	if (prof_interrupted(r) && rc == 0)
		rc = ERGON_EINTR;
	struct ergon_err fe = {0};
	r->drv->finish(lc, &fe);
	return rc;
}

/* The heartbeat bound inside the clean window, which the target keeps
 * silent: the planned window plus a margin of max(2 s, 25 %). Auto runs to
 * window_target_ms (longer only by the last inference); fixed runs
 * `iterations` x the inference time, known after the PMU stage
 * (avg_us > 0); unknown: 0, and only the overall bound applies there. */
double prof_planned_window_hb_s(const struct ergon_config *cfg, double avg_us)
{
	double w = 0.0;
	if (cfg->profiling.window_mode == ERGON_WINDOW_AUTO)
		w = (double)cfg->profiling.window_target_ms * 1e-3;
	else if (avg_us > 0)
		w = (double)cfg->profiling.iterations * avg_us * 1e-6;
	if (!(w > 0))
		return 0.0;
	double margin = 0.25 * w;
	return w + (margin < 2.0 ? 2.0 : margin);
}
