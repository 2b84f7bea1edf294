/* Bounded, strict number parsing for command lines and text inputs (no
 * atoi/sscanf): the whole string must be one finite number. */
#ifndef ERGON_PARSE_H
#define ERGON_PARSE_H

#include "ergon/error.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Parse all of s as a finite double. 0 ok; ERGON_ERANGE when it underflows
 * (a magnitude under DBL_MIN, which strtod reads as 0 or a denormal: err
 * says so); ERGON_EPARSE otherwise (err names `what`). */
ERGON_API int ergon_parse_double(const char *s, const char *what, double *out,
				 struct ergon_err *err);
/* Parse s[0..len) as a double; NaN/Inf are parsed (the caller decides). 0 ok,
 * ERGON_EPARSE when the text is not entirely a number, ERGON_ERANGE when it
 * underflows (a nonzero magnitude under DBL_MIN: strtod would give 0 or a
 * denormal; an exact zero such as 0e-500 is 0). */
ERGON_API int ergon_parse_double_n(const char *s, size_t len, double *out);
/* Parse all of s as a decimal integer in [min, max]. */
ERGON_API int ergon_parse_long(const char *s, const char *what, long min, long max, long *out,
			       struct ergon_err *err);

#ifdef __cplusplus
}
#endif
#endif
