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
 *   fw_build.c  building a ported board's firmware with
 *               arm-none-eabi-gcc (firmware/model_fw.c, kernels/kernels_qemu.c)
 *   fw_port.c   the board ports: target/port/<port>/port.json, what the host
 *               needs to build and run firmware for a board
 *               (docs/internals/ports.md)
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
#include <stdint.h>

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

/* --- board ports (fw_port.c; docs/internals/ports.md) ---------------------- */

#define ERGON_FW_PORT_SCHEMA "ergon-port/1"
#define ERGON_FW_PORT_NAME_MAX 64
#define ERGON_FW_PORT_PATH_MAX 160
#define ERGON_FW_PORT_LIST_MAX 16

enum ergon_fw_port_validation {
	ERGON_FW_PORT_EMULATED = 1,    /* run under QEMU, never on the board */
	ERGON_FW_PORT_HARDWARE = 2,    /* run on the real board */
	ERGON_FW_PORT_UNVALIDATED = 3, /* written from documentation, never run */
};
/* A HAL feature: none (the entry is NULL), probed (present on the core,
 * used only when seen to count), present. */
enum ergon_fw_port_feature {
	ERGON_FW_PORT_NONE = 1,
	ERGON_FW_PORT_PROBED = 2,
	ERGON_FW_PORT_PRESENT = 3,
};
enum ergon_fw_port_run { ERGON_FW_PORT_RUN_QEMU = 1, ERGON_FW_PORT_RUN_PROBE = 2 };
enum ergon_fw_port_transport { ERGON_FW_PORT_UART = 1, ERGON_FW_PORT_RTT = 2 };
#define ERGON_FW_PORT_KERNELS_REF 1u
#define ERGON_FW_PORT_KERNELS_MVE 2u
#define ERGON_FW_PORT_MODE_EXTREME 1u     /* profiling.extreme_mode */
#define ERGON_FW_PORT_MODE_SHARED_SRAM 2u /* profiling.force_shared_sram */

/* "emulated", "hardware", "unvalidated" (index: validation - 1). */
extern const char *const ergon_fw_port_validation_names[];
/* "none", "probed", "present" (index: feature - 1). */
extern const char *const ergon_fw_port_feature_names[];

/* One port's descriptor, every field checked. Paths are relative to
 * ergon-target's root (target/). */
struct ergon_fw_port {
	char file[PATH_MAX]; /* the descriptor, for messages */
	char sha256[65];     /* of its bytes: part of every object's cache key */
	char name[ERGON_FW_PORT_NAME_MAX];  /* its folder under target/port/ */
	char board[ERGON_FW_PORT_NAME_MAX]; /* the board it builds for */
	char title[128];
	int validation; /* enum ergon_fw_port_validation */
	char validation_note[512];
	char cpu[32];
	char cpu_flags[ERGON_FW_PORT_LIST_MAX][ERGON_FW_PORT_PATH_MAX];
	int n_cpu_flags;
	char defines[ERGON_FW_PORT_LIST_MAX][ERGON_FW_PORT_PATH_MAX]; /* -D of every unit */
	int n_defines;
	/* rtt_defines: the -D that make the port's RTT build of a model's
	 * profile firmware (target.transport rtt where hal.transport is
	 * uart); none: the port builds a model for hal.transport only. */
	char rtt_defines[ERGON_FW_PORT_LIST_MAX][ERGON_FW_PORT_PATH_MAX];
	int n_rtt_defines;
	char include_dirs[ERGON_FW_PORT_LIST_MAX][ERGON_FW_PORT_PATH_MAX];
	int n_include_dirs;
	char sources[ERGON_FW_PORT_LIST_MAX][ERGON_FW_PORT_PATH_MAX]; /* HAL, startup */
	int n_sources;
	char model_main[ERGON_FW_PORT_PATH_MAX];   /* the model firmware's main */
	char kernels_main[ERGON_FW_PORT_PATH_MAX]; /* the kernel firmware's; "" none */
	char linker_script[ERGON_FW_PORT_PATH_MAX];
	char code_region[ERGON_FW_PORT_NAME_MAX], ram_region[ERGON_FW_PORT_NAME_MAX];
	uint32_t code_bytes, code_reserve_bytes; /* the fit check's budgets */
	uint32_t ram_bytes, ram_reserve_bytes;
	/* memory.shared_sram (shared_bytes 0: none), and the placements the
	 * port's model main offers (ERGON_FW_PORT_MODE_*: memory_modes). */
	char shared_region[ERGON_FW_PORT_NAME_MAX];
	uint32_t shared_bytes, shared_reserve_bytes;
	unsigned memory_modes;
	unsigned tfl_kernels; /* ERGON_FW_PORT_KERNELS_* */
	int transport;	      /* enum ergon_fw_port_transport */
	uint32_t core_clock_hz;
	int cycle_counter, pmu; /* enum ergon_fw_port_feature */
	uint32_t gate_pin, state_pin, go_pin, max_gpio_pin;
	/* hal.gpio.marker: the power build's layer-marker line (0: none;
	 * optional in the descriptor, 0 when absent). */
	uint32_t marker_pin;
	int ina228_i2c;
	int run; /* enum ergon_fw_port_run */
	char qemu_machine[32];
};

/* Parse a descriptor's bytes (file names it in messages) into *p. 0, or
 * ERGON_ECONFIG naming the file, the field and the fix. Touches no file. */
int ergon_fw_port_parse(const char *text, size_t len, const char *file, struct ergon_fw_port *p,
			struct ergon_err *err);
/* Read tdir/port/<dir>/port.json, parse it, and check that its name is the
 * folder's and that every file it names exists. */
int ergon_fw_port_load(const char *tdir, const char *dir, struct ergon_fw_port *p,
		       struct ergon_err *err);
/* Every port under tdir/port/ (folders with a port.json; others, such as
 * the host's SIMD folders, are not board ports), by folder name. *out is
 * malloc'ed (caller frees); an invalid descriptor fails the listing. */
int ergon_fw_port_list(const char *tdir, struct ergon_fw_port **out, size_t *n,
		       struct ergon_err *err);
/* The port of board in ergon_fw_target_dir(): *found 0 when it has none. */
int ergon_fw_port_find(const char *board, struct ergon_fw_port *p, int *found,
		       struct ergon_err *err);
/* {port, board, title, cpu, validation{status, note}, descriptor,
 * descriptor_sha256, run, transport}: for build records. New reference or
 * NULL. */
json_t *ergon_fw_port_json(const struct ergon_fw_port *p);

/* --- the firmware build (fw_build.c) --------------------------------------- */

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

/* One firmware of a port: all of target/src (less the emitter and the
 * profile flow when power), the port's sources, the program's main and
 * the model's data. */
struct ergon_fw_build {
	const struct ergon_fw_port *port; /* flags, sources, linker script */
	const char *dir;		  /* absolute build folder (exists) */
	const char *name;		  /* ergon_<port>_<name>.elf, .map, build-<name>.log */
	int power;			  /* the power build's sources */
	const char *const *defines;	  /* -D flags of every unit, NULL-terminated; or NULL */
	const char *main_src;		  /* the program's main, under target/ (after the port's) */
	/* The model: main_src also gets model_defines (the arena size);
	 * model_data is a file in dir (the generated assembly, assembled with
	 * dir as the working folder) that pulls in the files model_files (in
	 * dir, NULL-terminated). NULL: none. */
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

/* Compile each unit (the port's cpu_flags, then -O2, freestanding,
 * -Werror as target/CMakeLists.txt), up to one compiler per CPU at once,
 * each object from the cache when it is there (and stored in it when
 * built; the key covers the port's descriptor), and link them (-nostdlib,
 * the port's linker script, gc-sections, a link map) in b->dir. On a
 * failed compile or link the tool's output is in b->log. */
int ergon_fw_compile(struct ergon_fw_build *b, struct ergon_err *err);

/* ---- Memory placement of a model firmware (fw_memory.c;
 * profiling.extreme_mode, profiling.force_shared_sram;
 * docs/internals/ports.md, "The placement record"). ---- */
enum ergon_fw_memory_mode {
	ERGON_FW_MEMORY_DEFAULT = 0,
	ERGON_FW_MEMORY_EXTREME,     /* weights and arena in memory.code / memory.ram */
	ERGON_FW_MEMORY_SHARED_SRAM, /* the arena in memory.shared_sram */
};
/* The compiler define of a mode (NULL for the default): a model-unit
 * define, so the object cache keys on it. */
const char *ergon_fw_memory_define(enum ergon_fw_memory_mode mode);

#define ERGON_FW_MAP_REGIONS_MAX 32
/* One MEMORY region of a link, as GNU ld's link map states it. */
struct ergon_fw_map_region {
	char name[ERGON_FW_PORT_NAME_MAX];
	uint32_t origin, length_bytes;
};
/* The "Memory Configuration" table of a GNU ld link map (text, len bytes;
 * what names it in errors): the regions of the linker script's MEMORY in
 * its order, less ld's own *default*, into out[0..*n) (at most cap).
 * ERGON_EPARSE naming what and the line when there is no such table, a
 * row is not NAME 0xORIGIN 0xLENGTH [ATTRIBUTES], a name is too long, a
 * region is empty or ends beyond 4 GiB, or there are more than cap rows.
 * Touches no file. */
int ergon_fw_map_regions(const char *text, size_t len, const char *what,
			 struct ergon_fw_map_region *out, int cap, int *n, struct ergon_err *err);
/* Where the linked image elf placed `arena` and `ert_model_data`, read
 * from its symbol table, and the region each lies in: the port's regions
 * (its descriptor's memory.code, memory.ram, memory.shared_sram) at the
 * origins and lengths that the link map map states. *out (new reference)
 * {mode, define, arena, weights}, each {section, addr, size, region}.
 * ERGON_ECONFIG naming the descriptor and the field when a region it
 * names is not one of the link's or its bytes are not the link's length,
 * or when the mode needs what the descriptor lacks (memory_modes,
 * memory.shared_sram); ERGON_EPARSE, naming both addresses, when the
 * placement is not the one the mode requires. */
int ergon_fw_memory_record(const struct ergon_fw_port *port, const char *elf, const char *map,
			   enum ergon_fw_memory_mode mode, json_t **out, struct ergon_err *err);

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
	/* The rate the marker plan was made at (0: the samples' own): a
	 * layer left out is named with the rate that left it out. */
	double plan_rate_hz;
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
/* A marker mask (ert_marker_config.mask, 8 words) as the power build's
 * define, "-DERT_MODEL_MARKER_MASK=0x00000005,0x00000000,..." (the model
 * main's, target/port/common/model_main.c), and as the C initializer of
 * its mask, "{0x00000005, 0x00000000, ...}", for a user's own power build.
 * Truncated to cap (the sizes below always fit). */
#define ERGON_MARKER_DEFINE_MAX 128
#define ERGON_MARKER_INIT_MAX 128
void ergon_marker_mask_define(const uint32_t mask[8], char *out, size_t cap);
void ergon_marker_mask_initializer(const uint32_t mask[8], char *out, size_t cap);
/* The marker plan as JSON: {mask: [8 x "0x%08x"], segments, first_layers
 * (each segment's first layer), left_out (the layers not marked, merged
 * with the one before), rate_hz (the rate it was planned at), min_samples,
 * define, initializer, from}. from: where it came from (borrowed). */
json_t *ergon_layer_plan_json(const struct ergon_layer_plan *lp, const char *from);
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
