/* firmware/: an547 firmware with a TFLite model embedded.
 *
 * Building the an547 firmware with a model embedded, and running its infer
 * build under QEMU (include/ergon/model_fw.h). The compiler runs through
 * ergon_lifecycle_run_tool (bounded time, output to a log beside the ELF). */
#include "ergon/model_fw.h"

#include "ergon/fileio.h"
#include "ergon/lifecycle.h"
#include "pipelines/common/common.h"

#include <errno.h>
#include <limits.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define QEMU_TIMEOUT_S 600.0
/* Firmware code and constant data besides the model (measured: ~32 KiB at
 * -O2 for the profile build), kept with margin for the fit check. */
#define FW_CODE_RESERVE (64u * 1024u)
/* DTCM besides the arena and the model tables: the UART stream buffer
 * (48 KiB), the stack (16 KiB) and the layer records. */
#define FW_RAM_RESERVE (48u * 1024u + 16u * 1024u + 8u * 1024u)

static const char *kind_name(enum ergon_model_fw_kind k)
{
	return k == ERGON_MODEL_FW_PROFILE ? "profile"
	       : k == ERGON_MODEL_FW_POWER ? "power"
					   : "infer";
}

static enum ergon_fw_memory_mode memory_mode(unsigned flags)
{
	return (flags & ERGON_MODEL_FW_SHARED_SRAM) ? ERGON_FW_MEMORY_SHARED_SRAM
	       : (flags & ERGON_MODEL_FW_EXTREME_MODE) ? ERGON_FW_MEMORY_EXTREME
						       : ERGON_FW_MEMORY_DEFAULT;
}

static int fit_check(const struct ergon_model *m, size_t input_len, unsigned flags,
		     struct ergon_err *err)
{
	const struct ert_tfl_model *t = ergon_model_tfl(m);
	size_t len = 0;
	(void)ergon_model_bytes(m, &len);
	uint64_t flash = (uint64_t)len + input_len + FW_CODE_RESERVE;
	/* force_shared_sram: the arena is in the 2 MiB shared SRAM, not DTCM. */
	int shared = memory_mode(flags) == ERGON_FW_MEMORY_SHARED_SRAM;
	if (shared && t->arena_bytes > ERGON_AN547_ISRAM_BYTES)
		return ergon_err_set(err, ERGON_ETOOBIG,
				     "%s does not fit the an547 firmware with force_shared_sram: "
				     "its %u-byte arena exceeds the 2 MiB shared SRAM",
				     ergon_model_path(m), (unsigned)t->arena_bytes);
	uint64_t ram = (shared ? 0u : (uint64_t)t->arena_bytes) + sizeof(struct ert_tfl_model) +
		       FW_RAM_RESERVE;
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

/* Lowercase hex SHA-256 of p[0..n) into hex (65 bytes with the NUL). */
static void sha256_hex(const uint8_t *p, size_t n, char hex[65])
{
	unsigned char h[crypto_hash_sha256_BYTES];
	crypto_hash_sha256(h, p, n);
	for (size_t i = 0; i < sizeof h; i++)
		snprintf(hex + 2 * i, 3, "%02x", h[i]);
}

int ergon_model_fw_build(const struct ergon_model *m, const char *dir,
			 enum ergon_model_fw_kind kind, const uint8_t *input, size_t input_len,
			 unsigned flags, json_t **build, struct ergon_err *err)
{
	*build = NULL;
	const char *kn = kind_name(kind);
	char path[PATH_MAX];
	char absdir[1024], resolved[PATH_MAX], tmp[PATH_MAX * 2];
	char dflag[64];
	size_t mlen = 0;
	const uint8_t *mbytes = ergon_model_bytes(m, &mlen);
	if ((flags & ERGON_MODEL_FW_EXTREME_MODE) && (flags & ERGON_MODEL_FW_SHARED_SRAM))
		return ergon_err_set(err, ERGON_EUSAGE,
				     "extreme_mode and force_shared_sram pull the shared SRAM "
				     "opposite ways; build with one of them");
	int rc = fit_check(m, input_len, flags, err);
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
	/* The model and the input as files, pulled in by the assembler from
	 * the build folder (its working folder), by name: the generated
	 * source names no path, so its object is the same in any folder. */
	char input_name[32];
	snprintf(input_name, sizeof input_name, "input-%s.bin", kn);
	snprintf(path, sizeof path, "%s/model.tflite", absdir);
	rc = ergon_file_write_atomic(path, mbytes, mlen, ERGON_WRITE_FORCE, err);
	snprintf(path, sizeof path, "%s/%s", absdir, input_name);
	if (!rc)
		rc = ergon_file_write_atomic(path, input, input_len, ERGON_WRITE_FORCE, err);
	snprintf(tmp, sizeof tmp,
		 "/* Generated by ergon (src/pipelines/firmware/model_fw.c): the model and input\n"
		 " * embedded in the an547 %s firmware; assembled in their folder. */\n"
		 "\t.section .rodata.ert_model, \"a\"\n\t.balign 16\n"
		 "\t.global ert_model_data\n\t.global ert_model_end\n"
		 "\t.type ert_model_data, %%object\n"
		 "ert_model_data:\n\t.incbin \"model.tflite\"\nert_model_end:\n"
		 "\t.size ert_model_data, ert_model_end - ert_model_data\n"
		 "\t.balign 16\n\t.global ert_input_data\n\t.global ert_input_end\n"
		 "ert_input_data:\n\t.incbin \"%s\"\nert_input_end:\n",
		 kn, input_name);
	char asm_name[32], asm_path[PATH_MAX];
	snprintf(asm_name, sizeof asm_name, "model_data_%s.S", kn);
	snprintf(asm_path, sizeof asm_path, "%s/%s", absdir, asm_name);
	if (!rc)
		rc = ergon_file_write_atomic(asm_path, tmp, strlen(tmp), ERGON_WRITE_FORCE, err);
	if (rc)
		return rc;
	snprintf(dflag, sizeof dflag, "-DERT_MODEL_ARENA_BYTES=%u",
		 (unsigned)ergon_model_tfl(m)->arena_bytes);
	/* ERGON_TFL_KERNELS=mve: the interpreter calls the Helium kernels. */
	const char *kernels = getenv("ERGON_TFL_KERNELS");
	kernels = kernels && kernels[0] ? kernels : "ref";
	if (strcmp(kernels, "mve") != 0 && strcmp(kernels, "ref") != 0)
		return ergon_err_set(err, ERGON_EUSAGE,
				     "ERGON_TFL_KERNELS=%s: unknown kernel set (ref or mve)",
				     kernels);
	/* Only the interpreter's main file uses the arena's size: every other
	 * object is the same for every model. */
	const char *model_defines[3] = {dflag, ergon_fw_memory_define(memory_mode(flags)), NULL};
	const char *defines[4] = {NULL, NULL, NULL, NULL};
	int nd = 0;
	if (kind == ERGON_MODEL_FW_POWER)
		defines[nd++] = "-DERT_POWER_BUILD=1";
	if (kind == ERGON_MODEL_FW_INFER)
		defines[nd++] = "-DERT_TFL_INFER_BUILD=1";
	if (strcmp(kernels, "mve") == 0)
		defines[nd++] = "-DERT_TFL_MVE=1";
	static const char *const port[] = {"port.c", "libc_min.c", "startup.S",
					   "tflite/tflite_main.c", NULL};
	const char *model_files[3] = {"model.tflite", input_name, NULL};
	struct ergon_fw_build fb = {.dir = absdir,
				    .name = kn,
				    .power = kind == ERGON_MODEL_FW_POWER,
				    .defines = defines,
				    .port = port,
				    .model_unit = "tflite/tflite_main.c",
				    .model_defines = model_defines,
				    .model_data = asm_name,
				    .model_files = model_files,
				    .no_cache = (flags & ERGON_MODEL_FW_NO_CACHE) != 0};
	rc = ergon_fw_compile(&fb, err);
	if (rc) {
		/* The linker names the region that overflowed and by how much. */
		char *text = NULL;
		size_t tl = 0;
		struct ergon_err e2 = {0};
		if (ergon_file_read_all(fb.log, 1 << 20, &text, &tl, &e2) == 0 &&
		    strstr(text, "overflowed by") != NULL) {
			char *p = strstr(text, "region");
			size_t l = p ? strcspn(p, "\n") : 0;
			struct ergon_err e3 = {0};
			ergon_err_set(&e3, ERGON_ETOOBIG,
				      "%s does not fit the an547 firmware: the linker says '%.*s' "
				      "(%s)",
				      ergon_model_path(m), (int)l, p ? p : "", fb.log);
			*err = e3;
			rc = ERGON_ETOOBIG;
		}
		free(text);
		goto out;
	}
	json_t *memory = NULL;
	rc = ergon_fw_memory_record(fb.elf, memory_mode(flags), &memory, err);
	if (rc)
		goto out;
	char model_sha[65];
	sha256_hex(mbytes, mlen, model_sha);
	json_t *b = json_pack(
	    "{s:s,s:s,s:s,s:s,s:o,s:o,s:s,s:s,s:s,s:s,s:s,s:I,s:I,s:I}", "kind", kn, "board",
	    "qemu-an547", "kernels", kernels, "compiler", fb.compiler, "command", fb.command,
	    "compile", fb.compile, "elf", fb.elf, "elf_sha256", fb.elf_sha256, "link_map", fb.map,
	    "link_map_sha256", fb.map_sha256, "model_sha256", model_sha, "model_bytes",
	    (json_int_t)mlen, "input_bytes", (json_int_t)input_len, "arena_bytes",
	    (json_int_t)ergon_model_tfl(m)->arena_bytes);
	if (b != NULL)
		json_object_set_new(b, "memory", memory);
	else
		json_decref(memory);
	fb.command = NULL; /* moved into b */
	fb.compile = NULL;
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
	json_decref(fb.command);
	json_decref(fb.compile);
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
			      const char *work_dir, unsigned flags, uint8_t **out, size_t *out_len,
			      struct ergon_err *err)
{
	*out = NULL;
	*out_len = 0;
	json_t *build = NULL;
	int rc =
	    ergon_model_fw_build(m, work_dir, ERGON_MODEL_FW_INFER, input, input_len, flags, &build,
				 err);
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
				   unsigned flags, json_t **model, struct ergon_err *err)
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
	/* No folder: the virtual bench runs the model itself (nothing built). */
	rc = fw_dir
		 ? ergon_model_fw_build(m, fw_dir, ERGON_MODEL_FW_PROFILE, input, in_len, flags, &b,
					err)
		 : 0;
	if (rc)
		goto out;
	if (fw_dir)
		json_array_append_new(builds, b);
	if (fw_dir && with_power) {
		rc = ergon_model_fw_build(m, fw_dir, ERGON_MODEL_FW_POWER, input, in_len, flags, &b,
					  err);
		if (rc)
			goto out;
		json_array_append_new(builds, b);
	}
	size_t mlen = 0;
	char msha[65];
	/* Two statements: an argument list does not order the length's read
	 * after the call that sets it (the digest was of zero bytes). */
	const uint8_t *mbytes = ergon_model_bytes(m, &mlen);
	sha256_hex(mbytes, mlen, msha);
	*model = json_pack(
	    "{s:s,s:s,s:I,s:I,s:I,s:I,s:{s:s,s:I},s:{s:I,s:s},s:O}", "path", path, "sha256", msha,
	    "bytes", (json_int_t)mlen, "operators", (json_int_t)t->n_ops, "macs",
	    (json_int_t)t->total_macs, "arena_bytes", (json_int_t)t->arena_bytes, "input",
	    "pattern", "xs1 (xorshift32 seeded 1, byte = state >> 24)", "bytes", (json_int_t)in_len,
	    "host_output", "bytes", (json_int_t)out_len, "fnv1a64", fnv, "builds", builds);
	if (*model == NULL)
		rc = ergon_err_set(err, ERGON_ENOMEM, "out of memory");
out:
	json_decref(builds);
	free(input);
	ergon_model_free(m);
	return rc;
}
