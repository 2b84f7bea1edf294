/* Cycle and event counters of an Armv8.1-M core (Cortex-M55) for the
 * kernel measurement firmware: DWT CYCCNT and the PMU, reached through a
 * table of register pointers so that the same code runs on a board (the
 * architectural addresses, ert_counters_regs_default) and in a host test
 * (a register fake). A counter is used only after it is seen to advance:
 * QEMU's mps3-an547 models neither the DWT cycle counter nor the PMU (both
 * read 0), so there both are reported unsupported, never 0.
 *
 * Register layout: Armv8-M Architecture Reference Manual (DWT, DEMCR) and
 * the Armv8.1-M PMU (Cortex-M55 TRM, "PMU register summary"). */
#ifndef ERT_COUNTERS_H
#define ERT_COUNTERS_H

#include <stdint.h>

#define ERT_CNT_OK 0
#define ERT_CNT_E_UNSUPPORTED (-1) /* not implemented, or does not advance */
#define ERT_CNT_E_CONFIG (-2)	   /* more events than the pass can hold */

/* Word offsets in the PMU block (base 0xE0003000). */
#define ERT_PMU_EVCNTR(n) (0x000u / 4u + (n))
#define ERT_PMU_CCNTR (0x07Cu / 4u)
#define ERT_PMU_EVTYPER(n) (0x400u / 4u + (n))
#define ERT_PMU_CNTENSET (0xC00u / 4u)
#define ERT_PMU_CNTENCLR (0xC20u / 4u)
#define ERT_PMU_OVSCLR (0xC80u / 4u)
#define ERT_PMU_OVSSET (0xCC0u / 4u)
#define ERT_PMU_TYPE (0xE00u / 4u)
#define ERT_PMU_CTRL (0xE04u / 4u)
#define ERT_PMU_WORDS (0xE08u / 4u)
/* The CHAIN event: an odd counter counts the overflows of the even one
 * below it, making a 32-bit counter of two 16-bit ones. */
#define ERT_PMU_EVENT_CHAIN 0x001Eu
/* Event pairs one pass can hold (eight 16-bit counters on a Cortex-M55). */
#define ERT_CNT_PASS_MAX 4u

struct ert_counters_regs {
	volatile uint32_t *demcr;      /* DEMCR, 0xE000EDFC: TRCENA is bit 24 */
	volatile uint32_t *dwt_ctrl;   /* DWT_CTRL, 0xE0001000: CYCCNTENA bit 0, NOCYCCNT bit 25 */
	volatile uint32_t *dwt_cyccnt; /* DWT_CYCCNT, 0xE0001004 */
	volatile uint32_t *pmu;	       /* the PMU block, 0xE0003000, ERT_PMU_WORDS words */
};

/* What ert_counters_start found. */
struct ert_counters {
	const struct ert_counters_regs *regs;
	int have_cyccnt;  /* DWT CYCCNT implemented and seen to advance */
	int have_pmu;	  /* PMU cycle counter seen to advance */
	unsigned n_pairs; /* chained 32-bit event counters per pass (0 without a PMU) */
	unsigned n_events;
	uint16_t events[ERT_CNT_PASS_MAX];
};

/* The architectural addresses (for a board build). */
void ert_counters_regs_default(struct ert_counters_regs *r);

/* Enable the DWT cycle counter (TRCENA, CYCCNT = 0, CYCCNTENA) and the PMU
 * (CTRL.E, the cycle counter reset and enabled), then call spin(ctx) once
 * (some work) and keep each counter only if it advanced across it.
 * Always ERT_CNT_OK; c says what counts. */
int ert_counters_start(struct ert_counters *c, const struct ert_counters_regs *r,
		       void (*spin)(void *ctx), void *ctx);

uint32_t ert_counters_cyccnt(const struct ert_counters *c);

/* The PMU cycle counter (PMU_CCNTR, 32 bits, started by
 * ert_counters_start); 0 without a PMU (callers check have_pmu). */
uint32_t ert_counters_ccntr(const struct ert_counters *c);

/* Cycles from a to b read from a 32-bit counter: b - a mod 2^32, exact for
 * spans shorter than 2^32 cycles (one wrap). */
static inline uint32_t ert_counters_span(uint32_t a, uint32_t b)
{
	return b - a;
}

/* Program one pass: event i in counter 2i, CHAIN in 2i + 1; counters reset
 * (CTRL.P), overflow flags cleared, the 2n counters enabled.
 * ERT_CNT_E_UNSUPPORTED without a PMU, ERT_CNT_E_CONFIG when n > n_pairs. */
int ert_counters_pass(struct ert_counters *c, const uint16_t *events, unsigned n);

/* Stop the pass and read its counts (high half from the odd counter);
 * *overflow = 1 when a 32-bit pair overflowed (the count is then not
 * exact and must not be reported as one). */
int ert_counters_read(struct ert_counters *c, uint32_t *counts, int *overflow);

#endif
