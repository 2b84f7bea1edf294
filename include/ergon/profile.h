/* `ergon profile`: the two-stage pipeline on a target (issue 7).
 *
 *   1. plan       counter passes (pmu.h), window, lock-step, duration
 *   2. PMU stage  flash the profile firmware, reset, capture to the end
 *                 sentinel (raw log kept in OUT/pmu/capture.log), parse
 *   3. power      flash the power firmware (or keep the shared one and say
 *                 so), instrument stream + gate, reset, READY, GO, gate,
 *                 terminal record (OUT/power/capture.log), gated analysis
 *   4. outputs    OUT/summary.json, OUT/profile_results.csv, OUT/detailed/
 *
 * A stage that fails leaves what it has, marked in summary.json
 * ("stages": {"pmu": {"status": "failed", "error": ...}}); an interrupt
 * (the flag set by the caller's signal handler) marks it "interrupted".
 * docs/internals/profile.md.
 */
#ifndef ERGON_PROFILE_H
#define ERGON_PROFILE_H

#include "ergon/analyze.h"
#include "ergon/config.h"
#include "ergon/error.h"
#include "ergon/verdict.h"

#include <jansson.h>
#include <signal.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Firmware binaries are found by name in FIRMWARE_DIR: the profile build
 * contains "profile", the power build "power", with one of these endings. */
#define ERGON_PROFILE_FW_EXTS ".elf, .axf, .bin, .hex"
#define ERGON_PROFILE_PATH_MAX 1024

struct ergon_profile_firmware {
	char profile[ERGON_PROFILE_PATH_MAX];
	char power[ERGON_PROFILE_PATH_MAX]; /* "" when not needed */
};

/* Find the binaries in dir. need_power: the power binary is required
 * (power enabled with firmware: dedicated). Errors name the folder, what
 * is missing and the fix. */
ERGON_API int ergon_profile_firmware_find(const char *dir, int need_power,
					  struct ergon_profile_firmware *fw, struct ergon_err *err);
/* The same for a link: ERGON_PROFILE_FW_RTT takes only a profile build with
 * "rtt" in its name (ergon_an547_profile_rtt.elf), ERGON_PROFILE_FW_UART
 * only one without; each says so when the folder has only the other. */
enum { ERGON_PROFILE_FW_ANY = 0, ERGON_PROFILE_FW_UART = 1, ERGON_PROFILE_FW_RTT = 2 };
ERGON_API int ergon_profile_firmware_find_link(const char *dir, int need_power, int link,
					       struct ergon_profile_firmware *fw,
					       struct ergon_err *err);
/* The binaries ergon itself just built for a model: the "elf" of the
 * profile and power entries of model.builds (ergon_model_fw_prepare_profile's
 * record), never a search of the folder, where an image left by an earlier
 * run into the same OUT (another board's, with --force) would sort first.
 * need_power: the power build is required. */
ERGON_API int ergon_profile_firmware_built(const json_t *model, int need_power,
					   struct ergon_profile_firmware *fw,
					   struct ergon_err *err);
/* The link a resolved configuration needs from the firmware (QEMU: the
 * build's transport; other lifecycles: any). */
ERGON_API int ergon_profile_firmware_link(const struct ergon_config *cfg);

/* The plan of a resolved configuration: counter passes, window, lock-step,
 * power stage settings, each with its origin. *out is a new reference. */
ERGON_API int ergon_profile_plan(const struct ergon_config *cfg, json_t **out,
				 struct ergon_err *err);
/* The same for a run of a .tflite model (model: the document
 * ergon_model_fw_prepare_profile gave, NULL: none). With the power stage,
 * plan.power.uncertainty_estimate is the budget estimate before measuring
 * (docs/UNCERTAINTY.md): its "verdict" is "cannot meet the limit" when the
 * run would be refused under power.max_uncertainty_pct. */
ERGON_API int ergon_profile_plan_model(const struct ergon_config *cfg, const json_t *model,
				       json_t **out, struct ergon_err *err);

/* What ergon_profile_run is doing, for a progress display (opts.progress). */
struct ergon_profile_progress {
	const char *stage;	   /* "pmu", "power", "outputs" */
	const char *step;	   /* "firmware" (program or, on the sim, build the image),
				    * "start" (reset the target), "capture" (read its stream),
				    * "pass" (a PMU counter pass began), "repetition" (--repeat:
				    * a power repetition began, detail "k/N"), "analysis",
				    * "writing" */
	const char *detail;	   /* the image, the preset, ...; may be NULL */
	unsigned pass;		   /* step "pass": this pass, 1-based */
	unsigned passes;	   /* the plan's counter passes (0: unknown) */
	unsigned stage_no, stages; /* this stage, 1-based, of the stages that run */
};

/* The images are ergon's own build of a model (ergon profile MODEL.tflite
 * --board B --power): what the power stage needs to build the power image
 * again. Borrowed strings. */
struct ergon_profile_fw_build {
	const char *model_path; /* the .tflite */
	const char *board;	/* the board with a port (ergon_model_fw_board_check) */
	const char *dir;	/* the folder the images were built in */
	unsigned flags;		/* ERGON_MODEL_FW_* (ergon/model_fw.h) */
};

struct ergon_profile_opts {
	const struct ergon_config *cfg;		 /* resolved */
	const struct ergon_profile_firmware *fw; /* NULL for the sim lifecycle */
	const char *sim_scenario; /* sim: a scenario of ergon_sim_scenarios(), or NULL */
	const char *out_dir;
	unsigned write_flags;		    /* ERGON_WRITE_FORCE to replace earlier outputs */
	unsigned rtt_port;		    /* 0: the lifecycle's default */
	double start_timeout_s;		    /* 0: 10 s for the endpoint to appear */
	volatile sig_atomic_t *interrupted; /* set by a signal handler; may be NULL */
	/* The firmware runs this TFLite model (ergon profile MODEL.tflite):
	 * {path, sha256, operators, macs, arena_bytes, input, host_output:
	 * {bytes, fnv1a64}, builds}; NULL otherwise. Adds "model" and
	 * "correctness" to the summary and, under QEMU, per-layer
	 * pmu.emulated_instruction_count. Borrowed. */
	const json_t *model;
	/* --layer-energy: the power stage marks the layers (a marker plan from
	 * the PMU stage's layers) and folds the energy between the marker
	 * edges by layer into power.layers[] (docs/METHOD.md, "Energy per
	 * layer"): on the virtual bench, with a live PPK2, or a live
	 * Joulescope with lock-step off. */
	int layer_energy;
	/* The images are ergon's build of o->model (NULL: the user's
	 * FIRMWARE_DIR). With layer_energy and a live meter, the power stage
	 * makes the marker plan from the PMU stage's layers at the meter's
	 * rate and builds the power image again with the plan's mask
	 * (ergon_model_fw_build_power) before flashing it; without it, the
	 * plan's mask and the initializer for the user's own power build are
	 * in power.marker_plan. */
	const struct ergon_profile_fw_build *fw_build;
	/* --repeat N (issue 31): the power stage's whole capture N times (the
	 * PMU stage once); summary.json keeps each repetition
	 * (repetitions[]) and the repeat statistics of the power figures
	 * (repeat.figures.power.*, what ergon compare's Welch test reads).
	 * 0 or 1: once. At most ERGON_PROFILE_REPEAT_MAX. */
	unsigned repeat;
	/* With repeat: the PMU stage too, in every repetition (ergon validate
	 * --repeat: each repetition the whole profile), its figures in
	 * repeat.figures.profile.* (total_cycles, meta.clean_infer_avg_us,
	 * meta.clean_infer_avg_cycles). */
	int repeat_pmu;
	/* Called at every step of every stage; NULL: none. Borrowed pointers,
	 * valid during the call. */
	void (*progress)(void *ctx, const struct ergon_profile_progress *p);
	void *progress_ctx;
};

#define ERGON_PROFILE_REPEAT_MAX 100

/* How a stage of the profile ended (summary.json "stages"). */
enum ergon_profile_stage_status {
	ERGON_PROFILE_STAGE_NOT_RUN = 0,
	ERGON_PROFILE_STAGE_OK = 1,
	ERGON_PROFILE_STAGE_FAILED = 2,
	ERGON_PROFILE_STAGE_INTERRUPTED = 3,
	ERGON_PROFILE_STAGE_REFUSED = 4,  /* the power stage cannot measure here */
	ERGON_PROFILE_STAGE_DISABLED = 5, /* power.enabled is false */
};

/* What a profile run gives its caller, typed. */
struct ergon_profile_result {
	int provenance;			  /* enum ergon_provenance */
	int integrity;			  /* enum ergon_integrity */
	int valid;			  /* every stage ran and every figure was published */
	int interrupted;		  /* Ctrl-C (the opts' interrupted flag) */
	struct ergon_verdict verdict;	  /* valid, degraded or invalid, and why */
	int pmu_status, power_status;	  /* enum ergon_profile_stage_status */
	size_t layers;			  /* rows of the per-layer profile (0: none) */
	struct ergon_power_summary power; /* the power section's figures */
	char report_id[72];		  /* "sha256:..." of summary.json */
};

/* The result of a summary.json (one ergon_profile_run wrote, or one
 * loaded with ergon_artifact_load). */
ERGON_API void ergon_profile_result_read(const json_t *summary, struct ergon_profile_result *res);

/* Run the pipeline and write the artifacts. Returns 0 when the pipeline
 * ran (the measurement may still be invalid: see res->valid and the
 * verdict), or a negative ERGON_E* when summary.json itself could not be
 * written. A stage failure is recorded in the summary, its first error
 * also in err. *res (may be NULL) gets the result, typed; *summary (may
 * be NULL) the sealed artifact as written (caller decrefs). */
ERGON_API int ergon_profile_run(const struct ergon_profile_opts *o,
				struct ergon_profile_result *res, json_t **summary,
				struct ergon_err *err);

/* The sim scenario a stage runs: a chosen scenario of the stage's flow, or
 * the stage's baseline. power_internal picks baseline_ina228. */
ERGON_API const char *ergon_profile_sim_stage_scenario(const char *chosen, int power_stage,
						       int power_internal);
/* The virtual bench's settings from a resolved configuration: window
 * (mode, target, min, max, iterations, warmup), pins, lock-step and the
 * INA228 (address, shunt, full scale, conversion time, averaging); the
 * board's INA228 answers where the preset's strap puts it (0x4A on the
 * MikroE Click, 0x40 on the Adafruit breakout), else at the configured
 * address. */
struct ergon_sim_options;
ERGON_API void ergon_profile_sim_options(const struct ergon_config *cfg,
					 struct ergon_sim_options *o);
/* The flow (enum ergon_sim_flow) of a scenario name; 0 when unknown. */
ERGON_API int ergon_profile_sim_flow(const char *scenario);
/* The same with the reason: ERGON_EUSAGE for an unknown name, the message
 * listing the scenarios. */
ERGON_API int ergon_profile_sim_flow_check(const char *scenario, int *flow, struct ergon_err *err);
/* 1 when `ergon profile` runs the power stage for a profile-boot scenario
 * whose fault only the power checks see (ergon_sim_scenario_power_checked). */
ERGON_API int ergon_profile_sim_power_checked(const char *scenario);
/* ergon_sim_scenario_ina228_bystander: an external scenario whose firmware
 * reads the on-board INA228 (it needs the sim board's fitted shunt). */
ERGON_API int ergon_profile_sim_ina228_bystander(const char *scenario);

#ifdef __cplusplus
}
#endif
#endif
