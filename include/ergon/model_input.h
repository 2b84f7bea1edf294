/* The deterministic model inputs and the output digest that the host, the
 * virtual bench and the profile firmware share (core: no model code). */
#ifndef ERGON_MODEL_INPUT_H
#define ERGON_MODEL_INPUT_H

#include "ergon/error.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Fill buf with the deterministic test input of the given kind: "zero",
 * "ramp" (byte i = i mod 256) or "xsN" (xorshift32 seeded N, byte = state
 * >> 24 after each step), as tests/oracle/litert.mjs makes them.
 * ERGON_EUSAGE for an unknown kind. */
ERGON_API int ergon_model_pattern(const char *kind, uint8_t *buf, size_t len,
				  struct ergon_err *err);

/* FNV-1a 64 of bytes: what the profile firmware reports of its output
 * (HPX_MODEL_OUTPUT_FNV1A64). */
ERGON_API uint64_t ergon_model_fnv1a64(const uint8_t *p, size_t n);

#ifdef __cplusplus
}
#endif
#endif
