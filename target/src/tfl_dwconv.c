/* int8 DEPTHWISE_CONV_2D, portable C, as TFLite's
 * reference_integer_ops::DepthwiseConvPerChannel: output channel
 * ic * depth_mult + m reads input channel ic; filter [1, f_h, f_w, out_c].
 *
 * With depth multiplier 1 the window is clipped once per pixel and the
 * channels of a pixel are accumulated together along contiguous memory
 * (pixel_dm1); other multipliers take the reference loops. */
#include "tfl_internal.h"

#define DW_VEC 8

static inline int8_t requant(int32_t acc, const struct tfl_conv_args *a, int32_t oc)
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

/* Depth multiplier 1: the window is clipped to the image once per pixel,
 * and the channels are accumulated together in blocks of DW_VEC, a fixed
 * length the compiler keeps in vector registers across the taps. Each
 * term is filter * (input + in_offset), the reference form: the factor
 * input + in_offset lies in [-255, 255], so the product of two int16 values
 * is widened once. */
static void pixel_dm1(const struct tfl_conv_args *a, const int8_t *in_b, int32_t iy0, int32_t ix0,
		      int8_t *o)
{
	int32_t fy0 = 0, fy1 = a->f_h, fx0 = 0, fx1 = a->f_w;
	while (fy0 < fy1 && iy0 + a->dil_h * fy0 < 0)
		fy0++;
	while (fy1 > fy0 && iy0 + a->dil_h * (fy1 - 1) >= a->in_h)
		fy1--;
	while (fx0 < fx1 && ix0 + a->dil_w * fx0 < 0)
		fx0++;
	while (fx1 > fx0 && ix0 + a->dil_w * (fx1 - 1) >= a->in_w)
		fx1--;
	const int16_t off = (int16_t)a->in_offset;
	int32_t c0 = 0;
	for (; c0 + DW_VEC <= a->in_c; c0 += DW_VEC) {
		int32_t acc[DW_VEC] = {0};
		for (int32_t fy = fy0; fy < fy1; fy++) {
			const int32_t iy = iy0 + a->dil_h * fy;
			for (int32_t fx = fx0; fx < fx1; fx++) {
				const int32_t ix = ix0 + a->dil_w * fx;
				const int8_t *ip =
				    in_b + ((int64_t)iy * a->in_w + ix) * a->in_c + c0;
				const int8_t *fp =
				    a->filter + ((int64_t)fy * a->f_w + fx) * a->out_c + c0;
				for (int c = 0; c < DW_VEC; c++)
					acc[c] += (int32_t)(int16_t)fp[c] *
						  (int32_t)(int16_t)(ip[c] + off);
			}
		}
		for (int c = 0; c < DW_VEC; c++)
			o[c0 + c] = requant(acc[c], a, c0 + c);
	}
	for (; c0 < a->in_c; c0++) {
		int32_t acc = 0;
		for (int32_t fy = fy0; fy < fy1; fy++) {
			const int32_t iy = iy0 + a->dil_h * fy;
			for (int32_t fx = fx0; fx < fx1; fx++) {
				const int32_t ix = ix0 + a->dil_w * fx;
				acc += (int32_t)
					   a->filter[((int64_t)fy * a->f_w + fx) * a->out_c + c0] *
				       ((int32_t)in_b[((int64_t)iy * a->in_w + ix) * a->in_c + c0] +
					a->in_offset);
			}
		}
		o[c0] = requant(acc, a, c0);
	}
}

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
				if (a->depth_mult == 1)
					pixel_dm1(a, in_b, iy0, ix0, o);
				else
					pixel_direct(a, in_b, iy0, ix0, o);
			}
		}
	}
}
