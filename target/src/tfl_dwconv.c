/* int8 DEPTHWISE_CONV_2D, portable C, as TFLite's
 * reference_integer_ops::DepthwiseConvPerChannel: output channel
 * ic * depth_mult + m reads input channel ic; filter [1, f_h, f_w, out_c].
 *
 * With depth multiplier 1 and the window inside the image, the channels of
 * a pixel are accumulated together (sum(filter * input) + in_offset *
 * sum(filter), the same integer as the reference form) in blocks of
 * DW_BLOCK, so the inner loop runs along contiguous channels. */
#include "tfl_internal.h"

#define DW_BLOCK 64

static int8_t requant(int32_t acc, const struct tfl_conv_args *a, int32_t oc)
{
	acc = (int32_t)((uint32_t)acc + (uint32_t)a->bias[oc]);
	acc = tfl_mbqm(acc, a->mult[oc], a->shift[oc]) + a->out_offset;
	if (acc < a->act_min)
		acc = a->act_min;
	if (acc > a->act_max)
		acc = a->act_max;
	return (int8_t)acc;
}

static void pixel_direct(const struct tfl_conv_args *a, const int8_t *in_b, int32_t iy0,
			 int32_t ix0, int8_t *o)
{
	for (int32_t ic = 0; ic < a->in_c; ic++) {
		for (int32_t m = 0; m < a->depth_mult; m++) {
			const int32_t oc = ic * a->depth_mult + m;
			int32_t acc = 0;
			for (int32_t fy = 0; fy < a->f_h; fy++) {
				const int32_t iy = iy0 + a->dil_h * fy;
				if (iy < 0 || iy >= a->in_h)
					continue;
				for (int32_t fx = 0; fx < a->f_w; fx++) {
					const int32_t ix = ix0 + a->dil_w * fx;
					if (ix < 0 || ix >= a->in_w)
						continue;
					int32_t iv =
					    in_b[((int64_t)iy * a->in_w + ix) * a->in_c + ic];
					int32_t fv =
					    a->filter[((int64_t)fy * a->f_w + fx) * a->out_c + oc];
					acc += fv * (iv + a->in_offset);
				}
			}
			o[oc] = requant(acc, a, oc);
		}
	}
}

static void pixel_inside(const struct tfl_conv_args *a, const int8_t *in_b, int32_t iy0,
			 int32_t ix0, int8_t *o)
{
	int32_t acc[DW_BLOCK];
	for (int32_t c0 = 0; c0 < a->in_c; c0 += DW_BLOCK) {
		const int32_t n = a->in_c - c0 < DW_BLOCK ? a->in_c - c0 : DW_BLOCK;
		for (int32_t c = 0; c < n; c++)
			acc[c] = a->in_offset * a->fsum[c0 + c];
		for (int32_t fy = 0; fy < a->f_h; fy++) {
			const int32_t iy = iy0 + a->dil_h * fy;
			for (int32_t fx = 0; fx < a->f_w; fx++) {
				const int32_t ix = ix0 + a->dil_w * fx;
				const int8_t *ip =
				    in_b + ((int64_t)iy * a->in_w + ix) * a->in_c + c0;
				const int8_t *fp =
				    a->filter + ((int64_t)fy * a->f_w + fx) * a->out_c + c0;
				for (int32_t c = 0; c < n; c++)
					acc[c] += (int32_t)fp[c] * (int32_t)ip[c];
			}
		}
		for (int32_t c = 0; c < n; c++)
			o[c0 + c] = requant(acc[c], a, c0 + c);
	}
}

void tfl_dwconv_s8(const struct tfl_conv_args *a)
{
	const int32_t span_h = (a->f_h - 1) * a->dil_h, span_w = (a->f_w - 1) * a->dil_w;
	for (int32_t b = 0; b < a->batches; b++) {
		const int8_t *in_b = a->in + (int64_t)b * a->in_h * a->in_w * a->in_c;
		for (int32_t oy = 0; oy < a->out_h; oy++) {
			const int32_t iy0 = oy * a->stride_h - a->pad_h;
			for (int32_t ox = 0; ox < a->out_w; ox++) {
				const int32_t ix0 = ox * a->stride_w - a->pad_w;
				int8_t *o =
				    a->out +
				    (((int64_t)b * a->out_h + oy) * a->out_w + ox) * a->out_c;
				const int inside = iy0 >= 0 && ix0 >= 0 && iy0 + span_h < a->in_h &&
						   ix0 + span_w < a->in_w;
				if (inside && a->depth_mult == 1)
					pixel_inside(a, in_b, iy0, ix0, o);
				else
					pixel_direct(a, in_b, iy0, ix0, o);
			}
		}
	}
}
