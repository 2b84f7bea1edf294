/* The board path of the kernel firmware's counters (target/src/counters.c)
 * against a register fake: DWT CYCCNT is enabled (TRCENA, CYCCNTENA) and
 * kept only when it advances; a core that reports NOCYCCNT is left alone;
 * the PMU is programmed per the Armv8.1-M layout (event i in counter 2i,
 * CHAIN in 2i + 1, P reset, CNTENSET bits); counts are assembled from the
 * 16-bit halves; an overflowed pair is flagged; a QEMU-like core (nothing
 * advances) reports both unsupported, never a zero count; the 32-bit span
 * survives one wrap. */
#include "ergon/ert_counters.h"
#include "test_support.h"
#include "ts_pmu_fake.h"

/* The register fake (tests/support/ts_pmu_fake.c): the "hardware" moves
 * CYCCNT only with TRCENA and CYCCNTENA set, the PMU cycle counter only
 * with CTRL.E and CNTENSET bit 31. */
static struct ts_pmu_fake fk;

static void board_enables_dwt_and_pmu(void **state)
{
	(void)state;
	struct ert_counters c;
	ts_pmu_fake_reset(&fk, 0x40000000u, 8u, 1); /* NUMCOMP in the high bits; 8 event counters */
	assert_int_equal(ert_counters_start(&c, &fk.regs, ts_pmu_fake_spin, &fk), ERT_CNT_OK);
	assert_true(fk.demcr & (1u << 24));
	assert_true(fk.dwt_ctrl & 1u);
	assert_int_equal(fk.dwt_cyccnt, 100u); /* reset to 0, then one spin */
	assert_int_equal(c.have_cyccnt, 1);
	assert_int_equal(c.have_pmu, 1);
	assert_int_equal(c.n_pairs, 4u); /* 8 counters / 2 per chained pair */
	assert_true(fk.pmu[ERT_PMU_CTRL] & 0x5u);
	assert_int_equal(ert_counters_cyccnt(&c), 100u);
}

static void nocyccnt_is_unsupported(void **state)
{
	(void)state;
	struct ert_counters c;
	ts_pmu_fake_reset(&fk, 1u << 25, 8u, 1);
	ert_counters_start(&c, &fk.regs, ts_pmu_fake_spin, &fk);
	assert_int_equal(c.have_cyccnt, 0);
	assert_int_equal(fk.dwt_cyccnt, 0xDEADu); /* never written */
	assert_int_equal(fk.dwt_ctrl & 1u, 0u);
}

static void qemu_like_core_reports_unsupported(void **state)
{
	(void)state;
	struct ert_counters c;
	ts_pmu_fake_reset(&fk, 0, 8u, 0);
	fk.dwt_cyccnt = 0;
	ert_counters_start(&c, &fk.regs, ts_pmu_fake_spin, &fk);
	assert_int_equal(c.have_cyccnt, 0);
	assert_int_equal(c.have_pmu, 0);
	assert_int_equal(c.n_pairs, 0u);
	const uint16_t ev[1] = {0x0200u};
	assert_int_equal(ert_counters_pass(&c, ev, 1), ERT_CNT_E_UNSUPPORTED);
	uint32_t counts[1] = {77u};
	int ovf = 0;
	assert_int_equal(ert_counters_read(&c, counts, &ovf), ERT_CNT_E_UNSUPPORTED);
	assert_int_equal(counts[0], 77u); /* nothing written: no invented 0 */
}

static void pass_programs_chained_pairs(void **state)
{
	(void)state;
	struct ert_counters c;
	ts_pmu_fake_reset(&fk, 0, 8u, 1);
	ert_counters_start(&c, &fk.regs, ts_pmu_fake_spin, &fk);
	/* ARM_PMU_MVE_INST_RETIRED, ARM_PMU_MVE_STALL_RESOURCE_MEM, ARM_PMU_MVE_PRED
	 * (CMSIS pmu_armv8.h / Cortex-M55 TRM event numbers). */
	const uint16_t ev[3] = {0x0200u, 0x02CEu, 0x02B8u};
	fk.pmu[ERT_PMU_CTRL] = 1u;
	assert_int_equal(ert_counters_pass(&c, ev, 3), ERT_CNT_OK);
	assert_int_equal(fk.pmu[ERT_PMU_EVTYPER(0)], 0x0200u);
	assert_int_equal(fk.pmu[ERT_PMU_EVTYPER(1)], 0x001Eu);
	assert_int_equal(fk.pmu[ERT_PMU_EVTYPER(2)], 0x02CEu);
	assert_int_equal(fk.pmu[ERT_PMU_EVTYPER(3)], 0x001Eu);
	assert_int_equal(fk.pmu[ERT_PMU_EVTYPER(4)], 0x02B8u);
	assert_int_equal(fk.pmu[ERT_PMU_EVTYPER(5)], 0x001Eu);
	assert_int_equal(fk.pmu[ERT_PMU_EVTYPER(6)], 0u);
	assert_int_equal(fk.pmu[ERT_PMU_CNTENSET], 0x3Fu); /* counters 0..5 */
	assert_int_equal(fk.pmu[ERT_PMU_CNTENCLR], 0xFFu); /* all 8 stopped first */
	assert_int_equal(fk.pmu[ERT_PMU_OVSCLR], 0xFFu);
	assert_int_equal(fk.pmu[ERT_PMU_CTRL], 0x3u); /* E kept, P (reset) set */
	/* The counters after the kernel: pair 0 = 0x0005:0x1234, pair 1 =
	 * 0x0000:0xFFFF, pair 2 = 0x0001:0x0000 with its high half overflowed. */
	fk.pmu[ERT_PMU_EVCNTR(0)] = 0x1234u;
	fk.pmu[ERT_PMU_EVCNTR(1)] = 0x0005u;
	fk.pmu[ERT_PMU_EVCNTR(2)] = 0xFFFFu;
	fk.pmu[ERT_PMU_EVCNTR(3)] = 0x0000u;
	fk.pmu[ERT_PMU_EVCNTR(4)] = 0x0000u;
	fk.pmu[ERT_PMU_EVCNTR(5)] = 0x0001u;
	uint32_t counts[3];
	int ovf = -1;
	assert_int_equal(ert_counters_read(&c, counts, &ovf), ERT_CNT_OK);
	assert_int_equal(counts[0], 0x51234u);
	assert_int_equal(counts[1], 65535u);
	assert_int_equal(counts[2], 65536u);
	assert_int_equal(ovf, 0);
	fk.pmu[ERT_PMU_OVSSET] = 1u << 5;
	assert_int_equal(ert_counters_read(&c, counts, &ovf), ERT_CNT_OK);
	assert_int_equal(ovf, 1);
}

static void too_many_events_refused(void **state)
{
	(void)state;
	struct ert_counters c;
	ts_pmu_fake_reset(&fk, 0, 4u, 1); /* 4 counters: 2 pairs */
	ert_counters_start(&c, &fk.regs, ts_pmu_fake_spin, &fk);
	assert_int_equal(c.n_pairs, 2u);
	const uint16_t ev[3] = {0x0200u, 0x02CEu, 0x02B8u};
	assert_int_equal(ert_counters_pass(&c, ev, 3), ERT_CNT_E_CONFIG);
	assert_int_equal(fk.pmu[ERT_PMU_EVTYPER(0)], 0u);
}

static void span_survives_one_wrap(void **state)
{
	(void)state;
	assert_int_equal(ert_counters_span(0xFFFFFFF0u, 0x10u), 0x20u);
	assert_int_equal(ert_counters_span(5u, 5u), 0u);
	assert_int_equal(ert_counters_span(0u, 0xFFFFFFFFu), 0xFFFFFFFFu);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(board_enables_dwt_and_pmu),
	    cmocka_unit_test(nocyccnt_is_unsupported),
	    cmocka_unit_test(qemu_like_core_reports_unsupported),
	    cmocka_unit_test(pass_programs_chained_pairs),
	    cmocka_unit_test(too_many_events_refused),
	    cmocka_unit_test(span_survives_one_wrap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
