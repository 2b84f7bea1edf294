/* Private helpers of the report pipeline (JSON access with field paths). */
#ifndef ERGON_REPORT_INTERNAL_H
#define ERGON_REPORT_INTERNAL_H

#include "ergon/error.h"

#include <jansson.h>
#include <stddef.h>

/* A real, or null for NaN/Inf (JSON has no NaN). New reference. */
json_t *ergon_jnum(double v);
/* The value at a dotted path, or NULL. Borrowed. */
const json_t *ergon_jpath(const json_t *root, const char *path);
/* A number at a dotted path; ERGON_EVERIFY naming the path otherwise. */
int ergon_jnumber(const json_t *root, const char *path, double *out, struct ergon_err *err);
/* An array of numbers (null -> NaN) at a path; *out malloc'd (caller frees). */
int ergon_jarray(const json_t *root, const char *path, double **out, size_t *n,
		 struct ergon_err *err);
/* JSON array of v[0], v[k], v[2k], ... New reference. */
json_t *ergon_darray(const double *v, size_t n, size_t stride_keep, size_t total);

#endif
