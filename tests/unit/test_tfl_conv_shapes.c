/* CONV_2D and DEPTHWISE_CONV_2D kernels against the textbook reference
 * loops (TFLite's reference_integer_ops::ConvPerChannel and
 * DepthwiseConvPerChannel, written out below with one bounds check per
 * tap) on several hundred seeded random shapes: strides, dilations,
 * SAME-style padding, grouped filters, depth multipliers 1-3, zero points
 * across the int8 range, activation clamps and channel counts on either
 * side of the kernels' vector block sizes. The fast paths (widened host
 * path, clipped depthwise windows) must give the same bytes. */
#include "../../target/src/tfl_internal.h"
#include "test_support.h"

#include <stdlib.h>
#include <string.h>

#define MAXB 24000

static uint32_t rng = 12345u;
static int32_t rnd(int32_t lo, int32_t hi) /* inclusive */
{
	rng = rng * 1103515245u + 12345u;
	return lo + (int32_t)((rng >> 8) % (uint32_t)(hi - lo + 1));
}

struct shape {
	struct tfl_conv_args a;
	int8_t in[MAXB], filter[MAXB], out[MAXB], want[MAXB];
	int32_t bias[256], mult[256], shift[256], fsum[256];
};

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
	int64_t n_in = (int64_t)a->batches * a->in_h * a->in_w * a->in_c;
	int64_t n_out = (int64_t)a->batches * a->out_h * a->out_w * a->out_c;
	int64_t n_f = depthwise ? (int64_t)a->f_h * a->f_w * a->out_c
				: (int64_t)a->out_c * a->f_h * a->f_w * a->f_c;
	if (n_in > MAXB || n_out > MAXB || n_f > MAXB || a->out_c > 256)
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
	memset(s->out, 0x55, sizeof s->out);
	return 1;
}

static void run_shapes(int depthwise)
{
	struct shape *s = malloc(sizeof *s);
	assert_non_null(s);
	int done = 0, tries = 0;
	while (done < 300 && tries < 5000) {
		tries++;
		if (!make(s, depthwise))
			continue;
		reference(s, depthwise);
		if (depthwise)
			tfl_dwconv_s8(&s->a);
		else
			tfl_conv_s8(&s->a);
		size_t n = (size_t)s->a.batches * (size_t)s->a.out_h * (size_t)s->a.out_w *
			   (size_t)s->a.out_c;
		if (memcmp(s->out, s->want, n) != 0) {
			size_t i = 0;
			while (s->out[i] == s->want[i])
				i++;
			fail_msg("shape %d (%s in %dx%dx%d f %dx%d s %d,%d d %d,%d p %d,%d "
				 "out_c %d): byte %zu is %d, the reference gives %d",
				 done, depthwise ? "dw" : "conv", s->a.in_h, s->a.in_w, s->a.in_c,
				 s->a.f_h, s->a.f_w, s->a.stride_h, s->a.stride_w, s->a.dil_h,
				 s->a.dil_w, s->a.pad_h, s->a.pad_w, s->a.out_c, i, s->out[i],
				 s->want[i]);
		}
		done++;
	}
	assert_int_equal(done, 300);
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
/* The double-precision block requantization against tfl_mbqm: exact where
 * it accepts the block, and refusing (writing nothing) where a product
 * reaches 2^52. */
static void requant_block_matches_mbqm(void **state)
{
	(void)state;
	enum { n = 64 };
	int32_t acc[n], mult[n], shift[n];
	static struct tfl_rq_scale sc;
	int8_t o[n], want[n];
	int accepted = 0, refused = 0;
	for (int round = 0; round < 20000; round++) {
		const int big = round % 10 == 0;
		for (int k = 0; k < n; k++) {
			int32_t x =
			    (int32_t)(((uint32_t)rnd(0, 65535) << 16) | (uint32_t)rnd(0, 65535));
			acc[k] = big ? x : x >> rnd(12, 31);
			mult[k] = (int32_t)(((uint32_t)rnd(16384, 32767) << 16) |
					    (uint32_t)rnd(0, 65535));
			shift[k] = rnd(-31, big ? 30 : 0);
		}
		const int32_t off = rnd(-128, 127), lo = rnd(-128, -100), hi = rnd(100, 127);
		for (int k = 0; k < n; k++) {
			int64_t v = (int64_t)tfl_mbqm(acc[k], mult[k], shift[k]) + off;
			want[k] = (int8_t)(v < lo ? lo : v > hi ? hi : v);
		}
		tfl_requant_scales(mult, shift, n, &sc);
		memset(o, 0x5a, sizeof o);
		if (tfl_requant_block(acc, &sc, 0, n, off, lo, hi, o)) {
			accepted++;
			assert_memory_equal(o, want, n);
		} else {
			refused++;
			for (int k = 0; k < n; k++)
				assert_int_equal(o[k], 0x5a);
		}
	}
	/* Both outcomes happened: the check can fail both ways. */
	print_message("requant blocks: %d accepted, %d refused\n", accepted, refused);
	assert_true(accepted > 10000);
	assert_true(refused > 100);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mbqm_matches_two_step_form),
#if TFL_HOST_FAST
		cmocka_unit_test(requant_block_matches_mbqm),
#endif
		cmocka_unit_test(conv_random_shapes),
		cmocka_unit_test(depthwise_random_shapes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
