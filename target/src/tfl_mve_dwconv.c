/* int8 DEPTHWISE_CONV_2D with Helium (MVE): the same integers as
 * tfl_dwconv_s8 (TFLite's reference_integer_ops::DepthwiseConvPerChannel).
 * With depth multiplier 1, sixteen channels of a pixel go in four int32x4
 * accumulators (VLDRB.S32 widening loads, VMUL + VADD per tap, the last
 * channels predicated by VCTP); inside the image acc = in_offset * fsum +
 * sum(filter * input), at a border the taps inside are summed as
 * sum(filter * input) + in_offset * sum(filter); four outputs at a time
 * requantized in vector lanes (tfl_mve_out4). A depth multiplier other
 * than 1 (the input channel is then not contiguous with the output's) is
 * computed by the reference kernel, and tfl_mve_dwconv_path says so. */
#include "tfl_mve.h"

#if defined(__ARM_FEATURE_MVE)

#define DW_LANES 16

/* Channels c0 .. c0 + n (n <= 16) of one output pixel. */
static void block(const struct tfl_conv_args *a, const int8_t *in_b, int32_t iy0, int32_t ix0,
		  int32_t c0, int32_t n, int inside, int8_t *o)
{
	int32x4_t acc[4], fs[4];
	mve_pred16_t p[4];
	const int nb = (int)((n + 3) / 4); /* sub-vectors with a live lane */
	for (int k = 0; k < 4; k++) {
		int32_t left = n - 4 * k;
		p[k] = vctp32q(left > 0 ? (uint32_t)left : 0u);
		acc[k] = vdupq_n_s32(0);
		fs[k] = vdupq_n_s32(0);
	}
	for (int32_t fy = 0; fy < a->f_h; fy++) {
		const int32_t iy = iy0 + a->dil_h * fy;
		if (iy < 0 || iy >= a->in_h)
			continue;
		for (int32_t fx = 0; fx < a->f_w; fx++) {
			const int32_t ix = ix0 + a->dil_w * fx;
			if (ix < 0 || ix >= a->in_w)
				continue;
			const int8_t *ip = in_b + ((int64_t)iy * a->in_w + ix) * a->in_c + c0;
			const int8_t *fp = a->filter + ((int64_t)fy * a->f_w + fx) * a->out_c + c0;
			for (int k = 0; k < nb; k++) {
				int32x4_t f = vldrbq_z_s32(fp + 4 * k, p[k]);
				int32x4_t x = vldrbq_z_s32(ip + 4 * k, p[k]);
				acc[k] = vaddq_s32(acc[k], vmulq_s32(f, x));
				if (!inside)
					fs[k] = vaddq_s32(fs[k], f);
			}
		}
	}
	for (int k = 0; k < nb; k++) {
		const int32_t c = c0 + 4 * k;
		if (inside)
			fs[k] = vldrwq_z_s32(a->fsum + c, p[k]);
		/* acc + in_offset * fs, mod 2^32 */
		acc[k] = vmlaq_n_s32(acc[k], fs[k], a->in_offset);
		tfl_mve_out4(o + c, acc[k], vldrwq_z_s32(a->bias + c, p[k]),
			     vldrwq_z_s32(a->mult + c, p[k]), vldrwq_z_s32(a->shift + c, p[k]),
			     a->out_offset, a->act_min, a->act_max, p[k]);
	}
}

static inline __attribute__((always_inline)) void pixel(const struct tfl_conv_args *a,
							const int8_t *in_b, int32_t iy0,
							int32_t ix0, int inside, int8_t *o)
{
	for (int32_t c0 = 0; c0 < a->in_c; c0 += DW_LANES) {
		const int32_t n = a->in_c - c0 < DW_LANES ? a->in_c - c0 : DW_LANES;
		block(a, in_b, iy0, ix0, c0, n, inside, o);
	}
}

void tfl_mve_dwconv_s8(const struct tfl_conv_args *a)
{
	if (a->depth_mult != 1) {
		tfl_dwconv_s8(a);
		return;
	}
	tfl_mve_each_pixel(a, pixel);
}

const char *tfl_mve_dwconv_path(const struct tfl_conv_args *a)
{
	return a->depth_mult == 1 ? "mve" : "ref (depth multiplier is not 1)";
}

#else
/* Not an MVE target: the build uses tfl_dwconv_s8 (tfl_internal.h). */
typedef int tfl_mve_dwconv_unused;
#endif
