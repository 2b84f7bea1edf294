/* Board ports: the descriptor target/port/<port>/port.json that tells the
 * host how to build and run ergon-target's firmware for one board
 * (docs/internals/ports.md): the compiler's machine flags, the sources,
 * the linker script, the memory the fit check counts, the HAL features,
 * how the board runs (QEMU or a debug probe) and whether the port was ever
 * run. Read with jansson, every field checked, an error names the file,
 * the field and the fix. Declared in common.h.
 *
 * The reader (ergon_fw_port_parse) takes bytes and touches no file, so a
 * fuzzer drives it (tests/fuzz/fuzz_fw_port.c); ergon_fw_port_load adds
 * what needs the tree: the folder's name and that every file named exists.
 */
#include "pipelines/common/common.h"

#include "ergon/fileio.h"
#include "ergon/jcs.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A descriptor is a page of JSON; anything much larger is not one. */
#define PORT_FILE_MAX ((size_t)64 << 10)
/* Folders under target/port/ looked at for a board's port. */
#define PORT_DIRS_MAX 64
/* The memory a port may declare: from a small MCU to far beyond any. */
#define PORT_MEM_MIN 1024u
#define PORT_MEM_MAX (1024u * 1024u * 1024u)
#define PORT_CLOCK_MAX 4000000000u

static const char *const top_keys[] = {"schema",	"port",	      "board",	  "title",
				       "validation",	"toolchain",  "cpu",	  "cpu_flags",
				       "include_dirs", "sources",    "model_main", "kernels_main",
				       "memory_modes", "defines",	"rtt_defines",
				       "linker_script", "memory",   "tfl_kernels", "hal",
				       "run",		NULL};

/* The first error, "FILE: FIELD: what is wrong; the fix". */
__attribute__((format(printf, 4, 5))) static int bad(struct ergon_err *err, const char *file,
						     const char *field, const char *fmt, ...)
{
	char msg[ERGON_ERR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return ergon_err_set(err, ERGON_ECONFIG, "%s: %s: %s (docs/internals/ports.md)", file,
			     field, msg);
}

static int known(const char *const *keys, const char *k)
{
	for (size_t i = 0; keys[i]; i++)
		if (strcmp(keys[i], k) == 0)
			return 1;
	return 0;
}

/* Every key of o is one of keys. */
static int only_keys(const json_t *o, const char *const *keys, const char *file,
		     const char *where, struct ergon_err *err)
{
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)o, k, v)
	{
		(void)v;
		if (!known(keys, k)) {
			char list[512];
			size_t n = 0;
			list[0] = '\0';
			for (size_t i = 0; keys[i] && n < sizeof list; i++)
				n += (size_t)snprintf(list + n, sizeof list - n, "%s%s",
						      i ? ", " : "", keys[i]);
			return bad(err, file, where, "unknown field '%.64s'; the fields are %s",
				   k, list);
		}
	}
	return 0;
}

/* A string field into out (cap bytes): present unless optional, a string,
 * not empty, shorter than cap, printable ASCII. */
static int get_str(const json_t *o, const char *key, const char *field, int optional, char *out,
		   size_t cap, const char *file, struct ergon_err *err)
{
	const json_t *v = json_object_get(o, key);
	out[0] = '\0';
	if (v == NULL) {
		if (optional)
			return 0;
		return bad(err, file, field, "missing; add it");
	}
	if (!json_is_string(v))
		return bad(err, file, field, "must be a string");
	const char *s = json_string_value(v);
	size_t n = json_string_length(v);
	if (n == 0)
		return bad(err, file, field, "is empty; give a value or leave the field out");
	if (n >= cap)
		return bad(err, file, field, "is %zu characters long, at most %zu", n, cap - 1);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
			return bad(err, file, field,
				   "holds a control or non-ASCII character at %zu; write plain "
				   "ASCII",
				   i);
	memcpy(out, s, n + 1);
	return 0;
}

/* s is made of [A-Za-z0-9] and the characters of extra. */
static int name_ok(const char *s, const char *extra)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || strchr(extra, *s) != NULL))
			return 0;
	return 1;
}

/* A path under target/: relative, [A-Za-z0-9_.-/], no empty, "." or ".."
 * component (a descriptor names files of the tree, nothing outside it). */
static int path_ok(const char *s)
{
	if (!name_ok(s, "_.-/") || s[0] == '/')
		return 0;
	const char *p = s;
	while (*p) {
		size_t l = strcspn(p, "/");
		if (l == 0 || (l == 1 && p[0] == '.') || (l == 2 && p[0] == '.' && p[1] == '.'))
			return 0;
		p += l;
		if (*p == '/')
			p++;
		if (*p == '\0' && p[-1] == '/')
			return 0;
	}
	return 1;
}

static int get_path(const json_t *o, const char *key, const char *field, int optional, char *out,
		    size_t cap, const char *file, struct ergon_err *err)
{
	int rc = get_str(o, key, field, optional, out, cap, file, err);
	if (rc || out[0] == '\0')
		return rc;
	if (!path_ok(out))
		return bad(err, file, field,
			   "'%s' is not a path under target/: write it relative to target/ "
			   "(port/<port>/<file>), of letters, digits and _ . - /, with no '..'",
			   out);
	return 0;
}

/* An array of strings (1..max entries; paths when is_path) into rows. */
/* -DNAME or -DNAME=VALUE of letters, digits and _: the port's own
 * switches (such as its transport), nothing else. */
static int define_check(char (*d)[ERGON_FW_PORT_PATH_MAX], int n, const char *field,
			const char *file, struct ergon_err *err)
{
	for (int i = 0; i < n; i++) {
		size_t l = strcspn(d[i] + 2, "=");
		if (strncmp(d[i], "-D", 2) != 0 || l == 0 || (d[i][2] >= '0' && d[i][2] <= '9') ||
		    !name_ok(d[i] + 2, "_=") ||
		    strchr(d[i] + 2 + l + (d[i][2 + l] == '='), '=') != NULL)
			return bad(err, file, field,
				   "'%s' is not -DNAME or -DNAME=VALUE (letters, digits and _)",
				   d[i]);
	}
	return 0;
}

static int get_list(const json_t *o, const char *key, const char *field, int is_path, int min,
		    char (*rows)[ERGON_FW_PORT_PATH_MAX], int max, int *n, const char *file,
		    struct ergon_err *err)
{
	const json_t *a = json_object_get(o, key);
	*n = 0;
	if (a == NULL && min == 0)
		return 0;
	if (a == NULL)
		return bad(err, file, field, "missing; add it (a list)");
	if (!json_is_array(a))
		return bad(err, file, field, "must be a list of strings");
	size_t len = json_array_size(a);
	if (len < (size_t)min || len > (size_t)max)
		return bad(err, file, field, "has %zu entries; give %d to %d", len, min, max);
	for (size_t i = 0; i < len; i++) {
		char sub[96];
		snprintf(sub, sizeof sub, "%s[%zu]", field, i);
		json_t *wrap = json_pack("{s:O}", "v", json_array_get(a, i));
		if (wrap == NULL)
			return ergon_err_set(err, ERGON_ENOMEM, "out of memory");
		int rc = is_path ? get_path(wrap, "v", sub, 0, rows[i], ERGON_FW_PORT_PATH_MAX,
					    file, err)
				 : get_str(wrap, "v", sub, 0, rows[i], ERGON_FW_PORT_PATH_MAX, file,
					   err);
		json_decref(wrap);
		if (rc)
			return rc;
		for (size_t j = 0; j < i; j++)
			if (strcmp(rows[j], rows[i]) == 0)
				return bad(err, file, sub, "'%s' is listed twice; list it once",
					   rows[i]);
		(*n)++;
	}
	return 0;
}

/* An integer in [lo, hi]. */
static int get_uint(const json_t *o, const char *key, const char *field, uint64_t lo, uint64_t hi,
		    uint32_t *out, const char *file, struct ergon_err *err)
{
	const json_t *v = json_object_get(o, key);
	if (v == NULL)
		return bad(err, file, field, "missing; add it (an integer in [%llu, %llu])",
			   (unsigned long long)lo, (unsigned long long)hi);
	if (!json_is_integer(v))
		return bad(err, file, field, "must be an integer in [%llu, %llu]",
			   (unsigned long long)lo, (unsigned long long)hi);
	json_int_t x = json_integer_value(v);
	if (x < 0 || (uint64_t)x < lo || (uint64_t)x > hi)
		return bad(err, file, field, "%lld is out of range: give [%llu, %llu]",
			   (long long)x, (unsigned long long)lo, (unsigned long long)hi);
	*out = (uint32_t)x;
	return 0;
}

/* One of names (index + 1 into *out). */
static int get_enum(const json_t *o, const char *key, const char *field,
		    const char *const *names, int *out, const char *file, struct ergon_err *err)
{
	char s[32], list[160];
	size_t n = 0;
	list[0] = '\0';
	for (size_t i = 0; names[i]; i++)
		n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "", names[i]);
	const json_t *v = json_object_get(o, key);
	if (v != NULL && !json_is_string(v))
		return bad(err, file, field, "must be one of %s", list);
	int rc = get_str(o, key, field, 0, s, sizeof s, file, err);
	if (rc)
		return rc;
	for (int i = 0; names[i]; i++)
		if (strcmp(names[i], s) == 0) {
			*out = i + 1;
			return 0;
		}
	return bad(err, file, field, "'%s' is not one of %s", s, list);
}

static const json_t *get_obj(const json_t *o, const char *key, const char *const *keys,
			     const char *file, struct ergon_err *err, int *rc)
{
	const json_t *v = json_object_get(o, key);
	if (v == NULL)
		*rc = bad(err, file, key, "missing; add it (an object)");
	else if (!json_is_object(v))
		*rc = bad(err, file, key, "must be an object");
	else
		*rc = only_keys(v, keys, file, key, err);
	return *rc ? NULL : v;
}

const char *const ergon_fw_port_validation_names[] = {"emulated", "hardware", "unvalidated",
						      NULL};
const char *const ergon_fw_port_feature_names[] = {"none", "probed", "present", NULL};
static const char *const run_names[] = {"qemu", "probe", NULL};
static const char *const transport_names[] = {"uart", "rtt", NULL};

static int parse_memory(const json_t *root, struct ergon_fw_port *p, const char *file,
			struct ergon_err *err)
{
	static const char *const mkeys[] = {"code", "ram", "shared_sram", NULL};
	static const char *const rkeys[] = {"region", "bytes", "reserve_bytes", NULL};
	int rc = 0;
	const json_t *m = get_obj(root, "memory", mkeys, file, err, &rc);
	if (rc)
		return rc;
	struct {
		const char *key;
		char *region;
		uint32_t *bytes, *reserve;
	} r[3] = {{"code", p->code_region, &p->code_bytes, &p->code_reserve_bytes},
		  {"ram", p->ram_region, &p->ram_bytes, &p->ram_reserve_bytes},
		  {"shared_sram", p->shared_region, &p->shared_bytes, &p->shared_reserve_bytes}};
	for (int i = 0; i < 3 && !rc; i++) {
		char f[64];
		const json_t *o = json_object_get(m, r[i].key);
		snprintf(f, sizeof f, "memory.%s", r[i].key);
		if (o == NULL && i == 2) /* optional: a shared SRAM for the arena */
			break;
		if (o == NULL)
			return bad(err, file, f,
				   "missing; add {\"region\": NAME, \"bytes\": N, "
				   "\"reserve_bytes\": N}");
		if (!json_is_object(o))
			return bad(err, file, f, "must be an object");
		rc = only_keys(o, rkeys, file, f, err);
		snprintf(f, sizeof f, "memory.%s.region", r[i].key);
		if (!rc)
			rc = get_str(o, "region", f, 0, r[i].region, ERGON_FW_PORT_NAME_MAX, file,
				     err);
		if (!rc && !name_ok(r[i].region, "_"))
			rc = bad(err, file, f,
				 "'%s': name the linker script's MEMORY region (letters, digits, _)",
				 r[i].region);
		snprintf(f, sizeof f, "memory.%s.bytes", r[i].key);
		if (!rc)
			rc = get_uint(o, "bytes", f, PORT_MEM_MIN, PORT_MEM_MAX, r[i].bytes, file,
				      err);
		snprintf(f, sizeof f, "memory.%s.reserve_bytes", r[i].key);
		if (!rc)
			rc = get_uint(o, "reserve_bytes", f, 0, PORT_MEM_MAX, r[i].reserve, file,
				      err);
		if (!rc && *r[i].reserve >= *r[i].bytes)
			rc = bad(err, file, f,
				 "%u is not below memory.%s.bytes (%u): the reserve is what the "
				 "firmware needs besides the model, less than the whole memory",
				 *r[i].reserve, r[i].key, *r[i].bytes);
	}
	return rc;
}

static int parse_hal(const json_t *root, struct ergon_fw_port *p, const char *file,
		     struct ergon_err *err)
{
	static const char *const hkeys[] = {"transport",     "core_clock_hz", "cycle_counter",
					    "pmu",	     "gpio",	      "ina228_i2c",
					    NULL};
	static const char *const gkeys[] = {"gate", "state", "go", "max_pin", "marker", NULL};
	int rc = 0;
	const json_t *h = get_obj(root, "hal", hkeys, file, err, &rc);
	if (!rc)
		rc = get_enum(h, "transport", "hal.transport", transport_names, &p->transport,
			      file, err);
	if (!rc)
		rc = get_uint(h, "core_clock_hz", "hal.core_clock_hz", 1, PORT_CLOCK_MAX,
			      &p->core_clock_hz, file, err);
	if (!rc)
		rc = get_enum(h, "cycle_counter", "hal.cycle_counter", ergon_fw_port_feature_names,
			      &p->cycle_counter, file, err);
	if (!rc)
		rc = get_enum(h, "pmu", "hal.pmu", ergon_fw_port_feature_names, &p->pmu, file,
			      err);
	const json_t *i2c = rc ? NULL : json_object_get(h, "ina228_i2c");
	if (!rc && !json_is_boolean(i2c))
		rc = bad(err, file, "hal.ina228_i2c",
			 "%s; give true when the port fills i2c_read/i2c_write for an on-board "
			 "INA228, false when they are NULL",
			 i2c ? "must be true or false" : "missing");
	if (!rc)
		p->ina228_i2c = json_is_true(i2c);
	const json_t *g = rc ? NULL : json_object_get(h, "gpio");
	if (!rc && !json_is_object(g))
		rc = bad(err, file, "hal.gpio",
			 "%s; give {\"gate\": N, \"state\": N, \"go\": N, \"max_pin\": N} (0: not "
			 "wired)",
			 g ? "must be an object" : "missing");
	if (!rc)
		rc = only_keys(g, gkeys, file, "hal.gpio", err);
	if (!rc)
		rc = get_uint(g, "max_pin", "hal.gpio.max_pin", 0, 255, &p->max_gpio_pin, file,
			      err);
	uint32_t *pins[3] = {&p->gate_pin, &p->state_pin, &p->go_pin};
	for (int i = 0; i < 3 && !rc; i++) {
		char f[32];
		snprintf(f, sizeof f, "hal.gpio.%s", gkeys[i]);
		rc = get_uint(g, gkeys[i], f, 0, 255, pins[i], file, err);
		if (!rc && *pins[i] > p->max_gpio_pin)
			rc = bad(err, file, f,
				 "pin %u is above hal.gpio.max_pin (%u): the HAL has pins 1..%u",
				 *pins[i], p->max_gpio_pin, p->max_gpio_pin);
	}
	/* The layer-marker line (optional: 0, none): a pin of its own, since
	 * it toggles inside the gate (docs/METHOD.md, "Energy per layer"). */
	if (!rc && json_object_get(g, "marker") != NULL)
		rc = get_uint(g, "marker", "hal.gpio.marker", 0, 255, &p->marker_pin, file, err);
	if (!rc && p->marker_pin > p->max_gpio_pin)
		rc = bad(err, file, "hal.gpio.marker",
			 "pin %u is above hal.gpio.max_pin (%u): the HAL has pins 1..%u",
			 p->marker_pin, p->max_gpio_pin, p->max_gpio_pin);
	for (int i = 0; i < 3 && !rc && p->marker_pin != 0; i++)
		if (*pins[i] == p->marker_pin)
			rc = bad(err, file, "hal.gpio.marker",
				 "pin %u is also hal.gpio.%s: the marker line toggles inside the "
				 "gate and needs a pin of its own; give another pin or 0 (no "
				 "marker line)",
				 p->marker_pin, gkeys[i]);
	return rc;
}

int ergon_fw_port_parse(const char *text, size_t len, const char *file, struct ergon_fw_port *p,
			struct ergon_err *err)
{
	memset(p, 0, sizeof *p);
	snprintf(p->file, sizeof p->file, "%s", file);
	ergon_sha256_hex(text, len, p->sha256);
	if (len > PORT_FILE_MAX)
		return bad(err, file, "(file)", "%zu bytes, at most %zu: this is not a descriptor",
			   len, PORT_FILE_MAX);
	json_error_t je;
	json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (root == NULL)
		return ergon_err_set(err, ERGON_ECONFIG,
				     "%s:%d:%d: not valid JSON: %s (docs/internals/ports.md)", file,
				     je.line, je.column, je.text);
	int rc = 0;
	char s[ERGON_FW_PORT_NAME_MAX];
	if (!json_is_object(root)) {
		rc = bad(err, file, "(top)", "must be a JSON object");
		goto out;
	}
	rc = only_keys(root, top_keys, file, "(top)", err);
	if (!rc)
		rc = get_str(root, "schema", "schema", 0, s, sizeof s, file, err);
	if (!rc && strcmp(s, ERGON_FW_PORT_SCHEMA) != 0)
		rc = bad(err, file, "schema", "'%s' is not '%s', the version this ergon reads", s,
			 ERGON_FW_PORT_SCHEMA);
	if (!rc)
		rc = get_str(root, "port", "port", 0, p->name, sizeof p->name, file, err);
	if (!rc && !name_ok(p->name, "_-"))
		rc = bad(err, file, "port", "'%s': letters, digits, _ and - only (the folder's name)",
			 p->name);
	if (!rc)
		rc = get_str(root, "board", "board", 0, p->board, sizeof p->board, file, err);
	if (!rc && !name_ok(p->board, "_-"))
		rc = bad(err, file, "board",
			 "'%s': letters, digits, _ and - only (the board's name in `ergon config "
			 "boards`)",
			 p->board);
	if (!rc)
		rc = get_str(root, "title", "title", 0, p->title, sizeof p->title, file, err);
	/* Whether it ever ran, and where. */
	static const char *const vkeys[] = {"status", "note", NULL};
	const json_t *v = rc ? NULL : get_obj(root, "validation", vkeys, file, err, &rc);
	if (!rc)
		rc = get_enum(v, "status", "validation.status", ergon_fw_port_validation_names,
			      &p->validation, file, err);
	if (!rc)
		rc = get_str(v, "note", "validation.note", 0, p->validation_note,
			     sizeof p->validation_note, file, err);
	/* The build. */
	if (!rc)
		rc = get_str(root, "toolchain", "toolchain", 0, s, sizeof s, file, err);
	if (!rc && strcmp(s, "arm-none-eabi-gcc") != 0)
		rc = bad(err, file, "toolchain",
			 "'%s': ergon builds with arm-none-eabi-gcc only (Debian gcc-arm-none-eabi)",
			 s);
	if (!rc)
		rc = get_str(root, "cpu", "cpu", 0, p->cpu, sizeof p->cpu, file, err);
	if (!rc && !name_ok(p->cpu, "-_."))
		rc = bad(err, file, "cpu", "'%s': the core's name, such as cortex-m55", p->cpu);
	if (!rc)
		rc = get_list(root, "cpu_flags", "cpu_flags", 0, 1, p->cpu_flags,
			      ERGON_FW_PORT_LIST_MAX, &p->n_cpu_flags, file, err);
	/* Machine flags only: a descriptor chooses the core, not the
	 * warnings, the optimisation or a plugin (those are ergon's). */
	for (int i = 0; i < p->n_cpu_flags && !rc; i++)
		if (strncmp(p->cpu_flags[i], "-m", 2) != 0 || !name_ok(p->cpu_flags[i], "-=_.+"))
			rc = bad(err, file, "cpu_flags",
				 "'%s' is not a machine flag: give -mcpu=, -mthumb, -mfloat-abi=, "
				 "-mfpu= or -march= flags only",
				 p->cpu_flags[i]);
	if (!rc)
		rc = get_list(root, "defines", "defines", 0, 0, p->defines, ERGON_FW_PORT_LIST_MAX,
			      &p->n_defines, file, err);
	if (!rc)
		rc = define_check(p->defines, p->n_defines, "defines", file, err);
	if (!rc)
		rc = get_list(root, "rtt_defines", "rtt_defines", 0, 0, p->rtt_defines,
			      ERGON_FW_PORT_LIST_MAX, &p->n_rtt_defines, file, err);
	if (!rc)
		rc = define_check(p->rtt_defines, p->n_rtt_defines, "rtt_defines", file, err);
	if (!rc)
		rc = get_list(root, "include_dirs", "include_dirs", 1, 1, p->include_dirs,
			      ERGON_FW_PORT_LIST_MAX, &p->n_include_dirs, file, err);
	if (!rc)
		rc = get_list(root, "sources", "sources", 1, 1, p->sources, ERGON_FW_PORT_LIST_MAX,
			      &p->n_sources, file, err);
	for (int i = 0; i < p->n_sources && !rc; i++) {
		size_t l = strlen(p->sources[i]);
		if (l < 3 || (strcmp(p->sources[i] + l - 2, ".c") != 0 &&
			      strcmp(p->sources[i] + l - 2, ".S") != 0))
			rc = bad(err, file, "sources", "'%s' is not a .c or .S file",
				 p->sources[i]);
	}
	if (!rc)
		rc = get_path(root, "model_main", "model_main", 0, p->model_main,
			      sizeof p->model_main, file, err);
	if (!rc)
		rc = get_path(root, "kernels_main", "kernels_main", 1, p->kernels_main,
			      sizeof p->kernels_main, file, err);
	if (!rc)
		rc = get_path(root, "linker_script", "linker_script", 0, p->linker_script,
			      sizeof p->linker_script, file, err);
	if (!rc)
		rc = parse_memory(root, p, file, err);
	char kern[ERGON_FW_PORT_LIST_MAX][ERGON_FW_PORT_PATH_MAX];
	int nk = 0;
	if (!rc)
		rc = get_list(root, "tfl_kernels", "tfl_kernels", 0, 1, kern, 2, &nk, file, err);
	for (int i = 0; i < nk && !rc; i++) {
		if (strcmp(kern[i], "ref") == 0)
			p->tfl_kernels |= ERGON_FW_PORT_KERNELS_REF;
		else if (strcmp(kern[i], "mve") == 0)
			p->tfl_kernels |= ERGON_FW_PORT_KERNELS_MVE;
		else
			rc = bad(err, file, "tfl_kernels", "'%s' is not ref or mve", kern[i]);
	}
	if (!rc && !(p->tfl_kernels & ERGON_FW_PORT_KERNELS_REF))
		rc = bad(err, file, "tfl_kernels",
			 "must include ref (the portable kernels every core runs)");
	if (!rc && (p->tfl_kernels & ERGON_FW_PORT_KERNELS_MVE)) {
		int helium = 0;
		for (int i = 0; i < p->n_cpu_flags; i++)
			helium |= strcmp(p->cpu_flags[i], "-mcpu=cortex-m55") == 0 ||
				  strcmp(p->cpu_flags[i], "-mcpu=cortex-m85") == 0;
		if (!helium)
			rc = bad(err, file, "tfl_kernels",
				 "mve needs a Helium core (-mcpu=cortex-m55 or cortex-m85 in "
				 "cpu_flags); drop mve");
	}
	char modes[ERGON_FW_PORT_LIST_MAX][ERGON_FW_PORT_PATH_MAX];
	int nm = 0;
	if (!rc)
		rc = get_list(root, "memory_modes", "memory_modes", 0, 0, modes, 2, &nm, file, err);
	for (int i = 0; i < nm && !rc; i++) {
		if (strcmp(modes[i], "extreme") == 0)
			p->memory_modes |= ERGON_FW_PORT_MODE_EXTREME;
		else if (strcmp(modes[i], "shared_sram") == 0)
			p->memory_modes |= ERGON_FW_PORT_MODE_SHARED_SRAM;
		else
			rc = bad(err, file, "memory_modes",
				 "'%s' is not extreme or shared_sram (the placements of "
				 "profiling.extreme_mode and profiling.force_shared_sram)",
				 modes[i]);
	}
	if (!rc && (p->memory_modes & ERGON_FW_PORT_MODE_SHARED_SRAM) && p->shared_bytes == 0)
		rc = bad(err, file, "memory_modes",
			 "shared_sram needs memory.shared_sram (the region the arena goes to)");
	if (!rc)
		rc = parse_hal(root, p, file, err);
	static const char *const rkeys[] = {"kind", "machine", NULL};
	const json_t *r = rc ? NULL : get_obj(root, "run", rkeys, file, err, &rc);
	if (!rc)
		rc = get_enum(r, "kind", "run.kind", run_names, &p->run, file, err);
	if (!rc && p->run == ERGON_FW_PORT_RUN_QEMU) {
		rc = get_str(r, "machine", "run.machine", 0, p->qemu_machine,
			     sizeof p->qemu_machine, file, err);
		if (!rc && !name_ok(p->qemu_machine, "-_"))
			rc = bad(err, file, "run.machine",
				 "'%s': a machine of qemu-system-arm -M help", p->qemu_machine);
		if (!rc && p->validation != ERGON_FW_PORT_EMULATED)
			rc = bad(err, file, "validation.status",
				 "a port that runs under QEMU is 'emulated' (what ran is the "
				 "emulator, not the board)");
	} else if (!rc) {
		if (json_object_get(r, "machine") != NULL)
			rc = bad(err, file, "run.machine",
				 "only for run.kind qemu; a probe board runs through the board's "
				 "lifecycle (target.lifecycle)");
		if (!rc && p->validation == ERGON_FW_PORT_EMULATED)
			rc = bad(err, file, "validation.status",
				 "'emulated' is for run.kind qemu; a real board's port is "
				 "'hardware' (run on the board) or 'unvalidated' (written from "
				 "documentation, never run)");
	}
out:
	json_decref(root);
	return rc;
}

/* 0 when target/<rel> is a regular file (or a folder when dir). */
static int exists(const char *tdir, const char *rel, int dir, const char *file, const char *field,
		  struct ergon_err *err)
{
	char path[PATH_MAX];
	struct stat st;
	if ((size_t)snprintf(path, sizeof path, "%s/%s", tdir, rel) >= sizeof path)
		return ergon_err_set(err, ERGON_ETOOBIG, "%.64s...: the path is too long", path);
	if (stat(path, &st) != 0 || (dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)))
		return bad(err, file, field, "%s: no such %s in ergon-target; fix the path",
			   path, dir ? "folder" : "file");
	return 0;
}

int ergon_fw_port_load(const char *tdir, const char *dir, struct ergon_fw_port *p,
		       struct ergon_err *err)
{
	char path[PATH_MAX];
	char *text = NULL;
	size_t len = 0;
	if ((size_t)snprintf(path, sizeof path, "%s/port/%s/port.json", tdir, dir) >= sizeof path)
		return ergon_err_set(err, ERGON_ETOOBIG, "%.64s...: the path is too long", path);
	int rc = ergon_file_read_all(path, PORT_FILE_MAX + 1, &text, &len, err);
	if (rc)
		return rc;
	rc = ergon_fw_port_parse(text, len, path, p, err);
	free(text);
	if (!rc && strcmp(p->name, dir) != 0)
		rc = bad(err, path, "port",
			 "'%s' is not the folder's name '%s': name the port after its folder",
			 p->name, dir);
	for (int i = 0; i < p->n_include_dirs && !rc; i++)
		rc = exists(tdir, p->include_dirs[i], 1, path, "include_dirs", err);
	for (int i = 0; i < p->n_sources && !rc; i++)
		rc = exists(tdir, p->sources[i], 0, path, "sources", err);
	if (!rc)
		rc = exists(tdir, p->model_main, 0, path, "model_main", err);
	if (!rc && p->kernels_main[0])
		rc = exists(tdir, p->kernels_main, 0, path, "kernels_main", err);
	if (!rc)
		rc = exists(tdir, p->linker_script, 0, path, "linker_script", err);
	return rc;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int ergon_fw_port_list(const char *tdir, struct ergon_fw_port **out, size_t *n,
		       struct ergon_err *err)
{
	*out = NULL;
	*n = 0;
	char path[PATH_MAX];
	if ((size_t)snprintf(path, sizeof path, "%s/port", tdir) >= sizeof path)
		return ergon_err_set(err, ERGON_ETOOBIG, "%.64s...: the path is too long", path);
	DIR *d = opendir(path);
	if (d == NULL)
		return ergon_err_errno(err, errno,
				       "%s: cannot open ergon-target's ports; set ERGON_TARGET_DIR "
				       "to the target/ folder of the ergon source tree",
				       path);
	char *names[PORT_DIRS_MAX];
	size_t nn = 0;
	int rc = 0;
	struct dirent *e;
	while (rc == 0 && (e = readdir(d)) != NULL) {
		char desc[PATH_MAX];
		struct stat st;
		if (e->d_name[0] == '.')
			continue;
		/* Only folders with a descriptor are board ports (the host's
		 * SIMD folders and shared sources have none). */
		if ((size_t)snprintf(desc, sizeof desc, "%s/%s/port.json", path, e->d_name) >=
			sizeof desc ||
		    stat(desc, &st) != 0)
			continue;
		if (nn == PORT_DIRS_MAX)
			rc = ergon_err_set(err, ERGON_ETOOBIG, "%s: more than %d ports", path,
					   PORT_DIRS_MAX);
		else if ((names[nn] = strdup(e->d_name)) == NULL)
			rc = ergon_err_set(err, ERGON_ENOMEM, "out of memory");
		else
			nn++;
	}
	closedir(d);
	qsort(names, nn, sizeof names[0], cmp_name);
	struct ergon_fw_port *ports = rc ? NULL : calloc(nn ? nn : 1, sizeof *ports);
	if (!rc && ports == NULL)
		rc = ergon_err_set(err, ERGON_ENOMEM, "out of memory");
	for (size_t i = 0; i < nn && !rc; i++)
		rc = ergon_fw_port_load(tdir, names[i], &ports[i], err);
	for (size_t i = 0; i < nn && !rc; i++)
		for (size_t j = 0; j < i && !rc; j++)
			if (strcmp(ports[i].board, ports[j].board) == 0)
				rc = bad(err, ports[i].file, "board",
					 "board %s already has the port %s; one port per board",
					 ports[i].board, ports[j].name);
	for (size_t i = 0; i < nn; i++)
		free(names[i]);
	if (rc) {
		free(ports);
		return rc;
	}
	*out = ports;
	*n = nn;
	return 0;
}

int ergon_fw_port_find(const char *board, struct ergon_fw_port *p, int *found,
		       struct ergon_err *err)
{
	struct ergon_fw_port *all = NULL;
	size_t n = 0;
	*found = 0;
	int rc = ergon_fw_port_list(ergon_fw_target_dir(), &all, &n, err);
	for (size_t i = 0; i < n && !rc; i++)
		if (strcmp(all[i].board, board) == 0) {
			*p = all[i];
			*found = 1;
		}
	free(all);
	return rc;
}

json_t *ergon_fw_port_json(const struct ergon_fw_port *p)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:{s:s, s:s}, s:s, s:s, s:s, s:s, s:b}", "port",
			 p->name, "board", p->board, "title", p->title, "cpu", p->cpu,
			 "validation", "status",
			 ergon_fw_port_validation_names[p->validation - 1], "note",
			 p->validation_note, "descriptor", p->file, "descriptor_sha256", p->sha256,
			 "run", p->run == ERGON_FW_PORT_RUN_QEMU ? p->qemu_machine : "probe",
			 "transport", p->transport == ERGON_FW_PORT_RTT ? "rtt" : "uart", "rtt_build",
			 p->transport == ERGON_FW_PORT_RTT || p->n_rtt_defines > 0);
}
