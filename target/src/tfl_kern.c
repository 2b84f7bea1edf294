/* Host kernel paths of the TFLite interpreter: the requantization blocks
 * (struct tfl_rq), the portable C inner loops (tfl_kern_portable), and the
 * run-time choice among them and the SIMD ones a port adds
 * (port/x86_64/tfl_kern_x86.c, port/aarch64/tfl_kern_neon.c). The packed-filter workspace is in
 * tfl_invoke.c (it calls the kernels' packing). Written so that a compiler vectorizes the
 * portable loops too: int16 pairs of taps, int32 accumulators in blocks
 * of 8 channels, the requantization on each finished block. Nothing here
 * on an M-profile build (the firmware keeps its int8 loops). */
#include "tfl_internal.h"

#include <float.h>

#if TFL_HOST_FAST

static int rq_params(int32_t mult, int32_t shift, int32_t *lsh, int32_t *rsh)
{
	if (mult < 0 || shift < -31 || shift > 30)
		return 0;
	*lsh = shift > 0 ? shift : 0;
	*rsh = shift > 0 ? 0 : -shift;
	return 1;
}

int tfl_rq_fill(struct tfl_rq *rq, const int32_t *bias, const int32_t *fsum, int32_t in_offset,
		const int32_t *mult, const int32_t *shift, int per_channel, int32_t first,
		int32_t n, int32_t out_offset, int32_t act_min, int32_t act_max)
{
	if (n < 0 || n > TFL_RQ_N)
		return 0;
	for (int32_t c = 0; c < n; c++) {
		const int32_t k = per_channel ? first + c : 0;
		int32_t lsh, rsh;
		if (!rq_params(mult[k], shift[k], &lsh, &rsh))
			return 0;
		/* The same int32 as the reference's sum of filter * (input +
		 * in_offset) plus bias: every partial sum stays in range (load
		 * limits a window to 32768 taps). */
		const int32_t off = fsum != NULL ? in_offset * fsum[first + c] : 0;
		rq->init[c] = (int32_t)((uint32_t)bias[first + c] + (uint32_t)off);
		rq->mult[c] = mult[k];
		rq->lsh[c] = lsh;
		rq->rsh[c] = rsh;
		rq->lmul[c] = (int32_t)((uint32_t)1 << lsh);
		rq->rmul[c] = (int32_t)((uint32_t)1 << (31 - rsh));
		rq->mask[c] = (int32_t)(((uint32_t)1 << rsh) - 1u);
		rq->thr[c] = rq->mask[c] >> 1;
		const int64_t m2 = (int64_t)mult[k] * ((int64_t)1 << lsh);
		rq->m2[c] = (double)m2 * 0x1p-31;
		rq->r2[c] = 1.0 / (double)((int64_t)1 << rsh);
		/* Exact integer division: lim * m2 <= 2^52 - 1. */
		const int64_t lim = m2 == 0 ? INT32_MAX : (((int64_t)1 << 52) - 1) / m2;
		rq->lim[c] = lim > INT32_MAX - 1 ? INT32_MAX - 1 : (int32_t)lim;
	}
	for (int32_t c = n; c < ((n + 15) & ~15) && c < TFL_RQ_N; c++) {
		rq->init[c] = rq->mult[c] = rq->lsh[c] = rq->rsh[c] = 0;
		rq->lmul[c] = 1;
		rq->rmul[c] = (int32_t)((uint32_t)1 << 31);
		rq->mask[c] = rq->thr[c] = 0;
		rq->m2[c] = 0.0;
		rq->r2[c] = 1.0;
		rq->lim[c] = 0;
	}
	rq->n = n;
	rq->out_offset = out_offset;
	rq->act_min = act_min;
	rq->act_max = act_max;
	return 1;
}

int tfl_rq1_fill(struct tfl_rq1 *q, int32_t mult, int32_t shift)
{
	int32_t lsh, rsh;
	if (!rq_params(mult, shift, &lsh, &rsh))
		return 0;
	q->mult = mult;
	q->lsh = lsh;
	q->rsh = rsh;
	q->lmul = (int32_t)((uint32_t)1 << lsh);
	q->rmul = (int32_t)((uint32_t)1 << (31 - rsh));
	q->mask = (int32_t)(((uint32_t)1 << rsh) - 1u);
	q->thr = q->mask >> 1;
	return 1;
}

static inline int8_t rq_store(const struct tfl_rq *rq, int32_t c, int32_t acc)
{
	int32_t v = tfl_rq_one(acc, rq->mult[c], rq->lsh[c], rq->rsh[c], rq->mask[c], rq->thr[c]) +
		    rq->out_offset;
	v = v < rq->act_min ? rq->act_min : v;
	v = v > rq->act_max ? rq->act_max : v;
	return (int8_t)v;
}

/* Round-to-nearest of a double below 2^51 in magnitude without a branch
 * or an instruction SSE2 lacks: adding 1.5 * 2^52 leaves no bit below 1,
 * taking it away again is exact. It needs doubles evaluated as doubles
 * (FLT_EVAL_METHOD 0: SSE2, NEON; not x87, where every block takes
 * tfl_rq_one), the default rounding mode and no -ffast-math. */
#define RQ_MAGIC 0x1.8p52
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
#define RQ_DOUBLE_OK 1
#else
#define RQ_DOUBLE_OK 0
#endif

/* acc[k] + rq->init[c0 + k] requantized for k < n (channels c0 + k), in
 * a loop the compiler vectorizes: in double precision, which gives
 * tfl_rq_one's integers whenever |acc * mult * 2^lsh| < 2^52 (rq->lim;
 * every product, sum and power-of-two scaling below is then exact). With
 * ab = acc * mult * 2^lsh / 2^31 (rq->m2 holds mult * 2^lsh * 2^-31), a
 * multiple of 2^-31 below 2^21:
 *   h = floor(ab + 1/2), SaturatingRoundingDoublingHighMul as tfl_rq_one
 *       writes it, is the nearest integer to ab + 2^-32 (which is exact,
 *       and never a tie);
 *   r = RoundingDivideByPOT(h, rsh) is the nearest integer to (h +
 *       copysign(1/4, h)) * 2^-rsh: h * 2^-rsh is a multiple of 2^-rsh, so
 *       the quarter step moves only the ties (exactly .5), away from zero.
 * A block with a value out of that range takes tfl_rq_one. */
static void requant_block(const int32_t *acc, const struct tfl_rq *rq, int32_t c0, int32_t n,
			  int8_t *o)
{
	int32_t v[64];
	int32_t bad = 0;
	for (int32_t k = 0; k < n; k++) {
		v[k] = (int32_t)((uint32_t)acc[k] + (uint32_t)rq->init[c0 + k]);
		bad |= (v[k] > rq->lim[c0 + k]) | (v[k] < -rq->lim[c0 + k]);
	}
	if (bad || !RQ_DOUBLE_OK) {
		for (int32_t k = 0; k < n; k++)
			o[k] = rq_store(rq, c0 + k, v[k]);
		return;
	}
	for (int32_t k = 0; k < n; k++) {
		const double ab = (double)v[k] * rq->m2[c0 + k];
		const double h = (ab + 0x1p-32 + RQ_MAGIC) - RQ_MAGIC;
		const double x = (h + __builtin_copysign(0.25, h)) * rq->r2[c0 + k];
		int32_t r = (int32_t)((x + RQ_MAGIC) - RQ_MAGIC) + rq->out_offset;
		r = r < rq->act_min ? rq->act_min : r;
		r = r > rq->act_max ? rq->act_max : r;
		o[k] = (int8_t)r;
	}
}

static void requant_portable(const int32_t *acc, const struct tfl_rq *rq, int8_t *o)
{
	enum { blk = 64 };
	for (int32_t c0 = 0; c0 < rq->n; c0 += blk)
		requant_block(acc + c0, rq, c0, rq->n - c0 < blk ? rq->n - c0 : blk, o + c0);
}

/* Four rows' dot products with one input run x of n elements (rows nf
 * <= 4, ldf apart): one pass over x for four sums, int16 x int16 -> int32
 * multiply-adds a compiler maps to pmaddwd. For widened filters (CONV_2D:
 * n a multiple of 8) and for int8 weights (FULLY_CONNECTED, sign-extended
 * as they are read). */
#define TFL_DOT4(name, wtype)                                                                   \
	static void name(const int16_t *x, const wtype *f, int32_t n, int32_t ldf, int nf,      \
			 int32_t *acc)                                                          \
	{                                                                                       \
		const wtype *f0 = f, *f1 = f + (nf > 1 ? ldf : 0),                              \
			    *f2 = f + (nf > 2 ? 2 * ldf : 0), *f3 = f + (nf > 3 ? 3 * ldf : 0); \
		int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;                                         \
		for (int32_t i = 0; i < n; i++) {                                               \
			const int32_t v = x[i];                                                 \
			s0 += v * f0[i];                                                        \
			s1 += v * f1[i];                                                        \
			s2 += v * f2[i];                                                        \
			s3 += v * f3[i];                                                        \
		}                                                                               \
		const int32_t s[4] = {s0, s1, s2, s3};                                          \
		for (int j = 0; j < nf; j++)                                                    \
			acc[j] = s[j];                                                          \
	}
TFL_DOT4(dot4_s16, int16_t)
TFL_DOT4(dot4_s8, int8_t)

static void gemm_portable(const int16_t *a, int32_t lda, int32_t rows, const int16_t *b,
			  int32_t taps, const struct tfl_rq *rq, int8_t *out, int32_t ldo)
{
	(void)taps;
	int32_t acc[TFL_RQ_N];
	for (int32_t m = 0; m < rows; m++) {
		const int16_t *am = a + (int64_t)m * lda;
		for (int32_t c = 0; c < rq->n; c += 4)
			dot4_s16(am, b + (int64_t)c * lda, lda, lda, rq->n - c < 4 ? rq->n - c : 4,
				 acc + c);
		requant_portable(acc, rq, out + (int64_t)m * ldo);
	}
}

/* The sums of a block of DW_C channels from c of one output pixel into
 * s[0 .. nc - 1], in int32 lanes that stay in registers across the taps
 * (|x * f| <= 16384: each product is an int16, pmullw). */
#define DW_C 16
static inline __attribute__((always_inline)) void dw_sums(const int8_t *const *x, int64_t xo,
							  const int8_t *f8, int32_t f8stride,
							  int32_t taps, int32_t c, int32_t nc,
							  int32_t *s)
{
	int32_t v[DW_C] = {0};
	for (int32_t t = 0; t < taps; t++) {
		const int8_t *xt = x[t] + xo + c, *ft = f8 + (int64_t)t * f8stride + c;
		for (int32_t j = 0; j < nc; j++)
			v[j] += (int16_t)(xt[j] * ft[j]);
	}
	for (int32_t j = 0; j < nc; j++)
		s[j] = v[j];
}

static void dw_portable(const int8_t *const *x, int32_t tp2, int32_t xstep, const int16_t *f,
			int32_t fstride, const int8_t *f8, int32_t f8stride, int32_t taps,
			int32_t ow, const struct tfl_rq *rq, int8_t *out, int32_t ldo)
{
	(void)tp2;
	(void)f;
	(void)fstride;
	int32_t s[TFL_RQ_N];
	for (int32_t ox = 0; ox < ow; ox++) {
		const int64_t xo = (int64_t)ox * xstep;
		int32_t c = 0;
		/* Whole blocks with a constant width (the compiler keeps the
		 * sums in vector registers), then the rest. */
		for (; c + DW_C <= rq->n; c += DW_C)
			dw_sums(x, xo, f8, f8stride, taps, c, DW_C, s + c);
		if (c < rq->n)
			dw_sums(x, xo, f8, f8stride, taps, c, rq->n - c, s + c);
		requant_portable(s, rq, out + (int64_t)ox * ldo);
	}
}

static void fc_portable(const int16_t *x, const int8_t *w, int32_t accum, int32_t ldw,
			const struct tfl_rq *rq, int8_t *out)
{
	int32_t acc[TFL_RQ_N];
	for (int32_t u = 0; u < rq->n; u += 4)
		dot4_s8(x, w + (int64_t)u * ldw, accum, ldw, rq->n - u < 4 ? rq->n - u : 4,
			acc + u);
	requant_portable(acc, rq, out);
}

static inline int32_t rq1(const struct tfl_rq1 *q, int32_t v)
{
	return tfl_rq_one(v, q->mult, q->lsh, q->rsh, q->mask, q->thr);
}

static void add_portable(const int8_t *a, const int8_t *b, int32_t n, const struct tfl_add *p,
			 int8_t *out)
{
	for (int32_t k = 0; k < n; k++) {
		const int32_t x1 = (int32_t)((uint32_t)(a[k] + p->off1) << p->left_shift);
		const int32_t x2 = (int32_t)((uint32_t)(b[k] + p->off2) << p->left_shift);
		int32_t v = rq1(&p->out, rq1(&p->in1, x1) + rq1(&p->in2, x2)) + p->out_offset;
		v = v < p->act_min ? p->act_min : v;
		v = v > p->act_max ? p->act_max : v;
		out[k] = (int8_t)v;
	}
}

const struct tfl_kern tfl_kern_portable = {
    .name = "portable",
    .gemm = gemm_portable,
    .packed_b = 0,
    .dw = dw_portable,
    .fc = fc_portable,
    .add = add_portable,
};

/* The path for a choice, NULL when the build or the CPU lacks it. */
static const struct tfl_kern *kern_for(int simd)
{
	switch (simd) {
	case ERT_TFL_SIMD_PORTABLE:
		return &tfl_kern_portable;
#if defined(ERT_TFL_SIMD_X86) && ERT_TFL_SIMD_X86
	case ERT_TFL_SIMD_SSE41:
		return tfl_x86_has_sse41() ? &tfl_kern_sse41 : NULL;
	case ERT_TFL_SIMD_AVX2:
		return tfl_x86_has_avx2() ? &tfl_kern_avx2 : NULL;
	case ERT_TFL_SIMD_AUTO:
		return tfl_x86_has_avx2()    ? &tfl_kern_avx2
		       : tfl_x86_has_sse41() ? &tfl_kern_sse41
					     : &tfl_kern_portable;
#elif defined(ERT_TFL_SIMD_AARCH64) && ERT_TFL_SIMD_AARCH64
	/* Advanced SIMD is in every AArch64 Linux target: no CPU check. */
	case ERT_TFL_SIMD_NEON:
	case ERT_TFL_SIMD_AUTO:
		return &tfl_kern_neon;
#else
	case ERT_TFL_SIMD_AUTO:
		return &tfl_kern_portable;
#endif
	default:
		return NULL;
	}
}

const struct tfl_kern *tfl_kern_get(int simd)
{
	const struct tfl_kern *k = kern_for(simd);
	return k != NULL ? k : &tfl_kern_portable;
}

int ert_tfl_simd_set(struct ert_tfl_model *m, enum ert_tfl_simd path)
{
	if (kern_for((int)path) == NULL)
		return ERT_TFL_E_UNSUPPORTED;
	m->simd = (uint8_t)path;
	return ERT_TFL_OK;
}

int ert_tfl_simd_available(enum ert_tfl_simd path)
{
	return kern_for((int)path) != NULL;
}

const char *ert_tfl_simd_name(const struct ert_tfl_model *m)
{
	return tfl_kern_get(m->simd)->name;
}

#else
typedef int tfl_kern_m_profile; /* nothing here for the firmware */
#endif
