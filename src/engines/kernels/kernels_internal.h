/* Private to the kernels module: one case of `ergon kernels run` (a kernel
 * on one workload, its buffers and its workload record) and the
 * independent oracle its outputs are checked against. */
#ifndef ERGON_KERNELS_INTERNAL_H
#define ERGON_KERNELS_INTERNAL_H

#include "../../../target/src/tfl_internal.h"
#include "ergon/error.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

enum kcase_kind { KC_CONV = 1, KC_DWCONV = 2, KC_FC = 4 };

struct kcase {
	char name[128];
	int kind;
	struct tfl_conv_args conv; /* KC_CONV, KC_DWCONV */
	struct tfl_fc_args fc;	   /* KC_FC */
	/* Owned buffers (the args point into them, or into a model). */
	int8_t *in, *filter, *out, *expect;
	int32_t *q; /* mult, shift, bias, fsum: 4 x channels */
	size_t in_len, out_len;
	json_t *record; /* the workload record */
};

/* Build the cases of a shapes file (docs/METHOD.md "Kernels"). A line the
 * kernels cannot take is not fatal: it goes to *refused as {line, case,
 * why} and the run goes on. suites: KC_* mask. Caller frees with
 * kcases_free and decrefs *refused. Errors only for I/O-level faults. */
int kcases_from_shapes(const char *text, size_t len, const char *name, int suites,
		       struct kcase **cases, size_t *n, json_t **refused, struct ergon_err *err);

/* The conv/dwconv/fc layers of a model, with its real shapes, weights and
 * requantization. model_bytes must outlive the cases. */
struct ert_tfl_model;
int kcases_from_model(const struct ert_tfl_model *m, const char *path, int suites,
		      struct kcase **cases, size_t *n, json_t **refused, struct ergon_err *err);

void kcases_free(struct kcase *cases, size_t n);

/* Fill the input with a deterministic pseudo-random pattern (seeded by the
 * case index) and compute c->expect with the oracle. */
void kcase_prepare(struct kcase *c, uint32_t seed);

/* Run the interpreter's kernel (REF) on c once. */
void kcase_run_ref(struct kcase *c);

/* The oracle: TFLite's reference_integer_ops loops written out plainly,
 * without the interpreter's filter-sum and four-channel shortcuts. */
void koracle_conv(const struct tfl_conv_args *a, int8_t *out);
void koracle_dwconv(const struct tfl_conv_args *a, int8_t *out);
void koracle_fc(const struct tfl_fc_args *a, int8_t *out);

#endif
