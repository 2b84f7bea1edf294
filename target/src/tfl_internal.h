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

int32_t tfl_srdhm(int32_t a, int32_t b);	      /* SaturatingRoundingDoublingHighMul */
int32_t tfl_rdivpot(int32_t x, int exponent);	      /* RoundingDivideByPOT */
int32_t tfl_mbqm(int32_t x, int32_t mult, int shift); /* MultiplyByQuantizedMultiplier */
/* QuantizeMultiplier: m = q * 2^(shift - 31), q in [2^30, 2^31). m > 0. */
void tfl_quantize_multiplier(double m, int32_t *q, int32_t *shift);
/* std::round (half away from zero) of a finite value, clamped to int32. */
int32_t tfl_round_f(double v);
/* The int8 softmax of TFLite's reference kernel on one row. */
void tfl_softmax_row_s8(const int8_t *in, int8_t *out, int32_t depth, int32_t mult,
			int32_t left_shift, int32_t diff_min);

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
