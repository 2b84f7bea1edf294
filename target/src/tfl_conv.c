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

/* Host builds (anything but an M-profile core) run the convolution as a
 * GEMM (conv_gemm): the windows of a block of output pixels, sign-extended
 * to int16 with the input zero point in the taps outside the image (its
 * term filter * (zp + in_offset) is 0, as the reference's skipped tap), are
 * the rows of A; the filters of a block of output channels, packed in
 * pairs of taps for groups of 8 channels, are B; each accumulator starts
 * at bias + in_offset * sum(filter), so the sum is the reference's integer
 * (only the order of exact additions changes). The inner loop and the
 * requantization fused into its store are the model's kernel path
 * (struct tfl_kern: portable C or SIMD). M-profile builds keep the int8
 * loops below (a few KiB of stack, and their own vector kernels). */
#if TFL_HOST_FAST
#define GEMM_A 16384 /* int16 elements of windows: 32 KiB of stack */
#define GEMM_B 32768 /* int16 elements of packed filters: 64 KiB */
#define GEMM_ROWS 64 /* output pixels per block of A */

/* Rows of A for the output pixels p0 .. p0 + rows - 1 (b, oy, ox
 * flattened), kp int16 each: the window in filter tap order, then zeros. */
static void build_a(const struct tfl_conv_args *a, int64_t p0, int32_t rows, int32_t taps,
		    int32_t kp, int16_t *A)
{
	const int16_t zp = (int16_t)-a->in_offset;
	const int64_t hw = (int64_t)a->out_h * a->out_w;
	for (int32_t r = 0; r < rows; r++) {
		const int64_t p = p0 + r;
		const int64_t b = p / hw;
		const int32_t oy = (int32_t)(p % hw / a->out_w), ox = (int32_t)(p % hw % a->out_w);
		const int8_t *in_b = a->in + b * a->in_h * a->in_w * a->in_c;
		const int32_t iy0 = oy * a->stride_h - a->pad_h, ix0 = ox * a->stride_w - a->pad_w;
		int16_t *d = A + (int64_t)r * kp;
		for (int32_t fy = 0; fy < a->f_h; fy++) {
			const int32_t iy = iy0 + a->dil_h * fy;
			if (iy < 0 || iy >= a->in_h) {
				for (int32_t i = 0; i < a->f_w * a->f_c; i++)
					*d++ = zp;
				continue;
			}
			for (int32_t fx = 0; fx < a->f_w; fx++) {
				const int32_t ix = ix0 + a->dil_w * fx;
				if (ix < 0 || ix >= a->in_w) {
					for (int32_t i = 0; i < a->f_c; i++)
						*d++ = zp;
					continue;
				}
				const int8_t *ip = in_b + ((int64_t)iy * a->in_w + ix) * a->in_c;
				if (a->dil_w == 1 && ix + (a->f_w - 1 - fx) < a->in_w) {
					/* The rest of this filter row is inside: one run. */
					const int32_t len = (a->f_w - fx) * a->f_c;
					for (int32_t i = 0; i < len; i++)
						d[i] = ip[i];
					d += len;
					break;
				}
				for (int32_t i = 0; i < a->f_c; i++)
					*d++ = ip[i];
			}
		}
		for (int32_t i = taps; i < kp; i++)
			*d++ = 0;
	}
}

/* kp: the taps rounded up to pairs (packed paths) or to 8 (the portable
 * path's widened rows). */
static int gemm_fits(const struct tfl_conv_args *a, int packed, int32_t *kp)
{
	const int32_t taps = a->f_h * a->f_w * a->f_c;
	*kp = packed ? (taps + 1) & ~1 : (taps + 7) & ~7;
	return a->in_c == a->f_c && taps > 0 && *kp <= GEMM_A / 4;
}

int64_t tfl_conv_pack(const struct tfl_conv_args *a, int32_t c0, int32_t n, int16_t *dst)
{
	int32_t kp;
	if (!gemm_fits(a, 1, &kp))
		return 0;
	const int32_t taps = a->f_h * a->f_w * a->f_c, kp2 = kp / 2, groups = (n + 7) / 8;
	if (dst == NULL)
		return (int64_t)groups * kp2 * 16;
	for (int32_t g = 0; g < groups; g++)
		for (int32_t p = 0; p < kp2; p++) {
			int16_t *d = dst + ((int64_t)g * kp2 + p) * 16;
			for (int32_t j = 0; j < 8; j++) {
				const int32_t c = g * 8 + j;
				const int8_t *f = a->filter + (int64_t)(c0 + c) * taps + 2 * p;
				d[2 * j] = (int16_t)(c < n ? f[0] : 0);
				d[2 * j + 1] = (int16_t)(c < n && 2 * p + 1 < taps ? f[1] : 0);
			}
		}
	return (int64_t)groups * kp2 * 16;
}

/* The whole convolution on the GEMM path; 0 when the shape does not fit
 * it (grouped, windows too deep for the scratch, a requantization
 * parameter out of range): the int8 loops below then run. */
static int conv_gemm(const struct tfl_conv_args *a)
{
	const struct tfl_kern *k = a->kern != NULL ? a->kern : tfl_kern_get(ERT_TFL_SIMD_AUTO);
	int32_t kp;
	if (!gemm_fits(a, k->packed_b, &kp))
		return 0;
	const int32_t taps = a->f_h * a->f_w * a->f_c, kp2 = kp / 2;
	const int16_t *packed = k->packed_b ? a->packed : NULL;
	/* Channels per block: all that TFL_RQ_N allows with packed filters,
	 * else what the stack scratch holds. */
	int32_t nb = TFL_RQ_N;
	if (packed == NULL) {
		if (kp > GEMM_B / 8)
			return 0;
		nb = (GEMM_B / kp) & ~15;
		if (nb < 16)
			nb = 8;
		if (nb > TFL_RQ_N)
			nb = TFL_RQ_N;
	}
	int32_t mb = GEMM_A / kp;
	if (mb > GEMM_ROWS)
		mb = GEMM_ROWS;
	int16_t A[GEMM_A], B[GEMM_B]; /* B: unused with packed filters */
	struct tfl_rq rq;
	const int64_t pixels = (int64_t)a->batches * a->out_h * a->out_w;
	/* A 1x1 convolution with stride 1 and no padding reads each pixel's
	 * input as it is: A is the input widened, in blocks of rows. */
	const int plain = a->f_h == 1 && a->f_w == 1 && a->stride_h == 1 && a->stride_w == 1 &&
			  a->pad_h == 0 && a->pad_w == 0 && a->out_h == a->in_h &&
			  a->out_w == a->in_w && kp == taps;
	for (int32_t c0 = 0; c0 < a->out_c; c0 += nb) {
		const int32_t n = a->out_c - c0 < nb ? a->out_c - c0 : nb;
		if (!tfl_rq_fill(&rq, a->bias, a->fsum, a->in_offset, a->mult, a->shift, 1, c0, n,
				 a->out_offset, a->act_min, a->act_max))
			return 0;
		const int16_t *b = packed != NULL ? packed + (int64_t)(c0 / 8) * kp2 * 16 : B;
		if (packed == NULL && k->packed_b) {
			tfl_conv_pack(a, c0, n, B);
		} else if (packed == NULL) {
			/* The portable path's rows: each filter widened once
			 * per call, for every pixel. */
			for (int32_t c = 0; c < n; c++) {
				const int8_t *f = a->filter + (int64_t)(c0 + c) * taps;
				for (int32_t t = 0; t < kp; t++)
					B[(int64_t)c * kp + t] = (int16_t)(t < taps ? f[t] : 0);
			}
		}
		for (int64_t p0 = 0; p0 < pixels; p0 += mb) {
			const int32_t rows = pixels - p0 < mb ? (int32_t)(pixels - p0) : mb;
			if (plain) {
				const int8_t *src = a->in + p0 * taps;
				for (int64_t i = 0; i < (int64_t)rows * taps; i++)
					A[i] = src[i];
			} else {
				build_a(a, p0, rows, taps, kp, A);
			}
			k->gemm(A, kp, rows, b, taps, &rq, a->out + p0 * a->out_c + c0, a->out_c);
		}
	}
	return 1;
}
#endif

void tfl_conv_s8(const struct tfl_conv_args *a)
{
#if TFL_HOST_FAST
	if (conv_gemm(a))
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
