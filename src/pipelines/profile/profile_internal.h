/* Private to the profile pipeline (profile*.c). */
#ifndef ERGON_PROFILE_INTERNAL_H
#define ERGON_PROFILE_INTERNAL_H

#include "ergon/hpx.h"
#include "ergon/hpx_capture.h"
#include "ergon/lifecycle.h"
#include "ergon/profile.h"

#include <jansson.h>

struct prof_run {
	const struct ergon_profile_opts *o;
	const struct ergon_lifecycle_driver *drv;
	int sim;
	int aggregation;
	int interrupted;
	double clean_infer_avg_us;  /* the PMU stage's CLEAN_INFER_AVG_US; 0 unknown */
	uint64_t clean_infer_count; /* the PMU stage's CLEAN_INFER_COUNT; 0 unknown */
	/* The PMU stage's clean window reported inferences that took zero
	 * time (CLEAN_INFER_AVG_US=0 with CLEAN_INFER_COUNT > 0): the device
	 * timing is corrupt (power.device_timing_corrupt). */
	int clean_zero_time;
	json_t *issues;		    /* every issue, in stage order (owned) */
	json_t *profile;	    /* the profile body (owned) or NULL */
	json_t *power;		    /* the power section (owned) or NULL */
	json_t *device_clean;	    /* device_clean_* of the profile boot (owned) or NULL */
	struct ergon_err first;	    /* the first stage error */
	/* Progress (opts.progress): the running stage, its number of the
	 * stages that run, the planned counter passes, the passes seen and
	 * the preset of the last one. */
	const char *stage;
	unsigned stage_no, stages, passes, pass;
	char preset[96];
};

int prof_interrupted(const struct prof_run *r);
/* Tell opts.progress (when set) that step of the running stage begins. */
void prof_progress(struct prof_run *r, const char *step, const char *detail);
/* Mark a stage "failed" or "interrupted", with the error and an issue. */
void prof_stage_fail(struct prof_run *r, json_t *stage, const char *status,
		     const struct ergon_err *e);
/* The lifecycle stream (enum ergon_lifecycle_stream) of a configuration:
 * target.transport rtt on QEMU or with target.probe gdb:// is RTT_GDB. */
int prof_lifecycle_stream(const struct ergon_config *cfg);
/* The board SoC's SWPOI register write (address, value); 0, 0 when the SoC
 * has none known. */
void prof_lifecycle_swpoi(const struct ergon_config *cfg, unsigned long *addr,
			  unsigned long *value);
/* The reset strategy, its SWPOI register write and the serial port of a
 * configuration into the lifecycle options (every stage's lifecycle). */
void prof_lifecycle_reset_opts(const struct ergon_config *cfg, struct ergon_lifecycle_opts *lo);
/* power.reset_strategy as enum ergon_lifecycle_reset. */
int prof_lifecycle_reset(const struct ergon_config *cfg);
/* The lifecycle driver's name: target.probe pyocd[:UID] or bmp:DEVICE
 * picks its own, else target.lifecycle's. */
const char *prof_lifecycle_name(const struct ergon_config *cfg);
/* The lifecycle options of a stage in dir, from the configuration: both
 * the boot path and the live power path (profile_live.c) open with them,
 * so target.probe, the stream and the reset strategy reach every
 * lifecycle. lo->sim_options is left NULL. */
struct ergon_lifecycle_opts;
void prof_lifecycle_opts(const struct prof_run *r, const char *dir,
			 struct ergon_lifecycle_opts *lo);
int prof_stage_dir(struct prof_run *r, const char *name, char *dir, size_t cap,
		   struct ergon_err *err);
/* hb_floor_s: the heartbeat bound is at least this for the whole capture
 * (the power build is silent from boot to its record); window_hb_s: the
 * bound inside the clean window (0: none beyond the host's). */
int prof_boot_and_capture(struct prof_run *r, const char *dir, const char *image, double timeout_s,
			  double hb_floor_s, double window_hb_s, struct ergon_hpx_parser *p,
			  struct ergon_hpx_capture_result *cap, struct ergon_lifecycle **lc_out,
			  struct ergon_err *err);
/* Endpoint, then the HPX capture into p (raw log DIR/capture.log), on a
 * lifecycle already reset (also the live capture's, profile_live.c). */
int prof_capture_endpoint(struct prof_run *r, struct ergon_lifecycle *lc, const char *dir,
			  double timeout_s, double hb_floor_s, double window_hb_s,
			  struct ergon_hpx_parser *p, struct ergon_hpx_capture_result *cap,
			  struct ergon_err *err);
/* Firmware facts from the terminal record the parser saw (also used by
 * tests/fuzz/fuzz_profile_terminal.c). *terminal gets the record as JSON
 * (NULL when there was none; caller decrefs). */
struct ergon_power_facts;
int prof_terminal_facts(struct ergon_hpx_parser *p, double clean_infer_avg_us, int busy_loop_probe,
			int internal, struct ergon_power_facts *facts, json_t **terminal,
			struct ergon_err *err);
double prof_planned_window_hb_s(const struct ergon_config *cfg, double avg_us);
/* ergon profile MODEL.tflite: model, correctness, emulated instruction
 * counts (profile_model.c); a no-op without o->model. */
void prof_model_annotate(struct prof_run *r, json_t *art, json_t *pmu_stage);
/* Configuration that must act (profile_accept.c): the transport and reset
 * the lifecycle really uses, named in the plan (plan.transport,
 * plan.reset); ERGON_ECONFIG naming the key and the reason for an
 * explicit value that cannot act; a rule-derived reset step that is not
 * performed becomes profile.reset_step_not_performed in issues (NULL:
 * none; ergon_profile_plan runs it so, the run again with its issues:
 * the plan fields come out the same). */
int prof_config_acts(const struct ergon_config *cfg, json_t *plan, json_t *issues,
		     struct ergon_err *err);
/* The power stage; pmu_ok: the PMU stage finished (its timing is known). */
void prof_power_stage(struct prof_run *r, json_t *stage, json_t *plan, int pmu_ok);

/* The live external capture (profile_live.c): power.driver joulescope or
 * ppk2 on a real board. *g_out gets the gated engine fed with the window
 * (caller finishes and frees), *live_out the capture's facts (caller
 * decrefs); both may be set when rc != 0. */
struct ergon_gated;
int prof_live_driver(const struct ergon_config *cfg);
int prof_live_capture(struct prof_run *r, const char *dir, const char *image, double duration_s,
		      double window_hb_s, struct ergon_hpx_parser *p,
		      struct ergon_hpx_capture_result *cap, struct ergon_lifecycle **lc_out,
		      struct ergon_gated **g_out, json_t **live_out, struct ergon_err *err);
/* What the live capture saw of the lock-step handshake, into the sync block. */
void prof_live_sync(json_t *sync, const json_t *live);

#endif
