/* Private to the TFLite interpreter: the bounded flatbuffer reader, the
 * fixed-point helpers and the kernel API (conv/dwconv/fc stay behind it so
 * that optimized variants can replace the portable ones). */
#ifndef ERT_TFL_INTERNAL_H
#define ERT_TFL_INTERNAL_H

#include "ergon/ert_tfl.h"

#include <stdint.h>

/* ---- flatbuffer reader (tfl_fb.c) ---------------------------------- */

struct tfl_fb {
	const uint8_t *p;
	uint32_t len;
	struct ert_tfl_err *err;
};

/* A table: its position and vtable, plus the name used in messages. */
struct tfl_tab {
	uint32_t pos;
	uint32_t vt;
	uint16_t vt_len;
	uint16_t tab_len;
	const char *name;
	int32_t index; /* element index in its vector, -1 for a single table */
};

/* A vector: position of the first element and the element count. */
struct tfl_vec {
	uint32_t pos;
	uint32_t n;
	int present;
};

/* Fill err (first error wins) as "<table>[<index>].<field>: <what> (byte
 * offset N)" and return code. */
int tfl_fail(struct tfl_fb *fb, int code, const struct tfl_tab *t, const char *field,
	     const char *what, uint32_t at);
/* Variant with one number spliced in: "<what><n><tail>". */
int tfl_failn(struct tfl_fb *fb, int code, const struct tfl_tab *t, const char *field,
	      const char *what, int64_t n, const char *tail, uint32_t at);

uint16_t tfl_rd16(const uint8_t *p);
uint32_t tfl_rd32(const uint8_t *p);
uint64_t tfl_rd64(const uint8_t *p);
float tfl_rdf32(const uint8_t *p);

int tfl_root(struct tfl_fb *fb, struct tfl_tab *root);
int tfl_table_at(struct tfl_fb *fb, uint32_t pos, const char *name, int32_t index,
		 struct tfl_tab *t);
/* Scalars: the default when the field is absent. */
int tfl_u8(struct tfl_fb *fb, const struct tfl_tab *t, unsigned slot, const char *field,
	   uint8_t def, uint8_t *out);
int tfl_i32(struct tfl_fb *fb, const struct tfl_tab *t, unsigned slot, const char *field,
	    int32_t def, int32_t *out);
int tfl_u32(struct tfl_fb *fb, const struct tfl_tab *t, unsigned slot, const char *field,
	    uint32_t def, uint32_t *out);
int tfl_u64(struct tfl_fb *fb, const struct tfl_tab *t, unsigned slot, const char *field,
	    uint64_t def, uint64_t *out);
int tfl_f32(struct tfl_fb *fb, const struct tfl_tab *t, unsigned slot, const char *field, float def,
	    float *out);
/* A vector of elem_size-byte elements, at most max_n of them (absent: n=0,
 * present=0). */
int tfl_vector(struct tfl_fb *fb, const struct tfl_tab *t, unsigned slot, const char *field,
	       uint32_t elem_size, uint32_t max_n, struct tfl_vec *v);
/* Element i of a vector of tables. */
int tfl_vec_table(struct tfl_fb *fb, const struct tfl_vec *v, uint32_t i, const char *name,
		  struct tfl_tab *out);
/* A sub-table field; *present = 0 when absent. */
int tfl_subtable(struct tfl_fb *fb, const struct tfl_tab *t, unsigned slot, const char *field,
		 const char *name, struct tfl_tab *out, int *present);

/* ---- fixed point (tfl_quant.c), as TFLite's reference kernels ------- */

/* SaturatingRoundingDoublingHighMul. Inline: the kernels requantize every
 * output element, and a call per element was a quarter of the host time. */
static inline int32_t tfl_srdhm(int32_t a, int32_t b)
{
	if (a == INT32_MIN && b == INT32_MIN)
		return INT32_MAX;
	int64_t ab = (int64_t)a * (int64_t)b;
	int64_t nudge = ab >= 0 ? (1 << 30) : (1 - (1 << 30));
	/* C division truncates toward zero, as in the reference. */
	return (int32_t)((ab + nudge) / ((int64_t)1 << 31));
}

/* RoundingDivideByPOT */
static inline int32_t tfl_rdivpot(int32_t x, int exponent)
{
	if (exponent <= 0)
		return x;
	const int32_t mask = (int32_t)(((uint32_t)1 << exponent) - 1u);
	const int32_t remainder = x & mask;
	const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
	return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

/* MultiplyByQuantizedMultiplier */
/* The same integers as tfl_rdivpot(tfl_srdhm(x << left, mult), right), with
 * both roundings written as 64-bit adds and arithmetic shifts (the kernels
 * call it once per output element): truncation toward zero of t / 2^31 is
 * (t + (t < 0 ? 2^31 - 1 : 0)) >> 31, and RoundingDivideByPOT's
 * half-away-from-zero is (h + 2^(right-1) - (h < 0)) >> right for right > 0;
 * without branches, since mispredicted signs made it 3.6 ns per element.
 * unit/test_tfl_conv_shapes checks it against the two-step form. */
static inline int32_t tfl_mbqm(int32_t x, int32_t mult, int shift)
{
	const int left = shift > 0 ? shift : 0;
	const int right = shift > 0 ? 0 : -shift;
	const int32_t a = (int32_t)((uint32_t)x << left);
	if (a == INT32_MIN && mult == INT32_MIN)
		return tfl_rdivpot(INT32_MAX, right);
	/* Branch-free (the signs are data): neg is all ones for a negative
	 * value; the nudge is 2^30 or 1 - 2^30 = 2^30 - (2^31 - 1). */
	const int64_t ab = (int64_t)a * (int64_t)mult;
	const int64_t t = ab + ((int64_t)1 << 30) - ((ab >> 63) & 0x7fffffff);
	const int64_t h = (t + ((t >> 63) & 0x7fffffff)) >> 31;
	const int64_t half = ((int64_t)1 << right) >> 1;
	const int64_t down = (int64_t)((uint64_t)h >> 63) & (int64_t)(right > 0);
	return (int32_t)((h + half - down) >> right);
}

/* QuantizeMultiplier: m = q * 2^(shift - 31), q in [2^30, 2^31). m > 0. */
void tfl_quantize_multiplier(double m, int32_t *q, int32_t *shift);
/* std::round (half away from zero) of a finite value, clamped to int32. */
int32_t tfl_round_f(double v);
/* The int8 softmax of TFLite's reference kernel on one row. */
void tfl_softmax_row_s8(const int8_t *in, int8_t *out, int32_t depth, int32_t mult,
			int32_t left_shift, int32_t diff_min);

/* ---- host kernel paths (tfl_kern.c, port/x86_64/tfl_kern_x86.c,
 * port/aarch64/tfl_kern_neon.c) -------------------------------------- */

/* Host builds (anything but an M-profile core) have stack and a vector
 * unit to spare: CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED and ADD take
 * blocked paths there whose inner loops (struct tfl_kern) exist in
 * portable C and, where built and supported by the CPU, in SSE4.1, AVX2
 * or NEON variants chosen at run time; every variant gives the same bytes.
 * M-profile builds keep the int8 loops and tfl_mbqm. */
#if !defined(__ARM_ARCH_PROFILE) || __ARM_ARCH_PROFILE != 'M'
#define TFL_HOST_FAST 1
#else
#define TFL_HOST_FAST 0
#endif

#if TFL_HOST_FAST
#define TFL_RQ_N 256 /* channels of one requantization block */

/* tfl_mbqm(acc, mult, shift) + out_offset, clamped, for a block of up to
 * TFL_RQ_N channels, in the forms the kernel paths use: per channel the
 * accumulator's start (bias + in_offset * filter sum), the multiplier, the
 * left and right shifts of tfl_mbqm (lsh = max(shift, 0), rsh =
 * max(-shift, 0)) and what the vector paths derive from them. Entries
 * from n up to the next multiple of 16 are zeros (vector tails read them,
 * their results are never stored). */
struct tfl_rq {
	int32_t init[TFL_RQ_N], mult[TFL_RQ_N], lsh[TFL_RQ_N], rsh[TFL_RQ_N];
	int32_t lmul[TFL_RQ_N]; /* 2^lsh */
	int32_t rmul[TFL_RQ_N]; /* 2^(31 - rsh) */
	int32_t mask[TFL_RQ_N]; /* 2^rsh - 1 */
	int32_t thr[TFL_RQ_N];	/* mask >> 1 */
	/* The portable path's block form in double precision (tfl_kern.c):
	 * m2 = mult * 2^lsh * 2^-31, r2 = 2^-rsh, lim the largest |acc|
	 * whose product with mult * 2^lsh stays below 2^52. */
	double m2[TFL_RQ_N], r2[TFL_RQ_N];
	int32_t lim[TFL_RQ_N];
	int32_t n, out_offset, act_min, act_max;
};

/* Fill rq for channels first .. first + n - 1 (n <= TFL_RQ_N) of a kernel
 * whose per-channel arrays are given (fsum may be NULL: no in_offset
 * term; per_channel 0: mult[0]/shift[0] for all). Returns 0, and the
 * caller must take its tfl_mbqm loops, when a multiplier is negative or a
 * shift is outside [-31, 30] (bind never makes one). */
int tfl_rq_fill(struct tfl_rq *rq, const int32_t *bias, const int32_t *fsum, int32_t in_offset,
		const int32_t *mult, const int32_t *shift, int per_channel, int32_t first,
		int32_t n, int32_t out_offset, int32_t act_min, int32_t act_max);

/* tfl_mbqm(acc, mult, shift) with its rsh/lsh split out, for mult >= 0,
 * lsh in [0, 30], rsh in [0, 31]: the high half of the doubled product,
 * rounded, is floor((a * mult + 2^30) / 2^31) (the same integer as
 * gemmlowp's nudge-and-truncate, and as Arm's VQRDMULH), then
 * RoundingDivideByPOT. unit/test_tfl_conv_shapes checks it against tfl_mbqm. */
static inline int32_t tfl_rq_one(int32_t acc, int32_t mult, int32_t lsh, int32_t rsh, int32_t mask,
				 int32_t thr)
{
	const int32_t a = (int32_t)((uint32_t)acc << lsh);
	const int32_t h = (int32_t)(((int64_t)a * mult + ((int64_t)1 << 30)) >> 31);
	return (h >> rsh) + (int32_t)((h & mask) > thr - (h >> 31));
}

/* One of ADD's three requantizations: a scalar tfl_rq entry. */
struct tfl_rq1 {
	int32_t mult, lsh, rsh, lmul, rmul, mask, thr;
};
/* ADD of two same-shape int8 tensors (reference_integer_ops::Add). */
struct tfl_add {
	int32_t off1, off2, left_shift, out_offset, act_min, act_max;
	struct tfl_rq1 in1, in2, out;
};
/* 0 when a multiplier or shift is out of tfl_rq_one's range. */
int tfl_rq1_fill(struct tfl_rq1 *q, int32_t mult, int32_t shift);

/* The inner loops a host kernel path provides. Each must give exactly
 * the bytes of the portable one (tfl_kern.c), which are the reference's.
 * Channels c of a block run from 0 to rq->n - 1. */
struct tfl_kern {
	const char *name;
	/* GEMM with the requantization fused into the store: for m < rows,
	 * out[m * ldo + c] = requant(rq, c, rq->init[c] + sum over k < taps
	 * of a[m * lda + k] * w(c, k)); a row's entries from taps to lda are
	 * 0. A path with packed_b set takes the weights packed in pairs of
	 * taps for groups of 8 channels: w(c, 2p + t) = b[((c / 8) * kp2 + p)
	 * * 16 + (c % 8) * 2 + t] (zeros past the channels and taps; kp2 =
	 * (taps + 1) / 2); one without, widened rows: w(c, k) = b[c * lda +
	 * k], zeros from taps to lda (a multiple of 8). */
	void (*gemm)(const int16_t *a, int32_t lda, int32_t rows, const int16_t *b, int32_t taps,
		     const struct tfl_rq *rq, int8_t *out, int32_t ldo);
	int packed_b; /* gemm and dw take the packed pairs of taps */
	/* A depthwise output row: for ox < ow, out[ox * ldo + c] =
	 * requant(rq, c, rq->init[c] + sum over t < 2 * tp2 of x[t][ox * xstep
	 * + c] * w(t, c)), with w(2p + t, c) = f[(p * fstride + c) * 2 + t]
	 * (zeros past the taps: their x[t] must still be readable).
	 * fstride is a multiple of 16; x[t] are readable 16 bytes past each
	 * run of rq->n rounded up to 8. A path without packed_b reads the
	 * filter as it is, w(t, c) = f8[t * f8stride + c], t < taps. */
	void (*dw)(const int8_t *const *x, int32_t tp2, int32_t xstep, const int16_t *f,
		   int32_t fstride, const int8_t *f8, int32_t f8stride, int32_t taps, int32_t ow,
		   const struct tfl_rq *rq, int8_t *out, int32_t ldo);
	/* FULLY_CONNECTED rows: out[u] = requant(rq, u, rq->init[u] + sum over
	 * k < accum of x[k] * w[u * ldw + k]) for u < rq->n. */
	void (*fc)(const int16_t *x, const int8_t *w, int32_t accum, int32_t ldw,
		   const struct tfl_rq *rq, int8_t *out);
	/* ADD of n elements. */
	void (*add)(const int8_t *a, const int8_t *b, int32_t n, const struct tfl_add *p,
		    int8_t *out);
};

/* Filters packed for the kernel paths (ert_tfl_pack), for output
 * channels c0 .. c0 + n - 1: int16 elements written to dst (NULL: none,
 * only counted), or 0 when the kernel takes no packed filters for a.
 * CONV_2D: the GEMM's B (struct tfl_kern gemm) for groups of 8 channels
 * from c0 (a multiple of 8); DEPTHWISE_CONV_2D: the pairs of taps of
 * struct tfl_kern dw, fstride channels per pair. */
struct tfl_conv_args;
int64_t tfl_conv_pack(const struct tfl_conv_args *a, int32_t c0, int32_t n, int16_t *dst);
int64_t tfl_dwconv_pack(const struct tfl_conv_args *a, int32_t c0, int32_t n, int32_t fstride,
			int16_t *dst);

/* The path a model runs with (ert_tfl_simd_set): never NULL. */
const struct tfl_kern *tfl_kern_get(int simd);
extern const struct tfl_kern tfl_kern_portable;
#if defined(ERT_TFL_SIMD_X86) && ERT_TFL_SIMD_X86
extern const struct tfl_kern tfl_kern_sse41, tfl_kern_avx2;
/* 1 when the CPU (and the OS, for AVX state) runs the path. */
int tfl_x86_has_sse41(void);
int tfl_x86_has_avx2(void);
#endif
#if defined(ERT_TFL_SIMD_AARCH64) && ERT_TFL_SIMD_AARCH64
extern const struct tfl_kern tfl_kern_neon;
#endif
#endif

/* ---- kernels (tfl_conv.c, tfl_dwconv.c, tfl_fc.c) ------------------- */

struct tfl_conv_args {
	const int8_t *in;
	const int8_t *filter;
	const int32_t *bias; /* out_c entries (zeros when the model has none) */
	const int32_t *mult; /* out_c requantization multipliers */
	const int32_t *shift;
	const int32_t *fsum; /* out_c sums of each channel's filter taps */
	int8_t *out;
	int32_t batches, in_h, in_w, in_c;
	int32_t out_h, out_w, out_c;
	int32_t f_h, f_w, f_c; /* filter height, width, input depth */
	int32_t stride_h, stride_w, dil_h, dil_w, pad_h, pad_w;
	int32_t depth_mult; /* depthwise only */
	int32_t in_offset;  /* -input zero point */
	int32_t out_offset; /* output zero point */
	int32_t act_min, act_max;
#if TFL_HOST_FAST
	const struct tfl_kern *kern; /* NULL: the best the CPU runs */
	const int16_t *packed;	     /* filters from ert_tfl_pack, or NULL */
#endif
};

struct tfl_fc_args {
	const int8_t *in;
	const int8_t *filter; /* [units][accum] */
	const int32_t *bias;
	const int32_t *mult;
	const int32_t *shift;
	const int32_t *fsum; /* units sums of each row of weights (or NULL) */
	int8_t *out;
	int32_t batches, accum, units;
	int32_t in_offset, filter_offset, out_offset;
	int32_t act_min, act_max;
	int per_channel; /* mult/shift have units entries, else one */
#if TFL_HOST_FAST
	const struct tfl_kern *kern; /* NULL: the best the CPU runs */
#endif
};

void tfl_conv_s8(const struct tfl_conv_args *a);
void tfl_dwconv_s8(const struct tfl_conv_args *a);
void tfl_fc_s8(const struct tfl_fc_args *a);

/* The Helium (MVE) kernels (tfl_mve_*.c), bit-exact with the three above,
 * on an MVE target only. The interpreter calls TFL_CONV / TFL_DWCONV /
 * TFL_FC: the MVE kernels in a build with -DERT_TFL_MVE=1 for an MVE
 * target, the portable ones otherwise; TFL_KERNELS names the choice. */
#if defined(__ARM_FEATURE_MVE)
void tfl_mve_conv_s8(const struct tfl_conv_args *a);
void tfl_mve_dwconv_s8(const struct tfl_conv_args *a);
void tfl_mve_fc_s8(const struct tfl_fc_args *a);
/* "mve", or "ref (why)" where tfl_mve_dwconv_s8 hands a case to the
 * reference kernel. */
const char *tfl_mve_dwconv_path(const struct tfl_conv_args *a);
#endif
#if defined(ERT_TFL_MVE) && ERT_TFL_MVE && defined(__ARM_FEATURE_MVE)
#define TFL_CONV tfl_mve_conv_s8
#define TFL_DWCONV tfl_mve_dwconv_s8
#define TFL_FC tfl_mve_fc_s8
#define TFL_KERNELS "mve"
#elif defined(ERT_TFL_MVE) && ERT_TFL_MVE
#error "-DERT_TFL_MVE=1 needs an MVE target (-mcpu=cortex-m55)"
#else
#define TFL_CONV tfl_conv_s8
#define TFL_DWCONV tfl_dwconv_s8
#define TFL_FC tfl_fc_s8
#define TFL_KERNELS "ref"
#endif

#endif
