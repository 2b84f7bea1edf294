/* TFLite models on the host: load a .tflite file into the freestanding
 * interpreter of ergon-target (target/include/ergon/ert_tfl.h), describe it
 * and run it. The same interpreter code runs in the firmware, so what
 * `ergon model info` reports (operators, MACs, arena) is what the board
 * will run. A driver (src/drivers/model/model.c): the tflite: workload
 * runs it; `ergon model` reaches it through include/ergon/model_run.h.
 */
#ifndef ERGON_MODEL_H
#define ERGON_MODEL_H

#include "ergon/error.h"
#include "ergon/model_input.h" /* ergon_model_pattern */

#include <stddef.h>
#include <stdint.h>

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

/* Largest model file read (bytes). */
#define ERGON_MODEL_MAX_BYTES (64u * 1024u * 1024u)

struct ergon_model;

/* Read, validate, plan and bind the model at path (the arena is allocated
 * here). On failure *out is NULL and err names the file and, for a model
 * the interpreter refuses, the table/field or operator and the fix.
 * Free with ergon_model_free. */
ERGON_API int ergon_model_open(const char *path, struct ergon_model **out, struct ergon_err *err);
/* NULL is a no-op. */
ERGON_API void ergon_model_free(struct ergon_model *m);
/* The loaded interpreter model (owned by m). */
ERGON_API const struct ert_tfl_model *ergon_model_tfl(const struct ergon_model *m);
/* The model file's bytes (owned by m) and its path as given. */
ERGON_API const uint8_t *ergon_model_bytes(const struct ergon_model *m, size_t *len);
ERGON_API const char *ergon_model_path(const struct ergon_model *m);
/* Copy len bytes into graph input 0; ERGON_EUSAGE naming `what` and the
 * expected size (with the input's type and shape) when len differs. */
ERGON_API int ergon_model_set_input(struct ergon_model *m, const void *data, size_t len,
				    const char *what, struct ergon_err *err);
/* Run every operator once. */
ERGON_API int ergon_model_invoke(struct ergon_model *m, struct ergon_err *err);
/* Graph output 0 after an invoke (owned by m). */
ERGON_API const uint8_t *ergon_model_output(const struct ergon_model *m, size_t *len);

#ifdef __cplusplus
}
#endif
#endif
