/* Private to the pipelines that build an547 firmware (model_fw.c,
 * kernels_qemu.c): the toolchain queries, the target sources and file
 * digests they share. */
#ifndef ERGON_FW_BUILD_H
#define ERGON_FW_BUILD_H

#include "ergon/error.h"

#include <jansson.h>
#include <limits.h>
#include <stddef.h>

/* target/ of the source tree (ERGON_TARGET_DIR overrides). Static string. */
const char *ergon_fw_target_dir(void);

/* arm-none-eabi-gcc's own include folder and its version line, the tool
 * outputs kept in dir/gcc-include.txt and dir/gcc-version.txt. */
int ergon_fw_toolchain(const char *dir, char *inc, size_t inc_cap, char *ver, size_t ver_cap,
		       struct ergon_err *err);

/* The .c files of src, sorted (a reproducible command line); power leaves
 * out the emitter and the profile flow. out[0..*n) are malloc'ed (caller
 * frees each), at most cap. */
int ergon_fw_list_sources(const char *src, int power, char **out, int *n, int cap,
			  struct ergon_err *err);

/* Lower-case hex SHA-256 of a file (at most 256 MiB). */
int ergon_fw_sha256_file(const char *path, char hex[65], struct ergon_err *err);

/* One firmware: all of target/src (less the emitter and the profile flow
 * when power), the an547 port files named, and one more source. */
struct ergon_fw_build {
	const char *dir;	    /* absolute build folder (exists) */
	const char *name;	    /* ergon_an547_<name>.elf, .map, build-<name>.log */
	int power;		    /* the power build's sources */
	const char *const *defines; /* -D flags, NULL-terminated; or NULL */
	const char *const *port;    /* files under target/port/an547/, NULL-terminated */
	const char *extra;	    /* one more source file, or NULL */
	/* Filled by ergon_fw_compile: */
	char elf[PATH_MAX], map[PATH_MAX], log[PATH_MAX];
	char elf_sha256[65], map_sha256[65];
	char compiler[256]; /* arm-none-eabi-gcc --version, first line */
	json_t *command;    /* the compiler's argv (caller decrefs) */
};

/* Compile and link b (flags as target/CMakeLists.txt: -mcpu=cortex-m55 -O2,
 * freestanding, -Werror, -nostdlib, gc-sections, a link map). On a failed
 * compile the tool's output is in b->log. */
int ergon_fw_compile(struct ergon_fw_build *b, struct ergon_err *err);

#endif
