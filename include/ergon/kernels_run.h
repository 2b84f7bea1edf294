/* The pipelines of `ergon kernels`: the section's CSV and terminal table,
 * `kernels report` (samples measured elsewhere) and `kernels run` (cases
 * timed here), and writing the artifact. The statistics they use are in
 * ergon/kernels.h (engines). */
#ifndef ERGON_KERNELS_RUN_H
#define ERGON_KERNELS_RUN_H

#include "ergon/kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The longest note of a section the typed summary keeps (why an
 * implementation was not timed, the geometric mean's note, the overhead
 * note); a longer one is refused (ERGON_EPARSE), never cut. */
#define ERGON_KERNELS_NOTE_MAX 255

/* The most PMU events of one kernels run (the kernel firmware's 8 passes
 * of 4; ergon/ert_kblob.h). */
#define ERGON_KERNELS_MAX_PMU_EVENTS 32

enum ergon_kernel_pmu_state {
	ERGON_KERNEL_PMU_NONE = 0,    /* not counted (the implementation was not timed) */
	ERGON_KERNEL_PMU_COUNTED,     /* count holds the event's count in one run */
	ERGON_KERNEL_PMU_UNSUPPORTED, /* no PMU counts on the board (QEMU, the host) */
	ERGON_KERNEL_PMU_OVERFLOW,    /* a chained pair overflowed: no exact count */
};

struct ergon_kernel_pmu_count {
	enum ergon_kernel_pmu_state state;
	unsigned long long count; /* ERGON_KERNEL_PMU_COUNTED only */
};

/* One implementation of one case, typed. */
struct ergon_kernel_impl_result {
	char impl[ERGON_KERNELS_NAME_MAX + 1];
	int correct; /* every row said the output matched the reference */
	int timed;   /* correct, with at least one timed count (then n >= 1) */
	size_t n;    /* timed counts kept */
	/* Of the counts (NaN when not timed): min, median, mean, and the
	 * median's distribution-free interval (ergon_kernels_median_ci). */
	double min, median, mean;
	double ci_lo, ci_hi, ci_coverage;
	/* Against the baseline (has_speedup: this implementation is not the
	 * baseline and both were timed): baseline mean / this mean, > 1 when
	 * this one is faster. */
	int has_speedup;
	double baseline_mean, speedup;
	/* With repetitions (kernels run --repeat): how many, and the mean of
	 * their medians (NaN without). */
	size_t repetitions;
	double repeat_mean;
	/* Why it was not timed ("" when timed). */
	char why[ERGON_KERNELS_NOTE_MAX + 1];
	/* The mean lies outside the median's interval (the section's
	 * mean_vs_median says "disagree"): outliers pull it, trust the
	 * median. Tukey's outliers below and above the fences. */
	int mean_disagrees;
	size_t outliers_low, outliers_high;
	/* Over the repetitions' medians (two or more repetitions, else
	 * NaN): their standard deviation and the 95 % interval of their mean. */
	double repeat_sd, repeat_ci_lo, repeat_ci_hi;
	/* ergon_kernels_regression_valid: the artifact's own verdict, or, in
	 * an artifact written before it existed, the rule applied here to the
	 * stated n, median and interval; and why. */
	int valid_for_regression;
	char regression_reason[ERGON_KERNELS_NOTE_MAX + 1];
	/* kernels run --pmu-counters: one entry per event of the summary's
	 * pmu_events[], in that order. */
	struct ergon_kernel_pmu_count pmu[ERGON_KERNELS_MAX_PMU_EVENTS];
};

/* One case (one kernel on one workload): its implementations in the
 * section's order. */
struct ergon_kernel_case_result {
	char name[ERGON_KERNELS_NAME_MAX + 1];
	struct ergon_kernel_impl_result impls[ERGON_KERNELS_MAX_IMPLS];
	size_t n_impls;
};

/* The geometric mean of one implementation's per-case speedups (each case
 * weighs the same): not a model latency, not a speedup of any one model. */
struct ergon_kernel_geomean {
	char impl[ERGON_KERNELS_NAME_MAX + 1];
	size_t cases;
	double speedup;
	char note[ERGON_KERNELS_NOTE_MAX + 1]; /* what the figure is not */
};

#define ERGON_KERNELS_MAX_GEOMEANS (ERGON_KERNELS_MAX_IMPLS * 4)

/* The kernel method's statistics, typed: every case, and the geometric
 * means of the speedups against the baseline. */
struct ergon_kernels_summary {
	char baseline[ERGON_KERNELS_NAME_MAX + 1];
	char unit[ERGON_KERNELS_NAME_MAX + 1];
	struct ergon_kernel_case_result *cases; /* n_cases, owned */
	size_t n_cases;
	struct ergon_kernel_geomean geomean[ERGON_KERNELS_MAX_GEOMEANS];
	size_t n_geomean;
	size_t n_failures; /* implementations that failed correctness (not timed) */
	/* How the timing read's own cost is treated ("" when not stated). */
	char overhead_note[ERGON_KERNELS_NOTE_MAX + 1];
	/* kernels run --pmu-counters (n_pmu_events 0: none asked): the
	 * events, whether the board's PMU counted them, and why not. */
	char pmu_events[ERGON_KERNELS_MAX_PMU_EVENTS][ERGON_KERNELS_NAME_MAX + 1];
	size_t n_pmu_events;
	int pmu_counted;
	char pmu_why[ERGON_KERNELS_NOTE_MAX + 1];
};

/* The statistics of a "kernels" section (ergon_kernels_summarize made it;
 * an ergon.kernels artifact's "kernels", from ergon_kernels_run,
 * ergon_kernels_report or ergon_artifact_load), typed. A name longer than
 * ERGON_KERNELS_NAME_MAX, more than ERGON_KERNELS_MAX_CASES cases or
 * ERGON_KERNELS_MAX_IMPLS implementations in a case: ERGON_EPARSE naming
 * the place; not an object: ERGON_EPARSE. Free with
 * ergon_kernels_summary_cleanup (also after a failure). */
ERGON_API int ergon_kernels_summary_read(const json_t *section, struct ergon_kernels_summary *out,
					 struct ergon_err *err);
ERGON_API void ergon_kernels_summary_cleanup(struct ergon_kernels_summary *s);

/* kernels.csv of a section: case,impl,correct,n,min,median,mean,
 * baseline_mean,speedup (empty cells where not timed). Caller frees *out. */
ERGON_API int ergon_kernels_csv_render(const json_t *section, char **out, size_t *len,
				       struct ergon_err *err);

/* case_summary.csv of a section: one row per case and implementation,
 * case,impl,correct,timed,n,median,median_ci_lo,median_ci_hi,
 * speedup_vs_baseline,valid_for_regression,reason (empty cells where not
 * timed or, for speedup, the baseline itself), then one column per PMU
 * event of the section (kernels run --pmu-counters; the event's catalog
 * name): the count, "overflow", "unsupported", or empty where not
 * counted. Caller frees *out. */
ERGON_API int ergon_kernels_case_summary_render(const json_t *section, char **out, size_t *len,
						struct ergon_err *err);

/* The terminal table of a section: ergon_kernels_summary_read, then
 * ergon_kernels_summary_table. Caller frees *out. */
ERGON_API int ergon_kernels_table_render(const json_t *section, char **out, struct ergon_err *err);
/* The terminal table of the typed statistics (what `ergon kernels`
 * prints). Caller frees *out. */
ERGON_API int ergon_kernels_summary_table(const struct ergon_kernels_summary *s, char **out,
					  struct ergon_err *err);

/* The whole `ergon kernels report`: read the samples CSV at path, compute
 * the section, and build the "ergon.kernels" artifact (provenance
 * "replayed": the samples were measured elsewhere; source names the file,
 * its size and sha256; the timing-read overhead is stated as subtracted on
 * N rows or as included). Caller owns *artifact (not sealed yet). */
ERGON_API int ergon_kernels_report(const char *path, const char *baseline, const char *unit,
				   json_t **artifact, struct ergon_err *err);

/* Write DIR/kernels.json (sealed, digested), DIR/kernels.csv,
 * DIR/case_summary.csv (ergon_kernels_case_summary_render), when
 * samples is not NULL DIR/samples.csv (every sample, in the samples CSV
 * format, so `ergon kernels report` re-reads it), and, when table is not
 * NULL, set *table to the terminal text (caller frees). Every file is
 * written atomically; flags: ERGON_WRITE_* (fileio.h). */
ERGON_API int ergon_kernels_write(json_t *artifact, const char *dir, unsigned flags,
				  const char *samples, size_t samples_len, char **table,
				  struct ergon_err *err);

enum ergon_kernels_suite {
	ERGON_KERNELS_CONV = 1,
	ERGON_KERNELS_DWCONV = 2,
	ERGON_KERNELS_FC = 4,
};

struct ergon_kernels_run_options {
	const char *board;	 /* "host" or "qemu-an547" */
	int suites;		 /* ERGON_KERNELS_* mask; 0: all three */
	const char *shapes_path; /* a shapes file, or */
	const char *model_path;	 /* a .tflite model's own layers */
	const char *impls; /* comma list of ref, mve (mve: qemu-an547 only); "ref" when NULL */
	long iterations;   /* timed iterations per case, >= 1 */
	/* Repetitions of the whole measurement of every case (0 or 1: one):
	 * each implementation then states every repetition's median and
	 * their statistics ("repeat"), which ergon compare needs (3 or more)
	 * to judge a difference. 1..ERGON_KERNELS_MAX_REPEAT. */
	long repeat;
	long warmup; /* untimed iterations after the correctness run */
	/* qemu-an547: where the case blob, the kernel firmware (ELF, map,
	 * build log) and QEMU's log go; NULL: ./ergon-kernels-fw. The cases
	 * run in one firmware run there: progress is not called per case. */
	const char *work_dir;
	/* qemu-an547: compile every object of the kernel firmware; neither
	 * read nor write the firmware object cache (docs/internals/fw_cache.md). */
	int no_cache;
	/* Test builds only: corrupt one output byte of the first case's REF
	 * run, to show that a correctness failure is reported and never timed. */
	int inject_mismatch;
	/* Called before case i (0-based) of n runs (its correctness check and
	 * timing), with its name; NULL: none. For a progress line. */
	void (*progress)(void *ctx, size_t i, size_t n, const char *case_name);
	void *progress_ctx;
	/* PMU events per case (--pmu-counters): comma-separated catalog names
	 * or sets (ergon_pmu_plan; `ergon counters list`), planned into passes
	 * of four, one extra run of each case per pass where a PMU counts;
	 * "none": no events; NULL: the method's five events on qemu-an547,
	 * none on the host. Where no PMU counts (QEMU, the host) every
	 * requested event is reported "unsupported" with the reason, never 0. */
	const char *pmu_counters;
};

/* `ergon kernels run`: build the cases, check each implementation's
 * output bit-exact against the oracle (a case that fails is reported and
 * never timed), then time options->iterations iterations, output buffer
 * re-initialized before each, every sample kept. On qemu-an547 the checks
 * and the counts happen on the emulated Cortex-M55 (kernels_qemu.c), the
 * counts being emulated instructions (provenance synthetic). *artifact: the
 * ergon.kernels artifact (provenance measured; workloads[], refused[],
 * timing, build); *samples: samples.csv text (caller frees both). A case
 * the kernels cannot take is refused in refused[] and the run goes on. */
ERGON_API int ergon_kernels_run(const struct ergon_kernels_run_options *o, json_t **artifact,
				char **samples, size_t *samples_len, struct ergon_err *err);

#ifdef __cplusplus
}
#endif
#endif
