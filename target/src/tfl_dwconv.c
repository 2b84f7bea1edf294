/* int8 DEPTHWISE_CONV_2D, portable C, as TFLite's
 * reference_integer_ops::DepthwiseConvPerChannel: output channel
 * ic * depth_mult + m reads input channel ic; filter [1, f_h, f_w, out_c]. */
#include "tfl_internal.h"

void tfl_dwconv_s8(const struct tfl_conv_args *a)
{
	for (int32_t b = 0; b < a->batches; b++) {
		const int8_t *in_b = a->in + (int64_t)b * a->in_h * a->in_w * a->in_c;
		for (int32_t oy = 0; oy < a->out_h; oy++) {
			const int32_t iy0 = oy * a->stride_h - a->pad_h;
			for (int32_t ox = 0; ox < a->out_w; ox++) {
				const int32_t ix0 = ox * a->stride_w - a->pad_w;
				int8_t *o =
				    a->out +
				    (((int64_t)b * a->out_h + oy) * a->out_w + ox) * a->out_c;
				for (int32_t ic = 0; ic < a->in_c; ic++) {
					for (int32_t m = 0; m < a->depth_mult; m++) {
						const int32_t oc = ic * a->depth_mult + m;
						int32_t acc = 0;
						for (int32_t fy = 0; fy < a->f_h; fy++) {
							const int32_t iy = iy0 + a->dil_h * fy;
							if (iy < 0 || iy >= a->in_h)
								continue;
							for (int32_t fx = 0; fx < a->f_w; fx++) {
								const int32_t ix =
								    ix0 + a->dil_w * fx;
								if (ix < 0 || ix >= a->in_w)
									continue;
								int32_t iv =
								    in_b[((int64_t)iy * a->in_w +
									  ix) *
									     a->in_c +
									 ic];
								int32_t fv =
								    a->filter[((int64_t)fy *
										   a->f_w +
									       fx) *
										  a->out_c +
									      oc];
								acc += fv * (iv + a->in_offset);
							}
						}
						acc = (int32_t)((uint32_t)acc +
								(uint32_t)a->bias[oc]);
						acc = tfl_mbqm(acc, a->mult[oc], a->shift[oc]) +
						      a->out_offset;
						if (acc < a->act_min)
							acc = a->act_min;
						if (acc > a->act_max)
							acc = a->act_max;
						o[oc] = (int8_t)acc;
					}
				}
			}
		}
	}
}
