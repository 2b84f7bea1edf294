/* The kernel measurement method (docs/METHOD.md, "Kernels"): correctness
 * before timing, every sample kept, distributions, speedup ratios with the
 * counts beside them, and a geometric mean that is not a model latency.
 *
 * A struct ergon_kernels_data collects, per case (one kernel on one
 * workload) and implementation (ref, mve, ...), whether the output matched
 * the reference and the timed samples. It is filled by the samples CSV
 * reader (`ergon kernels report`) or by the host runner (`ergon kernels
 * run`); ergon_kernels_summarize() turns it into the statistics.
 *
 * Samples CSV (one row per sample, header row first, any column order):
 *   case      the case name (at most ERGON_KERNELS_NAME_MAX bytes)
 *   impl      the implementation (same limit)
 *   correct   pass|fail (also true/false, 1/0): required on every row
 *   count     the measured count of one iteration, > 0; or instead
 *   start,end raw reads of a free-running counter; the count is
 *             (end - start) mod 2^counter_bits, so one wrap is handled
 *   counter_bits  optional, 1..64 (default 32), with start/end
 *   overhead  optional: the timing-read overhead of this row's count, in
 *             the same unit; subtracted when given
 *   repetition  optional: 1..ERGON_KERNELS_MAX_REPEAT, the repetition of the
 *             whole measurement the sample belongs to (compare judges the
 *             run-to-run spread from the repetitions' medians)
 * A row whose correct is fail may leave count/start/end empty: a case that
 * failed correctness is reported and never timed.
 */
#ifndef ERGON_KERNELS_H
#define ERGON_KERNELS_H

#include "ergon/error.h"

#include <jansson.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ERGON_KERNELS_SCHEMA "ergon.kernels"
#define ERGON_KERNELS_VERSION 1
#define ERGON_KERNELS_NAME_MAX 128
#define ERGON_KERNELS_MAX_CASES 4096
#define ERGON_KERNELS_MAX_IMPLS 8
/* The most repetitions of one kernels run (kernels run --repeat). */
#define ERGON_KERNELS_MAX_REPEAT 100
/* At most this many samples in all (every one is kept in memory). */
#define ERGON_KERNELS_MAX_SAMPLES 4000000
/* A samples CSV larger than this is refused. */
#define ERGON_KERNELS_CSV_MAX (256u * 1024u * 1024u)
/* docs/METHOD.md, "Kernels" (unit/test_pins_docs checks each against the
 * doc): a shape's dimensions lie in 1..4096 and a tensor holds at most 16
 * Mi elements; host timing subtracts the least of 1000 back-to-back clock
 * reads; `kernels run` times 100 iterations after 5 warm-ups by default. */
#define ERGON_KERNELS_DIM_MAX 4096
#define ERGON_KERNELS_ELEMS_MAX (16u * 1024u * 1024u)
#define ERGON_KERNELS_OVERHEAD_READS 1000
#define ERGON_KERNELS_ITERATIONS_DEFAULT 100
#define ERGON_KERNELS_WARMUP_DEFAULT 5

struct ergon_kernels_data;

/* A new, empty collection (caller frees with ergon_kernels_data_free). */
ERGON_API int ergon_kernels_data_new(struct ergon_kernels_data **out, struct ergon_err *err);
ERGON_API void ergon_kernels_data_free(struct ergon_kernels_data *d);

/* Record one observation of case/impl. correct: 1 pass, 0 fail. count: the
 * net count of one timed iteration (> 0, finite), or NaN for "not timed"
 * (a correctness-only row). Counts of an implementation that failed
 * correctness on a case are never used. */
ERGON_API int ergon_kernels_add(struct ergon_kernels_data *d, const char *case_name,
				const char *impl, int correct, double count, struct ergon_err *err);

/* The same, with the repetition (1..ERGON_KERNELS_MAX_REPEAT) of the whole
 * measurement the count belongs to; 0: none given. With repetitions, each
 * implementation's statistics gain "repeat" (every repetition's median and
 * the statistics of the medians: docs/METHOD.md, "Kernels"). */
ERGON_API int ergon_kernels_add_rep(struct ergon_kernels_data *d, const char *case_name,
				    const char *impl, int correct, double count,
				    unsigned repetition, struct ergon_err *err);

/* Add every observation of src to dst as repetition `repetition` (a
 * kernels run --repeat measures each repetition into its own collection). */
ERGON_API int ergon_kernels_data_merge(struct ergon_kernels_data *dst,
				       const struct ergon_kernels_data *src, unsigned repetition,
				       struct ergon_err *err);

/* Parse a samples CSV (format above) into a new collection. name labels
 * errors ("samples.csv:4:3: count: ..."). Caller frees *out. *overhead_rows
 * is set to the number of rows that had an overhead subtracted. */
ERGON_API int ergon_kernels_csv_parse(const char *text, size_t len, const char *name,
				      struct ergon_kernels_data **out, size_t *overhead_rows,
				      struct ergon_err *err);

/* Statistics of n values (n >= 1): min, median (mean of the two middle
 * values when n is even), mean. The values are not modified. */
ERGON_API int ergon_kernels_stats(const double *v, size_t n, double *min, double *median,
				  double *mean, struct ergon_err *err);

/* The distribution-free confidence interval of the median of n values
 * (n >= 1): [x_(k), x_(n-k+1)] of the sorted values, k the largest rank
 * whose coverage 1 - 2 P(Binomial(n, 1/2) <= k-1) is at least 95 %
 * (exact up to n = 1000, the normal approximation above). Below n = 6 no
 * rank reaches 95 %: the interval is [min, max] and *coverage says how
 * much less it covers (n = 5: 93.75 %). The values are not modified. */
ERGON_API int ergon_kernels_median_ci(const double *v, size_t n, double *lo, double *hi,
				      double *coverage, struct ergon_err *err);

/* valid_for_regression (docs/METHOD.md, "Kernels"): a (case, impl) may
 * be called a regression only when its output matched the reference, it
 * was timed with at least ERGON_KERNELS_VALID_MIN_N samples (the least n
 * whose median interval reaches 95 % coverage), its median is > 0 and the
 * wider side of the median's interval [lo, hi] is at most
 * ERGON_KERNELS_VALID_CI_PCT % of the median. Returns 1 (valid) or 0 and
 * writes why into reason (cap bytes, NUL-terminated; may be NULL). */
#define ERGON_KERNELS_VALID_MIN_N 6
#define ERGON_KERNELS_VALID_CI_PCT 5.0
ERGON_API int ergon_kernels_regression_valid(int correct, int timed, size_t n, double median,
					     double lo, double hi, char *reason, size_t cap);
/* The rule above in words (the artifact's kernels.regression_rule). */
ERGON_API const char *ergon_kernels_regression_rule(void);

/* exp(mean(log r)) of n ratios (each > 0). */
ERGON_API int ergon_kernels_geomean(const double *r, size_t n, double *out, struct ergon_err *err);

/* The "kernels" section: baseline, regression_rule, cases[] {case, impls[]
 * {impl, correct, timed, n, min, median, mean, median_ci {lo, hi, coverage}
 * (ergon_kernels_median_ci), valid_for_regression, regression_reason
 * (ergon_kernels_regression_valid)}, speedups[] {impl, baseline_mean,
 * candidate_mean, speedup}}, geomean[] {impl, cases, speedup, note},
 * failures[] {case, impl}. baseline: the implementation ratios are taken
 * against ("ref" when NULL); unit labels the counts. Caller owns
 * *section. ERGON_EPARSE when there is no case at all or the baseline is
 * absent from every case. */
ERGON_API int ergon_kernels_summarize(const struct ergon_kernels_data *d, const char *baseline,
				      const char *unit, json_t **section, struct ergon_err *err);

#ifdef __cplusplus
}
#endif
#endif
