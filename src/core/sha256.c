/* Streamed SHA-256 over libcrypto's EVP interface (SHA-NI where the CPU has
 * it). */
#include "ergon/sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <unistd.h>

#define FILE_CHUNK ((size_t)1 << 20)

int ergon_sha256_init(struct ergon_sha256 *s, struct ergon_err *err)
{
	s->bytes = 0;
	s->md = EVP_MD_CTX_new();
	if (s->md == NULL || EVP_DigestInit_ex(s->md, EVP_sha256(), NULL) != 1)
		return ergon_err_set(err, ERGON_ENOMEM, "sha256: cannot start a digest");
	return 0;
}

int ergon_sha256_update(struct ergon_sha256 *s, const void *data, size_t len, struct ergon_err *err)
{
	if (s->md == NULL || EVP_DigestUpdate(s->md, data, len) != 1)
		return ergon_err_set(err, ERGON_EIO, "sha256: digest update failed");
	s->bytes += len;
	return 0;
}

int ergon_sha256_final_hex(struct ergon_sha256 *s, char hex[65], struct ergon_err *err)
{
	static const char digits[] = "0123456789abcdef";
	unsigned char d[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	if (s->md == NULL || EVP_DigestFinal_ex(s->md, d, &n) != 1 || n != 32)
		return ergon_err_set(err, ERGON_EIO, "sha256: digest failed");
	for (unsigned int i = 0; i < n; i++) {
		hex[2 * i] = digits[d[i] >> 4];
		hex[2 * i + 1] = digits[d[i] & 15];
	}
	hex[64] = '\0';
	return 0;
}

void ergon_sha256_cleanup(struct ergon_sha256 *s)
{
	EVP_MD_CTX_free(s->md);
	s->md = NULL;
}

int ergon_sha256_file_hex(const char *path, char hex[65], uint64_t *bytes, struct ergon_err *err)
{
	struct ergon_sha256 s = {0};
	char *buf = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ergon_err_errno(err, errno, "%s: cannot open to digest it", path);
	int rc = ergon_sha256_init(&s, err);
	if (rc == 0) {
		buf = malloc(FILE_CHUNK);
		if (buf == NULL)
			rc = ergon_err_set(err, ERGON_ENOMEM, "%s: out of memory", path);
	}
	while (rc == 0) {
		ssize_t n = read(fd, buf, FILE_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = ergon_err_errno(err, errno, "%s: read failed", path);
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
	close(fd);
	return rc;
}
