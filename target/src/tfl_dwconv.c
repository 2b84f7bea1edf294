/* int8 DEPTHWISE_CONV_2D, portable C, as TFLite's
 * reference_integer_ops::DepthwiseConvPerChannel: output channel
 * ic * depth_mult + m reads input channel ic; filter [1, f_h, f_w, out_c].
 *
 * With depth multiplier 1 and the window inside the image, the channels of
 * a pixel are accumulated together (sum(filter * input) + in_offset *
 * sum(filter), the same integer as the reference form) in blocks of
 * DW_BLOCK, so the inner loop runs along contiguous channels; host builds
 * take whole rows instead (dw_rows). */
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
 * compute a whole output row at a time: for one filter tap, the row's
 * out_w * in_c terms are one contiguous run (the filter tap replicated along
 * the row once per call, the input row widened to int16 with the offset
 * added, padding as 0, and split by column phase for strides > 1), which
 * compilers vectorize where a run of in_c channels is too short. The terms
 * and their integer sum are the reference's. */
#if TFL_HOST_FAST
#define DW_ROW_SCRATCH 16384  /* int16 elements: 32 KiB of stack */
#define DW_ROW_ACC TFL_RQ_MAX /* outputs per row */
#else
#define DW_ROW_SCRATCH 0
#endif

#if DW_ROW_SCRATCH
/* Input row iy widened into s phases (phase p holds padded columns p, p+s,
 * ...), each input value as input + in_offset and padding as 0. */
static void widen_row(const struct tfl_conv_args *a, const int8_t *row, int32_t pw,
		      int32_t per_phase, int16_t *xr)
{
	const int32_t s = a->stride_w, c_n = a->in_c;
	for (int32_t q = 0; q < pw; q++) {
		const int32_t ix = q - a->pad_w;
		int16_t *d = xr + ((int64_t)(q % s) * per_phase + q / s) * c_n;
		if (ix < 0 || ix >= a->in_w) {
			for (int32_t c = 0; c < c_n; c++)
				d[c] = 0;
			continue;
		}
		const int8_t *x = row + (int64_t)ix * c_n;
		for (int32_t c = 0; c < c_n; c++)
			d[c] = (int16_t)(x[c] + a->in_offset);
	}
}

/* acc[j] += f[j] * x[j] over a row. x is input + in_offset, in [-255, 255],
 * and f in [-128, 127], so the product itself fits int16 (|p| <= 32640).
 * restrict: the three runs never overlap, so no runtime alias check keeps
 * the vector loop from running. Not inlined: inlined, gcc 12 fuses the
 * taps' loops into one it no longer vectorizes (5x slower). */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static void
mac_row(int32_t *restrict acc, const int16_t *restrict f, const int16_t *restrict x, int64_t n)
{
	for (int64_t j = 0; j < n; j++)
		acc[j] += (int16_t)(f[j] * x[j]);
}

/* 0 when the rows do not fit the scratch (the per-pixel path runs). */
static int dw_rows(const struct tfl_conv_args *a)
{
	const int32_t c_n = a->in_c, s = a->stride_w, taps = a->f_h * a->f_w;
	const int64_t run = (int64_t)a->out_w * c_n;
	const int32_t pw = (a->out_w - 1) * s + (a->f_w - 1) * a->dil_w + 1;
	const int32_t per_phase = (pw + s - 1) / s;
	const int64_t need = taps * run + (int64_t)s * per_phase * c_n;
	if (a->depth_mult != 1 || run > DW_ROW_ACC || need > DW_ROW_SCRATCH)
		return 0;
	int16_t scratch[DW_ROW_SCRATCH];
	int32_t acc[DW_ROW_ACC], brep[DW_ROW_ACC];
	struct tfl_rq_scale sc;
	int16_t *frep = scratch, *xr = scratch + taps * run;
	for (int32_t t = 0; t < taps; t++)
		for (int32_t ox = 0; ox < a->out_w; ox++)
			for (int32_t c = 0; c < c_n; c++)
				frep[t * run + (int64_t)ox * c_n + c] =
				    a->filter[(int64_t)t * a->out_c + c];
	/* Bias and requantization scales replicated along the row too. */
	tfl_requant_scales(a->mult, a->shift, c_n, &sc);
	for (int64_t j = 0; j < c_n; j++)
		brep[j] = a->bias[j];
	for (int64_t j = c_n; j < run; j++) {
		brep[j] = brep[j - c_n];
		sc.m2[j] = sc.m2[j - c_n];
		sc.r2[j] = sc.r2[j - c_n];
		sc.lim[j] = sc.lim[j - c_n];
	}
	for (int32_t b = 0; b < a->batches; b++) {
		const int8_t *in_b = a->in + (int64_t)b * a->in_h * a->in_w * c_n;
		for (int32_t oy = 0; oy < a->out_h; oy++) {
			const int32_t iy0 = oy * a->stride_h - a->pad_h;
			for (int64_t j = 0; j < run; j++)
				acc[j] = 0;
			for (int32_t fy = 0; fy < a->f_h; fy++) {
				const int32_t iy = iy0 + a->dil_h * fy;
				if (iy < 0 || iy >= a->in_h)
					continue; /* padding rows add nothing */
				widen_row(a, in_b + (int64_t)iy * a->in_w * c_n, pw, per_phase, xr);
				for (int32_t fx = 0; fx < a->f_w; fx++) {
					const int32_t q0 = fx * a->dil_w;
					const int16_t *xp =
					    xr + ((int64_t)(q0 % s) * per_phase + q0 / s) * c_n;
					const int16_t *fp = frep + (fy * a->f_w + fx) * run;
					mac_row(acc, fp, xp, run);
				}
			}
			int8_t *o = a->out + ((int64_t)b * a->out_h + oy) * run;
			for (int64_t j = 0; j < run; j++)
				acc[j] = (int32_t)((uint32_t)acc[j] + (uint32_t)brep[j]);
			if (tfl_requant_block(acc, &sc, 0, (int32_t)run, a->out_offset, a->act_min,
					      a->act_max, o))
				continue;
			for (int64_t j = 0, ox = 0; ox < a->out_w; ox++)
				for (int32_t c = 0; c < c_n; c++, j++)
					o[j] = requant_nobias(acc[j], a, c);
		}
	}
	return 1;
}
#endif

void tfl_dwconv_s8(const struct tfl_conv_args *a)
{
#if DW_ROW_SCRATCH
	if (dw_rows(a))
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
