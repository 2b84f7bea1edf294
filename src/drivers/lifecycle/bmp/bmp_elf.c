/* The loadable segments of a 32-bit little-endian ARM ELF file, for the
 * Black Magic Probe lifecycle's flash step (see bmp_elf.h). Every offset
 * and size from the file is checked against the file's length before use;
 * the header fields are decoded byte by byte, never by casting structs
 * (ELF: System V ABI, "Object Files", e_ident/e_phoff/p_type/...). */
#include "drivers/lifecycle/bmp/bmp_elf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define ELF_MAX_BYTES (64u << 20) /* no MCU image is larger */
#define EM_ARM 40u
#define PT_LOAD 1u

static uint32_t rd32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t rd16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

void ergon_bmp_elf_free(struct ergon_bmp_elf *e)
{
	if (e == NULL)
		return;
	free(e->data);
	memset(e, 0, sizeof *e);
}

int ergon_bmp_elf_load(const char *path, struct ergon_bmp_elf *e, struct ergon_err *err)
{
	memset(e, 0, sizeof *e);
	int rc = 0;
	FILE *f = fopen(path, "rbe");
	if (f == NULL)
		return ergon_err_errno(err, errno, "bmp: cannot open the firmware %s", path);
	struct stat st;
	size_t cap = fstat(fileno(f), &st) == 0 && st.st_size > 0 && st.st_size < ELF_MAX_BYTES
			 ? (size_t)st.st_size + 1
			 : ELF_MAX_BYTES;
	unsigned char *buf = malloc(cap);
	size_t n = buf ? fread(buf, 1, cap, f) : 0;
	if (buf == NULL) {
		rc = ergon_err_set(err, ERGON_ENOMEM, "bmp: out of memory reading %s", path);
		goto out;
	}
	if (ferror(f) || n == cap) {
		rc = ergon_err_set(err, ERGON_EIO, "bmp: %s: cannot read it, or it is over %u MiB",
				   path, ELF_MAX_BYTES >> 20);
		goto out;
	}
	const char *fix = "give the firmware's ELF file (arm-none-eabi), not a .bin or .hex";
	if (n < 52 || memcmp(buf, "\177ELF", 4) != 0) {
		rc = ergon_err_set(err, ERGON_EPARSE, "bmp: %s: not an ELF file; %s", path, fix);
		goto out;
	}
	if (buf[4] != 1 || buf[5] != 1 || rd16(buf + 18) != EM_ARM) {
		rc = ergon_err_set(err, ERGON_EPARSE,
				   "bmp: %s: ELF class %u, data %u, machine %u: expected a 32-bit "
				   "little-endian ARM file (1, 1, 40); %s",
				   path, buf[4], buf[5], rd16(buf + 18), fix);
		goto out;
	}
	uint32_t phoff = rd32(buf + 28);
	uint16_t phentsize = rd16(buf + 42), phnum = rd16(buf + 44);
	if (phentsize < 32 || (uint64_t)phoff + (uint64_t)phentsize * phnum > n) {
		rc = ergon_err_set(err, ERGON_EPARSE,
				   "bmp: %s: program headers (offset %u, %u of %u bytes) are "
				   "outside the file's %zu bytes; the file is truncated or corrupt",
				   path, phoff, phnum, phentsize, n);
		goto out;
	}
	for (uint16_t i = 0; i < phnum; i++) {
		const unsigned char *ph = buf + phoff + (size_t)i * phentsize;
		uint32_t type = rd32(ph), off = rd32(ph + 4), paddr = rd32(ph + 12),
			 filesz = rd32(ph + 16);
		if (type != PT_LOAD || filesz == 0)
			continue;
		if ((uint64_t)off + filesz > n || (uint64_t)paddr + filesz > 0x100000000ull) {
			rc = ergon_err_set(err, ERGON_EPARSE,
					   "bmp: %s: program header %u: %u bytes at file offset "
					   "%u (address 0x%08x) run past the file or the address "
					   "space; the file is truncated or corrupt",
					   path, i, filesz, off, paddr);
			goto out;
		}
		if (e->count == ERGON_BMP_ELF_MAX_SEGMENTS) {
			rc = ergon_err_set(err, ERGON_ETOOBIG,
					   "bmp: %s: more than %d loadable segments", path,
					   ERGON_BMP_ELF_MAX_SEGMENTS);
			goto out;
		}
		e->seg[e->count].addr = paddr;
		e->seg[e->count].offset = off;
		e->seg[e->count].len = filesz;
		e->count++;
	}
	if (e->count == 0) {
		rc = ergon_err_set(err, ERGON_EPARSE,
				   "bmp: %s: no loadable segment with contents; %s", path, fix);
		goto out;
	}
	e->data = buf;
	e->size = n;
	buf = NULL;
out:
	free(buf);
	fclose(f);
	return rc;
}
