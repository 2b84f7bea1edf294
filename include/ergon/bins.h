/* Min/max/mean bins of a sample stream: the finest level of the pyramid
 * `ergon view` draws from and computes selection statistics with, and the
 * tiles `ergon view --serve` answers (docs/internals/view.md).
 *
 * Samples are pushed in order; every bin_samples samples make one bin
 * holding, per f32 signal, the minimum, maximum and mean of the bin's finite
 * samples and how many were finite (a lost sample is NaN and is counted
 * nowhere), and per digital line whether the bin held a low and/or a high
 * sample. The last bin may hold fewer samples. Memory: the arrays grow to
 * at most max_bins bins; the engine opens no file.
 */
#ifndef ERGON_BINS_H
#define ERGON_BINS_H

#include "ergon/error.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ERGON_BINS_F32_MAX 3u
#define ERGON_BINS_LINES_MAX 8u
/* Bit values of a digital line's bin. */
#define ERGON_BINS_LOW 1u
#define ERGON_BINS_HIGH 2u

struct ergon_bins_config {
	uint64_t first_index; /* sample index of the first pushed sample */
	uint64_t bin_samples; /* samples per bin, >= 1 */
	uint64_t max_bins;    /* more bins than this: coarsen, or ERGON_ERANGE */
	/* 0: more than max_bins bins is ERGON_ERANGE. k >= 2: the bins are
	 * merged k to one (bin_samples times k) whenever max_bins would be
	 * passed, so a stream of unknown length ends with at most max_bins
	 * bins of the finest size k^m x bin_samples that fits; max_bins must
	 * then be a multiple of k. */
	uint32_t coarsen;
	size_t n_f32;	/* f32 signals, 1..ERGON_BINS_F32_MAX */
	size_t n_lines; /* digital lines, 0..ERGON_BINS_LINES_MAX */
};

struct ergon_bins {
	struct ergon_bins_config cfg;
	size_t n_bins;	  /* bins holding at least one sample */
	uint64_t samples; /* samples pushed */
	/* Per f32 signal, n_bins entries each: min, max and mean of the bin's
	 * finite samples (NaN when none was finite) and their count; bin_samples
	 * is cfg.bin_samples times the coarsening so far. */
	uint64_t bin_samples;
	float *min[ERGON_BINS_F32_MAX], *max[ERGON_BINS_F32_MAX], *mean[ERGON_BINS_F32_MAX];
	uint32_t *finite[ERGON_BINS_F32_MAX];
	double *sum[ERGON_BINS_F32_MAX];   /* sum of the finite samples */
	uint64_t lost[ERGON_BINS_F32_MAX]; /* NaN samples, per signal */
	/* Per line, n_bins entries: ERGON_BINS_LOW | ERGON_BINS_HIGH bits. */
	uint8_t *lines[ERGON_BINS_LINES_MAX];
	/* Per line: the index of the first sample that is high after a low
	 * one (a rising edge), or -1 when there is none. */
	int64_t first_rise[ERGON_BINS_LINES_MAX];
	/* Private: the bin being filled. */
	size_t cap;
	double acc_sum[ERGON_BINS_F32_MAX];
	uint32_t acc_n[ERGON_BINS_F32_MAX];
	float acc_min[ERGON_BINS_F32_MAX], acc_max[ERGON_BINS_F32_MAX];
	uint8_t acc_line[ERGON_BINS_LINES_MAX];
	uint8_t line_prev[ERGON_BINS_LINES_MAX]; /* 0 unknown, 1 low, 2 high */
	uint64_t in_bin;			 /* samples in the bin being filled */
};

/* Start (no allocation until the first bin). ERGON_EUSAGE for a config out
 * of range. */
ERGON_API int ergon_bins_init(struct ergon_bins *b, const struct ergon_bins_config *cfg,
			      struct ergon_err *err);
/* Push n samples starting at sample `index` (must follow the last one
 * pushed: ERGON_EUSAGE otherwise). f32[k] holds signal k's n samples;
 * bits[k] is line k's packed u1 samples, sample j being bit (bit0[k] + j) %
 * 8 of byte (bit0[k] + j) / 8 (NULL: the line reads low). ERGON_ERANGE when
 * the bins would pass max_bins, ERGON_ENOMEM. */
ERGON_API int ergon_bins_push(struct ergon_bins *b, uint64_t index, size_t n,
			      const float *const *f32, const uint8_t *const *bits,
			      const size_t *bit0, struct ergon_err *err);
/* Close the last, partial bin and compute the means (mean[] is valid only
 * after this). */
ERGON_API int ergon_bins_finish(struct ergon_bins *b, struct ergon_err *err);
/* Samples in bin i (bin_samples, fewer for the last). */
ERGON_API uint64_t ergon_bins_count(const struct ergon_bins *b, size_t i);
/* Free the arrays; NULL and a zeroed struct are fine. */
ERGON_API void ergon_bins_cleanup(struct ergon_bins *b);

#ifdef __cplusplus
}
#endif
#endif
