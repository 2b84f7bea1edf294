/* ergon kernels run on the host: the oracle on a case worked out by hand,
 * an injected correctness failure reported and never timed, refused shapes
 * lines that do not stop the run, and MVE refused on a target without it. */
#include "engines/kernels/kernels_internal.h"
#include "ergon/kernels_run.h"
#include "test_support.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* fc, accum 2, one unit: (1+1)*3 + (2+1)*4 + bias 5 = 23 (in_offset 1);
 * multiplier 2^30 with shift 1 is x * 0.5 * 2 = x; + out_offset -3 = 20,
 * clamped to [-128, 127]. A second unit with bias -400 gives
 * 6 + 12 - 400 - 3 = -385, clamped to -128. */
static void oracle_fc_by_hand(void **state)
{
	(void)state;
	const int8_t in[2] = {1, 2}, filter[4] = {3, 4, 3, 4};
	const int32_t mult[2] = {1 << 30, 1 << 30}, shift[2] = {1, 1}, bias[2] = {5, -400};
	int8_t out[2] = {0, 0};
	struct tfl_fc_args a = {.in = in,
				.filter = filter,
				.bias = bias,
				.mult = mult,
				.shift = shift,
				.batches = 1,
				.accum = 2,
				.units = 2,
				.in_offset = 1,
				.out_offset = -3,
				.act_min = -128,
				.act_max = 127,
				.per_channel = 1};
	koracle_fc(&a, out);
	assert_int_equal(out[0], 20);
	assert_int_equal(out[1], -128);
}

/* conv 1x1 input 2x2x1, filter 2x2 pad=same stride 1: the output at (0,0)
 * sees all four inputs, (1,1) only its own. in = {1,2,3,4}, filter =
 * {1,1,1,1}, offsets 0, bias 0, identity multiplier: out = {10, 6, 7, 4}. */
static void oracle_conv_by_hand(void **state)
{
	(void)state;
	const int8_t in[4] = {1, 2, 3, 4}, filter[4] = {1, 1, 1, 1};
	const int32_t mult[1] = {1 << 30}, shift[1] = {1}, bias[1] = {0};
	int8_t out[4] = {0};
	struct tfl_conv_args a = {.in = in,
				  .filter = filter,
				  .bias = bias,
				  .mult = mult,
				  .shift = shift,
				  .batches = 1,
				  .in_h = 2,
				  .in_w = 2,
				  .in_c = 1,
				  .out_h = 2,
				  .out_w = 2,
				  .out_c = 1,
				  .f_h = 2,
				  .f_w = 2,
				  .f_c = 1,
				  .stride_h = 1,
				  .stride_w = 1,
				  .dil_h = 1,
				  .dil_w = 1,
				  .pad_h = 0,
				  .pad_w = 0,
				  .act_min = -128,
				  .act_max = 127};
	koracle_conv(&a, out);
	assert_int_equal(out[0], 10);
	assert_int_equal(out[1], 6);
	assert_int_equal(out[2], 7);
	assert_int_equal(out[3], 4);
}

static char *shapes_file(const char *dir, const char *text)
{
	char *p = ts_strf("%s/shapes.txt", dir);
	assert_int_equal(ts_write_file(p, text, strlen(text)), 0);
	return p;
}

static const json_t *impl0(const json_t *art, size_t i)
{
	const json_t *c =
	    json_array_get(json_object_get(json_object_get(art, "kernels"), "cases"), i);
	assert_non_null(c);
	return json_array_get(json_object_get(c, "impls"), 0);
}

static void injected_failure_is_not_timed(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *p = shapes_file(dir, "fc f1 accum=19 units=7\nconv c1 in=5x6x3 out_c=6 filter=3x3 "
				   "pad=same stride=2x2\n");
	struct ergon_kernels_run_options o = {
	    .board = "host", .shapes_path = p, .iterations = 3, .inject_mismatch = 1};
	json_t *art = NULL;
	char *samples = NULL;
	size_t len = 0;
	struct ergon_err err = {0};
	assert_int_equal(ergon_kernels_run(&o, &art, &samples, &len, &err), 0);
	const json_t *f = impl0(art, 0), *c = impl0(art, 1);
	assert_true(json_is_false(json_object_get(f, "correct")));
	assert_true(json_is_false(json_object_get(f, "timed")));
	assert_true(json_is_true(json_object_get(c, "correct")));
	assert_int_equal(json_integer_value(json_object_get(c, "n")), 3);
	const json_t *w = json_array_get(json_object_get(art, "workloads"), 0);
	assert_non_null(json_object_get(w, "first_mismatch"));
	/* samples.csv: header, one fail row for f1, three timed rows for c1. */
	int lines = 0;
	for (size_t i = 0; i < len; i++)
		lines += samples[i] == '\n';
	assert_int_equal(lines, 1 + 1 + 3);
	assert_non_null(strstr(samples, "f1,ref,fail,,\n"));
	json_decref(art);
	free(samples);
	free(p);
	ts_tmpdir_remove(dir);
	free(dir);
}

static void refused_lines_do_not_stop_the_run(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *p = shapes_file(dir, "conv z in=0x4x4 out_c=2 filter=1x1 pad=same\n"
				   "conv r in=4x4x4 out_c=2 filter=1x1 pad=reflect\n"
				   "conv s in=4x4x4 out_c=2 filter=1x1 stride=0x1 pad=same\n"
				   "conv f in=4x4x4 out_c=2 filter=3x3x4 pad=same\n"
				   "dwconv ok in=7x5x3 mult=2 filter=3x3 pad=valid\n");
	struct ergon_kernels_run_options o = {.board = "host", .shapes_path = p, .iterations = 2};
	json_t *art = NULL;
	char *samples = NULL;
	size_t len = 0;
	struct ergon_err err = {0};
	assert_int_equal(ergon_kernels_run(&o, &art, &samples, &len, &err), 0);
	const json_t *ref = json_object_get(art, "refused");
	assert_int_equal(json_array_size(ref), 4);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(ref, 1), "line")), 2);
	assert_non_null(strstr(json_string_value(json_object_get(json_array_get(ref, 1), "why")),
			       "padding 'reflect' is not supported"));
	assert_non_null(strstr(json_string_value(json_object_get(json_array_get(ref, 2), "why")),
			       "stride=0x1: write stride=HxW, each an integer in 1..4096"));
	/* A filter given as HxWxC: the error shows the form filter takes. */
	assert_non_null(strstr(json_string_value(json_object_get(json_array_get(ref, 3), "why")),
			       "filter=3x3x4: write filter=HxW, each an integer in 1..4096"));
	assert_true(json_is_true(json_object_get(impl0(art, 0), "correct")));
	/* The workload record of the dwconv: 7x5 valid 3x3 -> 5x3, 6 channels. */
	const json_t *w = json_array_get(json_object_get(art, "workloads"), 0);
	const json_t *od = json_object_get(json_object_get(w, "output"), "dims");
	assert_int_equal(json_integer_value(json_array_get(od, 1)), 5);
	assert_int_equal(json_integer_value(json_array_get(od, 2)), 3);
	assert_int_equal(json_integer_value(json_array_get(od, 3)), 6);
	assert_int_equal(json_integer_value(json_object_get(w, "macs")), 5 * 3 * 6 * 9);
	json_decref(art);
	free(samples);
	free(p);
	ts_tmpdir_remove(dir);
	free(dir);
}

static void mve_refused_on_host(void **state)
{
	(void)state;
	struct ergon_kernels_run_options o = {
	    .board = "host", .shapes_path = "x", .impls = "ref,mve", .iterations = 1};
	json_t *art = NULL;
	char *samples = NULL;
	size_t len = 0;
	struct ergon_err err = {0};
	assert_int_equal(ergon_kernels_run(&o, &art, &samples, &len, &err), ERGON_EREFUSED);
	assert_non_null(strstr(err.msg, "no Helium (MVE)"));
	assert_null(art);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(oracle_fc_by_hand),
	    cmocka_unit_test(oracle_conv_by_hand),
	    cmocka_unit_test(injected_failure_is_not_timed),
	    cmocka_unit_test(refused_lines_do_not_stop_the_run),
	    cmocka_unit_test(mve_refused_on_host),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
