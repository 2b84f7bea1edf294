/* `kernels run --pmu-counters`, the board path end to end without a board:
 * the host plans the events into passes and writes them into the case
 * blob's header (kq_pmu_header); the firmware's pass loop
 * (target/src/kpmu.c, the code the kernel firmware runs) programs a PMU
 * register fake, which counts exactly what this test tells it for each
 * (case, implementation, event); the ERGON_KPMU lines go through the host's
 * reader into the artifact's per-case counts, case_summary.csv and the
 * terminal table. So every expected count below is known before any code
 * runs. Also: more events than one pass → one run per pass, cycles from
 * CCNTR, an overflowed pair reported as "overflow" for its whole pass, a
 * QEMU-like core (no PMU) → every event "unsupported" with the reason,
 * never 0; unknown names refused with the nearest catalog names. */
#include "engines/kernels/kernels_internal.h"
#include "ergon/ert_kblob.h"
#include "ergon/ert_kpmu.h"
#include "pipelines/kernels/kernels_qemu.h"
#include "test_support.h"
#include "ts_pmu_fake.h"

#include <string.h>

/* ---- the register fake ------------------------------------------- */

/* The registers, and the start probe's spin, are tests/support/ts_pmu_fake.c;
 * what a kernel run counts is below (fake_run). */
static struct ts_pmu_fake fk;

/* What the "hardware" counts in one run of case c, implementation mve, for
 * event ev (ids from CMSIS pmu_armv8.h), chosen here. */
static uint64_t told(uint32_t c, int mve, uint32_t ev)
{
	if (c == 0 && !mve && ev == 0x0008u)
		return 70000u; /* INST_RETIRED: over 16 bits, so the CHAIN half counts */
	if (c == 1 && mve && ev == 0x02B8u)
		return 0x100000005ull; /* MVE_PRED: the 32-bit pair overflows */
	return 1000u * (c + 1u) + (mve ? 500u : 0u) + ev;
}

static uint32_t told_cycles(uint32_t c, int mve)
{
	return 40000u + 2000u * c + (mve ? 7u : 0u);
}

struct fake_run {
	uint32_t c;
	int mve;
	unsigned runs, prepares;
};

static void fake_prepare(void *ctx)
{
	struct fake_run *r = ctx;
	r->prepares++;
}

/* One kernel run: P (set by a pass) resets the event counters; each
 * enabled even counter counts its EVTYPER's told value, carrying into the
 * odd (CHAIN) counter; a carry out of the pair sets its overflow flag. */
static void fake_run(void *ctx)
{
	struct fake_run *r = ctx;
	r->runs++;
	if (fk.pmu[ERT_PMU_CTRL] & 2u) {
		for (unsigned i = 0; i < 8u; i++)
			fk.pmu[ERT_PMU_EVCNTR(i)] = 0;
		fk.pmu[ERT_PMU_OVSSET] = 0;
		fk.pmu[ERT_PMU_CTRL] &= ~2u;
	}
	for (unsigned i = 0; i < 4u; i++) {
		if (!(fk.pmu[ERT_PMU_CNTENSET] & (1u << (2u * i))))
			continue;
		assert_int_equal(fk.pmu[ERT_PMU_EVTYPER(2u * i + 1u)], ERT_PMU_EVENT_CHAIN);
		uint64_t v = ((uint64_t)fk.pmu[ERT_PMU_EVCNTR(2u * i + 1u)] << 16 |
			      fk.pmu[ERT_PMU_EVCNTR(2u * i)]) +
			     told(r->c, r->mve, fk.pmu[ERT_PMU_EVTYPER(2u * i)]);
		if (v > 0xFFFFFFFFull)
			fk.pmu[ERT_PMU_OVSSET] |= 1u << (2u * i + 1u);
		fk.pmu[ERT_PMU_EVCNTR(2u * i)] = (uint32_t)(v & 0xFFFFu);
		fk.pmu[ERT_PMU_EVCNTR(2u * i + 1u)] = (uint32_t)((v >> 16) & 0xFFFFu);
	}
	fk.pmu[ERT_PMU_CCNTR] += told_cycles(r->c, r->mve);
}

/* ---- the firmware's lines ------------------------------------------ */

static char line_mem[160];
static struct ert_buf line;
static struct ergon_dynbuf uart;

static void flush(void *ctx)
{
	(void)ctx;
	ergon_dynbuf_add(&uart, line.data, line.len);
	ergon_dynbuf_adds(&uart, "\n");
	ert_buf_reset(&line);
}

static const char *const ASKED = "MVE_INST_RETIRED,INST_RETIRED,MVE_STALL_RESOURCE_MEM,MVE_PRED,"
				 "MVE_INT_MAC_RETIRED,MVE_LDST_RETIRED,CPU_CYCLES";

static int8_t expect[2][4] = {{1, 2, 3, 4}, {5, 6, 7, 8}};
static struct kcase cases[2];

/* The whole board path for two cases x {ref, mve}: *sec is the section
 * with the PMU attached, art the artifact part. */
static void board_path(int pmu_present, struct ergon_pmu_plan *plan, json_t **sec, json_t **art,
		       unsigned *runs_per_measure)
{
	struct ergon_err err = {0};
	memset(cases, 0, sizeof cases);
	for (int i = 0; i < 2; i++) {
		snprintf(cases[i].name, sizeof cases[i].name, "c%d", i);
		cases[i].kind = KC_CONV;
		cases[i].expect = expect[i];
		cases[i].out_len = 4;
		cases[i].record = json_object();
	}
	assert_int_equal(kpmu_request(ASKED, 1, plan, &err), 0);
	uint32_t w[KB_HEADER_WORDS];
	kq_pmu_header(plan, w);
	ts_pmu_fake_reset(&fk, 0, 8u, pmu_present); /* eight event counters: four chained pairs */
	struct ert_counters c;
	ert_counters_start(&c, &fk.regs, ts_pmu_fake_spin, &fk);
	ergon_dynbuf_init(&uart, 1u << 20);
	ert_buf_init(&line, line_mem, sizeof line_mem);
	ergon_dynbuf_addf(&uart, "ERGON_KBEGIN counter=dwt_cyccnt pmu=%d pairs=%u cases=2\n",
			  c.have_pmu, c.n_pairs);
	ergon_dynbuf_adds(&uart, "ERGON_KOVERHEAD 2\n");
	for (uint32_t i = 0; i < 2; i++)
		for (int mve = 0; mve < 2; mve++) {
			const char *im = mve ? "mve" : "ref";
			ergon_dynbuf_addf(&uart, "ERGON_KCHECK %u %s pass\n", i, im);
			for (int k = 0; k < 6; k++)
				ergon_dynbuf_addf(&uart, "ERGON_KS %u %s %d\n", i, im, 500 + k);
			struct fake_run fr = {.c = i, .mve = mve};
			const struct ert_kpmu_io io = {.prepare = fake_prepare,
						       .run = fake_run,
						       .ctx = &fr,
						       .line = &line,
						       .flush = flush};
			uint32_t passes = ert_kpmu_measure(&c, w, i, mve, &io);
			assert_int_equal(passes, pmu_present ? 3u : 0u);
			assert_int_equal(fr.runs, passes); /* one run of the kernel per pass */
			assert_int_equal(fr.prepares, passes);
			*runs_per_measure = fr.runs;
		}
	ergon_dynbuf_adds(&uart, "ERGON_KEND\n");
	struct ergon_kernels_data *d = NULL;
	struct ergon_dynbuf samples;
	ergon_dynbuf_init(&samples, 1u << 20);
	struct kq_firmware fw;
	assert_int_equal(ergon_kernels_data_new(&d, &err), 0);
	int rc = ergon_kernels_qemu_parse("uart.log", uart.p, uart.len, cases, 2,
					  KQ_IMPL_REF | KQ_IMPL_MVE, d, &samples, &fw, &err);
	if (rc != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(fw.pmu, pmu_present);
	assert_int_equal(ergon_kernels_summarize(d, "ref", "cycles", sec, &err), 0);
	*art = json_object();
	rc = kpmu_attach(*art, *sec, cases, 2, plan, ASKED, fw.pmu,
			 fw.pmu ? "the PMU cycle counter advanced"
				: "QEMU's mps3-an547 does not model the PMU",
			 &err);
	if (rc != 0)
		fail_msg("%s", err.msg);
	ergon_dynbuf_free(&samples);
	ergon_dynbuf_free(&uart);
	ergon_kernels_data_free(d);
}

static void cleanup_cases(void)
{
	for (int i = 0; i < 2; i++)
		json_decref(cases[i].record);
}

static const json_t *impl_pmu(const json_t *sec, size_t c, size_t k)
{
	const json_t *cs = json_array_get(json_object_get(sec, "cases"), c);
	return json_object_get(json_array_get(json_object_get(cs, "impls"), k), "pmu");
}

static long long count_of(const json_t *pmu, const char *ev)
{
	const json_t *v = json_object_get(pmu, ev);
	if (!json_is_integer(v))
		fail_msg("%s: not a count", ev);
	return (long long)json_integer_value(v);
}

static void plan_is_three_passes_and_cycles(void **state)
{
	(void)state;
	struct ergon_pmu_plan plan;
	struct ergon_err err = {0};
	assert_int_equal(kpmu_request(ASKED, 0, &plan, &err), 0);
	/* cpu_0 {INST_RETIRED}; mve_0 the first four MVE events asked;
	 * mve_1 {MVE_LDST_RETIRED}; CPU_CYCLES from CCNTR, in no pass. */
	assert_true(plan.cycles);
	assert_int_equal(plan.npasses, 3);
	assert_int_equal(plan.passes[0].nevents, 1);
	assert_int_equal(plan.passes[1].nevents, 4);
	assert_int_equal(plan.passes[2].nevents, 1);
	uint32_t w[KB_HEADER_WORDS];
	kq_pmu_header(&plan, w);
	assert_int_equal(w[KB_N_PASSES], 3);
	assert_int_equal(w[KB_PMU_CYCLES], 1);
	assert_int_equal(w[KB_PASS_N + 1], 4);
	assert_int_equal(w[KB_EVENTS + 0], 0x0008u);
	assert_int_equal(w[KB_EVENTS + 4 + 0], 0x0200u); /* MVE_INST_RETIRED */
	assert_int_equal(w[KB_EVENTS + 4 + 3], 0x0228u); /* MVE_INT_MAC_RETIRED */
	ergon_pmu_plan_cleanup(&plan);
}

static void board_counts_per_case_through_the_fake(void **state)
{
	(void)state;
	struct ergon_pmu_plan plan;
	json_t *sec = NULL, *art = NULL;
	unsigned runs = 0;
	board_path(1, &plan, &sec, &art, &runs);
	assert_int_equal(runs, 3);
	/* c0 ref: INST_RETIRED told 70000 (0x0001:0x1170 across the pair);
	 * MVE_INST_RETIRED 0x200 = 512: 1000 + 512; cycles 40000. */
	const json_t *p = impl_pmu(sec, 0, 0);
	assert_int_equal(count_of(p, "ARM_PMU_INST_RETIRED"), 70000);
	assert_int_equal(count_of(p, "ARM_PMU_MVE_INST_RETIRED"), 1512);
	assert_int_equal(count_of(p, "ARM_PMU_MVE_STALL_RESOURCE_MEM"), 1000 + 0x2CE);
	assert_int_equal(count_of(p, "ARM_PMU_MVE_LDST_RETIRED"), 1000 + 0x0238);
	assert_int_equal(count_of(p, "ARM_PMU_CPU_CYCLES"), 40000);
	/* c1 mve: 2000 + 500 + id; MVE_PRED overflowed its pair, so its pass
	 * (mve_0: four events) has no exact count; the other passes do. */
	p = impl_pmu(sec, 1, 1);
	assert_int_equal(count_of(p, "ARM_PMU_INST_RETIRED"), 2508);
	assert_int_equal(count_of(p, "ARM_PMU_MVE_LDST_RETIRED"), 2500 + 0x0238);
	assert_int_equal(count_of(p, "ARM_PMU_CPU_CYCLES"), 42007);
	assert_string_equal(json_string_value(json_object_get(p, "ARM_PMU_MVE_PRED")),
			    "overflow (not an exact count)");
	assert_string_equal(json_string_value(json_object_get(p, "ARM_PMU_MVE_INST_RETIRED")),
			    "overflow (not an exact count)");
	assert_string_equal(json_string_value(json_object_get(sec, "pmu_status")), "counted");
	const json_t *ap = json_object_get(art, "pmu");
	assert_int_equal(json_array_size(json_object_get(ap, "passes")), 3);
	assert_int_equal(json_array_size(json_object_get(ap, "events")), 7);
	/* case_summary.csv: a column per event, in the plan's order
	 * (cycles first), the counts in the rows. */
	char *csv = NULL;
	size_t len = 0;
	struct ergon_err err = {0};
	assert_int_equal(ergon_kernels_case_summary_render(sec, &csv, &len, &err), 0);
	assert_non_null(strstr(csv, ",reason,ARM_PMU_CPU_CYCLES,ARM_PMU_INST_RETIRED,"
				    "ARM_PMU_MVE_INST_RETIRED,ARM_PMU_MVE_STALL_RESOURCE_MEM,"
				    "ARM_PMU_MVE_PRED,ARM_PMU_MVE_INT_MAC_RETIRED,"
				    "ARM_PMU_MVE_LDST_RETIRED\n"));
	/* c0 ref: 40000, 70000, then 1000 + 0x200, 0x2CE, 0x2B8, 0x228, 0x238. */
	assert_non_null(strstr(csv, ",40000,70000,1512,1718,1696,1552,1568\n"));
	/* c1 mve: 42007, 2500 + 8, four overflows, 2500 + 0x238. */
	assert_non_null(strstr(csv, ",42007,2508,overflow,overflow,overflow,overflow,3068\n"));
	free(csv);
	char *table = NULL;
	assert_int_equal(ergon_kernels_table_render(sec, &table, &err), 0);
	assert_non_null(strstr(table, "  c0 [ref]: CPU_CYCLES=40000 INST_RETIRED=70000 "
				      "MVE_INST_RETIRED=1512"));
	free(table);
	json_decref(sec);
	json_decref(art);
	ergon_pmu_plan_cleanup(&plan);
	cleanup_cases();
}

static void no_pmu_every_event_unsupported(void **state)
{
	(void)state;
	struct ergon_pmu_plan plan;
	json_t *sec = NULL, *art = NULL;
	unsigned runs = 1;
	board_path(0, &plan, &sec, &art, &runs);
	assert_int_equal(runs, 0); /* no extra run, no ERGON_KPMU line */
	for (size_t c = 0; c < 2; c++)
		for (size_t k = 0; k < 2; k++) {
			const json_t *p = impl_pmu(sec, c, k);
			assert_int_equal(json_object_size(p), 7);
			const char *key;
			const json_t *v;
			json_object_foreach((json_t *)p, key, v)
			    assert_string_equal(json_string_value(v), "unsupported");
		}
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(art, "pmu"), "status")),
	    "unsupported");
	char *csv = NULL, *table = NULL;
	size_t len = 0;
	struct ergon_err err = {0};
	assert_int_equal(ergon_kernels_case_summary_render(sec, &csv, &len, &err), 0);
	assert_non_null(strstr(csv, ",unsupported,unsupported,unsupported,unsupported,"
				    "unsupported,unsupported,unsupported\n"));
	assert_null(strstr(csv, ",0\n"));
	assert_int_equal(ergon_kernels_table_render(sec, &table, &err), 0);
	assert_non_null(strstr(table, "ARM_PMU_MVE_LDST_RETIRED: unsupported (QEMU's mps3-an547 "
				      "does not model the PMU); no count is reported"));
	free(csv);
	free(table);
	json_decref(sec);
	json_decref(art);
	ergon_pmu_plan_cleanup(&plan);
	cleanup_cases();
}

static void names_checked(void **state)
{
	(void)state;
	struct ergon_pmu_plan plan;
	struct ergon_err err = {0};
	assert_int_equal(kpmu_request("INST_RETIRD", 0, &plan, &err), ERGON_EUSAGE);
	assert_non_null(strstr(err.msg, "--pmu-counters: unknown PMU counter 'INST_RETIRD'"));
	assert_non_null(strstr(err.msg, "nearest: ARM_PMU_INST_RETIRED"));
	assert_non_null(strstr(err.msg, "ergon counters list"));
	memset(&err, 0, sizeof err);
	assert_int_equal(kpmu_request("INST_RETIRED,,MVE_PRED", 0, &plan, &err), ERGON_EUSAGE);
	assert_non_null(strstr(err.msg, "an empty name"));
	memset(&err, 0, sizeof err);
	assert_int_equal(kpmu_request("CHAIN", 0, &plan, &err), ERGON_EUSAGE);
	/* none with names: refused as such, not as an unknown counter 'none'. */
	memset(&err, 0, sizeof err);
	assert_int_equal(kpmu_request("none,INST_RETIRED", 0, &plan, &err), ERGON_EUSAGE);
	assert_non_null(strstr(err.msg, "--pmu-counters 'none,INST_RETIRED': none means no "
					"events and stands alone"));
	assert_null(strstr(err.msg, "unknown PMU counter"));
	/* mve:all is the catalog's 34 mve events (ergon counters list): 4 a
	 * pass, ceil(34 / 4) = 9 passes, one more than the kernel firmware's
	 * 8. On qemu-an547 the firmware is the limit; the host runs no
	 * firmware and counts nothing, and its message says that instead. */
	memset(&err, 0, sizeof err);
	assert_int_equal(kpmu_request("mve:all", 1, &plan, &err), ERGON_EUSAGE);
	assert_non_null(strstr(err.msg, "--pmu-counters: the events need 9 passes; the "
					"kernel firmware runs at most 8 (up to 4 events per pass"));
	assert_int_equal(plan.npasses, 0);
	memset(&err, 0, sizeof err);
	assert_int_equal(kpmu_request("mve:all", 0, &plan, &err), ERGON_EUSAGE);
	assert_non_null(strstr(err.msg, "--pmu-counters: the events need 9 passes; --board "
					"host counts no PMU event"));
	assert_non_null(strstr(err.msg, "at most the 8 passes (up to 4 events per pass"));
	assert_non_null(strstr(err.msg, "ask fewer, or run twice"));
	assert_null(strstr(err.msg, "the kernel firmware runs at most"));
	assert_int_equal(plan.npasses, 0);
	/* Up to 8 is taken: the catalog's 24 cpu events less CHAIN (not
	 * requestable) and CPU_CYCLES (the cycle counter, no slot) are 22,
	 * ceil(22 / 4) = 6 passes; memory's set of 4 one more: 7. */
	memset(&err, 0, sizeof err);
	assert_int_equal(kpmu_request("cpu:all,memory", 0, &plan, &err), 0);
	assert_int_equal(plan.npasses, 7);
	ergon_pmu_plan_cleanup(&plan);
	/* none: nothing asked; NULL: the method's five on qemu-an547, none
	 * on the host. */
	assert_int_equal(kpmu_request("none", 1, &plan, &err), 0);
	assert_int_equal(plan.npasses, 0);
	assert_int_equal(kpmu_request(NULL, 0, &plan, &err), 0);
	assert_int_equal(plan.npasses, 0);
	assert_int_equal(kpmu_request(NULL, 1, &plan, &err), 0);
	const char *names[8];
	assert_int_equal(kpmu_names(&plan, names, 8), 5);
	ergon_pmu_plan_cleanup(&plan);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(plan_is_three_passes_and_cycles),
	    cmocka_unit_test(board_counts_per_case_through_the_fake),
	    cmocka_unit_test(no_pmu_every_event_unsupported),
	    cmocka_unit_test(names_checked),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
