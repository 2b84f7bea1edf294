/* SHA-256, streamed, for digests of large inputs (an HPX log of hundreds of
 * MB named in an artifact's provenance). Backed by OpenSSL's libcrypto,
 * which uses the CPU's SHA instructions where there are any (libsodium's
 * portable code runs at a fifth of that on the same host:
 * docs/PERFORMANCE.md, "typed").
 */
#ifndef ERGON_SHA256_H
#define ERGON_SHA256_H

#include "ergon/error.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The context lives in the struct (libcrypto's low-level SHA256_CTX, kept
 * opaque here): starting a digest allocates nothing, so it cannot fail for
 * want of memory. */
struct ergon_sha256 {
	union {
		unsigned char bytes[128];
		uint64_t align;
	} ctx;
	uint64_t bytes;
	int started;
};

/* Start a digest (0; it cannot fail, the error is kept for the interface).
 * ergon_sha256_cleanup is safe on a zeroed struct and after final. */
ERGON_API int ergon_sha256_init(struct ergon_sha256 *s, struct ergon_err *err);
ERGON_API int ergon_sha256_update(struct ergon_sha256 *s, const void *data, size_t len,
				  struct ergon_err *err);
/* The digest as 64 lower-case hex digits and a NUL. The context is done. */
ERGON_API int ergon_sha256_final_hex(struct ergon_sha256 *s, char hex[65], struct ergon_err *err);
ERGON_API void ergon_sha256_cleanup(struct ergon_sha256 *s);
/* The digest of what fd reads from where it stands to its end, in 1 MiB
 * chunks; *bytes how many bytes that was; name names it in messages. The
 * caller opens and closes fd. */
ERGON_API int ergon_sha256_fd_hex(int fd, const char *name, char hex[65], uint64_t *bytes,
				  struct ergon_err *err);
/* The digest of a whole file, read in 1 MiB chunks; *bytes its size. */
ERGON_API int ergon_sha256_file_hex(const char *path, char hex[65], uint64_t *bytes,
				    struct ergon_err *err);

#ifdef __cplusplus
}
#endif
#endif
