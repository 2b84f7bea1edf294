/* The TFLite interpreter's kernel path for AArch64 hosts (a Jetson, a
 * Raspberry Pi, an arm64 server; never the Cortex-M firmware): NEON
 * (Advanced SIMD) versions of struct tfl_kern's inner loops. Advanced SIMD
 * is part of every AArch64 Linux target (the ABI requires it), so the path
 * needs no CPU check: ERGON_TFL_SIMD=neon picks it, auto takes it. It gives
 * the bytes of the portable loops (target/src/tfl_kern.c): the same integer
 * sums (exact, in another order) and the same requantization, written lane
 * by lane with the instructions gemmlowp's NEON path uses:
 *
 *   a = acc << lsh                  SSHL (wrapping, as tfl_mbqm's uint32
 *                                   shift; lsh in [0, 30])
 *   h = (a * mult + 2^30) >> 31     SQRDMULH: (2 a mult + 2^31) >> 32, which
 *                                   saturates only for a = mult = INT32_MIN
 *                                   (mult >= 0 here)
 *   r = RoundingDivideByPOT(h, rsh) SRSHL by -rsh rounds half up; h - 1
 *                                   for h < 0 and rsh > 0 (saturating:
 *                                   INT32_MIN stays, its remainder is 0)
 *                                   makes it half away from zero
 *
 * The packed filters (struct tfl_kern packed_b) are read with LD2, which
 * splits a pair of taps into two vectors of 8 channels, and multiplied by
 * a broadcast input (SMLAL by lane). unit/test_tfl_conv_shapes and
 * test_tfl_paths check the path on an AArch64 build; on this project's
 * x86-64 machines, unit/test_tfl_neon_qemu cross-builds them and runs them
 * under qemu-aarch64. */
#include "../../src/tfl_internal.h"

#if TFL_HOST_FAST && defined(__aarch64__)

#include <arm_neon.h>

static inline int32_t ld32(const void *p)
{
	int32_t v;
	__builtin_memcpy(&v, p, sizeof v);
	return v;
}

/* The requantization of four lanes (per-lane parameters given, rsh
 * negated), + off, clamped to [lo, hi]. */
static inline int32x4_t rq4(int32x4_t acc, int32x4_t mult, int32x4_t lsh, int32x4_t nrsh,
			    int32x4_t off, int32x4_t lo, int32x4_t hi)
{
	const int32x4_t h = vqrdmulhq_s32(vshlq_s32(acc, lsh), mult);
	/* -1 where h < 0 and rsh > 0 (nrsh's sign bit set), else 0. */
	const int32x4_t fix = vshrq_n_s32(vandq_s32(h, nrsh), 31);
	const int32x4_t r = vaddq_s32(vrshlq_s32(vqaddq_s32(h, fix), nrsh), off);
	return vminq_s32(vmaxq_s32(r, lo), hi);
}

static inline int32x4_t rq4_at(int32x4_t acc, const struct tfl_rq *rq, int32_t c)
{
	return rq4(acc, vld1q_s32(rq->mult + c), vld1q_s32(rq->lsh + c),
		   vnegq_s32(vld1q_s32(rq->rsh + c)), vdupq_n_s32(rq->out_offset),
		   vdupq_n_s32(rq->act_min), vdupq_n_s32(rq->act_max));
}

/* Eight requantized channels c .. c + 7 to bytes (values already in the
 * int8 range: the narrowing saturates nothing). */
static inline int8x8_t rq8_pack(int32x4_t a0, int32x4_t a1, const struct tfl_rq *rq, int32_t c)
{
	const int16x8_t w =
	    vcombine_s16(vqmovn_s32(rq4_at(a0, rq, c)), vqmovn_s32(rq4_at(a1, rq, c + 4)));
	return vqmovn_s16(w);
}

/* Store the first n bytes of v (all 8 when n >= 8). */
static inline void store8(int8_t *o, int8x8_t v, int32_t n)
{
	if (n >= 8) {
		vst1_s8(o, v);
		return;
	}
	int8_t tmp[8];
	vst1_s8(tmp, v);
	for (int32_t i = 0; i < n; i++)
		o[i] = tmp[i];
}

/* MR rows of A against NG (1 or 2) groups of 8 channels from c: per pair
 * of taps, LD2 splits the group's 16 int16 into the first and the second
 * tap of 8 channels, and each row's pair of inputs multiplies them by
 * lane. */
static inline __attribute__((always_inline)) void
gemm_neon_tile(const int16_t *a, int32_t lda, int mr, int ng, const int16_t *b, int32_t kp2,
	       const struct tfl_rq *rq, int32_t c, int8_t *out, int32_t ldo)
{
	int32x4_t acc[4][4];
	const int32x4_t i0 = vld1q_s32(rq->init + c), i1 = vld1q_s32(rq->init + c + 4);
	const int32x4_t i2 = ng > 1 ? vld1q_s32(rq->init + c + 8) : i0;
	const int32x4_t i3 = ng > 1 ? vld1q_s32(rq->init + c + 12) : i1;
	for (int r = 0; r < mr; r++) {
		acc[r][0] = i0;
		acc[r][1] = i1;
		acc[r][2] = i2;
		acc[r][3] = i3;
	}
	const int16_t *b1 = b + (int64_t)kp2 * 16;
	for (int32_t p = 0; p < kp2; p++) {
		const int16x8x2_t w0 = vld2q_s16(b + p * 16);
		const int16x8x2_t w1 = ng > 1 ? vld2q_s16(b1 + p * 16) : w0;
		for (int r = 0; r < mr; r++) {
			const int16x4_t x =
			    vreinterpret_s16_s32(vdup_n_s32(ld32(a + (int64_t)r * lda + 2 * p)));
			acc[r][0] = vmlal_lane_s16(acc[r][0], vget_low_s16(w0.val[0]), x, 0);
			acc[r][0] = vmlal_lane_s16(acc[r][0], vget_low_s16(w0.val[1]), x, 1);
			acc[r][1] = vmlal_high_lane_s16(acc[r][1], w0.val[0], x, 0);
			acc[r][1] = vmlal_high_lane_s16(acc[r][1], w0.val[1], x, 1);
			if (ng > 1) {
				acc[r][2] =
				    vmlal_lane_s16(acc[r][2], vget_low_s16(w1.val[0]), x, 0);
				acc[r][2] =
				    vmlal_lane_s16(acc[r][2], vget_low_s16(w1.val[1]), x, 1);
				acc[r][3] = vmlal_high_lane_s16(acc[r][3], w1.val[0], x, 0);
				acc[r][3] = vmlal_high_lane_s16(acc[r][3], w1.val[1], x, 1);
			}
		}
	}
	const int32_t nc = rq->n - c;
	for (int r = 0; r < mr; r++) {
		int8_t *o = out + (int64_t)r * ldo + c;
		store8(o, rq8_pack(acc[r][0], acc[r][1], rq, c), nc);
		if (ng > 1)
			store8(o + 8, rq8_pack(acc[r][2], acc[r][3], rq, c + 8), nc - 8);
	}
}

static void gemm_neon(const int16_t *a, int32_t lda, int32_t rows, const int16_t *b, int32_t taps,
		      const struct tfl_rq *rq, int8_t *out, int32_t ldo)
{
	const int32_t kp2 = (taps + 1) / 2;
	for (int32_t c = 0; c < rq->n; c += 16) {
		const int16_t *bg = b + (int64_t)(c / 8) * kp2 * 16;
		int32_t m = 0;
		if (rq->n - c > 8) {
			for (; m + 4 <= rows; m += 4)
				gemm_neon_tile(a + (int64_t)m * lda, lda, 4, 2, bg, kp2, rq, c,
					       out + (int64_t)m * ldo, ldo);
			for (; m < rows; m++)
				gemm_neon_tile(a + (int64_t)m * lda, lda, 1, 2, bg, kp2, rq, c,
					       out + (int64_t)m * ldo, ldo);
		} else {
			for (; m + 4 <= rows; m += 4)
				gemm_neon_tile(a + (int64_t)m * lda, lda, 4, 1, bg, kp2, rq, c,
					       out + (int64_t)m * ldo, ldo);
			for (; m < rows; m++)
				gemm_neon_tile(a + (int64_t)m * lda, lda, 1, 1, bg, kp2, rq, c,
					       out + (int64_t)m * ldo, ldo);
		}
	}
}

/* A depthwise output row from the packed pairs of taps: per pair, LD2
 * splits 8 channels' filter into the two taps, the two input runs are
 * widened, and SMLAL accumulates both. Channels 8 at a time (the input
 * runs are readable 16 bytes past rq->n rounded up to 8, the filter's
 * fstride is a multiple of 16). */
static void dw_neon(const int8_t *const *x, int32_t tp2, int32_t xstep, const int16_t *f,
		    int32_t fstride, const int8_t *f8, int32_t f8stride, int32_t taps, int32_t ow,
		    const struct tfl_rq *rq, int8_t *out, int32_t ldo)
{
	(void)f8;
	(void)f8stride;
	(void)taps;
	for (int32_t ox = 0; ox < ow; ox++) {
		const int64_t xo = (int64_t)ox * xstep;
		int32_t c = 0;
		for (; c + 8 < rq->n; c += 16) {
			int32x4_t a0 = vld1q_s32(rq->init + c), a1 = vld1q_s32(rq->init + c + 4);
			int32x4_t a2 = vld1q_s32(rq->init + c + 8),
				  a3 = vld1q_s32(rq->init + c + 12);
			for (int32_t p = 0; p < tp2; p++) {
				const int8x16_t v0 = vld1q_s8(x[2 * p] + xo + c);
				const int8x16_t v1 = vld1q_s8(x[2 * p + 1] + xo + c);
				const int16_t *w = f + ((int64_t)p * fstride + c) * 2;
				const int16x8x2_t wl = vld2q_s16(w), wh = vld2q_s16(w + 16);
				const int16x8_t x0l = vmovl_s8(vget_low_s8(v0)),
						x0h = vmovl_high_s8(v0);
				const int16x8_t x1l = vmovl_s8(vget_low_s8(v1)),
						x1h = vmovl_high_s8(v1);
				a0 = vmlal_s16(a0, vget_low_s16(x0l), vget_low_s16(wl.val[0]));
				a0 = vmlal_s16(a0, vget_low_s16(x1l), vget_low_s16(wl.val[1]));
				a1 = vmlal_high_s16(a1, x0l, wl.val[0]);
				a1 = vmlal_high_s16(a1, x1l, wl.val[1]);
				a2 = vmlal_s16(a2, vget_low_s16(x0h), vget_low_s16(wh.val[0]));
				a2 = vmlal_s16(a2, vget_low_s16(x1h), vget_low_s16(wh.val[1]));
				a3 = vmlal_high_s16(a3, x0h, wh.val[0]);
				a3 = vmlal_high_s16(a3, x1h, wh.val[1]);
			}
			int8_t *o = out + (int64_t)ox * ldo + c;
			store8(o, rq8_pack(a0, a1, rq, c), rq->n - c);
			store8(o + 8, rq8_pack(a2, a3, rq, c + 8), rq->n - c - 8);
		}
		if (c < rq->n) {
			int32x4_t a0 = vld1q_s32(rq->init + c), a1 = vld1q_s32(rq->init + c + 4);
			for (int32_t p = 0; p < tp2; p++) {
				const int16x8_t x0 = vmovl_s8(vld1_s8(x[2 * p] + xo + c));
				const int16x8_t x1 = vmovl_s8(vld1_s8(x[2 * p + 1] + xo + c));
				const int16x8x2_t w = vld2q_s16(f + ((int64_t)p * fstride + c) * 2);
				a0 = vmlal_s16(a0, vget_low_s16(x0), vget_low_s16(w.val[0]));
				a0 = vmlal_s16(a0, vget_low_s16(x1), vget_low_s16(w.val[1]));
				a1 = vmlal_high_s16(a1, x0, w.val[0]);
				a1 = vmlal_high_s16(a1, x1, w.val[1]);
			}
			store8(out + (int64_t)ox * ldo + c, rq8_pack(a0, a1, rq, c), rq->n - c);
		}
	}
}

/* The dot products of NU (<= 4) rows of int8 weights with x, in lanes
 * 0 .. NU - 1 (0 past them). */
static inline int32x4_t fc_sums_neon(const int16_t *x, const int8_t *w, int32_t accum, int32_t ldw,
				     int nu)
{
	int32x4_t s[4] = {vdupq_n_s32(0), vdupq_n_s32(0), vdupq_n_s32(0), vdupq_n_s32(0)};
	int32_t k = 0;
	for (; k + 8 <= accum; k += 8) {
		const int16x8_t xv = vld1q_s16(x + k);
		for (int j = 0; j < nu; j++) {
			const int16x8_t wv = vmovl_s8(vld1_s8(w + (int64_t)j * ldw + k));
			s[j] = vmlal_s16(s[j], vget_low_s16(xv), vget_low_s16(wv));
			s[j] = vmlal_high_s16(s[j], xv, wv);
		}
	}
	int32_t sum[4] = {0, 0, 0, 0};
	for (int j = 0; j < nu; j++) {
		/* Wrapping like the vector lanes: the exact sum fits an int32. */
		uint32_t t = (uint32_t)vaddvq_s32(s[j]);
		for (int32_t i = k; i < accum; i++)
			t += (uint32_t)(x[i] * w[(int64_t)j * ldw + i]);
		sum[j] = (int32_t)t;
	}
	return vld1q_s32(sum);
}

static void fc_neon(const int16_t *x, const int8_t *w, int32_t accum, int32_t ldw,
		    const struct tfl_rq *rq, int8_t *out)
{
	for (int32_t u = 0; u < rq->n; u += 8) {
		const int32_t left = rq->n - u;
		int32x4_t s0 =
		    fc_sums_neon(x, w + (int64_t)u * ldw, accum, ldw, left >= 4 ? 4 : left);
		int32x4_t s1 = left > 4 ? fc_sums_neon(x, w + (int64_t)(u + 4) * ldw, accum, ldw,
						       left >= 8 ? 4 : left - 4)
					: vdupq_n_s32(0);
		s0 = vaddq_s32(s0, vld1q_s32(rq->init + u));
		s1 = vaddq_s32(s1, vld1q_s32(rq->init + u + 4));
		store8(out + u, rq8_pack(s0, s1, rq, u), left);
	}
}

/* One of ADD's scalar requantizations on four lanes (no offset, no clamp). */
static inline int32x4_t rq4_one(int32x4_t v, const struct tfl_rq1 *q, int32_t off, int32_t lo,
				int32_t hi)
{
	return rq4(v, vdupq_n_s32(q->mult), vdupq_n_s32(q->lsh), vdupq_n_s32(-q->rsh),
		   vdupq_n_s32(off), vdupq_n_s32(lo), vdupq_n_s32(hi));
}

static void add_neon(const int8_t *a, const int8_t *b, int32_t n, const struct tfl_add *p,
		     int8_t *out)
{
	const int32x4_t o1 = vdupq_n_s32(p->off1), o2 = vdupq_n_s32(p->off2);
	const int32x4_t ls = vdupq_n_s32(p->left_shift);
	int32_t k = 0;
	for (; k + 8 <= n; k += 8) {
		const int16x8_t xa = vmovl_s8(vld1_s8(a + k)), xb = vmovl_s8(vld1_s8(b + k));
		int32x4_t r[2];
		for (int h = 0; h < 2; h++) {
			const int32x4_t x1 = h ? vmovl_high_s16(xa) : vmovl_s16(vget_low_s16(xa));
			const int32x4_t x2 = h ? vmovl_high_s16(xb) : vmovl_s16(vget_low_s16(xb));
			const int32x4_t s = vaddq_s32(rq4_one(vshlq_s32(vaddq_s32(x1, o1), ls),
							      &p->in1, 0, INT32_MIN, INT32_MAX),
						      rq4_one(vshlq_s32(vaddq_s32(x2, o2), ls),
							      &p->in2, 0, INT32_MIN, INT32_MAX));
			r[h] = rq4_one(s, &p->out, p->out_offset, p->act_min, p->act_max);
		}
		vst1_s8(out + k, vqmovn_s16(vcombine_s16(vqmovn_s32(r[0]), vqmovn_s32(r[1]))));
	}
	if (k < n)
		tfl_kern_portable.add(a + k, b + k, n - k, p, out + k);
}

const struct tfl_kern tfl_kern_neon = {
    .name = "neon",
    .gemm = gemm_neon,
    .packed_b = 1,
    .dw = dw_neon,
    .fc = fc_neon,
    .add = add_neon,
};

#endif
