/* Min/max/mean bins of a sample stream (ergon/bins.h). */
#include "ergon/bins.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void acc_reset(struct ergon_bins *b)
{
	for (size_t k = 0; k < ERGON_BINS_F32_MAX; k++) {
		b->acc_sum[k] = 0.0;
		b->acc_n[k] = 0;
		b->acc_min[k] = INFINITY;
		b->acc_max[k] = -INFINITY;
	}
	memset(b->acc_line, 0, sizeof(b->acc_line));
	b->in_bin = 0;
}

int ergon_bins_init(struct ergon_bins *b, const struct ergon_bins_config *cfg,
		    struct ergon_err *err)
{
	memset(b, 0, sizeof(*b));
	if (cfg->bin_samples == 0 || cfg->bin_samples > UINT32_MAX || cfg->n_f32 == 0 ||
	    cfg->n_f32 > ERGON_BINS_F32_MAX || cfg->n_lines > ERGON_BINS_LINES_MAX ||
	    cfg->max_bins == 0 || cfg->coarsen == 1 ||
	    (cfg->coarsen > 1 && cfg->max_bins % cfg->coarsen != 0))
		return ergon_err_set(err, ERGON_EUSAGE,
				     "bins: %" PRIu64 " samples per bin, %zu signals, %zu lines, "
				     "%" PRIu64 " bins at most, coarsening by %u: out of range",
				     cfg->bin_samples, cfg->n_f32, cfg->n_lines, cfg->max_bins,
				     cfg->coarsen);
	b->cfg = *cfg;
	b->bin_samples = cfg->bin_samples;
	for (size_t k = 0; k < ERGON_BINS_LINES_MAX; k++)
		b->first_rise[k] = -1;
	acc_reset(b);
	return 0;
}

static int grow(struct ergon_bins *b, struct ergon_err *err)
{
	size_t cap = b->cap ? b->cap * 2 : 1024;
	if ((uint64_t)cap > b->cfg.max_bins)
		cap = (size_t)b->cfg.max_bins;
	for (size_t k = 0; k < b->cfg.n_f32; k++) {
		float **arr[3] = {&b->min[k], &b->max[k], &b->mean[k]};
		for (int a = 0; a < 3; a++) {
			float *p = realloc(*arr[a], cap * sizeof(float));
			if (p == NULL)
				return ergon_err_set(err, ERGON_ENOMEM, "bins: out of memory");
			*arr[a] = p;
		}
		uint32_t *f = realloc(b->finite[k], cap * sizeof(uint32_t));
		if (f == NULL)
			return ergon_err_set(err, ERGON_ENOMEM, "bins: out of memory");
		b->finite[k] = f;
		double *d = realloc(b->sum[k], cap * sizeof(double));
		if (d == NULL)
			return ergon_err_set(err, ERGON_ENOMEM, "bins: out of memory");
		b->sum[k] = d;
	}
	for (size_t k = 0; k < b->cfg.n_lines; k++) {
		uint8_t *p = realloc(b->lines[k], cap);
		if (p == NULL)
			return ergon_err_set(err, ERGON_ENOMEM, "bins: out of memory");
		b->lines[k] = p;
	}
	b->cap = cap;
	return 0;
}

/* Merge every `f` bins into one (n_bins is a multiple of f). */
static void coarsen(struct ergon_bins *b, uint32_t f)
{
	size_t n = b->n_bins / f;
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < b->cfg.n_f32; k++) {
			double s = 0.0;
			uint32_t c = 0;
			float lo = INFINITY, hi = -INFINITY;
			for (size_t j = i * f; j < (i + 1) * f; j++) {
				if (b->finite[k][j] == 0)
					continue;
				s += b->sum[k][j];
				c += b->finite[k][j];
				lo = fminf(lo, b->min[k][j]);
				hi = fmaxf(hi, b->max[k][j]);
			}
			b->sum[k][i] = s;
			b->finite[k][i] = c;
			b->min[k][i] = c ? lo : NAN;
			b->max[k][i] = c ? hi : NAN;
		}
		for (size_t k = 0; k < b->cfg.n_lines; k++) {
			uint8_t v = 0;
			for (size_t j = i * f; j < (i + 1) * f; j++)
				v |= b->lines[k][j];
			b->lines[k][i] = v;
		}
	}
	b->n_bins = n;
	b->bin_samples *= f;
}

/* Close the bin being filled. With coarsening, a full set of bins is first
 * merged, and the bin being closed becomes the start of the next coarse
 * bin instead (its samples stay in the accumulators). */
static int close_bin(struct ergon_bins *b, int last, struct ergon_err *err)
{
	if ((uint64_t)b->n_bins >= b->cfg.max_bins) {
		if (b->cfg.coarsen < 2 || b->bin_samples * b->cfg.coarsen > UINT32_MAX)
			return ergon_err_set(err, ERGON_ERANGE,
					     "bins: more than %" PRIu64 " bins of %" PRIu64
					     " samples; choose larger bins",
					     b->cfg.max_bins, b->bin_samples);
		coarsen(b, b->cfg.coarsen);
		if (!last)
			return 0;
	}
	if (b->n_bins == b->cap) {
		int rc = grow(b, err);
		if (rc)
			return rc;
	}
	size_t i = b->n_bins;
	for (size_t k = 0; k < b->cfg.n_f32; k++) {
		uint32_t n = b->acc_n[k];
		b->finite[k][i] = n;
		b->sum[k][i] = b->acc_sum[k];
		b->min[k][i] = n ? b->acc_min[k] : NAN;
		b->max[k][i] = n ? b->acc_max[k] : NAN;
	}
	for (size_t k = 0; k < b->cfg.n_lines; k++)
		b->lines[k][i] = b->acc_line[k];
	b->n_bins++;
	acc_reset(b);
	return 0;
}

int ergon_bins_push(struct ergon_bins *b, uint64_t index, size_t n, const float *const *f32,
		    const uint8_t *const *bits, const size_t *bit0, struct ergon_err *err)
{
	if (index != b->cfg.first_index + b->samples)
		return ergon_err_set(err, ERGON_EUSAGE,
				     "bins: samples pushed from index %" PRIu64
				     ", expected %" PRIu64,
				     index, b->cfg.first_index + b->samples);
	size_t j = 0;
	while (j < n) {
		/* The samples of this block that fall in the bin being filled. */
		uint64_t room = b->bin_samples - b->in_bin;
		size_t m = (uint64_t)(n - j) < room ? n - j : (size_t)room;
		for (size_t k = 0; k < b->cfg.n_f32; k++) {
			const float *x = f32[k] + j;
			double sum = 0.0;
			uint32_t cnt = 0;
			float lo = b->acc_min[k], hi = b->acc_max[k];
			for (size_t s = 0; s < m; s++) {
				float v = x[s];
				if (isnan(v))
					continue;
				sum += (double)v;
				cnt++;
				if (v < lo)
					lo = v;
				if (v > hi)
					hi = v;
			}
			b->acc_sum[k] += sum;
			b->acc_n[k] += cnt;
			b->acc_min[k] = lo;
			b->acc_max[k] = hi;
			b->lost[k] += m - cnt;
		}
		for (size_t k = 0; k < b->cfg.n_lines; k++) {
			uint8_t acc = b->acc_line[k], prev = b->line_prev[k];
			const uint8_t *bk = bits != NULL ? bits[k] : NULL;
			for (size_t s = 0; s < m; s++) {
				int hi = 0;
				if (bk != NULL) {
					size_t at = bit0[k] + j + s;
					hi = (bk[at >> 3] >> (at & 7u)) & 1;
				}
				uint8_t now = hi ? 2 : 1;
				if (now == 2 && prev == 1 && b->first_rise[k] < 0)
					b->first_rise[k] = (int64_t)(index + j + s);
				prev = now;
				acc |= hi ? ERGON_BINS_HIGH : ERGON_BINS_LOW;
			}
			b->acc_line[k] = acc;
			b->line_prev[k] = prev;
		}
		b->in_bin += m;
		b->samples += m;
		j += m;
		if (b->in_bin == b->bin_samples) {
			int rc = close_bin(b, 0, err);
			if (rc)
				return rc;
		}
	}
	return 0;
}

int ergon_bins_finish(struct ergon_bins *b, struct ergon_err *err)
{
	if (b->in_bin > 0) {
		int rc = close_bin(b, 1, err);
		if (rc)
			return rc;
	}
	for (size_t k = 0; k < b->cfg.n_f32; k++)
		for (size_t i = 0; i < b->n_bins; i++)
			b->mean[k][i] =
			    b->finite[k][i] ? (float)(b->sum[k][i] / (double)b->finite[k][i]) : NAN;
	return 0;
}

uint64_t ergon_bins_count(const struct ergon_bins *b, size_t i)
{
	if (i >= b->n_bins)
		return 0;
	if (i + 1 < b->n_bins)
		return b->bin_samples;
	return b->samples - (uint64_t)i * b->bin_samples;
}

void ergon_bins_cleanup(struct ergon_bins *b)
{
	if (b == NULL)
		return;
	for (size_t k = 0; k < ERGON_BINS_F32_MAX; k++) {
		free(b->min[k]);
		free(b->max[k]);
		free(b->mean[k]);
		free(b->finite[k]);
		free(b->sum[k]);
	}
	for (size_t k = 0; k < ERGON_BINS_LINES_MAX; k++)
		free(b->lines[k]);
	memset(b, 0, sizeof(*b));
}
