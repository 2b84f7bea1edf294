/* A TFLite tensor's shape as text ("[1,96,96,3]"): pure formatting of the
 * interpreter's tensor table (target/include/ergon/ert_tfl.h), shared by
 * the model driver's error messages and `ergon model info`'s table. */
#ifndef ERGON_MODEL_SHAPE_H
#define ERGON_MODEL_SHAPE_H

#include "ergon/error.h"

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

/* "[1,96,96,3]" into buf (always terminated; cut at cap). */
ERGON_API void ergon_model_shape_str(const struct ert_tfl_tensor *t, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
