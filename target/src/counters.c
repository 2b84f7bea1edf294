/* DWT CYCCNT and the Armv8.1-M PMU through a register table
 * (ergon/ert_counters.h). */
#include "ergon/ert_counters.h"

#define DEMCR_TRCENA (1u << 24)
#define DWT_CTRL_CYCCNTENA (1u << 0)
#define DWT_CTRL_NOCYCCNT (1u << 25)
#define PMU_CTRL_E (1u << 0)
#define PMU_CTRL_P (1u << 1)
#define PMU_CTRL_C (1u << 2)
#define PMU_CNT_CYCLE (1u << 31)
/* PMU_TYPE.N, bits [7:0]: the number of event counters. */
#define PMU_TYPE_N(v) ((v)&0xFFu)

void ert_counters_regs_default(struct ert_counters_regs *r)
{
	r->demcr = (volatile uint32_t *)(uintptr_t)0xE000EDFCu;
	r->dwt_ctrl = (volatile uint32_t *)(uintptr_t)0xE0001000u;
	r->dwt_cyccnt = (volatile uint32_t *)(uintptr_t)0xE0001004u;
	r->pmu = (volatile uint32_t *)(uintptr_t)0xE0003000u;
}

int ert_counters_start(struct ert_counters *c, const struct ert_counters_regs *r,
		       void (*spin)(void *ctx), void *ctx)
{
	c->regs = r;
	c->have_cyccnt = 0;
	c->have_pmu = 0;
	c->n_pairs = 0;
	c->n_events = 0;
	*r->demcr = *r->demcr | DEMCR_TRCENA;
	const int dwt_implemented = (*r->dwt_ctrl & DWT_CTRL_NOCYCCNT) == 0;
	if (dwt_implemented) {
		*r->dwt_cyccnt = 0;
		*r->dwt_ctrl = *r->dwt_ctrl | DWT_CTRL_CYCCNTENA;
	}
	volatile uint32_t *p = r->pmu;
	p[ERT_PMU_CTRL] = p[ERT_PMU_CTRL] | PMU_CTRL_E | PMU_CTRL_C;
	p[ERT_PMU_CNTENSET] = PMU_CNT_CYCLE;
	const uint32_t d0 = *r->dwt_cyccnt, p0 = p[ERT_PMU_CCNTR];
	spin(ctx);
	const uint32_t d1 = *r->dwt_cyccnt, p1 = p[ERT_PMU_CCNTR];
	c->have_cyccnt = dwt_implemented && d1 != d0;
	c->have_pmu = p1 != p0;
	if (c->have_pmu) {
		unsigned pairs = PMU_TYPE_N(p[ERT_PMU_TYPE]) / 2u;
		c->n_pairs = pairs > ERT_CNT_PASS_MAX ? ERT_CNT_PASS_MAX : pairs;
	}
	return ERT_CNT_OK;
}

uint32_t ert_counters_cyccnt(const struct ert_counters *c)
{
	return *c->regs->dwt_cyccnt;
}

uint32_t ert_counters_ccntr(const struct ert_counters *c)
{
	return c->have_pmu ? c->regs->pmu[ERT_PMU_CCNTR] : 0u;
}

int ert_counters_pass(struct ert_counters *c, const uint16_t *events, unsigned n)
{
	if (!c->have_pmu || c->n_pairs == 0)
		return ERT_CNT_E_UNSUPPORTED;
	if (n > c->n_pairs)
		return ERT_CNT_E_CONFIG;
	volatile uint32_t *p = c->regs->pmu;
	uint32_t mask = 0;
	for (unsigned i = 0; i < 2u * c->n_pairs; i++)
		mask |= 1u << i;
	p[ERT_PMU_CNTENCLR] = mask;
	for (unsigned i = 0; i < n; i++) {
		p[ERT_PMU_EVTYPER(2u * i)] = events[i];
		p[ERT_PMU_EVTYPER(2u * i + 1u)] = ERT_PMU_EVENT_CHAIN;
		c->events[i] = events[i];
	}
	c->n_events = n;
	p[ERT_PMU_OVSCLR] = mask;
	p[ERT_PMU_CTRL] = p[ERT_PMU_CTRL] | PMU_CTRL_E | PMU_CTRL_P;
	uint32_t en = 0;
	for (unsigned i = 0; i < 2u * n; i++)
		en |= 1u << i;
	p[ERT_PMU_CNTENSET] = en;
	return ERT_CNT_OK;
}

int ert_counters_read(struct ert_counters *c, uint32_t *counts, int *overflow)
{
	if (!c->have_pmu)
		return ERT_CNT_E_UNSUPPORTED;
	volatile uint32_t *p = c->regs->pmu;
	uint32_t mask = 0;
	for (unsigned i = 0; i < 2u * c->n_events; i++)
		mask |= 1u << i;
	p[ERT_PMU_CNTENCLR] = mask;
	const uint32_t ovs = p[ERT_PMU_OVSSET];
	*overflow = 0;
	for (unsigned i = 0; i < c->n_events; i++) {
		counts[i] = ((p[ERT_PMU_EVCNTR(2u * i + 1u)] & 0xFFFFu) << 16) |
			    (p[ERT_PMU_EVCNTR(2u * i)] & 0xFFFFu);
		if (ovs & (1u << (2u * i + 1u)))
			*overflow = 1;
	}
	return ERT_CNT_OK;
}
