/* Where an ELF32 little-endian image (a Cortex-M firmware) placed its
 * sections and symbols, read from the file's own section headers and symbol
 * table (elf(5)): the kernel firmware's build record (docs/METHOD.md,
 * "Kernels") states where code, data and scratch were placed from these,
 * not from a description. Nothing is executed or relocated. */
#ifndef ERGON_ELF32_H
#define ERGON_ELF32_H

#include "ergon/error.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ERGON_ELF32_NAME_MAX 63

/* A section or symbol: its address, its size in bytes and the name of the
 * section it is in (a section's own name for a section). */
struct ergon_elf32_place {
	uint32_t addr, size;
	char section[ERGON_ELF32_NAME_MAX + 1];
};

/* The section called name in the image buf (len bytes; what names it in
 * errors): 0 and *out; ERGON_ENOENT when it has none; ERGON_EPARSE naming
 * the field when the image is not an ELF32 little-endian file or a header,
 * a string or the symbol table lies outside it. */
ERGON_API int ergon_elf32_section(const void *buf, size_t len, const char *what,
				  const char *name, struct ergon_elf32_place *out,
				  struct ergon_err *err);

/* The first data or function symbol (STT_OBJECT, STT_FUNC; local or
 * global) called name, with the section it is defined in ("ABS" or
 * "UNDEF" for those indices); errors as above (ERGON_ENOENT also when the
 * image has no symbol table). */
ERGON_API int ergon_elf32_symbol(const void *buf, size_t len, const char *what, const char *name,
				 struct ergon_elf32_place *out, struct ergon_err *err);

#ifdef __cplusplus
}
#endif
#endif
