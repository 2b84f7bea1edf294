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

/* What the rescue file (run_rescue.c) holds: the session's raw series and
 * enough context to say what they are. All borrowed. */
struct ergon_session_result;
struct ergon_instrument;
struct ergon_workload;
struct ergon_run_rescue {
	const char *reason; /* why the report is not there */
	const char *out_path;
	const char *device;
	const struct ergon_instrument *inst;
	const struct ergon_workload *wl;
	const struct ergon_session_result *res;
};
/* An ergon_out_emit_fn (ergon/reserve.h) for ctx = struct ergon_run_rescue:
 * CSV through a static buffer, no allocation. */
int ergon_run_rescue_emit(void *ctx, int fd);

#endif
