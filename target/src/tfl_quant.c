/* Fixed-point arithmetic as TFLite's reference kernels do it
 * (tensorflow/lite/kernels/internal/common.h and gemmlowp's fixedpoint.h,
 * the non-single-rounding variant): SaturatingRoundingDoublingHighMul,
 * RoundingDivideByPOT and MultiplyByQuantizedMultiplier (inline, in
 * tfl_internal.h), QuantizeMultiplier and the int8 softmax. Written without libm. Wrapping
 * additions go through uint32_t, because gemmlowp relies on two's-complement wrap. */
#include "tfl_internal.h"

void tfl_quantize_multiplier(double m, int32_t *q, int32_t *shift)
{
	if (!(m > 0.0) || m > 1e30) {
		*q = 0;
		*shift = 0;
		return;
	}
	/* frexp without libm: scaling by two is exact in binary floating
	 * point, so m == frac * 2^e exactly with frac in [0.5, 1). */
	int e = 0;
	double frac = m;
	while (frac >= 1.0) {
		frac *= 0.5;
		e++;
	}
	while (frac < 0.5) {
		frac *= 2.0;
		e--;
	}
	/* std::round(frac * 2^31): the product has 22 fractional bits at most,
	 * so adding 0.5 is exact and truncation is floor for positives. */
	int64_t qf = (int64_t)(frac * 2147483648.0 + 0.5);
	if (qf == ((int64_t)1 << 31)) {
		qf /= 2;
		e++;
	}
	if (e < -31) {
		e = 0;
		qf = 0;
	}
	*q = (int32_t)qf;
	*shift = e;
}

int32_t tfl_round_f(double v)
{
	if (!(v == v))
		return 0;
	if (v >= 2147483647.0)
		return INT32_MAX;
	if (v <= -2147483648.0)
		return INT32_MIN;
	int64_t t = (int64_t)v; /* toward zero */
	double frac = v - (double)t;
	if (frac >= 0.5)
		t++;
	else if (frac <= -0.5)
		t--;
	return (int32_t)t;
}

/* ---- gemmlowp fixed point, int32 raw values ------------------------- */

static int32_t wadd(int32_t a, int32_t b)
{
	return (int32_t)((uint32_t)a + (uint32_t)b);
}

static int32_t wsub(int32_t a, int32_t b)
{
	return (int32_t)((uint32_t)a - (uint32_t)b);
}

/* SaturatingRoundingMultiplyByPOT<exponent>. */
static int32_t srmulpot(int32_t x, int exponent)
{
	if (exponent > 0) {
		const int32_t threshold = (int32_t)(((uint32_t)1 << (31 - exponent)) - 1u);
		if (x > threshold)
			return INT32_MAX;
		if (x < -threshold)
			return INT32_MIN;
		return (int32_t)((uint32_t)x << exponent);
	}
	return tfl_rdivpot(x, -exponent);
}

/* exp(a) for a in [-1/4, 0), a with 0 integer bits; result 0 integer bits. */
static int32_t exp_quarter(int32_t a)
{
	const int32_t constant_term = 1895147668; /* exp(-1/8) */
	const int32_t one_third = 715827883;
	int32_t x = wadd(a, 1 << 28); /* a + 1/8 */
	int32_t x2 = tfl_srdhm(x, x);
	int32_t x3 = tfl_srdhm(x2, x);
	int32_t x4 = tfl_srdhm(x2, x2);
	int32_t x4_over_4 = srmulpot(x4, -2);
	int32_t poly = srmulpot(wadd(tfl_srdhm(wadd(x4_over_4, x3), one_third), x2), -1);
	return wadd(constant_term, tfl_srdhm(constant_term, wadd(x, poly)));
}

/* exp_on_negative_values for a FixedPoint<int32, 5> input. */
static int32_t exp_neg_5(int32_t a)
{
	enum { kIntegerBits = 5, kFractionalBits = 31 - kIntegerBits };
	const int32_t one_quarter = 1 << (kFractionalBits - 2);
	const int32_t mask = one_quarter - 1;
	const int32_t a_mod = wsub(a & mask, one_quarter);
	int32_t result = exp_quarter(srmulpot(a_mod, kIntegerBits)); /* Rescale<0> */
	const int32_t remainder = wsub(a_mod, a);
	static const int32_t mults[7] = {1672461947, 1302514674, 790015084, 290630308,
					 39332535,   720401,	 242};
	for (int k = 0; k < 7; k++) {
		int exponent = k - 2;
		if (kIntegerBits > exponent) {
			int shift = kFractionalBits + exponent;
			if ((remainder & (int32_t)((uint32_t)1 << shift)) != 0)
				result = tfl_srdhm(result, mults[k]);
		}
	}
	if (a == 0)
		result = INT32_MAX;
	return result;
}

/* 1 / (1 + x) for x in [0, 1), 0 integer bits in and out. */
static int32_t one_over_one_plus_x(int32_t a)
{
	/* RoundingHalfSum(a, One). */
	int64_t sum = (int64_t)a + INT32_MAX;
	int64_t sign = sum >= 0 ? 1 : -1;
	int32_t half_den = (int32_t)((sum + sign) / 2);
	const int32_t c48_17 = 1515870810;   /* 48/17, 2 integer bits */
	const int32_t cm32_17 = -1010580540; /* -32/17, 2 integer bits */
	int32_t x = wadd(c48_17, tfl_srdhm(half_den, cm32_17));
	const int32_t one_f2 = 1 << 29;
	for (int i = 0; i < 3; i++) {
		int32_t hdx = tfl_srdhm(half_den, x);
		int32_t one_minus = wsub(one_f2, hdx);
		x = wadd(x, srmulpot(tfl_srdhm(x, one_minus), 2)); /* Rescale<2> of F4 */
	}
	/* ExactMulByPot<-1> keeps the raw value (F2 -> F1); Rescale<0>. */
	return srmulpot(x, 1);
}

static int clz32(uint32_t x)
{
	if (x == 0)
		return 32;
	int n = 0;
	while ((x & 0x80000000u) == 0) {
		x <<= 1;
		n++;
	}
	return n;
}

void tfl_softmax_row_s8(const int8_t *in, int8_t *out, int32_t depth, int32_t mult,
			int32_t left_shift, int32_t diff_min)
{
	enum { kAccumulationIntegerBits = 12, kScaledDiffIntegerBits = 5 };
	int8_t max_in = -128;
	for (int32_t c = 0; c < depth; c++)
		if (in[c] > max_in)
			max_in = in[c];
	int32_t sum = 0; /* FixedPoint<int32, 12> */
	for (int32_t c = 0; c < depth; c++) {
		int32_t diff = (int32_t)in[c] - max_in;
		if (diff >= diff_min) {
			/* MultiplyByQuantizedMultiplierGreaterThanOne. */
			int32_t rescaled = tfl_srdhm((int32_t)((uint32_t)diff << left_shift), mult);
			int32_t e = exp_neg_5(rescaled);
			sum = wadd(sum, srmulpot(e, 0 - kAccumulationIntegerBits));
		}
	}
	/* GetReciprocal(sum, 12, &num_bits_over_unit). */
	int headroom_plus_one = clz32((uint32_t)sum);
	int num_bits_over_unit = kAccumulationIntegerBits - headroom_plus_one;
	int32_t shifted_sum_minus_one =
	    (int32_t)(((uint32_t)sum << headroom_plus_one) - ((uint32_t)1 << 31));
	int32_t shifted_scale = one_over_one_plus_x(shifted_sum_minus_one);
	for (int32_t c = 0; c < depth; c++) {
		int32_t diff = (int32_t)in[c] - max_in;
		int32_t v = -128;
		if (diff >= diff_min) {
			int32_t rescaled = tfl_srdhm((int32_t)((uint32_t)diff << left_shift), mult);
			int32_t e = exp_neg_5(rescaled);
			int32_t unsat =
			    tfl_rdivpot(tfl_srdhm(shifted_scale, e), num_bits_over_unit + 31 - 8);
			v = unsat - 128;
			if (v < -128)
				v = -128;
			if (v > 127)
				v = 127;
		}
		out[c] = (int8_t)v;
	}
}
