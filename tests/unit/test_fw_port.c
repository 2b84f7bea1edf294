/* The board port descriptors (src/pipelines/common/fw_port.c,
 * docs/internals/ports.md): the two shipped ones read back as their
 * linker scripts and QEMU state them (the memory regions' lengths are
 * parsed from the .ld files here, not taken from ergon), the folders
 * without a descriptor are not ports, and every kind of bad field is
 * refused naming the file, the field and the fix. */
#include "pipelines/common/common.h"
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *tdir(void)
{
	static char path[4096];
	const char *src = getenv("ERGON_SOURCE_DIR");
	assert_non_null(src);
	snprintf(path, sizeof path, "%s/target", src);
	return path;
}

/* LENGTH of region in the linker script at target/<ld>, in bytes
 * ("LENGTH = 512K" / "4M"), read here from the script's text. */
static unsigned long ld_length(const char *ld, const char *region)
{
	char *path = ts_strf("%s/%s", tdir(), ld);
	char *text = ts_read_file(path, NULL);
	assert_non_null(text);
	char *line = strstr(text, region);
	assert_non_null(line);
	char *len = strstr(line, "LENGTH = ");
	assert_non_null(len);
	char *end = NULL;
	unsigned long v = strtoul(len + 9, &end, 10);
	v *= *end == 'K' ? 1024ul : *end == 'M' ? 1024ul * 1024ul : 1ul;
	free(text);
	free(path);
	return v;
}

static void an547_is_the_first_port(void **state)
{
	(void)state;
	struct ergon_fw_port p;
	struct ergon_err err = {0};
	if (ergon_fw_port_load(tdir(), "an547", &p, &err) != 0)
		fail_msg("%s", err.msg);
	assert_string_equal(p.board, "qemu-an547");
	assert_int_equal(p.validation, ERGON_FW_PORT_EMULATED);
	assert_int_equal(p.run, ERGON_FW_PORT_RUN_QEMU);
	assert_string_equal(p.qemu_machine, "mps3-an547");
	/* The flags the an547 firmware was built with before the descriptor
	 * (its ELF is byte-identical: tests/functional/test_model_qemu_an505.sh). */
	assert_int_equal(p.n_cpu_flags, 3);
	assert_string_equal(p.cpu_flags[0], "-mcpu=cortex-m55");
	assert_string_equal(p.cpu_flags[1], "-mthumb");
	assert_string_equal(p.cpu_flags[2], "-mfloat-abi=hard");
	assert_string_equal(p.code_region, "ITCM");
	assert_string_equal(p.ram_region, "DTCM");
	assert_int_equal(p.code_bytes, ld_length(p.linker_script, "ITCM ("));
	assert_int_equal(p.ram_bytes, ld_length(p.linker_script, "DTCM ("));
	assert_int_equal(p.code_bytes, 512u * 1024u);
	/* 48 KiB UART buffer + 16 KiB stack + 8 KiB layer records. */
	assert_int_equal(p.ram_reserve_bytes, 48u * 1024u + 16u * 1024u + 8u * 1024u);
	assert_true(p.tfl_kernels & ERGON_FW_PORT_KERNELS_MVE);
	/* ISRAM 2 MiB at 0x21000000 (an547.ld): force_shared_sram's arena. */
	assert_int_equal(p.shared_bytes, ld_length(p.linker_script, "ISRAM ("));
	assert_int_equal(p.memory_modes,
			 ERGON_FW_PORT_MODE_EXTREME | ERGON_FW_PORT_MODE_SHARED_SRAM);
	assert_int_equal(p.pmu, ERGON_FW_PORT_PROBED);
	assert_int_equal(p.core_clock_hz, 32000000u);
	assert_int_equal(p.marker_pin, 2u); /* FPGAIO LED1 (an547.h) */
	/* UART0 by default; its RTT build is port.c's ERT_AN547_RTT switch
	 * (the one target/CMakeLists.txt builds ergon_an547_profile_rtt.elf
	 * with), so a model's profile build can speak RTT too. */
	assert_int_equal(p.transport, ERGON_FW_PORT_UART);
	assert_int_equal(p.n_rtt_defines, 1);
	assert_string_equal(p.rtt_defines[0], "-DERT_AN547_RTT=1");
	char *port_c = ts_strf("%s/port/an547/port.c", tdir());
	char *src = ts_read_file(port_c, NULL);
	assert_non_null(src);
	assert_non_null(strstr(src, "#if !defined(ERT_POWER_BUILD) && defined(ERT_AN547_RTT)"));
	free(src);
	free(port_c);
}

static void an505_is_an_m33_without_pmu(void **state)
{
	(void)state;
	struct ergon_fw_port p;
	struct ergon_err err = {0};
	if (ergon_fw_port_load(tdir(), "an505", &p, &err) != 0)
		fail_msg("%s", err.msg);
	assert_string_equal(p.board, "qemu-an505");
	assert_string_equal(p.qemu_machine, "mps2-an505");
	assert_string_equal(p.cpu_flags[0], "-mcpu=cortex-m33");
	assert_int_equal(p.pmu, ERGON_FW_PORT_NONE);
	assert_int_equal(p.tfl_kernels, ERGON_FW_PORT_KERNELS_REF);
	assert_int_equal(p.ina228_i2c, 0);
	/* AN505: 4 MiB code SSRAM, 2 MiB data SSRAM (the .ld's regions). */
	assert_int_equal(p.code_bytes, ld_length(p.linker_script, "CODE ("));
	assert_int_equal(p.ram_bytes, ld_length(p.linker_script, "RAM  ("));
	assert_int_equal(p.code_bytes, 4u * 1024u * 1024u);
	assert_int_equal(p.ram_bytes, 2u * 1024u * 1024u);
	assert_int_equal(p.core_clock_hz, 20000000u);
	assert_int_equal(p.max_gpio_pin, 2u);
	/* The MPS2's two user LEDs: LED0 the gate, LED1 the layer marker. */
	assert_int_equal(p.gate_pin, 1u);
	assert_int_equal(p.marker_pin, 2u);
	assert_int_equal(p.memory_modes, 0u); /* no TCMs, no shared SRAM */
	assert_int_equal(p.n_rtt_defines, 0); /* UART only */
}

static void only_folders_with_a_descriptor_are_ports(void **state)
{
	(void)state;
	struct ergon_fw_port *all = NULL;
	size_t n = 0;
	struct ergon_err err = {0};
	if (ergon_fw_port_list(tdir(), &all, &n, &err) != 0)
		fail_msg("%s", err.msg);
	/* target/port/ also holds x86_64/ (the host's SIMD) and common/. */
	int an505 = 0, an547 = 0;
	for (size_t i = 0; i < n; i++) {
		an505 += strcmp(all[i].name, "an505") == 0;
		an547 += strcmp(all[i].name, "an547") == 0;
		assert_string_not_equal(all[i].name, "x86_64");
		assert_string_not_equal(all[i].name, "common");
	}
	assert_int_equal(an505, 1);
	assert_int_equal(an547, 1);
	free(all);
}

/* The an547 descriptor with `from` replaced by `to`. */
static char *mutated(const char *from, const char *to)
{
	char *path = ts_strf("%s/port/an547/port.json", tdir());
	char *text = ts_read_file(path, NULL);
	assert_non_null(text);
	char *hit = strstr(text, from);
	if (hit == NULL)
		fail_msg("'%s' is not in %s", from, path);
	char *out = ts_strf("%.*s%s%s", (int)(hit - text), text, to, hit + strlen(from));
	free(text);
	free(path);
	return out;
}

static void bad_fields_are_refused_by_name(void **state)
{
	(void)state;
	static const struct {
		const char *from, *to, *want1, *want2;
	} cases[] = {
	    {"\"ergon-port/1\"", "\"ergon-port/9\"", "schema", "the version this ergon reads"},
	    {"\"title\"", "\"titel\"", "unknown field 'titel'", "the fields are"},
	    {"\"status\": \"emulated\"", "\"status\": \"tested\"", "validation.status",
	     "not one of emulated, hardware, unvalidated"},
	    {"\"-mthumb\"", "\"-fplugin=x.so\"", "cpu_flags", "not a machine flag"},
	    {"\"port/an547/port.c\"", "\"../../etc/port.c\"", "sources[0]",
	     "not a path under target/"},
	    {"\"port/an547/port.c\"", "\"port/an547/port.h\"", "sources", "not a .c or .S file"},
	    {"\"reserve_bytes\": 65536", "\"reserve_bytes\": 600000", "memory.code.reserve_bytes",
	     "is not below memory.code.bytes"},
	    {"\"gate\": 1", "\"gate\": 9", "hal.gpio.gate", "above hal.gpio.max_pin"},
	    {"\"marker\": 2", "\"marker\": 9", "hal.gpio.marker", "above hal.gpio.max_pin"},
	    {"\"marker\": 2", "\"marker\": 1", "hal.gpio.marker", "also hal.gpio.gate"},
	    {"\"marker\": 2", "\"marker\": -1", "hal.gpio.marker", "out of range"},
	    {"\"pmu\": \"probed\"", "\"pmu\": 1", "hal.pmu", "must be one of none, probed, present"},
	    {"\"ina228_i2c\": false", "\"ina228_i2c\": \"no\"", "hal.ina228_i2c",
	     "must be true or false"},
	    {"\"kind\": \"qemu\", \"machine\": \"mps3-an547\"", "\"kind\": \"probe\"",
	     "validation.status", "'emulated' is for run.kind qemu"},
	    {"\"status\": \"emulated\"", "\"status\": \"hardware\"", "validation.status",
	     "a port that runs under QEMU is 'emulated'"},
	    {"\"-mcpu=cortex-m55\"", "\"-mcpu=cortex-m33\"", "tfl_kernels",
	     "mve needs a Helium core"},
	    {"\"ref\", ", "", "tfl_kernels", "must include ref"},
	    {"\"core_clock_hz\": 32000000", "\"core_clock_hz\": 0", "hal.core_clock_hz",
	     "out of range"},
	    {"\"board\": \"qemu-an547\"", "\"board\": \"qemu an547\"", "board",
	     "letters, digits, _ and - only"},
	    {"\"toolchain\": \"arm-none-eabi-gcc\"", "\"toolchain\": \"clang\"", "toolchain",
	     "arm-none-eabi-gcc only"},
	    {"{\n  \"schema\"", "{\"schema\": 1,\n  \"schema\"", "not valid JSON", "duplicate"},
	    {"\"extreme\", ", "\"tcm\", ", "memory_modes", "not extreme or shared_sram"},
	    {",\n    \"shared_sram\": {\"region\": \"ISRAM\", \"bytes\": 2097152, \"reserve_bytes\": 0}",
	     "", "memory_modes", "shared_sram needs memory.shared_sram"},
	    {"\"cpu\":", "\"defines\": [\"-DX=1=2\"], \"cpu\":", "defines",
	     "not -DNAME or -DNAME=VALUE"},
	    {"\"cpu\":", "\"defines\": [\"-include x.h\"], \"cpu\":", "defines",
	     "not -DNAME or -DNAME=VALUE"},
	    {"\"-DERT_AN547_RTT=1\"", "\"-DERT_AN547_RTT=1\", \"-O0\"", "rtt_defines",
	     "not -DNAME or -DNAME=VALUE"},
	    {"\"rtt_defines\": [\"-DERT_AN547_RTT=1\"]", "\"rtt_defines\": \"-DERT_AN547_RTT=1\"",
	     "rtt_defines", ""},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *text = mutated(cases[i].from, cases[i].to);
		struct ergon_fw_port p;
		struct ergon_err err = {0};
		int rc = ergon_fw_port_parse(text, strlen(text), "x/port.json", &p, &err);
		if (rc != ERGON_ECONFIG || strncmp(err.msg, "x/port.json", 11) != 0 ||
		    strstr(err.msg, cases[i].want1) == NULL || strstr(err.msg, cases[i].want2) == NULL)
			fail_msg("case %zu (%s -> %s): rc %d, '%s'", i, cases[i].from, cases[i].to, rc,
				 err.msg);
		free(text);
	}
}

/* A tree of one port folder `dir` holding the an547 descriptor mutated. */
static char *tree_with(const char *dir, const char *from, const char *to)
{
	char *root = ts_tmpdir();
	char *pdir = ts_strf("%s/port/%s", root, dir);
	char *cmd = ts_strf("mkdir -p '%s' && cp -r '%s/port/an547/.' '%s/'", pdir, tdir(), pdir);
	assert_int_equal(system(cmd), 0);
	char *text = mutated(from, to);
	char *path = ts_strf("%s/port.json", pdir);
	assert_int_equal(ts_write_file(path, text, strlen(text)), 0);
	free(text);
	free(path);
	free(cmd);
	free(pdir);
	return root;
}

static void load_checks_the_tree(void **state)
{
	(void)state;
	struct ergon_fw_port p;
	struct ergon_err err = {0};
	/* The port's name is its folder's. */
	char *root = tree_with("myboard", "\"port\": \"an547\"", "\"port\": \"other\"");
	assert_int_equal(ergon_fw_port_load(root, "myboard", &p, &err), ERGON_ECONFIG);
	if (strstr(err.msg, "'other' is not the folder's name 'myboard'") == NULL)
		fail_msg("%s", err.msg);
	ts_tmpdir_remove(root);
	free(root);
	/* A source that is not there is named with its path. */
	root = tree_with("an547", "\"port/an547/libc_min.c\"", "\"port/an547/nothere.c\"");
	err = (struct ergon_err){0};
	assert_int_equal(ergon_fw_port_load(root, "an547", &p, &err), ERGON_ECONFIG);
	if (strstr(err.msg, ": sources: ") == NULL || strstr(err.msg, "nothere.c") == NULL ||
	    strstr(err.msg, "fix the path") == NULL)
		fail_msg("%s", err.msg);
	ts_tmpdir_remove(root);
	free(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(an547_is_the_first_port),
	    cmocka_unit_test(an505_is_an_m33_without_pmu),
	    cmocka_unit_test(only_folders_with_a_descriptor_are_ports),
	    cmocka_unit_test(bad_fields_are_refused_by_name),
	    cmocka_unit_test(load_checks_the_tree),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
