/* Building an an547 (Cortex-M55) firmware with arm-none-eabi-gcc: the
 * toolchain queries, the target sources and the one compile-and-link
 * command shared by the model firmware (model_fw.c) and the kernel
 * firmware (kernels_qemu.c); declared in common.h. */
#include "pipelines/common/common.h"

#include "ergon/fileio.h"
#include "ergon/lifecycle.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef ERGON_TARGET_DIR
#define ERGON_TARGET_DIR "target"
#endif

#define ARM_GCC "arm-none-eabi-gcc"
#define BUILD_TIMEOUT_S 600.0
#define MAX_ARGS 96

const char *ergon_fw_target_dir(void)
{
	const char *e = getenv("ERGON_TARGET_DIR");
	return e && e[0] ? e : ERGON_TARGET_DIR;
}

static int first_line(const char *path, char *buf, size_t cap, struct ergon_err *err)
{
	char *data = NULL;
	size_t len = 0;
	int rc = ergon_file_read_all(path, 1 << 20, &data, &len, err);
	if (rc)
		return rc;
	size_t n = strcspn(data, "\r\n");
	snprintf(buf, cap, "%.*s", (int)(n < cap ? n : cap - 1), data);
	free(data);
	return 0;
}

int ergon_fw_toolchain(const char *dir, char *inc, size_t inc_cap, char *ver, size_t ver_cap,
		       struct ergon_err *err)
{
	char log[PATH_MAX];
	/* The compiler's own (freestanding) headers only, as target/CMakeLists.txt. */
	snprintf(log, sizeof log, "%s/gcc-include.txt", dir);
	remove(log);
	const char *q1[] = {ARM_GCC, "-print-file-name=include", NULL};
	int rc = ergon_lifecycle_run_tool(q1, log, 60.0, err);
	if (!rc)
		rc = first_line(log, inc, inc_cap, err);
	snprintf(log, sizeof log, "%s/gcc-version.txt", dir);
	remove(log);
	const char *q2[] = {ARM_GCC, "--version", NULL};
	if (!rc)
		rc = ergon_lifecycle_run_tool(q2, log, 60.0, err);
	if (!rc)
		rc = first_line(log, ver, ver_cap, err);
	return rc;
}

int ergon_fw_sha256_file(const char *path, char hex[65], struct ergon_err *err)
{
	char *data = NULL;
	size_t len = 0;
	int rc = ergon_file_read_all(path, 256u << 20, &data, &len, err);
	if (rc)
		return rc;
	unsigned char h[crypto_hash_sha256_BYTES];
	crypto_hash_sha256(h, (const unsigned char *)data, len);
	for (size_t i = 0; i < sizeof h; i++)
		snprintf(hex + 2 * i, 3, "%02x", h[i]);
	free(data);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int ergon_fw_list_sources(const char *src, int power, char **out, int *n, int cap,
			  struct ergon_err *err)
{
	DIR *d = opendir(src);
	if (d == NULL)
		return ergon_err_errno(
		    err, errno,
		    "%s: cannot open ergon-target's sources; set ERGON_TARGET_DIR "
		    "to the target/ folder of the ergon source tree",
		    src);
	struct dirent *e;
	int rc = 0;
	while ((e = readdir(d)) != NULL) {
		size_t l = strlen(e->d_name);
		if (l < 3 || strcmp(e->d_name + l - 2, ".c") != 0)
			continue;
		/* The power build has no emitter and no profile flow. */
		if (power &&
		    (strcmp(e->d_name, "emit.c") == 0 || strcmp(e->d_name, "profile.c") == 0))
			continue;
		if (*n >= cap) {
			rc =
			    ergon_err_set(err, ERGON_ETOOBIG, "%s: more than %d sources", src, cap);
			break;
		}
		if (asprintf(&out[*n], "%s/%s", src, e->d_name) < 0) {
			rc = ergon_err_set(err, ERGON_ENOMEM, "out of memory");
			break;
		}
		(*n)++;
	}
	closedir(d);
	qsort(out, (size_t)*n, sizeof out[0], cmp_str);
	return rc;
}

int ergon_fw_compile(struct ergon_fw_build *b, struct ergon_err *err)
{
	char *srcs[64] = {0};
	char *args[MAX_ARGS] = {0};
	int n_src = 0, n = 0;
	char inc[PATH_MAX], path[PATH_MAX];
	const char *tdir = ergon_fw_target_dir();
	b->command = NULL;
	int rc = ergon_fw_toolchain(b->dir, inc, sizeof inc, b->compiler, sizeof b->compiler, err);
	snprintf(path, sizeof path, "%s/src", tdir);
	if (!rc)
		rc = ergon_fw_list_sources(path, b->power, srcs, &n_src, 48, err);
	if (rc)
		goto out;
	snprintf(b->elf, sizeof b->elf, "%s/ergon_an547_%s.elf", b->dir, b->name);
	snprintf(b->map, sizeof b->map, "%s/ergon_an547_%s.map", b->dir, b->name);
	snprintf(b->log, sizeof b->log, "%s/build-%s.log", b->dir, b->name);
	static const char *const flags[] = {"-mcpu=cortex-m55", "-mthumb",   "-mfloat-abi=hard",
					    "-std=c11",		"-O2",	     "-g",
					    "-ffreestanding",	"-nostdinc", "-ffunction-sections",
					    "-fdata-sections",	"-Wall",     "-Wextra",
					    "-Wconversion",	"-Werror"};
	args[n++] = strdup(ARM_GCC);
	for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
		args[n++] = strdup(flags[i]);
	args[n++] = strdup("-isystem");
	args[n++] = strdup(inc);
	if (asprintf(&args[n++], "-I%s/include", tdir) < 0 ||
	    asprintf(&args[n++], "-I%s/port/an547", tdir) < 0)
		args[n - 1] = NULL;
	for (size_t i = 0; b->defines != NULL && b->defines[i] != NULL && n < MAX_ARGS - 40; i++)
		args[n++] = strdup(b->defines[i]);
	for (int i = 0; i < n_src; i++)
		args[n++] = strdup(srcs[i]);
	for (size_t i = 0; b->port[i] != NULL && n < MAX_ARGS - 12; i++)
		if (asprintf(&args[n++], "%s/port/an547/%s", tdir, b->port[i]) < 0)
			args[n - 1] = NULL;
	if (b->extra != NULL)
		args[n++] = strdup(b->extra);
	args[n++] = strdup("-nostdlib");
	args[n++] = strdup("-T");
	if (asprintf(&args[n++], "%s/port/an547/an547.ld", tdir) < 0)
		args[n - 1] = NULL;
	args[n++] = strdup("-Wl,--gc-sections");
	args[n++] = strdup("-lgcc");
	if (asprintf(&args[n++], "-Wl,-Map=%s", b->map) < 0)
		args[n - 1] = NULL;
	args[n++] = strdup("-o");
	args[n++] = strdup(b->elf);
	for (int i = 0; i < n; i++)
		if (args[i] == NULL) {
			rc = ergon_err_set(err, ERGON_ENOMEM, "out of memory");
			goto out;
		}
	remove(b->log);
	rc = ergon_lifecycle_run_tool((const char *const *)args, b->log, BUILD_TIMEOUT_S, err);
	if (!rc)
		rc = ergon_fw_sha256_file(b->elf, b->elf_sha256, err);
	if (!rc)
		rc = ergon_fw_sha256_file(b->map, b->map_sha256, err);
	if (rc)
		goto out;
	b->command = json_array();
	for (int i = 0; i < n && b->command != NULL; i++)
		if (json_array_append_new(b->command, json_string(args[i])) != 0) {
			json_decref(b->command);
			b->command = NULL;
		}
	if (b->command == NULL)
		rc = ergon_err_set(err, ERGON_ENOMEM, "out of memory");
out:
	for (int i = 0; i < n; i++)
		free(args[i]);
	for (int i = 0; i < n_src; i++)
		free(srcs[i]);
	return rc;
}
