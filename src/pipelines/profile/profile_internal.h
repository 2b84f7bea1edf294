/* profile/'s private header: the run context and the stages of `ergon
 * profile`, in the order ergon_profile_run (profile.c) calls them:
 *
 *   1. plan     profile_plan.c     counter passes, window, lock-step, the
 *                                  images each stage boots
 *   2. accept   profile_accept.c   the configuration that must act: the
 *                                  transport and reset as the lifecycle
 *                                  carries them out (its options)
 *   3. pmu      profile_pmu.c      boot the profile build and capture its
 *                                  PMU stream (hpx/), parse, clean-window
 *                                  checks
 *   4. power    profile_power.c    sim | live (profile_live.c) | internal:
 *                                  the gated capture and the power section
 *   5. outputs  profile_outputs.c  summary.json (with profile_model.c's
 *                                  model and correctness), the CSVs
 *
 * Each stage is a function on the one run context (struct prof_run) that
 * returns its typed result; a stage uses what earlier stages returned and
 * never calls into an earlier stage's file (scripts/check_flow.py). The
 * few helpers every stage needs are inline here.
 */
#ifndef ERGON_PROFILE_INTERNAL_H
#define ERGON_PROFILE_INTERNAL_H

#include "ergon/fileio.h"
#include "ergon/hpx.h"
#include "ergon/hpx_capture.h"
#include "ergon/layer_energy.h"
#include "ergon/lifecycle.h"
#include "pipelines/common/common.h"
#include "ergon/profile.h"
#include "ergon/rating.h"
#include "ergon/sim.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

/* The run context: what ergon_profile_run set up, shared by every stage. */
struct prof_run {
	const struct ergon_profile_opts *o;
	const struct ergon_lifecycle_driver *drv;
	int sim;
	int aggregation;
	int interrupted;
	json_t *issues;		/* every issue, in stage order (owned) */
	struct ergon_err first; /* the first stage error */
	/* The lifecycle options every stage opens its board with (the accept
	 * stage's, and the run's timeouts; work_dir is the stage's). */
	struct ergon_lifecycle_opts lo;
	/* How a stage captures its board's stream: progress hooks, write
	 * flags, the interrupt flag (dir and bounds are the stage's). */
	struct ergon_hpx_target_opts capture;
	/* Progress (opts.progress): the running stage, its number of the
	 * stages that run, the planned counter passes, the passes seen and
	 * the preset of the last one. */
	const char *stage;
	unsigned stage_no, stages, passes, pass;
	char preset[96];
	/* The live instrument's rating (its identity's, copied before the
	 * instrument closes): the gated engine puts packets in its ranges and
	 * the power section's budgets use it. */
	struct ergon_rating live_rating;
	int have_live_rating;
	/* --repeat: the power stage's repetition (1-based) of reps; with
	 * reps > 1 each writes into DIR/power/rep-K. */
	unsigned rep, reps;
	/* --repeat: each repetition's entry (borrowed from ergon_profile_run;
	 * NULL: not repeated) and the planned count, for the outputs. */
	json_t *repetitions;
	unsigned planned;
	/* --layer-energy with ergon's own images: the power build made again
	 * with the marker plan's mask (its build record; owned), which the
	 * summary's model.builds shows in place of the first one. */
	json_t *power_build;
};

/* What a stage ended with; profile.c records it in the stage's entry of
 * summary.json ("stages") and, for a failure, in the issues. */
enum prof_status {
	PROF_OK = 1,	  /* "ok" */
	PROF_EMPTY,	  /* "failed": it ran, and gave nothing (no error) */
	PROF_FAILED,	  /* "failed" with the error and profile.stage_failed */
	PROF_INTERRUPTED, /* "interrupted" and profile.interrupted */
	PROF_REFUSED,	  /* "refused": the stage recorded why */
};

/* 1. The plan (profile_plan.c). */
struct prof_plan {
	json_t *json;		      /* the plan as summary.json holds it (owned) */
	unsigned passes;	      /* the planned counter passes */
	const char *pmu_image;	      /* what each stage boots: a firmware file, or */
	const char *power_image;      /* on the virtual bench a scenario */
	struct ergon_sim_options sim; /* the virtual bench's settings (sim only) */
	/* The power stage's budget estimate (plan.power.uncertainty_estimate):
	 * 1 when the gate (power.max_uncertainty_pct) cannot be met, and why. */
	int u_refused;
	char u_why[700];
	/* The on-board INA228's rating (internal mode's budgets), from
	 * prof_ina228_rating; have_ina228_rating 0: none. */
	struct ergon_rating ina228_rating;
	int have_ina228_rating;
};
/* o may be NULL (the plan alone, without a run): no images then. model
 * (may be NULL): the .tflite a run on the virtual bench runs (its currents
 * are the operators', not the bench's 5 mA). */
int prof_plan(const struct ergon_config *cfg, const struct ergon_profile_opts *o,
	      const json_t *model, struct prof_plan *out, struct ergon_err *err);


/* 2. Configuration that must act (profile_accept.c): the transport and
 * reset the lifecycle really uses, named in the plan (plan.transport,
 * plan.reset); ERGON_ECONFIG naming the key and the reason for an
 * explicit value that cannot act; a rule-derived reset step that is not
 * performed becomes profile.reset_step_not_performed in issues (NULL:
 * none; the plan fields come out the same). lo (may be NULL) gets the
 * lifecycle options the configuration gives: board, probe, stream,
 * reset strategy and its SWPOI write, serial port. model (may be NULL):
 * the .tflite run's document; on qemu-an547 it means ergon builds the
 * firmware, where profiling.extreme_mode / force_shared_sram act
 * (plan.memory). */
int prof_accept(const struct ergon_config *cfg, const json_t *model, json_t *plan,
		json_t *issues, struct ergon_lifecycle_opts *lo, struct ergon_err *err);
/* The same, and --layer-energy's marker line (layer_energy: the flag). */
int prof_accept_run(const struct ergon_config *cfg, const json_t *model, int layer_energy,
		    json_t *plan, json_t *issues, struct ergon_lifecycle_opts *lo,
		    struct ergon_err *err);

/* 3. The PMU stage (profile_pmu.c). */
struct prof_pmu {
	int status;		    /* enum prof_status */
	int rc;			    /* 0: the stage ran to its end */
	struct ergon_err err;	    /* PROF_FAILED: why */
	double clean_infer_avg_us;  /* CLEAN_INFER_AVG_US; 0 unknown */
	uint64_t clean_infer_count; /* CLEAN_INFER_COUNT; 0 unknown */
	/* The clean window reported inferences that took zero time
	 * (CLEAN_INFER_AVG_US=0 with CLEAN_INFER_COUNT > 0): the device timing
	 * is corrupt (power.device_timing_corrupt). */
	int clean_zero_time;
	json_t *profile;      /* the profile body (owned) or NULL */
	json_t *device_clean; /* device_clean_* of the profile boot (owned) or NULL */
};
void prof_pmu(struct prof_run *r, const struct prof_plan *plan, json_t *stage,
	      struct prof_pmu *out);

/* 4. The power stage (profile_power.c). */
struct prof_power {
	int status;	      /* enum prof_status */
	struct ergon_err err; /* PROF_FAILED: why */
	json_t *section;      /* the power section (owned) or NULL */
};
void prof_power(struct prof_run *r, const struct prof_plan *plan, const struct prof_pmu *pmu,
		json_t *stage, struct prof_power *out);
/* Firmware facts from the terminal record the parser saw (also used by
 * tests/fuzz/fuzz_profile_terminal.c). *terminal gets the record as JSON
 * (NULL when there was none; caller decrefs). */
struct ergon_power_facts;
int prof_terminal_facts(struct ergon_hpx_parser *p, double clean_infer_avg_us, int busy_loop_probe,
			int internal, struct ergon_power_facts *facts, json_t **terminal,
			struct ergon_err *err);

/* The live external capture (profile_live.c), the power stage's path for
 * power.driver joulescope or ppk2 on a real board. *g_out gets the gated
 * engine fed with the window (caller finishes and frees), *live_out the
 * capture's facts (caller decrefs); both may be set when rc != 0. */
struct ergon_gated;
/* --layer-energy on a live meter: the marker line on input
 * marker_input_index beside the gate, fed to the layer engine sample by
 * sample as the gated engine gets them (a PPK2's raw samples; a
 * Joulescope's statistics packets, one packet one sample, lock-step off). The capture plans the markers
 * from profile at the meter's rate (plan) and makes the engine (L); a
 * layer engine that refused a sample (a lost one: NaN) stops taking
 * samples, failed is 1 with why in err, and the gated capture goes on.
 * Owned members: prof_live_layers_cleanup. */
struct prof_live_layers {
	const json_t *profile; /* the PMU stage's profile section (borrowed) */
	unsigned marker_input_index;
	struct ergon_layer_plan plan;
	struct ergon_layers *L;
	int failed;
	struct ergon_err err;
	/* A Joulescope: its statistics packets are the engine's samples, at
	 * packet_rate_hz (0: a raw meter). */
	double packet_rate_hz;
	/* The rate the opened meter gives (the engine's); the plan's is
	 * plan.rate_hz, made before the meter opened. */
	double meter_rate_hz;
	/* The image to flash when the power build was made again with the
	 * plan's mask ("" otherwise). */
	char image[PATH_MAX];
	int have_prev;
	double prev_t_end_s, prev_energy_j;
	int prev_acc;
};
static inline void prof_live_layers_cleanup(struct prof_live_layers *ly)
{
	ergon_layers_free(ly->L);
	ly->L = NULL;
	ergon_layer_plan_free(&ly->plan);
}
/* The rate a live meter will give, known before it opens: the PPK2's
 * fixed 100 kSPS (drivers/instruments/ppk2/ppk2.h, PPK2_SAMPLE_RATE_HZ), a
 * Joulescope's power.stats_rate_hz (its statistics packets are the layer
 * engine's samples). */
#define PROF_PPK2_RATE_HZ 100000.0
/* --layer-energy with a live meter, before it opens: the marker plan from
 * the PMU stage's layers (ly->profile) at that rate into ly->plan and
 * stage's "marker_plan" (the mask, its define and initializer, where it
 * came from, which mask the power image carries); with ergon's own images
 * (o->fw_build) the power image built again with the plan's mask
 * (ly->image, r->power_build). A failed build fails the stage. */
int prof_live_layers_plan(struct prof_run *r, struct prof_live_layers *ly, json_t *stage,
			  struct ergon_err *err);
/* ly: NULL without --layer-energy. */
int prof_live_capture(struct prof_run *r, const char *dir, const char *image, double duration_s,
		      double window_hb_s, struct ergon_hpx_parser *p,
		      struct ergon_hpx_capture_result *cap, struct ergon_lifecycle **lc_out,
		      struct ergon_gated **g_out, json_t **live_out, struct prof_live_layers *ly,
		      struct ergon_err *err);

/* 5. The outputs (profile_outputs.c): summary.json from the stages'
 * results into art (stages: its "stages" object, for the two stages'
 * records), its CSVs, written into slot (reserved before the stages ran). */
struct ergon_out_slot;
int prof_outputs(struct prof_run *r, const struct prof_plan *plan, struct prof_pmu *pmu,
		 const struct prof_power *pw, json_t *art, json_t *stages, json_t *pmu_stage,
		 json_t *pow_stage, struct ergon_out_slot *slot, struct ergon_err *err);
/* ergon profile MODEL.tflite: model, correctness, emulated instruction
 * counts (profile_model.c), the outputs' part; a no-op without o->model. */
void prof_model_annotate(struct prof_run *r, json_t *art, json_t *profile, json_t *pmu_stage);

/* --- what every stage needs alike ----------------------------------------- */

static inline int prof_interrupted(const struct prof_run *r)
{
	return r->o->interrupted != NULL && *r->o->interrupted != 0;
}

/* Tell opts.progress (when set) that step of the running stage begins. */
static inline void prof_progress(struct prof_run *r, const char *step, const char *detail)
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

/* The lifecycle driver's name: target.probe pyocd[:UID] or bmp:DEVICE
 * picks its own, else target.lifecycle's (the plan names it, the accept
 * stage checks what it can do, the run opens it). */
static inline const char *prof_lifecycle_name(const struct ergon_config *cfg)
{
	const char *p = cfg->target.probe;
	if (strncmp(p, "pyocd", 5) == 0 && (p[5] == '\0' || p[5] == ':'))
		return "pyocd";
	if (strncmp(p, "bmp:", 4) == 0)
		return "bmp";
	return cfg->target.lifecycle == ERGON_LIFECYCLE_QEMU	  ? "qemu"
	       : cfg->target.lifecycle == ERGON_LIFECYCLE_JLINK	  ? "jlink"
	       : cfg->target.lifecycle == ERGON_LIFECYCLE_OPENOCD ? "openocd"
								  : "sim";
}

/* power.driver has a live path (a gated capture with a live instrument). */
static inline int prof_live_driver(const struct ergon_config *cfg)
{
	return strcmp(cfg->power.driver, "joulescope") == 0 ||
	       strcmp(cfg->power.driver, "ppk2") == 0;
}

/* How a stage ended, from its return code: interrupted (ERGON_EINTR or
 * the flag), failed with e (into *out_err), or ok_status. */
static inline int prof_stage_end(const struct prof_run *r, int rc, const struct ergon_err *e,
				 int ok_status, struct ergon_err *out_err)
{
	if (rc == ERGON_EINTR || prof_interrupted(r))
		return PROF_INTERRUPTED;
	if (rc) {
		*out_err = *e;
		return PROF_FAILED;
	}
	return ok_status;
}

/* A stage's folder, OUT/name, created. */
static inline int prof_stage_dir(struct prof_run *r, const char *name, char *dir, size_t cap,
				 struct ergon_err *err)
{
	int n = r->reps > 1 && r->rep > 0
		    ? snprintf(dir, cap, "%s/%s/rep-%u", r->o->out_dir, name, r->rep)
		    : snprintf(dir, cap, "%s/%s", r->o->out_dir, name);
	if (n < 0 || (size_t)n >= cap)
		return ergon_err_set(err, ERGON_ETOOBIG, "--out %s: path too long", r->o->out_dir);
	return ergon_mkdir_p(dir, err);
}

/* A stage's capture of its board's stream into DIR/capture.log within
 * timeout_s. The heartbeat bound is target.heartbeat.host_timeout_s, at
 * least hb_floor_s for the whole capture (the power build is silent from
 * boot to its record); window_hb_s: the bound inside the clean window (0:
 * none beyond the host's). */
static inline struct ergon_hpx_target_opts prof_capture_opts(const struct prof_run *r,
							     const char *dir, double timeout_s,
							     double hb_floor_s, double window_hb_s)
{
	struct ergon_hpx_target_opts t = r->capture;
	double hb = r->o->cfg->target.heartbeat.host_timeout_s;
	if (hb > 0 && hb_floor_s > hb)
		hb = hb_floor_s;
	t.dir = dir;
	t.timeout_s = timeout_s;
	t.heartbeat_s = hb > 0 ? hb : 0;
	t.window_heartbeat_s = window_hb_s;
	return t;
}

/* The heartbeat bound inside the clean window, which the target keeps
 * silent: the planned window plus a margin of max(2 s, 25 %). Auto runs to
 * window_target_ms (longer only by the last inference); fixed runs
 * `iterations` x the inference time, known after the PMU stage
 * (avg_us > 0); unknown: 0, and only the overall bound applies there. */
static inline double prof_planned_window_hb_s(const struct ergon_config *cfg, double avg_us)
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

#endif
