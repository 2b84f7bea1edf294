/* A typed issue list: what engines and checks return instead of JSON.
 *
 * An issue is {code, severity, message, context} as in ergon/issues.h; the
 * context is a short list of typed fields (integer, number, boolean, text,
 * list of integers) kept in order. The pipelines turn a list into the
 * artifact's JSON with ergon_issue_list_to_json, the one place issue
 * objects are made from it.
 */
#ifndef ERGON_ISSUE_LIST_H
#define ERGON_ISSUE_LIST_H

#include "ergon/error.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum ergon_issue_field_kind {
	ERGON_IF_INT = 1,
	ERGON_IF_REAL = 2,
	ERGON_IF_BOOL = 3,
	ERGON_IF_TEXT = 4, /* bytes as given; not valid UTF-8 makes the JSON context {} */
	ERGON_IF_INTS = 5, /* a list of integers */
	ERGON_IF_NULL = 6, /* null: a value that could not be known */
};

struct ergon_issue_field {
	const char *key;
	int kind; /* enum ergon_issue_field_kind */
	int64_t i;
	double d;
	const char *text;
	const int64_t *ints;
	size_t nints;
};

/* One issue; everything is owned by the list. */
struct ergon_issue_entry {
	const char *code; /* the registry's own string (static) */
	int severity;	  /* enum ergon_severity; the registry's, unless a check whose
			   * code follows the mode raised it (kept by to_json) */
	char *message;
	struct ergon_issue_field *fields;
	size_t nfields;
};

struct ergon_issue_list {
	struct ergon_issue_entry *items;
	size_t n, cap;
	int oom; /* an add ran out of memory: the list is short */
};

/* Field builders for ergon_issue_list_add. */
#define ERGON_ISSUE_INT(k, v) \
	((struct ergon_issue_field){.key = (k), .kind = ERGON_IF_INT, .i = (int64_t)(v)})
#define ERGON_ISSUE_BOOL(k, v) \
	((struct ergon_issue_field){.key = (k), .kind = ERGON_IF_BOOL, .i = (v) ? 1 : 0})
#define ERGON_ISSUE_REAL(k, v) \
	((struct ergon_issue_field){.key = (k), .kind = ERGON_IF_REAL, .d = (v)})
#define ERGON_ISSUE_NULL(k) ((struct ergon_issue_field){.key = (k), .kind = ERGON_IF_NULL})
#define ERGON_ISSUE_TEXT(k, v) \
	((struct ergon_issue_field){.key = (k), .kind = ERGON_IF_TEXT, .text = (v)})
#define ERGON_ISSUE_INTS(k, v, n) \
	((struct ergon_issue_field){.key = (k), .kind = ERGON_IF_INTS, .ints = (v), .nints = (n)})

/* Append an issue with nfields context fields (copied; fields may be NULL
 * when nfields is 0). ERGON_EUSAGE for an unregistered code (nothing is
 * added), ERGON_ENOMEM (l->oom is set). */
ERGON_API int ergon_issue_list_add(struct ergon_issue_list *l, const char *code,
				   const struct ergon_issue_field *fields, size_t nfields,
				   const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* 1 when the list holds an issue with this code. */
ERGON_API int ergon_issue_list_has(const struct ergon_issue_list *l, const char *code);
/* Release everything; the list is empty afterwards. */
ERGON_API void ergon_issue_list_cleanup(struct ergon_issue_list *l);
/* Append the issues to the JSON array `arr` as ergon_issue_add does
 * ({code, severity, message, context}). ERGON_ENOMEM. */
ERGON_API int ergon_issue_list_to_json(const struct ergon_issue_list *l, json_t *arr);
/* The other way: append the issues of a document's JSON array (`arr`,
 * {code, severity, message, context} as ergon_issue_add makes them; NULL:
 * none) to l, for a typed result read back from a written artifact. The
 * severity is the one the document states; a context value that has no
 * typed field (an object, a list of anything but integers) is left out.
 * ERGON_EPARSE when arr is not a list or an entry's code is not
 * registered (the issues before it are kept), ERGON_ENOMEM; err names the
 * entry. */
ERGON_API int ergon_issue_list_from_json(const json_t *arr, struct ergon_issue_list *l,
					 struct ergon_err *err);
/* The context field named key of an issue, or NULL. */
ERGON_API const struct ergon_issue_field *
ergon_issue_entry_field(const struct ergon_issue_entry *e, const char *key);

#ifdef __cplusplus
}
#endif
#endif
