/* int8 CONV_2D, portable C, as TFLite's reference_integer_ops::ConvPerChannel
 * computes it: acc = sum filter * (input + in_offset) over the taps inside
 * the image (padding contributes nothing), + bias, requantized per output
 * channel, + out_offset, clamped to the activation range. Grouped
 * convolution (in_c a multiple of the filter depth) included.
 *
 * Where the whole window lies inside the image the sum is computed as
 * sum(filter * input) + in_offset * sum(filter), which is the same integer
 * (no term can overflow: load limits a window to 32768 taps), with the
 * filter sums precomputed at bind time; the inner loop is then a plain int8
 * dot product the compiler can vectorize. Border pixels take the direct
 * form. */
#include "tfl_internal.h"

static inline int8_t requant(int32_t acc, const struct tfl_conv_args *a, int32_t oc)
{
	acc = tfl_mbqm(acc, a->mult[oc], a->shift[oc]) + a->out_offset;
	if (acc < a->act_min)
		acc = a->act_min;
	if (acc > a->act_max)
		acc = a->act_max;
	return (int8_t)acc;
}

static int32_t dot_s8(const int8_t *x, const int8_t *f, int32_t n)
{
	int32_t s = 0;
	for (int32_t i = 0; i < n; i++)
		s += (int32_t)x[i] * (int32_t)f[i];
	return s;
}

/* Four output channels' dot products over the same input run: one pass
 * over x for four filters (x is read once, the four sums vectorize). */
static void dot4_s8(const int8_t *x, const int8_t *f0, const int8_t *f1, const int8_t *f2,
		    const int8_t *f3, int32_t n, int32_t acc[4])
{
	int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
	for (int32_t i = 0; i < n; i++) {
		const int32_t v = x[i];
		s0 += v * f0[i];
		s1 += v * f1[i];
		s2 += v * f2[i];
		s3 += v * f3[i];
	}
	acc[0] += s0;
	acc[1] += s1;
	acc[2] += s2;
	acc[3] += s3;
}

static int32_t border_acc(const struct tfl_conv_args *a, const int8_t *in_b, const int8_t *f,
			  int32_t iy0, int32_t ix0, int32_t g)
{
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
			    in_b + ((int64_t)iy * a->in_w + ix) * a->in_c + g * a->f_c;
			const int8_t *fp = f + ((int64_t)fy * a->f_w + fx) * a->f_c;
			for (int32_t ic = 0; ic < a->f_c; ic++)
				acc += (int32_t)fp[ic] * ((int32_t)ip[ic] + a->in_offset);
		}
	}
	return acc;
}

/* Host builds (anything but an M-profile core) take a widened path: the
 * filters of a block of output channels, and then each inside pixel's
 * window (padding included), are widened to int16 once in a stack scratch, so every dot
 * product is an int16 x int16 -> int32 sum, which compilers map to
 * multiply-add pairs (pmaddwd with plain x86-64 SSE2). Each widened filter
 * value serves every pixel of the image and each widened window every
 * channel of the block. The integers are the same as the int8 form's:
 * only the order of exact additions changes. A pixel's block of outputs is
 * requantized together (tfl_requant_block). M-profile builds keep the int8
 * loops below (a few KiB of stack, and their own vector kernels). */
#if TFL_HOST_FAST
#define TFL_WIDE_SCRATCH 16384 /* int16 elements: 32 KiB of stack */
#else
#define TFL_WIDE_SCRATCH 0
#endif

#if TFL_WIDE_SCRATCH
static int32_t dot_s16(const int16_t *x, const int16_t *f, int32_t n)
{
	int32_t s = 0;
	for (int32_t i = 0; i < n; i++)
		s += (int32_t)x[i] * (int32_t)f[i];
	return s;
}

/* Four consecutive widened filters of n taps each against one window. */
static void dot4_s16(const int16_t *x, const int16_t *f, int32_t n, int32_t acc[4])
{
	const int16_t *f0 = f, *f1 = f + n, *f2 = f + 2 * n, *f3 = f + 3 * n;
	int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
	for (int32_t i = 0; i < n; i++) {
		const int32_t v = x[i];
		s0 += v * f0[i];
		s1 += v * f1[i];
		s2 += v * f2[i];
		s3 += v * f3[i];
	}
	acc[0] += s0;
	acc[1] += s1;
	acc[2] += s2;
	acc[3] += s3;
}

/* The window of a pixel, widened, in filter tap order (taps entries). A tap outside the
 * image holds the input zero point (-in_offset), so its term
 * filter * (input + in_offset) is 0 as in the reference, and every pixel,
 * border or not, is sum(filter * input) + in_offset * sum(filter). */
static void widen_window(const struct tfl_conv_args *a, const int8_t *in_b, int32_t iy0,
			 int32_t ix0, int16_t *xw)
{
	const int16_t pad = (int16_t)-a->in_offset;
	for (int32_t fy = 0; fy < a->f_h; fy++) {
		const int32_t iy = iy0 + a->dil_h * fy;
		for (int32_t fx = 0; fx < a->f_w; fx++) {
			const int32_t ix = ix0 + a->dil_w * fx;
			if (iy < 0 || iy >= a->in_h || ix < 0 || ix >= a->in_w) {
				for (int32_t ic = 0; ic < a->f_c; ic++)
					*xw++ = pad;
				continue;
			}
			const int8_t *ip = in_b + ((int64_t)iy * a->in_w + ix) * a->in_c;
			if (a->dil_w == 1 && ix + (a->f_w - 1 - fx) < a->in_w) {
				/* The rest of this filter row is inside: one run. */
				const int32_t len = (a->f_w - fx) * a->f_c;
				for (int32_t i = 0; i < len; i++)
					xw[i] = ip[i];
				xw += len;
				break;
			}
			for (int32_t ic = 0; ic < a->f_c; ic++)
				*xw++ = ip[ic];
		}
	}
}

/* The whole convolution on the widened path; 0 when the shape does not
 * fit it (grouped, or a window too deep for the scratch). */
static int conv_wide(const struct tfl_conv_args *a)
{
	const int32_t taps = a->f_h * a->f_w * a->f_c;
	/* Windows and filters padded with zeros to a multiple of 8 taps, so
	 * the dot products have no scalar remainder (27 taps: 32). */
	const int32_t tp = (taps + 7) & ~7;
	if (a->in_c != a->f_c || taps <= 0 || tp > TFL_WIDE_SCRATCH / 5)
		return 0;
	int32_t block = ((TFL_WIDE_SCRATCH - tp) / tp) & ~3;
	if (block > TFL_RQ_MAX)
		block = TFL_RQ_MAX;
	if (block > a->out_c)
		block = a->out_c;
	int16_t scratch[TFL_WIDE_SCRATCH];
	int32_t accb[TFL_RQ_MAX];
	struct tfl_rq_scale sc;
	const int fast = a->out_c <= TFL_RQ_MAX;
	if (fast)
		tfl_requant_scales(a->mult, a->shift, a->out_c, &sc);
	int16_t *xw = scratch, *fw = scratch + tp;
	for (int32_t i = taps; i < tp; i++)
		xw[i] = 0;
	for (int32_t oc0 = 0; oc0 < a->out_c; oc0 += block) {
		const int32_t n = a->out_c - oc0 < block ? a->out_c - oc0 : block;
		const int8_t *f8 = a->filter + (int64_t)oc0 * taps;
		for (int32_t k = 0; k < n; k++)
			for (int32_t i = 0; i < tp; i++)
				fw[(int64_t)k * tp + i] = i < taps ? f8[(int64_t)k * taps + i] : 0;
		for (int32_t b = 0; b < a->batches; b++) {
			const int8_t *in_b = a->in + (int64_t)b * a->in_h * a->in_w * a->in_c;
			for (int32_t oy = 0; oy < a->out_h; oy++) {
				const int32_t iy0 = oy * a->stride_h - a->pad_h;
				for (int32_t ox = 0; ox < a->out_w; ox++) {
					const int32_t ix0 = ox * a->stride_w - a->pad_w;
					int8_t *o = a->out +
						    (((int64_t)b * a->out_h + oy) * a->out_w + ox) *
							a->out_c +
						    oc0;
					widen_window(a, in_b, iy0, ix0, xw);
					int32_t k = 0;
					for (; k + 4 <= n; k += 4) {
						int32_t *q = accb + k;
						for (int j = 0; j < 4; j++)
							q[j] = a->in_offset * a->fsum[oc0 + k + j];
						dot4_s16(xw, fw + (int64_t)k * tp, tp, q);
					}
					for (; k < n; k++)
						accb[k] = a->in_offset * a->fsum[oc0 + k] +
							  dot_s16(xw, fw + (int64_t)k * tp, tp);
					for (k = 0; k < n; k++)
						accb[k] = (int32_t)((uint32_t)accb[k] +
								    (uint32_t)a->bias[oc0 + k]);
					if (fast &&
					    tfl_requant_block(accb, &sc, oc0, n, a->out_offset,
							      a->act_min, a->act_max, o))
						continue;
					for (k = 0; k < n; k++)
						o[k] = requant(accb[k], a, oc0 + k);
				}
			}
		}
	}
	return 1;
}
#endif

void tfl_conv_s8(const struct tfl_conv_args *a)
{
#if TFL_WIDE_SCRATCH
	if (conv_wide(a))
		return;
#endif
	const int32_t groups = a->in_c / a->f_c;
	const int32_t per_group = a->out_c / groups;
	const int32_t taps = a->f_h * a->f_w * a->f_c;
	const int32_t span_h = (a->f_h - 1) * a->dil_h, span_w = (a->f_w - 1) * a->dil_w;
	/* A 1x1 (or dilation-free, full-depth) window reads one contiguous
	 * run per filter row. */
	const int contiguous_rows = a->dil_w == 1 && groups == 1;
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
				int32_t oc = 0;
				if (inside && contiguous_rows) {
					/* Four channels at a time while whole quads remain. */
					for (; oc + 4 <= a->out_c; oc += 4) {
						const int8_t *f = a->filter + (int64_t)oc * taps;
						int32_t acc[4];
						for (int k = 0; k < 4; k++)
							acc[k] = a->in_offset * a->fsum[oc + k];
						for (int32_t fy = 0; fy < a->f_h; fy++) {
							const int8_t *row =
							    in_b + ((int64_t)(iy0 + a->dil_h * fy) *
									a->in_w +
								    ix0) *
								       a->in_c;
							const int8_t *fr =
							    f + (int64_t)fy * a->f_w * a->f_c;
							dot4_s8(row, fr, fr + taps, fr + 2 * taps,
								fr + 3 * taps, a->f_w * a->f_c,
								acc);
						}
						for (int k = 0; k < 4; k++) {
							int32_t v =
							    (int32_t)((uint32_t)acc[k] +
								      (uint32_t)a->bias[oc + k]);
							o[oc + k] = requant(v, a, oc + k);
						}
					}
				}
				for (; oc < a->out_c; oc++) {
					const int32_t g = oc / per_group;
					const int8_t *f = a->filter + (int64_t)oc * taps;
					int32_t acc;
					if (!inside) {
						acc = border_acc(a, in_b, f, iy0, ix0, g);
					} else {
						acc = a->in_offset * a->fsum[oc];
						for (int32_t fy = 0; fy < a->f_h; fy++) {
							const int8_t *row =
							    in_b +
							    ((int64_t)(iy0 + a->dil_h * fy) *
								 a->in_w +
							     ix0) *
								a->in_c +
							    g * a->f_c;
							const int8_t *frow =
							    f + (int64_t)fy * a->f_w * a->f_c;
							if (contiguous_rows) {
								acc += dot_s8(row, frow,
									      a->f_w * a->f_c);
								continue;
							}
							for (int32_t fx = 0; fx < a->f_w; fx++)
								acc += dot_s8(
								    row + (int64_t)fx * a->dil_w *
									      a->in_c,
								    frow + (int64_t)fx * a->f_c,
								    a->f_c);
						}
					}
					acc = (int32_t)((uint32_t)acc + (uint32_t)a->bias[oc]);
					o[oc] = requant(acc, a, oc);
				}
			}
		}
	}
}
