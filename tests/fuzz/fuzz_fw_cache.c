/* Fuzz the firmware object cache's reader (ergon_fw_cache_get,
 * src/pipelines/common/fw_cache.c; docs/internals/fw_cache.md): the input
 * is a cache entry's bytes, planted at a key's path. Properties: an entry
 * is used only when whole: then the object written out is exactly the
 * bytes after the header's line, their SHA-256 is the one reported, and the
 * header says that digest and that length; anything else is a miss and the
 * entry is gone (to be rebuilt), never an object. And a round trip: the
 * input stored as an object (ergon_fw_cache_put) reads back byte for byte. */
#include "ergon/fileio.h"
#include "ergon/jcs.h"
#include "fuzz_props.h"
#include "pipelines/common/common.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[64], entry[PATH_MAX], dest[PATH_MAX], src[PATH_MAX];
static const char key[] = "ab00000000000000000000000000000000000000000000000000000000000001";

static void cleanup(void)
{
	char dir[PATH_MAX];
	unlink(entry);
	unlink(dest);
	unlink(src);
	snprintf(dir, sizeof dir, "%s/objects/ab", root);
	rmdir(dir);
	snprintf(dir, sizeof dir, "%s/objects", root);
	rmdir(dir);
	rmdir(root);
}

static void setup(void)
{
	if (root[0])
		return;
	atexit(cleanup);
	snprintf(root, sizeof root, "/tmp/fuzz_fw_cache.%ld", (long)getpid());
	char dir[128];
	snprintf(dir, sizeof dir, "%s/objects/ab", root);
	struct ergon_err err = {0};
	FUZZ_REQUIRE(ergon_mkdir_p(dir, &err) == 0);
	snprintf(entry, sizeof entry, "%s/%s.o", dir, key);
	snprintf(dest, sizeof dest, "%s/dest.o", root);
	snprintf(src, sizeof src, "%s/src.o", root);
}

static int write_file(const char *path, const uint8_t *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	int ok = fwrite(p, 1, n, f) == n;
	return fclose(f) == 0 && ok ? 0 : -1;
}

static uint8_t *read_file(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	uint8_t *buf = malloc(1 << 20);
	*n = buf ? fread(buf, 1, 1 << 20, f) : 0;
	fclose(f);
	return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	setup();
	FUZZ_REQUIRE(write_file(entry, data, size) == 0);
	unlink(dest);
	char sha[65] = "";
	int found = -1;
	struct ergon_err err = {0};
	FUZZ_REQUIRE(ergon_fw_cache_get(root, key, dest, sha, &found, &err) == 0);
	if (found) {
		size_t n = 0;
		uint8_t *obj = read_file(dest, &n);
		FUZZ_REQUIRE(obj != NULL && n <= size);
		/* The object is the input's tail, after one header line. */
		FUZZ_REQUIRE(memcmp(obj, data + size - n, n) == 0);
		FUZZ_REQUIRE(size - n >= 1 && data[size - n - 1] == '\n');
		char head[160], want[65];
		ergon_sha256_hex(obj, n, want);
		FUZZ_REQUIRE(strcmp(sha, want) == 0);
		int hl = snprintf(head, sizeof head, "ergon-fw-object 1 sha256=%s bytes=%zu\n", want,
				  n);
		FUZZ_REQUIRE((size_t)hl == size - n && memcmp(head, data, (size_t)hl) == 0);
		free(obj);
	} else {
		FUZZ_REQUIRE(found == 0);
		FUZZ_REQUIRE(access(entry, F_OK) != 0); /* removed: rebuilt next time */
		FUZZ_REQUIRE(access(dest, F_OK) != 0);	/* nothing written out */
	}

	/* The round trip. */
	unlink(entry);
	unlink(dest);
	FUZZ_REQUIRE(write_file(src, data, size) == 0);
	ergon_fw_cache_put(root, key, src);
	FUZZ_REQUIRE(ergon_fw_cache_get(root, key, dest, sha, &found, &err) == 0 && found == 1);
	size_t n = 0;
	uint8_t *back = read_file(dest, &n);
	FUZZ_REQUIRE(back != NULL && n == size && memcmp(back, data, size) == 0);
	free(back);
	return 0;
}
