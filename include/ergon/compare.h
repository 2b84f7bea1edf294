/* ergon compare: comparability first, then the figures (docs/COMPARE.md).
 *
 * Two or more artifacts of one kind (run reports, profile/analyze
 * summaries; the table of kinds in compare.c says which fields of each
 * kind must agree and which figures are compared). The first artifact is
 * the baseline; every other one is compared with it.
 *
 * The result is an "ergon.compare" artifact (caller owns):
 *   kind, inputs[] {label, schema, report_id, provenance, signer},
 *   comparability {comparable, forced, differences[] {field, class, what,
 *   values[]}}, figures[] {name, path, unit, better, headline, values[]
 *   {value, u}, versus[] {diff, ratio, pct, combined_u, verdict}},
 *   layers[] (profiles), regression {threshold_pct, verdict, figures[]}.
 */
#ifndef ERGON_COMPARE_H
#define ERGON_COMPARE_H

#include "ergon/error.h"

#include <jansson.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ERGON_COMPARE_SCHEMA "ergon.compare"
#define ERGON_COMPARE_VERSION 1
/* At most this many artifacts in one comparison. */
#define ERGON_COMPARE_MAX 16

struct ergon_compare_options {
	double threshold_pct;	/* regression threshold, %; NaN: no regression verdict */
	int force_incomparable; /* compare even when comparability breaks */
};

/* Compare n artifacts (labels: what to call each, e.g. its path). Returns
 * 0 with *result when they are comparable (or forced); ERGON_EREFUSED
 * with *result still set (every difference listed, no figures) when a
 * difference breaks comparability and it is not forced, or when the
 * artifacts are of different kinds (then *result is NULL and err names
 * both). ERGON_EUSAGE for n < 2 or an artifact of no known kind. */
ERGON_API int ergon_compare(const json_t *const *artifacts, const char *const *labels, size_t n,
			    const struct ergon_compare_options *o, json_t **result,
			    struct ergon_err *err);

/* True when the result's regression verdict is "regression". */
ERGON_API int ergon_compare_regressed(const json_t *result);

/* layer_diff.csv of a profile comparison: layer_id,op,counter, then per
 * artifact its value and, after the baseline, diff and ratio. *out is
 * malloc'd (caller frees); "" (with a header) when there are no layers. */
ERGON_API int ergon_compare_layer_csv(const json_t *result, char **out, size_t *len,
				      struct ergon_err *err);

/* The terminal text: differences, the figure table, the verdict. *out is
 * malloc'd (caller frees). */
ERGON_API int ergon_compare_text(const json_t *result, char **out, struct ergon_err *err);

#ifdef __cplusplus
}
#endif
#endif
