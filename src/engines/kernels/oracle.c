/* The oracle the kernels are checked against: TFLite's
 * reference_integer_ops ConvPerChannel, DepthwiseConvPerChannel and
 * FullyConnected, loop by loop, every tap bounds-checked, no precomputed
 * filter sums. Slow on purpose; it only has to be obviously right. */
#include "kernels_internal.h"

static int8_t clamp_out(int32_t acc, int32_t mult, int32_t shift, int32_t off, int32_t lo,
			int32_t hi)
{
	int32_t v = tfl_mbqm(acc, mult, shift) + off;
	if (v < lo)
		v = lo;
	if (v > hi)
		v = hi;
	return (int8_t)v;
}

void koracle_conv(const struct tfl_conv_args *a, int8_t *out)
{
	const int32_t groups = a->in_c / a->f_c, per_group = a->out_c / groups;
	for (int32_t b = 0; b < a->batches; b++)
		for (int32_t oy = 0; oy < a->out_h; oy++)
			for (int32_t ox = 0; ox < a->out_w; ox++)
				for (int32_t oc = 0; oc < a->out_c; oc++) {
					const int32_t g = oc / per_group;
					int64_t acc = 0;
					for (int32_t fy = 0; fy < a->f_h; fy++)
						for (int32_t fx = 0; fx < a->f_w; fx++)
							for (int32_t ic = 0; ic < a->f_c; ic++) {
								int32_t iy = oy * a->stride_h -
									     a->pad_h +
									     a->dil_h * fy;
								int32_t ix = ox * a->stride_w -
									     a->pad_w +
									     a->dil_w * fx;
								if (iy < 0 || iy >= a->in_h ||
								    ix < 0 || ix >= a->in_w)
									continue;
								int32_t iv =
								    a->in[(((int64_t)b * a->in_h +
									    iy) *
									       a->in_w +
									   ix) *
									      a->in_c +
									  g * a->f_c + ic];
								int32_t fv =
								    a->filter[(((int64_t)oc *
										    a->f_h +
										fy) *
										   a->f_w +
									       fx) *
										  a->f_c +
									      ic];
								acc += (int64_t)fv *
								       (iv + a->in_offset);
							}
					/* int32 wrap as the C++ reference's int32 sum. */
					int32_t s = (int32_t)(uint32_t)((uint64_t)acc +
									(uint32_t)a->bias[oc]);
					out[(((int64_t)b * a->out_h + oy) * a->out_w + ox) *
						a->out_c +
					    oc] = clamp_out(s, a->mult[oc], a->shift[oc],
							    a->out_offset, a->act_min, a->act_max);
				}
}

void koracle_dwconv(const struct tfl_conv_args *a, int8_t *out)
{
	for (int32_t b = 0; b < a->batches; b++)
		for (int32_t oy = 0; oy < a->out_h; oy++)
			for (int32_t ox = 0; ox < a->out_w; ox++)
				for (int32_t ic = 0; ic < a->in_c; ic++)
					for (int32_t m = 0; m < a->depth_mult; m++) {
						const int32_t oc = ic * a->depth_mult + m;
						int64_t acc = 0;
						for (int32_t fy = 0; fy < a->f_h; fy++)
							for (int32_t fx = 0; fx < a->f_w; fx++) {
								int32_t iy = oy * a->stride_h -
									     a->pad_h +
									     a->dil_h * fy;
								int32_t ix = ox * a->stride_w -
									     a->pad_w +
									     a->dil_w * fx;
								if (iy < 0 || iy >= a->in_h ||
								    ix < 0 || ix >= a->in_w)
									continue;
								int32_t iv =
								    a->in[(((int64_t)b * a->in_h +
									    iy) *
									       a->in_w +
									   ix) *
									      a->in_c +
									  ic];
								int32_t fv =
								    a->filter[((int64_t)fy *
										   a->f_w +
									       fx) *
										  a->out_c +
									      oc];
								acc += (int64_t)fv *
								       (iv + a->in_offset);
							}
						int32_t s =
						    (int32_t)(uint32_t)((uint64_t)acc +
									(uint32_t)a->bias[oc]);
						out[(((int64_t)b * a->out_h + oy) * a->out_w + ox) *
							a->out_c +
						    oc] = clamp_out(s, a->mult[oc], a->shift[oc],
								    a->out_offset, a->act_min,
								    a->act_max);
					}
}

void koracle_fc(const struct tfl_fc_args *a, int8_t *out)
{
	for (int32_t b = 0; b < a->batches; b++)
		for (int32_t u = 0; u < a->units; u++) {
			int64_t acc = 0;
			for (int32_t d = 0; d < a->accum; d++)
				acc += ((int64_t)a->filter[(int64_t)u * a->accum + d] +
					a->filter_offset) *
				       ((int64_t)a->in[(int64_t)b * a->accum + d] + a->in_offset);
			int32_t s = (int32_t)(uint32_t)((uint64_t)acc + (uint32_t)a->bias[u]);
			int32_t k = a->per_channel ? u : 0;
			out[(int64_t)b * a->units + u] = clamp_out(
			    s, a->mult[k], a->shift[k], a->out_offset, a->act_min, a->act_max);
		}
}
