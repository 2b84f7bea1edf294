/* Firmware with a TFLite model embedded, for any board with a port in
 * ergon-target (target/port/<port>/port.json, docs/internals/ports.md;
 * qemu-an547 is the first): built with arm-none-eabi-gcc from
 * ergon-target's sources (the same interpreter as the host's), checked to
 * fit the port's memory before compiling, and described (port, compiler,
 * flags, ELF sha256, link map) beside the results.
 */
#ifndef ERGON_MODEL_FW_H
#define ERGON_MODEL_FW_H

#include "ergon/error.h"
#include "ergon/model.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum ergon_model_fw_kind {
	ERGON_MODEL_FW_PROFILE = 1, /* the profile flow over the model's layers */
	ERGON_MODEL_FW_POWER = 2,   /* the dedicated power build */
	ERGON_MODEL_FW_INFER = 3,   /* one inference, output on the UART */
};

/* Flags of the builds below. */
enum ergon_model_fw_flags {
	/* Compile every object; neither read nor write the firmware object
	 * cache ($XDG_CACHE_HOME/ergon, docs/internals/fw_cache.md). */
	ERGON_MODEL_FW_NO_CACHE = 1u << 0,
	/* profiling.extreme_mode: the model's weights and arena in the port's
	 * memory.code / memory.ram (the an547's TCMs; -DERT_MEM_EXTREME=1; the
	 * build record proves it from the ELF and the link map). */
	ERGON_MODEL_FW_EXTREME_MODE = 1u << 1,
	/* profiling.force_shared_sram: the arena in the port's
	 * memory.shared_sram (the an547's ISRAM at 0x21000000;
	 * -DERT_MEM_SHARED_SRAM=1). Not with the above. */
	ERGON_MODEL_FW_SHARED_SRAM = 1u << 2,
	/* target.transport rtt: the profile build speaks RTT with the port's
	 * rtt_defines (an image named ergon_PORT_profile_rtt.elf); refused for
	 * a port that has none and whose hal.transport is uart. */
	ERGON_MODEL_FW_RTT = 1u << 3,
};

/* 0 when board has a port in ergon-target, and *port (when port is not
 * NULL; new reference, caller decrefs) its summary {port, board, title,
 * cpu, validation{status, note}, descriptor, descriptor_sha256, run (the
 * QEMU machine, or "probe"), transport (uart or rtt), rtt_build (whether a
 * model's profile build can speak RTT: hal.transport rtt, or rtt_defines)}.
 * ERGON_EUSAGE naming the board, that it has no port, and how to write one
 * (docs/internals/ports.md); ERGON_ECONFIG naming the descriptor, the
 * field and the fix when a descriptor under target/port/ is invalid. */
ERGON_API int ergon_model_fw_board_check(const char *board, json_t **port,
					 struct ergon_err *err);

/* Build one firmware for board (NULL: qemu-an547) into dir (created) as
 * ergon_<port>_<kind>.elf with its .map, embedding the model and `input`
 * (input 0's bytes). A board without a port is refused as
 * ergon_model_fw_board_check says. A model that cannot fit the port's
 * memory (its descriptor's memory.code and memory.ram budgets) is refused
 * before compiling (ERGON_ETOOBIG, with the sizes).
 * The objects that do not depend on the model come from the firmware
 * object cache when they were built before with the same toolchain, flags
 * and sources, the model's own ones when this model was (flags:
 * ERGON_MODEL_FW_NO_CACHE). *build receives the provenance (compiler
 * version, the link's and the compile's commands, every object with its
 * sha256 and whether it came from the cache, ELF sha256, map path and
 * sha256, and where the arena and the weights were placed: memory,
 * docs/internals/ports.md "The placement record"): a new reference, caller decrefs; it is also written to
 * dir/build-<kind>.json. The target sources are ERGON_TARGET_DIR
 * (environment) or the source tree ergon was built from. */
ERGON_API int ergon_model_fw_build(const struct ergon_model *m, const char *board, const char *dir,
				   enum ergon_model_fw_kind kind, const uint8_t *input,
				   size_t input_len, unsigned flags, json_t **build,
				   struct ergon_err *err);

/* The layer-marker mask of a power build (ert_marker_config.mask: bit
 * i % 32 of word i / 32 marks layer i; all zero: every layer; layers from
 * 256 on are never marked), and where it came from for the build record. */
#define ERGON_MODEL_FW_MARKER_WORDS 8
struct ergon_model_fw_marker {
	uint32_t mask[ERGON_MODEL_FW_MARKER_WORDS];
	const char *from; /* e.g. "the marker plan at 100000 Hz"; borrowed */
	/* Nonzero: the same image with no marker line (-DERT_PORT_MARKER_PIN=0u
	 * whatever the port's descriptor says; the mask is kept, so only the
	 * toggles go): the unmarked run that measures the marker's own cost. */
	int no_line;
};

/* Build board's power firmware of the model at path into fw_dir, as
 * ergon_model_fw_prepare_profile does (the same input pattern, the same
 * flags), its marker line following marker's mask (compiled into the
 * model main as -DERT_MODEL_MARKER_MASK=w0,..,w7; only that object
 * changes, the rest comes from the firmware cache). marker NULL: no
 * mask, every layer marked. Replaces fw_dir's power ELF and
 * build-power.json, whose "marker" says the pin, the mask, its define and
 * initializer and where it came from. *build: new reference, caller
 * decrefs. Errors as ergon_model_fw_build. */
ERGON_API int ergon_model_fw_build_power(const char *path, const char *board, const char *fw_dir,
					 unsigned flags, const struct ergon_model_fw_marker *marker,
					 json_t **build, struct ergon_err *err);

/* Build the infer firmware of an emulated board (NULL: qemu-an547) in
 * work_dir and run it under qemu-system-arm -M <the port's run.machine>
 * (-icount); *out (malloc'd, caller frees) receives output 0's bytes as the
 * emulated core computed them. A real board's port is refused
 * (ERGON_EUSAGE). */
ERGON_API int ergon_model_fw_infer_qemu(const struct ergon_model *m, const char *board,
					const uint8_t *input, size_t input_len,
					const char *work_dir, unsigned flags, uint8_t **out,
					size_t *out_len, struct ergon_err *err);

/* For `ergon profile MODEL.tflite --board B`: open the model at path, run
 * the host interpreter on the deterministic input pattern "xs1", build
 * board B's profile firmware (and the power build when with_power) with
 * that input embedded into fw_dir, and describe it all in *model (new
 * reference: the ergon_profile_opts.model object). fw_dir NULL builds
 * nothing ("builds": []): the virtual bench (--board sim) runs the model
 * in-process, and a real board may run the user's own firmware. */
ERGON_API int ergon_model_fw_prepare_profile(const char *path, const char *board,
					     const char *fw_dir, int with_power, unsigned flags,
					     json_t **model, struct ergon_err *err);


#ifdef __cplusplus
}
#endif
#endif
