/* A freestanding int8 TensorFlow Lite interpreter (schema v3), shared by the
 * host (`ergon model`, the tflite: workload) and the firmware.
 *
 * No malloc, no libc: the caller owns the model bytes (they must outlive the
 * model object), the model object (large: put it in static storage) and one
 * arena. Loading reads every table, vector and string of the flatbuffer with
 * bounds checks, validates every operator (types, shapes, quantization) and
 * plans the arena; nothing is read from the model during invoke that was not
 * checked at load time. The first error is kept, with the table and field it
 * concerns, in `err`.
 *
 * Supported: CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, AVERAGE_POOL_2D,
 * MAX_POOL_2D, ADD, RESHAPE, SOFTMAX, QUANTIZE, DEQUANTIZE, int8 activations
 * with per-tensor or per-channel int8 weights and int32 bias, computed as
 * TFLite's reference kernels compute them (docs/internals/tflite.md).
 */
#ifndef ERT_TFL_H
#define ERT_TFL_H

#include <stddef.h>
#include <stdint.h>

/* Limits (overridable at build time). A model beyond one is refused with
 * ERT_TFL_E_LIMIT, naming the limit. */
#ifndef ERT_TFL_MAX_TENSORS
#define ERT_TFL_MAX_TENSORS 256
#endif
#ifndef ERT_TFL_MAX_OPS
#define ERT_TFL_MAX_OPS 128
#endif
#ifndef ERT_TFL_MAX_OPCODES
#define ERT_TFL_MAX_OPCODES 64
#endif
#ifndef ERT_TFL_MAX_BUFFERS
#define ERT_TFL_MAX_BUFFERS 1024
#endif
#define ERT_TFL_MAX_DIMS 6
#define ERT_TFL_MAX_OP_INPUTS 4
#define ERT_TFL_MAX_IO 4
/* No single tensor may exceed this (bytes): keeps every size product in
 * 32 bits with room for the arena sum. */
#define ERT_TFL_MAX_TENSOR_BYTES (64u * 1024u * 1024u)
#define ERT_TFL_ERR_MAX 240
/* Arena offsets are aligned to this many bytes. */
#define ERT_TFL_ALIGN 16u

/* Status codes (negative), distinct from enum ert_status. */
enum ert_tfl_status {
	ERT_TFL_OK = 0,
	ERT_TFL_E_MALFORMED = -1,   /* the flatbuffer is not a valid TFLite model */
	ERT_TFL_E_UNSUPPORTED = -2, /* a valid model using an operator/feature we lack */
	ERT_TFL_E_FLOAT = -3,	    /* a float (not int8-quantized) model */
	ERT_TFL_E_LIMIT = -4,	    /* beyond one of the ERT_TFL_MAX_* limits */
	ERT_TFL_E_ARENA = -5,	    /* the arena given is too small */
	ERT_TFL_E_STATE = -6,	    /* invoke before bind, bad index */
};

/* TensorType values of the schema that we name. */
enum ert_tfl_type {
	ERT_TFL_FLOAT32 = 0,
	ERT_TFL_INT32 = 2,
	ERT_TFL_UINT8 = 3,
	ERT_TFL_INT64 = 4,
	ERT_TFL_INT16 = 7,
	ERT_TFL_INT8 = 9,
};

/* BuiltinOperator values we run. */
enum ert_tfl_builtin {
	ERT_TFL_OP_ADD = 0,
	ERT_TFL_OP_AVERAGE_POOL_2D = 1,
	ERT_TFL_OP_CONV_2D = 3,
	ERT_TFL_OP_DEPTHWISE_CONV_2D = 4,
	ERT_TFL_OP_DEQUANTIZE = 6,
	ERT_TFL_OP_FULLY_CONNECTED = 9,
	ERT_TFL_OP_MAX_POOL_2D = 17,
	ERT_TFL_OP_RESHAPE = 22,
	ERT_TFL_OP_SOFTMAX = 25,
	ERT_TFL_OP_QUANTIZE = 114,
};

struct ert_tfl_err {
	int code;
	char msg[ERT_TFL_ERR_MAX];
};

struct ert_tfl_tensor {
	int32_t dims[ERT_TFL_MAX_DIMS];
	uint8_t n_dims;
	uint8_t type;	  /* enum ert_tfl_type (schema TensorType) */
	uint8_t is_const; /* data lives in the model */
	uint8_t in_arena; /* placed by the planner */
	uint32_t elems;
	uint32_t bytes;
	const uint8_t *data; /* constant data inside the model, else NULL */
	uint32_t name_pos;   /* model byte offset of the name, 0 if none */
	uint32_t name_len;
	/* Quantization: the first scale / zero point, and where the full
	 * vectors are in the model (float32 LE / int64 LE). */
	float scale;
	int32_t zero_point;
	uint32_t n_scale;
	uint32_t scale_pos;
	uint32_t n_zp;
	uint32_t zp_pos;
	int32_t quant_dim;
	int16_t first_op; /* lifetime for the planner, -1 when unused */
	int16_t last_op;
	uint32_t arena_offset;
};

struct ert_tfl_op {
	uint16_t opcode; /* BuiltinOperator */
	uint8_t n_in;
	int16_t in[ERT_TFL_MAX_OP_INPUTS]; /* -1: optional input absent */
	int16_t out;
	/* Options. */
	uint8_t padding; /* 0 SAME, 1 VALID */
	uint8_t act;	 /* ActivationFunctionType */
	uint8_t keep_num_dims;
	int32_t stride_w, stride_h, dil_w, dil_h, filter_w, filter_h;
	float beta;
	/* Prepared at load (shapes) and bind (multipliers). */
	int32_t pad_w, pad_h;
	int32_t act_min, act_max;
	int32_t mult[3], shift[3];
	int32_t left_shift, diff_min;
	uint32_t n_channels;  /* per-channel requantization entries */
	uint32_t persist_off; /* arena offset of mult[], shift[], bias[] */
	uint64_t macs;
	uint32_t param_bytes;
};

struct ert_tfl_model {
	const uint8_t *buf; /* the model bytes, owned by the caller */
	uint32_t len;
	uint32_t version;
	uint16_t n_tensors;
	uint16_t n_ops;
	uint16_t n_inputs;
	uint16_t n_outputs;
	int16_t inputs[ERT_TFL_MAX_IO];
	int16_t outputs[ERT_TFL_MAX_IO];
	struct ert_tfl_tensor tensors[ERT_TFL_MAX_TENSORS];
	struct ert_tfl_op ops[ERT_TFL_MAX_OPS];
	uint32_t activation_bytes; /* peak of the planned activations */
	uint32_t persist_bytes;	   /* per-channel multipliers and biases */
	uint32_t arena_bytes;	   /* what ert_tfl_bind needs */
	uint64_t total_macs;
	uint32_t total_param_bytes;
	uint8_t *arena;
	uint32_t arena_len;
	int bound;
	/* Called after each operator ran, before its ert_layer_end (NULL:
	 * none). The virtual bench (sim/) charges the operator's simulated
	 * cycles here, so the layer hooks see them. Set after ert_tfl_load,
	 * which clears the whole object. */
	void (*op_done)(void *ctx, const struct ert_tfl_op *op);
	void *op_done_ctx;
#if !defined(__ARM_ARCH_PROFILE) || __ARM_ARCH_PROFILE != 'M'
	/* Host builds: the kernel path (enum ert_tfl_simd; 0, cleared by
	 * ert_tfl_load: the best the CPU runs). Set with ert_tfl_simd_set. */
	uint8_t simd;
	/* Host builds: the weights packed for the kernels (ert_tfl_pack), or
	 * NULL: each invoke packs them on the stack. */
	const uint8_t *pack;
	uint32_t pack_off[ERT_TFL_MAX_OPS]; /* UINT32_MAX: not packed */
#endif
};

/* Parse, validate and plan the model in buf[0..len). On failure returns a
 * negative ERT_TFL_E* and fills err (table, field, byte offset, fix). */
int ert_tfl_load(struct ert_tfl_model *m, const void *buf, size_t len, struct ert_tfl_err *err);
/* Give the model its arena (len >= m->arena_bytes, else ERT_TFL_E_ARENA
 * with the size needed) and compute the requantization parameters. The
 * arena is owned by the caller and must outlive the model's use. */
int ert_tfl_bind(struct ert_tfl_model *m, void *arena, size_t len, struct ert_tfl_err *err);
/* Where graph input/output i lives in the arena (NULL if i is out of range
 * or the model is not bound); *bytes gets its size. */
uint8_t *ert_tfl_input(const struct ert_tfl_model *m, unsigned i, uint32_t *bytes);
uint8_t *ert_tfl_output(const struct ert_tfl_model *m, unsigned i, uint32_t *bytes);
/* Run every operator once, each between ert_layer_begin(index, name) and
 * ert_layer_end(), so an attached profile records the real layers. */
int ert_tfl_invoke(struct ert_tfl_model *m);

#if !defined(__ARM_ARCH_PROFILE) || __ARM_ARCH_PROFILE != 'M'
/* Host builds run CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED and ADD
 * through one of several kernel paths, all giving the same bytes: the
 * portable C, and the SIMD ones built in (CMake option ERGON_TFL_SIMD) and
 * supported by the CPU. */
enum ert_tfl_simd {
	ERT_TFL_SIMD_AUTO = 0,	   /* the best the build and the CPU have */
	ERT_TFL_SIMD_PORTABLE = 1, /* portable C only */
	ERT_TFL_SIMD_SSE41 = 2,	   /* x86-64 SSE4.1 */
	ERT_TFL_SIMD_AVX2 = 3,	   /* x86-64 AVX2 */
	ERT_TFL_SIMD_NEON = 4,	   /* AArch64 Advanced SIMD */
};
/* Choose the path of m's next invokes. Returns 0, or ERT_TFL_E_UNSUPPORTED
 * (m unchanged) when the build or the CPU lacks it. */
int ert_tfl_simd_set(struct ert_tfl_model *m, enum ert_tfl_simd path);
/* 1 when the build and the CPU run the path, else 0. */
int ert_tfl_simd_available(enum ert_tfl_simd path);
/* The path m's invokes take: "portable", "sse4.1", "avx2", "neon". */
const char *ert_tfl_simd_name(const struct ert_tfl_model *m);
/* Bytes of the host workspace in which ert_tfl_pack keeps m's filters in
 * the kernels' layout (about twice the CONV_2D and DEPTHWISE_CONV_2D
 * weights). Optional: without it every invoke repacks them. */
uint32_t ert_tfl_pack_bytes(const struct ert_tfl_model *m);
/* Pack m's filters into buf (len >= ert_tfl_pack_bytes(m), 32-byte
 * aligned, owned by the caller, outliving m's use) for every later
 * invoke. Returns 0 or ERT_TFL_E_ARENA. */
int ert_tfl_pack(struct ert_tfl_model *m, void *buf, size_t len);
#endif

/* Schema names ("CONV_2D", "FLOAT32"); "UNKNOWN" when out of the table. */
const char *ert_tfl_op_name(uint32_t builtin_code);
const char *ert_tfl_type_name(uint32_t type);
/* Bytes per element of a tensor type we can size (0 otherwise). */
uint32_t ert_tfl_type_size(uint32_t type);

#endif
