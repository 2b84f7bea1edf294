/* int8 FULLY_CONNECTED, portable C, as TFLite's
 * reference_integer_ops::FullyConnected (per-tensor) and its per-channel
 * variant: acc = sum (filter + filter_offset) * (input + in_offset) + bias,
 * requantized, + out_offset, clamped. With symmetric weights (offset 0)
 * the sum is sum(filter * input) + in_offset * sum(filter): the same
 * integer, as a vectorizable dot product. */
#include "tfl_internal.h"

#if TFL_HOST_FAST
#define FC_X 16384 /* input elements widened on the stack: 32 KiB */

/* Host builds with symmetric weights: the input widened to int16 once per
 * batch, the rows of weights through the model's kernel path, requantized
 * in blocks of units. 0 when the shape does not fit (the loops below run). */
static int fc_fast(const struct tfl_fc_args *a)
{
	if (a->filter_offset != 0 || a->fsum == NULL || a->accum > FC_X)
		return 0;
	const struct tfl_kern *k = a->kern != NULL ? a->kern : tfl_kern_get(ERT_TFL_SIMD_AUTO);
	int16_t x[FC_X];
	struct tfl_rq rq;
	for (int32_t b = 0; b < a->batches; b++) {
		const int8_t *in = a->in + (int64_t)b * a->accum;
		for (int32_t d = 0; d < a->accum; d++)
			x[d] = in[d];
		for (int32_t u0 = 0; u0 < a->units; u0 += TFL_RQ_N) {
			const int32_t n = a->units - u0 < TFL_RQ_N ? a->units - u0 : TFL_RQ_N;
			if (!tfl_rq_fill(&rq, a->bias, a->fsum, a->in_offset, a->mult, a->shift,
					 a->per_channel, u0, n, a->out_offset, a->act_min,
					 a->act_max))
				return 0;
			k->fc(x, a->filter + (int64_t)u0 * a->accum, a->accum, a->accum, &rq,
			      a->out + (int64_t)b * a->units + u0);
		}
	}
	return 1;
}
#endif

void tfl_fc_s8(const struct tfl_fc_args *a)
{
#if TFL_HOST_FAST
	if (fc_fast(a))
		return;
#endif
	for (int32_t b = 0; b < a->batches; b++) {
		const int8_t *in = a->in + (int64_t)b * a->accum;
		for (int32_t u = 0; u < a->units; u++) {
			const int8_t *f = a->filter + (int64_t)u * a->accum;
			int32_t acc = 0;
			if (a->filter_offset == 0 && a->fsum != NULL) {
				for (int32_t d = 0; d < a->accum; d++)
					acc += (int32_t)f[d] * (int32_t)in[d];
				acc += a->in_offset * a->fsum[u];
			} else {
				for (int32_t d = 0; d < a->accum; d++)
					acc += ((int32_t)f[d] + a->filter_offset) *
					       ((int32_t)in[d] + a->in_offset);
			}
			acc = (int32_t)((uint32_t)acc + (uint32_t)a->bias[u]);
			int32_t k = a->per_channel ? u : 0;
			acc = tfl_mbqm(acc, a->mult[k], a->shift[k]) + a->out_offset;
			if (acc < a->act_min)
				acc = a->act_min;
			if (acc > a->act_max)
				acc = a->act_max;
			a->out[(int64_t)b * a->units + u] = (int8_t)acc;
		}
	}
}
