/* Hostile and broken TFLite models against the interpreter's loader: each is
 * refused with the right code and a message naming the table/field (or the
 * operator) and the fix, never a crash. Bit-flipped models that still load
 * must also bind and run cleanly (ASan/UBSan watch the whole test). */
#include "../../target/src/tfl_internal.h"
#include "ergon/ert_tfl.h"
#include "test_support.h"
#include "tfl_builder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct ert_tfl_model model;
static _Alignas(16) uint8_t arena[1 << 16];

static uint8_t *read_model(const char *name, size_t *len)
{
	char *rel = ts_strf("models/%s", name);
	char *path = ts_fixture(rel);
	uint8_t *b = (uint8_t *)ts_read_file(path, len);
	assert_non_null(b);
	free(rel);
	free(path);
	return b;
}

static void expect(const uint8_t *buf, size_t len, int code, const char *needle)
{
	struct ert_tfl_err err;
	int rc = ert_tfl_load(&model, buf, len, &err);
	if (rc != code || strstr(err.msg, needle) == NULL)
		fail_msg("load gave %d '%s'; expected %d with '%s'", rc, err.msg, code, needle);
}

/* A valid one-operator model: RESHAPE [1,4] -> [4] (int8). */
static void small_model(struct tb_model *d)
{
	memset(d, 0, sizeof *d);
	d->t[0].n_dims = 2;
	d->t[0].dims[0] = 1;
	d->t[0].dims[1] = 4;
	d->t[1].n_dims = 1;
	d->t[1].dims[0] = 4;
	for (int k = 0; k < 2; k++) {
		d->t[k].type = ERT_TFL_INT8;
		d->t[k].n_scale = 1;
		d->t[k].scale[0] = 0.5f;
	}
	d->n_tensors = 2;
	d->op[0] = (struct tb_op){.builtin = ERT_TFL_OP_RESHAPE, .n_in = 1, .in = {0}, .out = 1};
	d->n_ops = 1;
	d->n_inputs = d->n_outputs = 1;
	d->outputs[0] = 1;
}

/* Position of the subgraph's tensors vector (its length field). */
static uint32_t tensors_vec_pos(uint8_t *buf, size_t len)
{
	struct ert_tfl_err err = {0};
	struct tfl_fb fb = {buf, (uint32_t)len, &err};
	struct tfl_tab root, sg;
	struct tfl_vec sgs, tens;
	assert_int_equal(tfl_root(&fb, &root), 0);
	assert_int_equal(tfl_vector(&fb, &root, 2, "subgraphs", 4, 8, &sgs), 0);
	assert_int_equal(tfl_vec_table(&fb, &sgs, 0, "SubGraph", &sg), 0);
	assert_int_equal(tfl_vector(&fb, &sg, 0, "tensors", 4, 64, &tens), 0);
	return tens.pos - 4;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int k = 0; k < 4; k++)
		p[k] = (uint8_t)(v >> (8 * k));
}

static void truncated(void **state)
{
	(void)state;
	size_t len;
	uint8_t *full = read_model("kws_ref_model.tflite", &len);
	/* Every prefix is refused (the last bytes are weights that a tensor
	 * needs); copy each so ASan sees reads past the prefix. */
	for (size_t n = 0; n < len; n += (n < 256 ? 1 : 61)) {
		uint8_t *b = malloc(n + 1);
		memcpy(b, full, n);
		struct ert_tfl_err err;
		int rc = ert_tfl_load(&model, b, n, &err);
		if (rc == 0 || err.msg[0] == '\0')
			fail_msg("a %zu-byte prefix of %zu loaded (rc %d)", n, len, rc);
		free(b);
	}
	expect(full, 7, ERT_TFL_E_MALFORMED, "too short");
	free(full);
}

static void bit_flipped(void **state)
{
	(void)state;
	size_t len;
	uint8_t *full = read_model("kws_ref_model.tflite", &len);
	uint8_t *b = malloc(len);
	uint32_t s = 12345u;
	int loaded = 0, refused = 0;
	for (int k = 0; k < 3000; k++) {
		memcpy(b, full, len);
		s ^= s << 13;
		s ^= s >> 17;
		s ^= s << 5;
		/* Flips concentrated in the first 4 KiB (tables, not weights). */
		size_t at = (k % 4 == 0) ? (size_t)(s % len) : (size_t)(s % 4096u);
		b[at] ^= (uint8_t)(1u << (s >> 29));
		struct ert_tfl_err err;
		int rc = ert_tfl_load(&model, b, len, &err);
		if (rc != 0) {
			assert_true(err.msg[0] != '\0');
			refused++;
			continue;
		}
		loaded++;
		if (model.arena_bytes <= sizeof arena && loaded % 40 == 0) {
			assert_int_equal(ert_tfl_bind(&model, arena, sizeof arena, &err), 0);
			assert_int_equal(ert_tfl_invoke(&model), 0);
		}
	}
	/* Both outcomes happen: many flips hit weights (still a model). */
	assert_true(loaded > 0);
	assert_true(refused > 0);
	free(b);
	free(full);
}

static void not_a_model(void **state)
{
	(void)state;
	static const uint8_t junk[64] = "this is not a flatbuffer at all, just text......";
	expect(junk, sizeof junk, ERT_TFL_E_MALFORMED, "\"TFL3\"");
}

static void offsets_pointing_at_themselves(void **state)
{
	(void)state;
	struct tb_model d;
	small_model(&d);
	size_t len;
	uint8_t *b = tb_build(&d, &len);
	/* Root offset 0: the root "table" is the header itself. */
	uint8_t saved[4];
	memcpy(saved, b, 4);
	put32(b, 0);
	expect(b, len, ERT_TFL_E_MALFORMED, "Model: vtable");
	memcpy(b, saved, 4);
	/* Every tensor offset 0: each element points at itself, a "table"
	 * whose vtable is itself. Bounded: one error, no loop. */
	uint32_t v = tensors_vec_pos(b, len);
	put32(b + v + 4, 0);
	expect(b, len, ERT_TFL_E_MALFORMED, "Tensor[0]: vtable");
	free(b);
}

static void huge_vectors(void **state)
{
	(void)state;
	struct tb_model d;
	small_model(&d);
	size_t len;
	uint8_t *b = tb_build(&d, &len);
	uint32_t v = tensors_vec_pos(b, len);
	put32(b + v, 0xFFFFFFFFu);
	expect(b, len, ERT_TFL_E_LIMIT, "SubGraph[0].tensors: vector of 4294967295 elements");
	put32(b + v, 200); /* within the limit, past the end */
	expect(b, len, ERT_TFL_E_MALFORMED, "runs past the end of the model");
	free(b);
}

static void negative_shape(void **state)
{
	(void)state;
	struct tb_model d;
	small_model(&d);
	d.t[1].dims[0] = -1;
	size_t len;
	uint8_t *b = tb_build(&d, &len);
	expect(b, len, ERT_TFL_E_MALFORMED, "Tensor[1].shape: dimension -1 is not positive");
	free(b);
}

static void missing_buffers(void **state)
{
	(void)state;
	struct tb_model d;
	small_model(&d);
	d.t[0].buffer = 99;
	size_t len;
	uint8_t *b = tb_build(&d, &len);
	expect(b, len, ERT_TFL_E_MALFORMED, "Tensor[0].buffer: buffer index 99");
	free(b);
	/* A convolution whose filter has no data. */
	memset(&d, 0, sizeof d);
	static const int32_t din[] = {1, 2, 2, 1}, df[] = {1, 1, 1, 1};
	for (int k = 0; k < 3; k++) {
		d.t[k].n_dims = 4;
		memcpy(d.t[k].dims, k == 1 ? df : din, sizeof din);
		d.t[k].type = ERT_TFL_INT8;
		d.t[k].n_scale = 1;
		d.t[k].scale[0] = 1.0f;
	}
	d.n_tensors = 3;
	d.op[0] = (struct tb_op){.builtin = ERT_TFL_OP_CONV_2D,
				 .n_in = 2,
				 .in = {0, 1},
				 .out = 2,
				 .options_type = 1,
				 .n_opt = 3,
				 .opt = {{'b', 1, 0}, {'i', 1, 0}, {'i', 1, 0}}};
	d.n_ops = 1;
	d.n_inputs = d.n_outputs = 1;
	d.outputs[0] = 2;
	b = tb_build(&d, &len);
	expect(b, len, ERT_TFL_E_UNSUPPORTED, "Operator[0] CONV_2D: filter is not constant");
	free(b);
}

static void unsupported_operator(void **state)
{
	(void)state;
	struct tb_model d;
	small_model(&d);
	d.op[0].builtin = 18; /* MUL */
	size_t len;
	uint8_t *b = tb_build(&d, &len);
	expect(b, len, ERT_TFL_E_UNSUPPORTED, "Operator[0] MUL: operator is not supported");
	free(b);
}

static void float_model(void **state)
{
	(void)state;
	struct tb_model d;
	memset(&d, 0, sizeof d);
	static const int32_t din[] = {1, 4}, df[] = {2, 4}, dout[] = {1, 2};
	static const float w[8] = {0};
	d.t[0].n_dims = 2;
	memcpy(d.t[0].dims, din, sizeof din);
	d.t[1].n_dims = 2;
	memcpy(d.t[1].dims, df, sizeof df);
	d.t[1].data = w;
	d.t[1].data_len = sizeof w;
	d.t[2].n_dims = 2;
	memcpy(d.t[2].dims, dout, sizeof dout);
	d.n_tensors = 3; /* type 0: FLOAT32 everywhere */
	d.op[0] = (struct tb_op){.builtin = ERT_TFL_OP_FULLY_CONNECTED,
				 .n_in = 2,
				 .in = {0, 1},
				 .out = 2,
				 .options_type = 8,
				 .n_opt = 1,
				 .opt = {{'b', 0, 0}}};
	d.n_ops = 1;
	d.n_inputs = d.n_outputs = 1;
	d.outputs[0] = 2;
	size_t len;
	uint8_t *b = tb_build(&d, &len);
	expect(b, len, ERT_TFL_E_FLOAT,
	       "Operator[0] FULLY_CONNECTED: input is FLOAT32, expected INT8: a float model");
	free(b);
}

static void arena_too_small(void **state)
{
	(void)state;
	size_t len;
	uint8_t *b = read_model("kws_ref_model.tflite", &len);
	struct ert_tfl_err err;
	assert_int_equal(ert_tfl_load(&model, b, len, &err), 0);
	uint32_t need = model.arena_bytes;
	assert_true(need > 1000);
	assert_int_equal(ert_tfl_bind(&model, arena, need - 1, &err), ERT_TFL_E_ARENA);
	char *want = ts_strf("the model needs %u bytes, the arena given has %u", need, need - 1);
	if (strstr(err.msg, want) == NULL)
		fail_msg("'%s' lacks '%s'", err.msg, want);
	free(want);
	assert_int_equal(ert_tfl_invoke(&model), ERT_TFL_E_STATE);
	assert_int_equal(ert_tfl_bind(&model, arena, need, &err), 0);
	free(b);
}

static void schema_version(void **state)
{
	(void)state;
	struct tb_model d;
	small_model(&d);
	d.version = 2;
	size_t len;
	uint8_t *b = tb_build(&d, &len);
	expect(b, len, ERT_TFL_E_UNSUPPORTED, "Model.version: schema version 2 is not 3");
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(truncated),       cmocka_unit_test(bit_flipped),
	    cmocka_unit_test(not_a_model),     cmocka_unit_test(offsets_pointing_at_themselves),
	    cmocka_unit_test(huge_vectors),    cmocka_unit_test(negative_shape),
	    cmocka_unit_test(missing_buffers), cmocka_unit_test(unsupported_operator),
	    cmocka_unit_test(float_model),     cmocka_unit_test(arena_too_small),
	    cmocka_unit_test(schema_version),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
