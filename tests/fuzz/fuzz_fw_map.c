/* Fuzz the link map's Memory Configuration reader (ergon_fw_map_regions,
 * src/pipelines/common/fw_memory.c; docs/internals/ports.md, "The
 * placement record"): the input is a link map's bytes, not NUL-terminated.
 * Properties: it answers ok or ERGON_EPARSE naming the map (never another
 * code, never a crash, never a read past the input); an accepted table
 * holds at most cap regions, each a NUL-terminated name of printable ASCII
 * without blanks that is not ld's *default*, a length above 0 and an end
 * within 4 GiB; and reading it again gives the same regions. */
#include "fuzz_props.h"
#include "pipelines/common/common.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum { CAP = 4 };
	static struct ergon_fw_map_region r[CAP], q[CAP];
	struct ergon_err err = {0};
	int n = -1, m = -1;
	int rc = ergon_fw_map_regions((const char *)data, size, "fuzz.map", r, CAP, &n, &err);
	if (rc != 0) {
		FUZZ_REQUIRE(rc == ERGON_EPARSE);
		FUZZ_REQUIRE(strncmp(err.msg, "fuzz.map", 8) == 0);
		return 0;
	}
	FUZZ_REQUIRE(n >= 0 && n <= CAP);
	for (int i = 0; i < n; i++) {
		FUZZ_REQUIRE(memchr(r[i].name, '\0', sizeof r[i].name) != NULL);
		FUZZ_REQUIRE(r[i].name[0] != '\0' && strcmp(r[i].name, "*default*") != 0);
		for (const char *c = r[i].name; *c; c++)
			FUZZ_REQUIRE(*c > ' ' && *c <= '~'); /* printable, no blank */
		FUZZ_REQUIRE(r[i].length_bytes > 0);
		FUZZ_REQUIRE((uint64_t)r[i].origin + r[i].length_bytes <= (UINT64_C(1) << 32));
	}
	FUZZ_REQUIRE(ergon_fw_map_regions((const char *)data, size, "fuzz.map", q, CAP, &m, &err) ==
		     0);
	FUZZ_REQUIRE(m == n && memcmp(r, q, sizeof r[0] * (size_t)n) == 0);
	return 0;
}
