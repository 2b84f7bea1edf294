/* firmware/: a ported board's firmware with a TFLite model embedded.
 *
 * Building the firmware of any board with a port in ergon-target
 * (target/port/<port>/port.json, docs/internals/ports.md) with a model
 * embedded, and running its infer build under QEMU for an emulated port
 * (include/ergon/model_fw.h). The compiler runs through
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

/* The budgets are the port's (memory.code / memory.ram of its descriptor):
 * the reserve is the firmware's own code, or its buffers and stack. */
static int fit_check(const struct ergon_model *m, const struct ergon_fw_port *p, size_t input_len,
		     unsigned flags, struct ergon_err *err)
{
	const struct ert_tfl_model *t = ergon_model_tfl(m);
	size_t len = 0;
	(void)ergon_model_bytes(m, &len);
	uint64_t flash = (uint64_t)len + input_len + p->code_reserve_bytes;
	/* force_shared_sram: the arena is in the port's shared SRAM, not its RAM. */
	int shared = memory_mode(flags) == ERGON_FW_MEMORY_SHARED_SRAM;
	if (shared && t->arena_bytes > p->shared_bytes)
		return ergon_err_set(err, ERGON_ETOOBIG,
				     "%s does not fit the %s firmware with force_shared_sram: "
				     "its %u-byte arena exceeds the %u KiB shared SRAM (%s)",
				     ergon_model_path(m), p->name, (unsigned)t->arena_bytes,
				     p->shared_bytes / 1024u, p->shared_region);
	uint64_t ram = (shared ? 0u : (uint64_t)t->arena_bytes) + sizeof(struct ert_tfl_model) +
		       p->ram_reserve_bytes;
	if (flash > p->code_bytes)
		return ergon_err_set(err, ERGON_ETOOBIG,
				     "%s does not fit the %s firmware: the model (%zu bytes), "
				     "its input (%zu) and ~%u bytes of code need %llu bytes of the "
				     "%u KiB %s (%u bytes), %llu too many; use a smaller model "
				     "or a board port with more flash",
				     ergon_model_path(m), p->name, len, input_len,
				     p->code_reserve_bytes, (unsigned long long)flash,
				     p->code_bytes / 1024u, p->code_region, p->code_bytes,
				     (unsigned long long)(flash - p->code_bytes));
	if (ram > p->ram_bytes)
		return ergon_err_set(err, ERGON_ETOOBIG,
				     "%s does not fit the %s firmware: its %u-byte arena, the "
				     "interpreter's tables (%zu) and the firmware's buffers (%u) "
				     "need %llu bytes of the %u KiB %s (%u bytes)",
				     ergon_model_path(m), p->name, (unsigned)t->arena_bytes,
				     sizeof(struct ert_tfl_model), p->ram_reserve_bytes,
				     (unsigned long long)ram, p->ram_bytes / 1024u, p->ram_region,
				     p->ram_bytes);
	return 0;
}

/* The port of board into *p; a board without one is refused with the way
 * to write one. */
static int board_port(const char *board, struct ergon_fw_port *p, struct ergon_err *err)
{
	int found = 0;
	int rc = ergon_fw_port_find(board, p, &found, err);
	if (!rc && !found)
		rc = ergon_err_set(err, ERGON_EUSAGE,
				   "board %s has no port in ergon-target (no target/port/<port>/port.json "
				   "names it), so ergon cannot build its firmware from a model; "
				   "write one as docs/internals/ports.md says, or build the "
				   "firmware yourself and give its FIRMWARE_DIR",
				   board);
	return rc;
}

int ergon_model_fw_board_check(const char *board, json_t **port, struct ergon_err *err)
{
	struct ergon_fw_port *p = malloc(sizeof *p);
	if (port)
		*port = NULL;
	if (p == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "out of memory");
	int rc = board_port(board, p, err);
	if (!rc && port && (*port = ergon_fw_port_json(p)) == NULL)
		rc = ergon_err_set(err, ERGON_ENOMEM, "out of memory");
	free(p);
	return rc;
}

/* Lowercase hex SHA-256 of p[0..n) into hex (65 bytes with the NUL). */
static void sha256_hex(const uint8_t *p, size_t n, char hex[65])
{
	unsigned char h[crypto_hash_sha256_BYTES];
	crypto_hash_sha256(h, p, n);
	for (size_t i = 0; i < sizeof h; i++)
		snprintf(hex + 2 * i, 3, "%02x", h[i]);
}

static int model_fw_build(const struct ergon_model *m, const struct ergon_fw_port *port,
			  const char *dir, enum ergon_model_fw_kind kind, const uint8_t *input,
			  size_t input_len, unsigned flags, const struct ergon_model_fw_marker *mk,
			  json_t **build, struct ergon_err *err);

int ergon_model_fw_build(const struct ergon_model *m, const char *board, const char *dir,
			 enum ergon_model_fw_kind kind, const uint8_t *input, size_t input_len,
			 unsigned flags, json_t **build, struct ergon_err *err)
{
	*build = NULL;
	struct ergon_fw_port *port = malloc(sizeof *port);
	if (port == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "out of memory");
	int rc = board_port(board ? board : "qemu-an547", port, err);
	if (!rc)
		rc = model_fw_build(m, port, dir, kind, input, input_len, flags, NULL, build, err);
	free(port);
	return rc;
}

/* The power build's marker record and defines: the descriptor's marker
 * pin always (one truth for ergon's builds: the port's ert_port.h default
 * only serves a user's own build), the mask when one is given. pin_def and
 * mask_def receive the -D flags (mask_def "" when none). */
static json_t *marker_record(const struct ergon_fw_port *port,
			     const struct ergon_model_fw_marker *mk, char *pin_def, size_t pin_cap,
			     char *mask_def, size_t mask_cap)
{
	uint32_t zero[ERGON_MODEL_FW_MARKER_WORDS] = {0};
	const uint32_t *mask = mk != NULL ? mk->mask : zero;
	/* no_line: the marker's cost run, the pin overridden to none. */
	unsigned pin = mk != NULL && mk->no_line ? 0u : (unsigned)port->marker_pin;
	snprintf(pin_def, pin_cap, "-DERT_PORT_MARKER_PIN=%uu", pin);
	mask_def[0] = '\0';
	char init[ERGON_MARKER_INIT_MAX];
	ergon_marker_mask_initializer(mask, init, sizeof init);
	if (mk != NULL)
		ergon_marker_mask_define(mk->mask, mask_def, mask_cap);
	json_t *words = json_array();
	int any = 0;
	for (size_t w = 0; w < ERGON_MODEL_FW_MARKER_WORDS; w++) {
		json_array_append_new(words, json_sprintf("0x%08x", (unsigned)mask[w]));
		any |= mask[w] != 0;
	}
	return json_pack(
	    "{s:I,s:o,s:s,s:s?,s:s,s:s}", "pin", (json_int_t)pin, "mask", words, "marks",
	    mk != NULL && mk->no_line ? "nothing: the marker line is compiled out (pin 0) for the "
					"marker's cost run; the mask is kept"
	    : pin == 0		      ? "nothing: the port has no marker line (its "
					"descriptor's hal.gpio.marker is 0)"
	    : any		      ? "the layers whose bit is set (a left-out layer is "
					"measured with the marked one before it)"
				      : "every layer (an all-zero mask)",
	    "define", mask_def[0] ? mask_def : NULL, "initializer", init, "from",
	    mk != NULL && mk->from != NULL ? mk->from
					   : "the default: no marker plan (every layer marked)");
}

static int model_fw_build(const struct ergon_model *m, const struct ergon_fw_port *port,
			  const char *dir, enum ergon_model_fw_kind kind, const uint8_t *input,
			  size_t input_len, unsigned flags, const struct ergon_model_fw_marker *mk,
			  json_t **build, struct ergon_err *err)
{
	/* The RTT profile build has its own name, the one the firmware
	 * finder takes for target.transport rtt on QEMU (*profile*rtt*). */
	int rtt = kind == ERGON_MODEL_FW_PROFILE && (flags & ERGON_MODEL_FW_RTT) &&
		  port->transport != ERGON_FW_PORT_RTT;
	const char *kn = rtt ? "profile_rtt" : kind_name(kind);
	if (rtt && port->n_rtt_defines == 0)
		return ergon_err_set(err, ERGON_EUSAGE,
				     "target.transport rtt: the %s port (board %s) has no RTT "
				     "build of a model (its descriptor %s has hal.transport uart "
				     "and no rtt_defines); set target.transport: uart",
				     port->name, port->board, port->file);
	char path[PATH_MAX];
	char absdir[1024], resolved[PATH_MAX], tmp[PATH_MAX * 2];
	char dflag[64];
	size_t mlen = 0;
	const uint8_t *mbytes = ergon_model_bytes(m, &mlen);
	if ((flags & ERGON_MODEL_FW_EXTREME_MODE) && (flags & ERGON_MODEL_FW_SHARED_SRAM))
		return ergon_err_set(err, ERGON_EUSAGE,
				     "extreme_mode and force_shared_sram pull the shared SRAM "
				     "opposite ways; build with one of them");
	/* A placement the port does not offer is refused, never ignored. */
	enum ergon_fw_memory_mode mode = memory_mode(flags);
	if (mode != ERGON_FW_MEMORY_DEFAULT &&
	    !(port->memory_modes & (mode == ERGON_FW_MEMORY_EXTREME ? ERGON_FW_PORT_MODE_EXTREME
								   : ERGON_FW_PORT_MODE_SHARED_SRAM)))
		return ergon_err_set(err, ERGON_EUSAGE,
				     "profiling.%s: the %s port (board %s) has no such placement "
				     "(its descriptor's memory_modes, %s); unset the key",
				     mode == ERGON_FW_MEMORY_EXTREME ? "extreme_mode"
								     : "force_shared_sram",
				     port->name, port->board, port->file);
	int rc = fit_check(m, port, input_len, flags, err);
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
		 " * embedded in the %s %s firmware; assembled in their folder. */\n"
		 "\t.section .rodata.ert_model, \"a\"\n\t.balign 16\n"
		 "\t.global ert_model_data\n\t.global ert_model_end\n"
		 "\t.type ert_model_data, %%object\n"
		 "ert_model_data:\n\t.incbin \"model.tflite\"\nert_model_end:\n"
		 "\t.size ert_model_data, ert_model_end - ert_model_data\n"
		 "\t.balign 16\n\t.global ert_input_data\n\t.global ert_input_end\n"
		 "ert_input_data:\n\t.incbin \"%s\"\nert_input_end:\n",
		 port->name, kn, input_name);
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
	if (strcmp(kernels, "mve") == 0 && !(port->tfl_kernels & ERGON_FW_PORT_KERNELS_MVE))
		return ergon_err_set(err, ERGON_EUSAGE,
				     "ERGON_TFL_KERNELS=mve: board %s's core (%s) has no Helium "
				     "(its port, %s, lists tfl_kernels ref only); unset it",
				     port->board, port->cpu, port->file);
	/* Only the interpreter's main file uses the arena's size, the marker
	 * pin and mask: every other object is the same for every model (a new
	 * marker plan recompiles the main alone). */
	char pin_def[48], mask_def[ERGON_MARKER_DEFINE_MAX];
	json_t *marker =
	    kind == ERGON_MODEL_FW_POWER
		? marker_record(port, mk, pin_def, sizeof pin_def, mask_def, sizeof mask_def)
		: NULL;
	if (kind == ERGON_MODEL_FW_POWER && marker == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "out of memory");
	const char *model_defines[5] = {dflag, NULL, NULL, NULL, NULL};
	int nm = 1;
	if (ergon_fw_memory_define(memory_mode(flags)) != NULL)
		model_defines[nm++] = ergon_fw_memory_define(memory_mode(flags));
	if (marker != NULL) {
		model_defines[nm++] = pin_def;
		if (mask_def[0])
			model_defines[nm++] = mask_def;
	}
	const char *defines[4 + ERGON_FW_PORT_LIST_MAX] = {NULL};
	int nd = 0;
	for (int i = 0; rtt && i < port->n_rtt_defines; i++)
		defines[nd++] = port->rtt_defines[i];
	if (kind == ERGON_MODEL_FW_POWER)
		defines[nd++] = "-DERT_POWER_BUILD=1";
	if (kind == ERGON_MODEL_FW_INFER)
		defines[nd++] = "-DERT_TFL_INFER_BUILD=1";
	if (strcmp(kernels, "mve") == 0)
		defines[nd++] = "-DERT_TFL_MVE=1";
	const char *model_files[3] = {"model.tflite", input_name, NULL};
	struct ergon_fw_build fb = {.port = port,
				    .dir = absdir,
				    .name = kn,
				    .power = kind == ERGON_MODEL_FW_POWER,
				    .defines = defines,
				    .main_src = port->model_main,
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
				      "%s does not fit the %s firmware: the linker says '%.*s' "
				      "(%s)",
				      ergon_model_path(m), port->name, (int)l, p ? p : "", fb.log);
			*err = e3;
			rc = ERGON_ETOOBIG;
		}
		free(text);
		goto out;
	}
	/* The placement record: the port's regions where the link map puts
	 * them, and the ELF's arena and weights in them (fw_memory.c). */
	json_t *memory = NULL;
	rc = ergon_fw_memory_record(port, fb.elf, fb.map, memory_mode(flags), &memory, err);
	if (rc)
		goto out;
	char model_sha[65];
	sha256_hex(mbytes, mlen, model_sha);
	json_t *b = json_pack(
	    "{s:s,s:s,s:o,s:s,s:s,s:o,s:o,s:s,s:s,s:s,s:s,s:s,s:I,s:I,s:I}", "kind",
	    kind_name(kind), "board", port->board, "port", ergon_fw_port_json(port), "kernels", kernels, "compiler",
	    fb.compiler, "command", fb.command,
	    "compile", fb.compile, "elf", fb.elf, "elf_sha256", fb.elf_sha256, "link_map", fb.map,
	    "link_map_sha256", fb.map_sha256, "model_sha256", model_sha, "model_bytes",
	    (json_int_t)mlen, "input_bytes", (json_int_t)input_len, "arena_bytes",
	    (json_int_t)ergon_model_tfl(m)->arena_bytes);
	if (b != NULL) {
		json_object_set_new(b, "memory", memory);
		if (marker != NULL)
			json_object_set_new(b, "marker", marker);
		/* The stream's link: the port's hal.transport, or RTT through its
		 * rtt_defines (target.transport rtt). */
		json_object_set_new(b, "transport",
				    json_string(rtt || port->transport == ERGON_FW_PORT_RTT
						    ? "rtt"
						    : "uart"));
	} else {
		json_decref(memory);
		json_decref(marker);
	}
	marker = NULL;
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
	json_decref(marker);
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

int ergon_model_fw_infer_qemu(const struct ergon_model *m, const char *board, const uint8_t *input,
			      size_t input_len, const char *work_dir, unsigned flags, uint8_t **out,
			      size_t *out_len, struct ergon_err *err)
{
	*out = NULL;
	*out_len = 0;
	json_t *build = NULL;
	char *text = NULL;
	board = board ? board : "qemu-an547";
	struct ergon_fw_port *port = malloc(sizeof *port);
	int rc = port ? board_port(board, port, err)
		      : ergon_err_set(err, ERGON_ENOMEM, "out of memory");
	if (!rc && port->run != ERGON_FW_PORT_RUN_QEMU)
		rc = ergon_err_set(err, ERGON_EUSAGE,
				   "board %s is a real board (its port %s runs through a probe): "
				   "ergon runs the infer firmware under QEMU only; pick an emulated "
				   "board (`ergon config boards`)",
				   board, port->name);
	if (!rc)
		rc = model_fw_build(m, port, work_dir, ERGON_MODEL_FW_INFER, input, input_len, flags,
				    NULL, &build, err);
	if (rc)
		goto done;
	const char *elf = json_string_value(json_object_get(build, "elf"));
	char log[PATH_MAX];
	snprintf(log, sizeof log, "%s/qemu-infer.log", work_dir);
	remove(log);
	const char *argv[] = {ERGON_QEMU_ARGV(port->qemu_machine), "-kernel", elf, NULL};
	rc = ergon_lifecycle_run_tool(argv, log, QEMU_TIMEOUT_S, err);
	size_t tl = 0;
	struct ergon_err e2 = {0};
	int have_log = ergon_file_read_all(log, 16u << 20, &text, &tl, &e2) == 0;
	const char *errline = have_log ? strstr(text, "ERGON_TFL_ERROR ") : NULL;
	if (errline != NULL) {
		size_t l = strcspn(errline, "\n");
		rc = ergon_err_set(err, ERGON_EDEVICE,
				   "%s on %s: the firmware refused the "
				   "model: %.*s",
				   ergon_model_path(m), board, (int)l, errline + 16);
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
					  "%s on %s: expected %u output bytes on the UART, "
					  "got %zu; QEMU's output is in %s",
					  ergon_model_path(m), board, (unsigned)want, k, log);
		} else {
			*out = o;
			*out_len = k;
		}
	}
done:
	free(text);
	free(port);
	json_decref(build);
	return rc;
}

int ergon_model_fw_build_power(const char *path, const char *board, const char *fw_dir,
			       unsigned flags, const struct ergon_model_fw_marker *marker,
			       json_t **build, struct ergon_err *err)
{
	*build = NULL;
	struct ergon_model *m = NULL;
	uint8_t *input = NULL;
	struct ergon_fw_port *port = malloc(sizeof *port);
	int rc = port ? ergon_model_open(path, &m, err)
		      : ergon_err_set(err, ERGON_ENOMEM, "out of memory");
	uint32_t in_len = 0;
	if (!rc) {
		(void)ert_tfl_input(ergon_model_tfl(m), 0, &in_len);
		input = malloc(in_len > 0 ? in_len : 1);
		rc = input ? ergon_model_pattern("xs1", input, in_len, err)
			   : ergon_err_set(err, ERGON_ENOMEM, "out of memory");
	}
	if (!rc)
		rc = board_port(board ? board : "qemu-an547", port, err);
	if (!rc)
		rc = model_fw_build(m, port, fw_dir, ERGON_MODEL_FW_POWER, input, in_len, flags,
				    marker, build, err);
	free(input);
	free(port);
	ergon_model_free(m);
	return rc;
}

int ergon_model_fw_prepare_profile(const char *path, const char *board, const char *fw_dir,
				   int with_power, unsigned flags, json_t **model,
				   struct ergon_err *err)
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
		 ? ergon_model_fw_build(m, board, fw_dir, ERGON_MODEL_FW_PROFILE, input, in_len,
					flags, &b, err)
		 : 0;
	if (rc)
		goto out;
	if (fw_dir)
		json_array_append_new(builds, b);
	if (fw_dir && with_power) {
		rc = ergon_model_fw_build(m, board, fw_dir, ERGON_MODEL_FW_POWER, input, in_len,
					  flags, &b, err);
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
