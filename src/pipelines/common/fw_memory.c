/* Where a model firmware placed its arena and weights (common/).
 *
 * profiling.extreme_mode and profiling.force_shared_sram reach a port's
 * model firmware as a define (ERT_MEM_EXTREME / ERT_MEM_SHARED_SRAM,
 * target/port/common/model_main.c, in the sections the port's ert_port.h
 * names) and a linker placement
 * (an547.ld's .ert_shared_sram in the shared system SRAM). This reads the
 * linked ELF's own symbol table (src/core/elf32.c) to say where the arena
 * and the model's weights landed, and names the region each lies in: the
 * regions are the port's (its descriptor's memory.code, memory.ram and
 * memory.shared_sram name them), at the origins and lengths the linker
 * itself states in the link map's "Memory Configuration" table (the
 * linker script's MEMORY, as the link used it). No board's addresses are
 * written here. An image that did not place them as the mode requires is
 * refused: the build record states the placement from the files, never
 * from the request (docs/internals/ports.md, "The placement record"). */
#include "ergon/elf32.h"
#include "ergon/fileio.h"
#include "pipelines/common/common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A link map is a few hundred KiB; far larger is not one of ours. */
#define MAP_FILE_MAX ((size_t)64 << 20)

/* A line of text[0..len): [*pos, end of line), *pos moved past it. 0 at
 * the end of the text. */
static int next_line(const char *text, size_t len, size_t *pos, const char **line, size_t *n)
{
	if (*pos >= len)
		return 0;
	const char *s = text + *pos;
	const char *nl = memchr(s, '\n', len - *pos);
	*n = nl ? (size_t)(nl - s) : len - *pos;
	*line = s;
	*pos += *n + (nl != NULL);
	return 1;
}

/* One token of line[*at..n) (after blanks) into [tok, tok + *tl). */
static void token(const char *line, size_t n, size_t *at, const char **tok, size_t *tl)
{
	while (*at < n && (line[*at] == ' ' || line[*at] == '\t' || line[*at] == '\r'))
		(*at)++;
	*tok = line + *at;
	*tl = 0;
	while (*at < n && line[*at] != ' ' && line[*at] != '\t' && line[*at] != '\r') {
		(*at)++;
		(*tl)++;
	}
}

/* "0x" and 1..16 hex digits, no more than 0x100000000 (ld prints 32-bit
 * values with 8 digits, 64-bit hosts' with 16). */
static int hex_token(const char *tok, size_t tl, uint64_t *v)
{
	if (tl < 3 || tl > 18 || tok[0] != '0' || (tok[1] != 'x' && tok[1] != 'X'))
		return -1;
	*v = 0;
	for (size_t i = 2; i < tl; i++) {
		char c = tok[i];
		int d = c >= '0' && c <= '9'   ? c - '0'
			: c >= 'a' && c <= 'f' ? c - 'a' + 10
			: c >= 'A' && c <= 'F' ? c - 'A' + 10
					       : -1;
		if (d < 0 || *v > (UINT64_C(1) << 32))
			return -1;
		*v = *v * 16u + (uint64_t)d;
	}
	return 0;
}

int ergon_fw_map_regions(const char *text, size_t len, const char *what,
			 struct ergon_fw_map_region *out, int cap, int *n, struct ergon_err *err)
{
	static const char title[] = "Memory Configuration";
	size_t pos = 0, ll = 0;
	const char *line = NULL;
	int lineno = 0, found = 0;
	*n = 0;
	while (!found && next_line(text, len, &pos, &line, &ll)) {
		lineno++;
		found = ll >= sizeof title - 1 && memcmp(line, title, sizeof title - 1) == 0 &&
			(ll == sizeof title - 1 || line[sizeof title - 1] == '\r');
	}
	if (!found)
		return ergon_err_set(err, ERGON_EPARSE,
				     "%s: no \"Memory Configuration\" table: not a GNU ld link "
				     "map (arm-none-eabi-ld -Map writes one)",
				     what);
	/* A blank line, the heading row, then one row a region up to the
	 * next blank line. */
	int header = 0;
	while (next_line(text, len, &pos, &line, &ll)) {
		lineno++;
		size_t at = 0, tl = 0;
		const char *tok = NULL;
		token(line, ll, &at, &tok, &tl);
		if (tl == 0) {
			if (header)
				return 0;
			continue;
		}
		if (!header) {
			if (tl != 4 || memcmp(tok, "Name", 4) != 0)
				return ergon_err_set(err, ERGON_EPARSE,
						     "%s:%d: Memory Configuration: expected the "
						     "heading 'Name Origin Length Attributes'",
						     what, lineno);
			header = 1;
			continue;
		}
		if (tl == 9 && memcmp(tok, "*default*", 9) == 0)
			continue; /* ld's own catch-all, not a region of the script */
		const char *name = tok;
		size_t nl = tl;
		uint64_t origin = 0, length = 0;
		const char *ot = NULL, *lt = NULL;
		size_t ol = 0, ltl = 0;
		token(line, ll, &at, &ot, &ol);
		token(line, ll, &at, &lt, &ltl);
		if (hex_token(ot, ol, &origin) || hex_token(lt, ltl, &length))
			return ergon_err_set(err, ERGON_EPARSE,
					     "%s:%d: Memory Configuration: '%.*s' is not NAME "
					     "0xORIGIN 0xLENGTH [ATTRIBUTES]",
					     what, lineno, (int)(ll > 80 ? 80 : ll), line);
		for (size_t i = 0; i < nl; i++)
			if ((unsigned char)name[i] < 0x21 || (unsigned char)name[i] > 0x7e)
				return ergon_err_set(err, ERGON_EPARSE,
						     "%s:%d: Memory Configuration: the region name "
						     "holds a control or non-ASCII byte at %zu",
						     what, lineno, i);
		if (nl >= sizeof out[0].name)
			return ergon_err_set(
			    err, ERGON_EPARSE,
			    "%s:%d: Memory Configuration: the region name '%.*s...' "
			    "is longer than %zu characters",
			    what, lineno, 32, name, sizeof out[0].name - 1);
		if (length == 0 || origin + length > (UINT64_C(1) << 32) || length > UINT32_MAX)
			return ergon_err_set(
			    err, ERGON_EPARSE,
			    "%s:%d: Memory Configuration: region %.*s (origin "
			    "0x%llX, length 0x%llX) is empty or ends beyond 4 GiB: "
			    "not a Cortex-M memory",
			    what, lineno, (int)nl, name, (unsigned long long)origin,
			    (unsigned long long)length);
		if (*n == cap)
			return ergon_err_set(err, ERGON_EPARSE,
					     "%s:%d: Memory Configuration: more than %d regions",
					     what, lineno, cap);
		memset(&out[*n], 0, sizeof out[*n]); /* no stale bytes after the name */
		memcpy(out[*n].name, name, nl);
		out[*n].name[nl] = '\0';
		out[*n].origin = (uint32_t)origin;
		out[*n].length_bytes = (uint32_t)length;
		(*n)++;
	}
	return header ? 0
		      : ergon_err_set(err, ERGON_EPARSE,
				      "%s: Memory Configuration: the table ends before its heading",
				      what);
}

/* A region of the record: where it is (from the link), what it is called
 * in the record, and its role in the port's descriptor. */
enum role { ROLE_CODE = 1, ROLE_RAM, ROLE_SHARED, ROLE_OTHER };
struct region {
	uint32_t base, size;
	char name[ERGON_FW_PORT_NAME_MAX + 64];
	enum role role;
};
#define REGIONS_MAX (3 + ERGON_FW_MAP_REGIONS_MAX)

static int region_of(const struct region *r, int nr, uint32_t addr, uint32_t size)
{
	for (int i = 0; i < nr; i++)
		if (addr >= r[i].base && size <= r[i].size && addr - r[i].base <= r[i].size - size)
			return i;
	return -1;
}

/* The descriptor's regions, in its order (code, ram, shared_sram), each at
 * the link's origin and length; then the link's regions the descriptor
 * does not name. */
static int port_regions(const struct ergon_fw_port *port, const char *map,
			const struct ergon_fw_map_region *mr, int nm, struct region *r, int *nr,
			struct ergon_err *err)
{
	const struct {
		const char *region, *field;
		uint32_t bytes;
		enum role role;
	} want[3] = {
	    {port->code_region, "memory.code", port->code_bytes, ROLE_CODE},
	    {port->ram_region, "memory.ram", port->ram_bytes, ROLE_RAM},
	    {port->shared_region, "memory.shared_sram", port->shared_bytes, ROLE_SHARED},
	};
	int used[ERGON_FW_MAP_REGIONS_MAX] = {0};
	*nr = 0;
	for (int w = 0; w < 3; w++) {
		if (want[w].role == ROLE_SHARED && port->shared_bytes == 0)
			continue; /* optional: the port has no shared SRAM */
		int k = -1;
		for (int i = 0; i < nm && k < 0; i++)
			if (strcmp(mr[i].name, want[w].region) == 0)
				k = i;
		if (k < 0) {
			char list[256];
			size_t l = 0;
			list[0] = '\0';
			for (int i = 0; i < nm && l < sizeof list; i++)
				l += (size_t)snprintf(list + l, sizeof list - l, "%s%s",
						      i ? ", " : "", mr[i].name);
			return ergon_err_set(
			    err, ERGON_ECONFIG,
			    "%s: %s.region: '%s' is not a MEMORY region of the link (%s's Memory "
			    "Configuration has %s), so the build record cannot say what lies in "
			    "it; name the region of target/%s (docs/internals/ports.md)",
			    port->file, want[w].field, want[w].region, map, nm ? list : "none",
			    port->linker_script);
		}
		if (mr[k].length_bytes != want[w].bytes)
			return ergon_err_set(
			    err, ERGON_ECONFIG,
			    "%s: %s.bytes: %u is not the length of %s in the link (0x%08X = %u "
			    "bytes, %s); make it target/%s's LENGTH of %s "
			    "(docs/internals/ports.md)",
			    port->file, want[w].field, (unsigned)want[w].bytes, mr[k].name,
			    (unsigned)mr[k].length_bytes, (unsigned)mr[k].length_bytes, map,
			    port->linker_script, mr[k].name);
		used[k] = 1;
		r[*nr].base = mr[k].origin;
		r[*nr].size = mr[k].length_bytes;
		r[*nr].role = want[w].role;
		snprintf(r[*nr].name, sizeof r[*nr].name,
			 want[w].role == ROLE_SHARED ? "%.63s (shared SRAM)" : "%.63s", mr[k].name);
		(*nr)++;
	}
	for (int i = 0; i < nm; i++)
		if (!used[i]) {
			r[*nr].base = mr[i].origin;
			r[*nr].size = mr[i].length_bytes;
			r[*nr].role = ROLE_OTHER;
			snprintf(r[*nr].name, sizeof r[*nr].name,
				 "%.63s (a region of the link that the port's memory does not name)",
				 mr[i].name);
			(*nr)++;
		}
	return 0;
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

static json_t *place_json(const struct ergon_elf32_place *p, const struct region *r, int k,
			  const char *outside)
{
	return json_pack("{s:s,s:I,s:I,s:s}", "section", p->section, "addr", (json_int_t)p->addr,
			 "size", (json_int_t)p->size, "region", k >= 0 ? r[k].name : outside);
}

int ergon_fw_memory_record(const struct ergon_fw_port *port, const char *elf, const char *map,
			   enum ergon_fw_memory_mode mode, json_t **out, struct ergon_err *err)
{
	*out = NULL;
	/* What the mode's record needs of the descriptor (the model build
	 * refuses a mode the port does not offer before it compiles). */
	unsigned need = mode == ERGON_FW_MEMORY_EXTREME	      ? ERGON_FW_PORT_MODE_EXTREME
			: mode == ERGON_FW_MEMORY_SHARED_SRAM ? ERGON_FW_PORT_MODE_SHARED_SRAM
							      : 0u;
	if (need && !(port->memory_modes & need))
		return ergon_err_set(err, ERGON_ECONFIG,
				     "%s: memory_modes: has no %s, so the %s port's firmware does "
				     "not offer %s; add it there only when its model main places "
				     "the arena so (docs/internals/ports.md)",
				     port->file,
				     need == ERGON_FW_PORT_MODE_EXTREME ? "extreme" : "shared_sram",
				     port->name, mode_name(mode));
	if (mode == ERGON_FW_MEMORY_SHARED_SRAM && port->shared_bytes == 0)
		return ergon_err_set(err, ERGON_ECONFIG,
				     "%s: memory.shared_sram: missing, and force_shared_sram's "
				     "record needs the region it puts the arena in; add "
				     "{\"region\", \"bytes\", \"reserve_bytes\"} "
				     "(docs/internals/ports.md)",
				     port->file);
	char *img = NULL, *mtext = NULL;
	size_t len = 0, mlen = 0;
	struct ergon_elf32_place arena, weights;
	struct ergon_fw_map_region mr[ERGON_FW_MAP_REGIONS_MAX];
	struct region r[REGIONS_MAX];
	int nm = 0, nr = 0;
	int rc = ergon_file_read_all(map, MAP_FILE_MAX, &mtext, &mlen, err);
	if (!rc)
		rc = ergon_fw_map_regions(mtext, mlen, map, mr, ERGON_FW_MAP_REGIONS_MAX, &nm, err);
	free(mtext);
	if (!rc)
		rc = port_regions(port, map, mr, nm, r, &nr, err);
	if (!rc)
		rc = ergon_file_read_all(elf, (size_t)64 << 20, &img, &len, err);
	if (!rc)
		rc = ergon_elf32_symbol(img, len, elf, "arena", &arena, err);
	if (!rc)
		rc = ergon_elf32_symbol(img, len, elf, "ert_model_data", &weights, err);
	free(img);
	if (rc)
		return rc;
	int ra = region_of(r, nr, arena.addr, arena.size);
	int rw = region_of(r, nr, weights.addr, weights.size);
	char outside[ERGON_FW_PORT_NAME_MAX + 32];
	snprintf(outside, sizeof outside, "outside the %s memory map", port->name);
	/* Extreme mode: both in the port's own memory (memory.code and
	 * memory.ram: the an547's TCMs), none in the shared SRAM. */
	int a_own = ra >= 0 && (r[ra].role == ROLE_CODE || r[ra].role == ROLE_RAM);
	int w_own = rw >= 0 && (r[rw].role == ROLE_CODE || r[rw].role == ROLE_RAM);
	char why[256];
	why[0] = '\0';
	if (mode == ERGON_FW_MEMORY_EXTREME && !(a_own && w_own))
		snprintf(why, sizeof why,
			 "extreme mode needs the model's weights and arena in %s or %s (the "
			 "port's memory.code and memory.ram)",
			 port->code_region, port->ram_region);
	else if (mode == ERGON_FW_MEMORY_SHARED_SRAM && !(ra >= 0 && r[ra].role == ROLE_SHARED))
		snprintf(why, sizeof why,
			 "force_shared_sram places the arena in the shared SRAM (%s, the port's "
			 "memory.shared_sram)",
			 port->shared_region);
	if (why[0])
		return ergon_err_set(
		    err, ERGON_EPARSE,
		    "%s: %s, but the linked image has the arena at 0x%08X (%s) and "
		    "the weights at 0x%08X (%s); check target/%s",
		    elf, why, (unsigned)arena.addr, ra >= 0 ? r[ra].name : outside,
		    (unsigned)weights.addr, rw >= 0 ? r[rw].name : outside, port->linker_script);
	const char *def = ergon_fw_memory_define(mode);
	*out = json_pack("{s:s,s:s?,s:o,s:o}", "mode", mode_name(mode), "define", def, "arena",
			 place_json(&arena, r, ra, outside), "weights",
			 place_json(&weights, r, rw, outside));
	return *out ? 0 : ergon_err_set(err, ERGON_ENOMEM, "out of memory");
}
