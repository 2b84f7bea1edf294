/* Streamed SHA-256 over libcrypto's low-level SHA256_* (deprecated in
 * OpenSSL 3 in favour of EVP, still supported): the same SHA-NI code as
 * EVP's, but no provider to fetch, so no allocation that can fail and no
 * lazy library set-up (EVP crashes in OpenSSL 3.0 when an allocation of
 * its first fetch fails: tests/functional/test_reliab_faultinj_verify.sh). */
#define OPENSSL_SUPPRESS_DEPRECATED
#include "ergon/sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/sha.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

_Static_assert(sizeof(SHA256_CTX) <= sizeof(((struct ergon_sha256 *)0)->ctx),
	       "struct ergon_sha256 holds a SHA256_CTX");
_Static_assert(_Alignof(SHA256_CTX) <= _Alignof(uint64_t),
	       "struct ergon_sha256's context is aligned for a SHA256_CTX");

static SHA256_CTX *ctx_of(struct ergon_sha256 *s)
{
	return (SHA256_CTX *)(void *)s->ctx.bytes;
}

#define FILE_CHUNK ((size_t)1 << 20)

int ergon_sha256_init(struct ergon_sha256 *s, struct ergon_err *err)
{
	(void)err;
	s->bytes = 0;
	s->started = SHA256_Init(ctx_of(s)) == 1;
	return 0;
}

int ergon_sha256_update(struct ergon_sha256 *s, const void *data, size_t len, struct ergon_err *err)
{
	if (!s->started)
		return ergon_err_set(err, ERGON_EIO, "sha256: digest not started");
	SHA256_Update(ctx_of(s), data, len);
	s->bytes += len;
	return 0;
}

int ergon_sha256_final_hex(struct ergon_sha256 *s, char hex[65], struct ergon_err *err)
{
	static const char digits[] = "0123456789abcdef";
	unsigned char d[SHA256_DIGEST_LENGTH];
	if (!s->started)
		return ergon_err_set(err, ERGON_EIO, "sha256: digest not started");
	SHA256_Final(d, ctx_of(s));
	s->started = 0;
	for (unsigned int i = 0; i < SHA256_DIGEST_LENGTH; i++) {
		hex[2 * i] = digits[d[i] >> 4];
		hex[2 * i + 1] = digits[d[i] & 15];
	}
	hex[64] = '\0';
	return 0;
}

void ergon_sha256_cleanup(struct ergon_sha256 *s)
{
	memset(s, 0, sizeof(*s));
}

int ergon_sha256_fd_hex(int fd, const char *name, char hex[65], uint64_t *bytes,
			struct ergon_err *err)
{
	struct ergon_sha256 s = {0};
	char *buf = NULL;
	int rc = ergon_sha256_init(&s, err);
	if (rc == 0) {
		buf = malloc(FILE_CHUNK);
		if (buf == NULL)
			rc = ergon_err_set(err, ERGON_ENOMEM, "%s: out of memory", name);
	}
	while (rc == 0) {
		ssize_t n = read(fd, buf, FILE_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = ergon_err_errno(err, errno, "%s: read failed", name);
			break;
		}
		if (n == 0)
			break;
		rc = ergon_sha256_update(&s, buf, (size_t)n, err);
	}
	if (rc == 0)
		rc = ergon_sha256_final_hex(&s, hex, err);
	if (rc == 0)
		*bytes = s.bytes;
	ergon_sha256_cleanup(&s);
	free(buf);
	return rc;
}

int ergon_sha256_file_hex(const char *path, char hex[65], uint64_t *bytes, struct ergon_err *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ergon_err_errno(err, errno, "%s: cannot open to digest it", path);
	int rc = ergon_sha256_fd_hex(fd, path, hex, bytes, err);
	close(fd);
	return rc;
}
