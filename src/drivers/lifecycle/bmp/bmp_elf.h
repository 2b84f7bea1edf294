/* The loadable segments of a firmware ELF (32-bit little-endian ARM), as
 * the Black Magic Probe lifecycle writes them to flash: PT_LOAD entries
 * with contents, at their physical (load) address. */
#ifndef ERGON_BMP_ELF_H
#define ERGON_BMP_ELF_H

#include "ergon/error.h"

#include <stddef.h>
#include <stdint.h>

#define ERGON_BMP_ELF_MAX_SEGMENTS 16

struct ergon_bmp_elf {
	unsigned char *data; /* the whole file (owned) */
	size_t size;
	struct {
		uint32_t addr;	 /* p_paddr: where the bytes are flashed */
		uint32_t offset; /* p_offset in data */
		uint32_t len;	 /* p_filesz */
	} seg[ERGON_BMP_ELF_MAX_SEGMENTS];
	int count;
};

/* Read and check path; *e is the caller's (ergon_bmp_elf_free), also
 * zeroed on failure. ERGON_EPARSE names what is wrong with the file. */
int ergon_bmp_elf_load(const char *path, struct ergon_bmp_elf *e, struct ergon_err *err);
/* NULL is a no-op. */
void ergon_bmp_elf_free(struct ergon_bmp_elf *e);

#endif
