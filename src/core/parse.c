/* Strict number parsing: the whole text is one number or it is refused. */
#include "ergon/parse.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int ergon_parse_double_n(const char *s, size_t len, double *out)
{
	char buf[64];
	/* Trim surrounding blanks; anything else left over is an error. */
	while (len && (*s == ' ' || *s == '\t'))
		s++, len--;
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\r'))
		len--;
	if (len == 0 || len >= sizeof(buf))
		return ERGON_EPARSE;
	memcpy(buf, s, len);
	buf[len] = '\0';
	char *end = NULL;
	errno = 0;
	double v = strtod(buf, &end);
	if (end != buf + len)
		return ERGON_EPARSE;
	/* A magnitude under DBL_MIN underflows: strtod gives 0 (1e-400) or a
	 * denormal with fewer digits than written (1e-310), both with ERANGE.
	 * Either would be taken as a value the text does not say (1e-400 as
	 * 0), so both are refused; an exact zero (0e-500) sets no ERANGE. An
	 * overflow gives +-Inf, which the caller refuses as not finite. */
	if ((errno == ERANGE && isfinite(v)) || fpclassify(v) == FP_SUBNORMAL)
		return ERGON_ERANGE;
	*out = v;
	return 0;
}

int ergon_parse_double(const char *s, const char *what, double *out, struct ergon_err *err)
{
	double v;
	int rc = s != NULL ? ergon_parse_double_n(s, strlen(s), &v) : ERGON_EPARSE;
	if (rc == ERGON_ERANGE)
		return ergon_err_set(err, ERGON_ERANGE,
				     "%s: '%s' underflows: its magnitude is under %.17g (DBL_MIN, "
				     "the smallest normal double), so it would be read as 0 or a "
				     "denormal; write 0 or a value of at least that magnitude",
				     what, s, DBL_MIN);
	if (rc != 0 || !isfinite(v))
		return ergon_err_set(err, ERGON_EPARSE, "%s: '%s' is not a finite number", what,
				     s ? s : "");
	*out = v;
	return 0;
}

int ergon_parse_long(const char *s, const char *what, long min, long max, long *out,
		     struct ergon_err *err)
{
	char *end = NULL;
	errno = 0;
	long v = s && *s ? strtol(s, &end, 10) : 0;
	if (s == NULL || *s == '\0' || *end != '\0' || errno == ERANGE)
		return ergon_err_set(err, ERGON_EPARSE, "%s: '%s' is not an integer", what,
				     s ? s : "");
	if (v < min || v > max)
		return ergon_err_set(err, ERGON_ERANGE, "%s: %ld is outside [%ld, %ld]", what, v,
				     min, max);
	*out = v;
	return 0;
}
