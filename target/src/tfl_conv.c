/* int8 CONV_2D, portable C, as TFLite's reference_integer_ops::ConvPerChannel
 * computes it: acc = sum filter * (input + in_offset) over the taps inside
 * the image (padding contributes nothing), + bias, requantized per output
 * channel, + out_offset, clamped to the activation range. Grouped
 * convolution (in_c a multiple of the filter depth) included. */
#include "tfl_internal.h"

static int8_t requant(int32_t acc, const struct tfl_conv_args *a, int32_t oc)
{
	acc = tfl_mbqm(acc, a->mult[oc], a->shift[oc]) + a->out_offset;
	if (acc < a->act_min)
		acc = a->act_min;
	if (acc > a->act_max)
		acc = a->act_max;
	return (int8_t)acc;
}

void tfl_conv_s8(const struct tfl_conv_args *a)
{
	const int32_t groups = a->in_c / a->f_c;
	const int32_t per_group = a->out_c / groups;
	for (int32_t b = 0; b < a->batches; b++) {
		const int8_t *in_b = a->in + (int64_t)b * a->in_h * a->in_w * a->in_c;
		for (int32_t oy = 0; oy < a->out_h; oy++) {
			const int32_t iy0 = oy * a->stride_h - a->pad_h;
			for (int32_t ox = 0; ox < a->out_w; ox++) {
				const int32_t ix0 = ox * a->stride_w - a->pad_w;
				int8_t *o =
				    a->out +
				    (((int64_t)b * a->out_h + oy) * a->out_w + ox) * a->out_c;
				for (int32_t oc = 0; oc < a->out_c; oc++) {
					const int32_t g = oc / per_group;
					const int8_t *f =
					    a->filter + (int64_t)oc * a->f_h * a->f_w * a->f_c;
					int32_t acc = 0;
					for (int32_t fy = 0; fy < a->f_h; fy++) {
						const int32_t iy = iy0 + a->dil_h * fy;
						if (iy < 0 || iy >= a->in_h)
							continue;
						for (int32_t fx = 0; fx < a->f_w; fx++) {
							const int32_t ix = ix0 + a->dil_w * fx;
							if (ix < 0 || ix >= a->in_w)
								continue;
							const int8_t *ip =
							    in_b +
							    ((int64_t)iy * a->in_w + ix) * a->in_c +
							    g * a->f_c;
							const int8_t *fp =
							    f +
							    ((int64_t)fy * a->f_w + fx) * a->f_c;
							for (int32_t ic = 0; ic < a->f_c; ic++)
								acc += (int32_t)fp[ic] *
								       ((int32_t)ip[ic] +
									a->in_offset);
						}
					}
					acc = (int32_t)((uint32_t)acc + (uint32_t)a->bias[oc]);
					o[oc] = requant(acc, a, oc);
				}
			}
		}
	}
}
