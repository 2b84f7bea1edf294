/* int8 CONV_2D with Helium (MVE): the same integers as tfl_conv_s8 (the
 * reference form, TFLite's reference_integer_ops::ConvPerChannel), the dot
 * products done 16 lanes at a time with VMLADAVA and a VCTP-predicated tail.
 *
 * A window inside the image: acc = in_offset * fsum[oc] + sum(filter *
 * input), four output channels per pass over the input run. A border
 * window: for each tap inside the image, sum(filter * input) and sum(filter)
 * over the depth, acc = dot + in_offset * sum (padding contributes nothing,
 * as in the reference). A window larger than 1x1 (ungrouped, at most
 * COL_MAX taps) is first copied into one contiguous column (im2col), the
 * taps outside the image set to the input zero point, which adds nothing
 * since (zero_point + in_offset) = 0; then acc = in_offset * fsum[oc] +
 * sum(filter * column), four channels per pass over the column. Grouped
 * convolution and dilation included; only the build for an MVE target has
 * this kernel (tfl_internal.h). */
#include "tfl_mve.h"

#if defined(__ARM_FEATURE_MVE)

#define COL_MAX 4096
static int8_t col[COL_MAX] __attribute__((aligned(16)));

/* n bytes from src to dst (predicated 16-byte vectors). */
static void copy_s8(int8_t *dst, const int8_t *src, int32_t n)
{
	while (n > 0) {
		mve_pred16_t p = vctp8q((uint32_t)n);
		vstrbq_p_s8(dst, vldrbq_z_s8(src, p), p);
		dst += 16;
		src += 16;
		n -= 16;
	}
}

static void fill_s8(int8_t *dst, int8_t v, int32_t n)
{
	const int8x16_t x = vdupq_n_s8(v);
	while (n > 0) {
		mve_pred16_t p = vctp8q((uint32_t)n);
		vstrbq_p_s8(dst, x, p);
		dst += 16;
		n -= 16;
	}
}

/* The window at (iy0, ix0) as one column of f_h * f_w * f_c bytes. */
static void im2col(const struct tfl_conv_args *a, const int8_t *in_b, int32_t iy0, int32_t ix0)
{
	const int8_t zp = (int8_t)(-a->in_offset);
	int8_t *d = col;
	for (int32_t fy = 0; fy < a->f_h; fy++) {
		const int32_t iy = iy0 + a->dil_h * fy;
		for (int32_t fx = 0; fx < a->f_w; fx++, d += a->f_c) {
			const int32_t ix = ix0 + a->dil_w * fx;
			if (iy < 0 || iy >= a->in_h || ix < 0 || ix >= a->in_w)
				fill_s8(d, zp, a->f_c);
			else
				copy_s8(d, in_b + ((int64_t)iy * a->in_w + ix) * a->in_c, a->f_c);
		}
	}
}

static int8_t conv_out(const struct tfl_conv_args *a, int32_t acc, int32_t oc)
{
	return tfl_mve_requant(acc, a->bias[oc], a->mult[oc], a->shift[oc], a->out_offset,
			       a->act_min, a->act_max);
}

/* Channels oc .. oc + 3 requantized in vector lanes. */
static void out4(const struct tfl_conv_args *a, const int32_t acc[4], int32_t oc, int8_t *o)
{
	tfl_mve_out4(o + oc, vldrwq_s32(acc), vldrwq_s32(a->bias + oc), vldrwq_s32(a->mult + oc),
		     vldrwq_s32(a->shift + oc), a->out_offset, a->act_min, a->act_max, vctp32q(4u));
}

static int32_t border_acc(const struct tfl_conv_args *a, const int8_t *in_b, const int8_t *f,
			  int32_t iy0, int32_t ix0, int32_t g)
{
	int32_t dot = 0, fs = 0;
	for (int32_t fy = 0; fy < a->f_h; fy++) {
		const int32_t iy = iy0 + a->dil_h * fy;
		if (iy < 0 || iy >= a->in_h)
			continue;
		for (int32_t fx = 0; fx < a->f_w; fx++) {
			const int32_t ix = ix0 + a->dil_w * fx;
			if (ix < 0 || ix >= a->in_w)
				continue;
			const int8_t *ip =
			    in_b + ((int64_t)iy * a->in_w + ix) * a->in_c + g * a->f_c;
			const int8_t *fp = f + ((int64_t)fy * a->f_w + fx) * a->f_c;
			dot = tfl_mve_dot(ip, fp, a->f_c, dot);
			fs = tfl_mve_sum(fp, a->f_c, fs);
		}
	}
	return (int32_t)((uint32_t)dot + (uint32_t)a->in_offset * (uint32_t)fs);
}

/* The dot products of channel oc's window inside the image. */
static int32_t inside_dot(const struct tfl_conv_args *a, const int8_t *in_b, const int8_t *f,
			  int32_t iy0, int32_t ix0, int32_t g, int contiguous, int32_t acc)
{
	for (int32_t fy = 0; fy < a->f_h; fy++) {
		const int8_t *row =
		    in_b + ((int64_t)(iy0 + a->dil_h * fy) * a->in_w + ix0) * a->in_c + g * a->f_c;
		const int8_t *frow = f + (int64_t)fy * a->f_w * a->f_c;
		if (contiguous) {
			acc = tfl_mve_dot(row, frow, a->f_w * a->f_c, acc);
			continue;
		}
		for (int32_t fx = 0; fx < a->f_w; fx++)
			acc = tfl_mve_dot(row + (int64_t)fx * a->dil_w * a->in_c,
					  frow + (int64_t)fx * a->f_c, a->f_c, acc);
	}
	return acc;
}

/* One output pixel from the column. */
static void pixel_col(const struct tfl_conv_args *a, int32_t taps, int8_t *o)
{
	int32_t oc = 0;
	for (; oc + 4 <= a->out_c; oc += 4) {
		const int8_t *f = a->filter + (int64_t)oc * taps;
		int32_t acc[4];
		for (int k = 0; k < 4; k++)
			acc[k] = a->in_offset * a->fsum[oc + k];
		tfl_mve_dot4(col, f, f + taps, f + 2 * taps, f + 3 * taps, taps, acc);
		out4(a, acc, oc, o);
	}
	for (; oc < a->out_c; oc++) {
		const int8_t *f = a->filter + (int64_t)oc * taps;
		o[oc] = conv_out(a, tfl_mve_dot(col, f, taps, a->in_offset * a->fsum[oc]), oc);
	}
}

void tfl_mve_conv_s8(const struct tfl_conv_args *a)
{
	const int32_t groups = a->in_c / a->f_c;
	const int32_t per_group = a->out_c / groups;
	const int32_t taps = a->f_h * a->f_w * a->f_c;
	const int32_t span_h = (a->f_h - 1) * a->dil_h, span_w = (a->f_w - 1) * a->dil_w;
	const int contiguous = a->dil_w == 1 && groups == 1;
	const int use_col = groups == 1 && a->f_h * a->f_w > 1 && taps <= COL_MAX;
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
				if (use_col) {
					im2col(a, in_b, iy0, ix0);
					pixel_col(a, taps, o);
					continue;
				}
				int32_t oc = 0;
				if (inside && contiguous) {
					for (; oc + 4 <= a->out_c; oc += 4) {
						const int8_t *f = a->filter + (int64_t)oc * taps;
						int32_t acc[4];
						for (int k = 0; k < 4; k++)
							acc[k] = a->in_offset * a->fsum[oc + k];
						for (int32_t fy = 0; fy < a->f_h; fy++) {
							const int8_t *row =
							    in_b + ((int64_t)(iy0 + fy * a->dil_h) *
									a->in_w +
								    ix0) *
								       a->in_c;
							const int8_t *fr =
							    f + (int64_t)fy * a->f_w * a->f_c;
							tfl_mve_dot4(row, fr, fr + taps,
								     fr + 2 * taps, fr + 3 * taps,
								     a->f_w * a->f_c, acc);
						}
						out4(a, acc, oc, o);
					}
				}
				for (; oc < a->out_c; oc++) {
					const int32_t g = oc / per_group;
					const int8_t *f = a->filter + (int64_t)oc * taps;
					int32_t acc =
					    inside ? inside_dot(a, in_b, f, iy0, ix0, g, contiguous,
								a->in_offset * a->fsum[oc])
						   : border_acc(a, in_b, f, iy0, ix0, g);
					o[oc] = conv_out(a, acc, oc);
				}
			}
		}
	}
}

#else
/* Not an MVE target: the build uses tfl_conv_s8 (tfl_internal.h). */
typedef int tfl_mve_conv_unused;
#endif
