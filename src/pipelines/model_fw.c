/* Building the an547 firmware with a model embedded, and running its infer
 * build under QEMU (include/ergon/model_fw.h). The compiler runs through
 * ergon_lifecycle_run_tool (bounded time, output to a log beside the ELF). */
#include "ergon/model_fw.h"

#include "ergon/fileio.h"
#include "ergon/lifecycle.h"
#include "fw_build.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef ERGON_TARGET_DIR
#define ERGON_TARGET_DIR "target"
#endif

#define ARM_GCC "arm-none-eabi-gcc"
#define BUILD_TIMEOUT_S 600.0
#define QEMU_TIMEOUT_S 600.0
#define MAX_ARGS 96
/* Firmware code and constant data besides the model (measured: ~32 KiB at
 * -O2 for the profile build), kept with margin for the fit check. */
#define FW_CODE_RESERVE (64u * 1024u)
/* DTCM besides the arena and the model tables: the UART stream buffer
 * (48 KiB), the stack (16 KiB) and the layer records. */
#define FW_RAM_RESERVE (48u * 1024u + 16u * 1024u + 8u * 1024u)

uint64_t ergon_model_fnv1a64(const uint8_t *p, size_t n)
{
	uint64_t h = 14695981039346656037u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211u;
	return h;
}

const char *ergon_fw_target_dir(void)
{
	const char *e = getenv("ERGON_TARGET_DIR");
	return e && e[0] ? e : ERGON_TARGET_DIR;
}

static const char *kind_name(enum ergon_model_fw_kind k)
{
	return k == ERGON_MODEL_FW_PROFILE ? "profile"
	       : k == ERGON_MODEL_FW_POWER ? "power"
					   : "infer";
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

static int fit_check(const struct ergon_model *m, size_t input_len, struct ergon_err *err)
{
	const struct ert_tfl_model *t = ergon_model_tfl(m);
	size_t len = 0;
	(void)ergon_model_bytes(m, &len);
	uint64_t flash = (uint64_t)len + input_len + FW_CODE_RESERVE;
	uint64_t ram = (uint64_t)t->arena_bytes + sizeof(struct ert_tfl_model) + FW_RAM_RESERVE;
	if (flash > ERGON_AN547_ITCM_BYTES)
		return ergon_err_set(err, ERGON_ETOOBIG,
				     "%s does not fit the an547 firmware: the model (%zu bytes), "
				     "its input (%zu) and ~%u bytes of code need %llu bytes of the "
				     "512 KiB ITCM (%u bytes), %llu too many; use a smaller model "
				     "or a board port with more flash",
				     ergon_model_path(m), len, input_len, FW_CODE_RESERVE,
				     (unsigned long long)flash, ERGON_AN547_ITCM_BYTES,
				     (unsigned long long)(flash - ERGON_AN547_ITCM_BYTES));
	if (ram > ERGON_AN547_DTCM_BYTES)
		return ergon_err_set(err, ERGON_ETOOBIG,
				     "%s does not fit the an547 firmware: its %u-byte arena, the "
				     "interpreter's tables (%zu) and the firmware's buffers (%u) "
				     "need %llu bytes of the 512 KiB DTCM (%u bytes)",
				     ergon_model_path(m), (unsigned)t->arena_bytes,
				     sizeof(struct ert_tfl_model), FW_RAM_RESERVE,
				     (unsigned long long)ram, ERGON_AN547_DTCM_BYTES);
	return 0;
}

int ergon_model_fw_build(const struct ergon_model *m, const char *dir,
			 enum ergon_model_fw_kind kind, const uint8_t *input, size_t input_len,
			 json_t **build, struct ergon_err *err)
{
	*build = NULL;
	const char *kn = kind_name(kind);
	char *srcs[64] = {0};
	int n_src = 0;
	char *args[MAX_ARGS];
	int n = 0;
	char path[PATH_MAX], elf[PATH_MAX], map[PATH_MAX], log[PATH_MAX], incdir[PATH_MAX];
	char absdir[1024], resolved[PATH_MAX], tmp[PATH_MAX * 2], gcc_inc[PATH_MAX], gcc_ver[256];
	char dflag[64];
	const char *tdir = ergon_fw_target_dir();
	size_t mlen = 0;
	const uint8_t *mbytes = ergon_model_bytes(m, &mlen);
	int rc = fit_check(m, input_len, err);
	if (!rc)
		rc = ergon_mkdir_p(dir, err);
	if (rc)
		return rc;
	if (realpath(dir, resolved) == NULL)
		return ergon_err_errno(err, errno, "%s: cannot resolve the build folder", dir);
	if (strlen(resolved) >= sizeof absdir)
		return ergon_err_set(err, ERGON_ETOOBIG, "%s: the build folder's path is too long",
				     resolved);
	memcpy(absdir, resolved, strlen(resolved) + 1);
	if (strpbrk(absdir, "\"\\\n") != NULL)
		return ergon_err_set(err, ERGON_EUSAGE,
				     "%s: the build folder's path may not contain quotes, "
				     "backslashes or newlines (it goes into an .incbin)",
				     absdir);
	/* The model and the input as files, pulled in by the assembler. */
	snprintf(path, sizeof path, "%s/model.tflite", absdir);
	rc = ergon_file_write_atomic(path, mbytes, mlen, ERGON_WRITE_FORCE, err);
	snprintf(path, sizeof path, "%s/input-%s.bin", absdir, kn);
	if (!rc)
		rc = ergon_file_write_atomic(path, input, input_len, ERGON_WRITE_FORCE, err);
	snprintf(tmp, sizeof tmp,
		 "/* Generated by ergon (src/pipelines/model_fw.c): the model and input\n"
		 " * embedded in the an547 %s firmware. */\n"
		 "\t.section .rodata.ert_model, \"a\"\n\t.balign 16\n"
		 "\t.global ert_model_data\n\t.global ert_model_end\n"
		 "ert_model_data:\n\t.incbin \"%s/model.tflite\"\nert_model_end:\n"
		 "\t.balign 16\n\t.global ert_input_data\n\t.global ert_input_end\n"
		 "ert_input_data:\n\t.incbin \"%s/input-%s.bin\"\nert_input_end:\n",
		 kn, absdir, absdir, kn);
	char asm_path[PATH_MAX];
	snprintf(asm_path, sizeof asm_path, "%s/model_data_%s.S", absdir, kn);
	if (!rc)
		rc = ergon_file_write_atomic(asm_path, tmp, strlen(tmp), ERGON_WRITE_FORCE, err);
	if (rc)
		return rc;
	rc = ergon_fw_toolchain(absdir, gcc_inc, sizeof gcc_inc, gcc_ver, sizeof gcc_ver, err);
	if (rc)
		return rc;
	snprintf(path, sizeof path, "%s/src", tdir);
	rc = ergon_fw_list_sources(path, kind == ERGON_MODEL_FW_POWER, srcs, &n_src, 48, err);
	if (rc)
		goto out;
	snprintf(elf, sizeof elf, "%s/ergon_an547_%s.elf", absdir, kn);
	snprintf(map, sizeof map, "%s/ergon_an547_%s.map", absdir, kn);
	snprintf(incdir, sizeof incdir, "%s/include", tdir);
	snprintf(dflag, sizeof dflag, "-DERT_MODEL_ARENA_BYTES=%u",
		 (unsigned)ergon_model_tfl(m)->arena_bytes);
	static const char *const flags[] = {"-mcpu=cortex-m55", "-mthumb",   "-mfloat-abi=hard",
					    "-std=c11",		"-O2",	     "-g",
					    "-ffreestanding",	"-nostdinc", "-ffunction-sections",
					    "-fdata-sections",	"-Wall",     "-Wextra",
					    "-Wconversion",	"-Werror"};
	args[n++] = strdup(ARM_GCC);
	for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
		args[n++] = strdup(flags[i]);
	args[n++] = strdup("-isystem");
	args[n++] = strdup(gcc_inc);
	if (asprintf(&args[n++], "-I%s", incdir) < 0 ||
	    asprintf(&args[n++], "-I%s/port/an547", tdir) < 0)
		args[n - 1] = NULL;
	args[n++] = strdup(dflag);
	if (kind == ERGON_MODEL_FW_POWER)
		args[n++] = strdup("-DERT_POWER_BUILD=1");
	if (kind == ERGON_MODEL_FW_INFER)
		args[n++] = strdup("-DERT_TFL_INFER_BUILD=1");
	/* ERGON_TFL_KERNELS=mve: the interpreter calls the Helium kernels. */
	const char *kernels = getenv("ERGON_TFL_KERNELS");
	kernels = kernels && kernels[0] ? kernels : "ref";
	if (strcmp(kernels, "mve") == 0) {
		args[n++] = strdup("-DERT_TFL_MVE=1");
	} else if (strcmp(kernels, "ref") != 0) {
		rc =
		    ergon_err_set(err, ERGON_EUSAGE,
				  "ERGON_TFL_KERNELS=%s: unknown kernel set (ref or mve)", kernels);
		goto out;
	}
	for (int i = 0; i < n_src; i++)
		args[n++] = strdup(srcs[i]);
	static const char *const port[] = {"port.c", "libc_min.c", "startup.S",
					   "tflite/tflite_main.c"};
	for (size_t i = 0; i < sizeof port / sizeof port[0]; i++)
		if (asprintf(&args[n++], "%s/port/an547/%s", tdir, port[i]) < 0)
			args[n - 1] = NULL;
	args[n++] = strdup(asm_path);
	args[n++] = strdup("-nostdlib");
	args[n++] = strdup("-T");
	if (asprintf(&args[n++], "%s/port/an547/an547.ld", tdir) < 0)
		args[n - 1] = NULL;
	args[n++] = strdup("-Wl,--gc-sections");
	args[n++] = strdup("-lgcc");
	if (asprintf(&args[n++], "-Wl,-Map=%s", map) < 0)
		args[n - 1] = NULL;
	args[n++] = strdup("-o");
	args[n++] = strdup(elf);
	args[n] = NULL;
	for (int i = 0; i < n; i++)
		if (args[i] == NULL) {
			rc = ergon_err_set(err, ERGON_ENOMEM, "out of memory");
			goto out;
		}
	snprintf(log, sizeof log, "%s/build-%s.log", absdir, kn);
	remove(log);
	rc = ergon_lifecycle_run_tool((const char *const *)args, log, BUILD_TIMEOUT_S, err);
	if (rc) {
		/* The linker names the region that overflowed and by how much. */
		char *text = NULL;
		size_t tl = 0;
		struct ergon_err e2 = {0};
		if (ergon_file_read_all(log, 1 << 20, &text, &tl, &e2) == 0 &&
		    strstr(text, "overflowed by") != NULL) {
			char *p = strstr(text, "region");
			size_t l = p ? strcspn(p, "\n") : 0;
			struct ergon_err e3 = {0};
			ergon_err_set(&e3, ERGON_ETOOBIG,
				      "%s does not fit the an547 firmware: the linker says '%.*s' "
				      "(%s)",
				      ergon_model_path(m), (int)l, p ? p : "", log);
			*err = e3;
			rc = ERGON_ETOOBIG;
		}
		free(text);
		goto out;
	}
	char elf_sha[65], map_sha[65];
	rc = ergon_fw_sha256_file(elf, elf_sha, err);
	if (!rc)
		rc = ergon_fw_sha256_file(map, map_sha, err);
	if (rc)
		goto out;
	json_t *argv_json = json_array();
	for (int i = 0; i < n; i++)
		json_array_append_new(argv_json, json_string(args[i]));
	char model_sha[65];
	unsigned char h[crypto_hash_sha256_BYTES];
	crypto_hash_sha256(h, mbytes, mlen);
	for (size_t i = 0; i < sizeof h; i++)
		snprintf(model_sha + 2 * i, 3, "%02x", h[i]);
	json_t *b = json_pack("{s:s,s:s,s:s,s:s,s:o,s:s,s:s,s:s,s:s,s:s,s:I,s:I,s:I}", "kind", kn,
			      "board", "qemu-an547", "kernels", kernels, "compiler", gcc_ver,
			      "command", argv_json, "elf", elf, "elf_sha256", elf_sha, "link_map",
			      map, "link_map_sha256", map_sha, "model_sha256", model_sha,
			      "model_bytes", (json_int_t)mlen, "input_bytes", (json_int_t)input_len,
			      "arena_bytes", (json_int_t)ergon_model_tfl(m)->arena_bytes);
	if (b == NULL) {
		rc = ergon_err_set(err, ERGON_ENOMEM, "out of memory");
		goto out;
	}
	char *s = json_dumps(b, JSON_INDENT(2));
	snprintf(path, sizeof path, "%s/build-%s.json", absdir, kn);
	rc = s ? ergon_file_write_atomic(path, s, strlen(s), ERGON_WRITE_FORCE, err)
	       : ergon_err_set(err, ERGON_ENOMEM, "out of memory");
	free(s);
	if (rc)
		json_decref(b);
	else
		*build = b;
out:
	for (int i = 0; i < n; i++)
		free(args[i]);
	for (int i = 0; i < n_src; i++)
		free(srcs[i]);
	return rc;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int ergon_model_fw_infer_qemu(const struct ergon_model *m, const uint8_t *input, size_t input_len,
			      const char *work_dir, uint8_t **out, size_t *out_len,
			      struct ergon_err *err)
{
	*out = NULL;
	*out_len = 0;
	json_t *build = NULL;
	int rc =
	    ergon_model_fw_build(m, work_dir, ERGON_MODEL_FW_INFER, input, input_len, &build, err);
	if (rc)
		return rc;
	const char *elf = json_string_value(json_object_get(build, "elf"));
	char log[PATH_MAX];
	snprintf(log, sizeof log, "%s/qemu-infer.log", work_dir);
	remove(log);
	const char *argv[] = {ERGON_QEMU_AN547_ARGV, "-kernel", elf, NULL};
	rc = ergon_lifecycle_run_tool(argv, log, QEMU_TIMEOUT_S, err);
	char *text = NULL;
	size_t tl = 0;
	struct ergon_err e2 = {0};
	int have_log = ergon_file_read_all(log, 16u << 20, &text, &tl, &e2) == 0;
	const char *errline = have_log ? strstr(text, "ERGON_TFL_ERROR ") : NULL;
	if (errline != NULL) {
		size_t l = strcspn(errline, "\n");
		rc = ergon_err_set(err, ERGON_EDEVICE,
				   "%s on qemu-an547: the firmware refused the "
				   "model: %.*s",
				   ergon_model_path(m), (int)l, errline + 16);
	} else if (rc == 0) {
		const char *p = have_log ? strstr(text, "ERGON_TFL_OUTPUT ") : NULL;
		uint32_t want = 0;
		(void)ert_tfl_output(ergon_model_tfl(m), 0, &want);
		uint8_t *o = malloc(want > 0 ? want : 1);
		size_t k = 0;
		if (p != NULL && o != NULL) {
			p += 17;
			while (k < want && hexval(p[0]) >= 0 && hexval(p[1]) >= 0) {
				o[k++] = (uint8_t)(hexval(p[0]) * 16 + hexval(p[1]));
				p += 2;
			}
		}
		if (o == NULL || k != want) {
			free(o);
			rc =
			    ergon_err_set(err, ERGON_EDEVICE,
					  "%s on qemu-an547: expected %u output bytes on the UART, "
					  "got %zu; QEMU's output is in %s",
					  ergon_model_path(m), (unsigned)want, k, log);
		} else {
			*out = o;
			*out_len = k;
		}
	}
	free(text);
	json_decref(build);
	return rc;
}

int ergon_model_fw_prepare_profile(const char *path, const char *fw_dir, int with_power,
				   json_t **model, struct ergon_err *err)
{
	*model = NULL;
	struct ergon_model *m = NULL;
	json_t *builds = json_array(), *b = NULL;
	uint8_t *input = NULL;
	int rc = ergon_model_open(path, &m, err);
	if (rc)
		goto out;
	const struct ert_tfl_model *t = ergon_model_tfl(m);
	uint32_t in_len = 0;
	(void)ert_tfl_input(t, 0, &in_len);
	input = malloc(in_len > 0 ? in_len : 1);
	if (input == NULL || builds == NULL) {
		rc = ergon_err_set(err, ERGON_ENOMEM, "out of memory");
		goto out;
	}
	rc = ergon_model_pattern("xs1", input, in_len, err);
	if (!rc)
		rc = ergon_model_set_input(m, input, in_len, "the pattern", err);
	if (!rc)
		rc = ergon_model_invoke(m, err);
	if (rc)
		goto out;
	size_t out_len = 0;
	const uint8_t *out = ergon_model_output(m, &out_len);
	char fnv[24];
	snprintf(fnv, sizeof fnv, "%016llx", (unsigned long long)ergon_model_fnv1a64(out, out_len));
	rc = ergon_model_fw_build(m, fw_dir, ERGON_MODEL_FW_PROFILE, input, in_len, &b, err);
	if (rc)
		goto out;
	json_array_append_new(builds, b);
	if (with_power) {
		rc = ergon_model_fw_build(m, fw_dir, ERGON_MODEL_FW_POWER, input, in_len, &b, err);
		if (rc)
			goto out;
		json_array_append_new(builds, b);
	}
	size_t mlen = 0;
	(void)ergon_model_bytes(m, &mlen);
	*model = json_pack(
	    "{s:s,s:s?,s:I,s:I,s:I,s:I,s:{s:s,s:I},s:{s:I,s:s},s:O}", "path", path, "sha256",
	    json_string_value(json_object_get(json_array_get(builds, 0), "model_sha256")), "bytes",
	    (json_int_t)mlen, "operators", (json_int_t)t->n_ops, "macs", (json_int_t)t->total_macs,
	    "arena_bytes", (json_int_t)t->arena_bytes, "input", "pattern",
	    "xs1 (xorshift32 seeded 1, byte = state >> 24)", "bytes", (json_int_t)in_len,
	    "host_output", "bytes", (json_int_t)out_len, "fnv1a64", fnv, "builds", builds);
	if (*model == NULL)
		rc = ergon_err_set(err, ERGON_ENOMEM, "out of memory");
out:
	json_decref(builds);
	free(input);
	ergon_model_free(m);
	return rc;
}
