/* The firmware object cache (docs/internals/fw_cache.md): compiled an547
 * objects kept under $XDG_CACHE_HOME/ergon/firmware/v1 (else
 * ~/.cache/ergon/...), one file per object, named by the digest of
 * everything that made it (fw_build.c computes the key). Declared in
 * common.h.
 *
 * An entry is written whole under a temporary name in its own folder and
 * renamed into place, so a reader sees a complete entry or none. Its first
 * line carries the SHA-256 and length of the object after it; a reader
 * checks both before it uses a byte, so a damaged, truncated or foreign
 * file is a miss (and is removed), never an object. Builders of the same
 * key take its lock (flock on a file beside the entry, released by the
 * kernel when a builder dies), so concurrent commands build each object
 * once and the others use it. Writing the cache is best effort: a build
 * goes on (uncached) when the cache cannot be written.
 */
#include "pipelines/common/common.h"

#include "ergon/fileio.h"
#include "ergon/jcs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* The largest object the cache holds (an an547 object is well under 1 MiB). */
#define FW_CACHE_OBJECT_MAX ((size_t)64 << 20)
#define FW_CACHE_MAGIC "ergon-fw-object 1 sha256="

int ergon_fw_cache_dir(char *out, size_t cap, struct ergon_err *err)
{
	const char *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	int n;
	/* XDG Base Directory: a relative XDG_CACHE_HOME is invalid and ignored. */
	if (xdg && xdg[0] == '/')
		n = snprintf(out, cap, "%s/ergon/firmware/v1", xdg);
	else if (home && home[0] == '/')
		n = snprintf(out, cap, "%s/.cache/ergon/firmware/v1", home);
	else
		return ergon_err_set(err, ERGON_ENOENT,
				     "firmware cache: neither XDG_CACHE_HOME nor HOME is an absolute "
				     "path; set one, or build with --no-cache");
	if (n < 0 || (size_t)n >= cap)
		return ergon_err_set(err, ERGON_ETOOBIG, "firmware cache: the path is too long");
	return 0;
}

/* cache/objects/<k0k1>/<key><suffix> */
static int entry_path(char *out, size_t cap, const char *cache, const char *key,
		      const char *suffix)
{
	int n = snprintf(out, cap, "%s/objects/%.2s/%s%s", cache, key, key, suffix);
	return n > 0 && (size_t)n < cap ? 0 : -1;
}

static void sha256_hex(const void *p, size_t n, char hex[65])
{
	ergon_sha256_hex(p, n, hex);
}

/* The object of an entry's text: *obj and *len inside data, after its
 * header, when the header is whole and the object's length and digest are
 * what it says; else -1. */
static int entry_object(const char *data, size_t len, const char **obj, size_t *olen,
			char sha[65])
{
	const size_t ml = sizeof FW_CACHE_MAGIC - 1;
	if (len < ml + 64 + 8 || memcmp(data, FW_CACHE_MAGIC, ml) != 0)
		return -1;
	const char *p = data + ml, *end = data + len;
	for (int i = 0; i < 64; i++)
		if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
			return -1;
	memcpy(sha, p, 64);
	sha[64] = '\0';
	p += 64;
	if (end - p < 8 || memcmp(p, " bytes=", 7) != 0)
		return -1;
	p += 7;
	uint64_t n = 0;
	const char *d0 = p;
	while (p < end && *p >= '0' && *p <= '9' && p - d0 < 12)
		n = n * 10u + (uint64_t)(*p++ - '0');
	if (p == d0 || p >= end || *p != '\n')
		return -1;
	p++;
	if ((uint64_t)(end - p) != n)
		return -1;
	char got[65];
	sha256_hex(p, (size_t)n, got);
	if (strcmp(got, sha) != 0)
		return -1;
	*obj = p;
	*olen = (size_t)n;
	return 0;
}

int ergon_fw_cache_get(const char *cache, const char *key, const char *dest, char sha[65],
		       int *found, struct ergon_err *err)
{
	char path[PATH_MAX];
	*found = 0;
	if (entry_path(path, sizeof path, cache, key, ".o"))
		return 0;
	/* O_NONBLOCK: a FIFO planted at the entry's path does not hang the
	 * build; anything but a regular file is a miss. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	struct stat st;
	int regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
		      (uint64_t)st.st_size <= FW_CACHE_OBJECT_MAX + 256;
	close(fd);
	if (!regular)
		return 0;
	char *data = NULL;
	size_t len = 0;
	struct ergon_err e = {0};
	if (ergon_file_read_all(path, FW_CACHE_OBJECT_MAX + 256, &data, &len, &e) != 0)
		return 0;
	const char *obj = NULL;
	size_t olen = 0;
	int rc = 0;
	if (entry_object(data, len, &obj, &olen, sha) != 0) {
		/* Damaged or partial: never used; removed, to be built again. */
		unlink(path);
	} else {
		rc = ergon_file_write_atomic(dest, obj, olen, ERGON_WRITE_FORCE, err);
		*found = rc == 0;
	}
	free(data);
	return rc;
}

void ergon_fw_cache_put(const char *cache, const char *key, const char *src)
{
	char path[PATH_MAX], dir[PATH_MAX], tmp[PATH_MAX];
	if (entry_path(path, sizeof path, cache, key, ".o"))
		return;
	int n = snprintf(dir, sizeof dir, "%s/objects/%.2s", cache, key);
	struct ergon_err e = {0};
	if (n < 0 || (size_t)n >= sizeof dir || ergon_mkdir_p(dir, &e) != 0)
		return;
	char *data = NULL;
	size_t len = 0;
	if (ergon_file_read_all(src, FW_CACHE_OBJECT_MAX, &data, &len, &e) != 0)
		return;
	char sha[65], head[128];
	sha256_hex(data, len, sha);
	int hl = snprintf(head, sizeof head, FW_CACHE_MAGIC "%s bytes=%zu\n", sha, len);
	n = snprintf(tmp, sizeof tmp, "%s/.%s.%ld.%lx.tmp", dir, key, (long)getpid(),
		     (unsigned long)(uintptr_t)&e);
	int fd = n > 0 && (size_t)n < sizeof tmp
		     ? open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)
		     : -1;
	if (fd >= 0) {
		int ok = write(fd, head, (size_t)hl) == (ssize_t)hl;
		size_t off = 0;
		while (ok && off < len) {
			ssize_t w = write(fd, data + off, len - off);
			if (w < 0 && errno == EINTR)
				continue;
			ok = w > 0;
			off += ok ? (size_t)w : 0;
		}
		/* No fsync: an entry torn by a crash fails its digest and is
		 * built again; a complete one is renamed into place. */
		ok = close(fd) == 0 && ok;
		if (!ok || rename(tmp, path) != 0)
			unlink(tmp);
	}
	free(data);
}

int ergon_fw_cache_lock(const char *cache, const char *key, int *fd)
{
	char path[PATH_MAX], dir[PATH_MAX];
	*fd = -1;
	struct ergon_err e = {0};
	int n = snprintf(dir, sizeof dir, "%s/objects/%.2s", cache, key);
	if (n < 0 || (size_t)n >= sizeof dir || ergon_mkdir_p(dir, &e) != 0 ||
	    entry_path(path, sizeof path, cache, key, ".lock"))
		return -1;
	int f = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0644);
	if (f < 0)
		return -1;
	while (flock(f, LOCK_EX) != 0) {
		if (errno != EINTR) {
			close(f);
			return -1;
		}
	}
	*fd = f;
	return 0;
}

void ergon_fw_cache_unlock(int fd)
{
	if (fd >= 0)
		close(fd); /* releases the flock */
}
