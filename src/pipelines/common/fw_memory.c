/* Where an an547 model firmware placed its arena and weights (common/).
 *
 * profiling.extreme_mode and profiling.force_shared_sram reach ergon's
 * an547 model firmware as a define (ERT_MEM_EXTREME / ERT_MEM_SHARED_SRAM,
 * target/port/an547/tflite/tflite_main.c) and a linker placement
 * (an547.ld's .ert_shared_sram in the shared system SRAM). This reads the
 * linked ELF's own symbol table (src/core/elf32.c) to say where the arena
 * and the model's weights landed, and refuses an image that did not place
 * them as the mode requires: the build record states the placement from
 * the file, never from the request. */
#include "ergon/elf32.h"
#include "ergon/fileio.h"
#include "pipelines/common/common.h"

#include <stdlib.h>
#include <string.h>

/* The AN547 memory map (the SSE-300 FPGA image QEMU's mps3-an547 models):
 * ITCM 512 KiB at 0, DTCM 512 KiB at 0x20000000, ISRAM0+1 (the shared
 * system SRAM) 2 MiB at 0x21000000 (target/port/an547/an547.ld). */
static const struct {
	uint32_t base, size;
	const char *name;
	int tcm;
} regions[] = {
    {0x00000000u, 512u * 1024u, "ITCM", 1},
    {0x20000000u, 512u * 1024u, "DTCM", 1},
    {0x21000000u, 2u * 1024u * 1024u, "ISRAM (shared SRAM)", 0},
};

static int region_of(uint32_t addr, uint32_t size)
{
	for (size_t i = 0; i < sizeof regions / sizeof regions[0]; i++)
		if (addr >= regions[i].base && size <= regions[i].size &&
		    addr - regions[i].base <= regions[i].size - size)
			return (int)i;
	return -1;
}

const char *ergon_fw_memory_define(enum ergon_fw_memory_mode mode)
{
	return mode == ERGON_FW_MEMORY_EXTREME	     ? "-DERT_MEM_EXTREME=1"
	       : mode == ERGON_FW_MEMORY_SHARED_SRAM ? "-DERT_MEM_SHARED_SRAM=1"
						     : NULL;
}

static const char *mode_name(enum ergon_fw_memory_mode mode)
{
	return mode == ERGON_FW_MEMORY_EXTREME	     ? "extreme_mode"
	       : mode == ERGON_FW_MEMORY_SHARED_SRAM ? "force_shared_sram"
						     : "default";
}

static json_t *place_json(const struct ergon_elf32_place *p, int r)
{
	return json_pack("{s:s,s:I,s:I,s:s}", "section", p->section, "addr", (json_int_t)p->addr,
			 "size", (json_int_t)p->size, "region",
			 r >= 0 ? regions[r].name : "outside the an547 memory map");
}

int ergon_fw_memory_record(const char *elf, enum ergon_fw_memory_mode mode, json_t **out,
			   struct ergon_err *err)
{
	*out = NULL;
	char *img = NULL;
	size_t len = 0;
	struct ergon_elf32_place arena, weights;
	int rc = ergon_file_read_all(elf, (size_t)64 << 20, &img, &len, err);
	if (!rc)
		rc = ergon_elf32_symbol(img, len, elf, "arena", &arena, err);
	if (!rc)
		rc = ergon_elf32_symbol(img, len, elf, "ert_model_data", &weights, err);
	free(img);
	if (rc)
		return rc;
	int ra = region_of(arena.addr, arena.size), rw = region_of(weights.addr, weights.size);
	const char *why = NULL;
	if (mode == ERGON_FW_MEMORY_EXTREME &&
	    !(ra >= 0 && regions[ra].tcm && rw >= 0 && regions[rw].tcm))
		why = "extreme mode needs the model's weights and arena in the TCMs";
	else if (mode == ERGON_FW_MEMORY_SHARED_SRAM && !(ra >= 0 && !regions[ra].tcm))
		why = "force_shared_sram places the arena in the shared SRAM";
	if (why != NULL)
		return ergon_err_set(
		    err, ERGON_EPARSE,
		    "%s: %s, but the linked image has the arena at 0x%08X (%s) and "
		    "the weights at 0x%08X (%s); check target/port/an547/an547.ld",
		    elf, why, (unsigned)arena.addr, ra >= 0 ? regions[ra].name : "outside the map",
		    (unsigned)weights.addr, rw >= 0 ? regions[rw].name : "outside the map");
	const char *def = ergon_fw_memory_define(mode);
	*out = json_pack("{s:s,s:s?,s:o,s:o}", "mode", mode_name(mode), "define", def, "arena",
			 place_json(&arena, ra), "weights", place_json(&weights, rw));
	return *out ? 0 : ergon_err_set(err, ERGON_ENOMEM, "out of memory");
}
