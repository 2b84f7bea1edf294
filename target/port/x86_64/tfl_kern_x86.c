/* The TFLite interpreter's kernel paths for x86-64 (host builds only):
 * SSE4.1 and AVX2 versions of struct tfl_kern's inner loops, each compiled
 * for its instruction set with a target attribute and chosen at run time
 * by tfl_kern_get after a CPUID check, so the library still runs on any
 * x86-64. They give the bytes of the portable loops (target/src/
 * tfl_kern.c): the same integer sums (exact, in another order) and the
 * same requantization, written lane by lane:
 *
 *   a = acc << lsh                  (wrapping, as tfl_mbqm's uint32 shift)
 *   h = (a * mult + 2^30) >> 31     (64-bit products; the low 32 bits of a
 *                                    logical shift are those of the
 *                                    arithmetic one)
 *   r = (h >> rsh) + ((h & mask) > thr + (h < 0))   (RoundingDivideByPOT)
 *
 * SSE4.1 has no per-lane shifts: 2^lsh is a multiplier (pmulld) and h >>
 * rsh is ((h ^ 2^31) * 2^(31 - rsh)) >> 31 (unsigned, 64-bit) - 2^(31 -
 * rsh). unit/test_tfl_conv_shapes and test_tfl_paths check every path. */
#include "../../src/tfl_internal.h"

#if TFL_HOST_FAST && defined(__x86_64__)

#include <immintrin.h>

int tfl_x86_has_sse41(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("sse4.1");
}

int tfl_x86_has_avx2(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2");
}

static inline int32_t ld32(const void *p)
{
	int32_t v;
	__builtin_memcpy(&v, p, sizeof v);
	return v;
}

/* Store the first n (< 16) bytes of v. */
#define TFL_STORE_PART(dst, v, n)                               \
	do {                                                    \
		int8_t tmp_[16];                                \
		_mm_storeu_si128((__m128i *)(void *)tmp_, (v)); \
		for (int32_t i_ = 0; i_ < (n); i_++)            \
			(dst)[i_] = tmp_[i_];                   \
	} while (0)

/* ---- SSE4.1 --------------------------------------------------------- */

#define SSE __attribute__((target("sse4.1")))

/* The requantization of four lanes with the per-lane parameters given. */
SSE static inline __m128i rq4(__m128i acc, __m128i mult, __m128i lmul, __m128i rmul, __m128i mask,
			      __m128i thr, __m128i off, __m128i lo, __m128i hi)
{
	const __m128i r30 = _mm_set1_epi64x((int64_t)1 << 30);
	const __m128i a = _mm_mullo_epi32(acc, lmul);
	__m128i pe = _mm_mul_epi32(a, mult);
	__m128i po = _mm_mul_epi32(_mm_srli_epi64(a, 32), _mm_srli_epi64(mult, 32));
	pe = _mm_srli_epi64(_mm_add_epi64(pe, r30), 31);
	po = _mm_slli_epi64(_mm_add_epi64(po, r30), 1);
	const __m128i h = _mm_blend_epi16(pe, po, 0xcc);
	const __m128i u = _mm_xor_si128(h, _mm_set1_epi32(INT32_MIN));
	__m128i ve = _mm_srli_epi64(_mm_mul_epu32(u, rmul), 31);
	__m128i vo =
	    _mm_slli_epi64(_mm_mul_epu32(_mm_srli_epi64(u, 32), _mm_srli_epi64(rmul, 32)), 1);
	const __m128i sh = _mm_sub_epi32(_mm_blend_epi16(ve, vo, 0xcc), rmul);
	const __m128i t = _mm_sub_epi32(thr, _mm_srai_epi32(h, 31));
	__m128i r = _mm_sub_epi32(sh, _mm_cmpgt_epi32(_mm_and_si128(h, mask), t));
	r = _mm_add_epi32(r, off);
	return _mm_min_epi32(_mm_max_epi32(r, lo), hi);
}

SSE static inline __m128i rq4_at(__m128i acc, const struct tfl_rq *rq, int32_t c)
{
#define L(f) _mm_loadu_si128((const __m128i *)(const void *)(rq->f + c))
	return rq4(acc, L(mult), L(lmul), L(rmul), L(mask), L(thr), _mm_set1_epi32(rq->out_offset),
		   _mm_set1_epi32(rq->act_min), _mm_set1_epi32(rq->act_max));
#undef L
}

/* Eight requantized lanes (two vectors of channels c .. c + 7) to bytes. */
SSE static inline __m128i rq8_pack_sse(__m128i a0, __m128i a1, const struct tfl_rq *rq, int32_t c)
{
	const __m128i r = _mm_packs_epi32(rq4_at(a0, rq, c), rq4_at(a1, rq, c + 4));
	return _mm_packs_epi16(r, r);
}

SSE static inline void store8(int8_t *o, __m128i v, int32_t n)
{
	if (n >= 8)
		_mm_storel_epi64((__m128i *)(void *)o, v);
	else
		TFL_STORE_PART(o, v, n);
}

SSE static inline __m128i bcast_pair(const int16_t *p)
{
	return _mm_set1_epi32(ld32(p));
}

/* Rows of A against a group of 8 channels, MR rows at a time. */
SSE static inline __attribute__((always_inline)) void
gemm_sse_tile(const int16_t *a, int32_t lda, int mr, const int16_t *b, int32_t kp2,
	      const struct tfl_rq *rq, int32_t c, int8_t *out, int32_t ldo)
{
	__m128i acc[4][2];
	const __m128i i0 = _mm_loadu_si128((const __m128i *)(const void *)(rq->init + c));
	const __m128i i1 = _mm_loadu_si128((const __m128i *)(const void *)(rq->init + c + 4));
	for (int r = 0; r < mr; r++) {
		acc[r][0] = i0;
		acc[r][1] = i1;
	}
	for (int32_t p = 0; p < kp2; p++) {
		const __m128i w0 = _mm_loadu_si128((const __m128i *)(const void *)(b + p * 16));
		const __m128i w1 = _mm_loadu_si128((const __m128i *)(const void *)(b + p * 16 + 8));
		for (int r = 0; r < mr; r++) {
			const __m128i x = bcast_pair(a + (int64_t)r * lda + 2 * p);
			acc[r][0] = _mm_add_epi32(acc[r][0], _mm_madd_epi16(x, w0));
			acc[r][1] = _mm_add_epi32(acc[r][1], _mm_madd_epi16(x, w1));
		}
	}
	const int32_t nc = rq->n - c;
	for (int r = 0; r < mr; r++)
		store8(out + (int64_t)r * ldo + c, rq8_pack_sse(acc[r][0], acc[r][1], rq, c), nc);
}

SSE static void gemm_sse41(const int16_t *a, int32_t lda, int32_t rows, const int16_t *b,
			   int32_t taps, const struct tfl_rq *rq, int8_t *out, int32_t ldo)
{
	const int32_t kp2 = (taps + 1) / 2;
	for (int32_t c = 0; c < rq->n; c += 8) {
		const int16_t *bg = b + (int64_t)(c / 8) * kp2 * 16;
		int32_t m = 0;
		for (; m + 4 <= rows; m += 4)
			gemm_sse_tile(a + (int64_t)m * lda, lda, 4, bg, kp2, rq, c,
				      out + (int64_t)m * ldo, ldo);
		for (; m < rows; m++)
			gemm_sse_tile(a + (int64_t)m * lda, lda, 1, bg, kp2, rq, c,
				      out + (int64_t)m * ldo, ldo);
	}
}

/* Pairs of taps of 8 int8 channels, interleaved and widened: the x side
 * of two pmaddwd (channels 0-3 and 4-7). */
SSE static inline void dw_pairs_sse(const int8_t *x0, const int8_t *x1, __m128i *lo, __m128i *hi)
{
	const __m128i v = _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)(const void *)x0),
					    _mm_loadl_epi64((const __m128i *)(const void *)x1));
	*lo = _mm_cvtepi8_epi16(v);
	*hi = _mm_cvtepi8_epi16(_mm_srli_si128(v, 8));
}

SSE static void dw_sse41(const int8_t *const *x, int32_t tp2, int32_t xstep, const int16_t *f,
			 int32_t fstride, const int8_t *f8, int32_t f8stride, int32_t taps,
			 int32_t ow, const struct tfl_rq *rq, int8_t *out, int32_t ldo)
{
	(void)f8;
	(void)f8stride;
	(void)taps;
	for (int32_t ox = 0; ox < ow; ox++) {
		const int64_t xo = (int64_t)ox * xstep;
		for (int32_t c = 0; c < rq->n; c += 8) {
			__m128i a0 = _mm_loadu_si128((const __m128i *)(const void *)(rq->init + c));
			__m128i a1 =
			    _mm_loadu_si128((const __m128i *)(const void *)(rq->init + c + 4));
			for (int32_t p = 0; p < tp2; p++) {
				__m128i lo, hi;
				dw_pairs_sse(x[2 * p] + xo + c, x[2 * p + 1] + xo + c, &lo, &hi);
				const int16_t *w = f + ((int64_t)p * fstride + c) * 2;
				a0 = _mm_add_epi32(
				    a0, _mm_madd_epi16(
					    lo, _mm_loadu_si128((const __m128i *)(const void *)w)));
				a1 = _mm_add_epi32(
				    a1,
				    _mm_madd_epi16(hi, _mm_loadu_si128((
							   const __m128i *)(const void *)(w + 8))));
			}
			store8(out + (int64_t)ox * ldo + c, rq8_pack_sse(a0, a1, rq, c), rq->n - c);
		}
	}
}

/* Horizontal sums of four vectors: lane j of the result is the sum of v[j]. */
SSE static inline __m128i hsum4(__m128i v0, __m128i v1, __m128i v2, __m128i v3)
{
	return _mm_hadd_epi32(_mm_hadd_epi32(v0, v1), _mm_hadd_epi32(v2, v3));
}

SSE static inline __m128i fc_sums_sse(const int16_t *x, const int8_t *w, int32_t accum, int32_t ldw,
				      int nu)
{
	__m128i s[4] = {_mm_setzero_si128(), _mm_setzero_si128(), _mm_setzero_si128(),
			_mm_setzero_si128()};
	int32_t k = 0;
	for (; k + 8 <= accum; k += 8) {
		const __m128i xv = _mm_loadu_si128((const __m128i *)(const void *)(x + k));
		for (int j = 0; j < nu; j++) {
			const __m128i wv = _mm_cvtepi8_epi16(_mm_loadl_epi64(
			    (const __m128i *)(const void *)(w + (int64_t)j * ldw + k)));
			s[j] = _mm_add_epi32(s[j], _mm_madd_epi16(xv, wv));
		}
	}
	int32_t tail[4] = {0, 0, 0, 0};
	for (; k < accum; k++)
		for (int j = 0; j < nu; j++)
			tail[j] += x[k] * w[(int64_t)j * ldw + k];
	return _mm_add_epi32(hsum4(s[0], s[1], s[2], s[3]),
			     _mm_loadu_si128((const __m128i *)(const void *)tail));
}

SSE static void fc_sse41(const int16_t *x, const int8_t *w, int32_t accum, int32_t ldw,
			 const struct tfl_rq *rq, int8_t *out)
{
	for (int32_t u = 0; u < rq->n; u += 8) {
		__m128i s0, s1;
		const int32_t left = rq->n - u;
		s0 = fc_sums_sse(x, w + (int64_t)u * ldw, accum, ldw, left >= 4 ? 4 : left);
		s1 = left > 4 ? fc_sums_sse(x, w + (int64_t)(u + 4) * ldw, accum, ldw,
					    left >= 8 ? 4 : left - 4)
			      : _mm_setzero_si128();
		s0 = _mm_add_epi32(s0,
				   _mm_loadu_si128((const __m128i *)(const void *)(rq->init + u)));
		s1 = _mm_add_epi32(
		    s1, _mm_loadu_si128((const __m128i *)(const void *)(rq->init + u + 4)));
		store8(out + u, rq8_pack_sse(s0, s1, rq, u), left);
	}
}

SSE static inline __m128i rq4_one(__m128i v, const struct tfl_rq1 *q)
{
	const __m128i big = _mm_set1_epi32(INT32_MAX), small = _mm_set1_epi32(INT32_MIN);
	return rq4(v, _mm_set1_epi32(q->mult), _mm_set1_epi32(q->lmul), _mm_set1_epi32(q->rmul),
		   _mm_set1_epi32(q->mask), _mm_set1_epi32(q->thr), _mm_setzero_si128(), small,
		   big);
}

SSE static void add_sse41(const int8_t *a, const int8_t *b, int32_t n, const struct tfl_add *p,
			  int8_t *out)
{
	const __m128i o1 = _mm_set1_epi32(p->off1), o2 = _mm_set1_epi32(p->off2);
	const __m128i ls = _mm_cvtsi32_si128(p->left_shift);
	int32_t k = 0;
	for (; k + 4 <= n; k += 4) {
		__m128i x1 = _mm_cvtepi8_epi32(_mm_cvtsi32_si128(ld32(a + k)));
		__m128i x2 = _mm_cvtepi8_epi32(_mm_cvtsi32_si128(ld32(b + k)));
		x1 = _mm_sll_epi32(_mm_add_epi32(x1, o1), ls);
		x2 = _mm_sll_epi32(_mm_add_epi32(x2, o2), ls);
		const __m128i s = _mm_add_epi32(rq4_one(x1, &p->in1), rq4_one(x2, &p->in2));
		const __m128i r = rq4(s, _mm_set1_epi32(p->out.mult), _mm_set1_epi32(p->out.lmul),
				      _mm_set1_epi32(p->out.rmul), _mm_set1_epi32(p->out.mask),
				      _mm_set1_epi32(p->out.thr), _mm_set1_epi32(p->out_offset),
				      _mm_set1_epi32(p->act_min), _mm_set1_epi32(p->act_max));
		const __m128i v = _mm_packs_epi16(_mm_packs_epi32(r, r), _mm_setzero_si128());
		const int32_t w = _mm_cvtsi128_si32(v);
		__builtin_memcpy(out + k, &w, 4);
	}
	if (k < n)
		tfl_kern_portable.add(a + k, b + k, n - k, p, out + k);
}

const struct tfl_kern tfl_kern_sse41 = {
    .name = "sse4.1",
    .gemm = gemm_sse41,
    .packed_b = 1,
    .dw = dw_sse41,
    .fc = fc_sse41,
    .add = add_sse41,
};

/* ---- AVX2 ----------------------------------------------------------- */

#define AVX2 __attribute__((target("avx2")))

AVX2 static inline __m256i rq8(__m256i acc, __m256i mult, __m256i lsh, __m256i rsh, __m256i mask,
			       __m256i thr, __m256i off, __m256i lo, __m256i hi)
{
	const __m256i r30 = _mm256_set1_epi64x((int64_t)1 << 30);
	const __m256i a = _mm256_sllv_epi32(acc, lsh);
	__m256i pe = _mm256_mul_epi32(a, mult);
	__m256i po = _mm256_mul_epi32(_mm256_srli_epi64(a, 32), _mm256_srli_epi64(mult, 32));
	pe = _mm256_srli_epi64(_mm256_add_epi64(pe, r30), 31);
	po = _mm256_slli_epi64(_mm256_add_epi64(po, r30), 1);
	const __m256i h = _mm256_blend_epi32(pe, po, 0xaa);
	const __m256i t = _mm256_sub_epi32(thr, _mm256_srai_epi32(h, 31));
	__m256i r = _mm256_sub_epi32(_mm256_srav_epi32(h, rsh),
				     _mm256_cmpgt_epi32(_mm256_and_si256(h, mask), t));
	r = _mm256_add_epi32(r, off);
	return _mm256_min_epi32(_mm256_max_epi32(r, lo), hi);
}

AVX2 static inline __m256i rq8_at(__m256i acc, const struct tfl_rq *rq, int32_t c)
{
#define L(f) _mm256_loadu_si256((const __m256i *)(const void *)(rq->f + c))
	return rq8(acc, L(mult), L(lsh), L(rsh), L(mask), L(thr), _mm256_set1_epi32(rq->out_offset),
		   _mm256_set1_epi32(rq->act_min), _mm256_set1_epi32(rq->act_max));
#undef L
}

/* 8 requantized channels to 8 bytes (low half of the result). */
AVX2 static inline __m128i pack8(__m256i r)
{
	const __m128i w =
	    _mm_packs_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
	return _mm_packs_epi16(w, w);
}

/* 16 requantized channels (r0: 0-7, r1: 8-15) to 16 bytes. */
AVX2 static inline __m128i pack16(__m256i r0, __m256i r1)
{
	const __m256i w = _mm256_permute4x64_epi64(_mm256_packs_epi32(r0, r1), 0xd8);
	return _mm_packs_epi16(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1));
}

AVX2 static inline void store16(int8_t *o, __m128i v, int32_t n)
{
	if (n >= 16)
		_mm_storeu_si128((__m128i *)(void *)o, v);
	else if (n == 8)
		_mm_storel_epi64((__m128i *)(void *)o, v);
	else
		TFL_STORE_PART(o, v, n);
}

/* MR rows of A against NG (1 or 2) groups of 8 channels from c. */
AVX2 static inline __attribute__((always_inline)) void
gemm_avx2_tile(const int16_t *a, int32_t lda, int mr, int ng, const int16_t *b, int32_t kp2,
	       const struct tfl_rq *rq, int32_t c, int8_t *out, int32_t ldo)
{
	__m256i acc[4][2];
	const __m256i i0 = _mm256_loadu_si256((const __m256i *)(const void *)(rq->init + c));
	const __m256i i1 =
	    ng > 1 ? _mm256_loadu_si256((const __m256i *)(const void *)(rq->init + c + 8)) : i0;
	for (int r = 0; r < mr; r++) {
		acc[r][0] = i0;
		acc[r][1] = i1;
	}
	const int16_t *b1 = b + (int64_t)kp2 * 16;
	for (int32_t p = 0; p < kp2; p++) {
		const __m256i w0 = _mm256_loadu_si256((const __m256i *)(const void *)(b + p * 16));
		const __m256i w1 =
		    ng > 1 ? _mm256_loadu_si256((const __m256i *)(const void *)(b1 + p * 16)) : w0;
		for (int r = 0; r < mr; r++) {
			const __m256i x = _mm256_set1_epi32(ld32(a + (int64_t)r * lda + 2 * p));
			acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(x, w0));
			if (ng > 1)
				acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(x, w1));
		}
	}
	const int32_t nc = rq->n - c;
	for (int r = 0; r < mr; r++) {
		int8_t *o = out + (int64_t)r * ldo + c;
		if (ng > 1)
			store16(o, pack16(rq8_at(acc[r][0], rq, c), rq8_at(acc[r][1], rq, c + 8)),
				nc);
		else
			store16(o, pack8(rq8_at(acc[r][0], rq, c)), nc < 8 ? nc : 8);
	}
}

AVX2 static void gemm_avx2(const int16_t *a, int32_t lda, int32_t rows, const int16_t *b,
			   int32_t taps, const struct tfl_rq *rq, int8_t *out, int32_t ldo)
{
	const int32_t kp2 = (taps + 1) / 2;
	for (int32_t c = 0; c < rq->n; c += 16) {
		const int16_t *bg = b + (int64_t)(c / 8) * kp2 * 16;
		int32_t m = 0;
		if (rq->n - c > 8) {
			for (; m + 4 <= rows; m += 4)
				gemm_avx2_tile(a + (int64_t)m * lda, lda, 4, 2, bg, kp2, rq, c,
					       out + (int64_t)m * ldo, ldo);
			for (; m < rows; m++)
				gemm_avx2_tile(a + (int64_t)m * lda, lda, 1, 2, bg, kp2, rq, c,
					       out + (int64_t)m * ldo, ldo);
		} else {
			for (; m + 4 <= rows; m += 4)
				gemm_avx2_tile(a + (int64_t)m * lda, lda, 4, 1, bg, kp2, rq, c,
					       out + (int64_t)m * ldo, ldo);
			for (; m < rows; m++)
				gemm_avx2_tile(a + (int64_t)m * lda, lda, 1, 1, bg, kp2, rq, c,
					       out + (int64_t)m * ldo, ldo);
		}
	}
}

/* Pairs of taps of 8 int8 channels, interleaved and widened to 16 int16:
 * the x side of one pmaddwd over channels 0-7. */
AVX2 static inline __m256i dw_pairs8(const int8_t *x0, const int8_t *x1)
{
	return _mm256_cvtepi8_epi16(
	    _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)(const void *)x0),
			      _mm_loadl_epi64((const __m128i *)(const void *)x1)));
}

AVX2 static void dw_avx2(const int8_t *const *x, int32_t tp2, int32_t xstep, const int16_t *f,
			 int32_t fstride, const int8_t *f8, int32_t f8stride, int32_t taps,
			 int32_t ow, const struct tfl_rq *rq, int8_t *out, int32_t ldo)
{
	(void)f8;
	(void)f8stride;
	(void)taps;
	for (int32_t ox = 0; ox < ow; ox++) {
		const int64_t xo = (int64_t)ox * xstep;
		int32_t c = 0;
		for (; c + 8 < rq->n; c += 16) {
			__m256i a0 =
			    _mm256_loadu_si256((const __m256i *)(const void *)(rq->init + c));
			__m256i a1 =
			    _mm256_loadu_si256((const __m256i *)(const void *)(rq->init + c + 8));
			for (int32_t p = 0; p < tp2; p++) {
				const __m128i v0 = _mm_loadu_si128(
				    (const __m128i *)(const void *)(x[2 * p] + xo + c));
				const __m128i v1 = _mm_loadu_si128(
				    (const __m128i *)(const void *)(x[2 * p + 1] + xo + c));
				const __m256i lo = _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(v0, v1));
				const __m256i hi = _mm256_cvtepi8_epi16(_mm_unpackhi_epi8(v0, v1));
				const int16_t *w = f + ((int64_t)p * fstride + c) * 2;
				a0 = _mm256_add_epi32(
				    a0,
				    _mm256_madd_epi16(
					lo, _mm256_loadu_si256((const __m256i *)(const void *)w)));
				a1 = _mm256_add_epi32(
				    a1, _mm256_madd_epi16(
					    hi, _mm256_loadu_si256(
						    (const __m256i *)(const void *)(w + 16))));
			}
			store16(out + (int64_t)ox * ldo + c,
				pack16(rq8_at(a0, rq, c), rq8_at(a1, rq, c + 8)), rq->n - c);
		}
		if (c < rq->n) {
			__m256i a0 =
			    _mm256_loadu_si256((const __m256i *)(const void *)(rq->init + c));
			for (int32_t p = 0; p < tp2; p++) {
				const __m256i xv =
				    dw_pairs8(x[2 * p] + xo + c, x[2 * p + 1] + xo + c);
				const int16_t *w = f + ((int64_t)p * fstride + c) * 2;
				a0 = _mm256_add_epi32(
				    a0,
				    _mm256_madd_epi16(
					xv, _mm256_loadu_si256((const __m256i *)(const void *)w)));
			}
			const int32_t nc = rq->n - c;
			store16(out + (int64_t)ox * ldo + c, pack8(rq8_at(a0, rq, c)), nc);
		}
	}
}

/* Sum of the 8 lanes of each of four vectors, in lanes 0-3. */
AVX2 static inline __m128i hsum4x8(__m256i v0, __m256i v1, __m256i v2, __m256i v3)
{
	const __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(v0, v1), _mm256_hadd_epi32(v2, v3));
	return _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}

AVX2 static inline __m128i fc_sums_avx2(const int16_t *x, const int8_t *w, int32_t accum,
					int32_t ldw, int nu)
{
	__m256i s[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(),
			_mm256_setzero_si256()};
	int32_t k = 0;
	for (; k + 16 <= accum; k += 16) {
		const __m256i xv = _mm256_loadu_si256((const __m256i *)(const void *)(x + k));
		for (int j = 0; j < nu; j++) {
			const __m256i wv = _mm256_cvtepi8_epi16(_mm_loadu_si128(
			    (const __m128i *)(const void *)(w + (int64_t)j * ldw + k)));
			s[j] = _mm256_add_epi32(s[j], _mm256_madd_epi16(xv, wv));
		}
	}
	int32_t tail[4] = {0, 0, 0, 0};
	for (; k < accum; k++)
		for (int j = 0; j < nu; j++)
			tail[j] += x[k] * w[(int64_t)j * ldw + k];
	return _mm_add_epi32(hsum4x8(s[0], s[1], s[2], s[3]),
			     _mm_loadu_si128((const __m128i *)(const void *)tail));
}

AVX2 static void fc_avx2(const int16_t *x, const int8_t *w, int32_t accum, int32_t ldw,
			 const struct tfl_rq *rq, int8_t *out)
{
	for (int32_t u = 0; u < rq->n; u += 8) {
		const int32_t left = rq->n - u;
		const __m128i s0 =
		    fc_sums_avx2(x, w + (int64_t)u * ldw, accum, ldw, left >= 4 ? 4 : left);
		const __m128i s1 = left > 4 ? fc_sums_avx2(x, w + (int64_t)(u + 4) * ldw, accum,
							   ldw, left >= 8 ? 4 : left - 4)
					    : _mm_setzero_si128();
		const __m256i s = _mm256_add_epi32(
		    _mm256_set_m128i(s1, s0),
		    _mm256_loadu_si256((const __m256i *)(const void *)(rq->init + u)));
		store16(out + u, pack8(rq8_at(s, rq, u)), left < 8 ? left : 8);
	}
}

AVX2 static inline __m256i rq8_one(__m256i v, const struct tfl_rq1 *q, int32_t off, int32_t lo,
				   int32_t hi)
{
	return rq8(v, _mm256_set1_epi32(q->mult), _mm256_set1_epi32(q->lsh),
		   _mm256_set1_epi32(q->rsh), _mm256_set1_epi32(q->mask), _mm256_set1_epi32(q->thr),
		   _mm256_set1_epi32(off), _mm256_set1_epi32(lo), _mm256_set1_epi32(hi));
}

AVX2 static void add_avx2(const int8_t *a, const int8_t *b, int32_t n, const struct tfl_add *p,
			  int8_t *out)
{
	const __m256i o1 = _mm256_set1_epi32(p->off1), o2 = _mm256_set1_epi32(p->off2);
	const __m128i ls = _mm_cvtsi32_si128(p->left_shift);
	int32_t k = 0;
	for (; k + 8 <= n; k += 8) {
		__m256i x1 =
		    _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(a + k)));
		__m256i x2 =
		    _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(b + k)));
		x1 = _mm256_sll_epi32(_mm256_add_epi32(x1, o1), ls);
		x2 = _mm256_sll_epi32(_mm256_add_epi32(x2, o2), ls);
		const __m256i s = _mm256_add_epi32(rq8_one(x1, &p->in1, 0, INT32_MIN, INT32_MAX),
						   rq8_one(x2, &p->in2, 0, INT32_MIN, INT32_MAX));
		const __m256i r = rq8_one(s, &p->out, p->out_offset, p->act_min, p->act_max);
		_mm_storel_epi64((__m128i *)(void *)(out + k), pack8(r));
	}
	if (k < n)
		tfl_kern_portable.add(a + k, b + k, n - k, p, out + k);
}

const struct tfl_kern tfl_kern_avx2 = {
    .name = "avx2",
    .gemm = gemm_avx2,
    .packed_b = 1,
    .dw = dw_avx2,
    .fc = fc_avx2,
    .add = add_avx2,
};

#endif
