/* Fuzz the ELF32 section and symbol reader (src/core/elf32.c).
 * Properties: a refusal says why; a found place names a NUL-terminated
 * section no longer than ERGON_ELF32_NAME_MAX; a second read of the same
 * bytes gives the same answer. */
#include "ergon/elf32.h"
#include "fuzz_props.h"

#include <stdint.h>
#include <string.h>

static void one(const uint8_t *data, size_t size, int sym, const char *name)
{
	struct ergon_elf32_place a, b;
	struct ergon_err e1 = {0}, e2 = {0};
	int r1 = sym ? ergon_elf32_symbol(data, size, "fuzz.elf", name, &a, &e1)
		     : ergon_elf32_section(data, size, "fuzz.elf", name, &a, &e1);
	int r2 = sym ? ergon_elf32_symbol(data, size, "fuzz.elf", name, &b, &e2)
		     : ergon_elf32_section(data, size, "fuzz.elf", name, &b, &e2);
	FUZZ_REQUIRE(r1 == r2);
	if (r1 != 0) {
		FUZZ_REQUIRE(e1.msg[0] != '\0');
		return;
	}
	FUZZ_REQUIRE(strlen(a.section) <= ERGON_ELF32_NAME_MAX);
	FUZZ_REQUIRE(a.addr == b.addr && a.size == b.size && strcmp(a.section, b.section) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	one(data, size, 0, ".text");
	one(data, size, 0, ".bss");
	one(data, size, 1, "col");
	one(data, size, 1, "main");
	return 0;
}
