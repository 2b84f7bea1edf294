/* Nearest-name suggestions for mistyped names (boards, scenarios,
 * instruments, workloads, options, configuration keys). */
#ifndef ERGON_SUGGEST_H
#define ERGON_SUGGEST_H

#include "ergon/error.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Levenshtein distance of two names (compared on their first 63 bytes). */
ERGON_API unsigned ergon_edit_distance(const char *a, const char *b);
/* The candidate (of n; NULL entries skipped) nearest to name when it is a
 * plausible typo: at most a third of the name's length (and at least 2
 * edits) away. NULL when none is that close. */
ERGON_API const char *ergon_suggest_nearest(const char *name, const char *const *cands, size_t n);
/* The same over a NULL-terminated list. */
ERGON_API const char *ergon_suggest_nearest_list(const char *name, const char *const *cands);

#ifdef __cplusplus
}
#endif

#endif
