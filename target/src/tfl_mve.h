/* Private to the Helium (MVE) kernels (tfl_mve_conv.c, tfl_mve_dwconv.c,
 * tfl_mve_fc.c): int8 dot products with tail predication, ACLE intrinsics
 * from arm_mve.h. Only compiled where the compiler targets MVE
 * (-mcpu=cortex-m55: __ARM_FEATURE_MVE). */
#ifndef ERT_TFL_MVE_H
#define ERT_TFL_MVE_H

#include "tfl_internal.h"

#if defined(__ARM_FEATURE_MVE)
#include <arm_mve.h>

/* acc + sum x[i] * f[i], i < n (int8 products summed into an int32: VMLADAVA
 * on 16 lanes, the last vector predicated by VCTP so nothing past n is
 * read). Wraps mod 2^32 like the reference's int32 sum (which load keeps
 * from overflowing). */
static inline int32_t tfl_mve_dot(const int8_t *x, const int8_t *f, int32_t n, int32_t acc)
{
	while (n > 0) {
		mve_pred16_t p = vctp8q((uint32_t)n);
		acc = vmladavaq_p_s8(acc, vldrbq_z_s8(x, p), vldrbq_z_s8(f, p), p);
		x += 16;
		f += 16;
		n -= 16;
	}
	return acc;
}

/* Four filters against the same input run: x is loaded once per vector. */
static inline void tfl_mve_dot4(const int8_t *x, const int8_t *f0, const int8_t *f1,
				const int8_t *f2, const int8_t *f3, int32_t n, int32_t acc[4])
{
	int32_t s0 = acc[0], s1 = acc[1], s2 = acc[2], s3 = acc[3];
	int32_t k = 0;
	while (k < n) {
		mve_pred16_t p = vctp8q((uint32_t)(n - k));
		int8x16_t v = vldrbq_z_s8(x + k, p);
		s0 = vmladavaq_p_s8(s0, v, vldrbq_z_s8(f0 + k, p), p);
		s1 = vmladavaq_p_s8(s1, v, vldrbq_z_s8(f1 + k, p), p);
		s2 = vmladavaq_p_s8(s2, v, vldrbq_z_s8(f2 + k, p), p);
		s3 = vmladavaq_p_s8(s3, v, vldrbq_z_s8(f3 + k, p), p);
		k += 16;
	}
	acc[0] = s0;
	acc[1] = s1;
	acc[2] = s2;
	acc[3] = s3;
}

/* tfl_mbqm (MultiplyByQuantizedMultiplier) on four lanes, the same
 * integers: the left shift wraps like (uint32_t)x << left (VSHL); gemmlowp's
 * SaturatingRoundingDoublingHighMul is trunc((ab + nudge) / 2^31) with
 * nudge 2^30 for ab >= 0 and 1 - 2^30 below, which for every ab equals
 * floor((ab + 2^30) / 2^31), what VQRDMULH computes (both saturate
 * INT32_MIN * INT32_MIN to INT32_MAX); RoundingDivideByPOT rounds half away
 * from zero, VRSHL half up, so a negative x is first lowered by one (the
 * VAND/VSHR fixup, saturating), which moves exactly the ties. */
static inline int32x4_t tfl_mve_mbqm(int32x4_t x, int32x4_t mult, int32x4_t shift)
{
	const int32x4_t zero = vdupq_n_s32(0);
	const int32x4_t right = vminq_s32(shift, zero);
	x = vshlq_s32(x, vmaxq_s32(shift, zero));
	x = vqrdmulhq_s32(x, mult);
	x = vqaddq_s32(x, vshrq_n_s32(vandq_s32(x, right), 31));
	return vrshlq_s32(x, right);
}

/* Four outputs: + bias (wrapping), requantized, + out_offset, clamped, and
 * stored as int8 (the lanes of p only). */
static inline void tfl_mve_out4(int8_t *o, int32x4_t acc, int32x4_t bias, int32x4_t mult,
				int32x4_t shift, int32_t out_offset, int32_t act_min,
				int32_t act_max, mve_pred16_t p)
{
	acc = tfl_mve_mbqm(vaddq_s32(acc, bias), mult, shift);
	acc = vaddq_n_s32(acc, out_offset);
	acc = vmaxq_s32(acc, vdupq_n_s32(act_min));
	acc = vminq_s32(acc, vdupq_n_s32(act_max));
	vstrbq_p_s32(o, acc, p);
}

/* One output pixel of a conv or dwconv: its batch's input, the window's
 * top-left corner (iy0, ix0; negative in the padding), whether the whole
 * window lies inside the image, and its out_c outputs. */
typedef void (*tfl_mve_pixel_fn)(const struct tfl_conv_args *a, const int8_t *in_b, int32_t iy0,
				 int32_t ix0, int inside, int8_t *o);

/* Call fn for every output pixel in NHWC order (inlined with a constant fn). */
static inline void tfl_mve_each_pixel(const struct tfl_conv_args *a, tfl_mve_pixel_fn fn)
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
				fn(a, in_b, iy0, ix0,
				   iy0 >= 0 && ix0 >= 0 && iy0 + span_h < a->in_h &&
				       ix0 + span_w < a->in_w,
				   o);
			}
		}
	}
}

/* acc + sum f[i], i < n (VADDVA, predicated tail). */
static inline int32_t tfl_mve_sum(const int8_t *f, int32_t n, int32_t acc)
{
	while (n > 0) {
		mve_pred16_t p = vctp8q((uint32_t)n);
		acc = vaddvaq_p_s8(acc, vldrbq_z_s8(f, p), p);
		f += 16;
		n -= 16;
	}
	return acc;
}
#endif

/* The requantization of the reference kernels (same function, so the same
 * integer): + bias (mod 2^32), MultiplyByQuantizedMultiplier, + out_offset,
 * clamp. */
static inline int8_t tfl_mve_requant(int32_t acc, int32_t bias, int32_t mult, int32_t shift,
				     int32_t out_offset, int32_t act_min, int32_t act_max)
{
	acc = (int32_t)((uint32_t)acc + (uint32_t)bias);
	acc = tfl_mbqm(acc, mult, shift) + out_offset;
	if (acc < act_min)
		acc = act_min;
	if (acc > act_max)
		acc = act_max;
	return (int8_t)acc;
}

#endif
