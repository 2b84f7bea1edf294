/* common/: helpers several pipeline folders share.
 *
 * This header is the one private header a pipeline folder may include
 * besides its own; common/ itself uses no other pipeline folder, so it is
 * the bottom of the pipelines floor (docs/internals/layers.md, "Pipeline
 * folders"). What a pipeline offers another is its public header
 * (include/ergon/); what two pipelines both need and neither owns is here.
 *
 *   jpath.c     JSON access with dotted field paths (the artifact readers:
 *               run, verify, compare, report)
 *   markup.c    HTML / XML text escaping (report, validate's JUnit XML)
 *   fw_build.c  building an an547 (Cortex-M55) firmware with
 *               arm-none-eabi-gcc (firmware/model_fw.c, kernels/kernels_qemu.c)
 *   fw_cache.c  the compiled objects kept between builds, keyed by what made
 *               them (docs/internals/fw_cache.md)
 *   verdict.c   the verdict of each kind of artifact (public: ergon/verdict.h)
 *   recording_id.c  which recording a summary was made from (analyze writes
 *               it; report --jls and view --summary check it)
 */
#ifndef ERGON_PIPELINES_COMMON_H
#define ERGON_PIPELINES_COMMON_H

#include "ergon/budget.h"
#include "ergon/layer_energy.h"
#include "ergon/dynbuf.h"
#include "ergon/error.h"
#include "ergon/figures.h"

#include <jansson.h>
#include <limits.h>
#include <stddef.h>

/* --- JSON with field paths (jpath.c) --------------------------------------- */

/* A real, or null for NaN/Inf (JSON has no NaN). New reference. */
json_t *ergon_jnum(double v);
/* The value at a dotted path, or NULL. Borrowed. */
const json_t *ergon_jpath(const json_t *root, const char *path);
/* A number at a dotted path; ERGON_EVERIFY naming the path otherwise. */
int ergon_jnumber(const json_t *root, const char *path, double *out, struct ergon_err *err);
/* An array of numbers (null -> NaN) at a path; *out malloc'd (caller frees). */
int ergon_jarray(const json_t *root, const char *path, double **out, size_t *n,
		 struct ergon_err *err);
/* JSON array of v[0], v[k], v[2k], ... New reference. */
json_t *ergon_darray(const double *v, size_t n, size_t stride_keep, size_t total);

/* --- markup (markup.c) ----------------------------------------------------- */

/* Text for an HTML (or XML) attribute or element body: the five characters
 * < > & " ' as entities, everything else as it is. */
void ergon_html_escape(struct ergon_dynbuf *b, const char *s);

/* --- which recording a summary was made from (recording_id.c) ------------- */

/* Put the size ("bytes") and SHA-256 ("sha256", lower-case hex) of the
 * regular file at path into rec (a summary's provenance.recording). A
 * FIFO, a device or a folder is refused (ERGON_EUSAGE): it cannot be read
 * again to be checked. */
int ergon_summary_recording_identify(const char *path, json_t *rec, struct ergon_err *err);
/* 0 when jls_path has the size and SHA-256 that summary's
 * provenance.recording records; ERGON_EREFUSED naming both files, the two
 * sizes and digests and the way out (--force-jls) when it differs, or when
 * the summary records no digest (an older summary: it cannot be shown to
 * belong); an I/O error reading jls_path. summary_name names the summary. */
int ergon_summary_recording_check(const json_t *summary, const char *summary_name,
				  const char *jls_path, struct ergon_err *err);

/* --- the an547 firmware build (fw_build.c) --------------------------------- */

/* target/ of the source tree (ERGON_TARGET_DIR overrides). Static string. */
const char *ergon_fw_target_dir(void);

/* arm-none-eabi-gcc's own include folder and its version line, the tool
 * outputs kept in dir/gcc-*.txt; id: the hex SHA-256 that identifies the
 * toolchain for the cache (its version text, include folder, the driver,
 * cc1, as and ld it runs by path, size and time, and the variables that
 * change its search). */
int ergon_fw_toolchain(const char *dir, char *inc, size_t inc_cap, char *ver, size_t ver_cap,
		       char id[65], struct ergon_err *err);

/* The .c files of src, sorted (a reproducible command line); power leaves
 * out the emitter and the profile flow. out[0..*n) are malloc'ed (caller
 * frees each), at most cap. */
int ergon_fw_list_sources(const char *src, int power, char **out, int *n, int cap,
			  struct ergon_err *err);

/* Lower-case hex SHA-256 of a file (at most 256 MiB). */
int ergon_fw_sha256_file(const char *path, char hex[65], struct ergon_err *err);

/* One firmware: all of target/src (less the emitter and the profile flow
 * when power), the an547 port files named, and the model's data. */
struct ergon_fw_build {
	const char *dir;	    /* absolute build folder (exists) */
	const char *name;	    /* ergon_an547_<name>.elf, .map, build-<name>.log */
	int power;		    /* the power build's sources */
	const char *const *defines; /* -D flags of every unit, NULL-terminated; or NULL */
	const char *const *port;    /* files under target/port/an547/, NULL-terminated */
	/* The model: model_unit (one of port) also gets model_defines (the
	 * arena size); model_data is a file in dir (the generated assembly,
	 * assembled with dir as the working folder) that pulls in the files
	 * model_files (in dir, NULL-terminated). NULL: none. */
	const char *model_unit;
	const char *const *model_defines;
	const char *model_data;
	const char *const *model_files;
	int no_cache; /* compile every unit; neither read nor write the cache */
	/* Filled by ergon_fw_compile: */
	char elf[PATH_MAX], map[PATH_MAX], log[PATH_MAX];
	char elf_sha256[65], map_sha256[65];
	char compiler[256]; /* arm-none-eabi-gcc --version, first line */
	json_t *command;    /* the link's argv (caller decrefs) */
	json_t *compile;    /* the units, their flags, objects and cache use (caller decrefs) */
};

/* Compile each unit (flags as target/CMakeLists.txt: -mcpu=cortex-m55
 * -O2, freestanding, -Werror), up to one compiler per CPU at once, each
 * object from the cache when it is there (and stored in it when built),
 * and link them (-nostdlib, gc-sections, a link map) in b->dir. On a
 * failed compile or link the tool's output is in b->log. */
int ergon_fw_compile(struct ergon_fw_build *b, struct ergon_err *err);

/* ---- Memory placement of the an547 model firmware (fw_memory.c;
 * profiling.extreme_mode, profiling.force_shared_sram). ---- */
enum ergon_fw_memory_mode {
	ERGON_FW_MEMORY_DEFAULT = 0,
	ERGON_FW_MEMORY_EXTREME,     /* weights and arena in the TCMs */
	ERGON_FW_MEMORY_SHARED_SRAM, /* the arena in the shared system SRAM */
};
/* The compiler define of a mode (NULL for the default): a model-unit
 * define, so the object cache keys on it. */
const char *ergon_fw_memory_define(enum ergon_fw_memory_mode mode);
/* Where the linked image elf placed `arena` and `ert_model_data`, read
 * from its symbol table: *out (new reference) {mode, define, arena,
 * weights}, each {section, addr, size, region}. ERGON_EPARSE, naming both
 * addresses, when the placement is not the one the mode requires. */
int ergon_fw_memory_record(const char *elf, enum ergon_fw_memory_mode mode, json_t **out,
			   struct ergon_err *err);

/* ---- Repeats at the artifact edge (repeat_json.c; docs/METHOD.md,
 * "Repeats"). ---- */

/* One figure over n repetitions: {name, unit, values[], u[], n (the finite
 * values), mean, sd, sem, df, t, ci_lo, ci_hi (Student t, 95 %), median,
 * median_lo, median_hi, median_coverage (distribution-free), min, max,
 * u_instrument (the mean of the repetitions' ± when every one states it),
 * spread_to_instrument (sd / u_instrument)}. v and u hold n entries, NaN
 * where a repetition has none (u may be NULL). New reference; NULL with
 * err set on failure. The shape `ergon compare` reads (repeat.figures). */
json_t *ergon_repeat_figure_json(const char *name, const char *unit, const double *v,
				 const double *u, size_t n, struct ergon_err *err);

/* ---- Uncertainty budgets at the artifact edge (budget_json.c): a budget
 * (ergon/budget.h) as JSON, back, and checked against its own terms
 * (verify). docs/UNCERTAINTY.md names every field. ---- */

/* The budget's JSON object (new reference; NULL out of memory). */
json_t *ergon_budget_json(const struct ergon_budget *b);

/* Read a budget's figure and terms back and close it (the stated totals
 * are not read: they are what closing recomputes). ERGON_EVERIFY names the
 * field under `where` that is malformed. */
int ergon_budget_from_json(const json_t *j, const char *where, struct ergon_budget *b,
			   struct ergon_err *err);

/* Recompute a stated budget from its terms and compare every total
 * (u_c, U, U_known, U_pct, complete, dominant) within the verify band:
 * ERGON_EVERIFY naming `where` and the field that differs. */
int ergon_budget_json_check(const json_t *j, const char *where, struct ergon_err *err);

/* Every object under root that is a budget (has "terms" and "U"), checked;
 * *count gets how many. */
int ergon_budget_json_check_all(const json_t *root, const char *where, size_t *count,
				struct ergon_err *err);

/* ---- Energy per layer at the artifact edge (layers_json.c) ---- */

/* The model the layers belong to: its layers' operator names and PMU
 * cycles (either may be NULL), and the marker plan's segments (the first
 * layer of each; ergon_layers_plan). */
struct ergon_layer_model {
	size_t n_layers;
	const char *const *op;
	const double *cycles;
	const size_t *seg_first;
	size_t n_segments;
};
struct ergon_layers_result;
/* power.layers[] (new reference; NULL out of memory): per resolved layer
 * its index, op, measured energy with U and budget, median with its
 * interval, duration, power, share, inferences used and, when cycles and
 * epi_j are known, the cycle-proportional estimate labelled estimated.
 * *meta_out (may be NULL; new reference) gets power.layer_energy: the
 * method, counts, the sum with its budget, the unresolved layers named. */
json_t *ergon_layers_json(const struct ergon_layers_result *res, const struct ergon_layer_model *m,
			  double epi_j, json_t **meta_out);
/* Without markers, the only view: the energy per inference split by the
 * layers' cycles, every entry "kind": "estimated" (new reference; null
 * when the cycles or epi_j are unknown). */
json_t *ergon_layers_estimate_json(const struct ergon_layer_model *m, double epi_j);
/* The marker plan of a run: the model's layers (op names borrowed from a
 * profile JSON's layers[]), their cycles and expected time, and the
 * segments the markers cut an inference into (ergon_layers_plan at
 * rate_hz). */
struct ergon_layer_plan {
	int on;
	size_t n_layers;
	const char **op;
	double *cycles;
	double *layer_s;
	size_t *seg_first;
	size_t n_segments;
	uint32_t mask[8];
	double rate_hz;
};
/* The plan from a profile section (summary.json's "profile": layers[] with
 * op, cycles or counters.window_us, meta.system_clock_hz); ERGON_EUSAGE
 * when it has no layers, the message starting with what ("--layer-energy:
 * the PMU stage"). lp borrows the op strings from profile. */
int ergon_layer_plan_from_profile(const json_t *profile, double rate_hz, const char *what,
				  struct ergon_layer_plan *lp, struct ergon_err *err);
void ergon_layer_plan_free(struct ergon_layer_plan *lp);
/* The layer engine's result into the power section sec: the sum checked
 * against the gated energy per inference epi_j (with the section's bound
 * epi_u_j, a rectangular half-width; NaN epi_j: not checked), then
 * power.layers[] and power.layer_energy (meter names the meter), and the
 * engine's and the check's issues appended to sec's "issues" and to
 * extra_issues (may be NULL). ERGON_ENOMEM only. */
int ergon_layers_section(const struct ergon_layers_result *res, const struct ergon_layer_plan *plan,
			 double epi_j, double epi_u_j, const char *meter, json_t *sec,
			 json_t *extra_issues, struct ergon_err *err);
/* detailed/layer_energy.csv from power.layers[] (*text malloc'd). */
int ergon_layers_csv(const json_t *layers, char **text, size_t *len, struct ergon_err *err);

/* The run's uncertainty model (uncertainty_model.budget) as JSON and back. */
json_t *ergon_run_um_json(const struct ergon_run_um *um);
int ergon_run_um_from_json(const json_t *j, const char *where, struct ergon_run_um *um,
			   struct ergon_err *err);

/* One rated figure {value, source} (value null when unknown). */
json_t *ergon_rated_to_json(const struct ergon_rated *x);

/* "gain (±0.5 %)"-style: the dominant term's name, or "" (static or b's). */
const char *ergon_budget_dominant_name(const struct ergon_budget *b);

/* --- the firmware object cache (fw_cache.c) -------------------------------- */

/* The cache folder: $XDG_CACHE_HOME/ergon/firmware/v1, else
 * $HOME/.cache/ergon/firmware/v1 (not created here). */
int ergon_fw_cache_dir(char *out, size_t cap, struct ergon_err *err);

/* The object of key (64 hex) into dest when its entry is there and
 * intact (*found 1, sha: the object's SHA-256); a damaged or partial entry
 * is removed and is a miss (*found 0). An error only when dest cannot be
 * written. */
int ergon_fw_cache_get(const char *cache, const char *key, const char *dest, char sha[65],
		       int *found, struct ergon_err *err);
/* Store the object file src under key: a complete entry appears at once
 * (renamed into place) or nothing does; best effort (nothing is said when
 * the cache cannot be written). */
void ergon_fw_cache_put(const char *cache, const char *key, const char *src);
/* Wait for and take key's lock (*fd; -1 and a -1 return when the lock
 * file cannot be made: build without it); ergon_fw_cache_unlock(-1) is a
 * no-op. */
int ergon_fw_cache_lock(const char *cache, const char *key, int *fd);
void ergon_fw_cache_unlock(int fd);

#endif
