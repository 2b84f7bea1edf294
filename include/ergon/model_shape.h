/* A TFLite tensor's shape as text ("[1,96,96,3]"): pure formatting of the
 * interpreter's tensor table (target/include/ergon/ert_tfl.h), shared by
 * the model driver's error messages and `ergon model info`'s table. */
#ifndef ERGON_MODEL_SHAPE_H
#define ERGON_MODEL_SHAPE_H

#include "ergon/error.h"
#include "ergon/ert_tfl.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* "[1,96,96,3]" into buf (always terminated; cut at cap). */
ERGON_API void ergon_model_shape_str(const struct ert_tfl_tensor *t, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
