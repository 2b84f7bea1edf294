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

/* kernels.csv of a section: case,impl,correct,n,min,median,mean,
 * baseline_mean,speedup (empty cells where not timed). Caller frees *out. */
ERGON_API int ergon_kernels_csv_render(const json_t *section, char **out, size_t *len,
				       struct ergon_err *err);

/* The terminal table of a section. Caller frees *out. */
ERGON_API int ergon_kernels_table_render(const json_t *section, char **out, struct ergon_err *err);

/* The whole `ergon kernels report`: read the samples CSV at path, compute
 * the section, and build the "ergon.kernels" artifact (provenance
 * "replayed": the samples were measured elsewhere; source names the file,
 * its size and sha256; the timing-read overhead is stated as subtracted on
 * N rows or as included). Caller owns *artifact (not sealed yet). */
ERGON_API int ergon_kernels_report(const char *path, const char *baseline, const char *unit,
				   json_t **artifact, struct ergon_err *err);

/* Write DIR/kernels.json (sealed, digested), DIR/kernels.csv, when
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
	/* Test builds only: corrupt one output byte of the first case's REF
	 * run, to show that a correctness failure is reported and never timed. */
	int inject_mismatch;
	/* Called before case i (0-based) of n runs (its correctness check and
	 * timing), with its name; NULL: none. For a progress line. */
	void (*progress)(void *ctx, size_t i, size_t n, const char *case_name);
	void *progress_ctx;
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
