/* Detect allocation failures inside jansson.
 *
 * ergon_json_alloc_watch() routes jansson's allocations through a counter
 * (once per process; the same malloc and free underneath).
 * ergon_json_alloc_failures() is the number of failed ones since: a
 * pipeline compares it before and after building a document, and treats a
 * change as out of memory, because jansson's builders (append, set) drop a
 * value on a failed allocation without the caller necessarily noticing.
 */
#ifndef ERGON_JSON_ALLOC_H
#define ERGON_JSON_ALLOC_H

#include "ergon/error.h"

#ifdef __cplusplus
extern "C" {
#endif

ERGON_API void ergon_json_alloc_watch(void);
ERGON_API unsigned long ergon_json_alloc_failures(void);

#ifdef __cplusplus
}
#endif
#endif
