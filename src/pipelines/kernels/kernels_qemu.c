/* `ergon kernels run --board qemu-an547`: the cases go to QEMU's
 * mps3-an547 (Cortex-M55) as a blob in DDR (ergon/ert_kblob.h), the kernel
 * firmware (target/port/an547/kernels/) checks every implementation
 * against the oracle's output on the target and times it, and its UART
 * lines come back here as checks and samples. Under -icount the firmware's
 * SysTick follows the emulated instruction count: the samples are emulated
 * instructions, never cycles (docs/METHOD.md, "Kernels"). */
#include "kernels_qemu.h"

#include "ergon/elf32.h"
#include "ergon/ert_kblob.h"
#include "ergon/fileio.h"
#include "ergon/lifecycle.h"
#include "ergon/pmu.h"
#include "pipelines/common/common.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QEMU_TIMEOUT_S 1800.0
#define LOG_MAX (256u * 1024u * 1024u)
/* 32 MHz SysTick ticks -> instructions at -icount shift=4 (16 ns each):
 * 31.25 ns / 16 ns = 125/64 instructions per tick. */
#define TICK_INSTR (125.0 / 64.0)
static uint32_t align16(size_t v)
{
	return (uint32_t)((v + 15u) & ~(size_t)15u);
}

/* Append n bytes at a 16-byte boundary; the offset (0 for an absent part). */
static uint32_t put(struct ergon_dynbuf *b, const void *p, size_t n)
{
	if (p == NULL || n == 0)
		return 0;
	static const char zero[16];
	size_t pad = align16(b->len) - b->len;
	ergon_dynbuf_add(b, zero, pad);
	uint32_t off = (uint32_t)b->len;
	ergon_dynbuf_add(b, p, n);
	return off;
}

static void set_word(struct ergon_dynbuf *b, size_t word, uint32_t v)
{
	if (b->err == 0 && (word + 1u) * 4u <= b->len) {
		unsigned char *p = (unsigned char *)b->p + word * 4u;
		p[0] = (unsigned char)v;
		p[1] = (unsigned char)(v >> 8);
		p[2] = (unsigned char)(v >> 16);
		p[3] = (unsigned char)(v >> 24);
	}
}

static size_t filter_bytes(const struct kcase *c)
{
	const struct tfl_conv_args *a = &c->conv;
	if (c->kind == KC_CONV)
		return (size_t)a->out_c * (size_t)(a->f_h * a->f_w * a->f_c);
	if (c->kind == KC_DWCONV)
		return (size_t)a->f_h * (size_t)a->f_w * (size_t)a->out_c;
	return (size_t)c->fc.units * (size_t)c->fc.accum;
}

void kq_pmu_header(const struct ergon_pmu_plan *plan, uint32_t *hdr)
{
	memset(hdr, 0, KB_HEADER_WORDS * sizeof *hdr);
	size_t np = plan->npasses < ERT_KBLOB_MAX_PASSES ? plan->npasses : ERT_KBLOB_MAX_PASSES;
	hdr[KB_N_PASSES] = (uint32_t)np;
	hdr[KB_PMU_CYCLES] = plan->cycles ? 1u : 0u;
	for (size_t ps = 0; ps < np; ps++) {
		hdr[KB_PASS_N + ps] = (uint32_t)plan->passes[ps].nevents;
		for (size_t k = 0; k < plan->passes[ps].nevents; k++)
			hdr[KB_EVENTS + ps * ERT_KBLOB_PASS_EVENTS + k] =
			    plan->passes[ps].events[k]->id;
	}
}

/* The blob (ergon/ert_kblob.h); the caller frees b. */
static int build_blob(struct kcase *cases, size_t n, const struct ergon_kernels_run_options *o,
		      unsigned impls, const struct ergon_pmu_plan *plan, struct ergon_dynbuf *b,
		      struct ergon_err *err)
{
	static const unsigned char zero[4];
	size_t words = KB_HEADER_WORDS + n * KC_WORDS;
	for (size_t i = 0; i < words; i++)
		ergon_dynbuf_add(b, zero, 4);
	uint32_t out_max = 0;
	for (size_t i = 0; i < n; i++) {
		struct kcase *c = &cases[i];
		size_t base = KB_HEADER_WORDS + i * KC_WORDS;
		int32_t p[24] = {0};
		const int fc = c->kind == KC_FC;
		size_t ch, mult_n;
		if (fc) {
			const struct tfl_fc_args *a = &c->fc;
			const int32_t v[9] = {a->batches,   a->accum,	      a->units,
					      a->in_offset, a->filter_offset, a->out_offset,
					      a->act_min,   a->act_max,	      a->per_channel};
			memcpy(p, v, sizeof v);
			ch = (size_t)a->units;
			mult_n = a->per_channel ? ch : 1u;
		} else {
			const struct tfl_conv_args *a = &c->conv;
			const int32_t v[21] = {
			    a->batches,	 a->in_h,	a->in_w,      a->in_c,	     a->out_h,
			    a->out_w,	 a->out_c,	a->f_h,	      a->f_w,	     a->f_c,
			    a->stride_h, a->stride_w,	a->dil_h,     a->dil_w,	     a->pad_h,
			    a->pad_w,	 a->depth_mult, a->in_offset, a->out_offset, a->act_min,
			    a->act_max};
			memcpy(p, v, sizeof v);
			ch = (size_t)a->out_c;
			mult_n = ch;
		}
		const void *filter = fc ? (const void *)c->fc.filter : (const void *)c->conv.filter;
		const int32_t *bias = fc ? c->fc.bias : c->conv.bias;
		const int32_t *mult = fc ? c->fc.mult : c->conv.mult;
		const int32_t *shift = fc ? c->fc.shift : c->conv.shift;
		const int32_t *fsum = fc ? c->fc.fsum : c->conv.fsum;
		set_word(b, base + KC_KIND, (uint32_t)c->kind);
		for (int k = 0; k < 24; k++)
			set_word(b, base + KC_P + (size_t)k, (uint32_t)p[k]);
		set_word(b, base + KC_IN, put(b, c->in, c->in_len));
		set_word(b, base + KC_FILTER, put(b, filter, filter_bytes(c)));
		set_word(b, base + KC_BIAS, put(b, bias, ch * 4u));
		set_word(b, base + KC_MULT, put(b, mult, mult_n * 4u));
		set_word(b, base + KC_SHIFT, put(b, shift, mult_n * 4u));
		set_word(b, base + KC_FSUM, put(b, fsum, fsum ? ch * 4u : 0u));
		set_word(b, base + KC_EXPECT, put(b, c->expect, c->out_len));
		set_word(b, base + KC_OUT_LEN, (uint32_t)c->out_len);
		set_word(b, base + KC_IN_LEN, (uint32_t)c->in_len);
		if (c->out_len > out_max)
			out_max = (uint32_t)c->out_len;
	}
	const uint32_t bytes = align16(b->len);
	set_word(b, KB_MAGIC, ERT_KBLOB_MAGIC);
	set_word(b, KB_VERSION, ERT_KBLOB_VERSION);
	set_word(b, KB_N_CASES, (uint32_t)n);
	set_word(b, KB_ITERATIONS, (uint32_t)o->iterations);
	set_word(b, KB_WARMUP, (uint32_t)o->warmup);
	set_word(b, KB_IMPLS, impls);
	set_word(b, KB_BYTES, bytes);
	set_word(b, KB_SCRATCH, bytes);
	set_word(b, KB_SCRATCH_BYTES, out_max);
	set_word(b, KB_INJECT, o->inject_mismatch ? 1u : 0u);
	uint32_t hdr[KB_HEADER_WORDS];
	kq_pmu_header(plan, hdr);
	set_word(b, KB_N_PASSES, hdr[KB_N_PASSES]);
	for (size_t k = KB_PMU_CYCLES; k < KB_HEADER_WORDS; k++)
		set_word(b, k, hdr[k]);
	if (b->err != 0 || (uint64_t)bytes + out_max > ERT_KBLOB_MAX_BYTES)
		return ergon_err_set(err, ERGON_ETOOBIG,
				     "kernels: the %zu cases need more than the %u MiB the "
				     "firmware reads from the AN547's DDR; run fewer (--suite, "
				     "a shorter --shapes file)",
				     n, ERT_KBLOB_MAX_BYTES >> 20);
	return 0;
}

/* Compile the kernel firmware into dir; *build: its provenance. */
static int build_fw(const char *dir, int no_cache, char *elf, size_t elf_cap, json_t **build,
		    struct ergon_err *err)
{
	/* The kernel firmware is the an547's (its DDR blob loader, its PMU). */
	struct ergon_fw_port *port = malloc(sizeof *port);
	if (port == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "out of memory");
	int rc = ergon_fw_port_load(ergon_fw_target_dir(), "an547", port, err);
	if (!rc && port->kernels_main[0] == '\0')
		rc = ergon_err_set(err, ERGON_ECONFIG,
				   "%s: kernels_main: missing; the kernel firmware needs it", port->file);
	struct ergon_fw_build fb = {.port = port,
				    .dir = dir,
				    .name = "kernels",
				    .main_src = port->kernels_main,
				    .no_cache = no_cache};
	if (!rc)
		rc = ergon_fw_compile(&fb, err);
	free(port);
	if (rc) {
		struct ergon_err e2 = {0};
		ergon_err_set(&e2, rc, "%s (the compiler's output is in %s)", err->msg, fb.log);
		*err = e2;
		return rc;
	}
	snprintf(elf, elf_cap, "%s", fb.elf);
	*build = json_pack(
	    "{s:s, s:s, s:s, s:o, s:o, s:s, s:s, s:s, s:s, s:[s,s], s:s, s:s}", "board",
	    "qemu-an547", "cpu", "cortex-m55", "compiler", fb.compiler, "command", fb.command,
	    "compile", fb.compile, "elf", fb.elf,
	    "elf_sha256", fb.elf_sha256, "link_map", fb.map, "link_map_sha256", fb.map_sha256,
	    "feature_defines", "__ARM_FEATURE_MVE (the compiler's, for -mcpu=cortex-m55)",
	    "__OPTIMIZE__", "kernels",
	    "ref: tfl_conv_s8 / tfl_dwconv_s8 / tfl_fc_s8 (the interpreter's portable C, "
	    "target/src/tfl_conv.c etc.); mve: tfl_mve_conv_s8 / tfl_mve_dwconv_s8 / "
	    "tfl_mve_fc_s8 (Helium intrinsics, target/src/tfl_mve_*.c); same flags",
	    "memory_placement",
	    "code and constants in ITCM (0x0), stack and the UART buffer in DTCM "
	    "(0x20000000); every case's input, weights, requantization, expected output "
	    "and the output buffer in DDR at 0x60000000 (QEMU's generic loader); QEMU "
	    "models no memory timing, so placement does not change the counts there");
	if (*build == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "out of memory");
	return 0;
}

static uint32_t get_word(const struct ergon_dynbuf *b, size_t word)
{
	if ((word + 1u) * 4u > b->len)
		return 0;
	const unsigned char *p = (const unsigned char *)b->p + word * 4u;
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static json_t *place_json(const struct ergon_elf32_place *pl, const char *memory)
{
	char hex[16];
	snprintf(hex, sizeof hex, "0x%08x", (unsigned)pl->addr);
	return json_pack("{s:s, s:I, s:s, s:I, s:s}", "section", pl->section, "addr",
			 (json_int_t)pl->addr, "addr_hex", hex, "size", (json_int_t)pl->size,
			 "memory", memory);
}

/* Where the linked kernel firmware put code, data and scratch, read from
 * the ELF's own section headers and symbol table (src/core/elf32.c), and
 * where the case blob put the output buffer the kernels write. */
static int placement_json(const char *elf, const struct ergon_dynbuf *blob, json_t **out,
			  struct ergon_err *err)
{
	static const struct {
		const char *key, *section, *memory;
	} secs[] = {{"code", ".text", "ITCM"},
		    {"data", ".data", "DTCM (its initial image in ITCM)"},
		    {"bss", ".bss", "DTCM"},
		    {"stack", ".stack", "DTCM"}};
	char *img = NULL;
	size_t len = 0;
	struct ergon_elf32_place pl;
	int rc = ergon_file_read_all(elf, 64u * 1024u * 1024u, &img, &len, err);
	if (rc)
		return rc;
	json_t *o = json_object();
	json_object_set_new(
	    o, "tool",
	    json_string("ergon's ELF32 reader (src/core/elf32.c): the section headers and symbol "
			"table of the linked ELF (the same figures as arm-none-eabi-readelf -S "
			"and arm-none-eabi-nm -S)"));
	for (size_t i = 0; rc == 0 && i < sizeof secs / sizeof secs[0]; i++) {
		rc = ergon_elf32_section(img, len, elf, secs[i].section, &pl, err);
		if (rc == 0)
			json_object_set_new(o, secs[i].key, place_json(&pl, secs[i].memory));
	}
	/* The Helium conv's im2col column, the one scratch buffer the kernels
	 * keep in the image (REF uses none). */
	if (rc == 0)
		rc = ergon_elf32_symbol(img, len, elf, "col", &pl, err);
	if (rc == 0) {
		json_t *sc = place_json(&pl, "DTCM");
		json_object_set_new(sc, "symbol", json_string("col"));
		json_object_set_new(
		    sc, "what",
		    json_string("the Helium conv's im2col column (target/src/tfl_mve_conv.c); "
				"the REF kernels use no scratch"));
		json_object_set_new(o, "scratch", sc);
		uint32_t off = get_word(blob, KB_SCRATCH);
		char hex[16];
		snprintf(hex, sizeof hex, "0x%08x", (unsigned)(ERT_KBLOB_ADDR + off));
		json_object_set_new(
		    o, "output_buffer",
		    json_pack("{s:I, s:s, s:I, s:s, s:s}", "addr",
			      (json_int_t)(ERT_KBLOB_ADDR + (uint64_t)off), "addr_hex", hex,
			      "size", (json_int_t)get_word(blob, KB_SCRATCH_BYTES), "memory",
			      "DDR (after the case blob)", "from",
			      "the case blob's KB_SCRATCH and KB_SCRATCH_BYTES words"));
	}
	free(img);
	if (rc) {
		json_decref(o);
		return rc;
	}
	*out = o;
	return 0;
}

/* ---- the firmware's lines ------------------------------------------ */

struct cursor {
	const char *p, *end;
};

/* The next space-separated token; 0 when the line has none. */
static int token(struct cursor *c, const char **t, size_t *len)
{
	while (c->p < c->end && *c->p == ' ')
		c->p++;
	if (c->p >= c->end)
		return 0;
	*t = c->p;
	while (c->p < c->end && *c->p != ' ')
		c->p++;
	*len = (size_t)(c->p - *t);
	return 1;
}

static int tok_u64(struct cursor *c, uint64_t *v)
{
	const char *t;
	size_t len;
	if (!token(c, &t, &len) || len > 20)
		return -1;
	uint64_t x = 0;
	for (size_t i = 0; i < len; i++) {
		if (t[i] < '0' || t[i] > '9' || x > (UINT64_MAX - 9u) / 10u)
			return -1;
		x = x * 10u + (uint64_t)(t[i] - '0');
	}
	*v = x;
	return 0;
}

static int tok_is(struct cursor *c, const char *want)
{
	const char *t;
	size_t len;
	return token(c, &t, &len) && len == strlen(want) && memcmp(t, want, len) == 0;
}

static int tok_impl(struct cursor *c, int *mve)
{
	const char *t;
	size_t len;
	if (!token(c, &t, &len) || len != 3)
		return -1;
	if (memcmp(t, "ref", 3) == 0)
		*mve = 0;
	else if (memcmp(t, "mve", 3) == 0)
		*mve = 1;
	else
		return -1;
	return 0;
}

struct parsed {
	int begun, ended, dwt, pmu;
	uint64_t overhead;
	int have_overhead;
	unsigned *checked; /* per case: bit 0 ref, bit 1 mve checked */
};

static double to_unit(const struct parsed *ps, uint64_t ticks)
{
	return ps->dwt ? (double)ticks : (double)ticks * TICK_INSTR;
}

static int bad_line(const char *log, size_t lineno, const char *what, struct ergon_err *err)
{
	return ergon_err_set(err, ERGON_EPARSE,
			     "%s:%zu: the kernel firmware's line is malformed (%s); the firmware "
			     "and this ergon may be from different builds",
			     log, lineno, what);
}

static int parse_line(struct cursor *c, const char *log, size_t lineno, struct kcase *cases,
		      size_t n, struct parsed *ps, struct ergon_kernels_data *d,
		      struct ergon_dynbuf *samples, struct ergon_err *err)
{
	const char *t;
	size_t len;
	if (!token(c, &t, &len))
		return 0;
	if (len == 12 && memcmp(t, "ERGON_KBEGIN", 12) == 0) {
		ps->begun = 1;
		while (token(c, &t, &len)) {
			if (len == 18 && memcmp(t, "counter=dwt_cyccnt", 18) == 0)
				ps->dwt = 1;
			if (len == 5 && memcmp(t, "pmu=1", 5) == 0)
				ps->pmu = 1;
		}
		return 0;
	}
	if (len == 10 && memcmp(t, "ERGON_KEND", 10) == 0) {
		ps->ended = 1;
		return 0;
	}
	if (len == 15 && memcmp(t, "ERGON_KOVERHEAD", 15) == 0) {
		if (tok_u64(c, &ps->overhead) != 0)
			return bad_line(log, lineno, "overhead", err);
		ps->have_overhead = 1;
		return 0;
	}
	int is_check = len == 12 && memcmp(t, "ERGON_KCHECK", 12) == 0;
	int is_sample = len == 8 && memcmp(t, "ERGON_KS", 8) == 0;
	int is_pmu = len == 10 && memcmp(t, "ERGON_KPMU", 10) == 0;
	if (!is_check && !is_sample && !is_pmu)
		return 0; /* other UART text */
	uint64_t idx;
	int mve;
	if (tok_u64(c, &idx) != 0 || idx >= n || tok_impl(c, &mve) != 0)
		return bad_line(log, lineno, "case index or implementation", err);
	struct kcase *k = &cases[idx];
	const char *impl = mve ? "mve" : "ref";
	if (is_check) {
		if (ps->checked[idx] & (1u << mve))
			return bad_line(log, lineno, "a second check of the same case", err);
		ps->checked[idx] |= 1u << mve;
		if (tok_is(c, "pass"))
			return 0;
		uint64_t byte;
		if (tok_u64(c, &byte) != 0 || byte >= k->out_len)
			return bad_line(log, lineno, "mismatch byte", err);
		json_t *mm = json_object_get(k->record, "first_mismatch");
		if (mm == NULL) {
			mm = json_object();
			json_object_set_new(k->record, "first_mismatch", mm);
		}
		json_object_set_new(mm, impl,
				    json_pack("{s:I, s:i, s:s}", "byte", (json_int_t)byte,
					      "expected", (int)k->expect[byte], "where",
					      "on the target, against the oracle's output"));
		ergon_dynbuf_addf(samples, "%s,%s,fail,,\n", k->name, impl);
		return ergon_kernels_add(d, k->name, impl, 0, NAN, err);
	}
	if (is_sample) {
		uint64_t v;
		if (tok_u64(c, &v) != 0 || !ps->have_overhead || !(ps->checked[idx] & (1u << mve)))
			return bad_line(log, lineno, "sample", err);
		if (v <= ps->overhead)
			return ergon_err_set(err, ERGON_EPARSE,
					     "%s:%zu: case %s (%s): a sample (%llu) is not above "
					     "the count-read overhead (%llu)",
					     log, lineno, k->name, impl, (unsigned long long)v,
					     (unsigned long long)ps->overhead);
		ergon_dynbuf_addf(samples, "%s,%s,pass,%.6f,%.6f\n", k->name, impl, to_unit(ps, v),
				  to_unit(ps, ps->overhead));
		return ergon_kernels_add(d, k->name, impl, 1, to_unit(ps, v - ps->overhead), err);
	}
	/* ERGON_KPMU idx impl event count|unsupported|overflow */
	uint64_t ev;
	if (tok_u64(c, &ev) != 0 || ev > 0xFFFFu)
		return bad_line(log, lineno, "PMU event", err);
	const char *name = "unknown";
	size_t ne;
	const struct ergon_pmu_event *cat = ergon_pmu_events(&ne);
	for (size_t i = 0; i < ne; i++)
		if (cat[i].id == ev)
			name = cat[i].name;
	json_t *pmu = json_object_get(k->record, "pmu");
	if (pmu == NULL) {
		pmu = json_object();
		json_object_set_new(k->record, "pmu", pmu);
	}
	json_t *per = json_object_get(pmu, impl);
	if (per == NULL) {
		per = json_object();
		json_object_set_new(pmu, impl, per);
	}
	struct cursor save = *c;
	uint64_t count;
	if (tok_u64(c, &count) == 0) {
		json_object_set_new(per, name, json_integer((json_int_t)count));
		return 0;
	}
	*c = save;
	if (tok_is(c, "unsupported")) {
		json_object_set_new(per, name, json_string("unsupported"));
		return 0;
	}
	*c = save;
	if (tok_is(c, "overflow")) {
		json_object_set_new(per, name, json_string("overflow (not an exact count)"));
		return 0;
	}
	return bad_line(log, lineno, "PMU count", err);
}

static int parse_log(const char *log, const char *text, size_t len, struct kcase *cases, size_t n,
		     unsigned impls, struct parsed *ps, struct ergon_kernels_data *d,
		     struct ergon_dynbuf *samples, struct ergon_err *err)
{
	const char *p = text, *end = text + len;
	size_t lineno = 0;
	int rc = 0;
	while (p < end && rc == 0) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		lineno++;
		struct cursor c = {p, le > p && le[-1] == '\r' ? le - 1 : le};
		rc = parse_line(&c, log, lineno, cases, n, ps, d, samples, err);
		p = nl ? nl + 1 : end;
	}
	if (rc)
		return rc;
	if (!ps->begun || !ps->ended)
		return ergon_err_set(err, ERGON_EDEVICE,
				     "%s: the kernel firmware did not %s (QEMU's output is there)",
				     log, ps->begun ? "finish (no ERGON_KEND)" : "start");
	for (size_t i = 0; i < n; i++)
		if ((ps->checked[i] & impls) != impls)
			return ergon_err_set(err, ERGON_EDEVICE,
					     "%s: case %s has no check line for every "
					     "implementation",
					     log, cases[i].name);
	return 0;
}

int ergon_kernels_qemu_parse(const char *log, const char *text, size_t len, struct kcase *cases,
			     size_t n, unsigned impls, struct ergon_kernels_data *d,
			     struct ergon_dynbuf *samples, struct kq_firmware *fw,
			     struct ergon_err *err)
{
	struct parsed ps = {0};
	ps.checked = calloc(n ? n : 1, sizeof *ps.checked);
	int rc = ps.checked ? parse_log(log, text, len, cases, n, impls, &ps, d, samples, err)
			    : ergon_err_set(err, ERGON_ENOMEM, "kernels: out of memory");
	fw->dwt = ps.dwt;
	fw->pmu = ps.pmu;
	fw->overhead = ps.overhead;
	free(ps.checked);
	return rc;
}

int ergon_kernels_qemu(struct kcase *cases, size_t n, const struct ergon_kernels_run_options *o,
		       unsigned impls, const struct ergon_pmu_plan *plan,
		       struct ergon_kernels_data *d, struct ergon_dynbuf *samples, json_t **info,
		       const char **unit, struct ergon_err *err)
{
	struct ergon_dynbuf blob;
	json_t *build = NULL;
	char *text = NULL;
	char dir[1024], resolved[PATH_MAX], blob_path[PATH_MAX], elf[PATH_MAX], log[PATH_MAX],
	    loader[PATH_MAX + 64];
	struct kq_firmware ps = {0};
	int rc;
	*info = NULL;
	*unit = "emulated_instructions";
	ergon_dynbuf_init(&blob, ERT_KBLOB_MAX_BYTES);
	const char *wd = o->work_dir ? o->work_dir : "ergon-kernels-fw";
	rc = ergon_mkdir_p(wd, err);
	if (rc)
		goto cleanup;
	if (realpath(wd, resolved) == NULL) {
		rc = ergon_err_errno(err, errno, "%s: cannot resolve the firmware folder", wd);
		goto cleanup;
	}
	if (strlen(resolved) >= sizeof dir) {
		rc = ergon_err_set(err, ERGON_ETOOBIG, "%s: the firmware folder's path is too long",
				   resolved);
		goto cleanup;
	}
	memcpy(dir, resolved, strlen(resolved) + 1);
	if (strchr(dir, ',') != NULL) {
		rc = ergon_err_set(err, ERGON_EUSAGE,
				   "%s: the firmware folder's path may not contain a comma (QEMU's "
				   "-device loader,file= takes it); choose another --out",
				   dir);
		goto cleanup;
	}
	if (plan->npasses > ERT_KBLOB_MAX_PASSES)
		rc = ergon_err_set(err, ERGON_ETOOBIG, "kernels: too many PMU passes");
	if (!rc)
		rc = build_blob(cases, n, o, impls, plan, &blob, err);
	snprintf(blob_path, sizeof blob_path, "%s/cases.bin", dir);
	if (!rc)
		rc = ergon_file_write_atomic(blob_path, blob.p, blob.len, ERGON_WRITE_FORCE, err);
	if (!rc)
		rc = build_fw(dir, o->no_cache, elf, sizeof elf, &build, err);
	if (rc)
		goto cleanup;
	char blob_sha[65];
	rc = ergon_fw_sha256_file(blob_path, blob_sha, err);
	json_t *placement = NULL;
	if (!rc)
		rc = placement_json(elf, &blob, &placement, err);
	if (rc)
		goto cleanup;
	json_object_set_new(build, "placement", placement);
	snprintf(loader, sizeof loader, "loader,file=%s,addr=0x%08x", blob_path, ERT_KBLOB_ADDR);
	snprintf(log, sizeof log, "%s/qemu-kernels.log", dir);
	remove(log);
	const char *argv[] = {ERGON_QEMU_AN547_ARGV, "-kernel", elf, "-device", loader, NULL};
	rc = ergon_lifecycle_run_tool(argv, log, QEMU_TIMEOUT_S, err);
	if (rc) {
		struct ergon_err e2 = {0};
		ergon_err_set(&e2, rc,
			      "qemu-an547: the kernel firmware failed (%s); QEMU's output is in %s",
			      err->msg, log);
		*err = e2;
		goto cleanup;
	}
	size_t tl = 0;
	rc = ergon_file_read_all(log, LOG_MAX, &text, &tl, err);
	if (!rc)
		rc = ergon_kernels_qemu_parse(log, text, tl, cases, n, impls, d, samples, &ps, err);
	if (rc)
		goto cleanup;
	*unit = ps.dwt ? "cycles" : "emulated_instructions";
	json_t *argv_json = json_array();
	for (size_t i = 0; argv[i] != NULL; i++)
		json_array_append_new(argv_json, json_string(argv[i]));
	json_object_set_new(build, "cases_blob",
			    json_pack("{s:s, s:s, s:I, s:s}", "path", blob_path, "sha256", blob_sha,
				      "bytes", (json_int_t)blob.len, "loaded_at", "0x60000000"));
	json_object_set_new(build, "qemu_command", argv_json);
	*info = json_pack(
	    "{s:o, s:s, s:s, s:f, s:I, s:{s:b, s:s}}", "build", build, "counter",
	    ps.dwt ? "DWT CYCCNT (seen to advance)"
		   : "SysTick (32 MHz, 24-bit, extended by its 1 ms interrupt) under QEMU "
		     "-icount " ERGON_QEMU_ICOUNT_ARG,
	    "method",
	    ps.dwt ? "core cycles from DWT CYCCNT"
		   : "emulated instruction counts: QEMU -icount advances virtual time 16 ns "
		     "per instruction, so one 32 MHz SysTick tick is 125/64 instructions; NOT "
		     "Cortex-M55 cycles (QEMU models no pipeline, no memory timing, no MVE "
		     "beat overlap); resolution ~2 instructions",
	    "tick_to_unit", ps.dwt ? 1.0 : TICK_INSTR, "overhead_raw", (json_int_t)ps.overhead,
	    "pmu", "counted", ps.pmu ? 1 : 0, "why",
	    ps.pmu ? "the PMU cycle counter advanced"
		   : "the Armv8.1-M PMU cycle counter did not advance: QEMU's mps3-an547 does "
		     "not model the PMU (nor DWT CYCCNT)");
	build = NULL;
	if (*info == NULL)
		rc = ergon_err_set(err, ERGON_ENOMEM, "kernels: out of memory");
cleanup:
	ergon_dynbuf_free(&blob);
	json_decref(build);
	free(text);
	return rc;
}
