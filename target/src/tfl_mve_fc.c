/* int8 FULLY_CONNECTED with Helium (MVE): the same integers as tfl_fc_s8
 * (TFLite's reference_integer_ops::FullyConnected, per-tensor or
 * per-channel). sum (f + fo) * (x + io) = sum f*x + io * sum f + fo * sum x
 * + accum * fo * io, all mod 2^32 like the reference's int32 sum; the dot
 * products are VMLADAVA over 16 lanes, four units per pass over the input. */
#include "tfl_mve.h"

#if defined(__ARM_FEATURE_MVE)

static int8_t fc_out(const struct tfl_fc_args *a, int32_t acc, int32_t u)
{
	const int32_t k = a->per_channel ? u : 0;
	return tfl_mve_requant(acc, a->bias[u], a->mult[k], a->shift[k], a->out_offset, a->act_min,
			       a->act_max);
}

/* The terms besides sum f*x for unit u. */
static int32_t fc_terms(const struct tfl_fc_args *a, int32_t u, const int8_t *f, int32_t xsum)
{
	const uint32_t fsum =
	    a->fsum != NULL ? (uint32_t)a->fsum[u] : (uint32_t)tfl_mve_sum(f, a->accum, 0);
	return (int32_t)((uint32_t)a->in_offset * fsum +
			 (uint32_t)a->filter_offset * (uint32_t)xsum +
			 (uint32_t)a->accum * (uint32_t)a->filter_offset * (uint32_t)a->in_offset);
}

void tfl_mve_fc_s8(const struct tfl_fc_args *a)
{
	for (int32_t b = 0; b < a->batches; b++) {
		const int8_t *in = a->in + (int64_t)b * a->accum;
		int8_t *out = a->out + (int64_t)b * a->units;
		const int32_t xsum = a->filter_offset != 0 ? tfl_mve_sum(in, a->accum, 0) : 0;
		int32_t u = 0;
		for (; u + 4 <= a->units; u += 4) {
			const int8_t *f = a->filter + (int64_t)u * a->accum;
			int32_t acc[4] = {0, 0, 0, 0};
			tfl_mve_dot4(in, f, f + a->accum, f + 2 * a->accum, f + 3 * a->accum,
				     a->accum, acc);
			for (int k = 0; k < 4; k++) {
				int32_t t = fc_terms(a, u + k, f + (int64_t)k * a->accum, xsum);
				out[u + k] =
				    fc_out(a, (int32_t)((uint32_t)acc[k] + (uint32_t)t), u + k);
			}
		}
		for (; u < a->units; u++) {
			const int8_t *f = a->filter + (int64_t)u * a->accum;
			int32_t acc = tfl_mve_dot(in, f, a->accum, 0);
			int32_t t = fc_terms(a, u, f, xsum);
			out[u] = fc_out(a, (int32_t)((uint32_t)acc + (uint32_t)t), u);
		}
	}
}

#else
/* Not an MVE target: the build uses tfl_fc_s8 (tfl_internal.h). */
typedef int tfl_mve_fc_unused;
#endif
