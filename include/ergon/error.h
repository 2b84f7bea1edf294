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

/* What a written artifact's figures amount to; the exit code of every
 * command that writes one follows from it (ergon_verdict_exit_code). */
enum ergon_verdict_kind {
	ERGON_VERDICT_VALID = 1,    /* every figure published (warnings allowed) */
	ERGON_VERDICT_DEGRADED = 2, /* written, but some figures withheld */
	ERGON_VERDICT_INVALID = 3,  /* the measurement is invalid */
};

/* The CLI's exit codes, one table: X(code, name, meaning). The verdict
 * mapping, `ergon help exit-codes`, every command's --help (and so the man
 * pages) print from it; README.md's table is checked against it
 * (functional/test_exit_codes). */
#define ERGON_EXIT_CODES(X)                                                  \
	X(0, "valid",                                                        \
	  "every figure was published; warnings are allowed (a THROTTLED "   \
	  "verdict is a finding, not a fault)")                              \
	X(4, "degraded",                                                     \
	  "the artifact was written but some figures were withheld "         \
	  "(its issues say which and why)")                                  \
	X(1, "invalid",                                                      \
	  "the measurement is invalid, or it was refused (nothing "          \
	  "usable: the artifact, when written, says why)")                   \
	X(2, "usage", "usage or configuration error (nothing was measured)") \
	X(3, "io", "I/O or device error")

/* Exit code of a verdict: 0 valid, 4 degraded, 1 invalid (1 for anything
 * else: an unknown verdict is never reported as a success). */
ERGON_API int ergon_verdict_exit_code(int verdict);
/* The i-th row (0-based) of ERGON_EXIT_CODES: its code, name and meaning;
 * 0 past the end, else 1. */
ERGON_API int ergon_exit_code_at(size_t i, int *code, const char **name, const char **meaning);

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
