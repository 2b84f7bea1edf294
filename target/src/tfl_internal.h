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

/* ---- host block requantization (tfl_quant.c) ------------------------ */

/* Host builds (anything but an M-profile core) have stack and a vector
 * unit to spare: the kernels take widened paths there (tfl_conv.c,
 * tfl_dwconv.c) and requantize blocks of outputs in double precision where
 * that is exact. M-profile builds keep the int8 loops and tfl_mbqm. */
#if !defined(__ARM_ARCH_PROFILE) || __ARM_ARCH_PROFILE != 'M'
#define TFL_HOST_FAST 1
#else
#define TFL_HOST_FAST 0
#endif

#if TFL_HOST_FAST
#define TFL_RQ_MAX 1024 /* channels a block requantization handles */
/* Per channel: m2 = mult * 2^left and r2 = 2^-right (both exact), and lim,
 * the largest |acc| whose product with m2 stays below 2^52. */
struct tfl_rq_scale {
	double m2[TFL_RQ_MAX], r2[TFL_RQ_MAX];
	int32_t lim[TFL_RQ_MAX];
};
void tfl_requant_scales(const int32_t *mult, const int32_t *shift, int32_t n,
			struct tfl_rq_scale *sc);
/* o[k] = clamp(tfl_mbqm(acc[k], mult[c], shift[c]) + out_offset) for k < n,
 * c = first + k, with sc made from mult and shift by tfl_requant_scales,
 * computed in double precision, which gives the same integers whenever
 * |acc[k]| <= lim[k], i.e. |acc[k] * m2[k]| < 2^52 (every product, sum, power-of-two scaling and
 * truncation is then exact). Returns 0, writing nothing, when a value is
 * outside that range: the caller then uses tfl_mbqm. */
int tfl_requant_block(const int32_t *acc, const struct tfl_rq_scale *sc, int32_t first, int32_t n,
		      int32_t out_offset, int32_t act_min, int32_t act_max, int8_t *o);
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
