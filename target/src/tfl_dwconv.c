/* int8 DEPTHWISE_CONV_2D, portable C, as TFLite's
 * reference_integer_ops::DepthwiseConvPerChannel: output channel
 * ic * depth_mult + m reads input channel ic; filter [1, f_h, f_w, out_c].
 *
 * With depth multiplier 1 and the window inside the image, the channels of
 * a pixel are accumulated together (sum(filter * input) + in_offset *
 * sum(filter), the same integer as the reference form) in blocks of
 * DW_BLOCK, so the inner loop runs along contiguous channels; host builds
 * take bands of rows instead (dw_band). */
#include "tfl_internal.h"

#define DW_BLOCK 64

static inline int8_t requant_nobias(int32_t acc, const struct tfl_conv_args *a, int32_t oc)
{
	acc = tfl_mbqm(acc, a->mult[oc], a->shift[oc]) + a->out_offset;
	if (acc < a->act_min)
		acc = a->act_min;
	if (acc > a->act_max)
		acc = a->act_max;
	return (int8_t)acc;
}

static inline int8_t requant(int32_t acc, const struct tfl_conv_args *a, int32_t oc)
{
	return requant_nobias((int32_t)((uint32_t)acc + (uint32_t)a->bias[oc]), a, oc);
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

/* Host builds (anything but an M-profile core) with depth multiplier 1
 * take dw_band: a band of input rows is copied with the padding columns
 * and rows set to the input zero point (whose term filter * (zp +
 * in_offset) is 0, as the reference's skipped tap), so every output pixel,
 * border or not, is init + sum(filter * input) with init = bias +
 * in_offset * sum(filter): the reference's integer. The filter taps are
 * widened and paired per channel once per call; an output row is one call
 * of the model's kernel path (struct tfl_kern), the requantization fused
 * into its store. */
#if TFL_HOST_FAST
#define DW_BAND 32768 /* bytes of padded input rows on the stack */
#define DW_SLACK 32   /* the kernels read up to 16 bytes past a run */
#define DW_TAPS 32    /* filter taps (f_h * f_w) the band path takes */

int64_t tfl_dwconv_pack(const struct tfl_conv_args *a, int32_t c0, int32_t n, int32_t fstride,
			int16_t *dst)
{
	const int32_t taps = a->f_h * a->f_w, tp2 = (taps + 1) / 2;
	if (a->depth_mult != 1 || taps > DW_TAPS)
		return 0;
	if (dst != NULL)
		for (int32_t p = 0; p < tp2; p++)
			for (int32_t c = 0; c < fstride; c++)
				for (int32_t t = 0; t < 2; t++) {
					const int32_t tap = 2 * p + t;
					dst[((int64_t)p * fstride + c) * 2 + t] =
					    (int16_t)(tap < taps && c < n
							  ? a->filter[(int64_t)tap * a->out_c + c0 +
								      c]
							  : 0);
				}
	return (int64_t)tp2 * fstride * 2;
}

/* 0 when the shape does not fit (the per-pixel loops run). */
static int dw_band(const struct tfl_conv_args *a)
{
	const struct tfl_kern *k = a->kern != NULL ? a->kern : tfl_kern_get(ERT_TFL_SIMD_AUTO);
	const int32_t c_n = a->in_c, taps = a->f_h * a->f_w, tp2 = (taps + 1) / 2;
	const int32_t pw = (a->out_w - 1) * a->stride_w + (a->f_w - 1) * a->dil_w + 1;
	const int32_t span_h = (a->f_h - 1) * a->dil_h + 1;
	const int64_t row_bytes = (int64_t)pw * c_n;
	if (a->depth_mult != 1 || taps > DW_TAPS || span_h * row_bytes + DW_SLACK > DW_BAND)
		return 0;
	/* Output rows per band. */
	int32_t ob = (int32_t)(((DW_BAND - DW_SLACK) / row_bytes - span_h) / a->stride_h + 1);
	if (ob > a->out_h)
		ob = a->out_h;
	int8_t band[DW_BAND];
	int16_t f16[DW_TAPS / 2 * TFL_RQ_N * 2];
	const int8_t *xp[DW_TAPS];
	struct tfl_rq rq;
	const int8_t zp = (int8_t)-a->in_offset;
	for (int32_t c0 = 0; c0 < c_n; c0 += TFL_RQ_N) {
		const int32_t n = c_n - c0 < TFL_RQ_N ? c_n - c0 : TFL_RQ_N;
		/* Packed filters hold every channel (ert_tfl_pack), the
		 * scratch one block. */
		const int32_t fstride = a->packed != NULL ? (c_n + 15) & ~15 : (n + 15) & ~15;
		if (!tfl_rq_fill(&rq, a->bias, a->fsum, a->in_offset, a->mult, a->shift, 1, c0, n,
				 a->out_offset, a->act_min, a->act_max))
			return 0;
		const int16_t *fp = a->packed != NULL ? a->packed + (int64_t)c0 * 2 : f16;
		if (a->packed == NULL && k->packed_b)
			tfl_dwconv_pack(a, c0, n, fstride, f16);
		for (int32_t b = 0; b < a->batches; b++) {
			const int8_t *in_b = a->in + (int64_t)b * a->in_h * a->in_w * c_n;
			for (int32_t oy0 = 0; oy0 < a->out_h; oy0 += ob) {
				const int32_t oy1 = oy0 + ob < a->out_h ? oy0 + ob : a->out_h;
				const int32_t rows = (oy1 - 1 - oy0) * a->stride_h + span_h;
				for (int32_t r = 0; r < rows; r++) {
					const int32_t iy = oy0 * a->stride_h - a->pad_h + r;
					int8_t *d = band + r * row_bytes;
					if (iy < 0 || iy >= a->in_h) {
						for (int64_t i = 0; i < row_bytes; i++)
							d[i] = zp;
						continue;
					}
					const int8_t *src = in_b + (int64_t)iy * a->in_w * c_n;
					for (int32_t q = 0; q < pw; q++) {
						const int32_t ix = q - a->pad_w;
						int8_t *dq = d + (int64_t)q * c_n;
						if (ix < 0 || ix >= a->in_w) {
							for (int32_t c = 0; c < c_n; c++)
								dq[c] = zp;
							continue;
						}
						const int8_t *sq = src + (int64_t)ix * c_n;
						for (int32_t c = 0; c < c_n; c++)
							dq[c] = sq[c];
					}
				}
				for (int64_t i = rows * row_bytes; i < rows * row_bytes + DW_SLACK;
				     i++)
					band[i] = 0;
				for (int32_t oy = oy0; oy < oy1; oy++) {
					const int64_t r0 = (int64_t)(oy - oy0) * a->stride_h;
					for (int32_t t = 0; t < taps; t++) {
						const int32_t fy = t / a->f_w, fx = t % a->f_w;
						xp[t] = band +
							(r0 + (int64_t)fy * a->dil_h) * row_bytes +
							(int64_t)fx * a->dil_w * c_n + c0;
					}
					if (taps & 1)
						xp[taps] = xp[taps - 1]; /* its filter taps are 0 */
					k->dw(xp, tp2, a->stride_w * c_n, fp, fstride,
					      a->filter + c0, a->out_c, taps, a->out_w, &rq,
					      a->out +
						  (((int64_t)b * a->out_h + oy) * a->out_w) * c_n +
						  c0,
					      c_n);
				}
			}
		}
	}
	return 1;
}
#endif

void tfl_dwconv_s8(const struct tfl_conv_args *a)
{
#if TFL_HOST_FAST
	if (dw_band(a))
		return;
#endif
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
