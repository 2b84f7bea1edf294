/* The int8 interpreter's arithmetic and kernels on one-operator models whose
 * outputs were worked out by hand (the arithmetic is in each comment), and
 * the fixed-point helpers on values that follow from their definitions in
 * TFLite's common.h. */
#include "../../target/src/tfl_internal.h"
#include "ergon/ert_tfl.h"
#include "test_support.h"
#include "tfl_builder.h"

#include <stdlib.h>
#include <string.h>

static struct ert_tfl_model model;
static _Alignas(16) uint8_t arena[1 << 16];

/* Load, bind, set input(s), invoke; returns the output bytes. */
static const int8_t *run(const struct tb_model *d, const void *in0, size_t n0, const void *in1,
			 size_t n1, uint8_t **keep)
{
	size_t len = 0;
	uint8_t *buf = tb_build(d, &len);
	struct ert_tfl_err err;
	int rc = ert_tfl_load(&model, buf, len, &err);
	if (rc != 0)
		fail_msg("load: %s", err.msg);
	rc = ert_tfl_bind(&model, arena, sizeof arena, &err);
	if (rc != 0)
		fail_msg("bind: %s", err.msg);
	uint32_t b0 = 0, b1 = 0;
	uint8_t *p0 = ert_tfl_input(&model, 0, &b0);
	assert_int_equal(b0, n0);
	memcpy(p0, in0, n0);
	if (in1 != NULL) {
		uint8_t *p1 = ert_tfl_input(&model, 1, &b1);
		assert_int_equal(b1, n1);
		memcpy(p1, in1, n1);
	}
	assert_int_equal(ert_tfl_invoke(&model), 0);
	*keep = buf; /* the model object points into it */
	return (const int8_t *)ert_tfl_output(&model, 0, NULL);
}

static struct tb_tensor i8(int n, const int32_t *dims, float scale, int64_t zp)
{
	struct tb_tensor t;
	memset(&t, 0, sizeof t);
	t.n_dims = n;
	memcpy(t.dims, dims, (size_t)n * sizeof dims[0]);
	t.type = ERT_TFL_INT8;
	t.n_scale = 1;
	t.scale[0] = scale;
	t.zero_point[0] = zp;
	return t;
}

static void fixed_point_helpers(void **state)
{
	(void)state;
	int32_t q, s;
	tfl_quantize_multiplier(0.5, &q, &s); /* 0.5 = 2^30 * 2^(0-31) */
	assert_int_equal(q, 1 << 30);
	assert_int_equal(s, 0);
	tfl_quantize_multiplier(1.0, &q, &s);
	assert_int_equal(q, 1 << 30);
	assert_int_equal(s, 1);
	tfl_quantize_multiplier(0.75, &q, &s); /* 0.75 = 0.75 * 2^0 */
	assert_int_equal(q, 1610612736);       /* 0.75 * 2^31 */
	assert_int_equal(s, 0);
	tfl_quantize_multiplier(0x1p-40, &q, &s); /* shift < -31: zero */
	assert_int_equal(q, 0);
	assert_int_equal(s, 0);
	/* x * 0.25 with round half away from zero. */
	assert_int_equal(tfl_mbqm(3, 1 << 30, -1), 1);	 /* 0.75 */
	assert_int_equal(tfl_mbqm(2, 1 << 30, -1), 1);	 /* 0.5 -> 1 */
	assert_int_equal(tfl_mbqm(-2, 1 << 30, -1), -1); /* -0.5 -> -1 */
	assert_int_equal(tfl_mbqm(-3, 1 << 30, -1), -1); /* -0.75 */
	assert_int_equal(tfl_mbqm(100, 1 << 30, 0), 50);
	assert_int_equal(tfl_srdhm(INT32_MIN, INT32_MIN), INT32_MAX);
	assert_int_equal(tfl_rdivpot(-15, 2), -4); /* -3.75 */
	assert_int_equal(tfl_rdivpot(13, 2), 3);   /* 3.25 */
	assert_int_equal(tfl_round_f(2.5), 3);
	assert_int_equal(tfl_round_f(-2.5), -3);
	assert_int_equal(tfl_round_f(-2.49), -2);
}

static void conv_per_channel_valid(void **state)
{
	(void)state;
	struct tb_model d;
	memset(&d, 0, sizeof d);
	static const int32_t din[] = {1, 3, 3, 1}, df[] = {2, 2, 2, 1}, db[] = {2},
			     dout[] = {1, 2, 2, 2};
	static const int8_t filt[] = {1, 2, 3, 4, -1, 0, 0, 1};
	static const int32_t bias[] = {4, -8};
	d.t[0] = i8(4, din, 0.5f, 1);
	d.t[1] = i8(4, df, 0.25f, 0);
	d.t[1].n_scale = 2;
	d.t[1].scale[1] = 0.5f;
	d.t[1].data = filt;
	d.t[1].data_len = sizeof filt;
	memset(&d.t[2], 0, sizeof d.t[2]);
	d.t[2].n_dims = 1;
	d.t[2].dims[0] = db[0];
	d.t[2].type = ERT_TFL_INT32;
	d.t[2].data = bias;
	d.t[2].data_len = sizeof bias;
	d.t[3] = i8(4, dout, 1.0f, -3);
	d.n_tensors = 4;
	d.op[0] = (struct tb_op){.builtin = ERT_TFL_OP_CONV_2D,
				 .n_in = 3,
				 .in = {0, 1, 2},
				 .out = 3,
				 .options_type = 1,
				 .n_opt = 4,
				 .opt = {{'b', 1, 0}, {'i', 1, 0}, {'i', 1, 0}, {'b', 0, 0}}};
	d.n_ops = 1;
	d.n_inputs = d.n_outputs = 1;
	d.inputs[0] = 0;
	d.outputs[0] = 3;
	/* x - zp = [[2,4,0],[0,-2,6],[8,0,2]]. Channel 0 (scale 0.5*0.25/1 =
	 * 0.125, bias 4): windows give 2, 22, 20, 18; +4 = 6, 26, 24, 22;
	 * *0.125 = 0.75, 3.25, 3, 2.75 -> 1, 3, 3, 3; -3 -> -2, 0, 0, 0.
	 * Channel 1 (0.25, bias -8): -4, 2, 0, 4; -8 = -12, -6, -8, -4;
	 * *0.25 = -3, -1.5, -2, -1 -> -3, -2, -2, -1; -3 -> -6, -5, -5, -4. */
	static const int8_t x[] = {3, 5, 1, 1, -1, 7, 9, 1, 3};
	static const int8_t want[] = {-2, -6, 0, -5, 0, -5, 0, -4};
	uint8_t *buf;
	const int8_t *out = run(&d, x, sizeof x, NULL, 0, &buf);
	assert_memory_equal(out, want, sizeof want);
	assert_int_equal(model.ops[0].macs, 2 * 2 * 2 * 4); /* outputs x taps */
	assert_int_equal(model.ops[0].param_bytes, 8 + 8);
	free(buf);
}

static void depthwise_same_padding(void **state)
{
	(void)state;
	struct tb_model d;
	memset(&d, 0, sizeof d);
	static const int32_t din[] = {1, 2, 2, 1}, df[] = {1, 3, 3, 1};
	static const int8_t ones[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
	d.t[0] = i8(4, din, 1.0f, 0);
	d.t[1] = i8(4, df, 1.0f, 0);
	d.t[1].data = ones;
	d.t[1].data_len = 9;
	d.t[2] = i8(4, din, 1.0f, 0);
	d.n_tensors = 3;
	d.op[0] = (struct tb_op){.builtin = ERT_TFL_OP_DEPTHWISE_CONV_2D,
				 .n_in = 3,
				 .in = {0, 1, -1},
				 .out = 2,
				 .options_type = 2,
				 .n_opt = 4,
				 .opt = {{'b', 0, 0}, {'i', 1, 0}, {'i', 1, 0}, {'i', 1, 0}}};
	d.n_ops = 1;
	d.n_inputs = d.n_outputs = 1;
	d.outputs[0] = 2;
	/* SAME, 3x3 on 2x2: every window covers all four pixels: 2+3+4+5. */
	static const int8_t x[] = {2, 3, 4, 5};
	static const int8_t want[] = {14, 14, 14, 14};
	uint8_t *buf;
	const int8_t *out = run(&d, x, 4, NULL, 0, &buf);
	assert_memory_equal(out, want, 4);
	assert_int_equal(model.ops[0].pad_h, 1);
	free(buf);
}

static void fully_connected(void **state)
{
	(void)state;
	struct tb_model d;
	memset(&d, 0, sizeof d);
	static const int32_t din[] = {1, 3}, df[] = {2, 3}, dout[] = {1, 2};
	static const int8_t w[] = {1, 2, 3, -1, 0, 1};
	static const int32_t bias[] = {100, -50};
	d.t[0] = i8(2, din, 0.5f, 10);
	d.t[1] = i8(2, df, 0.5f, 0);
	d.t[1].data = w;
	d.t[1].data_len = 6;
	d.t[2].n_dims = 1;
	d.t[2].dims[0] = 2;
	d.t[2].type = ERT_TFL_INT32;
	d.t[2].data = bias;
	d.t[2].data_len = sizeof bias;
	d.t[3] = i8(2, dout, 2.0f, 5);
	d.n_tensors = 4;
	d.op[0] = (struct tb_op){.builtin = ERT_TFL_OP_FULLY_CONNECTED,
				 .n_in = 3,
				 .in = {0, 1, 2},
				 .out = 3,
				 .options_type = 8,
				 .n_opt = 1,
				 .opt = {{'b', 0, 0}}};
	d.n_ops = 1;
	d.n_inputs = d.n_outputs = 1;
	d.outputs[0] = 3;
	/* x - 10 = {0, -30, 20}; unit 0: 0 - 60 + 60 + 100 = 100, *0.125 =
	 * 12.5 -> 13, +5 = 18; unit 1: 0 + 0 + 20 - 50 = -30, *0.125 = -3.75
	 * -> -4, +5 = 1. */
	static const int8_t x[] = {10, -20, 30};
	static const int8_t want[] = {18, 1};
	uint8_t *buf;
	const int8_t *out = run(&d, x, 3, NULL, 0, &buf);
	assert_memory_equal(out, want, 2);
	free(buf);
}

static void add_two_scales(void **state)
{
	(void)state;
	struct tb_model d;
	memset(&d, 0, sizeof d);
	static const int32_t dd[] = {1, 2};
	d.t[0] = i8(2, dd, 0.5f, 0);
	d.t[1] = i8(2, dd, 0.25f, 2);
	d.t[2] = i8(2, dd, 1.0f, -1);
	d.n_tensors = 3;
	d.op[0] = (struct tb_op){.builtin = ERT_TFL_OP_ADD,
				 .n_in = 2,
				 .in = {0, 1},
				 .out = 2,
				 .options_type = 11,
				 .n_opt = 1,
				 .opt = {{'b', 0, 0}}};
	d.n_ops = 1;
	d.n_inputs = 2;
	d.inputs[1] = 1;
	d.n_outputs = 1;
	d.outputs[0] = 2;
	/* 10*0.5 + (6-2)*0.25 = 6 -> 5; -10*0.5 + (10-2)*0.25 = -3 -> -4. */
	static const int8_t a[] = {10, -10}, b[] = {6, 10};
	static const int8_t want[] = {5, -4};
	uint8_t *buf;
	const int8_t *out = run(&d, a, 2, b, 2, &buf);
	assert_memory_equal(out, want, 2);
	free(buf);
}

static void pools(void **state)
{
	(void)state;
	static const int32_t din[] = {1, 2, 2, 2}, dout[] = {1, 1, 1, 2};
	for (int is_max = 0; is_max < 2; is_max++) {
		struct tb_model d;
		memset(&d, 0, sizeof d);
		d.t[0] = i8(4, din, 1.0f, 0);
		d.t[1] = i8(4, dout, 1.0f, 0);
		d.n_tensors = 2;
		d.op[0] = (struct tb_op){.builtin = is_max ? ERT_TFL_OP_MAX_POOL_2D
							   : ERT_TFL_OP_AVERAGE_POOL_2D,
					 .n_in = 1,
					 .in = {0},
					 .out = 1,
					 .options_type = 5,
					 .n_opt = 6,
					 .opt = {{'b', 1, 0},
						 {'i', 2, 0},
						 {'i', 2, 0},
						 {'i', 2, 0},
						 {'i', 2, 0},
						 {'b', 0, 0}}};
		d.n_ops = 1;
		d.n_inputs = d.n_outputs = 1;
		d.outputs[0] = 1;
		/* Channel 0: 1, 2, 3, 5 (sum 11: 2.75 -> 3); channel 1: -1, -2,
		 * -3, -5 (-11: -2.75 -> -3). Max: 5 and -1. */
		static const int8_t x[] = {1, -1, 2, -2, 3, -3, 5, -5};
		static const int8_t want_avg[] = {3, -3}, want_max[] = {5, -1};
		uint8_t *buf;
		const int8_t *out = run(&d, x, 8, NULL, 0, &buf);
		assert_memory_equal(out, is_max ? want_max : want_avg, 2);
		free(buf);
	}
}

static void softmax_matches_math(void **state)
{
	(void)state;
	struct tb_model d;
	memset(&d, 0, sizeof d);
	static const int32_t dd[] = {1, 3};
	d.t[0] = i8(2, dd, 1.0f / 16.0f, 0);
	d.t[1] = i8(2, dd, 1.0f / 256.0f, -128);
	d.n_tensors = 2;
	d.op[0] = (struct tb_op){.builtin = ERT_TFL_OP_SOFTMAX,
				 .n_in = 1,
				 .in = {0},
				 .out = 1,
				 .options_type = 9,
				 .n_opt = 1,
				 .opt = {{'f', 0, 1.0f}}};
	d.n_ops = 1;
	d.n_inputs = d.n_outputs = 1;
	d.outputs[0] = 1;
	/* Logits 1, 0, -8: p = e/(e+1+e^-8) = 0.73099, 0.26892, 0.00009;
	 * *256 - 128 = 59.1, -59.2, -128.0. The fixed-point exp and
	 * reciprocal are approximations: within one step. */
	static const int8_t x[] = {16, 0, -128};
	uint8_t *buf;
	const int8_t *out = run(&d, x, 3, NULL, 0, &buf);
	assert_in_range(out[0], 58, 60);
	assert_in_range(out[1], -60, -58);
	assert_int_equal(out[2], -128);
	free(buf);
}

static void quantize_dequantize(void **state)
{
	(void)state;
	struct tb_model d;
	memset(&d, 0, sizeof d);
	static const int32_t dd[] = {4};
	d.t[0].n_dims = 1;
	d.t[0].dims[0] = 4;
	d.t[0].type = ERT_TFL_FLOAT32;
	d.t[1] = i8(1, dd, 0.5f, 3);
	d.t[2].n_dims = 1;
	d.t[2].dims[0] = 4;
	d.t[2].type = ERT_TFL_FLOAT32;
	d.n_tensors = 3;
	d.op[0] = (struct tb_op){.builtin = ERT_TFL_OP_QUANTIZE, .n_in = 1, .in = {0}, .out = 1};
	d.op[1] = (struct tb_op){.builtin = ERT_TFL_OP_DEQUANTIZE, .n_in = 1, .in = {1}, .out = 2};
	d.n_ops = 2;
	d.n_inputs = d.n_outputs = 1;
	d.outputs[0] = 2;
	/* q = round(x / 0.5) + 3, clamped: 1.26 -> 3 + 3 = 6; -1.25 -> -3 + 3
	 * = 0 (2.5 rounds away from zero); 1000 -> 127; -1000 -> -128. Back:
	 * 0.5 * (q - 3) = 1.5, -1.5, 62, -65.5. */
	static const float x[] = {1.26f, -1.25f, 1000.0f, -1000.0f};
	static const float want[] = {1.5f, -1.5f, 62.0f, -65.5f};
	uint8_t *buf;
	const int8_t *out = run(&d, x, sizeof x, NULL, 0, &buf);
	float got[4];
	memcpy(got, out, sizeof got);
	for (int k = 0; k < 4; k++)
		assert_true(got[k] == want[k]);
	free(buf);
}

static void arena_plan_reuses_dead_tensors(void **state)
{
	(void)state;
	/* A chain of four RESHAPEs of 1000 bytes: at most two tensors are
	 * alive at once, so the plan needs 2 * 1008 (aligned) bytes, not 5000. */
	struct tb_model d;
	memset(&d, 0, sizeof d);
	static const int32_t dd[] = {1000};
	for (int k = 0; k < 5; k++)
		d.t[k] = i8(1, dd, 1.0f, 0);
	d.n_tensors = 5;
	for (int i = 0; i < 4; i++)
		d.op[i] = (struct tb_op){
		    .builtin = ERT_TFL_OP_RESHAPE, .n_in = 1, .in = {i}, .out = i + 1};
	d.n_ops = 4;
	d.n_inputs = d.n_outputs = 1;
	d.outputs[0] = 4;
	size_t len;
	uint8_t *buf = tb_build(&d, &len);
	struct ert_tfl_err err;
	assert_int_equal(ert_tfl_load(&model, buf, len, &err), 0);
	assert_int_equal(model.activation_bytes, 2 * 1008);
	assert_int_equal(model.arena_bytes, 2 * 1008);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(fixed_point_helpers),
	    cmocka_unit_test(conv_per_channel_valid),
	    cmocka_unit_test(depthwise_same_padding),
	    cmocka_unit_test(fully_connected),
	    cmocka_unit_test(add_two_scales),
	    cmocka_unit_test(pools),
	    cmocka_unit_test(softmax_matches_math),
	    cmocka_unit_test(quantize_dequantize),
	    cmocka_unit_test(arena_plan_reuses_dead_tensors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
