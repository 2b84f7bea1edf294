/* A register-level fake of a Cortex-M55's cycle counters, for the board
 * path of target/src/counters.c (struct ert_counters_regs): DEMCR, DWT_CTRL,
 * DWT_CYCCNT and the Armv8.1-M PMU block as plain words that the firmware
 * code reads and writes, and a "spin" (ert_counters_start's work callback)
 * that runs the core for a while. Used by tests/unit/test_ert_counters.c
 * and tests/unit/test_kernels_pmu.c. */
#ifndef TS_PMU_FAKE_H
#define TS_PMU_FAKE_H

#include "ergon/ert_counters.h"

#include <stdint.h>

struct ts_pmu_fake {
	uint32_t demcr, dwt_ctrl, dwt_cyccnt;
	uint32_t pmu[ERT_PMU_WORDS];
	struct ert_counters_regs regs; /* points at the words above */
	int counts;		       /* 0: a QEMU-like core, nothing ever advances */
};

/* A core out of reset: DEMCR 0, DWT_CTRL dwt_ctrl (NUMCOMP, NOCYCCNT ...),
 * DWT_CYCCNT 0xDEAD (so that a test sees whether it was written), the PMU
 * block all 0 but PMU_TYPE pmu_type (its low byte: the number of event
 * counters); counts 0 makes a core whose counters never move. */
void ts_pmu_fake_reset(struct ts_pmu_fake *f, uint32_t dwt_ctrl, uint32_t pmu_type, int counts);

/* ert_counters_start's spin (ctx: the fake): on a core that counts, 100
 * cycles pass. DWT_CYCCNT moves only with DEMCR.TRCENA (bit 24) and
 * DWT_CTRL.CYCCNTENA (bit 0) set, PMU_CCNTR only with PMU_CTRL.E (bit 0)
 * and PMU_CNTENSET.C (bit 31) set (Armv8.1-M ARM, DWT and PMU). */
void ts_pmu_fake_spin(void *ctx);

#endif
