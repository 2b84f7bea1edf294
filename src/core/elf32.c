/* ELF32 little-endian section headers and symbol table (elf(5)), read
 * from a buffer with every offset checked against its length
 * (include/ergon/elf32.h). */
#include "ergon/elf32.h"

#include <string.h>

#define EHDR_SIZE 52u
#define SHDR_SIZE 40u
#define SYM_SIZE 16u
#define SHT_SYMTAB 2u
#define SHT_NOBITS 8u
#define SHN_UNDEF 0u
#define SHN_LORESERVE 0xff00u
#define SHN_ABS 0xfff1u
#define STT_OBJECT 1u
#define STT_FUNC 2u

struct elf {
	const uint8_t *p;
	size_t len;
	const char *what;
	uint32_t shoff;
	uint16_t shnum, shstrndx;
};

static uint32_t u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t u16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

/* [off, off + n) inside the image. */
static int inside(const struct elf *e, uint64_t off, uint64_t n)
{
	return off <= e->len && n <= e->len - off;
}

static int elf_open(struct elf *e, const void *buf, size_t len, const char *what,
		    struct ergon_err *err)
{
	*e = (struct elf){.p = buf, .len = len, .what = what};
	if (len < EHDR_SIZE || memcmp(e->p, "\x7f" "ELF", 4) != 0)
		return ergon_err_set(err, ERGON_EPARSE,
				     "%s: not an ELF file (no 0x7f 'ELF' header); give the "
				     "linked firmware image",
				     what);
	if (e->p[4] != 1 || e->p[5] != 1)
		return ergon_err_set(err, ERGON_EPARSE,
				     "%s: ELF class %u, data %u; only ELF32 little-endian (1, 1) "
				     "is read",
				     what, e->p[4], e->p[5]);
	e->shoff = u32(e->p + 0x20);
	e->shnum = u16(e->p + 0x30);
	e->shstrndx = u16(e->p + 0x32);
	if (u16(e->p + 0x2e) != SHDR_SIZE)
		return ergon_err_set(err, ERGON_EPARSE, "%s: e_shentsize %u, wanted %u", what,
				     u16(e->p + 0x2e), SHDR_SIZE);
	if (e->shnum == 0 || !inside(e, e->shoff, (uint64_t)e->shnum * SHDR_SIZE))
		return ergon_err_set(err, ERGON_EPARSE,
				     "%s: the section header table (%u headers at offset %u) is "
				     "not inside the %zu-byte file",
				     what, e->shnum, e->shoff, len);
	if (e->shstrndx >= e->shnum)
		return ergon_err_set(err, ERGON_EPARSE,
				     "%s: e_shstrndx %u is not a section (%u sections)", what,
				     e->shstrndx, e->shnum);
	return 0;
}

static const uint8_t *shdr(const struct elf *e, uint32_t i)
{
	return e->p + e->shoff + (size_t)i * SHDR_SIZE;
}

/* The NUL-terminated string at index idx of string-table section sec. */
static int str_at(const struct elf *e, uint32_t sec, uint32_t idx, const char **out,
		  struct ergon_err *err)
{
	const uint8_t *h = shdr(e, sec);
	uint32_t off = u32(h + 16), size = u32(h + 20);
	if (u32(h + 4) == SHT_NOBITS || !inside(e, off, size) || idx >= size ||
	    memchr(e->p + off + idx, '\0', size - idx) == NULL)
		return ergon_err_set(err, ERGON_EPARSE,
				     "%s: string %u of section %u is not inside the file", e->what,
				     idx, sec);
	*out = (const char *)e->p + off + idx;
	return 0;
}

static void name_into(char *dst, const char *src)
{
	size_t n = strnlen(src, ERGON_ELF32_NAME_MAX);
	memcpy(dst, src, n);
	dst[n] = '\0';
}

int ergon_elf32_section(const void *buf, size_t len, const char *what, const char *name,
			struct ergon_elf32_place *out, struct ergon_err *err)
{
	struct elf e;
	int rc = elf_open(&e, buf, len, what, err);
	for (uint32_t i = 0; rc == 0 && i < e.shnum; i++) {
		const char *s = NULL;
		if ((rc = str_at(&e, e.shstrndx, u32(shdr(&e, i)), &s, err)) != 0)
			break;
		if (strcmp(s, name) == 0) {
			out->addr = u32(shdr(&e, i) + 12);
			out->size = u32(shdr(&e, i) + 20);
			name_into(out->section, s);
			return 0;
		}
	}
	return rc ? rc : ergon_err_set(err, ERGON_ENOENT, "%s: no section %s", what, name);
}

int ergon_elf32_symbol(const void *buf, size_t len, const char *what, const char *name,
		       struct ergon_elf32_place *out, struct ergon_err *err)
{
	struct elf e;
	int rc = elf_open(&e, buf, len, what, err);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < e.shnum; i++) {
		const uint8_t *h = shdr(&e, i);
		if (u32(h + 4) != SHT_SYMTAB)
			continue;
		uint32_t off = u32(h + 16), size = u32(h + 20), link = u32(h + 24);
		if (!inside(&e, off, size) || u32(h + 36) != SYM_SIZE || link >= e.shnum)
			return ergon_err_set(err, ERGON_EPARSE,
					     "%s: the symbol table (section %u) is not inside the "
					     "file or not of 16-byte entries",
					     what, i);
		for (uint32_t k = 0; k < size / SYM_SIZE; k++) {
			const uint8_t *sym = e.p + off + (size_t)k * SYM_SIZE;
			unsigned type = sym[12] & 0xfu;
			const char *s = NULL;
			if (type != STT_OBJECT && type != STT_FUNC)
				continue;
			if ((rc = str_at(&e, link, u32(sym), &s, err)) != 0)
				return rc;
			if (strcmp(s, name) != 0)
				continue;
			uint16_t sx = u16(sym + 14);
			out->addr = u32(sym + 4);
			out->size = u32(sym + 8);
			if (sx == SHN_UNDEF)
				name_into(out->section, "UNDEF");
			else if (sx == SHN_ABS)
				name_into(out->section, "ABS");
			else if (sx >= SHN_LORESERVE || sx >= e.shnum)
				return ergon_err_set(err, ERGON_EPARSE,
						     "%s: symbol %s names section %u of %u", what,
						     name, sx, e.shnum);
			else {
				if ((rc = str_at(&e, e.shstrndx, u32(shdr(&e, sx)), &s, err)) != 0)
					return rc;
				name_into(out->section, s);
			}
			return 0;
		}
	}
	return ergon_err_set(err, ERGON_ENOENT, "%s: no data or function symbol %s", what, name);
}
