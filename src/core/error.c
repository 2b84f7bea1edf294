/* Error codes, messages and the first-error context. */
#include "ergon/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *ergon_strerror_name(int code)
{
	switch (code) {
	case ERGON_OK:
		return "OK";
#define X(name, value, cls, msg)                                                     \
	case value:                                                                  \
		return #name;
		ERGON_ERRNO_MAP(X)
#undef X
	default:
		return "EUNKNOWN";
	}
}

const char *ergon_strerror(int code)
{
	switch (code) {
	case ERGON_OK:
		return "success";
#define X(name, value, cls, msg)                                                     \
	case value:                                                                  \
		return msg;
		ERGON_ERRNO_MAP(X)
#undef X
	default:
		return "unknown error";
	}
}

int ergon_exit_code(int code)
{
	switch (code) {
	case ERGON_OK:
		return 0;
#define X(name, value, cls, msg)                                                     \
	case value:                                                                  \
		return cls;
		ERGON_ERRNO_MAP(X)
#undef X
	default:
		return 3;
	}
}

int ergon_verdict_exit_code(int verdict)
{
	switch (verdict) {
	case ERGON_VERDICT_VALID:
		return 0;
	case ERGON_VERDICT_DEGRADED:
		return 4;
	default:
		return 1;
	}
}

int ergon_exit_code_at(size_t i, int *code, const char **name, const char **meaning)
{
	static const struct {
		int code;
		const char *name, *meaning;
	} rows[] = {
#define X(c, n, m) {c, n, m},
	    ERGON_EXIT_CODES(X)
#undef X
	};
	if (i >= sizeof(rows) / sizeof(rows[0]))
		return 0;
	if (code)
		*code = rows[i].code;
	if (name)
		*name = rows[i].name;
	if (meaning)
		*meaning = rows[i].meaning;
	return 1;
}

static int err_vset(struct ergon_err *err, int code, const char *fmt, va_list ap)
{
	if (err == NULL || err->code != 0)
		return code;
	err->code = code;
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	return code;
}

int ergon_err_set(struct ergon_err *err, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	err_vset(err, code, fmt, ap);
	va_end(ap);
	return code;
}

int ergon_err_from_errno(int errnum)
{
	switch (errnum) {
	case 0:
		return ERGON_OK;
	case ENOMEM:
		return ERGON_ENOMEM;
	case ENOENT:
	case ENOTDIR:
	case ENODEV:
	case ENXIO:
		return ERGON_ENOENT;
	case EACCES:
	case EPERM:
	case EROFS:
		return ERGON_EACCES;
	case EEXIST:
		return ERGON_EEXIST;
	case ETIMEDOUT:
		return ERGON_ETIMEDOUT;
	case EINTR:
		return ERGON_EINTR;
	case EINVAL:
		return ERGON_EUSAGE;
	case EFBIG:
		return ERGON_ETOOBIG;
	default:
		return ERGON_EIO;
	}
}

int ergon_err_errno(struct ergon_err *err, int errnum, const char *fmt, ...)
{
	int code = ergon_err_from_errno(errnum);
	if (err == NULL || err->code != 0)
		return code;
	char what[ERGON_ERR_MSG_MAX / 2];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return ergon_err_set(err, code, "%s: %s", what, strerror(errnum));
}

void ergon_err_clear(struct ergon_err *err)
{
	if (err == NULL)
		return;
	err->code = 0;
	err->msg[0] = '\0';
}
