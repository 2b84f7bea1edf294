/* A tiny TFLite flatbuffer writer for tests: builds schema-v3 models from a
 * declarative description, so tests can make small valid models (one
 * operator, hand-computable outputs) and hostile ones (by editing the
 * bytes afterwards, or with fields a real converter would never write).
 *
 * Layout: every table is a vtable followed by its table, 8 bytes per field
 * slot; children are written after their parents, so every offset points
 * forward (as the reader requires of uoffsets). */
#ifndef TFL_BUILDER_H
#define TFL_BUILDER_H

#include <stddef.h>
#include <stdint.h>

#define TB_MAX_TENSORS 16
#define TB_MAX_OPS 8

struct tb_tensor {
	int n_dims;
	int32_t dims[6];
	uint8_t type;	  /* TensorType: 9 int8, 2 int32, 0 float32 */
	const void *data; /* constant data or NULL */
	size_t data_len;
	int n_scale; /* 0: no quantization table */
	float scale[8];
	int64_t zero_point[8];
	int32_t quant_dim;
	const char *name;
	int32_t buffer; /* buffer index override; 0: automatic */
};

struct tb_op {
	int32_t builtin; /* BuiltinOperator */
	int n_in;
	int32_t in[4];
	int32_t out;
	uint8_t options_type; /* BuiltinOptions union member, 0 none */
	int n_opt;	      /* option fields, in slot order */
	struct {
		uint8_t kind; /* 'b' byte, 'i' int32, 'f' float */
		int32_t i;
		float f;
	} opt[8];
};

struct tb_model {
	int n_tensors;
	struct tb_tensor t[TB_MAX_TENSORS];
	int n_ops;
	struct tb_op op[TB_MAX_OPS];
	int n_inputs, n_outputs;
	int32_t inputs[4], outputs[4];
	uint32_t version; /* 0 means 3 */
};

/* Serialize; returns a malloc'd buffer (caller frees) and its length. */
uint8_t *tb_build(const struct tb_model *m, size_t *len);

#endif
