/* The kernel measurement firmware for the AN547 (Cortex-M55): the cases of
 * `ergon kernels run --board qemu-an547` arrive as a blob in DDR
 * (ergon/ert_kblob.h). For every case and implementation (REF: the
 * interpreter's portable C; MVE: the Helium kernels), correctness first:
 * the output is compared byte for byte with the oracle's, computed on the
 * host; a case that fails is reported and never timed. Then warm-up runs
 * and `iterations` timed runs, the output re-initialized before each
 * outside the timed region, one line per sample. The count is DWT CYCCNT
 * when it advances (a board), else the SysTick tick count extended by its
 * 1 ms interrupt (QEMU, where under -icount time is derived from the
 * instruction count, so the host reports emulated instructions, not
 * cycles). PMU events run in extra passes where a PMU counts
 * (ergon/ert_kpmu.h); otherwise the host reports them unsupported.
 *
 * UART lines: ERGON_KBEGIN, ERGON_KCHECK, ERGON_KS (one sample),
 * ERGON_KPMU, ERGON_KEND; exit 0, or 30 + reason for a bad blob. */
#include "../../../src/tfl_internal.h"
#include "an547.h"
#include "ergon/ert_counters.h"
#include "ergon/ert_fmt.h"
#include "ergon/ert_kblob.h"
#include "ergon/ert_kpmu.h"

static struct ert_hal hal;
static struct ert_counters counters;
static struct ert_counters_regs regs;
static char line_mem[160];
static struct ert_buf line;

static void flush_line(void)
{
	ert_buf_char(&line, '\n');
	if (hal.write != 0)
		(void)hal.write(hal.ctx, line.data, line.len);
	ert_buf_reset(&line);
}

static void spin(void *ctx)
{
	(void)ctx;
	(void)hal.delay_us(hal.ctx, 50);
}

/* The count now: DWT CYCCNT on a board, 64-bit SysTick ticks otherwise. */
static uint64_t count_now(void)
{
	if (counters.have_cyccnt)
		return ert_counters_cyccnt(&counters);
	return an547_systick_ticks();
}

static uint64_t count_span(uint64_t a, uint64_t b)
{
	if (counters.have_cyccnt)
		return ert_counters_span((uint32_t)a, (uint32_t)b);
	return b - a;
}

struct kcase {
	uint32_t kind;
	struct tfl_conv_args conv;
	struct tfl_fc_args fc;
	const int8_t *expect;
	int8_t *out;
	uint32_t out_len;
};

static const void *at(const uint8_t *blob, uint32_t off)
{
	return off == 0 ? 0 : blob + off;
}

static int load_case(const uint8_t *blob, const uint32_t *w, uint32_t i, int8_t *scratch,
		     struct kcase *c)
{
	const uint32_t *r = w + KB_CASES + i * KC_WORDS;
	const int32_t *p = (const int32_t *)(r + KC_P);
	c->kind = r[KC_KIND];
	c->expect = at(blob, r[KC_EXPECT]);
	c->out = scratch;
	c->out_len = r[KC_OUT_LEN];
	if (c->out_len == 0 || c->out_len > w[KB_SCRATCH_BYTES] || c->expect == 0)
		return -1;
	if (c->kind == 1u || c->kind == 2u) {
		struct tfl_conv_args *a = &c->conv;
		a->in = at(blob, r[KC_IN]);
		a->filter = at(blob, r[KC_FILTER]);
		a->bias = at(blob, r[KC_BIAS]);
		a->mult = at(blob, r[KC_MULT]);
		a->shift = at(blob, r[KC_SHIFT]);
		a->fsum = at(blob, r[KC_FSUM]);
		a->out = scratch;
		int32_t *dst[21] = {&a->batches,    &a->in_h,	   &a->in_w,	   &a->in_c,
				    &a->out_h,	    &a->out_w,	   &a->out_c,	   &a->f_h,
				    &a->f_w,	    &a->f_c,	   &a->stride_h,   &a->stride_w,
				    &a->dil_h,	    &a->dil_w,	   &a->pad_h,	   &a->pad_w,
				    &a->depth_mult, &a->in_offset, &a->out_offset, &a->act_min,
				    &a->act_max};
		for (int k = 0; k < 21; k++)
			*dst[k] = p[k];
		return a->in && a->filter && a->bias && a->mult && a->shift && a->fsum ? 0 : -1;
	}
	if (c->kind == 4u) {
		struct tfl_fc_args *a = &c->fc;
		a->in = at(blob, r[KC_IN]);
		a->filter = at(blob, r[KC_FILTER]);
		a->bias = at(blob, r[KC_BIAS]);
		a->mult = at(blob, r[KC_MULT]);
		a->shift = at(blob, r[KC_SHIFT]);
		a->fsum = at(blob, r[KC_FSUM]);
		a->out = scratch;
		int32_t *dst[8] = {&a->batches,	      &a->accum,      &a->units,   &a->in_offset,
				   &a->filter_offset, &a->out_offset, &a->act_min, &a->act_max};
		for (int k = 0; k < 8; k++)
			*dst[k] = p[k];
		a->per_channel = p[8];
		return a->in && a->filter && a->bias && a->mult && a->shift ? 0 : -1;
	}
	return -1;
}

static void run(const struct kcase *c, int mve)
{
	if (c->kind == 1u)
		mve ? tfl_mve_conv_s8(&c->conv) : tfl_conv_s8(&c->conv);
	else if (c->kind == 2u)
		mve ? tfl_mve_dwconv_s8(&c->conv) : tfl_dwconv_s8(&c->conv);
	else
		mve ? tfl_mve_fc_s8(&c->fc) : tfl_fc_s8(&c->fc);
}

static void clear_out(const struct kcase *c)
{
	for (uint32_t k = 0; k < c->out_len; k++)
		c->out[k] = 0x55;
}

static void head(const char *tag, uint32_t idx, int mve)
{
	ert_buf_str(&line, tag);
	ert_buf_char(&line, ' ');
	ert_buf_u64(&line, idx);
	ert_buf_str(&line, mve ? " mve " : " ref ");
}

/* One kernel run for the PMU passes (ergon/ert_kpmu.h). */
struct run_ctx {
	const struct kcase *c;
	int mve;
};

static void prepare_run(void *ctx)
{
	const struct run_ctx *r = ctx;
	clear_out(r->c);
}

static void run_once(void *ctx)
{
	const struct run_ctx *r = ctx;
	run(r->c, r->mve);
}

static void flush_ctx(void *ctx)
{
	(void)ctx;
	flush_line();
}

/* Check, warm up, time and count one case with one implementation. */
static void measure(const uint32_t *w, uint32_t idx, const struct kcase *c, int mve)
{
	clear_out(c);
	run(c, mve);
	if (w[KB_INJECT] == 1u && idx == 0 && !mve)
		c->out[c->out_len / 2u] = (int8_t)(c->out[c->out_len / 2u] ^ 1);
	uint32_t bad = c->out_len;
	for (uint32_t k = 0; k < c->out_len && bad == c->out_len; k++)
		if (c->out[k] != c->expect[k])
			bad = k;
	head("ERGON_KCHECK", idx, mve);
	if (bad != c->out_len) {
		ert_buf_str(&line, "fail ");
		ert_buf_u64(&line, bad);
		ert_buf_char(&line, ' ');
		ert_buf_i64(&line, c->out[bad]);
		ert_buf_char(&line, ' ');
		ert_buf_i64(&line, c->expect[bad]);
		flush_line();
		return;
	}
	ert_buf_str(&line, "pass");
	flush_line();
	for (uint32_t k = 0; k < w[KB_WARMUP]; k++)
		run(c, mve);
	for (uint32_t it = 0; it < w[KB_ITERATIONS]; it++) {
		clear_out(c);
		uint64_t t0 = count_now();
		run(c, mve);
		uint64_t t1 = count_now();
		head("ERGON_KS", idx, mve);
		ert_buf_u64(&line, count_span(t0, t1));
		flush_line();
	}
	struct run_ctx rc = {c, mve};
	const struct ert_kpmu_io io = {
	    .prepare = prepare_run, .run = run_once, .ctx = &rc, .line = &line, .flush = flush_ctx};
	(void)ert_kpmu_measure(&counters, w, idx, mve, &io);
}

int main(void)
{
	an547_hal_init(&hal);
	ert_buf_init(&line, line_mem, sizeof line_mem);
	ert_counters_regs_default(&regs);
	(void)ert_counters_start(&counters, &regs, spin, 0);
	const uint8_t *blob = (const uint8_t *)(uintptr_t)ERT_KBLOB_ADDR;
	const uint32_t *w = (const uint32_t *)(uintptr_t)ERT_KBLOB_ADDR;
	if (w[KB_MAGIC] != ERT_KBLOB_MAGIC || w[KB_VERSION] != ERT_KBLOB_VERSION)
		return 31;
	if (w[KB_N_CASES] > ERT_KBLOB_MAX_CASES || w[KB_N_PASSES] > ERT_KBLOB_MAX_PASSES ||
	    w[KB_BYTES] > ERT_KBLOB_MAX_BYTES || w[KB_SCRATCH] < w[KB_BYTES] ||
	    w[KB_SCRATCH_BYTES] > ERT_KBLOB_MAX_BYTES)
		return 32;
	int8_t *scratch = (int8_t *)(uintptr_t)(ERT_KBLOB_ADDR + w[KB_SCRATCH]);
	ert_buf_str(&line, "ERGON_KBEGIN counter=");
	ert_buf_str(&line, counters.have_cyccnt ? "dwt_cyccnt" : "systick");
	ert_buf_str(&line, " pmu=");
	ert_buf_u64(&line, counters.have_pmu ? 1u : 0u);
	ert_buf_str(&line, " pairs=");
	ert_buf_u64(&line, counters.n_pairs);
	ert_buf_str(&line, " cases=");
	ert_buf_u64(&line, w[KB_N_CASES]);
	flush_line();
	/* The cost of one count read, the least of 64 back-to-back pairs. */
	uint64_t overhead = UINT64_MAX;
	for (int k = 0; k < 64; k++) {
		uint64_t a = count_now(), b = count_now();
		if (count_span(a, b) < overhead)
			overhead = count_span(a, b);
	}
	ert_buf_str(&line, "ERGON_KOVERHEAD ");
	ert_buf_u64(&line, overhead);
	flush_line();
	for (uint32_t i = 0; i < w[KB_N_CASES]; i++) {
		struct kcase c;
		if (load_case(blob, w, i, scratch, &c) != 0)
			return 33;
		if (w[KB_IMPLS] & 1u)
			measure(w, i, &c, 0);
		if (w[KB_IMPLS] & 2u)
			measure(w, i, &c, 1);
	}
	ert_buf_str(&line, "ERGON_KEND");
	flush_line();
	return 0;
}
