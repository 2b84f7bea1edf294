/* Fuzz the board port descriptor's reader (ergon_fw_port_parse,
 * src/pipelines/common/fw_port.c; docs/internals/ports.md): the input is a
 * descriptor's bytes. Properties: it answers ok or ERGON_ECONFIG naming
 * the file (never another code, never a crash); an accepted descriptor
 * holds only what the reader promises: every text NUL-terminated inside
 * its buffer, the paths relative with no ".." component, machine flags only, each
 * reserve below its memory, the pins within max_pin, the ref kernels, a
 * QEMU port 'emulated' and a probe port not, and parsing it again gives
 * the same result. */
#include "fuzz_props.h"
#include "pipelines/common/common.h"

#include <stdint.h>
#include <string.h>

static int bounded(const char *s, size_t cap)
{
	return memchr(s, '\0', cap) != NULL;
}

/* Relative, and no component is "." or ".." (a name such as "a..c" is). */
static int rel_path(const char *s)
{
	if (s[0] == '/' || s[0] == '\0')
		return 0;
	for (const char *c = s; *c;) {
		size_t l = strcspn(c, "/");
		if (l == 0 || (l == 1 && c[0] == '.') || (l == 2 && c[0] == '.' && c[1] == '.'))
			return 0;
		c += l + (c[l] == '/');
	}
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ergon_fw_port p, q;
	struct ergon_err err = {0};
	int rc = ergon_fw_port_parse((const char *)data, size, "fuzz/port.json", &p, &err);
	if (rc != 0) {
		FUZZ_REQUIRE(rc == ERGON_ECONFIG || rc == ERGON_ENOMEM);
		FUZZ_REQUIRE(strncmp(err.msg, "fuzz/port.json", 14) == 0);
		return 0;
	}
	FUZZ_REQUIRE(bounded(p.name, sizeof p.name) && p.name[0]);
	FUZZ_REQUIRE(bounded(p.board, sizeof p.board) && p.board[0]);
	FUZZ_REQUIRE(bounded(p.validation_note, sizeof p.validation_note));
	FUZZ_REQUIRE(p.validation >= ERGON_FW_PORT_EMULATED &&
		     p.validation <= ERGON_FW_PORT_UNVALIDATED);
	FUZZ_REQUIRE(p.n_cpu_flags >= 1 && p.n_cpu_flags <= ERGON_FW_PORT_LIST_MAX);
	for (int i = 0; i < p.n_cpu_flags; i++)
		FUZZ_REQUIRE(strncmp(p.cpu_flags[i], "-m", 2) == 0);
	FUZZ_REQUIRE(p.n_sources >= 1 && p.n_include_dirs >= 1);
	for (int i = 0; i < p.n_sources; i++)
		FUZZ_REQUIRE(rel_path(p.sources[i]));
	for (int i = 0; i < p.n_include_dirs; i++)
		FUZZ_REQUIRE(rel_path(p.include_dirs[i]));
	FUZZ_REQUIRE(rel_path(p.model_main) && rel_path(p.linker_script));
	FUZZ_REQUIRE(p.code_reserve_bytes < p.code_bytes && p.ram_reserve_bytes < p.ram_bytes);
	FUZZ_REQUIRE(p.gate_pin <= p.max_gpio_pin && p.state_pin <= p.max_gpio_pin &&
		     p.go_pin <= p.max_gpio_pin);
	FUZZ_REQUIRE(p.tfl_kernels & ERGON_FW_PORT_KERNELS_REF);
	FUZZ_REQUIRE(!(p.memory_modes & ERGON_FW_PORT_MODE_SHARED_SRAM) || p.shared_bytes > 0);
	FUZZ_REQUIRE(p.shared_bytes == 0 || p.shared_reserve_bytes < p.shared_bytes);
	FUZZ_REQUIRE((p.run == ERGON_FW_PORT_RUN_QEMU) == (p.validation == ERGON_FW_PORT_EMULATED));
	FUZZ_REQUIRE(p.run != ERGON_FW_PORT_RUN_QEMU || p.qemu_machine[0]);
	FUZZ_REQUIRE(strlen(p.sha256) == 64);
	FUZZ_REQUIRE(ergon_fw_port_parse((const char *)data, size, "fuzz/port.json", &q, &err) ==
		     0);
	FUZZ_REQUIRE(memcmp(&p, &q, sizeof p) == 0);
	return 0;
}
