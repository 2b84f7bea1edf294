/* The placement record of a model firmware (src/pipelines/common/fw_memory.c,
 * docs/internals/ports.md "The placement record"): the regions are the
 * port descriptor's, at the origins and lengths the link map states; the
 * arena and the weights are the ELF's symbols.
 *
 * A port whose memory map is not the an547's: a linker script written
 * here (FLASH 256 KiB at 0x08000000, SRAM 64 KiB at 0x20010000, SHARED
 * 1 MiB at 0x60000000, BKP 4 KiB at 0x40024000), a small C file that puts
 * the weights first in FLASH and the arena first in SRAM, SHARED or BKP,
 * linked by arm-none-eabi-gcc with a link map. The expected addresses are
 * the script's origins (each symbol is the first thing in its output
 * section, the origins are 16-byte aligned), computed by hand; the
 * an505's own Memory Configuration (from a link with target/port/an505/
 * an505.ld: CODE 4 MiB at 0x10000000, RAM 2 MiB at 0x38000000) is read
 * back as its script states it. */
#include "pipelines/common/common.h"
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char ld_script[] =
    "MEMORY\n"
    "{\n"
    "  FLASH (rx)  : ORIGIN = 0x08000000, LENGTH = 256K\n"
    "  SRAM (rwx)  : ORIGIN = 0x20010000, LENGTH = 64K\n"
    "  SHARED (rwx) : ORIGIN = 0x60000000, LENGTH = 1M\n"
    "  BKP (rwx)   : ORIGIN = 0x40024000, LENGTH = 4K\n"
    "}\n"
    "ENTRY(_start)\n"
    "SECTIONS\n"
    "{\n"
    "  .text : { KEEP(*(.rodata.ert_model)) *(.text*) *(.rodata*) } > FLASH\n"
    "  .bss (NOLOAD) : { . = ALIGN(16); *(.bss*) *(COMMON) } > SRAM\n"
    "  .ert_shared_sram (NOLOAD) : { . = ALIGN(16); *(.ert_shared_sram*) } > SHARED\n"
    "  .bkp (NOLOAD) : { . = ALIGN(16); *(.bkp*) } > BKP\n"
    "  /DISCARD/ : { *(.ARM.attributes) *(.comment) }\n"
    "}\n";

static const char c_source[] =
    "__attribute__((section(\".rodata.ert_model\"))) const unsigned char "
    "ert_model_data[100] = {1};\n"
    "#if defined(IN_SHARED)\n"
    "__attribute__((section(\".ert_shared_sram\"), aligned(16))) unsigned char arena[4096];\n"
    "#elif defined(IN_BKP)\n"
    "__attribute__((section(\".bkp.arena\"), aligned(16))) unsigned char arena[256];\n"
    "#else\n"
    "__attribute__((aligned(16))) unsigned char arena[4096];\n"
    "#endif\n"
    "void _start(void) { for (;;) { } }\n";

/* The descriptor of that port: the an505's with the test script's memory. */
static const char port_json[] =
    "{\"schema\": \"ergon-port/1\", \"port\": \"mapb\", \"board\": \"map-board\",\n"
    " \"title\": \"a map unlike the an547's\",\n"
    " \"validation\": {\"status\": \"unvalidated\", \"note\": \"test_fw_memory.c\"},\n"
    " \"toolchain\": \"arm-none-eabi-gcc\", \"cpu\": \"cortex-m33\",\n"
    " \"cpu_flags\": [\"-mcpu=cortex-m33\", \"-mthumb\"],\n"
    " \"include_dirs\": [\"port/mapb\"], \"sources\": [\"port/mapb/port.c\"],\n"
    " \"model_main\": \"port/common/model_main.c\", \"linker_script\": \"port/mapb/mapb.ld\",\n"
    " \"memory\": {\n"
    "  \"code\": {\"region\": \"FLASH\", \"bytes\": 262144, \"reserve_bytes\": 65536},\n"
    "  \"ram\": {\"region\": \"SRAM\", \"bytes\": 65536, \"reserve_bytes\": 8192},\n"
    "  \"shared_sram\": {\"region\": \"SHARED\", \"bytes\": 1048576, \"reserve_bytes\": 0}},\n"
    " \"memory_modes\": [\"extreme\", \"shared_sram\"],\n"
    " \"tfl_kernels\": [\"ref\"],\n"
    " \"hal\": {\"transport\": \"uart\", \"core_clock_hz\": 20000000, \"cycle_counter\": "
    "\"none\",\n"
    "  \"pmu\": \"none\", \"gpio\": {\"gate\": 1, \"state\": 0, \"go\": 0, \"max_pin\": 2},\n"
    "  \"ina228_i2c\": false},\n"
    " \"run\": {\"kind\": \"probe\"}}\n";

/* The an505's "Memory Configuration" as arm-none-eabi-ld writes it for
 * target/port/an505/an505.ld (CODE 4M at 0x10000000, RAM 2M at
 * 0x38000000), between the map's other tables. */
static const char an505_map[] =
    "Discarded input sections\n"
    " .text          0x00000000        0x0 obj/port.o\n"
    "\n"
    "Memory Configuration\n"
    "\n"
    "Name             Origin             Length             Attributes\n"
    "CODE             0x10000000         0x00400000         xr\n"
    "RAM              0x38000000         0x00200000         xrw\n"
    "*default*        0x00000000         0xffffffff\n"
    "\n"
    "Linker script and memory map\n"
    "\n"
    "LOAD obj/port.o\n";

struct fixture {
	char *dir;
	char *elf[3], *map[3]; /* arena in SRAM, SHARED, BKP */
	struct ergon_fw_port port;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof *f);
	assert_non_null(f);
	f->dir = ts_tmpdir();
	char *ld = ts_strf("%s/t.ld", f->dir), *c = ts_strf("%s/t.c", f->dir);
	assert_int_equal(ts_write_file(ld, ld_script, strlen(ld_script)), 0);
	assert_int_equal(ts_write_file(c, c_source, strlen(c_source)), 0);
	static const char *const def[3] = {"", "-DIN_SHARED", "-DIN_BKP"};
	for (int i = 0; i < 3; i++) {
		f->elf[i] = ts_strf("%s/t%d.elf", f->dir, i);
		f->map[i] = ts_strf("%s/t%d.map", f->dir, i);
		char *cmd = ts_strf("arm-none-eabi-gcc -mcpu=cortex-m33 -mthumb -O1 -ffreestanding "
				    "-nostdlib %s -T '%s' -Wl,-Map='%s' -o '%s' '%s'",
				    def[i], ld, f->map[i], f->elf[i], c);
		if (system(cmd) != 0)
			fail_msg("%s failed (arm-none-eabi-gcc: scripts/bootstrap.sh)", cmd);
		free(cmd);
	}
	free(ld);
	free(c);
	struct ergon_err err = {0};
	if (ergon_fw_port_parse(port_json, strlen(port_json), "test/port.json", &f->port, &err))
		fail_msg("%s", err.msg);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	for (int i = 0; i < 3; i++) {
		free(f->elf[i]);
		free(f->map[i]);
	}
	ts_tmpdir_remove(f->dir);
	free(f->dir);
	free(f);
	return 0;
}

static void expect_place(const json_t *rec, const char *what, const char *section, json_int_t addr,
			 json_int_t size, const char *region)
{
	const json_t *p = json_object_get(rec, what);
	assert_non_null(p);
	assert_string_equal(json_string_value(json_object_get(p, "section")), section);
	assert_int_equal(json_integer_value(json_object_get(p, "addr")), addr);
	assert_int_equal(json_integer_value(json_object_get(p, "size")), size);
	assert_string_equal(json_string_value(json_object_get(p, "region")), region);
}

static json_t *record(struct fixture *f, const struct ergon_fw_port *p, int img,
		      enum ergon_fw_memory_mode mode)
{
	json_t *rec = NULL;
	struct ergon_err err = {0};
	if (ergon_fw_memory_record(p, f->elf[img], f->map[img], mode, &rec, &err) != 0)
		fail_msg("image %d mode %d: %s", img, (int)mode, err.msg);
	return rec;
}

/* The error of a record that must fail with rc, holding both texts. */
static void refused(struct fixture *f, const struct ergon_fw_port *p, int img,
		    enum ergon_fw_memory_mode mode, int rc, const char *want1, const char *want2)
{
	json_t *rec = NULL;
	struct ergon_err err = {0};
	int got = ergon_fw_memory_record(p, f->elf[img], f->map[img], mode, &rec, &err);
	if (got != rc || rec != NULL || strstr(err.msg, want1) == NULL ||
	    strstr(err.msg, want2) == NULL)
		fail_msg("image %d mode %d: rc %d (want %d), '%s' (want '%s' and '%s')", img,
			 (int)mode, got, rc, err.msg, want1, want2);
}

static void placements_in_the_ports_own_map(void **state)
{
	struct fixture *f = *state;
	/* Weights first in FLASH (0x08000000, 100 bytes), arena first in
	 * SRAM (0x20010000, 4096 bytes): the script's origins. */
	json_t *rec = record(f, &f->port, 0, ERGON_FW_MEMORY_DEFAULT);
	assert_string_equal(json_string_value(json_object_get(rec, "mode")), "default");
	assert_true(json_is_null(json_object_get(rec, "define")));
	expect_place(rec, "weights", ".text", 0x08000000, 100, "FLASH");
	expect_place(rec, "arena", ".bss", 0x20010000, 4096, "SRAM");
	json_decref(rec);
	/* Extreme mode: both in memory.code / memory.ram: accepted. */
	rec = record(f, &f->port, 0, ERGON_FW_MEMORY_EXTREME);
	assert_string_equal(json_string_value(json_object_get(rec, "define")),
			    "-DERT_MEM_EXTREME=1");
	expect_place(rec, "arena", ".bss", 0x20010000, 4096, "SRAM");
	json_decref(rec);
	/* The arena at SHARED's origin 0x60000000: the shared SRAM. */
	rec = record(f, &f->port, 1, ERGON_FW_MEMORY_SHARED_SRAM);
	assert_string_equal(json_string_value(json_object_get(rec, "mode")), "force_shared_sram");
	expect_place(rec, "arena", ".ert_shared_sram", 0x60000000, 4096, "SHARED (shared SRAM)");
	expect_place(rec, "weights", ".text", 0x08000000, 100, "FLASH");
	json_decref(rec);
	/* BKP (0x40024000) is a region of the link the descriptor does not
	 * name: said so, not taken for one of the port's. */
	rec = record(f, &f->port, 2, ERGON_FW_MEMORY_DEFAULT);
	expect_place(rec, "arena", ".bkp", 0x40024000, 256,
		     "BKP (a region of the link that the port's memory does not name)");
	json_decref(rec);
}

static void a_placement_the_mode_does_not_have_is_refused(void **state)
{
	struct fixture *f = *state;
	/* force_shared_sram with the arena in SRAM; extreme mode with it in
	 * SHARED or BKP: both addresses and the script are named. */
	refused(f, &f->port, 0, ERGON_FW_MEMORY_SHARED_SRAM, ERGON_EPARSE,
		"force_shared_sram places the arena in the shared SRAM (SHARED",
		"arena at 0x20010000 (SRAM) and the weights at 0x08000000 (FLASH); check "
		"target/port/mapb/mapb.ld");
	refused(f, &f->port, 1, ERGON_FW_MEMORY_EXTREME, ERGON_EPARSE,
		"extreme mode needs the model's weights and arena in FLASH or SRAM",
		"arena at 0x60000000 (SHARED (shared SRAM))");
	refused(f, &f->port, 2, ERGON_FW_MEMORY_EXTREME, ERGON_EPARSE, "extreme mode needs",
		"arena at 0x40024000 (BKP (a region of the link");
}

static void a_descriptor_unlike_its_link_is_refused(void **state)
{
	struct fixture *f = *state;
	/* A region the script does not have: the descriptor and its field. */
	struct ergon_fw_port p = f->port;
	snprintf(p.ram_region, sizeof p.ram_region, "DTCM");
	refused(f, &p, 0, ERGON_FW_MEMORY_DEFAULT, ERGON_ECONFIG,
		"test/port.json: memory.ram.region: 'DTCM' is not a MEMORY region of the link",
		"Configuration has FLASH, SRAM, SHARED, BKP)");
	/* A length that is not the script's: 64K = 65536 bytes. */
	p = f->port;
	p.ram_bytes = 512u * 1024u;
	refused(f, &p, 0, ERGON_FW_MEMORY_DEFAULT, ERGON_ECONFIG,
		"test/port.json: memory.ram.bytes: 524288 is not the length of SRAM in the link",
		"(0x00010000 = 65536 bytes");
	p = f->port;
	p.shared_bytes = 2u * 1024u * 1024u;
	refused(f, &p, 1, ERGON_FW_MEMORY_SHARED_SRAM, ERGON_ECONFIG,
		"test/port.json: memory.shared_sram.bytes: 2097152", "(0x00100000 = 1048576 bytes");
	/* What a mode's record needs of the descriptor: the mode in
	 * memory_modes, and memory.shared_sram for force_shared_sram. */
	p = f->port;
	p.memory_modes = ERGON_FW_PORT_MODE_SHARED_SRAM;
	refused(f, &p, 0, ERGON_FW_MEMORY_EXTREME, ERGON_ECONFIG,
		"test/port.json: memory_modes: has no extreme", "mapb port");
	p = f->port;
	p.shared_bytes = 0;
	refused(f, &p, 1, ERGON_FW_MEMORY_SHARED_SRAM, ERGON_ECONFIG,
		"test/port.json: memory.shared_sram: missing", "region it puts the arena in");
	/* Without memory.shared_sram the default record still stands; the
	 * SHARED region is then one the descriptor does not name. */
	p.memory_modes = 0;
	json_t *rec = record(f, &p, 1, ERGON_FW_MEMORY_DEFAULT);
	expect_place(rec, "arena", ".ert_shared_sram", 0x60000000, 4096,
		     "SHARED (a region of the link that the port's memory does not name)");
	json_decref(rec);
}

static void the_an505_memory_configuration(void **state)
{
	(void)state;
	struct ergon_fw_map_region r[4];
	int n = 0;
	struct ergon_err err = {0};
	if (ergon_fw_map_regions(an505_map, strlen(an505_map), "an505.map", r, 4, &n, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(n, 2);
	assert_string_equal(r[0].name, "CODE");
	assert_int_equal(r[0].origin, 0x10000000u);
	assert_int_equal(r[0].length_bytes, 4u * 1024u * 1024u);
	assert_string_equal(r[1].name, "RAM");
	assert_int_equal(r[1].origin, 0x38000000u);
	assert_int_equal(r[1].length_bytes, 2u * 1024u * 1024u);
	/* A 64-bit host's ld writes 16 digits. */
	static const char wide[] = "Memory Configuration\n\n"
				   "Name Origin Length Attributes\n"
				   "ITCM 0x0000000000000000 0x0000000000080000 xr\n\n";
	assert_int_equal(ergon_fw_map_regions(wide, strlen(wide), "w.map", r, 4, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(r[0].length_bytes, 512u * 1024u);
	/* Bad tables: named with the file and the line. */
	static const struct {
		const char *text, *want;
	} bad[] = {
	    {"Linker script and memory map\n", "b.map: no \"Memory Configuration\" table"},
	    {"Memory Configuration\n\nOrigin\n", "b.map:3: Memory Configuration: expected the"},
	    {"Memory Configuration\n\nName Origin Length\nRAM 0x1000 xrw\n", "b.map:4: "},
	    {"Memory Configuration\n\nName Origin Length\nRAM 0xFFFFF000 0x2000\n",
	     "ends beyond 4 GiB"},
	    {"Memory Configuration\n\nName Origin Length\nRAM 0x0 0x0\n", "is empty"},
	    {"Memory Configuration\n\nName Origin Length\nA 0x0 0x10\nB 0x10 0x10\n"
	     "C 0x20 0x10\n",
	     "b.map:6: Memory Configuration: more than 2 regions"},
	    {"Memory Configuration\n", "the table ends before its heading"},
	    {"Memory Configuration\n\nName Origin Length\nR\001M 0x0 0x10\n",
	     "b.map:4: Memory Configuration: the region name holds a control or non-ASCII byte at "
	     "1"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		err = (struct ergon_err){0};
		int rc =
		    ergon_fw_map_regions(bad[i].text, strlen(bad[i].text), "b.map", r, 2, &n, &err);
		if (rc != ERGON_EPARSE || strstr(err.msg, bad[i].want) == NULL)
			fail_msg("bad[%zu]: rc %d, '%s' (want '%s')", i, rc, err.msg, bad[i].want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(placements_in_the_ports_own_map, setup, teardown),
	    cmocka_unit_test_setup_teardown(a_placement_the_mode_does_not_have_is_refused, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(a_descriptor_unlike_its_link_is_refused, setup,
					    teardown),
	    cmocka_unit_test(the_an505_memory_configuration),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
