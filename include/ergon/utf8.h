/* UTF-8 repair for text from devices and logs. */
#ifndef ERGON_UTF8_H
#define ERGON_UTF8_H

#include "ergon/error.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Copy s[0..n) to out (at most cap bytes, cut on a character boundary) with
 * invalid UTF-8 and NUL replaced by U+FFFD (3 bytes: cap = 3 n always
 * suffices); returns the bytes written. out is not NUL-terminated. */
ERGON_API size_t ergon_utf8_repair(const char *s, size_t n, char *out, size_t cap);

/* The NUL-terminated s into out (cap bytes, NUL-terminated, cut on a
 * character boundary) with every byte that is not UTF-8 written as the
 * four characters \xNN, so a message quoting raw input stays valid UTF-8
 * and still shows the byte. */
ERGON_API void ergon_utf8_escape(const char *s, char *out, size_t cap);

/* Bytes of the valid UTF-8 character at s (n >= 1 bytes readable there), or
 * 0 when it is not one: RFC 3629, so no overlong forms, no surrogates,
 * nothing above U+10FFFF. NUL is a valid one-byte character here. */
ERGON_API size_t ergon_utf8_len(const char *s, size_t n);

#ifdef __cplusplus
}
#endif
#endif
