/* int8 FULLY_CONNECTED, portable C, as TFLite's
 * reference_integer_ops::FullyConnected (per-tensor) and its per-channel
 * variant: acc = sum (filter + filter_offset) * (input + in_offset) + bias,
 * requantized, + out_offset, clamped. With symmetric weights (offset 0)
 * the sum is sum(filter * input) + in_offset * sum(filter): the same
 * integer, as a vectorizable dot product. */
#include "tfl_internal.h"

void tfl_fc_s8(const struct tfl_fc_args *a)
{
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
