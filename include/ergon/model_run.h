/* `ergon model info | infer` as pipelines (src/pipelines/model/model_run.c): the
 * model driver (ergon/model.h: the host wrapper of ergon-target's
 * interpreter) and the an547 firmware (ergon/model_fw.h) wired to what the
 * command prints or writes. The CLI calls these, never the driver.
 */
#ifndef ERGON_MODEL_RUN_H
#define ERGON_MODEL_RUN_H

#include "ergon/error.h"

#include <jansson.h>
#include <stddef.h>

/* The interpreter's types (ergon-target's ergon/ert_tfl.h): complete in
 * the tree and for a consumer that also has ergon-target's headers
 * (share/ergon-target/include); opaque, through pointers, otherwise. */
#if defined(__has_include)
#if __has_include("ergon/ert_tfl.h")
#include "ergon/ert_tfl.h"
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

struct ert_tfl_model;
struct ert_tfl_tensor;

struct ergon_model;

/* A model loaded, validated, planned and bound by the host interpreter:
 * what `ergon model info` describes. */
struct ergon_model_info {
	struct ergon_model *model;	 /* owned (ergon_model_info_release) */
	const struct ert_tfl_model *tfl; /* owned by model: operators, tensors, totals, arena */
	size_t model_bytes;		 /* the file's size */
};

/* Load the model at path into *info (zeroed first). On failure info holds
 * nothing and err names the file and, for a model the interpreter refuses,
 * the table/field or operator and the fix. */
ERGON_API int ergon_model_info_load(const char *path, struct ergon_model_info *info,
				    struct ergon_err *err);
/* Frees what ergon_model_info_load gave; a zeroed info is a no-op. */
ERGON_API void ergon_model_info_release(struct ergon_model_info *info);

/* The description `ergon model info --json` prints: per operator its
 * index, type, input/output tensors (shape, type, quantization), MACs and
 * parameter bytes; totals and the arena size. New reference (caller
 * json_decref's); NULL when out of memory. */
ERGON_API json_t *ergon_model_info_json(const struct ergon_model *m);

/* `ergon model infer`: one inference of the model at model_path on the raw
 * bytes of input_path (exactly input 0's size, else ERGON_EUSAGE naming
 * both sizes), output 0's bytes written atomically to out_path. */
struct ergon_model_infer_opts {
	const char *model_path;
	const char *input_path;
	const char *out_path; /* checked writable before the model is read */
	int on_qemu;	      /* 0: the host interpreter; 1: an emulated board's firmware
				 (board), whose build, build record and QEMU log stay in
				 OUT.<board less its "qemu-">/ (OUT.an547/) */
	int force;	      /* overwrite out_path */
	int no_cache;	      /* qemu: build without the firmware object cache */
	/* The top_k classes of output 0 by score (0: none), written to
	 * top[0..*n_top): highest first, ties by lower index. */
	size_t top_k;
	struct ergon_model_score *top;
	size_t *n_top;
	/* on_qemu: the emulated board (a port run under QEMU,
	 * docs/internals/ports.md); NULL: qemu-an547. */
	const char *board;
};
/* One element of output 0: its index, the raw value and the dequantized
 * score (scale * (raw - zero_point); int8/uint8/int16/int32 outputs with
 * one scale; a float32 output is its own score). */
struct ergon_model_score {
	unsigned index;
	double raw;
	double score;
	int quantized; /* 0: the output has no quantization (score = raw) */
};
/* *out_len receives the bytes written. */
ERGON_API int ergon_model_infer_run(const struct ergon_model_infer_opts *o, size_t *out_len,
				    struct ergon_err *err);

#ifdef __cplusplus
}
#endif
#endif
