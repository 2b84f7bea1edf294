/* CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED and ADD kernels against the
 * textbook reference loops (TFLite's reference_integer_ops::ConvPerChannel,
 * DepthwiseConvPerChannel, FullyConnected and Add, written out below with
 * one bounds check per tap and tfl_mbqm) on several hundred seeded random
 * shapes: strides, dilations, SAME-style padding, grouped filters, depth
 * multipliers 1-3, zero points across the int8 range, per-channel and
 * per-tensor scales, activation clamps and channel counts on either side
 * of the kernels' vector widths (4, 8, 16) and requantization blocks
 * (TFL_RQ_N). Every host kernel path the build and the CPU have (portable,
 * SSE4.1, AVX2, NEON), with filters packed per call and packed once
 * (ert_tfl_pack's layout), must give the reference's bytes. The last test
 * prints a digest of every reference output: unit/test_tfl_neon_qemu.sh
 * runs this file cross-built for AArch64 and compares it with this
 * build's. */
#include "../../target/src/tfl_internal.h"
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXB 24000

static uint32_t rng = 12345u;
static int32_t rnd(int32_t lo, int32_t hi) /* inclusive */
{
	rng = rng * 1103515245u + 12345u;
	return lo + (int32_t)((rng >> 8) % (uint32_t)(hi - lo + 1));
}

#define MAXC 320

struct shape {
	struct tfl_conv_args a;
	int8_t in[MAXB], filter[MAXB], out[MAXB], want[MAXB];
	int32_t bias[MAXC], mult[MAXC], shift[MAXC], fsum[MAXC];
	int16_t packed[MAXB];
};

#if TFL_HOST_FAST
/* The kernel paths this build and CPU run. */
#define MAX_PATHS 4
static int n_paths(const struct tfl_kern *k[MAX_PATHS])
{
	static const enum ert_tfl_simd ids[MAX_PATHS] = {ERT_TFL_SIMD_PORTABLE, ERT_TFL_SIMD_SSE41,
							 ERT_TFL_SIMD_AVX2, ERT_TFL_SIMD_NEON};
	int n = 0;
	for (unsigned i = 0; i < sizeof ids / sizeof ids[0]; i++)
		if (ert_tfl_simd_available(ids[i]))
			k[n++] = tfl_kern_get((int)ids[i]);
	return n;
}
#endif

/* FNV-1a 64 over every reference output, in the order the tests make
 * them (printed by the last test). */
static uint64_t ref_fnv = 0xcbf29ce484222325ull;
static long ref_bytes;
static void ref_digest(const int8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		ref_fnv ^= (uint8_t)p[i];
		ref_fnv *= 0x100000001b3ull;
	}
	ref_bytes += (long)n;
}

static int8_t clamp_requant(int32_t acc, const struct tfl_conv_args *a, int32_t oc)
{
	int64_t v = (int64_t)tfl_mbqm(acc, a->mult[oc], a->shift[oc]) + a->out_offset;
	if (v < a->act_min)
		v = a->act_min;
	if (v > a->act_max)
		v = a->act_max;
	return (int8_t)v;
}

static void reference(struct shape *s, int depthwise)
{
	const struct tfl_conv_args *a = &s->a;
	const int32_t groups = depthwise ? 1 : a->in_c / a->f_c;
	const int32_t per_group = a->out_c / groups;
	for (int32_t b = 0; b < a->batches; b++)
		for (int32_t oy = 0; oy < a->out_h; oy++)
			for (int32_t ox = 0; ox < a->out_w; ox++)
				for (int32_t oc = 0; oc < a->out_c; oc++) {
					int64_t acc = 0;
					for (int32_t fy = 0; fy < a->f_h; fy++)
						for (int32_t fx = 0; fx < a->f_w; fx++) {
							int32_t iy = oy * a->stride_h - a->pad_h +
								     a->dil_h * fy;
							int32_t ix = ox * a->stride_w - a->pad_w +
								     a->dil_w * fx;
							if (iy < 0 || iy >= a->in_h || ix < 0 ||
							    ix >= a->in_w)
								continue;
							const int8_t *px =
							    a->in +
							    (((int64_t)b * a->in_h + iy) * a->in_w +
							     ix) *
								a->in_c;
							if (depthwise) {
								int32_t ic = oc / a->depth_mult;
								int32_t f = a->filter[((int64_t)fy *
											   a->f_w +
										       fx) *
											  a->out_c +
										      oc];
								acc += (int64_t)f *
								       (px[ic] + a->in_offset);
								continue;
							}
							int32_t g = oc / per_group;
							for (int32_t ic = 0; ic < a->f_c; ic++) {
								int32_t f =
								    a->filter[(((int64_t)oc *
										    a->f_h +
										fy) *
										   a->f_w +
									       fx) *
										  a->f_c +
									      ic];
								acc += (int64_t)f *
								       (px[g * a->f_c + ic] +
									a->in_offset);
							}
						}
					acc += a->bias[oc];
					s->want[(((int64_t)b * a->out_h + oy) * a->out_w + ox) *
						    a->out_c +
						oc] = clamp_requant((int32_t)acc, a, oc);
				}
}

static int fill(struct shape *s, int depthwise);

/* A random shape that fits the buffers; returns 0 when it did not fit. */
static int make(struct shape *s, int depthwise)
{
	struct tfl_conv_args *a = &s->a;
	memset(a, 0, sizeof *a);
	a->batches = rnd(1, 2);
	a->in_h = rnd(1, 12);
	a->in_w = rnd(1, 12);
	a->f_h = rnd(1, 5);
	a->f_w = rnd(1, 5);
	a->stride_h = rnd(1, 3);
	a->stride_w = rnd(1, 3);
	a->dil_h = rnd(1, 2);
	a->dil_w = rnd(1, 2);
	const int32_t span_h = (a->f_h - 1) * a->dil_h + 1, span_w = (a->f_w - 1) * a->dil_w + 1;
	if (rnd(0, 1)) { /* SAME-like: padding up to the span */
		a->pad_h = rnd(0, span_h - 1);
		a->pad_w = rnd(0, span_w - 1);
	}
	const int32_t eff_h = a->in_h + 2 * a->pad_h, eff_w = a->in_w + 2 * a->pad_w;
	if (eff_h < span_h || eff_w < span_w)
		return 0;
	a->out_h = (eff_h - span_h) / a->stride_h + 1;
	a->out_w = (eff_w - span_w) / a->stride_w + 1;
	/* Channel counts around the vector blocks (4 and 8) and beyond. */
	static const int32_t chans[] = {1, 2, 3, 4, 5, 7, 8, 9, 12, 16, 17, 24, 33};
	a->in_c = chans[rnd(0, (int32_t)(sizeof chans / sizeof chans[0]) - 1)];
	if (depthwise) {
		a->depth_mult = rnd(1, 3);
		a->out_c = a->in_c * a->depth_mult;
		a->f_c = 1;
	} else {
		int32_t groups = (a->in_c % 2 == 0 && rnd(0, 3) == 0) ? 2 : 1;
		a->f_c = a->in_c / groups;
		a->out_c = groups * rnd(1, 12);
	}
	return fill(s, depthwise);
}

/* Random data, scales and zero points for the shape in s->a; 0 when it
 * does not fit the buffers. */
static int fill(struct shape *s, int depthwise)
{
	struct tfl_conv_args *a = &s->a;
	int64_t n_in = (int64_t)a->batches * a->in_h * a->in_w * a->in_c;
	int64_t n_out = (int64_t)a->batches * a->out_h * a->out_w * a->out_c;
	int64_t n_f = depthwise ? (int64_t)a->f_h * a->f_w * a->out_c
				: (int64_t)a->out_c * a->f_h * a->f_w * a->f_c;
	if (n_in > MAXB || n_out > MAXB || n_f > MAXB || a->out_c > MAXC)
		return 0;
	for (int64_t i = 0; i < n_in; i++)
		s->in[i] = (int8_t)rnd(-128, 127);
	for (int64_t i = 0; i < n_f; i++)
		s->filter[i] = (int8_t)rnd(-127, 127);
	a->in_offset = -rnd(-128, 127);
	a->out_offset = rnd(-128, 127);
	a->act_min = rnd(0, 3) == 0 ? rnd(-128, 0) : -128;
	a->act_max = rnd(0, 3) == 0 ? rnd(a->act_min, 127) : 127;
	const int32_t taps = depthwise ? a->f_h * a->f_w : a->f_h * a->f_w * a->f_c;
	for (int32_t oc = 0; oc < a->out_c; oc++) {
		s->bias[oc] = rnd(-20000, 20000);
		/* Scales as real models have them: about 1e-4 to 0.5. */
		double m = (double)rnd(1, 5000) / 10000.0;
		tfl_quantize_multiplier(m, &s->mult[oc], &s->shift[oc]);
		int32_t sum = 0;
		for (int32_t t = 0; t < taps; t++)
			sum += depthwise ? s->filter[(int64_t)t * a->out_c + oc]
					 : s->filter[(int64_t)oc * taps + t];
		s->fsum[oc] = sum;
	}
	a->in = s->in;
	a->filter = s->filter;
	a->out = s->out;
	a->bias = s->bias;
	a->mult = s->mult;
	a->shift = s->shift;
	a->fsum = s->fsum;
	return 1;
}

static size_t out_bytes(const struct tfl_conv_args *a)
{
	return (size_t)a->batches * (size_t)a->out_h * (size_t)a->out_w * (size_t)a->out_c;
}

/* Run the kernel under test and compare with s->want. */
static void check_one(struct shape *s, int depthwise, const char *what, int done)
{
	memset(s->out, 0x55, sizeof s->out);
	if (depthwise)
		tfl_dwconv_s8(&s->a);
	else
		tfl_conv_s8(&s->a);
	size_t n = out_bytes(&s->a);
	if (memcmp(s->out, s->want, n) != 0) {
		size_t i = 0;
		while (s->out[i] == s->want[i])
			i++;
		fail_msg("shape %d, %s (%s in %dx%dx%d f %dx%d s %d,%d d %d,%d p %d,%d "
			 "out_c %d): byte %zu is %d, the reference gives %d",
			 done, what, depthwise ? "dw" : "conv", s->a.in_h, s->a.in_w, s->a.in_c,
			 s->a.f_h, s->a.f_w, s->a.stride_h, s->a.stride_w, s->a.dil_h, s->a.dil_w,
			 s->a.pad_h, s->a.pad_w, s->a.out_c, i, s->out[i], s->want[i]);
	}
}

/* Every path, filters packed per call and packed once. */
static void check_paths(struct shape *s, int depthwise, int done)
{
#if TFL_HOST_FAST
	const struct tfl_kern *k[MAX_PATHS];
	const int np = n_paths(k);
	const int64_t need =
	    depthwise ? tfl_dwconv_pack(&s->a, 0, s->a.out_c, (s->a.out_c + 15) & ~15, NULL)
		      : tfl_conv_pack(&s->a, 0, s->a.out_c, NULL);
	assert_true(need <= MAXB);
	if (need > 0) {
		if (depthwise)
			tfl_dwconv_pack(&s->a, 0, s->a.out_c, (s->a.out_c + 15) & ~15, s->packed);
		else
			tfl_conv_pack(&s->a, 0, s->a.out_c, s->packed);
	}
	for (int i = 0; i < np; i++) {
		s->a.kern = k[i];
		s->a.packed = NULL;
		check_one(s, depthwise, k[i]->name, done);
		if (need > 0) {
			s->a.packed = s->packed;
			char what[64];
			snprintf(what, sizeof what, "%s, packed once", k[i]->name);
			check_one(s, depthwise, what, done);
		}
	}
	s->a.kern = NULL;
	s->a.packed = NULL;
#endif
	check_one(s, depthwise, "default", done);
}

static void run_shapes(int depthwise)
{
	struct shape *s = calloc(1, sizeof *s);
	assert_non_null(s);
	int done = 0, tries = 0;
	while (done < 300 && tries < 5000) {
		tries++;
		if (!make(s, depthwise))
			continue;
		reference(s, depthwise);
		ref_digest(s->want, out_bytes(&s->a));
		check_paths(s, depthwise, done);
		done++;
	}
	assert_int_equal(done, 300);
	free(s);
}

/* Channel counts past one requantization block (TFL_RQ_N = 256) and deep
 * windows, which random shapes do not reach. */
static void wide_channels(void **state)
{
	(void)state;
	struct shape *s = calloc(1, sizeof *s);
	assert_non_null(s);
	static const struct {
		int dw, in_h, in_w, in_c, f, stride, pad, out_c;
	} cases[] = {
	    {0, 3, 3, 40, 1, 1, 0, 300},  {0, 4, 5, 9, 3, 1, 1, 263},	{0, 2, 3, 300, 1, 1, 0, 40},
	    {1, 4, 4, 270, 3, 1, 1, 270}, {1, 5, 3, 257, 3, 2, 1, 257}, {0, 6, 6, 96, 3, 2, 1, 24},
	};
	for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct tfl_conv_args *a = &s->a;
		memset(a, 0, sizeof *a);
		a->batches = 1;
		a->in_h = cases[i].in_h;
		a->in_w = cases[i].in_w;
		a->in_c = cases[i].in_c;
		a->f_h = a->f_w = cases[i].f;
		a->f_c = cases[i].dw ? 1 : cases[i].in_c;
		a->stride_h = a->stride_w = cases[i].stride;
		a->dil_h = a->dil_w = 1;
		a->pad_h = a->pad_w = cases[i].pad;
		a->out_c = cases[i].out_c;
		a->depth_mult = cases[i].dw ? 1 : 0;
		a->out_h = (a->in_h + 2 * a->pad_h - a->f_h) / a->stride_h + 1;
		a->out_w = (a->in_w + 2 * a->pad_w - a->f_w) / a->stride_w + 1;
		assert_true(fill(s, cases[i].dw));
		reference(s, cases[i].dw);
		ref_digest(s->want, out_bytes(&s->a));
		check_paths(s, cases[i].dw, (int)i);
	}
	free(s);
}

/* The one-expression requantization against TFLite's two-step form on
 * edge values and a million seeded random triples. */
static void mbqm_matches_two_step_form(void **state)
{
	(void)state;
	static const int32_t edge[] = {INT32_MIN, INT32_MIN + 1, -65536,   -3, -2, -1, 0, 1, 2, 3,
				       65535,	  INT32_MAX - 1, INT32_MAX};
	const size_t n_edge = sizeof edge / sizeof edge[0];
	for (int32_t shift = -31; shift <= 30; shift++)
		for (size_t i = 0; i < n_edge; i++)
			for (size_t j = 0; j < n_edge; j++) {
				int32_t x = edge[i], m = edge[j];
				int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
				int32_t want = tfl_rdivpot(
				    tfl_srdhm((int32_t)((uint32_t)x << left), m), right);
				if (tfl_mbqm(x, m, shift) != want)
					fail_msg("mbqm(%d, %d, %d) = %d, two-step form %d", x, m,
						 shift, tfl_mbqm(x, m, shift), want);
			}
	for (int k = 0; k < 1000000; k++) {
		int32_t x = (int32_t)(((uint32_t)rnd(0, 65535) << 16) | (uint32_t)rnd(0, 65535));
		if (k % 2)
			x >>= rnd(0, 24); /* accumulator-sized values too */
		int32_t m =
		    (int32_t)(((uint32_t)rnd(16384, 32767) << 16) | (uint32_t)rnd(0, 65535));
		int32_t shift = rnd(-31, 30);
		int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
		int32_t want = tfl_rdivpot(tfl_srdhm((int32_t)((uint32_t)x << left), m), right);
		if (tfl_mbqm(x, m, shift) != want)
			fail_msg("mbqm(%d, %d, %d) = %d, two-step form %d", x, m, shift,
				 tfl_mbqm(x, m, shift), want);
	}
}

#if TFL_HOST_FAST
/* Random (acc, mult, shift) triples whose result lands near the int8
 * range, so that the rounding shows through the clamp, plus edges: the
 * extreme accumulators, multiplier 0 and 2^30 (exact halves: ties of
 * RoundingDivideByPOT), every shift from -31 to 30. */
static void rq_case(int k, int32_t *acc, int32_t *mult, int32_t *shift)
{
	static const int32_t edge[] = {INT32_MIN, INT32_MIN + 1, -65536,   -3, -2, -1, 0, 1, 2, 3,
				       65535,	  INT32_MAX - 1, INT32_MAX};
	*shift = rnd(-31, 30);
	*mult = k % 17 == 0 ? 0
		: k % 5 == 0
		    ? (int32_t)1 << 30
		    : (int32_t)(((uint32_t)rnd(16384, 32767) << 16) | (uint32_t)rnd(0, 65535));
	if (k % 7 == 0) {
		*acc = edge[rnd(0, (int32_t)(sizeof edge / sizeof edge[0]) - 1)];
		return;
	}
	if (k % 5 == 0 && *shift < 0) {
		/* h = acc / 2 exactly, at an odd multiple of half a step. */
		int64_t v = (int64_t)(2 * rnd(-100, 100) + 1) * ((int64_t)1 << (-*shift - 1));
		*acc = (int32_t)(2 * v > INT32_MAX || 2 * v < INT32_MIN ? v : 2 * v);
		return;
	}
	/* acc * mult * 2^(shift - 31) near a random target. */
	double scale = (double)*mult / 2147483648.0;
	for (int e = 0; e < *shift; e++)
		scale *= 2.0;
	for (int e = 0; e > *shift; e--)
		scale *= 0.5;
	double x = scale > 0 ? (double)rnd(-300, 300) / scale : 0.0;
	x = x > 2e9 ? 2e9 : x < -2e9 ? -2e9 : x;
	*acc = (int32_t)x + rnd(-3, 3);
}

/* Each path's requantization (through a GEMM of zero taps, so the output is
 * the requantized bias) against tfl_mbqm, and tfl_rq_one, the portable
 * form, on a million triples. */
static void requant_paths_match_mbqm(void **state)
{
	(void)state;
	for (int k = 0; k < 1000000; k++) {
		int32_t acc, mult, shift;
		rq_case(k, &acc, &mult, &shift);
		const int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
		const int32_t mask = (int32_t)(((uint32_t)1 << right) - 1u);
		if (tfl_rq_one(acc, mult, left, right, mask, mask >> 1) !=
		    tfl_mbqm(acc, mult, shift))
			fail_msg("tfl_rq_one(%d, %d, %d) = %d, tfl_mbqm %d", acc, mult, shift,
				 tfl_rq_one(acc, mult, left, right, mask, mask >> 1),
				 tfl_mbqm(acc, mult, shift));
	}
	const struct tfl_kern *k[MAX_PATHS];
	const int np = n_paths(k);
	static struct tfl_rq rq;
	static int32_t bias[TFL_RQ_N], mult[TFL_RQ_N], shift[TFL_RQ_N];
	static int16_t a[8], b[TFL_RQ_N * 8];
	int8_t out[TFL_RQ_N], want[TFL_RQ_N];
	long checked = 0;
	for (int round = 0; round < 4000; round++) {
		const int32_t n = rnd(1, TFL_RQ_N);
		for (int32_t c = 0; c < n; c++)
			rq_case(round * TFL_RQ_N + c, &bias[c], &mult[c], &shift[c]);
		const int32_t off = rnd(-128, 127), lo = rnd(-128, -100), hi = rnd(100, 127);
		for (int32_t c = 0; c < n; c++) {
			int64_t v = (int64_t)tfl_mbqm(bias[c], mult[c], shift[c]) + off;
			want[c] = (int8_t)(v < lo ? lo : v > hi ? hi : v);
		}
		ref_digest(want, (size_t)n);
		assert_true(tfl_rq_fill(&rq, bias, NULL, 0, mult, shift, 1, 0, n, off, lo, hi));
		for (int i = 0; i < np; i++) {
			memset(out, 0x5a, sizeof out);
			/* Two taps of zeros: the packed and the row layouts both
			 * read zeros only. */
			k[i]->gemm(a, 8, 1, b, 2, &rq, out, TFL_RQ_N);
			for (int32_t c = 0; c < n; c++)
				if (out[c] != want[c])
					fail_msg("%s: requant(%d, %d, %d) + %d in [%d, %d] = %d, "
						 "tfl_mbqm gives %d",
						 k[i]->name, bias[c], mult[c], shift[c], off, lo,
						 hi, out[c], want[c]);
			for (int32_t c = n; c < TFL_RQ_N; c++)
				assert_int_equal(out[c], 0x5a); /* nothing past n */
			checked += n;
		}
	}
	print_message("requant: %d paths, %ld values\n", np, checked);
}

/* FULLY_CONNECTED: reference_integer_ops::FullyConnected (per tensor, any
 * weight zero point) and its per-channel variant. */
static void fc_random_shapes(void **state)
{
	(void)state;
	struct shape *s = calloc(1, sizeof *s);
	assert_non_null(s);
	const struct tfl_kern *k[MAX_PATHS];
	const int np = n_paths(k);
	for (int t = 0; t < 300; t++) {
		struct tfl_fc_args a = {0};
		a.batches = rnd(1, 3);
		a.accum = t % 10 == 0 ? rnd(200, 700) : rnd(1, 80);
		a.units = t % 7 == 0 ? rnd(250, MAXC) : rnd(1, 40);
		if (a.accum * a.units > MAXB)
			a.accum = MAXB / a.units;
		a.per_channel = rnd(0, 1);
		a.filter_offset = t % 4 == 0 ? -rnd(-127, 127) : 0;
		a.in_offset = -rnd(-128, 127);
		a.out_offset = rnd(-128, 127);
		a.act_min = rnd(0, 3) == 0 ? rnd(-128, 0) : -128;
		a.act_max = rnd(0, 3) == 0 ? rnd(a.act_min, 127) : 127;
		for (int32_t i = 0; i < a.batches * a.accum; i++)
			s->in[i] = (int8_t)rnd(-128, 127);
		for (int32_t i = 0; i < a.accum * a.units; i++)
			s->filter[i] = (int8_t)rnd(-127, 127);
		for (int32_t u = 0; u < a.units; u++) {
			s->bias[u] = rnd(-20000, 20000);
			tfl_quantize_multiplier((double)rnd(1, 5000) / 100000.0, &s->mult[u],
						&s->shift[u]);
			int32_t sum = 0;
			for (int32_t d = 0; d < a.accum; d++)
				sum += s->filter[(int64_t)u * a.accum + d];
			s->fsum[u] = sum;
		}
		a.in = s->in;
		a.filter = s->filter;
		a.bias = s->bias;
		a.mult = s->mult;
		a.shift = s->shift;
		a.fsum = s->fsum;
		a.out = s->out;
		for (int32_t b = 0; b < a.batches; b++)
			for (int32_t u = 0; u < a.units; u++) {
				int64_t acc = 0;
				for (int32_t d = 0; d < a.accum; d++)
					acc += ((int64_t)s->filter[(int64_t)u * a.accum + d] +
						a.filter_offset) *
					       ((int64_t)s->in[b * a.accum + d] + a.in_offset);
				acc += s->bias[u];
				const int32_t q = a.per_channel ? u : 0;
				int64_t v =
				    (int64_t)tfl_mbqm((int32_t)acc, s->mult[q], s->shift[q]) +
				    a.out_offset;
				v = v < a.act_min ? a.act_min : v > a.act_max ? a.act_max : v;
				s->want[b * a.units + u] = (int8_t)v;
			}
		ref_digest(s->want, (size_t)(a.batches * a.units));
		for (int i = 0; i <= np; i++) {
			a.kern = i < np ? k[i] : NULL;
			memset(s->out, 0x55, sizeof s->out);
			tfl_fc_s8(&a);
			if (memcmp(s->out, s->want, (size_t)(a.batches * a.units)) != 0)
				fail_msg("fc %d (%s, accum %d units %d batches %d, filter offset "
					 "%d, per channel %d): output differs from the reference",
					 t, i < np ? k[i]->name : "default", a.accum, a.units,
					 a.batches, a.filter_offset, a.per_channel);
		}
	}
	free(s);
}

/* ADD of two same-shape tensors: reference_integer_ops::Add with the
 * parameters PrepareGeneralSubOp makes (left shift 20, three multipliers
 * from the scales), through every path's add. */
static void add_random(void **state)
{
	(void)state;
	const struct tfl_kern *k[MAX_PATHS];
	const int np = n_paths(k);
	static int8_t x[4096], y[4096], out[4096], want[4096];
	for (int t = 0; t < 400; t++) {
		const int32_t n = t % 9 == 0 ? rnd(1, 15) : rnd(1, 4096);
		const double s1 = (double)rnd(1, 1000) / 1000.0, s2 = (double)rnd(1, 1000) / 1000.0;
		const double so = (double)rnd(1, 2000) / 1000.0;
		const double twice_max = 2.0 * (s1 > s2 ? s1 : s2);
		int32_t m1, sh1, m2, sh2, mo, sho;
		tfl_quantize_multiplier(s1 / twice_max, &m1, &sh1);
		tfl_quantize_multiplier(s2 / twice_max, &m2, &sh2);
		tfl_quantize_multiplier(twice_max / ((double)(1 << 20) * so), &mo, &sho);
		struct tfl_add p = {.off1 = -rnd(-128, 127),
				    .off2 = -rnd(-128, 127),
				    .left_shift = 20,
				    .out_offset = rnd(-128, 127),
				    .act_min = rnd(0, 3) == 0 ? rnd(-128, 0) : -128,
				    .act_max = 127};
		assert_true(tfl_rq1_fill(&p.in1, m1, sh1));
		assert_true(tfl_rq1_fill(&p.in2, m2, sh2));
		assert_true(tfl_rq1_fill(&p.out, mo, sho));
		for (int32_t i = 0; i < n; i++) {
			x[i] = (int8_t)rnd(-128, 127);
			y[i] = (int8_t)rnd(-128, 127);
			const int32_t a1 = (int32_t)((uint32_t)(x[i] + p.off1) << 20);
			const int32_t a2 = (int32_t)((uint32_t)(y[i] + p.off2) << 20);
			int64_t v = (int64_t)tfl_mbqm(tfl_mbqm(a1, m1, sh1) + tfl_mbqm(a2, m2, sh2),
						      mo, sho) +
				    p.out_offset;
			v = v < p.act_min ? p.act_min : v > p.act_max ? p.act_max : v;
			want[i] = (int8_t)v;
		}
		ref_digest(want, (size_t)n);
		for (int i = 0; i < np; i++) {
			memset(out, 0x55, sizeof out);
			k[i]->add(x, y, n, &p, out);
			if (memcmp(out, want, (size_t)n) != 0)
				fail_msg("add %d (%s, %d elements): output differs from the "
					 "reference",
					 t, k[i]->name, n);
			assert_int_equal(out[n < 4096 ? n : 4095], n < 4096 ? 0x55 : want[4095]);
		}
	}
}
#endif

static void conv_random_shapes(void **state)
{
	(void)state;
	run_shapes(0);
}

static void depthwise_random_shapes(void **state)
{
	(void)state;
	run_shapes(1);
}

/* The digest of every reference output above, and the paths that met it:
 * the same shapes and the same bytes on every architecture. */
static void reference_digest(void **state)
{
	(void)state;
	assert_true(ref_bytes > 0);
	int np = 1;
	const char *names = "portable";
#if TFL_HOST_FAST
	const struct tfl_kern *k[MAX_PATHS];
	np = n_paths(k);
	static char buf[64];
	buf[0] = '\0';
	for (int i = 0; i < np; i++) {
		strcat(buf, i ? "," : "");
		strcat(buf, k[i]->name);
	}
	names = buf;
#endif
	print_message("reference outputs: fnv1a64 %016llx over %ld bytes; paths %s\n",
		      (unsigned long long)ref_fnv, ref_bytes, names);
	(void)np;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mbqm_matches_two_step_form),
#if TFL_HOST_FAST
		cmocka_unit_test(requant_paths_match_mbqm),
		cmocka_unit_test(fc_random_shapes),
		cmocka_unit_test(add_random),
#endif
		cmocka_unit_test(conv_random_shapes),
		cmocka_unit_test(depthwise_random_shapes),
		cmocka_unit_test(wide_channels),
		cmocka_unit_test(reference_digest),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
