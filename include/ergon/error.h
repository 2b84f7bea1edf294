/* ergon error codes and the first-error context.
 *
 * Every function that can fail returns int: 0 on success, a negative
 * ERGON_E* code on failure. The first failure's message, with its context
 * (input, file:line:column, field) and the fix, is kept in a struct
 * ergon_err that the caller owns; later failures do not overwrite it
 * (curl's failf, nanopb's errmsg).
 */
#ifndef ERGON_ERROR_H
#define ERGON_ERROR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ERGON_API __attribute__((visibility("default")))

/* X(name, value, exit_class, message). exit_class maps to the CLI's exit
 * codes: 1 measurement invalid or refused, 2 usage, 3 I/O or device. */
#define ERGON_ERRNO_MAP(X)                                                   \
	X(EUSAGE, -1, 2, "invalid usage or argument")                        \
	X(ENOMEM, -2, 3, "out of memory")                                    \
	X(EIO, -3, 3, "input/output error")                                  \
	X(ENOENT, -4, 3, "no such file, device or entry")                    \
	X(EACCES, -5, 3, "permission denied")                                \
	X(EEXIST, -6, 3, "already exists")                                   \
	X(EPARSE, -7, 3, "malformed input")                                  \
	X(ERANGE, -8, 2, "value out of range")                               \
	X(ENOTSUP, -9, 3, "not supported")                                   \
	X(EUNPORTED, -10, 3, "driver not yet ported to real hardware")       \
	X(ETIMEDOUT, -11, 3, "timed out")                                    \
	X(EINTR, -12, 1, "interrupted")                                      \
	X(EMEASURE, -13, 1, "measurement invalid")                           \
	X(EREFUSED, -14, 1, "refused")                                       \
	X(EVERIFY, -15, 1, "verification failed")                            \
	X(ETOOBIG, -16, 3, "input exceeds a size limit")                     \
	X(EDEVICE, -17, 3, "device error")                                   \
	X(ECONFIG, -18, 2, "configuration error")

enum ergon_errno {
	ERGON_OK = 0,
#define ERGON_ERR_ENUM(name, value, cls, msg) ERGON_##name = value,
	ERGON_ERRNO_MAP(ERGON_ERR_ENUM)
#undef ERGON_ERR_ENUM
};

#define ERGON_ERR_MSG_MAX 1024

/* The first error and its message. Zero-initialise before use. */
struct ergon_err {
	int code;
	char msg[ERGON_ERR_MSG_MAX];
};

/* Short name of an error code ("EPARSE"), never NULL. */
ERGON_API const char *ergon_strerror_name(int code);
/* One-line description of an error code, never NULL. */
ERGON_API const char *ergon_strerror(int code);
/* CLI exit code for an error: 0 ok, 1 measurement, 2 usage, 3 I/O/device. */
ERGON_API int ergon_exit_code(int code);

/* Record an error if none is recorded yet; returns code so callers can
 * write `return ergon_err_set(err, ERGON_EPARSE, "...")`. err may be NULL. */
ERGON_API int ergon_err_set(struct ergon_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Map an errno value to the nearest ERGON_E* code. */
ERGON_API int ergon_err_from_errno(int errnum);
/* Record a system error: the message is "<what>: <strerror(errnum)>". */
ERGON_API int ergon_err_errno(struct ergon_err *err, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Forget the recorded error. */
ERGON_API void ergon_err_clear(struct ergon_err *err);

#ifdef __cplusplus
}
#endif
#endif
